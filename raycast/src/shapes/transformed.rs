//! [`Transformed`]: any shape placed in the world by an affine map.
//!
//! The ray is taken into the shape's frame with `local_from_world` and *not*
//! re-normalised, so the local ray `(M⁻¹·o, M⁻¹·d)` reaches the local point
//! `M⁻¹·p` at the same `t` as the world ray reaches `p` (an affine map keeps
//! ratios along a line). Normals come back with the inverse transpose,
//! `n_world ∝ (M⁻¹)ᵀ·n_local`, and are re-normalised; that keeps them
//! perpendicular to the surface under non-uniform scale. A map with negative
//! determinant (a mirror) keeps the normals outward too, since the inverse
//! transpose maps the outward side of the surface to the outward side.
//!
//! Per-query cost: both maps are applied as 4-lane `Vec3A` products (the
//! columns of the `Affine3A`), `hits` stops after the local query, `cast`
//! takes the local candidate hit to the world whether or not it exists and
//! decides hit or miss only at the end ([`RayCast::cast_candidate`]: no
//! mispredicted branch on a random mix of hits and misses; the final
//! `Option` is built so that LLVM cannot move the world point and normal
//! back under a branch, see `hit::hit_if_unbranched`), the
//! local ray is rebuilt lane by lane (see [`Transformed::to_local`]), and when
//! the linear part is a similarity (rotation times uniform scale, the usual
//! placement) the inverse transpose is stored divided by its scale, so it is a
//! rotation and the world normal needs no re-normalisation (its length stays
//! within a few ulps of 1).

use crate::error::{finite_vec, or_panic};
use crate::hit::hit_if_unbranched;
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Ray, ShapeError, Span};
use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};

/// `world_from_local = translation · rotation · scale`, validated.
///
/// `rotation` is normalised here.
///
/// # Errors
/// [`ShapeError`] on `translation` if not finite, on `rotation` if zero or not
/// finite, on `scale` if any component is zero or not finite.
///
/// # Examples
/// ```
/// use raycast::{affine_from_trs, vec3, Quat, Vec3};
/// let m = affine_from_trs(vec3(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::splat(2.0))?;
/// assert_eq!(m.transform_point3(Vec3::ONE), vec3(3.0, 2.0, 2.0));
/// assert!(affine_from_trs(Vec3::ZERO, Quat::IDENTITY, vec3(1.0, 0.0, 1.0)).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
pub fn affine_from_trs(translation: Vec3, rotation: Quat, scale: Vec3) -> Result<Affine3A, ShapeError> {
    finite_vec("translation", translation)?;
    let q = glam::Vec4::from(rotation);
    let len = q.length();
    if !(len.is_finite() && len > 0.0) {
        return Err(ShapeError::new(
            "rotation",
            format!("must be a finite non-zero quaternion, got [{}, {}, {}, {}]", q.x, q.y, q.z, q.w),
        ));
    }
    if !(scale.is_finite() && scale.cmpne(Vec3::ZERO).all()) {
        return Err(ShapeError::new(
            "scale",
            format!("must be finite and non-zero, got [{}, {}, {}]", scale.x, scale.y, scale.z),
        ));
    }
    Ok(Affine3A::from_scale_rotation_translation(scale, Quat::from_vec4(q / len), translation))
}

/// A shape `S` placed by an affine `world_from_local` map.
///
/// # Examples
/// ```
/// use raycast::{vec3, Affine3A, Interval, Ray, RayCast, Sphere, Transformed};
/// let m = Affine3A::from_scale(vec3(2.0, 1.0, 1.0)) ;
/// let ellipsoid = Transformed::new(Sphere::new(1.0), Affine3A::from_translation(vec3(0.0, 0.0, 10.0)) * m);
/// let hit = ellipsoid.cast(&Ray::new(vec3(-5.0, 0.0, 10.0), vec3(1.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!(hit.t, 3.0);
/// assert_eq!(hit.normal, vec3(-1.0, 0.0, 0.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Transformed<S> {
    shape: S,
    world_from_local: Affine3A,
    local_from_world: Affine3A,
    /// (M⁻¹)ᵀ of the linear part: takes local normals to world normals;
    /// divided by its scale when the map is a similarity (see [`normal_map`]).
    normal_from_local: Mat3A,
    /// False when `normal_from_local` is a rotation (to within a few ulps), so
    /// that unit normals stay unit without re-normalising.
    renormalize: bool,
}

