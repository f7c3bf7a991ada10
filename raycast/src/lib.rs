//! # raycast
//!
//! Exact, fast ray casting against primitives, triangle meshes, grids, voxel
//! volumes and scenes.
//!
//! ```
//! use raycast::{vec3, Interval, Part, Ray, RayCast, Sphere};
//! let ball = Sphere::new(1.0);
//! let hit = ball.cast(&Ray::new(vec3(5.0, 0.0, 0.0), vec3(-1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
//! assert_eq!((hit.t, hit.point, hit.part), (4.0, vec3(1.0, 0.0, 0.0), Part::Surface));
//! ```
//!
//! # Conventions
//! * A ray is `origin + t * dir`. `dir` is never normalised, so `t` is in units
//!   of `dir`; a segment `a → b` is the ray `(a, b - a)` over `t ∈ [0, 1]`.
//! * Every query takes an [`Interval`] `t_min ..= t_max`; both ends count.
//!   [`Interval::FORWARD`] is `[0, +∞]`.
//! * Shapes live in a local frame: centred at the origin, round shapes on the
//!   +Y axis. [`Transformed`] places any shape with an affine map; `t` is the
//!   same in both frames.
//! * [`Hit::normal`] is unit length and outward, never flipped toward the ray;
//!   `front_face == dir.dot(normal) < 0`. A ray starting inside a solid hits
//!   its boundary on the way out (`front_face == false`).
//! * Touching counts: tangent rays and rays through edges and vertices hit.
//! * Degenerate input (zero or non-finite `dir`, NaN anywhere) is a miss, never
//!   a panic or a NaN. Invalid shapes are refused by `try_new` with a
//!   [`ShapeError`] naming the field and the value; `new` panics with the same
//!   message.
#![deny(missing_docs)]
// `!(x >= 0.0)` is deliberate throughout: unlike `x < 0.0` it is also true for
// NaN, which is how degenerate input turns into a miss instead of a NaN answer.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod aabb;
mod batch;
pub mod bvh;
mod error;
pub mod grid;
mod hit;
pub mod mesh;
pub mod numeric;
mod order;
mod pages;
mod ray;
pub mod scene;
pub mod shapes;

pub use aabb::Aabb;
pub use error::ShapeError;
pub use grid::{ChunkedVoxels, Grid, GridWalk, Step, VoxelVolume};
pub use hit::{Hit, Part, Span};
pub use mesh::TriMesh;
pub use order::coherent_order;
pub use ray::{Interval, Ray};
pub use scene::{Filter, ObjectKey, Scene, SceneObject, Verdict};
pub use shapes::{
    affine_from_trs, Capsule, Cone, ConvexSolid, Cuboid, Cylinder, Plane, RayCast, Shape, Solid, Sphere,
    Torus, Transformed, Triangle,
};

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

pub use glam::{self, vec2, vec3, Affine3A, IVec3, Mat3, Quat, Vec2, Vec3};
