//! Torus in the XZ plane around +Y: the points at distance `r` from the centre
//! circle of radius `R` (`0 < r ≤ R`).
//!
//! Implicit form: `G(p) = (|p|² + R² − r²)² − 4R²·(p_x² + p_z²) = 0`, negative
//! inside. On the line `p = P + s·u` it is a monic quartic in `s`. How it is set
//! up and solved, and why:
//!
//! 1. **Shift, normalise, scale (f64).** The inputs are taken to f64 exactly.
//!    The direction is normalised, `u = d / |d|`, the origin moved to the foot of
//!    the perpendicular from the centre, `P = o + s_f·u`, `s_f = −o·u`, and all
//!    lengths are divided by `R + r`. The quartic's coefficients are then `O(1)`
//!    whatever the ray's scale or the origin's distance (a far origin costs no
//!    digits), and `t = (s_f + (R + r)·s) / |d|`. Since the line meets the
//!    torus only inside its bounding sphere, `|P| > R + r` is a miss (the early
//!    out), and every root lies in `|s| ≤ √(1 − |P|²)` (scaled): that chord is
//!    the search interval.
//! 2. **Isolate, then refine.** Instead of a closed form (Ferrari's resolvent
//!    cubic loses the double roots of grazing rays to cancellation), the roots
//!    are isolated by monotonicity: the roots of `G''` (a quadratic, closed form)
//!    split the chord into pieces where `G'` is monotone; a sign change of `G'`
//!    on a piece brackets one critical point of `G`; between consecutive critical
//!    points `G` is monotone, so a sign change brackets exactly one root. Each
//!    bracketed root is refined by Newton's method safeguarded by bisection, to
//!    full f64 precision (Press et al., *Numerical Recipes* §9.4 `rtsafe`; the
//!    isolation by derivative roots is the classical Sturm-free scheme for
//!    low-degree polynomials, e.g. Collins & Loos). No root is lost: a root is
//!    missed only where `G` at a critical point is within its rounding error of
//!    zero, and there such a critical point is reported as a (double) root: a
//!    tangent ray hits.
//! 3. **No polish needed.** The quartic is set up in f64 from the exact f32
//!    inputs, so its roots are already those of the given f32 ray to about
//!    1e-15 relative (1e-8 at an exact tangency); a Newton step on the original
//!    ray would not change the f32 result.
//!
//! The hit point is `P + s·u` (scaled back), rounded once to f32; the normal is
//! the direction from the nearest point of the centre circle to the hit point,
//! which is the normalised gradient of `G` on the surface.

use crate::error::{or_panic, positive};
use crate::shapes::{RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use glam::{DVec3, Vec3};

/// A torus in the local XZ plane around the +Y axis: the points at distance
/// `minor_radius` from the circle of radius `major_radius`. Part: [`Part::Surface`].
///
/// # Examples
/// ```
/// use raycast::{vec3, Interval, Ray, RayCast, Torus};
/// let ring = Torus::try_new(2.0, 0.5)?;
/// // Along the x axis: through both sides of the tube, four crossings.
/// let ray = Ray::new(vec3(-5.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0));
/// let ts: Vec<f32> = ring.cast_all(&ray, Interval::FORWARD).iter().map(|h| h.t).collect();
/// assert_eq!(ts, [2.5, 3.5, 6.5, 7.5]);
/// // Down the axis, through the hole: a miss.
/// assert!(ring.cast(&Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD).is_none());
/// assert!(Torus::try_new(1.0, 2.0).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Torus {
    major_radius: f32,
    minor_radius: f32,
}

