//! Capsule: derivation to be written with the kernel.

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic, positive};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// The points within `radius` of the segment `a`–`b` (free end points;
/// `a == b` is a sphere). Parts: [`Part::Side`], [`Part::CapA`], [`Part::CapB`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    a: Vec3,
    b: Vec3,
    radius: f32,
}

impl Capsule {
    /// A capsule around the segment `a`–`b`.
    ///
    /// # Errors
    /// [`ShapeError`] on `a` or `b` unless finite, on `radius` unless finite and > 0.
    pub fn try_new(a: Vec3, b: Vec3, radius: f32) -> Result<Self, ShapeError> {
        Ok(Self { a: finite_vec("a", a)?, b: finite_vec("b", b)?, radius: positive("radius", radius)? })
    }
    /// Like [`Capsule::try_new`].
    ///
    /// # Panics
    /// With the error's message when the capsule is refused.
    #[track_caller]
    pub fn new(a: Vec3, b: Vec3, radius: f32) -> Self {
        or_panic(Self::try_new(a, b, radius))
    }
    /// The end point `a`.
    pub fn a(&self) -> Vec3 {
        self.a
    }
    /// The end point `b`.
    pub fn b(&self) -> Vec3 {
        self.b
    }
    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
}

impl RayCast for Capsule {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB: kernel not written yet
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new() // STUB
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::new(
            self.a.min(self.b) - Vec3::splat(self.radius),
            self.a.max(self.b) + Vec3::splat(self.radius),
        )
    }
}

impl Solid for Capsule {
    fn contains(&self, _p: Vec3) -> bool {
        false // STUB
    }
}

impl ConvexSolid for Capsule {
    fn span(&self, _ray: &Ray) -> Option<Span> {
        None // STUB
    }
}
