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
//! One step: the smallest time `m` is surely alone (every other time is
//! above `m + tol(m)`) and surely before the end, so exactly one axis steps.
//! The choice of that axis and the add of its `Δ` are branch-free (compare
//! masks, [`step_min`]); the filter only feeds a well-predicted branch.
//! Anything else (a possible tie, the end, the cell limit) takes the exact
//! slow path. The volumes drive this loop in place ([`GridWalk::drive`]) and
//! skip empty blocks of `2^L` cells with a coarse walk on the same planes and
//! the same filter ([`GridWalk::skip_empty`], [`GridWalk::skip_to`]).
//!
//! Cell coordinates are limited to `[−2^29, 2^29)` (DESIGN asks for ±2^24):
//! a walk starting outside is empty, and a walk ends where it would leave.

use super::exact::{two_sum, Terms};
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
    /// with the number of incremental updates of `tn`).
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
    /// `min(tn)`, kept up to date.
    m: f64,
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
    /// Inlined so that the walk is built in place in a volume's cast (no
    /// copy of its ~300 bytes per ray).
    #[inline]
    fn build(
        grid: &Grid<N>,
        o: [f32; N],
        dh: [f64; N],
        dl: [f64; N],
        range: Interval,
        supercover: bool,
    ) -> Self {
        let mut w = Self {
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
            m: f64::INFINITY,
        };
        let finite = o.iter().all(|x| x.is_finite()) && dh.iter().chain(&dl).all(|x| x.is_finite());
        if !finite || !range.min.is_finite() || range.is_empty() {
            return w;
        }
        let mut c_over_d = 0.0f64;
        for a in 0..N {
            let Some(n) = start_cell(w.origin[a], w.size[a], w.o[a], dh[a], dl[a], range.min) else {
                return w;
            };
            w.cell[a] = n;
            w.c[a] = w.origin[a] - w.o[a];
            if dh[a] != 0.0 {
                w.step[a] = if dh[a] > 0.0 { 1 } else { -1 };
                w.inv[a] = 1.0 / dh[a];
                w.dt[a] = w.size[a] * w.inv[a].abs();
                w.tn[a] = w.time(a);
                c_over_d = c_over_d.max((w.c[a] * w.inv[a]).abs());
            }
        }
        // C = 2u·max|origin − o|/|d| (with one more rounding of slack); tolerance 3C.
        w.tol_c = 3.0 * (2.0 * U * c_over_d * (1.0 + 4.0 * U));
        w.neg = w.neg_mask();
        w.m = w.min_tn();
        let t_max = f64::from(range.max);
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
        w
    }

    /// At most `max_steps` steps (the start step included); 0 gives none.
    #[must_use]
    pub fn max_steps(mut self, max_steps: u32) -> Self {
        self.remaining = max_steps;
        self
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
        let e = fmin(self.m, f64::from(self.t_max)) as f32;
        if e < t {
            t
        } else {
            e
        }
    }

    /// Finishes the walk (`remaining = 0` also stops [`GridWalk::advance`]).
    #[cold]
    fn finish(&mut self) -> (u8, f64) {
        self.state = State::Done;
        self.remaining = 0;
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
        self.remaining -= 1;
        true
    }

    /// One crossing step after the start step: the axes crossed (0 when the
    /// walk is over) and the approximate `t` of the crossing (clamp it to
    /// the range, see [`GridWalk::step_t`]). The new main cell is `self.cell`.
    ///
    /// Fast path: the smallest time `m` is surely alone (every other axis's
    /// time is above `m + tol(m)`) and surely before the walk's end, so the
    /// order is exact without further work: one axis steps and its time is
    /// recomputed from the plane index (no accumulated error).
    #[inline(always)]
    pub(crate) fn advance(&mut self) -> (u8, f64) {
        let m = self.m;
        let lim = m + self.tol(m);
        let cand = below(&self.tn, lim);
        // The axis to step, from direct comparisons of the times (not from
        // `lim`), so that the loop-carried chain is compare → mask → add;
        // the filter below only feeds a well-predicted branch. When the
        // filter passes, this is the single candidate.
        let (sel, tn) = step_min(&self.tn, &self.dt);
        // `lim < t_end_fast` is false for m = +∞ (no moving axis) and NaN.
        if cand & cand.wrapping_sub(1) == 0 && lim < self.t_end_fast && self.remaining != 0 {
            for a in 0..N {
                self.cell[a] += self.step[a] & -i32::from((sel >> a) & 1);
            }
            self.tn = tn;
            self.m = self.min_tn();
            self.ks += KS_STEP;
            self.remaining -= 1;
            return (cand, m);
        }
        // By value, so that the walk's address never escapes the caller's
        // loop and its fields can live in registers (an `&mut self` call,
        // even a cold one, pins the whole walk to memory).
        // Field by field (not a block copy), so that the walk's address
        // never escapes the caller's loop and its fields can live in
        // registers; only the hot fields come back.
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
            m: self.m,
        });
        (self.cell, self.tn, self.m, self.ks, self.remaining, self.state) = hot;
        (axes, t)
    }

    /// Runs the crossing steps (after [`GridWalk::begin`]) with the walk's
    /// hot state in locals (registers), calling `visit(axes, t, cell)` for
    /// each: `axes` and `t` as from [`GridWalk::advance`], `cell` the new
    /// main cell. Returns [`Flow::End`] when the walk is over, or what
    /// `visit` answered other than [`Flow::Go`] (the walk is then saved and
    /// can be driven again, e.g. after [`GridWalk::skip_empty`]).
    ///
    /// The fast path is [`GridWalk::advance`]'s, with branch-free updates:
    /// the loop-carried chain per step is compare → mask → add. Fast steps
    /// are not counted against `max_steps` (the slow path still counts):
    /// the volumes walk with `max_steps(u32::MAX)`, more than the `3·2^30`
    /// steps any walk within [`CELL_LIMIT`] can take.
    #[inline(always)]
    pub(crate) fn drive(&mut self, mut visit: impl FnMut(u8, f64, [i32; N]) -> Flow) -> Flow {
        let (step, dt) = (self.step, self.dt);
        let (tol_c, atmin, t_end) = (self.tol_c, self.atmin, self.t_end_fast);
        let (mut cell, mut tn) = (self.cell, self.tn);
        let (mut m, mut ks) = (self.m, self.ks);
        loop {
            let lim = m + (tol_c + ks * (m.abs() + atmin));
            let cand = below(&tn, lim);
            let (sel, stepped) = step_min(&tn, &dt);
            let (axes, t);
            if cand & cand.wrapping_sub(1) == 0 && lim < t_end {
                for a in 0..N {
                    cell[a] += step[a] & -i32::from((sel >> a) & 1);
                }
                tn = stepped;
                (axes, t) = (cand, m);
                m = fmin_all(&tn);
                ks += KS_STEP;
            } else {
                (self.cell, self.tn, self.m, self.ks) = (cell, tn, m, ks);
                (axes, t) = self.advance_slow();
                if axes == 0 {
                    return Flow::End;
                }
                (cell, tn, m, ks) = (self.cell, self.tn, self.m, self.ks);
            }
            let flow = visit(axes, t, cell);
            if flow != Flow::Go {
                (self.cell, self.tn, self.m, self.ks) = (cell, tn, m, ks);
                return flow;
            }
        }
    }

    /// Bit `a`: the direction is negative on axis `a`.
    #[inline(always)]
    pub(crate) fn neg_bits(&self) -> u8 {
        self.neg
    }

    /// [`GridWalk::advance`] when two crossings may tie, the end may be
    /// reached, or the walk is over: exact comparisons decide.
    #[inline(always)]
    fn advance_slow(&mut self) -> (u8, f64) {
        if self.remaining == 0 || self.m == f64::INFINITY {
            return self.finish();
        }
        let lim = self.m + self.tol(self.m);
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
        self.m = self.min_tn();
        self.ks += KS_STEP;
        self.remaining -= 1;
        (axes, t)
    }

    /// The `f32` time of a crossing at approximate time `t` (from
    /// [`GridWalk::advance`]), clamped to the walk's range.
    #[inline(always)]
    pub(crate) fn step_t(&self, t: f64) -> f32 {
        // Plain compares (t is never NaN here): two instructions, no panic path.
        let t = t as f32;
        let t = if t < self.t_min { self.t_min } else { t };
        if t > self.t_max {
            self.t_max
        } else {
            t
        }
    }

    /// The step [`GridWalk::advance`] just made (`axes = 0`: the start step).
    #[inline(always)]
    pub(crate) fn make_step(&self, axes: u8, t: f32) -> Step<N> {
        Step { t, t_exit: self.exit_time(t), cell: self.cell, axes, neg: self.neg }
    }

    /// The current main cell.
    #[inline(always)]
    pub(crate) fn cell(&self) -> [i32; N] {
        self.cell
    }

    /// Moves the walk to its state at time `ts` (all crossings before `ts`
    /// taken, none at or after it), without visiting the cells in between;
    /// does nothing on axes already past `ts`. The caller must know that no
    /// cell it cares about is touched before `ts`.
    ///
    /// Per axis the first plane crossed at or after `ts` is estimated from
    /// the `f64` position at `ts` and then confirmed with the time filter
    /// (its time and its predecessor's are farther than `tol` from `ts`),
    /// or moved by exact comparisons ([`Terms`]) when either is closer.
    pub(crate) fn skip_to(&mut self, ts: f64) {
        if !ts.is_finite() {
            return;
        }
        for a in 0..N {
            let s = f64::from(self.step[a]);
            if s == 0.0 {
                continue;
            }
            // Position at ts in cells: (o + ts·d − origin) / size.
            let x = (ts * self.dh[a] - self.c[a]) / self.size[a];
            let lim = f64::from(CELL_LIMIT) + 1.0;
            // Finite here (ts and the walk's inputs are), so the casts are exact.
            let x = x.clamp(-lim, lim);
            let est = if s > 0.0 { -floor_i64(-x) } else { floor_i64(x) } as f64;
            // Never backwards: `nf` is the first plane after the current time.
            let now = self.nf(a);
            let mut n = if s > 0.0 { est.max(now) } else { est.min(now) };
            // T(n) ≥ ts, or step on.
            loop {
                let t = self.time_at(a, n);
                if t - self.tol(t) >= ts {
                    break;
                }
                if t + self.tol(t) < ts || self.cmp_plane_time(a, n, ts) < 0 {
                    n += s;
                } else {
                    break;
                }
            }
            // T(n − s) < ts, or step back (not behind the current plane).
            while n != now {
                let t = self.time_at(a, n - s);
                if t + self.tol(t) < ts {
                    break;
                }
                if t - self.tol(t) >= ts || self.cmp_plane_time(a, n - s, ts) >= 0 {
                    n -= s;
                } else {
                    break;
                }
            }
            // n is within ±(2^29 + 1) here: the cast is exact.
            self.cell[a] = if s > 0.0 { n as i32 - 1 } else { n as i32 };
            self.tn[a] = self.time(a);
        }
        self.m = self.min_tn();
    }

    /// Skips blocks of `2^L` cells per axis (block `k` holds cells
    /// `base + k·2^L ..`) that `empty` says hold nothing of interest.
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
    #[inline]
    pub(crate) fn skip_empty<const L: u32>(
        &mut self,
        base: [i32; N],
        mut empty: impl FnMut([i32; N]) -> bool,
    ) -> bool {
        let mut kb = [0i32; N];
        let mut plane = [0.0f64; N];
        let mut tc = [f64::INFINITY; N];
        let width = f64::from(1u32 << L);
        for a in 0..N {
            kb[a] = (self.cell[a] - base[a]) >> L;
            if self.step[a] != 0 {
                let k = kb[a] + i32::from(self.step[a] > 0);
                plane[a] = f64::from(base[a]) + f64::from(k) * width;
                tc[a] = self.time_at(a, plane[a]);
            }
        }
        let t_max = f64::from(self.t_max);
        loop {
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
                self.skip_to(mc - tol);
                return true;
            }
            let a = cand.trailing_zeros() as usize;
            kb[a] += self.step[a];
            plane[a] += f64::from(self.step[a]) * width;
            tc[a] = self.time_at(a, plane[a]);
            if !empty(kb) {
                self.skip_to(mc - tol);
                return true;
            }
        }
    }
}