impl Torus {
    /// A torus with the given radii.
    ///
    /// # Errors
    /// [`ShapeError`] unless both radii are finite and > 0 and
    /// `minor_radius <= major_radius`.
    pub fn try_new(major_radius: f32, minor_radius: f32) -> Result<Self, ShapeError> {
        let major = positive("major_radius", major_radius)?;
        let minor = positive("minor_radius", minor_radius)?;
        if minor > major {
            return Err(ShapeError::new(
                "minor_radius",
                format!("must be <= major_radius ({major}), got {minor}"),
            ));
        }
        Ok(Self { major_radius: major, minor_radius: minor })
    }
    /// Like [`Torus::try_new`].
    ///
    /// # Panics
    /// With the error's message when the torus is refused.
    #[track_caller]
    pub fn new(major_radius: f32, minor_radius: f32) -> Self {
        or_panic(Self::try_new(major_radius, minor_radius))
    }
    /// Radius of the centre circle.
    pub fn major_radius(&self) -> f32 {
        self.major_radius
    }
    /// Radius of the tube.
    pub fn minor_radius(&self) -> f32 {
        self.minor_radius
    }
}

/// f64 unit roundoff.
const U64: f64 = f64::EPSILON * 0.5;

/// Bound, in units of `U64` times the size of the terms of `G`, on the error
/// of evaluating `G` (about a dozen roundings setting up the coefficients, a
/// dozen in Horner's scheme), doubled: a critical value this close to zero is
/// a tangency.
const TANGENT_ROUNDINGS: f64 = 64.0;

/// The line in the torus's scaled frame (lengths divided by `R + r`), and the
/// quartic `G(s) = s⁴ + c3·s³ + c2·s² + c1·s + c0` along it.
#[derive(Clone, Copy, Debug)]
struct Quartic {
    /// Foot of the perpendicular from the centre (scaled).
    p: DVec3,
    /// Unit direction.
    u: DVec3,
    c: [f64; 4],
    /// Magnitudes of the terms of `G` before cancellation, for the error bound:
    /// `G = (s² + 2βs + e)² − 4R²(a2·s² + 2·b2·s + g2)`.
    beta: f64,
    e: f64,
    r2: f64,
    a2: f64,
    b2: f64,
    g2: f64,
    /// Half length of the chord of the bounding sphere (scaled).
    half_chord: f64,
    /// `s_f`: distance from the origin to the foot along `u` (unscaled).
    s_foot: f64,
    /// `R + r`.
    scale: f64,
    /// `|d|`.
    len: f64,
}

impl Quartic {
    /// Sets the quartic up, or `None` when the line misses the bounding sphere
    /// (or the ray is degenerate).
    #[inline]
    fn new(o: Vec3, d: Vec3, major: f32, minor: f32) -> Option<Self> {
        let (o, d) = (o.as_dvec3(), d.as_dvec3());
        let len = d.length();
        if !(len > 0.0 && len.is_finite() && o.is_finite()) {
            return None;
        }
        let u = d / len;
        let s_foot = -o.dot(u);
        let scale = major as f64 + minor as f64;
        let p = (o + s_foot * u) / scale;
        let pp = p.length_squared();
        if pp > 1.0 {
            return None;
        }
        // Slab |y| <= r: a line parallel to the ring's plane outside it misses.
        let rm = minor as f64 / scale;
        if u.y == 0.0 && p.y.abs() > rm {
            return None;
        }
        let big = major as f64 / scale;
        let r2 = big * big;
        let beta = p.dot(u);
        let e = pp + r2 - rm * rm;
        let a2 = u.x * u.x + u.z * u.z;
        let b2 = p.x * u.x + p.z * u.z;
        let g2 = p.x * p.x + p.z * p.z;
        let c = [
            e * e - 4.0 * r2 * g2,
            4.0 * beta * e - 8.0 * r2 * b2,
            4.0 * beta * beta + 2.0 * e - 4.0 * r2 * a2,
            4.0 * beta,
        ];
        let half_chord = (1.0 - pp).sqrt();
        Some(Self { p, u, c, beta, e, r2, a2, b2, g2, half_chord, s_foot, scale, len })
    }

    #[inline]
    fn g(&self, s: f64) -> f64 {
        let c = &self.c;
        (((s + c[3]) * s + c[2]) * s + c[1]) * s + c[0]
    }

    #[inline]
    fn dg(&self, s: f64) -> f64 {
        let c = &self.c;
        ((4.0 * s + 3.0 * c[3]) * s + 2.0 * c[2]) * s + c[1]
    }

