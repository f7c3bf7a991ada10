//! [`GridWalk`]: the cells a ray or segment passes through, in order, with
//! ties decided exactly.
//!
//! # Derivation
//! On axis `a` the line `o + t·d` crosses the boundary plane with index `n`
//! (the plane `origin_a + n·size_a`) at
//!
//! ```text
//! T_a(n) = (origin_a + n·size_a − o_a) / d_a = X_a(n) / d_a .
//! ```
//!
//! The walk is the classic 3D-DDA (Amanatides & Woo, "A Fast Voxel Traversal
//! Algorithm for Ray Tracing", 1987): keep the next boundary `n` of each axis
//! and its time, step the axis whose time is smallest. What DESIGN §4 adds is
//! that equal times must be *seen*: a line through a lattice edge or corner
//! crosses two or three planes at the same `t`, and the step then holds every
//! cell touched there (supercover), or, without supercover, one axis at a
//! time in x, y, z order.
//!
//! # Exact ties
//! Two crossing times compare as `T_a ⋚ T_b ⇔ X_a·d_b ⋚ X_b·d_a` (times the
//! signs of `d_a`, `d_b`). Every term of that difference is exact in `f64`:
//! `origin_a` and `o_a` are `f32`; `n·size_a` has `|n| ≤ 2^29` and a 24-bit
//! mantissa, so it fits 53 bits; `d` is an `f32` (a ray) or the exact
//! difference `hi + lo` of two `f32` (a segment, [`two_sum`]); the products
//! are split exactly (TwoProduct). The sign of the sum of those ≤ 24 terms is found
//! exactly by expansion arithmetic ([`Terms`]). Quotients are never compared.
//!
//! That exact path is a *filter's* fallback, as in Shewchuk's adaptive
//! predicates. A time computed from its plane index as
//! `(n·size + fl(origin − o)) · fl(1/d)` (`n·size` exact) has an error of at
//! most `e₀ = u·|origin − o|/|d|·(1 + 5u) + 4.0001·u·|T|` (`u = 2^-53`: one
//! rounding each in the difference, the sum, the reciprocal, the product,
//! plus the `lo` part of a segment's `d`). The walk computes each axis's first
//! time that way and then *adds* `Δ = fl(size · |fl(1/d)|)` per crossing
//! (one add on the loop-carried chain instead of a multiply–add–multiply).
//! `Δ` is within `3u` (relative) of `size/|d|`, and each add rounds by
//! `u·|t|`, so after `j` crossings of an axis the error is at most
//! `e₀ + 3u·j·Δ + u·j·max|t_i|`; with `j·Δ ≤ |T| + |T₀|`, the times
//! monotone and `|T₀| ≤ |T| + |t_min|`, that is below
//! `C/2·(1 + 5u) + (4.0001 + 8S)·u·(|T| + |t_min|)` after `S ≥ j` steps
//! of the walk. With `C = 2u·max_a |origin_a − o_a|/|d_a|` and twice the
//! rest, two times closer than
//!
//! ```text
//! tol(t) = 3·(C + (8 + 16·S)·u·(|t| + |t_min|))
//! ```
//!
//! may be equal or in either order and go to the exact comparison; farther
//! apart, the `f64` order is the exact order. The same holds for the
//! comparison with `t_max`. The bound grows by `48u` per step, so a walk of
//! 10^6 steps still only suspects times within `5·10^-11` relative; times
//! recomputed from the plane index (after a slow step or a skip) are more
//! accurate than the bound assumes. The start cell is found from the `f64`
//! floor and then corrected by exact comparisons with its two planes.
//!
//! # Fast path
//! One step: the smallest time `m` is surely alone and surely before the
//! end, so exactly one axis steps. The filter is a single comparison of
//! the gap between the two smallest times with a tolerance that is *fixed*
//! for a segment of the walk ([`GridWalk::renew`]: at most
//! [`FAST_BUDGET`] fast steps and `m` up to about twice its value at the
//! segment's start, so `tol_fix ≥ tol(m)` for every step of the segment),
//! plus `m < t_fast_end` (the segment's end, and the walk's end with
//! `tol_fix` to spare) and the budget's count: no per-step update of the
//! tolerance. The choice of the axis, the add of its `Δ` and the ±1 of its
//! cell are branch-free packed SSE2 operations on x86_64 (compare masks
//! select `Δ` and the step); the filter only feeds a well-predicted branch.
//! Two forms of that step exist, each where it measured faster:
//! [`Hot::step_gap`] (the gap between the two smallest times against
//! `tol_fix`) in the volumes' casts, whose walks are short between stops,
//! and [`Hot::step`] (each time plus `tol_fix` against the others: a
//! shorter chain) in the iterator. A walk consumed to its end
//! ([`Iterator::fold`], `for_each`, `sum`, ...) runs
//! [`GridWalk::drive_long`], compiled for AVX where the CPU has it, which
//! also counts the crossings surely before the segment's end instead of
//! testing it per step (it tests it only past that count), keeps the cells in integer registers and takes
//! two steps per turn: about 24 instructions per step. On CPUs with
//! AVX-512VL its steps hold the times in three rotated copies instead, so
//! that no shuffle sits on the loop's chain (`walk_avx512.rs`: 1.8 ns a
//! step where this one takes 2.0 on Zen 4). Anything else (a
//! possible tie, the end, the cell limit, the end of a segment) takes the
//! exact slow path, which then starts a new segment. The volumes drive this loop in place
//! ([`GridWalk::drive_with`]) and skip empty blocks of `2^L` cells with a coarse
//! walk on the same planes, with the same fast step and filters
//! ([`GridWalk::skip_empty`],
//! [`GridWalk::skip_to`]); their walks are set up and clipped in one pass
//! ([`GridWalk::ray_in_box`]).
//!
//! Cell coordinates are limited to `[−2^29, 2^29)` (DESIGN asks for ±2^24):
//! a walk starting outside is empty, and a walk ends where it would leave.

use super::exact::{two_sum, Terms};
#[cfg(target_arch = "x86_64")]
use super::lanes::V4;
use super::lanes::{Lanes, V};
use super::voxels::{round_down, round_up, Isa};
use super::Grid;
use crate::{Interval, Part, Ray};
use glam::{IVec2, IVec3, Vec2, Vec3};

/// The default bound on the number of steps of a walk (the start step included).
pub const DEFAULT_MAX_STEPS: u32 = 100_000;

/// Cells exist for coordinates in `[-CELL_LIMIT, CELL_LIMIT)` on every axis;
/// `2^29` keeps `n·size` exact in `f64` (see the module docs).
pub const CELL_LIMIT: i32 = 1 << 29;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// `ks` of a new walk: `3·8u` (module docs).
const KS0: f64 = 3.0 * 8.0 * U;

/// Growth of `ks` per step: `3·16u` (module docs).
const KS_STEP: f64 = 3.0 * 16.0 * U;

/// Fast steps per segment of the walk ([`GridWalk::renew`]): a renewal
/// costs about as much as 20 fast steps, and the segment's tolerance grows
/// by `48u` per step of budget (4096 steps: `2·10^-12` relative), so a few
/// thousand makes renewals cost well under 1% of a long walk and keeps the
/// tolerance, hence the rate of exact slow steps, where it was.
const FAST_BUDGET: u32 = 4096;

/// [`GridWalk::drive_long`] takes the rotated steps (`walk_avx512.rs`) only
/// while more than this many fast steps are left: their start (the three
/// copies, the cells' move table, `K`'s division: about 50 instructions)
/// costs about as much as the gain of 30 steps (0.7 cycles each).
#[cfg(target_arch = "x86_64")]
const ROTATED_MIN_STEPS: u32 = 48;

/// The axis bit (0 for none) of [`Hot::step`]'s index of the stepped axis.
const AXIS_BIT: [u8; 4] = [0, 1, 2, 4];

/// Where a walk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// The start step is next.
    Start,
    /// Crossing steps are next.
    Walking,
    /// Nothing more.
    Done,
}

/// An iterator over the [`Step`]s of a ray or segment through a [`Grid`],
/// in order of `t`. No allocation; each step costs a few comparisons unless
/// two crossings are within rounding of each other, when they are compared
/// exactly (see the module documentation).
///
/// The first step is the cell containing the start point (`t = t_min`,
/// no face); each later step is the group of cells entered at one `t`. With
/// `supercover` a crossing through an edge or corner yields every touched
/// cell at once (3 at a 2D corner or a 3D edge, 7 at a 3D corner); without
/// it, tied crossings step one axis at a time in x, y, z order, each its own
/// step at the same `t`. A crossing exactly at `t_max` (a segment's end)
/// is included. At most `max_steps` steps are yielded
/// ([`DEFAULT_MAX_STEPS`] unless set with [`GridWalk::max_steps`]).
///
/// A walk is empty when an input is not finite, `t_min` is not finite,
/// `t_min > t_max`, or the start cell is beyond [`CELL_LIMIT`]. A zero
/// direction (or a zero-length segment) yields the start cell only.
///
/// For long walks, prefer internal iteration (`for_each`, `fold`, `sum`,
/// `count`, and adapters such as `map` that pass them on) to a `for` loop:
/// it runs a loop that keeps the whole walk in registers and is compiled
/// for AVX where the CPU has it (and its steps for AVX-512VL where it has
/// that), about 1.8–1.9 ns a step against 3.4–3.7 ns by [`Iterator::next`]
/// on the bench's walks (Zen 4). The steps are the same.
///
/// # Examples
/// ```
/// use raycast::grid::{Grid, GridWalk};
/// use raycast::glam::{ivec2, vec2};
/// let grid = Grid::<2>::new(vec2(1.0, 1.0), vec2(0.0, 0.0));
/// // Through the lattice corner (1, 1): the diagonal cell and both sides at once.
/// let steps: Vec<_> = GridWalk::<2>::segment(&grid, vec2(0.5, 0.5), vec2(1.5, 1.5), true).collect();
/// assert_eq!(steps.len(), 2);
/// assert_eq!((steps[1].t, steps[1].len()), (0.5, 3));
/// let mut cells: Vec<_> = steps[1].cells().collect();
/// cells.sort_by_key(|c| (c.x, c.y));
/// assert_eq!(cells, [ivec2(0, 1), ivec2(1, 0), ivec2(1, 1)]);
/// ```
#[derive(Clone, Debug)]
pub struct GridWalk<const N: usize> {
    cell: [i32; N],
    /// +1, −1 or 0 per axis. The next plane of axis `a` is `cell[a] + 1`
    /// moving up, `cell[a]` moving down (see [`GridWalk::nf`]): no plane
    /// index is kept, and the walk stays small (the iterator's state must
    /// fit the optimiser's limits to live in registers).
    step: [i32; N],
    /// Approximate time of crossing the next plane (`+∞` when `d = 0`).
    tn: [f64; N],
    /// `fl(origin − o)`.
    c: [f64; N],
    /// `fl(1 / d_hi)`.
    inv: [f64; N],
    size: [f64; N],
    origin: [f64; N],
    o: [f64; N],
    dh: [f64; N],
    dl: [f64; N],
    t_min: f32,
    t_max: f32,
    /// `3C` of the module docs.
    tol_c: f64,
    /// `fl(size / |d_hi|)`: the increment of `tn` per crossing (0 when `d = 0`).
    dt: [f64; N],
    /// `3·(8 + 16·S)·u` after `S` steps (module docs: the tolerance grows
    /// with the number of incremental updates of `tn`). Fast steps are
    /// folded in lazily ([`GridWalk::sync`]).
    ks: f64,
    /// `|t_min|`.
    atmin: f64,
    /// Crossings before this are surely before `t_max` and surely do not
    /// leave the cells below [`CELL_LIMIT`] (`T − tol(T)` for the earliest of
    /// those ends), so the fast path checks neither.
    t_end_fast: f64,
    remaining: u32,
    supercover: bool,
    state: State,
    /// Bit `a`: the direction is negative on axis `a`.
    neg: u8,
    /// The fast path's fixed tolerance: at least `tol(m)` for every `m`
    /// and step count the current segment allows ([`GridWalk::renew`]).
    tol_fix: f64,
    /// Fast steps need `m < t_fast_end` (the segment's end, and surely
    /// before the walk's end with `tol_fix` to spare).
    t_fast_end: f64,
    /// Fast steps left in the segment's budget.
    fast_left: u32,
    /// The budget the segment started with (`fast_given − fast_left` fast
    /// steps are not yet counted in `ks` and `remaining`).
    fast_given: u32,
}

/// One step of a [`GridWalk`]: the cells entered at one `t`.
///
/// The step's main cell ([`Step::cell`]) is the one the line goes on in (the
/// diagonal cell at a corner); the others are touched at the edge or corner
/// only. Within a step the cells come in no particular order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step<const N: usize> {
    /// When the cells are entered (`t_min` for the start step).
    pub t: f32,
    /// When the line leaves the main cell: the next crossing, or `t_max`.
    pub t_exit: f32,
    cell: [i32; N],
    /// Bit `a`: axis `a` was crossed at `t`.
    axes: u8,
    /// Bit `a`: the direction is negative on axis `a`.
    neg: u8,
}

impl<const N: usize> GridWalk<N> {
    /// The walk of `o + t·(dh + dl)` over `range`; `dh + dl` is the exact
    /// direction (`dl = 0` for a ray, the rounding of `b − a` for a segment).
    #[inline]
    fn build(
        grid: &Grid<N>,
        o: [f32; N],
        dh: [f64; N],
        dl: [f64; N],
        range: Interval,
        supercover: bool,
    ) -> Self {
        let mut w = Self::blank(grid, o, dh, dl, range, supercover);
        let finite = o.iter().all(|x| x.is_finite()) && dh.iter().chain(&dl).all(|x| x.is_finite());
        if !finite || !range.min.is_finite() || range.is_empty() {
            return w;
        }
        w.init();
        w
    }

    /// A walk that is over before it starts, with the inputs stored.
    #[inline(always)]
    fn blank(
        grid: &Grid<N>,
        o: [f32; N],
        dh: [f64; N],
        dl: [f64; N],
        range: Interval,
        supercover: bool,
    ) -> Self {
        Self {
            cell: [0; N],
            step: [0; N],
            tn: [f64::INFINITY; N],
            c: [0.0; N],
            inv: [0.0; N],
            size: grid.cell_size.map(f64::from),
            origin: grid.origin.map(f64::from),
            o: o.map(f64::from),
            dh,
            dl,
            t_min: range.min,
            t_max: range.max,
            tol_c: 0.0,
            dt: [0.0; N],
            ks: KS0,
            atmin: f64::from(range.min).abs(),
            t_end_fast: f64::NEG_INFINITY,
            remaining: DEFAULT_MAX_STEPS,
            supercover,
            state: State::Done,
            neg: 0,
            tol_fix: f64::INFINITY,
            t_fast_end: f64::NEG_INFINITY,
            fast_left: 0,
            fast_given: 0,
        }
    }

    /// Sets up a [`GridWalk::blank`] walk with finite inputs and a non-empty
    /// range with a finite start: start cell, times, tolerances, and
    /// `State::Start` (or `Done` if the start cell is beyond the limit).
    /// Uses `inv` when already set (non-zero) for a moving axis.
    #[inline(always)]
    fn init(&mut self) {
        let w = self;
        let mut c_over_d = 0.0f64;
        for a in 0..N {
            let Some(n) = start_cell(w.origin[a], w.size[a], w.o[a], w.dh[a], w.dl[a], w.t_min) else {
                return;
            };
            w.cell[a] = n;
            w.c[a] = w.origin[a] - w.o[a];
            if w.dh[a] != 0.0 {
                w.step[a] = if w.dh[a] > 0.0 { 1 } else { -1 };
                if w.inv[a] == 0.0 {
                    w.inv[a] = 1.0 / w.dh[a];
                }
                w.dt[a] = w.size[a] * w.inv[a].abs();
                w.tn[a] = w.time(a);
                c_over_d = fmax(c_over_d, (w.c[a] * w.inv[a]).abs());
            }
        }
        // C = 2u·max|origin − o|/|d| (with one more rounding of slack); tolerance 3C.
        w.tol_c = 3.0 * (2.0 * U * c_over_d * (1.0 + 4.0 * U));
        w.neg = w.neg_mask();
        let t_max = f64::from(w.t_max);
        w.t_end_fast = if t_max == f64::INFINITY { t_max } else { t_max - w.tol(t_max) };
        for a in 0..N {
            // The plane whose crossing would leave [−CELL_LIMIT, CELL_LIMIT).
            if w.step[a] != 0 {
                let edge = f64::from(if w.step[a] > 0 { CELL_LIMIT } else { -CELL_LIMIT });
                let t_edge = w.time_at(a, edge);
                w.t_end_fast = w.t_end_fast.min(t_edge - w.tol(t_edge));
            }
        }
        w.state = State::Start;
    }

