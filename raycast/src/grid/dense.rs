//! [`VoxelVolume`]: a dense bit grid of solid cells placed on a [`Grid`].
//!
//! # Layout
//! The bits are stored by *bricks* of 4³ cells, one `u64` per brick (bit
//! `x | y<<2 | z<<4` within the brick, bricks in x-major order), so a zero
//! word is an empty brick: the occupancy summary costs nothing. The bricks
//! sit inside a border of one empty brick on every side (see
//! `VoxelVolume::word_of`).
//!
//! # Cast
//! Two walks give the same answers. The *certified* walk (module
//! `certified`) runs first: a plain floating-point walk of the cells and
//! the bricks that proves each of its decisions by an error bound and
//! gives up at the first it cannot prove (a tie or near-tie, extreme
//! inputs, a zero direction component). Nearly every ray is answered there.
//! The others are answered by the *exact* walk (`cast_exact`), described
//! below.
//!
//! A ray is clipped to the volume's cells (grown by half a cell, with the
//! clip's rounding bounded so that it never skips a cell: see
//! `GridWalk::ray_in_box`), then walked with the exact supercover walk driven in
//! place ([`GridWalk::drive_with`]: no `Step` per cell); each step loads
//! its brick's word, through an index moved by a stride when the step
//! leaves its brick (no branch on that: see `cast_cell_any`), and tests its
//! cell's bit. When the walk enters an empty brick (see [`Walk`] for why at the
//! first) it walks the brick grid instead
//! ([`GridWalk::skip_empty`], exact) until a non-empty brick. The answer
//! follows [`first_solid`](super::first_solid): the first solid cell, where
//! and through which face the ray enters it.
//!
//! On x86_64 CPUs with AVX the cast runs a copy of itself compiled for AVX
//! (chosen at run time): the same operations in VEX encoding, whose
//! three-operand forms spare the register copies of the SSE2 step. No fused
//! multiply–add is enabled, so every result is bit for bit the same.

use super::certified::{self, BrickWords, CertConsts, Certified};
use super::voxels::{best_compiled, hit_in, Found, Isa, VoxelHit};
use super::walk::{Blocks, BoxClip, Flow, GridWalk, Step, CELL_LIMIT};
use super::Grid;
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Ray, ShapeError};
use glam::{I64Vec3, IVec3, UVec3, Vec3};

/// A dense volume of `dims` cells starting at cell `min_cell` of a [`Grid`];
/// each cell is solid or empty (one bit).
///
/// [`RayCast::cast`] answers the first solid cell with [`Hit::cell`] set, the
/// face's part (`+x` … `-z`) and outward normal; a ray starting inside a
/// solid cell hits it at `t_min` (see [`VoxelHit`] for the face then).
/// [`RayCast::cast_all`] returns that first hit only (DESIGN defines no list
/// of crossings for voxels).
///
/// # Examples
/// ```
/// use raycast::grid::VoxelVolume;
/// use raycast::{vec3, IVec3, Interval, Part, Ray, RayCast};
/// let vol = VoxelVolume::from_cells(vec3(1.0, 1.0, 1.0), vec3(0.0, 0.0, 0.0), [IVec3::new(2, 0, 0)])?;
/// let hit = vol.cast(&Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.cell), (1.5, Part::NegX, Some(IVec3::new(2, 0, 0))));
/// assert_eq!(hit.point, vec3(2.0, 0.5, 0.5));
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct VoxelVolume {
    grid: Grid<3>,
    min_cell: IVec3,
    dims: UVec3,
    /// Bricks per axis: `ceil(dims / 4)`.
    bdims: UVec3,
    /// One word per brick (module docs), with a border of one empty brick
    /// on every side (see [`VoxelVolume::word_of`]).
    bits: Vec<u64>,
    /// Distance in `bits` between neighbouring bricks along x, y, z
    /// (`stride[0]` is 1: [`VoxelVolume::word_of`] relies on it).
    stride: [usize; 3],
    /// `bdims + 2`: bricks per axis with the border.
    pdims: [u32; 3],
    /// The index in `bits` of brick `(0, 0, 0)`: `1 + stride[1] + stride[2]`.
    word_base: usize,
    /// The move of the word index of `cast_cell_any` by a single-axis step
    /// that enters the next brick: row `neg` (the direction's sign bits),
    /// column the step's axis bit (1, 2 or 4), the stride of that axis
    /// negated (wrapping) where the direction is negative, 0 elsewhere.
    /// Kept: it depends on the strides only, and building the row per
    /// cast cost about 25 instructions.
    moves: [[usize; 8]; 8],
    count: usize,
    /// The clip's constants for the cells `min_cell ..= min_cell + dims − 1`
    /// (kept: every cast clips to that box, and they depend on it and the
    /// grid only).
    pub(super) clip: BoxClip,
    /// The certified cast's constants (see `certified`).
    pub(super) cert: CertConsts,
}

