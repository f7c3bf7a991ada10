//! Capsule: the points within `r` of the segment `a`–`b`.
//!
//! Everything is computed relative to the midpoint `m = (a + b)/2`, with the
//! unit axis `u = (b − a)/|b − a|` and the half length `L = |b − a|/2`, so the
//! numbers stay of the capsule's size wherever it is placed. The ray
//! (origin `o` relative to `m`, direction `d`) is first written in an
//! orthonormal frame `(v, u, w)` stored with the shape: `(ox, oy, oz)`,
//! `(dx, dy, dz)`, with `y` the axial coordinate. The perpendicular parts
//! `o⊥ = (ox, oz)`, `d⊥ = (dx, dz)` are then exact projections, not the
//! differences `o − (o·u)·u`.
//!
//! 1. The infinite cylinder around the axis: `A·t² + 2B·t + C = 0` with
//!    `A = |d⊥|²`, `B = o⊥·d⊥`, and by Lagrange's identity
//!    `B² − A·C = r²·A − X²`, `X = o⊥ × d⊥ = ox·dz − oz·dx`: `X²/A` is the
//!    squared distance of the line from the axis, so the discriminant comes
//!    from that distance and does not cancel for far origins (the
//!    perpendicular-distance form of Haines et al., *Ray Tracing Gems*
//!    ch. 7). Roots `s0, s1 = (−B ∓ √(r²A − X²))/A`.
//! 2. The capsule lies inside that cylinder, so it is entered no earlier than
//!    `s0`. If `|y(s0)| <= L` the entry is on the side, at `s0`. Otherwise the
//!    point at `s0` is beyond an end, say `b` (`y > L`); the line, moving
//!    inside the cylinder, can only reach the capsule through the sphere of
//!    radius `r` around `b` (the disk `y = L`, `|x⊥| <= r`, lies in that
//!    sphere), so the entry is that sphere's first root, and if the sphere is
//!    missed so is the capsule. The exit is found the same way from `s1`.
//!    (The same case split as Íñigo Quílez's capsule intersector, extended
//!    to the exit so that rays from inside get their exit hit.)
//! 3. End spheres around `c·u`, `c = ±L`, the same way in 3D:
//!    `B_c² − |d|²·C_c = r²·|d|² − |o_c × d|²` with `o_c = o − c·u` and
//!    `o_c × d = (P − c·dz, −X, Q + c·dx)`, `P = oy·dz − oz·dy`,
//!    `Q = ox·dy − oy·dx` shared by both ends.
//!
//! **First crossing** (`cast`). Only one end is wanted: the exit if the
//! point at `t_min` is strictly inside (distance to the segment `< r`),
//! else the entry. So one root of the cylinder (sign `σ = ±1`) and the same
//! root of both end spheres are taken (the three square roots in parallel,
//! the two ends' as one 2-lane root: no sphere waits for the cylinder's
//! root), and the part (side, or which end) is chosen meanwhile from the
//! signs of `A·y(s) ∓ L·A` compared as squares, without the root (see
//! `Capsule::first`), then one root picked. An entry computed behind
//! `t_min` while the ray moves inward at `t_min` (the exact entry is then
//! at or after `t_min`), or an exit computed behind `t_min` from inside, is
//! a rounding of a crossing at `t_min` and is clamped onto it.
//! `front_face` is the geometry's own answer: an entry with a positive half
//! chord. `span` and `cast_all` take both ends.
//!
//! **Occlusion** (`hits`): no roots and no division. The squared distance
//! `f(t)` of the line's point from the segment is convex, so `[t_min, t_max]`
//! meets the solid iff `f` at the line's closest approach to the segment,
//! clamped into the range, is `<= r²`; and it holds a crossing unless both
//! range ends are strictly inside. The closest approach to the axis line is
//! at height `y_c = n/A`, `n = oy·A − B·dy`; if `|y_c| <= L` it is the
//! closest approach to the segment, at `f = X²/A`, else the nearest end `c`
//! is, at `t_e = (c·dy − o·d)/|d|²` and `f = |o_c × d|²/|d|²`. Every test is
//! made on numerators against denominators times bounds (`A`, `|d|² > 0`).
//!
//! Departures from the textbook form:
//! * Everything is in f64 from the f32 inputs (the midpoint, frame and half
//!   length are kept in f64 too, from `a` and `b` exactly): each
//!   discriminant is off by ~1e-16 of its terms instead of f32's ~1e-7, and
//!   the half chord of a grazing ray (error `err(disc)/(2·√disc)`) keeps
//!   its digits; `(−B ± √disc)/A` is as accurate in f64 as the Vieta form.
//!   A cross product `X`, `P`, `Q` is off by ~1e-16·|o||d|, the same as the
//!   foot of the perpendicular `o + t_m·d` it replaces.
//! * Branch-free: `cast` chooses with lane masks (`Mask`: a comparison
//!   gives the mask directly and a masked choice stays a choice, where LLVM
//!   may turn a plain one back into a branch around a square root), `span`
//!   with [`select`] and bitwise `&`, `|` of comparisons; `cast` computes
//!   the hit on a miss too and has no data-dependent branch
//!   ([`RayCast::cast_candidate`]). The two reciprocals `1/A`, `1/|d|²` are
//!   one 2-lane division.
//! * A line within the f32 rounding of the inputs of tangent touches
//!   ([`TOUCH_REL`]): inputs written as tangent are off by that rounding.
//! * A line parallel to the axis (`A == 0`; no f32 direction makes `A`
//!   underflow in f64) never meets the side: it is inside the cylinder for
//!   every `t` if `|o⊥| <= r` and then enters through the end sphere it moves
//!   away from and leaves through the other; otherwise it misses.
//! * `a == b` (or `L` subnormal in f32) is a sphere around `m` (the frame's
//!   axis is then `+Y`, any axis serving); both of its crossings are reported
//!   as [`Part::CapA`].
//! * The hit point is `m + q`, `q = o + t·d` in f64 with the unrounded `t`,
//!   rounded once; the normal is `(q − clamp(y, −L, L)·u)/r`, `y = oy + t·dy`,
//!   the gradient of the distance to the segment, unit to f64 rounding
//!   without a square root, and the same formula on the side and on both
//!   caps.

