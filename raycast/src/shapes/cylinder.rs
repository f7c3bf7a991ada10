//! Finite cylinder on the +Y axis: radius `r`, caps at `y = ±h`.
//!
//! The solid is the intersection of the infinite cylinder `x² + z² ≤ r²` and
//! the slab `|y| ≤ h`, both convex, so the line through a ray is inside it
//! over `[max(s0, c0), min(s1, c1)]`, where `[s0, s1]` is where it is inside
//! the infinite cylinder and `[c0, c1]` inside the slab (the same clipping as
//! the slab method, Kay & Kajiya 1986; pbrt-v4's `Cylinder` instead tests the
//! side roots and disks separately). Whichever interval set the entry (exit)
//! names the part: `Side`, or the cap the ray crosses.
//!
//! Side: `(o_x + t·d_x)² + (o_z + t·d_z)² = r²`. With `a = d_x² + d_z²`,
//! `b = o_x·d_x + o_z·d_z`, the foot of the perpendicular from the axis (in
//! the xz plane) is at `t_m = −b/a`, and the line is inside the infinite
//! cylinder over `t_m ± √(h²/a)`, `h² = r² − |o_xz + t_m·d_xz|²` the squared
//! half chord (the perpendicular-distance form of Haines et al., *Ray Tracing
//! Gems* ch. 7: no `b² − a·c`, which cancels for a far origin). This is
//! computed in f64 from the f32 inputs: products of two f32 are exact there,
//! so `h²` is off by ~1e-16·r² instead of f32's ~1e-7·r², and a grazing ray's
//! half chord `h` (error `err(h²)/(2h)`) keeps its digits; in f64 the plain
//! `t_m ± half` is as good as the Vieta form. Caps: `c0, c1 = (∓h − o_y)/d_y`,
//! one rounding, also in f64 so both intervals are compared at one precision.
//!
//! Departures from the textbook form:
//! * A ray parallel to the axis (`a == 0`; in f64 no f32 direction makes `a`
//!   underflow) is decided exactly: inside the infinite cylinder for every
//!   `t` when `o_x² + o_z² ≤ r²` (boundary included: a ray along the side
//!   touches), else a miss. Likewise `d_y == 0` is decided by `|o_y| ≤ h`, so
//!   no `0/0` is ever formed.
//! * A tangent line gives `h² == 0`, one double root: a hit (touching counts);
//!   so does a line within the f32 rounding of the inputs of tangent
//!   ([`TOUCH_REL`]), and an axial line that close to the side.
//! * A ray through the rim has equal entry and exit in exact arithmetic; the
//!   rounded values are compared with a slack (see [`TOUCH_SLACK`]).
//! * Branch-free: both intervals, the clipping and the choice of the end are
//!   computed with [`select`] (which LLVM cannot turn back into a branch
//!   around the square root); `cast` computes the hit on a miss too and has no
//!   data-dependent branch ([`RayCast::cast_candidate`]).
//! * The hit point is `o + t·d` in f64 (unrounded `t`), put on the surface:
//!   the side normal is its radial part divided by `r` (unit to f64 rounding,
//!   no square root), `y` clamped to the caps; a cap point gets `y = ±h` and is
//!   pulled into the disk if a rim hit lands a rounding outside it.

use crate::error::{or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{all_finite, gamma, select, Bounds64, F32_MAX, TOUCH_REL};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::{Vec3, Vec3A};

/// A finite cylinder on the local +Y axis with caps at `y = ±half_height`.
/// Parts: [`Part::Side`], [`Part::Top`], [`Part::Bottom`].
///
/// # Examples
/// ```
/// use raycast::{vec3, ConvexSolid, Cylinder, Interval, Part, Ray, RayCast};
/// let cyl = Cylinder::try_new(1.0, 2.0)?;
/// let hit = cyl.cast(&Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.normal), (3.0, Part::Top, vec3(0.0, 1.0, 0.0)));
/// let side = cyl.span(&Ray::new(vec3(-3.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0))).unwrap();
/// assert_eq!((side.enter.t, side.exit.t, side.exit.part), (2.0, 4.0, Part::Side));
/// # Ok::<(), raycast::ShapeError>(())
/// ```
/// See also [`Capsule`](crate::Capsule) for a cylinder with rounded ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    radius: f32,
    half_height: f32,
}

