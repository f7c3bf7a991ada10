//! Sphere of radius `r` centred at the origin.
//!
//! Solves |o + t·d|² = r². With a = d·d, b = o·d the foot of the perpendicular
//! from the centre is at t_m = −b/a, the point o⊥ = o + t_m·d, and the line is
//! inside the sphere over t_m ± √(h²/a), h² = r² − |o⊥|² the squared half chord
//! (Haines et al., "Precision Improvements for Ray/Sphere Intersection", *Ray
//! Tracing Gems* ch. 7: no b² − a·c, which cancels for a far origin).
//!
//! Everything is done in f64 from the f32 inputs: every product of two f32 is
//! exact in f64, so h² carries an error of ~1e-16·r² instead of f32's ~1e-7·r²,
//! and the half chord √h² of a grazing ray (h → 0), whose error is
//! err(h²)/(2h), keeps its digits down to h ≈ 1e-8·r. In f64 the plain
//! t_m ± half form is as accurate as the Vieta form (the cancellation in
//! t_m − half costs ~1e-16 of |t_m|, far below the f32 output). It is
//! evaluated as t = (−o·d ∓ √(a·h²))/a with a·h² = r²·a − |o × d|² (see
//! `roots`), which keeps the one division off the path to the square
//! root. No f32 input can overflow an f64 square; a NaN or infinite input
//! makes a·h² NaN or −∞, and d = 0 makes t = 0·∞ = NaN, so the tests on a·h²
//! and on the range reject every degenerate ray (`cast` and `hits`, which
//! test the range before any `t` exists, test `a > 0` instead). A line within the f32
//! rounding of the inputs of tangent touches ([`TOUCH_REL`]: inputs written
//! as tangent are off by that rounding).
//!
//! The hit point is o + t·d in f64 (the unrounded t), which lies on the sphere
//! to ~1e-16 of |o|, so the normal is that point times 1/r — unit to within
//! f32 rounding without a square root — and the point is its rounding.
//! `front_face` needs no dot product: at t∓, d·(o + t·d) = b + t·a =
//! ∓√(a·h²), so the ray arrives from outside exactly at t− with a·h² > 0.
//!
//! `cast` keeps its chain of dependent steps short (the rays of a batch are
//! independent, so the core overlaps them when each is short): which root
//! is in the range is decided from b, a and a·h² alone, without the root
//! (see `Bounds64::pick_root`), while the square root is computed; after it
//! only k = ±√(a·h²)/a, t = t_m + k and the point (o + t_m·d) + k·d remain,
//! where t_m = −b/a and the foot o + t_m·d were formed meanwhile. The
//! decision and the rounded t can disagree only for a root within ~1e-16·|t|
//! of an end of the range, so t is clamped to the range (a move of that
//! size).

use crate::error::{or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{Bounds64, F32_MAX, TOUCH_REL};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::{DVec3, Vec3};

/// A sphere of radius `radius` centred at the origin. Its only part is
/// [`Part::Surface`].
///
/// # Examples
/// ```
/// use raycast::{vec3, Interval, Ray, RayCast, Sphere};
/// let s = Sphere::try_new(2.0)?;
/// let hit = s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
/// assert_eq!(hit.t, 3.0);
/// assert_eq!(hit.normal, vec3(0.0, 0.0, -1.0));
/// assert!(Sphere::try_new(-1.0).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    radius: f32,
    /// `1/radius` in f64, so that a hit needs no division (see `hit_at`).
    inv_radius: f64,
}

impl Sphere {
    /// A sphere of the given radius.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` unless it is finite and > 0.
    pub fn try_new(radius: f32) -> Result<Self, ShapeError> {
        let radius = positive("radius", radius)?;
        Ok(Self { radius, inv_radius: 1.0 / f64::from(radius) })
    }

    /// Like [`Sphere::try_new`].
    ///
    /// # Panics
    /// With the error's message when the radius is refused.
    #[track_caller]
    pub fn new(radius: f32) -> Self {
        or_panic(Self::try_new(radius))
    }

    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
}

/// `a = d·d`, `b = o·d`, `a·h² = r²·a − |o × d|²` in f64 (see [`roots`]),
/// and whether the line meets the sphere (`a·h²` not below the
/// [`TOUCH_REL`] slack; false for NaN and −∞).
#[inline(always)]
fn sphere_terms(o: Vec3, d: Vec3, r: f32) -> (f64, f64, f64, bool) {
    sphere_terms64(o.as_dvec3(), d.as_dvec3(), f64::from(r))
}

