//! raycast vs obvhs, parry3d and the `bvh` crate on triangle meshes, same
//! process, one thread.
//!
//! Meshes: the Stanford bunny (`assets/meshes/bunny.obj`, 69,451 triangles, as
//! `raycast::mesh::load` reads it) and the bunny subdivided twice by midpoint
//! subdivision (1 → 4 triangles, 1,111,216 triangles; the surface is the same,
//! the triangles smaller). Ray sets, the same rays for every library:
//! * `camera`: a 1024 × 1024 pinhole camera looking at the mesh from outside
//!   (unit directions; many rays miss, as in a render);
//! * `sphere`: 2²⁰ incoherent rays from random points on a sphere of radius
//!   2 × the bounding-box diagonal toward random points inside the box.
//!
//! Libraries, each through its fastest documented path:
//! * raycast `TriMesh`: `cast` (closest, full hit: point, normal, triangle,
//!   uv) and `hits` (any hit), watertight kernel, SAH BVH;
//! * obvhs 0.4: a CWBVH (compressed 8-wide BVH, `BvhBuildParams::medium_build`)
//!   over `RtTriangle`s laid out in leaf order (its examples' fast path),
//!   `ray_traverse` (closest) and `ray_traverse_miss` (any);
//! * parry3d 0.31 `TriMesh`: `cast_local_ray_and_get_normal(.., solid =
//!   false)` and `intersects_local_ray`;
//! * the `bvh` crate 0.13: `Bvh::build`, then `nearest_traverse_iterator`
//!   (leaves by box entry distance; stopped once a box starts beyond the best
//!   hit) for closest and `traverse_iterator` for any. Its own triangle test
//!   culls back faces, so both use a plain two-sided Möller–Trumbore
//!   (`raycast_compare::meshes::moller_trumbore`).
//!
//! Every BVH build runs on one thread (`RAYON_NUM_THREADS=1` is set before
//! anything starts); build time is the median of 3 builds from the same
//! vertex and index arrays.
//!
//! First the answers are compared ray by ray with raycast's: hit or miss, and
//! the closest `t` (in units of the ray's `dir`) within `T_TOL` relative;
//! disagreements are counted and printed, the first one of each peer with an
//! `f64` brute-force answer (every triangle, no BVH) as the arbiter. The peers'
//! `f32` Möller–Trumbore tests are not watertight: a ray passing within ~10⁻⁵
//! (in barycentric terms) of an edge of these small triangles can slip
//! between two triangles and report a farther surface. Then every library's closest
//! and any-hit passes over a whole ray set are timed, the libraries taking
//! turns in each of `--reps` rounds (default 5, the first round dropped as a
//! warm-up); the table gives median Mrays/s and the ratios raycast / peer.
//! Passes are timed in CPU time of the measuring thread
//! (`raycast_compare::cpu_secs`, steady on a shared machine), builds in CPU
//! time of the process (they may run on rayon's one-thread pool).
//!
//! Run: `cd compare && cargo run --release --bin mesh` (`-- --quick` for a
//! smoke run: 256² camera rays, 2¹⁶ sphere rays, the bunny only, 2 rounds).
//! `MESH_PROFILE=<camera|sphere>-<closest|any>` runs raycast alone on the
//! bunny, for callgrind (see `profile`).

use glam::Vec3;
use glam_obvhs::Vec3A;
use obvhs::cwbvh::builder::build_cwbvh_from_tris;
use obvhs::cwbvh::CwBvh;
use obvhs::rt_triangle::RtTriangle;
use parry3d::query::RayCast as ParryRayCast;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use raycast::{Interval, Ray, RayCast, TriMesh};
use raycast_compare::meshes::{self, moller_trumbore};
use raycast_compare::mrays;
use raycast_compare::prims::pv;
use std::hint::black_box;
use std::time::Duration;

/// Closest-hit `t` agreement, relative to raycast's `t`.
const T_TOL: f32 = 1e-4;
/// Disagreements judged by the `f64` brute force, per peer and ray set.
const ARBITRATED: usize = 100;
/// Builds per library; the median is reported.
const BUILD_REPS: usize = 3;

/// A library answering closest and any hit for ray `i` of the set it was
/// given (each holds the rays in its own type, converted before timing).
trait Lib {
    fn name(&self) -> &'static str;
    /// The closest hit's `t`, in units of the ray's `dir`.
    fn closest(&self, i: usize) -> Option<f32>;
    fn any(&self, i: usize) -> bool;
}