/// By a set of axes (bit `a` for axis `a`): the brick bit (`x | y << 2 |
/// z << 4`) with the 2-bit field of each of those axes at 3, the others 0;
/// XOR with it flips those fields (`f ↦ 3 − f`).
pub(super) const FLIP: [u32; 8] = [0, 3, 12, 15, 48, 51, 60, 63];

/// The certified walk reads the words by their padded index (`word_of`),
/// moved by the strides, with `base = min_cell − 4` (the border's low
/// corner).
impl BrickWords for &VoxelVolume {
    /// The word's padded index.
    type Cursor = usize;

    /// On the comparison's terrain (stop 34, fastest of 11 rounds,
    /// alternating builds), ns a ray handing over at the first empty brick
    /// 88.3–90.3, at the second 85.7–86.2, the third 84.1–85.4, the fourth
    /// or fifth 85.1–85.7, never 92.5–93.0; on the sparse volume, whose
    /// bricks are nearly all occupied, the third costs 2–3 % (131–139 →
    /// 129–148 ns). (The chunked world's terrain gained nothing, and its
    /// sparse volume lost 4–6 %: it keeps 1.)
    const EMPTY_RUN: u32 = 3;

    #[inline(always)]
    fn start(&self, rel: [i32; 3], _: u64) -> Option<usize> {
        let idx = self.padded_word(rel.map(|r| r.wrapping_sub(4)));
        (idx < self.bits.len()).then_some(idx)
    }

    #[inline(always)]
    fn brick_step(&self, idx: usize, by: usize, _: u64) -> usize {
        idx.wrapping_add(by)
    }

    #[inline(always)]
    fn word(&self, idx: usize, pb: u64) -> u64 {
        debug_assert_eq!(idx, self.padded_word(certified::unpack(pb).map(|r| r - 4)));
        // In range on every walk (the border; see `word_of`).
        self.bits.get(idx).copied().unwrap_or(0)
    }
}

/// The bricks for [`GridWalk::skip_empty`] ([`Blocks`]), with the padded
/// index (see [`VoxelVolume::word_of`]) of the coarse walk's brick.
///
/// A single-axis coarse step moves the index by that axis's stride (the
/// row of [`VoxelVolume::moves`] for the walk's signs): a load and an add
/// per brick crossed instead of three bounds tests and the index computed
/// from the brick. Every brick a fast coarse step enters is entered before
/// the clipped range's end, so it lies in the border or within (as the
/// cells of the fine walk: see `word_of`), where the moved index is that
/// brick's; an index found beyond the border (`usize::MAX`) is computed
/// again at the next brick.
struct Bricks<'a> {
    vol: &'a VoxelVolume,
    idx: usize,
    moves: &'a [usize; 8],
}

