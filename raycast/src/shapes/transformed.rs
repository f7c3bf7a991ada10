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
//!
//! A sphere placed by a similarity skips both maps: it has no orientation,
//! so it is cast in the world frame as a sphere of radius `s·r` centred at
//! the translation (`sphere::Placed`; the shape says it is a sphere through
//! the crate's hidden [`RayCast::as_sphere`]). The rotation was on the path of every
//! query: casting a placed sphere this way is 1.7× faster, `hits` 1.75×.
//! A plane under any affine map is a plane of the world frame, cast the same
//! way (`Plane::placed`, through the hidden [`RayCast::as_plane`]), and so
//! is a triangle (`Triangle::placed`, [`RayCast::as_triangle`]), and a
//! capsule under a similarity is the capsule around the image segment with
//! radius `s·r` (`Capsule::placed`, [`RayCast::as_capsule`]: its kernel is
//! written for free end points, so it runs unchanged on the world ray and
//! gives the world point and normal; `cast` 1.3× faster than through both
//! maps; for a `Transformed<Capsule>`, not a `Transformed<Shape>`, see
//! `Shape::as_capsule`). These world forms are made once, when the placement is set, and
//! kept (`World`, 56 bytes, the capsule's boxed): formed per query, the
//! plane's cost two matrix products (~8% of a plane cast).

use crate::error::{finite_vec, or_panic};
use crate::hit::hit_if_unbranched;
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Capsule, Hit, Interval, Plane, Ray, ShapeError, Span};
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
    /// The placed shape as a shape of the world frame, when it has such a
    /// form that needs no map on the ray (see [`World`]); formed once here,
    /// not per query.
    world: World,
}

/// A placed shape that is cast in the world frame, with no map applied to
/// the ray or to the hit (see the module doc): a sphere under a similarity
/// (`sphere::Placed`), a plane ([`Plane::placed`]) or a triangle
/// (`Triangle::placed`) under any map, a capsule under a similarity
/// (`Capsule::placed`), made when the placement is set.
#[derive(Clone, Debug, PartialEq)]
enum World {
    /// Cast in the local frame.
    Local,
    Sphere(crate::shapes::sphere::Placed),
    Plane(Plane),
    Triangle(crate::shapes::triangle::Placed),
    /// Boxed: a capsule's kernel data (176 bytes) would triple `World`
    /// for every other shape. The extra load is off the ray's path when the
    /// box is in cache; a scene's `Shape` does not take this form (see
    /// `Shape::as_capsule`).
    Capsule(Box<Capsule>),
}

impl World {
    /// The world form of `shape` placed by `world_from_local` (with its
    /// normal map and similarity scale `(s, 1/s)`, `s = 0` if none).
    fn of<S: RayCast>(
        shape: &S,
        world_from_local: &Affine3A,
        normal_from_local: &Mat3A,
        renormalize: bool,
        (s, inv_s): (f64, f64),
    ) -> Self {
        if let Some(sphere) = shape.as_sphere() {
            if s > 0.0 {
                return World::Sphere(sphere.placed(world_from_local.translation.into(), s, inv_s));
            }
        }
        if let Some(triangle) = shape.as_triangle() {
            return World::Triangle(triangle.placed(world_from_local));
        }
        if let Some(capsule) = shape.as_capsule() {
            if s > 0.0 {
                return World::Capsule(Box::new(capsule.placed(world_from_local, s)));
            }
        }
        match shape.as_plane() {
            Some(plane) => World::Plane(plane.placed(world_from_local, normal_from_local, renormalize)),
            None => World::Local,
        }
    }
}