/// `(M⁻¹)ᵀ` and whether the normals it gives must be re-normalised.
///
/// With `N = (M⁻¹)ᵀ` and `G = NᵀN`: if `G = c·I` to within `8ε·c` (a rotation
/// times a uniform scale `√c`, rounded), `N/√c` is a rotation to within ~4ε,
/// so `|N/√c · n|` is `1 ± 1e-6` for a unit `n` and the normalisation (a square
/// root and a division per hit) is skipped. Otherwise it is kept.
fn normal_map(local_from_world: &Affine3A) -> (Mat3A, bool) {
    let n = local_from_world.matrix3.transpose();
    let (x, y, z) = (n.x_axis, n.y_axis, n.z_axis);
    let c = (x.length_squared() + y.length_squared() + z.length_squared()) / 3.0;
    let tol = 8.0 * f32::EPSILON * c;
    let similar = [x.length_squared() - c, y.length_squared() - c, z.length_squared() - c]
        .into_iter()
        .chain([x.dot(y), y.dot(z), z.dot(x)])
        .all(|e| e.abs() <= tol);
    if similar && c.is_finite() && c > 0.0 {
        (n * (1.0 / c.sqrt()), false)
    } else {
        (n, true)
    }
}

impl<S> Transformed<S> {
    /// `shape` placed by `world_from_local`.
    ///
    /// # Errors
    /// [`ShapeError`] on `transform` unless the map is finite and invertible.
    pub fn try_new(shape: S, world_from_local: Affine3A) -> Result<Self, ShapeError> {
        let det = world_from_local.matrix3.determinant();
        let local_from_world = world_from_local.inverse();
        let finite = world_from_local.is_finite() && local_from_world.is_finite();
        if !(finite && det != 0.0 && det.is_finite()) {
            return Err(ShapeError::new(
                "transform",
                format!("must be finite and invertible, got determinant {det}"),
            ));
        }
        let (normal_from_local, renormalize) = normal_map(&local_from_world);
        Ok(Self { shape, world_from_local, local_from_world, normal_from_local, renormalize })
    }

    /// Like [`Transformed::try_new`].
    ///
    /// # Panics
    /// With the error's message when the map is refused.
    #[track_caller]
    pub fn new(shape: S, world_from_local: Affine3A) -> Self {
        or_panic(Self::try_new(shape, world_from_local))
    }

    /// The shape in its own frame.
    pub fn shape(&self) -> &S {
        &self.shape
    }

    /// The placement.
    pub fn world_from_local(&self) -> &Affine3A {
        &self.world_from_local
    }

    /// The inverse of the placement.
    pub fn local_from_world(&self) -> &Affine3A {
        &self.local_from_world
    }

    /// Replaces the placement (same validation as [`Transformed::try_new`]);
    /// on error nothing changes.
    ///
    /// # Errors
    /// As [`Transformed::try_new`].
    pub fn set_world_from_local(&mut self, world_from_local: Affine3A) -> Result<(), ShapeError> {
        let det = world_from_local.matrix3.determinant();
        let inv = world_from_local.inverse();
        if !(world_from_local.is_finite() && inv.is_finite() && det != 0.0 && det.is_finite()) {
            return Err(ShapeError::new(
                "transform",
                format!("must be finite and invertible, got determinant {det}"),
            ));
        }
        self.world_from_local = world_from_local;
        self.local_from_world = inv;
        (self.normal_from_local, self.renormalize) = normal_map(&inv);
        Ok(())
    }

