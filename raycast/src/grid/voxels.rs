//! The first solid cell along a ray, for any storage: [`first_solid`] and
//! [`VoxelHit`], plus the pieces the dense and chunked volumes share
//! (building the [`Hit`]).
//!
//! A ray hits the first cell of its [`GridWalk`] (supercover on) that is
//! solid: at the `t` where the walk enters it, through the face of one of the
//! axes crossed there. Several solid cells entered at one `t` (through an
//! edge or corner): the first one the step lists. A ray starting inside a
//! solid cell hits it at `t_min`; it entered no face there, so the hit takes
//! the face through which the *line* entered that cell (the latest crossing
//! before `t_min`), which keeps `front_face` true and the normal outward.

use super::walk::{GridWalk, Step};
use super::Grid;
use crate::{Hit, Part, Ray};
use glam::{IVec3, Vec3};

/// The first solid cell along a ray: which cell, when, through which face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoxelHit {
    /// The solid cell.
    pub cell: IVec3,
    /// Where the ray enters it (`t_min` when it starts inside).
    pub t: f32,
    /// The face entered through; `None` when the ray starts inside the cell.
    pub face: Option<Part>,
}

/// The first cell of `walk` (build it with supercover on) for which `solid`
/// answers true.
///
/// # Examples
/// ```
/// use raycast::grid::{first_solid, Grid, GridWalk};
/// use raycast::{vec3, IVec3, Interval, Part, Ray};
/// let grid = Grid::<3>::default();
/// let ray = Ray::new(vec3(0.5, 0.5, 0.5), vec3(1.0, 0.0, 0.0));
/// let hit = first_solid(GridWalk::<3>::new(&grid, &ray, Interval::FORWARD, true), |c| c.x == 3).unwrap();
/// assert_eq!((hit.cell, hit.t, hit.face), (IVec3::new(3, 0, 0), 2.5, Some(Part::NegX)));
/// ```
#[inline]
pub fn first_solid(walk: GridWalk<3>, mut solid: impl FnMut(IVec3) -> bool) -> Option<VoxelHit> {
    walk.into_iter().find_map(|step| hit_in(&step, |c| solid(IVec3::from_array(c))))
}

/// The first cell of `step` (in [`Step::entries`] order) for which `solid`
/// answers true, as a hit at the step's `t`. Shared by [`first_solid`] and
/// the volumes so that all three pick the same cell of an edge or corner group.
#[inline(always)]
pub(crate) fn hit_in(step: &Step<3>, mut solid: impl FnMut([i32; 3]) -> bool) -> Option<VoxelHit> {
    for (cell, face) in step.entries() {
        if solid(cell) {
            return Some(VoxelHit { cell: IVec3::from_array(cell), t: step.t, face });
        }
    }
    None
}

/// What the volumes' casts found: a hit in the form [`RayCast::cast`]
/// (a [`Hit`]) and `cast_cell` (a [`VoxelHit`]) both build from it.
///
/// A single-axis step's hit, by far the most common, is kept as its parts:
/// `cast` then builds its [`Hit`] directly ([`Found::into_hit`], the same
/// values as [`VoxelHit::single`] then [`VoxelHit::make_hit`], without the
/// `Option<Part>` and the decoding of the face again: 40 instructions fewer
/// per hit).
///
/// [`RayCast::cast`]: crate::RayCast::cast
#[derive(Clone, Copy, Debug)]
pub(crate) enum Found {
    /// Any hit (start cell, or a step of several axes).
    Any(VoxelHit),
    /// The hit of a single-axis step: cell, the step's axis bit, the
    /// direction's sign bits, `t` (the arguments of [`VoxelHit::single`]).
    Single([i32; 3], u8, u8, f32),
}

/// `Part::axis_face(a, moving_down)` by index `2a + moving_down`, and the
/// two `z` faces again for indices 6 and 7 (see [`VoxelHit::single`]).
const FACES: [Part; 8] =
    [Part::NegX, Part::PosX, Part::NegY, Part::PosY, Part::NegZ, Part::PosZ, Part::NegZ, Part::PosZ];

/// The outward normals of [`FACES`], as [`VoxelHit::make_hit`] builds them
/// (`±1` on the face's axis, `+0` elsewhere).
const NORMALS: [Vec3; 8] = [
    Vec3::new(-1.0, 0.0, 0.0),
    Vec3::new(1.0, 0.0, 0.0),
    Vec3::new(0.0, -1.0, 0.0),
    Vec3::new(0.0, 1.0, 0.0),
    Vec3::new(0.0, 0.0, -1.0),
    Vec3::new(0.0, 0.0, 1.0),
    Vec3::new(0.0, 0.0, -1.0),
    Vec3::new(0.0, 0.0, 1.0),
];