use crate::error::{finite_vec, or_panic, positive};
use crate::hit::hit_if;
use crate::numeric::{at_least, div2, select, Bounds64, Mask, F32_MAX, TOUCH_REL};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::{DVec2, DVec3, Vec3};

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
    /// `(a + b) / 2` in f64, from `a` and `b` exactly: the kernel's origin.
    mid64: DVec3,
    /// `|b − a| / 2` in f64 (0 when `a == b` or subnormal in f32).
    half_len64: f64,
    /// `r²` and `1/r` in f64 (stored: a query needs no division for them).
    radius2: f64,
    inv_radius: f64,
    /// The unit axis `u = (b − a)/|b − a|` in f64 (`+Y` when `a == b`,
    /// where any axis serves).
    axis64: DVec3,
    /// Two unit vectors `v`, `w` completing `u` to an orthonormal frame,
    /// `v` and `u` as the columns `(v_i, u_i)`: `(v·p, u·p)` is one 2-lane
    /// multiply-add per coordinate of `p`.
    frame_vu: [DVec2; 3],
    frame_w: DVec3,
}

impl Capsule {
    /// A capsule around the segment `a`–`b`.
    ///
    /// # Errors
    /// [`ShapeError`] on `a` or `b` unless finite, on `radius` unless finite and > 0.
    pub fn try_new(a: Vec3, b: Vec3, radius: f32) -> Result<Self, ShapeError> {
        let (a, b, radius) = (finite_vec("a", a)?, finite_vec("b", b)?, positive("radius", radius)?);
        let half = 0.5 * (b.as_dvec3() - a.as_dvec3());
        let mid64 = 0.5 * (a.as_dvec3() + b.as_dvec3());
        Ok(Self::from_parts(a, b, radius, mid64, half, f64::from(radius)))
    }