/// [`sphere_terms`] on `f64` inputs (the placed sphere's, see [`Placed`]).
#[inline(always)]
fn sphere_terms64(o: DVec3, d: DVec3, r: f64) -> (f64, f64, f64, bool) {
    let a = d.length_squared();
    let b = o.dot(d);
    let r2a = r * r * a;
    let h2a = r2a - o.cross(d).length_squared();
    (a, b, h2a, h2a >= -TOUCH_REL * r2a)
}

/// A sphere placed by a similarity (rotation, uniform scale `s`, translation
/// `c`), cast in the world frame: a sphere has no orientation, so the world
/// ray is only moved by `−c` (exactly, in f64) and the radius scaled by `s`,
/// where [`Transformed`](crate::Transformed) would rotate the ray into the
/// sphere's frame and the normal and point back. The world normal is then
/// `(p − c)/(s·r)` directly, outward under a mirror too. Same `t` up to
/// rounding (the rotation's rounding is not made).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Placed {
    /// The centre `c` in f64.
    pub(crate) centre: DVec3,
    /// The radius `s·r`.
    pub(crate) radius: f64,
    /// `1/(s·r)`.
    pub(crate) inv_radius: f64,
}

impl Sphere {
    /// This sphere scaled by `scale` (`inv_scale = 1/scale`) and centred at
    /// `centre`, for casting in the world frame.
    #[inline(always)]
    pub(crate) fn placed(&self, centre: Vec3, scale: f64, inv_scale: f64) -> Placed {
        Placed {
            centre: centre.as_dvec3(),
            radius: f64::from(self.radius) * scale,
            inv_radius: self.inv_radius * inv_scale,
        }
    }
}

impl Placed {
    /// The world ray relative to the centre, in f64.
    #[inline(always)]
    fn rel(&self, ray: &Ray) -> (DVec3, DVec3) {
        (ray.origin.as_dvec3() - self.centre, ray.dir.as_dvec3())
    }

    /// The hit at `t` for the point `q = p − c` (f64).
    #[inline(always)]
    fn hit(&self, t: f64, q: DVec3, entry: bool) -> Hit {
        Hit::with_face(
            t as f32,
            (q + self.centre).as_vec3(),
            (q * self.inv_radius).as_vec3(),
            entry,
            Part::Surface,
        )
    }

    /// [`Sphere::cast_candidate`] in the world frame.
    #[inline(always)]
    pub(crate) fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let (o, d) = self.rel(ray);
        let (ok, t, q, entry) = candidate(o, d, self.radius, range);
        (ok, self.hit(t, q, entry))
    }

    /// [`Sphere::hits`] in the world frame.
    #[inline(always)]
    pub(crate) fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let (o, d) = self.rel(ray);
        let (a, b, h2a, meets) = sphere_terms64(o, d, self.radius);
        meets & (a > 0.0) & Bounds64::new(range).pick_root(a, b, h2a.max(0.0), 1.0).1
    }

    /// [`Sphere::cast_all`] in the world frame.
    pub(crate) fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let (o, d) = self.rel(ray);
        all_in(o, d, self.radius, range, |t, entry| self.hit(t, o + t * d, entry))
    }

    /// [`Sphere::span`] in the world frame.
    pub(crate) fn span(&self, ray: &Ray) -> Option<Span> {
        let (o, d) = self.rel(ray);
        span_of(o, d, self.radius, |t, entry| self.hit(t, o + t * d, entry))
    }
}

/// The body of `cast_candidate` (see [`RayCast::cast_candidate`] for
/// [`Sphere`]) on f64 inputs: whether there is a hit, its `t`, its point
/// relative to the centre, and whether it is an entry.
#[inline(always)]
fn candidate(o: DVec3, d: DVec3, r: f64, range: Interval) -> (bool, f64, DVec3, bool) {
    let (a, b, h2a, meets) = sphere_terms64(o, d, r);
    let h = h2a.max(0.0);
    let bounds = Bounds64::new(range);
    let inv_a = 1.0 / a;
    // ∓1/a: − when t− is in the range.
    let (signed_inv_a, any) = bounds.pick_root(a, b, h, inv_a);
    let tm = -b * inv_a;
    let foot = o + tm * d;
    let k = h.sqrt() * signed_inv_a;
    // A compare-select (`maxsd`/`minsd`): on a hit nothing is NaN.
    let (lo, hi) = bounds.ends();
    let t = tm + k;
    let t = if t < lo { lo } else { t };
    let t = if t > hi { hi } else { t };
    // t− with a·h² > 0: k < 0 (−0 for a·h² = 0).
    (meets & (a > 0.0) & any, t, foot + k * d, k < 0.0)
}

