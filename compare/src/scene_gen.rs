//! The scenes of the `scene` comparison: `n` mixed primitives (spheres,
//! boxes, capsules, cylinders with random sizes, rotations and positions)
//! plus four Stanford bunnies, and incoherent rays through them.
//!
//! The generator (xorshift64*, the same draws in the same order) is the one
//! of `raycast/benches/scene.rs`, so these are the benchmark's scenes. The
//! description is library-neutral ([`Item`]); `ours` and `parry` build each
//! library's objects from it. Poses are rotation + translation only (parry's
//! poses have no scale); the bunny's scale of 60 is applied to its vertices.

use glam::{vec3, Quat, Vec3};
use parry3d::shape::SharedShape;
use raycast::scene::SceneObject;
use raycast::{Affine3A, Capsule, Cuboid, Cylinder, Ray, Shape, Sphere, TriMesh};
use std::sync::Arc;

/// Bunnies per scene.
pub const BUNNIES: usize = 4;
/// The bunny's scale (the file is ~0.15 units wide).
pub const BUNNY_SCALE: f32 = 60.0;

/// xorshift64* (Vigna 2016).
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `[lo, hi)`.
    pub fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    /// Three uniform coordinates.
    pub fn v(&mut self, lo: f32, hi: f32) -> Vec3 {
        vec3(self.f(lo, hi), self.f(lo, hi), self.f(lo, hi))
    }
    /// Uniform on the unit sphere.
    pub fn unit(&mut self) -> Vec3 {
        loop {
            let p = self.v(-1.0, 1.0);
            let l = p.length();
            if (0.1..=1.0).contains(&l) {
                return p / l;
            }
        }
    }
    /// A random rotation (uniform axis, uniform angle).
    pub fn rotation(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.f(0.0, std::f32::consts::TAU))
    }
}

/// What an object is, in the parameters both libraries take.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Radius.
    Sphere(f32),
    /// Half extents.
    Cuboid(Vec3),
    /// Half height of the segment on +Y, radius.
    Capsule(f32, f32),
    /// Radius, half height.
    Cylinder(f32, f32),
    /// The shared bunny mesh (scaled by [`BUNNY_SCALE`]).
    Bunny,
}

/// One object: its kind and pose (local → world).
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// What it is.
    pub kind: Kind,
    /// Rotation.
    pub rotation: Quat,
    /// Translation.
    pub translation: Vec3,
}

/// Half the side of the cube the scene fills (as in the bench).
pub fn half_extent(n: usize) -> f32 {
    2.5 * (n as f32).cbrt()
}

/// The bench's `n` primitives and then the bunnies; object `i` has id `i`.
pub fn items(n: usize, seed: u64) -> Vec<Item> {
    let mut rng = Rng(seed);
    let h = half_extent(n);
    let mut out: Vec<Item> = (0..n)
        .map(|i| {
            let kind = match i % 4 {
                0 => Kind::Sphere(rng.f(0.3, 1.5)),
                1 => Kind::Cuboid(rng.v(0.2, 1.2)),
                2 => {
                    let hh = rng.f(0.2, 1.0);
                    Kind::Capsule(hh, rng.f(0.2, 0.8))
                }
                _ => {
                    let r = rng.f(0.2, 1.0);
                    Kind::Cylinder(r, rng.f(0.2, 1.2))
                }
            };
            Item { kind, rotation: rng.rotation(), translation: rng.v(-h, h) }
        })
        .collect();
    for _ in 0..BUNNIES {
        out.push(Item { kind: Kind::Bunny, rotation: rng.rotation(), translation: rng.v(-h, h) });
    }
    out
}

/// The bench's rays: origins uniform in the scene's cube, directions uniform.
pub fn rays(n: usize, count: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Rng(seed);
    let h = half_extent(n);
    (0..count).map(|_| Ray::new(rng.v(-h, h), rng.unit())).collect()
}

/// The bunny's vertices (scaled) and triangles, from `assets/meshes/bunny.obj`.
pub fn bunny() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/meshes/bunny.obj");
    let m = raycast::mesh::load(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (m.vertices().iter().map(|&v| v * BUNNY_SCALE).collect(), m.triangles().to_vec())
}

/// The items as raycast scene objects (one shared mesh).
pub fn ours(items: &[Item], mesh: &Arc<TriMesh>) -> Vec<SceneObject> {
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let shape: Shape = match it.kind {
                Kind::Sphere(r) => Sphere::new(r).into(),
                Kind::Cuboid(h) => Cuboid::new(h).into(),
                Kind::Capsule(hh, r) => Capsule::new(vec3(0.0, -hh, 0.0), vec3(0.0, hh, 0.0), r).into(),
                Kind::Cylinder(r, hh) => Cylinder::new(r, hh).into(),
                Kind::Bunny => Shape::Mesh(mesh.clone()),
            };
            SceneObject::new(
                shape,
                Affine3A::from_rotation_translation(it.rotation, it.translation),
                i as u32,
            )
        })
        .collect()
}

/// The items as parry shapes and poses (one shared mesh).
pub fn parry(items: &[Item], mesh: &SharedShape) -> (Vec<SharedShape>, Vec<parry3d::math::Pose>) {
    use crate::prims::pv;
    use parry3d::shape as ps;
    items
        .iter()
        .map(|it| {
            let shape = match it.kind {
                Kind::Sphere(r) => SharedShape::new(ps::Ball::new(r)),
                Kind::Cuboid(h) => SharedShape::new(ps::Cuboid::new(pv(h))),
                Kind::Capsule(hh, r) => SharedShape::new(ps::Capsule::new_y(hh, r)),
                Kind::Cylinder(r, hh) => SharedShape::new(ps::Cylinder::new(hh, r)),
                Kind::Bunny => mesh.clone(),
            };
            let q = it.rotation;
            let pose = parry3d::math::Pose::from_parts(
                pv(it.translation),
                parry3d::math::Rot3::from_xyzw(q.x, q.y, q.z, q.w),
            );
            (shape, pose)
        })
        .unzip()
}
