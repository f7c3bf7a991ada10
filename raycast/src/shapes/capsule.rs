//! Capsule: the points within `r` of the segment `a`–`b`.
//!
//! Everything is computed relative to the midpoint `m = (a + b)/2`, with the
//! unit axis `u = (b − a)/|b − a|` and the half length `L = |b − a|/2`, so the
//! numbers stay of the capsule's size wherever it is placed. With `o` the ray
//! origin relative to `m`, `y(t) = (o + t·d)·u` is the axial coordinate.
//!
//! 1. The infinite cylinder around the axis: with `o⊥ = o − (o·u)·u` and
//!    `d⊥ = d − (d·u)·u`, solve `|o⊥ + t·d⊥|² = r²`, i.e. `A·t² + 2·B·t + C = 0`
//!    with `A = d⊥·d⊥`, `B = o⊥·d⊥`, `C = o⊥·o⊥ − r²`. The reduced discriminant
//!    is `A·(r² − l²)`, `l = |o⊥ − (B/A)·d⊥|` the distance from the axis to
//!    the line (squared, no square root needed), which does not cancel for far origins (Haines et al., *Ray
//!    Tracing Gems* ch. 7). Roots `s0 <= s1` from [`quadratic_roots`].
//! 2. The capsule lies inside that cylinder, so it is entered no earlier than
//!    `s0`. If `|y(s0)| <= L` the entry is on the side, at `s0`. Otherwise the
//!    point at `s0` is beyond an end, say `b` (`y > L`); the line, moving
//!    inside the cylinder, can only reach the capsule through the sphere of
//!    radius `r` around `b` (the disk `y = L`, `|x⊥| <= r`, lies in that
//!    sphere), so the entry is that sphere's first root, and if the sphere is
//!    missed so is the capsule. The exit is found the same way from `s1`.
//!    (The same case split as Íñigo Quílez's capsule intersector, extended
//!    to the exit so that rays from inside get their exit hit.)
//! 3. Sphere roots use the same perpendicular-distance discriminant, with
//!    `d·d` and its reciprocal computed once for both end spheres.
//!
//! Departures from the textbook form:
//! * A line parallel to the axis (`A` zero or subnormal, so `B/A` would
//!   overflow) never meets the side: it is inside the cylinder for every `t`
//!   if `|o⊥| <= r` and then enters through the end sphere it moves away from
//!   and leaves through the other; otherwise it misses.
//! * `a == b` (or `L` subnormal) is a sphere around `m`; both of its
//!   crossings are reported as [`Part::CapA`].
//! * The hit point is put back on the surface: at distance `r` from the axis
//!   point (side, `y` clamped to `[−L, L]`) or from the end point (caps).

use crate::error::{finite_vec, or_panic, positive};
use crate::numeric::quadratic_roots;
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// The points within `radius` of the segment `a`–`b` (free end points;
/// `a == b` is a sphere). Parts: [`Part::Side`], [`Part::CapA`], [`Part::CapB`].
///
/// # Examples
/// ```
/// use raycast::{vec3, Capsule, ConvexSolid, Interval, Part, Ray, RayCast};
/// let c = Capsule::try_new(vec3(0.0, -1.0, 0.0), vec3(0.0, 1.0, 0.0), 0.5)?;
/// let hit = c.cast(&Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.normal), (3.5, Part::CapB, vec3(0.0, 1.0, 0.0)));
/// let side = c.span(&Ray::new(vec3(-2.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0))).unwrap();
/// assert_eq!((side.enter.t, side.exit.t, side.enter.part), (1.5, 2.5, Part::Side));
/// # Ok::<(), raycast::ShapeError>(())
/// ```
/// See also [`Cylinder`](crate::Cylinder) for flat ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    a: Vec3,
    b: Vec3,
    radius: f32,
    /// `(a + b) / 2`: the frame the kernel works in.
    mid: Vec3,
    /// `(b − a) / |b − a|`, or zero when `a == b`.
    axis: Vec3,
    /// `|b − a| / 2`.
    half_len: f32,
}

