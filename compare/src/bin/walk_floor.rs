//! How fast can a 3D grid walk step on this machine at all?
//!
//! The grids issue asks for ≤ 2 ns per cell step on long dense walks.
//! raycast's exact walk (`GridWalk`: ties decided exactly, supercover
//! groups, a `Step` per group) is timed here next to three stripped-down
//! Amanatides–Woo walks written for this test that do strictly less work:
//! no tie detection, no supercover, no `t_max` clamping, no step record —
//! only "pick the axis with the smallest next crossing time, advance it".
//! They are not correct walks (a lattice edge or corner is crossed one axis
//! at a time in whatever order the rounding gives); they are a floor. If
//! they cannot reach 2 ns a step, no exact walk can on this core.
//!
//! * `textbook`: `f64` times, the axis chosen by branches (the classic loop);
//! * `select`: `f64` times, the axis chosen branch-free (`select_unpredictable`);
//! * `fixed`: times as `i64` fixed point (1-cycle integer compares and
//!   conditional moves instead of 3-cycle `f64` ones), branch-free.
//!
//! Inputs: the 64 segments of `cargo bench -p raycast --bench grid --
//! grid/walk` (origins in [0, 8)³, random directions, 1000 cells long).
//! Every walk's consumer adds the x cell of each step to a sum, as the
//! bench does. Medians of 101 passes, CPU time of this thread.
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

/// A timed pass: (checksum, steps).
type Kernel<'a> = dyn Fn() -> (i64, usize) + 'a;

fn main() {
    let mut s = 7u64;
    let rays: Vec<Ray> = (0..64)
        .map(|_| {
            let o = vec3(rng(&mut s), rng(&mut s), rng(&mut s)) * 8.0;
            let d = (vec3(rng(&mut s), rng(&mut s), rng(&mut s)) - 0.5).normalize() * 1000.0;
            Ray::new(o, d)
        })
        .collect();
    let grid = Grid::<3>::default();
    let starts: Vec<Start> = rays.iter().map(start).collect();
    let kernels: [(&str, &Kernel); 5] = [
        ("raycast GridWalk, for loop (exact)", &|| raycast_iter(&grid, &rays)),
        ("raycast GridWalk, for_each (exact)", &|| raycast_for_each(&grid, &rays)),
        ("textbook (branches, no ties)", &|| textbook(black_box(&starts))),
        ("select (branch-free f64, no ties)", &|| branch_free(black_box(&starts))),
        ("fixed (branch-free i64, no ties)", &|| fixed_point(black_box(&starts))),
    ];
    println!("64 segments 1000 cells long; median ns per cell step over 101 passes");
    for (name, f) in kernels {
        let steps = f().1;
        let mut ns: Vec<f64> = (0..101)
            .map(|_| {
                let t = cpu_secs();
                black_box(f());
                (cpu_secs() - t) * 1e9 / steps as f64
            })
            .collect();
        ns.sort_by(f64::total_cmp);
        println!("  {name:38} {steps:6} steps  {:.2} ns/step", ns[50]);
    }
}