    /// At most `max_steps` steps (the start step included); 0 gives none.
    #[must_use]
    pub fn max_steps(mut self, max_steps: u32) -> Self {
        self.sync();
        self.remaining = max_steps;
        if self.state == State::Walking {
            self.renew();
        }
        self
    }

    /// Counts the fast steps taken since the last [`GridWalk::renew`] in
    /// `ks` and `remaining` (the slow paths read both).
    #[inline(always)]
    fn sync(&mut self) {
        let used = self.fast_given - self.fast_left;
        self.ks += KS_STEP * f64::from(used);
        self.remaining -= used;
        self.fast_given = self.fast_left;
    }

    /// Starts a fast segment from the current state (first counting the
    /// fast steps of the last one, [`GridWalk::sync`]).
    ///
    /// A segment allows at most [`FAST_BUDGET`] fast steps and times
    /// `m < seg_end = m₀ + max(|m₀| + |t_min|, FAST_BUDGET·min Δ)` (`m₀` the
    /// next crossing now): long enough that renewals are rare (every
    /// `FAST_BUDGET` steps, or when `|m|` about doubles), short enough that
    /// the fixed tolerance stays near `tol(m)`. Every `m` a fast step sees
    /// lies in `[t_min − err, seg_end]` (next crossings follow the start;
    /// `err ≤ tol/3 ≤ 10^-4·(|m| + |t_min|) + tol_c/3` for fewer than 2^32
    /// steps), so `|m| ≤ M = max(|seg_end|, 1.0001·|t_min| + tol_c)` and
    /// `tol(m) ≤ tol_c + ks(S + budget)·(M + |t_min|)`; the factor
    /// `1 + 10^-9` covers the few roundings of that bound. A fast step also
    /// needs `m < fl(t_end_fast − 2·tol_fix)`, so its crossing is surely
    /// before the walk's end: the subtraction's rounding is below
    /// `u·M ≤ tol_fix / 24` (when the bound matters, it lies in the range of
    /// `m` above, and `tol_fix ≥ 24u·M`).
    #[inline]
    fn renew(&mut self) {
        self.sync();
        self.renew_synced();
    }

    /// [`GridWalk::renew`] on a walk whose fast steps are all counted
    /// ([`GridWalk::sync`] done, no fast step since: `sync` would change
    /// nothing).
    #[inline(always)]
    fn renew_synced(&mut self) {
        debug_assert_eq!(self.fast_given, self.fast_left);
        let budget = FAST_BUDGET.min(self.remaining);
        self.fast_left = budget;
        self.fast_given = budget;
        (self.tol_fix, self.t_fast_end) = self.fast_segment(&self.tn, &self.dt, budget);
    }

    /// `(tol_fix, t_fast_end)` of a segment of at most `budget` steps from
    /// the times `tn` with increments `dt` ([`GridWalk::renew`], whose docs
    /// give the bound; also the coarse walk's, [`GridWalk::skip_empty`]).
    #[inline(always)]
    fn fast_segment(&self, tn: &[f64; N], dt: &[f64; N], budget: u32) -> (f64, f64) {
        let (tol_fix, end, m) = self.fast_segment_raw(tn, dt, budget);
        // m = ∞ (nothing moves) or anything not finite: no fast steps.
        (tol_fix, if m.is_finite() && end.is_finite() { end } else { f64::NEG_INFINITY })
    }

    /// [`GridWalk::fast_segment`] without the test for finite values:
    /// `(tol_fix, end, m)`, `end` the segment's end as long as `m` and it
    /// are finite.
    #[inline(always)]
    fn fast_segment_raw(&self, tn: &[f64; N], dt: &[f64; N], budget: u32) -> (f64, f64, f64) {
        let mut m = tn[0];
        for t in &tn[1..] {
            m = fmin(m, *t);
        }
        let mut dt_min = f64::INFINITY;
        for (d, s) in dt.iter().zip(&self.step) {
            if *s != 0 {
                dt_min = fmin(dt_min, *d);
            }
        }
        let seg_end = m + fmax(m.abs() + self.atmin, f64::from(FAST_BUDGET) * dt_min);
        let mb = fmax(seg_end.abs(), 1.0001 * self.atmin + self.tol_c);
        let ks = self.ks + KS_STEP * f64::from(budget);
        let tol_fix = (self.tol_c + ks * (mb + self.atmin)) * (1.0 + 1e-9);
        let end = fmin(seg_end, self.t_end_fast - 2.0 * tol_fix);
        (tol_fix, end, m)
    }

    /// A number of the crossings after the times `tn` that are all surely before
    /// the segment's end: each fast step needs `m < t_fast_end`, and the
    /// first `n` crossings in time order are all earlier than `x` when `n`
    /// is at most the number of crossings earlier than `x`, counted per
    /// axis. Axis `a` crosses at `tn + j·Δ` (`j ≥ 0`), so `⌊(x − tn)/Δ⌋`
    /// of them (clamped to `[0, 2^32)` by the cast; 0 for `+∞` times and
    /// NaN) are earlier than `x` up to rounding, and with `x = t_fast_end −
    /// 2·tol_fix` the rounding of the quotient and of the walk's sums (far
    /// below `tol_fix`, module docs) cannot carry one of them past
    /// `t_fast_end`. The drive then tests no end per step for those (only
    /// for the few crossings past the count, see [`GridWalk::drive_long`]).
    #[inline(always)]
    fn steps_before_end(&self, tn: &[f64; N]) -> u32 {
        let x = self.t_fast_end - 2.0 * self.tol_fix;
        (0..N).fold(0u32, |n, a| n.saturating_add(((x - tn[a]) / self.dt[a]) as u32))
    }

    /// The next plane of axis `a` (exact integer in `f64`).
    #[inline(always)]
    fn nf(&self, a: usize) -> f64 {
        f64::from(self.cell[a] + i32::from(self.step[a] > 0))
    }

    /// Approximate time of the next crossing on axis `a`.
    #[inline(always)]
    fn time(&self, a: usize) -> f64 {
        self.time_at(a, self.nf(a))
    }

    /// Approximate time of crossing plane `n` of axis `a` (error bound: module docs).
    #[inline(always)]
    fn time_at(&self, a: usize, n: f64) -> f64 {
        // n·size is exact (|n| ≤ 2^29 + 2^4 with the low bits of n zero
        // beyond 2^29, 24-bit size): one rounding in the sum.
        (n * self.size[a] + self.c[a]) * self.inv[a]
    }

    /// Tie-suspicion tolerance at time `m` (module docs:
    /// `3·(C + (8 + 16·S)·u·(|m| + |t_min|))` after `S` steps).
    #[inline(always)]
    fn tol(&self, m: f64) -> f64 {
        self.tol_c + self.ks * (m.abs() + self.atmin)
    }

    /// `X_a = origin_a + n_a·size_a − o_a` (exact terms) added with factor `sign`·`y`.
    #[inline]
    fn push_x_times(&self, terms: &mut Terms, a: usize, y: f64) {
        terms.push_prod(self.origin[a], y);
        terms.push_prod(self.nf(a) * self.size[a], y);
        terms.push_prod(-self.o[a], y);
    }

    /// `X_a(n) = origin_a + n·size_a − o_a` when it is one `f64` exactly
    /// (both sums exact, checked with TwoSum: typical of lattice inputs).
    #[inline]
    fn x_exact(&self, a: usize, n: f64) -> Option<f64> {
        let (s1, e1) = two_sum(self.origin[a], n * self.size[a]);
        let (s2, e2) = two_sum(s1, -self.o[a]);
        (e1 == 0.0 && e2 == 0.0).then_some(s2)
    }

    /// Exact sign of `T_a − T_b` (both axes moving).
    fn cmp_axes(&self, a: usize, b: usize) -> i32 {
        // T_a − T_b = (X_a·d_b − X_b·d_a) / (d_a·d_b).
        if self.dl[a] == 0.0 && self.dl[b] == 0.0 {
            // Common case (rays; segments with an exact difference): when
            // X_a and X_b are single doubles, two exact products are enough
            // (four terms instead of up to 24).
            if let (Some(xa), Some(xb)) = (self.x_exact(a, self.nf(a)), self.x_exact(b, self.nf(b))) {
                let mut terms = Terms::<4>::new();
                terms.push_prod(xa, self.dh[b]);
                terms.push_prod(-xb, self.dh[a]);
                return terms.sign() * self.step[a] * self.step[b];
            }
        }
        let mut terms: Terms = Terms::new();
        self.push_x_times(&mut terms, a, self.dh[b]);
        self.push_x_times(&mut terms, a, self.dl[b]);
        self.push_x_times(&mut terms, b, -self.dh[a]);
        self.push_x_times(&mut terms, b, -self.dl[a]);
        terms.sign() * self.step[a] * self.step[b]
    }

    /// Exact sign of `T_a − t`.
    fn cmp_time(&self, a: usize, t: f32) -> i32 {
        self.cmp_plane_time(a, self.nf(a), f64::from(t))
    }

    /// Exact sign of `T_a(n) − t` for plane `n` of a moving axis `a` and any finite `t`.
    fn cmp_plane_time(&self, a: usize, n: f64, t: f64) -> i32 {
        // T_a(n) − t = (X_a(n) − t·d_a) / d_a; t·d_a is split exactly (TwoProduct).
        if self.dl[a] == 0.0 {
            if let Some(x) = self.x_exact(a, n) {
                let mut terms = Terms::<3>::new();
                terms.push(x);
                terms.push_prod(-t, self.dh[a]);
                return terms.sign() * self.step[a];
            }
        }
        let mut terms: Terms = Terms::new();
        terms.push(self.origin[a]);
        terms.push(n * self.size[a]);
        terms.push(-self.o[a]);
        terms.push_prod(-t, self.dh[a]);
        terms.push_prod(-t, self.dl[a]);
        terms.sign() * self.step[a]
    }

    /// The axes crossing first, decided exactly among the `candidates`, or
    /// `None` if that crossing is after `t_max`.
    #[cold]
    fn exact_group(&self, candidates: u8) -> Option<u8> {
        let mut best = candidates.trailing_zeros() as usize;
        let mut group = 1u8 << best;
        for b in best + 1..N {
            if candidates & (1 << b) == 0 {
                continue;
            }
            match self.cmp_axes(b, best) {
                s if s < 0 => {
                    best = b;
                    group = 1 << b;
                }
                0 => group |= 1 << b,
                _ => {}
            }
        }
        if self.t_max.is_finite() && self.cmp_time(best, self.t_max) > 0 {
            return None;
        }
        Some(group)
    }

    #[inline(always)]
    fn neg_mask(&self) -> u8 {
        let mut neg = 0;
        for a in 0..N {
            neg |= u8::from(self.step[a] < 0) << a;
        }
        neg
    }

    #[inline(always)]
    fn min_tn(&self) -> f64 {
        let mut m = self.tn[0];
        for a in 1..N {
            m = fmin(m, self.tn[a]);
        }
        m
    }

    /// Time the walk leaves the current cell (approximate), at most `t_max`.
    #[inline(always)]
    fn exit_time(&self, t: f32) -> f32 {
        let e = fmin(self.min_tn(), f64::from(self.t_max)) as f32;
        if e < t {
            t
        } else {
            e
        }
    }

    /// Finishes the walk (`remaining = 0` also stops [`GridWalk::try_fast`]).
    #[cold]
    fn finish(&mut self) -> (u8, f64) {
        self.state = State::Done;
        self.remaining = 0;
        self.fast_left = 0;
        self.fast_given = 0;
        self.t_fast_end = f64::NEG_INFINITY;
        (0, 0.0)
    }

    /// Takes the start step: false if the walk is empty (or `max_steps` is 0).
    #[inline]
    pub(crate) fn begin(&mut self) -> bool {
        if self.state != State::Start || self.remaining == 0 {
            self.finish();
            return false;
        }
        self.state = State::Walking;
        self.sync();
        self.remaining -= 1;
        self.renew();
        true
    }

    /// The fast step after the start step, if it applies: the axis crossed
    /// and the approximate `t` of the crossing (clamp it to the range, see
    /// [`GridWalk::step_t`]); the new main cell is `self.cell`. Otherwise
    /// [`GridWalk::advance_slow_in_place`] takes the step.
    ///
    /// Fast path ([`Hot::step`]): the smallest time `m` is surely alone (the
    /// next one is more than `tol_fix` later) and surely before the
    /// segment's and the walk's end, so the order is exact without further
    /// work and one axis steps, its time advanced by `Δ`.
    #[inline(always)]
    fn try_fast(&mut self) -> Option<(u8, f64)> {
        let k = Consts::new(&self.dt, &self.step);
        let (next, idx, m, sure) =
            Hot::new(&self.tn, &self.cell).step(&k, Tol::new(self.tol_fix), Isa::BASELINE);
        if sure && m < self.t_fast_end && self.fast_left != 0 {
            self.cell = next.cell();
            self.tn = next.times();
            self.fast_left -= 1;
            return Some((AXIS_BIT[idx], m));
        }
        None
    }

    /// A step after the start step when the fast one does not apply: the
    /// axes crossed (0 when the walk is over) and the approximate `t`.
    #[inline(always)]
    fn advance_slow_in_place(&mut self) -> (u8, f64) {
        // By value, field by field (not a block copy), so that the walk's
        // address never escapes the caller's loop and its fields can live
        // in registers (an `&mut self` call, even a cold one, pins the whole
        // walk to memory); only the hot fields come back.
        let (hot, axes, t) = slow_by_value(GridWalk {
            cell: self.cell,
            step: self.step,
            tn: self.tn,
            c: self.c,
            inv: self.inv,
            size: self.size,
            origin: self.origin,
            o: self.o,
            dh: self.dh,
            dl: self.dl,
            t_min: self.t_min,
            t_max: self.t_max,
            tol_c: self.tol_c,
            dt: self.dt,
            ks: self.ks,
            atmin: self.atmin,
            t_end_fast: self.t_end_fast,
            remaining: self.remaining,
            supercover: self.supercover,
            state: self.state,
            neg: self.neg,
            tol_fix: self.tol_fix,
            t_fast_end: self.t_fast_end,
            fast_left: self.fast_left,
            fast_given: self.fast_given,
        });
        (
            self.cell,
            self.tn,
            self.ks,
            self.remaining,
            self.state,
            self.tol_fix,
            self.t_fast_end,
            self.fast_left,
            self.fast_given,
        ) = hot;
        (axes, t)
    }

