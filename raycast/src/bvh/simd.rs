//! Four-lane `f32` arithmetic for the node test: SSE2 on x86_64 (part of the
//! baseline, so no runtime detection is needed), plain arrays elsewhere.
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
}
