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
//! `ray_sphere`), which keeps the one division off the path to the square
//! root. No f32 input can overflow an f64 square; a NaN or infinite input
//! makes a·h² NaN or −∞, and d = 0 makes t = 0·∞ = NaN, so the tests on a·h²
//! and on the range reject every degenerate ray. A line within the f32
//! rounding of the inputs of tangent touches ([`TOUCH_REL`]: inputs written
//! as tangent are off by that rounding).
//!
//! The hit point is o + t·d in f64 (the unrounded t), which lies on the sphere
//! to ~1e-16 of |o|, so the normal is that point times 1/r — unit to within
//! f32 rounding without a square root — and the point is its rounding.

use crate::error::{or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{select, Bounds64, F32_MAX, TOUCH_REL};
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

/// The line's crossings with the sphere in f64 (see the module doc): the
/// f64 origin and direction, the roots `t0 <= t1` and whether the line meets
/// the sphere (false also for any degenerate ray).
///
/// The squared distance of the line from the centre is `|o × d|²/a`
/// (`a = d·d`), so `a·h² = r²·a − |o × d|²` needs no division, and
/// `t = (−o·d ∓ √(a·h²))/a`: the square root does not wait for `1/a`, which
/// is only applied at the end. Each component of `o × d` is a difference of
/// two exact f64 products, rounded once (no cancellation beyond that of the
/// exact value). A zero `d` gives `a·h² = 0` but `t = 0·∞ = NaN`, which no
/// range contains; a non-finite input makes `a·h²` NaN or −∞.
#[inline(always)]
fn ray_sphere(o: Vec3, d: Vec3, r: f32) -> (DVec3, DVec3, f64, f64, bool) {
    let (b, root, inv_a, meets) = sphere_quadratic(o, d, r);
    let (t0, t1) = ((-b - root) * inv_a, (-b + root) * inv_a);
    (o.as_dvec3(), d.as_dvec3(), t0, t1, meets)
}

/// The pieces of [`ray_sphere`]'s roots `(−b ∓ root)·inv_a`: `b = o·d`,
/// `root = √(a·h²)`, `inv_a = 1/a`, and whether the line meets the sphere.
#[inline(always)]
fn sphere_quadratic(o: Vec3, d: Vec3, r: f32) -> (f64, f64, f64, bool) {
    let (o, d) = (o.as_dvec3(), d.as_dvec3());
    let a = d.length_squared();
    let inv_a = 1.0 / a;
    let b = o.dot(d);
    let r2a = f64::from(r) * f64::from(r) * a;
    let h2a = r2a - o.cross(d).length_squared();
    let root = h2a.max(0.0).sqrt();
    (b, root, inv_a, h2a >= -TOUCH_REL * r2a)
}

impl Sphere {
    /// The hit at the f64 root `t` (see the module doc for the point and
    /// normal); no division (`1/r` is stored).
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, o: DVec3, d: DVec3, t: f64) -> Hit {
        let p = o + t * d;
        let n = (p * self.inv_radius).as_vec3();
        Hit::with_point(ray, t as f32, p.as_vec3(), n, Part::Surface)
    }
}

impl RayCast for Sphere {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free: the root is chosen with `select` and the hit computed
    /// on a miss too (at a NaN or out-of-range `t`, harmlessly).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let (o, d, t0, t1, meets) = ray_sphere(ray.origin, ray.dir, self.radius);
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(t0), bounds.contains(t1));
        let t = select(in0, t0, t1);
        (meets & (in0 | in1), self.hit_at(ray, o, d, t))
    }

    /// The test of `cast` on the same roots, formed and tested as a pair.
    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let (b, root, inv_a, meets) = sphere_quadratic(ray.origin, ray.dir, self.radius);
        meets & Bounds64::new(range).contains_either_root(b, root, inv_a)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let (o, d, t0, t1, meets) = ray_sphere(ray.origin, ray.dir, self.radius);
        let mut out = Vec::with_capacity(2);
        if !meets {
            return out;
        }
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(t0), bounds.contains(t1));
        if in0 {
            out.push(self.hit_at(ray, o, d, t0));
        }
        if in1 && !(in0 && t1 as f32 == t0 as f32) {
            out.push(self.hit_at(ray, o, d, t1));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::splat(self.radius))
    }
}

impl Solid for Sphere {
    fn contains(&self, p: Vec3) -> bool {
        p.length_squared() <= self.radius * self.radius
    }
}

impl ConvexSolid for Sphere {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let (o, d, t0, t1, meets) = ray_sphere(ray.origin, ray.dir, self.radius);
        let finite = (t0.abs() <= F32_MAX) & (t1.abs() <= F32_MAX);
        (meets & finite).then(|| Span { enter: self.hit_at(ray, o, d, t0), exit: self.hit_at(ray, o, d, t1) })
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