    #[inline]
    fn ddg(&self, s: f64) -> f64 {
        let c = &self.c;
        (12.0 * s + 6.0 * c[3]) * s + 2.0 * c[2]
    }

    /// Rounding bound of `g(s)` (see [`TANGENT_ROUNDINGS`]).
    fn g_error(&self, s: f64) -> f64 {
        let a = s.abs();
        let first = a * a + 2.0 * self.beta.abs() * a + self.e.abs();
        let second = 4.0 * self.r2 * (self.a2 * a * a + 2.0 * self.b2.abs() * a + self.g2);
        TANGENT_ROUNDINGS * U64 * (first * first + second)
    }

    /// Visits the roots of `G` in `[s_min, s_max]` (and possibly a few just
    /// outside), ascending, tangencies once, until `visit` returns true. Monotone
    /// pieces outside the window are not refined, so `cast` pays only for the
    /// roots up to the first one it keeps.
    fn roots(&self, s_min: f64, s_max: f64, mut visit: impl FnMut(f64) -> bool) {
        let (lo, hi) = (-self.half_chord, self.half_chord);
        // Critical points of G': roots of the quadratic G'' inside the chord.
        let mut knots2 = [lo, 0.0, 0.0, hi];
        let mut n2 = 1;
        let (qa, qb, qc) = (12.0, 6.0 * self.c[3], 2.0 * self.c[2]);
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let q = -0.5 * (qb + disc.sqrt().copysign(qb));
            let (mut x0, mut x1) = (q / qa, if q != 0.0 { qc / q } else { 0.0 });
            if x0 > x1 {
                (x0, x1) = (x1, x0);
            }
            for x in [x0, x1] {
                if lo < x && x < hi {
                    knots2[n2] = x;
                    n2 += 1;
                }
            }
        }
        knots2[n2] = hi;
        // Critical points of G: one per sign change of G' on each monotone piece.
        let mut knots1 = [lo, 0.0, 0.0, 0.0, hi];
        let mut n1 = 1;
        for w in knots2[..=n2].windows(2) {
            let (a, b) = (w[0], w[1]);
            let (fa, fb) = (self.dg(a), self.dg(b));
            if fa * fb < 0.0 {
                knots1[n1] = refine(|x| (self.dg(x), self.ddg(x)), a, b, fa);
                n1 += 1;
            }
        }
        knots1[n1] = hi;
        // Roots of G: a value within rounding of zero at a knot is a root there
        // (a tangency); otherwise one root per sign change on each monotone piece.
        let mut vals = [0.0; 5];
        for (v, &x) in vals.iter_mut().zip(&knots1[..=n1]) {
            let g = self.g(x);
            *v = if g.abs() <= self.g_error(x) { 0.0 } else { g };
        }
        for i in 0..=n1 {
            if knots1[i] > s_max {
                break;
            }
            let root = if vals[i] == 0.0 && knots1[i] >= s_min {
                knots1[i]
            } else if i < n1 && vals[i] * vals[i + 1] < 0.0 && knots1[i + 1] >= s_min {
                refine(|x| (self.g(x), self.dg(x)), knots1[i], knots1[i + 1], vals[i])
            } else {
                continue;
            };
            if visit(root) {
                return;
            }
        }
    }

    /// The scaled line parameter of the ray parameter `t`, widened outward by
    /// `side` (±1) times far more than the f32 rounding of `t` (1e-6 relative),
    /// so no root whose f32 `t` is in range falls outside the window.
    #[inline]
    fn s_of(&self, t: f32, side: f64) -> f64 {
        let (tl, sf) = (t as f64 * self.len, self.s_foot);
        (tl - sf + side * 1e-6 * (tl.abs() + sf.abs())) / self.scale
    }

    /// The ray parameter `t` of the scaled line parameter `s`.
    #[inline]
    fn t_of(&self, s: f64) -> f64 {
        (self.s_foot + self.scale * s) / self.len
    }

    /// Point (unscaled, f32) and outward normal at `s`.
    fn point_normal(&self, s: f64, major: f32) -> (Vec3, Vec3) {
        let p = self.p + s * self.u;
        let radial = glam::DVec2::new(p.x, p.z);
        let on_circle = radial.normalize_or_zero() * (major as f64 / self.scale);
        let n = DVec3::new(p.x - on_circle.x, p.y, p.z - on_circle.y).normalize_or(DVec3::Y);
        ((p * self.scale).as_vec3(), n.as_vec3())
    }
}

