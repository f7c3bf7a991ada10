//! How fast can a 3D grid walk step on this machine at all?
//!
//! The grids issue asks for ≤ 2 ns per cell step on long dense walks.
//! raycast's exact walk (`GridWalk`: ties decided exactly, supercover
//! groups, a `Step` per group; consumed by a `for` loop, by `for_each` with
//! the sums in borrowed variables, and by `fold` with them in the
//! accumulator) is timed here next to three stripped-down
//! Amanatides–Woo walks written for this test that do strictly less work:
//! no tie detection, no supercover, no `t_max` clamping, no step record —
//! only "pick the axis with the smallest next crossing time, advance it".
//! They are not correct walks (a lattice edge or corner is crossed one axis
//! at a time in whatever order the rounding gives); they are a floor. If
//! they cannot reach 2 ns a step, no exact walk can on this core.
//!
//! * `textbook`: `f64` times, the axis chosen by branches (the classic loop);
//! * `select`: `f64` times, the axis chosen by `select_unpredictable`
//!   (LLVM still turns the updates of the times into branches, which the
//!   predictor learns on walks it sees again and again: see below);
//! * `fixed`: times as `i64` fixed point (1-cycle integer compares and
//!   conditional moves instead of 3-cycle `f64` ones), branch-free;
//! * `slab`: no serial choice of axis at all: the line is cut into slabs by
//!   the planes of its major axis, each slab's 1–3 steps are found from its
//!   two ends independently of the other slabs (only two adds carry from
//!   slab to slab, so slabs overlap in the core), and written to a buffer
//!   that the consumer reads; also timed with the steps produced and not
//!   read, the producer's own cost.
//!
//! Inputs: the 64 segments of `cargo bench -p raycast --bench grid --
//! grid/walk` (origins in [0, 8)³, random directions, 1000 cells long).
//! Every walk's consumer adds the x cell of each step to a sum, as the
//! bench does. Medians of 101 passes, CPU time of this thread.
//!
//! Printed first, on walks the branch predictor cannot learn by heart:
//! 8192 other segments 1000 cells long (12.7 million steps a pass), timed
//! by `fold` and `next`, and the `select` and `fixed` floors on them (a
//! branchy loop that walks the same 64 segments 101 times is faster than
//! it would be on new ones); and short walks (16 and 4 cells long) by
//! `fold` and `next`, where a walk's set-up and its last steps weigh.
//! Medians of 11 passes.
//!
//! Run: `cd compare && cargo run --release --bin walk_floor`.

use raycast::glam::vec3;
use raycast::grid::{Grid, GridWalk};
use raycast::{Interval, Ray};
use raycast_compare::cpu_secs;
use std::hint::{black_box, select_unpredictable as select};

/// The bench's deterministic xorshift in [0, 1).
fn rng(seed: &mut u64) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    (*seed >> 40) as f32 / (1u64 << 24) as f32
}

/// A stripped walk's start: next crossing time, time between crossings and
/// ±1 per axis, the start cell, and the end time (the segment's length).
struct Start {
    t: [f64; 3],
    dt: [f64; 3],
    step: [i64; 3],
    cell: [i64; 3],
    end: f64,
}

fn start(ray: &Ray) -> Start {
    let len = f64::from(ray.dir.length());
    let (o, d) = (ray.origin.as_dvec3().to_array(), (ray.dir.as_dvec3() / len).to_array());
    let mut s = Start { t: [0.0; 3], dt: [0.0; 3], step: [0; 3], cell: [0; 3], end: len };
    for a in 0..3 {
        let c = o[a].floor();
        s.cell[a] = c as i64;
        s.step[a] = if d[a] > 0.0 { 1 } else { -1 };
        let next = if d[a] > 0.0 { c + 1.0 } else { c };
        s.t[a] = if d[a] != 0.0 { (next - o[a]) / d[a] } else { f64::INFINITY };
        s.dt[a] = 1.0 / d[a].abs();
    }
    s
}

