//! One property battery, run for every closed solid (STYLE.md point 9).
//!
//! [`check_closed_solid`] and [`check_convex_solid`] are generic functions, not
//! macros, so a failure points at a real line and prints the shape, the ray
//! and the hit. Every shape is checked against its own signed distance
//! function written independently in f64 (`sdf_*` below): a hit point must lie
//! on that surface and on the ray. The inputs are adversarial on purpose:
//! log-uniform distances and direction lengths, axis-parallel directions and
//! directions with one zero component, grazing rays, origins 1e3–1e4 sizes
//! away, origins inside. Seeds are fixed; run with `--nocapture` to see the
//! measured hit-point errors.

use raycast::glam::{DVec3, Vec3Swizzles};
use raycast::{
    vec3, Affine3A, Capsule, Cone, ConvexSolid, Cuboid, Cylinder, Interval, Quat, Ray, RayCast, Solid,
    Sphere, Torus, Transformed, Vec3,
};
use std::fmt::Debug;

/// Relative nudge along the normal, times `max(|point|, size)`, for the
/// inside/outside test of a hit point: 1e-4 is ~1000× the f32 rounding of a
/// coordinate (and of the error a near ray leaves in an unsnapped point), so
/// only a point that is really off the surface, or a wrong normal, fails.
const NUDGE: f32 = 1e-4;

/// Targets are at least this far inside (times the size): with an origin 1e4
/// sizes away, `target − origin` carries ~6e-4 sizes of rounding, and the
/// ray must still pass through the inside.
const TARGET_MARGIN: f64 = 1e-2;

/// Hit-point error bounds, relative to the scene scale
/// `max(|origin|, |dir|·t, size)` (the conformance suite's `sc`).
const P999_BOUND: f64 = 4e-6;
const MAX_BOUND: f64 = 2e-5;

/// Rays per family (near, far, grazing, inside, transformed, span).
const RAYS: usize = 4000;

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny seeded generator, so the
/// battery needs no extra dependency and every run sees the same rays.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// 10^U(lo, hi): log-uniform magnitudes (pbrt-v4 `pExp`).
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        10f64.powf(self.range(lo, hi))
    }
    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
    fn unit_vector(&mut self) -> DVec3 {
        loop {
            let v = DVec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            let l = v.length();
            if l > 1e-3 && l <= 1.0 {
                return v / l;
            }
        }
    }
    /// A direction of one of three kinds: general, one zero component, or
    /// along an axis (the cases where a slab or quadratic meets 0/0 or 0·∞).
    fn direction(&mut self) -> DVec3 {
        let mut v = self.unit_vector();
        match self.below(3) {
            0 => v,
            1 => {
                v[self.below(3)] = 0.0;
                v.normalize_or(DVec3::X)
            }
            _ => {
                let mut a = DVec3::ZERO;
                a[self.below(3)] = if self.unit() < 0.5 { 1.0 } else { -1.0 };
                a
            }
        }
    }
    fn rotation(&mut self) -> Quat {
        let v = self.unit_vector();
        let w = self.range(-1.0, 1.0);
        Quat::from_xyzw(v.x as f32, v.y as f32, v.z as f32, w as f32).normalize()
    }
}

/// A closed solid under test with its reference signed distance (f64,
/// negative inside) and its size (largest coordinate of its bounds).
struct Subject<'a, S> {
    name: &'a str,
    shape: &'a S,
    sdf: &'a dyn Fn(DVec3) -> f64,
    size: f32,
}

