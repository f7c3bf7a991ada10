//! Cone: derivation to be written with the kernel.

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic, positive};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// A finite cone on the local +Y axis: apex at `y = +half_height`, base disk
/// of the given radius at `y = -half_height`. Parts: [`Part::Side`], [`Part::Base`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    radius: f32,
    half_height: f32,
}

impl Cone {
    /// A cone of the given base radius and half height.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` or `half_height` unless finite and > 0.
    pub fn try_new(radius: f32, half_height: f32) -> Result<Self, ShapeError> {
        Ok(Self { radius: positive("radius", radius)?, half_height: positive("half_height", half_height)? })
    }
    /// Like [`Cone::try_new`].
    ///
    /// # Panics
    /// With the error's message when the cone is refused.
    #[track_caller]
    pub fn new(radius: f32, half_height: f32) -> Self {
        or_panic(Self::try_new(radius, half_height))
    }
    /// The base radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
    /// Half the height.
    pub fn half_height(&self) -> f32 {
        self.half_height
    }
}

impl RayCast for Cone {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB: kernel not written yet
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new() // STUB
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::new(self.radius, self.half_height, self.radius))
    }
}

impl Solid for Cone {
    fn contains(&self, _p: Vec3) -> bool {
        false // STUB
    }
}

impl ConvexSolid for Cone {
    fn span(&self, _ray: &Ray) -> Option<Span> {
        None // STUB
    }
}
