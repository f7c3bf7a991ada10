//! Axis-aligned box centred at the origin with half extents `h`.
//!
//! Slab method (Kay & Kajiya 1986; pbrt-v4 `Bounds3::IntersectP`; Williams et
//! al., "An Efficient and Robust Ray–Box Intersection Algorithm", JGT 2005).
//! On axis `k` the line is inside the slab `−h_k ≤ o_k + t·d_k ≤ h_k` for
//! `t` between `(−h_k − o_k)/d_k` and `(h_k − o_k)/d_k`; the line is inside
//! the box from the largest near value (`t0`, whose axis is the entry face) to
//! the smallest far value (`t1`, the exit face).
//!
//! Departures from the textbook form:
//! * The slab ends are computed by division, `(±h − o)/d`, not by a
//!   precomputed reciprocal: `0 · (1/d)` is `0 · ∞ = NaN` for a ray lying in a
//!   face plane with a tiny or zero `d_k`, whereas `0 / d` is `0` (or NaN only
//!   for `d_k == 0`, which is handled below), and one rounding is more accurate
//!   than two.
//! * An axis with `d_k == 0` is decided by the origin alone: inside the slab
//!   (boundary included, so a ray along a face touches it) it does not limit
//!   `t`, otherwise the ray misses. `(h − o)/0` is never used.
//! * Each slab end carries two roundings (γ(2) relative error), so two equal
//!   exact values, as at an edge or vertex crossing, may compare in the wrong
//!   order. The test is `t0 <= t1·(1 + 2γ(3))` as in pbrt-v4 and
//!   [`Aabb::clip`]; a ray through an edge or vertex is then never lost.
//!   Accepted that way, `t1` is reported as `max(t0, t1)`, so `t0 <= t1` always.
//! * The hit point is snapped onto the face (`p_k = ±h_k`) and clamped into the
//!   face rectangle, removing the error `o + t·d` carries from a far origin.
//! * Branch-free: all three slabs in one 4-lane `Vec3A` pass, the entry (exit)
//!   axis is the first lane equal to the max (min) found from a lane mask, and
//!   the face, normal and point are selected from that axis with masks and a
//!   table. `cast` computes the hit on a miss too, so not even hit or miss is a
//!   branch ([`RayCast::cast_candidate`]).

use crate::error::{or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{all_finite, gamma};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::{BVec3A, Vec3, Vec3A};

/// An axis-aligned box centred at the origin with the given half extents.
/// Parts: the faces [`Part::PosX`] ... [`Part::NegZ`].
///
/// # Examples
/// ```
/// use raycast::{vec3, ConvexSolid, Interval, Part, Ray, RayCast, Cuboid};
/// let b = Cuboid::try_new(vec3(1.0, 2.0, 3.0))?;
/// let ray = Ray::new(vec3(-5.0, 0.5, 0.5), vec3(2.0, 0.0, 0.0));
/// let hit = b.cast(&ray, Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.normal), (2.0, Part::NegX, vec3(-1.0, 0.0, 0.0)));
/// let span = b.span(&ray).unwrap();
/// assert_eq!((span.exit.t, span.exit.part), (3.0, Part::PosX));
/// assert!(Cuboid::try_new(vec3(1.0, 0.0, 1.0)).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
/// See also [`Aabb::clip`] for the bare slab test without normals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    half_extents: Vec3,
}

impl Cuboid {
    /// A box with the given half extents.
    ///
    /// # Errors
    /// [`ShapeError`] on `half_extents` unless every component is finite and > 0.
    pub fn try_new(half_extents: Vec3) -> Result<Self, ShapeError> {
        for (i, v) in half_extents.to_array().into_iter().enumerate() {
            positive(&format!("half_extents[{i}]"), v)?;
        }
        Ok(Self { half_extents })
    }
    /// Like [`Cuboid::try_new`].
    ///
    /// # Panics
    /// With the error's message when the box is refused.
    #[track_caller]
    pub fn new(half_extents: Vec3) -> Self {
        or_panic(Self::try_new(half_extents))
    }
    /// The half extents.
    pub fn half_extents(&self) -> Vec3 {
        self.half_extents
    }
}