    /// Runs the crossing steps (after [`GridWalk::begin`]) with the walk's
    /// hot state in locals (registers), calling `visit(acc, axes, t, h,
    /// one)` for each: `axes` and `t` as from [`GridWalk::try_fast`], `h`
    /// the packed state after the step ([`Hot`]: its main cell, relative to
    /// `base` below, by [`Hot::cell`] and the like; its times for the exit
    /// of the cell entered). Returns [`Flow::End`] when the walk is over, or
    /// what `visit` answered other than [`Flow::Go`] (the walk is then saved
    /// and can be driven again, e.g. after [`GridWalk::skip_empty`], except
    /// after [`Flow::Stop`], which ends the walk: its cell and times are
    /// then not brought up to date).
    ///
    /// The accumulator `acc` is passed by value through every call and
    /// returned with the [`Flow`]: state carried from step to step that way
    /// stays in registers (state that a closure captures by reference is
    /// loaded and stored at every step).
    ///
    /// The fast path is [`GridWalk::try_fast`]'s, on the packed state
    /// kept in registers: the loop-carried chain per step is
    /// compare → mask → add. Fast steps count against `max_steps` per
    /// segment ([`GridWalk::sync`]); the volumes walk with `u32::MAX`
    /// steps, more than the `3·2^30` any walk within [`CELL_LIMIT`] can take.
    ///
    /// `visit`'s last argument `one` is true for a fast step, whose `axes`
    /// is surely one axis: `visit` is inlined once for fast steps and once
    /// for slow ones, so that its test of `axes` folds away in the fast copy.
    ///
    /// The cells given to `visit` are relative to `base` (`cell − base`,
    /// wrapping): the packed state holds them so, which saves the volumes a
    /// subtraction per axis and step.
    #[inline(always)]
    pub(crate) fn drive_with<A>(
        &mut self,
        mut acc: A,
        base: [i32; N],
        mut visit: impl FnMut(A, u8, f64, Hot<N>, bool) -> (A, Flow),
    ) -> (A, Flow) {
        let rel = |c: [i32; N]| std::array::from_fn(|a| c[a].wrapping_sub(base[a]));
        let abs = |h: &Hot<N>| {
            let c = h.cell();
            std::array::from_fn(|a| c[a].wrapping_add(base[a]))
        };
        let k = Consts::new(&self.dt, &self.step);
        let mut h = Hot::new(&self.tn, &rel(self.cell));
        let mut left = self.fast_left;
        let (mut tol, mut end) = (self.tol_fix, self.t_fast_end);
        loop {
            let (next, sel, m, gap) = h.step_gap(&k);
            let flow;
            // Two calls of `visit` (see above), each with its own exit, so
            // that a fast step that goes on loops straight back: in the fast
            // one `sel` is one axis (`gap > tol_fix ≥ 0`: the smallest time
            // is alone), and it is only computed where `visit` uses it.
            if gap > tol && m < end && left != 0 {
                h = next;
                left -= 1;
                (acc, flow) = visit(acc, sel, m, h, true);
                if flow == Flow::Go {
                    continue;
                }
            } else {
                (self.cell, self.tn, self.fast_left) = (abs(&h), h.times(), left);
                let (axes, t) = self.advance_slow();
                if axes == 0 {
                    return (acc, Flow::End);
                }
                h = Hot::new(&self.tn, &rel(self.cell));
                left = self.fast_left;
                (tol, end) = (self.tol_fix, self.t_fast_end);
                (acc, flow) = visit(acc, axes, t, h, false);
                if flow == Flow::Go {
                    continue;
                }
            }
            // A stop (a hit) ends the walk for every caller: only the other
            // answers save the walk for the next drive (a hit, once per
            // cast, spares the stores: 16 instructions per ray on the peer
            // comparison's sparse volume).
            if flow != Flow::Stop {
                (self.cell, self.tn, self.fast_left) = (abs(&h), h.times(), left);
            }
            return (acc, flow);
        }
    }

    /// The crossing steps (after [`GridWalk::begin`]) of a walk taken to
    /// its end, as [`Iterator::fold`] takes them: `visit(acc, axes, t,
    /// cell, times)` for each (`t` as from [`GridWalk::try_fast`], `times`
    /// the next crossing per axis after the step).
    ///
    /// What [`GridWalk::drive_with`] does, for a walk whose every step is
    /// consumed, so with the fewest instructions per fast step (the loop is
    /// bound by their number, not by its chain):
    /// * [`Hot::step`]'s filter, whose chain is short;
    /// * no test of the segment's end per step: the drive counts the
    ///   crossings surely before it ([`GridWalk::steps_before_end`]) and
    ///   takes at most that many fast steps; past them (the count falls
    ///   short by up to one crossing per axis), single fast steps with the
    ///   end tested, as [`GridWalk::try_fast`], before any slow one;
    /// * the cells in integer registers, each moved by a table lookup on
    ///   the stepped axis's index (not in vector lanes: the step's vector
    ///   operations are what limits the loop);
    /// * two fast steps per turn of the loop, the count tested once.
    ///
    /// About 24 instructions per step (AVX) on the `walk_floor` bench's
    /// segments, 2.0–2.2 ns on Zen 4, where the walk by `next` takes 3.3 ns.
    /// With AVX-512VL, the two-step turns of a segment whose times are
    /// positive run [`walk_avx512::run`](super::walk_avx512) instead (the
    /// same steps, a chain a cycle shorter): 1.8 ns.
    #[inline(always)]
    fn drive_long<A>(
        &mut self,
        isa: Isa,
        mut acc: A,
        mut visit: impl FnMut(A, u8, f64, [i32; N], [f64; N]) -> A,
    ) -> A {
        // The cells' moves by the stepped axis ([`Hot::step`]'s `idx`).
        let moves: [[i32; 4]; N] =
            std::array::from_fn(|a| std::array::from_fn(|idx| if idx == a + 1 { self.step[a] } else { 0 }));
        // `left`: the fast steps allowed before the slow path; `spare`: the
        // rest of the segment's budget, given back on the way out. The
        // crossings before the segment's end are counted (three divisions)
        // only when a fast step could be taken, once after each slow step:
        // walks of ties (every step slow) never count them.
        let k = Consts::new(&self.dt, &self.step);
        let mut h = Hot::new(&self.tn, &self.cell);
        let mut cell = self.cell;
        let (mut left, mut spare, mut counted) = (0u32, self.fast_left, false);
        let mut tol = Tol::new(self.tol_fix);
        // With AVX-512VL, the fast steps of a segment whose times are
        // positive take the rotated step (`walk_avx512`), with its
        // tolerance in units in the last place taken from the smallest
        // time at each start (the times only grow, so it only shrinks).
        // Not for the last few steps of a walk: their start would cost
        // short walks more than it saves them.
        #[cfg(target_arch = "x86_64")]
        let min64 = N == 3 && isa.avx() && super::walk_avx512::available();
        #[cfg(target_arch = "x86_64")]
        let mut rotated = min64;
        loop {
            #[cfg(target_arch = "x86_64")]
            if rotated && left > ROTATED_MIN_STEPS {
                // N = 3 here: the arrays' conversions are the identity.
                let times = h.times();
                let (mut t3, mut c3) = (std::array::from_fn(|a| times[a]), std::array::from_fn(|a| cell[a]));
                if let Some(k) = super::walk_avx512::tol_ulps(t3[0].min(t3[1]).min(t3[2]), self.tol_fix) {
                    let (dt, step) =
                        (std::array::from_fn(|a| self.dt[a]), std::array::from_fn(|a| self.step[a]));
                    // SAFETY: the CPU has AVX-512F and AVX-512VL (`min64`).
                    acc = unsafe {
                        super::walk_avx512::run(
                            &mut t3,
                            &mut c3,
                            &mut left,
                            &dt,
                            &step,
                            k,
                            acc,
                            &mut |acc, axes, m, c, t| {
                                visit(
                                    acc,
                                    axes,
                                    m,
                                    std::array::from_fn(|a| c[a]),
                                    std::array::from_fn(|a| t[a]),
                                )
                            },
                        )
                    };
                    cell = std::array::from_fn(|a| c3[a]);
                    h = Hot::new(&std::array::from_fn(|a| t3[a]), &cell);
                } else {
                    // Not this segment (a time too small, or not positive).
                    rotated = false;
                }
            }
            // Two fast steps per turn, `left` tested once for both (also
            // after the rotated steps: where their filter was not sure,
            // this one may be).
            if left > 1 {
                let (next, idx, m, sure) = h.step(&k, tol, isa);
                if sure {
                    h = next;
                    cell = std::array::from_fn(|a| cell[a].wrapping_add(moves[a][idx]));
                    acc = visit(acc, AXIS_BIT[idx], m, cell, h.times());
                    let (next, idx, m, sure) = h.step(&k, tol, isa);
                    if sure {
                        h = next;
                        left -= 2;
                        cell = std::array::from_fn(|a| cell[a].wrapping_add(moves[a][idx]));
                        acc = visit(acc, AXIS_BIT[idx], m, cell, h.times());
                        continue;
                    }
                    left -= 1;
                }
            }
            if !counted {
                counted = true;
                if h.step(&k, tol, isa).3 {
                    let n = spare.min(self.steps_before_end(&h.times()));
                    (left, spare) = (left + n, spare - n);
                    if left > 1 {
                        continue;
                    }
                }
            }
            // Past the counted crossings (the count falls short of the
            // segment's end by up to one crossing per axis): single fast
            // steps with the end tested, as `try_fast` takes them, rather
            // than slow ones. On walks of a few cells these are most of
            // the steps (4-cell walks: 1.9× faster than the slow steps).
            (spare, left) = (spare + left, 0);
            let (next, idx, m, sure) = h.step(&k, tol, isa);
            if sure && m < self.t_fast_end && spare != 0 {
                h = next;
                spare -= 1;
                cell = std::array::from_fn(|a| cell[a].wrapping_add(moves[a][idx]));
                acc = visit(acc, AXIS_BIT[idx], m, cell, h.times());
                continue;
            }
            (self.cell, self.tn, self.fast_left) = (cell, h.times(), spare);
            let (axes, t) = self.advance_slow();
            if axes == 0 {
                return acc;
            }
            h = Hot::new(&self.tn, &self.cell);
            cell = self.cell;
            (left, spare, counted) = (0, self.fast_left, false);
            tol = Tol::new(self.tol_fix);
            #[cfg(target_arch = "x86_64")]
            {
                rotated = min64;
            }
            acc = visit(acc, axes, t, self.cell, self.tn);
        }
    }

    /// Bit `a`: the direction is negative on axis `a`.
    #[inline(always)]
    pub(crate) fn neg_bits(&self) -> u8 {
        self.neg
    }

    /// [`GridWalk::try_fast`] when two crossings may tie, the end may be
    /// reached, or the walk is over: exact comparisons decide.
    #[inline(always)]
    fn advance_slow(&mut self) -> (u8, f64) {
        self.sync();
        let m = self.min_tn();
        if self.remaining == 0 || m == f64::INFINITY {
            return self.finish();
        }
        let lim = m + self.tol(m);
        let candidates = below(&self.tn, lim);
        let Some(group) = self.exact_group(candidates) else {
            return self.finish();
        };
        let axes = if self.supercover { group } else { group & group.wrapping_neg() };
        let t = self.tn[axes.trailing_zeros() as usize];
        for a in 0..N {
            if axes & (1 << a) != 0 {
                let next = self.cell[a] + self.step[a];
                if !(-CELL_LIMIT..CELL_LIMIT).contains(&next) {
                    return self.finish();
                }
                self.cell[a] = next;
                self.tn[a] = self.time(a);
            }
        }
        self.ks += KS_STEP;
        self.remaining -= 1;
        // The step used one unit of the segment's budget (its `tol_fix`
        // allows `budget` steps of any kind); a new segment only when the
        // budget is spent or the next crossing is past the segment's end,
        // so that a walk of ties (all slow) does not renew at every step.
        if self.fast_left == 0 || self.min_tn() >= self.t_fast_end {
            self.renew();
        } else {
            self.fast_left -= 1;
            self.fast_given -= 1;
        }
        (axes, t)
    }

    /// The `f32` time of a crossing at approximate time `t` (from
    /// [`GridWalk::try_fast`]), clamped to the walk's range.
    #[inline(always)]
    pub(crate) fn step_t(&self, t: f64) -> f32 {
        clamp_step_t(t, self.t_min, self.t_max)
    }

    /// The step [`GridWalk::try_fast`] just made (`axes = 0`: the start step).
    #[inline(always)]
    pub(crate) fn make_step(&self, axes: u8, t: f32) -> Step<N> {
        Step { t, t_exit: self.exit_time(t), cell: self.cell, axes, neg: self.neg }
    }

    /// The current main cell.
    #[inline(always)]
    pub(crate) fn cell(&self) -> [i32; N] {
        self.cell
    }

    /// True once the start step is taken and until the walk is over.
    #[inline(always)]
    pub(crate) fn is_walking(&self) -> bool {
        self.state == State::Walking
    }

    /// The start of the walk's range.
    #[inline(always)]
    pub(crate) fn t_min(&self) -> f32 {
        self.t_min
    }

    /// Moves the walk to its state at time `ts` (all crossings before `ts`
    /// taken, none at or after it), without visiting the cells in between;
    /// does nothing on axes already past `ts`. The caller must know that no
    /// cell it cares about is touched before `ts`.
    ///
    /// Per axis the first plane crossed at or after `ts` is estimated from
    /// the `f64` position at `ts` (by `inv_size`, `1 / size` per axis as
    /// [`BoxClip`] keeps it) and then confirmed with the time filter
    /// (its time and its predecessor's are farther than `tol` from `ts`),
    /// or moved by exact comparisons ([`Terms`]) when either is closer.
    ///
    /// The walk must be synced ([`GridWalk::sync`], no fast step since), as
    /// its one caller, [`GridWalk::skip_empty`], leaves it.
    ///
    /// Always inlined (its one call is in [`GridWalk::skip_empty`]), so that
    /// it is compiled with the volumes' target features.
    #[inline(always)]
    pub(crate) fn skip_to(&mut self, ts: f64, isa: Isa, inv_size: &[f64; 4]) {
        #[cfg(target_arch = "x86_64")]
        if isa.avx() {
            // SAFETY: the CPU has AVX (an `Isa` says so only then).
            unsafe { self.skip_to_avx(ts, inv_size) };
            return;
        }
        let _ = isa;
        self.skip_to_base(ts, inv_size);
    }

    /// [`GridWalk::skip_to`] with AVX, out of line: a skip is rare next to
    /// the steps, and its code inlined into the volumes' casts costs their
    /// step loop registers (measured: a spill more per step).
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    #[inline(never)]
    unsafe fn skip_to_avx(&mut self, ts: f64, inv_size: &[f64; 4]) {
        self.skip_to_with::<V4>(ts, inv_size);
    }

    /// [`GridWalk::skip_to`] on the baseline, out of line (see
    /// [`GridWalk::skip_to_avx`]).
    #[inline(never)]
    fn skip_to_base(&mut self, ts: f64, inv_size: &[f64; 4]) {
        self.skip_to_with::<V>(ts, inv_size);
    }

    /// [`GridWalk::skip_to`], its common case on lanes `L`.
    ///
    /// The walk must be synced ([`GridWalk::sync`], no fast step since), as
    /// [`GridWalk::skip_empty`], its one caller, leaves it: the sync and
    /// the renewal's sync, which would change nothing, are left out (a
    /// dozen instructions each).
    #[inline(always)]
    fn skip_to_with<L: Lanes>(&mut self, ts: f64, inv_size: &[f64; 4]) {
        debug_assert_eq!(self.fast_given, self.fast_left);
        if !ts.is_finite() {
            return;
        }
        if self.skip_to_lanes::<L>(ts, inv_size) {
            self.renew_synced();
            return;
        }
        for (a, &inv_a) in inv_size.iter().enumerate().take(N) {
            let s = i64::from(self.step[a]);
            if s == 0 {
                continue;
            }
            // Position at ts in cells, `(o + ts·d − origin) / size`, by the
            // reciprocal the volume keeps (no division: a cast skips about
            // once per ray, and the division's latency was 1–2 % of it). Any
            // estimate will do: the loops below move `n` to the first plane
            // at or after `ts`, so only how soon they stop depends on it.
            let x = (ts * self.dh[a] - self.c[a]) * inv_a;
            let lim = f64::from(CELL_LIMIT) + 1.0;
            // Finite here (ts and the walk's inputs are), so the casts are exact.
            let x = x.clamp(-lim, lim);
            let est = if s > 0 { -floor_i64(-x) } else { floor_i64(x) };
            // Never backwards: `nf` is the first plane after the current time.
            // Plane indices are kept as integers (exact in f64 below, and the
            // final conversion to i32 needs no saturation).
            let now = i64::from(self.cell[a]) + i64::from(s > 0);
            let mut n = if s > 0 { est.max(now) } else { est.min(now) };
            // The times here are computed from their planes, so their error
            // is `e₀` of the module docs, not the walk's bound: with
            // `tol_c ≥ 6u·|c/d|·(1 − 4u)` and `ks ≥ 24u`, `e₀ ≤ tol(t)/5.7`,
            // which leaves `0.3·tol(t) ≥ 7u·|t|` of `tol(t)/2` for the
            // rounding of `t ± tol(t)/2` (at most `1.01u·|t|`): `tol/2`
            // filters soundly. It also settles the plane of the crossing that
            // stopped the coarse walk (`ts = m − tol(m)`, `t ≈ m`), which
            // the full `tol` sent to the exact comparison about half the time.
            let half_tol = |t: f64| 0.5 * self.tol(t);
            // T(n) ≥ ts, or step on; `tn` is the time of the final plane
            // (the value `self.time(a)` gives once the cell is set).
            let mut tn;
            loop {
                tn = self.time_at(a, n as f64);
                let t = tn;
                if t - half_tol(t) >= ts {
                    break;
                }
                if t + half_tol(t) < ts || self.cmp_plane_time(a, n as f64, ts) < 0 {
                    n += s;
                } else {
                    break;
                }
            }
            // T(n − s) < ts, or step back (not behind the current plane).
            while n != now {
                let t = self.time_at(a, (n - s) as f64);
                if t + half_tol(t) < ts {
                    break;
                }
                if t - half_tol(t) >= ts || self.cmp_plane_time(a, (n - s) as f64, ts) >= 0 {
                    n -= s;
                    tn = t;
                } else {
                    break;
                }
            }
            // n is within ±(2^29 + 1) here: the cast is exact.
            self.cell[a] = (n - i64::from(s > 0)) as i32;
            self.tn[a] = tn;
        }
        self.renew_synced();
    }

