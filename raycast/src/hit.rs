//! What a query answers: [`Hit`], [`Part`] and [`Span`].

use crate::Ray;
use glam::{IVec3, Vec2, Vec3};

/// The feature of a shape that a hit landed on.
///
/// Names as in DESIGN §2: cuboid and voxel faces `+x -x +y -y +z -z`; cylinder
/// `side top bottom`; cone `side base`; capsule `side cap_a cap_b`; sphere and
/// torus `surface`; triangle, plane and mesh `face`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Part {
    /// The one smooth surface of a sphere or torus.
    Surface,
    /// The face of a triangle, plane or mesh.
    Face,
    /// The `+x` face of a cuboid or voxel cell.
    PosX,
    /// The `-x` face of a cuboid or voxel cell.
    NegX,
    /// The `+y` face of a cuboid or voxel cell.
    PosY,
    /// The `-y` face of a cuboid or voxel cell.
    NegY,
    /// The `+z` face of a cuboid or voxel cell.
    PosZ,
    /// The `-z` face of a cuboid or voxel cell.
    NegZ,
    /// The curved side of a cylinder, cone or capsule.
    Side,
    /// The cap of a cylinder at `y = +half_height`.
    Top,
    /// The cap of a cylinder at `y = -half_height`.
    Bottom,
    /// The base disk of a cone at `y = -half_height`.
    Base,
    /// The hemisphere of a capsule around its end point `a`.
    CapA,
    /// The hemisphere of a capsule around its end point `b`.
    CapB,
}

impl Part {
    /// The name used by the JSON protocol (`"+x"`, `"side"`, `"cap_a"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Part::Surface => "surface",
            Part::Face => "face",
            Part::PosX => "+x",
            Part::NegX => "-x",
            Part::PosY => "+y",
            Part::NegY => "-y",
            Part::PosZ => "+z",
            Part::NegZ => "-z",
            Part::Side => "side",
            Part::Top => "top",
            Part::Bottom => "bottom",
            Part::Base => "base",
            Part::CapA => "cap_a",
            Part::CapB => "cap_b",
        }
    }

    /// The face of an axis-aligned box whose outward normal is `sign` along `axis`
    /// (`axis` 0, 1, 2 for x, y, z; `positive` for the `+` face).
    pub const fn axis_face(axis: usize, positive: bool) -> Part {
        match (axis, positive) {
            (0, true) => Part::PosX,
            (0, false) => Part::NegX,
            (1, true) => Part::PosY,
            (1, false) => Part::NegY,
            (_, true) => Part::PosZ,
            (_, false) => Part::NegZ,
        }
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One crossing of a ray with a surface.
///
/// * `normal` is unit length and outward for closed solids (for a triangle or
///   mesh `normalize((b - a) × (c - a))`, for a plane its own normal); it is
///   never flipped toward the ray.
/// * `front_face` is `dir · normal < 0`: the ray arrives from outside.
/// * `uv` and `triangle` are set for triangles and meshes
///   (`point = (1-u-v)·a + u·b + v·c`), `cell` for voxels, `object` in scenes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Hit {
    /// Ray parameter of the crossing, in units of `dir`.
    pub t: f32,
    /// The point on the surface.
    pub point: Vec3,
    /// Unit outward normal of the surface at `point`.
    pub normal: Vec3,
    /// `dir · normal < 0`.
    pub front_face: bool,
    /// Which feature of the shape was hit.
    pub part: Part,
    /// Barycentric `(u, v)` for triangles and meshes.
    pub uv: Option<Vec2>,
    /// Index of the triangle in a mesh.
    pub triangle: Option<u32>,
    /// The voxel cell that was hit.
    pub cell: Option<IVec3>,
    /// The user id of the scene object that was hit.
    pub object: Option<u32>,
}

