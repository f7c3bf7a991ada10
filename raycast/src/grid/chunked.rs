//! [`ChunkedVoxels`]: an unbounded sparse voxel world, chunks of 16³ bits
//! found by key.
//!
//! # Layout
//! A chunk is 4³ bricks of 4³ cells, one `u64` per brick (bit
//! `x | y<<2 | z<<4` within the brick, brick `bx | by<<2 | bz<<4` within the
//! chunk), so an empty brick is a zero word. Chunks are keyed by
//! `cell >> 4` in a hash map with a small multiplicative hash
//! ([`KeyHasher`]) and, while the chunks fill enough of their bounding box,
//! also in a flat directory over that box (`chunk_store.rs`: an index and a
//! load per lookup; casts were 5–10 % faster with it).
//!
//! # Cast
//! While the chunks have a directory, the certified walk (`certified.rs`,
//! shared with the dense volume) runs first; where it cannot certify a
//! decision (or gives up after 64 brick steps), the exact walk below
//! answers.
//!
//! A ray is clipped to the box of the cells ever made solid (grown by half
//! a cell, as the dense volume's), then walked with the exact supercover
//! walk driven in place ([`GridWalk::drive_with`]) with the last chunk
//! looked up cached (in registers, with a test for a new chunk that costs
//! no lookup within the chunk: see `cast_cell`). Empty space is skipped on two levels
//! with [`GridWalk::skip_empty`], which walks a coarse grid exactly (a
//! coarse DDA whose planes are planes of the cell grid, with the walk's own
//! tie filter) and then moves the cell walk to just before the first block
//! that is not empty:
//! - a cell in an absent chunk: walk the chunk grid (one hash lookup per
//!   chunk crossed) until a stored chunk, so a long ray through empty space
//!   costs per chunk, not per cell;
//! - a cell in an empty brick of a stored chunk: walk the brick grid until a
//!   non-empty brick (at the first empty brick, as the dense volume does:
//!   measured cheapest there and here).
//!
//! The coarse walks never decide a tie: where two block crossings are within
//! rounding of each other they stop before it and the exact cell walk takes
//! it, so edges and corners of chunks and bricks come out as in the plain walk.

use super::certified::{self, BrickWords, Cells, CertConsts, Certified};
use super::chunk_store::{Chunk, ChunkStore, DirWords, WORDS};
use super::voxels::{best_compiled, hit_in, Found, Isa, VoxelHit};
use super::walk::Flow;
use super::walk::{BoxClip, GridWalk, Step, CELL_LIMIT};
use super::Grid;
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Ray, ShapeError};
use glam::{IVec3, Vec3};
use std::hash::Hasher;

/// log2 of the chunk edge in cells.
pub const CHUNK_BITS: u32 = 4;
/// Chunk edge in cells (16).
pub const CHUNK_SIZE: i32 = 1 << CHUNK_BITS;
// A chunk holds 4³ bricks of 64 bits (`chunk_store::WORDS`).
const _: () = assert!(WORDS == (CHUNK_SIZE * CHUNK_SIZE * CHUNK_SIZE / 64) as usize);

/// Hasher for chunk keys (three `i32` from the world's own coordinates, not
/// adversarial): each word is mixed in by a rotate, xor and multiply by the
/// 64-bit golden ratio, and `finish` folds the high bits down so that both
/// the table's bucket bits (low) and tag bits (high) vary. A few cycles
/// instead of SipHash's few dozen, which matters when a ray looks up one
/// chunk per chunk crossed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    #[inline(always)]
    fn mix(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.mix(u64::from(b));
        }
    }

    #[inline(always)]
    fn write_i32(&mut self, v: i32) {
        self.mix(u64::from(v as u32));
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

/// The state [`ChunkedVoxels::cast_cell`] carries from step to step (see there).
#[derive(Clone, Copy)]
struct ChunkWalk<'a> {
    key: [i32; 3],
    chunk: Option<&'a Chunk>,
    last: u32,
    found: (u8, f64, [i32; 3]),
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
    chunks: ChunkStore,
    count: usize,
    /// Bounds (inclusive, in cells) of every cell ever made solid: grown by
    /// `set`, never shrunk by a clear (conservative: every solid cell lies
    /// within). Casts clip to these rather than to the chunks' cells: a ray
    /// then starts at the solid cells, not up to 15 empty cells before them
    /// (measured on the peer comparison's height field, y 0..57 of chunks
    /// 0..64: 20% fewer instructions per ray). The walk is exact wherever
    /// it starts, so the cells and faces found are the same; `t` is rounded
    /// from the walk's approximate crossing times, which depend on where it
    /// starts: on 10^6 test casts it came out the same but for the sign of
    /// a zero `t` in 6, now that of the dense volume (which clips to the
    /// same box).
    cell_lo: IVec3,
    cell_hi: IVec3,
    /// The clip's constants for the cells `cell_lo ..= cell_hi` (kept up to
    /// date by `set`: every cast clips to that box, and they depend on it
    /// and the grid only).
    clip: BoxClip,
    /// The certified cast's constants for that box (kept with `clip`).
    cert: ChunkCert,
}

