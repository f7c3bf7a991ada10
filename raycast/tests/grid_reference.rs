//! Grid walks against a brute-force reference that shares no code with the
//! walk: every input is turned into an exact integer (scaled by 2^32), every
//! plane crossing of the segment is listed as an exact rational time, the
//! times are sorted, and at each one the cells around the point are worked
//! out from scratch (on a plane: both sides; otherwise the containing cell)
//! minus the cell the line was in just before. Inputs are generated on a
//! 2^-32 lattice so the scaling is exact and every product fits in i128.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use raycast::glam::{vec2, vec3, Vec2, Vec3};
use raycast::grid::{Grid, GridWalk, Step};
use raycast::{Interval, Ray};
use std::cmp::Ordering;

const SCALE: i32 = 32;

/// `x · 2^32` exactly (the generators only produce such values).
fn fix(x: f32) -> i128 {
    let s = f64::from(x) * 2f64.powi(SCALE);
    assert_eq!(s.fract(), 0.0, "{x} is not on the 2^-32 lattice");
    assert!(s.abs() < 2f64.powi(100));
    s as i128
}

/// A rational `n / d` with `d > 0`.
#[derive(Clone, Copy, Debug)]
struct Q {
    n: i128,
    d: i128,
}

impl Q {
    fn new(n: i128, d: i128) -> Self {
        if d < 0 {
            Q { n: -n, d: -d }
        } else {
            Q { n, d }
        }
    }
    fn cmp(&self, o: &Q) -> Ordering {
        (self.n * o.d).cmp(&(o.n * self.d))
    }
    fn f64(&self) -> f64 {
        self.n as f64 / self.d as f64
    }
}

/// Reference steps of the segment `a → b` on a grid: each step's cells sorted,
/// and its exact time as f64.
fn reference<const N: usize>(
    size: [f32; N],
    origin: [f32; N],
    a: [f32; N],
    b: [f32; N],
) -> Vec<(f64, Vec<[i32; N]>)> {
    let z = size.map(fix);
    let o = origin.map(fix);
    let p0 = a.map(fix);
    let mut d = [0i128; N];
    for k in 0..N {
        d[k] = fix(b[k]) - p0[k];
    }
    let start: [i64; N] = std::array::from_fn(|k| (p0[k] - o[k]).div_euclid(z[k]) as i64);
    // Every crossing time in [0, 1]: plane m of axis k at (o + m·z − p0) / d.
    let mut times: Vec<Q> = Vec::new();
    for k in 0..N {
        if d[k] == 0 {
            continue;
        }
        let end = p0[k] + d[k];
        let (lo, hi) = if d[k] > 0 { (p0[k], end) } else { (end, p0[k]) };
        let first = (lo - o[k]).div_euclid(z[k]) - 1;
        let last = (hi - o[k]).div_euclid(z[k]) + 1;
        for m in first..=last {
            let plane = o[k] + m * z[k];
            let q = Q::new(plane - p0[k], d[k]);
            let on_start_forward = d[k] > 0 && plane == p0[k];
            if q.n >= 0 && q.n <= q.d && !on_start_forward {
                times.push(q);
            }
        }
    }
    times.sort_by(|x, y| x.cmp(y));
    times.dedup_by(|x, y| x.cmp(y) == Ordering::Equal);
    let mut steps = vec![(0.0, vec![start.map(|c| c as i32)])];
    for tau in times {
        let mut touched: Vec<Vec<i64>> = Vec::new();
        let mut before = [0i64; N];
        for k in 0..N {
            if d[k] == 0 {
                touched.push(vec![start[k]]);
                before[k] = start[k];
                continue;
            }
            // p − o at tau, over tau.d: (p0 − o)·den + num·d; cell index over z·den.
            let num = (p0[k] - o[k]) * tau.d + tau.n * d[k];
            let den = z[k] * tau.d;
            let fl = num.div_euclid(den) as i64;
            if num.rem_euclid(den) == 0 {
                if tau.n == 0 {
                    // At the start: the start cell, and the one behind a plane crossed backwards.
                    touched.push(if d[k] < 0 { vec![fl - 1, fl] } else { vec![fl] });
                    before[k] = fl;
                } else {
                    touched.push(vec![fl - 1, fl]);
                    before[k] = if d[k] > 0 { fl - 1 } else { fl };
                }
            } else {
                touched.push(vec![fl]);
                before[k] = fl;
            }
        }
        let mut cells = Vec::new();
        let total: usize = touched.iter().map(Vec::len).product();
        for idx in 0..total {
            let mut r = idx;
            let mut c = [0i64; N];
            for k in 0..N {
                c[k] = touched[k][r % touched[k].len()];
                r /= touched[k].len();
            }
            if c != before {
                cells.push(c.map(|x| x as i32));
            }
        }
        assert!(!cells.is_empty(), "an event without a new cell at {tau:?}");
        cells.sort();
        steps.push((tau.f64(), cells));
    }
    steps
}