impl Cylinder {
    /// A cylinder of the given radius and half height.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` or `half_height` unless finite and > 0.
    pub fn try_new(radius: f32, half_height: f32) -> Result<Self, ShapeError> {
        Ok(Self { radius: positive("radius", radius)?, half_height: positive("half_height", half_height)? })
    }
    /// Like [`Cylinder::try_new`].
    ///
    /// # Panics
    /// With the error's message when the cylinder is refused.
    #[track_caller]
    pub fn new(radius: f32, half_height: f32) -> Self {
        or_panic(Self::try_new(radius, half_height))
    }
    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
    /// Half the height.
    pub fn half_height(&self) -> f32 {
        self.half_height
    }
}

/// Relative widening of the exit before it is compared with the entry, so
/// that a ray through the rim (equal entry and exit in exact arithmetic) is
/// never lost. The f64 values are far more accurate than this; the slack is
/// the f32 rounding of the inputs, γ(12), which accepts only rays that miss
/// the rim by less than ~7e-7 of `|t|·|d|`.
const TOUCH_SLACK: f64 = gamma(12) as f64;

/// Entry and exit of the line (`t0 <= t1`, f64), whether each is on the side,
/// and `ok`: false when the line misses, the ray is degenerate, or a crossing
/// is not a finite f32.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f64,
    t1: f64,
    side0: bool,
    side1: bool,
    /// `d_y > 0`: the bottom cap is the one entered.
    up: bool,
    ok: bool,
}

/// The kernel (see the module doc).
#[inline(always)]
fn ray_cylinder(o: Vec3, d: Vec3, r: f32, h: f32) -> Crossing {
    const INF: f64 = f64::INFINITY;
    let (oa, da) = (Vec3A::from(o), Vec3A::from(d));
    // NaN or ±∞ anywhere makes a lane of `(o − o) + (d − d)` NaN.
    let valid = all_finite(oa, da) & (d != Vec3::ZERO);
    let (o, d) = (o.as_dvec3(), d.as_dvec3());
    let (r, h) = (f64::from(r), f64::from(h));
    // Inside the infinite cylinder over [s0, s1].
    let a = d.x * d.x + d.z * d.z;
    let inv_a = 1.0 / a;
    let tm = -(o.x * d.x + o.z * d.z) * inv_a;
    let (fx, fz) = (o.x + tm * d.x, o.z + tm * d.z);
    let r2 = r * r;
    let h2 = r2 - (fx * fx + fz * fz);
    let half = (h2.max(0.0) * inv_a).sqrt();
    let axial = a == 0.0;
    let in_tube = o.x * o.x + o.z * o.z <= r2 * (1.0 + TOUCH_REL);
    let s0 = select(axial, -INF, tm - half);
    let s1 = select(axial, INF, tm + half);
    let side_ok = if axial { in_tube } else { h2 >= -TOUCH_REL * r2 };
    // Inside the slab |y| <= h over [c0, c1]; the cap entered first is the
    // bottom one when the ray goes up.
    let up = d.y > 0.0;
    let flat = d.y == 0.0;
    let inv_dy = 1.0 / d.y;
    let t_bottom = (-h - o.y) * inv_dy;
    let t_top = (h - o.y) * inv_dy;
    let c0 = select(flat, -INF, select(up, t_bottom, t_top));
    let c1 = select(flat, INF, select(up, t_top, t_bottom));
    let slab_ok = !flat | (o.y.abs() <= h);
    let side0 = s0 >= c0;
    let side1 = s1 <= c1;
    let t0 = select(side0, s0, c0);
    let t1 = select(side1, s1, c1);
    let ok = valid
        & side_ok
        & slab_ok
        & (t0 <= t1 + t1.abs() * TOUCH_SLACK)
        & (t0.abs() <= F32_MAX)
        & (t1.abs() <= F32_MAX);
    Crossing { t0, t1: t1.max(t0), side0, side1, up, ok }
}

