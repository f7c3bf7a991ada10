//! Voxel ray casts: raycast's `VoxelVolume` / `ChunkedVoxels` against parry3d
//! 0.31's `Voxels` on the same volumes and rays, in the same process.
//! Answers (hit or miss, first-hit t) are compared before timing. Each
//! ratio is printed twice: as the ratio of the libraries' medians over the
//! rounds, and ("paired") as the median of each round's own ratio.
//!
//! Run: `cargo run --release --bin grid` in `compare/`.
//!
//! `GRID_PROFILE=<case>-<dense|chunked>` (case `sparse` or `terrain`) runs
//! only raycast's casts of that case, once, for instruction counts under
//! `valgrind --tool=callgrind` (no parry, no timing).
use parry3d::math::{IVector, Vector};
use parry3d::query::{Ray as PRay, RayCast as PRayCast};
use parry3d::shape::Voxels;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raycast::glam::{IVec3, UVec3, Vec3};
use raycast::grid::{ChunkedVoxels, VoxelVolume};
use raycast::{Interval, Ray, RayCast};
use raycast_compare::{median_secs, mrays};

const REPS: usize = 9;
/// Rays per case. Each round times the three libraries back to back, so a
/// pass starts with the caches full of the previous library's data: with
/// 2^14 rays (a 5 ms pass for raycast) re-reading the 2 MiB sparse volume
/// from memory was a large share of raycast's pass (9.0–10.1× parry there,
/// 13.5–14.6× with 2^17 rays on the same machine); 2^17 rays amortise it
/// for every library alike.
const RAYS: usize = 1 << 17;

struct Case {
    name: &'static str,
    cells: Vec<IVec3>,
    rays: Vec<Ray>,
}

fn sparse(rng: &mut Pcg64) -> Case {
    let n = 256usize;
    let mut seen = std::collections::HashSet::new();
    while seen.len() < n * n * n / 20 {
        seen.insert(IVec3::new(rng.random_range(0..256), rng.random_range(0..256), rng.random_range(0..256)));
    }
    let cells: Vec<IVec3> = seen.into_iter().collect();
    let rays = (0..RAYS)
        .map(|_| {
            let o = Vec3::new(
                rng.random_range(0.0..256.0),
                rng.random_range(0.0..256.0),
                rng.random_range(0.0..256.0),
            );
            let d = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            Ray::new(o, d.normalize_or(Vec3::X))
        })
        .collect();
    Case { name: "256^3, 5% random voxels", cells, rays }
}

fn terrain(rng: &mut Pcg64) -> Case {
    let mut cells = Vec::new();
    for x in 0..256 {
        for z in 0..256 {
            let (fx, fz) = (x as f32, z as f32);
            let h = 40.0 + 12.0 * (fx * 0.05).sin() * (fz * 0.07).cos() + 6.0 * (fx * 0.13 + fz * 0.11).sin();
            for y in 0..h as i32 {
                cells.push(IVec3::new(x, y, z));
            }
        }
    }
    let rays = (0..RAYS)
        .map(|_| {
            let o = Vec3::new(
                rng.random_range(0.0..256.0),
                rng.random_range(70.0..120.0),
                rng.random_range(0.0..256.0),
            );
            let d = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-0.8..-0.05),
                rng.random_range(-1.0..1.0),
            );
            Ray::new(o, d.normalize())
        })
        .collect();
    Case { name: "terrain height field 256x256", cells, rays }
}