impl Blocks<3> for Bricks<'_> {
    /// Brick `kb` (in bricks from `min_cell`): empty when its word is 0 or
    /// it lies beyond the border.
    #[inline(always)]
    fn empty_at(&mut self, kb: [i32; 3]) -> bool {
        self.idx = self.vol.padded_word(kb.map(|k| k.wrapping_mul(4)));
        self.vol.bits.get(self.idx).is_none_or(|w| *w == 0)
    }

    #[inline(always)]
    fn empty_after(&mut self, axis: u8, kb: [i32; 3]) -> bool {
        if self.idx == usize::MAX {
            return self.empty_at(kb);
        }
        self.idx = self.idx.wrapping_add(self.moves[usize::from(axis) & 7]);
        debug_assert_eq!(self.idx, self.vol.padded_word(kb.map(|k| k.wrapping_mul(4))), "{kb:?}");
        self.vol.bits.get(self.idx).is_none_or(|w| *w == 0)
    }
}

/// The state [`VoxelVolume::cast_cell`] carries from step to step (see there).
///
/// The walk switches to the brick grid at the first empty brick it enters
/// (no count of empty bricks in a row is kept). Measured with callgrind on
/// the peer comparison's volumes (256³ with 5% random cells, and a 256²
/// height field), skipping after 1 empty brick is cheapest for both (after
/// 2 costs 2–4% more instructions): a coarse walk that stops at once is
/// cheap next to the cells a long one skips. Without the count the state is
/// one register smaller and a brick change one store shorter.
#[derive(Clone, Copy)]
struct Walk {
    /// Index in `bits` of the brick of the last single-axis step.
    idx: usize,
    /// Index of the empty brick the last skip started in (`usize::MAX`
    /// when none): steps that stay in it go on cell by cell.
    skipped: usize,
    last: u32,
    found: (u8, f64, [i32; 3]),
}

