//! [`Lanes`]: three `f64` lanes (x, y, z) for the per-axis arithmetic of a
//! walk's set-up ([`GridWalk::ray_in_box`](super::walk::GridWalk::ray_in_box),
//! `skip_to`, `skip_empty`), done on every axis at once.
//!
//! Each operation is the IEEE operation of the scalar code on every lane (no
//! fused multiply–add), so the results are bit for bit the scalar ones, and
//! the walk's exactness argument (see `walk.rs`) carries over unchanged.
//! Comparisons give masks (all bits set or zero per lane) of the same type.
//!
//! Three implementations: [`V`] on SSE2 (the x86_64 baseline, two registers),
//! [`V4`] on AVX (one 256-bit register; used only behind an
//! [`Isa`](super::voxels::Isa) that says the CPU has AVX), and a portable `V`
//! off x86_64.

/// Three `f64` lanes; see the module docs.
pub(super) trait Lanes:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn new(v: [f64; 3]) -> Self;
    /// The lanes `[v[0], v[1], v[2]]` from `v = [x, y, z, z]` (one load on
    /// AVX, two on SSE2, where `new` takes three and a shuffle).
    fn load4(v: &[f64; 4]) -> Self;
    fn splat(s: f64) -> Self;
    fn get(self) -> [f64; 3];
    /// Lanes truncated towards 0 (|lane| < 2^31).
    fn trunc(self) -> Self;
    /// Integer lanes (|lane| < 2^31) as `i32`.
    fn to_i32(self) -> [i32; 3];
    fn abs(self) -> Self;
    /// `m ? a : b` per lane, for a mask `m`.
    fn select(m: Self, a: Self, b: Self) -> Self;
    /// Bit `a` set where lane `a` of a mask is.
    fn bits(self) -> u8;
    // Bitwise on masks; ordered predicates (false with a NaN) for `>`,
    // `>=`, `<`, `<=`, `==`, and unordered for `!=` (true with a NaN), as
    // Rust's operators; `max`/`min` as `self > o ? self : o` (no NaN here).
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn gt(self, o: Self) -> Self;
    fn ge(self, o: Self) -> Self;
    fn lt(self, o: Self) -> Self;
    fn le(self, o: Self) -> Self;
    fn eq(self, o: Self) -> Self;
    fn ne(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    /// The lanes as two SSE2 registers, `[x, y]` and `[z, z]`.
    #[cfg(target_arch = "x86_64")]
    fn halves(self) -> (std::arch::x86_64::__m128d, std::arch::x86_64::__m128d);

    /// The largest lane (no NaN here): the two registers' lanes
    /// against each other, then the two left, three operations where the
    /// compares and blends LLVM made of a scalar fold took eight.
    #[inline(always)]
    fn hmax(self) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let (xy, zz) = self.halves();
            // SAFETY: SSE2 is part of the x86_64 baseline, and the
            // intrinsics only operate on registers.
            unsafe {
                let m = _mm_max_pd(xy, zz);
                _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let [x, y, z] = self.get();
            let m = if y > x { y } else { x };
            if z > m {
                z
            } else {
                m
            }
        }
    }

    /// The smallest lane (no NaN here), as [`Lanes::hmax`].
    #[inline(always)]
    fn hmin(self) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            let (xy, zz) = self.halves();
            // SAFETY: as in `hmax`.
            unsafe {
                let m = _mm_min_pd(xy, zz);
                _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let [x, y, z] = self.get();
            let m = if y < x { y } else { x };
            if z < m {
                z
            } else {
                m
            }
        }
    }

    #[inline(always)]
    fn from_i32(c: [i32; 3]) -> Self {
        Self::new(c.map(f64::from))
    }

    /// `⌊lane⌋` (|lane| < 2^31): the truncation, less 1 where it rounded
    /// up. `m.and(1)` is `select(m, 1, +0)` for a mask `m` in one `and`
    /// (LLVM turns the blend into a sign test and more).
    #[inline(always)]
    fn floor(self) -> Self {
        let tr = self.trunc();
        tr - tr.gt(self).and(Self::splat(1.0))
    }
}

/// The two-operand methods of [`Lanes`] (and of the `std::ops` traits),
/// each one operation `op(a, b)` per register, written out by `$body`
/// (the x86_64 lanes only: the portable ones write theirs out).
#[cfg(target_arch = "x86_64")]
macro_rules! binary_methods {
    ($body:ident; $($name:ident => $($op:tt)::+ $(<$p:ident>)?),+ $(,)?) => {
        $(
            #[inline(always)]
            fn $name(self, o: Self) -> Self {
                #[allow(unused_imports)]
                #[cfg(target_arch = "x86_64")]
                use std::arch::x86_64::*;
                $body!(self, o, $($op)::+ $(::<$p>)?)
            }
        )+
    };
}

