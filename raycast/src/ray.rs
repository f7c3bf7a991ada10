//! [`Ray`] and the parameter [`Interval`] every query takes.

use glam::Vec3;
use std::ops::{RangeFrom, RangeFull, RangeInclusive, RangeToInclusive};

/// A ray `origin + t * dir`.
///
/// `dir` is never normalised: `t` is measured in units of `dir`, so the segment
/// from `a` to `b` is `Ray::new(a, b - a)` over `t ∈ [0, 1]` ([`Interval::SEGMENT`]).
///
/// A ray whose `dir` is zero or whose components are not all finite is
/// *degenerate*: every query answers it with no hit (never a panic, never NaN).
///
/// # Examples
/// ```
/// use raycast::{Ray, Vec3};
/// let ray = Ray::new(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0));
/// assert_eq!(ray.at(1.5), Vec3::new(3.0, 0.0, 0.0));
/// assert!(!Ray::new(Vec3::ZERO, Vec3::ZERO).is_valid());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Ray {
    /// Where the ray starts (`t = 0`).
    pub origin: Vec3,
    /// The direction; `t` is measured in units of its length.
    pub dir: Vec3,
}

impl Ray {
    /// A ray from `origin` along `dir` (not normalised).
    #[inline]
    pub const fn new(origin: Vec3, dir: Vec3) -> Self {
        Self { origin, dir }
    }

    /// The ray through `from` and `to`, with `t = 0` at `from` and `t = 1` at `to`.
    #[inline]
    pub fn segment(from: Vec3, to: Vec3) -> Self {
        Self::new(from, to - from)
    }

    /// The point `origin + t * dir`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + t * self.dir
    }

    /// True when the ray can hit anything: every component finite and `dir != 0`.
    #[inline]
    pub fn is_valid(&self) -> bool {
        // Non-short-circuit `&`: six independent tests and no branch between
        // them (every query asks, and the answer is nearly always yes).
        let (o, d) = (self.origin, self.dir);
        let finite = o.x.is_finite() & o.y.is_finite() & o.z.is_finite();
        finite & d.x.is_finite() & d.y.is_finite() & d.z.is_finite() & (d != Vec3::ZERO)
    }
}

/// An inclusive range `[min, max]` of the ray parameter `t`.
///
/// Only crossings with `min <= t <= max` count; both ends are included.
/// `min > max` (or a NaN end) is empty: no hit, not an error.
///
/// # Examples
/// ```
/// use raycast::Interval;
/// assert!(Interval::FORWARD.contains(0.0));
/// assert!(Interval::SEGMENT.contains(1.0));
/// assert!(!Interval::new(2.0, 1.0).contains(1.5));
/// let r: Interval = (0.5..=2.0).into();
/// assert_eq!(r, Interval::new(0.5, 2.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Interval {
    /// Smallest `t` that counts (`t_min`).
    pub min: f32,
    /// Largest `t` that counts (`t_max`).
    pub max: f32,
}

impl Interval {
    /// `[0, +∞]`: the default of every query.
    pub const FORWARD: Interval = Interval { min: 0.0, max: f32::INFINITY };
    /// `[-∞, +∞]`: the whole line.
    pub const ALL: Interval = Interval { min: f32::NEG_INFINITY, max: f32::INFINITY };
    /// `[0, 1]`: a segment given as `Ray::segment(a, b)`.
    pub const SEGMENT: Interval = Interval { min: 0.0, max: 1.0 };

    /// `[min, max]`.
    #[inline]
    pub const fn new(min: f32, max: f32) -> Self {
        Self { min, max }
    }

    /// `min <= t <= max` (false for NaN).
    #[inline]
    pub fn contains(&self, t: f32) -> bool {
        self.min <= t && t <= self.max
    }

    /// True when no `t` lies in the interval (`min > max` or a NaN end).
    #[inline]
    pub fn is_empty(&self) -> bool {
        !(self.min <= self.max)
    }

    /// The same interval with `max` lowered to `t` (used to shrink the search
    /// as closer hits are found).
    #[inline]
    pub fn with_max(self, max: f32) -> Self {
        Self { max, ..self }
    }
}

impl Default for Interval {
    fn default() -> Self {
        Self::FORWARD
    }
}

impl From<RangeInclusive<f32>> for Interval {
    fn from(r: RangeInclusive<f32>) -> Self {
        Self::new(*r.start(), *r.end())
    }
}
impl From<RangeFrom<f32>> for Interval {
    fn from(r: RangeFrom<f32>) -> Self {
        Self::new(r.start, f32::INFINITY)
    }
}
impl From<RangeToInclusive<f32>> for Interval {
    fn from(r: RangeToInclusive<f32>) -> Self {
        Self::new(0.0, r.end)
    }
}
impl From<RangeFull> for Interval {
    fn from(_: RangeFull) -> Self {
        Self::FORWARD
    }
}
