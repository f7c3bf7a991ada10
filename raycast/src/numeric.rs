//! Robust floating-point building blocks, each tested against f64.

/// γ(n) = n·u / (1 − n·u), u = f32::EPSILON / 2: bound on the relative error of
/// `n` chained f32 roundings (Higham, *Accuracy and Stability of Numerical
/// Algorithms*, §3.1; pbrt-v4 `gamma`).
#[inline]
pub const fn gamma(n: u32) -> f32 {
    let nu = n as f32 * (f32::EPSILON * 0.5);
    nu / (1.0 - nu)
}

/// `a·b − c·d` with about one rounding of error.
///
/// The product of two f32 values has at most 48 significant bits, so it is
/// exact in f64; the difference of the two exact products is then rounded
/// once in f64 (relative error 2⁻⁵³) and once more to f32, which gives a
/// result within one f32 ulp of the exact value — as good as Kahan's FMA
/// algorithm (Jeannerod, Louvet & Muller 2013), without needing hardware FMA:
/// `f32::mul_add` is a slow libm call on targets built without the `fma`
/// feature, while f64 multiplies are as cheap as f32 ones. Used wherever two
/// products nearly cancel (edge functions, discriminants, cross products).
#[inline]
pub fn difference_of_products(a: f32, b: f32, c: f32, d: f32) -> f32 {
    (f64::from(a) * f64::from(b) - f64::from(c) * f64::from(d)) as f32
}

/// `a·b + c·d` with about one rounding of error (see [`difference_of_products`]).
#[inline]
pub fn sum_of_products(a: f32, b: f32, c: f32, d: f32) -> f32 {
    difference_of_products(a, b, -c, d)
}

/// Real roots `t0 <= t1` of `a·t² + 2·b·t + c = 0` given the reduced
/// discriminant `disc = b² − a·c >= 0` (the caller computes it in a
/// cancellation-free way for its shape).
///
/// The root of larger magnitude is `q / a` with `q = −(b + sign(b)·√disc)`,
/// which adds numbers of the same sign; the other is `c / q` (Vieta), so
/// neither root suffers catastrophic cancellation (Press et al., *Numerical
/// Recipes* §5.6; pbrt-v4 `Quadratic`). When `q == 0` (b = disc = 0) both
/// roots are `−b / a = 0`... handled by falling back to `-b / a`.
#[inline]
pub fn quadratic_roots(a: f32, b: f32, c: f32, disc: f32) -> (f32, f32) {
    let root = disc.sqrt();
    let q = if b < 0.0 { -b + root } else { -b - root };
    if q == 0.0 {
        let t = -b / a;
        return (t, t);
    }
    let t0 = q / a;
    let t1 = c / q;
    if t0 <= t1 {
        (t0, t1)
    } else {
        (t1, t0)
    }
}

/// An [`Interval`](crate::Interval) as f64 bounds, for testing the f64
/// parameters of the quadric kernels without rounding each to f32 first.
///
/// `[min, max]` is clamped to the finite f32 range, and a NaN end makes it
/// empty. Rounding to f32 is monotonic and the ends are f32 values, so
/// `lo <= t <= hi` implies that `t as f32` lies in `[min, max]` and is
/// finite. (A `t` just outside an end that would round onto it is left out:
/// the exact crossing is outside the interval.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds64 {
    lo: f64,
    hi: f64,
}

/// `f32::MAX` in f64: the largest `|t|` whose f32 rounding is finite (up to
/// the half-ulp band above it, which is treated as out of range).
pub(crate) const F32_MAX: f64 = f32::MAX as f64;

impl Bounds64 {
    /// The bounds of `range`.
    #[inline(always)]
    pub(crate) fn new(range: crate::Interval) -> Self {
        let (min, max) = (f64::from(range.min), f64::from(range.max));
        // NaN fails both comparisons: lo = +∞ (or hi = −∞), an empty range.
        let lo = if min >= -F32_MAX {
            min
        } else if min < -F32_MAX {
            -F32_MAX
        } else {
            f64::INFINITY
        };
        let hi = if max <= F32_MAX {
            max
        } else if max > F32_MAX {
            F32_MAX
        } else {
            f64::NEG_INFINITY
        };
        Self { lo, hi }
    }