/// `std::ops` for a lane type from the `binary_methods` form.
macro_rules! arithmetic {
    ($ty:ident, $body:ident; $($tr:ident, $name:ident => $($op:tt)::+),+ $(,)?) => {
        $(
            impl std::ops::$tr for $ty {
                type Output = $ty;
                #[inline(always)]
                fn $name(self, o: $ty) -> $ty {
                    #[allow(unused_imports)]
                    #[cfg(target_arch = "x86_64")]
                    use std::arch::x86_64::*;
                    $body!(self, o, $($op)::+)
                }
            }
        )+
    };
}

#[cfg(target_arch = "x86_64")]
pub(super) use x86::{V, V4};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// [`Lanes`] on SSE2 (the x86_64 baseline): `[x, y]` and `[z, z]`, two
    /// operations per operation (VEX-encoded in the volumes' AVX copy when
    /// AVX is not used for these lanes).
    #[derive(Clone, Copy)]
    pub(in crate::grid) struct V {
        xy: __m128d,
        zz: __m128d,
    }

    /// `op` on both registers of two [`V`].
    // SAFETY (every `unsafe` block of `V`): SSE2 is part of the x86_64
    // baseline, and the intrinsics only operate on registers.
    macro_rules! v_zip {
        ($a:expr, $b:expr, $($op:tt)+) => {
            unsafe { V { xy: $($op)+($a.xy, $b.xy), zz: $($op)+($a.zz, $b.zz) } }
        };
    }

    impl Lanes for V {
        #[inline(always)]
        fn new(v: [f64; 3]) -> Self {
            unsafe { Self { xy: _mm_set_pd(v[1], v[0]), zz: _mm_set1_pd(v[2]) } }
        }

        #[inline(always)]
        fn load4(v: &[f64; 4]) -> Self {
            debug_assert_eq!(v[2].to_bits(), v[3].to_bits());
            // SAFETY: SSE2 is baseline; the unaligned loads read `v[0..2]`
            // and `v[2..4]`, in bounds of the borrowed array.
            unsafe { Self { xy: _mm_loadu_pd(v.as_ptr()), zz: _mm_loadu_pd(v.as_ptr().add(2)) } }
        }

        #[inline(always)]
        fn splat(s: f64) -> Self {
            unsafe { Self { xy: _mm_set1_pd(s), zz: _mm_set1_pd(s) } }
        }

        #[inline(always)]
        fn get(self) -> [f64; 3] {
            unsafe {
                [
                    _mm_cvtsd_f64(self.xy),
                    _mm_cvtsd_f64(_mm_unpackhi_pd(self.xy, self.xy)),
                    _mm_cvtsd_f64(self.zz),
                ]
            }
        }

        #[inline(always)]
        fn trunc(self) -> Self {
            let t = |x| unsafe { _mm_cvtepi32_pd(_mm_cvttpd_epi32(x)) };
            Self { xy: t(self.xy), zz: t(self.zz) }
        }

        #[inline(always)]
        fn to_i32(self) -> [i32; 3] {
            unsafe {
                let xy = _mm_cvttpd_epi32(self.xy);
                [
                    _mm_cvtsi128_si32(xy),
                    _mm_cvtsi128_si32(_mm_shuffle_epi32::<1>(xy)),
                    _mm_cvtsi128_si32(_mm_cvttpd_epi32(self.zz)),
                ]
            }
        }

        #[inline(always)]
        fn abs(self) -> Self {
            v_zip!(Self::splat(-0.0), self, _mm_andnot_pd)
        }

        #[inline(always)]
        fn select(m: Self, a: Self, b: Self) -> Self {
            let sel = |m, a, b| unsafe { _mm_or_pd(_mm_and_pd(m, a), _mm_andnot_pd(m, b)) };
            Self { xy: sel(m.xy, a.xy, b.xy), zz: sel(m.zz, a.zz, b.zz) }
        }

        #[inline(always)]
        fn bits(self) -> u8 {
            unsafe { (_mm_movemask_pd(self.xy) | (_mm_movemask_pd(self.zz) & 1) << 2) as u8 }
        }

        #[inline(always)]
        fn halves(self) -> (__m128d, __m128d) {
            (self.xy, self.zz)
        }

        binary_methods!(v_zip;
            and => _mm_and_pd, or => _mm_or_pd,
            gt => _mm_cmpgt_pd, ge => _mm_cmpge_pd, lt => _mm_cmplt_pd,
            le => _mm_cmple_pd, eq => _mm_cmpeq_pd, ne => _mm_cmpneq_pd,
            max => _mm_max_pd, min => _mm_min_pd,
        );
    }

    arithmetic!(V, v_zip; Add, add => _mm_add_pd, Sub, sub => _mm_sub_pd, Mul, mul => _mm_mul_pd, Div, div => _mm_div_pd);

    /// [`Lanes`] on AVX: `[x, y, z, z]` in one 256-bit register, one
    /// operation per operation (half the instructions of [`V`], and half
    /// the registers, hence fewer spills).
    ///
    /// Only used where the CPU has AVX: the walk picks it with an
    /// [`Isa`](crate::grid::voxels::Isa) that says so, which only
    /// `best_compiled` makes, after checking the CPU.
    #[derive(Clone, Copy)]
    pub(in crate::grid) struct V4(__m256d);

    /// `op` on the registers of two [`V4`].
    // SAFETY (every `unsafe` block of `V4`): the CPU has AVX (see `V4`),
    // and the intrinsics only operate on registers.
    macro_rules! v4_op {
        ($a:expr, $b:expr, $($op:tt)+) => {
            unsafe { V4($($op)+($a.0, $b.0)) }
        };
    }

    impl Lanes for V4 {
        #[inline(always)]
        fn new(v: [f64; 3]) -> Self {
            unsafe { Self(_mm256_set_pd(v[2], v[2], v[1], v[0])) }
        }

        #[inline(always)]
        fn load4(v: &[f64; 4]) -> Self {
            debug_assert_eq!(v[2].to_bits(), v[3].to_bits());
            // SAFETY: the CPU has AVX (see `V4`); the unaligned load reads
            // the four `f64` of the borrowed array, in bounds.
            unsafe { Self(_mm256_loadu_pd(v.as_ptr())) }
        }

        /// `vroundpd` towards −∞: the same (exact) value as the provided
        /// method's truncation, compare and subtract, in one operation
        /// (3 cycles where that chain takes about 12 on Zen 4).
        #[inline(always)]
        fn floor(self) -> Self {
            unsafe { Self(_mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0)) }
        }

        #[inline(always)]
        fn splat(s: f64) -> Self {
            unsafe { Self(_mm256_set1_pd(s)) }
        }

        #[inline(always)]
        fn get(self) -> [f64; 3] {
            unsafe {
                let lo = _mm256_castpd256_pd128(self.0);
                let hi = _mm256_extractf128_pd::<1>(self.0);
                [_mm_cvtsd_f64(lo), _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo)), _mm_cvtsd_f64(hi)]
            }
        }

        #[inline(always)]
        fn trunc(self) -> Self {
            unsafe { Self(_mm256_cvtepi32_pd(_mm256_cvttpd_epi32(self.0))) }
        }

        #[inline(always)]
        fn to_i32(self) -> [i32; 3] {
            unsafe {
                let c = _mm256_cvttpd_epi32(self.0);
                [
                    _mm_cvtsi128_si32(c),
                    _mm_cvtsi128_si32(_mm_shuffle_epi32::<1>(c)),
                    _mm_cvtsi128_si32(_mm_shuffle_epi32::<2>(c)),
                ]
            }
        }

        #[inline(always)]
        fn abs(self) -> Self {
            v4_op!(Self::splat(-0.0), self, _mm256_andnot_pd)
        }

        #[inline(always)]
        fn select(m: Self, a: Self, b: Self) -> Self {
            // `blendv` takes its second operand where the mask's sign bit is set.
            unsafe { Self(_mm256_blendv_pd(b.0, a.0, m.0)) }
        }

        #[inline(always)]
        fn bits(self) -> u8 {
            unsafe { (_mm256_movemask_pd(self.0) & 7) as u8 }
        }

        #[inline(always)]
        fn halves(self) -> (__m128d, __m128d) {
            // The high half is `[z, z]` (every `V4` keeps lane 3 equal to lane 2).
            unsafe { (_mm256_castpd256_pd128(self.0), _mm256_extractf128_pd::<1>(self.0)) }
        }

        binary_methods!(v4_op;
            and => _mm256_and_pd, or => _mm256_or_pd,
            gt => _mm256_cmp_pd<_CMP_GT_OQ>, ge => _mm256_cmp_pd<_CMP_GE_OQ>,
            lt => _mm256_cmp_pd<_CMP_LT_OQ>, le => _mm256_cmp_pd<_CMP_LE_OQ>,
            eq => _mm256_cmp_pd<_CMP_EQ_OQ>, ne => _mm256_cmp_pd<_CMP_NEQ_UQ>,
            max => _mm256_max_pd, min => _mm256_min_pd,
        );
    }

    arithmetic!(V4, v4_op;
        Add, add => _mm256_add_pd, Sub, sub => _mm256_sub_pd,
        Mul, mul => _mm256_mul_pd, Div, div => _mm256_div_pd,
    );
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) use portable::V;

