//! Infinite two-sided plane through `p` with unit normal `n`.
//!
//! Solves `n·(o + t·d − p) = 0`: with the signed distance of the origin
//! `s = n·(o − p)` and `e = n·d`, `t = −s / e` (pbrt-v4's `Bilinear`/disk
//! plane step; Ericson, *Real-Time Collision Detection* §5.3.1). The normal
//! reported is the plane's own `n`, never flipped, so `front_face` says which
//! side the ray comes from.
//!
//! Departures from the textbook form:
//! * The plane is the one given: `s` and `e` use the normal as passed to the
//!   constructor, not its f32 normalisation (which tilts the plane by up to
//!   ~1e-7 rad, an error amplified by the distance to a far, near-parallel
//!   hit). `s`, `e` and `t = −s/e` are computed in f64 from the f32 inputs:
//!   each product of two f32 is exact there, so `e` of a near-parallel ray
//!   keeps its digits (in f32 its rounding, ~1e-7·|d|, can be all of it) and
//!   `t` is correct to f64 rounding. `o − p` is formed first, so two large
//!   equal dot products never cancel for an origin far along the plane.
//! * An origin on the plane must hit at `t = 0` (DESIGN §2); for f32 inputs
//!   "on the plane" means within the f32 rounding of the inputs, so `s` is
//!   taken as 0 when it is within [`ON_PLANE`] of `Σ|n_i·(o_i − p_i)|` — but
//!   only when that moves the hit by at most [`SNAP_MOVE`]·|o − p| along the
//!   ray (`|s|·|d|/|e|`): for a near-parallel ray the exact crossing of an
//!   origin a rounding off the plane can be arbitrarily far, and is reported.
//! * A ray parallel to the plane (`e == 0`) misses unless it lies in it
//!   (`s == 0`); then every `t` touches and the first `t` of the interval is
//!   reported: `t_min`, or `0` for an interval unbounded below that holds it.
//!   `−s/0` is never formed.
//! * The hit point is `o + t·d` in f64, rounded once: with the f64 `t` it is
//!   on the plane to f64 rounding, so it is not projected.
//! * `front_face` (`d·n < 0`) is the sign of the f64 `e`, exact for the
//!   given normal (which points as the unit one does), instead of an f32 dot
//!   product with the rounded unit normal, whose sign can be wrong for a
//!   ray within ~1e-7 rad of parallel; a parallel ray (`e = 0`) has none.

use crate::error::{finite_vec, or_panic};
use crate::hit::hit_if;
use crate::numeric::{gamma, Bounds64};
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use glam::{Affine3A, DVec3, Mat3A, Vec3, Vec3A};

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
    /// The unit normal (reported in hits).
    normal: Vec3,
    point: Vec3,
    /// The normal as given: the kernel's plane, in f64 (see the module doc).
    given: DVec3,
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
        let given = n.as_dvec3();
        Ok(Self { normal: unit, point: finite_vec("point", point)?, given })
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

/// Relative tolerance of the on-plane test `|s| < ON_PLANE·Σ|n_i·(o_i − p_i)|`:
/// the f32 rounding of the inputs (an origin computed in f32 as a point of
/// the plane is off it by a few ulps of each `o_i`), as γ(8).
const ON_PLANE: f64 = gamma(8) as f64;

/// The largest move of the hit, relative to `|o − p|`, that taking an origin
/// within [`ON_PLANE`] as on the plane may cause: ~2e-6, half the exactness
/// target; a ray that would move more gets its exact crossing instead.
const SNAP_MOVE: f64 = 4.0 * ON_PLANE;

/// The first `t` in `range` where the ray meets the plane (see the module
/// doc): whether there is one (false also for a degenerate ray), its f32
/// value, its f64 value, and whether the ray comes from the front
/// (`e = n·d < 0`).
///
/// No data-dependent branch on the usual path: the hit-or-miss test is a
/// combined flag, and the two branches left (an origin within a rounding of
/// the plane, a ray exactly parallel to it) are taken so rarely that they
/// are always predicted.
#[inline(always)]
fn ray_plane(o: Vec3, d: Vec3, n: DVec3, p: Vec3, range: Interval) -> (bool, f32, f64, bool) {
    let (s, e) = plane_terms(o, d, n, p);
    if e == 0.0 {
        let (ok, t, t64) = parallel(s, d, range);
        return (ok, t, t64, false);
    }
    let t = -s / e;
    (finite(e) & Bounds64::new(range).contains(t), t as f32, t, e < 0.0)
}