    /// [`GridWalk::skip_empty`]'s first block planes (`base + (k + 1)·2^L`
    /// moving up, `base + k·2^L` down) and their times, on lanes, in 3D;
    /// `None` otherwise. An axis that does not move gets the time `+∞` (as
    /// the loop of `skip_empty` leaves it) and some plane (the loop leaves
    /// 0; no one reads it: such an axis is never a crossing candidate, and
    /// the fast coarse steps set every plane again).
    #[inline(always)]
    fn block_times<L: Lanes>(
        &self,
        base: &[i32; N],
        kb: &[i32; N],
        width: f64,
    ) -> Option<([f64; N], [f64; N])> {
        if N != 3 {
            return None;
        }
        let l3 = |v: &[f64; N]| L::new(std::array::from_fn(|a| v[a]));
        let kp: [i32; 3] = std::array::from_fn(|a| kb[a] + i32::from(self.step[a] > 0));
        let plane = L::from_i32(std::array::from_fn(|a| base[a])) + L::from_i32(kp) * L::splat(width);
        let inv = l3(&self.inv);
        let t = (plane * l3(&self.size) + l3(&self.c)) * inv;
        // The axes that move are those with `inv ≠ 0` (`init` and the clip
        // set `inv = fl(1/d) ≠ 0` exactly where `d ≠ 0`: `|d| < 2^130` (an
        // `f32`, or a segment's difference of two), far below the `2^1074`
        // beyond which `1/d` rounds to 0; it stays 0 where `d = 0`): one
        // compare, where testing `step` cost a dozen instructions.
        let t = L::select(inv.ne(L::splat(0.0)), t, L::splat(f64::INFINITY));
        let (p, t) = (plane.get(), t.get());
        Some((std::array::from_fn(|a| p[a]), std::array::from_fn(|a| t[a])))
    }

    /// [`GridWalk::skip_to`]'s common case, every axis at once on
    /// [`Lanes`]: every axis moving (`inv ≠ 0`, see
    /// [`GridWalk::block_times`]; tested with the filter's result, the
    /// lanes of an axis that does not move computing values no one uses),
    /// and on each the first plane estimated
    /// confirmed by the time filter at once (its time and its
    /// predecessor's, unless that is the current plane, farther than
    /// `tol/2` on the right sides of `ts`). Then the cells and times are
    /// set (the renewal is the caller's) and the answer is true; otherwise
    /// nothing changes and the answer is false (the per-axis loops decide).
    ///
    /// Each lane computes what the loops compute first for its axis, by the
    /// same operations (`⌊x⌋` and `⌈x⌉ = −⌊−x⌋` of `|x| ≤ 2^29 + 1` by
    /// truncation and a correction, exact; the plane indices are integers
    /// below 2^31, exact in `f64`), so the result is theirs bit for bit
    /// (and it is the first plane at or after `ts` either way).
    ///
    /// `inv_size` is `1 / size` per axis (`[x, y, z, z]`, as [`BoxClip`]
    /// keeps it), for the position at `ts` in cells.
    #[inline(always)]
    fn skip_to_lanes<L: Lanes>(&mut self, ts: f64, inv_size: &[f64; 4]) -> bool {
        if N != 3 {
            return false;
        }
        let l3 = |v: &[f64; N]| L::new(std::array::from_fn(|a| v[a]));
        let (one, zero) = (L::splat(1.0), L::splat(0.0));
        let up = L::new(std::array::from_fn(|a| f64::from(self.step[a]))).gt(zero);
        let (d, c, size, inv) = (l3(&self.dh), l3(&self.c), l3(&self.size), l3(&self.inv));
        // Position at ts in cells, clamped, as in `skip_to`.
        let lim = f64::from(CELL_LIMIT) + 1.0;
        let x = ((L::splat(ts) * d - c) * L::load4(inv_size)).max(L::splat(-lim)).min(L::splat(lim));
        let tr = x.trunc();
        // `m.and(one)` is `select(m, one, zero)` for a mask `m` (all bits
        // set or none: `1.0` or `+0.0`), in one `and` where LLVM turns the
        // blend into a sign test and more.
        let floor = tr - tr.gt(x).and(one);
        let ceil = tr + tr.lt(x).and(one);
        let up1 = up.and(one);
        let now = L::from_i32(std::array::from_fn(|a| self.cell[a])) + up1;
        let est = L::select(up, ceil, floor);
        let n = L::select(up, est.max(now), est.min(now));
        let half_tol = |t: L| {
            L::splat(0.5) * (L::splat(self.tol_c) + L::splat(self.ks) * (t.abs() + L::splat(self.atmin)))
        };
        let ts_v = L::splat(ts);
        let tn = (n * size + c) * inv;
        let s = L::select(up, one, L::splat(-1.0));
        let tp = ((n - s) * size + c) * inv;
        let sure =
            (tn - half_tol(tn)).ge(ts_v).and(n.eq(now).or((tp + half_tol(tp)).lt(ts_v))).and(inv.ne(zero));
        if sure.bits() != 7 {
            return false;
        }
        let (cell, tn) = ((n - up1).to_i32(), tn.get());
        for a in 0..N {
            (self.cell[a], self.tn[a]) = (cell[a], tn[a]);
        }
        true
    }

    /// Skips blocks of `2^L` cells per axis (block `k` holds cells
    /// `base + k·2^L ..`) that `empty` says hold nothing of interest
    /// (`inv_size`: see [`GridWalk::skip_to`]).
    ///
    /// A coarse DDA on the block grid starts in the block of the current
    /// cell and steps while each crossing is surely alone (the same `f64`
    /// filter as the fine walk: block planes are planes of the grid) and
    /// the entered block is empty; it stops before a block that is not
    /// empty, a possible tie, or a possible end. The fine walk then moves
    /// with [`GridWalk::skip_to`] to `mc − tol(mc)`, strictly before the
    /// exact entry time of the stopping crossing, so the exact walk takes
    /// that crossing (edges and corners included) as if it had never
    /// skipped. Everything the line touches before it lies in blocks the
    /// coarse walk saw empty (a surely-alone block crossing touches only the
    /// two blocks it separates). Returns false when the walk's range ends in
    /// empty blocks (the walk is then finished).
    ///
    /// Runs of crossings between those full checks take the fine walk's
    /// fast step on the block grid (see the comment in the body): a few
    /// instructions fewer per block than the full check and, above all, a
    /// short loop-carried chain (compare → and → add, no time recomputed
    /// from its plane): a quarter less time per ray on the peer
    /// comparison's height field, dense and chunked.
    ///
    /// Always inlined, so that it is compiled with its caller's target
    /// features (the volumes' AVX copies): 2% fewer instructions on the
    /// height field.
    #[inline(always)]
    pub(crate) fn skip_empty<const L: u32>(
        &mut self,
        base: [i32; N],
        isa: Isa,
        inv_size: &[f64; 4],
        mut blocks: impl Blocks<N>,
    ) -> bool {
        self.sync();
        let mut kb = [0i32; N];
        let mut plane = [0.0f64; N];
        let mut tc = [f64::INFINITY; N];
        let width = f64::from(1u32 << L);
        let next_plane =
            |a: usize, k: i32, s: i32| f64::from(base[a]) + f64::from(k + i32::from(s > 0)) * width;
        for a in 0..N {
            kb[a] = (self.cell[a] - base[a]) >> L;
        }
        // In 3D the planes and their times at once on lanes, by the same
        // operations as the loop below (`next_plane`, `time_at`), so bit for
        // bit its values (see `block_times` for an axis that does not move).
        #[cfg(target_arch = "x86_64")]
        let lanes = if isa.avx() {
            self.block_times::<V4>(&base, &kb, width)
        } else {
            self.block_times::<V>(&base, &kb, width)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let lanes = self.block_times::<V>(&base, &kb, width);
        if let Some((p, t)) = lanes {
            (plane, tc) = (p, t);
        } else {
            for a in 0..N {
                if self.step[a] != 0 {
                    plane[a] = next_plane(a, kb[a], self.step[a]);
                    tc[a] = self.time_at(a, plane[a]);
                }
            }
        }
        let t_max = f64::from(self.t_max);
        // Fast coarse steps, as the fine walk's (`Hot::step` on the block
        // times and indices): each adds `2^L·Δ` to its axis's time. That
        // increment is `Δ` scaled exactly (so within `3u` of
        // `2^L·size/|d|`), and the times were last computed from their
        // planes here, so the module docs' bound holds with every fast
        // coarse step counted in `S` (`ks`) like a fine one. A run's
        // `tol_fix`, end and budget are those of a fine segment
        // ([`GridWalk::renew`]; block times are times of planes after the
        // current cell, as the fine ones): a fast coarse step's crossing is
        // surely alone and surely before the end, as the slow step below
        // would find it; anything else takes the slow step. The first run
        // uses the rest of the fine walk's segment (after `sync`,
        // `fast_left` steps of its budget are left; slow coarse steps add
        // no error), so it costs no setup; the fine walk does not go on from
        // it (every exit goes through `skip_to` or `finish`, which renew or
        // end its segment).
        let dtc: [f64; N] = std::array::from_fn(|a| self.dt[a] * width);
        let k = Consts::new(&dtc, &self.step);
        let (mut budget, mut tol_f, mut end_f) = (self.fast_left, self.tol_fix, self.t_fast_end);
        // Where to move the fine walk to (one call of `skip_to`).
        let ts = 'coarse: loop {
            let mut h = Hot::new(&tc, &kb);
            let mut left = budget;
            loop {
                let (next, sel, m, gap) = h.step_gap(&k);
                if !(gap > tol_f && m < end_f && left != 0) {
                    break;
                }
                h = next;
                left -= 1;
                // `sel` is one axis: the crossing is surely alone.
                if !blocks.empty_after(sel, h.cell()) {
                    self.ks += KS_STEP * f64::from(budget - left);
                    break 'coarse m - self.tol(m);
                }
            }
            if left != budget {
                self.ks += KS_STEP * f64::from(budget - left);
                (tc, kb) = (h.times(), h.cell());
                for a in 0..N {
                    plane[a] = next_plane(a, kb[a], self.step[a]);
                }
            }
            let mut mc = tc[0];
            for t in &tc[1..] {
                mc = fmin(mc, *t);
            }
            let tol = self.tol(mc);
            // The next block is surely entered after t_max (or never).
            if mc - tol > t_max || mc == f64::INFINITY {
                self.finish();
                return false;
            }
            let lim = mc + tol;
            let cand = below(&tc, lim);
            if cand & cand.wrapping_sub(1) != 0 || lim >= self.t_end_fast {
                break mc - tol;
            }
            let a = cand.trailing_zeros() as usize;
            kb[a] += self.step[a];
            plane[a] += f64::from(self.step[a]) * width;
            tc[a] = self.time_at(a, plane[a]);
            if !blocks.empty_at(kb) {
                break mc - tol;
            }
            budget = FAST_BUDGET;
            (tol_f, end_f) = self.fast_segment(&tc, &dtc, budget);
        };
        self.skip_to(ts, isa, inv_size);
        true
    }
}

/// What [`GridWalk::skip_empty`] asks of the coarse grid: whether a block
/// holds nothing of interest. The coarse walk starts in the block of the
/// walk's current cell, and moves block by block: `empty_at` for a block
/// reached any way, `empty_after` for the next block along one axis, which
/// a grid stored as an array can answer by moving an index by that axis's
/// stride instead of computing it from the block (the dense volume's
/// `Bricks`). Any `FnMut([i32; N]) -> bool` of the block is a `Blocks`.
pub(crate) trait Blocks<const N: usize> {
    /// Whether block `kb` is empty; the coarse walk is now there.
    fn empty_at(&mut self, kb: [i32; N]) -> bool;

    /// Whether block `kb`, entered from the coarse walk's last block by one
    /// step along `axis` (bit 1, 2 or 4; the step's sign is the walk's
    /// direction on that axis), is empty; the coarse walk is now there.
    #[inline(always)]
    fn empty_after(&mut self, axis: u8, kb: [i32; N]) -> bool {
        let _ = axis;
        self.empty_at(kb)
    }
}

impl<const N: usize, F: FnMut([i32; N]) -> bool> Blocks<N> for F {
    #[inline(always)]
    fn empty_at(&mut self, kb: [i32; N]) -> bool {
        self(kb)
    }
}

/// The terms of [`GridWalk::ray_in_box`]'s clip and start cell that depend
/// only on the grid and the box of cells, not on the ray: a volume computes
/// them once ([`BoxClip::new`]) instead of at every cast. Each is computed
/// by the same `f64` operations, in the same order, as `fast_setup` did per
/// ray (every lane of [`Lanes`] is one axis's scalar computation, and no
/// fused multiply–add is enabled), so the walks and answers are bit for bit
/// the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BoxClip {
    /// The lowest cell of the box.
    pub(crate) lo_cell: [i32; 3],
    /// The highest cell of the box.
    pub(crate) hi_cell: [i32; 3],
    // The per-axis terms below are stored as `[x, y, z, z]`, the layout of
    // [`Lanes::load4`]: one load each on AVX.
    /// `origin + (lo_cell − 0.5)·size`: the low side of the box grown by half a cell.
    lo: [f64; 4],
    /// `origin + (hi_cell + 1.5)·size`: the high side of the box grown by half a cell.
    hi: [f64; 4],
    /// `(|lo_cell| + |hi_cell| + 2)·size`: the box's part of the clip's magnitude bound.
    span: [f64; 4],
    /// `1 / size`.
    inv_size: [f64; 4],
    /// The grid's `origin` in `f64` (exact).
    origin: [f64; 4],
    /// The grid's `cell_size` in `f64` (exact).
    size: [f64; 4],
}

impl BoxClip {
    /// `1 / cell_size` per axis (`[x, y, z, z]`), for [`GridWalk::skip_empty`].
    #[inline(always)]
    pub(crate) fn inv_size(&self) -> &[f64; 4] {
        &self.inv_size
    }

    /// The grid's `origin`, `cell_size` and `1 / cell_size` as lanes.
    #[inline(always)]
    pub(super) fn grid_lanes<L: Lanes>(&self) -> (L, L, L) {
        (L::load4(&self.origin), L::load4(&self.size), L::load4(&self.inv_size))
    }