/// The maps of a placement: `M⁻¹` (as glam's `Affine3A::inverse`), the
/// normal map and whether its normals need re-normalising
/// ([`normal_map`]); an error naming the determinant for a map that is not
/// finite and invertible.
#[inline(always)]
fn maps(world_from_local: &Affine3A) -> Result<(Affine3A, Mat3A, bool), ShapeError> {
    let m = &world_from_local.matrix3;
    // glam's `Mat3A::inverse` spelt out (the same operations in the same
    // order, so the same bits): its cofactor columns times `1/det` are
    // `(M⁻¹)ᵀ` itself, which the normal map wants, and `det` is its
    // `determinant()`, formed once.
    let c2 = m.x_axis.cross(m.y_axis);
    let det = m.z_axis.dot(c2);
    let inv_det = Vec3A::splat(det.recip());
    let n = Mat3A::from_cols(
        m.y_axis.cross(m.z_axis) * inv_det,
        m.z_axis.cross(m.x_axis) * inv_det,
        c2 * inv_det,
    );
    let l = n.transpose();
    let inv = Affine3A { matrix3: l, translation: -(l * world_from_local.translation) };
    // Both maps finite, tested at once over their eight columns: `0·v`
    // is ±0 in a finite lane and NaN in a lane holding ±∞ or NaN, and
    // the sum keeps any NaN. A finite inverse implies `det ≠ 0` (`1/0 = ∞`
    // would reach it as ∞ or NaN), so only `det` overflowing on its own
    // is left to test.
    let zeros = [m.x_axis, m.y_axis, m.z_axis, world_from_local.translation]
        .into_iter()
        .chain([l.x_axis, l.y_axis, l.z_axis, inv.translation])
        .fold(Vec3A::ZERO, |sum, v| sum + v * 0.0);
    if !(zeros.cmpeq(Vec3A::ZERO).all() && det.is_finite()) {
        return Err(ShapeError::new(
            "transform",
            format!("must be finite and invertible, got determinant {det}"),
        ));
    }
    let (normal, renormalize) = normal_map(&l, n);
    Ok((inv, normal, renormalize))
}

/// The similarity scale of [`similarity_scale`], formed only for the shapes
/// whose world form uses it (a sphere, a capsule, see `World::of`): for any
/// other its f64 square root and division are skipped.
#[inline(always)]
fn scale_for<S: RayCast>(shape: &S, world_from_local: &Affine3A, renormalize: bool) -> (f64, f64) {
    if shape.as_sphere().is_some() || shape.as_capsule().is_some() {
        similarity_scale(world_from_local, renormalize)
    } else {
        (0.0, 0.0)
    }
}

/// `(s, 1/s)` for a similarity `world_from_local` (rotation times uniform
/// scale `s`, to within the tolerance of [`normal_map`]), from the mean
/// squared length of its columns in f64; `(0, 0)` for any other map.
fn similarity_scale(world_from_local: &Affine3A, renormalize: bool) -> (f64, f64) {
    if renormalize {
        return (0.0, 0.0);
    }
    let m = &world_from_local.matrix3;
    let sq = |v: Vec3A| Vec3::from(v).as_dvec3().length_squared();
    let s = ((sq(m.x_axis) + sq(m.y_axis) + sq(m.z_axis)) / 3.0).sqrt();
    if s > 0.0 && s.is_finite() {
        (s, 1.0 / s)
    } else {
        (0.0, 0.0)
    }
}

impl<S: RayCast> Transformed<S> {
    /// `shape` placed by `world_from_local`.
    ///
    /// # Errors
    /// [`ShapeError`] on `transform` unless the map is finite and invertible.
    pub fn try_new(shape: S, world_from_local: Affine3A) -> Result<Self, ShapeError> {
        let (local_from_world, normal_from_local, renormalize) = maps(&world_from_local)?;
        let scale = scale_for(&shape, &world_from_local, renormalize);
        let world = World::of(&shape, &world_from_local, &normal_from_local, renormalize, scale);
        Ok(Self { shape, world_from_local, local_from_world, normal_from_local, renormalize, world })
    }

    /// Like [`Transformed::try_new`].
    ///
    /// # Panics
    /// With the error's message when the map is refused.
    #[track_caller]
    pub fn new(shape: S, world_from_local: Affine3A) -> Self {
        or_panic(Self::try_new(shape, world_from_local))
    }

    /// Replaces the placement (same validation as [`Transformed::try_new`]);
    /// on error nothing changes.
    ///
    /// # Errors
    /// As [`Transformed::try_new`].
    pub fn set_world_from_local(&mut self, world_from_local: Affine3A) -> Result<(), ShapeError> {
        let (local_from_world, normal_from_local, renormalize) = maps(&world_from_local)?;
        self.world_from_local = world_from_local;
        self.local_from_world = local_from_world;
        (self.normal_from_local, self.renormalize) = (normal_from_local, renormalize);
        let scale = scale_for(&self.shape, &world_from_local, renormalize);
        // A capsule moved by a similarity again reuses its box.
        if let (World::Capsule(placed), Some(capsule)) = (&mut self.world, self.shape.as_capsule()) {
            if scale.0 > 0.0 {
                **placed = capsule.placed(&world_from_local, scale.0);
                return Ok(());
            }
        }
        self.world =
            World::of(&self.shape, &world_from_local, &self.normal_from_local, self.renormalize, scale);
        Ok(())
    }
}

