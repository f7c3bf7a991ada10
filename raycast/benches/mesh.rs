//! Mesh throughput on the Stanford bunny (69,451 triangles): closest hit
//! (`cast`) and any hit (`hits`) for two ray sets, and the BVH build.
//!
//! * **camera**: a 1024×1024 pinhole camera outside the mesh, looking at the
//!   centre of its box (coherent rays; the peer comparison's camera). All
//!   1,048,576 rays are traced per iteration.
//! * **incoherent**: 1M rays from random points on a sphere of radius twice
//!   the box diagonal toward random points inside the box (every ray is a
//!   fresh direction and enters the box). A fixed subset of 2^18 per
//!   iteration keeps a sample short.
//! * **build**: `TriMesh::try_new` on the bunny (BVH build and leaf copies).
//!
//! Each ray set is timed one ray at a time (`closest`, `any`) and as one
//! `cast_batch_into` on a one-thread pool (`closest-batch-1-thread`).
//!
//! Throughput is in elements, so Criterion prints rays/s (Melem/s = Mrays/s).
//! Single thread. The rays come from a fixed seed; before timing, `cast` and
//! `hits` must agree on every ray. Bytes per triangle are printed once.
//!
//! Run: `cargo bench -p raycast --features load --bench mesh`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use raycast::{vec3, Interval, Ray, RayCast, TriMesh, Vec3};
use std::time::Duration;

/// PCG-XSH-RR 32 (O'Neill 2014), as in the shapes bench.
struct Pcg32(u64);

impl Pcg32 {
    fn new(seed: u64) -> Self {
        let mut r = Pcg32(seed.wrapping_add(1_442_695_040_888_963_407));
        r.next_u32();
        r
    }
    fn next_u32(&mut self) -> u32 {
        let old = self.0;
        self.0 = old.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let x = (((old >> 18) ^ old) >> 27) as u32;
        x.rotate_right((old >> 59) as u32)
    }
    fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }
    fn on_sphere(&mut self) -> Vec3 {
        loop {
            let p = vec3(self.unit(), self.unit(), self.unit()) * 2.0 - Vec3::ONE;
            let l = p.length();
            if l > 0.1 && l <= 1.0 {
                return p / l;
            }
        }
    }
}

fn bunny() -> TriMesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/meshes/bunny.obj");
    raycast::mesh::load(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// 1024×1024 pinhole rays from outside the mesh (40° field of view), the
/// same camera as the peer comparison (`compare/src/meshes.rs`).
fn camera_rays(mesh: &TriMesh) -> Vec<Ray> {
    let b = mesh.local_bounds();
    let (c, diag) = (b.center(), b.size().length());
    let eye = c + vec3(0.35, 0.25, 1.0).normalize() * (1.5 * diag);
    let fwd = (c - eye).normalize();
    let right = fwd.cross(Vec3::Y).normalize();
    let up = right.cross(fwd);
    let n = 1024;
    let half = (20.0f32).to_radians().tan();
    let mut rays = Vec::with_capacity(n * n);
    for y in 0..n {
        for x in 0..n {
            let sx = ((x as f32 + 0.5) / n as f32 * 2.0 - 1.0) * half;
            let sy = (1.0 - (y as f32 + 0.5) / n as f32 * 2.0) * half;
            rays.push(Ray::new(eye, (fwd + sx * right + sy * up).normalize()));
        }
    }
    rays
}

/// `n` rays from a sphere of radius 2× the box diagonal toward points in the box.
fn incoherent_rays(mesh: &TriMesh, n: usize) -> Vec<Ray> {
    let b = mesh.local_bounds();
    let (c, diag) = (b.center(), b.size().length());
    let mut rng = Pcg32::new(0x5eed_2024);
    (0..n)
        .map(|_| {
            let origin = c + 2.0 * diag * rng.on_sphere();
            let target = b.min + b.size() * vec3(rng.unit(), rng.unit(), rng.unit());
            Ray::new(origin, target - origin)
        })
        .collect()
}

fn check(mesh: &TriMesh, name: &str, rays: &[Ray]) {
    let hits = rays.iter().filter(|r| mesh.cast(r, Interval::FORWARD).is_some()).count();
    let any = rays.iter().filter(|r| mesh.hits(r, Interval::FORWARD)).count();
    assert_eq!(hits, any, "{name}: cast and hits disagree");
    println!("{name}: {} rays, {:.1} % hit", rays.len(), 100.0 * hits as f64 / rays.len() as f64);
}

fn bench_rays(c: &mut Criterion, mesh: &TriMesh, name: &str, rays: &[Ray]) {
    check(mesh, name, rays);
    let mut group = c.benchmark_group(format!("bunny/{name}"));
    group.throughput(Throughput::Elements(rays.len() as u64));
    group.bench_function("closest", |bch| {
        bch.iter(|| rays.iter().filter(|r| mesh.cast(black_box(r), Interval::FORWARD).is_some()).count())
    });
    group.bench_function("any", |bch| {
        bch.iter(|| rays.iter().filter(|r| mesh.hits(black_box(r), Interval::FORWARD)).count())
    });
    // The batch query on one thread, into a reused buffer: incoherent rays
    // walk the tree eight at a time (`bvh::interleave`), camera rays one by
    // one (they are coherent).
    let one = raycast::scene::rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut out = Vec::new();
    group.bench_function("closest-batch-1-thread", |bch| {
        bch.iter(|| {
            one.install(|| mesh.cast_batch_into(rays, Interval::FORWARD, &mut out));
            out.iter().flatten().count()
        })
    });
    // `coherent_order`, all timed: order the rays, copy them into the
    // order, cast in sequence, file each distance under its ray's index.
    // Compare with "closest", which files nothing.
    let bounds = mesh.local_bounds();
    let mut distance = vec![f32::INFINITY; rays.len()];
    group.bench_function("closest-coherent-order", |bch| {
        bch.iter(|| {
            let order = raycast::coherent_order(black_box(rays), bounds);
            let sorted: Vec<Ray> = order.iter().map(|&i| rays[i as usize]).collect();
            for (&i, r) in order.iter().zip(&sorted) {
                distance[i as usize] = mesh.cast(r, Interval::FORWARD).map_or(f32::INFINITY, |h| h.t);
            }
            distance.iter().filter(|d| d.is_finite()).count()
        })
    });
    group.finish();
}

fn mesh(c: &mut Criterion) {
    let mesh = bunny();
    let tris = mesh.triangles().len();
    println!(
        "bunny: {tris} triangles, {} BVH nodes, {:.1} bytes/triangle (BVH alone {:.1})",
        mesh.bvh().node_count(),
        mesh.memory_bytes() as f64 / tris as f64,
        mesh.bvh().memory_bytes() as f64 / tris as f64,
    );
    bench_rays(c, &mesh, "camera", &camera_rays(&mesh));
    let incoherent = incoherent_rays(&mesh, 1 << 20);
    bench_rays(c, &mesh, "incoherent", &incoherent[..1 << 18]);

    let (v, t) = (mesh.vertices().to_vec(), mesh.triangles().to_vec());
    c.benchmark_group("bunny/build")
        .sample_size(10)
        .bench_function("trimesh", |bch| bch.iter(|| TriMesh::new(black_box(v.clone()), t.clone())));
}

fn config() -> Criterion {
    // Shared 2-core machine: short windows, medians of 10 samples.
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = mesh
}
criterion_main!(benches);
