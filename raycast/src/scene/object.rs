//! [`SceneObject`]: one placed shape of a scene with its user id and layer
//! mask, and [`ObjectKey`], the handle the scene gives back for it.
//!
//! A key is a slot index plus a generation: removing an object bumps its
//! slot's generation, so a key kept after `remove` no longer finds anything,
//! even once the slot holds another object.

use crate::shapes::{RayCast, Shape, Transformed};
use crate::{Aabb, Affine3A, ShapeError, Vec3};
use glam::Vec3A;

/// Handle of an object in a [`Scene`](super::Scene), returned by
/// [`Scene::insert`](super::Scene::insert). Stale after the object is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub(super) index: u32,
    pub(super) generation: u32,
}

impl ObjectKey {
    /// The slot of the object in its scene (stable while the object lives;
    /// reused after it is removed).
    pub fn index(&self) -> u32 {
        self.index
    }
}

/// A shape placed in a scene: any [`Shape`] (a mesh or voxel volume is held
/// by `Arc`, so placing it many times shares one copy), its placement, the
/// user `id` that hits report in [`Hit::object`](crate::Hit::object), and a
/// layer `mask` (all bits by default).
///
/// # Examples
/// ```
/// use raycast::scene::SceneObject;
/// use raycast::{vec3, Affine3A, Sphere};
/// let ball = SceneObject::new(Sphere::new(1.0), Affine3A::from_translation(vec3(0.0, 2.0, 0.0)), 7)
///     .with_mask(0b100);
/// assert_eq!((ball.id, ball.mask), (7, 0b100));
/// assert_eq!(ball.world_bounds().center(), vec3(0.0, 2.0, 0.0));
/// ```
#[derive(Clone, Debug)]
pub struct SceneObject {
    /// The shape and its `world_from_local` map.
    pub placed: Transformed<Shape>,
    /// The user id reported in hits (need not be unique).
    pub id: u32,
    /// Layer bits, matched against [`Filter::mask`](super::Filter::mask).
    pub mask: u32,
}

impl SceneObject {
    /// `shape` placed by `world_from_local`, with id `id` and every mask bit.
    ///
    /// # Errors
    /// [`ShapeError`] on `transform` unless the map is finite and invertible.
    pub fn try_new(shape: impl Into<Shape>, world_from_local: Affine3A, id: u32) -> Result<Self, ShapeError> {
        Ok(Self { placed: Transformed::try_new(shape.into(), world_from_local)?, id, mask: u32::MAX })
    }

    /// Like [`SceneObject::try_new`].
    ///
    /// # Panics
    /// With the error's message when the map is refused.
    #[track_caller]
    pub fn new(shape: impl Into<Shape>, world_from_local: Affine3A, id: u32) -> Self {
        match Self::try_new(shape, world_from_local, id) {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        }
    }

    /// `shape` in the world frame as it is (the identity placement).
    pub fn local(shape: impl Into<Shape>, id: u32) -> Self {
        Self::new(shape, Affine3A::IDENTITY, id)
    }

    /// The same object with layer mask `mask`.
    pub fn with_mask(self, mask: u32) -> Self {
        Self { mask, ..self }
    }

    /// The object's bounds in the world frame (infinite for a plane, empty
    /// for an empty voxel volume).
    ///
    /// Tight for the round shapes: a placed sphere is an ellipsoid, whose
    /// extent along world axis `i` is `radius · |row i of M|` (the largest of
    /// `eᵢ · M u` over unit `u`); a disk of radius `ρ` in the local XZ plane
    /// reaches `ρ · |(M_i0, M_i2)|`. From these, a capsule is its mapped end
    /// points widened by the ellipsoid's extent, a cylinder its mapped cap
    /// centres widened by the disk's, a cone its apex and its widened base
    /// centre, a torus its centre widened by the ring's and the tube's. Other
    /// shapes get the box of their mapped local box (up to √3 wider than the
    /// shape for a rotated round shape, hence the cases above: looser boxes
    /// mean more objects tested per ray).
    pub fn world_bounds(&self) -> Aabb {
        let (lo, hi) = self.world_corners();
        Aabb::new(lo.into(), hi.into())
    }

