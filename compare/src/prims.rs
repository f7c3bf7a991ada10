//! The primitives the `primitives` and `exactness` binaries measure: one
//! parameter set per shape, built identically in raycast and in parry3d, the
//! common pose, and seeded samplers of interior points and of hit / miss rays.

use glam::{vec3, Affine3A, Quat, Vec3};
use parry3d::shape as ps;
use rand::Rng;
use raycast::{Capsule, Cone, Cuboid, Cylinder, Plane, Ray, Sphere, Torus, Triangle};

/// The shapes, with the parameters both libraries get.
#[derive(Clone, Copy, Debug)]
pub enum Prim {
    /// Radius.
    Sphere(f32),
    /// Half extents.
    Cuboid(Vec3),
    /// Radius, half height.
    Cylinder(f32, f32),
    /// Base radius, half height (apex at +y in both libraries).
    Cone(f32, f32),
    /// End points, radius.
    Capsule(Vec3, Vec3, f32),
    /// Vertices.
    Triangle(Vec3, Vec3, Vec3),
    /// Unit normal (the plane passes through the local origin: parry's
    /// `HalfSpace` has no offset, the pose places it).
    Plane(Vec3),
    /// Major and minor radius (parry has no torus).
    Torus(f32, f32),
}

/// The shapes in a fixed order, at unit-ish size.
pub fn all() -> [Prim; 8] {
    [
        Prim::Sphere(1.0),
        Prim::Cuboid(vec3(1.0, 0.6, 0.8)),
        Prim::Cylinder(0.7, 1.0),
        Prim::Cone(0.8, 1.0),
        Prim::Capsule(vec3(-0.5, -0.4, 0.1), vec3(0.5, 0.5, -0.2), 0.4),
        Prim::Triangle(vec3(-1.0, -0.8, 0.1), vec3(1.0, -0.6, -0.2), vec3(0.1, 1.0, 0.05)),
        Prim::Plane(vec3(0.2, 1.0, -0.3).normalize()),
        Prim::Torus(1.0, 0.3),
    ]
}

/// The pose both libraries place every shape with: a rotation of 0.7 rad
/// about (1, 2, 3) and a translation.
pub fn pose() -> (Quat, Vec3) {
    (Quat::from_axis_angle(vec3(1.0, 2.0, 3.0).normalize(), 0.7), vec3(1.5, -2.0, 0.75))
}

/// `pose()` as raycast's `world_from_local`.
pub fn world_from_local() -> Affine3A {
    let (q, t) = pose();
    Affine3A::from_rotation_translation(q, t)
}

/// `pose()` as parry's `Pose`.
pub fn parry_pose() -> parry3d::math::Pose {
    let (q, t) = pose();
    parry3d::math::Pose::from_parts(pv(t), parry3d::math::Rot3::from_xyzw(q.x, q.y, q.z, q.w))
}

/// glam 0.30 (raycast) → parry's vector type (glam 0.34).
pub fn pv(v: Vec3) -> parry3d::math::Vector {
    parry3d::math::Vector::new(v.x, v.y, v.z)
}

/// parry's vector type → glam 0.30.
pub fn gv(v: parry3d::math::Vector) -> Vec3 {
    vec3(v.x, v.y, v.z)
}

/// A raycast ray as a parry ray.
pub fn parry_ray(r: &Ray) -> parry3d::query::Ray {
    parry3d::query::Ray::new(pv(r.origin), pv(r.dir))
}