/// What [`GridWalk::drive`]'s visitor wants next, and how a drive ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on walking.
    Go,
    /// Stop here (e.g. a hit).
    Stop,
    /// Stop so that the caller can skip empty space.
    Skip,
    /// The walk is over.
    End,
}

/// Bit `a` set for each time `≤ lim` (the tie candidates).
#[inline(always)]
fn below<const N: usize>(t: &[f64; N], lim: f64) -> u8 {
    t.iter().enumerate().fold(0, |c, (a, x)| c | u8::from(*x <= lim) << a)
}

/// [`GridWalk::advance_slow`] on a copy, returned with the walk (see
/// [`GridWalk::advance`]).
#[cold]
#[inline(never)]
#[allow(clippy::type_complexity)] // the hot fields, named at the one call
fn slow_by_value<const N: usize>(
    mut w: GridWalk<N>,
) -> (([i32; N], [f64; N], f64, f64, u32, State), u8, f64) {
    let (axes, t) = w.advance_slow();
    ((w.cell, w.tn, w.m, w.ks, w.remaining, w.state), axes, t)
}

/// The smallest of the times.
#[inline(always)]
fn fmin_all<const N: usize>(t: &[f64; N]) -> f64 {
    let mut m = t[0];
    for x in &t[1..] {
        m = fmin(m, *x);
    }
    m
}

