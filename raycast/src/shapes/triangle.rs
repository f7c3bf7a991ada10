//! Triangle: the watertight ray–triangle test of Woop, Benthin and Wald,
//! *Watertight Ray/Triangle Intersection*, JCGT 2(1), 2013.
//!
//! Derivation. Translate the vertices so the ray starts at the origin, pick
//! `kz`, the axis of the largest `|d|`, and shear so the ray becomes the
//! `+kz` axis: `x' = x[kx] − (d[kx]/d[kz])·x[kz]`, `y'` likewise, and
//! `z' = x[kz]/d[kz]`. Along the ray the sheared `(x', y')` is the point
//! `(0, 0)`, so the ray meets the triangle exactly when `(0, 0)` is inside
//! the sheared 2-D triangle. That is decided by the three 2-D edge functions
//!
//! ```text
//! U = C'x·B'y − C'y·B'x   (edge b→c, weight of a)
//! V = A'x·C'y − A'y·C'x   (edge c→a, weight of b)
//! W = B'x·A'y − B'y·A'x   (edge a→b, weight of c)
//! ```
//!
//! all of one sign (zero counts as inside: touching an edge is a hit). With
//! `det = U + V + W`, the barycentrics are `(U, V, W) / det` and the hit is at
//! `t = (U·A'z + V·B'z + W·C'z) / det`.
//!
//! Why it is watertight: the sheared coordinates of a vertex depend only on
//! the vertex and the ray, never on the triangle, and the edge function of a
//! shared edge is computed from the same two sheared vertices in the same
//! way, so the neighbour's value is its exact negation (rounding is
//! symmetric: `fl(p·q) = fl(q·p)`, `fl(x − y) = −fl(y − x)`). A ray through
//! the edge gets 0 from both (both hit); any other ray gets opposite signs
//! (exactly one hits). No epsilon anywhere.
//!
//! Numerical choices:
//! * Everything after reading the `f32` inputs is done in `f64`. The
//!   translation `q = p − o` of two `f32` values is exact in `f64`; the shear
//!   is scaled by `D = d[kz]` (`D·x' = q[kx]·D − d[kx]·q[kz]`) so that it is a
//!   difference of two exact products, rounded once — no `d[kx]/d[kz]`
//!   quotient, and a ray aimed exactly at a vertex sees it at `(0, 0)`
//!   exactly. The edge functions then carry ~2⁻⁵³ relative error, so `t`,
//!   `u`, `v` and the point are correct to the last `f32` bit in all but
//!   contrived cases, and the paper's fallback ("recompute in double when an
//!   edge function is 0") is not needed: a rounded `f64` difference of
//!   products has the sign of the exact one or is 0, and either way both
//!   neighbours agree.
//! * `det`'s sign is the side the ray comes from: for the cyclic axis order
//!   `(kx, ky, kz)`, swapped when `d[kz] < 0`, the sheared triangle's signed
//!   area has the sign of `n·d` with `n = (b − a) × (c − a)`, and
//!   `det = −area`, so `det > 0 ⇔ n·d < 0` (front face). Back-face culling
//!   keeps `det > 0` only.
//! * A ray lying in the triangle's plane (`det == 0`) is not a crossing: the
//!   triangle is infinitely thin, and a mesh's neighbours or the solid's other
//!   faces answer such a ray. It is a miss, like a degenerate triangle.
//! * An origin exactly on the triangle must hit at `t = 0` (DESIGN §2), but
//!   the rounded numerator `T` is then a few `f64` ulps, not 0, and could be
//!   negative. `T` is taken as 0 when it is within its own rounding bound
//!   ([`t_numerator_is_zero`]) — a bound ~1e-15 relative, far below any `f32`
//!   resolution.
//! * The point is `(1−u−v)·a + u·b + v·c` from the answer's `u`, `v`: in
//!   `f64` for a mesh (the products of `f32` differences and weights are
//!   exact, so the point is the correctly rounded one up to ~2⁻⁵²); in
//!   `f32` for a single triangle, within a few `f32` ulps of the vertices'
//!   magnitude (see `Triangle::hit_of`).
//! * The single triangle ([`Triangle`]'s [`RayCast`], and a placed triangle,
//!   cast in the world frame) runs the same arithmetic
//!   branch-free, in SSE2 on x86_64 (the `sse2` module): `t`, `u`, `v` are
//!   those of [`ray_triangle`] bit for bit, up to the sign of an exact zero
//!   (its shear is the cyclic one of `ShearedRay::new_cyclic`, whose edge
//!   functions are the negation of `ray_triangle`'s, and `fl(x − x) = +0`
//!   either way). A placed triangle keeps each vertex as `[x, y, z, x]`
//!   (`Placed`), so that its kernel picks the axes in integer registers and
//!   reads only what they select (two coordinates in one read), and rules
//!   the snap of `t` out by comparing exponents (`sse2::snap_exponent`):
//!   the same answers, bit for bit, with less work on the vector side. Both
//!   test the range on the `f64` `t` against bounds that decide exactly as
//!   the test of the `f32` `t` ([`rounding_bounds`]), so that the answer
//!   does not wait for the conversion.

use crate::error::{finite_vec, or_panic};
use crate::hit::hit_if;
#[cfg(doc)]
use crate::numeric::rounding_bounds;
use crate::numeric::select;
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use glam::{Affine3A, DVec3, Vec2, Vec3, Vec3A};

/// A triangle `a b c`, two-sided unless back-face culling is on. Its normal is
/// `normalize((b - a) × (c - a))`; hits carry `uv` with
/// `point = (1-u-v)·a + u·b + v·c`. A degenerate triangle is never hit.
///
/// # Examples
/// ```
/// use raycast::{vec2, vec3, Interval, Part, Ray, RayCast, Triangle, Vec3};
/// let tri = Triangle::new(Vec3::ZERO, vec3(4.0, 0.0, 0.0), vec3(0.0, 4.0, 0.0));
/// let ray = Ray::new(vec3(1.0, 2.0, 5.0), vec3(0.0, 0.0, -1.0));
/// let hit = tri.cast(&ray, Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.point, hit.normal), (5.0, vec3(1.0, 2.0, 0.0), Vec3::Z));
/// assert_eq!((hit.uv, hit.part, hit.front_face), (Some(vec2(0.25, 0.5)), Part::Face, true));
/// // Two-sided by default; with culling the back side is not hit.
/// let from_below = Ray::new(vec3(1.0, 1.0, -5.0), Vec3::Z);
/// assert!(tri.hits(&from_below, Interval::FORWARD));
/// assert!(!tri.with_back_face_culling(true).hits(&from_below, Interval::FORWARD));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// First vertex.
    pub a: Vec3,
    /// Second vertex.
    pub b: Vec3,
    /// Third vertex.
    pub c: Vec3,
    /// When true, rays arriving from behind (`dir · normal >= 0`) do not hit.
    pub cull_back_faces: bool,
}

impl Triangle {
    /// The triangle `a b c` (degenerate triangles are allowed and never hit).
    ///
    /// # Errors
    /// [`ShapeError`] on `a`, `b` or `c` unless finite.
    pub fn try_new(a: Vec3, b: Vec3, c: Vec3) -> Result<Self, ShapeError> {
        Ok(Self {
            a: finite_vec("a", a)?,
            b: finite_vec("b", b)?,
            c: finite_vec("c", c)?,
            cull_back_faces: false,
        })
    }

    /// Like [`Triangle::try_new`].
    ///
    /// # Panics
    /// With the error's message when a vertex is not finite.
    #[track_caller]
    pub fn new(a: Vec3, b: Vec3, c: Vec3) -> Self {
        or_panic(Self::try_new(a, b, c))
    }

    /// The same triangle with back-face culling on or off.
    pub fn with_back_face_culling(self, cull: bool) -> Self {
        Self { cull_back_faces: cull, ..self }
    }

    /// The unit normal `normalize((b − a) × (c − a))`, `None` when degenerate.
    pub fn normal(&self) -> Option<Vec3> {
        face_normal(self.a, self.b, self.c)
    }
}

/// The kernel's answer: `t` and the barycentrics `(u, v)` of `b` and `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleHit {
    /// Ray parameter.
    pub t: f32,
    /// Weight of `b`.
    pub u: f32,
    /// Weight of `c`.
    pub v: f32,
    /// True when the ray arrives on the side the normal points to
    /// (`dir · ((b − a) × (c − a)) < 0`).
    pub front_face: bool,
}

/// The per-ray constants of the shear (see the module doc). Computing them
/// once lets a mesh test many triangles against one ray with exactly the
/// arithmetic of [`ray_triangle`].
#[derive(Clone, Copy, Debug)]
pub struct ShearedRay {
    /// The origin's coordinates in the order `kx, ky, kz`.
    origin: [f64; 3],
    /// The direction's coordinates in the order `kx, ky, kz`.
    dir: [f64; 3],
    /// The axes `kx, ky, kz`.
    axes: [usize; 3],
    /// `1 / d[kz]`.
    inv_dz: f64,
}

impl ShearedRay {
    /// The shear of `ray`; `None` for a degenerate ray.
    #[inline]
    pub fn new(ray: &Ray) -> Option<Self> {
        if !ray.is_valid() {
            return None;
        }
        Some(Self::new_unchecked(ray))
    }

    /// The axes `kx, ky, kz` of the shear (`kz` the dominant axis of the
    /// direction, `kx, ky` ordered to keep the winding).
    #[inline(always)]
    pub(crate) fn axes(&self) -> [usize; 3] {
        self.axes
    }

    /// The ray's origin in the order `kx, ky, kz`, in `f64`.
    #[inline(always)]
    pub(crate) fn origin(&self) -> [f64; 3] {
        self.origin
    }

    /// The ray's direction in the order `kx, ky, kz`, in `f64`.
    #[inline(always)]
    pub(crate) fn dir(&self) -> [f64; 3] {
        self.dir
    }

    /// The shear of `ray`, which may be degenerate (then the values are
    /// meaningless but finite or NaN, never a panic).
    #[inline(always)]
    pub(crate) fn new_unchecked(ray: &Ray) -> Self {
        let kz = dominant_axis(ray.dir);
        let (kx, ky) = ((kz + 1) % 3, (kz + 2) % 3);
        // Keep the winding: swapping kx and ky mirrors the 2-D plane, so that
        // det's sign says front or back whatever the sign of d[kz].
        let swap = ray.dir.to_array()[kz] < 0.0;
        let (kx, ky) = (select_index(swap, ky, kx), select_index(swap, kx, ky));
        Self::with_axes(ray, [kx, ky, kz])
    }

