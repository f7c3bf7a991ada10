//! Torus: derivation to be written with the kernel.

#![allow(unused_imports)]
use crate::error::{finite_vec, or_panic, positive};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// A torus in the local XZ plane around the +Y axis: the points at distance
/// `minor_radius` from the circle of radius `major_radius`. Part: [`Part::Surface`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Torus {
    major_radius: f32,
    minor_radius: f32,
}

impl Torus {
    /// A torus with the given radii.
    ///
    /// # Errors
    /// [`ShapeError`] unless both radii are finite and > 0 and
    /// `minor_radius <= major_radius`.
    pub fn try_new(major_radius: f32, minor_radius: f32) -> Result<Self, ShapeError> {
        let major = positive("major_radius", major_radius)?;
        let minor = positive("minor_radius", minor_radius)?;
        if minor > major {
            return Err(ShapeError::new(
                "minor_radius",
                format!("must be <= major_radius ({major}), got {minor}"),
            ));
        }
        Ok(Self { major_radius: major, minor_radius: minor })
    }
    /// Like [`Torus::try_new`].
    ///
    /// # Panics
    /// With the error's message when the torus is refused.
    #[track_caller]
    pub fn new(major_radius: f32, minor_radius: f32) -> Self {
        or_panic(Self::try_new(major_radius, minor_radius))
    }
    /// Radius of the centre circle.
    pub fn major_radius(&self) -> f32 {
        self.major_radius
    }
    /// Radius of the tube.
    pub fn minor_radius(&self) -> f32 {
        self.minor_radius
    }
}

impl RayCast for Torus {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None // STUB: kernel not written yet
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new() // STUB
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::new(
            self.major_radius + self.minor_radius,
            self.minor_radius,
            self.major_radius + self.minor_radius,
        ))
    }
}

impl Solid for Torus {
    fn contains(&self, _p: Vec3) -> bool {
        false // STUB
    }
}
