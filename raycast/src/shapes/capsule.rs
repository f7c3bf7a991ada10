//! Capsule: the points within `r` of the segment `a`–`b`.
//!
//! Everything is computed relative to the midpoint `m = (a + b)/2`, with the
//! unit axis `u = (b − a)/|b − a|` and the half length `L = |b − a|/2`, so the
//! numbers stay of the capsule's size wherever it is placed. With `o` the ray
//! origin relative to `m`, `y(t) = (o + t·d)·u` is the axial coordinate.
//!
//! 1. The infinite cylinder around the axis: with `o⊥ = o − (o·u)·u` and
//!    `d⊥ = d − (d·u)·u`, `A = d⊥·d⊥`, the foot of the perpendicular from the
//!    axis is at `t_m = −(o⊥·d⊥)/A` and the line is inside the cylinder over
//!    `t_m ± √(h²/A)`, `h² = r² − |o⊥ + t_m·d⊥|²` the squared half chord
//!    (the perpendicular-distance form of Haines et al., *Ray Tracing Gems*
//!    ch. 7, which does not cancel for far origins). Roots `s0 <= s1`.
//! 2. The capsule lies inside that cylinder, so it is entered no earlier than
//!    `s0`. If `|y(s0)| <= L` the entry is on the side, at `s0`. Otherwise the
//!    point at `s0` is beyond an end, say `b` (`y > L`); the line, moving
//!    inside the cylinder, can only reach the capsule through the sphere of
//!    radius `r` around `b` (the disk `y = L`, `|x⊥| <= r`, lies in that
//!    sphere), so the entry is that sphere's first root, and if the sphere is
//!    missed so is the capsule. The exit is found the same way from `s1`.
//!    (The same case split as Íñigo Quílez's capsule intersector, extended
//!    to the exit so that rays from inside get their exit hit.)
//! 3. Sphere roots use the same perpendicular-distance form with `d·d`.
//!
//! Departures from the textbook form:
//! * Everything is in f64 from the f32 inputs (the midpoint, axis and half
//!   length are kept in f64 too, from `a` and `b` exactly): products of two
//!   f32 are exact there, so each `h²` is off by ~1e-16·r² instead of f32's
//!   ~1e-7·r², and the half chord of a grazing ray (error `err(h²)/(2h)`)
//!   keeps its digits; in f64 `t_m ± half` is as accurate as the Vieta form.
//! * Branch-free: the cylinder and both end spheres are always computed (in
//!   parallel: neither sphere waits for the cylinder's roots), and the ends
//!   chosen by the sign of `y` at `s0` and `s1` with [`select`] (which LLVM cannot turn back into a branch
//!   around a square root); `cast` computes the hit on a miss too and has no
//!   data-dependent branch ([`RayCast::cast_candidate`]).
//! * A line within the f32 rounding of the inputs of tangent touches
//!   ([`TOUCH_REL`]): inputs written as tangent are off by that rounding.
//! * A line parallel to the axis (`A == 0`; no f32 direction makes `A`
//!   underflow in f64) never meets the side: it is inside the cylinder for
//!   every `t` if `|o⊥| <= r` and then enters through the end sphere it moves
//!   away from and leaves through the other; otherwise it misses.
//! * `a == b` (or `L` subnormal in f32) is a sphere around `m`; both of its
//!   crossings are reported as [`Part::CapA`].
//! * The hit point is `m + q`, `q = o + t·d` in f64 with the unrounded `t`,
//!   rounded once; the normal is `(q − clamp(q·u, −L, L)·u)/r`, the gradient
//!   of the distance to the segment, unit to f64 rounding without a square
//!   root, and the same formula on the side and on both caps.

use crate::error::{finite_vec, or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{all_finite, select, Bounds64, F32_MAX, TOUCH_REL};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::{DVec3, Vec3, Vec3A};

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
    /// `mid`, `axis` and `half_len` in f64, from `a` and `b` exactly: the
    /// kernel's frame (see the module doc).
    mid64: DVec3,
    axis64: DVec3,
    half_len64: f64,
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
        let e64 = 0.5 * (b.as_dvec3() - a.as_dvec3());
        let (axis64, half_len64) =
            if half_len > 0.0 { (e64 / e64.length(), e64.length()) } else { (DVec3::ZERO, 0.0) };
        let mid64 = 0.5 * (a.as_dvec3() + b.as_dvec3());
        Ok(Self { a, b, radius, mid, axis, half_len, mid64, axis64, half_len64 })
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

/// Entry and exit of the line (`t0 <= t1`, f64, relative to the ray), each
/// with the part it crosses, the origin relative to the midpoint (f64), and
/// `ok`: false when the line misses, the ray is degenerate, or a crossing is
/// not a finite f32.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f64,
    part0: Part,
    t1: f64,
    part1: Part,
    o: DVec3,
    d: DVec3,
    ok: bool,
}

/// The line's crossings with the sphere of radius `r` around the origin, `o`
/// relative to its centre, given `1/(d·d)`: `(t0, t1, meets)`; a line within
/// [`TOUCH_REL`] of tangent touches (double root).
#[inline(always)]
fn sphere_roots(o: DVec3, d: DVec3, r: f64, inv_dd: f64) -> (f64, f64, bool) {
    let tm = -o.dot(d) * inv_dd;
    chord(tm, o + tm * d, r, inv_dd)
}