    /// The capsule of midpoint `mid64`, half axis `half` (f64) and radius
    /// `r`; `a`, `b`, `radius` are the f32 values kept for the accessors and
    /// bounds.
    fn from_parts(a: Vec3, b: Vec3, radius: f32, mid64: DVec3, half: DVec3, r: f64) -> Self {
        // A half length subnormal in f32 is a sphere to within 1e-38 (as the
        // f32 kernels had it).
        let len = half.length();
        let (u, half_len64) =
            if len >= f64::from(f32::MIN_POSITIVE) { (half / len, len) } else { (DVec3::Y, 0.0) };
        let (v, w) = u.any_orthonormal_pair();
        let frame_vu = [DVec2::new(v.x, u.x), DVec2::new(v.y, u.y), DVec2::new(v.z, u.z)];
        Self {
            a,
            b,
            radius,
            mid64,
            half_len64,
            radius2: r * r,
            inv_radius: 1.0 / r,
            axis64: u,
            frame_vu,
            frame_w: w,
        }
    }

    /// This capsule placed by `world_from_local`, a similarity of scale `s`
    /// (`s > 0`), as a capsule of the world frame: the image of the points
    /// within `r` of a segment is the points within `s·r` of the image
    /// segment. The midpoint and half axis are mapped in f64 from the kept
    /// f64 ones (the f32 map converted exactly), so the world kernel sees
    /// the placed shape to ~1e-16 and needs no map on the ray or the hit.
    pub(crate) fn placed(&self, world_from_local: &glam::Affine3A, s: f64) -> Self {
        let m = world_from_local.as_daffine3();
        let half = m.transform_vector3(self.axis64 * self.half_len64);
        let r = f64::from(self.radius) * s;
        Self::from_parts(
            world_from_local.transform_point3(self.a),
            world_from_local.transform_point3(self.b),
            r as f32,
            m.transform_point3(self.mid64),
            half,
            r,
        )
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

/// The ray relative to the midpoint in f64, as it is (`o`, `d`) and in the
/// frame `(v, u, w)`: `oxz = (ox, oz)`, `dxz = (dx, dz)` across the axis,
/// `oy`, `dy` along it; and whether it is a valid ray (finite, `d != 0`).
#[derive(Clone, Copy, Debug)]
struct Local {
    o: DVec3,
    d: DVec3,
    oxz: DVec2,
    dxz: DVec2,
    oy: f64,
    dy: f64,
    /// `dx² + dz²` (`|d⊥|²`) and `|d|²`.
    a: f64,
    dd: f64,
    ok_ray: bool,
}

/// Entry and exit of the line (`t0 <= t1`, f64, relative to the ray), each
/// with the part it crosses, and `ok`: false when the line misses, the ray
/// is degenerate, or a crossing is not a finite f32.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f64,
    part0: Part,
    t1: f64,
    part1: Part,
    ok: bool,
}

/// The part named by the two choices of the kernel.
#[inline(always)]
fn part_of(side: bool, to_b: bool) -> Part {
    match (side, to_b) {
        (true, _) => Part::Side,
        (false, true) => Part::CapB,
        (false, false) => Part::CapA,
    }
}

impl Capsule {
    /// The ray in the kernel's frame (see [`Local`]).
    #[inline(always)]
    fn local(&self, ray: &Ray) -> Local {
        let o = ray.origin.as_dvec3() - self.mid64;
        let d = ray.dir.as_dvec3();
        // `(x, y)` as 2-lane products with the columns `(v_i, u_i)`, `z`
        // apart: fewer shuffles than six 3-lane dot products.
        let [c0, c1, c2] = self.frame_vu;
        let w = self.frame_w;
        let oxy = c0 * o.x + c1 * o.y + c2 * o.z;
        let dxy = c0 * d.x + c1 * d.y + c2 * d.z;
        let (oxz, oy) = (DVec2::new(oxy.x, o.dot(w)), oxy.y);
        let (dxz, dy) = (DVec2::new(dxy.x, d.dot(w)), dxy.y);
        let a = dxz.x * dxz.x + dxz.y * dxz.y;
        let dd = a + dy * dy;
        // A NaN or ±∞ input makes a frame coordinate or `dd` NaN or ±∞ (each
        // coordinate of `o` enters some frame coordinate with a non-zero
        // factor); a zero direction makes `dd` zero (the square of a
        // subnormal f32 is a normal f64).
        let ok_ray = (dd > 0.0) & ((oxz.x + oy + oxz.y + dd).abs() < f64::INFINITY);
        Local { o, d, oxz, dxz, oy, dy, a, dd, ok_ray }
    }

