//! [`Shape`]: one type for any shape, so mixed shapes can be stored together
//! and queried without boxing or dynamic dispatch.

use crate::grid::{ChunkedVoxels, VoxelVolume};
use crate::mesh::TriMesh;
use crate::shapes::{Capsule, Cone, ConvexSolid, Cuboid, Cylinder, Plane, RayCast, Sphere, Torus, Triangle};
use crate::{Aabb, Hit, Interval, Ray, Span};
use std::sync::Arc;

/// Any shape of the library, in its own frame. A mesh is held by [`Arc`] so
/// that many placements share one copy (instancing).
///
/// # Examples
/// ```
/// use raycast::{vec3, Cuboid, Interval, Ray, RayCast, Shape, Sphere};
/// let shapes = [Shape::from(Sphere::new(1.0)), Shape::from(Cuboid::new(vec3(1.0, 2.0, 3.0)))];
/// let ray = Ray::new(vec3(-5.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0));
/// let ts: Vec<f32> = shapes.iter().map(|s| s.cast(&ray, Interval::FORWARD).unwrap().t).collect();
/// assert_eq!(ts, [4.0, 4.0]);
/// ```
#[derive(Clone, Debug)]
pub enum Shape {
    /// A [`Sphere`].
    Sphere(Sphere),
    /// A [`Cuboid`].
    Cuboid(Cuboid),
    /// A [`Cylinder`].
    Cylinder(Cylinder),
    /// A [`Cone`].
    Cone(Cone),
    /// A [`Capsule`].
    Capsule(Capsule),
    /// A [`Triangle`].
    Triangle(Triangle),
    /// A [`Plane`].
    Plane(Plane),
    /// A [`Torus`].
    Torus(Torus),
    /// A shared [`TriMesh`].
    Mesh(Arc<TriMesh>),
    /// A shared dense [`VoxelVolume`].
    Voxels(Arc<VoxelVolume>),
    /// A shared sparse, chunked voxel world ([`ChunkedVoxels`]).
    VoxelWorld(Arc<ChunkedVoxels>),
}

macro_rules! each_shape {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Shape::Sphere($s) => $body,
            Shape::Cuboid($s) => $body,
            Shape::Cylinder($s) => $body,
            Shape::Cone($s) => $body,
            Shape::Capsule($s) => $body,
            Shape::Triangle($s) => $body,
            Shape::Plane($s) => $body,
            Shape::Torus($s) => $body,
            Shape::Mesh($s) => $body,
            Shape::Voxels($s) => $body,
            Shape::VoxelWorld($s) => $body,
        }
    };
}

impl Shape {
    /// True for the convex solids that answer [`Shape::span`]: sphere,
    /// cuboid, cylinder, cone and capsule.
    pub fn is_convex_solid(&self) -> bool {
        matches!(
            self,
            Shape::Sphere(_) | Shape::Cuboid(_) | Shape::Cylinder(_) | Shape::Cone(_) | Shape::Capsule(_)
        )
    }

    /// Enter and exit of the line through `ray` (see [`ConvexSolid::span`]);
    /// `None` on a miss and for shapes that are not convex solids.
    pub fn span(&self, ray: &Ray) -> Option<Span> {
        match self {
            Shape::Sphere(s) => s.span(ray),
            Shape::Cuboid(s) => s.span(ray),
            Shape::Cylinder(s) => s.span(ray),
            Shape::Cone(s) => s.span(ray),
            Shape::Capsule(s) => s.span(ray),
            _ => None,
        }
    }
}

// `each_shape!` is a match with one arm per variant: it keeps the delegation
// below to one line per query instead of eleven identical arms each.
impl RayCast for Shape {
    #[inline]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        each_shape!(self, s => s.cast(ray, range))
    }
    #[inline]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        each_shape!(self, s => s.cast_candidate(ray, range))
    }
    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        each_shape!(self, s => s.hits(ray, range))
    }
    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        each_shape!(self, s => s.cast_all(ray, range))
    }
    fn local_bounds(&self) -> Aabb {
        each_shape!(self, s => s.local_bounds())
    }
    #[inline(always)]
    fn as_sphere(&self) -> Option<&Sphere> {
        match self {
            Shape::Sphere(s) => Some(s),
            _ => None,
        }
    }
    #[inline(always)]
    fn as_plane(&self) -> Option<&Plane> {
        match self {
            Shape::Plane(p) => Some(p),
            _ => None,
        }
    }
    #[inline(always)]
    fn as_triangle(&self) -> Option<&Triangle> {
        match self {
            Shape::Triangle(t) => Some(t),
            _ => None,
        }
    }
    /// `None` for a capsule too: its world form is boxed (see
    /// `Transformed`'s `World`), and a `Shape` is what scenes store, where
    /// that box would be one more cache line per candidate tested (on the
    /// 100k-object comparison scene, −9 % cast and −11 % hits in
    /// alternating runs). A `Transformed<Capsule>` keeps the world form.
    #[inline(always)]
    fn as_capsule(&self) -> Option<&Capsule> {
        None
    }
}

macro_rules! from_shape {
    ($($t:ident),*) => {$(
        impl From<$t> for Shape {
            fn from(s: $t) -> Self {
                Shape::$t(s)
            }
        }
    )*};
}
from_shape!(Sphere, Cuboid, Cylinder, Cone, Capsule, Triangle, Plane, Torus);

impl From<Arc<TriMesh>> for Shape {
    fn from(m: Arc<TriMesh>) -> Self {
        Shape::Mesh(m)
    }
}

impl From<TriMesh> for Shape {
    fn from(m: TriMesh) -> Self {
        Shape::Mesh(Arc::new(m))
    }
}

impl From<VoxelVolume> for Shape {
    fn from(v: VoxelVolume) -> Self {
        Shape::Voxels(Arc::new(v))
    }
}

impl From<ChunkedVoxels> for Shape {
    fn from(v: ChunkedVoxels) -> Self {
        Shape::VoxelWorld(Arc::new(v))
    }
}