    /// [`SceneObject::world_bounds`] as its two corners in 4-lane vectors,
    /// the form in which the scene pads and tests it.
    pub(super) fn world_corners(&self) -> (Vec3A, Vec3A) {
        let m = self.placed.world_from_local();
        let (x, y, z, t) = (m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis, m.translation);
        // Per world axis: the length of that row of M, and of its x, z part
        // (closures: each shape takes the square roots it uses, no more).
        let ball = || Vec3A::from(Vec3::from(x * x + y * y + z * z).map(f32::sqrt));
        let disk = || Vec3A::from(Vec3::from(x * x + z * z).map(f32::sqrt));
        // In 4-lane vectors throughout: `transform_point3a` adds in the
        // order of `transform_point3`, and the corners are the lane-wise
        // sums and min/max that `Aabb`'s `Vec3` methods form, so the box is
        // the same (these coordinates are finite: no NaN to order). A centre
        // `M·0 + t` is `t` (the map is finite).
        let at = |p: Vec3| m.transform_point3a(p.into());
        let around = |p: Vec3A, e: Vec3A| (p - e, p + e);
        let union = |(a, b): (Vec3A, Vec3A), (c, d): (Vec3A, Vec3A)| (a.min(c), b.max(d));
        match self.placed.shape() {
            Shape::Sphere(s) => around(t, s.radius() * ball()),
            Shape::Capsule(c) => {
                let e = c.radius() * ball();
                union(around(at(c.a()), e), around(at(c.b()), e))
            }
            Shape::Cylinder(c) => {
                let (e, h) = (c.radius() * disk(), c.half_height());
                union(around(at(Vec3::new(0.0, h, 0.0)), e), around(at(Vec3::new(0.0, -h, 0.0)), e))
            }
            Shape::Cone(c) => {
                let h = c.half_height();
                let apex = at(Vec3::new(0.0, h, 0.0));
                union(around(at(Vec3::new(0.0, -h, 0.0)), c.radius() * disk()), (apex, apex))
            }
            Shape::Torus(s) => around(t, s.major_radius() * disk() + s.minor_radius() * ball()),
            Shape::Cuboid(c) => {
                // `Aabb::transformed` of the local box `±h`, spelt out: its
                // centre is the origin (mapped to `t`) and its half size `h`
                // (`(h + h)·0.5`, exact below f32::MAX / 2).
                let h = c.half_extents();
                let ext = x.abs() * h.x + y.abs() * h.y + z.abs() * h.z;
                let slack = (t.abs() + ext) * crate::numeric::gamma(4);
                (t - ext - slack, t + ext + slack)
            }
            _ => {
                let b = self.placed.local_bounds();
                (b.min.into(), b.max.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{vec3, Plane, Sphere};

    #[test]
    fn round_shapes_get_tight_world_bounds() {
        use crate::{Capsule, Cone, Cylinder, Quat, Ray, Torus};
        let m = Affine3A::from_scale_rotation_translation(
            vec3(1.5, 0.7, 2.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.4, -1.1, 0.8),
            vec3(3.0, -2.0, 7.0),
        );
        let shapes: [Shape; 5] = [
            Sphere::new(1.3).into(),
            Capsule::new(vec3(-0.5, 0.2, 0.1), vec3(0.7, -0.4, 0.3), 0.4).into(),
            Cylinder::new(0.6, 1.1).into(),
            Cone::new(0.8, 0.9).into(),
            Torus::new(1.2, 0.3).into(),
        ];
        for shape in shapes {
            let o = SceneObject::new(shape, m, 0);
            let b = o.world_bounds();
            assert!(b.size().length() < o.placed.local_bounds().size().length());
            // Each face of the box touches the shape: a ray along the face
            // plane, swept across it, hits; one slightly outside never does.
            for axis in 0..3 {
                for (face, out) in [(b.min[axis], -1.0), (b.max[axis], 1.0)] {
                    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                    let (mut touched, mut crossed) = (false, false);
                    for k in 0..=2000 {
                        let mut o0 = b.center();
                        o0[u] = b.min[u] + b.size()[u] * k as f32 / 2000.0;
                        o0[v] = b.min[v] - 1.0;
                        let mut d = Vec3::ZERO;
                        d[v] = 1.0;
                        o0[axis] = face - out * 1e-3 * b.size()[axis];
                        touched |= o.placed.hits(&Ray::new(o0, d), crate::Interval::FORWARD);
                        o0[axis] = face + out * 1e-4 * b.size()[axis];
                        crossed |= o.placed.hits(&Ray::new(o0, d), crate::Interval::FORWARD);
                    }
                    assert!(touched, "{:?}: no ray just inside face {axis} {out}", o.placed.shape());
                    assert!(!crossed, "{:?}: the shape pokes out of face {axis} {out}", o.placed.shape());
                }
            }
        }
    }

    #[test]
    fn bounds_and_refusals() {
        let o = SceneObject::local(Sphere::new(2.0), 1);
        let x = o.world_bounds().max.x;
        assert!((2.0..2.001).contains(&x), "{x}");
        assert_eq!(o.mask, u32::MAX);
        let p = SceneObject::local(Plane::new(vec3(0.0, 1.0, 0.0), crate::Vec3::ZERO), 2);
        assert!(!p.world_bounds().max.is_finite());
        let bad = SceneObject::try_new(Sphere::new(1.0), Affine3A::from_scale(vec3(1.0, 0.0, 1.0)), 3);
        assert_eq!(bad.unwrap_err().field, "transform");
    }
}