/// `(M⁻¹)ᵀ` and whether the normals it gives must be re-normalised.
///
/// With `N = (M⁻¹)ᵀ` and `G = NᵀN`: if `G = c·I` to within `8ε·c` (a rotation
/// times a uniform scale `√c`, rounded), `N/√c` is a rotation to within ~4ε,
/// so `|N/√c · n|` is `1 ± 1e-6` for a unit `n` and the normalisation (a square
/// root and a division per hit) is skipped. Otherwise it is kept.
///
/// From `L = M⁻¹` and `N = Lᵀ` both at hand, with the sums in lanes: the
/// columns of `N` are the rows `l₀, l₁, l₂` of `L`, so lane `i` of
/// `Σₖ lₖ·lₖ` is `|Nᵢ|²` and lane `i` of `Σₖ lₖ·lₖ.yzx` is `Nᵢ·Nᵢ₊₁`, added in
/// the order of glam's `dot` (the test `normal_map_decides_as_the_dot_products`
/// holds it to the form with `length_squared` and `dot`).
#[inline(always)]
fn normal_map(l: &Mat3A, n: Mat3A) -> (Mat3A, bool) {
    use glam::Vec3Swizzles;
    let (a, b, c) = (l.x_axis, l.y_axis, l.z_axis);
    let sq = a * a + b * b + c * c;
    let dots = a * a.yzx() + b * b.yzx() + c * c.yzx();
    let mean = (sq.x + sq.y + sq.z) / 3.0;
    let tol = Vec3A::splat(8.0 * f32::EPSILON * mean);
    // `<=` on masks, not a max of the deviations: a NaN must fail the test.
    let similar = ((sq - Vec3A::splat(mean)).abs().cmple(tol) & dots.abs().cmple(tol)).all();
    // `0 < mean < ∞` (finite and positive), in two compares.
    if similar && mean > 0.0 && mean < f32::INFINITY {
        (n * (1.0 / mean.sqrt()), false)
    } else {
        (n, true)
    }
}

impl<S> Transformed<S> {
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

impl<S: RayCast> Transformed<S> {
    /// The shape as a sphere in the world frame, when it is a sphere and the
    /// map a similarity: a sphere has no orientation, so the ray needs no
    /// rotation into its frame and the normal none back (see
    /// `sphere::Placed`); every query of such a sphere goes this way.
    #[inline(always)]
    fn sphere(&self) -> Option<&crate::shapes::sphere::Placed> {
        // Asked of the shape first: for a shape type that is never this
        // one the answer is known at compile time and the test goes away.
        self.shape.as_sphere()?;
        match &self.world {
            World::Sphere(placed) => Some(placed),
            _ => None,
        }
    }
}

impl<S: RayCast> Transformed<S> {
    /// The shape as a plane of the world frame, when it is a plane (see
    /// `Plane::placed`): every query of a placed plane goes this way.
    #[inline(always)]
    fn plane(&self) -> Option<&Plane> {
        // Asked of the shape first: for a shape type that is never this
        // one the answer is known at compile time and the test goes away.
        self.shape.as_plane()?;
        match &self.world {
            World::Plane(plane) => Some(plane),
            _ => None,
        }
    }

    /// The shape as a triangle of the world frame, when it is a triangle
    /// (see `Triangle::placed`): every query of a placed triangle goes this
    /// way.
    #[inline(always)]
    fn triangle(&self) -> Option<&crate::shapes::triangle::Placed> {
        // Asked of the shape first: for a shape type that is never this
        // one the answer is known at compile time and the test goes away.
        self.shape.as_triangle()?;
        match &self.world {
            World::Triangle(triangle) => Some(triangle),
            _ => None,
        }
    }

    /// The shape as a capsule of the world frame, when it is a capsule and
    /// the map a similarity (see `Capsule::placed`): every query of such a
    /// capsule goes this way.
    #[inline(always)]
    fn capsule(&self) -> Option<&Capsule> {
        // Asked of the shape first: for a shape type that is never this
        // one the answer is known at compile time and the test goes away.
        self.shape.as_capsule()?;
        match &self.world {
            World::Capsule(capsule) => Some(capsule),
            _ => None,
        }
    }

