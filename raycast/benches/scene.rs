//! Scene throughput: scenes of 10,000 and 100,000 mixed primitives (spheres,
//! boxes, capsules, cylinders; random sizes, rotations and positions) plus
//! four instanced Stanford bunnies (one shared `TriMesh`, ~69k triangles).
//!
//! * `scene/cast`, `scene/hits`: 16,384 incoherent rays (origins uniform in
//!   the scene's box, directions uniform on the sphere), closest hit and any
//!   hit over `[0, +∞]`, one thread; throughput in rays.
//! * `scene/refit`: every object moved (untimed), then `Scene::refit` timed;
//!   `scene/move+refit` times the 100,000 `set_transform` calls too.
//! * `scene/batch`: `cast_batch_into` on a 1-thread and a 2-thread pool
//!   (on the 100,000-object scene the rays walk the tree eight at a time).
//! * `scene/build`: `Scene::from_objects` (SAH build of the top-level tree).
//!
//! Before timing, the 10k scene's answers are checked against brute force
//! over every object on 512 rays (same `t`, and the hit is that object's own).
//!
//! The bunny is read from `assets/meshes/bunny.obj` by the small OBJ reader
//! below (`v` and `f` lines only; the library's loader needs the `load`
//! feature, which benches do not turn on). If the file is missing, a closed
//! bumpy sphere of similar size and triangle count stands in, with a message.
//!
//! The generator is the same as `compare/src/scene_gen.rs`, which runs these
//! scenes against parry3d (there the bunny's scale of 60 is applied to its
//! vertices, parry's poses having no scale; here it is in the placement).
//!
//! Run: `cargo bench -p raycast --bench scene` (filter with e.g. `-- cast/100k`).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use raycast::scene::rayon::ThreadPoolBuilder;
use raycast::scene::{Filter, Scene, SceneObject};
use raycast::{
    vec3, Affine3A, Capsule, Cuboid, Cylinder, Interval, Quat, Ray, RayCast, Shape, Sphere, TriMesh, Vec3,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rays per timed set.
const RAYS: usize = 1 << 14;
/// Bunnies per scene (instances of one mesh).
const BUNNIES: usize = 4;

/// xorshift64* (Vigna 2016): the generator of the scene and the rays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn v(&mut self, lo: f32, hi: f32) -> Vec3 {
        vec3(self.f(lo, hi), self.f(lo, hi), self.f(lo, hi))
    }
    fn unit(&mut self) -> Vec3 {
        loop {
            let p = self.v(-1.0, 1.0);
            let l = p.length();
            if (0.1..=1.0).contains(&l) {
                return p / l;
            }
        }
    }
    fn rotation(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.f(0.0, std::f32::consts::TAU))
    }
}

/// Half the side of the cube the scene fills: 5 units per object⅓, so the
/// mean free path is a few tens of units whatever `n` (about half the rays
/// hit something).
fn half_extent(n: usize) -> f32 {
    2.5 * (n as f32).cbrt()
}

/// `n` random primitives, then the bunnies, with ids in order.
fn objects(n: usize, bunny: &Arc<TriMesh>, seed: u64) -> Vec<SceneObject> {
    let mut rng = Rng(seed);
    let h = half_extent(n);
    let mut out: Vec<SceneObject> = (0..n)
        .map(|i| {
            let shape: Shape = match i % 4 {
                0 => Sphere::new(rng.f(0.3, 1.5)).into(),
                1 => Cuboid::new(rng.v(0.2, 1.2)).into(),
                2 => {
                    let hh = rng.f(0.2, 1.0);
                    Capsule::new(vec3(0.0, -hh, 0.0), vec3(0.0, hh, 0.0), rng.f(0.2, 0.8)).into()
                }
                _ => Cylinder::new(rng.f(0.2, 1.0), rng.f(0.2, 1.2)).into(),
            };
            let m = Affine3A::from_rotation_translation(rng.rotation(), rng.v(-h, h));
            SceneObject::new(shape, m, i as u32)
        })
        .collect();
    for k in 0..BUNNIES {
        let m = Affine3A::from_scale_rotation_translation(Vec3::splat(60.0), rng.rotation(), rng.v(-h, h));
        out.push(SceneObject::new(Shape::Mesh(bunny.clone()), m, (n + k) as u32));
    }
    out
}