impl Cylinder {
    /// The full hit at the f64 root `t` on the side or the cap the ray
    /// crosses (`top`), with the point put back on that part.
    ///
    /// `hit` is false when the caller will discard the result (a miss in
    /// `cast_candidate`): the rim correction is then skipped.
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, t: f64, side: bool, top: bool, hit: bool) -> Hit {
        let (r, h) = (f64::from(self.radius), f64::from(self.half_height));
        let p = ray.origin.as_dvec3() + t * ray.dir.as_dvec3();
        // Side and cap values both computed and chosen with `select`: which
        // part a random ray hits is unpredictable. A cap point that a rim
        // hit lands a rounding outside the disk is pulled into it: a branch,
        // as that is rare (and never on a discarded miss, whose point is
        // arbitrary), so it is predicted and the square root and division
        // are skipped.
        let rho2 = p.x * p.x + p.z * p.z;
        let shrink = if hit & !side & (rho2 > r * r) { r / rho2.sqrt() } else { 1.0 };
        let cap_y = select(top, h, -h);
        let y = select(side, p.y.clamp(-h, h), cap_y);
        let point = Vec3::new((p.x * shrink) as f32, y as f32, (p.z * shrink) as f32);
        let inv_r = 1.0 / r;
        let (nx, nz) = (select(side, p.x * inv_r, 0.0), select(side, p.z * inv_r, 0.0));
        let ny = select(side, 0.0, select(top, 1.0, -1.0));
        let part = if side {
            Part::Side
        } else if top {
            Part::Top
        } else {
            Part::Bottom
        };
        Hit::with_point(ray, t as f32, point, Vec3::new(nx as f32, ny as f32, nz as f32), part)
    }
}

impl RayCast for Cylinder {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free: the end is chosen with selects and the hit computed on
    /// a miss too (see [`RayCast::cast_candidate`]).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height);
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(c.t0), bounds.contains(c.t1));
        let t = select(in0, c.t0, c.t1);
        let side = if in0 { c.side0 } else { c.side1 };
        // Entering through the bottom when going up; leaving through the top.
        let top = in0 != c.up;
        let ok = c.ok & (in0 | in1);
        (ok, self.hit_at(ray, t, side, top, ok))
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height);
        let bounds = Bounds64::new(range);
        c.ok & (bounds.contains(c.t0) | bounds.contains(c.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height);
        let mut out = Vec::with_capacity(2);
        if !c.ok {
            return out;
        }
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(c.t0), bounds.contains(c.t1));
        let (t0, t1) = (c.t0 as f32, c.t1 as f32);
        if in0 {
            out.push(self.hit_at(ray, c.t0, c.side0, !c.up, true));
        }
        if t1 != t0 && in1 {
            out.push(self.hit_at(ray, c.t1, c.side1, c.up, true));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::new(self.radius, self.half_height, self.radius))
    }
}

impl Solid for Cylinder {
    #[inline]
    fn contains(&self, p: Vec3) -> bool {
        p.x * p.x + p.z * p.z <= self.radius * self.radius && p.y.abs() <= self.half_height
    }
}