fn dv(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

/// Distance from `p` to the line `origin + t·dir`, in f64.
fn distance_to_line(p: DVec3, ray: &Ray) -> f64 {
    let (o, d) = (dv(ray.origin), dv(ray.dir));
    let w = p - o;
    (w - d * (w.dot(d) / d.length_squared())).length()
}

impl<S: Solid + Clone + Debug> Subject<'_, S> {
    fn new<'a>(name: &'a str, shape: &'a S, sdf: &'a dyn Fn(DVec3) -> f64) -> Subject<'a, S> {
        let b = shape.local_bounds();
        let size = b.min.abs().max(b.max.abs()).max_element();
        Subject { name, shape, sdf, size }
    }

    /// A point at least `TARGET_MARGIN · size` inside (rejection in the bounds).
    fn interior_point(&self, rng: &mut Rng) -> Vec3 {
        let b = self.shape.local_bounds();
        loop {
            let p = vec3(
                rng.range(b.min.x as f64, b.max.x as f64) as f32,
                rng.range(b.min.y as f64, b.max.y as f64) as f32,
                rng.range(b.min.z as f64, b.max.z as f64) as f32,
            );
            if (self.sdf)(dv(p)) < -TARGET_MARGIN * self.size as f64 {
                return p;
            }
        }
    }

    /// A point on the reference surface: bisection of the sdf between an
    /// interior point and a point 4 sizes away (outside the bounds).
    fn surface_point(&self, rng: &mut Rng) -> DVec3 {
        let mut inside = dv(self.interior_point(rng));
        let mut outside = inside + rng.unit_vector() * (4.0 * self.size as f64);
        for _ in 0..80 {
            let mid = 0.5 * (inside + outside);
            if (self.sdf)(mid) <= 0.0 {
                inside = mid;
            } else {
                outside = mid;
            }
        }
        inside
    }

    /// The reference normal: central differences of the sdf.
    fn reference_normal(&self, p: DVec3) -> DVec3 {
        let h = 1e-7 * self.size as f64;
        let g = |e: DVec3| (self.sdf)(p + e * h) - (self.sdf)(p - e * h);
        DVec3::new(g(DVec3::X), g(DVec3::Y), g(DVec3::Z)).normalize_or(DVec3::Y)
    }

    /// Relative error of a hit point: off the reference surface or off the
    /// ray, over the scene scale.
    fn error(&self, ray: &Ray, t: f32, point: Vec3) -> f64 {
        let p = dv(point);
        let scale =
            (ray.origin.length() as f64).max((ray.dir.length() * t.abs()) as f64).max(self.size as f64);
        (self.sdf)(p).abs().max(distance_to_line(p, ray)) / scale
    }

    /// A ray from `distance` away toward an interior point, with a direction
    /// of random kind and log-uniform length; returns the ray and the `t` of
    /// the target.
    fn aimed_ray(&self, rng: &mut Rng, distance: f64) -> (Ray, f32) {
        let target = self.interior_point(rng);
        let u = rng.direction();
        let origin = (dv(target) - u * distance).as_vec3();
        let len = rng.log_uniform(-3.0, 3.0);
        let dir = ((dv(target) - dv(origin)) * (len / distance)).as_vec3();
        (Ray::new(origin, dir), (distance / len) as f32)
    }
}

/// Sorted errors → (p99.9, max).
fn summary(mut errors: Vec<f64>) -> (f64, f64) {
    errors.sort_by(f64::total_cmp);
    let n = errors.len();
    (errors[((n as f64 * 0.999) as usize).min(n - 1)], errors[n - 1])
}