impl Hit {
    /// A hit at parameter `t` of `ray` with the given unit outward `normal`;
    /// `point` is `ray.at(t)` and `front_face` follows from `dir · normal`.
    #[inline]
    pub fn new(ray: &Ray, t: f32, normal: Vec3, part: Part) -> Self {
        Self::with_point(ray, t, ray.at(t), normal, part)
    }

    /// Like [`Hit::new`] with a `point` computed by the caller (for example
    /// snapped onto the surface).
    #[inline]
    pub fn with_point(ray: &Ray, t: f32, point: Vec3, normal: Vec3, part: Part) -> Self {
        Self {
            t,
            point,
            normal,
            front_face: ray.dir.dot(normal) < 0.0,
            part,
            uv: None,
            triangle: None,
            cell: None,
            object: None,
        }
    }
}

impl Hit {
    /// Like [`Hit::with_point`] with a `front_face` known from the kernel's
    /// own geometry (exactly `dir · normal < 0` at the exact crossing),
    /// rather than a dot product with the rounded normal.
    #[inline(always)]
    pub(crate) fn with_face(t: f32, point: Vec3, normal: Vec3, front_face: bool, part: Part) -> Self {
        Self { t, point, normal, front_face, part, uv: None, triangle: None, cell: None, object: None }
    }

    /// The stand-in of [`RayCast::cast_candidate`](crate::RayCast::cast_candidate)
    /// when there is no hit: finite, never reported.
    pub(crate) const NONE: Hit = Hit {
        t: 0.0,
        point: Vec3::ZERO,
        normal: Vec3::Y,
        front_face: false,
        part: Part::Face,
        uv: None,
        triangle: None,
        cell: None,
        object: None,
    };
}

/// `ok.then_some(hit)`, for a `hit` computed whether or not it exists.
///
/// A cast whose hit or miss is random (half the rays of a shuffled batch)
/// loses ~20 cycles to each mispredicted branch, plus the overlap of the
/// next ray's work with this one's; computing the few dozen instructions of
/// the hit on a miss too is cheaper. With `hit` already computed (and the
/// call inlined), `None`'s payload is undefined, so LLVM keeps the payload
/// stores unconditional and chooses only the discriminant, with a
/// conditional move (but it may still move the last steps of the hit under
/// a branch on `ok`; see [`hit_if_unbranched`]).
#[inline(always)]
pub(crate) fn hit_if(ok: bool, hit: Hit) -> Option<Hit> {
    if ok {
        Some(hit)
    } else {
        None
    }
}

/// [`hit_if`] that keeps every step of `hit` out of a branch on `ok`.
///
/// Written as `if ok { Some(hit) } else { None }`, the `None` arm leaves the
/// payload undefined, and LLVM moved the last steps of a
/// [`Transformed`](crate::Transformed) hit (the world point and normal)
/// under a branch on `ok`, mispredicted half the time on a random mix of
/// rays. Here `Some(hit)` is written first and a miss overwrites only the
/// discriminant, so the payload is the same on both paths, nothing can be
/// sunk, and `ok` only chooses the discriminant (a `sub`/`setcc`). Used
/// where a query's hit or miss is unpredictable; where most calls miss (a
/// scene's candidates) the branch, well predicted, is cheaper.
#[inline(always)]
pub(crate) fn hit_if_unbranched(ok: bool, hit: Hit) -> Option<Hit> {
    let mut out = Some(hit);
    if !ok {
        out = None;
    }
    out
}

/// Where the infinite line through a ray is inside a convex solid: from
/// `enter` to `exit` (`enter.t <= exit.t`; `enter.t` may be negative).
/// A tangent line gives `enter.t == exit.t`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Span {
    /// Where the line enters the solid.
    pub enter: Hit,
    /// Where the line leaves the solid.
    pub exit: Hit,
}

/// Sorts hits by `t` (NaN-free by construction; `total_cmp` keeps it total).
#[allow(dead_code)]
pub(crate) fn sort_by_t(hits: &mut [Hit]) {
    hits.sort_by(|a, b| a.t.total_cmp(&b.t));
}
