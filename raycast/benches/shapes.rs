//! Ray–primitive throughput: `cast` and `hits` of every primitive in its own
//! frame, on 8192 pre-generated rays per set, for three sets per shape: all
//! hit, all miss, and a shuffled 50 % mix (a kernel's miss path is usually its
//! fast path, and the mix defeats branch prediction).
//!
//! The rays come from a fixed seed. Hit rays start outside the shape and aim
//! at a point sampled strictly inside it (a margin of 10 % of the size), miss
//! rays aim so that the line passes outside the shape's bounding sphere (or,
//! for the plane, away from it). Before timing, every set is checked: the
//! number of rays that `cast` and `hits` answer as hits must be exactly the
//! intended one, and the two must agree ray by ray. A shape whose kernel
//! answers no hit at all (a stub not yet merged) is skipped with a message.
//!
//! Throughput is reported in elements, so Criterion prints rays/s.
//!
//! Run: `cargo bench -p raycast --bench shapes` (filter with e.g. `-- cast/cone`).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use raycast::{
    vec3, Capsule, Cone, Cuboid, Cylinder, Interval, Plane, Quat, Ray, RayCast, Sphere, Torus, Triangle, Vec3,
};
use std::time::Duration;

/// Rays per set: a power of two, as glam's benchmark ring (`1 << 13`).
const N: usize = 1 << 13;
/// Fixed seed of every generated set.
const SEED: u64 = 0x5eed_2024;

/// PCG-XSH-RR 32 (O'Neill 2014): small, seedable, good enough for test inputs.
struct Pcg32(u64);

impl Pcg32 {
    const MUL: u64 = 6_364_136_223_846_793_005;
    const INC: u64 = 1_442_695_040_888_963_407;

    fn new(seed: u64) -> Self {
        let mut r = Pcg32(0);
        r.next_u32();
        r.0 = r.0.wrapping_add(seed);
        r.next_u32();
        r
    }