/// The root of `f` in `[a, b]` given a sign change (`fa = f(a)`) and `f`
/// monotone there; `f` returns the value and the derivative. Newton steps,
/// replaced by bisection whenever they leave the bracket or do not halve the
/// step (`rtsafe`), until the step is below the f64 resolution of the chord.
fn refine(f: impl Fn(f64) -> (f64, f64), mut a: f64, mut b: f64, fa: f64) -> f64 {
    /// Absolute resolution in the scaled frame, where the chord has length ≤ 2.
    const RESOLUTION: f64 = 4.0 * f64::EPSILON;
    let neg_at_a = fa < 0.0;
    let mut x = 0.5 * (a + b);
    let mut step_old = b - a;
    let mut step = step_old;
    for _ in 0..100 {
        let (fx, dfx) = f(x);
        if fx == 0.0 {
            return x;
        }
        if (fx < 0.0) == neg_at_a {
            a = x;
        } else {
            b = x;
        }
        let newton = x - fx / dfx;
        let x_new = if newton > a && newton < b && (newton - x).abs() * 2.0 <= step_old.abs() {
            step_old = step;
            step = newton - x;
            newton
        } else {
            step_old = step;
            step = 0.5 * (b - a);
            a + step
        };
        if (x_new - x).abs() <= RESOLUTION || b - a <= RESOLUTION {
            return x_new;
        }
        x = x_new;
    }
    x
}

impl Torus {
    #[inline]
    fn quartic(&self, ray: &Ray) -> Option<Quartic> {
        Quartic::new(ray.origin, ray.dir, self.major_radius, self.minor_radius)
    }

    fn hit_at(&self, ray: &Ray, q: &Quartic, s: f64, t: f32) -> Hit {
        let (p, n) = q.point_normal(s, self.major_radius);
        Hit::with_point(ray, t, p, n, Part::Surface)
    }

    /// The crossings in `range` as `(s, t)`, ascending; only the first when
    /// `first_only`.
    #[inline]
    fn crossings(&self, q: &Quartic, range: Interval, first_only: bool) -> ([(f64, f32); 4], usize) {
        let mut out = [(0.0, 0.0); 4];
        let mut m = 0;
        q.roots(q.s_of(range.min, -1.0), q.s_of(range.max, 1.0), |s| {
            let t = q.t_of(s) as f32;
            if range.contains(t) && m < 4 {
                out[m] = (s, t);
                m += 1;
            }
            first_only && m > 0
        });
        (out, m)
    }
}

impl RayCast for Torus {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let q = self.quartic(ray)?;
        let (xs, n) = self.crossings(&q, range, true);
        (n > 0).then(|| self.hit_at(ray, &q, xs[0].0, xs[0].1))
    }

    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.quartic(ray).is_some_and(|q| self.crossings(&q, range, true).1 > 0)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let Some(q) = self.quartic(ray) else {
            return Vec::new();
        };
        let (xs, n) = self.crossings(&q, range, false);
        xs[..n].iter().map(|&(s, t)| self.hit_at(ray, &q, s, t)).collect()
    }

    fn local_bounds(&self) -> Aabb {
        let (big, r) = (self.major_radius, self.minor_radius);
        Aabb::from_half_extents(Vec3::new(big + r, r, big + r))
    }
}