/// Whether the ray meets the plane in `range`: [`ray_plane`]'s flag, without
/// its division. For `e != 0`, `t = −s/e` is in `[lo, hi]` exactly when
/// `−s·e` is in `[lo·e², hi·e²]` (multiplying by `e² > 0` keeps the order);
/// see [`Bounds64::contains_quotient`]. The products are rounded once each
/// (~1e-16 relative), so the answer can differ from testing the rounded
/// quotient only for a crossing within ~1e-16·|t| of an end.
#[inline(always)]
fn ray_meets_plane(o: Vec3, d: Vec3, n: DVec3, p: Vec3, range: Interval) -> bool {
    let (s, e) = plane_terms(o, d, n, p);
    if e == 0.0 {
        return parallel(s, d, range).0;
    }
    // `e² < ∞` is `finite(e)` here (a finite `e` is at most 3·F32_MAX², so
    // `e²` cannot overflow), sharing the square with the quotient test.
    (e * e < f64::INFINITY) & Bounds64::new(range).contains_quotient(-s, e)
}

/// The signed distance term `s = n·(o − p)` (snapped to 0 for an origin on
/// the plane, see the module doc) and `e = n·d`.
///
/// Degenerate rays need no test of their own: `n` and `p` are finite, and
/// `n_i·x` is NaN for an infinite `x` when `n_i = 0` and infinite otherwise,
/// so a NaN or ±∞ in `o` (or `d`) makes `s` (or `e`) NaN or ±∞, while a
/// finite `o` or `d` keeps them finite (f64 sums of exact products of f32
/// values cannot overflow). A non-finite `s` is never snapped (its snap test
/// is strict: `∞ < ∞` and NaN comparisons are false) and gives a NaN or
/// infinite `t` (and `−s·e`), which no range holds; a parallel ray must
/// have `s == 0`, hence a finite origin;
/// so only a non-finite `e` needs the test [`finite`] (`t = −s/∞` would be
/// 0). `d = 0` gives `e = 0`, refused by [`parallel`].
#[inline(always)]
fn plane_terms(o: Vec3, d: Vec3, n: DVec3, p: Vec3) -> (f64, f64) {
    let (w, d64) = (o.as_dvec3() - p.as_dvec3(), d.as_dvec3());
    let nw = n * w;
    let s = nw.element_sum();
    let e = n.dot(d64);
    // The snap moves the hit by |s|·|d|/|e|; compared squared, no root.
    // Strict, so that an infinite `s` (whose bound is infinite too) is never
    // snapped; for a finite `s` it only leaves out the exact equality, and
    // an exact 0 needs no snap.
    let s = if s.abs() < ON_PLANE * nw.abs().element_sum()
        && s * s * d64.length_squared() <= (SNAP_MOVE * SNAP_MOVE) * (e * e) * w.length_squared()
    {
        0.0
    } else {
        s
    };
    (s, e)
}

/// `|e| < ∞` (false for NaN): the direction is finite (see [`plane_terms`]).
#[inline(always)]
fn finite(e: f64) -> bool {
    e.abs() < f64::INFINITY
}

/// The answer for a ray parallel to the plane (`e == 0`), or `d = 0`, which
/// is no ray: in the plane (`s == 0`) it touches at the first `t` of the
/// range, otherwise it misses. Rare, so it is a branch.
#[inline(always)]
fn parallel(s: f64, d: Vec3, range: Interval) -> (bool, f32, f64) {
    match first_in(range) {
        Some(t) if (s == 0.0) & (d != Vec3::ZERO) => (true, t, f64::from(t)),
        _ => (false, 0.0, 0.0),
    }
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
    /// The full hit at `t` (f64 value `t64`): `o + t·d` in f64, its own
    /// normal, and `front_face` from the sign of `e` (see the module doc).
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, t: f32, t64: f64, front_face: bool) -> Hit {
        let q = ray.origin.as_dvec3() + t64 * ray.dir.as_dvec3();
        Hit::with_face(t, q.as_vec3(), self.normal, front_face, Part::Face)
    }
}

impl RayCast for Plane {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// The hit is computed on a miss too (at a `t` out of range or NaN).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let (ok, t, t64, front_face) = ray_plane(ray.origin, ray.dir, self.given, self.point, range);
        (ok, self.hit_at(ray, t, t64, front_face))
    }

    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        ray_meets_plane(ray.origin, ray.dir, self.given, self.point, range)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        self.cast(ray, range).into_iter().collect()
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY)
    }

    #[inline(always)]
    fn as_plane(&self) -> Option<&Plane> {
        Some(self)
    }
}

