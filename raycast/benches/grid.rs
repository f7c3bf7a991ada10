//! Grid benchmarks: the exact walk's cost per cell step, voxel casts, and the
//! chunked world's cost per empty chunk crossed. Inputs from fixed seeds.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use raycast::glam::{ivec3, vec3, UVec3, Vec3};
use raycast::grid::{ChunkedVoxels, Grid, GridWalk, VoxelVolume};
use raycast::{Interval, Ray, RayCast};

/// Deterministic xorshift in [0, 1).
fn rng(seed: &mut u64) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    (*seed >> 40) as f32 / (1u64 << 24) as f32
}

fn rays(n: usize, len: f32, seed: u64) -> Vec<Ray> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            let o = vec3(rng(&mut s), rng(&mut s), rng(&mut s)) * 8.0;
            let d = (vec3(rng(&mut s), rng(&mut s), rng(&mut s)) - 0.5).normalize() * len;
            Ray::new(o, d)
        })
        .collect()
}

/// Walks of 64 random segments 1000 cells long; throughput in cell steps.
fn walk_steps(c: &mut Criterion) {
    let grid = Grid::<3>::default();
    let rays = rays(64, 1000.0, 7);
    let steps: usize =
        rays.iter().map(|r| GridWalk::<3>::new(&grid, r, Interval::SEGMENT, true).count()).sum();
    let mut g = c.benchmark_group("grid/walk");
    g.throughput(Throughput::Elements(steps as u64));
    g.bench_function("3d_steps", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for r in &rays {
                for s in GridWalk::<3>::new(&grid, black_box(r), Interval::SEGMENT, true) {
                    n += i64::from(s.cell().x);
                }
            }
            n
        })
    });
    // The same walks consumed by internal iteration (`Iterator::fold`).
    g.bench_function("3d_steps_for_each", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for r in &rays {
                GridWalk::<3>::new(&grid, black_box(r), Interval::SEGMENT, true)
                    .for_each(|s| n += i64::from(s.cell().x));
            }
            n
        })
    });
    // The same walks summed by `fold` (the accumulator by value, not a
    // variable the closure borrows).
    g.bench_function("3d_steps_fold", |b| {
        b.iter(|| {
            rays.iter().fold(0i64, |n, r| {
                GridWalk::<3>::new(&grid, black_box(r), Interval::SEGMENT, true)
                    .fold(n, |n, s| n + i64::from(s.cell().x))
            })
        })
    });
    let grid2 = Grid::<2>::default();
    let steps2: usize = rays
        .iter()
        .map(|r| {
            GridWalk::<2>::new(&grid2, r.origin.truncate(), r.dir.truncate(), Interval::SEGMENT, true).count()
        })
        .sum();
    g.throughput(Throughput::Elements(steps2 as u64));
    g.bench_function("2d_steps", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for r in &rays {
                let d = black_box(r.dir.truncate());
                for s in GridWalk::<2>::new(&grid2, r.origin.truncate(), d, Interval::SEGMENT, true) {
                    n += i64::from(s.cell().x);
                }
            }
            n
        })
    });
    // Lattice diagonals: every step is an exact corner tie (the exact path).
    g.throughput(Throughput::Elements(16 * 1001));
    g.bench_function("3d_lattice_diagonal_steps", |b| {
        b.iter(|| {
            let mut n = 0;
            for i in 0..16 {
                let o = vec3(i as f32, 0.0, -(i as f32));
                n += GridWalk::<3>::segment(&grid, black_box(o), o + vec3(1000.0, -1000.0, 1000.0), true)
                    .count();
            }
            n
        })
    });
    g.finish();
}

/// Dense 256³ volume with 5% random solid cells, and a 256² height field
/// (dense and chunked): first hit of 4096 rays.
fn dense_cast(c: &mut Criterion) {
    let mut s = 3u64;
    let mut vol = VoxelVolume::try_new(Vec3::ONE, Vec3::ZERO, ivec3(0, 0, 0), UVec3::splat(256)).unwrap();
    for _ in 0..(256 * 256 * 256 / 20) {
        let c = (vec3(rng(&mut s), rng(&mut s), rng(&mut s)) * 256.0).as_ivec3();
        vol.set(c, true);
    }
    let rays: Vec<Ray> = rays(4096, 1.0, 9).into_iter().map(|r| Ray::new(r.origin * 32.0, r.dir)).collect();
    let mut g = c.benchmark_group("grid/dense");
    g.throughput(Throughput::Elements(rays.len() as u64));
    g.bench_function("cast_5pct_256", |b| {
        b.iter(|| rays.iter().filter(|r| vol.cast(black_box(r), Interval::FORWARD).is_some()).count())
    });
    // A height field (as in the peer comparison) cast from above: long runs
    // of empty bricks between the surface bricks.
    let mut cells = Vec::new();
    for x in 0..256 {
        for z in 0..256 {
            let (fx, fz) = (x as f32, z as f32);
            let h = 40.0 + 12.0 * (fx * 0.05).sin() * (fz * 0.07).cos() + 6.0 * (fx * 0.13 + fz * 0.11).sin();
            cells.extend((0..h as i32).map(|y| ivec3(x, y, z)));
        }
    }
    let terrain = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, cells.iter().copied()).unwrap();
    let world = ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, cells).unwrap();
    let mut s = 11u64;
    let down: Vec<Ray> = (0..4096)
        .map(|_| {
            let o = vec3(rng(&mut s) * 256.0, 70.0 + rng(&mut s) * 50.0, rng(&mut s) * 256.0);
            let d = vec3(rng(&mut s) * 2.0 - 1.0, -0.05 - rng(&mut s) * 0.75, rng(&mut s) * 2.0 - 1.0);
            Ray::new(o, d.normalize())
        })
        .collect();
    let range = Interval::new(0.0, 1000.0);
    g.bench_function("cast_terrain_256", |b| {
        b.iter(|| down.iter().filter(|r| terrain.cast(black_box(r), range).is_some()).count())
    });
    g.finish();
    let mut g = c.benchmark_group("grid/chunked");
    g.throughput(Throughput::Elements(down.len() as u64));
    g.bench_function("cast_terrain_256", |b| {
        b.iter(|| down.iter().filter(|r| world.cast(black_box(r), range).is_some()).count())
    });
    g.finish();
}

/// Rays across an empty chunked world (solid cells only at both ends, 4096
/// cells apart): each ray crosses about 256 empty chunks; throughput in chunks.
fn chunked_empty(c: &mut Criterion) {
    let mut w = ChunkedVoxels::new(Vec3::ONE, Vec3::ZERO);
    w.set(ivec3(0, 0, 0), true);
    w.set(ivec3(4100, 40, 40), true);
    let mut s = 5u64;
    let rays: Vec<Ray> = (0..256)
        .map(|_| {
            let o = vec3(8.0, 8.0 + rng(&mut s) * 40.0, 8.0 + rng(&mut s) * 40.0);
            Ray::new(o, vec3(1.0, (rng(&mut s) - 0.5) * 0.02, (rng(&mut s) - 0.5) * 0.02))
        })
        .collect();
    let chunks = 4096 / 16;
    let mut g = c.benchmark_group("grid/chunked");
    g.throughput(Throughput::Elements((rays.len() * chunks) as u64));
    g.bench_function("empty_chunks_crossed", |b| {
        b.iter(|| rays.iter().filter(|r| w.hits(black_box(r), Interval::new(0.0, 4096.0))).count())
    });
    g.finish();
}

criterion_group!(benches, walk_steps, dense_cast, chunked_empty);
criterion_main!(benches);