impl Solid for Torus {
    /// Inside or on the tube: `(√(x² + z²) − R)² + y² ≤ r²`, in f64.
    fn contains(&self, p: Vec3) -> bool {
        let p = p.as_dvec3();
        let ring = (p.x * p.x + p.z * p.z).sqrt() - self.major_radius as f64;
        let r = self.minor_radius as f64;
        ring * ring + p.y * p.y <= r * r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    fn ts(t: &Torus, o: Vec3, d: Vec3) -> Vec<f32> {
        t.cast_all(&Ray::new(o, d), Interval::FORWARD).iter().map(|h| h.t).collect()
    }

    #[test]
    fn along_the_x_axis_four_crossings_with_outward_normals() {
        let t = Torus::new(3.0, 1.0);
        let r = Ray::new(vec3(-10.0, 0.0, 0.0), vec3(2.0, 0.0, 0.0));
        let all = t.cast_all(&r, Interval::FORWARD);
        // x = −(R+r), −(R−r), R−r, R+r.
        assert_eq!(all.iter().map(|h| h.t).collect::<Vec<_>>(), [3.0, 4.0, 6.0, 7.0]);
        let normals: Vec<Vec3> = all.iter().map(|h| h.normal).collect();
        assert_eq!(normals, [Vec3::NEG_X, Vec3::X, Vec3::NEG_X, Vec3::X]);
        assert_eq!(all.iter().map(|h| h.front_face).collect::<Vec<_>>(), [true, false, true, false]);
        assert_eq!(all[1].point, vec3(-2.0, 0.0, 0.0));
        // From inside the tube: the exit first.
        let h = t.cast(&Ray::new(vec3(0.0, 0.0, 3.5), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.front_face), (0.5, false));
        // Interval ends count.
        assert_eq!(t.cast(&r, Interval::new(3.5, 6.0)).unwrap().t, 4.0);
        assert!(t.hits(&r, Interval::new(7.0, 7.0)) && !t.hits(&r, Interval::new(7.01, 9.0)));
    }

    #[test]
    fn down_the_axis_misses_and_down_the_tube_hits_twice() {
        let t = Torus::new(2.0, 0.5);
        assert!(ts(&t, vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)).is_empty());
        assert_eq!(ts(&t, vec3(2.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), [4.5, 5.5]);
        // Horn torus (r = R): the axis touches the surface at the centre.
        let horn = Torus::new(1.0, 1.0);
        let h = horn.cast(&Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD);
        assert!(h.is_none_or(|h| (h.t - 5.0).abs() < 1e-3 && h.normal.is_finite()));
    }

    #[test]
    fn tangent_rays_hit_or_miss_but_never_nan() {
        let t = Torus::new(2.0, 0.5);
        // Over the top of the tube (y = r), and along the outer equator's tangent.
        for (o, d) in [
            (vec3(-5.0, 0.5, 0.0), vec3(1.0, 0.0, 0.0)),
            (vec3(-5.0, 0.0, 2.5), vec3(1.0, 0.0, 0.0)),
            (vec3(-5.0, 0.0, 1.5), vec3(1.0, 0.0, 0.0)),
        ] {
            for h in t.cast_all(&Ray::new(o, d), Interval::ALL) {
                assert!(h.t.is_finite() && h.point.is_finite() && h.normal.is_finite(), "{h:?}");
            }
        }
        // The outer equator tangent touches at x = 0.
        let h = t.cast(&Ray::new(vec3(-5.0, 0.0, 2.5), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert!((h.t - 5.0).abs() < 1e-3, "{h:?}");
    }

    #[test]
    fn degenerate_rays_miss_and_contains() {
        let t = Torus::new(2.0, 0.5);
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0)] {
            assert!(t.cast(&Ray::new(vec3(-5.0, 0.0, 0.0), d), Interval::FORWARD).is_none());
            assert!(t.cast_all(&Ray::new(vec3(-5.0, 0.0, 0.0), d), Interval::ALL).is_empty());
        }
        assert!(t.cast(&Ray::new(Vec3::NAN, Vec3::X), Interval::FORWARD).is_none());
        assert!(t.contains(vec3(2.0, 0.0, 0.0)) && t.contains(vec3(0.0, 0.5, -2.0)));
        assert!(!t.contains(Vec3::ZERO) && !t.contains(vec3(2.0, 0.51, 0.0)));
    }

    #[test]
    fn far_origin_keeps_digits() {
        let t = Torus::new(1.0, 0.25);
        let h = t.cast(&Ray::new(vec3(1.1, 0.2, -1.0e4), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
        // In the plane x = 1.1: (√(1.1² + z²) − 1)² + 0.2² = 0.25².
        let (x, y) = (1.1f32 as f64, 0.2f32 as f64);
        let rho = 1.0 + (0.0625 - y * y).sqrt();
        let exact = 1.0e4 - (rho * rho - x * x).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-6 * 1.0e4, "{} vs {exact}", h.t);
    }

    // ---- Independent reference: dense sampling of the f64 signed distance ----

    fn sdf(t: &Torus, p: DVec3) -> f64 {
        let ring = (p.x * p.x + p.z * p.z).sqrt() - t.major_radius as f64;
        (ring * ring + p.y * p.y).sqrt() - t.minor_radius as f64
    }

    /// Crossings of the ray (t ≥ 0) by sampling the signed distance densely over
    /// the chord of the bounding sphere, bisecting sign changes, and refining each
    /// sampled local extremum of `|sdf|` by golden section: one that crosses zero
    /// adds its two roots, one within `band` of zero is returned as a near
    /// tangency (where a hit and a miss are both right).
    fn reference(t: &Torus, ray: &Ray, band: f64) -> (Vec<f64>, Vec<f64>) {
        const N: usize = 2048;
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        let f = |s: f64| sdf(t, o + s * d);
        let (dd, big) = (d.length_squared(), (t.major_radius + t.minor_radius) as f64 * 1.001);
        let foot = -o.dot(d) / dd;
        let l2 = big * big - (o + foot * d).length_squared();
        if l2 < 0.0 {
            return (Vec::new(), Vec::new());
        }
        let half = l2.sqrt() / dd.sqrt();
        let (lo, hi) = ((foot - half).max(0.0), foot + half);
        if lo >= hi {
            return (Vec::new(), Vec::new());
        }
        let xs: Vec<f64> = (0..=N).map(|i| lo + (hi - lo) * i as f64 / N as f64).collect();
        let vs: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let bisect = |mut a: f64, mut b: f64| {
            let neg_a = f(a) < 0.0;
            for _ in 0..200 {
                let m = 0.5 * (a + b);
                if (f(m) < 0.0) == neg_a {
                    a = m;
                } else {
                    b = m;
                }
            }
            0.5 * (a + b)
        };
        let (mut roots, mut near) = (Vec::new(), Vec::new());
        if vs[0] == 0.0 {
            roots.push(lo);
        }
        for i in 0..N {
            if (vs[i] < 0.0) != (vs[i + 1] < 0.0) {
                roots.push(bisect(xs[i], xs[i + 1]));
            }
            let same_sign = i > 0 && (vs[i - 1] < 0.0) == (vs[i] < 0.0) && (vs[i + 1] < 0.0) == (vs[i] < 0.0);
            if same_sign && (vs[i].abs() <= vs[i - 1].abs()) && (vs[i].abs() <= vs[i + 1].abs()) {
                // Golden section for the extremum of sdf (min outside, max inside).
                let sign = if vs[i] < 0.0 { -1.0 } else { 1.0 };
                let (mut a, mut b) = (xs[i - 1], xs[i + 1]);
                let phi = 0.5 * (5f64.sqrt() - 1.0);
                for _ in 0..100 {
                    let (x1, x2) = (b - phi * (b - a), a + phi * (b - a));
                    if sign * f(x1) < sign * f(x2) {
                        b = x2;
                    } else {
                        a = x1;
                    }
                }
                let m = 0.5 * (a + b);
                let v = f(m);
                if v.abs() <= band {
                    near.push(m);
                } else if (v < 0.0) != (vs[i] < 0.0) {
                    roots.push(bisect(xs[i - 1].max(lo), m));
                    roots.push(bisect(m, xs[i + 1]));
                }
            }
        }
        roots.sort_by(f64::total_cmp);
        (roots, near)
    }

    /// SplitMix64: a tiny fixed-seed generator for the adversarial inputs.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
        }
        fn log_uniform(&mut self, lo: f32, hi: f32) -> f32 {
            10f32.powf(self.uniform(lo, hi))
        }
        fn unit(&mut self) -> Vec3 {
            loop {
                let v = vec3(self.uniform(-1.0, 1.0), self.uniform(-1.0, 1.0), self.uniform(-1.0, 1.0));
                if v.length_squared() > 1e-4 && v.length_squared() <= 1.0 {
                    return v.normalize();
                }
            }
        }
    }

