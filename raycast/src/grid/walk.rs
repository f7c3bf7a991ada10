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
//! predicates: each time is first computed in `f64` as
//! `(n·size + fl(origin − o)) · fl(1/d)` (`n·size` exact), whose error is at most
//! `u·|origin − o|/|d|·(1 + 5u) + 4.0001·u·|T|` (`u = 2^-53`: one rounding
//! each in the difference, the sum, the reciprocal, the product, plus the
//! `lo` part of a segment's `d`). With `C = 2u·max_a |origin_a − o_a|/|d_a|`
//! and `K = 8u` (twice those bounds), two times closer than
//! `3·(C + K·|t|)` may be equal or in either order and go to the exact
//! comparison; farther apart, the `f64` order is the exact order. The same
//! holds for the comparison with `t_max`. The start cell is found from the
//! `f64` floor and then corrected by exact comparisons with its two planes.
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
    step: [i32; N],
    /// Next boundary index per axis (as `f64`, exact integer).
    nf: [f64; N],
    /// Approximate time of crossing `nf` (`+∞` when `d = 0`).
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
    /// Crossings before this are surely before `t_max` (`t_max − tol(t_max)`).
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
            nf: [0.0; N],
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
                w.nf[a] = f64::from(if dh[a] > 0.0 { n + 1 } else { n });
                w.inv[a] = 1.0 / dh[a];
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
        w.state = State::Start;
        w
    }

    /// At most `max_steps` steps (the start step included); 0 gives none.
    #[must_use]
    pub fn max_steps(mut self, max_steps: u32) -> Self {
        self.remaining = max_steps;
        self
    }

    /// Approximate time of the next crossing on axis `a`.
    #[inline(always)]
    fn time(&self, a: usize) -> f64 {
        // n·size is exact (|n| ≤ 2^29, 24-bit size): one rounding in the sum.
        (self.nf[a] * self.size[a] + self.c[a]) * self.inv[a]
    }

    /// Tie-suspicion tolerance at time `m` (module docs: `3·(C + K·|m|)`).
    #[inline(always)]
    fn tol(&self, m: f64) -> f64 {
        self.tol_c + (3.0 * 8.0 * U) * m.abs()
    }

    /// `X_a = origin_a + n_a·size_a − o_a` (exact terms) added with factor `sign`·`y`.
    #[inline]
    fn push_x_times(&self, terms: &mut Terms, a: usize, y: f64) {
        terms.push_prod(self.origin[a], y);
        terms.push_prod(self.nf[a] * self.size[a], y);
        terms.push_prod(-self.o[a], y);
    }

    /// Exact sign of `T_a − T_b` (both axes moving).
    fn cmp_axes(&self, a: usize, b: usize) -> i32 {
        // T_a − T_b = (X_a·d_b − X_b·d_a) / (d_a·d_b).
        let mut terms = Terms::new();
        self.push_x_times(&mut terms, a, self.dh[b]);
        self.push_x_times(&mut terms, a, self.dl[b]);
        self.push_x_times(&mut terms, b, -self.dh[a]);
        self.push_x_times(&mut terms, b, -self.dl[a]);
        terms.sign() * self.step[a] * self.step[b]
    }

    /// Exact sign of `T_a − t`.
    fn cmp_time(&self, a: usize, t: f32) -> i32 {
        // T_a − t = (X_a − t·d_a) / d_a.
        let mut terms = Terms::new();
        terms.push(self.origin[a]);
        terms.push(self.nf[a] * self.size[a]);
        terms.push(-self.o[a]);
        terms.push_prod(-f64::from(t), self.dh[a]);
        terms.push_prod(-f64::from(t), self.dl[a]);
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
            m = m.min(self.tn[a]);
        }
        m
    }

    /// Time the walk leaves the current cell (approximate), at most `t_max`.
    #[inline(always)]
    fn exit_time(&self, t: f32) -> f32 {
        (self.m.min(f64::from(self.t_max)) as f32).max(t)
    }

    /// Finishes the walk.
    #[cold]
    fn finish(&mut self) -> Option<Step<N>> {
        self.state = State::Done;
        None
    }
}

