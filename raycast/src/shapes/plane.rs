//! Plane: derivation to be written with the kernel.

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic, positive};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// An infinite two-sided plane through `point` with unit `normal`.
/// Its part is [`Part::Face`]; the hit normal is the plane's own normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    normal: Vec3,
    point: Vec3,
}

impl Plane {
    /// The plane through `point` with the given normal (normalised here).
    ///
    /// # Errors
    /// [`ShapeError`] on `normal` if it is zero or not finite, on `point` if not finite.
    pub fn try_new(normal: Vec3, point: Vec3) -> Result<Self, ShapeError> {
        let n = finite_vec("normal", normal)?;
        let unit = n.normalize_or_zero();
        if unit == Vec3::ZERO {
            return Err(ShapeError::new(
                "normal",
                format!("must not be zero, got [{}, {}, {}]", n.x, n.y, n.z),
            ));
        }
        Ok(Self { normal: unit, point: finite_vec("point", point)? })
    }
    /// Like [`Plane::try_new`].
    ///
    /// # Panics
    /// With the error's message when the plane is refused.
    #[track_caller]
    pub fn new(normal: Vec3, point: Vec3) -> Self {
        or_panic(Self::try_new(normal, point))
    }
    /// The unit normal.
    pub fn normal(&self) -> Vec3 {
        self.normal
    }
    /// A point on the plane.
    pub fn point(&self) -> Vec3 {
        self.point
    }
}

impl RayCast for Plane {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB: kernel not written yet
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new() // STUB
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY)
    }
}