struct Ours<'a> {
    mesh: &'a TriMesh,
    rays: &'a [Ray],
}

impl Lib for Ours<'_> {
    fn name(&self) -> &'static str {
        "raycast"
    }
    #[inline]
    fn closest(&self, i: usize) -> Option<f32> {
        self.mesh.cast(&self.rays[i], Interval::FORWARD).map(|h| h.t)
    }
    #[inline]
    fn any(&self, i: usize) -> bool {
        self.mesh.hits(&self.rays[i], Interval::FORWARD)
    }
}

/// obvhs: the CWBVH and its triangles in leaf order.
struct ObvhsMesh {
    bvh: CwBvh,
    tris: Vec<RtTriangle>,
}

fn obvhs_build(vertices: &[Vec3], triangles: &[[u32; 3]]) -> ObvhsMesh {
    let a = |v: Vec3| Vec3A::new(v.x, v.y, v.z);
    let tris: Vec<obvhs::triangle::Triangle> = triangles
        .iter()
        .map(|t| obvhs::triangle::Triangle {
            v0: a(vertices[t[0] as usize]),
            v1: a(vertices[t[1] as usize]),
            v2: a(vertices[t[2] as usize]),
        })
        .collect();
    let bvh = build_cwbvh_from_tris(&tris, obvhs::BvhBuildParams::medium_build(), &mut Duration::default());
    let tris = bvh.primitive_indices.iter().map(|&i| RtTriangle::from(&tris[i as usize])).collect();
    ObvhsMesh { bvh, tris }
}

struct Obvhs<'a> {
    mesh: &'a ObvhsMesh,
    rays: Vec<obvhs::ray::Ray>,
}

impl<'a> Obvhs<'a> {
    fn new(mesh: &'a ObvhsMesh, rays: &[Ray]) -> Self {
        let a = |v: Vec3| Vec3A::new(v.x, v.y, v.z);
        let rays =
            rays.iter().map(|r| obvhs::ray::Ray::new(a(r.origin), a(r.dir), 0.0, f32::INFINITY)).collect();
        Self { mesh, rays }
    }
}

impl Lib for Obvhs<'_> {
    fn name(&self) -> &'static str {
        "obvhs"
    }
    #[inline]
    fn closest(&self, i: usize) -> Option<f32> {
        let mut hit = obvhs::ray::RayHit::none();
        let tris = &self.mesh.tris;
        self.mesh.bvh.ray_traverse(self.rays[i], &mut hit, |r, id| tris[id].intersect(r)).then_some(hit.t)
    }
    #[inline]
    fn any(&self, i: usize) -> bool {
        let tris = &self.mesh.tris;
        !self.mesh.bvh.ray_traverse_miss(self.rays[i], |r, id| tris[id].intersect(r))
    }
}

fn parry_build(vertices: &[Vec3], triangles: &[[u32; 3]]) -> parry3d::shape::TriMesh {
    parry3d::shape::TriMesh::new(vertices.iter().map(|&v| pv(v)).collect(), triangles.to_vec())
        .expect("parry3d accepts the mesh")
}

struct Parry<'a> {
    mesh: &'a parry3d::shape::TriMesh,
    rays: Vec<parry3d::query::Ray>,
}

impl Lib for Parry<'_> {
    fn name(&self) -> &'static str {
        "parry3d"
    }
    #[inline]
    fn closest(&self, i: usize) -> Option<f32> {
        self.mesh.cast_local_ray_and_get_normal(&self.rays[i], f32::MAX, false).map(|h| h.time_of_impact)
    }
    #[inline]
    fn any(&self, i: usize) -> bool {
        self.mesh.intersects_local_ray(&self.rays[i], f32::MAX)
    }
}

/// A triangle for the `bvh` crate: corners, box, and the node index it keeps.
struct BvhTri {
    corners: [Vec3; 3],
    aabb: bvh::aabb::Aabb<f32, 3>,
    node: usize,
}

impl bvh::aabb::Bounded<f32, 3> for BvhTri {
    fn aabb(&self) -> bvh::aabb::Aabb<f32, 3> {
        self.aabb
    }
}

impl bvh::bounding_hierarchy::BHShape<f32, 3> for BvhTri {
    fn set_bh_node_index(&mut self, i: usize) {
        self.node = i;
    }
    fn bh_node_index(&self) -> usize {
        self.node
    }
}