/// Both crossings in `range` (one for a tangent touch), as hits made by `hit(t, entry)`.
#[inline(always)]
fn all_in(o: DVec3, d: DVec3, r: f64, range: Interval, hit: impl Fn(f64, bool) -> Hit) -> Vec<Hit> {
    let (t0, t1, entry, meets) = roots(o, d, r);
    let mut out = Vec::with_capacity(2);
    if !meets {
        return out;
    }
    let bounds = Bounds64::new(range);
    let (in0, in1) = (bounds.contains(t0), bounds.contains(t1));
    if in0 {
        out.push(hit(t0, entry));
    }
    if in1 && !(in0 && t1 as f32 == t0 as f32) {
        out.push(hit(t1, false));
    }
    out
}

/// The span of the line, its ends made by `hit(t, entry)`.
#[inline(always)]
fn span_of(o: DVec3, d: DVec3, r: f64, hit: impl Fn(f64, bool) -> Hit) -> Option<Span> {
    let (t0, t1, entry, meets) = roots(o, d, r);
    let finite = (t0.abs() <= F32_MAX) & (t1.abs() <= F32_MAX);
    (meets & finite).then(|| Span { enter: hit(t0, entry), exit: hit(t1, false) })
}

/// The line's crossings with the sphere in f64 (see the module doc): the
/// roots `t0 <= t1`, whether `t0` is an entry (`a·h² > 0`) and whether the
/// line meets the sphere (false also for any degenerate ray).
///
/// The squared distance of the line from the centre is `|o × d|²/a`
/// (`a = d·d`), so `a·h² = r²·a − |o × d|²` needs no division, and
/// `t = (−o·d ∓ √(a·h²))/a`: the square root does not wait for `1/a`, which
/// is only applied at the end. Each component of `o × d` is a difference of
/// two exact f64 products, rounded once (no cancellation beyond that of the
/// exact value). A zero `d` gives `a·h² = 0` but `t = 0·∞ = NaN`, which no
/// range contains; a non-finite input makes `a·h²` NaN or −∞.
#[inline(always)]
fn roots(o: DVec3, d: DVec3, r: f64) -> (f64, f64, bool, bool) {
    let (a, b, h2a, meets) = sphere_terms64(o, d, r);
    let (root, inv_a) = (h2a.max(0.0).sqrt(), 1.0 / a);
    ((-b - root) * inv_a, (-b + root) * inv_a, root > 0.0, meets)
}

impl Sphere {
    /// The hit at the f64 root `t` (see the module doc for the point and
    /// normal; `entry` is whether `t` is `t0` with `a·h² > 0`); no division
    /// (`1/r` is stored).
    #[inline(always)]
    fn hit_at(&self, o: DVec3, d: DVec3, t: f64, entry: bool) -> Hit {
        self.hit_at_point(t, o + t * d, entry)
    }

    /// The hit at `t` with the f64 point `p` (on the sphere to f64 rounding).
    #[inline(always)]
    fn hit_at_point(&self, t: f64, p: DVec3, entry: bool) -> Hit {
        let n = (p * self.inv_radius).as_vec3();
        Hit::with_face(t as f32, p.as_vec3(), n, entry, Part::Surface)
    }
}

impl RayCast for Sphere {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free, with the root chosen before it is computed (see the
    /// module doc): the hit is computed on a miss too (at a NaN or
    /// meaningless `t`, harmlessly). `a > 0` refuses `d = 0`, where the
    /// range test alone would pass; a non-finite input fails `meets`.
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        let (ok, t, p, entry) = candidate(o, d, f64::from(self.radius), range);
        (ok, self.hit_at_point(t, p, entry))
    }

    /// The test of `cast` without its square root and division: whether a
    /// root `(−b ∓ √(a·h²))/a` is in the range is decided on `−b − x·a` and
    /// its square against `a·h²` at each end `x`
    /// (`Bounds64::pick_root`, exact up to f64 rounding), as in `cast`.
    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let (a, b, h2a, meets) = sphere_terms(ray.origin, ray.dir, self.radius);
        meets & (a > 0.0) & Bounds64::new(range).pick_root(a, b, h2a.max(0.0), 1.0).1
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        all_in(o, d, f64::from(self.radius), range, |t, entry| self.hit_at(o, d, t, entry))
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::splat(self.radius))
    }

    #[inline(always)]
    fn as_sphere(&self) -> Option<&Sphere> {
        Some(self)
    }
}

impl Solid for Sphere {
    fn contains(&self, p: Vec3) -> bool {
        p.length_squared() <= self.radius * self.radius
    }
}