#[inline(never)]
fn raycast_iter(grid: &Grid<3>, rays: &[Ray]) -> (i64, usize) {
    let (mut sum, mut n) = (0i64, 0);
    for r in rays {
        for s in GridWalk::<3>::new(grid, black_box(r), Interval::SEGMENT, true) {
            sum += i64::from(s.cell().x);
            n += 1;
        }
    }
    (sum, n)
}

#[inline(never)]
fn raycast_for_each(grid: &Grid<3>, rays: &[Ray]) -> (i64, usize) {
    let (mut sum, mut n) = (0i64, 0);
    for r in rays {
        GridWalk::<3>::new(grid, black_box(r), Interval::SEGMENT, true).for_each(|s| {
            sum += i64::from(s.cell().x);
            n += 1;
        });
    }
    (sum, n)
}

#[inline(never)]
fn raycast_fold(grid: &Grid<3>, rays: &[Ray]) -> (i64, usize) {
    rays.iter().fold((0i64, 0), |acc, r| {
        GridWalk::<3>::new(grid, black_box(r), Interval::SEGMENT, true)
            .fold(acc, |(sum, n), s| (sum + i64::from(s.cell().x), n + 1))
    })
}

#[inline(never)]
fn textbook(starts: &[Start]) -> (i64, usize) {
    let (mut sum, mut n) = (0i64, 0);
    for s in starts {
        let (mut t, mut c) = (s.t, s.cell);
        loop {
            let a = if t[0] < t[1] {
                if t[0] < t[2] {
                    0
                } else {
                    2
                }
            } else if t[1] < t[2] {
                1
            } else {
                2
            };
            if t[a] > s.end {
                break;
            }
            t[a] += s.dt[a];
            c[a] += s.step[a];
            sum += c[0];
            n += 1;
        }
        black_box(c);
    }
    (sum, n)
}

/// One branch-free walk with times of type `T` (the axis chosen by
/// conditional selects, no branch on it): the sum of its x cells and its
/// step count, added to `acc`.
#[inline(always)]
fn select_walk<T>(t: [T; 3], d: [T; 3], end: T, s: &Start, acc: &mut (i64, usize))
where
    T: Copy + PartialOrd + std::ops::Add<Output = T>,
{
    let ([mut t0, mut t1, mut t2], [mut c0, mut c1, mut c2]) = (t, s.cell);
    loop {
        let x01 = t0 < t1;
        let m01 = select(x01, t0, t1);
        let z = t2 < m01;
        if select(z, t2, m01) > end {
            break;
        }
        let (x, y) = (!z & x01, !z & !x01);
        t0 = select(x, t0 + d[0], t0);
        t1 = select(y, t1 + d[1], t1);
        t2 = select(z, t2 + d[2], t2);
        c0 = select(x, c0 + s.step[0], c0);
        c1 = select(y, c1 + s.step[1], c1);
        c2 = select(z, c2 + s.step[2], c2);
        acc.0 += c0;
        acc.1 += 1;
    }
    black_box((c1, c2));
}

#[inline(never)]
fn branch_free(starts: &[Start]) -> (i64, usize) {
    let mut acc = (0i64, 0);
    for s in starts {
        select_walk(s.t, s.dt, s.end, s, &mut acc);
    }
    acc
}

#[inline(never)]
fn fixed_point(starts: &[Start]) -> (i64, usize) {
    let mut acc = (0i64, 0);
    for s in starts {
        // 2^52 units for the segment's length: integer times that keep about
        // f64's relative precision over the walk.
        let k = (1u64 << 52) as f64 / s.end;
        let fx = |v: f64| if v.is_finite() { (v * k) as i64 } else { i64::MAX / 2 };
        select_walk(s.t.map(fx), s.dt.map(fx), fx(s.end), s, &mut acc);
    }
    acc
}