    /// The clip of [`GridWalk::ray_in_box`]'s common case (a ray with
    /// every direction component non-zero; [`Clipped::General`] otherwise),
    /// on lanes: the range of `t`
    /// over which `ray` is in the box grown by half a cell, with its bounds
    /// moved outward by `8u·M·|1/d|` (see `ray_in_box`) and rounded outward
    /// to `f32`, so that it surely covers the grown box.
    ///
    /// The same operations in the same order as [`GridWalk::clip_to_box`]
    /// (each lane one axis's scalar computation, the reductions over the
    /// axes in the same order), so the same bits.
    #[inline(always)]
    pub(super) fn clip_lanes<L: Lanes>(&self, ray: &Ray, range: Interval) -> Clipped<L> {
        let (d, o) =
            (L::new(ray.dir.to_array().map(f64::from)), L::new(ray.origin.to_array().map(f64::from)));
        // Finite (NaN fails too) and non-zero components, a non-empty range.
        let inf = L::splat(f64::INFINITY);
        if o.abs().lt(inf).and(d.abs().lt(inf)).bits() != 7 || range.is_empty() {
            // No walk (as `clip_to_box` answers).
            return Clipped::Miss;
        }
        if d.ne(L::splat(0.0)).bits() != 7 {
            return Clipped::General;
        }
        let inv = L::splat(1.0) / d;
        let (lo, hi) = (L::load4(&self.lo), L::load4(&self.hi));
        let mag = o.abs() + L::load4(&self.origin).abs() + L::load4(&self.span);
        let slack = L::splat(8.0 * U) * mag * inv.abs();
        let up = d.gt(L::splat(0.0));
        let t_in = (L::select(up, lo, hi) - o) * inv - slack;
        let t_out = (L::select(up, hi, lo) - o) * inv + slack;
        let t0 = fmax(f64::from(range.min), t_in.hmax());
        let t1 = fmin(f64::from(range.max), t_out.hmin());
        let overlaps = t0 <= t1;
        if !overlaps {
            return Clipped::Miss;
        }
        Clipped::In(ClipLanes { d, o, inv, up, t0, t1, range })
    }

    /// The constants for cells `lo_cell ..= hi_cell` of `grid`.
    #[inline(always)]
    pub(crate) fn new(grid: &Grid<3>, lo_cell: [i32; 3], hi_cell: [i32; 3]) -> Self {
        let f = |a: usize| {
            let (org, size) = (f64::from(grid.origin[a]), f64::from(grid.cell_size[a]));
            let (lc, hc) = (f64::from(lo_cell[a]), f64::from(hi_cell[a]));
            (
                org + (lc - 0.5) * size,
                org + (hc + 1.5) * size,
                (lc.abs() + hc.abs() + 2.0) * size,
                1.0 / size,
                org,
                size,
            )
        };
        let v = [f(0), f(1), f(2), f(2)];
        Self {
            lo_cell,
            hi_cell,
            lo: v.map(|x| x.0),
            hi: v.map(|x| x.1),
            span: v.map(|x| x.2),
            inv_size: v.map(|x| x.3),
            origin: v.map(|x| x.4),
            size: v.map(|x| x.5),
        }
    }
}

/// `step` of a walk whose direction has every component non-zero, by its
/// `neg` bits: −1 on the axes whose bit is set, +1 on the others.
const STEPS: [[i32; 3]; 8] = {
    let mut t = [[0; 3]; 8];
    let mut neg = 0;
    while neg < 8 {
        let mut a = 0;
        while a < 3 {
            t[neg][a] = if neg >> a & 1 != 0 { -1 } else { 1 };
            a += 1;
        }
        neg += 1;
    }
    t
};

/// What [`BoxClip::clip_lanes`] found.
pub(super) enum Clipped<L> {
    /// The ray meets the grown box.
    In(ClipLanes<L>),
    /// The ray misses the grown box, or has no walk (a component not
    /// finite, an empty range).
    Miss,
    /// Not the common case (a zero component).
    General,
}

/// A ray clipped by [`BoxClip::clip_lanes`]: its direction `d`, origin `o`,
/// `inv = fl(1/d)` and the mask `up` of `d > 0`, as lanes, and the clipped
/// range `[t0, t1]` in `f64` (of `range`), which
/// [`ClipLanes::t_min`] and [`ClipLanes::t_max`] round to `f32`. The
/// certified cast needs the rounded range only for a ray starting in a
/// solid cell (its hit times are already within it), so it is rounded
/// where used: about 35 instructions a cast.
pub(super) struct ClipLanes<L> {
    pub(super) d: L,
    pub(super) o: L,
    pub(super) inv: L,
    pub(super) up: L,
    pub(super) t0: f64,
    pub(super) t1: f64,
    pub(super) range: Interval,
}

impl<L> ClipLanes<L> {
    /// The clipped range's start rounded down to `f32` (`range.min` itself
    /// where the range, not the box, starts it).
    #[inline(always)]
    pub(super) fn t_min(&self) -> f32 {
        if self.t0 == f64::from(self.range.min) {
            self.range.min
        } else {
            round_down(self.t0)
        }
    }

    /// The clipped range's end rounded up to `f32` (`range.max` itself
    /// where the range, not the box, ends it).
    #[inline(always)]
    pub(super) fn t_max(&self) -> f32 {
        if self.t1 == f64::from(self.range.max) {
            self.range.max
        } else {
            round_up(self.t1)
        }
    }
}

/// What [`GridWalk::fast_setup`] found.
enum Fast {
    /// The walk's values ([`GridWalk::ray_in_box`] builds it).
    Walk(FastParts),
    /// No walk: the ray misses the box, or starts beyond the cells.
    Miss,
    /// Not the common case: the general path decides.
    General,
}

/// The values of a walk set up by [`GridWalk::fast_setup`] (the fields of
/// the same names).
struct FastParts {
    cell: [i32; 3],
    step: [i32; 3],
    tn: [f64; 3],
    c: [f64; 3],
    inv: [f64; 3],
    dt: [f64; 3],
    t_min: f32,
    t_max: f32,
    atmin: f64,
    tol_c: f64,
    neg: u8,
    t_end_fast: f64,
}

/// What [`GridWalk::drive_with`]'s visitor wants next, and how a drive ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on walking.
    Go,
    /// Stop here (e.g. a hit); the walk is over ([`GridWalk::drive_with`]
    /// does not save it).
    Stop,
    /// Stop so that the caller can skip empty space.
    Skip,
    /// Stop so that the caller can skip empty space on a coarser level
    /// (the chunked world's absent chunks).
    SkipFar,
    /// The walk is over.
    End,
}

/// Bit `a` set for each time `≤ lim` (the tie candidates).
#[inline(always)]
fn below<const N: usize>(t: &[f64; N], lim: f64) -> u8 {
    t.iter().enumerate().fold(0, |c, (a, x)| c | u8::from(*x <= lim) << a)
}

/// [`GridWalk::advance_slow`] on a copy, returned with the walk (see
/// [`GridWalk::try_fast`]).
#[cold]
#[inline(never)]
#[allow(clippy::type_complexity)] // the hot fields, named at the one call
fn slow_by_value<const N: usize>(
    mut w: GridWalk<N>,
) -> (([i32; N], [f64; N], f64, u32, State, f64, f64, u32, u32), u8, f64) {
    let (axes, t) = w.advance_slow();
    ((w.cell, w.tn, w.ks, w.remaining, w.state, w.tol_fix, w.t_fast_end, w.fast_left, w.fast_given), axes, t)
}

/// The hot state of a walk (next-crossing times and main cell) in the form
/// the fast step works on, and its per-walk constants ([`Consts`]).
///
/// On x86_64 the times are packed as `[t0, t1]` and `[t2, t2]` (`+∞` in 2D)
/// and the cells as 64-bit lanes (`[c0, c1]`, `[c2, c2]`; the low 32 bits
/// are the `i32` cell), so that a step is a few packed compares, and-masks
/// and adds: the compare masks select both `Δ` (times) and the ±1 step
/// (cells), with no transfer to integer registers but the axis bits.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Hot<const N: usize> {
    a: std::arch::x86_64::__m128d,
    b: std::arch::x86_64::__m128d,
    c01: std::arch::x86_64::__m128i,
    c2: std::arch::x86_64::__m128i,
}

/// The per-walk constants of a [`Hot`] step: `Δ` and the ±1 step per axis,
/// packed like the state.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Consts {
    d01: std::arch::x86_64::__m128d,
    d22: std::arch::x86_64::__m128d,
    s01: std::arch::x86_64::__m128i,
    s22: std::arch::x86_64::__m128i,
}

/// A fast segment's tolerance ([`Hot::step`]), broadcast once per segment
/// rather than at every step.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Tol(std::arch::x86_64::__m128d);

// SAFETY (every `unsafe` block below): SSE2 is part of the x86_64
// baseline, and the intrinsics only operate on registers.
#[cfg(target_arch = "x86_64")]
impl Tol {
    #[inline(always)]
    fn new(tol: f64) -> Self {
        use std::arch::x86_64::*;
        unsafe { Self(_mm_set1_pd(tol)) }
    }
}

