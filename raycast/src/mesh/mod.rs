//! Triangle meshes with a BVH (STUB: filled in by the mesh work).

use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Ray, ShapeError};
use glam::Vec3;

/// An indexed triangle mesh.
#[derive(Clone, Debug)]
pub struct TriMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// A mesh from vertices and triangle indices.
    ///
    /// # Errors
    /// [`ShapeError`] naming the triangle whose index is out of range.
    pub fn try_new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<Self, ShapeError> {
        Ok(Self { vertices, triangles })
    }
    /// The vertices.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }
    /// The triangles.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }
}

impl RayCast for TriMesh {
    fn cast(&self, _ray: &Ray, _range: Interval) -> Option<Hit> {
        None
    }
    fn cast_all(&self, _ray: &Ray, _range: Interval) -> Vec<Hit> {
        Vec::new()
    }
    fn local_bounds(&self) -> Aabb {
        Aabb::from_points(self.vertices.iter().copied())
    }
}
