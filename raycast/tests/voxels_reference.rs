//! Voxel volumes against brute force: every solid cell is clipped by the slab
//! method in f64 and the smallest entry `t` wins (ties within f64 rounding
//! accept any of the tied cells). The dense volume, the chunked world and the
//! predicate walk must agree with it and with each other.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use raycast::glam::{ivec3, vec3, IVec3, Vec3};
use raycast::grid::{first_solid, ChunkedVoxels, Grid, GridWalk, VoxelVolume};
use raycast::{Interval, Part, Ray, RayCast};

/// Entry `t` of the line into the closed box of `cell` within `range`, in f64.
fn slab(grid: &Grid<3>, cell: IVec3, ray: &Ray, range: Interval) -> Option<f64> {
    let (mut t0, mut t1) = (f64::from(range.min), f64::from(range.max));
    for a in 0..3 {
        let lo = f64::from(grid.origin()[a]) + f64::from(cell[a]) * f64::from(grid.cell_size()[a]);
        let hi = lo + f64::from(grid.cell_size()[a]);
        let (o, d) = (f64::from(ray.origin[a]), f64::from(ray.dir[a]));
        if d == 0.0 {
            // Half-open cells: a line in a plane belongs to the cell above it.
            if !(lo <= o && o < hi) {
                return None;
            }
            continue;
        }
        let (a0, a1) = ((lo - o) / d, (hi - o) / d);
        t0 = t0.max(a0.min(a1));
        t1 = t1.min(a0.max(a1));
    }
    (t0 <= t1).then_some(t0)
}

fn check(cells: &[IVec3], size: Vec3, origin: Vec3, ray: Ray, range: Interval) {
    let grid = Grid::<3>::new(size, origin);
    let dense = VoxelVolume::from_cells(size, origin, cells.iter().copied()).unwrap();
    let chunked = ChunkedVoxels::from_cells(size, origin, cells.iter().copied()).unwrap();
    let brute: Vec<(f64, IVec3)> =
        cells.iter().filter_map(|&c| slab(&grid, c, &ray, range).map(|t| (t, c))).collect();
    let best = brute.iter().map(|b| b.0).fold(f64::INFINITY, f64::min);
    let scale =
        1.0 + f64::from(ray.origin.abs().max_element()) + best.abs() * f64::from(ray.dir.abs().max_element());
    let tied: Vec<IVec3> = brute.iter().filter(|b| (b.0 - best).abs() <= 1e-9 * scale).map(|b| b.1).collect();
    let pred =
        first_solid(GridWalk::<3>::new(&grid, &ray, range, true).max_steps(u32::MAX), |c| cells.contains(&c));
    for (name, hit) in [("dense", dense.cast(&ray, range)), ("chunked", chunked.cast(&ray, range))] {
        let ctx = format!("{name}: {ray:?} {range:?} size {size} origin {origin}");
        match hit {
            None => assert!(brute.is_empty() && pred.is_none(), "{ctx}: missed {tied:?} at {best}"),
            Some(h) => {
                let c = h.cell.unwrap();
                assert!(tied.contains(&c), "{ctx}: hit {c} at {}, brute force {tied:?} at {best}", h.t);
                assert!((f64::from(h.t) - best).abs() <= 1e-6 * scale, "{ctx}: t {} vs {best}", h.t);
                let p = pred.unwrap();
                assert_eq!((p.t, tied.contains(&p.cell)), (h.t, true), "{ctx}");
                assert!((h.normal.length() - 1.0).abs() < 1e-6 && h.front_face, "{ctx}: {h:?}");
                assert!(range.contains(h.t));
            }
        }
    }
}

fn config(cases: u32, seed: u64) -> Config {
    Config { cases, rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() }
}

fn quarter(r: f32) -> impl Strategy<Value = f32> {
    let n = (r * 4.0) as i32;
    (-n..=n).prop_map(|k| k as f32 / 4.0)
}

