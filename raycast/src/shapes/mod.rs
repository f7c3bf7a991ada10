//! The primitives, the [`RayCast`] trait they share, placement by an affine
//! map ([`Transformed`]) and the [`Shape`] enum that stores any of them.
//!
//! Every shape lives in its own file: the struct and its invariants, the
//! constructors, the ray kernel with its derivation, the trait impls, helpers,
//! and the tests at the bottom.

mod capsule;
mod cone;
mod cuboid;
mod cylinder;
mod plane;
mod shape_enum;
pub(crate) mod sphere;
mod torus;
mod transformed;
pub(crate) mod triangle;

pub use capsule::Capsule;
pub use cone::Cone;
pub use cuboid::Cuboid;
pub use cylinder::Cylinder;
pub use plane::Plane;
pub use shape_enum::Shape;
pub use sphere::Sphere;
pub use torus::Torus;
pub use transformed::{affine_from_trs, Transformed};
pub use triangle::{ray_triangle, ShearedRay, Triangle, TriangleHit};
// The pieces of a triangle hit, shared with the mesh.
#[allow(unused_imports)]
pub(crate) use triangle::{face_normal, triangle_hit};

use crate::{Aabb, Hit, Interval, Ray, Span};
use glam::Vec3;

/// The queries every shape, mesh, volume and scene answers.
///
/// All take the ray and an inclusive parameter range `[t_min, t_max]`
/// ([`Interval::FORWARD`] is the usual `[0, +∞]`). A degenerate ray
/// ([`Ray::is_valid`] false) or an empty range gives no hit.
///
/// # Examples
/// ```
/// use raycast::{vec3, Interval, Part, Ray, RayCast, Sphere};
/// let ball = Sphere::new(1.0);
/// let ray = Ray::new(vec3(5.0, 0.0, 0.0), vec3(-1.0, 0.0, 0.0));
/// let hit = ball.cast(&ray, Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.front_face), (4.0, Part::Surface, true));
/// assert!(ball.hits(&ray, Interval::new(0.0, 4.0)));   // both ends count
/// assert!(!ball.hits(&ray, Interval::new(0.0, 3.9)));
/// assert_eq!(ball.cast_all(&ray, Interval::FORWARD).len(), 2);
/// ```
pub trait RayCast {
    /// The first crossing with `t` in `range`, with normal, part and the rest.
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit>;

    /// `cast` without its final branch: whether there is a hit, and the hit
    /// `cast` would return. When there is none the hit's fields are
    /// unspecified (possibly NaN) and must not be reported; computing it never
    /// panics.
    ///
    /// Composite queries ([`Transformed`]) finish the hit of the inner shape
    /// and choose between it and "no hit" only at the very end, so that a
    /// random hit-or-miss costs no mispredicted branch. The default calls
    /// `cast`.
    #[inline]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        match self.cast(ray, range) {
            Some(h) => (true, h),
            None => (false, Hit::NONE),
        }
    }

    /// Whether any crossing has `t` in `range` (occlusion; may stop early).
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.cast(ray, range).is_some()
    }

    /// Every crossing with `t` in `range`, sorted by `t`. A tangent touch is
    /// one crossing.
    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit>;

    /// Bounds of the shape in its own frame (infinite for a plane).
    fn local_bounds(&self) -> Aabb;

    /// The sphere this shape is, if it is one: [`Transformed`] casts a
    /// sphere placed by a similarity in the world frame, where its rotation
    /// does not matter. For the crate's own shapes; the default (`None`) is
    /// right for every other.
    #[doc(hidden)]
    #[inline(always)]
    fn as_sphere(&self) -> Option<&Sphere> {
        None
    }

    /// The plane this shape is, if it is one: [`Transformed`] casts a placed
    /// plane in the world frame (a plane under an affine map is a plane).
    /// For the crate's own shapes, like [`RayCast::as_sphere`].
    #[doc(hidden)]
    #[inline(always)]
    fn as_plane(&self) -> Option<&Plane> {
        None
    }

    /// The triangle this shape is, if it is one: [`Transformed`] casts a
    /// placed triangle in the world frame (an affine image of a triangle is
    /// a triangle). For the crate's own shapes, like [`RayCast::as_sphere`].
    #[doc(hidden)]
    #[inline(always)]
    fn as_triangle(&self) -> Option<&Triangle> {
        None
    }

    /// The capsule this shape is, if it is one: [`Transformed`] casts a
    /// capsule placed by a similarity in the world frame (its image is a
    /// capsule). For the crate's own shapes, like [`RayCast::as_sphere`].
    #[doc(hidden)]
    #[inline(always)]
    fn as_capsule(&self) -> Option<&Capsule> {
        None
    }
}

/// A closed solid: it has an inside.
pub trait Solid: RayCast {
    /// True if `p` is inside or on the boundary.
    fn contains(&self, p: Vec3) -> bool;
}

/// A convex closed solid: the line through a ray is inside it over one interval.
pub trait ConvexSolid: Solid {
    /// Where the infinite line through `ray` enters and leaves the solid
    /// (`t_enter` may be negative); `None` if the line misses.
    /// A tangent line gives `enter.t == exit.t`.
    fn span(&self, ray: &Ray) -> Option<Span>;
}