/// A stripped *slab* walk: no serial choice of axis at each step. The line is
/// cut by the planes of its major axis (largest `|d|`) into slabs; within a
/// slab each minor coordinate moves by at most one cell, so a slab holds 1 to
/// 3 steps, found from the minor coordinates at its two planes (32.32 fixed
/// point) and ordered by one integer product comparison. The only chains from
/// slab to slab are two adds and the output position, so slabs overlap in the
/// core. The producer writes each step's axis (one byte) to a buffer,
/// branch-free (overlapping stores, the position advanced by the count); the
/// consumer moves a cell by those axes and reads its x. With `CONSUME`
/// false the steps are produced and not read (the producer's own cost).
#[inline(never)]
fn slab<const CONSUME: bool>(rays: &[Ray]) -> (i64, usize) {
    const FIX: f64 = (1u64 << 32) as f64;
    const CHUNK: i32 = 512;
    let (mut sum, mut n) = (0i64, 0usize);
    let mut buf = vec![0u8; 3 * CHUNK as usize + 8];
    for r in rays {
        let o = r.origin.as_dvec3().to_array();
        let d = r.dir.as_dvec3().to_array();
        let m = if d[0].abs() >= d[1].abs() && d[0].abs() >= d[2].abs() {
            0
        } else if d[1].abs() >= d[2].abs() {
            1
        } else {
            2
        };
        let (a, b) = ((m + 1) % 3, (m + 2) % 3);
        let sgn = |x: f64| if x > 0.0 { 1i32 } else { -1 };
        let (sm, sa_i, sb_i) = (sgn(d[m]), sgn(d[a]), sgn(d[b]));
        let cm0 = o[m].floor() as i32;
        let p0 = f64::from(cm0) + if sm > 0 { 1.0 } else { 0.0 };
        let end_m = o[m] + d[m];
        let k_total = if sm > 0 { end_m.floor() as i32 - cm0 } else { cm0 - end_m.floor() as i32 };
        let ra = d[a] / d[m].abs();
        let rb = d[b] / d[m].abs();
        let first = (p0 - o[m]).abs();
        let mut pa = (o[a] * FIX) as i64;
        let mut pb = (o[b] * FIX) as i64;
        let mut ia = (pa >> 32) as i32;
        let mut ib = (pb >> 32) as i32;
        let step_a = (ra * FIX) as i64;
        let step_b = (rb * FIX) as i64;
        let (abs_a, abs_b) = (step_a.unsigned_abs() >> 1, step_b.unsigned_abs() >> 1);
        let mut next_a = pa + ((ra * first) * FIX) as i64;
        let mut next_b = pb + ((rb * first) * FIX) as i64;
        let (up_a, up_b) = (i32::from(sa_i > 0), i32::from(sb_i > 0));
        // The cell moved by an axis code: 0 = major, 1 = a, 2 = b.
        let mut delta = [[0i32; 3]; 3];
        delta[0][m] = sm;
        delta[1][a] = sa_i;
        delta[2][b] = sb_i;
        let mut cell = [0i32; 3];
        cell[m] = cm0;
        cell[a] = ia;
        cell[b] = ib;
        let mut left = k_total;
        while left > 0 {
            let chunk = left.min(CHUNK);
            left -= chunk;
            let mut p = 0usize;
            for _ in 0..chunk {
                let (ja, jb) = ((next_a >> 32) as i32, (next_b >> 32) as i32);
                let (ca, cb) = (ja != ia, jb != ib);
                // Distance to each minor boundary, times the other's slope.
                let ba = (i64::from(ia + up_a) << 32) - pa;
                let bb = (i64::from(ib + up_b) << 32) - pb;
                let a_first = (ba.unsigned_abs() >> 1) * abs_b < (bb.unsigned_abs() >> 1) * abs_a;
                let pick_a = ca & (a_first | !cb);
                // SAFETY (floor experiment): p < 3·chunk + 3 <= buf.len().
                unsafe {
                    *buf.get_unchecked_mut(p) = 2 - u8::from(pick_a);
                    p += usize::from(ca | cb);
                    *buf.get_unchecked_mut(p) = 1 + u8::from(pick_a);
                    p += usize::from(ca & cb);
                    *buf.get_unchecked_mut(p) = 0;
                }
                p += 1;
                (ia, ib, pa, pb) = (ja, jb, next_a, next_b);
                next_a += step_a;
                next_b += step_b;
            }
            if CONSUME {
                for &code in &buf[..p] {
                    let dl = delta[usize::from(code) % 3];
                    cell = [cell[0] + dl[0], cell[1] + dl[1], cell[2] + dl[2]];
                    sum += i64::from(cell[0]);
                }
            } else {
                sum += i64::from(buf[p / 2]);
            }
            n += p;
        }
        black_box(cell);
    }
    (sum, n)
}