fn rays(n: usize, count: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Rng(seed);
    let h = half_extent(n);
    (0..count).map(|_| Ray::new(rng.v(-h, h), rng.unit())).collect()
}

/// The bunny, or a stand-in (see the module doc).
fn bunny() -> Arc<TriMesh> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/meshes/bunny.obj");
    match std::fs::read_to_string(path).ok().and_then(|s| read_obj(&s)) {
        Some(m) => Arc::new(m),
        None => {
            eprintln!("NOTE: {path} not readable; a generated closed mesh stands in for the bunny");
            Arc::new(blob(256, 128))
        }
    }
}

/// `v x y z` and `f a b c ..` (1-based or negative, `a/t/n` forms; polygons
/// fan-triangulated); everything else skipped.
fn read_obj(text: &str) -> Option<TriMesh> {
    let (mut v, mut t) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("v") => {
                let c: Vec<f32> = w.take(3).map(str::parse).collect::<Result<_, _>>().ok()?;
                v.push(vec3(*c.first()?, *c.get(1)?, *c.get(2)?));
            }
            Some("f") => {
                let idx: Vec<u32> = w
                    .map(|s| {
                        let k: i64 = s.split('/').next()?.parse().ok()?;
                        let k = if k < 0 { v.len() as i64 + k } else { k - 1 };
                        u32::try_from(k).ok()
                    })
                    .collect::<Option<_>>()?;
                for i in 2..idx.len() {
                    t.push([idx[0], idx[i - 1], idx[i]]);
                }
            }
            _ => {}
        }
    }
    TriMesh::try_new(v, t).ok()
}

/// A closed latitude–longitude sphere of radius ~0.08 with bumps, centred
/// near the bunny's centre.
fn blob(around: u32, rings: u32) -> TriMesh {
    let mut v = vec![vec3(0.0, 0.08, 0.0), vec3(0.0, -0.08, 0.0)];
    for r in 1..rings {
        let th = std::f32::consts::PI * r as f32 / rings as f32;
        for a in 0..around {
            let ph = std::f32::consts::TAU * a as f32 / around as f32;
            let rad = 0.08 * (1.0 + 0.1 * (5.0 * ph).sin() * (3.0 * th).sin());
            v.push(rad * vec3(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin()));
        }
    }
    let at = |r: u32, a: u32| 2 + (r - 1) * around + a % around;
    let mut t = Vec::new();
    for a in 0..around {
        t.push([0, at(1, a + 1), at(1, a)]);
        t.push([1, at(rings - 1, a), at(rings - 1, a + 1)]);
        for r in 1..rings - 1 {
            t.push([at(r, a), at(r, a + 1), at(r + 1, a)]);
            t.push([at(r + 1, a), at(r, a + 1), at(r + 1, a + 1)]);
        }
    }
    let v = v.into_iter().map(|p| p + vec3(-0.02, 0.1, 0.0)).collect();
    TriMesh::new(v, t)
}