impl ConvexSolid for Sphere {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        span_of(o, d, f64::from(self.radius), |t, entry| self.hit_at(o, d, t, entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    #[test]
    fn head_on_from_outside_and_inside() {
        let s = Sphere::new(1.0);
        let h = s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 2.0)), Interval::FORWARD).unwrap();
        assert_eq!(h.t, 2.0);
        assert!(h.front_face);
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.front_face), (1.0, Vec3::Y, false));
    }

    #[test]
    fn tangent_counts_and_degenerate_rays_miss() {
        let s = Sphere::new(1.0);
        let r = Ray::new(vec3(-3.0, 1.0, 0.0), vec3(1.0, 0.0, 0.0));
        let h = s.cast(&r, Interval::FORWARD).unwrap();
        assert_eq!(h.t, 3.0);
        let sp = s.span(&r).unwrap();
        assert_eq!(sp.enter.t, sp.exit.t);
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0)] {
            assert!(s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), d), Interval::FORWARD).is_none());
        }
        // Every component of the origin or the direction of a hitting ray
        // made ±∞ or NaN: `cast` and `hits` (which form no `t` before
        // deciding) must still refuse them.
        for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            for i in 0..6 {
                let (mut o, mut d) = ([0.1, 0.2, -5.0], [0.0, 0.1, 1.0]);
                if i < 3 {
                    o[i] = bad
                } else {
                    d[i - 3] = bad
                }
                let ray = Ray::new(Vec3::from(o), Vec3::from(d));
                for range in [Interval::FORWARD, Interval::ALL, Interval::new(-1.0, 1.0)] {
                    assert!(s.cast(&ray, range).is_none() && !s.hits(&ray, range), "{ray:?} {range:?}");
                }
            }
        }
        for range in [Interval::FORWARD, Interval::ALL] {
            assert!(!s.hits(&Ray::new(vec3(0.0, 0.0, -5.0), Vec3::ZERO), range));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..Default::default() })]

        /// `hits` (no root, no division) and `cast` (root chosen before it is
        /// known, `t` clamped) agree with each other and with `cast_all`
        /// (both roots, tested after rounding), also on ranges that end
        /// exactly at a crossing; `front_face` is `dir · normal < 0` away from
        /// grazing.
        #[test]
        fn hits_cast_and_cast_all_agree(
            o in proptest::array::uniform3(-8.0f32..8.0), d in proptest::array::uniform3(-3.0f32..3.0),
            r in 0.1f32..4.0, lo in -6.0f32..6.0, len in 0.0f32..12.0, end in 0usize..5,
        ) {
            let (s, ray) = (Sphere::new(r), Ray::new(Vec3::from(o), Vec3::from(d)));
            proptest::prop_assume!(ray.dir.length() > 1e-3);
            let all = s.cast_all(&ray, Interval::ALL);
            let range = match (end, all.first(), all.last()) {
                (0, ..) => Interval::FORWARD,
                (1, ..) => Interval::new(lo, lo + len),
                (2, Some(h), _) => Interval::new(h.t, h.t + len),
                (3, _, Some(h)) => Interval::new(h.t - len, h.t),
                _ => Interval::ALL,
            };
            let cast = s.cast(&ray, range);
            proptest::prop_assert_eq!(s.hits(&ray, range), cast.is_some(), "{:?} {:?}", range, all);
            let expect = s.cast_all(&ray, range).first().copied();
            proptest::prop_assert_eq!(cast.is_some(), expect.is_some(), "{:?} {:?}", range, all);
            if let (Some(h), Some(e)) = (cast, expect) {
                proptest::prop_assert!(range.contains(h.t), "{:?} {:?}", h, range);
                let scale = ray.origin.length().max(r) / ray.dir.length();
                proptest::prop_assert!((h.t - e.t).abs() <= 1e-6 * scale, "{:?} {:?}", h, e);
                let cos = ray.dir.normalize().dot(h.normal);
                if cos.abs() > 1e-3 {
                    proptest::prop_assert_eq!(h.front_face, cos < 0.0, "{:?}", h);
                }
            }
        }
    }

    #[test]
    fn far_origin_keeps_digits() {
        // The naive discriminant b² − a·c loses everything at 1e4 radii away.
        let s = Sphere::new(1.0);
        let r = Ray::new(vec3(0.0, 0.999, -1.0e4), vec3(0.0, 0.0, 1.0));
        let h = s.cast(&r, Interval::FORWARD).unwrap();
        let exact = 1.0e4 - (1.0f64 - 0.999f32 as f64 * 0.999f32 as f64).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-5 * 1.0e4, "{} vs {exact}", h.t);
    }
}
