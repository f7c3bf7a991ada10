//! Cone on the +Y axis: apex `(0, h, 0)`, base disk of radius `r` at `y = −h`.
//!
//! The solid is the lower nappe of the infinite cone, cut by the base plane:
//! with `w = h − y` (depth below the apex) and slope `k = r / (2h)`,
//! `x² + z² ≤ k²·w²`, `w ≥ 0`, `w ≤ 2h`. It is convex, so the line through a ray
//! is inside it over one interval `[t0, t1]` ([`ConvexSolid::span`]); `cast`
//! picks the first end in range, `cast_all` both.
//!
//! **Side.** The origin is first moved to the point of the line closest to the
//! apex, `q = (o − apex) + t_s·d`, `t_s = −(o − apex)·d / d·d`, and the quadratic
//! is solved for `t' = t − t_s`. Apex-relative, `p = q + t'·d` lies on the
//! double cone when `F = p_x² + p_z² − k²·p_y² = 0`:
//! `A·t'² + 2B·t' + C = 0` with `A = d_x² + d_z² − k²·d_y²`,
//! `B = q_x·d_x + q_z·d_z − k²·q_y·d_y = −(1 + k²)·q_y·d_y` (because `q ⊥ d`),
//! `C = q_x² + q_z² − k²·q_y²`. After the shift every coefficient is of the size
//! of the cone and the line's distance to it, not of the origin's distance, so a
//! far origin (1e3–1e4 sizes away) costs no digits beyond the rounding of `q`
//! itself; `B² − A·C` and the `−` in `A` and `C` use fused products
//! ([`difference_of_products`]). The roots come from [`quadratic_roots`].
//! Cases of the quadratic:
//! * `A > 0` (the ray is shallower than the half-angle): the line is inside the
//!   double cone between the roots, both on one nappe; kept if that is the lower
//!   one (`w ≥ 0` between them). `disc < 0`: miss.
//! * `A < 0` (steeper than the half-angle): the line crosses both nappes, and the
//!   double cone's interior is the outside of the roots, one half-line in each
//!   nappe. The lower nappe is the half-line along which `w → +∞`: `[t1, ∞)` when
//!   `d_y < 0`, `(−∞, t0]` when `d_y > 0`. Such a line always meets the double
//!   cone, so `disc ≥ 0` exactly and a negative rounded `disc` is clamped to 0.
//! * `A = 0` (parallel to a generator): the linear `2B·t' + C = 0`, one crossing,
//!   and the half-line toward `w → +∞` as above if that crossing has `w ≥ 0`.
//!   `B = C = 0`: the line lies in the surface through the apex.
//!
//! **Apex.** A line through the apex is a double root of the quadratic, which
//! rounding may turn into a near miss. The computed `q` is within
//! `γ(16)·|o − apex|` of the exact foot of the perpendicular (about ten
//! roundings: the dot products, the division and the update), so a foot closer
//! than that to the apex is snapped onto it (`q = 0`): the line then touches the
//! apex exactly (touching counts), and the move is within the rounding of `q`.
//!
//! **Base.** The plane `y = −h` is crossed at `t_b = (−h − o_y) / d_y`, one
//! rounded division from the inputs; `y ≥ −h` is a half-line (or all of the line,
//! or none, when `d_y = 0`). The span is the intersection of the two intervals;
//! its ends name the part ([`Part::Side`] or [`Part::Base`]; at the rim either
//! may be reported). Ends that cross by less than the rounding of `t` (a line
//! through the rim's edge) are a touch, not a miss.
//!
//! Normals: the side's gradient `(x, k²·w, z)` is, on the surface
//! (`√(x² + z²) = k·w`), parallel to `(x̂, k, ẑ)` with `(x̂, ẑ)` the unit radial
//! direction, so it is taken from the radial direction alone; at the apex the
//! radial direction is zero and the normal is `+Y`, which lies in the apex's
//! normal cone. The base's normal is `−Y`.

use crate::error::{or_panic, positive};
use crate::numeric::{difference_of_products, gamma, quadratic_roots};
use crate::shapes::{ConvexSolid, RayCast, Solid};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError, Span};
use glam::Vec3;