proptest! {
    #![proptest_config(config(500, 21))]
    #[test]
    fn random_volumes_and_rays(cells in prop::collection::vec([-4i32..4, -4i32..4, -4i32..4], 1..40),
                               size in prop_oneof![Just(1.0f32), Just(0.5), Just(2.0), 0.3f32..2.0],
                               origin in [quarter(1.0), quarter(1.0), quarter(1.0)],
                               o in [-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0],
                               d in [-2.0f32..2.0, -2.0f32..2.0, -2.0f32..2.0],
                               lattice in any::<bool>(), zero_axis in 0usize..5, t_min in prop_oneof![Just(0.0f32), 0.0f32..3.0]) {
        let cells: Vec<IVec3> = cells.into_iter().map(IVec3::from_array).collect();
        let mut o = Vec3::from_array(o);
        let mut d = Vec3::from_array(d);
        if lattice {
            // Rays through cell corners and edges.
            o = (o * 2.0).round() / 2.0;
            d = (d * 2.0).round();
        }
        if zero_axis < 3 {
            d[zero_axis] = 0.0;
        }
        if d == Vec3::ZERO {
            d = Vec3::X;
        }
        check(&cells, Vec3::splat(size), Vec3::from_array(origin), Ray::new(o, d), Interval::new(t_min, 40.0));
    }
}

#[test]
fn start_inside_and_faces() {
    let cells = [ivec3(0, 0, 0), ivec3(3, 0, 0)];
    let vol = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, cells).unwrap();
    // Inside: t = t_min, the face the line entered through (here −x), front facing.
    let h = vol.cast(&Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.25, 0.0)), Interval::FORWARD).unwrap();
    assert_eq!((h.t, h.cell, h.part, h.front_face), (0.0, Some(ivec3(0, 0, 0)), Part::NegX, true));
    // From t_min past the first cell: the next one, through its −x face.
    let h = vol.cast(&Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.0, 0.0)), Interval::new(1.0, 10.0)).unwrap();
    assert_eq!(
        (h.t, h.cell, h.part, h.normal),
        (2.5, Some(ivec3(3, 0, 0)), Part::NegX, vec3(-1.0, 0.0, 0.0))
    );
    // t_max exactly at the face counts; just before does not.
    let r = Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.0, 0.0));
    assert!(vol.hits(&r, Interval::new(0.75, 2.5)));
    assert!(!vol.hits(&r, Interval::new(0.75, 2.4999998)));
    // Degenerate rays miss.
    assert!(vol.cast(&Ray::new(Vec3::splat(0.5), Vec3::ZERO), Interval::FORWARD).is_none());
    assert!(vol.cast(&Ray::new(Vec3::NAN, Vec3::X), Interval::FORWARD).is_none());
}

#[test]
fn corner_entry_reports_a_touched_cell() {
    // Only the side cell (1, 0, 0) of the corner at (1, 1, 1) is solid: hit at the corner.
    let vol = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, [ivec3(1, 0, 0)]).unwrap();
    let h = vol.cast(&Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 1.0, 1.0)), Interval::FORWARD).unwrap();
    assert_eq!((h.t, h.cell, h.part), (0.5, Some(ivec3(1, 0, 0)), Part::NegX));
}

#[test]
fn chunked_skips_far_empty_space_and_far_chunks() {
    let mut w = ChunkedVoxels::new(vec3(0.5, 0.5, 0.5), vec3(0.25, -0.25, 0.0));
    let target = ivec3(5000, 3000, -2000);
    w.set(target, true);
    w.set(ivec3(-100, 0, 0), true);
    assert_eq!(w.chunk_count(), 2);
    let grid = *w.grid();
    let centre = grid.cell_bounds(target).center();
    let ray = Ray::new(vec3(0.1, 0.1, 0.1), centre - vec3(0.1, 0.1, 0.1));
    let h = w.cast(&ray, Interval::FORWARD).unwrap();
    assert_eq!(h.cell, Some(target));
    // Same answer as the plain walk with a hash lookup per cell.
    let p = first_solid(GridWalk::<3>::new(&grid, &ray, Interval::FORWARD, true).max_steps(u32::MAX), |c| {
        w.get(c)
    })
    .unwrap();
    assert_eq!((p.cell, p.t), (target, h.t));
    // Exactly through the corner of two chunks, with a solid cell just past it.
    let mut w = ChunkedVoxels::new(Vec3::ONE, Vec3::ZERO);
    w.set(ivec3(32, 31, 0), true);
    let h = w.cast(&Ray::new(vec3(0.5, -0.5, 0.5), vec3(1.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
    assert_eq!((h.cell, h.t), (Some(ivec3(32, 31, 0)), 31.5));
    // Clearing the last cell of a chunk drops the chunk.
    w.clear(ivec3(32, 31, 0));
    assert_eq!((w.chunk_count(), w.len()), (0, 0));
    assert!(!w.hits(&Ray::new(vec3(0.5, -0.5, 0.5), vec3(1.0, 1.0, 0.0)), Interval::FORWARD));
}

proptest! {
    #![proptest_config(config(150, 22))]
    #[test]
    fn chunked_matches_predicate_walk_on_long_rays(cells in prop::collection::vec([-200i32..200, -200i32..200, -200i32..200], 1..60),
                                                   o in [-300.0f32..300.0, -300.0f32..300.0, -300.0f32..300.0],
                                                   target in 0usize..60, jitter in [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0]) {
        let cells: Vec<IVec3> = cells.into_iter().map(IVec3::from_array).collect();
        let w = ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, cells.iter().copied()).unwrap();
        let aim = cells[target % cells.len()].as_vec3() + 0.5 + Vec3::from_array(jitter) * 0.6;
        let ray = Ray::new(Vec3::from_array(o), aim - Vec3::from_array(o));
        let grid = *w.grid();
        let range = Interval::new(0.0, 2.0);
        let p = first_solid(GridWalk::<3>::new(&grid, &ray, range, true).max_steps(u32::MAX), |c| w.get(c));
        let h = w.cast_cell(&ray, range);
        prop_assert_eq!(p.map(|p| (p.cell, p.t)), h.map(|h| (h.cell, h.t)));
    }
}

/// Deterministic xorshift in [0, 1).
fn unit(s: &mut u64) -> f32 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 40) as f32 / (1u64 << 24) as f32
}