    /// The two ends, `[lo, hi]` (empty, `lo > hi`, for a NaN end).
    #[inline(always)]
    pub(crate) fn ends(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// Which root `t∓ = (−b ∓ √h)/a` of `a·t² + 2b·t + c` (`a > 0`,
    /// `h = b² − a·c >= 0` the reduced discriminant) lies in the bounds,
    /// without the square root or the division (so it can be decided while
    /// the root is being computed).
    ///
    /// With `g_x = −b − x·a = a·(t_m − x)` (`t_m = −b/a` the vertex):
    /// `t− >= lo ⇔ g_lo >= √h ⇔ g_lo >= 0 ∧ g_lo² >= h`, and
    /// `t+ >= lo ⇔ g_lo >= −√h ⇔ g_lo >= 0 ∨ g_lo² <= h`; at the upper end,
    /// with `s_hi = −g_hi`, `t+ <= hi ⇔ s_hi >= 0 ∧ s_hi² >= h` and
    /// `t− <= hi ⇔ s_hi >= 0 ∨ s_hi² <= h`. So with the pair
    /// `s = (g_lo, −g_hi)`, "strong" `s >= 0 ∧ s² >= h` and "weak"
    /// `s >= 0 ∨ s² <= h` per lane, `t−` is in when strong(lo) ∧ weak(hi)
    /// and `t+` when weak(lo) ∧ strong(hi): one 2-lane multiply-add, a
    /// square, three compares and a swap of lanes.
    ///
    /// Returns `−x` if `t−` is in and `x` otherwise (the sign to give the
    /// root, applied to `x = 1/a` by the caller, as a bit operation: no
    /// branch, no select through a flag), and whether either root is in.
    ///
    /// Exactness: these are the exact equivalences, so the only errors are
    /// the f64 roundings of `b`, `x·a`, `g_x` and `g_x²` (~1e-16 relative):
    /// the answer can differ from testing rounded roots only for a root
    /// within ~1e-16·|t| of an end, which no f32 input resolves. The ends
    /// are clamped to `±F32_MAX` (so `x·a` and `g_x²` stay finite for any f32
    /// ray: `a <= 3·F32_MAX²`), and a NaN end (`lo = +∞` or `hi = −∞`) makes
    /// `s = −∞`, failing both tests of its lane. `a > 0` and a finite `h` are
    /// the caller's to check (for `a = 0` every test would pass).
    #[inline(always)]
    pub(crate) fn pick_root(self, a: f64, b: f64, h: f64, x: f64) -> (f64, bool) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{
                _mm_add_pd, _mm_and_pd, _mm_cmpge_pd, _mm_cmple_pd, _mm_cvtsd_f64, _mm_movemask_pd,
                _mm_mul_pd, _mm_or_pd, _mm_set1_pd, _mm_set_pd, _mm_set_sd, _mm_setzero_pd, _mm_shuffle_pd,
                _mm_xor_pd,
            };
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe {
                // s = (−b − lo·a, b + hi·a); `_mm_set_pd` takes (lane 1, lane 0).
                let s =
                    _mm_add_pd(_mm_set_pd(b, -b), _mm_mul_pd(_mm_set_pd(self.hi, -self.lo), _mm_set1_pd(a)));
                let (s2, h) = (_mm_mul_pd(s, s), _mm_set1_pd(h));
                let nonneg = _mm_cmpge_pd(s, _mm_setzero_pd());
                let strong = _mm_and_pd(nonneg, _mm_cmpge_pd(s2, h));
                let weak = _mm_or_pd(nonneg, _mm_cmple_pd(s2, h));
                // Lane 0: t− in; lane 1: t+ in.
                let inside = _mm_and_pd(strong, _mm_shuffle_pd::<1>(weak, weak));
                let sign = _mm_and_pd(inside, _mm_set_sd(-0.0));
                (_mm_cvtsd_f64(_mm_xor_pd(_mm_set_sd(x), sign)), _mm_movemask_pd(inside) != 0)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let (s_lo, s_hi) = (-b - self.lo * a, b + self.hi * a);
            let strong = |s: f64| (s >= 0.0) & (s * s >= h);
            let weak = |s: f64| (s >= 0.0) | (s * s <= h);
            let first = strong(s_lo) & weak(s_hi);
            (if first { -x } else { x }, first | (weak(s_lo) & strong(s_hi)))
        }
    }