impl VoxelVolume {
    /// An empty volume of `dims` cells from `min_cell` on the grid (`cell_size`, `origin`).
    ///
    /// # Errors
    /// [`ShapeError`] for a bad `cell_size` or `origin` (see [`Grid::try_new`]),
    /// or `dims` whose cells reach beyond [`CELL_LIMIT`].
    pub fn try_new(cell_size: Vec3, origin: Vec3, min_cell: IVec3, dims: UVec3) -> Result<Self, ShapeError> {
        let grid = Grid::<3>::try_new(cell_size, origin)?;
        let lo = min_cell.as_i64vec3();
        let hi = lo + dims.as_i64vec3();
        let limit = i64::from(CELL_LIMIT);
        if lo.min_element() < -limit || hi.max_element() > limit {
            return Err(ShapeError::new("cells", format!("must lie within ±2^29, got {min_cell} + {dims}")));
        }
        let bdims = (dims + 3) / 4;
        // Checked: up to 2^28 + 2 bricks per axis, whose product overflows
        // `u64`; a volume must also fit an allocation (`isize::MAX` bytes).
        let n = (bdims.as_u64vec3() + 2).to_array().into_iter().try_fold(1u64, u64::checked_mul);
        let words = n
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= isize::MAX as usize / std::mem::size_of::<u64>())
            .ok_or_else(|| ShapeError::new("dims", format!("too large, got {dims}")))?;
        // Within ±2^29 (checked above), so the `i32` arithmetic cannot wrap.
        let max_cell = min_cell + dims.as_ivec3() - 1;
        let stride = [1, bdims.x as usize + 2, (bdims.x as usize + 2) * (bdims.y as usize + 2)];
        let moves = std::array::from_fn(|neg| {
            let of = |a: usize| if neg >> a & 1 != 0 { stride[a].wrapping_neg() } else { stride[a] };
            [0, of(0), of(1), 0, of(2), 0, 0, 0]
        });
        Ok(Self {
            grid,
            min_cell,
            dims,
            bdims,
            bits: crate::pages::zeroed_on_huge_pages(words),
            stride,
            pdims: (bdims + 2).to_array(),
            word_base: 1 + stride[1] + stride[2],
            moves,
            count: 0,
            clip: BoxClip::new(&grid, min_cell.to_array(), max_cell.to_array()),
            // `min_cell` is within ±2^29 (`try_new`).
            cert: CertConsts::new((min_cell - 4).to_array(), (bdims + 2).to_array(), stride),
        })
    }

    /// The smallest volume holding `cells`, with those cells solid.
    ///
    /// # Errors
    /// As [`VoxelVolume::try_new`].
    pub fn from_cells(
        cell_size: Vec3,
        origin: Vec3,
        cells: impl IntoIterator<Item = IVec3>,
    ) -> Result<Self, ShapeError> {
        let cells: Vec<IVec3> = cells.into_iter().collect();
        let (lo, hi) = cells.iter().fold((IVec3::MAX, IVec3::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        let (lo, dims) = if cells.is_empty() {
            (IVec3::ZERO, UVec3::ZERO)
        } else {
            (lo, (hi.as_i64vec3() - lo.as_i64vec3() + 1).as_uvec3())
        };
        let mut vol = Self::try_new(cell_size, origin, lo, dims)?;
        for c in cells {
            vol.set(c, true);
        }
        Ok(vol)
    }

    /// The grid the cells live on.
    pub fn grid(&self) -> &Grid<3> {
        &self.grid
    }

    /// The lowest cell of the volume.
    pub fn min_cell(&self) -> IVec3 {
        self.min_cell
    }

    /// Number of cells per axis.
    pub fn dims(&self) -> UVec3 {
        self.dims
    }

    /// Number of solid cells.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no cell is solid.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Word index and bit of `cell` (module docs), `None` outside the
    /// bricks. Cells of the last bricks beyond `dims` have an index (their
    /// bits stay 0: `set` refuses them), so that a cell's word is always its
    /// brick's word, as [`GridWalk::skip_empty`] assumes.
    #[inline(always)]
    fn index(&self, cell: [i32; 3]) -> Option<(usize, u32)> {
        // Wrapping offsets: cells below `min_cell` become huge and fail the bound.
        let r = [0, 1, 2].map(|a| cell[a].wrapping_sub(self.min_cell[a]) as u32);
        let b = [r[0] >> 2, r[1] >> 2, r[2] >> 2];
        if b[0] < self.bdims.x && b[1] < self.bdims.y && b[2] < self.bdims.z {
            Some((self.word_of(b), (r[0] & 3) | (r[1] & 3) << 2 | (r[2] & 3) << 4))
        } else {
            None
        }
    }

    /// The word of `cell`'s brick (0 outside the volume) and its bit there.
    #[inline(always)]
    fn probe(&self, cell: [i32; 3]) -> (u64, u32) {
        match self.index(cell) {
            // In range by construction of `index`.
            Some((w, b)) => (self.bits[w], b),
            None => (0, 0),
        }
    }

    /// Index in `bits` of brick `b` (in bricks from `min_cell`, `b < bdims`).
    /// The bricks sit in a box one brick larger on every side, whose border
    /// stays empty: the walk, clipped to the volume grown by half a cell,
    /// only visits cells of bricks `-1 ..= bdims`, so the cast can move its
    /// word index by one brick's stride as it steps from brick to brick (no
    /// index computed from the cell, no test for leaving the volume; see
    /// `cast_cell_any`), and the border reads as empty bricks.
    #[inline(always)]
    fn word_of(&self, b: [u32; 3]) -> usize {
        // (b + 1)·stride, the +1s folded into `word_base`.
        self.dot_stride(b) + self.word_base
    }

    /// `b · stride`, with `stride[0] = 1` (`try_new`): the offset in `bits`
    /// of brick `b` counted from the corner of the padded box.
    #[inline(always)]
    fn dot_stride(&self, b: [u32; 3]) -> usize {
        b[0] as usize + b[1] as usize * self.stride[1] + b[2] as usize * self.stride[2]
    }

    /// The index in `bits` of the brick of `r` (a cell relative to
    /// `min_cell`), border bricks included; `usize::MAX` beyond them.
    #[inline(always)]
    fn padded_word(&self, r: [i32; 3]) -> usize {
        // Arithmetic shifts: cells -4 ..= -1 are in brick -1, the border.
        let b = r.map(|x| (x >> 2).wrapping_add(1) as u32);
        if b[0] < self.pdims[0] && b[1] < self.pdims[1] && b[2] < self.pdims[2] {
            self.dot_stride(b)
        } else {
            usize::MAX
        }
    }

    /// The brick grid as the coarse walk sees it, the walk now in the brick
    /// of word `idx` (a padded index, `usize::MAX` beyond the border), its
    /// direction's signs `neg`.
    #[inline(always)]
    fn bricks(&self, idx: usize, neg: u8) -> Bricks<'_> {
        Bricks { vol: self, idx, moves: &self.moves[usize::from(neg & 7)] }
    }

    /// Whether `cell` is solid (false outside the volume).
    #[inline]
    pub fn get(&self, cell: IVec3) -> bool {
        let (w, b) = self.probe(cell.to_array());
        w >> b & 1 != 0
    }

    /// Makes `cell` solid or empty; returns false (and does nothing) outside the volume.
    pub fn set(&mut self, cell: IVec3, solid: bool) -> bool {
        // Within `dims` (the bricks' padding stays empty).
        let r = cell.as_i64vec3() - self.min_cell.as_i64vec3();
        if r.cmplt(I64Vec3::ZERO).any() || r.cmpge(self.dims.as_i64vec3()).any() {
            return false;
        }
        let Some((w, b)) = self.index(cell.to_array()) else { return false };
        let m = 1u64 << b;
        let was = self.bits[w] & m != 0;
        if solid {
            self.bits[w] |= m;
        } else {
            self.bits[w] &= !m;
        }
        self.count = self.count + usize::from(solid) - usize::from(was);
        true
    }

    /// The first solid cell along `ray` within `range`.
    #[inline]
    pub fn cast_cell(&self, ray: &Ray, range: Interval) -> Option<VoxelHit> {
        best_compiled(
            #[inline(always)]
            |isa| self.cast_cell_any(ray, range, isa).map(Found::voxel_hit),
        )
    }

    /// [`VoxelVolume::cast_cell`] for any CPU, as a [`Found`]: the
    /// certified cast (see `certified`), and where it is unsure, the exact walk.
    #[inline(always)]
    fn cast_cell_any(&self, ray: &Ray, range: Interval, isa: Isa) -> Option<Found> {
        if self.count == 0 {
            return None;
        }
        match self.cast_certified(ray, range, isa) {
            Certified::Hit(found) => Some(found),
            Certified::Miss => None,
            Certified::Unsure => self.cast_exact(ray, range, isa),
        }
    }

    /// The certified cast (see `certified`) of `ray` over `range`.
    #[inline(always)]
    pub(super) fn cast_certified(&self, ray: &Ray, range: Interval, isa: Isa) -> Certified {
        certified::cast(&certified::Cells { cc: &self.cert, clip: &self.clip, words: self }, ray, range, isa)
    }

    /// [`VoxelVolume::cast_cell_any`] by the exact walk alone.
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
        // (the start cell tested by its brick's word, kept below). The word
        // is read through the padded index (`padded_word`: the border bricks
        // are 0, beyond them `get` fails and the word is taken as 0), so it
        // is the brick's word within the volume and 0 outside, and the index
        // is kept for the walk below.
        let base = self.min_cell.to_array();
        let start = w.cell();
        let r0: [i32; 3] = std::array::from_fn(|a| start[a].wrapping_sub(base[a]));
        let idx0 = self.padded_word(r0);
        let word0 = self.bits.get(idx0).copied().unwrap_or(0);
        let bit0 = ((r0[0] & 3) | (r0[1] & 3) << 2 | (r0[2] & 3) << 4) as u32;
        if word0 >> bit0 & 1 != 0 {
            return Some(Found::Any(VoxelHit { cell: IVec3::from_array(start), t: w.t_min(), face: None }));
        }
        let neg = w.neg_bits();
        let abs = move |r: [i32; 3]| std::array::from_fn(|a| r[a].wrapping_add(base[a]));
        // The cell's bit in its brick with the 2-bit field of each axis the
        // walk goes down on inverted (`f ↦ 3 − f`): a single-axis step then
        // adds 1 to the field of its axis and leaves the others, so that
        // this value grows (by 4^a) on a step within the brick and falls (by
        // 3·4^a) when the field wraps 3 → 0, i.e. when the step enters
        // another brick.
        let flip = FLIP[usize::from(neg & 7)];
        // Carried from step to step (in registers, see
        // `GridWalk::drive_with`): the word index of the brick of the last
        // single-axis step (or of the start cell); `last`, that step's (or
        // the start cell's) flipped bit, `u32::MAX` after a step of several
        // axes or a skip (the index is then computed from the cell); the
        // brick a skip started in; and the hit (axes, t, cell).
        //
        // Every single-axis step loads its brick's word. Keeping the word
        // while the walk stays in its brick, and branching to a lookup when
        // it leaves, saves the load but not the time: the walk leaves its
        // brick at about every fourth step, at random on random rays, and
        // that branch was the cast's main misprediction (callgrind's model:
        // 10 a ray on the sparse volume, 2.4 with the load). The index moves
        // by the stepped axis's stride when its field wraps (`fb < last`),
        // with a conditional move (the border of empty bricks makes every
        // index the walk reaches valid: see `word_of`).
        // By the step's axes (1, 2 or 4): see `VoxelVolume::moves`.
        let moves = &self.moves[usize::from(neg & 7)];
        //
        // An empty start brick (a ray from outside, as the walk starts half
        // a cell before the volume's box) is skipped at once, as the first
        // step into an empty brick would be, without that step; should the
        // skip leave the walk in it, its steps there find its word 0 and go
        // on. A start brick that is not empty is a brick of the volume
        // (`idx0` its index: the border and beyond read 0), and the start
        // cell the cell before the first step, as the main cell of a
        // single-axis step is: its brick's index and its flipped bit carry
        // over to that step, which then moves the index rather than
        // computing it from the cell (about 20 instructions).
        let mut st = Walk { idx: idx0, skipped: usize::MAX, last: u32::MAX, found: (0, 0.0, [0; 3]) };
        if word0 == 0 {
            st.skipped = idx0;
            if !w.skip_empty::<2>(base, isa, self.clip.inv_size(), self.bricks(idx0, neg)) {
                return None;
            }
        } else {
            st.last = bit0 ^ flip;
        }
        loop {
            // Cells relative to `min_cell` (wrapping: cells far below it
            // become huge, outside the bricks).
            let flow;
            (st, flow) = w.drive_with(st, base, move |mut st, axes, t, h, one| {
                if one || axes & axes.wrapping_sub(1) == 0 {
                    // One axis: only the main cell is new.
                    let bit = h.low2();
                    let fb = bit ^ flip;
                    // `fb ≥ last`: the step stayed in the brick of the last
                    // single-axis step. `fb < last` after one (`last ≠
                    // MAX`): the field of the step's axis wrapped, so the
                    // step entered the next brick along that axis.
                    st.idx = if st.last == u32::MAX {
                        self.padded_word(h.cell())
                    } else {
                        // The stepped axis's stride when its field wrapped,
                        // as a conditional move: the test is true at about
                        // every fourth step, at random on random rays, and
                        // LLVM turns a plain `if`, a mask made from the
                        // comparison, or a sign-bit shift into a branch.
                        let m = moves[usize::from(axes) & 7];
                        st.idx.wrapping_add(std::hint::select_unpredictable(fb < st.last, m, 0))
                    };
                    debug_assert_eq!(st.idx, self.padded_word(h.cell()));
                    st.last = fb;
                    // In range on every walk (see `word_of`); beyond, empty.
                    let word = self.bits.get(st.idx).copied().unwrap_or(0);
                    if word >> bit & 1 != 0 {
                        st.found = (axes, t, h.cell());
                        return (st, Flow::Stop);
                    }
                    if word == 0 && st.idx != st.skipped {
                        st.skipped = st.idx;
                        st.last = u32::MAX;
                        return (st, Flow::Skip);
                    }
                    (st, Flow::Go)
                } else {
                    st.last = u32::MAX;
                    let rc = h.cell();
                    if hit_in(&Step::from_parts(abs(rc), axes, neg, 0.0), |c| self.get(IVec3::from_array(c)))
                        .is_some()
                    {
                        st.found = (axes, t, rc);
                        (st, Flow::Stop)
                    } else {
                        (st, Flow::Go)
                    }
                }
            });
            match flow {
                Flow::Skip => {
                    if !w.skip_empty::<2>(base, isa, self.clip.inv_size(), self.bricks(st.skipped, neg)) {
                        return None;
                    }
                }
                Flow::Stop => break,
                _ => return None,
            }
        }
        let (axes, t, rc) = st.found;
        if axes & axes.wrapping_sub(1) == 0 {
            // One axis: the step's one cell, whose bit was just found set,
            // entered through that axis's face (what `hit_in` answers for
            // it, without looking the cell up again).
            return Some(Found::Single(abs(rc), axes, neg, w.step_t(t)));
        }
        hit_in(&Step::from_parts(abs(rc), axes, neg, w.step_t(t)), |c| self.get(IVec3::from_array(c)))
            .map(Found::Any)
    }
}