/// Scene answers against brute force over every object.
fn check(scene: &Scene, objects: &[SceneObject], rays: &[Ray]) {
    let mut hits = 0;
    for r in rays {
        let brute = objects
            .iter()
            .filter_map(|o| o.placed.cast(r, Interval::FORWARD).map(|h| (h.t, o.id)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let got = scene.cast(r, Interval::FORWARD, &Filter::ALL);
        assert_eq!(got.map(|h| h.t), brute.map(|b| b.0), "scene vs brute force on {r:?}");
        if let Some(h) = got {
            let own = objects[h.object.unwrap() as usize].placed.cast(r, Interval::FORWARD);
            assert_eq!(own.map(|o| o.t), Some(h.t));
            hits += 1;
        }
        assert_eq!(scene.hits(r, Interval::FORWARD, &Filter::ALL), brute.is_some());
    }
    eprintln!("checked against brute force: {hits} of {} rays hit", rays.len());
}

fn bench(c: &mut Criterion) {
    let bunny = bunny();
    for (n, name) in [(10_000, "10k"), (100_000, "100k")] {
        let objs = objects(n, &bunny, 0x5ce2e + n as u64);
        let t = Instant::now();
        let scene = Scene::from_objects(objs.iter().cloned());
        eprintln!(
            "{name}: built in {:.1} ms, {:.1} MB index",
            t.elapsed().as_secs_f64() * 1e3,
            scene.memory_bytes() as f64 / 1e6
        );
        let rays = rays(n, RAYS, 0x4a75 + n as u64);
        if n == 10_000 {
            check(&scene, &objs, &rays[..512]);
        }
        let hit = rays.iter().filter(|r| scene.hits(r, Interval::FORWARD, &Filter::ALL)).count();
        eprintln!("{name}: {hit} of {RAYS} rays hit");

        let mut g = c.benchmark_group("scene");
        g.throughput(Throughput::Elements(RAYS as u64));
        g.bench_with_input(BenchmarkId::new("cast", name), &rays, |b, rays| {
            b.iter(|| {
                for r in rays {
                    black_box(scene.cast(black_box(r), Interval::FORWARD, &Filter::ALL));
                }
            })
        });
        g.bench_with_input(BenchmarkId::new("hits", name), &rays, |b, rays| {
            b.iter(|| {
                for r in rays {
                    black_box(scene.hits(black_box(r), Interval::FORWARD, &Filter::ALL));
                }
            })
        });
        if n == 100_000 {
            for threads in [1, 2] {
                let pool = ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let id = BenchmarkId::new(format!("batch/{threads}-thread"), name);
                // Into a reused buffer (as a game would, frame after frame):
                // a fresh answer vector per batch is mapped anew, and two
                // threads faulting its pages in contend in the kernel.
                let mut out = Vec::new();
                g.bench_with_input(id, &rays, |b, rays| {
                    b.iter(|| {
                        pool.install(|| {
                            scene.cast_batch_into(rays, Interval::FORWARD, &Filter::ALL, &mut out)
                        })
                    })
                });
            }
        }
        g.throughput(Throughput::Elements(objs.len() as u64));
        g.bench_function(BenchmarkId::new("build", name), |b| {
            b.iter_batched(
                || objs.clone(),
                |o| black_box(Scene::from_objects(o)),
                criterion::BatchSize::LargeInput,
            )
        });
        drop(scene);

        // Move every object by a small random step (alternately there and
        // back, so the scene stays the same over time), then refit.
        let mut scene = Scene::from_objects(objs.iter().cloned());
        let keys: Vec<_> = scene.iter().map(|(k, _)| k).collect();
        let mut rng = Rng(7);
        let steps: Vec<Vec3> = keys.iter().map(|_| rng.v(-0.5, 0.5)).collect();
        let mut flip = 1.0;
        let mut move_all = |scene: &mut Scene| {
            flip = -flip;
            for ((k, o), d) in keys.iter().zip(&objs).zip(&steps) {
                let m = Affine3A::from_translation(*d * (0.5 + 0.5 * flip)) * *o.placed.world_from_local();
                scene.set_transform(*k, m).unwrap();
            }
        };
        g.bench_function(BenchmarkId::new("refit", name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    move_all(&mut scene);
                    let t = Instant::now();
                    scene.refit();
                    total += t.elapsed();
                }
                total
            })
        });
        g.bench_function(BenchmarkId::new("move+refit", name), |b| {
            b.iter(|| {
                move_all(&mut scene);
                scene.refit();
            })
        });
        assert!(scene.validate().is_ok());
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
