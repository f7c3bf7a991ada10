//! Finite cylinder on the +Y axis: radius `r`, caps at `y = ±h`.
//!
//! The solid is the intersection of the infinite cylinder `x² + z² ≤ r²` and
//! the slab `|y| ≤ h`, both convex, so the line through a ray is inside it
//! over `[max(s0, c0), min(s1, c1)]`, where `[s0, s1]` is where it is inside
//! the infinite cylinder and `[c0, c1]` inside the slab (the same clipping as
//! the slab method, Kay & Kajiya 1986; pbrt-v4's `Cylinder` instead tests the
//! side roots and disks separately). Whichever interval set the entry (exit)
//! names the part: `Side`, or the cap the ray crosses.
//!
//! Side: `(o_x + t·d_x)² + (o_z + t·d_z)² = r²`, i.e. `a·t² + 2·b·t + c = 0`
//! with `a = d_x² + d_z²`, `b = o_x·d_x + o_z·d_z`, `c = o_x² + o_z² − r²`.
//! The reduced discriminant `b² − a·c` is computed as `a·(r² − l²)`, `l`
//! the distance in the xz plane from the axis to the projected line
//! (`|o_xz − (b/a)·d_xz|`), which does not cancel when the origin is far
//! away (Haines et al., *Ray Tracing Gems* ch. 7, as for the sphere; `r² − l²`
//! has an absolute error of a few ulps of `r²` either way, so no square root
//! of `l²` is taken); roots
//! from [`quadratic_roots`]. Caps: `c0, c1 = (∓h − o_y)/d_y` by division.
//!
//! Departures from the textbook form:
//! * A ray parallel to the axis (`a` zero, or subnormal so that `b/a` would
//!   overflow) is decided exactly: inside the infinite cylinder for every `t`
//!   when `o_x² + o_z² ≤ r²` (boundary included: a ray along the side
//!   touches), else a miss. Likewise `d_y == 0` is decided by `|o_y| ≤ h`, so
//!   no `0/0` is ever formed.
//! * A tangent line gives `disc == 0`, `s0 == s1`: a hit (touching counts).
//! * A ray through the rim has equal entry and exit in exact arithmetic; the
//!   rounded values are compared with a slack (see [`TOUCH_SLACK`]).
//! * The hit point is put back on the surface: radially onto `r` for the side
//!   (with `y` clamped to the caps), `y = ±h` for a cap (clamped into the disk).

use crate::error::{or_panic, positive};
use crate::numeric::{gamma, quadratic_roots};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// A finite cylinder on the local +Y axis with caps at `y = ±half_height`.
/// Parts: [`Part::Side`], [`Part::Top`], [`Part::Bottom`].
///
/// # Examples
/// ```
/// use raycast::{vec3, ConvexSolid, Cylinder, Interval, Part, Ray, RayCast};
/// let cyl = Cylinder::try_new(1.0, 2.0)?;
/// let hit = cyl.cast(&Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0)), Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part, hit.normal), (3.0, Part::Top, vec3(0.0, 1.0, 0.0)));
/// let side = cyl.span(&Ray::new(vec3(-3.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0))).unwrap();
/// assert_eq!((side.enter.t, side.exit.t, side.exit.part), (2.0, 4.0, Part::Side));
/// # Ok::<(), raycast::ShapeError>(())
/// ```
/// See also [`Capsule`](crate::Capsule) for a cylinder with rounded ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    radius: f32,
    half_height: f32,
}

impl Cylinder {
    /// A cylinder of the given radius and half height.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` or `half_height` unless finite and > 0.
    pub fn try_new(radius: f32, half_height: f32) -> Result<Self, ShapeError> {
        Ok(Self { radius: positive("radius", radius)?, half_height: positive("half_height", half_height)? })
    }
    /// Like [`Cylinder::try_new`].
    ///
    /// # Panics
    /// With the error's message when the cylinder is refused.
    #[track_caller]
    pub fn new(radius: f32, half_height: f32) -> Self {
        or_panic(Self::try_new(radius, half_height))
    }
    /// The radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
    /// Half the height.
    pub fn half_height(&self) -> f32 {
        self.half_height
    }
}

/// Relative widening of the exit before it is compared with the entry. A cap
/// parameter carries 2 roundings, a side root about 10 (the products and sums
/// of `b` and `l`, the square root, `q` and the final division), so two
/// values equal in exact arithmetic (a ray through the rim) differ by at most
/// γ(12) relative to the larger.
const TOUCH_SLACK: f32 = gamma(12);

/// Entry and exit of the line (`t0 <= t1`), each with the part it crosses.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    t0: f32,
    part0: Part,
    t1: f32,
    part1: Part,
}