    /// Both crossings of the line, for `span` and `cast_all` (see the
    /// module doc).
    #[inline(always)]
    fn crossing(&self, l: &Local) -> Crossing {
        let (len, r2) = (self.half_len64, self.radius2);
        let (ox, oz, dx, dz, oy, dy) = (l.oxz.x, l.oxz.y, l.dxz.x, l.dxz.y, l.oy, l.dy);
        // Infinite cylinder: A·t² + 2B·t + C with A = |d⊥|², B = o⊥·d⊥, and
        // B² − A·C = r²·A − X², X = o⊥ × d⊥ = ox·dz − oz·dx (Lagrange's
        // identity |o⊥|²|d⊥|² − (o⊥·d⊥)² = X²): the discriminant from the
        // line's distance to the axis, with no cancellation for far origins.
        let a = l.a;
        let b = ox * dx + oz * dz;
        let x = ox * dz - oz * dx;
        let disc = r2 * a - x * x;
        let inv_a = 1.0 / a;
        let root = at_least(disc, 0.0).sqrt();
        let (s0, s1) = ((-b - root) * inv_a, (-b + root) * inv_a);
        let axial = a == 0.0;
        let tube =
            if axial { ox * ox + oz * oz <= r2 * (1.0 + TOUCH_REL) } else { disc >= -TOUCH_REL * r2 * a };
        // Axial coordinate at s0 and s1; an axial line goes from the end it
        // moves away from to the other (y = ∓dy stands for y(∓∞)).
        let y0 = select(axial, -dy, oy + s0 * dy);
        let y1 = select(axial, dy, oy + s1 * dy);
        // No side when the line is axial or the capsule is a sphere (len == 0).
        let has_side = !axial & (len > 0.0);
        let side0 = has_side & (y0.abs() <= len);
        let side1 = has_side & (y1.abs() <= len);
        // A sphere (len == 0) is all cap_a.
        let (to_b0, to_b1) = ((y0 > 0.0) & (len > 0.0), (y1 > 0.0) & (len > 0.0));
        // End spheres around y = ∓L: with o_c = o − c·e_y, the same identity
        // in 3D gives B_s² − |d|²·C_s = r²·|d|² − |o_c × d|², and
        // o_c × d = (P − c·dz, −X, Q + c·dx) with P = oy·dz − oz·dy and
        // Q = ox·dy − oy·dx shared by both ends. Both spheres are solved
        // (their roots run in parallel with the cylinder's) and the ends
        // picked by `y0`, `y1` with selects.
        let dd = l.dd;
        let inv_dd = 1.0 / dd;
        let (p, q) = (oy * dz - oz * dy, ox * dy - oy * dx);
        let (ldz, ldx, ldy) = (len * dz, len * dx, len * dy);
        let (r2dd, x2, bd) = (r2 * dd, x * x, b + oy * dy);
        let end = |pc: f64, qc: f64, bc: f64| {
            let disc = r2dd - (pc * pc + x2 + qc * qc);
            let root = at_least(disc, 0.0).sqrt();
            ((-bc - root) * inv_dd, (-bc + root) * inv_dd, disc >= -TOUCH_REL * r2dd)
        };
        let (ea0, ea1, oka) = end(p + ldz, q - ldx, bd + ldy);
        let (eb0, eb1, okb) = end(p - ldz, q + ldx, bd - ldy);
        let (e0, ok0) = (select(to_b0, eb0, ea0), if to_b0 { okb } else { oka });
        let (e1, ok1) = (select(to_b1, eb1, ea1), if to_b1 { okb } else { oka });
        let t0 = select(side0, s0, e0);
        let t1 = select(side1, s1, e1);
        let ok =
            l.ok_ray & tube & (side0 | ok0) & (side1 | ok1) & (t0.abs() <= F32_MAX) & (t1.abs() <= F32_MAX);
        Crossing { t0, part0: part_of(side0, to_b0), t1: t1.max(t0), part1: part_of(side1, to_b1), ok }
    }