fn main() {
    let mut rng = Pcg64::seed_from_u64(42);
    let cases = [sparse(&mut rng), terrain(&mut rng)];
    if let Ok(which) = std::env::var("GRID_PROFILE") {
        profile(&cases, &which);
        return;
    }
    for case in cases {
        let dense = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, case.cells.iter().copied()).unwrap();
        let chunked = ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, case.cells.iter().copied()).unwrap();
        let keys: Vec<IVector> = case.cells.iter().map(|c| IVector::new(c.x, c.y, c.z)).collect();
        let parry = Voxels::new(Vector::splat(1.0), &keys);
        let pr: Vec<PRay> = case
            .rays
            .iter()
            .map(|r| {
                PRay::new(
                    Vector::new(r.origin.x, r.origin.y, r.origin.z),
                    Vector::new(r.dir.x, r.dir.y, r.dir.z),
                )
            })
            .collect();
        let max_t = 1000.0f32;
        let range = Interval::new(0.0, max_t);
        // Answers first.
        let (mut agree, mut differ, mut hits) = (0, 0, 0);
        for (r, p) in case.rays.iter().zip(&pr) {
            let ours = dense.cast(r, range).map(|h| h.t);
            let other = parry.cast_local_ray(p, max_t, true);
            assert_eq!(ours, chunked.cast(r, range).map(|h| h.t), "dense vs chunked {r:?}");
            hits += usize::from(ours.is_some());
            match (ours, other) {
                (None, None) => agree += 1,
                (Some(a), Some(b)) if (a - b).abs() <= 1e-4 * (1.0 + a) => agree += 1,
                _ => {
                    differ += 1;
                    if differ <= 3 {
                        eprintln!("  differ: {r:?} ours {ours:?} parry {other:?}");
                    }
                }
            }
        }
        println!(
            "{}: {} voxels, {} rays, {} hit; answers agree {agree}, differ {differ}",
            case.name,
            case.cells.len(),
            case.rays.len(),
            hits
        );
        let n = case.rays.len();
        // Interleaved: each round times all three back to back, so that load
        // from other processes on the machine hits them alike; medians of
        // the rounds.
        let (mut td, mut tc, mut tp) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..REPS {
            td.push(median_secs(1, || {
                std::hint::black_box(
                    case.rays.iter().filter(|r| dense.cast(std::hint::black_box(r), range).is_some()).count(),
                );
            }));
            tc.push(median_secs(1, || {
                std::hint::black_box(
                    case.rays
                        .iter()
                        .filter(|r| chunked.cast(std::hint::black_box(r), range).is_some())
                        .count(),
                );
            }));
            tp.push(median_secs(1, || {
                std::hint::black_box(
                    pr.iter()
                        .filter(|r| parry.cast_local_ray(std::hint::black_box(r), max_t, true).is_some())
                        .count(),
                );
            }));
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        // Also the median over rounds of each round's own ratio: the two
        // libraries of a round share that round's load from the host.
        let paired = |ours: &[f64]| median(ours.iter().zip(&tp).map(|(o, p)| p / o).collect());
        let (pd, pc) = (paired(&td), paired(&tc));
        let (t_dense, t_chunked, t_parry) = (median(td), median(tc), median(tp));
        let (md, mc, mp) = (mrays(n, t_dense), mrays(n, t_chunked), mrays(n, t_parry));
        println!("  raycast VoxelVolume   {md:8.2} Mrays/s  ({:.1}x parry; paired {pd:.1}x)", md / mp);
        println!("  raycast ChunkedVoxels {mc:8.2} Mrays/s  ({:.1}x parry; paired {pc:.1}x)", mc / mp);
        println!("  parry3d Voxels        {mp:8.2} Mrays/s");
    }
    let _ = UVec3::ZERO;
}

/// One pass of raycast's casts over one case (see the module docs), and the
/// number of hits, so that the work cannot be optimised away.
fn profile(cases: &[Case], which: &str) {
    let (case, kind) = which.split_once('-').expect("GRID_PROFILE=<sparse|terrain>-<dense|chunked>");
    let case = &cases[usize::from(case == "terrain")];
    let range = Interval::new(0.0, 1000.0);
    let hits = if kind == "chunked" {
        let chunked = ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, case.cells.iter().copied()).unwrap();
        cast_all(&chunked, &case.rays, range)
    } else {
        let dense = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, case.cells.iter().copied()).unwrap();
        cast_all(&dense, &case.rays, range)
    };
    println!("{which}: {} rays, {hits} hit", case.rays.len());
}

/// The casts alone, out of line so that callgrind can count them by name
/// (`--toggle-collect='grid::cast_all*'`).
#[inline(never)]
fn cast_all(shape: &impl RayCast, rays: &[Ray], range: Interval) -> usize {
    rays.iter().filter(|r| shape.cast(std::hint::black_box(r), range).is_some()).count()
}