    /// [`ShearedRay::new_unchecked`] without the swap: `kx, ky` always in
    /// cyclic order, and whether `d[kz] < 0` (where `new_unchecked` swaps).
    ///
    /// The swap only exchanges the two sheared coordinates `x'` and `y'`,
    /// which are computed alike (per axis), so every edge function, `det`
    /// and `num` of this shear is exactly the negation of `new_unchecked`'s
    /// (`fl(p·q − r·s) = −fl(r·s − p·q)`, and a sum of negated terms is the
    /// negated sum), `1/det` too, and `t`, `u`, `v` are bit-identical; only
    /// the signs (front or back, all ≥ 0 or all ≤ 0) are exchanged, which
    /// the caller undoes with the flag. The flag is then off the chain of
    /// dependent steps (the axes no longer wait for a load of `d[kz]` and a
    /// compare), which a single unpredictable query feels.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))] // the kernel of other targets
    #[inline(always)]
    fn new_cyclic(ray: &Ray) -> (Self, bool) {
        let kz = dominant_axis(ray.dir);
        let sheared = Self::with_axes(ray, [(kz + 1) % 3, (kz + 2) % 3, kz]);
        let flip = sheared.dir[2] < 0.0;
        (sheared, flip)
    }

    /// The shear on the axes `[kx, ky, kz]`.
    #[inline(always)]
    fn with_axes(ray: &Ray, axes: [usize; 3]) -> Self {
        let (o, d) = (ray.origin.to_array(), ray.dir.to_array());
        let inv_dz = 1.0 / f64::from(d[axes[2]]);
        Self { origin: axes.map(|k| f64::from(o[k])), dir: axes.map(|k| f64::from(d[k])), axes, inv_dz }
    }

    /// A vertex in the sheared frame, scaled by `D = d[kz]`:
    /// `(D·x', D·y', q[kz])` with `q = p − o`.
    ///
    /// `q` is exact in `f64` (a difference of two `f32` of like magnitude),
    /// and so are the products `q[kx]·D` and `d[kx]·q[kz]` while `q` needs
    /// at most 29 bits, so `D·x'` is rounded once and has the exact sign. In
    /// particular a ray aimed exactly at a vertex (`q = d`, 24 bits) sees it
    /// at `(0, 0)` exactly, with no `d[kx]/d[kz]` quotient to round. Either
    /// way both triangles of a shared vertex get the same values, which is
    /// all watertightness needs.
    #[inline(always)]
    fn shear(&self, p: Vec3) -> DVec3 {
        self.shear_at(&p)
    }

    /// [`ShearedRay::shear`] of a vertex read in place: the components are
    /// loaded from where `p` lives (a triangle's field) by axis index, not
    /// from a copy that the optimiser stores again for every ray. The same
    /// arithmetic.
    #[inline(always)]
    fn shear_at(&self, p: &Vec3) -> DVec3 {
        let p: &[f32; 3] = p.as_ref();
        let [kx, ky, kz] = self.axes;
        let [ox, oy, oz] = self.origin;
        let [dx, dy, dz] = self.dir;
        let (qx, qy, qz) = (f64::from(p[kx]) - ox, f64::from(p[ky]) - oy, f64::from(p[kz]) - oz);
        DVec3::new(qx * dz - dx * qz, qy * dz - dy * qz, qz)
    }

    /// The watertight test of the triangle `a b c` against this ray over
    /// `range` (see the module doc).
    ///
    /// With the vertices scaled by `D` (see `ShearedRay::shear`) the edge
    /// functions are `D²·(U, V, W)` (same signs), `det` is `D²·det`, and the
    /// numerator `Σ U_i·q_i[kz]` is `D³·T`; hence `t = T / (D·det)`. One
    /// division per triangle, `1/det`, serves `t`, `u` and `v` (`1/D` is per
    /// ray); the two extra roundings cost ~2⁻⁵² relative, invisible in `f32`.
    /// `t = (num·(1/D))·(1/det)` in that order, so that a kernel can form
    /// `num·(1/D)` while `1/det` is being divided (the single-triangle
    /// kernels do, and must give the same `t`).
    #[inline]
    pub fn intersect(
        &self,
        a: Vec3,
        b: Vec3,
        c: Vec3,
        range: Interval,
        cull_back_faces: bool,
    ) -> Option<TriangleHit> {
        let (pa, pb, pc) = (self.shear(a), self.shear(b), self.shear(c));
        let u = pc.x * pb.y - pc.y * pb.x;
        let v = pa.x * pc.y - pa.y * pc.x;
        let w = pb.x * pa.y - pb.y * pa.x;
        // Inside (boundary included) when all three share a sign. Written so
        // that a NaN (non-finite vertices) fails every test: a miss.
        let all_pos = u >= 0.0 && v >= 0.0 && w >= 0.0;
        let all_neg = u <= 0.0 && v <= 0.0 && w <= 0.0;
        if !(all_pos || (all_neg && !cull_back_faces)) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 || !det.is_finite() {
            return None; // degenerate triangle, or a ray in its plane
        }
        let mut num = u * pa.z + v * pb.z + w * pc.z;
        if t_numerator_is_zero(num, det, [pa, pb, pc]) {
            num = 0.0;
        }
        let inv = 1.0 / det;
        let t = (num * self.inv_dz * inv) as f32;
        if !(range.contains(t) && t.is_finite()) {
            return None;
        }
        Some(TriangleHit { t, u: (v * inv) as f32, v: (w * inv) as f32, front_face: det > 0.0 })
    }
}

impl ShearedRay {
    /// [`ShearedRay::intersect`] without branches, for a single triangle
    /// whose hit or miss is unpredictable: the same operations in the same
    /// order (so the same `t`, `u`, `v` on a hit), every test evaluated and
    /// combined into the returned flag, and the division done on a miss too
    /// (its result is then unused; `1/0` or NaN is harmless). Also returns
    /// the edge functions `(U, V, W)` and `1/det`, for the point.
    ///
    /// For a shear from [`ShearedRay::new_cyclic`], `flip` is its flag: the
    /// edge functions, `det` and the weights are then the negation of
    /// `intersect`'s (see there), so "all ≥ 0" and "all ≤ 0", and the sign
    /// of `det` for `front_face`, are read the other way round.
    ///
    /// Safe on a degenerate ray (built by `new_cyclic`): the flag is then
    /// false, because `det` is 0 or not finite. For `d = 0`, `D = 0` makes
    /// every scaled sheared coordinate 0, so `det = 0`. A NaN anywhere in
    /// `o` or `d` reaches a sheared coordinate (`D` is the largest `|d_i|`,
    /// or `d_z` when a comparison met a NaN) and from it all three edge
    /// functions, each of which uses both coordinates of both its vertices.
    /// An infinite `d_i` makes `D` infinite, hence every sheared coordinate
    /// ±∞ or NaN; an infinite `o_i` makes `q_i` infinite for all three
    /// vertices, hence every sheared coordinate of one axis (of both, for
    /// `i = kz`) ±∞ or NaN. Each product of an edge function has a factor
    /// of each axis, so each is ±∞ or NaN, and so is their difference:
    /// every edge function, and `det`, is infinite or NaN, never finite.
    /// Finite inputs cannot overflow (`|q·D| < 1e78`, `|det| < 1e156`).
    ///
    /// `det` itself needs no test, as `t` carries it: `det = 0` (a
    /// degenerate triangle, a ray in its plane, `d = 0`) gives `1/det = ±∞`
    /// and `t = ±∞` or NaN (`num = 0` when the edge functions are all 0);
    /// a NaN `det` gives a NaN `t`; an infinite `det` comes from an infinite
    /// edge function `E_i`, whose term `E_i·q_i[kz]` makes `num` infinite or
    /// NaN (never snapped to 0: [`t_numerator_is_zero`] is false for it),
    /// and `t = num·(1/det) = ±∞·0 = NaN`. The range test, which requires a
    /// finite `t`, refuses all of them.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))] // the kernel of other targets
    #[inline(always)]
    fn intersect_candidate(
        &self,
        a: &Vec3,
        b: &Vec3,
        c: &Vec3,
        range: Interval,
        cull_back_faces: bool,
        flip: bool,
    ) -> (bool, TriangleHit) {
        let (pa, pb, pc) = (self.shear_at(a), self.shear_at(b), self.shear_at(c));
        let u = pc.x * pb.y - pc.y * pb.x;
        let v = pa.x * pc.y - pa.y * pc.x;
        let w = pb.x * pa.y - pb.y * pa.x;
        // The sign test as a minimum and a maximum (`minsd`/`maxsd`), which
        // may drop a NaN: harmless, as the NaN reaches `det`, hence `t`.
        let min = |x: f64, y: f64| if x < y { x } else { y };
        let max = |x: f64, y: f64| if x > y { x } else { y };
        let all_pos = min(min(u, v), w) >= 0.0;
        let all_neg = max(max(u, v), w) <= 0.0;
        let det = u + v + w;
        let num = u * pa.z + v * pb.z + w * pc.z;
        let num = select(t_numerator_is_zero(num, det, [pa, pb, pc]), 0.0, num);
        let inv = 1.0 / det;
        let t = (num * self.inv_dz * inv) as f32;
        // `t` in the range and finite; this also refuses `det == 0` and a
        // non-finite `det` (see the doc above).
        let in_range = (range.min <= t) & (t <= range.max) & (t.abs() < f32::INFINITY);
        // In `intersect`'s orientation (see `flip` above).
        let front = (all_pos & !flip) | (all_neg & flip);
        let back = (all_neg & !flip) | (all_pos & flip);
        let ok = (front | (back & !cull_back_faces)) & in_range;
        let front_face = ((det > 0.0) & !flip) | ((det < 0.0) & flip);
        let hit = TriangleHit { t, u: (v * inv) as f32, v: (w * inv) as f32, front_face };
        (ok, hit)
    }
}

/// The axis of the largest `|d_i|`: x if it is >= both others, else y if
/// `|d.y| >= |d.z|`, else z (NaN picks z). Written as arithmetic on the
/// comparisons: the dominant axis of a random ray is random, and LLVM turns
/// the `if` chain into branches.
#[inline(always)]
fn dominant_axis(d: Vec3) -> usize {
    let d = d.abs();
    let not_x = !((d.x >= d.y) & (d.x >= d.z));
    usize::from(not_x) * (1 + usize::from(!(d.y >= d.z)))
}

/// `if c { a } else { b }` for axis indices, as arithmetic (no branch).
#[inline(always)]
fn select_index(c: bool, a: usize, b: usize) -> usize {
    let m = usize::from(c).wrapping_neg();
    (a & m) | (b & !m)
}

/// γ(12) in `f64`, the margin of [`t_numerator_is_zero`].
const GAMMA12: f64 = 12.0 * f64::EPSILON * 0.5 / (1.0 - 12.0 * f64::EPSILON * 0.5);