    /// The first crossing in `[lo, hi]` alone, for `cast`: `(ok, t, part,
    /// front_face)` (see "First crossing" in the module doc).
    ///
    /// The part is chosen without any root: with `n = oy·A − B·dy` (so
    /// that `y(t_c) = n/A` at the closest approach to the axis) and
    /// `g = σ·dy`, the cylinder's root `s = (σ√D − B)/A` has
    /// `A·y(s) = n + g·√D`, and `y(s) > L ⇔ g·√D > L·A − n ⇔
    /// g·|g|·D > k·|k|` with `k = L·A − n` (`x ↦ x·|x|` is increasing),
    /// `y(s) < −L` likewise with `k = −L·A − n`. These are exact
    /// equivalences, each side rounded to ~1e-16 of its terms, which moves
    /// the choice only for a crossing within that of the rim, where the side
    /// and the end sphere are tangent and give the same point. So the
    /// choice is made while the three roots (the cylinder's, and both end
    /// spheres' as one 2-lane root) are taken, and picks one: no root waits
    /// for the choice or for another root, and `y(s)` is off the path.
    #[inline(always)]
    fn first(&self, l: &Local, lo: f64, hi: f64) -> (bool, f64, Part, bool) {
        let (len, r2) = (self.half_len64, self.radius2);
        let (ox, oz, dx, dz, oy, dy) = (l.oxz.x, l.oxz.y, l.dxz.x, l.dxz.y, l.oy, l.dy);
        let (a, dd) = (l.a, l.dd);
        // Which end of the chord: the exit (σ = +1) if the point at `lo` is
        // strictly inside (squared distance to the segment < r²), else the
        // entry; and whether the ray moves inward there (the derivative of
        // that squared distance is negative).
        let (px, py, pz) = (ox + lo * dx, oy + lo * dy, oz + lo * dz);
        let e = py - clamp(py, -len, len);
        let inside = Mask::lt(px * px + pz * pz + e * e, r2);
        let inward = Mask::lt(px * dx + pz * dz + e * dy, 0.0);
        // The cylinder (see `crossing`).
        let b = ox * dx + oz * dz;
        let x = ox * dz - oz * dx;
        let disc = r2 * a - x * x;
        // Side or end, without the root (see above).
        let n = oy * a - b * dy;
        let g = inside.keep_or_negate(dy);
        let gg = g * g.abs() * at_least(disc, 0.0);
        let la = len * a;
        let (kb, ka) = (la - n, -la - n);
        let (beyond_b, beyond_a) = (Mask::lt(kb * kb.abs(), gg), Mask::lt(gg, ka * ka.abs()));
        // An axial line (A = 0) never meets the side and reaches the end it
        // comes from (entry) or goes to (exit): the end at y(σ·∞), the sign
        // of σ·dy. A sphere (L = 0) is all cap a.
        let axial = Mask::eq(a, 0.0);
        let long = Mask::lt(0.0, len);
        let side = long.and_not(axial | beyond_a | beyond_b);
        let to_b = long & (beyond_b | (axial & Mask::lt(0.0, g)));
        // Both end spheres around c·u, c = ∓L (lanes a, b): B_c² − |d|²·C_c
        // = r²·|d|² − |o_c × d|² with o_c = o − c·u, whose frame coordinates
        // are (ox, oy − c, oz): o_c × d = (y_c·dz − oz·dy, −X, ox·dy − y_c·dx)
        // with y_c = oy − c, each rounded once from the exact o_c, and
        // B_c = o·d − c·dy. Summed as (r²|d|² − X²) − (P_c² + Q_c²). Their
        // roots (one 2-lane square root) and the cylinder's run in parallel,
        // the choice made meanwhile.
        let yc = oy - DVec2::new(-len, len);
        let (pc, qc) = (yc * dz - oz * dy, ox * dy - yc * dx);
        let (r2dd, x2) = (r2 * dd, x * x);
        let disc_c = (r2dd - x2) - (pc * pc + qc * qc);
        let bc = (b + oy * dy) - DVec2::new(-len, len) * dy;
        let root_c = sqrt2(disc_c.max(DVec2::ZERO));
        let root = at_least(disc, 0.0).sqrt();
        let (inv_a, inv_dd) = div2(1.0, 1.0, a, dd);
        let t_side = (inside.keep_or_negate(root) - b) * inv_a;
        let t_a = (inside.keep_or_negate(root_c.x) - bc.x) * inv_dd;
        let t_b = (inside.keep_or_negate(root_c.y) - bc.y) * inv_dd;
        let t = side.pick(t_side, to_b.pick(t_b, t_a));
        // Touching within the inputs' rounding counts (TOUCH_REL); the end
        // sphere lies in the cylinder, so its test implies the cylinder's.
        let touch_c = -TOUCH_REL * r2dd;
        let met_c = to_b.pick_mask(Mask::le(touch_c, disc_c.y), Mask::le(touch_c, disc_c.x));
        let met = side.pick_mask(Mask::le(-TOUCH_REL * r2 * a, disc), met_c);
        let h = side.pick(disc, to_b.pick(disc_c.y, disc_c.x));
        // A crossing behind `lo` from outside is a rounding of one at `lo`
        // when moving inward (the exact one is at or after `lo` then), and
        // so is an exit behind `lo` from inside: both are clamped onto `lo`.
        let ok = met & Mask::le(t, hi) & (inside | inward | Mask::le(lo, t)) & Mask::le(lo, hi);
        // An entry with a positive half chord arrives from outside
        // (`dir · normal < 0` at the exact crossing); a tangent one does not.
        let front = Mask::lt(0.0, h).and_not(inside);
        (l.ok_ray & ok.get(), at_least(t, lo), part_of(side.get(), to_b.get()), front.get())
    }