/// The kernel (see the module doc); `None` if the line misses, the ray is
/// degenerate, or a crossing is not a finite f32.
#[inline]
fn ray_cylinder(o: Vec3, d: Vec3, r: f32, h: f32) -> Option<Crossing> {
    if !(o.is_finite() && d.is_finite()) || d == Vec3::ZERO {
        return None;
    }
    // Inside the infinite cylinder over [s0, s1].
    let a = d.x * d.x + d.z * d.z;
    let (s0, s1) = if a >= f32::MIN_POSITIVE {
        let b = o.x * d.x + o.z * d.z;
        let c = o.x * o.x + o.z * o.z - r * r;
        let k = b / a;
        let (px, pz) = (o.x - k * d.x, o.z - k * d.z);
        let disc = a * (r * r - (px * px + pz * pz));
        if !(disc >= 0.0) {
            return None;
        }
        quadratic_roots(a, b, c, disc)
    } else if o.x * o.x + o.z * o.z <= r * r {
        (f32::NEG_INFINITY, f32::INFINITY)
    } else {
        return None;
    };
    // Inside the slab |y| <= h over [c0, c1]; the cap entered first is the
    // bottom one when the ray goes up.
    let up = d.y > 0.0;
    let (c0, c1) = if d.y != 0.0 {
        let t_bottom = (-h - o.y) / d.y;
        let t_top = (h - o.y) / d.y;
        if up {
            (t_bottom, t_top)
        } else {
            (t_top, t_bottom)
        }
    } else if o.y.abs() <= h {
        (f32::NEG_INFINITY, f32::INFINITY)
    } else {
        return None;
    };
    let (t0, part0) =
        if s0 >= c0 { (s0, Part::Side) } else { (c0, if up { Part::Bottom } else { Part::Top }) };
    let (t1, part1) =
        if s1 <= c1 { (s1, Part::Side) } else { (c1, if up { Part::Top } else { Part::Bottom }) };
    if !(t0 <= t1 + t1.abs() * TOUCH_SLACK) || !t0.is_finite() || !t1.is_finite() {
        return None;
    }
    Some(Crossing { t0, part0, t1: t1.max(t0), part1 })
}

impl Cylinder {
    /// The full hit at `t` on `part`, with the point put back on that part.
    fn hit_at(&self, ray: &Ray, t: f32, part: Part) -> Hit {
        let (r, h) = (self.radius, self.half_height);
        let p = ray.at(t);
        match part {
            Part::Side => {
                let n = Vec3::new(p.x, 0.0, p.z).normalize_or(Vec3::X);
                let point = Vec3::new(n.x * r, p.y.clamp(-h, h), n.z * r);
                Hit::with_point(ray, t, point, n, part)
            }
            _ => {
                let top = part == Part::Top;
                let rho2 = p.x * p.x + p.z * p.z;
                // Clamp into the disk: a rim hit may land a rounding outside it.
                let shrink = if rho2 > r * r { r / rho2.sqrt() } else { 1.0 };
                let point = Vec3::new(p.x * shrink, if top { h } else { -h }, p.z * shrink);
                Hit::with_point(ray, t, point, if top { Vec3::Y } else { Vec3::NEG_Y }, part)
            }
        }
    }
}

impl RayCast for Cylinder {
    #[inline]
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height)?;
        if range.contains(c.t0) {
            Some(self.hit_at(ray, c.t0, c.part0))
        } else if range.contains(c.t1) {
            Some(self.hit_at(ray, c.t1, c.part1))
        } else {
            None
        }
    }

    #[inline]
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height)
            .is_some_and(|c| range.contains(c.t0) || range.contains(c.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let Some(c) = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        if range.contains(c.t0) {
            out.push(self.hit_at(ray, c.t0, c.part0));
        }
        if c.t1 != c.t0 && range.contains(c.t1) {
            out.push(self.hit_at(ray, c.t1, c.part1));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::new(self.radius, self.half_height, self.radius))
    }
}

impl Solid for Cylinder {
    #[inline]
    fn contains(&self, p: Vec3) -> bool {
        p.x * p.x + p.z * p.z <= self.radius * self.radius && p.y.abs() <= self.half_height
    }
}