    /// An adversarial case: log-uniform size and `|dir|`; origins near, far
    /// (1e1–1e4 sizes), inside the tube, or on the surface; directions aimed at
    /// the tube, axis-parallel, in the ring's plane, or grazing the surface.
    fn adversarial(rng: &mut Rng) -> (Torus, Ray) {
        let size = rng.log_uniform(-3.0, 3.0);
        let t = Torus::new(size, size * rng.uniform(0.02, 1.0));
        let (big, r) = (t.major_radius, t.minor_radius);
        let tube = |rng: &mut Rng, rad: f32| -> (Vec3, Vec3) {
            let (a, b) = (rng.uniform(0.0, std::f32::consts::TAU), rng.uniform(0.0, std::f32::consts::TAU));
            let n = vec3(b.cos() * a.cos(), b.sin(), b.cos() * a.sin());
            (vec3(big * a.cos(), 0.0, big * a.sin()) + rad * n, n)
        };
        let depth = r * rng.uniform(0.0, 1.0);
        let target = tube(rng, depth).0;
        let (origin, mut dir) = match rng.next() % 6 {
            0 => {
                let o = target + rng.unit() * size * rng.log_uniform(1.0, 4.0);
                (o, target - o)
            }
            1 => {
                let depth = r * rng.uniform(0.0, 0.99);
                (tube(rng, depth).0, rng.unit())
            }
            2 => (tube(rng, r).0, rng.unit()),
            3 => {
                let (p, n) = tube(rng, r);
                let tangent = n.cross(rng.unit()).normalize() + n * rng.uniform(-1e-3, 1e-3);
                (p - tangent * size * rng.log_uniform(0.0, 3.0), tangent)
            }
            _ => {
                let o = target + rng.unit() * size * rng.uniform(1.0, 5.0);
                (o, target - o)
            }
        };
        match rng.next() % 5 {
            0 => dir *= Vec3::Y,
            1 => dir = vec3(dir.x, 0.0, dir.z),
            2 => dir = vec3(dir.x, 0.0, 0.0),
            _ => {}
        }
        let dir = dir.normalize_or(Vec3::X) * rng.log_uniform(-3.0, 3.0);
        (t, Ray::new(origin, dir))
    }