/// Like [`check`] for many rays on one (large) volume: the dense volume and
/// the chunked world against the slab test of every solid cell. Returns the
/// number of rays that hit.
fn check_many(cells: &[IVec3], size: Vec3, origin: Vec3, rays: &[Ray], range: Interval) -> usize {
    let grid = Grid::<3>::new(size, origin);
    let dense = VoxelVolume::from_cells(size, origin, cells.iter().copied()).unwrap();
    let chunked = ChunkedVoxels::from_cells(size, origin, cells.iter().copied()).unwrap();
    let mut hits = 0;
    for ray in rays {
        let brute: Vec<(f64, IVec3)> =
            cells.iter().filter_map(|&c| slab(&grid, c, ray, range).map(|t| (t, c))).collect();
        let best = brute.iter().map(|b| b.0).fold(f64::INFINITY, f64::min);
        let scale = 1.0
            + f64::from(ray.origin.abs().max_element())
            + best.abs() * f64::from(ray.dir.abs().max_element());
        let tied: Vec<IVec3> =
            brute.iter().filter(|b| (b.0 - best).abs() <= 1e-9 * scale).map(|b| b.1).collect();
        let d = dense.cast_cell(ray, range);
        let c = chunked.cast_cell(ray, range);
        let ctx = format!("{ray:?} {range:?} size {size} origin {origin}");
        assert_eq!(d, c, "dense vs chunked: {ctx}");
        match d {
            None => assert!(brute.is_empty(), "{ctx}: missed {tied:?} at {best}"),
            Some(h) => {
                hits += 1;
                assert!(
                    tied.contains(&h.cell),
                    "{ctx}: hit {} at {}, brute force {tied:?} at {best}",
                    h.cell,
                    h.t
                );
                assert!((f64::from(h.t) - best).abs() <= 1e-6 * scale, "{ctx}: t {} vs {best}", h.t);
            }
        }
    }
    hits
}