fn walk_cells<const N: usize>(steps: impl Iterator<Item = Step<N>>) -> Vec<(f64, Vec<[i32; N]>)> {
    steps
        .map(|s| {
            let mut cells: Vec<[i32; N]> = s.entries().map(|(c, _)| c).collect();
            assert_eq!(cells.len(), s.len());
            assert!(cells.contains(&s.cell_array()));
            cells.sort();
            (f64::from(s.t), cells)
        })
        .collect()
}

fn check<const N: usize>(got: Vec<(f64, Vec<[i32; N]>)>, want: Vec<(f64, Vec<[i32; N]>)>, ctx: &str) {
    let got_cells: Vec<_> = got.iter().map(|s| &s.1).collect();
    let want_cells: Vec<_> = want.iter().map(|s| &s.1).collect();
    assert_eq!(got_cells, want_cells, "{ctx}");
    for (g, w) in got.iter().zip(&want) {
        // Step t within a few f32 ulps of the exact time (segment t is in [0, 1]).
        assert!((g.0 - w.0).abs() <= 4e-7 * (1.0 + w.0.abs()), "{ctx}: t {} vs {}", g.0, w.0);
    }
}

fn check3(size: Vec3, origin: Vec3, a: Vec3, b: Vec3) {
    let grid = Grid::<3>::new(size, origin);
    let want = reference(size.to_array(), origin.to_array(), a.to_array(), b.to_array());
    let got = walk_cells(GridWalk::<3>::segment(&grid, a, b, true).max_steps(1_000_000));
    check(got, want, &format!("3D size {size} origin {origin} {a} -> {b}"));
}

fn check2(size: Vec2, origin: Vec2, a: Vec2, b: Vec2) {
    let grid = Grid::<2>::new(size, origin);
    let want = reference(size.to_array(), origin.to_array(), a.to_array(), b.to_array());
    let got = walk_cells(GridWalk::<2>::segment(&grid, a, b, true).max_steps(1_000_000));
    check(got, want, &format!("2D size {size} origin {origin} {a} -> {b}"));
}

#[test]
fn seed_examples() {
    check2(Vec2::ONE, Vec2::ZERO, vec2(3.5, -2.5), vec2(7.0, 3.5));
    check2(Vec2::ONE, Vec2::ZERO, vec2(7.0, 3.5), vec2(3.5, -2.5));
    check3(Vec3::ONE, Vec3::ZERO, vec3(2.0, 3.0, -4.0), vec3(5.0, -2.0, 2.0));
    check3(Vec3::ONE, Vec3::ZERO, vec3(5.0, -2.0, 2.0), vec3(2.0, 3.0, -4.0));
    // The 3D seed by hand: a y crossing at t = 0, corners at 1/3, 2/3 and 1.
    let grid = Grid::<3>::default();
    let steps: Vec<_> =
        GridWalk::<3>::segment(&grid, vec3(2.0, 3.0, -4.0), vec3(5.0, -2.0, 2.0), true).collect();
    let lens: Vec<usize> = steps.iter().map(Step::len).collect();
    assert_eq!(lens, [1, 1, 1, 1, 3, 1, 1, 1, 3, 1, 1, 7]);
    assert_eq!(steps[1].t, 0.0);
    assert_eq!(steps[11].t, 1.0);
}