#[cfg(not(target_arch = "x86_64"))]
mod portable {
    use super::Lanes;

    /// Portable [`Lanes`]: the lanes as an array, masks as all-ones or zero
    /// bits.
    #[derive(Clone, Copy)]
    pub(in crate::grid) struct V([f64; 3]);

    /// `f(a, b)` lane by lane.
    macro_rules! zip {
        ($a:expr, $b:expr, $f:expr) => {
            V(std::array::from_fn(|k| $f($a.0[k], $b.0[k])))
        };
    }

    /// The mask of `f(a, b)` lane by lane.
    macro_rules! mask {
        ($a:expr, $b:expr, $f:expr) => {
            zip!($a, $b, |x, y| f64::from_bits(if $f(x, y) { u64::MAX } else { 0 }))
        };
    }

    /// The bits of `f(a, b)` lane by lane.
    macro_rules! bitwise {
        ($a:expr, $b:expr, $f:expr) => {
            zip!($a, $b, |x: f64, y: f64| f64::from_bits($f(x.to_bits(), y.to_bits())))
        };
    }

    impl Lanes for V {
        #[inline(always)]
        fn new(v: [f64; 3]) -> Self {
            Self(v)
        }

        #[inline(always)]
        fn load4(v: &[f64; 4]) -> Self {
            Self([v[0], v[1], v[2]])
        }