impl Capsule {
    /// A capsule around the segment `a`–`b`.
    ///
    /// # Errors
    /// [`ShapeError`] on `a` or `b` unless finite, on `radius` unless finite and > 0.
    pub fn try_new(a: Vec3, b: Vec3, radius: f32) -> Result<Self, ShapeError> {
        let (a, b, radius) = (finite_vec("a", a)?, finite_vec("b", b)?, positive("radius", radius)?);
        let mid = a.midpoint(b);
        let e = 0.5 * (b - a);
        let half_len = e.length();
        // A subnormal half length would make `e / half_len` lose its digits;
        // such a capsule is a sphere to within 1e-38.
        let (axis, half_len) =
            if half_len >= f32::MIN_POSITIVE { (e / half_len, half_len) } else { (Vec3::ZERO, 0.0) };
        Ok(Self { a, b, radius, mid, axis, half_len })
    }
    /// Like [`Capsule::try_new`].
    ///
    /// # Panics
    /// With the error's message when the capsule is refused.
    #[track_caller]
    pub fn new(a: Vec3, b: Vec3, radius: f32) -> Self {
        or_panic(Self::try_new(a, b, radius))
    }
    /// The end point `a`.
    pub fn a(&self) -> Vec3 {
        self.a
    }
    /// The end point `b`.
    pub fn b(&self) -> Vec3 {
        self.b
    }
    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
}

/// Entry and exit of the line (`t0 <= t1`), each with the part it crosses.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f32,
    part0: Part,
    t1: f32,
    part1: Part,
}

impl Capsule {
    /// The kernel (see the module doc); `None` if the line misses, the ray is
    /// degenerate, or a crossing is not a finite f32.
    #[inline]
    fn crossing(&self, ray: &Ray) -> Option<Crossing> {
        let (d, r, len, u) = (ray.dir, self.radius, self.half_len, self.axis);
        if !(ray.origin.is_finite() && d.is_finite()) || d == Vec3::ZERO {
            return None;
        }
        let o = ray.origin - self.mid;
        // |d|² and its reciprocal are shared by both end spheres.
        let dd = d.length_squared();
        if !(dd.is_finite() && dd >= f32::MIN_POSITIVE) {
            return None;
        }
        let inv_dd = 1.0 / dd;
        let sphere = |c: Vec3| sphere_roots(o - c, d, r, dd, inv_dd);
        if len == 0.0 {
            let (t0, t1) = sphere(Vec3::ZERO)?;
            return finite(Crossing { t0, part0: Part::CapA, t1, part1: Part::CapA });
        }
        let (oy, dy) = (o.dot(u), d.dot(u));
        let (op, dp) = (o - oy * u, d - dy * u);
        let a = dp.length_squared();
        let ends =
            |y: f32| if y > 0.0 { (self.axis * len, Part::CapB) } else { (-self.axis * len, Part::CapA) };
        if !(a >= f32::MIN_POSITIVE) {
            // Parallel to the axis: through both end spheres, or nothing.
            if !(op.length_squared() <= r * r) {
                return None;
            }
            let (c0, part0) = ends(-dy);
            let (c1, part1) = ends(dy);
            let (t0, _) = sphere(c0)?;
            let (_, t1) = sphere(c1)?;
            return finite(Crossing { t0, part0, t1, part1 });
        }
        let b = op.dot(dp);
        let c = op.length_squared() - r * r;
        let disc = a * (r * r - (op - (b / a) * dp).length_squared());
        if !(disc >= 0.0) {
            return None;
        }
        let (s0, s1) = quadratic_roots(a, b, c, disc);
        let (y0, y1) = (oy + s0 * dy, oy + s1 * dy);
        let side0 = y0.abs() <= len;
        let side1 = y1.abs() <= len;
        let (t0, part0, t1, part1) = match (side0, side1) {
            (true, true) => (s0, Part::Side, s1, Part::Side),
            (true, false) => {
                let (c1, part1) = ends(y1);
                (s0, Part::Side, sphere(c1)?.1, part1)
            }
            (false, true) => {
                let (c0, part0) = ends(y0);
                (sphere(c0)?.0, part0, s1, Part::Side)
            }
            (false, false) => {
                let (c0, part0) = ends(y0);
                let (c1, part1) = ends(y1);
                let (t0, t1a) = sphere(c0)?;
                let t1 = if part1 == part0 { t1a } else { sphere(c1)?.1 };
                (t0, part0, t1, part1)
            }
        };
        finite(Crossing { t0, part0, t1: t1.max(t0), part1 })
    }

