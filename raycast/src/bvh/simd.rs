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
/// of an 8-wide node. Two 4-lane operations, not one 8-lane AVX operation,
/// so that no run-time dispatch is needed: the CPUs this is tuned on (Zen 1)
/// split a 256-bit operation into two 128-bit ones anyway.
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