    /// Whether `num / den` is in the bounds, for `den != 0`, without the
    /// division: `lo·den² <= num·den <= hi·den²` (multiplying by `den² > 0`
    /// keeps the order). Each product is rounded once (~1e-16 relative), so
    /// this can differ from testing the rounded quotient only for a quotient
    /// within ~1e-16 of an end. For f64 values built from f32 inputs (sums of
    /// products of two f32, `|den| <= 4·F32_MAX²` and `>= 2⁻²⁹⁸` when not 0)
    /// no product overflows or underflows to 0: `den² <= 1e156` and the
    /// ends are clamped to `±F32_MAX`. A NaN operand fails both compares.
    #[inline(always)]
    pub(crate) fn contains_quotient(self, num: f64, den: f64) -> bool {
        let (p, q) = (num * den, den * den);
        (self.lo * q <= p) & (p <= self.hi * q)
    }

    /// `lo <= t <= hi` (false for NaN).
    #[inline(always)]
    pub(crate) fn contains(self, t: f64) -> bool {
        (self.lo <= t) & (t <= self.hi)
    }
}

/// True when every component of `o` and `d` is finite: NaN or ±∞ makes
/// `x − x` NaN, so this is one 4-lane compare and one mask test, without the
/// per-component bit tests (and branches) of `is_finite`.
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn all_finite(o: glam::Vec3A, d: glam::Vec3A) -> bool {
    ((o - o) + (d - d)).cmpeq(glam::Vec3A::ZERO).all()
}

/// `if c { a } else { b }` without a branch.
///
/// LLVM turns a scalar select whose operand is a square root or a division
/// into a branch around it; with a data-dependent condition (which end of a
/// chord, which cap) that branch is mispredicted about half the time, far
/// more costly than the root. A 2-lane SSE2 and/andnot/or is a vector
/// select, which stays a select.
#[inline(always)]
pub(crate) fn select(c: bool, a: f64, b: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            _mm_and_pd, _mm_andnot_pd, _mm_castsi128_pd, _mm_cvtsd_f64, _mm_or_pd, _mm_set1_epi64x,
            _mm_set1_pd,
        };
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            let m = _mm_castsi128_pd(_mm_set1_epi64x(-i64::from(c)));
            _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(m, _mm_set1_pd(a)), _mm_andnot_pd(m, _mm_set1_pd(b))))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if c {
            a
        } else {
            b
        }
    }
}

/// Relative slack of the f64 "does the line touch the round surface" tests
/// of the quadric kernels: a squared half chord `h² = r² − l²` (`l` the
/// distance from the centre or axis to the line) counts as touching when
/// `h² >= −TOUCH_REL·r²`, i.e. `l <= r·(1 + ε/2)`.
///
/// In f64 the test is exact to ~1e-16 for the given f32 values, but inputs
/// written as tangent (an origin at `(0.6, y, 0.8)` on a unit cylinder) are
/// off by their own f32 rounding, ~ε/2 relative; such a ray is meant to touch
/// and did touch with the f32 kernels. A line accepted this way is at most
/// ~6e-8·r from the surface, far below the exactness target.
pub(crate) const TOUCH_REL: f64 = f32::EPSILON as f64;

