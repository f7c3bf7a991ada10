//! Exact signs of small sums of products, for the grid walk's tie decisions.
//!
//! Every quantity the walk compares is a sum of a few `f64` terms that are each
//! exact: an `f32` widened to `f64`, a boundary offset `n·size` (`|n| ≤ 2^29`
//! times a 24-bit mantissa fits the 53-bit `f64` mantissa), or a product of
//! two such numbers split into `hi + lo` by an FMA (`two_prod`). The sign of
//! such a sum is found exactly with Shewchuk's expansion arithmetic
//! ("Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric
//! Predicates", 1997): `Grow-Expansion` adds the terms one at a time into a
//! non-overlapping expansion, whose largest non-zero component carries the
//! sign of the whole sum. No epsilon anywhere; the result is the sign of the
//! real-number sum. Only the walk's slow path (near-ties) comes here.

/// Default capacity of a [`Terms`] sum: the walk's largest predicate has
/// 24 terms. Small predicates use a small capacity (nothing to zero).
const CAP: usize = 32;

/// `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth's TwoSum).
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// `(p, e)` with `p = fl(a·b)` and `p + e = a·b` exactly (exact unless the
/// product underflows or overflows, which the walk's magnitudes — products
/// of `f32`-range values — never reach). With hardware FMA the error is one
/// `mul_add`; without it (a libm call, tens of ns) Dekker's TwoProduct with
/// Veltkamp's split is used (Dekker 1971; Shewchuk 1997, §2.6).
#[inline]
pub(crate) fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    if cfg!(target_feature = "fma") {
        (p, a.mul_add(b, -p))
    } else {
        let (ah, al) = split(a);
        let (bh, bl) = split(b);
        let err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        (p, err)
    }
}

/// Veltkamp's split: `a = hi + lo` with both halves of at most 26 bits.
#[inline]
fn split(a: f64) -> (f64, f64) {
    // 2^27 + 1; `c` cannot overflow for |a| < 2^996 (f32-range values are far below).
    let c = 134_217_729.0 * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

/// A sum of up to `C` exact `f64` terms whose sign is wanted.
pub(crate) struct Terms<const C: usize = CAP> {
    v: [f64; C],
    n: usize,
}

impl<const C: usize> Terms<C> {
    #[inline]
    pub(crate) fn new() -> Self {
        Self { v: [0.0; C], n: 0 }
    }

    /// Adds the exact term `x` (zeros are dropped).
    #[inline]
    pub(crate) fn push(&mut self, x: f64) {
        if x != 0.0 {
            debug_assert!(self.n < C);
            self.v[self.n] = x;
            self.n += 1;
        }
    }

    /// Adds the exact product `a·b` as two terms.
    #[inline]
    pub(crate) fn push_prod(&mut self, a: f64, b: f64) {
        let (p, e) = two_prod(a, b);
        self.push(p);
        self.push(e);
    }

    /// The sign (−1, 0, 1) of the exact sum of the terms.
    pub(crate) fn sign(&self) -> i32 {
        // Grow-Expansion with zero elimination: `e` stays non-overlapping and
        // sorted by increasing magnitude, so its last component decides.
        let mut e = [0.0f64; C];
        let mut len = 0;
        for &b in &self.v[..self.n] {
            let mut q = b;
            let mut k = 0;
            for i in 0..len {
                let (s, h) = two_sum(q, e[i]);
                q = s;
                if h != 0.0 {
                    e[k] = h;
                    k += 1;
                }
            }
            if q != 0.0 {
                e[k] = q;
                k += 1;
            }
            len = k;
        }
        if len == 0 {
            0
        } else if e[len - 1] > 0.0 {
            1
        } else {
            -1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_beyond_f64_precision() {
        let mut t: Terms = Terms::new();
        // 1 + 2^-80 - 1 > 0 although fl(1 + 2^-80) == 1.
        t.push(1.0);
        t.push(2f64.powi(-80));
        t.push(-1.0);
        assert_eq!(t.sign(), 1);
        let mut t: Terms = Terms::new();
        t.push(1e300);
        t.push(-1e-300);
        t.push(-1e300);
        assert_eq!(t.sign(), -1);
        let mut t: Terms = Terms::new();
        // (1 + 2^-30)^2 - 1 - 2^-29 - 2^-60 == 0
        let x = 1.0 + 2f64.powi(-30);
        t.push_prod(x, x);
        t.push(-1.0);
        t.push(-(2f64.powi(-29)));
        t.push(-(2f64.powi(-60)));
        assert_eq!(t.sign(), 0);
        assert_eq!(Terms::<CAP>::new().sign(), 0);
    }

    #[test]
    fn matches_integer_arithmetic() {
        // Integers below 2^40 scaled by powers of two: compare with i128.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..2000 {
            let mut t: Terms = Terms::new();
            let mut exact: i128 = 0;
            for _ in 0..6 {
                let a = (next() % (1 << 30)) as i64 - (1 << 29);
                let b = (next() % (1 << 30)) as i64 - (1 << 29);
                t.push_prod(a as f64, b as f64);
                exact += a as i128 * b as i128;
            }
            // Make near-cancellation common.
            if next() % 2 == 0 {
                let c = -(exact as f64);
                let ci = c as i128;
                t.push(c);
                exact += ci;
            }
            assert_eq!(t.sign(), exact.signum() as i32);
        }
    }
}