/// The certified cast's constants for the cells `lo ..= hi` of a chunked
/// world: its packed cells counted from `base`, the chunk corner at most
/// 16 cells below `lo − 4` (so a packed cell's fields hold its chunk and
/// brick: `f >> 4` and `f >> 2 & 3`, counted from chunk `key0`), and its
/// walks within `4·pdims` cells of it (up to the brick of `hi + 1`).
#[derive(Clone, Debug, PartialEq)]
struct ChunkCert {
    consts: CertConsts,
    key0: [i32; 3],
    cells: [u32; 3],
    /// The chunk directory's strides the constants' moves were made with
    /// ([`ChunkStore::dir_strides`]).
    strides: [usize; 3],
}

impl ChunkCert {
    /// For the cells `lo ..= hi`, the directory's index moved by `strides`.
    fn new(lo: [i32; 3], hi: [i32; 3], strides: [usize; 3]) -> Self {
        // Cells within ±2^24 (`set`): no overflow.
        let key0 = lo.map(|c| (c - 4) >> CHUNK_BITS);
        let base = key0.map(|k| k << CHUNK_BITS);
        let pdims: [u32; 3] = std::array::from_fn(|a| ((hi[a] + 1 - base[a]) >> 2) as u32 + 1);
        Self { consts: CertConsts::new(base, pdims, strides), key0, cells: pdims.map(|p| 4 * p), strides }
    }
}

/// The chunked world's bricks for the certified walk, read from the
/// chunk the walk is in, whose directory index the walk carries: a step
/// into the next chunk moves it by the directory's stride on that axis
/// (the certified constants' moves, made with those strides), where
/// looking the chunk up from its key took the key's fields, three bounds
/// and two multiplies. A step of the bricks' walk moves the index (by a
/// conditional move, no branch, as such steps change chunk often: one in
/// four on an axis) and asks the occupancy beside the directory entry;
/// the chunk's words are read only where that walk stops
/// ([`BrickWords::settle`]), and after a step of the cells' walk only when
/// the packed cell's chunk fields changed (one in sixteen on an axis), so
/// most cell steps read their word from the chunk at hand.
pub(super) struct ChunkWords<'a> {
    dir: DirWords<'a>,
    cells: [u32; 3],
}

/// A packed cell's chunk fields: bits 4 and up of each field.
const CHUNK_FIELDS: u64 = {
    let field = (1u64 << certified::FIELD) - 1 - 15;
    field | field << certified::FIELD | field << (2 * certified::FIELD)
};

impl ChunkWords<'_> {
    /// The directory index of the chunk of packed brick `pb`, if in its box.
    #[inline(always)]
    fn index(&self, pb: u64) -> Option<usize> {
        self.dir.index(certified::unpack(pb).map(|x| x as u32 >> CHUNK_BITS))
    }
}