    fn next_u32(&mut self) -> u32 {
        let old = self.0;
        self.0 = old.wrapping_mul(Self::MUL).wrapping_add(Self::INC);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in the ball of radius 1 (rejection from the cube).
    fn in_ball(&mut self) -> Vec3 {
        loop {
            let p = vec3(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            if p.length_squared() <= 1.0 {
                return p;
            }
        }
    }

    /// Uniform on the unit sphere.
    fn on_sphere(&mut self) -> Vec3 {
        loop {
            let p = self.in_ball();
            let l = p.length();
            if l > 0.1 {
                return p / l;
            }
        }
    }
}

/// Interior points are taken this fraction of the way in, so a hit ray's target
/// is well inside and the hit is robust (not a graze).
const INSIDE: f32 = 0.9;

/// A ray from a point 4 bounding radii from `centre` aimed at `target`
/// (`dir` unnormalised: the target is at `t = 1`).
fn ray_from_afar(rng: &mut Pcg32, centre: Vec3, radius: f32, target: Vec3) -> Ray {
    let origin = centre + 4.0 * radius * rng.on_sphere();
    Ray::new(origin, target - origin)
}

/// A ray whose whole line stays outside the sphere (`centre`, `radius`): from
/// `D = 4·radius` along `u` toward a point `s·radius` along `w ⊥ u`, the line's
/// distance to the centre is `D·s / √(D² + s²)`, > 1.2·radius for s ≥ 1.3.
fn miss_ray(rng: &mut Pcg32, centre: Vec3, radius: f32) -> Ray {
    let u = rng.on_sphere();
    let w = u.any_orthonormal_pair().0;
    let w = Quat::from_axis_angle(u, rng.range(0.0, std::f32::consts::TAU)) * w;
    let origin = centre + 4.0 * radius * u;
    let target = centre + rng.range(1.3, 2.0) * radius * w;
    Ray::new(origin, target - origin)
}

/// The hit, miss and mixed ray sets of one shape.
struct RaySets {
    hit: Vec<Ray>,
    miss: Vec<Ray>,
    mixed: Vec<Ray>,
}

impl RaySets {
    fn new(mut hit_ray: impl FnMut(&mut Pcg32) -> Ray, mut miss: impl FnMut(&mut Pcg32) -> Ray) -> Self {
        let mut rng = Pcg32::new(SEED);
        let hit: Vec<Ray> = (0..N).map(|_| hit_ray(&mut rng)).collect();
        let miss: Vec<Ray> = (0..N).map(|_| miss(&mut rng)).collect();
        // Half of each, shuffled (Fisher–Yates) so hits and misses interleave randomly.
        let mut mixed: Vec<Ray> = hit[..N / 2].iter().chain(&miss[..N / 2]).copied().collect();
        for i in (1..mixed.len()).rev() {
            let j = (rng.next_u32() as usize) % (i + 1);
            mixed.swap(i, j);
        }
        Self { hit, miss, mixed }
    }

    /// `(name, rays, how many must hit)`.
    fn sets(&self) -> [(&'static str, &[Ray], usize); 3] {
        [("hit", &self.hit, N), ("miss", &self.miss, 0), ("mixed", &self.mixed, N / 2)]
    }
}

/// Rays for a bounded shape: hits aim at `inside(rng)`, misses pass outside
/// the bounding sphere of `shape.local_bounds()`.
fn bounded_sets<S: RayCast>(shape: &S, mut inside: impl FnMut(&mut Pcg32) -> Vec3) -> RaySets {
    let b = shape.local_bounds();
    let (centre, radius) = (b.center(), 0.5 * b.size().length());
    RaySets::new(
        |rng| {
            let target = inside(rng);
            ray_from_afar(rng, centre, radius, target)
        },
        |rng| miss_ray(rng, centre, radius),
    )
}

/// Checks the ray sets against the shape before timing; `false` if the shape
/// answers no hit at all (an unmerged stub), which skips it.
fn validate<S: RayCast>(name: &str, shape: &S, sets: &RaySets) -> bool {
    if !sets
        .hit
        .iter()
        .any(|r| shape.hits(r, Interval::FORWARD) || shape.cast(r, Interval::FORWARD).is_some())
    {
        eprintln!("SKIP {name}: the kernel answers no hit at all (stub on this branch?)");
        return false;
    }
    for (set, rays, expected) in sets.sets() {
        let mut cast_hits = 0;
        for r in rays {
            let c = shape.cast(r, Interval::FORWARD);
            let h = shape.hits(r, Interval::FORWARD);
            assert_eq!(c.is_some(), h, "{name}/{set}: cast and hits disagree on {r:?}");
            cast_hits += usize::from(h);
        }
        assert_eq!(
            cast_hits,
            expected,
            "{name}/{set}: {cast_hits} of {} rays hit, intended {expected}",
            rays.len()
        );
    }
    true
}

/// Times `cast` (with the full hit record) and `hits` on the three sets.
fn bench_shape<S: RayCast>(c: &mut Criterion, name: &str, shape: &S, sets: &RaySets) {
    if !validate(name, shape, sets) {
        return;
    }
    let mut group = c.benchmark_group(format!("cast/{name}"));
    for (set, rays, _) in sets.sets() {
        group.throughput(Throughput::Elements(rays.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(set), rays, |b, rays| {
            b.iter(|| {
                for r in rays {
                    black_box(shape.cast(black_box(r), Interval::FORWARD));
                }
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group(format!("hits/{name}"));
    for (set, rays, _) in sets.sets() {
        group.throughput(Throughput::Elements(rays.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(set), rays, |b, rays| {
            b.iter(|| rays.iter().filter(|r| shape.hits(black_box(r), Interval::FORWARD)).count())
        });
    }
    group.finish();
}

/// Sphere of radius 1: `cast` and `hits`, hit / miss / mixed.
fn sphere(c: &mut Criterion) {
    let s = Sphere::new(1.0);
    let sets = bounded_sets(&s, |rng| INSIDE * rng.in_ball());
    bench_shape(c, "sphere", &s, &sets);
}

/// Box with half extents (1, 0.6, 0.8): `cast` and `hits`, hit / miss / mixed.
fn cuboid(c: &mut Criterion) {
    let h = vec3(1.0, 0.6, 0.8);
    let s = Cuboid::new(h);
    let sets = bounded_sets(&s, |rng| {
        INSIDE * h * vec3(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0))
    });
    bench_shape(c, "cuboid", &s, &sets);
}

/// Uniform point in the disk of radius `r` in the XZ plane, at height `y`.
fn in_disk(rng: &mut Pcg32, r: f32, y: f32) -> Vec3 {
    let a = rng.range(0.0, std::f32::consts::TAU);
    let rho = r * rng.unit().sqrt();
    vec3(rho * a.cos(), y, rho * a.sin())
}

/// Cylinder r 0.7, half height 1: `cast` and `hits`, hit / miss / mixed.
fn cylinder(c: &mut Criterion) {
    let (r, hh) = (0.7, 1.0);
    let s = Cylinder::new(r, hh);
    let sets = bounded_sets(&s, |rng| {
        let y = INSIDE * rng.range(-hh, hh);
        in_disk(rng, INSIDE * r, y)
    });
    bench_shape(c, "cylinder", &s, &sets);
}

/// Cone r 0.8, half height 1 (apex at +y): `cast` and `hits`, hit / miss / mixed.
fn cone(c: &mut Criterion) {
    let (r, hh) = (0.8, 1.0);
    let s = Cone::new(r, hh);
    let sets = bounded_sets(&s, |rng| {
        let y = INSIDE * rng.range(-hh, hh);
        let radius_at_y = r * (hh - y) / (2.0 * hh);
        in_disk(rng, INSIDE * radius_at_y, y)
    });
    bench_shape(c, "cone", &s, &sets);
}

/// Capsule around a tilted segment, r 0.4: `cast` and `hits`, hit / miss / mixed.
fn capsule(c: &mut Criterion) {
    let (a, b, r) = (vec3(-0.5, -0.4, 0.1), vec3(0.5, 0.5, -0.2), 0.4);
    let s = Capsule::new(a, b, r);
    let sets = bounded_sets(&s, |rng| a.lerp(b, rng.unit()) + INSIDE * r * rng.in_ball());
    bench_shape(c, "capsule", &s, &sets);
}

/// Two-sided triangle: `cast` and `hits`, hit / miss / mixed. Hit rays aim at
/// barycentrics at least 0.05 from every edge and never run within ~6° of the
/// triangle's plane.
fn triangle(c: &mut Criterion) {
    let (a, b, cc) = (vec3(-1.0, -0.8, 0.1), vec3(1.0, -0.6, -0.2), vec3(0.1, 1.0, 0.05));
    let s = Triangle::new(a, b, cc);
    let n = (b - a).cross(cc - a).normalize();
    let bounds = s.local_bounds();
    let (centre, radius) = (bounds.center(), 0.5 * bounds.size().length());
    let sets = RaySets::new(
        |rng| loop {
            let (u, v) = (rng.range(0.05, 0.9), rng.range(0.05, 0.9));
            if u + v > 0.95 {
                continue;
            }
            let target = a + u * (b - a) + v * (cc - a);
            let ray = ray_from_afar(rng, centre, radius, target);
            if ray.dir.normalize().dot(n).abs() > 0.1 {
                return ray;
            }
        },
        |rng| miss_ray(rng, centre, radius),
    );
    bench_shape(c, "triangle", &s, &sets);
}

/// The plane y = 0: `cast` and `hits`, hit / miss / mixed. Rays start 0.5–4
/// above or below it; hits head for a point on it, misses head away.
fn plane(c: &mut Criterion) {
    let s = Plane::new(Vec3::Y, Vec3::ZERO);
    let start = |rng: &mut Pcg32| {
        let y = rng.range(0.5, 4.0);
        let y = if rng.unit() < 0.5 { y } else { -y };
        vec3(rng.range(-4.0, 4.0), y, rng.range(-4.0, 4.0))
    };
    let sets = RaySets::new(
        |rng| {
            let o = start(rng);
            Ray::new(o, vec3(rng.range(-4.0, 4.0), 0.0, rng.range(-4.0, 4.0)) - o)
        },
        |rng| {
            let o = start(rng);
            let away = vec3(rng.range(-4.0, 4.0), o.y * rng.range(1.5, 3.0), rng.range(-4.0, 4.0));
            Ray::new(o, away - o)
        },
    );
    bench_shape(c, "plane", &s, &sets);
}

/// Torus R 1, r 0.3: `cast` and `hits`, hit / miss / mixed.
fn torus(c: &mut Criterion) {
    let (big, small) = (1.0, 0.3);
    let s = Torus::new(big, small);
    let sets = bounded_sets(&s, |rng| {
        let phi = rng.range(0.0, std::f32::consts::TAU);
        let q = in_disk(rng, INSIDE * small, 0.0); // (ρ cos θ, 0, ρ sin θ) in the tube's disk
        let ring = big + q.x;
        vec3(ring * phi.cos(), q.z, ring * phi.sin())
    });
    bench_shape(c, "torus", &s, &sets);
}

fn config() -> Criterion {
    // 48 benches share 2 cores with other work: short windows, enough samples
    // for a stable median.
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = sphere, cuboid, cylinder, cone, capsule, triangle, plane, torus
}
criterion_main!(benches);