    /// [`RayCast::cast`] with hit or miss decided by a branch before a local
    /// hit is taken to the world: for callers where most calls miss (a
    /// scene's candidates), where the branch is well predicted and the
    /// branch-free form would map every miss's candidate for nothing. Same
    /// answers as `cast`.
    #[inline(always)]
    pub(crate) fn cast_branched(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        match &self.world {
            World::Local => self.shape.cast(&self.to_local(ray), range).map(|h| self.to_world(ray, h)),
            _ => self.cast(ray, range),
        }
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
        if let Some(sphere) = self.sphere() {
            return sphere.cast_candidate(ray, range);
        }
        if let Some(plane) = self.plane() {
            return plane.cast_candidate(ray, range);
        }
        if let Some(triangle) = self.triangle() {
            return triangle.cast_candidate(ray, range);
        }
        if let Some(capsule) = self.capsule() {
            return capsule.cast_candidate(ray, range);
        }
        let (ok, h) = self.shape.cast_candidate(&self.to_local(ray), range);
        (ok, self.to_world(ray, h))
    }

    #[inline(always)]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        if let Some(sphere) = self.sphere() {
            return sphere.hits(ray, range);
        }
        if let Some(plane) = self.plane() {
            return plane.hits(ray, range);
        }
        if let Some(triangle) = self.triangle() {
            return triangle.hits(ray, range);
        }
        if let Some(capsule) = self.capsule() {
            return capsule.hits(ray, range);
        }
        self.shape.hits(&self.to_local(ray), range)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        if let Some(sphere) = self.sphere() {
            return sphere.cast_all(ray, range);
        }
        if let Some(plane) = self.plane() {
            return plane.cast_all(ray, range);
        }
        if let Some(triangle) = self.triangle() {
            return triangle.cast_all(ray, range);
        }
        if let Some(capsule) = self.capsule() {
            return capsule.cast_all(ray, range);
        }
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
        if let Some(sphere) = self.sphere() {
            return sphere.span(ray);
        }
        if let Some(capsule) = self.capsule() {
            return capsule.span(ray);
        }
        let s = self.shape.span(&self.to_local(ray))?;
        Some(Span { enter: self.to_world(ray, s.enter), exit: self.to_world(ray, s.exit) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::Sphere;
    use crate::Part;
    use glam::{vec3, DMat3, DVec3, Vec4};

    /// Deterministic xorshift in [0, 1).
    struct Rng(u64);
    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }
        fn dir(&mut self) -> DVec3 {
            loop {
                let v = DVec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
                if v.length_squared() > 1e-3 && v.length_squared() <= 1.0 {
                    return v.normalize();
                }
            }
        }
    }

    /// The normal map and its similarity decision as first written, with
    /// `length_squared` and `dot` on the columns of `(M⁻¹)ᵀ`: the reference
    /// of `normal_map`, which forms the same sums in lanes.
    fn normal_map_reference(local_from_world: &Affine3A) -> (Mat3A, bool) {
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

    /// `maps` against glam and the reference: the inverse is glam's
    /// `Affine3A::inverse` bit for bit, the normal map and its decision are
    /// `normal_map_reference`'s, and a map is refused exactly when it or
    /// its inverse is not finite or its determinant is 0 or not finite — on
    /// rotations, uniform and non-uniform scales, mirrors, near-similarities
    /// (the decision's edge), singular maps and maps with ±∞ or NaN.
    #[test]
    fn normal_map_decides_as_the_dot_products() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let specials = [0.0f32, -0.0, 1e-30, 1e30, 3e38, f32::INFINITY, f32::NAN];
        for k in 0..20_000 {
            let q = glam::Quat::from_axis_angle(rng.dir().as_vec3(), rng.range(-3.0, 3.0) as f32);
            let s = rng.range(-3.0, 3.0).exp2() as f32;
            let scale = match k % 5 {
                0 => Vec3::splat(s),
                1 => Vec3::new(s, s, -s),
                // Within a few ulp of uniform: either side of the tolerance.
                2 => Vec3::new(s, s * (1.0 + rng.range(0.0, 4e-6) as f32), s),
                3 => Vec3::new(s, rng.range(0.1, 3.0) as f32, s * 0.5),
                _ => Vec3::new(s, s, s * rng.range(0.0, 1.0) as f32),
            };
            let mut m = Affine3A::from_scale_rotation_translation(scale, q, vec3(1.0, -2.0, 3.0));
            if k % 97 == 0 {
                // A special value in one entry, or a singular map.
                let v = specials[(k / 97) % specials.len()];
                match (k / 97) % 3 {
                    0 => m.matrix3.y_axis.x = v,
                    1 => m.translation.z = v,
                    _ => m.matrix3.z_axis = m.matrix3.x_axis * v,
                }
            }
            let det = m.matrix3.determinant();
            let inv = m.inverse();
            let valid = m.is_finite() && inv.is_finite() && det != 0.0 && det.is_finite();
            match maps(&m) {
                Ok((got_inv, normal, renormalize)) => {
                    assert!(valid, "{m:?} accepted");
                    let bits = |a: &Affine3A| a.to_cols_array().map(f32::to_bits);
                    assert_eq!(bits(&got_inv), bits(&inv), "{m:?}");
                    let (want, want_renormalize) = normal_map_reference(&inv);
                    assert_eq!(renormalize, want_renormalize, "{m:?}");
                    assert_eq!(
                        normal.to_cols_array().map(f32::to_bits),
                        want.to_cols_array().map(f32::to_bits)
                    );
                }
                Err(e) => assert!(!valid && e.to_string().contains("transform"), "{m:?} refused: {e}"),
            }
        }
    }

