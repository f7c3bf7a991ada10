//! Triangle: derivation to be written with the kernel (watertight, Woop–Benthin–Wald 2013).

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic};
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use glam::{Vec2, Vec3};

/// A triangle `a b c`, two-sided unless back-face culling is on. Its normal is
/// `normalize((b - a) × (c - a))`; hits carry `uv` with
/// `point = (1-u-v)·a + u·b + v·c`. A degenerate triangle is never hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// First vertex.
    pub a: Vec3,
    /// Second vertex.
    pub b: Vec3,
    /// Third vertex.
    pub c: Vec3,
    /// When true, rays arriving from behind (`dir · normal >= 0`) do not hit.
    pub cull_back_faces: bool,
}

impl Triangle {
    /// The triangle `a b c` (degenerate triangles are allowed and never hit).
    ///
    /// # Errors
    /// [`ShapeError`] on `a`, `b` or `c` unless finite.
    pub fn try_new(a: Vec3, b: Vec3, c: Vec3) -> Result<Self, ShapeError> {
        Ok(Self {
            a: finite_vec("a", a)?,
            b: finite_vec("b", b)?,
            c: finite_vec("c", c)?,
            cull_back_faces: false,
        })
    }
    /// Like [`Triangle::try_new`].
    ///
    /// # Panics
    /// With the error's message when a vertex is not finite.
    #[track_caller]
    pub fn new(a: Vec3, b: Vec3, c: Vec3) -> Self {
        or_panic(Self::try_new(a, b, c))
    }
}

/// The kernel's answer: `t` and the barycentrics `(u, v)` of `b` and `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleHit {
    /// Ray parameter.
    pub t: f32,
    /// Weight of `b`.
    pub u: f32,
    /// Weight of `c`.
    pub v: f32,
}

/// Watertight ray–triangle test (STUB).
pub fn ray_triangle(
    _ray: &Ray,
    _a: Vec3,
    _b: Vec3,
    _c: Vec3,
    _range: Interval,
    _cull_back_faces: bool,
) -> Option<TriangleHit> {
    None
}

impl RayCast for Triangle {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB
    }
    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        self.cast(ray, range).into_iter().collect()
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::from_points([self.a, self.b, self.c])
    }
}