    /// The full hit at `t` on `part`, with the point put back on that part.
    fn hit_at(&self, ray: &Ray, t: f32, part: Part) -> Hit {
        let (r, u) = (self.radius, self.axis);
        match part {
            Part::Side => {
                let q = (ray.origin - self.mid) + t * ray.dir;
                let y = q.dot(u);
                let n = (q - y * u).normalize_or(u.any_orthonormal_vector());
                let point = self.mid + y.clamp(-self.half_len, self.half_len) * u + r * n;
                Hit::with_point(ray, t, point, n, part)
            }
            _ => {
                let (c, away) = if part == Part::CapB { (self.b, u) } else { (self.a, -u) };
                let n = ((ray.origin - c) + t * ray.dir).normalize_or(away.normalize_or(Vec3::Y));
                Hit::with_point(ray, t, c + r * n, n, part)
            }
        }
    }
}

/// Roots `t0 <= t1` of `|o + t·d|² = r²` (an end sphere, `o` relative to its
/// centre) given `dd = d·d` and its reciprocal. Reduced discriminant
/// `dd·(r² − |o⊥|²)`, `o⊥ = o − (o·d/dd)·d` the offset of the line from the
/// centre: no cancellation for far origins (Haines et al.); `r² − |o⊥|²`
/// itself has an absolute error of a few ulps of `r²`, as `(r − l)(r + l)`
/// would, without a square root.
#[inline]
fn sphere_roots(o: Vec3, d: Vec3, r: f32, dd: f32, inv_dd: f32) -> Option<(f32, f32)> {
    let b = o.dot(d);
    let disc = dd * (r * r - (o - (b * inv_dd) * d).length_squared());
    if !(disc >= 0.0) {
        return None;
    }
    Some(quadratic_roots(dd, b, o.length_squared() - r * r, disc))
}

/// The crossing if both of its parameters are finite f32 values.
#[inline]
fn finite(c: Crossing) -> Option<Crossing> {
    (c.t0.is_finite() && c.t1.is_finite()).then_some(c)
}