#[cfg(feature = "load")]
impl VoxelVolume {
    /// Every model of a MagicaVoxel `.vox` file as a volume of unit cells
    /// from `origin`, cell `(x, y, z)` as in the file (MagicaVoxel is Z-up;
    /// rotate with [`Transformed`](crate::Transformed) if your world is Y-up).
    /// Model placement in the file's scene graph is not applied.
    ///
    /// # Errors
    /// [`ShapeError`] on `path` if the file cannot be read or is not a `.vox` file.
    pub fn load_vox(
        path: impl AsRef<std::path::Path>,
        cell_size: Vec3,
        origin: Vec3,
    ) -> Result<Vec<Self>, ShapeError> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| ShapeError::new("path", format!("{}: {e}", path.display())))?;
        let data = dot_vox::load_bytes(&bytes)
            .map_err(|e| ShapeError::new("path", format!("{}: {e}", path.display())))?;
        data.models
            .iter()
            .map(|m| {
                let dims = UVec3::new(m.size.x, m.size.y, m.size.z);
                let mut vol = Self::try_new(cell_size, origin, IVec3::ZERO, dims)?;
                for v in &m.voxels {
                    vol.set(IVec3::new(v.x.into(), v.y.into(), v.z.into()), true);
                }
                Ok(vol)
            })
            .collect()
    }
}