/// Properties every closed solid satisfies (see the module doc). Returns the
/// hit-point errors it measured.
fn check_closed_solid<S: Solid + Clone + Debug>(s: &Subject<S>, seed: u64) -> Vec<f64> {
    let (shape, size) = (s.shape, s.size);
    let mut rng = Rng(seed);
    let mut errors = Vec::new();

    // From outside toward an interior point: a front-face hit before the
    // target; the point nudged inward is inside, nudged outward is not.
    // Near origins (2–100 sizes) and far ones (1e3–1e4 sizes).
    for i in 0..2 * RAYS {
        let far = i >= RAYS;
        let distance = size as f64 * if far { rng.log_uniform(3.0, 4.0) } else { rng.log_uniform(0.31, 2.0) };
        let (ray, t_target) = s.aimed_ray(&mut rng, distance);
        let hit = shape.cast(&ray, Interval::FORWARD).unwrap_or_else(|| panic!("{shape:?} missed {ray:?}"));
        assert!(
            hit.front_face && hit.t > 0.0 && hit.t <= t_target,
            "{shape:?} {ray:?} {hit:?} target t {t_target}"
        );
        assert!((hit.normal.length() - 1.0).abs() <= 1e-5, "{shape:?} {ray:?} {hit:?}");
        assert!(shape.hits(&ray, Interval::FORWARD), "{shape:?} {ray:?}");
        assert_eq!(
            shape.cast_all(&ray, Interval::FORWARD).first().map(|h| h.t),
            Some(hit.t),
            "{shape:?} {ray:?}"
        );
        errors.push(s.error(&ray, hit.t, hit.point));
        if !far {
            let nudge = NUDGE * hit.point.length().max(size);
            assert!(
                shape.contains(hit.point - nudge * hit.normal),
                "inward nudge: {shape:?} {ray:?} {hit:?}"
            );
            assert!(
                !shape.contains(hit.point + nudge * hit.normal),
                "outward nudge: {shape:?} {ray:?} {hit:?}"
            );
        }
    }

    // Grazing rays: nearly tangent at a surface point. Hit or miss are both
    // right this close to tangency; a hit must be on the surface and the ray.
    for _ in 0..RAYS {
        let p = s.surface_point(&mut rng);
        let n = s.reference_normal(p);
        let v = rng.unit_vector();
        let tangent = (v - n * n.dot(v)).normalize_or(n.any_orthonormal_vector());
        let tilt = rng.log_uniform(-7.0, -2.0) * if rng.unit() < 0.5 { 1.0 } else { -1.0 };
        let dir = (tangent + n * tilt) * rng.log_uniform(-2.0, 2.0);
        let distance = size as f64 * rng.log_uniform(0.31, 4.0);
        let ray = Ray::new((p - dir.normalize() * distance).as_vec3(), dir.as_vec3());
        if let Some(hit) = shape.cast(&ray, Interval::FORWARD) {
            errors.push(s.error(&ray, hit.t, hit.point));
        }
    }

    // From inside: the exit, seen from behind.
    for _ in 0..RAYS {
        let origin = s.interior_point(&mut rng);
        let dir = (rng.direction() * rng.log_uniform(-3.0, 3.0)).as_vec3();
        let ray = Ray::new(origin, dir);
        let hit = shape
            .cast(&ray, Interval::FORWARD)
            .unwrap_or_else(|| panic!("{shape:?} missed from inside {ray:?}"));
        assert!(!hit.front_face && hit.t > 0.0, "{shape:?} {ray:?} {hit:?}");
        errors.push(s.error(&ray, hit.t, hit.point));
    }

    // Placed by a random affine map with non-uniform scale: the same t as the
    // local cast of the local ray, the point mapped, the normal mapped by the
    // inverse transpose.
    for _ in 0..RAYS / 4 {
        let scale = vec3(
            rng.log_uniform(-1.0, 1.0) as f32,
            rng.log_uniform(-1.0, 1.0) as f32,
            rng.log_uniform(-1.0, 1.0) as f32,
        );
        let translation = (rng.unit_vector() * rng.range(0.0, 10.0 * size as f64)).as_vec3();
        let m = Affine3A::from_scale_rotation_translation(scale, rng.rotation(), translation);
        let placed = Transformed::new(shape.clone(), m);
        let distance = size as f64 * rng.log_uniform(0.31, 2.0);
        let (local, _) = s.aimed_ray(&mut rng, distance);
        let world = Ray::new(m.transform_point3(local.origin), m.transform_vector3(local.dir));
        let got = placed
            .cast(&world, Interval::FORWARD)
            .unwrap_or_else(|| panic!("{shape:?} {m:?} missed {world:?}"));
        let want = shape.cast(&placed.to_local(&world), Interval::FORWARD).expect("local cast");
        assert_eq!(got.t, want.t, "{shape:?} {m:?} {world:?}");
        assert_eq!(got.part, want.part);
        let n = (m.matrix3.inverse().transpose() * raycast::glam::Vec3A::from(want.normal)).normalize();
        assert!((got.normal - Vec3::from(n)).length() <= 1e-5, "{shape:?} {m:?} {got:?} {want:?}");
        assert_eq!(got.point, m.transform_point3(want.point));
        assert!(got.front_face, "{shape:?} {m:?} {world:?} {got:?}");
    }

    // Degenerate rays: no hit, no panic.
    let o = vec3(0.0, 0.0, -3.0 * size);
    let bad_dirs =
        [Vec3::ZERO, Vec3::NAN, Vec3::INFINITY, vec3(0.0, 0.0, f32::NEG_INFINITY), vec3(1.0, f32::NAN, 0.0)];
    for ray in bad_dirs.map(|d| Ray::new(o, d)).into_iter().chain([Ray::new(Vec3::NAN, Vec3::Z)]) {
        assert!(shape.cast(&ray, Interval::FORWARD).is_none(), "{shape:?} {ray:?}");
        assert!(!shape.hits(&ray, Interval::ALL), "{shape:?} {ray:?}");
        assert!(shape.cast_all(&ray, Interval::ALL).is_empty(), "{shape:?} {ray:?}");
    }
    errors
}