impl Plane {
    /// This plane placed by `world_from_local`, as a plane of the world frame:
    /// through the mapped point, with normal `normal_from_local · n` (the
    /// inverse transpose, as [`Transformed`](crate::Transformed) maps
    /// normals; `renormalize` when that is not a rotation). A placed plane is
    /// then cast with no map applied to the ray or to the hit, which takes
    /// two matrix products off the path from the ray to the answer; the
    /// world plane is formed once, when the placement is set (`Transformed`
    /// keeps it). The kernel's `n` is the mapped
    /// normal before normalisation: `t = −s/e` does not depend on its length.
    pub(crate) fn placed(
        &self,
        world_from_local: &Affine3A,
        normal_from_local: &Mat3A,
        renormalize: bool,
    ) -> Plane {
        let n = *normal_from_local * Vec3A::from(self.normal);
        let unit = if renormalize { n * (1.0 / n.length()) } else { n };
        let point = world_from_local.transform_point3a(Vec3A::from(self.point));
        Plane { normal: Vec3::from(unit), point: Vec3::from(point), given: Vec3::from(n).as_dvec3() }
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
        // An infinite origin component along the normal makes `s` infinite;
        // it must not be taken as "on the plane".
        for o in [vec3(f32::INFINITY, 0.0, 0.0), vec3(f32::NEG_INFINITY, 1.0, 2.0)] {
            for d in [vec3(-1.0, 0.0, 0.0), vec3(1.0, 0.5, 0.0), vec3(-3.0, 0.0, 1.0)] {
                let r = Ray::new(o, d);
                for range in [Interval::FORWARD, Interval::ALL, Interval::new(-1.0, 1.0)] {
                    assert!(pl.cast(&r, range).is_none() && !pl.hits(&r, range), "{r:?} {range:?}");
                }
            }
        }
        // A subnormal normal component of d: t overflows to ∞, which is no hit.
        assert!(pl.cast(&Ray::new(vec3(-4.0, 0.0, 0.0), vec3(1e-45, 1.0, 0.0)), Interval::FORWARD).is_none());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(9), ..Default::default() })]

        /// `hits` (no division: `−s·e` against `e²·[lo, hi]`) agrees with
        /// `cast` (which divides), also on ranges that end exactly at the
        /// crossing; `front_face` is `dir · normal < 0` away from parallel.
        #[test]
        fn hits_and_cast_agree(
            n in proptest::array::uniform3(-2.0f32..2.0), p in proptest::array::uniform3(-4.0f32..4.0),
            o in proptest::array::uniform3(-8.0f32..8.0), d in proptest::array::uniform3(-3.0f32..3.0),
            lo in -6.0f32..6.0, len in 0.0f32..12.0, end in 0usize..5,
        ) {
            proptest::prop_assume!(Vec3::from(n).length() > 1e-2);
            let (pl, ray) = (Plane::new(Vec3::from(n), Vec3::from(p)), Ray::new(Vec3::from(o), Vec3::from(d)));
            let first = pl.cast(&ray, Interval::ALL);
            let range = match (end, first) {
                (0, _) => Interval::FORWARD,
                (1, _) => Interval::new(lo, lo + len),
                (2, Some(h)) => Interval::new(h.t, h.t + len),
                (3, Some(h)) => Interval::new(h.t - len, h.t),
                _ => Interval::ALL,
            };
            let cast = pl.cast(&ray, range);
            proptest::prop_assert_eq!(pl.hits(&ray, range), cast.is_some(), "{:?} {:?}", range, first);
            if let Some(h) = cast {
                proptest::prop_assert!(range.contains(h.t), "{:?} {:?}", h, range);
                let cos = ray.dir.normalize_or_zero().dot(h.normal);
                if cos.abs() > 1e-3 {
                    proptest::prop_assert_eq!(h.front_face, cos < 0.0, "{:?}", h);
                }
            }
        }
    }

    #[test]
    fn far_origin_point_is_projected_onto_the_plane() {
        let pl = Plane::new(vec3(1.0, 1.0, 0.0), vec3(0.5, 0.5, 0.0));
        let h = pl.cast(&Ray::new(vec3(-1.0e4, 3.0, 7.0), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert!((h.t - 10_000.0 + 2.0).abs() <= 1.0e4 * f32::EPSILON, "{}", h.t);
        assert!((h.point.x + h.point.y - 1.0).abs() <= 4.0 * f32::EPSILON, "{:?}", h.point);
    }
}
