//! Infinite two-sided plane through `p` with unit normal `n`.
//!
//! Solves `n·(o + t·d − p) = 0`: with the signed distance of the origin
//! `s = n·(o − p)` and `e = n·d`, `t = −s / e` (pbrt-v4's `Bilinear`/disk
//! plane step; Ericson, *Real-Time Collision Detection* §5.3.1). The normal
//! reported is the plane's own `n`, never flipped, so `front_face` says which
//! side the ray comes from.
//!
//! Departures from the textbook form:
//! * `o − p` is formed before the dot product (not `n·o − n·p`), so two large
//!   equal dot products never cancel for an origin far along the plane.
//! * An origin on the plane must hit at `t = 0` (DESIGN §2), but the rounded
//!   `s` is then a few ulps of `Σ|n_i·(o_i − p_i)|`, not 0. `s` is taken as 0
//!   when it is within its own rounding bound ([`ON_PLANE`]).
//! * A ray parallel to the plane (`e == 0`) misses unless it lies in it
//!   (`s == 0`); then every `t` touches and the first `t` of the interval is
//!   reported: `t_min`, or `0` for an interval unbounded below that holds it.
//!   `−s/0` is never formed.
//! * The hit point is projected back onto the plane.

use crate::error::{finite_vec, or_panic};
use crate::numeric::gamma;
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use glam::Vec3;

/// An infinite two-sided plane through `point` with unit `normal`.
/// Its part is [`Part::Face`]; the hit normal is the plane's own normal.
///
/// # Examples
/// ```
/// use raycast::{vec3, Interval, Part, Plane, Ray, RayCast, Vec3};
/// let ground = Plane::try_new(vec3(0.0, 2.0, 0.0), vec3(0.0, -1.0, 0.0))?;
/// let hit = ground.cast(&Ray::new(vec3(3.0, 4.0, 0.0), vec3(0.0, -2.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.point, hit.normal), (2.5, vec3(3.0, -1.0, 0.0), Vec3::Y));
/// // From below: the same normal, so the ray sees the back face.
/// let hit = ground.cast(&Ray::new(vec3(0.0, -3.0, 0.0), Vec3::Y), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.normal, hit.front_face), (2.0, Vec3::Y, false));
/// assert!(Plane::try_new(Vec3::ZERO, Vec3::ZERO).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    normal: Vec3,
    point: Vec3,
}

impl Plane {
    /// The plane through `point` with the given normal (normalised here).
    ///
    /// # Errors
    /// [`ShapeError`] on `normal` if it is zero or not finite, on `point` if not finite.
    pub fn try_new(normal: Vec3, point: Vec3) -> Result<Self, ShapeError> {
        let n = finite_vec("normal", normal)?;
        let unit = n.normalize_or_zero();
        if unit == Vec3::ZERO {
            return Err(ShapeError::new(
                "normal",
                format!("must not be zero, got [{}, {}, {}]", n.x, n.y, n.z),
            ));
        }
        Ok(Self { normal: unit, point: finite_vec("point", point)? })
    }
    /// Like [`Plane::try_new`].
    ///
    /// # Panics
    /// With the error's message when the plane is refused.
    #[track_caller]
    pub fn new(normal: Vec3, point: Vec3) -> Self {
        or_panic(Self::try_new(normal, point))
    }
    /// The unit normal.
    pub fn normal(&self) -> Vec3 {
        self.normal
    }
    /// A point on the plane.
    pub fn point(&self) -> Vec3 {
        self.point
    }
}

/// Relative rounding bound of `s = n·(o − p)` against `Σ|n_i·(o_i − p_i)|`:
/// one rounding in each difference and three in the dot product (γ(4)), plus
/// the normalisation of the stored normal (length and division, γ(4)).
const ON_PLANE: f32 = gamma(8);

/// The first `t` in `range` where the ray meets the plane (see the module
/// doc); `None` on a miss or for a degenerate ray.
#[inline]
fn ray_plane(o: Vec3, d: Vec3, n: Vec3, p: Vec3, range: Interval) -> Option<f32> {
    if !(o.is_finite() && d.is_finite()) || d == Vec3::ZERO {
        return None;
    }
    let w = o - p;
    let s = n.dot(w);
    let s = if s.abs() <= ON_PLANE * (n * w).abs().element_sum() { 0.0 } else { s };
    let e = n.dot(d);
    if e == 0.0 {
        return if s == 0.0 { first_in(range) } else { None };
    }
    let t = -s / e;
    (range.contains(t) && t.is_finite()).then_some(t)
}

/// The first `t` of a non-empty interval: `min`, or `0` (or `max`) when `min`
/// is `−∞`; `None` when no finite `t` qualifies.
#[inline]
fn first_in(range: Interval) -> Option<f32> {
    if range.is_empty() {
        None
    } else if range.min.is_finite() {
        Some(range.min)
    } else if range.contains(0.0) {
        Some(0.0)
    } else {
        range.max.is_finite().then_some(range.max)
    }
}