    /// `(point error / scale, cos)` of the first hit against the reference, for
    /// every case where both hit the same crossing. A disagreement is allowed
    /// only where the reference sees a near tangency (within 2e-5·scale) before
    /// the later of the two answers, or the origin lies on the surface.
    fn errors(seed: u64, n: usize) -> Vec<(f64, f64)> {
        let mut rng = Rng(seed);
        let mut errs = Vec::with_capacity(n);
        for _ in 0..n {
            let (torus, ray) = adversarial(&mut rng);
            let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
            let size = (torus.major_radius + torus.minor_radius) as f64;
            let band = 2e-5 * size.max(o.length() + size);
            let (roots, near) = reference(&torus, &ray, band);
            let got = torus.cast(&ray, Interval::FORWARD);
            let first = roots.first().copied();
            let later = first.unwrap_or(f64::INFINITY).max(got.map_or(f64::INFINITY, |h| h.t as f64));
            let sc = size.max(o.length()).max(first.map_or(0.0, |t| t * d.length()));
            let on_surface = sdf(&torus, o).abs() <= band;
            let tangent_before = near.iter().any(|&m| m <= later + band / d.length());
            match (first, got) {
                (Some(t), Some(h)) if ((h.t as f64 - t) * d.length()).abs() <= 1e-3 * sc => {
                    let e = (h.point.as_dvec3() - (o + t * d)).length() / sc;
                    let cos = (h.normal.as_dvec3().dot(d) / d.length()).abs();
                    errs.push((e, cos));
                }
                (None, None) => {}
                _ if tangent_before || on_surface => {}
                (_, got) => panic!("{torus:?} {ray:?}: reference {roots:?}, got {got:?}, near {near:?}"),
            }
            if let Some(h) = got {
                assert!(h.point.is_finite() && (h.normal.length() - 1.0).abs() < 1e-5, "{h:?}");
            }
        }
        errs
    }