impl<'a> BrickWords for ChunkWords<'a> {
    /// The chunk's directory index, its words (the empty chunk's where
    /// none is stored; after a brick step, the words of the chunk before
    /// it until [`BrickWords::settle`]) and its chunk fields.
    type Cursor = (usize, &'a [u64; WORDS], u64);

    /// 64 bricks: 16 chunks' worth along one axis. Few rays of the peer
    /// comparison's height field take more; a ray across empty chunks
    /// then goes on by chunks (`grid/chunked/empty_chunks_crossed`).
    const BRICK_STEPS: u32 = 64;

    #[inline(always)]
    fn start(&self, rel: [i32; 3], pb: u64) -> Option<Self::Cursor> {
        if !(0..3).all(|a| (rel[a] as u32) < self.cells[a]) {
            return None;
        }
        let i = self.index(pb)?;
        Some((i, self.dir.chunk_at(i), pb & CHUNK_FIELDS))
    }

    /// The index and fields only: the bricks' walk asks the chunk's
    /// occupancy ([`BrickWords::brick_empty`]), and its words only for the
    /// brick it stops at ([`BrickWords::settle`]).
    #[inline(always)]
    fn brick_step(&self, at: Self::Cursor, by: usize, pb: u64) -> Self::Cursor {
        let fields = pb & CHUNK_FIELDS;
        let i = at.0.wrapping_add(std::hint::select_unpredictable(fields != at.2, by, 0));
        debug_assert_eq!(Some(i), self.index(pb));
        (i, at.1, fields)
    }

    /// By the occupancy beside the directory entry: one load, where the
    /// word took the entry, the chunk's slot and the word, each waiting on
    /// the one before.
    #[inline(always)]
    fn brick_empty(&self, at: Self::Cursor, pb: u64) -> bool {
        let empty = self.dir.occupancy_at(at.0) >> brick_in_chunk(pb) & 1 == 0;
        debug_assert_eq!(empty, self.dir.chunk_at(at.0)[brick_in_chunk(pb)] == 0);
        empty
    }

    #[inline(always)]
    fn settle(&self, at: Self::Cursor) -> Self::Cursor {
        (at.0, self.dir.chunk_at(at.0), at.2)
    }

    #[inline(always)]
    fn cell_step(&self, at: Self::Cursor, by: usize, pb: u64) -> Self::Cursor {
        let fields = pb & CHUNK_FIELDS;
        if fields == at.2 {
            at
        } else {
            let i = at.0.wrapping_add(by);
            debug_assert_eq!(Some(i), self.index(pb));
            (i, self.dir.chunk_at(i), fields)
        }
    }

    #[inline(always)]
    fn word(&self, at: Self::Cursor, pb: u64) -> u64 {
        debug_assert!(std::ptr::eq(at.1, self.dir.chunk_at(at.0)), "a cursor not settled");
        at.1[brick_in_chunk(pb)]
    }
}

/// Bits 2 and 3 of each field of a packed cell: its brick in its chunk.
const BRICK_BITS: u64 = 12 | 12 << certified::FIELD | 12 << (2 * certified::FIELD);

/// The brick of packed cell `p` in its chunk, `x | y << 2 | z << 4` from
/// bits 2 and 3 of each field, gathered by one multiply: the masked bits
/// (at 2–3, 23–24 and 44–45 for 21-bit fields) times `2^38 + 2^19 + 1`
/// land at 40–41, 42–43 and 44–45; the product's other terms (at 2–3,
/// 21–24 and 61–63, the rest past bit 63) overlap neither those nor each
/// other, so no carry reaches them. Four instructions where the three
/// fields' shifts and masks took ten, at every word the walk reads.
#[inline(always)]
fn brick_in_chunk(p: u64) -> usize {
    const GATHER: u64 = 1 << (2 * certified::FIELD - 4) | 1 << (certified::FIELD - 2) | 1;
    ((p & BRICK_BITS).wrapping_mul(GATHER) >> (2 * certified::FIELD - 2) & 63) as usize
}

/// Chunk key, word (brick within the chunk) and bit (cell within the brick)
/// of `cell` (module docs).
#[inline(always)]
fn split(cell: [i32; 3]) -> (IVec3, usize, u32) {
    let key = IVec3::new(cell[0] >> CHUNK_BITS, cell[1] >> CHUNK_BITS, cell[2] >> CHUNK_BITS);
    let w = ((cell[0] >> 2) & 3) | ((cell[1] >> 2) & 3) << 2 | ((cell[2] >> 2) & 3) << 4;
    let b = (cell[0] & 3) | (cell[1] & 3) << 2 | (cell[2] & 3) << 4;
    (key, w as usize, b as u32)
}

impl ChunkedVoxels {
    /// An empty world on the grid (`cell_size`, `origin`).
    ///
    /// # Errors
    /// [`ShapeError`] for a bad `cell_size` or `origin` (see [`Grid::try_new`]).
    pub fn try_new(cell_size: Vec3, origin: Vec3) -> Result<Self, ShapeError> {
        let grid = Grid::<3>::try_new(cell_size, origin)?;
        Ok(Self {
            grid,
            chunks: ChunkStore::new(),
            count: 0,
            cell_lo: IVec3::MAX,
            cell_hi: IVec3::MIN,
            // Never used while the world is empty (casts answer `None` first).
            clip: BoxClip::new(&grid, [0; 3], [0; 3]),
            cert: ChunkCert::new([0; 3], [0; 3], [0; 3]),
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
        let (key, w, b) = split(cell.to_array());
        self.chunks.get(key.to_array()).is_some_and(|c| c.bits[w] >> b & 1 != 0)
    }

    /// Makes `cell` solid or empty; returns false (and does nothing) for a
    /// cell beyond [`CELL_LIMIT`].
    pub fn set(&mut self, cell: IVec3, solid: bool) -> bool {
        if cell.min_element() < -CELL_LIMIT || cell.max_element() >= CELL_LIMIT {
            return false;
        }
        let (key, w, b) = split(cell.to_array());
        let m = 1u64 << b;
        let changed = self.chunks.set_bits(key.to_array(), w, m, solid);
        if solid {
            self.count += usize::from(changed);
            let (lo, hi) = (self.cell_lo.min(cell), self.cell_hi.max(cell));
            let strides = self.chunks.dir_strides();
            if (lo, hi) != (self.cell_lo, self.cell_hi) || strides != self.cert.strides {
                (self.cell_lo, self.cell_hi) = (lo, hi);
                self.clip = BoxClip::new(&self.grid, lo.to_array(), hi.to_array());
                self.cert = ChunkCert::new(lo.to_array(), hi.to_array(), strides);
            }
        } else {
            self.count -= usize::from(changed);
        }
        true
    }

    /// Makes `cell` empty (same as `set(cell, false)`).
    pub fn clear(&mut self, cell: IVec3) {
        self.set(cell, false);
    }

    /// The first solid cell along `ray` within `range`.
    #[inline]
    pub fn cast_cell(&self, ray: &Ray, range: Interval) -> Option<VoxelHit> {
        best_compiled(
            #[inline(always)]
            |isa| self.cast_cell_any(ray, range, isa).map(Found::voxel_hit),
        )
    }

    /// [`ChunkedVoxels::cast_cell`] for any CPU, as a [`Found`]: the
    /// certified cast (see `certified`) while the chunks have a directory,
    /// and where it is unsure or they have none, the exact walk.
    #[inline(always)]
    fn cast_cell_any(&self, ray: &Ray, range: Interval, isa: Isa) -> Option<Found> {
        if self.count == 0 {
            return None;
        }
        match self.cast_certified(ray, range, isa) {
            Certified::Hit(found) => Some(found),
            Certified::Miss => None,
            Certified::Unsure => self.cast_exact_apart(ray, range),
        }
    }

    /// The exact walk in a function of its own, with its own AVX copy:
    /// compiled into the certified walk's function, its loop ran 1.6×
    /// slower (`grid/chunked/empty_chunks_crossed`, where every ray ends in
    /// it).
    #[inline(never)]
    fn cast_exact_apart(&self, ray: &Ray, range: Interval) -> Option<Found> {
        best_compiled(
            #[inline(always)]
            |isa| self.cast_exact(ray, range, isa),
        )
    }

    /// The certified cast of `ray` over `range` (`Unsure` without a directory).
    #[inline(always)]
    pub(super) fn cast_certified(&self, ray: &Ray, range: Interval, isa: Isa) -> Certified {
        let Some(cells) = self.certified_parts() else { return Certified::Unsure };
        certified::cast(&cells, ray, range, isa)
    }

    /// What the certified cast reads: its constants, the clip and the
    /// words (`None` without a chunk directory).
    #[inline(always)]
    pub(super) fn certified_parts(&self) -> Option<Cells<'_, ChunkWords<'_>>> {
        let dir = self.chunks.dir_words(self.cert.key0)?;
        // (`set` makes the constants again whenever the directory changes.)
        debug_assert_eq!(self.cert.strides, self.chunks.dir_strides());
        let words = ChunkWords { dir, cells: self.cert.cells };
        Some(Cells { cc: &self.cert.consts, clip: &self.clip, words })
    }

    /// [`ChunkedVoxels::cast_cell_any`] by the exact walk alone.
    #[inline(always)]
    pub(super) fn cast_exact(&self, ray: &Ray, range: Interval, isa: Isa) -> Option<Found> {
        if self.count == 0 {
            return None;
        }
        let mut w = GridWalk::<3>::ray_in_box(&self.grid, ray, range, &self.clip, isa);
        if !w.is_walking() {
            return None;
        }
        // A ray starting inside a solid cell hits it at `t_min`, no face
        // (its chunk, looked up, is the first one cached below).
        let start = w.cell();
        let (key, wi, b) = split(start);
        let chunk0 = self.chunks.get(key.to_array());
        if chunk0.is_some_and(|c| c.bits[wi] >> b & 1 != 0) {
            return Some(Found::Any(VoxelHit { cell: IVec3::from_array(start), t: w.t_min(), face: None }));
        }
        let neg = w.neg_bits();
        // The cell's bit in its chunk, `brick << 6 | bit` ([`Hot::low4`]),
        // with the two 2-bit fields of each axis the walk goes down on
        // inverted (`f ↦ 15 − f` of the axis's 4-bit offset in the chunk):
        // as the dense volume's brick test (see `FLIP` there), a
        // single-axis step then makes this value grow within the chunk
        // (the field's low half by 1, or its low half 3 → 0 and its high
        // half by 1: `64·4^a − 3·4^a > 0`) and fall when it enters another
        // chunk (both halves 3 → 0). Chunks of 16 cells are aligned on
        // multiples of 16 of the cell index (negative ones too: `& 15` and
        // `>> 4` of two's complement).
        // (By table: bit a of `neg` gives the fields `3·4^a + 3·64·4^a`.)
        const FLIP: [u32; 8] = [0, 195, 780, 975, 3120, 3315, 3900, 4095];
        let flip = FLIP[usize::from(neg & 7)];
        // Carried from step to step in registers (`GridWalk::drive_with`):
        // the chunk of the last lookup (most steps stay in one chunk), its
        // key and its bits (`None` when absent); `last`, the flipped bit of
        // the last single-axis step (`u32::MAX` after a step of several
        // axes, a skip or at the start: the key is then compared); and the
        // hit. Each step loads its brick's word from the chunk rather than
        // keeping it while the walk stays in the brick as the dense volume
        // does: the step's branches are then all but always predicted (a new
        // chunk, an empty brick, a hit), where a test for a new brick is
        // taken at about every fourth step, at random on random rays
        // (measured on the peer comparison's sparse volume, keeping the
        // word: 1% fewer instructions, but twice the branch misses per ray
        // in callgrind's model and about 10% more time).
        let mut st =
            ChunkWalk { key: key.to_array(), chunk: chunk0, last: u32::MAX, found: (0, 0.0, [0; 3]) };
        // An absent or empty start chunk or brick (a ray from outside, as
        // the walk starts half a cell before the box): skip at once, as the
        // first step would, without that step. The loop starts with the
        // skip (one copy of each `skip_empty`).
        let mut flow = match chunk0 {
            None => Flow::SkipFar,
            Some(c) if c.bits[wi] == 0 => Flow::Skip,
            Some(_) => Flow::Go,
        };
        loop {
            let more = match flow {
                Flow::Go => true,
                Flow::SkipFar => w.skip_empty::<CHUNK_BITS>([0; 3], isa, self.clip.inv_size(), |k| {
                    self.chunks.get(k).is_none()
                }),
                // Inlined (at both of its calls in `skip_empty`): out of
                // line, a call, its frame and the state through memory cost
                // more than the test.
                Flow::Skip => w.skip_empty::<2>(
                    [0; 3],
                    isa,
                    self.clip.inv_size(),
                    #[inline(always)]
                    |kb: [i32; 3]| {
                        let key = kb.map(|x| x >> 2);
                        if key != st.key {
                            st.key = key;
                            st.chunk = self.chunks.get(key);
                        }
                        let wi = (kb[0] & 3) | (kb[1] & 3) << 2 | (kb[2] & 3) << 4;
                        st.chunk.is_none_or(|c| c.bits[wi as usize] == 0)
                    },
                ),
                Flow::Stop => break,
                Flow::End => false,
            };
            if !more {
                return None;
            }
            (st, flow) = w.drive_with(st, [0; 3], move |mut st, axes, t, h, one| {
                if one || axes & axes.wrapping_sub(1) == 0 {
                    // One axis: only the main cell is new.
                    let idx = h.low4();
                    let fc = idx ^ flip;
                    // `fc ≥ last`: the step stayed in the chunk of the last
                    // single-axis step. `fc < last` after one: another
                    // chunk for sure; after anything else, compare keys.
                    if fc < st.last {
                        let key = h.cell().map(|x| x >> CHUNK_BITS);
                        if st.last != u32::MAX || key != st.key {
                            st.key = key;
                            st.chunk = self.chunks.get(key);
                        }
                    }
                    st.last = fc;
                    let Some(chunk) = st.chunk else {
                        // An absent chunk: walk the chunk grid at once.
                        st.last = u32::MAX;
                        return (st, Flow::SkipFar);
                    };
                    // `idx < 4096`: the mask only spares a bounds check.
                    let word = chunk.bits[(idx >> 6) as usize & (WORDS - 1)];
                    if word >> (idx & 63) & 1 != 0 {
                        st.found = (axes, t, h.cell());
                        return (st, Flow::Stop);
                    }
                    if word == 0 {
                        st.last = u32::MAX;
                        return (st, Flow::Skip);
                    }
                    (st, Flow::Go)
                } else {
                    // An edge or corner group: test its cells in step order.
                    st.last = u32::MAX;
                    let cell = h.cell();
                    if hit_in(&Step::from_parts(cell, axes, neg, 0.0), |c| self.get(IVec3::from_array(c)))
                        .is_some()
                    {
                        st.found = (axes, t, cell);
                        (st, Flow::Stop)
                    } else {
                        (st, Flow::Go)
                    }
                }
            });
        }
        let found = st.found;
        let (axes, t, cell) = found;
        if axes & axes.wrapping_sub(1) == 0 {
            // One axis: the step's one cell, found solid (see `VoxelHit::single`).
            return Some(Found::Single(cell, axes, neg, w.step_t(t)));
        }
        hit_in(&Step::from_parts(cell, axes, neg, w.step_t(t)), |c| self.get(IVec3::from_array(c)))
            .map(Found::Any)
    }
}

impl RayCast for ChunkedVoxels {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        // The hit built in the compiled copy too (see `VoxelVolume`'s).
        best_compiled(
            #[inline(always)]
            |isa| Some(self.cast_cell_any(ray, range, isa)?.into_hit(&self.grid, ray)),
        )
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
        // The cells of every chunk ever stored.
        let (lo, hi) = self.chunks.bounds();
        let lo = self.grid.cell_bounds(IVec3::from_array(lo) << CHUNK_BITS as i32).min;
        let hi = self.grid.cell_bounds((IVec3::from_array(hi) << CHUNK_BITS as i32) + (CHUNK_SIZE - 1)).max;
        Aabb::new(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brick_in_chunk_gathers_the_three_fields() {
        // Fields across their whole 21 bits, with every low-bit pattern.
        let values = [0u64, 1, 2, 3, 4, 7, 8, 12, 13, 15, 16, 1023, 4096 + 9, (1 << 20) + 6, (1 << 21) - 1];
        for &x in &values {
            for &y in &values {
                for &z in &values {
                    let p = x | y << certified::FIELD | z << (2 * certified::FIELD);
                    let want = (x >> 2 & 3) | (y >> 2 & 3) << 2 | (z >> 2 & 3) << 4;
                    assert_eq!(brick_in_chunk(p), want as usize, "fields {x} {y} {z}");
                }
            }
        }
    }
}