impl Prim {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Prim::Sphere(..) => "sphere",
            Prim::Cuboid(..) => "cuboid",
            Prim::Cylinder(..) => "cylinder",
            Prim::Cone(..) => "cone",
            Prim::Capsule(..) => "capsule",
            Prim::Triangle(..) => "triangle",
            Prim::Plane(..) => "plane",
            Prim::Torus(..) => "torus",
        }
    }

    /// The same shape scaled by `s` (the plane keeps its normal).
    pub fn scaled(self, s: f32) -> Prim {
        match self {
            Prim::Sphere(r) => Prim::Sphere(r * s),
            Prim::Cuboid(h) => Prim::Cuboid(h * s),
            Prim::Cylinder(r, h) => Prim::Cylinder(r * s, h * s),
            Prim::Cone(r, h) => Prim::Cone(r * s, h * s),
            Prim::Capsule(a, b, r) => Prim::Capsule(a * s, b * s, r * s),
            Prim::Triangle(a, b, c) => Prim::Triangle(a * s, b * s, c * s),
            Prim::Plane(n) => Prim::Plane(n),
            Prim::Torus(big, small) => Prim::Torus(big * s, small * s),
        }
    }

    /// The raycast shape, in its local frame.
    pub fn ours(&self) -> raycast::Shape {
        match *self {
            Prim::Sphere(r) => Sphere::new(r).into(),
            Prim::Cuboid(h) => Cuboid::new(h).into(),
            Prim::Cylinder(r, h) => Cylinder::new(r, h).into(),
            Prim::Cone(r, h) => Cone::new(r, h).into(),
            Prim::Capsule(a, b, r) => Capsule::new(a, b, r).into(),
            Prim::Triangle(a, b, c) => Triangle::new(a, b, c).into(),
            Prim::Plane(n) => Plane::new(n, Vec3::ZERO).into(),
            Prim::Torus(big, small) => Torus::new(big, small).into(),
        }
    }

    /// The parry shape, in its local frame (`None` for the torus).
    pub fn parry(&self) -> Option<parry3d::shape::SharedShape> {
        use parry3d::shape::SharedShape;
        Some(match *self {
            Prim::Sphere(r) => SharedShape::new(ps::Ball::new(r)),
            Prim::Cuboid(h) => SharedShape::new(ps::Cuboid::new(pv(h))),
            Prim::Cylinder(r, h) => SharedShape::new(ps::Cylinder::new(h, r)),
            Prim::Cone(r, h) => SharedShape::new(ps::Cone::new(h, r)),
            Prim::Capsule(a, b, r) => SharedShape::new(ps::Capsule::new(pv(a), pv(b), r)),
            Prim::Triangle(a, b, c) => SharedShape::new(ps::Triangle::new(pv(a), pv(b), pv(c))),
            Prim::Plane(n) => SharedShape::new(ps::HalfSpace::new(pv(n))),
            Prim::Torus(..) => return None,
        })
    }

    /// Centre and radius of a sphere around the shape (for the plane: a
    /// nominal unit region around the origin).
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        match *self {
            Prim::Plane(_) => (Vec3::ZERO, 1.0),
            _ => {
                let b = raycast::RayCast::local_bounds(&self.ours());
                (b.center(), 0.5 * b.size().length())
            }
        }
    }

    /// A point strictly inside the solid, at least 10 % of its size from the
    /// boundary (for the triangle: barycentrics ≥ 0.05; for the plane: a
    /// point on it within 4 of the origin).
    pub fn interior(&self, rng: &mut impl Rng) -> Vec3 {
        const IN: f32 = 0.9;
        match *self {
            Prim::Sphere(r) => IN * r * in_ball(rng),
            Prim::Cuboid(h) => IN * h * vec3(sym(rng), sym(rng), sym(rng)),
            Prim::Cylinder(r, hh) => {
                let y = IN * hh * sym(rng);
                in_disk(rng, IN * r, y)
            }
            Prim::Cone(r, hh) => {
                let y = IN * hh * sym(rng);
                in_disk(rng, IN * r * (hh - y) / (2.0 * hh), y)
            }
            Prim::Capsule(a, b, r) => a.lerp(b, rng.random::<f32>()) + IN * r * in_ball(rng),
            Prim::Triangle(a, b, c) => loop {
                let (u, v) = (rng.random_range(0.05..0.9), rng.random_range(0.05..0.9));
                if u + v <= 0.95 {
                    return a + u * (b - a) + v * (c - a);
                }
            },
            Prim::Plane(n) => {
                let (e1, e2) = n.any_orthonormal_pair();
                4.0 * (sym(rng) * e1 + sym(rng) * e2)
            }
            Prim::Torus(big, small) => {
                let phi = rng.random_range(0.0..std::f32::consts::TAU);
                let q = in_disk(rng, IN * small, 0.0);
                let ring = big + q.x;
                vec3(ring * phi.cos(), q.z, ring * phi.sin())
            }
        }
    }

    /// A local-frame ray that certainly hits: from 4 bounding radii away
    /// toward an interior point (target at `t = 1`). Triangle rays stay more
    /// than ~6° off its plane; plane rays start on the side the normal points
    /// to (outside parry's solid half-space), 0.5–4 away.
    pub fn hit_ray(&self, rng: &mut impl Rng) -> Ray {
        let (c, r) = self.bounding_sphere();
        match *self {
            Prim::Plane(n) => {
                let o = self.interior(rng) + rng.random_range(0.5..4.0) * n;
                Ray::new(o, self.interior(rng) - o)
            }
            Prim::Triangle(a, b, cc) => {
                let n = (b - a).cross(cc - a).normalize();
                loop {
                    let target = self.interior(rng);
                    let o = c + 4.0 * r * on_sphere(rng);
                    let ray = Ray::new(o, target - o);
                    if ray.dir.normalize().dot(n).abs() > 0.1 {
                        return ray;
                    }
                }
            }
            _ => {
                let target = self.interior(rng);
                let o = c + 4.0 * r * on_sphere(rng);
                Ray::new(o, target - o)
            }
        }
    }

    /// A local-frame ray that certainly misses: its line passes more than 1.2
    /// bounding radii from the centre (from `D = 4r` along `u` toward
    /// `s·r` along `w ⊥ u`, s ∈ [1.3, 2]: distance `D·s/√(D² + s²)`). Plane
    /// rays start on the normal's side and head away.
    pub fn miss_ray(&self, rng: &mut impl Rng) -> Ray {
        let (c, r) = self.bounding_sphere();
        match *self {
            Prim::Plane(n) => {
                let o = self.interior(rng) + rng.random_range(0.5..4.0) * n;
                let away = self.interior(rng) + rng.random_range(5.0..10.0) * n;
                Ray::new(o, away - o)
            }
            _ => {
                let u = on_sphere(rng);
                let w = Quat::from_axis_angle(u, rng.random_range(0.0..std::f32::consts::TAU))
                    * u.any_orthonormal_vector();
                let o = c + 4.0 * r * u;
                Ray::new(o, c + rng.random_range(1.3..2.0) * r * w - o)
            }
        }
    }

    /// `n` local-frame rays, half hit and half miss, shuffled: `(ray, hits)`.
    pub fn mixed_rays(&self, n: usize, rng: &mut impl Rng) -> Vec<(Ray, bool)> {
        let mut rays: Vec<(Ray, bool)> = (0..n)
            .map(|i| if i % 2 == 0 { (self.hit_ray(rng), true) } else { (self.miss_ray(rng), false) })
            .collect();
        for i in (1..rays.len()).rev() {
            rays.swap(i, rng.random_range(0..=i));
        }
        rays
    }
}

/// Uniform in [-1, 1).
pub fn sym(rng: &mut impl Rng) -> f32 {
    rng.random_range(-1.0..1.0)
}

/// Uniform in the unit ball.
pub fn in_ball(rng: &mut impl Rng) -> Vec3 {
    loop {
        let p = vec3(sym(rng), sym(rng), sym(rng));
        if p.length_squared() <= 1.0 {
            return p;
        }
    }
}

/// Uniform on the unit sphere.
pub fn on_sphere(rng: &mut impl Rng) -> Vec3 {
    loop {
        let p = in_ball(rng);
        let l = p.length();
        if l > 0.1 {
            return p / l;
        }
    }
}

/// Uniform in the disk of radius `r` in the XZ plane at height `y`.
pub fn in_disk(rng: &mut impl Rng, r: f32, y: f32) -> Vec3 {
    let a = rng.random_range(0.0..std::f32::consts::TAU);
    let rho = r * rng.random::<f32>().sqrt();
    vec3(rho * a.cos(), y, rho * a.sin())
}