/// `K = 48·γ(12)·(1 + 2⁻⁴⁰)`, the factor of the single-triangle kernel's
/// upper bound `B'' = fl(fl(K·fl(s²))·Q)` of the snap bound `B` of
/// [`t_numerator_is_zero`], with `Q = fl(max|p_i| + max|o_i|)` and `s =
/// fl(Q·|D|)`.
///
/// `Q` bounds every `|q|` (`|fl(p − o)| ≤ fl(|p| + |o|)`, rounding being
/// monotone), so `z ≤ Q`, and `|X| = |fl(fl(q_x·D) − fl(d_x·q_z))| ≤
/// fl(fl(Q·|D|) + fl(|D|·Q)) = 2s` (`|d_x| ≤ |D|`), so `m ≤ 2s`; each edge
/// function is at most `fl(2·fl(m·m))`, so `|det| ≤ 24s²·(1+u)³`. With `u =
/// 2⁻⁵³` and no underflow (the smallest non-zero values these products of
/// `f32`-born numbers reach are ~2⁻⁹⁰⁰, far above it), every rounding is
/// within a factor `1 ± u`: `B ≤ G·(|det| + 24s²·(1+u)²)·(1+u)³·Q ≤
/// 48G·(1+u)⁶·s²·Q`, while `B'' ≥ K·(1−u)³·s²·Q`, and `K` exceeds the needed
/// `48G·(1+u)⁶/(1−u)³ ≈ 48G·(1 + 9u)` with room to spare. So `|num| ≥ B''`
/// rules the snap out. `B''` is ~1e-13·Q³·D² against `|num| ≈ |s_o|·D²`
/// for an origin at distance `s_o` from the plane (a unit-sized triangle),
/// so the exact test runs only for origins on the plane or ~10⁶ sizes away.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the x86_64 kernels
const SNAP_K: f64 = 48.0 * GAMMA12 * (1.0 + 1.0 / (1u64 << 40) as f64);

/// True when the numerator `Σ U_i·q_i[kz]` of `t` cannot be told from 0 by
/// its rounding: the origin lies on the triangle's plane (to `f64` accuracy).
///
/// Error bound, with `u = 2⁻⁵³` and Higham's γ(n) ≈ n·u: each scaled sheared
/// coordinate is rounded once (`M` bounds them), so each edge function is off
/// by ≤ γ(3)·2M²; `q[kz]` is exact (`Z` bounds it); the sum of three products
/// adds γ(2). Hence `|Δ| ≤ γ(3)·(|U|+|V|+|W| + 6M²)·Z`, taken as γ(12) for
/// margin — ~1e-15 relative, far below anything an `f32` `t` can resolve.
/// `U, V, W` share a sign here, so `|U|+|V|+|W| = |det|`.
#[inline(always)]
fn t_numerator_is_zero(num: f64, det: f64, p: [DVec3; 3]) -> bool {
    // A plain compare-select (`maxsd`): a NaN coordinate makes an edge
    // function, hence `det` and `t`, NaN, and the hit is refused whatever
    // this answers, so `f64::max`'s NaN handling would be wasted work.
    let max = |x: f64, y: f64| if x > y { x } else { y };
    let [a, b, c] = p;
    let m = max(max(max(a.x.abs(), a.y.abs()), max(b.x.abs(), b.y.abs())), max(c.x.abs(), c.y.abs()));
    let z = max(max(a.z.abs(), b.z.abs()), c.z.abs());
    // Strict, so that an infinite `num` (of a degenerate ray, see
    // `intersect_candidate`) is never taken as 0, even against an infinite
    // bound; an exact 0 needs no snapping.
    num.abs() < GAMMA12 * (det.abs() + 6.0 * m * m) * z
}

/// Watertight ray–triangle test (Woop–Benthin–Wald 2013; see the module doc):
/// `t` in `range` and the barycentrics `(u, v)` of `b` and `c`, or `None`.
/// Touching an edge or a vertex is a hit; a degenerate triangle, a ray in the
/// triangle's plane and a degenerate ray are misses. With `cull_back_faces`,
/// rays arriving from behind (`dir · ((b−a)×(c−a)) ≥ 0`) miss.
///
/// # Examples
/// ```
/// use raycast::shapes::ray_triangle;
/// use raycast::{vec3, Interval, Ray};
/// let (a, b, c) = (vec3(0.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0));
/// // Through the midpoint of the edge b–c: touching counts.
/// let h = ray_triangle(&Ray::new(vec3(0.5, 0.5, 1.0), vec3(0.0, 0.0, -1.0)), a, b, c, Interval::FORWARD, false).unwrap();
/// assert_eq!((h.t, h.u, h.v), (1.0, 0.5, 0.5));
/// ```
#[inline]
pub fn ray_triangle(
    ray: &Ray,
    a: Vec3,
    b: Vec3,
    c: Vec3,
    range: Interval,
    cull_back_faces: bool,
) -> Option<TriangleHit> {
    ShearedRay::new(ray)?.intersect(a, b, c, range, cull_back_faces)
}

/// `normalize((b − a) × (c − a))` computed in `f64` (the differences of `f32`
/// values are exact there, the products nearly so, so thin triangles keep an
/// accurate normal); `None` for a degenerate triangle.
#[inline]
pub(crate) fn face_normal(a: Vec3, b: Vec3, c: Vec3) -> Option<Vec3> {
    let a = a.as_dvec3();
    let n = (b.as_dvec3() - a).cross(c.as_dvec3() - a);
    // One division and three products: `n·(1/len)` is within an f64 ulp of
    // `n/len`, far below the f32 result's rounding.
    let len = n.length();
    (len > 0.0 && len.is_finite()).then(|| (n * (1.0 / len)).as_vec3())
}

/// The full [`Hit`] of a triangle from the kernel's answer and the `point`.
///
/// The normal is `n·(1/|n|)` without the degenerate-triangle test of
/// [`face_normal`]: a triangle that passed the kernel has `det != 0`, hence a
/// non-zero `n` (an underflowing or overflowing `n` would need vertices
/// ~1e±19 apart, beyond what the f64 cross product of f32 differences
/// reaches), and on a miss (`cast_candidate`) the value is unused.
#[inline(always)]
pub(crate) fn triangle_hit(a: Vec3, b: Vec3, c: Vec3, h: TriangleHit, point: Vec3) -> Hit {
    let a64 = a.as_dvec3();
    let n = (b.as_dvec3() - a64).cross(c.as_dvec3() - a64);
    let normal = (n * (1.0 / n.length())).as_vec3();
    Hit { uv: Some(Vec2::new(h.u, h.v)), ..Hit::with_face(h.t, point, normal, h.front_face, Part::Face) }
}

impl RayCast for Triangle {
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h)
    }

    /// Branch-free (see `Triangle::candidate`); the same answers as
    /// [`ray_triangle`].
    ///
    /// The point is `(1−u−v)·a + u·b + v·c` from the answer's weights (see
    /// `Triangle::hit_of`).
    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        self.hit_candidate(ray, range, false)
    }

    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.candidate(ray, range, false).0
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        self.cast(ray, range).into_iter().collect()
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_points([self.a, self.b, self.c])
    }

    #[inline(always)]
    fn as_triangle(&self) -> Option<&Triangle> {
        Some(self)
    }
}

impl Triangle {
    /// The single-triangle kernel: whether the ray hits, and the candidate
    /// answer (`t`, `u`, `v` bit-identical to [`ray_triangle`]'s on a hit;
    /// unspecified on a miss). `mirrored` exchanges front and back (for a triangle
    /// placed by a map with negative determinant, see [`Placed`]).
    ///
    /// Branch-free: a single query's hit or miss is unpredictable. A
    /// degenerate ray needs no test of its own: it makes `det` 0 or not
    /// finite, and so `t` infinite or NaN, which the range test refuses
    /// (see `ShearedRay::intersect_candidate`, whose arithmetic this is).
    #[inline(always)]
    fn candidate(&self, ray: &Ray, range: Interval, mirrored: bool) -> (bool, TriangleHit) {
        #[cfg(target_arch = "x86_64")]
        {
            sse2::intersect(self, ray, range, mirrored)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let (sr, flip) = ShearedRay::new_cyclic(ray);
            sr.intersect_candidate(&self.a, &self.b, &self.c, range, self.cull_back_faces, flip ^ mirrored)
        }
    }

    /// [`Triangle::candidate`] made a [`Hit`]; the normal is negated when
    /// `mirrored` (see [`Placed`]).
    #[inline(always)]
    fn hit_candidate(&self, ray: &Ray, range: Interval, mirrored: bool) -> (bool, Hit) {
        self.hit_of(self.candidate(ray, range, mirrored), mirrored)
    }

    /// The [`Hit`] of a candidate of this triangle (`Triangle::candidate`'s
    /// answer, or the same from `Placed`'s kernel).
    #[inline(always)]
    fn hit_of(&self, (ok, h): (bool, TriangleHit), mirrored: bool) -> (bool, Hit) {
        // `a + u·(b − a) + v·(c − a)` (DESIGN's `(1−u−v)·a + u·b + v·c`)
        // from the answer's `u` and `v`, in f32: five roundings (the two
        // differences, the products, the sums), so within about three f32
        // ulps of `max(|a|, |b − a|, |c − a|)` of the exact point of those
        // weights, the same order as the f32 rounding of the point itself.
        // Measured against an f64 reference (`compare`'s `exactness`):
        // worst 1.8e-7 of the scene scale, against 3.8e-8 when formed in
        // f64, far within the 4e-6 asked. In f64 (two lanes per vector,
        // conversions) the point took 3% more time per `cast` for that.
        let (a, b, c) = (Vec3A::from(self.a), Vec3A::from(self.b), Vec3A::from(self.c));
        let point = Vec3::from(a + (b - a) * h.u + (c - a) * h.v);
        let mut hit = triangle_hit(self.a, self.b, self.c, h, point);
        hit.normal = Vec3::select(glam::BVec3::splat(mirrored), -hit.normal, hit.normal);
        (ok, hit)
    }

    /// This triangle placed by `world_from_local`, as a triangle of the
    /// world frame (the mapped vertices), for
    /// [`Transformed`](crate::Transformed), which forms it once when the
    /// placement is set: no map then lies on the path from the ray to the
    /// answer.
    ///
    /// An affine map keeps the barycentrics of a point and the ratios along
    /// a line, so `t` and `uv` are those of the local query (up to the
    /// rounding of the mapped vertices instead of the mapped ray). The
    /// world cross product is `(Mb − Ma) × (Mc − Ma) = det(M)·M⁻ᵀ·n`, and
    /// the local query's normal is `M⁻ᵀ·n` normalised: with `det(M) < 0`
    /// (a mirror) the world triangle's winding is reversed, so its normal is
    /// negated and front and back are exchanged (culling included) — the
    /// `mirrored` flag.
    pub(crate) fn placed(&self, world_from_local: &Affine3A) -> Placed {
        let map = |p: Vec3| {
            let w = world_from_local.transform_point3a(Vec3A::from(p));
            Vec3::new(w.x, w.y, w.z)
        };
        let tri = Triangle { a: map(self.a), b: map(self.b), c: map(self.c), ..*self };
        Placed::new(tri, world_from_local.matrix3.determinant() < 0.0)
    }
}