/// A finite cone on the local +Y axis: apex at `y = +half_height`, base disk
/// of the given radius at `y = -half_height`. Parts: [`Part::Side`], [`Part::Base`].
///
/// # Examples
/// ```
/// use raycast::{vec3, ConvexSolid, Interval, Part, Ray, RayCast, Cone};
/// let cone = Cone::try_new(1.0, 1.0)?;
/// // Straight down the axis: through the apex, out through the base.
/// let ray = Ray::new(vec3(0.0, 3.0, 0.0), vec3(0.0, -1.0, 0.0));
/// let hit = cone.cast(&ray, Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.part), (2.0, Part::Side));
/// let span = cone.span(&ray).unwrap();
/// assert_eq!((span.exit.t, span.exit.part, span.exit.normal), (4.0, Part::Base, vec3(0.0, -1.0, 0.0)));
/// assert!(Cone::try_new(1.0, 0.0).is_err());
/// # Ok::<(), raycast::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    radius: f32,
    half_height: f32,
}

impl Cone {
    /// A cone of the given base radius and half height.
    ///
    /// # Errors
    /// [`ShapeError`] on `radius` or `half_height` unless finite and > 0.
    pub fn try_new(radius: f32, half_height: f32) -> Result<Self, ShapeError> {
        Ok(Self { radius: positive("radius", radius)?, half_height: positive("half_height", half_height)? })
    }
    /// Like [`Cone::try_new`].
    ///
    /// # Panics
    /// With the error's message when the cone is refused.
    #[track_caller]
    pub fn new(radius: f32, half_height: f32) -> Self {
        or_panic(Self::try_new(radius, half_height))
    }
    /// The base radius.
    pub fn radius(&self) -> f32 {
        self.radius
    }
    /// Half the height.
    pub fn half_height(&self) -> f32 {
        self.half_height
    }
    /// The slope `k = radius / (2·half_height)`: the side's radius shrinks by `k`
    /// per unit of height.
    #[inline]
    fn slope(&self) -> f32 {
        self.radius / (2.0 * self.half_height)
    }
}

/// Bound on the distance between the computed foot of the perpendicular `q` and
/// the exact one, per unit of `|o − apex|`: about ten roundings (dot products,
/// division, update), doubled. A foot closer to the apex than this is the apex.
const APEX_SNAP: f32 = gamma(16);

/// Where the line is inside the cone: from `t0` to `t1` (`t0 <= t1`), entering
/// through the base when `base0`, leaving through it when `base1`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Chord {
    t0: f32,
    t1: f32,
    base0: bool,
    base1: bool,
}

