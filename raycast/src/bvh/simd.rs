//! Lanes of `f32` for the node test: four in SSE2 on x86_64 (part of the
//! baseline), plain arrays elsewhere; eight as two such halves, or in one
//! AVX register inside the walk compiled for AVX ([`SelAvx`]).
//!
//! Only the handful of operations the ray–box test needs are provided, and
//! `max_or`/`min_or` have a fixed NaN rule on every target: when the first
//! operand is NaN the result is the second (the accumulator). That is what
//! `maxps`/`minps` do, and the node test relies on it to ignore the `0 · ∞`
//! slab of an axis-parallel ray whose origin lies on a box face.

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::*;

    /// Four `f32` lanes.
    #[derive(Clone, Copy)]
    pub(crate) struct F4(__m128);

    impl F4 {
        #[inline(always)]
        pub(crate) fn splat(x: f32) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            unsafe { F4(_mm_set1_ps(x)) }
        }
        #[inline(always)]
        pub(crate) fn load(a: &[f32; 4]) -> Self {
            // SAFETY: SSE2 baseline; `a` is 4 readable f32 (unaligned load).
            unsafe { F4(_mm_loadu_ps(a.as_ptr())) }
        }
        #[inline(always)]
        pub(crate) fn to_array(self) -> [f32; 4] {
            let mut out = [0.0; 4];
            // SAFETY: SSE2 baseline; `out` has room for 4 f32.
            unsafe { _mm_storeu_ps(out.as_mut_ptr(), self.0) };
            out
        }
        #[inline(always)]
        pub(crate) fn sub(self, o: Self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_sub_ps(self.0, o.0)) }
        }
        #[inline(always)]
        pub(crate) fn add(self, o: Self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_add_ps(self.0, o.0)) }
        }
        #[inline(always)]
        pub(crate) fn mul(self, o: Self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_mul_ps(self.0, o.0)) }
        }
        /// `self > acc ? self : acc` per lane (NaN in `self` gives `acc`).
        #[inline(always)]
        pub(crate) fn max_or(self, acc: Self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_max_ps(self.0, acc.0)) }
        }
        /// `self < acc ? self : acc` per lane (NaN in `self` gives `acc`).
        #[inline(always)]
        pub(crate) fn min_or(self, acc: Self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_min_ps(self.0, acc.0)) }
        }
        /// `|self|` per lane.
        #[inline(always)]
        pub(crate) fn abs(self) -> Self {
            // SAFETY: SSE2 baseline.
            unsafe { F4(_mm_andnot_ps(_mm_set1_ps(-0.0), self.0)) }
        }
        /// Bit `i` set when `self[i] <= o[i]` (false for NaN).
        #[inline(always)]
        pub(crate) fn le_mask(self, o: Self) -> u32 {
            // SAFETY: SSE2 baseline.
            unsafe { _mm_movemask_ps(_mm_cmple_ps(self.0, o.0)) as u32 }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    /// Four `f32` lanes.
    #[derive(Clone, Copy)]
    pub(crate) struct F4([f32; 4]);

    impl F4 {
        #[inline(always)]
        fn map2(self, o: Self, f: impl Fn(f32, f32) -> f32) -> Self {
            F4([f(self.0[0], o.0[0]), f(self.0[1], o.0[1]), f(self.0[2], o.0[2]), f(self.0[3], o.0[3])])
        }
        #[inline(always)]
        pub(crate) fn splat(x: f32) -> Self {
            F4([x; 4])
        }
        #[inline(always)]
        pub(crate) fn load(a: &[f32; 4]) -> Self {
            F4(*a)
        }
        #[inline(always)]
        pub(crate) fn to_array(self) -> [f32; 4] {
            self.0
        }
        #[inline(always)]
        pub(crate) fn sub(self, o: Self) -> Self {
            self.map2(o, |a, b| a - b)
        }
        #[inline(always)]
        pub(crate) fn add(self, o: Self) -> Self {
            self.map2(o, |a, b| a + b)
        }
        #[inline(always)]
        pub(crate) fn mul(self, o: Self) -> Self {
            self.map2(o, |a, b| a * b)
        }
        #[inline(always)]
        pub(crate) fn max_or(self, acc: Self) -> Self {
            self.map2(acc, |a, b| if a > b { a } else { b })
        }
        #[inline(always)]
        pub(crate) fn min_or(self, acc: Self) -> Self {
            self.map2(acc, |a, b| if a < b { a } else { b })
        }
        #[inline(always)]
        pub(crate) fn abs(self) -> Self {
            F4(self.0.map(f32::abs))
        }
        #[inline(always)]
        pub(crate) fn le_mask(self, o: Self) -> u32 {
            (0..4).fold(0, |m, i| m | (u32::from(self.0[i] <= o.0[i]) << i))
        }
    }
}