/// A triangle placed in the world frame (see [`Triangle::placed`]), in the
/// layout its kernel reads, with the exponent of its largest coordinate.
/// 52 bytes: it is a variant of the world form kept in every `Transformed`,
/// whatever the shape, so what else could be formed once (the normal) is
/// not kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Placed {
    /// The mapped vertices `a`, `b`, `c` (not validated: a map that
    /// overflows them gives non-finite vertices, which are never hit), each
    /// as `[x, y, z, x]`: the two coordinates `[p_k, p_(k+1) mod 3]` that
    /// follow each other in the cyclic order are the two `f32` at index
    /// `k`, one 8-byte read (`sse2::intersect_placed`).
    vertices: [[f32; 4]; 3],
    /// As [`Triangle::cull_back_faces`].
    cull_back_faces: bool,
    /// The map's determinant is negative: front and back exchanged.
    mirrored: bool,
    /// The exponent field of `max |p_i|` over the vertices' coordinates (a
    /// NaN vertex, never hit, gives some value): the vertex part of the
    /// snap pre-test of the SSE2 kernel (`sse2::snap_exponent`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    p_exp: u8,
}

impl Placed {
    /// The world form of `tri` (already mapped), `mirrored` as in
    /// [`Triangle::placed`].
    fn new(tri: Triangle, mirrored: bool) -> Self {
        // The bits of a non-negative `f32` shifted by its 23 mantissa bits:
        // its exponent field, at most 255.
        let p_exp = [tri.a, tri.b, tri.c].map(|p| p.abs().max_element().to_bits() >> 23).into_iter().max();
        let row = |p: Vec3| [p.x, p.y, p.z, p.x];
        Placed {
            vertices: [row(tri.a), row(tri.b), row(tri.c)],
            cull_back_faces: tri.cull_back_faces,
            mirrored,
            p_exp: p_exp.unwrap_or(0) as u8,
        }
    }

    /// The placed triangle as a [`Triangle`] (of the world frame).
    #[inline(always)]
    fn tri(&self) -> Triangle {
        let [a, b, c] = self.vertices.map(|[x, y, z, _]| Vec3::new(x, y, z));
        Triangle { a, b, c, cull_back_faces: self.cull_back_faces }
    }

    /// The kernel of a placed triangle: [`Triangle::candidate`] (`mirrored`
    /// as the placement says), the same answers bit for bit.
    #[inline(always)]
    fn candidate(&self, ray: &Ray, range: Interval) -> (bool, TriangleHit) {
        #[cfg(target_arch = "x86_64")]
        {
            sse2::intersect_placed(self, ray, range)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.tri().candidate(ray, range, self.mirrored)
        }
    }

    /// As [`RayCast::cast_candidate`].
    #[inline(always)]
    pub(crate) fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        self.tri().hit_of(self.candidate(ray, range), self.mirrored)
    }

    /// As [`RayCast::hits`].
    #[inline(always)]
    pub(crate) fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.candidate(ray, range).0
    }

    /// As [`RayCast::cast_all`].
    pub(crate) fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if(ok, h).into_iter().collect()
    }
}

/// The ray's layout the SSE2 kernel reads: `origin` then `dir`, 24 bytes.
#[cfg(target_arch = "x86_64")]
const RAY_LAYOUT: () = assert!(
    core::mem::offset_of!(Ray, origin) == 0
        && core::mem::offset_of!(Ray, dir) == 12
        && core::mem::size_of::<Ray>() == 24
);

