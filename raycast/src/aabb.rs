//! [`Aabb`]: axis-aligned bounding boxes and the robust slab test.

use crate::numeric::gamma;
use crate::{Interval, Ray};
use glam::{Affine3A, Vec3, Vec3A};

/// An axis-aligned box `[min, max]`. The empty box has `min = +∞`, `max = −∞`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box: the identity of [`Aabb::union`].
    pub const EMPTY: Aabb = Aabb { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };

    /// The box with corners `min` and `max`.
    #[inline]
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The box centred at the origin with the given half extents.
    #[inline]
    pub fn from_half_extents(h: Vec3) -> Self {
        Self::new(-h, h)
    }

    /// The smallest box holding every point.
    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Self {
        points.into_iter().fold(Self::EMPTY, |b, p| b.grow(p))
    }

    /// The box grown to contain `p`.
    #[inline]
    pub fn grow(self, p: Vec3) -> Self {
        Self::new(self.min.min(p), self.max.max(p))
    }

    /// The smallest box containing both.
    #[inline]
    pub fn union(self, o: Aabb) -> Self {
        Self::new(self.min.min(o.min), self.max.max(o.max))
    }

    /// True for the empty box (or any box with `min > max` on an axis).
    #[inline]
    pub fn is_empty(&self) -> bool {
        !(self.min.cmple(self.max).all())
    }

    /// `max - min`.
    #[inline]
    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// The midpoint.
    #[inline]
    pub fn center(&self) -> Vec3 {
        0.5 * (self.min + self.max)
    }

    /// Half the surface area (the SAH cost measure); 0 for the empty box.
    #[inline]
    pub fn half_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let s = self.size();
        s.x * s.y + s.y * s.z + s.z * s.x
    }

    /// True if `p` is inside or on the boundary.
    #[inline]
    pub fn contains_point(&self, p: Vec3) -> bool {
        self.min.cmple(p).all() && p.cmple(self.max).all()
    }

    /// True if `o` is inside this box (boundaries included).
    #[inline]
    pub fn contains(&self, o: &Aabb) -> bool {
        o.is_empty() || (self.min.cmple(o.min).all() && o.max.cmple(self.max).all())
    }

    /// The bounds of this box after the affine map `m` (Arvo's method: each
    /// output axis takes the min/max of the matrix entries times the input
    /// extents). An empty or unbounded box stays empty or unbounded.
    pub fn transformed(&self, m: &Affine3A) -> Self {
        if self.is_empty() {
            return *self;
        }
        if !(self.min.is_finite() && self.max.is_finite()) {
            // An unbounded shape (a plane) stays unbounded.
            return Self::new(Vec3::NEG_INFINITY, Vec3::INFINITY);
        }
        let center = m.transform_point3(self.center());
        let half = self.size() * 0.5;
        let mat = m.matrix3;
        let abs_cols = [mat.x_axis.abs(), mat.y_axis.abs(), mat.z_axis.abs()];
        let ext: Vec3A = abs_cols[0] * half.x + abs_cols[1] * half.y + abs_cols[2] * half.z;
        let ext = Vec3::from(ext);
        // Widen by the rounding of the products so the box still contains the
        // exact image of every corner.
        let slack = (center.abs() + ext) * gamma(4);
        Self::new(center - ext - slack, center + ext + slack)
    }

    /// The parameter interval where `ray` is inside the box, clipped to `range`;
    /// `None` if the ray misses (or the ray is degenerate).
    ///
    /// Slab method. An axis with `dir == 0` is decided by the origin alone
    /// (inside the slab, boundary included, or a miss), so `(min - o) / 0`,
    /// and with it `0 · ∞ = NaN`, is never formed. On the other axes the far
    /// value is widened by 2γ(3)·|t_far| so that rays grazing a face are never
    /// lost to rounding (pbrt-v4 `Bounds3::IntersectP`).
    #[inline]
    pub fn clip(&self, ray: &Ray, range: Interval) -> Option<Interval> {
        if !ray.is_valid() {
            return None;
        }
        let mut lo = range.min;
        let mut hi = range.max;
        for a in 0..3 {
            let (o, d) = (ray.origin[a], ray.dir[a]);
            if d == 0.0 {
                if !(self.min[a] <= o && o <= self.max[a]) {
                    return None;
                }
                continue;
            }
            let inv = 1.0 / d;
            let t0 = (self.min[a] - o) * inv;
            let t1 = (self.max[a] - o) * inv;
            let (near, far) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
            lo = lo.max(near);
            hi = hi.min(far + far.abs() * (2.0 * gamma(3)));
        }
        if lo <= hi {
            Some(Interval::new(lo, hi))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{vec3, Quat};

    #[test]
    fn slab_handles_axis_parallel_and_on_plane_rays() {
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
        // Parallel to x, on the y = 0 face plane: touching counts.
        let r = Ray::new(vec3(-1.0, 0.0, 0.5), vec3(1.0, 0.0, 0.0));
        let i = b.clip(&r, Interval::FORWARD).unwrap();
        assert_eq!(i.min, 1.0);
        assert!(i.max >= 2.0);
        // Parallel to x, outside the slab.
        let r = Ray::new(vec3(-1.0, 1.5, 0.5), vec3(1.0, 0.0, 0.0));
        assert!(b.clip(&r, Interval::FORWARD).is_none());
        // Behind the ray.
        let r = Ray::new(vec3(2.0, 0.5, 0.5), vec3(1.0, 0.0, 0.0));
        assert!(b.clip(&r, Interval::FORWARD).is_none());
    }

    #[test]
    fn transformed_box_contains_transformed_corners() {
        let b = Aabb::new(vec3(-1.0, -2.0, 0.5), vec3(3.0, 1.0, 2.0));
        let m = Affine3A::from_scale_rotation_translation(
            vec3(2.0, 0.5, 1.5),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, 1.1, -0.7),
            vec3(100.0, -3.0, 7.0),
        );
        let tb = b.transformed(&m);
        for i in 0..8 {
            let c = vec3(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            assert!(tb.contains_point(m.transform_point3(c)));
        }
    }
}