/// The closed-solid battery plus the span: `span.enter.t <= cast.t <=
/// span.exit.t`, the span agrees with `cast` on hit or miss, and degenerate
/// rays have no span. Prints and bounds the hit-point errors.
fn check_convex_solid<S: ConvexSolid + Clone + Debug>(s: &Subject<S>, seed: u64) {
    let mut errors = check_closed_solid(s, seed);
    let (shape, size) = (s.shape, s.size);
    let mut rng = Rng(seed ^ 0x5EED);
    let mut hits = 0;
    for _ in 0..RAYS {
        // Origins within 3 sizes of the centre; directions of every kind, or
        // toward a random point of the bounds: hits, misses, inside origins.
        let bounds = shape.local_bounds();
        let origin = dv(bounds.center()) + rng.unit_vector() * rng.range(0.0, 3.0 * size as f64);
        let dir = if rng.unit() < 0.5 {
            rng.direction()
        } else {
            let b = (bounds.min, bounds.max);
            let toward = DVec3::new(
                rng.range(b.0.x as f64, b.1.x as f64),
                rng.range(b.0.y as f64, b.1.y as f64),
                rng.range(b.0.z as f64, b.1.z as f64),
            );
            (toward - origin).normalize_or(DVec3::X)
        };
        let ray = Ray::new(origin.as_vec3(), (dir * rng.log_uniform(-3.0, 3.0)).as_vec3());
        let cast = shape.cast(&ray, Interval::FORWARD);
        let span = shape.span(&ray);
        match (cast, span) {
            (Some(h), Some(sp)) => {
                hits += 1;
                assert!(sp.enter.t <= h.t && h.t <= sp.exit.t, "{shape:?} {ray:?} {h:?} {sp:?}");
                assert!(h.t == sp.enter.t || h.t == sp.exit.t, "{shape:?} {ray:?} {h:?} {sp:?}");
                errors.push(s.error(&ray, sp.enter.t, sp.enter.point));
                errors.push(s.error(&ray, sp.exit.t, sp.exit.point));
            }
            (None, Some(sp)) => assert!(sp.exit.t < 0.0, "{shape:?} {ray:?} {sp:?}"),
            (Some(h), None) => panic!("cast without span: {shape:?} {ray:?} {h:?}"),
            (None, None) => {}
        }
    }
    assert!(hits > RAYS / 10, "{shape:?}: the span rays hardly ever hit ({hits})");
    assert!(shape.span(&Ray::new(Vec3::ZERO, Vec3::ZERO)).is_none());
    report(s.name, errors);
}

