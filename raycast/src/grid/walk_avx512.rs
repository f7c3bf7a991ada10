//! The long walk's fast steps on CPUs with AVX-512VL: three rotated copies
//! of the crossing times and the 64-bit integer minimum `vpminsq`, for
//! [`GridWalk::drive_long`](super::walk::GridWalk) (a walk consumed by
//! `fold`, `for_each`, `sum`, ...).
//!
//! # Why
//! The SSE step ([`Hot::step`](super::walk::Hot)) holds the times as
//! `[t0, t1]` and `[t2, t2]`. Lane `i` needs the smallest of the *other*
//! times, so the loop-carried chain is shuffle → min → compare → select:
//! about 7 cycles a step on Zen 4, with nine operations a step on the two
//! pipes that do `f64` adds, minimums and compares.
//!
//! # The step
//! Here the times are held three times, rotated:
//!
//! ```text
//! x = [t0, t1, t2, +∞],   y = [t1, t2, t0, +∞],   z = [t2, t0, t1, +∞].
//! ```
//!
//! Lane `i` of `min(y, z)` is the smallest time other than lane `i` of `x`,
//! with no shuffle, and likewise `min(z, x)` for `y` and `min(x, y)` for
//! `z`. Each copy is stepped by its own compare and select, which give the
//! same decision in its own lane order. The minimum and the compare are
//! integer operations on the times' bits (below), on pipes the `f64` adds
//! do not use. The chain is min → compare → select: about 6.3 cycles a
//! step timed alone, against 7.0 for the SSE step. Walks by `fold` on Zen 4
//! (stop 32, alternating with the build before): 1.77–1.79 ns a step
//! against 2.00–2.02 (`compare/src/bin/walk_floor.rs`), 1.80–1.83 against
//! 2.12–2.14 (criterion's `grid/walk/3d_steps_fold`).
//!
//! The step is inline assembly: with AVX-512 enabled for the compiler,
//! LLVM turns a compare and a blend into mask-register operations (`vpcmpgtq
//! k`, masked moves), whose chain measured 9 cycles a step here.
//!
//! # The tolerance in units in the last place
//! The bits of a positive `f64`, read as an `i64`, order as the values do,
//! so `vpminsq` is the minimum and `vpcmpgtq` the comparison. `+∞` is
//! above every finite value and `+∞ + K` (a NaN's bits) above `+∞`, so an
//! axis that does not move (time `+∞`) and the fourth lane are never sure.
//!
//! The SSE step's filter is `t + tol_fix < min(others)`: then `t`'s
//! crossing is surely alone (walk.rs's module docs). Here it is
//! `bits(t) + K < bits(min(others))`. Adding `K` to the bits of `t` adds
//! `K` units in the last place of `t`'s binade or above, each at least
//! `ulp(m₀)` when every time is at least `m₀ > 0`, and `ulp(m₀) ≥
//! m₀·2^-53` for a normal `m₀`. So with `K ≥ tol_fix·2^53/m₀` the value of
//! `bits(t) + K` is at least `t + tol_fix`, and this filter passes only
//! where the SSE one (which allows for the rounding of its sum) would.
//! `m₀` is the smallest time when the rotated steps start (the times only
//! grow); the drive takes `K` again each time it starts them (after a
//! step they were not sure of, or a new segment), so that a walk whose
//! first time was small does not keep its large `K`.
//! [`tol_ulps`] refuses segments where `m₀` is not a positive normal
//! number or `K` would be large (about `2^40`); those walk by the SSE step.
//!
//! The times themselves are the SSE step's: `t + Δ` in `f64`, the same
//! rounding, so the walk's error bound and its steps are unchanged.

use std::arch::x86_64::*;

/// True when the CPU has AVX-512F and AVX-512VL (`vpminsq` on 256-bit
/// registers). Cached by the standard library: a load and a test.
#[inline(always)]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl")
}

/// `K` for a segment whose times are all at least `m0` and whose filter
/// tolerance is `tol_fix` (module docs), or `None` when `m0` is not a
/// positive normal number or `K` would exceed `2^40`.
#[inline(always)]
pub(super) fn tol_ulps(m0: f64, tol_fix: f64) -> Option<i64> {
    // K ≥ tol_fix·2^53/m0: the quotient's two roundings (relative 2^-53
    // each) are covered by the factor 1 + 2^-40 and the + 1.
    let k = tol_fix * (1u64 << 53) as f64 / m0 * (1.0 + 1.0 / (1u64 << 40) as f64) + 1.0;
    let ok = m0 >= f64::MIN_POSITIVE && tol_fix >= 0.0 && k < (1u64 << 40) as f64; // false for NaN
    ok.then(|| k.ceil() as i64)
}