impl ConvexSolid for Cylinder {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let c = ray_cylinder(ray.origin, ray.dir, self.radius, self.half_height)?;
        Some(Span { enter: self.hit_at(ray, c.t0, c.part0), exit: self.hit_at(ray, c.t1, c.part1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec3;

    fn cyl() -> Cylinder {
        Cylinder::new(1.0, 2.0)
    }

    #[test]
    fn side_and_caps_from_outside() {
        let h = cyl().cast(&Ray::new(vec3(0.0, 1.0, -4.0), vec3(0.0, 0.0, 2.0)), Interval::FORWARD).unwrap();
        assert_eq!(
            (h.t, h.part, h.normal, h.point),
            (1.5, Part::Side, vec3(0.0, 0.0, -1.0), vec3(0.0, 1.0, -1.0))
        );
        assert!(h.front_face);
        let h = cyl().cast(&Ray::new(vec3(0.5, -6.0, 0.0), vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal), (4.0, Part::Bottom, Vec3::NEG_Y));
        // Slanted through the top cap: from (0, 4, 0) toward (0.5, 2, 0).
        let h = cyl().cast(&Ray::new(vec3(0.0, 4.0, 0.0), vec3(0.25, -1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.point), (2.0, Part::Top, vec3(0.5, 2.0, 0.0)));
    }

    #[test]
    fn from_inside_exits_with_front_face_false() {
        let s = cyl();
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(3.0, 0.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.normal, h.front_face), (1.0 / 3.0, Part::Side, Vec3::X, false));
        let h = s.cast(&Ray::new(Vec3::ZERO, vec3(0.0, 1.0, 0.0)), Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.part, h.front_face), (2.0, Part::Top, false));
    }

    #[test]
    fn parallel_to_the_axis_is_exact() {
        // a == 0: inside the tube forever; only the caps bound the line.
        let r = Ray::new(vec3(0.6, 10.0, -0.8), vec3(0.0, -2.0, 0.0)); // on the side surface
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.enter.part, sp.exit.t, sp.exit.part), (4.0, Part::Top, 6.0, Part::Bottom));
        let r = Ray::new(vec3(0.6, 10.0, -0.81), vec3(0.0, -2.0, 0.0)); // just outside
        assert!(cyl().span(&r).is_none());
    }

    #[test]
    fn tangent_and_rim_rays_touch() {
        // Tangent to the side along x at z = 1.
        let r = Ray::new(vec3(-3.0, 0.5, 1.0), vec3(1.0, 0.0, 0.0));
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t, sp.enter.part), (3.0, 3.0, Part::Side));
        assert_eq!(cyl().cast_all(&r, Interval::FORWARD).len(), 1);
        // Touching only the rim point (1, 2, 0), coming down at 45°.
        let r = Ray::new(vec3(3.0, 0.0, 0.0), vec3(-1.0, 1.0, 0.0));
        let h = cyl().cast(&r, Interval::FORWARD).unwrap();
        assert_eq!((h.t, h.point), (2.0, vec3(1.0, 2.0, 0.0)));
        assert!(h.part == Part::Side || h.part == Part::Top);
        // Lying in the top cap's plane: enters at the rim.
        let r = Ray::new(vec3(-5.0, 2.0, 0.0), vec3(1.0, 0.0, 0.0));
        let sp = cyl().span(&r).unwrap();
        assert_eq!((sp.enter.t, sp.exit.t), (4.0, 6.0));
    }

    #[test]
    fn far_origin_keeps_digits() {
        // Naive b² − a·c loses everything here; the perpendicular distance does not.
        let r = Ray::new(vec3(-1.0e4, 0.0, 0.999), vec3(1.0, 0.0, 0.0));
        let h = cyl().cast(&r, Interval::FORWARD).unwrap();
        let exact = 1.0e4 - (1.0f64 - (0.999f32 as f64).powi(2)).sqrt();
        assert!((h.t as f64 - exact).abs() < 1e-6 * 1.0e4, "{} vs {exact}", h.t);
        assert!((h.point.x.hypot(h.point.z) - 1.0).abs() <= 2.0 * f32::EPSILON);
    }

    #[test]
    fn degenerate_rays_miss_and_intervals_count_both_ends() {
        for d in [Vec3::ZERO, Vec3::NAN, vec3(0.0, f32::NEG_INFINITY, 0.0)] {
            assert!(cyl().cast(&Ray::new(vec3(0.0, 5.0, 0.0), d), Interval::FORWARD).is_none());
        }
        let r = Ray::new(vec3(0.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert!(cyl().hits(&r, Interval::new(7.0, 7.0)));
        assert!(!cyl().hits(&r, Interval::new(7.0001, 9.0)));
        let all = cyl().cast_all(&r, Interval::FORWARD);
        assert_eq!(
            all.iter().map(|h| (h.t, h.part)).collect::<Vec<_>>(),
            [(3.0, Part::Top), (7.0, Part::Bottom)]
        );
    }

    #[test]
    fn contains_includes_the_boundary() {
        assert!(cyl().contains(vec3(0.6, 2.0, 0.8)));
        assert!(!cyl().contains(vec3(0.0, 2.0001, 0.0)));
        assert!(!cyl().contains(vec3(1.0001, 0.0, 0.0)));
    }
}