    /// p99.9 and max.
    fn tail(mut errs: Vec<f64>) -> (f64, f64) {
        errs.sort_by(f64::total_cmp);
        (errs[((errs.len() - 1) as f64 * 0.999) as usize], errs[errs.len() - 1])
    }

    #[test]
    fn hit_points_match_the_sampled_reference_within_the_error_budget() {
        let errs = errors(0x7085_5EED, 3_000);
        assert!(errs.len() > 1_000, "the generator must mostly hit");
        let (p_all, m_all) = tail(errs.iter().map(|e| e.0).collect());
        let (p_across, m_across) = tail(errs.iter().map(|e| e.0 * e.1).collect());
        let clean: Vec<f64> = errs.iter().filter(|e| e.1 >= 0.05).map(|e| e.0).collect();
        let n_clean = clean.len();
        let (p_clean, m_clean) = tail(clean);
        println!(
            "torus: {} hits; point error / scale: all p99.9 {p_all:.2e} max {m_all:.2e}; \
                  cos >= 0.05 ({n_clean}) p99.9 {p_clean:.2e} max {m_clean:.2e}; \
                  across the surface p99.9 {p_across:.2e} max {m_across:.2e}",
            errs.len()
        );
        assert!(p_all <= 4e-6 && m_all <= 2e-5, "p99.9 {p_all:e}, max {m_all:e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, rng_seed: RngSeed::Fixed(23), ..ProptestConfig::default() })]

        /// Against the reference, and `cast`, `hits`, `cast_all` consistent.
        #[test]
        fn cast_all_and_reference_agree(seed in any::<u64>()) {
            let errs = errors(seed, 2);
            prop_assert!(errs.iter().all(|&(e, _)| e <= 2e-5), "{errs:?}");
            let (torus, ray) = adversarial(&mut Rng(seed));
            let hit = torus.cast(&ray, Interval::FORWARD);
            prop_assert_eq!(hit.is_some(), torus.hits(&ray, Interval::FORWARD));
            let all = torus.cast_all(&ray, Interval::FORWARD);
            prop_assert!(all.len() <= 4 && all.windows(2).all(|w| w[0].t <= w[1].t));
            prop_assert_eq!(all.first().map(|h| h.t), hit.map(|h| h.t));
        }

        /// `cast` in any window is the first of all crossings inside it (its
        /// early stop and the window's widening lose nothing, ends included).
        #[test]
        fn cast_in_a_window_is_the_first_crossing_in_it(seed in any::<u64>(), lo in 0usize..5, hi in 0usize..5) {
            let (torus, ray) = adversarial(&mut Rng(seed));
            let all: Vec<f32> = torus.cast_all(&ray, Interval::ALL).iter().map(|h| h.t).collect();
            let ends = |i: usize| all.get(i).copied().unwrap_or(f32::INFINITY);
            let range = Interval::new(if lo == 0 { f32::NEG_INFINITY } else { ends(lo - 1) }, ends(hi));
            let want = all.iter().copied().find(|&t| range.contains(t));
            prop_assert_eq!(torus.cast(&ray, range).map(|h| h.t), want);
            prop_assert_eq!(torus.hits(&ray, range), want.is_some());
        }
    }
}