/// A value on a coarse dyadic lattice (many exact ties) in ±`r`.
fn coarse(r: f32) -> impl Strategy<Value = f32> {
    let steps = (r * 8.0) as i32;
    (-steps..=steps).prop_map(|k| k as f32 / 8.0)
}

/// Any value in ±`r`, rounded onto the 2^-32 lattice.
fn fine(r: f32) -> impl Strategy<Value = f32> {
    (-r..r).prop_map(|x| ((f64::from(x) * 2f64.powi(24)).round() / 2f64.powi(24)) as f32)
}

fn size_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(1.0f32),
        Just(0.25),
        Just(0.5),
        Just(2.0),
        (0.25f32..3.0).prop_map(|s| (s * 1024.0).round() / 1024.0)
    ]
}

fn config(cases: u32, seed: u64) -> Config {
    Config { cases, rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() }
}

proptest! {
    #![proptest_config(config(600, 11))]
    #[test]
    fn random_3d_on_coarse_lattice(s in size_strategy(), o in [coarse(2.0), coarse(2.0), coarse(2.0)],
                                   a in [coarse(6.0), coarse(6.0), coarse(6.0)], b in [coarse(6.0), coarse(6.0), coarse(6.0)]) {
        check3(Vec3::splat(s), Vec3::from_array(o), Vec3::from_array(a), Vec3::from_array(b));
    }
}

proptest! {
    #![proptest_config(config(600, 12))]
    #[test]
    fn random_2d_on_coarse_lattice(s in [size_strategy(), size_strategy()], o in [coarse(2.0), coarse(2.0)],
                                   a in [coarse(6.0), coarse(6.0)], b in [coarse(6.0), coarse(6.0)]) {
        check2(Vec2::from_array(s), Vec2::from_array(o), Vec2::from_array(a), Vec2::from_array(b));
    }
}

proptest! {
    #![proptest_config(config(400, 13))]
    #[test]
    fn random_3d_any_values(s in [size_strategy(), size_strategy(), size_strategy()], o in [fine(5.0), fine(5.0), fine(5.0)],
                            a in [fine(8.0), fine(8.0), fine(8.0)], b in [fine(8.0), fine(8.0), fine(8.0)]) {
        check3(Vec3::from_array(s), Vec3::from_array(o), Vec3::from_array(a), Vec3::from_array(b));
    }
}

proptest! {
    #![proptest_config(config(300, 14))]
    #[test]
    fn lattice_diagonals_and_edges(s in size_strategy(), o in [coarse(1.0), coarse(1.0), coarse(1.0)],
                                   p in [-5i32..5, -5i32..5, -5i32..5], k in [-4i32..=4, -4i32..=4, -4i32..=4],
                                   f in [coarse(0.5), coarse(0.5), coarse(0.5)], len in 1i32..6) {
        // From a lattice point (or an offset from one) along an integer direction:
        // passes through edges and corners at every multiple of the step.
        let o = Vec3::from_array(o);
        let from = o + (Vec3::from_array(p.map(|x| x as f32)) + Vec3::from_array(f)) * s;
        let to = from + Vec3::from_array(k.map(|x| (x * len) as f32)) * s;
        check3(Vec3::splat(s), o, from, to);
    }
}

proptest! {
    #![proptest_config(config(200, 15))]
    #[test]
    fn axis_parallel_and_planar(s in size_strategy(), a in [coarse(5.0), coarse(5.0), coarse(5.0)],
                                axis in 0usize..3, len in coarse(12.0), second in prop::option::of((0usize..3, coarse(6.0)))) {
        let a = Vec3::from_array(a);
        let mut b = a;
        b[axis] += len;
        if let Some((ax2, l2)) = second {
            b[ax2] += l2;
        }
        check3(Vec3::splat(s), Vec3::ZERO, a, b);
    }
}