/// The interval of the line `o + t·d` inside the cone of slope `k` and half
/// height `h` (see the module doc for the derivation), or `None` if it misses
/// (also for a degenerate ray: every comparison with NaN fails).
#[inline]
fn ray_cone(o: Vec3, d: Vec3, k: f32, h: f32) -> Option<Chord> {
    const INF: f32 = f32::INFINITY;
    let oa = Vec3::new(o.x, o.y - h, o.z);
    let dd = d.length_squared();
    let ts = -oa.dot(d) / dd;
    let mut q = oa + ts * d;
    let snap2 = (APEX_SNAP * APEX_SNAP) * oa.length_squared();
    if q.length_squared() <= snap2 {
        q = Vec3::ZERO;
    }
    let kdy = k * d.y;
    let kqy = k * q.y;
    let a = (-kdy).mul_add(kdy, d.x.mul_add(d.x, d.z * d.z));
    let b = -(q.y * d.y) * k.mul_add(k, 1.0);
    let c = (-kqy).mul_add(kqy, q.x.mul_add(q.x, q.z * q.z));
    let disc = difference_of_products(b, b, a, c);
    // Depth below the apex at t': w = −(q_y + t'·d_y).
    let below_apex = |t: f32| -(t.mul_add(d.y, q.y)) >= 0.0;
    // Side interval, relative to t_s.
    let (s0, s1) = if a > 0.0 {
        if !(disc >= 0.0) {
            return None;
        }
        let (r0, r1) = quadratic_roots(a, b, c, disc);
        if !below_apex(0.5 * (r0 + r1)) {
            return None;
        }
        (r0, r1)
    } else {
        let r = if a < 0.0 {
            let (r0, r1) = quadratic_roots(a, b, c, disc.max(0.0));
            if d.y < 0.0 {
                r1
            } else {
                r0
            }
        } else if b != 0.0 {
            let r = -c / (2.0 * b);
            if !below_apex(r) {
                return None;
            }
            r
        } else if c == 0.0 {
            0.0 // A = B = C = 0: the line is a generator, through the apex.
        } else {
            return None;
        };
        if d.y < 0.0 {
            (r, INF)
        } else {
            (-INF, r)
        }
    };
    let (s0, s1) = (ts + s0, ts + s1);
    // Base half-line y >= −h.
    let (b0, b1) = if d.y != 0.0 {
        let tb = (-h - o.y) / d.y;
        if d.y < 0.0 {
            (-INF, tb)
        } else {
            (tb, INF)
        }
    } else if o.y >= -h {
        (-INF, INF)
    } else {
        return None;
    };
    let base0 = b0 > s0;
    let base1 = b1 < s1;
    let mut t0 = if base0 { b0 } else { s0 };
    let mut t1 = if base1 { b1 } else { s1 };
    if !(t0 <= t1) {
        // Ends crossing by less than their rounding: a touch at an edge of the rim.
        let tol = 2.0 * (snap2 / dd).sqrt();
        if !(t0 - t1 <= tol) {
            return None;
        }
        let mid = 0.5 * (t0 + t1);
        (t0, t1) = (mid, mid);
    }
    if !(t0.is_finite() && t1.is_finite()) {
        return None;
    }
    Some(Chord { t0, t1, base0, base1 })
}

impl Cone {
    #[inline]
    fn chord(&self, ray: &Ray) -> Option<Chord> {
        if !ray.is_valid() {
            return None;
        }
        ray_cone(ray.origin, ray.dir, self.slope(), self.half_height)
    }

    fn hit_at(&self, ray: &Ray, t: f32, base: bool) -> Hit {
        let p = ray.at(t);
        if base {
            let p = Vec3::new(p.x, -self.half_height, p.z);
            return Hit::with_point(ray, t, p, Vec3::NEG_Y, Part::Base);
        }
        let u = Vec3::new(p.x, 0.0, p.z).normalize_or_zero();
        let n = Vec3::new(u.x, self.slope(), u.z).normalize();
        Hit::with_point(ray, t, p, n, Part::Side)
    }
}

impl RayCast for Cone {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        let ch = self.chord(ray)?;
        if range.contains(ch.t0) {
            Some(self.hit_at(ray, ch.t0, ch.base0))
        } else if range.contains(ch.t1) {
            Some(self.hit_at(ray, ch.t1, ch.base1))
        } else {
            None
        }
    }

    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        self.chord(ray).is_some_and(|ch| range.contains(ch.t0) || range.contains(ch.t1))
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let Some(ch) = self.chord(ray) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        if range.contains(ch.t0) {
            out.push(self.hit_at(ray, ch.t0, ch.base0));
        }
        if ch.t1 != ch.t0 && range.contains(ch.t1) {
            out.push(self.hit_at(ray, ch.t1, ch.base1));
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        Aabb::from_half_extents(Vec3::new(self.radius, self.half_height, self.radius))
    }
}

impl Solid for Cone {
    fn contains(&self, p: Vec3) -> bool {
        let h = self.half_height;
        let kw = self.slope() * (h - p.y);
        -h <= p.y && p.y <= h && p.x * p.x + p.z * p.z <= kw * kw
    }
}

impl ConvexSolid for Cone {
    fn span(&self, ray: &Ray) -> Option<Span> {
        let ch = self.chord(ray)?;
        Some(Span { enter: self.hit_at(ray, ch.t0, ch.base0), exit: self.hit_at(ray, ch.t1, ch.base1) })
    }
}
