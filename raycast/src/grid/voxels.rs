//! The first solid cell along a ray, for any storage: [`first_solid`] and
//! [`VoxelHit`], plus the pieces the dense and chunked volumes share
//! (the start of a cast, building the [`Hit`]).
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
use crate::numeric::{next_down, next_up};
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

impl VoxelHit {
    /// The full [`Hit`] for `ray` on `grid`: the point on the entered face
    /// (its coordinate on the face's axis snapped to the plane), the face's
    /// outward normal and `cell`.
    pub fn to_hit(&self, grid: &Grid<3>, ray: &Ray) -> Hit {
        let face = self.face.unwrap_or_else(|| inside_face(grid, ray, self.cell));
        let (axis, positive) = face_axis(face);
        let s = if positive { 1.0 } else { -1.0 };
        let mut point = ray.at(self.t);
        // Per axis (no indexing by `axis`: the point and normal stay in registers).
        let snap = |a: usize| {
            let k = self.cell[a] + i32::from(positive);
            (f64::from(grid.origin[a]) + f64::from(k) * f64::from(grid.cell_size[a])) as f32
        };
        let snapped = self.face.is_some();
        let normal = match axis {
            0 => {
                if snapped {
                    point.x = snap(0);
                }
                Vec3::new(s, 0.0, 0.0)
            }
            1 => {
                if snapped {
                    point.y = snap(1);
                }
                Vec3::new(0.0, s, 0.0)
            }
            _ => {
                if snapped {
                    point.z = snap(2);
                }
                Vec3::new(0.0, 0.0, s)
            }
        };
        // `dir · normal < 0` as `Hit::with_point` has it: the other two
        // products are ±0, so the dot product is exactly `s·dir[axis]`.
        let d = ray.dir[axis];
        let front_face = if positive { d < 0.0 } else { d > 0.0 };
        let mut hit = Hit::with_face(self.t, point, normal, front_face, face);
        hit.cell = Some(self.cell);
        hit
    }
}

/// Axis and sign of a cell face.
fn face_axis(face: Part) -> (usize, bool) {
    match face {
        Part::PosX => (0, true),
        Part::NegX => (0, false),
        Part::PosY => (1, true),
        Part::NegY => (1, false),
        Part::PosZ => (2, true),
        _ => (2, false),
    }
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
        let plane = f64::from(grid.origin[a]) + f64::from(k) * f64::from(grid.cell_size[a]);
        let t = (plane - f64::from(ray.origin[a])) / d;
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
pub(crate) fn best_compiled<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (just checked).
        return unsafe { with_avx(f) };
    }
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

/// How a volume's cast begins, given its walk built with
/// [`GridWalk::in_box`]: no walk at all, a hit on the start cell, or walk on.
pub(crate) enum CastStart {
    /// The ray cannot reach the solid cells' box (or is degenerate).
    Miss,
    /// The ray starts inside a solid cell: hit at `t_min`, no face.
    Inside(VoxelHit),
    /// Walk on from the (empty) start cell.
    Walk,
}

/// The common start of the dense and chunked casts: the walk `w` from
/// [`GridWalk::in_box`] (clipped to the box of cells that may be solid,
/// begun, no step limit) and the test of its start cell with `solid`. The
/// walk stays in the caller's frame (no copy of it per ray).
#[inline(always)]
pub(crate) fn start_cast(w: &GridWalk<3>, solid: impl Fn(IVec3) -> bool) -> CastStart {
    if !w.is_walking() {
        return CastStart::Miss;
    }
    let start = IVec3::from_array(w.cell());
    if solid(start) {
        return CastStart::Inside(VoxelHit { cell: start, t: w.t_min(), face: None });
    }
    CastStart::Walk
}

/// The largest `f32` ≤ `x`.
pub(crate) fn round_down(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x {
        next_down(y)
    } else {
        y
    }
}

/// The smallest `f32` ≥ `x`.
pub(crate) fn round_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x {
        next_up(y)
    } else {
        y
    }
}