#[test]
fn long_walks_of_thousands_of_cells() {
    let cases = [
        (vec3(0.3, -0.7, 0.1), vec3(700.25, -401.5, 1200.125)),
        (vec3(-3.0, -2.0, 1.0), vec3(997.0, 998.0, 1001.0)), // lattice diagonal
        (vec3(0.5, 0.5, 0.5), vec3(-1500.5, 0.5, 0.5)),      // axis-parallel
    ];
    for (a, b) in cases {
        check3(Vec3::ONE, Vec3::ZERO, a, b);
    }
    let grid = Grid::<3>::default();
    let n = GridWalk::<3>::segment(&grid, vec3(-3.0, -2.0, 1.0), vec3(997.0, 998.0, 1001.0), true).count();
    assert_eq!(n, 1001);
    check2(vec2(0.5, 0.25), vec2(0.125, -0.5), vec2(0.0, 0.0), vec2(-333.375, 777.0));
}

#[test]
fn huge_coordinates_near_2_pow_24() {
    let big = 16_777_000.0f32; // < 2^24, integers exact
    check3(Vec3::ONE, Vec3::ZERO, vec3(big, -big, 3.0), vec3(big + 40.0, -big + 40.0, 43.0));
    check3(Vec3::ONE, Vec3::splat(0.5), vec3(big, big, big), vec3(big + 37.0, big - 23.0, big + 11.0));
    check2(Vec2::ONE, Vec2::ZERO, vec2(-big, big), vec2(-big - 64.0, big + 32.0));
    // Exactly 2^24 and beyond (ulp 2): corners still found.
    let e = 16_777_216.0f32;
    check3(vec3(2.0, 2.0, 2.0), Vec3::ZERO, vec3(e, e, e), vec3(e + 64.0, e - 64.0, e + 64.0));
}

#[test]
fn ray_form_matches_segment_form() {
    let grid = Grid::<3>::new(vec3(0.5, 1.0, 0.25), vec3(0.25, -0.5, 0.125));
    let (a, b) = (vec3(-1.25, 0.5, 3.0), vec3(4.75, -2.5, -1.5));
    let seg = walk_cells(GridWalk::<3>::segment(&grid, a, b, true));
    let ray = walk_cells(GridWalk::<3>::new(&grid, &Ray::new(a, b - a), Interval::SEGMENT, true));
    assert_eq!(seg, ray);
    // A ray continues past t = 1 up to t_max, and a later t_min starts mid-way.
    let longer = walk_cells(GridWalk::<3>::new(&grid, &Ray::new(a, b - a), Interval::new(0.0, 2.0), true));
    assert!(longer.len() > seg.len() && longer[..seg.len()] == seg[..]);
    let later = walk_cells(GridWalk::<3>::new(&grid, &Ray::new(a, b - a), Interval::new(0.5, 1.0), true));
    assert_eq!(later.last(), seg.last());
    assert_eq!(later[0].0, 0.5);
}

#[test]
fn without_supercover_ties_step_in_axis_order() {
    let grid = Grid::<3>::default();
    let steps: Vec<_> = GridWalk::<3>::segment(&grid, vec3(0.5, 0.5, 0.5), vec3(2.5, 2.5, 2.5), false)
        .map(|s| (s.t, s.cell().to_array(), s.len()))
        .collect();
    assert_eq!(
        steps,
        [
            (0.0, [0, 0, 0], 1),
            (0.25, [1, 0, 0], 1),
            (0.25, [1, 1, 0], 1),
            (0.25, [1, 1, 1], 1),
            (0.75, [2, 1, 1], 1),
            (0.75, [2, 2, 1], 1),
            (0.75, [2, 2, 2], 1),
        ]
    );
    // Negative directions too: x first, then y.
    let g2 = Grid::<2>::default();
    let cells: Vec<_> = GridWalk::<2>::segment(&g2, vec2(1.5, 1.5), vec2(-0.5, 0.5), false)
        .map(|s| s.cell().to_array())
        .collect();
    assert_eq!(cells, [[1, 1], [0, 1], [0, 0], [-1, 0]]);
}