impl Found {
    /// As a [`VoxelHit`].
    #[inline(always)]
    pub(crate) fn voxel_hit(self) -> VoxelHit {
        match self {
            Found::Any(h) => h,
            Found::Single(cell, axes, neg, t) => VoxelHit::single(cell, axes, neg, t),
        }
    }

    /// As a [`Hit`] for `ray` on `grid`: `self.voxel_hit().make_hit(grid,
    /// ray)`, bit for bit, built directly for a single-axis step.
    #[inline(always)]
    pub(crate) fn into_hit(self, grid: &Grid<3>, ray: &Ray) -> Hit {
        let (cell, axes, neg, t) = match self {
            Found::Any(h) => return h.make_hit(grid, ray),
            Found::Single(cell, axes, neg, t) => (cell, axes, neg, t),
        };
        debug_assert!(matches!(axes, 1 | 2 | 4));
        // `VoxelHit::single` picks `FACES[2a + moving_down]`, whose
        // `face_axis` in `make_hit` is `(a, moving_down)` for `a < 3` (the
        // only axes a step crosses; `min` keeps the indexing below in
        // bounds without a check, and matches the table's last two faces).
        let a = (axes.trailing_zeros() as usize).min(2);
        let moving_down = neg >> a & 1 != 0;
        let i = 2 * a + usize::from(moving_down);
        // `make_hit` with a face: the point on the entered face's plane
        // (`positive` = moving down: the ray enters through the + face).
        // By a lane mask (`Vec3A`), not an indexed store into an array
        // (the store's partial overlap with the vector load after it
        // stalled store-to-load forwarding) nor a scalar select (LLVM
        // compiles `Vec3::select`, and `select_unpredictable` or masks on
        // the bits too, to branches on the axis: random on random rays,
        // mispredicted on a quarter to a half of the hits).
        let k = cell[a] + i32::from(moving_down);
        let on = glam::BVec3A::new(a == 0, a == 1, a == 2);
        let point = Vec3::from(glam::Vec3A::select(
            on,
            glam::Vec3A::splat(plane(grid, a, k) as f32),
            glam::Vec3A::from(ray.at(t)),
        ));
        // `make_hit`'s `front_face` (`d < 0` through a + face, `d > 0`
        // through a − face, `d = dir[a]`) is true: a walk steps on axis `a`
        // only where `d ≠ 0` (finite), and down it exactly where `d < 0`
        // (`neg`), so the face is + exactly where `d < 0`.
        debug_assert!(if moving_down { ray.dir[a] < 0.0 } else { ray.dir[a] > 0.0 });
        let mut hit = Hit::with_face(t, point, NORMALS[i], true, FACES[i]);
        hit.cell = Some(IVec3::from_array(cell));
        hit
    }
}

impl VoxelHit {
    /// The hit on `cell`, entered at `t` across the one axis of `axes` (a
    /// single bit) with the direction's signs `neg`: what [`hit_in`]
    /// answers for a single-axis step whose cell is solid.
    #[inline(always)]
    pub(crate) fn single(cell: [i32; 3], axes: u8, neg: u8, t: f32) -> Self {
        // `Part::axis_face(a, negative)` by table ([`FACES`], index `2a +
        // negative`): a load, where its `match` branches on the axis (a
        // misprediction on about two casts in three, the axis being random
        // on random rays).
        let a = axes.trailing_zeros() as usize;
        let moving_down = usize::from(neg >> a & 1);
        // Moving down the axis, the ray enters through the cell's + face.
        Self { cell: IVec3::from_array(cell), t, face: Some(FACES[(2 * a + moving_down) & 7]) }
    }

    /// The full [`Hit`] for `ray` on `grid`: the point on the entered face
    /// (its coordinate on the face's axis snapped to the plane), the face's
    /// outward normal and `cell`.
    pub fn to_hit(&self, grid: &Grid<3>, ray: &Ray) -> Hit {
        self.make_hit(grid, ray)
    }

    /// [`VoxelHit::to_hit`], inlined into the volumes' casts.
    #[inline(always)]
    pub(crate) fn make_hit(&self, grid: &Grid<3>, ray: &Ray) -> Hit {
        let face = self.face.unwrap_or_else(|| inside_face(grid, ray, self.cell));
        let (axis, positive) = face_axis(face);
        let s = if positive { 1.0 } else { -1.0 };
        let mut point = ray.at(self.t).to_array();
        // Arrays indexed by `axis` (a store and a reload, no branch on the axis).
        let mut normal = [0.0; 3];
        normal[axis] = s;
        if self.face.is_some() {
            let k = self.cell[axis] + i32::from(positive);
            point[axis] = plane(grid, axis, k) as f32;
        }
        let (point, normal) = (Vec3::from_array(point), Vec3::from_array(normal));
        // `dir · normal < 0` as `Hit::with_point` has it: the other two
        // products are ±0, so the dot product is exactly `s·dir[axis]`.
        let d = ray.dir[axis];
        let front_face = if positive { d < 0.0 } else { d > 0.0 };
        let mut hit = Hit::with_face(self.t, point, normal, front_face, face);
        hit.cell = Some(self.cell);
        hit
    }
}