/// The axis with the smallest time (bit `a` of the result; the first on
/// equal times, which the fast path never sees) and the times with that
/// axis advanced by its `dt`. Branch-free: the compare masks select `dt`
/// by a bitwise and, so the loop-carried chain is compare → and → add.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn step_min<const N: usize>(t: &[f64; N], dt: &[f64; N]) -> (u8, [f64; N]) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; only register operations.
    // The compare intrinsics keep the selection in vector masks, which the
    // optimiser cannot turn back into (mispredicted) branches.
    unsafe {
        let v = t.map(|x| _mm_set_sd(x));
        let d = dt.map(|x| _mm_set_sd(x));
        let ones = _mm_castsi128_pd(_mm_set1_epi32(-1));
        let mut s = [ones; N];
        if N == 2 {
            let m01 = _mm_cmple_sd(v[0], v[1]);
            s[0] = m01;
            s[1] = _mm_andnot_pd(m01, ones);
        } else {
            let m01 = _mm_cmple_sd(v[0], v[1]);
            let m02 = _mm_cmple_sd(v[0], v[2]);
            let m12 = _mm_cmple_sd(v[1], v[2]);
            s[0] = _mm_and_pd(m01, m02);
            s[1] = _mm_andnot_pd(m01, m12);
            s[2] = _mm_andnot_pd(_mm_or_pd(m02, m12), ones);
        }
        let mut out = [0.0; N];
        let mut sel = 0u8;
        for a in 0..N {
            out[a] = _mm_cvtsd_f64(_mm_add_sd(v[a], _mm_and_pd(s[a], d[a])));
            sel |= ((_mm_movemask_pd(s[a]) & 1) as u8) << a;
        }
        (sel, out)
    }
}