#[test]
fn degenerate_inputs_and_bounds() {
    let grid = Grid::<3>::default();
    // Zero length: the one cell.
    let s: Vec<_> = GridWalk::<3>::segment(&grid, vec3(1.0, 2.0, -3.0), vec3(1.0, 2.0, -3.0), true).collect();
    assert_eq!((s.len(), s[0].cell().to_array()), (1, [1, 2, -3]));
    // Non-finite input: nothing.
    assert_eq!(GridWalk::<3>::segment(&grid, Vec3::NAN, Vec3::ONE, true).count(), 0);
    assert_eq!(
        GridWalk::<3>::new(&grid, &Ray::new(Vec3::ZERO, Vec3::X), Interval::new(2.0, 1.0), true).count(),
        0
    );
    // An endless ray stops at max_steps (start step included).
    let w =
        GridWalk::<3>::new(&grid, &Ray::new(Vec3::splat(0.5), vec3(1.0, 0.3, 0.0)), Interval::FORWARD, true);
    assert_eq!(w.max_steps(50).count(), 50);
    assert_eq!(
        GridWalk::<3>::new(&grid, &Ray::new(Vec3::ZERO, Vec3::X), Interval::FORWARD, true).count(),
        100_000
    );
    // Zero direction: only the start cell, never a NaN.
    let s: Vec<_> =
        GridWalk::<3>::new(&grid, &Ray::new(Vec3::splat(0.5), Vec3::ZERO), Interval::FORWARD, true).collect();
    assert_eq!(s.len(), 1);
    // Far beyond the cell limit: empty.
    assert_eq!(
        GridWalk::<3>::new(&grid, &Ray::new(Vec3::splat(1e30), Vec3::X), Interval::FORWARD, true).count(),
        0
    );
    // Line lying in a boundary plane: the cells on its positive side.
    let cells: Vec<_> = GridWalk::<3>::segment(&grid, vec3(0.5, 1.0, 0.5), vec3(2.5, 1.0, 0.5), true)
        .map(|s| s.cell().y)
        .collect();
    assert!(cells.iter().all(|&y| y == 1));
}

#[test]
fn design_example_and_faces() {
    let grid = Grid::<2>::default();
    let steps: Vec<_> = GridWalk::<2>::segment(&grid, vec2(-1.5, 0.5), vec2(2.5, 1.5), true).collect();
    let got: Vec<_> = steps.iter().map(|s| (s.t, s.cell().to_array())).collect();
    assert_eq!(
        got,
        [(0.0, [-2, 0]), (0.125, [-1, 0]), (0.375, [0, 0]), (0.5, [0, 1]), (0.625, [1, 1]), (0.875, [2, 1])]
    );
    use raycast::Part;
    let faces: Vec<_> = steps.iter().map(Step::face).collect();
    assert_eq!(faces[0], None);
    assert_eq!(faces[1], Some(Part::NegX));
    assert_eq!(faces[3], Some(Part::NegY));
    assert_eq!(steps[1].t_exit, 0.375);
}

/// Walks longer than one fast segment of the walk (its tolerance is renewed
/// every few thousand fast steps), at random and through lattice corners,
/// against the reference.
#[test]
fn walks_longer_than_a_fast_segment() {
    check3(Vec3::ONE, Vec3::ZERO, vec3(0.3, -0.7, 0.1), vec3(5000.25, -3001.5, 4200.125));
    check3(Vec3::ONE, Vec3::ZERO, vec3(-3.0, -2.0, 1.0), vec3(4997.0, 4998.0, 5001.0)); // lattice diagonal
    check3(vec3(0.25, 0.5, 0.75), vec3(0.125, -0.5, 0.25), vec3(1.0, 2.0, 3.0), vec3(1001.0, -1498.0, 753.0));
    check2(Vec2::ONE, Vec2::ZERO, vec2(0.5, 0.25), vec2(9000.5, -7000.75));
}