pub(crate) use imp::F4;

/// `W` lanes of `f32`: what the node test of a `W`-wide node needs (the
/// operations of [`F4`]'s own methods, with their NaN rules).
pub(crate) trait Lanes<const W: usize>: Copy {
    fn splat(x: f32) -> Self;
    fn load(a: &[f32; W]) -> Self;
    fn to_array(self) -> [f32; W];
    fn sub(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn max_or(self, acc: Self) -> Self;
    fn min_or(self, acc: Self) -> Self;
    fn abs(self) -> Self;
    fn le_mask(self, o: Self) -> u32;
}

/// The [`Lanes`] of a `W`-wide node, as `<Sel as Width<W>>::L`.
pub(crate) trait Width<const W: usize> {
    type L: Lanes<W>;
}

/// Selects the lane type of a node width (see [`Width`]).
pub(crate) struct Sel;

impl Width<4> for Sel {
    type L = F4;
}

impl Width<8> for Sel {
    type L = F8;
}

/// [`Lanes`] for a type with the same methods of its own ([`F4`], whose
/// methods are written per target).
macro_rules! lanes_by_methods {
    ($ty:ident, $w:literal) => {
        impl Lanes<$w> for $ty {
            #[inline(always)]
            fn splat(x: f32) -> Self {
                $ty::splat(x)
            }
            #[inline(always)]
            fn load(a: &[f32; $w]) -> Self {
                $ty::load(a)
            }
            #[inline(always)]
            fn to_array(self) -> [f32; $w] {
                $ty::to_array(self)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                $ty::sub(self, o)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                $ty::add(self, o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                $ty::mul(self, o)
            }
            #[inline(always)]
            fn max_or(self, acc: Self) -> Self {
                $ty::max_or(self, acc)
            }
            #[inline(always)]
            fn min_or(self, acc: Self) -> Self {
                $ty::min_or(self, acc)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $ty::abs(self)
            }
            #[inline(always)]
            fn le_mask(self, o: Self) -> u32 {
                $ty::le_mask(self, o)
            }
        }
    };
}

lanes_by_methods!(F4, 4);

/// Eight `f32` lanes, as two [`F4`] halves (lanes 0–3, 4–7): the node test
/// of an 8-wide node on CPUs without AVX (and off x86_64); with AVX the
/// walk uses [`F8Avx`].
#[derive(Clone, Copy)]
pub(crate) struct F8([F4; 2]);

impl Lanes<8> for F8 {
    #[inline(always)]
    fn splat(x: f32) -> Self {
        F8([F4::splat(x); 2])
    }
    #[inline(always)]
    fn load(a: &[f32; 8]) -> Self {
        let (lo, hi) = a.split_at(4);
        // The halves of an array of 8 are arrays of 4 (no check survives).
        F8([F4::load(lo.try_into().unwrap()), F4::load(hi.try_into().unwrap())])
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 8] {
        let (lo, hi) = (self.0[0].to_array(), self.0[1].to_array());
        [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F8([self.0[0].sub(o.0[0]), self.0[1].sub(o.0[1])])
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F8([self.0[0].add(o.0[0]), self.0[1].add(o.0[1])])
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F8([self.0[0].mul(o.0[0]), self.0[1].mul(o.0[1])])
    }
    #[inline(always)]
    fn max_or(self, acc: Self) -> Self {
        F8([self.0[0].max_or(acc.0[0]), self.0[1].max_or(acc.0[1])])
    }
    #[inline(always)]
    fn min_or(self, acc: Self) -> Self {
        F8([self.0[0].min_or(acc.0[0]), self.0[1].min_or(acc.0[1])])
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F8([self.0[0].abs(), self.0[1].abs()])
    }
    #[inline(always)]
    fn le_mask(self, o: Self) -> u32 {
        self.0[0].le_mask(o.0[0]) | self.0[1].le_mask(o.0[1]) << 4
    }
}

/// Selects the lane types of a walk compiled for AVX (see [`Width`]): the
/// 8-wide test in one 256-bit register ([`F8Avx`]). Only 8-wide trees take
/// that walk; `Width<4>` is here so that the walk's code is well-typed for
/// every width. Off x86_64 it selects what [`Sel`] does.
pub(crate) struct SelAvx;

impl Width<4> for SelAvx {
    type L = F4;
}

#[cfg(target_arch = "x86_64")]
impl Width<8> for SelAvx {
    type L = F8Avx;
}

#[cfg(not(target_arch = "x86_64"))]
impl Width<8> for SelAvx {
    type L = F8;
}

/// True when the CPU runs AVX (detected once, then a cached load).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx() -> bool {
    #[cfg(test)]
    if TEST_SSE.with(std::cell::Cell::get) {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx")
}

#[cfg(test)]
thread_local! {
    /// Tests set it to run the SSE2 walk on a CPU with AVX (see `each_width`).
    pub(crate) static TEST_SSE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Eight `f32` lanes in one AVX register: the same operations as [`F8`]
/// (`vmaxps`/`vminps` keep the NaN rule of `maxps`/`minps`: a NaN first
/// operand gives the second), so the same answers bit for bit, in half the
/// instructions (Zen 2 and later run 256-bit operations at full width).
///
/// Its methods may only run inside a function compiled with AVX enabled
/// (`#[target_feature(enable = "avx")]`, entered after [`has_avx`]): they
/// are inlined there, and the intrinsics with them.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct F8Avx(std::arch::x86_64::__m256);

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{F8Avx, Lanes};
    use std::arch::x86_64::*;

    // SAFETY (every method): `F8Avx` is only used in code compiled with AVX
    // and entered after the CPU was found to have it (see `F8Avx`); loads
    // and stores are unaligned, of 8 `f32` the references hold.
    impl Lanes<8> for F8Avx {
        #[inline(always)]
        fn splat(x: f32) -> Self {
            unsafe { F8Avx(_mm256_set1_ps(x)) }
        }
        #[inline(always)]
        fn load(a: &[f32; 8]) -> Self {
            unsafe { F8Avx(_mm256_loadu_ps(a.as_ptr())) }
        }
        #[inline(always)]
        fn to_array(self) -> [f32; 8] {
            let mut out = [0.0; 8];
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), self.0) };
            out
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            unsafe { F8Avx(_mm256_sub_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            unsafe { F8Avx(_mm256_add_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            unsafe { F8Avx(_mm256_mul_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn max_or(self, acc: Self) -> Self {
            unsafe { F8Avx(_mm256_max_ps(self.0, acc.0)) }
        }
        #[inline(always)]
        fn min_or(self, acc: Self) -> Self {
            unsafe { F8Avx(_mm256_min_ps(self.0, acc.0)) }
        }
        #[inline(always)]
        fn abs(self) -> Self {
            unsafe { F8Avx(_mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0)) }
        }
        /// `vcmpps` with `LE_OQ`: false for NaN, as `cmpleps`.
        #[inline(always)]
        fn le_mask(self, o: Self) -> u32 {
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(self.0, o.0)) as u32 }
        }
    }
}

/// Hints the CPU to load the 128 bytes at `p` into the cache (a no-op off
/// x86_64). Never faults, so any address may be given.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE baseline; prefetching has no architectural effect and never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>().wrapping_add(64));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_in_first_operand_keeps_the_accumulator() {
        let nan = F4::load(&[f32::NAN, 1.0, f32::NAN, -3.0]);
        let acc = F4::load(&[5.0, 2.0, -1.0, -4.0]);
        assert_eq!(nan.max_or(acc).to_array(), [5.0, 2.0, -1.0, -3.0]);
        assert_eq!(nan.min_or(acc).to_array(), [5.0, 1.0, -1.0, -4.0]);
        assert_eq!(nan.le_mask(acc), 0b0010);
        assert_eq!(acc.le_mask(F4::splat(0.0)), 0b1100);
        assert_eq!(F4::load(&[-1.0, 2.0, -0.0, 3.0]).abs().to_array(), [1.0, 2.0, 0.0, 3.0]);
        assert_eq!(acc.add(acc).sub(acc).mul(F4::splat(2.0)).to_array(), [10.0, 4.0, -2.0, -8.0]);
    }

    /// `F8Avx` gives what `F8` gives, bit for bit, NaN and signed zeros
    /// included (run where the CPU has AVX).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx_lanes_equal_sse_lanes() {
        if !has_avx() {
            return;
        }
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0, -2.5, 1e-40, 3e38];
        let mut s = 0x2545_f491u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let k = (s % 16) as usize;
            if k < specials.len() {
                specials[k]
            } else {
                f32::from_bits(s.rotate_left(7))
            }
        };
        for _ in 0..5_000 {
            let a: [f32; 8] = std::array::from_fn(|_| next());
            let b: [f32; 8] = std::array::from_fn(|_| next());
            // SAFETY: the CPU has AVX (checked above).
            let got = unsafe { avx_ops(&a, &b) };
            let want = ops::<F8>(&a, &b);
            assert_eq!(got.0.map(f32::to_bits), want.0.map(f32::to_bits), "{a:?} {b:?}");
            assert_eq!(got.1, want.1, "{a:?} {b:?}");
        }
    }

    /// Every lane operation of `Lanes<8>` applied to `a` and `b`: the
    /// results side by side, and the `le` masks.
    #[cfg(target_arch = "x86_64")]
    fn ops<T: Lanes<8>>(a: &[f32; 8], b: &[f32; 8]) -> ([f32; 48], [u32; 2]) {
        let (x, y) = (T::load(a), T::load(b));
        let rows = [x.sub(y), x.add(y), x.mul(y), x.max_or(y), x.min_or(y), x.abs().add(T::splat(a[0]))];
        let mut out = [0.0; 48];
        for (i, r) in rows.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&r.to_array());
        }
        (out, [x.le_mask(y), y.le_mask(x)])
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn avx_ops(a: &[f32; 8], b: &[f32; 8]) -> ([f32; 48], [u32; 2]) {
        ops::<F8Avx>(a, b)
    }

    /// `F8` is two `F4`: the same rules, lanes in order, masks joined.
    #[test]
    fn eight_lanes_are_two_halves() {
        let nan = F8::load(&[f32::NAN, 1.0, f32::NAN, -3.0, 7.0, f32::NAN, 0.5, -2.0]);
        let acc = F8::load(&[5.0, 2.0, -1.0, -4.0, 6.0, 3.0, 0.5, 1.0]);
        assert_eq!(nan.max_or(acc).to_array(), [5.0, 2.0, -1.0, -3.0, 7.0, 3.0, 0.5, 1.0]);
        assert_eq!(nan.min_or(acc).to_array(), [5.0, 1.0, -1.0, -4.0, 6.0, 3.0, 0.5, -2.0]);
        assert_eq!(nan.le_mask(acc), 0b1100_0010);
        assert_eq!(acc.le_mask(F8::splat(0.5)), 0b0100_1100);
        assert_eq!(
            F8::splat(-2.0).abs().add(F8::splat(1.0)).sub(acc).mul(F8::splat(2.0)).to_array()[4],
            -6.0
        );
    }
}