impl ConvexSolid for Cylinder {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height);
        c.ok.then(|| Span {
            enter: self.hit_at(ray, c.t0, c.side0, !c.up, true),
            exit: self.hit_at(ray, c.t1, c.side1, c.up, true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    fn cyl() -> Cylinder {
        Cylinder::new(1.0, 2.0)
    }

    #[test]
    fn side_and_caps_from_outside() {
        let h = cyl().cast(&Ray::new(vec3(0.0, 1.0, -4.0), vec3(0.0, 0.0, 2.0)), Interval::FORWARD).unwrap();
        assert_eq!(
            (h.t, h.part, h.normal, h.point),
            (1.5, Part::Side, vec3(0.0, 0.0, -1.0), vec3(0.0, 1.0, -1.0))
        );
        assert!(h.front_face);
        let h = cyl().cast(&Ray::new(vec3(0.5, -6.0, 0.0), vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal), (4.0, Part::Bottom, Vec3::NEG_Y));
        // Slanted through the top cap: from (0, 4, 0) toward (0.5, 2, 0).
        let h = cyl().cast(&Ray::new(vec3(0.0, 4.0, 0.0), vec3(0.25, -1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.point), (2.0, Part::Top, vec3(0.5, 2.0, 0.0)));
    }

    #[test]
    fn from_inside_exits_with_front_face_false() {
        let s = cyl();
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(3.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.front_face), (1.0 / 3.0, Part::Side, Vec3::X, false));
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.front_face), (2.0, Part::Top, false));
    }

    #[test]
    fn parallel_to_the_axis_is_exact() {
        // a == 0: inside the tube forever; only the caps bound the line.
        let r = Ray::new(vec3(0.6, 10.0, -0.8), vec3(0.0, -2.0, 0.0)); // on the side surface
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.enter.part, sp.exit.t, sp.exit.part), (4.0, Part::Top, 6.0, Part::Bottom));
        let r = Ray::new(vec3(0.6, 10.0, -0.81), vec3(0.0, -2.0, 0.0)); // just outside
        assert!(cyl().span(&r).is_none());
    }

    #[test]
    fn tangent_and_rim_rays_touch() {
        // Tangent to the side along x at z = 1.
        let r = Ray::new(vec3(-3.0, 0.5, 1.0), vec3(1.0, 0.0, 0.0));
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t, sp.enter.part), (3.0, 3.0, Part::Side));
        assert_eq!(cyl().cast_all(&r, Interval::FORWARD).len(), 1);
        // Touching only the rim point (1, 2, 0), coming down at 45°.
        let r = Ray::new(vec3(3.0, 0.0, 0.0), vec3(-1.0, 1.0, 0.0));
        let h = cyl().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.point), (2.0, vec3(1.0, 2.0, 0.0)));
        assert!(h.part == Part::Side || h.part == Part::Top);
        // Lying in the top cap's plane: enters at the rim.
        let r = Ray::new(vec3(-5.0, 2.0, 0.0), vec3(1.0, 0.0, 0.0));
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t), (4.0, 6.0));
    }

    #[test]
    fn far_origin_keeps_digits() {
        // Naive b² − a·c loses everything here; the perpendicular distance does not.
        let r = Ray::new(vec3(-1.0e4, 0.0, 0.999), vec3(1.0, 0.0, 0.0));
        let h = cyl().cast(&r, Interval::FORWARD).unwrap();
        let exact = 1.0e4 - (1.0f64 - (0.999f32 as f64).powi(2)).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-6 * 1.0e4, "{} vs {exact}", h.t);
        assert!((h.point.x.hypot(h.point.z) - 1.0).abs() <= 2.0 * f32::EPSILON);
    }

    #[test]
    fn degenerate_rays_miss_and_intervals_count_both_ends() {
        for d in [Vec3::ZERO, Vec3::NAN, vec3(0.0, f32::NEG_INFINITY, 0.0)] {
            assert!(cyl().cast(&Ray::new(vec3(0.0, 5.0, 0.0), d), Interval::FORWARD).is_none());
        }
        let r = Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert!(cyl().hits(&r, Interval::new(7.0, 7.0)));
        assert!(!cyl().hits(&r, Interval::new(7.0001, 9.0)));
        let all = cyl().cast_all(&r, Interval::FORWARD);
        assert_eq!(
            all.iter().map(|h| (h.t, h.part)).collect::<Vec<_>>(),
            [(3.0, Part::Top), (7.0, Part::Bottom)]
        );
    }

    #[test]
    fn contains_includes_the_boundary() {
        assert!(cyl().contains(vec3(0.6, 2.0, 0.8)));
        assert!(!cyl().contains(vec3(0.0, 2.0001, 0.0)));
        assert!(!cyl().contains(vec3(1.0001, 0.0, 0.0)));
    }
}