    /// The point and normal at the f64 root `t` (see the module doc); `l`
    /// carries the kernel's f64 ray.
    #[inline(always)]
    fn point_normal(&self, l: &Local, t: f64) -> (Vec3, Vec3) {
        let len = self.half_len64;
        let q = l.o + t * l.d;
        // Axial coordinate of q from the frame's scalars (one product).
        let y = clamp(l.oy + t * l.dy, -len, len);
        let n = (q - y * self.axis64) * self.inv_radius;
        ((self.mid64 + q).as_vec3(), n.as_vec3())
    }

    /// The full hit at the f64 root `t` on `part`, `front_face` from the
    /// rounded normal (for `span` and `cast_all`).
    #[inline(always)]
    fn hit_at(&self, ray: &Ray, l: &Local, t: f64, part: Part) -> Hit {
        let (point, normal) = self.point_normal(l, t);
        Hit::with_point(ray, t as f32, point, normal, part)
    }
}

/// Both square roots, as one `sqrtpd` (glam's `DVec2` has none).
#[inline(always)]
fn sqrt2(x: DVec2) -> DVec2 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_loadu_pd, _mm_sqrt_pd, _mm_storeu_pd};
        let mut out = [0.0; 2];
        // SAFETY: SSE2 is part of the x86-64 baseline; both pointers are to
        // two f64.
        unsafe { _mm_storeu_pd(out.as_mut_ptr(), _mm_sqrt_pd(_mm_loadu_pd(x.to_array().as_ptr()))) };
        DVec2::from_array(out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        DVec2::new(x.x.sqrt(), x.y.sqrt())
    }
}

