//! [`ChunkedVoxels`]: an unbounded sparse voxel world, chunks of 16³ bits in
//! a hash map.
//!
//! A ray walks the cells with the exact supercover walk, but skips empty
//! space a chunk at a time: when the walk is in a cell whose chunk is absent,
//! it jumps to just before the chunk's exit. The exit time `T` is computed in
//! `f64` (slab exit of the chunk's box) and the walk restarts at an `f32`
//! `t_r < T` strictly (rounded down past the `f64` error bound), with `t_r`
//! after the current step. Every point of the line between the current step
//! and `T` lies in that chunk's closed box, and every cell it touches there
//! belongs to the chunk (the line cannot touch a neighbour's cell without
//! crossing the chunk's boundary first, which happens at `T` at the
//! earliest), so nothing solid is skipped; from `t_r` the exact walk
//! decides the crossing at `T` (edges and corners included) as if it had
//! never jumped. The cost is one restart per empty chunk crossed instead of
//! one step per cell.

use super::voxels::{clip_cells, round_down, VoxelHit};
use super::walk::{GridWalk, CELL_LIMIT};
use super::Grid;
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Ray, ShapeError};
use glam::{IVec3, Vec3};
use std::collections::HashMap;

/// log2 of the chunk edge in cells.
pub const CHUNK_BITS: u32 = 4;
/// Chunk edge in cells (16).
pub const CHUNK_SIZE: i32 = 1 << CHUNK_BITS;
const WORDS: usize = (CHUNK_SIZE * CHUNK_SIZE * CHUNK_SIZE / 64) as usize;

/// Jump over an empty chunk only when more than this many cells of it are
/// ahead: a restart costs about as much as a few dozen cell steps.
const SKIP_MIN_CELLS: f64 = 6.0;

/// One chunk: 16³ bits and how many are set.
#[derive(Clone, Debug, PartialEq)]
struct Chunk {
    bits: [u64; WORDS],
    count: u32,
}

/// An unbounded sparse voxel world on a [`Grid`]: cells grouped in chunks of
/// 16³, only non-empty chunks stored.
///
/// Answers like [`VoxelVolume`](super::VoxelVolume) (first solid cell, `t`,
/// face); long rays through empty space cost per chunk crossed, not per cell.
/// [`RayCast::cast_all`] returns the first hit only.
///
/// # Examples
/// ```
/// use raycast::grid::ChunkedVoxels;
/// use raycast::{vec3, IVec3, Interval, Part, Ray, RayCast};
/// let mut world = ChunkedVoxels::new(vec3(1.0, 1.0, 1.0), vec3(0.0, 0.0, 0.0));
/// world.set(IVec3::new(1000, 0, 0), true);
/// let hit = world.cast(&Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.cell), (999.5, Part::NegX, Some(IVec3::new(1000, 0, 0))));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkedVoxels {
    grid: Grid<3>,
    chunks: HashMap<IVec3, Box<Chunk>>,
    count: usize,
    /// Bounds (inclusive, in chunks) of every chunk ever stored.
    lo: IVec3,
    hi: IVec3,
}

#[inline(always)]
fn split(cell: IVec3) -> (IVec3, usize) {
    let key = cell >> CHUNK_BITS as i32;
    let r = cell & (CHUNK_SIZE - 1);
    (key, (r.x | r.y << CHUNK_BITS | r.z << (2 * CHUNK_BITS)) as usize)
}

impl ChunkedVoxels {
    /// An empty world on the grid (`cell_size`, `origin`).
    ///
    /// # Errors
    /// [`ShapeError`] for a bad `cell_size` or `origin` (see [`Grid::try_new`]).
    pub fn try_new(cell_size: Vec3, origin: Vec3) -> Result<Self, ShapeError> {
        Ok(Self {
            grid: Grid::<3>::try_new(cell_size, origin)?,
            chunks: HashMap::new(),
            count: 0,
            lo: IVec3::MAX,
            hi: IVec3::MIN,
        })
    }

    /// Like [`ChunkedVoxels::try_new`].
    ///
    /// # Panics
    /// With the error's message when the grid is refused.
    #[track_caller]
    pub fn new(cell_size: Vec3, origin: Vec3) -> Self {
        crate::error::or_panic(Self::try_new(cell_size, origin))
    }

    /// A world with `cells` solid.
    ///
    /// # Errors
    /// As [`ChunkedVoxels::try_new`].
    pub fn from_cells(
        cell_size: Vec3,
        origin: Vec3,
        cells: impl IntoIterator<Item = IVec3>,
    ) -> Result<Self, ShapeError> {
        let mut w = Self::try_new(cell_size, origin)?;
        for c in cells {
            w.set(c, true);
        }
        Ok(w)
    }

    /// The grid the cells live on.
    pub fn grid(&self) -> &Grid<3> {
        &self.grid
    }

    /// Number of solid cells.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no cell is solid.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of stored (non-empty) chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Whether `cell` is solid.
    #[inline]
    pub fn get(&self, cell: IVec3) -> bool {
        let (key, i) = split(cell);
        self.chunks.get(&key).is_some_and(|c| c.bits[i >> 6] & (1 << (i & 63)) != 0)
    }