/// Runs fast steps while at least two are allowed (`left > 1`) and each is
/// sure (module docs), two per turn, calling `visit(acc, axis bit, t,
/// cell, times)` for each as `GridWalk::drive_long` does. `times` and
/// `cell` are the walk's state, brought up to date on return; `left` is
/// decreased by the steps taken. `k` is [`tol_ulps`]'s, for these times.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512VL ([`available`]).
#[target_feature(enable = "avx")]
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run<A, F: FnMut(A, u8, f64, [i32; 3], [f64; 3]) -> A>(
    times: &mut [f64; 3],
    cell: &mut [i32; 3],
    left: &mut u32,
    dt: &[f64; 3],
    step: &[i32; 3],
    k: i64,
    mut acc: A,
    visit: &mut F,
) -> A {
    // The cells' moves by the step's mask (bit a: axis a stepped).
    let moves: [[i32; 8]; 3] =
        std::array::from_fn(|a| std::array::from_fn(|m| if m == 1 << a { step[a] } else { 0 }));
    let [t0, t1, t2] = *times;
    let inf = f64::INFINITY;
    let mut x = _mm256_set_pd(inf, t2, t1, t0);
    let mut y = _mm256_set_pd(inf, t0, t2, t1);
    let mut z = _mm256_set_pd(inf, t1, t0, t2);
    // Δ of a fourth lane that never steps: 0, so it stays +∞.
    let dx = _mm256_set_pd(0.0, dt[2], dt[1], dt[0]);
    let dy = _mm256_set_pd(0.0, dt[0], dt[2], dt[1]);
    let dz = _mm256_set_pd(0.0, dt[1], dt[0], dt[2]);
    let kv = _mm256_set1_epi64x(k);
    let mut c = *cell;
    let mut n = *left;
    // One step in place: the copies stepped where sure; `(mask, m)`, the
    // mask of the axis stepped (0: none was sure, and nothing moved) and
    // the smallest time before the step. (A macro, not a closure: the
    // code must be compiled with AVX, as this function is.)
    macro_rules! step {
        () => {{
            let x0 = x;
            let (mask, ox): (u32, __m256d);
            // SAFETY: register operations only; the CPU has AVX-512VL (the
            // caller's contract), which `vpminsq` on ymm registers needs.
            unsafe {
                std::arch::asm!(
                    // The smallest other time of each lane, in each copy.
                    "vpminsq {ox}, {y}, {z}",
                    "vpminsq {oy}, {z}, {x}",
                    "vpminsq {oz}, {x}, {y}",
                    // bits(t) + K.
                    "vpaddq {sx}, {x}, {k}",
                    "vpaddq {sy}, {y}, {k}",
                    "vpaddq {sz}, {z}, {k}",
                    // Sure: bits(other) > bits(t) + K.
                    "vpcmpgtq {sx}, {ox}, {sx}",
                    "vpcmpgtq {sy}, {oy}, {sy}",
                    "vpcmpgtq {sz}, {oz}, {sz}",
                    "vmovmskpd {mask:e}, {sx}",
                    // t + Δ where sure.
                    "vaddpd {ax}, {x}, {dx}",
                    "vaddpd {oy}, {y}, {dy}",
                    "vaddpd {oz}, {z}, {dz}",
                    "vblendvpd {x}, {x}, {ax}, {sx}",
                    "vblendvpd {y}, {y}, {oy}, {sy}",
                    "vblendvpd {z}, {z}, {oz}, {sz}",
                    x = inout(ymm_reg) x,
                    y = inout(ymm_reg) y,
                    z = inout(ymm_reg) z,
                    dx = in(ymm_reg) dx,
                    dy = in(ymm_reg) dy,
                    dz = in(ymm_reg) dz,
                    k = in(ymm_reg) kv,
                    ox = out(ymm_reg) ox,
                    oy = out(ymm_reg) _,
                    oz = out(ymm_reg) _,
                    ax = out(ymm_reg) _,
                    sx = out(ymm_reg) _,
                    sy = out(ymm_reg) _,
                    sz = out(ymm_reg) _,
                    mask = out(reg) mask,
                    options(pure, nomem, nostack),
                );
            }
            // The smallest time: lane 0 of min(x, others of x) (computed
            // only where `visit` uses it).
            (mask as usize & 7, _mm_cvtsd_f64(_mm256_castpd256_pd128(_mm256_min_pd(x0, ox))))
        }};
    }
    macro_rules! lanes {
        ($x:expr) => {{
            let mut t = [0.0; 4];
            // SAFETY: `t` holds four f64.
            unsafe { _mm256_storeu_pd(t.as_mut_ptr(), $x) };
            [t[0], t[1], t[2]]
        }};
    }
    while n > 1 {
        let (mask, m) = step!();
        if mask == 0 {
            break;
        }
        c = std::array::from_fn(|a| c[a].wrapping_add(moves[a][mask]));
        acc = visit(acc, mask as u8, m, c, lanes!(x));
        let (mask, m) = step!();
        if mask == 0 {
            n -= 1;
            break;
        }
        c = std::array::from_fn(|a| c[a].wrapping_add(moves[a][mask]));
        acc = visit(acc, mask as u8, m, c, lanes!(x));
        n -= 2;
    }
    *times = lanes!(x);
    *cell = c;
    *left = n;
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: plain `f64` steps of the axis with the smallest time
    /// (a scalar loop, no rotation, no bits), stopped where the two
    /// smallest times are closer than `tol`.
    fn reference(
        mut t: [f64; 3],
        dt: [f64; 3],
        step: [i32; 3],
        mut c: [i32; 3],
        n: u32,
        tol: f64,
    ) -> Vec<(u8, f64, [i32; 3], [f64; 3])> {
        let mut out = Vec::new();
        while out.len() < n as usize {
            let a = (0..3).min_by(|&i, &j| t[i].total_cmp(&t[j])).unwrap();
            let others = (0..3).filter(|&b| b != a).map(|b| t[b]).fold(f64::INFINITY, f64::min);
            if !(t[a] + tol < others) {
                break;
            }
            let m = t[a];
            t[a] += dt[a];
            c[a] += step[a];
            out.push((1 << a, m, c, t));
        }
        out
    }

    #[test]
    fn run_steps_as_the_reference_does() {
        if !available() {
            eprintln!("no AVX-512VL on this CPU: the rotated step is not used, nothing to test");
            return;
        }
        let mut unit_f32 = super::super::walk::tests::unit_floats(0x9e37_79b9_7f4a_7c15);
        let mut unit = move || f64::from(unit_f32());
        let (mut taken, mut stopped) = (0usize, 0usize);
        for i in 0..400 {
            let dt: [f64; 3] = std::array::from_fn(|_| 0.05 + 3.0 * unit());
            let mut t: [f64; 3] = std::array::from_fn(|a| 1.0 + dt[a] * unit());
            let step: [i32; 3] = std::array::from_fn(|_| if unit() < 0.5 { 1 } else { -1 });
            if i % 7 == 0 {
                // An axis that does not move.
                t[i % 3] = f64::INFINITY;
            }
            if i % 11 == 0 {
                // A tie now: no step is sure.
                t[1] = t[0];
            }
            let cell = [3, -5, 1 << 20];
            let n = 1 + (unit() * 3000.0) as u32;
            let m0 = t.into_iter().fold(f64::INFINITY, f64::min);
            let tol = 1e-12 * m0;
            let k = tol_ulps(m0, tol).unwrap();
            let (mut tt, mut cc, mut left) = (t, cell, n);
            let mut got = Vec::new();
            // SAFETY: the CPU has AVX-512F and AVX-512VL (checked above).
            unsafe {
                run(&mut tt, &mut cc, &mut left, &dt, &step, k, (), &mut |(), axes, m, c, times| {
                    got.push((axes, m, c, times))
                })
            };
            // The reference with the smallest tolerance the bits' filter
            // may stand for: every step taken is one it takes too.
            let want = reference(t, dt, step, cell, n, tol);
            assert!(got.len() <= want.len(), "{i}: {} steps, the reference {}", got.len(), want.len());
            assert_eq!(got[..], want[..got.len()], "{i}");
            assert_eq!(left as usize, n as usize - got.len(), "{i}");
            let last = got.last().map_or((t, cell), |s| (s.3, s.2));
            assert_eq!((tt, cc), last, "{i}");
            // Stopped early only where the bits' filter (K units in the
            // last place, up to twice `tol` per doubling of the times)
            // could not be sure.
            if left > 1 {
                stopped += 1;
                let mut s = tt;
                s.sort_by(f64::total_cmp);
                let slack = f64::from_bits(s[0].to_bits() + k as u64) - s[0];
                assert!(s[1] - s[0] <= slack, "{i}: stopped at a gap of {} (filter {slack})", s[1] - s[0]);
            }
            taken += got.len();
        }
        assert!(taken > 100_000 && stopped >= 30, "{taken} steps taken, {stopped} walks stopped");
    }

    #[test]
    fn tol_ulps_covers_the_tolerance() {
        // K units in the last place of m0's binade are at least tol_fix.
        for (m0, tol) in [(1.0, 1e-12), (0.75, 3e-13), (1e-300, 1e-310), (123.456, 1e-9), (3.0e5, 1e-6)] {
            let k = tol_ulps(m0, tol).unwrap();
            let above = f64::from_bits(m0.to_bits() + k as u64);
            assert!(above >= m0 + tol, "{m0} {tol} {k}");
        }
        // Not a positive normal m0, or K too large: no.
        for (m0, tol) in
            [(0.0, 1e-12), (-0.0, 1e-12), (-1.0, 1e-12), (1e-310, 1e-320), (1e-9, 1.0), (f64::NAN, 1e-12)]
        {
            assert_eq!(tol_ulps(m0, tol), None, "{m0} {tol}");
        }
        assert_eq!(tol_ulps(1.0, f64::NAN), None);
    }
}