/// Prints p99.9 and max of the relative hit-point errors and bounds them.
fn report(name: &str, errors: Vec<f64>) {
    let n = errors.len();
    let (p999, max) = summary(errors);
    println!("{name}: {n} hit points, error / scale: p99.9 = {p999:.2e}, max = {max:.2e}");
    assert!(p999 <= P999_BOUND, "{name}: p99.9 error {p999:e} > {P999_BOUND:e}");
    assert!(max <= MAX_BOUND, "{name}: max error {max:e} > {MAX_BOUND:e}");
}

// ---- reference signed distances, f64, written from the definitions ----

fn sdf_sphere(r: f64) -> impl Fn(DVec3) -> f64 {
    move |p| p.length() - r
}

fn sdf_cuboid(h: DVec3) -> impl Fn(DVec3) -> f64 {
    move |p| {
        let q = p.abs() - h;
        q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
    }
}

/// Revolved 2D box: radial `|p.xz| − r`, axial `|p.y| − h`.
fn sdf_cylinder(r: f64, h: f64) -> impl Fn(DVec3) -> f64 {
    move |p| {
        let q = raycast::glam::DVec2::new(p.xz().length() - r, p.y.abs() - h);
        q.max(raycast::glam::DVec2::ZERO).length() + q.max_element().min(0.0)
    }
}

fn sdf_capsule(a: DVec3, b: DVec3, r: f64) -> impl Fn(DVec3) -> f64 {
    move |p| {
        let ab = b - a;
        let s = if ab == DVec3::ZERO { 0.0 } else { ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) };
        (p - (a + s * ab)).length() - r
    }
}

/// Distance from `p` to the segment `a`–`b` in the plane.
fn segment_distance_2d(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (abx, aby) = (b[0] - a[0], b[1] - a[1]);
    let s = (((p[0] - a[0]) * abx + (p[1] - a[1]) * aby) / (abx * abx + aby * aby)).clamp(0.0, 1.0);
    (p[0] - a[0] - s * abx).hypot(p[1] - a[1] - s * aby)
}

/// In the half plane (ρ = |p.xz|, y) the cone is the triangle apex (0, h),
/// base rim (r, −h), base centre (0, −h); its boundary there is the slanted
/// edge and the base edge (the axis edge is inside the solid).
fn sdf_cone(r: f64, h: f64) -> impl Fn(DVec3) -> f64 {
    move |p| {
        let q = [p.xz().length(), p.y];
        let d = segment_distance_2d(q, [0.0, h], [r, -h]).min(segment_distance_2d(q, [0.0, -h], [r, -h]));
        let inside = q[1] >= -h && q[1] <= h && q[0] <= r * (h - q[1]) / (2.0 * h);
        if inside {
            -d
        } else {
            d
        }
    }
}

fn sdf_torus(major: f64, minor: f64) -> impl Fn(DVec3) -> f64 {
    move |p| (p.xz().length() - major).hypot(p.y) - minor
}

// ---- the shapes ----

#[test]
fn sphere_is_a_convex_solid() {
    for (i, r) in [1.5f32, 2.0e-3, 700.0].into_iter().enumerate() {
        let sdf = sdf_sphere(r as f64);
        check_convex_solid(&Subject::new(&format!("sphere r={r}"), &Sphere::new(r), &sdf), 10 + i as u64);
    }
}

#[test]
fn cuboid_is_a_convex_solid() {
    for (i, h) in
        [vec3(1.0, 2.0, 0.5), vec3(3e-3, 1e-3, 2e-3), vec3(400.0, 900.0, 50.0)].into_iter().enumerate()
    {
        let sdf = sdf_cuboid(dv(h));
        check_convex_solid(&Subject::new(&format!("cuboid h={h}"), &Cuboid::new(h), &sdf), 20 + i as u64);
    }
}