/// Long rays (1000+ cells) through large volumes, against brute force: a
/// sparse random volume crossed lengthwise, a height field grazed from above
/// (long runs of empty bricks and chunks between surface bricks), and the
/// same on a grid with non-unit, unequal cells and an offset origin; rays
/// from random points and from lattice points along lattice directions
/// (exact ties at cell, brick and chunk edges and corners).
#[test]
fn long_rays_through_large_volumes_match_brute_force() {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    // Sparse: 1600 × 40 × 40 cells, 0.1% solid.
    let mut sparse = Vec::new();
    for _ in 0..2500 {
        sparse.push(ivec3(
            (unit(&mut s) * 1600.0) as i32,
            (unit(&mut s) * 40.0) as i32,
            (unit(&mut s) * 40.0) as i32,
        ));
    }
    // Height field: 1200 × 8 columns, heights 2..12.
    let mut terrain = Vec::new();
    for x in 0..1200 {
        for z in 0..8 {
            let h =
                7.0 + 3.0 * (x as f32 * 0.01).sin() * (z as f32 * 0.3).cos() + 2.0 * (x as f32 * 0.07).sin();
            for y in 0..h as i32 {
                terrain.push(ivec3(x, y, z));
            }
        }
    }
    // Along ±x with small slopes: 1000+ cells before a hit or the far end.
    let long = |s: &mut u64, n: usize, len: f32, y: (f32, f32), z: (f32, f32), dy: (f32, f32), dz: f32| {
        (0..n)
            .map(|i| {
                let dir = if i % 2 == 0 { 1.0 } else { -1.0 };
                let o = vec3(
                    if dir > 0.0 { -3.0 } else { len + 3.0 },
                    y.0 + unit(s) * (y.1 - y.0),
                    z.0 + unit(s) * (z.1 - z.0),
                );
                Ray::new(o, vec3(dir, dy.0 + unit(s) * (dy.1 - dy.0), (unit(s) - 0.5) * dz))
            })
            .collect::<Vec<_>>()
    };
    let mut sparse_rays = long(&mut s, 60, 1600.0, (1.0, 39.0), (1.0, 39.0), (-0.015, 0.015), 0.03);
    // Grazing the height field from just above its top, slowly descending.
    let mut terrain_rays = long(&mut s, 60, 1200.0, (9.0, 14.0), (0.5, 7.5), (-0.008, 0.0), 0.004);
    for k in 0..24 {
        // Lattice points and lattice directions: edges and corners exactly.
        let o = vec3((k * 7 % 40) as f32 - 3.0, (k % 9) as f32 + 8.0, (k % 5) as f32);
        let d =
            [vec3(1.0, -1.0, 0.0), vec3(4.0, -1.0, 1.0), vec3(16.0, -1.0, 0.0), vec3(64.0, -1.0, 1.0)][k % 4];
        let r = Ray::new(o, d * if k % 8 < 4 { 1.0 } else { 0.5 });
        sparse_rays.push(r);
        terrain_rays.push(r);
    }
    let range = Interval::new(0.0, 2000.0);
    for (cells, rays) in [(&sparse, &sparse_rays), (&terrain, &terrain_rays)] {
        let hits = check_many(cells, Vec3::ONE, Vec3::ZERO, rays, range);
        assert!(hits > 10 && hits < rays.len(), "{hits} hits");
        // The same on a grid with unequal non-unit cells and an offset
        // origin, the rays mapped to cross about the same cells.
        let (size, origin) = (vec3(0.5, 0.75, 1.25), vec3(-0.25, 0.5, 3.0));
        let mapped: Vec<Ray> =
            rays.iter().map(|r| Ray::new(origin + r.origin * size, r.dir * size)).collect();
        check_many(cells, size, origin, &mapped, range);
    }
}

/// Rays from far away (10^3 to 10^6 cells from the volume), at random and
/// along lattice directions through cell corners: the cast clips them to
/// the volume's box grown by half a cell, so the walk starts just outside
/// it; the first hit must be the brute-force one.
#[test]
fn rays_from_far_away_are_clipped_without_losing_cells() {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut cells = Vec::new();
    for _ in 0..400 {
        cells.push(ivec3(
            (unit(&mut s) * 16.0) as i32,
            (unit(&mut s) * 16.0) as i32,
            (unit(&mut s) * 16.0) as i32,
        ));
    }
    let mut rays = Vec::new();
    for k in 0..200 {
        let dist = [1.0e3f32, 1.0e4, 1.0e5, 1.0e6][k % 4];
        let target = vec3(unit(&mut s), unit(&mut s), unit(&mut s)) * 16.0;
        let dir = (vec3(unit(&mut s), unit(&mut s), unit(&mut s)) - 0.5).normalize();
        if k % 5 == 0 {
            // A lattice direction from a lattice point: corner ties on entry.
            let d = [vec3(1.0, 1.0, 1.0), vec3(-1.0, 2.0, 1.0), vec3(1.0, -1.0, -1.0)][k % 3];
            let o = vec3(8.0, 8.0, 8.0) - d * (dist / 2.0).round();
            rays.push(Ray::new(o, d));
        } else {
            rays.push(Ray::new(target - dir * dist, dir));
        }
    }
    let range = Interval::new(0.0, 3.0e6);
    let hits = check_many(&cells, Vec3::ONE, Vec3::ZERO, &rays, range);
    assert!(hits > 100, "{hits} hits");
    check_many(&cells, vec3(0.5, 0.75, 1.25), vec3(-0.25, 0.5, 3.0), &rays, range);
}