struct BvhMesh {
    bvh: bvh::bvh::Bvh<f32, 3>,
    tris: Vec<BvhTri>,
}

fn bvh_build(vertices: &[Vec3], triangles: &[[u32; 3]]) -> BvhMesh {
    let p = |v: Vec3| nalgebra::Point3::new(v.x, v.y, v.z);
    let mut tris: Vec<BvhTri> = triangles
        .iter()
        .map(|t| {
            let corners = t.map(|i| vertices[i as usize]);
            let (lo, hi) =
                (corners[0].min(corners[1]).min(corners[2]), corners[0].max(corners[1]).max(corners[2]));
            BvhTri { corners, aabb: bvh::aabb::Aabb::with_bounds(p(lo), p(hi)), node: 0 }
        })
        .collect();
    let bvh = bvh::bvh::Bvh::build(&mut tris);
    BvhMesh { bvh, tris }
}

struct BvhCrate<'a> {
    mesh: &'a BvhMesh,
    /// The crate's rays (it normalises the direction: its `t` is a distance).
    rays: Vec<bvh::ray::Ray<f32, 3>>,
    /// Origin, unit direction and `|dir|`, for the triangle test and for
    /// bringing `t` back to units of `dir`.
    glam: Vec<(Vec3, Vec3, f32)>,
}

impl<'a> BvhCrate<'a> {
    fn new(mesh: &'a BvhMesh, rays: &[Ray]) -> Self {
        let bvh_rays = rays
            .iter()
            .map(|r| {
                bvh::ray::Ray::new(
                    nalgebra::Point3::new(r.origin.x, r.origin.y, r.origin.z),
                    nalgebra::Vector3::new(r.dir.x, r.dir.y, r.dir.z),
                )
            })
            .collect();
        let glam = rays.iter().map(|r| (r.origin, r.dir.normalize(), r.dir.length())).collect();
        Self { mesh, rays: bvh_rays, glam }
    }
}

impl Lib for BvhCrate<'_> {
    fn name(&self) -> &'static str {
        "bvh"
    }
    #[inline]
    fn closest(&self, i: usize) -> Option<f32> {
        let (r, (o, d, len)) = (&self.rays[i], self.glam[i]);
        let mut best = f32::INFINITY;
        for tri in self.mesh.bvh.nearest_traverse_iterator(r, &self.mesh.tris) {
            // Leaves come by box entry distance: none after this one can be nearer.
            if best < f32::INFINITY
                && r.intersection_slice_for_aabb(&tri.aabb).is_none_or(|(entry, _)| entry > best)
            {
                break;
            }
            if let Some(t) = moller_trumbore(o, d, &tri.corners, best) {
                best = t;
            }
        }
        (best < f32::INFINITY).then_some(best / len)
    }
    #[inline]
    fn any(&self, i: usize) -> bool {
        let (r, (o, d, _)) = (&self.rays[i], self.glam[i]);
        self.mesh
            .bvh
            .traverse_iterator(r, &self.mesh.tris)
            .any(|tri| moller_trumbore(o, d, &tri.corners, f32::INFINITY).is_some())
    }
}

/// One pass of closest hits over all rays; returns the hit count.
#[inline(never)]
fn pass_closest<L: Lib>(lib: &L, n: usize) -> usize {
    (0..n).filter(|&i| black_box(lib.closest(black_box(i))).is_some()).count()
}

/// One pass of any-hit queries over all rays; returns the hit count.
#[inline(never)]
fn pass_any<L: Lib>(lib: &L, n: usize) -> usize {
    (0..n).filter(|&i| black_box(lib.any(black_box(i)))).count()
}

/// CPU seconds of one pass on this thread (see `raycast_compare::cpu_secs`).
fn secs(f: impl FnOnce() -> usize) -> f64 {
    raycast_compare::time_secs(|| {
        black_box(f());
    })
}

/// Median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median build time in ms, and the last build. Process CPU time
/// (`raycast_compare::process_cpu_secs`), not the thread's: a build may hand
/// its work to rayon's pool (one thread here) while this thread waits.
fn timed_build<T>(mut build: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..BUILD_REPS {
        let t = raycast_compare::process_cpu_secs();
        let built = black_box(build());
        times.push((raycast_compare::process_cpu_secs() - t) * 1e3);
        last = Some(built);
    }
    (median(&mut times), last.expect("BUILD_REPS > 0"))
}

struct Row {
    mesh: String,
    set: &'static str,
    lib: &'static str,
    closest: f64,
    any: f64,
    build_ms: f64,
}