/// The next f32 above `x` (towards +∞); `x` itself for +∞ and NaN.
#[inline]
pub fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let bits = x.to_bits();
    f32::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

/// The next f32 below `x` (towards −∞); `x` itself for −∞ and NaN.
#[inline]
pub fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// The ends `(lo, hi)` of `range` as bounds on an `f64` before its rounding
/// to `f32`: `lo <= x <= hi` exactly when `x as f32` is finite and lies in
/// `[range.min, range.max]` (false for a NaN `x` or a NaN end). A kernel
/// that computes `t` in `f64` can then test the range without waiting for
/// the conversion, and still decide as the `f32` test does, bit for bit.
///
/// Rounding to nearest is monotonic, so `{x : fl(x) >= m}` is `{x >= θ}`.
/// For an `f32` `m` with `f32` neighbour `p` below it, `x` rounds to `m` or
/// above when it is above the midpoint `(p + m)/2`, and at the midpoint
/// itself when the tie goes to `m`, that is when `m`'s last mantissa bit is
/// 0 (ties to even); otherwise `θ` is the next `f64` above the midpoint.
/// The midpoint has at most 25 significant bits: exact in `f64`. Below
/// `−f32::MAX` the neighbour is `−2^128` (what rounds beyond it is `−∞`,
/// and the tie goes to the infinity): the clamp of `min` to `−f32::MAX`
/// makes the test refuse what rounds to `−∞`. The upper end mirrors this.
///
/// Branch-free (selects and integer steps on the bits): a kernel calls it
/// per query, and a closest-hit search narrows `max` to each hit found, so
/// that the parity of the ends is as random as the hits.
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the x86_64 kernels
pub(crate) fn rounding_bounds(range: crate::Interval) -> (f64, f64) {
    // NaN fails both comparisons and stays NaN (an empty range).
    let min = if range.min < -f32::MAX { -f32::MAX } else { range.min };
    let max = if range.max > f32::MAX { f32::MAX } else { range.max };
    // The f32 neighbours; past `±f32::MAX` they are `±∞`, taken as `±2^128`
    // by the clamps (a NaN end keeps its midpoint NaN, whatever these are).
    let beyond = 2f64.powi(128);
    let below = f64::from(f32_step(min, -1)).max(-beyond);
    let above = f64::from(f32_step(max, 1)).min(beyond);
    let lo_mid = (below + f64::from(min)) * 0.5;
    let hi_mid = (f64::from(max) + above) * 0.5;
    // An odd end moves its midpoint one f64 towards the end: up for `lo`,
    // down for `hi`. A midpoint is never 0 (an end and its
    // neighbour are not opposite), so one step on the bits is `±1` by its
    // sign: away from zero `+1`. An infinite midpoint comes from an
    // infinite end, whose bits are even; a NaN one stays NaN (its quiet
    // bit is set, so `±1` cannot reach an infinity).
    let nudge = |mid: f64, end: f32, up: bool| {
        let odd = u64::from(end.to_bits() & 1);
        let away = (mid > 0.0) == up;
        f64::from_bits(if away { mid.to_bits().wrapping_add(odd) } else { mid.to_bits().wrapping_sub(odd) })
    };
    (nudge(lo_mid, min, true), nudge(hi_mid, max, false))
}

/// The `f32` `dir` (±1) places after `x` in the order of values, `−0` and
/// `+0` counting as one: the bits as sign and magnitude mapped to a
/// monotonic integer (negative values to `i32::MIN − bits`, both zeros to
/// 0), stepped, and mapped back. `±f32::MAX` steps to `±∞`; only finite
/// `x` (and `±∞` towards the finite side) are stepped by its callers.
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the x86_64 kernels
fn f32_step(x: f32, dir: i32) -> f32 {
    let key = |b: i32| if b >= 0 { b } else { i32::MIN.wrapping_sub(b) };
    let k = key(x.to_bits() as i32).wrapping_add(dir);
    f32::from_bits(key(k) as u32)
}