impl Plane {
    /// The full hit at `t`: the point projected onto the plane, its own normal.
    fn hit_at(&self, ray: &Ray, t: f32) -> Hit {
        let q = ray.at(t);
        let point = q - self.normal.dot(q - self.point) * self.normal;
        Hit::with_point(ray, t, point, self.normal, Part::Face)
    }
}

impl RayCast for Plane {
    #[inline]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let t = ray_plane(ray.origin, ray.dir, self.normal, self.point, range)?;
        Some(self.hit_at(ray, t))
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        ray_plane(ray.origin, ray.dir, self.normal, self.point, range).is_some()
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        self.cast(ray, range).into_iter().collect()
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    #[test]
    fn both_sides_report_the_planes_own_normal() {
        let pl = Plane::new(vec3(0.0, 0.0, 3.0), vec3(0.0, 0.0, 1.0));
        let h = pl.cast(&Ray::new(vec3(1.0, 2.0, 5.0), vec3(0.0, 0.0, -0.5)), Interval::FORWARD).unwrap();
        assert_eq!(
            (h.t, h.point, h.normal, h.front_face, h.part),
            (8.0, vec3(1.0, 2.0, 1.0), Vec3::Z, true, Part::Face)
        );
        let h = pl.cast(&Ray::new(vec3(1.0, 2.0, -5.0), vec3(0.0, 0.0, 2.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.front_face), (3.0, Vec3::Z, false));
        assert!(pl.cast(&Ray::new(vec3(1.0, 2.0, -5.0), vec3(0.0, 0.0, -2.0)), Interval::FORWARD).is_none());
        assert!(pl.hits(&Ray::new(vec3(1.0, 2.0, -5.0), vec3(0.0, 0.0, -2.0)), Interval::ALL));
    }

    #[test]
    fn origin_on_a_slanted_plane_hits_at_zero() {
        // n = (1, 2, 3)/|..| rounds, so n·(o − p) is a few ulps, not 0, without ON_PLANE.
        let p = vec3(0.3, -1.7, 2.9);
        let pl = Plane::new(vec3(1.0, 2.0, 3.0), p);
        let o = p + vec3(2.0, -1.0, 0.0); // (2, -1, 0) ⟂ (1, 2, 3)
        let h = pl.cast(&Ray::new(o, vec3(0.1, 0.7, -0.4)), Interval::FORWARD).unwrap();
        assert_eq!(h.t, 0.0);
        assert_eq!(pl.cast_all(&Ray::new(o, vec3(0.1, 0.7, -0.4)), Interval::FORWARD).len(), 1);
    }

    #[test]
    fn parallel_rays_miss_unless_in_the_plane() {
        let pl = Plane::new(Vec3::Y, vec3(0.0, 1.0, 0.0));
        assert!(pl.cast(&Ray::new(vec3(0.0, 1.5, 0.0), Vec3::X), Interval::FORWARD).is_none());
        let in_plane = Ray::new(vec3(4.0, 1.0, -2.0), vec3(1.0, 0.0, 1.0));
        assert_eq!(pl.cast(&in_plane, Interval::FORWARD).unwrap().t, 0.0);
        assert_eq!(pl.cast(&in_plane, Interval::new(2.5, 3.0)).unwrap().t, 2.5);
        assert_eq!(pl.cast(&in_plane, Interval::ALL).unwrap().t, 0.0);
        assert_eq!(pl.cast(&in_plane, Interval::new(f32::NEG_INFINITY, -1.0)).unwrap().t, -1.0);
        assert!(pl.cast(&in_plane, Interval::new(3.0, 2.0)).is_none());
    }

    #[test]
    fn interval_ends_count_and_degenerate_rays_miss() {
        let pl = Plane::new(Vec3::X, Vec3::ZERO);
        let r = Ray::new(vec3(-4.0, 0.0, 0.0), vec3(2.0, 1.0, 0.0));
        assert!(pl.hits(&r, Interval::new(2.0, 2.0)));
        assert!(!pl.hits(&r, Interval::new(0.0, 1.99)));
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0), vec3(0.0, f32::INFINITY, 0.0)] {
            assert!(pl.cast(&Ray::new(Vec3::ZERO, d), Interval::FORWARD).is_none());
        }
        // A subnormal normal component of d: t overflows to ∞, which is no hit.
        assert!(pl.cast(&Ray::new(vec3(-4.0, 0.0, 0.0), vec3(1e-45, 1.0, 0.0)), Interval::FORWARD).is_none());
    }

    #[test]
    fn far_origin_point_is_projected_onto_the_plane() {
        let pl = Plane::new(vec3(1.0, 1.0, 0.0), vec3(0.5, 0.5, 0.0));
        let h = pl.cast(&Ray::new(vec3(-1.0e4, 3.0, 7.0), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert!((h.t - 10_000.0 + 2.0).abs() <= 1.0e4 * f32::EPSILON, "{}", h.t);
        assert!((h.point.x + h.point.y - 1.0).abs() <= 4.0 * f32::EPSILON, "{:?}", h.point);
    }
}