#[test]
fn cylinder_is_a_convex_solid() {
    for (i, (r, h)) in [(1.0f32, 2.0f32), (3e-3, 1e-3), (50.0, 900.0)].into_iter().enumerate() {
        let sdf = sdf_cylinder(r as f64, h as f64);
        let name = format!("cylinder r={r} h={h}");
        check_convex_solid(&Subject::new(&name, &Cylinder::new(r, h), &sdf), 30 + i as u64);
    }
}

#[test]
fn capsule_is_a_convex_solid() {
    let cases = [
        (vec3(0.3, -1.2, 0.5), vec3(-0.7, 0.9, 0.2), 0.4f32),
        (vec3(2.0, 2.0, 2.0), vec3(2.0, 2.0, 2.0), 0.5),
        (vec3(-300.0, 10.0, 0.0), vec3(300.0, 10.0, 0.0), 20.0),
        (vec3(1e-3, 0.0, 0.0), vec3(0.0, 2e-3, 1e-3), 5e-4),
    ];
    for (i, (a, b, r)) in cases.into_iter().enumerate() {
        let sdf = sdf_capsule(dv(a), dv(b), r as f64);
        let name = format!("capsule a={a} b={b} r={r}");
        check_convex_solid(&Subject::new(&name, &Capsule::new(a, b, r), &sdf), 40 + i as u64);
    }
}

#[test]
fn cone_is_a_convex_solid() {
    for (i, (r, h)) in [(1.0f32, 1.5f32), (2e-3, 1e-3), (300.0, 80.0)].into_iter().enumerate() {
        let sdf = sdf_cone(r as f64, h as f64);
        check_convex_solid(
            &Subject::new(&format!("cone r={r} h={h}"), &Cone::new(r, h), &sdf),
            50 + i as u64,
        );
    }
}

#[test]
fn torus_is_a_closed_solid() {
    for (i, (major, minor)) in [(2.0f32, 0.5f32), (3e-3, 1e-3), (500.0, 200.0)].into_iter().enumerate() {
        let sdf = sdf_torus(major as f64, minor as f64);
        let name = format!("torus R={major} r={minor}");
        let errors = check_closed_solid(&Subject::new(&name, &Torus::new(major, minor), &sdf), 60 + i as u64);
        report(&name, errors);
    }
}

/// The references themselves: known distances, so a wrong sdf cannot hide a
/// wrong kernel.
#[test]
fn reference_distances_are_right() {
    let p = DVec3::new(3.0, 0.0, 0.0);
    assert_eq!(sdf_sphere(1.0)(p), 2.0);
    assert_eq!(sdf_cuboid(DVec3::ONE)(DVec3::new(2.0, 2.0, 0.0)), 2f64.sqrt());
    assert_eq!(sdf_cuboid(DVec3::ONE)(DVec3::new(0.5, 0.0, 0.0)), -0.5);
    assert_eq!(sdf_cylinder(1.0, 2.0)(DVec3::new(0.0, 3.0, 0.0)), 1.0);
    assert_eq!(sdf_cylinder(1.0, 2.0)(p), 2.0);
    assert_eq!(sdf_capsule(DVec3::ZERO, DVec3::Y, 0.5)(DVec3::new(0.0, 3.0, 0.0)), 1.5);
    assert_eq!(sdf_cone(1.0, 1.0)(DVec3::new(0.0, -2.0, 0.0)), 1.0);
    assert!((sdf_cone(1.0, 1.0)(DVec3::new(0.0, 1.0, 0.0))).abs() < 1e-15);
    assert!((sdf_cone(1.0, 1.0)(DVec3::ZERO) + 1.0 / 5f64.sqrt()).abs() < 1e-15);
    assert_eq!(sdf_torus(2.0, 0.5)(DVec3::ZERO), 1.5);
    assert_eq!(sdf_torus(2.0, 0.5)(DVec3::new(2.0, 0.0, 0.0)), -0.5);
}
