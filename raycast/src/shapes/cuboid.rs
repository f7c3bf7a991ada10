//! Cuboid: derivation to be written with the kernel.

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic, positive};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// An axis-aligned box centred at the origin with the given half extents.
/// Parts: the faces [`Part::PosX`] ... [`Part::NegZ`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    half_extents: Vec3,
}

impl Cuboid {
    /// A box with the given half extents.
    ///
    /// # Errors
    /// [`ShapeError`] on `half_extents` unless every component is finite and > 0.
    pub fn try_new(half_extents: Vec3) -> Result<Self, ShapeError> {
        for (i, v) in half_extents.to_array().into_iter().enumerate() {
            positive(&format!("half_extents[{i}]"), v)?;
        }
        Ok(Self { half_extents })
    }
    /// Like [`Cuboid::try_new`].
    ///
    /// # Panics
    /// With the error's message when the box is refused.
    #[track_caller]
    pub fn new(half_extents: Vec3) -> Self {
        or_panic(Self::try_new(half_extents))
    }
    /// The half extents.
    pub fn half_extents(&self) -> Vec3 {
        self.half_extents
    }
}

impl RayCast for Cuboid {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB: kernel not written yet
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new() // STUB
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(self.half_extents)
    }
}

impl Solid for Cuboid {
    fn contains(&self, _p: Vec3) -> bool {
        false // STUB
    }
}

impl ConvexSolid for Cuboid {
    fn span(&self, _ray: &Ray) -> Option<Span> {
        None // STUB
    }
}