struct Options {
    quick: bool,
    reps: usize,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let reps = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--reps takes a number"))
        .unwrap_or(if quick { 2 } else { 5 });
    Options { quick, reps: reps.max(1) }
}

fn main() {
    // Before anything touches rayon: every build on one thread, like the queries.
    std::env::set_var("RAYON_NUM_THREADS", "1");
    let opts = options();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/meshes/bunny.obj");
    let bunny = raycast::mesh::load(path).unwrap_or_else(|e| panic!("{e}"));
    if let Ok(which) = std::env::var("MESH_PROFILE") {
        profile(&bunny, &which);
        return;
    }
    let (v0, t0) = (bunny.vertices().to_vec(), bunny.triangles().to_vec());
    let mut meshes = vec![("bunny".to_string(), v0.clone(), t0.clone())];
    if !opts.quick {
        let (v1, t1) = meshes::subdivide(&v0, &t0);
        let (v2, t2) = meshes::subdivide(&v1, &t1);
        meshes.push(("bunny/16".to_string(), v2, t2));
    }
    let (camera_width, sphere_n) = if opts.quick { (256, 1 << 16) } else { (1024, 1 << 20) };

    let mut rows = Vec::new();
    for (name, vertices, triangles) in &meshes {
        let label = format!("{name} ({} tris)", triangles.len());
        println!("== {label}");
        let (ours_ms, ours_mesh) = timed_build(|| TriMesh::new(vertices.clone(), triangles.clone()));
        let (obvhs_ms, obvhs_mesh) = timed_build(|| obvhs_build(vertices, triangles));
        let (parry_ms, parry_mesh) = timed_build(|| parry_build(vertices, triangles));
        let (bvh_ms, bvh_mesh) = timed_build(|| bvh_build(vertices, triangles));
        println!(
            "raycast TriMesh: {:.1} bytes per triangle ({:.1} MB)",
            ours_mesh.memory_bytes() as f64 / triangles.len() as f64,
            ours_mesh.memory_bytes() as f64 / 1e6
        );
        let (lo, hi) = meshes::bounds(vertices, triangles);
        let mut rng = Pcg64::seed_from_u64(0x5eed_b0a7);
        let sets: [(&'static str, Vec<Ray>); 2] = [
            ("camera", meshes::camera_rays(lo, hi, camera_width)),
            ("sphere", meshes::sphere_rays(lo, hi, sphere_n, &mut rng)),
        ];
        for (set, rays) in &sets {
            let ours = Ours { mesh: &ours_mesh, rays };
            let obvhs = Obvhs::new(&obvhs_mesh, rays);
            let parry = Parry {
                mesh: &parry_mesh,
                rays: rays.iter().map(raycast_compare::prims::parry_ray).collect(),
            };
            let bvh = BvhCrate::new(&bvh_mesh, rays);
            check_answers(&ours, &[&obvhs as &dyn Lib, &parry, &bvh], rays, set, (vertices, triangles));
            let batch = ours_mesh.cast_batch(rays, Interval::FORWARD);
            assert!(rays.iter().zip(&batch).all(|(r, b)| *b == ours_mesh.cast(r, Interval::FORWARD)));
            let [c0, a0, c1, a1, c2, a2, c3, a3, c4, a4] =
                time_rounds(&ours, &obvhs, &parry, &bvh, rays.len(), opts.reps);
            for (lib, closest, any, build_ms) in [
                ("raycast", c0, a0, ours_ms),
                ("raycast batch", c4, a4, ours_ms),
                ("obvhs", c1, a1, obvhs_ms),
                ("parry3d", c2, a2, parry_ms),
                ("bvh", c3, a3, bvh_ms),
            ] {
                rows.push(Row { mesh: label.clone(), set, lib, closest, any, build_ms });
            }
        }
    }

    println!();
    println!(
        "one thread; camera = {camera_width}² pinhole rays, sphere = {sphere_n} incoherent rays; median of {} timed rounds",
        opts.reps
    );
    println!("ratios > 1 mean raycast is better: Mrays/s raycast / peer, build time peer / raycast");
    println!("\"raycast batch\" = `TriMesh::cast_batch`/`hits_batch` on one thread (rays interleaved); its ratios are in brackets");
    println!("| mesh                      | rays   | library       | closest Mrays/s | any Mrays/s | build ms | closest ratio | any ratio | build ratio |");
    println!("|---------------------------|--------|---------------|-----------------|-------------|----------|---------------|-----------|-------------|");
    for chunk in rows.chunks(5) {
        let (ours, batch) = (&chunk[0], &chunk[1]);
        for r in chunk {
            let ratio = |a: f64, b: f64, a2: f64| {
                if r.lib.starts_with("raycast") {
                    "—".to_string()
                } else {
                    format!("{:.2}x [{:.2}x]", a / b, a2 / b)
                }
            };
            println!(
                "| {:<25} | {:<6} | {:<13} | {:>15.2} | {:>11.2} | {:>8.1} | {:>13} | {:>9} | {:>11} |",
                r.mesh,
                r.set,
                r.lib,
                r.closest,
                r.any,
                r.build_ms,
                ratio(ours.closest, r.closest, batch.closest),
                ratio(ours.any, r.any, batch.any),
                if r.lib.starts_with("raycast") {
                    "—".to_string()
                } else {
                    format!("{:.2}x", r.build_ms / ours.build_ms)
                },
            );
        }
    }
}

/// `MESH_PROFILE=<camera|sphere>-<closest|any>`: raycast alone on the
/// bunny, one pass of 2^16 rays of the set (sphere) or the 256² camera, for
/// callgrind: `--toggle-collect='mesh::profile_pass*'`.
fn profile(bunny: &TriMesh, which: &str) {
    let (set, kind) = which.split_once('-').expect("MESH_PROFILE=<camera|sphere>-<closest|any>");
    let (lo, hi) = meshes::bounds(bunny.vertices(), bunny.triangles());
    let mut rng = Pcg64::seed_from_u64(0x5eed_b0a7);
    let rays = if set == "camera" {
        meshes::camera_rays(lo, hi, 256)
    } else {
        meshes::sphere_rays(lo, hi, 1 << 16, &mut rng)
    };
    let hits = profile_pass(bunny, &rays, kind == "any");
    println!("{which}: {} rays, {hits} hit", rays.len());
    // `MESH_PROFILE_REPS=n`: also time n passes (CPU time), median ns per ray.
    if let Some(reps) = std::env::var("MESH_PROFILE_REPS").ok().and_then(|n| n.parse::<usize>().ok()) {
        let mut ns: Vec<f64> = (0..reps.max(1))
            .map(|_| {
                let t = raycast_compare::cpu_secs();
                black_box(profile_pass(bunny, &rays, kind == "any"));
                (raycast_compare::cpu_secs() - t) * 1e9 / rays.len() as f64
            })
            .collect();
        println!("{which}: median {:.1} ns per ray over {} passes", median(&mut ns), ns.len());
    }
}

/// The queries alone, out of line so that callgrind can count them by name.
#[inline(never)]
fn profile_pass(mesh: &TriMesh, rays: &[Ray], any: bool) -> usize {
    if any {
        rays.iter().filter(|r| mesh.hits(black_box(r), Interval::FORWARD)).count()
    } else {
        rays.iter().filter(|r| mesh.cast(black_box(r), Interval::FORWARD).is_some()).count()
    }
}

/// Compares every peer's closest and any-hit answers with raycast's and
/// prints the disagreements; also checks raycast's `hits` against its `cast`.
/// The first disagreement of each peer is shown with a brute-force `f64`
/// answer as the arbiter.
fn check_answers(ours: &Ours, peers: &[&dyn Lib], rays: &[Ray], set: &str, mesh: (&[Vec3], &[[u32; 3]])) {
    let n = rays.len();
    let reference: Vec<Option<f32>> = (0..n).map(|i| ours.closest(i)).collect();
    let hits = reference.iter().filter(|h| h.is_some()).count();
    let self_any = (0..n).filter(|&i| ours.any(i) != reference[i].is_some()).count();
    println!(
        "{set}: {n} rays, raycast hits {hits} ({:.1}%); raycast hits() disagrees with cast() on {self_any}",
        100.0 * hits as f64 / n as f64
    );
    for peer in peers {
        let (mut hit_miss, mut t_off, mut any_off, mut worst) = (0usize, 0usize, 0usize, 0.0f32);
        let mut differing = Vec::new();
        for (i, ours_t) in reference.iter().enumerate() {
            let peer_t = peer.closest(i);
            let differs = match (ours_t, peer_t) {
                (Some(a), Some(b)) => {
                    let rel = (a - b).abs() / a.abs().max(f32::MIN_POSITIVE);
                    worst = worst.max(rel);
                    t_off += usize::from(rel > T_TOL);
                    rel > T_TOL
                }
                (None, None) => false,
                _ => {
                    hit_miss += 1;
                    true
                }
            };
            if differs {
                differing.push((i, peer_t));
            }
            any_off += usize::from(peer.any(i) != ours_t.is_some());
        }
        println!(
            "  {:<8} vs raycast: hit/miss differ {hit_miss}, closest t off by > {T_TOL:e} relative {t_off} \
             (worst {worst:.1e}), any-hit differs {any_off}",
            peer.name()
        );
        // Who is right where they differ: the f64 brute force decides (for
        // the first `ARBITRATED` rays; each costs a pass over every triangle).
        let judged: Vec<Option<(f64, usize)>> =
            differing.iter().take(ARBITRATED).map(|&(i, _)| brute_force(&rays[i], mesh)).collect();
        let ours_right = differing
            .iter()
            .zip(&judged)
            .filter(|((i, _), bf)| match (reference[*i], bf) {
                (Some(a), Some((b, _))) => (f64::from(a) - b).abs() <= f64::from(T_TOL) * b.abs(),
                (None, None) => true,
                _ => false,
            })
            .count();
        if !judged.is_empty() {
            println!("    f64 brute force on {} of them: raycast right on {ours_right}", judged.len());
        }
        if let Some(&(i, peer_t)) = differing.first() {
            println!(
                "    first: ray {i} {:?}: raycast t = {:?}, {} t = {peer_t:?}, f64 brute force (t, triangle) = {:?}",
                rays[i],
                reference[i],
                peer.name(),
                judged[0]
            );
        }
    }
}

/// The closest hit over every triangle by two-sided Möller–Trumbore in `f64`
/// (an arbiter independent of every library: no BVH, ~10⁻¹⁵ relative
/// error, far below the margins that `f32` tests lose): `(t, triangle)`.
fn brute_force(ray: &Ray, (vertices, triangles): (&[Vec3], &[[u32; 3]])) -> Option<(f64, usize)> {
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    triangles
        .iter()
        .enumerate()
        .filter_map(|(k, t)| {
            let [a, b, c] = t.map(|i| vertices[i as usize].as_dvec3());
            let (e1, e2) = (b - a, c - a);
            let p = d.cross(e2);
            let det = e1.dot(p);
            let s = o - a;
            let (u, q) = (s.dot(p) / det, s.cross(e1));
            let (v, t) = (d.dot(q) / det, e2.dot(q) / det);
            (det != 0.0 && u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t >= 0.0).then_some((t, k))
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
}

/// Times closest and any passes of the four libraries, taking turns in every
/// round; returns median Mrays/s as [closest, any] per library in order.
fn time_rounds(
    ours: &Ours,
    obvhs: &Obvhs,
    parry: &Parry,
    bvh: &BvhCrate,
    n: usize,
    reps: usize,
) -> [f64; 10] {
    let mut times: [Vec<f64>; 10] = Default::default();
    // The batches' answer buffers, reused from round to round as a lidar
    // or a renderer would from frame to frame.
    let (mut cast_out, mut hits_out) = (Vec::new(), Vec::new());
    let one = raycast::scene::rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    for round in 0..=reps {
        let samples = [
            secs(|| pass_closest(ours, n)),
            secs(|| pass_any(ours, n)),
            secs(|| pass_closest(obvhs, n)),
            secs(|| pass_any(obvhs, n)),
            secs(|| pass_closest(parry, n)),
            secs(|| pass_any(parry, n)),
            secs(|| pass_closest(bvh, n)),
            secs(|| pass_any(bvh, n)),
            // The batches run on a one-thread pool, timed in that thread's
            // CPU time from inside the pool.
            one.install(|| {
                secs(|| {
                    ours.mesh.cast_batch_into(ours.rays, Interval::FORWARD, &mut cast_out);
                    cast_out.iter().flatten().count()
                })
            }),
            one.install(|| {
                secs(|| {
                    ours.mesh.hits_batch_into(ours.rays, Interval::FORWARD, &mut hits_out);
                    hits_out.iter().filter(|&&h| h).count()
                })
            }),
        ];
        if round > 0 {
            // Round 0 warms caches and branch predictors.
            for (v, s) in times.iter_mut().zip(samples) {
                v.push(s);
            }
        }
    }
    times.map(|mut v| mrays(n, median(&mut v)))
}