/// The single-triangle kernel in SSE2 (the x86_64 baseline): the arithmetic
/// of `ShearedRay::intersect_candidate`, operation for operation (IEEE
/// arithmetic is the same in a SIMD lane as in a scalar register, and there
/// is no fused multiply-add), laid out two `f64` lanes at a time.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{Placed, Triangle, TriangleHit, RAY_LAYOUT, SNAP_K};
    use crate::numeric::rounding_bounds;
    use crate::{Interval, Ray};
    use core::arch::x86_64::*;
    use glam::DVec2;

    /// See [`Triangle::candidate`](super::Triangle).
    ///
    /// Layout: `q` is formed for the three axes before they are chosen (it
    /// does not depend on them, and is computed while they are), as pairs
    /// `[q_a, q_a]` and `[q_b, q_c]` per axis, next to the pairs `[d_k,
    /// d_k]`; the choice of `(kx, ky, kz)` — the cyclic order of
    /// `ShearedRay::new_cyclic` — is then three offsets into these buffers
    /// (`axis_offsets`), with no per-value gather. Every later pair keeps the
    /// layout: lane 1 of the first pair is vertex `a`, lane 0 a copy of it,
    /// which enters only maxima of absolute values (`exact_snap`).
    #[inline(always)]
    pub(super) fn intersect(
        tri: &Triangle,
        ray: &Ray,
        range: Interval,
        mirrored: bool,
    ) -> (bool, TriangleHit) {
        let ((a, b, c), ()) = ((tri.a, tri.b, tri.c), RAY_LAYOUT);
        // The largest |coordinate| of the vertices, for the snap's pre-test
        // (a NaN vertex is lost here, but it makes `t` NaN anyway).
        let p_max = f64::from(a.abs().max_element().max(b.abs().max_element()).max(c.abs().max_element()));
        // The rows `[a_k, a_k]`, `[b_k, c_k]` of axis `k` in f64 (the
        // triangle's, formed once when it is fixed).
        let row = |k: usize| {
            let (ak, bk, ck) = (f64::from(a[k]), f64::from(b[k]), f64::from(c[k]));
            (DVec2::new(ak, ak), DVec2::new(bk, ck))
        };
        let rows = [row(0), row(1), row(2)];
        // SAFETY: SSE2 is part of the x86_64 baseline. The ray is read as
        // the 16 bytes at its start and the 16 at byte 8, within its 24
        // (`RAY_LAYOUT`). The buffers are 16-byte aligned arrays written in
        // full before they are read, 16 bytes at a time at the offsets of
        // `axis_offsets` (0, 16 or 32) in `d_buf` (48 bytes), and at twice
        // them and 16 more in `q_buf` (96 bytes).
        unsafe {
            let rp = (ray as *const Ray).cast::<f32>();
            let o = _mm_loadu_ps(rp); // [ox, oy, oz, dx]
            let d = _mm_loadu_ps(rp.add(2)); // [oz, dx, dy, dz]
            let [off_x, off_y, off_z] = axis_offsets(d);
            // q = p − o for the three axes, and the direction's pairs.
            let o01 = _mm_cvtps_pd(o);
            let o2x = _mm_cvtps_pd(_mm_movehl_ps(o, o));
            let dyz = _mm_cvtps_pd(_mm_movehl_ps(d, d));
            let o_k = [_mm_unpacklo_pd(o01, o01), _mm_unpackhi_pd(o01, o01), _mm_unpacklo_pd(o2x, o2x)];
            let d_k = [_mm_unpackhi_pd(o2x, o2x), _mm_unpacklo_pd(dyz, dyz), _mm_unpackhi_pd(dyz, dyz)];
            let load = |v: DVec2| _mm_loadu_pd(v.as_ref().as_ptr());
            let q_buf =
                [0, 1, 2].map(|k| [_mm_sub_pd(load(rows[k].0), o_k[k]), _mm_sub_pd(load(rows[k].1), o_k[k])]);
            let d_buf = d_k;
            let (q_k, d_k) = (q_buf.as_ptr().cast::<u8>(), d_buf.as_ptr().cast::<u8>());
            let at = |p: *const u8, off: usize| _mm_load_pd(p.add(off).cast());
            let ((qx0, qx1), (qy0, qy1), (qz0, qz1)) = (
                (at(q_k, 2 * off_x), at(q_k, 2 * off_x + 16)),
                (at(q_k, 2 * off_y), at(q_k, 2 * off_y + 16)),
                (at(q_k, 2 * off_z), at(q_k, 2 * off_z + 16)),
            );
            let (dx, dy, dz) = (at(d_k, off_x), at(d_k, off_y), at(d_k, off_z));
            let inv_d = _mm_div_sd(_mm_set_sd(1.0), dz);
            // The scaled shear (`ShearedRay::shear`): X = q_x·D − d_x·q_z, Y
            // likewise; pairs [a, a], [b, c].
            let shear =
                |qk: __m128d, dk: __m128d, qz: __m128d| _mm_sub_pd(_mm_mul_pd(qk, dz), _mm_mul_pd(dk, qz));
            let (x0, x1) = (shear(qx0, dx, qz0), shear(qx1, dx, qz1));
            let (y0, y1) = (shear(qy0, dy, qz0), shear(qy1, dy, qz1));
            // U = Xc·Yb − Yc·Xb: p = [Xb·Yc, Xc·Yb],
            // U = p₁ − p₀ (lane 1: 0, a harmless fourth value for the sign
            // tests).
            let p = _mm_mul_pd(x1, _mm_shuffle_pd::<1>(y1, y1));
            let u = _mm_sub_pd(_mm_unpackhi_pd(p, p), p);
            // [V, W] = [Xa, Xb]·[Yc, Ya] − [Ya, Yb]·[Xc, Xa].
            let xab = _mm_shuffle_pd::<1>(x0, x1);
            let yab = _mm_shuffle_pd::<1>(y0, y1);
            let yca = _mm_shuffle_pd::<3>(y1, y0);
            let xca = _mm_shuffle_pd::<3>(x1, x0);
            let vw = _mm_sub_pd(_mm_mul_pd(xab, yca), _mm_mul_pd(yab, xca));
            let w = _mm_unpackhi_pd(vw, vw);
            // det = (U + V) + W; num = (U·qa_z + V·qb_z) + W·qc_z.
            let det = _mm_add_sd(_mm_add_sd(u, vw), w);
            let vw_z = _mm_mul_pd(vw, qz1);
            let num = _mm_add_sd(
                _mm_add_sd(_mm_mul_sd(u, _mm_unpackhi_pd(qz0, qz0)), vw_z),
                _mm_unpackhi_pd(vw_z, vw_z),
            );
            // The snap of `t_numerator_is_zero`, done only when `|num|` is
            // below an upper bound `B''` of its bound `B = fl(fl(G·fl(|det| +
            // fl(fl(6m)·m)))·z)` (see `SNAP_K`); a predictable branch.
            let abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(i64::MAX));
            let abs = |x: __m128d| _mm_and_pd(x, abs_mask);
            let o_abs = _mm_and_ps(o, _mm_castsi128_ps(_mm_set1_epi32(i32::MAX)));
            let o_max =
                _mm_max_ss(_mm_max_ss(o_abs, _mm_shuffle_ps::<1>(o_abs, o_abs)), _mm_movehl_ps(o_abs, o_abs));
            let q_max = _mm_add_sd(_mm_cvtss_sd(_mm_setzero_pd(), o_max), _mm_set_sd(p_max));
            let s = _mm_mul_sd(q_max, abs(dz));
            let bound = _mm_mul_sd(_mm_mul_sd(_mm_set_sd(SNAP_K), _mm_mul_sd(s, s)), q_max);
            let num = if _mm_comilt_sd(abs(num), bound) != 0 {
                exact_snap(num, det, [x0, x1, y0, y1], [qz0, qz1, qz1])
            } else {
                num
            };
            finish(Edges { u, vw, det, num }, dz, inv_d, range, mirrored, tri.cull_back_faces)
        }
    }

    /// [`Triangle::candidate`](super::Triangle) for a placed triangle, from
    /// its layout (`Placed`): the same arithmetic as [`intersect`], laid
    /// out by vertex instead of by axis.
    ///
    /// Layout: the pair `S_p = [X_p, Y_p]` of each vertex `p`, from `q_xy =
    /// [p_kx, p_ky] − [o_kx, o_ky]` and `q_z = [p_kz, p_kz] − [o_kz, o_kz]`
    /// as `q_xy·D − [d_kx, d_ky]·q_z` (`ShearedRay::shear`, per lane). The
    /// axes, chosen in integer registers, are the byte offsets of what is
    /// read of the vertices (`[p_kx, p_ky]` is one 8-byte read, see
    /// `Placed::vertices`) and of the ray: nothing is formed for all three
    /// axes, nor stored and read back. The edge functions are then lane
    /// products of one pair by another swapped: `S_c·[Yb, Xb] = [Xc·Yb,
    /// Yc·Xb]`, whose lane difference is `U`, and likewise `V` from
    /// `S_a·[Yc, Xc]` and `W` from `S_b·[Ya, Xa]`: the operands and order of
    /// `intersect_candidate`'s `pc.x·pb.y − pc.y·pb.x` and the others, so
    /// the same values.
    #[inline(always)]
    pub(super) fn intersect_placed(placed: &Placed, ray: &Ray, range: Interval) -> (bool, TriangleHit) {
        let ((), rows) = (RAY_LAYOUT, &placed.vertices);
        // SAFETY: SSE2 is part of the x86_64 baseline. With `k`, `kx`,
        // `ky`, `kz` byte offsets in {0, 4, 8}: the ray is read as single
        // `f32` at `k` (origin) and `12 + k` (direction), and 8 bytes at
        // `kz` and `8 + kz`, within its 24 bytes (`RAY_LAYOUT`); each
        // vertex row (16 bytes) 8 bytes at `kx` and at `kz`.
        unsafe {
            let rp = (ray as *const Ray).cast::<u8>();
            let single = |off: usize| *rp.add(off).cast::<f32>();
            // The axes, in integer registers (the bits of a non-negative
            // float order as its value; a NaN, the ray then being
            // degenerate, only has to give axes in range).
            let abs = |off: usize| single(off).to_bits() & 0x7fff_ffff;
            let (ex, ey, ez) = (abs(12), abs(16), abs(20));
            // `dominant_axis` as a table index (bit 0 "not x", bit 1 `|y| <
            // |z|`, which decides only when bit 0 is set), and from it the
            // cyclic order of `ShearedRay::new_cyclic` (`AXES`).
            let i = usize::from(!((ex >= ey) & (ex >= ez))) | usize::from(ey < ez) << 1;
            let (kx, ky, kz) = (usize::from(AXES[0][i]), usize::from(AXES[1][i]), usize::from(AXES[2][i]));
            // The two `f32` at byte `off` of `p`, in f64.
            let two = |p: *const u8, off: usize| _mm_cvtps_pd(_mm_castpd_ps(_mm_load_sd(p.add(off).cast())));
            // The ray's `f32` at bytes `i` and `j`, as `[r_i, r_j]` in f64.
            let pair = |i: usize, j: usize| {
                _mm_cvtps_pd(_mm_unpacklo_ps(_mm_set_ss(single(i)), _mm_set_ss(single(j))))
            };
            // `[o_kx, o_ky]` and `[d_kx, d_ky]`; `[o_kz, o_kz]` from the
            // first of the two `f32` at `kz`, `[d_kz, d_kz]` from the second
            // at `8 + kz` (not to read past the ray).
            let (o_xy, d_xy) = (pair(kx, ky), pair(12 + kx, 12 + ky));
            let (oz, dz) = (two(rp, kz), two(rp, 8 + kz));
            let (oz, dz) = (_mm_unpacklo_pd(oz, oz), _mm_unpackhi_pd(dz, dz));
            let inv_d = _mm_div_sd(_mm_set_sd(1.0), dz);
            // The scaled shear of vertex `p` (`ShearedRay::shear`): `[X, Y]`
            // and `[q_z, q_z]`.
            let vertex = |p: &[f32; 4]| {
                let p = p.as_ptr().cast::<u8>();
                let z = two(p, kz);
                let (q_xy, q_z) = (_mm_sub_pd(two(p, kx), o_xy), _mm_sub_pd(_mm_unpacklo_pd(z, z), oz));
                (_mm_sub_pd(_mm_mul_pd(q_xy, dz), _mm_mul_pd(d_xy, q_z)), q_z)
            };
            let ((sa, za), (sb, zb), (sc, zc)) = (vertex(&rows[0]), vertex(&rows[1]), vertex(&rows[2]));
            let swap = |x: __m128d| _mm_shuffle_pd::<1>(x, x);
            let high = |x: __m128d| _mm_unpackhi_pd(x, x);
            let pu = _mm_mul_pd(sc, swap(sb)); // [Xc·Yb, Yc·Xb]
            let pv = _mm_mul_pd(sa, swap(sc)); // [Xa·Yc, Ya·Xc]
            let pw = _mm_mul_pd(sb, swap(sa)); // [Xb·Ya, Yb·Xa]

            // [U, 0] (lane 1: a harmless fourth value for the sign tests).
            let u = _mm_sub_pd(pu, high(pu));
            let vw = _mm_sub_pd(_mm_unpacklo_pd(pv, pw), _mm_unpackhi_pd(pv, pw));
            // det = (U + V) + W; num = (U·qa_z + V·qb_z) + W·qc_z.
            let det = _mm_add_sd(_mm_add_sd(u, vw), high(vw));
            let vw_z = _mm_mul_pd(vw, _mm_unpacklo_pd(zb, zc));
            let num = _mm_add_sd(_mm_add_sd(_mm_mul_sd(u, za), vw_z), high(vw_z));
            // The snap of `t_numerator_is_zero`, done only when the binary
            // exponent of `num` is below that of a power of two above its
            // bound `B`: integer work on exponents (see `snap_exponent`), a
            // predictable branch. `|d_kz|` is the largest `|d_i|`.
            let o_max = abs(0).max(abs(4)).max(abs(8));
            let floor = snap_exponent(o_max >> 23, placed.p_exp.into(), abs(12 + kz) >> 23);
            let num = if (_mm_cvtsd_f64(num).to_bits() >> 52) & 0x7ff < floor {
                exact_snap(num, det, [sa, sb, sc, sc], [za, zb, zc])
            } else {
                num
            };
            finish(Edges { u, vw, det, num }, dz, inv_d, range, placed.mirrored, placed.cull_back_faces)
        }
    }

    /// `4·kx`, `4·ky`, `4·kz` (byte offsets of `f32`) by the index of
    /// `intersect_placed` (`kz` = 0, 1, 0, 2 for indices 0 to 3), in the
    /// cyclic order of `ShearedRay::new_cyclic`.
    const AXES: [[u8; 4]; 3] = [[4, 8, 4, 0], [8, 0, 8, 4], [0, 4, 0, 8]];

    /// A biased `f64` exponent `e` such that `|num| ≥ 2^(e − 1023)` rules
    /// out the snap of `t_numerator_is_zero`, from the exponent fields (the
    /// bits shifted by 23) of `o_max = max |o_i|`, `p_max = max |p_i|` (over
    /// the vertices) and `d_max = max |d_i|`: non-negative `f32`, so a value
    /// `x` with exponent field `e` is below `2^(e − 127 + 1)` (zero and
    /// subnormals, `e = 0`, included).
    ///
    /// From `SNAP_K`: `B ≤ 48G·(1+u)⁶·s²·Q` with `Q = fl(p_max + o_max)`
    /// and `s = fl(Q·|D|)`, so `B ≤ 48G·(1+u)¹¹·(p_max + o_max)³·D²`, and
    /// `48G·(1+u)¹¹ ≈ 3.2e-14 < 2⁻⁴³ ≈ 1.1e-13`. With `M` the larger
    /// unbiased exponent of `p_max` and `o_max` and `E` that of `d_max`,
    /// `p_max + o_max < 2^(M+2)` and `D² = d_max² < 2^(2E+2)` (`D` is the
    /// dominant component), so `B < 2^(3M + 2E − 35)`. A `num` whose
    /// exponent is at least that has `|num| ≥ 2^(3M + 2E − 35) > B`: no
    /// snap. In biased exponents (`f32`: 127, `f64`: 1023) the bound is
    /// `3·M_b + 2·E_b + 353`, `≤ 1628`. A zero or subnormal `num`
    /// (exponent field 0) always takes the exact test; an infinite or NaN
    /// one (2047) never does, as in `t_numerator_is_zero`.
    #[inline(always)]
    fn snap_exponent(o_max: u32, p_max: u32, d_max: u32) -> u64 {
        3 * u64::from(o_max.max(p_max)) + 2 * u64::from(d_max) + 353
    }

    /// The edge functions and what follows from them, as both kernels form
    /// them: `u = [U, 0]`, `vw = [V, W]`, `det = (U + V) + W` and `num =
    /// (U·qa_z + V·qb_z) + W·qc_z` in lane 0 (`ShearedRay::intersect_candidate`).
    struct Edges {
        u: __m128d,
        vw: __m128d,
        det: __m128d,
        num: __m128d,
    }

    /// The rest of `ShearedRay::intersect_candidate` after the snap, for
    /// both kernels: `t`, the weights, the sign and range tests. `dz` is
    /// `[D, D]`, `inv_d` is `1/D` in lane 0 (divided by the caller as soon
    /// as `D` is read, long before `det` is known).
    #[inline(always)]
    unsafe fn finish(
        e: Edges,
        dz: __m128d,
        inv_d: __m128d,
        range: Interval,
        mirrored: bool,
        cull: bool,
    ) -> (bool, TriangleHit) {
        let Edges { u, vw, det, num } = e;
        let zero = _mm_setzero_pd();
        // t = (num·(1/D))·(1/det): `num·(1/D)` is formed while `1/det` is
        // divided, so one product follows the division.
        let inv = _mm_div_sd(_mm_set_sd(1.0), det);
        let t64 = _mm_mul_sd(_mm_mul_sd(num, inv_d), inv);
        let t = _mm_cvtsd_ss(_mm_setzero_ps(), t64);
        let uv64 = _mm_mul_pd(vw, _mm_unpacklo_pd(inv, inv));
        let uv = _mm_cvtpd_ps(uv64);
        // Signs. `intersect_candidate` keeps `front | (back & !cull)`
        // with `front = P & !f | N & f`, `back = N & !f | P & f`, where
        // `P` is "all ≥ 0", `N` "all ≤ 0" and `f` its flip (`D < 0`,
        // exchanged again when `mirrored`): that is `P & !(f & cull) | N
        // & !(!f & cull)`. With `u = [U, 0]`, `vw = [V, W]`: `P` is both
        // lanes of `min(u, vw)` ≥ 0, `N` both of `max(u, vw)` ≤ 0 (the 0
        // changes neither). A NaN anywhere reaches `t` (see
        // `intersect_candidate`), so how these treat it does not matter.
        let p2 = _mm_cmple_pd(zero, _mm_min_pd(u, vw));
        let n2 = _mm_cmple_pd(_mm_max_pd(u, vw), zero);
        let p_n = _mm_and_pd(_mm_unpacklo_pd(p2, n2), _mm_unpackhi_pd(p2, n2));
        let f = _mm_cmplt_pd(dz, zero);
        let mask = |b: bool| _mm_castsi128_pd(_mm_set1_epi64x(-i64::from(b)));
        let (mirror, cull) = (mask(mirrored), mask(cull));
        // `[f & cull, !f & cull]` as `(f & cull) ^ ([m, !m] & cull)`,
        // with `f` the flip before `mirrored` (`D < 0`).
        let m_cull = _mm_and_pd(_mm_unpacklo_pd(mirror, _mm_xor_pd(mirror, mask(true))), cull);
        let refused = _mm_xor_pd(_mm_and_pd(f, cull), m_cull);
        let side = _mm_andnot_pd(refused, p_n);
        let side = _mm_castpd_ps(_mm_or_pd(side, _mm_unpackhi_pd(side, side)));
        // `det`'s sign bit in `intersect`'s orientation (`front_face`):
        // `det` with every bit flipped when flipped (`f ^ mirror`), of
        // which only the sign bit is read.
        let det_f = _mm_xor_pd(det, _mm_xor_pd(f, mirror));
        // `t` in the range and finite (this also refuses `det == 0` and
        // a non-finite `det`, see `intersect_candidate`), as lane masks
        // anded with the side's: one `movmskps` decides. The test is made
        // on the `f64` `t` against `rounding_bounds`, which decides exactly
        // as `min ≤ t ≤ max` and `|t| < ∞` on the `f32` `t` would (a NaN
        // end refuses every `t`), without waiting for the conversion, the
        // last link of the kernel's longest chain.
        let (lo, hi) = rounding_bounds(range);
        let in_range =
            _mm_castpd_ps(_mm_and_pd(_mm_cmple_sd(_mm_set_sd(lo), t64), _mm_cmple_sd(t64, _mm_set_sd(hi))));
        let ok = _mm_movemask_ps(_mm_and_ps(in_range, side)) & 1 != 0;
        let hit = TriangleHit {
            t: _mm_cvtss_f32(t),
            u: _mm_cvtss_f32(uv),
            v: _mm_cvtss_f32(_mm_shuffle_ps::<1>(uv, uv)),
            // `det > 0` (not flipped) or `det < 0` (flipped); on a hit
            // `det` is finite and not 0, so the sign bit tells.
            front_face: _mm_movemask_pd(det_f) & 1 == 0,
        };
        (ok, hit)
    }

    /// `num`, or 0 when `t_numerator_is_zero` says so: its operations, on
    /// the kernel's pairs (`x`, `y`: the sheared `X`, `Y`; `z`: the `q_z`).
    /// Rarely called (see the pre-test in `intersect`): cold, but inlined,
    /// as a call would make the caller keep its registers in memory.
    #[cold]
    #[inline(always)]
    fn exact_snap(num: __m128d, det: __m128d, xy: [__m128d; 4], z: [__m128d; 3]) -> __m128d {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe {
            let abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(i64::MAX));
            let abs = |x: __m128d| _mm_and_pd(x, abs_mask);
            let hmax = |x: __m128d| _mm_max_sd(x, _mm_unpackhi_pd(x, x));
            let [x0, x1, y0, y1] = xy;
            let m = hmax(_mm_max_pd(_mm_max_pd(abs(x0), abs(x1)), _mm_max_pd(abs(y0), abs(y1))));
            let z = hmax(_mm_max_pd(_mm_max_pd(abs(z[0]), abs(z[1])), abs(z[2])));
            let six_mm = _mm_mul_sd(_mm_mul_sd(_mm_set_sd(6.0), m), m);
            let bound = _mm_mul_sd(_mm_mul_sd(_mm_set_sd(super::GAMMA12), _mm_add_sd(abs(det), six_mm)), z);
            _mm_andnot_pd(_mm_cmplt_sd(abs(num), bound), num)
        }
    }

    /// `16·k` for the axes `kx, ky, kz` that `dominant_axis` and the cyclic
    /// order of `ShearedRay::new_cyclic` pick, for `d = [·, x, y, z]`, from
    /// lane compares: with `e = |d|`, lane `i` of `(e < e rotated by 1) |
    /// (e < e rotated by 2)` (over lanes 1–3) says some other component is
    /// larger. Bit 1 clear is `dominant_axis`'s test for x exactly; when it
    /// is set, bit 2 clear (`|y| ≥ |z|` and `|y| ≥ |x|`) equals its `|y| ≥
    /// |z|` (for non-NaN values: `|x| < |y|`, or `|x| < |z| ≤ |y|`), so the
    /// choice is the same; with a NaN the ray is degenerate and only the
    /// offsets' range matters.
    ///
    /// The compares are on the bits as integers, which order non-negative
    /// floats as their values do: `e_i < e_j` is the sign of `e_i − e_j`
    /// (both in `[0, 2³¹)`, so the difference cannot overflow), which
    /// `movmskps` reads directly — two subtractions, one cycle each.
    #[inline(always)]
    unsafe fn axis_offsets(d: __m128) -> [usize; 3] {
        const OFFSETS: [[u8; 16]; 3] = [const_offsets(KZ, 1), const_offsets(KZ, 2), const_offsets(KZ, 0)];
        let m = axis_mask(d);
        let [x, y, z] = &OFFSETS;
        [usize::from(x[m]), usize::from(y[m]), usize::from(z[m])]
    }

    /// `kz` by the mask of [`axis_mask`]. Bit 0 (lane 0) is ignored: kz =
    /// 0 if bit 1 is clear, else 1 if bit 2 is, else 2.
    const KZ: [u8; 16] = [0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0, 2, 2];

    /// The lane compares of [`axis_offsets`] as a 4-bit mask.
    #[inline(always)]
    unsafe fn axis_mask(d: __m128) -> usize {
        let e = _mm_and_si128(_mm_castps_si128(d), _mm_set1_epi32(i32::MAX));
        let lt1 = _mm_sub_epi32(e, _mm_shuffle_epi32::<0b01_11_10_00>(e));
        let lt2 = _mm_sub_epi32(e, _mm_shuffle_epi32::<0b10_01_11_00>(e));
        (_mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(lt1, lt2))) & 15) as usize
    }

    /// `16·((kz + j) mod 3)` for each `kz` of the table.
    const fn const_offsets(kz: [u8; 16], j: u8) -> [u8; 16] {
        let mut out = [0; 16];
        let mut i = 0;
        while i < 16 {
            out[i] = 16 * ((kz[i] + j) % 3);
            i += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{vec2, vec3};
    use proptest::prelude::*;

    fn unit() -> Triangle {
        Triangle::new(vec3(0.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0))
    }

    #[test]
    fn hand_cases_from_the_barycentric_form() {
        // o + t·d = (1−u−v)a + u·b + v·c with a = 0, b = x̂, c = ŷ: u = x, v = y, t = o.z / −d.z.
        let h =
            unit().cast(&Ray::new(vec3(0.25, 0.5, 2.0), vec3(0.0, 0.0, -0.5)), Interval::FORWARD).unwrap();
        assert_eq!(
            (h.t, h.uv, h.point, h.normal),
            (4.0, Some(vec2(0.25, 0.5)), vec3(0.25, 0.5, 0.0), Vec3::Z)
        );
        assert!(h.front_face);
        // From below: the same normal, the back face.
        let h =
            unit().cast(&Ray::new(vec3(0.25, 0.5, -2.0), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.front_face), (2.0, Vec3::Z, false));
        // Behind the origin, outside the interval, outside the triangle.
        assert!(unit().cast(&Ray::new(vec3(0.25, 0.5, 2.0), Vec3::Z), Interval::FORWARD).is_none());
        assert!(unit().cast(&Ray::new(vec3(0.25, 0.5, 2.0), -Vec3::Z), Interval::new(0.0, 1.99)).is_none());
        assert!(unit().cast(&Ray::new(vec3(0.75, 0.5, 2.0), -Vec3::Z), Interval::FORWARD).is_none());
    }

    #[test]
    fn edges_and_vertices_count() {
        let down = -Vec3::Z;
        for (p, uv) in [
            (vec3(0.0, 0.0, 1.0), vec2(0.0, 0.0)),
            (vec3(1.0, 0.0, 1.0), vec2(1.0, 0.0)),
            (vec3(0.0, 1.0, 1.0), vec2(0.0, 1.0)),
            (vec3(0.5, 0.0, 1.0), vec2(0.5, 0.0)),
            (vec3(0.0, 0.5, 1.0), vec2(0.0, 0.5)),
            (vec3(0.5, 0.5, 1.0), vec2(0.5, 0.5)),
        ] {
            let h = unit().cast(&Ray::new(p, down), Interval::FORWARD).unwrap_or_else(|| panic!("{p}"));
            assert_eq!((h.t, h.uv), (1.0, Some(uv)));
        }
        // Just outside an edge (one ulp past x + y = 1).
        let p = vec3(0.5, f32::from_bits(0.5f32.to_bits() + 1), 1.0);
        assert!(unit().cast(&Ray::new(p, down), Interval::FORWARD).is_none());
    }

    #[test]
    fn interval_ends_count() {
        let r = Ray::new(vec3(0.2, 0.2, 3.0), vec3(0.0, 0.0, -1.5));
        assert!(unit().hits(&r, Interval::new(2.0, 2.0)));
        assert!(!unit().hits(&r, Interval::new(2.01, 5.0)));
        assert!(!unit().hits(&r, Interval::new(3.0, 1.0)));
    }

    #[test]
    fn back_face_culling_keeps_front_hits_only() {
        let tri = unit().with_back_face_culling(true);
        assert!(tri.hits(&Ray::new(vec3(0.2, 0.2, 1.0), -Vec3::Z), Interval::FORWARD));
        assert!(!tri.hits(&Ray::new(vec3(0.2, 0.2, -1.0), Vec3::Z), Interval::FORWARD));
        // The winding decides, whatever the dominant axis's sign.
        let flipped = Triangle::new(vec3(0.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0), vec3(1.0, 0.0, 0.0))
            .with_back_face_culling(true);
        assert!(flipped.hits(&Ray::new(vec3(0.2, 0.2, -1.0), vec3(0.1, 0.05, 1.0)), Interval::FORWARD));
        assert!(!flipped.hits(&Ray::new(vec3(0.2, 0.2, 1.0), vec3(0.1, 0.05, -1.0)), Interval::FORWARD));
    }

    #[test]
    fn degenerate_input_misses() {
        let r = Ray::new(vec3(0.2, 0.2, 1.0), -Vec3::Z);
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0), vec3(0.0, 0.0, f32::NEG_INFINITY)] {
            assert!(unit().cast(&Ray::new(r.origin, d), Interval::FORWARD).is_none());
        }
        assert!(unit().cast(&Ray::new(Vec3::NAN, -Vec3::Z), Interval::FORWARD).is_none());
        // Every component of the origin or the direction made ±∞ or NaN, on
        // rays that would hit otherwise: no per-ray validity test guards the
        // single-triangle path, the kernel's `t` must refuse them.
        let tri = Triangle::new(vec3(-1.0, -1.0, 0.3), vec3(2.0, -0.5, -0.2), vec3(0.1, 1.5, 0.1));
        for (o, d) in
            [(vec3(0.2, 0.1, 2.0), vec3(0.1, -0.2, -1.0)), (vec3(-3.0, 0.2, 0.5), vec3(1.0, 0.0, -0.2))]
        {
            for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                for i in 0..6 {
                    let (mut o, mut d) = (o.to_array(), d.to_array());
                    if i < 3 {
                        o[i] = bad
                    } else {
                        d[i - 3] = bad
                    }
                    let ray = Ray::new(Vec3::from(o), Vec3::from(d));
                    for cull in [false, true] {
                        let tri = tri.with_back_face_culling(cull);
                        for range in [Interval::FORWARD, Interval::ALL, Interval::new(-1.0, 1.0)] {
                            assert!(
                                tri.cast(&ray, range).is_none() && !tri.hits(&ray, range),
                                "{ray:?} {range:?}"
                            );
                        }
                    }
                }
            }
        }
        // Collinear vertices and a point triangle never hit.
        let line = Triangle::new(Vec3::ZERO, vec3(1.0, 1.0, 0.0), vec3(2.0, 2.0, 0.0));
        assert!(line.cast(&Ray::new(vec3(1.0, 1.0, 1.0), -Vec3::Z), Interval::FORWARD).is_none());
        let point = Triangle::new(Vec3::ONE, Vec3::ONE, Vec3::ONE);
        assert!(point.cast(&Ray::new(vec3(1.0, 1.0, 2.0), -Vec3::Z), Interval::FORWARD).is_none());
        // A ray in the triangle's plane is not a crossing.
        assert!(unit().cast(&Ray::new(vec3(-1.0, 0.2, 0.0), Vec3::X), Interval::FORWARD).is_none());
        // Non-finite vertices through the free function: a miss, not a NaN.
        assert!(ray_triangle(&r, Vec3::NAN, Vec3::X, Vec3::Y, Interval::FORWARD, false).is_none());
        assert!(Triangle::try_new(Vec3::ZERO, Vec3::INFINITY, Vec3::Y).unwrap_err().field == "b");
    }

    #[test]
    fn origin_on_a_slanted_triangle_hits_at_zero() {
        let (a, b, c) = (vec3(0.3, -1.7, 2.9), vec3(2.1, 0.4, -0.7), vec3(-1.3, 1.9, 0.6));
        let tri = Triangle::new(a, b, c);
        // The vertices themselves lie on the plane exactly.
        for o in [a, b, c] {
            let h = tri.cast(&Ray::new(o, vec3(0.3, 0.5, -0.8)), Interval::FORWARD).unwrap();
            assert_eq!(h.t, 0.0, "{o}");
        }
    }

    #[test]
    fn shared_edge_of_a_quad_is_hit_by_exactly_one_or_both() {
        // Two triangles sharing the diagonal p0–p2 of a quad that is exactly
        // planar (dyadic points on x + y + z = 1); rays crossing the plane at
        // points of the diagonal hit at least one of them. (A folded quad
        // would not do: a ray may pass just over a ridge and rightly miss.)
        let on_plane = |x: f32, y: f32| vec3(x, y, 1.0 - x - y);
        let (p0, p1, p2, p3) =
            (on_plane(0.125, 0.25), on_plane(3.25, 0.1875), on_plane(2.875, 2.75), on_plane(-0.25, 3.125));
        let t1 = Triangle::new(p0, p1, p2);
        let t2 = Triangle::new(p0, p2, p3);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32
        };
        for _ in 0..20_000 {
            let s = next();
            let target = p0 + s * (p2 - p0);
            let origin = target + vec3(next() - 0.5, next() - 0.5, next() + 0.1) * 10.0;
            let ray = Ray::segment(origin, target);
            let wide = Interval::new(0.0, 2.0);
            assert!(t1.hits(&ray, wide) || t2.hits(&ray, wide), "ray {ray:?} slipped through");
        }
    }

    /// Independent reference: the plane crossing and barycentrics from signed
    /// volumes in f64 (Möller–Trumbore's algebra, written differently).
    fn reference(ray: &Ray, a: Vec3, b: Vec3, c: Vec3) -> Option<(f64, f64, f64)> {
        let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        let (a, b, c) = (a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
        let (e1, e2) = (b - a, c - a);
        let p = d.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 * e1.length() * e2.length() * d.length() {
            return None;
        }
        let s = o - a;
        let u = s.dot(p) / det;
        let q = s.cross(e1);
        let v = d.dot(q) / det;
        let t = e2.dot(q) / det;
        (u >= 0.0 && v >= 0.0 && u + v <= 1.0).then_some((t, u, v))
    }

    fn log_uniform() -> impl Strategy<Value = f32> {
        (-3.0f32..3.0, any::<bool>()).prop_map(|(e, s)| if s { 10f32.powf(e) } else { -(10f32.powf(e)) })
    }

    fn vec_in(lo: f32, hi: f32) -> impl Strategy<Value = Vec3> {
        (lo..hi, lo..hi, lo..hi).prop_map(|(x, y, z)| vec3(x, y, z))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]

        /// Against the f64 reference, away from edges (where either answer is
        /// right): same hit/miss, t and uv to f32 accuracy.
        #[test]
        fn matches_the_f64_reference(
            a in vec_in(-2.0, 2.0), b in vec_in(-2.0, 2.0), c in vec_in(-2.0, 2.0),
            bary in (0.0f32..1.0, 0.0f32..1.0), far in 1.0f32..1e3, off in vec_in(-1.0, 1.0),
            scale in log_uniform(), outside in any::<bool>(),
        ) {
            let (mut s, mut r) = bary;
            if s + r > 1.0 { s = 1.0 - s; r = 1.0 - r; }
            let target = if outside { a + (b - a) * (1.5 + s) + (c - a) * r } else { a + (b - a) * s + (c - a) * r };
            let origin = target + off.normalize_or(Vec3::X) * far;
            let ray = Ray::new(origin, (target - origin) * scale.abs() / far);
            let got = Triangle::new(a, b, c).cast(&ray, Interval::ALL);
            let Some((t, u, v)) = reference(&ray, a, b, c) else { return Ok(()); };
            let edge = u.min(v).min(1.0 - u - v);
            prop_assume!(edge.abs() > 1e-4);
            let size = (b - a).length().max((c - a).length()) as f64;
            let n = (b - a).cross(c - a).length() as f64;
            prop_assume!(n > 1e-3 * size * size); // not a sliver
            let h = got.expect("reference hits");
            let sc = (origin.length() as f64).max(size);
            prop_assert!((h.t as f64 - t).abs() * (ray.dir.length() as f64) <= 1e-6 * sc, "t {} vs {}", h.t, t);
            prop_assert!((h.point.as_dvec3() - (ray.origin.as_dvec3() + ray.dir.as_dvec3() * t)).length() <= 1e-6 * sc);
            let uv = h.uv.unwrap();
            prop_assert!((uv.x as f64 - u).abs() <= 1e-4 && (uv.y as f64 - v).abs() <= 1e-4);
        }

        /// The single-triangle path (cyclic shear with its flip flag, `det`
        /// left to the range test) answers
        /// as `ray_triangle` (the mesh's kernel) does: same hit or miss,
        /// bit-identical `t`, `uv` and `front_face`, with and without
        /// culling, for any signs of the direction; on a 1/8 grid, so that
        /// rays through edges, vertices and the triangle's plane occur.
        #[test]
        fn cast_and_hits_answer_as_ray_triangle(
            k in proptest::array::uniform9(-16i32..16), o in proptest::array::uniform3(-64i32..64),
            d in proptest::array::uniform3(-8i32..8), cull in any::<bool>(), lo in -4i32..4, len in 0i32..64,
        ) {
            let g = |i: usize| vec3(k[3 * i] as f32, k[3 * i + 1] as f32, k[3 * i + 2] as f32) / 8.0;
            let tri = Triangle::new(g(0), g(1), g(2)).with_back_face_culling(cull);
            let ray = Ray::new(vec3(o[0] as f32, o[1] as f32, o[2] as f32) / 8.0, vec3(d[0] as f32, d[1] as f32, d[2] as f32) / 4.0);
            let range = Interval::new(lo as f32 / 4.0, (lo + len) as f32 / 4.0);
            let want = ray_triangle(&ray, tri.a, tri.b, tri.c, range, cull);
            let got = tri.cast(&ray, range);
            prop_assert_eq!(tri.hits(&ray, range), want.is_some());
            prop_assert_eq!(got.is_some(), want.is_some(), "{:?} {:?}", got, want);
            if let (Some(h), Some(w)) = (got, want) {
                prop_assert_eq!((h.t, h.uv, h.front_face), (w.t, Some(vec2(w.u, w.v)), w.front_face));
            }
        }

        /// A ray through a vertex always hits (touching counts). Coordinates
        /// on a 1/64 grid make `origin + 1·d` land on the vertex exactly, so
        /// the line really passes through it; the scaled shear then puts the
        /// vertex at (0, 0) exactly, for any direction.
        #[test]
        fn rays_through_a_vertex_always_hit(
            k in proptest::array::uniform9(-320i32..320), o in proptest::array::uniform3(-2000i32..2000),
            which in 0usize..3, scale in log_uniform(),
        ) {
            let g = |i: usize| vec3(k[3 * i] as f32, k[3 * i + 1] as f32, k[3 * i + 2] as f32) / 64.0;
            let tri = Triangle::new(g(0), g(1), g(2));
            prop_assume!(tri.normal().is_some());
            let target = [tri.a, tri.b, tri.c][which];
            let origin = vec3(o[0] as f32, o[1] as f32, o[2] as f32) / 64.0;
            let d = target - origin;
            prop_assume!(d != Vec3::ZERO && tri.normal().unwrap().dot(d.normalize()).abs() > 1e-6);
            // Scaling d by a power of two keeps it exact.
            let p2 = 2f32.powi(scale.abs().log2().round() as i32);
            let ray = Ray::new(origin, d * p2);
            let h = tri.cast(&ray, Interval::ALL);
            prop_assert!(h.is_some(), "{ray:?}");
            prop_assert_eq!(h.unwrap().t, 1.0 / p2);
        }
    }

    /// A coordinate for the adversarial rays: grid values (so that rays run
    /// along axes and through vertices and edges), magnitudes from 1e-30 to
    /// 1e30 of either sign, and the special values.
    fn wild() -> impl Strategy<Value = f32> {
        prop_oneof![
            4 => (-16i32..16).prop_map(|k| k as f32 / 8.0),
            3 => (-30.0f32..30.0, any::<bool>()).prop_map(|(e, s)| if s { 10f32.powf(e) } else { -(10f32.powf(e)) }),
            1 => prop::sample::select(vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, f32::MIN_POSITIVE, 1e-45]),
        ]
    }

    fn wild_vec() -> impl Strategy<Value = Vec3> {
        (wild(), wild(), wild()).prop_map(|(x, y, z)| vec3(x, y, z))
    }

    /// `t`, `u`, `v` and `front_face` as bits, for a bit-for-bit comparison
    /// (signed zeros included).
    fn bits(t: f32, u: f32, v: f32, front: bool) -> (u32, u32, u32, bool) {
        (t.to_bits(), u.to_bits(), v.to_bits(), front)
    }

    /// The same with zeros of both signs taken as one (`+0.0`).
    fn values(t: f32, u: f32, v: f32, front: bool) -> (u32, u32, u32, bool) {
        bits(t + 0.0, u + 0.0, v + 0.0, front)
    }

    /// A triangle and ray of the adversarial battery: half the cases on a 1/8
    /// grid throughout (edges, vertices and the triangle's plane are met
    /// exactly), some with a through-edge or far origin.
    fn adversarial_case(
        [a, b, c, o, d]: [Vec3; 5],
        grid: [i32; 9],
        use_grid: u8,
        cull: bool,
    ) -> (Triangle, Ray) {
        let g = |i: usize| vec3(grid[3 * i] as f32, grid[3 * i + 1] as f32, grid[3 * i + 2] as f32) / 8.0;
        let on_grid = Triangle { a: g(0), b: g(1), c: g(2), cull_back_faces: cull };
        match use_grid {
            0 => (on_grid, Ray::new(o, d)),
            1 => (on_grid, Ray::new(g(0) + (g(1) - g(0)) * 0.5 - d, d)),
            2 => (Triangle { a, b, c, cull_back_faces: cull }, Ray::new(o, d)),
            _ => (on_grid, Ray::new(o * 1e7, g(2) - o * 1e7)),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

        /// The single-triangle kernel (SSE2 on x86_64) on adversarial input
        /// (axis-parallel and grazing rays, rays through edges and vertices
        /// — grid values —, origins on the triangle's plane and far away,
        /// huge and tiny magnitudes, ±∞ and NaN components, zero directions,
        /// degenerate triangles, any range): bit for bit the arithmetic it
        /// replaces (`ShearedRay::new_cyclic` and `intersect_candidate`,
        /// signed zeros included), and `ray_triangle`'s answer — the same
        /// hit or miss and the same `t`, `u`, `v` and `front_face`, bit for
        /// bit except for the sign of a zero (the cyclic shear computes
        /// `−U` where `ray_triangle`'s swapped one computes `U`, and
        /// `fl(x − x) = +0` either way, so an exact zero can come out with
        /// the other sign; `0.0 == -0.0`). A hit is never non-finite.
        #[test]
        fn kernel_equals_ray_triangle_bit_for_bit_on_adversarial_rays(
            a in wild_vec(), b in wild_vec(), c in wild_vec(), o in wild_vec(), d in wild_vec(),
            grid in proptest::array::uniform9(-16i32..16), use_grid in 0u8..4, cull in any::<bool>(),
            lo in wild(), len in wild(),
        ) {
            let (tri, ray) = adversarial_case([a, b, c, o, d], grid, use_grid, cull);
            let range = Interval::new(lo, lo + len.abs());
            let want = ray_triangle(&ray, tri.a, tri.b, tri.c, range, cull);
            let (sr, flip) = ShearedRay::new_cyclic(&ray);
            let (was_ok, was) = sr.intersect_candidate(&tri.a, &tri.b, &tri.c, range, cull, flip);
            prop_assert_eq!(was_ok, want.is_some());
            prop_assert_eq!(tri.hits(&ray, range), want.is_some(), "{:?} {:?} {:?}", tri, ray, range);
            let got = tri.cast(&ray, range);
            prop_assert_eq!(got.is_some(), want.is_some());
            if let (Some(h), Some(w)) = (got, want) {
                let uv = h.uv.unwrap();
                let got = bits(h.t, uv.x, uv.y, h.front_face);
                prop_assert_eq!(got, bits(was.t, was.u, was.v, was.front_face), "{:?} {:?}", tri, ray);
                prop_assert_eq!(values(h.t, uv.x, uv.y, h.front_face), values(w.t, w.u, w.v, w.front_face));
                prop_assert!(h.t.is_finite() && h.point.is_finite() && h.normal.is_finite(), "{:?}", h);
            }
        }

        /// The placed triangle's kernel (`Placed`, from its vertex layout;
        /// SSE2 on x86_64) on the adversarial input above, mirrored
        /// or not: bit for bit the single-triangle kernel
        /// (`Triangle::candidate`) — hit or miss, `t`, `u`, `v`,
        /// `front_face`, signed zeros included — and
        /// on a hit the same `Hit` (point, normal, `uv`).
        #[test]
        fn placed_kernel_equals_the_triangle_kernel_bit_for_bit(
            a in wild_vec(), b in wild_vec(), c in wild_vec(), o in wild_vec(), d in wild_vec(),
            grid in proptest::array::uniform9(-16i32..16), use_grid in 0u8..4, cull in any::<bool>(),
            mirrored in any::<bool>(), lo in wild(), len in wild(),
        ) {
            let (tri, ray) = adversarial_case([a, b, c, o, d], grid, use_grid, cull);
            let range = Interval::new(lo, lo + len.abs());
            let placed = Placed::new(tri, mirrored);
            let (ok, h) = placed.candidate(&ray, range);
            let (want_ok, w) = tri.candidate(&ray, range, mirrored);
            prop_assert_eq!(ok, want_ok, "{:?} {:?} {:?}", tri, ray, range);
            prop_assert_eq!(placed.hits(&ray, range), want_ok);
            if ok {
                prop_assert_eq!(bits(h.t, h.u, h.v, h.front_face), bits(w.t, w.u, w.v, w.front_face), "{:?} {:?}", tri, ray);
                let (got, want) = (placed.cast_candidate(&ray, range).1, tri.hit_candidate(&ray, range, mirrored).1);
                prop_assert_eq!(
                    (got.point.to_array().map(f32::to_bits), got.normal.to_array().map(f32::to_bits)),
                    (want.point.to_array().map(f32::to_bits), want.normal.to_array().map(f32::to_bits))
                );
                prop_assert_eq!((got.uv, got.part, got.front_face), (want.uv, want.part, want.front_face));
            }
        }

        /// A placed triangle is cast in the world frame (`Triangle::placed`),
        /// under similarities and non-uniform scales alike: against the
        /// local query (the ray taken into
        /// the triangle's frame, the hit brought back), away from the edges,
        /// the same hit or miss, `front_face` and culling (mirrors
        /// included), and `t`, the point, the normal and `uv` to f32
        /// accuracy.
        #[test]
        fn placed_triangle_answers_as_the_local_query(
            a in vec_in(-2.0, 2.0), b in vec_in(-2.0, 2.0), c in vec_in(-2.0, 2.0),
            bary in (0.0f32..1.0, 0.0f32..1.0), off in vec_in(-1.0, 1.0), far in 1.0f32..50.0,
            axis in vec_in(-1.0, 1.0), angle in -3.0f32..3.0, shift in vec_in(-20.0, 20.0),
            scale in 0.1f32..10.0, stretch in (0.3f32..3.0, 0.3f32..3.0), uniform in any::<bool>(),
            mirror in any::<bool>(), cull in any::<bool>(), outside in any::<bool>(),
        ) {
            let tri = Triangle::new(a, b, c).with_back_face_culling(cull);
            let n = (b - a).cross(c - a);
            prop_assume!(n.length() > 1e-2);
            let rot = glam::Quat::from_axis_angle(axis.normalize_or(Vec3::X), angle);
            let (sy, sz) = if uniform { (1.0, 1.0) } else { stretch };
            let s = vec3(if mirror { -scale } else { scale }, scale * sy, scale * sz);
            let m = Affine3A::from_scale_rotation_translation(s, rot, shift);
            let placed = crate::Transformed::new(tri, m);
            let (mut u, mut v) = bary;
            if u + v > 1.0 { u = 1.0 - u; v = 1.0 - v; }
            prop_assume!(u.min(v).min(1.0 - u - v) > 1e-3);
            let target = if outside { a + (b - a) * (1.5 + u) + (c - a) * v } else { a + (b - a) * u + (c - a) * v };
            let local = Ray::new(target + off.normalize_or(Vec3::Z) * far, -off.normalize_or(Vec3::Z) * far);
            prop_assume!(local.dir.normalize().dot(n.normalize()).abs() > 1e-2);
            let world = Ray::new(m.transform_point3(local.origin), m.transform_vector3(local.dir));
            let reference = tri.cast(&placed.to_local(&world), Interval::FORWARD).map(|h| placed.to_world(&world, h));
            let got = placed.cast(&world, Interval::FORWARD);
            prop_assert_eq!(got.is_some(), reference.is_some(), "{:?} {:?}", got, reference);
            prop_assert_eq!(placed.hits(&world, Interval::FORWARD), reference.is_some());
            prop_assert_eq!(placed.cast_all(&world, Interval::FORWARD).len(), usize::from(reference.is_some()));
            if let (Some(h), Some(r)) = (got, reference) {
                // The two round differently (the mapped ray against the
                // mapped vertices): a few f32 ulps of the origin's distance
                // `reach` (local units), amplified by 1/cos for `t` and the
                // point along the ray, and by edge length / area for `uv`.
                let cos = local.dir.normalize().dot(n.normalize()).abs();
                let (lo, hi) = (s.abs().min_element(), s.abs().max_element());
                let reach = (far + shift.length() / lo + 4.0) * hi / lo;
                let edge = (b - a).length().max((c - a).length()).max((c - b).length());
                prop_assert!((h.t - r.t).abs() <= 2e-6 * reach / (far * cos), "t {} vs {}", h.t, r.t);
                prop_assert!(h.point.distance(r.point) <= 2e-6 * reach * hi / cos, "{} vs {}", h.point, r.point);
                prop_assert!(h.normal.dot(r.normal) > 1.0 - 1e-5, "{} vs {}", h.normal, r.normal);
                prop_assert_eq!(h.front_face, r.front_face);
                let tol = 4e-6 * reach * edge / (n.length() * cos);
            prop_assert!((h.uv.unwrap() - r.uv.unwrap()).abs().max_element() <= tol, "uv {} vs {} tol {}", h.uv.unwrap(), r.uv.unwrap(), tol);
            }
        }
    }
}