/// The boundary plane `k` of `axis`, `origin + k·size` in `f64`: the product
/// is exact (`|k| ≤ 2^29` times a 24-bit size fits 53 bits) and the sum is
/// rounded once, so every hit on that plane gets the same coordinate.
#[inline(always)]
fn plane(grid: &Grid<3>, axis: usize, k: i32) -> f64 {
    f64::from(grid.origin[axis]) + f64::from(k) * f64::from(grid.cell_size[axis])
}

/// Axis and sign of a cell face (`(2, false)` for a part that is not one).
#[inline(always)]
fn face_axis(face: Part) -> (usize, bool) {
    // By table, `axis | positive << 2` per part (14 parts, in `Part`'s
    // order: surface, face, +x, −x, +y, −y, +z, −z, then the rest): a load,
    // no branch or jump on the part.
    const AXES: [u8; 16] = [2, 2, 4, 0, 5, 1, 6, 2, 2, 2, 2, 2, 2, 2, 2, 2];
    let e = AXES[face as usize & 15];
    (usize::from(e & 3), e & 4 != 0)
}

/// For a ray starting inside `cell`: the face through which its line entered
/// the cell (the axis whose plane behind the start is crossed last).
fn inside_face(grid: &Grid<3>, ray: &Ray, cell: IVec3) -> Part {
    let mut best = (f64::NEG_INFINITY, Part::NegX);
    for a in 0..3 {
        let d = f64::from(ray.dir[a]);
        if d == 0.0 {
            continue;
        }
        let k = cell[a] + i32::from(d < 0.0);
        let t = (plane(grid, a, k) - f64::from(ray.origin[a])) / d;
        if t > best.0 {
            best = (t, Part::axis_face(a, d < 0.0));
        }
    }
    best.1
}

/// `f()`, compiled for AVX when the CPU has it (checked at run time; the
/// answer is cached by the standard library): the volumes' casts run their
/// code through this, and `f` inlined into the AVX copy uses the VEX
/// encoding, whose three-operand forms spare the register copies of the
/// packed walk step (about 15% fewer instructions per ray). No fused
/// multiply–add is enabled, so the results are bit for bit those of the
/// baseline copy.
#[inline(always)]
pub(crate) fn best_compiled<R>(f: impl FnOnce(Isa) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (just checked).
        return unsafe {
            with_avx(
                #[inline(always)]
                || f(Isa { avx: true }),
            )
        };
    }
    baseline(
        #[inline(always)]
        || f(Isa::BASELINE),
    )
}

/// What the CPU running a cast offers beyond the baseline ([`best_compiled`]
/// passes it down): the walk's setup uses AVX's 256-bit registers when it
/// is there ([`GridWalk::ray_in_box`]). Only [`best_compiled`] makes one that
/// says AVX, after checking the CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Isa {
    avx: bool,
}

impl Isa {
    /// The baseline instruction set (any CPU of the target).
    pub(crate) const BASELINE: Isa = Isa { avx: false };

    /// True when the CPU has AVX.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the x86_64 kernels
    pub(crate) fn avx(self) -> bool {
        self.avx
    }
}