/// Relative widening of the exit parameter before it is compared with the
/// entry one: each slab end has two roundings, see the module doc.
const TOUCH_SLACK: f32 = 2.0 * gamma(3);

/// Where the line crosses the box (see the module doc): entry `t0`, exit
/// `t1` (`t0 <= t1`, raised to `t0` when the slack accepted them crossed) and
/// the slab ends they came from; `ok` is false when the line misses, the ray
/// is degenerate, or a crossing is not a finite f32.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f32,
    t1: f32,
    /// The exit before it was raised to `t0`: the lane of `far` it came from.
    t1_raw: f32,
    near: Vec3A,
    far: Vec3A,
    ok: bool,
}

/// The slab kernel (see the module doc).
#[inline(always)]
fn ray_box(o: Vec3, d: Vec3, h: Vec3) -> Crossing {
    let (o, d, h) = (Vec3A::from(o), Vec3A::from(d), Vec3A::from(h));
    // NaN or ±∞ in any lane makes `(o − o) + (d − d)` NaN there.
    let valid = all_finite(o, d) & !d.cmpeq(Vec3A::ZERO).all();
    let t_lo = (-h - o) / d;
    let t_hi = (h - o) / d;
    let positive = d.cmpgt(Vec3A::ZERO);
    let near = Vec3A::select(positive, t_lo, t_hi);
    let far = Vec3A::select(positive, t_hi, t_lo);
    // Axes with d == 0: no limit when the origin is in the slab, else empty.
    let parallel = d.cmpeq(Vec3A::ZERO);
    let inside = o.abs().cmple(h);
    let free = parallel & inside;
    let blocked = parallel & !inside;
    let near = Vec3A::select(free, Vec3A::NEG_INFINITY, Vec3A::select(blocked, Vec3A::INFINITY, near));
    let far = Vec3A::select(free, Vec3A::INFINITY, Vec3A::select(blocked, Vec3A::NEG_INFINITY, far));
    let t0 = near.max_element();
    let t1 = far.min_element();
    let ok =
        valid & (t0 <= t1 + t1.abs() * TOUCH_SLACK) & (t0.abs() < f32::INFINITY) & (t1.abs() < f32::INFINITY);
    Crossing { t0, t1: t1.max(t0), t1_raw: t1, near, far, ok }
}

/// The faces by axis, negative then positive.
const FACES: [[Part; 2]; 3] = [[Part::NegX, Part::PosX], [Part::NegY, Part::PosY], [Part::NegZ, Part::PosZ]];

impl Cuboid {
    /// The full hit at `t` on the face of the first lane of `lanes` equal to
    /// `t_raw` (the axis that set it); `entering` picks the face the ray points
    /// into (`true`) or out of (`false`).
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, t: f32, lanes: Vec3A, t_raw: f32, entering: bool) -> Hit {
        let (o, d, h) = (Vec3A::from(ray.origin), Vec3A::from(ray.dir), Vec3A::from(self.half_extents));
        // First lane on ties (x, then y, then z); `& 3` keeps the index in range.
        let axis = (lanes.cmpeq(Vec3A::splat(t_raw)).bitmask().trailing_zeros() & 3).min(2) as usize;
        // Outward on the face the ray points into when entering, out of
        // when leaving: lane masks, so no branch on the (random) face.
        let positive = d.cmpgt(Vec3A::ZERO) ^ BVec3A::splat(entering);
        let sign = Vec3A::select(positive, Vec3A::ONE, Vec3A::NEG_ONE);
        let on_axis = Vec3A::new(0.0, 1.0, 2.0).cmpeq(Vec3A::splat(axis as f32));
        let n = Vec3A::select(on_axis, sign, Vec3A::ZERO);
        let p = Vec3A::select(on_axis, sign * h, (o + t * d).clamp(-h, h));
        let positive = (positive.bitmask() >> axis) & 1 != 0;
        Hit::with_point(ray, t, p.into(), n.into(), FACES[axis][usize::from(positive)])
    }
}