/// The chord `tm ± √(h²/(d·d))` of a sphere of radius `r`, given the foot of
/// the perpendicular from its centre (`tm` and the foot point relative to
/// the centre): `(t0, t1, meets)`.
#[inline(always)]
fn chord(tm: f64, foot: DVec3, r: f64, inv_dd: f64) -> (f64, f64, bool) {
    let r2 = r * r;
    let h2 = r2 - foot.length_squared();
    let half = (h2.max(0.0) * inv_dd).sqrt();
    (tm - half, tm + half, h2 >= -TOUCH_REL * r2)
}

impl Capsule {
    /// The kernel (see the module doc).
    #[inline(always)]
    fn crossing(&self, ray: &Ray) -> Crossing {
        let (oa, da) = (Vec3A::from(ray.origin), Vec3A::from(ray.dir));
        // NaN or ±∞ anywhere makes a lane of `(o − o) + (d − d)` NaN.
        let valid = all_finite(oa, da) & (ray.dir != Vec3::ZERO);
        let (u, len, r) = (self.axis64, self.half_len64, f64::from(self.radius));
        let o = ray.origin.as_dvec3() - self.mid64;
        let d = ray.dir.as_dvec3();
        let inv_dd = 1.0 / d.length_squared();
        let (oy, dy) = (o.dot(u), d.dot(u));
        let (op, dp) = (o - oy * u, d - dy * u);
        let a = dp.length_squared();
        // Infinite cylinder (for a == b this is the sphere itself, all "beyond an end").
        let (s0, s1, meets) = sphere_roots(op, dp, r, 1.0 / a);
        let axial = a == 0.0;
        let tube = if axial { op.length_squared() <= r * r * (1.0 + TOUCH_REL) } else { meets };
        // Axial coordinate at s0 and s1; an axial line goes from the end it
        // moves away from to the other (y = ∓dy stands for y(∓∞)).
        let y0 = select(axial, -dy, oy + s0 * dy);
        let y1 = select(axial, dy, oy + s1 * dy);
        // No side when the line is axial or the capsule is a sphere (len == 0).
        let has_side = !axial & (len > 0.0);
        let side0 = has_side & (y0.abs() <= len);
        let side1 = has_side & (y1.abs() <= len);
        let (to_b0, to_b1) = (y0 > 0.0, y1 > 0.0);
        let part0 = if to_b0 { Part::CapB } else { Part::CapA };
        let part1 = if to_b1 { Part::CapB } else { Part::CapA };
        // End spheres around ±L·u from the foot seen from the midpoint:
        // moving the centre by c·u moves the foot by −c·(u − (d·u/d·d)·d) and
        // its parameter by c·(d·u)/(d·d) (exact identities; no new
        // cancellation). Both spheres are solved, independently of the
        // cylinder's roots, and the ends picked by `y0`, `y1` afterwards: the
        // three square roots then run in parallel instead of one after the
        // other (the same operations as solving only the sphere picked).
        let tm = -o.dot(d) * inv_dd;
        let foot = o + tm * d;
        let dy_dd = dy * inv_dd;
        let w = u - dy_dd * d;
        let (ea0, ea1, oka) = chord(tm - len * dy_dd, foot + len * w, r, inv_dd);
        let (eb0, eb1, okb) = chord(tm + len * dy_dd, foot - len * w, r, inv_dd);
        let (e0, ok0) = (select(to_b0, eb0, ea0), if to_b0 { okb } else { oka });
        let (e1, ok1) = (select(to_b1, eb1, ea1), if to_b1 { okb } else { oka });
        let t0 = select(side0, s0, e0);
        let t1 = select(side1, s1, e1);
        let ok = valid & tube & (side0 | ok0) & (side1 | ok1) & (t0.abs() <= F32_MAX) & (t1.abs() <= F32_MAX);
        Crossing {
            t0,
            part0: if side0 { Part::Side } else { part0 },
            t1: t1.max(t0),
            part1: if side1 { Part::Side } else { part1 },
            o,
            d,
            ok,
        }
    }

    /// The full hit at the f64 root `t` on `part` (see the module doc for
    /// the point and normal); `o`, `d` are the kernel's f64 ray.
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, o: DVec3, d: DVec3, t: f64, part: Part) -> Hit {
        let (u, len) = (self.axis64, self.half_len64);
        let q = o + t * d;
        let y = q.dot(u).clamp(-len, len);
        let n = (q - y * u) * (1.0 / f64::from(self.radius));
        Hit::with_point(ray, t as f32, (self.mid64 + q).as_vec3(), n.as_vec3(), part)
    }
}

impl RayCast for Capsule {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free: the end is chosen with selects and the hit computed on
    /// a miss too (see [`RayCast::cast_candidate`]).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let c = self.crossing(ray);
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(c.t0), bounds.contains(c.t1));
        let t = select(in0, c.t0, c.t1);
        let part = if in0 { c.part0 } else { c.part1 };
        (c.ok & (in0 | in1), self.hit_at(ray, c.o, c.d, t, part))
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let c = self.crossing(ray);
        let bounds = Bounds64::new(range);
        c.ok & (bounds.contains(c.t0) | bounds.contains(c.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let c = self.crossing(ray);
        let mut out = Vec::with_capacity(2);
        if !c.ok {
            return out;
        }
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(c.t0), bounds.contains(c.t1));
        let (t0, t1) = (c.t0 as f32, c.t1 as f32);
        if in0 {
            out.push(self.hit_at(ray, c.o, c.d, c.t0, c.part0));
        }
        if t1 != t0 && in1 {
            out.push(self.hit_at(ray, c.o, c.d, c.t1, c.part1));
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
        let c = self.crossing(ray);
        c.ok.then(|| Span {
            enter: self.hit_at(ray, c.o, c.d, c.t0, c.part0),
            exit: self.hit_at(ray, c.o, c.d, c.t1, c.part1),
        })
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