impl RayCast for VoxelVolume {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        // The hit built in the compiled copy too (no second call, no copy of the `VoxelHit`).
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
        let lo = self.grid.cell_bounds(self.min_cell).min;
        let hi = self.grid.cell_bounds(self.min_cell + self.dims.as_ivec3() - 1).max;
        Aabb::new(lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{ivec3, vec3};

    #[test]
    fn set_get_bounds_and_count() {
        let mut v = VoxelVolume::try_new(Vec3::ONE, Vec3::ZERO, ivec3(-2, -2, -2), UVec3::splat(4)).unwrap();
        assert!(v.set(ivec3(-2, 1, 0), true));
        assert!(!v.set(ivec3(2, 0, 0), true));
        assert!(v.get(ivec3(-2, 1, 0)) && !v.get(ivec3(-3, 1, 0)) && !v.get(ivec3(100, 0, 0)));
        assert!(v.set(ivec3(-2, 1, 0), true));
        assert_eq!(v.len(), 1);
        v.set(ivec3(-2, 1, 0), false);
        assert!(v.is_empty());
        assert!(VoxelVolume::try_new(Vec3::ZERO, Vec3::ZERO, IVec3::ZERO, UVec3::ONE).is_err());
        assert!(VoxelVolume::try_new(Vec3::ONE, Vec3::ZERO, IVec3::splat(CELL_LIMIT - 1), UVec3::splat(2))
            .is_err());
        // Within the cell limit but far too many bricks to count in 64 bits
        // (they used to wrap): refused, naming the field.
        let e = VoxelVolume::try_new(Vec3::ONE, Vec3::ZERO, IVec3::splat(-CELL_LIMIT), UVec3::splat(1 << 30))
            .unwrap_err();
        assert!(e.to_string().contains("dims"), "{e}");
    }

    /// The AVX copy of the cast (run by `cast_cell` on CPUs with AVX) and
    /// the portable one give the same answers, ties included.
    #[test]
    fn compiled_copies_agree() {
        let mut next = crate::grid::test_ints(0x2545_f491_4f6c_dd1du64);
        let cells: Vec<IVec3> =
            (0..600).map(|_| ivec3(next(24) as i32 - 5, next(24) as i32 - 5, next(24) as i32 - 5)).collect();
        let v = VoxelVolume::from_cells(vec3(1.0, 0.5, 2.0), vec3(0.25, 0.0, -1.0), cells).unwrap();
        for k in 0..4000 {
            // Lattice points and small integer directions (edges and
            // corners) for half of the rays, arbitrary ones for the rest.
            let mut c = |n: u64| next(n) as f32 - 8.0;
            let (o, d) = if k % 2 == 0 {
                (
                    vec3(0.25 + c(36), c(18) * 0.5, -1.0 + 2.0 * c(18)),
                    vec3(c(5) + 6.0, (c(5) + 6.0) * 0.5, 2.0 * (c(5) + 6.0)),
                )
            } else {
                (vec3(c(40) + 0.37, c(40) * 0.71, c(40) * 1.3), vec3(c(17) + 0.1, c(17) * 0.3, c(17) - 0.2))
            };
            let ray = Ray::new(o, d);
            for range in [Interval::FORWARD, Interval::new(-3.0, 7.5)] {
                assert_eq!(
                    v.cast_cell(&ray, range),
                    v.cast_cell_any(&ray, range, Isa::BASELINE).map(Found::voxel_hit),
                    "{ray:?} {range:?}"
                );
            }
        }
    }

    #[test]
    fn local_bounds_cover_the_cells() {
        let v = VoxelVolume::from_cells(
            vec3(0.5, 1.0, 2.0),
            vec3(1.0, 0.0, 0.0),
            [ivec3(0, 0, 0), ivec3(1, -1, 2)],
        )
        .unwrap();
        let b = v.local_bounds();
        assert_eq!((b.min, b.max), (vec3(1.0, -1.0, 0.0), vec3(2.0, 1.0, 6.0)));
    }

    #[cfg(feature = "load")]
    #[test]
    fn loads_a_magicavoxel_file() {
        // A minimal .vox: MAIN { SIZE 4×3×2, XYZI with two voxels }.
        let chunk = |id: &[u8; 4], content: &[u8], children: &[u8]| {
            let mut c = id.to_vec();
            c.extend((content.len() as u32).to_le_bytes());
            c.extend((children.len() as u32).to_le_bytes());
            c.extend(content);
            c.extend(children);
            c
        };
        let size: Vec<u8> = [4u32, 3, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut xyzi = 2u32.to_le_bytes().to_vec();
        xyzi.extend([1, 2, 0, 7, 3, 0, 1, 9]);
        let children = [chunk(b"SIZE", &size, &[]), chunk(b"XYZI", &xyzi, &[])].concat();
        let mut bytes = b"VOX ".to_vec();
        bytes.extend(150u32.to_le_bytes());
        bytes.extend(chunk(b"MAIN", &[], &children));
        let path = std::env::temp_dir().join(format!("raycast-test-{}.vox", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let vols = VoxelVolume::load_vox(&path, Vec3::ONE, Vec3::ZERO).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(vols.len(), 1);
        let v = &vols[0];
        assert_eq!((v.dims(), v.len()), (UVec3::new(4, 3, 2), 2));
        assert!(v.get(ivec3(1, 2, 0)) && v.get(ivec3(3, 0, 1)));
        let h = v.cast(&Ray::new(vec3(-1.0, 2.5, 0.5), Vec3::X), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.cell), (2.0, Some(ivec3(1, 2, 0))));
        assert!(VoxelVolume::load_vox("/nonexistent.vox", Vec3::ONE, Vec3::ZERO).is_err());
    }
}
