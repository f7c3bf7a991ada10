//! Grids and voxels (DESIGN §4): the ordered walk of the cells a ray or
//! segment passes through ([`GridWalk`], 2D and 3D), and voxel volumes that
//! answer which cell and which face a ray hits first ([`VoxelVolume`], dense;
//! [`ChunkedVoxels`], sparse and unbounded; [`first_solid`] for any storage),
//! one ray at a time or in batches (`cast_batch`, in parallel).
//!
//! A [`Grid`] has a `cell_size` per axis and an `origin`; cell `(i, j, k)`
//! covers `[origin + i·size, origin + (i+1)·size)` on each axis. Cells are
//! half-open, so a point on a boundary plane belongs to the cell on its
//! positive side. Ties (a line through a cell edge or corner) are decided
//! exactly for the given `f32` inputs; see [`walk`](GridWalk) for how.

mod batch;
mod certified;
mod chunk_store;
mod chunked;
mod dense;
mod exact;
mod lanes;
mod voxels;
mod walk;
#[cfg(target_arch = "x86_64")]
mod walk_avx512;

pub use chunked::{ChunkedVoxels, CHUNK_BITS, CHUNK_SIZE};
pub use dense::VoxelVolume;
pub use voxels::{first_solid, VoxelHit};
pub use walk::{Entries, GridWalk, Step, CELL_LIMIT, DEFAULT_MAX_STEPS};

use crate::error::or_panic;
use crate::{Aabb, ShapeError};
use glam::{IVec2, IVec3, Vec2, Vec3};

/// A regular grid: `cell_size` per axis and the `origin` of cell 0 (`N` = 2 or 3).
///
/// # Examples
/// ```
/// use raycast::grid::Grid;
/// use raycast::{vec3, IVec3};
/// let g = Grid::<3>::new(vec3(0.5, 1.0, 2.0), vec3(0.0, 0.0, -1.0));
/// assert_eq!(g.cell_at(vec3(0.5, -0.25, 1.0)), Some(IVec3::new(1, -1, 1)));
/// assert!(Grid::<3>::try_new(vec3(1.0, 0.0, 1.0), vec3(0.0, 0.0, 0.0)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid<const N: usize> {
    pub(crate) cell_size: [f32; N],
    pub(crate) origin: [f32; N],
}

impl<const N: usize> Grid<N> {
    /// A grid from arrays.
    ///
    /// # Errors
    /// [`ShapeError`] on `cell_size` unless every component is finite and > 0,
    /// and on `origin` unless every component is finite.
    pub fn try_from_arrays(cell_size: [f32; N], origin: [f32; N]) -> Result<Self, ShapeError> {
        if !cell_size.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(ShapeError::new("cell_size", format!("must be finite and > 0, got {cell_size:?}")));
        }
        if !origin.iter().all(|s| s.is_finite()) {
            return Err(ShapeError::new("origin", format!("must be finite, got {origin:?}")));
        }
        Ok(Self { cell_size, origin })
    }

    /// The cell size per axis.
    pub fn cell_size_array(&self) -> [f32; N] {
        self.cell_size
    }

    /// The origin (lower corner of cell 0).
    pub fn origin_array(&self) -> [f32; N] {
        self.origin
    }

    /// The cell containing `p`, exactly (half-open cells); `None` if `p` is
    /// not finite or the cell is beyond [`CELL_LIMIT`].
    pub fn cell_of_array(&self, p: [f32; N]) -> Option<[i32; N]> {
        let mut out = [0; N];
        for a in 0..N {
            if !p[a].is_finite() {
                return None;
            }
            out[a] = walk::start_cell(
                f64::from(self.origin[a]),
                f64::from(self.cell_size[a]),
                f64::from(p[a]),
                0.0,
                0.0,
                0.0,
            )?;
        }
        Some(out)
    }
}

impl Grid<3> {
    /// A 3D grid.
    ///
    /// # Errors
    /// See [`Grid::try_from_arrays`].
    pub fn try_new(cell_size: Vec3, origin: Vec3) -> Result<Self, ShapeError> {
        Self::try_from_arrays(cell_size.to_array(), origin.to_array())
    }

    /// Like [`Grid::<3>::try_new`](Grid::try_new).
    ///
    /// # Panics
    /// With the error's message when the grid is refused.
    #[track_caller]
    pub fn new(cell_size: Vec3, origin: Vec3) -> Self {
        or_panic(Self::try_new(cell_size, origin))
    }

    /// The cell size.
    pub fn cell_size(&self) -> Vec3 {
        Vec3::from_array(self.cell_size)
    }

    /// The origin.
    pub fn origin(&self) -> Vec3 {
        Vec3::from_array(self.origin)
    }

    /// The cell containing `p` (see [`Grid::cell_of_array`]).
    pub fn cell_at(&self, p: Vec3) -> Option<IVec3> {
        self.cell_of_array(p.to_array()).map(IVec3::from_array)
    }

    /// The box covered by `cell` (rounded to `f32`).
    pub fn cell_bounds(&self, cell: IVec3) -> Aabb {
        let lo = self.origin() + cell.as_vec3() * self.cell_size();
        Aabb::new(lo, lo + self.cell_size())
    }
}

impl Default for Grid<3> {
    /// Unit cells, cell 0 at the origin.
    fn default() -> Self {
        Self { cell_size: [1.0; 3], origin: [0.0; 3] }
    }
}

impl Grid<2> {
    /// A 2D grid.
    ///
    /// # Errors
    /// See [`Grid::try_from_arrays`].
    pub fn try_new(cell_size: Vec2, origin: Vec2) -> Result<Self, ShapeError> {
        Self::try_from_arrays(cell_size.to_array(), origin.to_array())
    }

    /// Like [`Grid::<2>::try_new`](Grid::try_new).
    ///
    /// # Panics
    /// With the error's message when the grid is refused.
    #[track_caller]
    pub fn new(cell_size: Vec2, origin: Vec2) -> Self {
        or_panic(Self::try_new(cell_size, origin))
    }

    /// The cell size.
    pub fn cell_size(&self) -> Vec2 {
        Vec2::from_array(self.cell_size)
    }

    /// The origin.
    pub fn origin(&self) -> Vec2 {
        Vec2::from_array(self.origin)
    }

    /// The cell containing `p` (see [`Grid::cell_of_array`]).
    pub fn cell_at(&self, p: Vec2) -> Option<IVec2> {
        self.cell_of_array(p.to_array()).map(IVec2::from_array)
    }
}

impl Default for Grid<2> {
    /// Unit cells, cell 0 at the origin.
    fn default() -> Self {
        Self { cell_size: [1.0; 2], origin: [0.0; 2] }
    }
}

/// Deterministic xorshift integers below `n` from `seed`, for tests.
#[cfg(test)]
pub(crate) fn test_ints(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}