impl<const N: usize> Iterator for GridWalk<N> {
    type Item = Step<N>;

    #[inline]
    fn next(&mut self) -> Option<Step<N>> {
        if self.state != State::Walking {
            if self.state == State::Done || self.remaining == 0 {
                return self.finish();
            }
            self.state = State::Walking;
            self.remaining -= 1;
            let t = self.t_min;
            return Some(Step { t, t_exit: self.exit_time(t), cell: self.cell, axes: 0, neg: self.neg });
        }
        if self.remaining == 0 {
            return self.finish();
        }
        let m = self.m;
        if m == f64::INFINITY {
            return self.finish();
        }
        let lim = m + self.tol(m);
        let mut candidates = 0u8;
        for a in 0..N {
            candidates |= u8::from(self.tn[a] <= lim) << a;
        }
        let t;
        let axes;
        if candidates.is_power_of_two() && lim < self.t_end_fast {
            // Fast path: one axis, surely first and surely before t_max.
            let a = candidates.trailing_zeros() as usize;
            let next = self.cell[a] + self.step[a];
            if !(-CELL_LIMIT..CELL_LIMIT).contains(&next) {
                return self.finish();
            }
            t = (m as f32).clamp(self.t_min, self.t_max);
            self.cell[a] = next;
            self.nf[a] += f64::from(self.step[a]);
            self.tn[a] = self.time(a);
            axes = candidates;
        } else {
            let Some(group) = self.exact_group(candidates) else {
                return self.finish();
            };
            axes = if self.supercover { group } else { group & group.wrapping_neg() };
            let first = axes.trailing_zeros() as usize;
            t = (self.tn[first] as f32).clamp(self.t_min, self.t_max);
            for a in 0..N {
                if axes & (1 << a) != 0 {
                    let next = self.cell[a] + self.step[a];
                    if !(-CELL_LIMIT..CELL_LIMIT).contains(&next) {
                        return self.finish();
                    }
                    self.cell[a] = next;
                    self.nf[a] += f64::from(self.step[a]);
                    self.tn[a] = self.time(a);
                }
            }
        }
        self.m = self.min_tn();
        self.remaining -= 1;
        Some(Step { t, t_exit: self.exit_time(t), cell: self.cell, axes, neg: self.neg })
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
    let mut n = x.floor() as i64;
    // Filter: x carries at most 4 roundings of |o| + |t0·dh| + |origin| (plus
    // the ignored t0·dl); with twice that margin from the nearest integer the
    // floor is exact and the planes need no exact test.
    let err = 8.0 * U * (o.abs() + (t0 * dh).abs() + origin.abs()) / size + 2.0 * (t0 * dl).abs() / size;
    let frac = x - x.floor();
    if frac > err && 1.0 - frac > err && (-i64::from(CELL_LIMIT)..i64::from(CELL_LIMIT)).contains(&n) {
        return Some(n as i32);
    }
    // sign(origin + k·size − o − t0·d): is plane k after the point?
    let plane_vs_point = |k: i64| {
        let mut terms = Terms::new();
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

    #[test]
    fn t_exit_is_the_next_crossing_or_t_max() {
        let g = Grid::<3>::default();
        let ray = Ray::new(vec3(0.5, 0.5, 0.5), vec3(2.0, 0.0, 0.0));
        let steps: Vec<_> = GridWalk::<3>::new(&g, &ray, Interval::new(0.0, 1.0), true).collect();
        let spans: Vec<_> = steps.iter().map(|s| (s.t, s.t_exit)).collect();
        assert_eq!(spans, [(0.0, 0.25), (0.25, 0.75), (0.75, 1.0)]);
    }
}