    /// A sphere under a similarity (rotation, uniform scale, a mirror or not,
    /// translation) is cast in the world frame (`sphere::Placed`). Checked
    /// against an f64 reference that does not take that shortcut: the world
    /// ray taken into the sphere's frame by the f64 inverse of the f32 map
    /// (the exact placed shape), the unit-free quadratic solved there. Same
    /// hit or miss away from tangency, `t` within 1e-6 of the scene scale,
    /// unit outward normal; `hits`, `cast_all` and `span` agree with `cast`.
    #[test]
    fn sphere_under_a_similarity_matches_an_f64_reference() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut hits = 0;
        for i in 0..20_000 {
            let r = 10f64.powf(rng.range(-1.0, 1.0)) as f32;
            let s = 10f64.powf(rng.range(-2.0, 2.0)) as f32;
            let mirror = if i % 3 == 0 { -1.0 } else { 1.0 };
            let q = Vec4::new(rng.range(-1.0, 1.0) as f32, rng.range(-1.0, 1.0) as f32, 0.3, 0.5).normalize();
            let c = (rng.dir() * rng.range(0.0, 100.0) * f64::from(s)).as_vec3();
            let m = Affine3A::from_scale_rotation_translation(vec3(mirror * s, s, s), Quat::from_vec4(q), c);
            let placed = Transformed::new(Sphere::new(r), m);
            assert!(placed.sphere().is_some(), "{m:?} is a similarity");
            let size = f64::from(r) * f64::from(s);
            let centre = c.as_dvec3();
            let o = centre + rng.dir() * size * 10f64.powf(rng.range(0.0, 2.0));
            let target = centre + rng.dir() * size * rng.range(0.0, 1.5);
            let d = (target - o) * 10f64.powf(rng.range(-2.0, 2.0));
            let ray = Ray::new(o.as_vec3(), d.as_vec3());

            // Reference: the f32 ray, in f64, into the frame of the f32 map.
            let lin = DMat3::from_cols(
                m.matrix3.x_axis.as_dvec3(),
                m.matrix3.y_axis.as_dvec3(),
                m.matrix3.z_axis.as_dvec3(),
            );
            let inv = lin.inverse();
            let (lo, ld) = (inv * (ray.origin.as_dvec3() - centre), inv * ray.dir.as_dvec3());
            let (a, b, cc) = (ld.dot(ld), lo.dot(ld), lo.dot(lo) - f64::from(r) * f64::from(r));
            let disc = b * b - a * cc;
            let scene = (ray.origin.as_dvec3() - centre).length().max(size);
            let got = placed.cast(&ray, Interval::FORWARD);
            assert_eq!(placed.hits(&ray, Interval::FORWARD), got.is_some(), "{ray:?} {m:?}");
            // Away from tangency (relative discriminant) hit or miss must agree.
            let clear = disc.abs() > 1e-6 * b * b;
            let t_ref = [(-b - disc.max(0.0).sqrt()) / a, (-b + disc.max(0.0).sqrt()) / a]
                .into_iter()
                .find(|&t| t >= 0.0 && disc >= 0.0);
            match (got, t_ref) {
                (Some(h), Some(t)) => {
                    hits += 1;
                    let err = (f64::from(h.t) - t).abs() * ray.dir.as_dvec3().length() / scene;
                    assert!(err <= 1e-6, "{ray:?} {m:?}: t {} vs {t}, {err:e}", h.t);
                    assert!((h.normal.length() - 1.0).abs() <= 1e-6, "{h:?}");
                    let outward = (h.point.as_dvec3() - centre).normalize();
                    assert!(h.normal.as_dvec3().dot(outward) > 0.999_999, "{h:?}");
                    let all = placed.cast_all(&ray, Interval::FORWARD);
                    assert!((all[0].t - h.t).abs() <= 1e-6 * h.t.abs().max(1.0), "{all:?} {h:?}");
                    let span = placed.span(&ray).expect("a hit has a span");
                    assert!(span.enter.t <= span.exit.t, "{span:?}");
                }
                (None, None) => {}
                (got, t) => assert!(!clear, "{ray:?} {m:?}: {got:?} vs {t:?}"),
            }
        }
        assert!(hits > 5_000, "{hits} hits");
    }

    /// A capsule under a similarity is cast in the world frame
    /// (`Capsule::placed`). Checked against an f64 reference written
    /// differently: the world ray taken into the capsule's frame by the f64
    /// inverse of the f32 map, and the entry found as the first of the
    /// entries into the three convex pieces whose union the capsule is (the
    /// side tube between the end planes, and the two end balls). Origins
    /// outside; same hit or miss away from tangency, `t` within 1e-6 of the
    /// scene scale, unit outward normal at the point, the part, and
    /// `hits`, `cast_all`, `span` agreeing with `cast`; moved again with
    /// `set_world_from_local`, the same as built there.
    #[test]
    fn capsule_under_a_similarity_matches_an_f64_reference() {
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        let mut hits = 0;
        for i in 0..20_000 {
            let s = 10f64.powf(rng.range(-2.0, 2.0)) as f32;
            let mirror = if i % 3 == 0 { -1.0 } else { 1.0 };
            let q = Vec4::new(rng.range(-1.0, 1.0) as f32, rng.range(-1.0, 1.0) as f32, 0.3, 0.5).normalize();
            let c = (rng.dir() * rng.range(0.0, 100.0) * f64::from(s)).as_vec3();
            let m = Affine3A::from_scale_rotation_translation(vec3(mirror * s, s, s), Quat::from_vec4(q), c);
            let (a, b) =
                ((rng.dir() * rng.range(0.0, 2.0)).as_vec3(), (rng.dir() * rng.range(0.0, 2.0)).as_vec3());
            let r = 10f64.powf(rng.range(-1.0, 0.3)) as f32;
            let capsule = Capsule::new(a, b, r);
            let mut placed = Transformed::new(capsule, Affine3A::IDENTITY);
            placed.set_world_from_local(m).unwrap();
            assert_eq!(placed, Transformed::new(capsule, m));
            assert!(placed.capsule().is_some(), "{m:?} is a similarity");

            let lin = DMat3::from_cols(
                m.matrix3.x_axis.as_dvec3(),
                m.matrix3.y_axis.as_dvec3(),
                m.matrix3.z_axis.as_dvec3(),
            );
            let (la, lb, lr) = (a.as_dvec3(), b.as_dvec3(), f64::from(r));
            let size = (((lb - la).length() * 0.5) + lr) * f64::from(s);
            let centre = lin * (0.5 * (la + lb)) + c.as_dvec3();
            let o = centre + rng.dir() * size * 10f64.powf(rng.range(0.2, 2.0));
            let target = centre + rng.dir() * size * rng.range(0.0, 1.2);
            let d = (target - o) * 10f64.powf(rng.range(-2.0, 2.0));
            let ray = Ray::new(o.as_vec3(), d.as_vec3());

            // Reference, in the local frame of the f32 map, in f64.
            let inv = lin.inverse();
            let (lo, ld) = (inv * (ray.origin.as_dvec3() - c.as_dvec3()), inv * ray.dir.as_dvec3());
            let axis = lb - la;
            let first_root = |qa: f64, qb: f64, qc: f64| {
                let disc = qb * qb - qa * qc;
                (disc >= 0.0 && qa > 0.0)
                    .then(|| ((-qb - disc.sqrt()) / qa, disc.abs() / (qb * qb).max(1e-300)))
            };
            let mut entry: Option<(f64, Part, f64)> = None;
            let mut take = |t: f64, part: Part, rel: f64| {
                if t >= 0.0 && entry.is_none_or(|e| t < e.0) {
                    entry = Some((t, part, rel));
                }
            };
            for (centre_ball, part) in [(la, Part::CapA), (lb, Part::CapB)] {
                let w = lo - centre_ball;
                if let Some((t, rel)) = first_root(ld.dot(ld), w.dot(ld), w.dot(w) - lr * lr) {
                    take(t, part, rel);
                }
            }
            if axis.length_squared() > 0.0 {
                let u = axis.normalize();
                let (w, dp) = (lo - la, ld - ld.dot(u) * u);
                let wp = w - w.dot(u) * u;
                if let Some((t, rel)) = first_root(dp.dot(dp), wp.dot(dp), wp.dot(wp) - lr * lr) {
                    let y = (w + t * ld).dot(u);
                    if (0.0..=axis.length()).contains(&y) {
                        take(t, Part::Side, rel);
                    }
                }
            }
            let scene = (ray.origin.as_dvec3() - centre).length().max(size);
            let got = placed.cast(&ray, Interval::FORWARD);
            assert_eq!(placed.hits(&ray, Interval::FORWARD), got.is_some(), "{ray:?} {m:?}");
            match (got, entry) {
                (Some(h), Some((t, part, rel))) => {
                    hits += 1;
                    let err = (f64::from(h.t) - t).abs() * ray.dir.as_dvec3().length() / scene;
                    assert!(err <= 1e-6, "{ray:?} {m:?}: t {} vs {t}, {err:e}", h.t);
                    assert!((h.normal.length() - 1.0).abs() <= 1e-6, "{h:?}");
                    // The outward normal: from the segment's nearest point.
                    let p: DVec3 = inv * (h.point.as_dvec3() - c.as_dvec3());
                    let k = if axis.length_squared() > 0.0 {
                        ((p - la).dot(axis) / axis.length_squared()).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    let outward = (lin.inverse().transpose() * (p - (la + k * axis))).normalize();
                    assert!(h.normal.as_dvec3().dot(outward) > 0.999_99, "{h:?} {outward}");
                    assert!(h.front_face || rel < 1e-6, "{h:?}");
                    if rel > 1e-6 && part != h.part {
                        // Parts meet at a rim where the tube and ball agree.
                        let rim = [la, lb].iter().any(|e| ((p - e).length() - lr).abs() < 1e-5 * size);
                        assert!(rim, "{ray:?} {m:?}: {h:?} vs {part:?}");
                    }
                    let all = placed.cast_all(&ray, Interval::FORWARD);
                    assert_eq!(all[0].t, h.t, "{all:?} {h:?}");
                    let span = placed.span(&ray).expect("a hit has a span");
                    assert!(span.enter.t <= span.exit.t && span.enter.t == h.t, "{span:?} {h:?}");
                }
                (None, None) => {}
                (got, entry) => {
                    assert!(entry.is_some_and(|e| e.2 < 1e-5), "{ray:?} {m:?}: {got:?} vs {entry:?}")
                }
            }
        }
        assert!(hits > 5_000, "{hits} hits");
    }

    /// A placed plane is cast as a plane of the world frame (`Plane::placed`).
    /// Checked against an f64 reference through the exact f32 map (the plane
    /// through `M·p` with normal `M⁻ᵀ·n`, both in f64) under random affine
    /// maps, non-uniform and mirrored ones included: the same hit or miss
    /// away from grazing, `t` within 1e-6 of the scene scale, the unit
    /// normal, `front_face` from its sign, `hits` as `cast`.
    #[test]
    fn plane_under_an_affine_map_matches_an_f64_reference() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut hits = 0;
        let mut worst = (0.0f64, 0.0f64);
        for i in 0..20_000 {
            let n = rng.dir().as_vec3();
            let p = (rng.dir() * rng.range(0.0, 5.0)).as_vec3();
            let plane = crate::Plane::new(n, p);
            let s = |rng: &mut Rng| 10f64.powf(rng.range(-1.0, 1.0)) as f32;
            let mut scale = if i % 2 == 0 {
                Vec3::splat(s(&mut rng))
            } else {
                vec3(s(&mut rng), s(&mut rng), s(&mut rng))
            };
            if i % 5 == 0 {
                scale.x = -scale.x;
            }
            let q = Vec4::new(rng.range(-1.0, 1.0) as f32, 0.2, rng.range(-1.0, 1.0) as f32, 0.7).normalize();
            let c = (rng.dir() * rng.range(0.0, 50.0)).as_vec3();
            let m = Affine3A::from_scale_rotation_translation(scale, Quat::from_vec4(q), c);
            let placed = Transformed::new(plane, m);
            let o = (rng.dir() * rng.range(0.1, 100.0) + c.as_dvec3()).as_vec3();
            let d = (rng.dir() * 10f64.powf(rng.range(-2.0, 2.0))).as_vec3();
            let ray = Ray::new(o, d);

            let lin = DMat3::from_cols(
                m.matrix3.x_axis.as_dvec3(),
                m.matrix3.y_axis.as_dvec3(),
                m.matrix3.z_axis.as_dvec3(),
            );
            let nw = (lin.inverse().transpose() * plane.normal().as_dvec3()).normalize();
            let pw = lin * plane.point().as_dvec3() + c.as_dvec3();
            let (sd, e) = (nw.dot(o.as_dvec3() - pw), nw.dot(d.as_dvec3()));
            let t_ref = -sd / e;
            let got = placed.cast(&ray, Interval::FORWARD);
            assert_eq!(placed.hits(&ray, Interval::FORWARD), got.is_some(), "{ray:?} {m:?}");
            let scene = (o.as_dvec3() - pw).length().max(1.0);
            // Away from grazing (the angle to the plane above ~3°) and from
            // the origin: there the f32 placement's rounding is not
            // amplified, and the project's exactness target holds per ray.
            let clear =
                e.abs() > 0.05 * d.as_dvec3().length() && t_ref.abs() * f64::from(d.length()) > 1e-4 * scene;
            match got {
                Some(h) => {
                    hits += 1;
                    let err = (f64::from(h.t) - t_ref).abs() * d.as_dvec3().length()
                        / scene.max(f64::from(h.t) * d.as_dvec3().length());
                    // The project's exactness target (4e-6 of the scene
                    // scale) away from grazing; on every ray, the general
                    // path (the ray into the plane's frame) is measured
                    // alongside: near grazing both err alike, from the f32
                    // map's own rounding.
                    assert!(err <= 4e-6 || !clear, "{ray:?} {m:?}: t {} vs {t_ref}, {err:e}", h.t);
                    if let Some(g) = plane.cast(&placed.to_local(&ray), Interval::FORWARD) {
                        let gerr = (f64::from(g.t) - t_ref).abs() * d.as_dvec3().length()
                            / scene.max(f64::from(g.t) * d.as_dvec3().length());
                        worst = (worst.0.max(err), worst.1.max(gerr));
                    }
                    assert!((h.normal.as_dvec3() - nw).length() <= 1e-5, "{h:?} vs {nw}");
                    assert_eq!(h.front_face, e < 0.0, "{h:?}");
                    assert_eq!(placed.cast_all(&ray, Interval::FORWARD), vec![h]);
                }
                None => assert!(!clear || t_ref < 0.0, "{ray:?} {m:?}: missed, reference t {t_ref}"),
            }
        }
        assert!(hits > 5_000, "{hits} hits");
        println!("placed plane: worst t error {:.1e} (general path {:.1e})", worst.0, worst.1);
        assert!(worst.0 <= 2.0 * worst.1 + 1e-7, "{worst:?}");
    }

    #[test]
    fn other_maps_and_shapes_take_the_general_path() {
        let stretched = Transformed::new(Sphere::new(1.0), Affine3A::from_scale(vec3(2.0, 1.0, 1.0)));
        assert!(stretched.sphere().is_none());
        let boxed = Transformed::new(crate::Cuboid::new(Vec3::ONE), Affine3A::from_translation(Vec3::X));
        assert!(boxed.sphere().is_none());
        let enum_sphere =
            Transformed::new(crate::Shape::from(Sphere::new(1.0)), Affine3A::from_translation(Vec3::X));
        assert!(enum_sphere.sphere().is_some());
        // Moved to a non-uniform scale and back.
        let mut t = Transformed::new(Sphere::new(1.0), Affine3A::IDENTITY);
        t.set_world_from_local(Affine3A::from_scale(vec3(1.0, 3.0, 1.0))).unwrap();
        assert!(t.sphere().is_none());
        let h = t.cast(&Ray::new(vec3(0.0, -10.0, 0.0), Vec3::Y), Interval::FORWARD).unwrap();
        // The local ray's direction is (0, 1/3, 0), rounded: t within an ulp or so.
        assert!((h.t - 7.0).abs() <= 1e-6 && h.normal.abs_diff_eq(-Vec3::Y, 1e-6), "{h:?}");
        t.set_world_from_local(Affine3A::from_scale(Vec3::splat(3.0))).unwrap();
        assert!(t.sphere().is_some());
        let h = t.cast(&Ray::new(vec3(0.0, -10.0, 0.0), Vec3::Y), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.point), (7.0, -Vec3::Y, vec3(0.0, -3.0, 0.0)));
    }
}