/// A timed pass: (checksum, steps).
type Kernel<'a> = dyn Fn() -> (i64, usize) + 'a;

/// `n` segments from origins in [0, 8)³ in random directions, `len` cells
/// long (the bench's segments for `n = 64`, `len = 1000`, `seed = 7`).
fn segments(n: usize, len: f32, seed: u64) -> Vec<Ray> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            let o = vec3(rng(&mut s), rng(&mut s), rng(&mut s)) * 8.0;
            let d = (vec3(rng(&mut s), rng(&mut s), rng(&mut s)) - 0.5).normalize() * len;
            Ray::new(o, d)
        })
        .collect()
}

/// Median ns per step of `passes` runs of `f` (which returns its steps).
fn median_ns(passes: usize, f: &Kernel) -> (usize, f64) {
    let steps = f().1;
    let mut ns: Vec<f64> = (0..passes)
        .map(|_| {
            let t = cpu_secs();
            black_box(f());
            (cpu_secs() - t) * 1e9 / steps as f64
        })
        .collect();
    ns.sort_by(f64::total_cmp);
    (steps, ns[passes / 2])
}

fn main() {
    let grid = Grid::<3>::default();
    let (many, short, tiny) =
        (segments(8192, 1000.0, 99), segments(1 << 16, 16.0, 98), segments(1 << 18, 4.0, 97));
    println!("walks the predictor cannot learn by heart; median ns per cell step over 11 passes");
    for (name, rs) in
        [("8192 segments 1000 cells", &many), ("65536 of 16 cells", &short), ("262144 of 4 cells", &tiny)]
    {
        let (steps, fold) = median_ns(11, &|| raycast_fold(&grid, rs));
        let (_, next) = median_ns(11, &|| raycast_iter(&grid, rs));
        println!("  {name:26} {steps:9} steps  fold {fold:.2}, for loop {next:.2}");
    }
    let starts_many: Vec<Start> = many.iter().map(start).collect();
    let (steps, select) = median_ns(11, &|| branch_free(black_box(&starts_many)));
    let (_, fixed) = median_ns(11, &|| fixed_point(black_box(&starts_many)));
    println!("  {:26} {steps:9} steps  select {select:.2}, fixed {fixed:.2}", "the same 8192, floors");
    let rays = segments(64, 1000.0, 7);
    let starts: Vec<Start> = rays.iter().map(start).collect();
    let kernels: [(&str, &Kernel); 8] = [
        ("raycast GridWalk, for loop (exact)", &|| raycast_iter(&grid, &rays)),
        ("raycast GridWalk, for_each (exact)", &|| raycast_for_each(&grid, &rays)),
        ("raycast GridWalk, fold (exact)", &|| raycast_fold(&grid, &rays)),
        ("textbook (branches, no ties)", &|| textbook(black_box(&starts))),
        ("select (f64, no ties)", &|| branch_free(black_box(&starts))),
        ("fixed (branch-free i64, no ties)", &|| fixed_point(black_box(&starts))),
        ("slab (major-axis slabs, no ties)", &|| slab::<true>(black_box(&rays))),
        ("slab, steps produced, not read", &|| slab::<false>(black_box(&rays))),
    ];
    println!("64 segments 1000 cells long; median ns per cell step over 101 passes");
    for (name, f) in kernels {
        let (steps, ns) = median_ns(101, f);
        println!("  {name:38} {steps:6} steps  {ns:.2} ns/step");
    }
}