impl RayCast for Capsule {
    #[inline]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let c = self.crossing(ray)?;
        if range.contains(c.t0) {
            Some(self.hit_at(ray, c.t0, c.part0))
        } else if range.contains(c.t1) {
            Some(self.hit_at(ray, c.t1, c.part1))
        } else {
            None
        }
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.crossing(ray).is_some_and(|c| range.contains(c.t0) || range.contains(c.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let Some(c) = self.crossing(ray) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        if range.contains(c.t0) {
            out.push(self.hit_at(ray, c.t0, c.part0));
        }
        if c.t1 != c.t0 && range.contains(c.t1) {
            out.push(self.hit_at(ray, c.t1, c.part1));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::new(
            self.a.min(self.b) - Vec3::splat(self.radius),
            self.a.max(self.b) + Vec3::splat(self.radius),
        )
    }
}

impl Solid for Capsule {
    /// Distance from `p` to the segment (clamped projection onto the axis) `<= radius`.
    #[inline]
    fn contains(&self, p: Vec3) -> bool {
        let q = p - self.mid;
        let y = q.dot(self.axis).clamp(-self.half_len, self.half_len);
        (q - y * self.axis).length_squared() <= self.radius * self.radius
    }
}

impl ConvexSolid for Capsule {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let c = self.crossing(ray)?;
        Some(Span { enter: self.hit_at(ray, c.t0, c.part0), exit: self.hit_at(ray, c.t1, c.part1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    /// Axis along x from -2 to 2, radius 1.
    fn cap() -> Capsule {
        Capsule::new(vec3(-2.0, 0.0, 0.0), vec3(2.0, 0.0, 0.0), 1.0)
    }

    #[test]
    fn side_and_both_caps_from_outside() {
        let h = cap().cast(&Ray::new(vec3(1.0, 5.0, 0.0), vec3(0.0, -2.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.point), (2.0, Part::Side, Vec3::Y, vec3(1.0, 1.0, 0.0)));
        let h = cap().cast(&Ray::new(vec3(-9.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.point), (6.0, Part::CapA, Vec3::NEG_X, vec3(-3.0, 0.0, 0.0)));
        let h = cap().cast(&Ray::new(vec3(9.0, 0.0, 0.0), vec3(-1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal), (6.0, Part::CapB, Vec3::X));
        // Down onto the cap sphere beyond the side: enters cap_b at (2.6, 0.8, 0).
        let h = cap().cast(&Ray::new(vec3(2.6, 4.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD).unwrap();
        assert!((h.t - 3.2).abs() < 1e-6 && h.part == Part::CapB, "{h:?}");
    }

    #[test]
    fn from_inside_exits_through_the_right_part() {
        let c = cap();
        let h = c.cast(&Ray::new(vec3(0.5, 0.0, 0.0), vec3(0.0, 0.0, 4.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.front_face), (0.25, Part::Side, false));
        let h = c.cast(&Ray::new(vec3(0.5, 0.0, 0.0), vec3(2.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.front_face), (1.25, Part::CapB, Vec3::X, false));
        let sp = c.span(&Ray::new(vec3(0.5, 0.0, 0.0), vec3(2.0, 0.0, 0.0))).unwrap();
        assert_eq!((sp.enter.t, sp.enter.part), (-1.75, Part::CapA));
    }

    #[test]
    fn slanted_line_through_both_caps_and_tangent_rays() {
        // In the xy plane, shallow enough to enter and leave through the end spheres.
        let r = Ray::new(vec3(-4.0, -1.0, 0.0), vec3(8.0, 2.0, 0.0));
        let sp = cap().span(&r).unwrap();
        assert!(
            sp.enter.t < sp.exit.t && sp.enter.part == Part::CapA && sp.exit.part == Part::CapB,
            "{sp:?}"
        );
        // Tangent to the side at y = 1 and to cap b's top at the same height.
        let r = Ray::new(vec3(0.0, 1.0, -5.0), vec3(0.0, 0.0, 1.0));
        let sp = cap().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t, sp.enter.part), (5.0, 5.0, Part::Side));
        let r = Ray::new(vec3(3.0, 0.0, -5.0), vec3(0.0, 0.0, 1.0)); // tangent to cap b's tip
        let sp = cap().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t, sp.enter.part), (5.0, 5.0, Part::CapB));
    }

    #[test]
    fn parallel_to_the_axis_goes_through_both_end_spheres() {
        let r = Ray::new(vec3(10.0, 0.6, 0.8), vec3(-2.0, 0.0, 0.0));
        let sp = cap().span(&r).unwrap();
        assert_eq!((sp.enter.part, sp.exit.part), (Part::CapB, Part::CapA));
        assert!((sp.enter.t - 4.0).abs() < 1e-6 && (sp.exit.t - 6.0).abs() < 1e-6, "{sp:?}");
        assert!(cap().span(&Ray::new(vec3(10.0, 0.0, 1.01), vec3(-2.0, 0.0, 0.0))).is_none());
    }

    #[test]
    fn equal_end_points_are_a_sphere() {
        let c = Capsule::new(vec3(1.0, 2.0, 3.0), vec3(1.0, 2.0, 3.0), 2.0);
        let h = c.cast(&Ray::new(vec3(1.0, 2.0, -7.0), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.part), (8.0, Vec3::NEG_Z, Part::CapA));
        assert!(c.contains(vec3(1.0, 4.0, 3.0)) && !c.contains(vec3(1.0, 4.01, 3.0)));
    }

    #[test]
    fn far_origin_keeps_digits() {
        let r = Ray::new(vec3(0.0, 0.999, -1.0e4), vec3(0.0, 0.0, 1.0));
        let h = cap().cast(&r, Interval::FORWARD).unwrap();
        let exact = 1.0e4 - (1.0f64 - (0.999f32 as f64).powi(2)).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-6 * 1.0e4, "{} vs {exact}", h.t);
        assert_eq!(h.part, Part::Side);
    }

    #[test]
    fn degenerate_rays_miss() {
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 1.0, 0.0)] {
            assert!(cap().cast(&Ray::new(vec3(0.0, 5.0, 0.0), d), Interval::FORWARD).is_none());
            assert!(cap().span(&Ray::new(vec3(0.0, 5.0, 0.0), d)).is_none());
        }
        assert!(!cap().hits(&Ray::new(Vec3::NAN, Vec3::Y), Interval::ALL));
    }

    #[test]
    fn contains_measures_distance_to_the_segment() {
        assert!(cap().contains(vec3(3.0, 0.0, 0.0)) && cap().contains(vec3(0.0, 0.0, 1.0)));
        assert!(!cap().contains(vec3(2.8, 0.8, 0.0)) && !cap().contains(vec3(0.0, 1.0001, 0.0)));
    }
}