/// `f()` out of line: the baseline copy of a cast in its own function, so
/// that the caller of [`best_compiled`] stays a test and a call (inlined, its
/// frame and saved registers would cost every call, AVX or not).
#[inline(never)]
fn baseline<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f()` compiled with AVX enabled (see [`best_compiled`]).
///
/// # Safety
/// The CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn with_avx<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The largest `f32` ≤ `x` (`next_down` of the nearest when that is above).
///
/// Branch-free: whether the nearest `f32` is above `x` is a coin toss for
/// the clip's slab times, a branch on it a misprediction every other cast.
/// The step to the next `f32` below is −1 on the bits of a positive `y`
/// and +1 on those of a negative one (−0 included: its successor below is
/// the smallest negative subnormal; +∞ steps to `f32::MAX`). `y` is never
/// +0 when it is above `x` (an `x < 0` rounds to −0 or below), and a NaN
/// compares false: the answer is `numeric::next_down`'s, bit for bit.
#[inline(always)]
pub(crate) fn round_down(x: f64) -> f32 {
    let y = x as f32;
    let bits = y.to_bits();
    let step = (bits >> 31).wrapping_mul(2).wrapping_sub(1);
    f32::from_bits(bits.wrapping_add(u32::from(f64::from(y) > x).wrapping_mul(step)))
}

/// The smallest `f32` ≥ `x` (`next_up` of the nearest when that is below).
///
/// Branch-free as [`round_down`]: +1 on the bits of a non-negative `y`
/// (+0 steps to the smallest subnormal), −1 on those of a negative one
/// (−∞ steps to `−f32::MAX`); `y` is never −0 when it is below `x`, and a
/// NaN compares false: the answer is `numeric::next_up`'s, bit for bit.
#[inline(always)]
pub(crate) fn round_up(x: f64) -> f32 {
    let y = x as f32;
    let bits = y.to_bits();
    let step = 1u32.wrapping_sub((bits >> 31).wrapping_mul(2));
    f32::from_bits(bits.wrapping_add(u32::from(f64::from(y) < x).wrapping_mul(step)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::{next_down, next_up};

    /// The branch-free roundings are the definitions' (`next_down` /
    /// `next_up` of the nearest `f32` when it lies on the wrong side), bit
    /// for bit, at zeros, subnormals, the ends of the range, infinities,
    /// NaN and between neighbouring `f32`.
    #[test]
    fn roundings_match_their_definition() {
        let down = |x: f64| {
            let y = x as f32;
            if f64::from(y) > x {
                next_down(y)
            } else {
                y
            }
        };
        let up = |x: f64| {
            let y = x as f32;
            if f64::from(y) < x {
                next_up(y)
            } else {
                y
            }
        };
        let mut xs = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN,
            f64::from(f32::MAX),
            f64::from(f32::MIN),
            f64::from(f32::MAX) * (1.0 + 1e-9),
            f64::from(f32::MIN) * (1.0 + 1e-9),
            1e-50,
            -1e-50,
            f64::from(f32::from_bits(1)),
            f64::from(f32::from_bits(1)) * 0.5,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let f = f32::from_bits((seed >> 32) as u32);
            let e = f64::from_bits(seed & 0x000f_ffff_ffff_ffff | 0x3fe0_0000_0000_0000) - 0.75;
            xs.extend([f64::from(f), f64::from(f) * (1.0 + e * 1e-7), f64::from(f) + e * 1e-45]);
        }
        for x in xs {
            assert_eq!(round_down(x).to_bits(), down(x).to_bits(), "{x:e}");
            assert_eq!(round_up(x).to_bits(), up(x).to_bits(), "{x:e}");
        }
    }

    /// `VoxelHit::single`'s table is `Part::axis_face` (the face entered
    /// moving down an axis is its `+` face).
    #[test]
    fn single_faces_are_axis_faces() {
        for a in 0..3 {
            for neg in 0..8u8 {
                let h = VoxelHit::single([0; 3], 1 << a, neg, 0.0);
                assert_eq!(h.face, Some(Part::axis_face(a, neg >> a & 1 != 0)));
            }
        }
    }

    /// `Found::into_hit` builds, bit for bit, the hit that
    /// `VoxelHit::single` then `make_hit` build (points, normals and their
    /// zeros' signs included), on any axis and direction.
    #[test]
    fn single_hits_match_make_hit() {
        let grid = Grid::<3>::new(Vec3::new(0.5, 1.25, 2.0), Vec3::new(-0.75, 0.125, 3.0));
        let bits = |h: &Hit| {
            let v = |v: Vec3| v.to_array().map(f32::to_bits);
            (h.t.to_bits(), v(h.point), v(h.normal), h.front_face, h.part, h.cell)
        };
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let neg = (next() % 8) as u8;
            let axes = 1u8 << (next() % 3);
            let f = |x: u64| (x % 2000) as f32 / 37.0 - 20.0;
            let d: [f32; 3] = std::array::from_fn(|a| {
                (f(next()).abs() + 0.01) * if neg >> a & 1 != 0 { -1.0 } else { 1.0 }
            });
            let ray = Ray::new(Vec3::new(f(next()), f(next()), f(next())), Vec3::from_array(d));
            let cell = [0; 3].map(|_: i32| (next() % 200) as i32 - 100);
            let t = f(next()).abs();
            let direct = Found::Single(cell, axes, neg, t).into_hit(&grid, &ray);
            let built = VoxelHit::single(cell, axes, neg, t).make_hit(&grid, &ray);
            assert_eq!(bits(&direct), bits(&built), "{ray:?} {cell:?} {axes} {neg} {t}");
        }
    }

    /// `face_axis` inverts `Part::axis_face` (its arithmetic relies on the
    /// order of the faces in `Part`) and gives `(2, false)` for other parts.
    #[test]
    fn face_axis_inverts_axis_face() {
        for axis in 0..3 {
            for positive in [false, true] {
                assert_eq!(face_axis(Part::axis_face(axis, positive)), (axis, positive));
            }
        }
        for part in [Part::Surface, Part::Face, Part::Side, Part::Top] {
            assert_eq!(face_axis(part), (2, false));
        }
    }
}