        #[inline(always)]
        fn splat(s: f64) -> Self {
            Self([s; 3])
        }

        #[inline(always)]
        fn get(self) -> [f64; 3] {
            self.0
        }

        #[inline(always)]
        fn trunc(self) -> Self {
            Self(self.0.map(|x| f64::from(x as i32)))
        }

        #[inline(always)]
        fn to_i32(self) -> [i32; 3] {
            self.0.map(|x| x as i32)
        }

        #[inline(always)]
        fn abs(self) -> Self {
            Self(self.0.map(f64::abs))
        }

        #[inline(always)]
        fn select(m: Self, a: Self, b: Self) -> Self {
            Self(std::array::from_fn(|k| if m.0[k].to_bits() != 0 { a.0[k] } else { b.0[k] }))
        }

        #[inline(always)]
        fn bits(self) -> u8 {
            self.0.iter().enumerate().fold(0, |m, (a, x)| m | u8::from(x.to_bits() != 0) << a)
        }

        #[inline(always)]
        fn and(self, o: Self) -> Self {
            bitwise!(self, o, |a, b| a & b)
        }

        #[inline(always)]
        fn or(self, o: Self) -> Self {
            bitwise!(self, o, |a, b| a | b)
        }

        #[inline(always)]
        fn gt(self, o: Self) -> Self {
            mask!(self, o, |a, b| a > b)
        }

        #[inline(always)]
        fn ge(self, o: Self) -> Self {
            mask!(self, o, |a, b| a >= b)
        }

        #[inline(always)]
        fn lt(self, o: Self) -> Self {
            mask!(self, o, |a, b| a < b)
        }

        #[inline(always)]
        fn le(self, o: Self) -> Self {
            mask!(self, o, |a, b| a <= b)
        }

        #[inline(always)]
        fn eq(self, o: Self) -> Self {
            mask!(self, o, |a, b| a == b)
        }

        #[inline(always)]
        fn ne(self, o: Self) -> Self {
            mask!(self, o, |a, b| a != b)
        }

        #[inline(always)]
        fn max(self, o: Self) -> Self {
            zip!(self, o, |a: f64, b: f64| if a > b { a } else { b })
        }

        #[inline(always)]
        fn min(self, o: Self) -> Self {
            zip!(self, o, |a: f64, b: f64| if a < b { a } else { b })
        }
    }

    /// Lane-by-lane arithmetic for the portable `V`.
    macro_rules! portable_op {
        ($a:expr, $b:expr, $tr:ident::$f:ident) => {
            zip!($a, $b, |x: f64, y: f64| std::ops::$tr::$f(x, y))
        };
    }

    arithmetic!(V, portable_op; Add, add => Add::add, Sub, sub => Sub::sub, Mul, mul => Mul::mul, Div, div => Div::div);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hmax` and `hmin` are the largest and the smallest lane, ties
    /// included, on the SSE2 lanes and (where the CPU has it) the AVX ones.
    #[test]
    fn horizontal_max_and_min() {
        let mut next = crate::grid::test_ints(5);
        for _ in 0..10_000 {
            let mut t = || (next(41) as f64 - 20.0) * 0.125;
            let v = [t(), t(), t()];
            let (max, min) = (v[0].max(v[1]).max(v[2]), v[0].min(v[1]).min(v[2]));
            assert_eq!((V::new(v).hmax(), V::new(v).hmin()), (max, min), "{v:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx") {
                assert_eq!((V4::new(v).hmax(), V4::new(v).hmin()), (max, min), "{v:?}");
            }
        }
    }
}