/// The next `f64` after `x` towards `+∞` (`up`) or `−∞`; `x` itself when
/// it is infinite or NaN.
#[cfg(test)]
fn next_f64(x: f64, up: bool) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    // Away from zero adds one to the bits (same sign), towards zero subtracts.
    let away = (x > 0.0) == up;
    f64::from_bits(if away { x.to_bits() + 1 } else { x.to_bits() - 1 })
}

/// A per-ray condition as an SSE2 lane mask (all ones or all zeros), for
/// the branch-free kernel.
///
/// [`select`] takes a `bool`, and a comparison of two f64 that feeds it
/// goes through the integer registers (`ucomisd`, `seta`, `neg`, `movq`,
/// `pshufd`) before the and/andnot/or; a `cmpltsd` gives the mask
/// directly, masks combine with one `andpd`/`orpd` each, and only the
/// final answer is moved to a `bool` (`movmskpd`). Same semantics as the
/// `bool` forms: an ordered comparison is false for NaN.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mask(
    #[cfg(target_arch = "x86_64")] core::arch::x86_64::__m128d,
    #[cfg(not(target_arch = "x86_64"))] bool,
);

#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
impl Mask {
    /// `x < y`.
    #[inline(always)]
    pub(crate) fn lt(x: f64, y: f64) -> Self {
        use core::arch::x86_64::{_mm_cmplt_sd, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_cmplt_sd(_mm_set_sd(x), _mm_set_sd(y)) })
    }
    /// `x <= y`.
    #[inline(always)]
    pub(crate) fn le(x: f64, y: f64) -> Self {
        use core::arch::x86_64::{_mm_cmple_sd, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_cmple_sd(_mm_set_sd(x), _mm_set_sd(y)) })
    }
    /// `x == y`.
    #[inline(always)]
    pub(crate) fn eq(x: f64, y: f64) -> Self {
        use core::arch::x86_64::{_mm_cmpeq_sd, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_cmpeq_sd(_mm_set_sd(x), _mm_set_sd(y)) })
    }
    /// `x != y` (true for NaN).
    #[inline(always)]
    pub(crate) fn ne(x: f64, y: f64) -> Self {
        use core::arch::x86_64::{_mm_cmpneq_sd, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_cmpneq_sd(_mm_set_sd(x), _mm_set_sd(y)) })
    }
    /// `self && !other`.
    #[inline(always)]
    pub(crate) fn and_not(self, other: Self) -> Self {
        use core::arch::x86_64::_mm_andnot_pd;
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_andnot_pd(other.0, self.0) })
    }
    /// `if self { a } else { b }`.
    #[inline(always)]
    pub(crate) fn pick(self, a: f64, b: f64) -> f64 {
        use core::arch::x86_64::{_mm_and_pd, _mm_andnot_pd, _mm_cvtsd_f64, _mm_or_pd, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(self.0, _mm_set_sd(a)), _mm_andnot_pd(self.0, _mm_set_sd(b))))
        }
    }
    /// `if self { x } else { −x }`: the sign bit flipped by an and-not and
    /// a xor, without a select.
    #[inline(always)]
    pub(crate) fn keep_or_negate(self, x: f64) -> f64 {
        use core::arch::x86_64::{_mm_andnot_pd, _mm_cvtsd_f64, _mm_set_sd, _mm_xor_pd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_cvtsd_f64(_mm_xor_pd(_mm_set_sd(x), _mm_andnot_pd(self.0, _mm_set_sd(-0.0)))) }
    }
    /// `if self { a } else { b }` for masks.
    #[inline(always)]
    pub(crate) fn pick_mask(self, a: Self, b: Self) -> Self {
        use core::arch::x86_64::{_mm_and_pd, _mm_andnot_pd, _mm_or_pd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_or_pd(_mm_and_pd(self.0, a.0), _mm_andnot_pd(self.0, b.0)) })
    }
    /// The condition as a `bool`.
    #[inline(always)]
    pub(crate) fn get(self) -> bool {
        use core::arch::x86_64::_mm_movemask_pd;
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_movemask_pd(self.0) & 1 != 0 }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
impl core::ops::BitAnd for Mask {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        use core::arch::x86_64::_mm_and_pd;
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_and_pd(self.0, other.0) })
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
impl core::ops::BitOr for Mask {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, other: Self) -> Self {
        use core::arch::x86_64::_mm_or_pd;
        // SAFETY: SSE2 is part of the x86-64 baseline.
        Self(unsafe { _mm_or_pd(self.0, other.0) })
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Mask {
    pub(crate) fn lt(x: f64, y: f64) -> Self {
        Self(x < y)
    }
    pub(crate) fn le(x: f64, y: f64) -> Self {
        Self(x <= y)
    }
    pub(crate) fn eq(x: f64, y: f64) -> Self {
        Self(x == y)
    }
    pub(crate) fn ne(x: f64, y: f64) -> Self {
        Self(x != y)
    }
    pub(crate) fn and_not(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }
    pub(crate) fn pick(self, a: f64, b: f64) -> f64 {
        crate::numeric::select(self.0, a, b)
    }
    pub(crate) fn pick_mask(self, a: Self, b: Self) -> Self {
        Self(if self.0 { a.0 } else { b.0 })
    }
    pub(crate) fn keep_or_negate(self, x: f64) -> f64 {
        if self.0 {
            x
        } else {
            -x
        }
    }
    pub(crate) fn get(self) -> bool {
        self.0
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl core::ops::BitAnd for Mask {
    type Output = Self;
    fn bitand(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl core::ops::BitOr for Mask {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// `(n0/d0, n1/d1)` as one 2-lane division (LLVM keeps two scalar ones).
#[inline(always)]
pub(crate) fn div2(n0: f64, n1: f64, d0: f64, d1: f64) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvtsd_f64, _mm_div_pd, _mm_set_pd, _mm_unpackhi_pd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            let q = _mm_div_pd(_mm_set_pd(n1, n0), _mm_set_pd(d1, d0));
            (_mm_cvtsd_f64(q), _mm_cvtsd_f64(_mm_unpackhi_pd(q, q)))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (n0 / d0, n1 / d1)
    }
}

/// `x` if `x > lo`, else `lo` (also for a NaN `x`): one `maxsd`, where
/// `f64::max` adds a NaN fix-up of four instructions.
#[inline(always)]
pub(crate) fn at_least(x: f64, lo: f64) -> f64 {
    if x > lo {
        x
    } else {
        lo
    }
}

/// `x` if `x < hi`, else `hi` (also for a NaN `x`): one `minsd`.
#[inline(always)]
pub(crate) fn at_most(x: f64, hi: f64) -> f64 {
    if x < hi {
        x
    } else {
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ulp_diff(a: f32, b: f32) -> u32 {
        // Distance in representable values; both finite.
        let key = |x: f32| {
            let i = x.to_bits() as i32;
            if i < 0 {
                i32::MIN - i
            } else {
                i
            }
        };
        (key(a) as i64 - key(b) as i64).unsigned_abs() as u32
    }

    #[test]
    fn gamma_is_about_n_half_epsilons() {
        assert!(gamma(1) > f32::EPSILON * 0.5 && gamma(1) < f32::EPSILON * 0.5001);
        assert!(gamma(3) > gamma(2));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        /// Near-cancelling inputs are built on purpose: d = a·b/c perturbed by a few ulp.
        #[test]
        fn difference_of_products_within_2ulp_of_f64(a in -1e3f32..1e3, b in -1e3f32..1e3, c in 0.5f32..1e3, k in -4i32..4) {
            let d0 = a * b / c;
            let d = f32::from_bits((d0.to_bits() as i32 + k) as u32);
            prop_assume!(d.is_finite());
            let exact = (a as f64) * (b as f64) - (c as f64) * (d as f64);
            let got = difference_of_products(a, b, c, d);
            let exact32 = exact as f32;
            prop_assert!(ulp_diff(got, exact32) <= 2 || (got as f64 - exact).abs() <= 1e-30,
                "a={a} b={b} c={c} d={d} got={got} exact={exact}");
        }

        #[test]
        fn quadratic_roots_match_f64(r0 in -1e4f32..1e4, r1 in -1e4f32..1e4, a in 0.01f32..100.0) {
            // a(t - r0)(t - r1) = a t² - a(r0+r1) t + a r0 r1, so b = -a(r0+r1)/2.
            let b = -a * (r0 + r1) * 0.5;
            let c = a * r0 * r1;
            let disc = (b as f64 * b as f64 - a as f64 * c as f64).max(0.0) as f32;
            let (t0, t1) = quadratic_roots(a, b, c, disc);
            let (lo, hi) = if r0 < r1 { (r0, r1) } else { (r1, r0) };
            let scale = lo.abs().max(hi.abs()).max(1.0);
            prop_assert!((t0 - lo).abs() <= 1e-3 * scale, "{t0} vs {lo}");
            prop_assert!((t1 - hi).abs() <= 1e-3 * scale, "{t1} vs {hi}");
        }
    }

    #[test]
    fn the_generator_reaches_cancellation() {
        // a·b and c·d agree to within a few ulp: the naive f32 formula returns 0 or garbage.
        let (a, b, c) = (3.0f32, 0.1f32, 0.7f32);
        let d = a * b / c;
        let naive = a * b - c * d;
        let exact = (a as f64) * (b as f64) - (c as f64) * (d as f64);
        let good = difference_of_products(a, b, c, d);
        assert!(((good as f64) - exact).abs() <= exact.abs() * 1e-6 + 1e-30);
        assert!(((naive as f64) - exact).abs() > ((good as f64) - exact).abs());
    }

    #[test]
    fn next_up_and_down() {
        assert_eq!(next_up(1.0), 1.0 + f32::EPSILON);
        assert_eq!(next_down(next_up(1.0)), 1.0);
        assert!(next_up(0.0) > 0.0 && next_down(0.0) < 0.0);
        assert_eq!(next_up(-f32::MIN_POSITIVE), -f32::from_bits(f32::MIN_POSITIVE.to_bits() - 1));
    }
    /// `rounding_bounds` against the `f32` test it replaces, on the `f64`
    /// values around each bound (the bound, its neighbours, the midpoints
    /// themselves) and ends of every kind: zeros, subnormals, binade edges,
    /// odd and even mantissas, `±f32::MAX`, infinities, NaN.
    #[test]
    fn rounding_bounds_decide_as_the_f32_test() {
        let mut ends = vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            1.5,
            3.0,
            f32::MAX,
            -f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::from_bits(2),
            16777216.0,
            1e-30,
            -7.25e12,
        ];
        for e in ends.clone() {
            ends.extend([next_up(e), next_down(e)]);
        }
        let probe = |x: f64| {
            let mut v = vec![x, next_f64(x, true), next_f64(x, false)];
            if x == 0.0 {
                v.extend([f64::from_bits(1), -f64::from_bits(1)]);
            }
            v
        };
        let mut xs = vec![0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 2f64.powi(128)];
        for &e in &ends {
            let e64 = f64::from(e);
            xs.extend(probe(e64));
            for n in [f64::from(next_up(e)), f64::from(next_down(e))] {
                xs.extend(probe((e64 + n) * 0.5));
            }
        }
        for &min in &ends {
            for &max in &ends {
                let (lo, hi) = rounding_bounds(crate::Interval::new(min, max));
                for &x in &xs {
                    let t = x as f32;
                    let want = t.is_finite() && min <= t && t <= max;
                    assert_eq!(
                        lo <= x && x <= hi,
                        want,
                        "x {x:e} in [{min:e}, {max:e}]: bounds {lo:e} {hi:e}"
                    );
                }
            }
        }
    }
}