    /// The ray in the shape's frame (same `t`).
    #[inline(always)]
    pub fn to_local(&self, ray: &Ray) -> Ray {
        let m = &self.local_from_world;
        let (c, t) = (&m.matrix3, m.translation);
        let (o, d) = (ray.origin, ray.dir);
        // Summed as a tree, `(x·c₀ + y·c₁) + (z·c₂ + t)`: two additions on
        // the path from the ray to the local ray instead of glam's three in a
        // chain (every query waits for it). The rounding differs from
        // `transform_point3a` in the last bit only; all queries use this map.
        let o = (c.x_axis * o.x + c.y_axis * o.y) + (c.z_axis * o.z + t);
        let d = (c.x_axis * d.x + c.y_axis * d.y) + c.z_axis * d.z;
        // Lane by lane: glam's `Vec3::from(Vec3A)` goes through a 16-byte
        // store, and the kernel's reload of it as a `Vec3A` then misses store
        // forwarding (a stall on every query).
        Ray::new(Vec3::new(o.x, o.y, o.z), Vec3::new(d.x, d.y, d.z))
    }

    /// A local hit brought back to the world: same `t`, the local point
    /// mapped, the normal by the inverse transpose, the same `front_face`.
    ///
    /// `front_face` is invariant: `d_w·n_w = (M·d)ᵀ·M⁻ᵀ·n / |..| = d·n / |..|`,
    /// mirrors included, so the local sign (from the local normal, computed
    /// more accurately than the rounded world one) is kept, without a dot
    /// product at the end of the chain.
    #[inline(always)]
    pub fn to_world(&self, _ray: &Ray, local: Hit) -> Hit {
        let ln = Vec3A::new(local.normal.x, local.normal.y, local.normal.z);
        let mut n = self.normal_from_local * ln;
        if self.renormalize {
            // Same as `normalize_or(ln)`, with a lane select instead of
            // glam's branch: on a miss (`cast_candidate`) the local normal
            // is arbitrary and the branch would be random.
            let len2 = n.length_squared();
            let unit = n * (1.0 / len2.sqrt());
            let good = (len2 > 0.0) & (len2 < f32::INFINITY);
            n = Vec3A::select(glam::BVec3A::splat(good), unit, ln);
        }
        let p = Vec3A::new(local.point.x, local.point.y, local.point.z);
        let point = self.world_from_local.transform_point3a(p);
        Hit { point: Vec3::new(point.x, point.y, point.z), normal: Vec3::new(n.x, n.y, n.z), ..local }
    }
}

impl<S: RayCast> RayCast for Transformed<S> {
    /// The local candidate taken to the world whether or not it hits, and
    /// the choice made once at the end (see [`RayCast::cast_candidate`]).
    #[inline(always)]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (ok, h) = self.cast_candidate(ray, range);
        hit_if_unbranched(ok, h)
    }

    #[inline(always)]
    fn cast_candidate(&self, ray: &Ray, range: Interval) -> (bool, Hit) {
        let (ok, h) = self.shape.cast_candidate(&self.to_local(ray), range);
        (ok, self.to_world(ray, h))
    }

    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.shape.hits(&self.to_local(ray), range)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let local = self.to_local(ray);
        let mut hits = self.shape.cast_all(&local, range);
        for h in &mut hits {
            *h = self.to_world(ray, *h);
        }
        hits
    }

    fn local_bounds(&self) -> Aabb {
        self.shape.local_bounds().transformed(&self.world_from_local)
    }
}

impl<S: Solid> Solid for Transformed<S> {
    fn contains(&self, p: Vec3) -> bool {
        self.shape.contains(self.local_from_world.transform_point3(p))
    }
}

impl<S: ConvexSolid> ConvexSolid for Transformed<S> {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let s = self.shape.span(&self.to_local(ray))?;
        Some(Span { enter: self.to_world(ray, s.enter), exit: self.to_world(ray, s.exit) })
    }
}