    /// Makes `cell` solid or empty; returns false (and does nothing) for a
    /// cell beyond [`CELL_LIMIT`].
    pub fn set(&mut self, cell: IVec3, solid: bool) -> bool {
        if cell.min_element() < -CELL_LIMIT || cell.max_element() >= CELL_LIMIT {
            return false;
        }
        let (key, i) = split(cell);
        let (w, m) = (i >> 6, 1u64 << (i & 63));
        if solid {
            let chunk =
                self.chunks.entry(key).or_insert_with(|| Box::new(Chunk { bits: [0; WORDS], count: 0 }));
            if chunk.bits[w] & m == 0 {
                chunk.bits[w] |= m;
                chunk.count += 1;
                self.count += 1;
            }
            self.lo = self.lo.min(key);
            self.hi = self.hi.max(key);
        } else if let Some(chunk) = self.chunks.get_mut(&key) {
            if chunk.bits[w] & m != 0 {
                chunk.bits[w] &= !m;
                chunk.count -= 1;
                self.count -= 1;
                if chunk.count == 0 {
                    self.chunks.remove(&key);
                }
            }
        }
        true
    }

    /// Makes `cell` empty (same as `set(cell, false)`).
    pub fn clear(&mut self, cell: IVec3) {
        self.set(cell, false);
    }

    /// The first solid cell along `ray` within `range`.
    pub fn cast_cell(&self, ray: &Ray, range: Interval) -> Option<VoxelHit> {
        if self.count == 0 {
            return None;
        }
        let lo_cell = self.lo << CHUNK_BITS as i32;
        let hi_cell = (self.hi << CHUNK_BITS as i32) + (CHUNK_SIZE - 1);
        let range = clip_cells(&self.grid, ray, range, lo_cell, hi_cell)?;
        let mut walk = GridWalk::<3>::new(&self.grid, ray, range, true).max_steps(u32::MAX);
        // The chunk of the last lookup, cached (most steps stay in one chunk).
        let mut cached: (IVec3, Option<&Chunk>) = (IVec3::MAX, None);
        while let Some(step) = walk.next() {
            for (cell, face) in step.entries() {
                let (key, i) = split(IVec3::from_array(cell));
                if key != cached.0 {
                    cached = (key, self.chunks.get(&key).map(|c| &**c));
                }
                if cached.1.is_some_and(|c| c.bits[i >> 6] & (1 << (i & 63)) != 0) {
                    return Some(VoxelHit { cell: IVec3::from_array(cell), t: step.t, face });
                }
            }
            let (key, _) = split(step.cell());
            if key != cached.0 {
                cached = (key, self.chunks.get(&key).map(|c| &**c));
            }
            if cached.1.is_none() {
                if let Some(t_r) = self.skip_to(ray, key, step.t) {
                    walk = GridWalk::<3>::new(&self.grid, ray, Interval::new(t_r, range.max), true)
                        .max_steps(u32::MAX);
                }
            }
        }
        None
    }

    /// A restart time `t_r` strictly before the exit of `ray` from chunk `key`
    /// and after `t`, if the jump skips more than [`SKIP_MIN_CELLS`] cells.
    fn skip_to(&self, ray: &Ray, key: IVec3, t: f32) -> Option<f32> {
        // Exit time T of the chunk's box, in f64. Each plane and time has a
        // relative error of a few u (u = 2^-53) of |plane| + |o|, so
        // subtracting 8u·(|T| + max (|plane| + |o|)/|d|) gives a value < T.
        let mut t_exit = f64::INFINITY;
        let mut scale = 0.0f64;
        let mut cells_per_t = 0.0f64;
        for a in 0..3 {
            let d = f64::from(ray.dir[a]);
            if d == 0.0 {
                continue;
            }
            let size = f64::from(self.grid.cell_size[a]);
            let k = (key[a] + i32::from(d > 0.0)) * CHUNK_SIZE;
            let plane = f64::from(self.grid.origin[a]) + f64::from(k) * size;
            let o = f64::from(ray.origin[a]);
            t_exit = t_exit.min((plane - o) / d);
            scale = scale.max((plane.abs() + o.abs()) / d.abs());
            cells_per_t += d.abs() / size;
        }
        let t0 = f64::from(t);
        let worth_it = (t_exit - t0) * cells_per_t > SKIP_MIN_CELLS; // false for NaN
        if !worth_it {
            return None;
        }
        let bound = 8.0 * (f64::EPSILON / 2.0) * (t_exit.abs() + scale);
        let t_r = round_down(t_exit - bound);
        (f64::from(t_r) > t0 && f64::from(t_r) < t_exit).then_some(t_r)
    }
}

impl RayCast for ChunkedVoxels {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        Some(self.cast_cell(ray, range)?.to_hit(&self.grid, ray))
    }

    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.cast_cell(ray, range).is_some()
    }

    /// The first hit only (DESIGN defines no list of crossings for voxels).
    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        self.cast(ray, range).into_iter().collect()
    }

    fn local_bounds(&self) -> Aabb {
        if self.count == 0 {
            return Aabb::EMPTY;
        }
        let lo = self.grid.cell_bounds(self.lo << CHUNK_BITS as i32).min;
        let hi = self.grid.cell_bounds((self.hi << CHUNK_BITS as i32) + (CHUNK_SIZE - 1)).max;
        Aabb::new(lo, hi)
    }
}