impl RayCast for Cuboid {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free: the end is chosen with selects and the hit computed on
    /// a miss too (see [`RayCast::cast_candidate`]).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let c = ray_box(ray.origin, ray.dir, self.half_extents);
        let entering = range.contains(c.t0);
        // Lane selects, not branches: whether a miss "enters" is random.
        let m = BVec3A::splat(entering);
        let lanes = Vec3A::select(m, c.near, c.far);
        let ts = Vec3A::select(m, Vec3A::new(c.t0, c.t0, 0.0), Vec3A::new(c.t1, c.t1_raw, 0.0));
        let (t, t_raw) = (ts.x, ts.y);
        (c.ok & (entering | range.contains(c.t1)), self.hit_at(ray, t, lanes, t_raw, entering))
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let c = ray_box(ray.origin, ray.dir, self.half_extents);
        c.ok & (range.contains(c.t0) | range.contains(c.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let c = ray_box(ray.origin, ray.dir, self.half_extents);
        let mut out = Vec::with_capacity(2);
        if !c.ok {
            return out;
        }
        if range.contains(c.t0) {
            out.push(self.hit_at(ray, c.t0, c.near, c.t0, true));
        }
        if c.t1 != c.t0 && range.contains(c.t1) {
            out.push(self.hit_at(ray, c.t1, c.far, c.t1_raw, false));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(self.half_extents)
    }
}

impl Solid for Cuboid {
    #[inline]
    fn contains(&self, p: Vec3) -> bool {
        let inside: BVec3A = Vec3A::from(p).abs().cmple(Vec3A::from(self.half_extents));
        inside.all()
    }
}

impl ConvexSolid for Cuboid {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let c = ray_box(ray.origin, ray.dir, self.half_extents);
        c.ok.then(|| Span {
            enter: self.hit_at(ray, c.t0, c.near, c.t0, true),
            exit: self.hit_at(ray, c.t1, c.far, c.t1_raw, false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    fn unit_box() -> Cuboid {
        Cuboid::new(Vec3::ONE)
    }

    #[test]
    fn every_face_from_outside_with_its_part_and_normal() {
        let b = Cuboid::new(vec3(1.0, 2.0, 3.0));
        for axis in 0..3 {
            for sign in [1.0f32, -1.0] {
                let mut o = Vec3::ZERO;
                o[axis] = sign * 10.0;
                let mut d = Vec3::ZERO;
                d[axis] = -sign * 0.5;
                let hit = b.cast(&Ray::new(o, d), Interval::FORWARD).unwrap();
                let h = b.half_extents()[axis];
                assert_eq!(hit.t, (10.0 - h) / 0.5);
                assert_eq!(hit.part, Part::axis_face(axis, sign > 0.0));
                assert_eq!(hit.normal[axis], sign);
                assert_eq!(hit.point[axis], sign * h);
                assert!(hit.front_face);
            }
        }
    }

    #[test]
    fn from_inside_hits_the_exit_face_from_behind() {
        let h =
            unit_box().cast(&Ray::new(vec3(0.2, 0.3, 0.4), vec3(0.0, 0.0, -2.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.front_face), (0.7, Part::NegZ, vec3(0.0, 0.0, -1.0), false));
        assert_eq!(h.point, vec3(0.2, 0.3, -1.0));
    }

    #[test]
    fn ray_lying_in_a_face_plane_touches_without_nan() {
        // Along the y = 1 face: d.y == 0 and o.y == h.y, the 0/0 case.
        let r = Ray::new(vec3(-3.0, 1.0, 0.5), vec3(1.0, 0.0, 0.0));
        let h = unit_box().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part), (2.0, Part::NegX));
        let s = unit_box().span(&r).unwrap();
        assert_eq!((s.enter.t, s.exit.t, s.exit.part), (2.0, 4.0, Part::PosX));
        // Just outside the face plane: a miss.
        let r = Ray::new(vec3(-3.0, 1.0000001, 0.5), vec3(1.0, 0.0, 0.0));
        assert!(unit_box().cast(&r, Interval::FORWARD).is_none());
        // Along an edge (two zero components on the boundary).
        let r = Ray::new(vec3(1.0, -1.0, -7.0), vec3(0.0, 0.0, 3.0));
        let h = unit_box().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part), (2.0, Part::NegZ));
        assert!(!h.point.is_nan() && !h.normal.is_nan());
    }

    #[test]
    fn rays_through_an_edge_or_a_vertex_touch() {
        // Through the edge x = 1, y = 1 only (tangent to the box there).
        let r = Ray::new(vec3(3.0, -1.0, 0.0), vec3(-1.0, 1.0, 0.0));
        let h = unit_box().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!(h.t, 2.0);
        assert!(h.part == Part::PosX || h.part == Part::PosY);
        assert_eq!(h.point, vec3(1.0, 1.0, 0.0));
        // Through the vertex (1, 1, 1) only.
        let r = Ray::new(vec3(3.0, -1.0, -1.0), vec3(-1.0, 1.0, 1.0));
        let s = unit_box().span(&r).unwrap();
        assert_eq!((s.enter.t, s.exit.t), (2.0, 2.0));
        assert_eq!(unit_box().cast_all(&r, Interval::FORWARD).len(), 1);
    }

    #[test]
    fn interval_ends_count_and_cast_all_is_sorted() {
        let r = Ray::new(vec3(0.0, 0.0, -3.0), vec3(0.0, 0.0, 1.0));
        assert!(unit_box().hits(&r, Interval::new(0.0, 2.0)));
        assert!(!unit_box().hits(&r, Interval::new(0.0, 1.9)));
        assert!(unit_box().hits(&r, Interval::new(4.0, 9.0)));
        assert!(!unit_box().hits(&r, Interval::new(2.0, 1.0)));
        let all = unit_box().cast_all(&r, Interval::FORWARD);
        assert_eq!(
            all.iter().map(|h| (h.t, h.part)).collect::<Vec<_>>(),
            [(2.0, Part::NegZ), (4.0, Part::PosZ)]
        );
    }

    #[test]
    fn degenerate_rays_miss() {
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0), vec3(1.0, f32::NAN, 0.0)] {
            assert!(unit_box().cast(&Ray::new(vec3(-5.0, 0.0, 0.0), d), Interval::FORWARD).is_none());
            assert!(unit_box().span(&Ray::new(vec3(-5.0, 0.0, 0.0), d)).is_none());
        }
        assert!(!unit_box().hits(&Ray::new(vec3(f32::NAN, 0.0, 0.0), Vec3::X), Interval::ALL));
        // A subnormal direction component with the origin in that face plane: no 0·∞.
        // Pointing inward it hits; pointing outward it has left the box (exactly) by t = 4.
        let r = Ray::new(vec3(1.0, 0.0, -5.0), vec3(1e-45, 0.0, 1.0));
        assert!(unit_box().cast(&r, Interval::FORWARD).is_none());
        let r = Ray::new(vec3(1.0, 0.0, -5.0), vec3(-1e-45, 0.0, 1.0));
        let h = unit_box().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part), (4.0, Part::NegZ));
    }

    #[test]
    fn far_origin_point_is_on_the_face() {
        let r = Ray::new(vec3(-1.0e4, 0.3, -0.2), vec3(1.0, 1.0e-5, 0.0));
        let h = unit_box().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.point.x, h.part), (-1.0, Part::NegX));
        assert!((h.t - 9999.0).abs() <= 9999.0 * f32::EPSILON);
    }

    #[test]
    fn contains_includes_the_boundary() {
        assert!(unit_box().contains(vec3(1.0, -1.0, 0.0)));
        assert!(!unit_box().contains(vec3(1.0, -1.0000001, 0.0)));
    }
}