/// `x` clamped into `[lo, hi]` (`lo <= hi`; a NaN `x` gives `lo`): one
/// `maxsd` and one `minsd`, without `f64::clamp`'s check of `lo <= hi`.
#[inline(always)]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let m = at_least(x, lo);
    if m < hi {
        m
    } else {
        hi
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
        let l = self.local(ray);
        let (lo, hi) = Bounds64::new(range).ends();
        let (ok, t, part, front) = self.first(&l, lo, hi);
        let (point, normal) = self.point_normal(&l, t);
        (ok, Hit::with_face(t as f32, point, normal, front, part))
    }

    /// Without roots (see "Occlusion" in the module doc).
    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let (lo, hi) = Bounds64::new(range).ends();
        let l = self.local(ray);
        let (len, r2) = (self.half_len64, self.radius2);
        let (ox, oz, dx, dz, oy, dy) = (l.oxz.x, l.oxz.y, l.dxz.x, l.dxz.y, l.oy, l.dy);
        let (a, dd) = (l.a, l.dd);
        let b = ox * dx + oz * dz;
        // The line's closest approach to the axis is at t_c = −b/a, height
        // y_c = n/a with n = oy·a − b·dy. If |y_c| <= L it is the closest
        // approach to the segment, at squared distance X²/a (X = o⊥ × d⊥);
        // otherwise the nearest end c = ±L is, at t_e = (c·dy − (o·d))/|d|²
        // and squared distance |o_c × d|²/|d|² (o_c × d = (P − c·dz, −X,
        // Q + c·dx)). An axial line (a = 0, n = 0) takes the end −L, as
        // close as any point of the segment. All compared times a or |d|²
        // (both > 0): no division.
        let x = ox * dz - oz * dx;
        let n = oy * a - b * dy;
        let len_a = len * a;
        let mid = (n.abs() <= len_a) & (a > 0.0);
        let c = select(n > 0.0, len, -len);
        let (p, q) = (oy * dz - oz * dy, ox * dy - oy * dx);
        let (pc, qc) = (p - c * dz, q + c * dx);
        let x2 = x * x;
        let touch = r2 * (1.0 + TOUCH_REL);
        let end_ok = pc * pc + x2 + qc * qc <= touch * dd;
        let star_ok = (mid & (x2 <= touch * a)) | (!mid & end_ok);
        // Where t* = t_c or t_e lies against the range, times its denominator.
        let num = select(mid, -b, c * dy - (b + oy * dy));
        let den = select(mid, a, dd);
        let (below, above) = (num < lo * den, num > hi * den);
        // Squared distance of the line's point at `t` from the segment.
        let dist2 = |t: f64| {
            let (px, py, pz) = (ox + t * dx, oy + t * dy, oz + t * dz);
            let e = py - py.max(-len).min(len);
            px * px + pz * pz + e * e
        };
        let (f_lo, f_hi) = (dist2(lo), dist2(hi));
        // The convex dist² over [lo, hi] is least at t* clamped into it.
        // (Bitwise `&`, `|` on the comparisons: no branch.)
        let meets = (below & (f_lo <= touch)) | (above & (f_hi <= touch)) | (!below & !above & star_ok);
        // No crossing in range when both ends are strictly inside.
        let within = (f_lo < r2) & (f_hi < r2);
        let meets = meets & (lo <= hi);
        l.ok_ray & meets & !within
    }

    #[inline(always)]
    fn as_capsule(&self) -> Option<&Capsule> {
        Some(self)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let l = self.local(ray);
        let c = self.crossing(&l);
        let mut out = Vec::with_capacity(2);
        if !c.ok {
            return out;
        }
        let bounds = Bounds64::new(range);
        let (in0, in1) = (bounds.contains(c.t0), bounds.contains(c.t1));
        let (t0, t1) = (c.t0 as f32, c.t1 as f32);
        if in0 {
            out.push(self.hit_at(ray, &l, c.t0, c.part0));
        }
        if t1 != t0 && in1 {
            out.push(self.hit_at(ray, &l, c.t1, c.part1));
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
    /// Distance from `p` to the segment (clamped projection onto the axis)
    /// `<= radius`, in f64.
    #[inline]
    fn contains(&self, p: Vec3) -> bool {
        let q = p.as_dvec3() - self.mid64;
        let y = clamp(q.dot(self.axis64), -self.half_len64, self.half_len64);
        (q - y * self.axis64).length_squared() <= self.radius2
    }
}

impl ConvexSolid for Capsule {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let l = self.local(ray);
        let c = self.crossing(&l);
        c.ok.then(|| Span {
            enter: self.hit_at(ray, &l, c.t0, c.part0),
            exit: self.hit_at(ray, &l, c.t1, c.part1),
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

    /// `cast` (one end), `hits` (no roots) and `span` (both ends) give the
    /// same answer on random capsules, rays and ranges, apart from rays
    /// within a rounding band of tangency or of a range end touching a
    /// crossing (where either answer is right).
    #[test]
    fn cast_hits_and_span_agree_on_random_ranges() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed, TestRunner};
        // Integers scaled down (proptest's f32 range sampler can trip on
        // its own assertion while shrinking).
        let coord = (-4000i32..4000).prop_map(|i| i as f32 / 1000.0);
        let v = [coord.clone(), coord.clone(), coord.clone()];
        let end = (-8000i32..8000).prop_map(|i| i as f32 / 1000.0);
        let range_end = prop_oneof![Just(f32::NEG_INFINITY), Just(f32::INFINITY), end];
        let radius = (50i32..2000).prop_map(|i| i as f32 / 1000.0);
        let strategy =
            (v.clone(), v.clone(), radius, v.clone(), v, range_end.clone(), range_end, any::<bool>());
        let mut runner =
            TestRunner::new(Config { cases: 8_000, rng_seed: RngSeed::Fixed(5), ..Config::default() });
        runner
            .run(&strategy, |(a, b, r, o, d, lo, hi, sphere)| {
                let (a, b) = (Vec3::from(a), if sphere { Vec3::from(a) } else { Vec3::from(b) });
                let c = Capsule::new(a, b, r);
                let ray = Ray::new(Vec3::from(o), Vec3::from(d));
                let range = Interval::new(lo, hi);
                let (cast, hits, span) = (c.cast(&ray, range), c.hits(&ray, range), c.span(&ray));
                // The expected first crossing from the span's ends.
                let want = span.and_then(|s| [s.enter.t, s.exit.t].into_iter().find(|&t| lo <= t && t <= hi));
                let band = 1e-4 * (1.0 + Vec3::from(o).length() / Vec3::from(d).length().max(1e-3));
                let near = |t: f32| (t - lo).abs() <= band || (t - hi).abs() <= band;
                let tangent = span.is_some_and(|s| s.exit.t - s.enter.t <= band) || {
                    // Distance of the line from the segment within 1e-4·r of r.
                    let (p, q) = (c.a.as_dvec3(), c.b.as_dvec3());
                    let (od, dd) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
                    let dist = (0..=2000)
                        .map(|i| {
                            let s = i as f64 / 2000.0;
                            let x = p + (q - p) * s;
                            let w = x - od;
                            (w - dd * (w.dot(dd) / dd.length_squared())).length()
                        })
                        .fold(f64::INFINITY, f64::min);
                    (dist - r as f64).abs() <= 1e-3 * r as f64
                };
                if tangent || span.is_some_and(|s| near(s.enter.t) || near(s.exit.t)) {
                    return Ok(());
                }
                prop_assert_eq!(cast.map(|h| h.t), want, "{:?} {:?} {:?}", c, ray, range);
                prop_assert_eq!(hits, want.is_some(), "{:?} {:?} {:?}", c, ray, range);
                if let Some(h) = cast {
                    prop_assert!((h.normal.length() - 1.0).abs() < 1e-5);
                    prop_assert_eq!(h.front_face, ray.dir.dot(h.normal) < 0.0);
                }
                Ok(())
            })
            .unwrap();
    }
}
