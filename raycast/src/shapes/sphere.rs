//! Sphere of radius `r` centred at the origin.
//!
//! Solves |o + t·d|² = r², i.e. a·t² + 2·b·t + c = 0 with a = d·d, b = o·d,
//! c = o·o − r². The reduced discriminant b² − a·c is computed as
//! a·(r² − |o − (b/a)·d|²) = a·(r − l)(r + l), l the distance from the centre
//! to the line: this has no cancellation when |o| ≫ r, where b² and a·c agree
//! in most of their digits (Haines et al., "Precision Improvements for
//! Ray/Sphere Intersection", *Ray Tracing Gems* ch. 7). The roots come from
//! [`quadratic_roots`]. The hit point is put back on the sphere by scaling it
//! to length r, which removes the error `ray.at(t)` carries from a far origin.

use crate::error::{or_panic, positive};
use crate::numeric::quadratic_roots;
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// A sphere of radius `radius` centred at the origin. Its only part is
/// [`Part::Surface`].
///
/// # Examples
/// ```
/// use raycast::{vec3, Interval, Ray, RayCast, Sphere};
/// let s = Sphere::try_new(2.0)?;
/// let hit = s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 1.0)), Interval::FORWARD).unwrap();
/// assert_eq!(hit.t, 3.0);
/// assert_eq!(hit.normal, vec3(0.0, 0.0, -1.0));
/// assert!(Sphere::try_new(-1.0).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    radius: f32,
}

impl Sphere {
    /// A sphere of the given radius.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` unless it is finite and > 0.
    pub fn try_new(radius: f32) -> Result<Self, ShapeError> {
        Ok(Self { radius: positive("radius", radius)? })
    }

    /// Like [`Sphere::try_new`].
    ///
    /// # Panics
    /// With the error's message when the radius is refused.
    #[track_caller]
    pub fn new(radius: f32) -> Self {
        or_panic(Self::try_new(radius))
    }

    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
}

/// Both roots `t0 <= t1` of the ray–sphere quadratic, or `None` if the line
/// misses (also for NaN or a degenerate ray).
#[inline]
fn ray_sphere(o: Vec3, d: Vec3, r: f32) -> Option<(f32, f32)> {
    let a = d.length_squared();
    let b = o.dot(d);
    let c = o.length_squared() - r * r;
    let perp = o - (b / a) * d;
    let l = perp.length();
    let disc = a * (r - l) * (r + l);
    if !(disc >= 0.0) || !(a > 0.0) || !a.is_finite() {
        return None;
    }
    Some(quadratic_roots(a, b, c, disc))
}

impl Sphere {
    fn hit_at(&self, ray: &Ray, t: f32) -> Hit {
        let p = ray.at(t);
        let n = p.normalize_or(Vec3::Y);
        Hit::with_point(ray, t, n * self.radius, n, Part::Surface)
    }
}

impl RayCast for Sphere {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let (t0, t1) = ray_sphere(ray.origin, ray.dir, self.radius)?;
        let t = if range.contains(t0) {
            t0
        } else if range.contains(t1) {
            t1
        } else {
            return None;
        };
        Some(self.hit_at(ray, t))
    }

    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        ray_sphere(ray.origin, ray.dir, self.radius)
            .is_some_and(|(t0, t1)| range.contains(t0) || range.contains(t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let Some((t0, t1)) = ray_sphere(ray.origin, ray.dir, self.radius) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        if range.contains(t0) {
            out.push(self.hit_at(ray, t0));
        }
        if t1 != t0 && range.contains(t1) {
            out.push(self.hit_at(ray, t1));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::splat(self.radius))
    }
}

impl Solid for Sphere {
    fn contains(&self, p: Vec3) -> bool {
        p.length_squared() <= self.radius * self.radius
    }
}

impl ConvexSolid for Sphere {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let (t0, t1) = ray_sphere(ray.origin, ray.dir, self.radius)?;
        Some(Span { enter: self.hit_at(ray, t0), exit: self.hit_at(ray, t1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    #[test]
    fn head_on_from_outside_and_inside() {
        let s = Sphere::new(1.0);
        let h = s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 2.0)), Interval::FORWARD).unwrap();
        assert_eq!(h.t, 2.0);
        assert!(h.front_face);
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.normal, h.front_face), (1.0, Vec3::Y, false));
    }

    #[test]
    fn tangent_counts_and_degenerate_rays_miss() {
        let s = Sphere::new(1.0);
        let r = Ray::new(vec3(-3.0, 1.0, 0.0), vec3(1.0, 0.0, 0.0));
        let h = s.cast(&r, Interval::FORWARD).unwrap();
        assert_eq!(h.t, 3.0);
        let sp = s.span(&r).unwrap();
        assert_eq!(sp.enter.t, sp.exit.t);
        for d in [Vec3::ZERO, Vec3::NAN, vec3(f32::INFINITY, 0.0, 0.0)] {
            assert!(s.cast(&Ray::new(vec3(0.0, 0.0, -5.0), d), Interval::FORWARD).is_none());
        }
    }

    #[test]
    fn far_origin_keeps_digits() {
        // The naive discriminant b² − a·c loses everything at 1e4 radii away.
        let s = Sphere::new(1.0);
        let r = Ray::new(vec3(0.0, 0.999, -1.0e4), vec3(0.0, 0.0, 1.0));
        let h = s.cast(&r, Interval::FORWARD).unwrap();
        let exact = 1.0e4 - (1.0f64 - 0.999f32 as f64 * 0.999f32 as f64).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-5 * 1.0e4, "{} vs {exact}", h.t);
    }
}