/// Portable [`step_min`] (x86_64 uses SSE2 masks).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn step_min<const N: usize>(t: &[f64; N], dt: &[f64; N]) -> (u8, [f64; N]) {
    let sel = if N == 2 {
        if t[0] <= t[1] {
            1
        } else {
            2
        }
    } else {
        let c01 = t[0] <= t[1];
        let c02 = t[0] <= t[2];
        let c12 = t[1] <= t[2];
        u8::from(c01 & c02) | u8::from(!c01 & c12) << 1 | u8::from(!c02 & !c12) << 2
    };
    let mut out = *t;
    for a in 0..N {
        let mask = 0u64.wrapping_sub(u64::from((sel >> a) & 1));
        out[a] += f64::from_bits(dt[a].to_bits() & mask);
    }
    (sel, out)
}

/// `min(a, b)` without the NaN handling of `f64::min` (the walk's times
/// are never NaN: finite or `+∞`), so it is one `minsd`.
#[inline(always)]
fn fmin(a: f64, b: f64) -> f64 {
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
        let (axes, t) = self.advance();
        if axes == 0 {
            return None;
        }
        Some(self.make_step(axes, self.step_t(t)))
    }
}

impl<const N: usize> std::iter::FusedIterator for GridWalk<N> {}

/// The cell index `n` with `origin + n·size ≤ o + t0·(dh + dl) < origin + (n+1)·size`,
/// exactly; `None` if it is outside `[-CELL_LIMIT, CELL_LIMIT)` or not finite.
pub(crate) fn start_cell(origin: f64, size: f64, o: f64, dh: f64, dl: f64, t0: f32) -> Option<i32> {
    let t0 = f64::from(t0);
    let x = ((o + t0 * dh) - origin) / size;
    let limit = f64::from(CELL_LIMIT);
    let in_range = x.abs() <= limit + 2.0; // false for NaN
    if !in_range {
        return None;
    }
    let mut n = floor_i64(x);
    // Filter: x carries at most 4 roundings of |o| + |t0·dh| + |origin| (plus
    // the ignored t0·dl); with twice that margin from the nearest integer the
    // floor is exact and the planes need no exact test.
    let err = 8.0 * U * (o.abs() + (t0 * dh).abs() + origin.abs()) / size + 2.0 * (t0 * dl).abs() / size;
    let frac = x - n as f64;
    if frac > err && 1.0 - frac > err && (-i64::from(CELL_LIMIT)..i64::from(CELL_LIMIT)).contains(&n) {
        return Some(n as i32);
    }
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
    /// for the volumes' own loops (see [`GridWalk::drive`]).
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
mod tests {
    use super::*;
    use glam::{vec2, vec3};

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

    /// `(t, cell, axes)` of the remaining steps.
    fn rest<const N: usize>(w: GridWalk<N>) -> Vec<(f32, [i32; N], u8)> {
        w.map(|s| (s.t, s.cell_array(), s.axes())).collect()
    }

    #[test]
    fn skip_to_continues_exactly_like_stepping() {
        let g = Grid::<3>::new(vec3(0.5, 1.0, 0.25), vec3(0.25, -0.5, 0.0));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut unit = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
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
            skipped.skip_to(ts);
            assert_eq!(rest(skipped), steps[i..], "{ray:?} ts {ts}");
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
}