#[cfg(target_arch = "x86_64")]
impl Consts {
    #[inline(always)]
    fn new<const N: usize>(dt: &[f64; N], step: &[i32; N]) -> Self {
        use std::arch::x86_64::*;
        let (d2, s2) = if N == 3 { (dt[N - 1], step[N - 1]) } else { (0.0, 0) };
        unsafe {
            Self {
                d01: _mm_set_pd(dt[1], dt[0]),
                d22: _mm_set1_pd(d2),
                s01: _mm_set_epi64x(i64::from(step[1]), i64::from(step[0])),
                s22: _mm_set1_epi64x(i64::from(s2)),
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize> Hot<N> {
    #[inline(always)]
    fn new(tn: &[f64; N], cell: &[i32; N]) -> Self {
        use std::arch::x86_64::*;
        let (t2, c2) = if N == 3 { (tn[N - 1], cell[N - 1]) } else { (f64::INFINITY, 0) };
        unsafe {
            Self {
                a: _mm_set_pd(tn[1], tn[0]),
                b: _mm_set1_pd(t2),
                c01: _mm_set_epi64x(i64::from(cell[1]), i64::from(cell[0])),
                c2: _mm_set1_epi64x(i64::from(c2)),
            }
        }
    }

    /// The times as an array.
    #[inline(always)]
    fn times(&self) -> [f64; N] {
        use std::arch::x86_64::*;
        let mut t = [0.0; N];
        unsafe {
            t[0] = _mm_cvtsd_f64(self.a);
            t[1] = _mm_cvtsd_f64(_mm_unpackhi_pd(self.a, self.a));
            if N == 3 {
                t[N - 1] = _mm_cvtsd_f64(self.b);
            }
        }
        t
    }

    /// The low two bits of each coordinate of the main cell, packed as
    /// `c0 & 3 | (c1 & 3) << 2 | (c2 & 3) << 4` (the bit of a cell in a
    /// brick of 4³), computed on the packed lanes: two ands, a multiply
    /// and a shift to place the fields, two adds and one transfer (fewer
    /// instructions than three transfers and the scalar masks and shifts).
    #[inline(always)]
    pub(crate) fn low2(&self) -> u32 {
        use std::arch::x86_64::*;
        unsafe {
            let three = _mm_set1_epi64x(3);
            // [c0 & 3, (c1 & 3)·4]: a 32×32→64-bit multiply per lane.
            let x = _mm_mul_epu32(_mm_and_si128(self.c01, three), _mm_set_epi64x(4, 1));
            let z =
                if N == 3 { _mm_slli_epi64::<4>(_mm_and_si128(self.c2, three)) } else { _mm_setzero_si128() };
            let s = _mm_add_epi64(_mm_add_epi64(x, z), _mm_unpackhi_epi64(x, x));
            _mm_cvtsi128_si32(s) as u32
        }
    }

    /// The bit of the main cell in a chunk of 16³ cells stored as 4³
    /// bricks of 4³ (3D only): `brick << 6 | bit`, the brick
    /// `(c0 >> 2 & 3) | (c1 >> 2 & 3) << 2 | (c2 >> 2 & 3) << 4` and the
    /// bit [`Hot::low2`]. On the packed lanes: per pair of fields one and
    /// and one multiply (`pmuludq`) to place them, then two adds, a fold of
    /// the high lane and one transfer.
    #[inline(always)]
    pub(crate) fn low4(&self) -> u32 {
        use std::arch::x86_64::*;
        unsafe {
            // [c0 & 3, (c1 & 3)·4], [(c0 & 12)·16, (c1 & 12)·64], [(c2 & 3)·16, (c2 & 12)·256].
            let lo = _mm_mul_epu32(_mm_and_si128(self.c01, _mm_set1_epi64x(3)), _mm_set_epi64x(4, 1));
            let hi = _mm_mul_epu32(_mm_and_si128(self.c01, _mm_set1_epi64x(12)), _mm_set_epi64x(64, 16));
            let z = _mm_mul_epu32(_mm_and_si128(self.c2, _mm_set_epi64x(12, 3)), _mm_set_epi64x(256, 16));
            let s = _mm_add_epi64(_mm_add_epi64(lo, hi), z);
            _mm_cvtsi128_si32(_mm_add_epi64(s, _mm_unpackhi_epi64(s, s))) as u32
        }
    }

    /// The main cell as an array.
    #[inline(always)]
    pub(crate) fn cell(&self) -> [i32; N] {
        use std::arch::x86_64::*;
        let mut c = [0; N];
        unsafe {
            c[0] = _mm_cvtsi128_si32(self.c01);
            c[1] = _mm_cvtsi128_si32(_mm_shuffle_epi32::<2>(self.c01));
            if N == 3 {
                c[N - 1] = _mm_cvtsi128_si32(self.c2);
            }
        }
        c
    }

    /// The fast step's candidate, branch-free: `(next, sel, m, gap)` with
    /// `m` the smallest time, `gap` the second smallest minus `m` (`+∞`
    /// when only one axis moves, NaN when none does), `sel` the bits of the
    /// axes whose time is `m` and `next` the state with those axes stepped
    /// (times advanced by `Δ`, cells by ±1). When `gap > 0` the minimum is
    /// unique and `sel` is its axis alone; the caller uses `next` only when
    /// `gap > tol_fix`. The loop-carried chain is compare → and → add.
    #[inline(always)]
    fn step_gap(&self, k: &Consts) -> (Self, u8, f64, f64) {
        use std::arch::x86_64::*;
        unsafe {
            let (a, b) = (self.a, self.b);
            let s = _mm_shuffle_pd::<1>(a, a);
            let mn = _mm_min_pd(a, s);
            let mx = _mm_max_pd(a, s);
            let c_ab = _mm_cmple_pd(a, s);
            if N == 2 {
                let next = Self {
                    a: _mm_add_pd(a, _mm_and_pd(c_ab, k.d01)),
                    b,
                    c01: _mm_add_epi64(self.c01, _mm_and_si128(_mm_castpd_si128(c_ab), k.s01)),
                    c2: self.c2,
                };
                let gap = _mm_cvtsd_f64(_mm_sub_sd(mx, mn));
                (next, _mm_movemask_pd(c_ab) as u8, _mm_cvtsd_f64(mn), gap)
            } else {
                let sel01 = _mm_and_pd(c_ab, _mm_cmple_pd(a, b));
                let sel2 = _mm_cmplt_pd(b, mn);
                let next = Self {
                    a: _mm_add_pd(a, _mm_and_pd(sel01, k.d01)),
                    b: _mm_add_pd(b, _mm_and_pd(sel2, k.d22)),
                    c01: _mm_add_epi64(self.c01, _mm_and_si128(_mm_castpd_si128(sel01), k.s01)),
                    c2: _mm_add_epi64(self.c2, _mm_and_si128(_mm_castpd_si128(sel2), k.s22)),
                };
                // Smallest and second smallest of three: min(mn, t2) and
                // max(mn, min(max(t0, t1), t2)).
                let m = _mm_min_sd(mn, b);
                let med = _mm_max_sd(mn, _mm_min_sd(mx, b));
                let gap = _mm_cvtsd_f64(_mm_sub_sd(med, m));
                let sel = _mm_movemask_pd(sel01) | (_mm_movemask_pd(sel2) << 1 & 4);
                (next, sel as u8, _mm_cvtsd_f64(m), gap)
            }
        }
    }

    /// The fast step, branch-free: `(next, idx, m, sure)`. `sure` is true
    /// when one time `t` is surely alone: `t + tol < ` every other time (a
    /// strict compare, false for `+∞`, so for every time of a walk whose
    /// axes do not move). At most one axis can pass (`t_a + tol < t_b` and
    /// `t_b + tol < t_a` exclude each other for `tol ≥ 0`); `idx` is 1 + its
    /// index (0 when none passes: [`AXIS_BIT`] gives its bit) and `next`
    /// the state with it stepped (time advanced by `Δ`, cell by ±1), or the
    /// same state. `m` is the smallest time. Whether `m` is early enough
    /// (before the segment's end) is the caller's test.
    ///
    /// `t + tol < min(others)` is the module docs' filter (the gap to the
    /// next time above `tol`) written so that the loop-carried chain is
    /// short: the times pass through shuffle → min → compare → select
    /// (`t + tol` and `t + Δ` are computed beside the shuffle and the min,
    /// not after the compare: 6 cycles on Zen 4 where [`Hot::step_gap`]'s
    /// compare → and → and → add takes 8). Its rounding (`fl(t + tol)` is
    /// within `u·|t + tol|` of the sum) is far inside the factor 3 of slack
    /// in `tol` (module docs).
    #[inline(always)]
    fn step(&self, k: &Consts, tol: Tol, isa: Isa) -> (Self, usize, f64, bool) {
        use std::arch::x86_64::*;
        unsafe {
            let (a, b, tol) = (self.a, self.b, tol.0);
            let s = _mm_shuffle_pd::<1>(a, a);
            // Lane i of `a` against the smallest of the other times.
            let sure01 = _mm_cmplt_pd(_mm_add_pd(a, tol), _mm_min_pd(s, b));
            let mn = _mm_min_pd(a, s);
            let (sure2, m) = if N == 2 {
                (_mm_setzero_pd(), mn)
            } else {
                (_mm_cmplt_pd(_mm_add_pd(b, tol), mn), _mm_min_sd(mn, b))
            };
            let next = Self {
                a: select_pd(sure01, _mm_add_pd(a, k.d01), a, isa),
                b: if N == 2 { b } else { select_pd(sure2, _mm_add_pd(b, k.d22), b, isa) },
                c01: _mm_add_epi64(self.c01, _mm_and_si128(_mm_castpd_si128(sure01), k.s01)),
                c2: if N == 2 {
                    self.c2
                } else {
                    _mm_add_epi64(self.c2, _mm_and_si128(_mm_castpd_si128(sure2), k.s22))
                },
            };
            // The masks' bits: 1 or 2 for axis 0 or 1, 3 for axis 2 (both
            // lanes of `b`), never two axes at once.
            let idx = (_mm_movemask_pd(sure01) + _mm_movemask_pd(sure2)) as u32;
            (next, idx as usize & 3, _mm_cvtsd_f64(m), idx != 0)
        }
    }
}

/// `m ? x : y` per lane for a compare mask `m` (all bits set or none).
/// With AVX, `blendvpd`: LLVM makes the portable form a byte blend
/// (`pblendvb`), an integer operation whose inputs and output cross
/// between the FP and integer domains, on the chain of a walk's times.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn select_pd(
    m: std::arch::x86_64::__m128d,
    x: std::arch::x86_64::__m128d,
    y: std::arch::x86_64::__m128d,
    isa: Isa,
) -> std::arch::x86_64::__m128d {
    use std::arch::x86_64::*;
    if isa.avx() {
        // SAFETY: the CPU has AVX, so SSE4.1 (`Isa` says so only then).
        unsafe { _mm_blendv_pd(y, x, m) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe { _mm_or_pd(_mm_and_pd(m, x), _mm_andnot_pd(m, y)) }
    }
}

/// Portable [`Hot`]: the arrays themselves.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
pub(crate) struct Hot<const N: usize> {
    tn: [f64; N],
    cell: [i32; N],
}

/// Portable [`Consts`].
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct Consts {
    dt: [f64; 3],
    step: [i32; 3],
}

/// Portable [`Tol`].
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct Tol(f64);

#[cfg(not(target_arch = "x86_64"))]
impl Tol {
    #[inline(always)]
    fn new(tol: f64) -> Self {
        Self(tol)
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Consts {
    #[inline(always)]
    fn new<const N: usize>(dt: &[f64; N], step: &[i32; N]) -> Self {
        let mut k = Self { dt: [0.0; 3], step: [0; 3] };
        k.dt[..N].copy_from_slice(dt);
        k.step[..N].copy_from_slice(step);
        k
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl<const N: usize> Hot<N> {
    #[inline(always)]
    fn new(tn: &[f64; N], cell: &[i32; N]) -> Self {
        Self { tn: *tn, cell: *cell }
    }

    #[inline(always)]
    fn times(&self) -> [f64; N] {
        self.tn
    }

    #[inline(always)]
    pub(crate) fn cell(&self) -> [i32; N] {
        self.cell
    }

    /// See the x86_64 version.
    #[inline(always)]
    pub(crate) fn low2(&self) -> u32 {
        self.cell.iter().enumerate().fold(0, |b, (a, &c)| b | (c as u32 & 3) << (2 * a))
    }

    /// See the x86_64 version.
    #[inline(always)]
    pub(crate) fn low4(&self) -> u32 {
        self.cell
            .iter()
            .enumerate()
            .fold(0, |b, (a, &c)| b | (c as u32 & 3) << (2 * a) | (c as u32 >> 2 & 3) << (6 + 2 * a))
    }

    /// See the x86_64 version.
    #[inline(always)]
    fn step_gap(&self, k: &Consts) -> (Self, u8, f64, f64) {
        let t = &self.tn;
        let (sel, m, gap) = if N == 2 {
            (if t[0] <= t[1] { 1 } else { 2 }, fmin(t[0], t[1]), (t[0] - t[1]).abs())
        } else {
            let c01 = t[0] <= t[1];
            let c02 = t[0] <= t[2];
            let c12 = t[1] <= t[2];
            let sel = u8::from(c01 & c02) | u8::from(!c01 & c12) << 1 | u8::from(!c02 & !c12) << 2;
            let (lo, hi) = if c01 { (t[0], t[1]) } else { (t[1], t[0]) };
            let m = fmin(lo, t[2]);
            let med = fmax(lo, fmin(hi, t[2]));
            (sel, m, med - m)
        };
        (self.advanced(k, sel), sel, m, gap)
    }

    /// The state with the axes of `sel` stepped (times advanced by `Δ`,
    /// cells by ±1), branch-free.
    #[inline(always)]
    fn advanced(&self, k: &Consts, sel: u8) -> Self {
        let mut next = *self;
        for a in 0..N {
            let bit = (sel >> a) & 1;
            let mask = 0u64.wrapping_sub(u64::from(bit));
            next.tn[a] += f64::from_bits(k.dt[a].to_bits() & mask);
            next.cell[a] += k.step[a] & -i32::from(bit);
        }
        next
    }

    /// See the x86_64 version.
    #[inline(always)]
    fn step(&self, k: &Consts, tol: Tol, _: Isa) -> (Self, usize, f64, bool) {
        let t = &self.tn;
        let mut sel = 0u8;
        let mut m = f64::INFINITY;
        for a in 0..N {
            let other = (0..N).filter(|&b| b != a).fold(f64::INFINITY, |x, b| fmin(x, t[b]));
            sel |= u8::from(t[a] + tol.0 < other) << a;
            m = fmin(m, t[a]);
        }
        (self.advanced(k, sel), if sel == 0 { 0 } else { sel.trailing_zeros() as usize + 1 }, m, sel != 0)
    }
}

/// `max(a, b)` without NaN handling (see [`fmin`]).
#[inline(always)]
pub(super) fn fmax(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// `t` rounded to `f32` and clamped to `[t_min, t_max]` ([`GridWalk::step_t`]).
#[inline(always)]
pub(super) fn clamp_step_t(t: f64, t_min: f32, t_max: f32) -> f32 {
    // Plain compares (t is never NaN here): two instructions, no panic path.
    let t = t as f32;
    let t = if t < t_min { t_min } else { t };
    if t > t_max {
        t_max
    } else {
        t
    }
}

/// `min(a, b)` without the NaN handling of `f64::min` (the walk's times
/// are never NaN: finite or `+∞`), so it is one `minsd`.
#[inline(always)]
pub(super) fn fmin(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

impl<const N: usize> Iterator for GridWalk<N> {
    type Item = Step<N>;

    #[inline(always)]
    fn next(&mut self) -> Option<Step<N>> {
        if self.state != State::Walking {
            if !self.begin() {
                return None;
            }
            return Some(self.make_step(0, self.t_min));
        }
        if let Some((axes, t)) = self.try_fast() {
            return Some(self.make_step(axes, self.step_t(t)));
        }
        let (axes, t) = self.advance_slow_in_place();
        if axes == 0 {
            return None;
        }
        Some(self.make_step(axes, self.step_t(t)))
    }

    /// Internal iteration (`for_each`, `sum`, `count`, `fold`, ...): the
    /// same steps as [`next`](Iterator::next), with the walk's hot state kept
    /// in registers for the whole walk (`GridWalk::drive_long`), not loaded
    /// from and stored to the walk at every step: about a third less time
    /// per step on long walks.
    #[inline]
    fn fold<B, F: FnMut(B, Step<N>) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        if self.state != State::Walking {
            if !self.begin() {
                return acc;
            }
            acc = f(acc, self.make_step(0, self.t_min));
        }
        let (t_min, t_max, neg) = (self.t_min, self.t_max, self.neg);
        // Compiled for AVX where the CPU has it (as the volumes' casts).
        super::voxels::best_compiled(
            #[inline(always)]
            |isa| {
                self.drive_long(isa, acc, |acc, axes, t, cell, times| {
                    // As `make_step(axes, step_t(t))`, from the registers.
                    let t = clamp_step_t(t, t_min, t_max);
                    let e = times.into_iter().fold(f64::from(t_max), fmin) as f32;
                    let t_exit = if e < t { t } else { e };
                    f(acc, Step { t, t_exit, cell, axes, neg })
                })
            },
        )
    }
}

impl<const N: usize> std::iter::FusedIterator for GridWalk<N> {}

/// The cell index `n` with `origin + n·size ≤ o + t0·(dh + dl) < origin + (n+1)·size`,
/// exactly; `None` if it is outside `[-CELL_LIMIT, CELL_LIMIT)` or not finite.
#[inline(always)]
pub(crate) fn start_cell(origin: f64, size: f64, o: f64, dh: f64, dl: f64, t0: f32) -> Option<i32> {
    let t0f = t0;
    let t0 = f64::from(t0);
    // One division: x and err are scaled by fl(1/size), which adds two
    // roundings (the reciprocal, the product) to x's error below.
    let inv = 1.0 / size;
    let x = ((o + t0 * dh) - origin) * inv;
    let limit = f64::from(CELL_LIMIT);
    let in_range = x.abs() <= limit + 2.0; // false for NaN
    if !in_range {
        return None;
    }
    let n = floor_i64(x);
    // Filter: x carries at most 5 roundings of (|o| + |t0·dh| + |origin|)/size
    // (plus the ignored t0·dl); with 8 (the margin covers err's own
    // roundings) the floor is exact and the planes need no exact test.
    let err = (8.0 * U * (o.abs() + (t0 * dh).abs() + origin.abs()) + 2.0 * (t0 * dl).abs()) * inv;
    let frac = x - n as f64;
    if frac > err && 1.0 - frac > err && (-i64::from(CELL_LIMIT)..i64::from(CELL_LIMIT)).contains(&n) {
        return Some(n as i32);
    }
    start_cell_exact(origin, size, o, dh, dl, t0f, n)
}

/// [`start_cell`] near a plane: the floor `n` of the `f64` estimate is
/// corrected by exact comparisons with the planes (out of line: rare).
#[cold]
#[inline(never)]
fn start_cell_exact(origin: f64, size: f64, o: f64, dh: f64, dl: f64, t0: f32, mut n: i64) -> Option<i32> {
    let t0 = f64::from(t0);
    // sign(origin + k·size − o − t0·d): is plane k after the point?
    let plane_vs_point = |k: i64| {
        let mut terms: Terms = Terms::new();
        terms.push(origin);
        terms.push_prod(k as f64, size);
        terms.push(-o);
        terms.push_prod(-t0, dh);
        terms.push_prod(-t0, dl);
        terms.sign()
    };
    // The f64 floor is off by at most one plane (errors ≪ size); correct it exactly.
    while plane_vs_point(n) > 0 {
        n -= 1;
    }
    while plane_vs_point(n + 1) <= 0 {
        n += 1;
    }
    (-i64::from(CELL_LIMIT)..i64::from(CELL_LIMIT)).contains(&n).then_some(n as i32)
}

/// `⌊x⌋` for `|x| < 2^62` by truncation and a correction: `f64::floor`
/// is a libm call on x86_64 without SSE4.1, tens of instructions.
#[inline(always)]
fn floor_i64(x: f64) -> i64 {
    let i = x as i64;
    i - i64::from((i as f64) > x)
}

/// The exact direction `b − a` as `hi + lo`.
fn exact_diff<const N: usize>(a: [f32; N], b: [f32; N]) -> ([f64; N], [f64; N]) {
    let mut hi = [0.0; N];
    let mut lo = [0.0; N];
    for k in 0..N {
        (hi[k], lo[k]) = two_sum(f64::from(b[k]), -f64::from(a[k]));
    }
    (hi, lo)
}

impl GridWalk<3> {
    /// A walk of `ray` over `range` that is over before it starts, with no
    /// step limit: [`GridWalk::clip_to_box`], `init` and `begin` then clip
    /// and start it ([`GridWalk::ray_in_box`]'s general path).
    #[inline(always)]
    fn for_ray(grid: &Grid<3>, ray: &Ray, range: Interval) -> Self {
        let o = ray.origin.to_array();
        let dh = ray.dir.to_array().map(f64::from);
        let mut w = Self::blank(grid, o, dh, [0.0; 3], range, true);
        w.remaining = u32::MAX;
        w
    }

    /// The supercover walk of `ray` over `range` clipped to the box of
    /// cells `[lo_cell, hi_cell]` of `clip` (its grid-only terms computed
    /// once per box, see [`BoxClip`]) grown by half a cell, with no step limit
    /// and its start step taken ([`GridWalk::begin`]); it is over
    /// (`!is_walking()`) when the ray misses that box or is not valid.
    ///
    /// The clip is fused with the setup so that the reciprocals `1/d` are
    /// computed once. Each slab time `(plane − o)·fl(1/d)` is moved outward
    /// by `8u·M·|1/d|` (`M = |o| + |origin| + (|lo| + |hi| + 2)·size`
    /// bounds every magnitude involved: two roundings in the plane, one in
    /// the difference, the reciprocal, the product and the move itself, 6u
    /// in all), so the clipped range surely covers the grown box; the start
    /// is rounded down and the end up to `f32`, which only widens it. The
    /// walk thus starts (unless the ray starts inside) at least half a cell
    /// before the solid cells' box, in a cell outside it, and enters the
    /// box through its exact tie logic. Half a cell rather than a whole one:
    /// the start point then lies mid-cell, where the start cell's `f64`
    /// floor is certain (no exact fallback in [`start_cell`]).
    ///
    /// The common case is set up by [`GridWalk::fast_setup`] and the walk
    /// built once from its values (no blank walk written first); the
    /// general path (zero direction components, rare inputs) builds the
    /// blank walk and clips and starts it ([`GridWalk::clip_to_box`]).
    #[inline(always)]
    pub(crate) fn ray_in_box(grid: &Grid<3>, ray: &Ray, range: Interval, clip: &BoxClip, isa: Isa) -> Self {
        #[cfg(target_arch = "x86_64")]
        let fast = if isa.avx() {
            Self::fast_setup::<V4>(grid, ray, range, clip)
        } else {
            Self::fast_setup::<V>(grid, ray, range, clip)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let fast = {
            let _ = isa;
            Self::fast_setup::<V>(grid, ray, range, clip)
        };
        match fast {
            Fast::Walk(p) => {
                // `begin` on the walk of `for_ray` (`remaining = u32::MAX`, no
                // fast step yet, so `sync` changes nothing): the start step
                // taken (one of `remaining`) and the first segment started,
                // as `renew` does.
                let remaining = u32::MAX - 1;
                let budget = FAST_BUDGET.min(remaining);
                let mut w = Self {
                    cell: p.cell,
                    step: p.step,
                    tn: p.tn,
                    c: p.c,
                    inv: p.inv,
                    // As `blank` has them (see `fast_setup` for `clip`'s).
                    size: [clip.size[0], clip.size[1], clip.size[2]],
                    origin: [clip.origin[0], clip.origin[1], clip.origin[2]],
                    o: ray.origin.to_array().map(f64::from),
                    dh: ray.dir.to_array().map(f64::from),
                    dl: [0.0; 3],
                    t_min: p.t_min,
                    t_max: p.t_max,
                    tol_c: p.tol_c,
                    dt: p.dt,
                    ks: KS0,
                    atmin: p.atmin,
                    t_end_fast: p.t_end_fast,
                    remaining,
                    supercover: true,
                    state: State::Walking,
                    neg: p.neg,
                    tol_fix: f64::INFINITY,
                    t_fast_end: f64::NEG_INFINITY,
                    fast_left: budget,
                    fast_given: budget,
                };
                // `fast_segment`'s `m` and `end` are finite here (no test):
                // every `d ≠ 0` is an `f32` (|1/d| ≤ 2^149) and every other
                // input an `f32` or a cell index below 2^30, so the times,
                // increments and tolerances stay below 2^320, and
                // `t_end_fast` is at most the finite time of a `CELL_LIMIT`
                // plane.
                (w.tol_fix, w.t_fast_end, _) = w.fast_segment_raw(&w.tn, &w.dt, budget);
                w
            }
            // Missed, or beyond the cells: over, as the general path leaves it.
            Fast::Miss => Self::for_ray(grid, ray, range),
            Fast::General => {
                let mut w = Self::for_ray(grid, ray, range);
                if w.clip_to_box(ray, range, clip.lo_cell, clip.hi_cell) {
                    w.init();
                    w.begin();
                }
                w
            }
        }
    }

    /// [`GridWalk::ray_in_box`] for the common case, a ray with finite
    /// inputs and every direction component non-zero, over a non-empty
    /// range: the clip ([`GridWalk::clip_to_box`]) and the setup
    /// ([`GridWalk::init`]) fused, with every axis's arithmetic done at once
    /// on [`Lanes`] (one 256-bit operation each on AVX). [`Fast::General`]
    /// when the case does not apply (the general path then runs).
    ///
    /// Every value is computed by the same operations, in the same order,
    /// as in `clip_to_box` and `init` (each lane is one axis's scalar
    /// computation, and the reductions over the axes run in the same
    /// order), so the walk is bit for bit the general path's: its `t_min`,
    /// `t_max`, times, increments and tolerances, hence every later
    /// decision of the fast and slow steps, and every answer. The start
    /// cell is the exact one either way (the same filter; where it fails,
    /// the exact [`start_cell`]).
    #[inline(always)]
    fn fast_setup<L: Lanes>(grid: &Grid<3>, ray: &Ray, range: Interval, clip: &BoxClip) -> Fast {
        let dh = ray.dir.to_array().map(f64::from);
        // The grid's origin and size in `f64` as `clip` keeps them (the
        // same values: `BoxClip::new` converts them exactly).
        debug_assert_eq!(clip.origin[..3], grid.origin.map(f64::from));
        debug_assert_eq!(clip.size[..3], grid.cell_size.map(f64::from));
        let o64 = ray.origin.to_array().map(f64::from);
        let (origin, size64) = (&clip.origin, &clip.size);
        let (org, size) = (L::load4(origin), L::load4(size64));
        let c = match clip.clip_lanes::<L>(ray, range) {
            Clipped::In(c) => c,
            Clipped::Miss => return Fast::Miss,
            Clipped::General => return Fast::General,
        };
        let (t_min, t_max) = (c.t_min(), c.t_max());
        let ClipLanes { d, o, inv, up, .. } = c;
        let atmin = f64::from(t_min).abs();
        // The start cell, as `start_cell`: its estimate, its filter, and
        // where that fails, `start_cell` itself.
        let t0 = L::splat(f64::from(t_min));
        let inv_s = L::load4(&clip.inv_size);
        let x = ((o + t0 * d) - org) * inv_s;
        let limit = f64::from(CELL_LIMIT);
        if x.abs().le(L::splat(limit + 2.0)).bits() != 7 {
            // Beyond the cells, or not finite (rare): the general path decides.
            return Fast::General;
        }
        // ⌊x⌋ (|x| ≤ 2^29 + 2: the truncation fits an i32 and is exact in f64).
        let n = x.floor();
        let err = L::splat(8.0 * U) * (o.abs() + (t0 * d).abs() + org.abs()) * inv_s;
        let frac = x - n;
        let sure = frac
            .gt(err)
            .and((L::splat(1.0) - frac).gt(err))
            .and(n.ge(L::splat(-limit)))
            .and(n.lt(L::splat(limit)));
        let (n, cell) = if sure.bits() == 7 {
            (n, n.to_i32())
        } else {
            let mut cell = [0; 3];
            for (a, ca) in cell.iter_mut().enumerate() {
                let Some(na) = start_cell(origin[a], size64[a], o64[a], dh[a], 0.0, t_min) else {
                    return Fast::Miss;
                };
                *ca = na;
            }
            (L::from_i32(cell), cell)
        };
        // The setup, as `init` (the next plane is `cell + 1` moving up).
        let c = org - o;
        let dt = size * inv.abs();
        let nf = n + up.and(L::splat(1.0));
        let tn = (nf * size + c) * inv;
        let cd = (c * inv).abs().get();
        let mut c_over_d = 0.0f64;
        for v in cd {
            c_over_d = fmax(c_over_d, v);
        }
        let tol_c = 3.0 * (2.0 * U * c_over_d * (1.0 + 4.0 * U));
        let t_max64 = f64::from(t_max);
        let mut t_end_fast = if t_max64 == f64::INFINITY {
            t_max64
        } else {
            t_max64 - (tol_c + KS0 * (t_max64.abs() + atmin))
        };
        let edge = L::select(up, L::splat(limit), L::splat(-limit));
        let t_edge = (edge * size + c) * inv;
        let e = (t_edge - (L::splat(tol_c) + L::splat(KS0) * (t_edge.abs() + L::splat(atmin)))).get();
        // `fmin` for `init`'s `f64::min`: no NaN here, and the two differ
        // at most in the sign of a zero, which no comparison sees.
        for v in e {
            t_end_fast = fmin(t_end_fast, v);
        }
        let neg = (!up.bits()) & 7;
        Fast::Walk(FastParts {
            cell,
            // ±1 by the sign of `d` (no 0: every `d ≠ 0` here), by table:
            // −1 on the axes of the bits of `neg` (one load, where the
            // arithmetic took a dozen instructions).
            step: STEPS[usize::from(neg & 7)],
            tn: tn.get(),
            c: c.get(),
            inv: inv.get(),
            dt: dt.get(),
            t_min,
            t_max,
            atmin,
            tol_c,
            neg,
            t_end_fast,
        })
    }

    /// [`GridWalk::ray_in_box`]'s clip: sets `inv`, `t_min`, `t_max` and
    /// `atmin`; false when the ray misses the grown box or is not valid.
    #[inline(always)]
    fn clip_to_box(&mut self, ray: &Ray, range: Interval, lo_cell: [i32; 3], hi_cell: [i32; 3]) -> bool {
        let w = self;
        let dh = w.dh;
        if !ray.is_valid() || range.is_empty() {
            return false;
        }
        let (mut t0, mut t1) = (f64::from(range.min), f64::from(range.max));
        for a in 0..3 {
            let size = w.size[a];
            let (lc, hc) = (f64::from(lo_cell[a]), f64::from(hi_cell[a]));
            let lo = w.origin[a] + (lc - 0.5) * size;
            let hi = w.origin[a] + (hc + 1.5) * size;
            let (o, d) = (w.o[a], dh[a]);
            if d == 0.0 {
                if !(lo <= o && o < hi) {
                    return false;
                }
                continue;
            }
            let inv = 1.0 / d;
            w.inv[a] = inv;
            let mag = o.abs() + w.origin[a].abs() + (lc.abs() + hc.abs() + 2.0) * size;
            let slack = 8.0 * U * mag * inv.abs();
            let (n, f) = if d > 0.0 { (lo, hi) } else { (hi, lo) };
            t0 = fmax(t0, (n - o) * inv - slack);
            t1 = fmin(t1, (f - o) * inv + slack);
        }
        let overlaps = t0 <= t1; // false for NaN
        if !overlaps {
            return false;
        }
        w.t_min = if t0 == f64::from(range.min) { range.min } else { round_down(t0) };
        w.t_max = if t1 == f64::from(range.max) { range.max } else { round_up(t1) };
        w.atmin = f64::from(w.t_min).abs();
        true
    }

    /// The walk of `ray` over `range` through a 3D grid.
    #[inline]
    pub fn new(grid: &Grid<3>, ray: &Ray, range: Interval, supercover: bool) -> Self {
        Self::build(
            grid,
            ray.origin.to_array(),
            ray.dir.to_array().map(f64::from),
            [0.0; 3],
            range,
            supercover,
        )
    }

    /// The walk of the segment `from → to` (`t ∈ [0, 1]`); the direction
    /// `to − from` is taken exactly, so the cell entered exactly at `to` is
    /// the last step.
    pub fn segment(grid: &Grid<3>, from: Vec3, to: Vec3, supercover: bool) -> Self {
        let (dh, dl) = exact_diff(from.to_array(), to.to_array());
        Self::build(grid, from.to_array(), dh, dl, Interval::SEGMENT, supercover)
    }
}

impl GridWalk<2> {
    /// The walk of the 2D ray `origin + t·dir` over `range`.
    pub fn new(grid: &Grid<2>, origin: Vec2, dir: Vec2, range: Interval, supercover: bool) -> Self {
        Self::build(grid, origin.to_array(), dir.to_array().map(f64::from), [0.0; 2], range, supercover)
    }

    /// The walk of the 2D segment `from → to` (`t ∈ [0, 1]`), direction taken exactly.
    pub fn segment(grid: &Grid<2>, from: Vec2, to: Vec2, supercover: bool) -> Self {
        let (dh, dl) = exact_diff(from.to_array(), to.to_array());
        Self::build(grid, from.to_array(), dh, dl, Interval::SEGMENT, supercover)
    }
}

impl<const N: usize> Step<N> {
    /// A step into main cell `cell` across `axes` at `t` (`t_exit = t`),
    /// for the volumes' own loops (see [`GridWalk::drive_with`]).
    #[inline(always)]
    pub(crate) fn from_parts(cell: [i32; N], axes: u8, neg: u8, t: f32) -> Self {
        Self { t, t_exit: t, cell, axes, neg }
    }

    /// The main cell as an array.
    #[inline]
    pub fn cell_array(&self) -> [i32; N] {
        self.cell
    }

    /// Bit `a` is set when axis `a` was crossed at `t` (0 for the start step).
    #[inline]
    pub fn axes(&self) -> u8 {
        self.axes
    }

    /// True for the first step (the cell containing the start point).
    #[inline]
    pub fn is_start(&self) -> bool {
        self.axes == 0
    }

    /// Number of cells in the step: 1, or `2^k − 1` when `k` axes are crossed at once.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        if self.axes == 0 {
            1
        } else {
            (1 << self.axes.count_ones()) - 1
        }
    }

    /// The face of the main cell that the line entered through (for a crossing
    /// of several axes at once, the face of the lowest one); `None` for the start step.
    #[inline]
    pub fn face(&self) -> Option<Part> {
        self.face_of_subset(self.axes)
    }

    /// Entry face for a cell reached through the axes of `sub`.
    #[inline]
    fn face_of_subset(&self, sub: u8) -> Option<Part> {
        if sub == 0 {
            return None;
        }
        let a = sub.trailing_zeros() as usize;
        // Moving +a enters through the cell's −a face, and vice versa.
        Some(Part::axis_face(a, self.neg & (1 << a) != 0))
    }

    /// Every cell of the step with the face it was entered through (`None`
    /// for the start step): a side cell at an edge or corner is entered
    /// through the face of one of the axes on which it left the previous cell.
    #[inline]
    pub fn entries(&self) -> Entries<N> {
        Entries { step: *self, sub: if self.axes == 0 { 0 } else { self.axes }, done: false }
    }
}

/// Iterator over the cells of a [`Step`] with their entry faces; see [`Step::entries`].
#[derive(Clone, Debug)]
pub struct Entries<const N: usize> {
    step: Step<N>,
    /// The current non-empty subset of the step's axes (cells on the new side there).
    sub: u8,
    done: bool,
}

impl<const N: usize> Iterator for Entries<N> {
    type Item = ([i32; N], Option<Part>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let s = &self.step;
        let mut cell = s.cell;
        for (a, c) in cell.iter_mut().enumerate() {
            // Axes crossed but not in `sub` stay on the old side.
            if s.axes & !self.sub & (1 << a) != 0 {
                *c += if s.neg & (1 << a) != 0 { 1 } else { -1 };
            }
        }
        let face = s.face_of_subset(self.sub);
        if self.sub == 0 {
            self.done = true;
        } else {
            // Next smaller non-empty subset of `axes`.
            self.sub = (self.sub - 1) & s.axes;
            self.done = self.sub == 0;
        }
        Some((cell, face))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = if self.done {
            0
        } else if self.sub == 0 {
            1
        } else {
            // Subsets of `axes` that are ≤ sub and non-empty: count by enumeration.
            let mut k = 0;
            let mut x = self.sub;
            while x != 0 {
                k += 1;
                x = (x - 1) & self.step.axes;
            }
            k
        };
        (n, Some(n))
    }
}

impl<const N: usize> ExactSizeIterator for Entries<N> {}

impl Step<3> {
    /// The main cell: where the line goes on (the diagonal cell at a corner).
    #[inline]
    pub fn cell(&self) -> IVec3 {
        IVec3::from_array(self.cell)
    }

    /// Every cell of the step.
    #[inline]
    pub fn cells(&self) -> impl ExactSizeIterator<Item = IVec3> {
        self.entries().map(|(c, _)| IVec3::from_array(c))
    }
}

impl Step<2> {
    /// The main cell: where the line goes on (the diagonal cell at a corner).
    #[inline]
    pub fn cell(&self) -> IVec2 {
        IVec2::from_array(self.cell)
    }

    /// Every cell of the step.
    #[inline]
    pub fn cells(&self) -> impl ExactSizeIterator<Item = IVec2> {
        self.entries().map(|(c, _)| IVec2::from_array(c))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use glam::{vec2, vec3};

    /// `1 / size` of a walk's grid, as [`BoxClip`] keeps it.
    fn inv_size(w: &GridWalk<3>) -> [f64; 4] {
        let s = w.size;
        [1.0 / s[0], 1.0 / s[1], 1.0 / s[2], 1.0 / s[2]]
    }

    #[test]
    fn start_cell_is_exact_on_and_near_planes() {
        // 0.1 is not representable: the plane 3·0.1f32 lies slightly off 0.3f32.
        let s = f64::from(0.1f32);
        let p = f64::from(0.3f32);
        let n = start_cell(0.0, s, p, 0.0, 0.0, 0.0).unwrap();
        let exact_n = if 3.0 * s <= p { 3 } else { 2 };
        assert_eq!(n, exact_n);
        // On a plane: the cell above. Just below: the cell below.
        assert_eq!(start_cell(0.0, 1.0, 5.0, 0.0, 0.0, 0.0), Some(5));
        assert_eq!(start_cell(0.0, 1.0, f64::from(crate::numeric::next_down(5.0)), 0.0, 0.0, 0.0), Some(4));
        assert_eq!(start_cell(0.0, 1.0, 1e30, 0.0, 0.0, 0.0), None);
    }

    /// Internal iteration (`fold`, which keeps the hot state in registers)
    /// gives exactly the steps of `next`: long walks (fast segments and
    /// renewals), lattice diagonals (every step exact), mixed (`next` part
    /// of the way, then `fold`), a `max_steps` bound, with and without
    /// supercover, in 2D and 3D.
    #[test]
    fn fold_gives_the_steps_of_next() {
        let mut unit = unit_floats(0x1234_5678_9abc_def1);
        let mut r = move || unit() - 0.5;
        let g3 = Grid::<3>::new(vec3(1.0, 0.5, 2.0), vec3(0.25, -3.0, 1.0));
        let g2 = Grid::<2>::new(vec2(0.5, 1.5), vec2(1.0, -1.0));
        let same3 = |w: GridWalk<3>, skip: usize| {
            let all: Vec<Step<3>> = w.clone().collect();
            let mut w = w;
            let head: Vec<Step<3>> = w.by_ref().take(skip).collect();
            let tail = w.fold(head, |mut v, s| {
                v.push(s);
                v
            });
            assert_eq!(all, tail);
            all.len()
        };
        let mut total = 0;
        for i in 0..400 {
            let o = vec3(r(), r(), r()) * 20.0;
            let d = vec3(r(), r(), r()) * [1.0, 300.0][i % 2];
            let cover = i % 3 != 0;
            let range = Interval::new(r().abs(), 1.0 + 4.0 * r().abs());
            total += same3(GridWalk::<3>::new(&g3, &Ray::new(o, d), range, cover), i % 5);
            total +=
                same3(GridWalk::<3>::new(&g3, &Ray::new(o, d), range, cover).max_steps(i as u32 % 50), 0);
            // Lattice diagonals: every crossing a corner tie.
            let c = vec3((i % 7) as f32, -((i % 5) as f32), 0.0);
            total += same3(
                GridWalk::<3>::segment(&Grid::<3>::default(), c, c + vec3(40.0, 40.0, -40.0), cover),
                1,
            );
            let w2 = GridWalk::<2>::new(&g2, o.truncate(), d.truncate(), range, cover);
            let all: Vec<Step<2>> = w2.clone().collect();
            assert_eq!(
                all,
                w2.fold(Vec::new(), |mut v, s| {
                    v.push(s);
                    v
                })
            );
        }
        // Walks of many segments (`FAST_BUDGET` steps each), far from the
        // origin too: `fold` counts the crossings before each segment's end.
        for i in 0..12 {
            let o = vec3(r(), r(), r()) * [1.0, 3.0e5][i % 2];
            let d = vec3(r(), r(), r()) * 4.0e4;
            total += same3(GridWalk::<3>::new(&g3, &Ray::new(o, d), Interval::SEGMENT, i % 3 != 0), i);
            total +=
                same3(GridWalk::<3>::new(&g3, &Ray::new(o, d), Interval::SEGMENT, true).max_steps(9_000), 0);
            // Times from negative to positive (no rotated steps where a
            // time is not positive, `walk_avx512.rs`).
            total += same3(GridWalk::<3>::new(&g3, &Ray::new(o, d), Interval::new(-0.25, 0.25), true), 0);
        }
        // Short walks, whose steps near the end take `fold`'s fast steps
        // with the end tested (past the count of those surely before it),
        // segments ending on a plane among them (a crossing at `t_max`).
        for i in 0..3000 {
            let a = vec3(r(), r(), r()) * 16.0;
            let b = a + vec3(r(), r(), r()) * [2.0, 12.0, 40.0][i % 3];
            let b = if i % 4 == 0 { b.round() } else { b };
            total += same3(GridWalk::<3>::segment(&g3, a, b, i % 5 != 0), 0);
        }
        assert!(total > 420_000, "{total} steps");
    }

    #[test]
    fn corner_groups_have_3_and_7_cells_and_faces() {
        let g3 = Grid::<3>::default();
        let steps: Vec<_> =
            GridWalk::<3>::segment(&g3, vec3(0.5, 0.5, 0.5), vec3(1.5, 1.5, 1.5), true).collect();
        assert_eq!(steps[1].len(), 7);
        assert_eq!(steps[1].entries().len(), 7);
        assert_eq!(steps[1].cell(), glam::IVec3::ONE);
        // Every side cell is entered through the face of an axis it moved on.
        for (c, f) in steps[1].entries() {
            let f = f.unwrap();
            let axis = [Part::NegX, Part::NegY, Part::NegZ].iter().position(|p| *p == f).unwrap();
            assert_eq!(c[axis], 1);
        }
        let g2 = Grid::<2>::default();
        let steps: Vec<_> = GridWalk::<2>::segment(&g2, vec2(1.5, 1.5), vec2(0.5, 0.5), true).collect();
        assert_eq!((steps.len(), steps[1].len(), steps[1].face()), (2, 3, Some(Part::PosX)));
    }

    /// Deterministic xorshift floats in `[0, 1)` from `seed`.
    pub(in crate::grid) fn unit_floats(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// `(t, cell, axes)` of the remaining steps.
    fn rest<const N: usize>(w: GridWalk<N>) -> Vec<(f32, [i32; N], u8)> {
        w.map(|s| (s.t, s.cell_array(), s.axes())).collect()
    }

    #[test]
    fn skip_to_continues_exactly_like_stepping() {
        let g = Grid::<3>::new(vec3(0.5, 1.0, 0.25), vec3(0.25, -0.5, 0.0));
        let mut unit = unit_floats(0x2545_f491_4f6c_dd1d);
        for k in 0..300 {
            let (o, d) = if k % 3 == 0 {
                // Lattice rays: crossings at multiples of 1/4, many ties, and
                // skip targets exactly on crossings (which must be kept).
                let o = vec3((k % 7) as f32 * 0.5, (k % 5) as f32, (k % 3) as f32 * 0.25);
                (o, [vec3(1.0, 2.0, 1.0), vec3(-2.0, 1.0, 0.5), vec3(0.5, -0.5, -1.0)][k / 3 % 3])
            } else {
                let o = vec3(unit(), unit(), unit()) * 20.0 - 10.0;
                (o, vec3(unit(), unit(), unit()) * 8.0 - 4.0)
            };
            let ray = Ray::new(o, d);
            let walk = GridWalk::<3>::new(&g, &ray, Interval::new(0.0, 6.0), true);
            let mut plain = walk.clone();
            plain.next();
            let steps = rest(plain);
            if steps.len() < 3 {
                continue;
            }
            let i = steps.len() / 2;
            let ts = if k % 3 == 0 {
                f64::from(steps[i].0)
            } else {
                (f64::from(steps[i - 1].0) + f64::from(steps[i].0)) / 2.0
            };
            let mut skipped = walk;
            assert!(skipped.begin());
            skipped.skip_to(ts, Isa::BASELINE, &inv_size(&skipped));
            assert_eq!(rest(skipped), steps[i..], "{ray:?} ts {ts}");
        }
    }

    /// After `skip_empty` the walk goes on with a suffix of the plain walk's
    /// steps, and every step it left out touches only empty blocks (or the
    /// current cell's, the caller's to check): long runs of empty blocks
    /// (fast coarse steps), ties at block edges and corners (lattice rays),
    /// and ends within empty space.
    #[test]
    fn skip_empty_leaves_out_only_empty_blocks() {
        fn check(walk: &GridWalk<3>, base: [i32; 3], empty: impl Fn([i32; 3]) -> bool) {
            let block = |c: IVec3| std::array::from_fn(|a| (c[a] - base[a]) >> 2);
            let mut plain = walk.clone();
            plain.next();
            let steps: Vec<_> = plain.collect();
            let mut skipped = walk.clone();
            assert!(skipped.begin());
            let rest: Vec<_> = if skipped.skip_empty::<2>(base, Isa::BASELINE, &inv_size(&skipped), &empty) {
                skipped.collect()
            } else {
                Vec::new()
            };
            let key = |s: &Step<3>| (s.t, s.cell_array(), s.axes());
            let j = steps.len().checked_sub(rest.len()).expect("more steps than the plain walk");
            assert!(steps[j..].iter().map(key).eq(rest.iter().map(key)), "{walk:?}");
            // The caller knows the block of the current cell (here the start cell).
            let start = block(IVec3::from_array(walk.cell));
            let left_out = |c| block(c) == start || empty(block(c));
            assert!(steps[..j].iter().all(|s| s.cells().all(left_out)), "{walk:?}");
        }
        let g = Grid::<3>::new(vec3(0.5, 1.0, 0.25), vec3(0.25, -0.5, 0.0));
        let mut unit = unit_floats(0x9e37_79b9_7f4a_7c15);
        let base = [-3, 1, 2];
        for k in 0..600 {
            let (o, d) = if k % 3 == 0 {
                let o = vec3((k % 7) as f32 * 0.5, (k % 5) as f32, (k % 3) as f32 * 0.25);
                let d =
                    [vec3(1.0, 2.0, 4.0), vec3(-2.0, 1.0, 0.5), vec3(0.5, -0.5, -1.0), vec3(2.0, 0.0, 1.0)];
                (o, d[k / 3 % 4])
            } else if k % 3 == 1 {
                // Through block corners and edges (block-level ties), from
                // half a cell before one.
                let size = vec3(0.5, 1.0, 0.25);
                let n =
                    [vec3(1.0, 1.0, 1.0), vec3(-1.0, 1.0, 0.0), vec3(2.0, -2.0, 1.0), vec3(1.0, 0.0, -1.0)];
                let d = size * n[k / 3 % 4];
                let corner =
                    vec3((k % 5) as f32 * 4.0 - 3.0, (k % 4) as f32 * 4.0 + 1.0, (k % 7) as f32 * 4.0 + 2.0);
                (vec3(0.25, -0.5, 0.0) + size * corner - 0.5 * d, d)
            } else {
                let o = vec3(unit(), unit(), unit()) * 20.0 - 10.0;
                (o, vec3(unit(), unit(), unit()) * 8.0 - 4.0)
            };
            let walk = GridWalk::<3>::new(&g, &Ray::new(o, d), Interval::new(0.0, 25.0), true);
            // One block in `m` is not empty (all empty for k / 3 % 6 = 5).
            let m = 1u32 << (k / 3 % 6);
            let empty = move |b: [i32; 3]| {
                let h = (b[0] as u32).wrapping_mul(0x9e37_79b9)
                    ^ (b[1] as u32).wrapping_mul(0x85eb_ca6b)
                    ^ (b[2] as u32).wrapping_mul(0xc2b2_ae35);
                k / 3 % 6 == 5 || (h >> 16) & (m - 1) != 0
            };
            check(&walk, base, empty);
        }
    }

    #[test]
    fn t_exit_is_the_next_crossing_or_t_max() {
        let g = Grid::<3>::default();
        let ray = Ray::new(vec3(0.5, 0.5, 0.5), vec3(2.0, 0.0, 0.0));
        let steps: Vec<_> = GridWalk::<3>::new(&g, &ray, Interval::new(0.0, 1.0), true).collect();
        let spans: Vec<_> = steps.iter().map(|s| (s.t, s.t_exit)).collect();
        assert_eq!(spans, [(0.0, 0.25), (0.25, 0.75), (0.75, 1.0)]);
    }

    /// `(t, cell, axes)` of every step with each crossing decided by the
    /// exact slow path alone ([`GridWalk::advance_slow`] compares every
    /// candidate within `tol` exactly), and how many steps that took.
    fn slow_only<const N: usize>(mut w: GridWalk<N>) -> Vec<(f32, [i32; N], u8)> {
        let mut out = Vec::new();
        if !w.begin() {
            return out;
        }
        out.push((w.t_min, w.cell, 0));
        loop {
            let (axes, t) = w.advance_slow();
            if axes == 0 {
                return out;
            }
            out.push((w.step_t(t), w.cell, axes));
        }
    }

    /// The walk as the iterator takes it, with the number of fast steps.
    fn counted<const N: usize>(mut w: GridWalk<N>) -> (Vec<(f32, [i32; N], u8)>, usize) {
        let mut out = Vec::new();
        let mut fast = 0;
        if !w.begin() {
            return (out, 0);
        }
        out.push((w.t_min, w.cell, 0));
        loop {
            let (axes, t) = match w.try_fast() {
                Some(step) => {
                    fast += 1;
                    step
                }
                None => w.advance_slow_in_place(),
            };
            if axes == 0 {
                return (out, fast);
            }
            out.push((w.step_t(t), w.cell, axes));
        }
    }

    /// Same cells and axes in the same order; `t` within a few `f32` ulps
    /// (the fast path adds `Δ`, the slow path recomputes from the plane).
    fn same_walk<const N: usize>(a: &[(f32, [i32; N], u8)], b: &[(f32, [i32; N], u8)], ctx: &str) {
        let cells = |v: &[(f32, [i32; N], u8)]| v.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>();
        assert_eq!(cells(a), cells(b), "{ctx}");
        for (x, y) in a.iter().zip(b) {
            assert!((x.0 - y.0).abs() <= 4.0 * f32::EPSILON * (1.0 + x.0.abs()), "{ctx}: {} vs {}", x.0, y.0);
        }
    }

    #[test]
    fn fast_path_decides_like_the_exact_path() {
        // Every step of the fast walk (certified filter, fixed tolerance per
        // segment) against the same walk decided exactly at every step:
        // random rays, lattice rays (exact ties: the filter must send them
        // to the exact path), far from the origin (large `C` term), and
        // walks longer than a fast segment (renewals of the tolerance).
        let mut unit = unit_floats(0x9e37_79b9_7f4a_7c15);
        let (mut fast, mut total, mut lattice_slow) = (0usize, 0usize, 0usize);
        for k in 0..400 {
            let size = [vec3(1.0, 1.0, 1.0), vec3(0.5, 0.75, 1.25), vec3(0.1, 0.3, 0.7)][k % 3];
            let origin = [Vec3::ZERO, vec3(0.25, -0.5, 3.0)][k % 2];
            let g = Grid::<3>::new(size, origin);
            let far = if k % 5 == 0 { 3.0e6 } else { 0.0 };
            let lattice = k % 4 == 1;
            let (o, d) = if lattice {
                let o = origin + vec3((k % 7) as f32, (k % 5) as f32, (k % 3) as f32) * size;
                let d = [vec3(1.0, 1.0, 1.0), vec3(-2.0, 1.0, 3.0), vec3(1.0, -1.0, 0.0)][k % 3];
                (o + Vec3::splat(far), d * size)
            } else {
                let o = vec3(unit(), unit(), unit()) * 20.0 - 10.0 + Vec3::splat(far);
                (o, vec3(unit(), unit(), unit()) * 8.0 - 4.0)
            };
            let len = if k % 50 == 0 { 2000.0 } else { 12.0 };
            let ray = Ray::new(o, d);
            for supercover in [true, false] {
                let walk =
                    GridWalk::<3>::new(&g, &ray, Interval::new(0.0, len), supercover).max_steps(u32::MAX);
                let exact = slow_only(walk.clone());
                let (got, f) = counted(walk);
                same_walk(&got, &exact, &format!("{ray:?} size {size} origin {origin} {supercover}"));
                fast += f;
                total += got.len().saturating_sub(1);
                if lattice && f + 1 < got.len() {
                    lattice_slow += 1;
                }
            }
            // 2D on the same inputs.
            let g2 = Grid::<2>::new(size.truncate(), origin.truncate());
            let walk = GridWalk::<2>::new(&g2, o.truncate(), d.truncate(), Interval::new(0.0, len), true)
                .max_steps(u32::MAX);
            let exact = slow_only(walk.clone());
            let (got, f) = counted(walk);
            same_walk(&got, &exact, &format!("2D {ray:?} size {size} origin {origin}"));
            fast += f;
            total += got.len().saturating_sub(1);
        }
        // Most steps are fast; lattice rays meet ties, which the fast path
        // leaves to the exact one.
        assert!(fast * 10 > total * 8, "{fast} of {total} steps fast");
        assert!(lattice_slow > 50, "{lattice_slow}");
    }

    #[test]
    fn max_steps_counts_fast_steps_across_segments() {
        let g = Grid::<3>::default();
        let ray = Ray::new(vec3(0.3, 0.6, 0.2), vec3(1.0, 0.77, 0.31));
        let walk = || GridWalk::<3>::new(&g, &ray, Interval::new(0.0, 10_000.0), true);
        let full = rest(walk().max_steps(u32::MAX));
        assert!(full.len() > 3 * FAST_BUDGET as usize);
        for k in [
            1,
            2,
            3,
            100,
            FAST_BUDGET - 1,
            FAST_BUDGET,
            FAST_BUDGET + 1,
            2 * FAST_BUDGET + 1,
            3 * FAST_BUDGET,
        ] {
            let part = rest(walk().max_steps(k));
            assert_eq!(part[..], full[..k as usize], "max_steps {k}");
        }
    }
}
