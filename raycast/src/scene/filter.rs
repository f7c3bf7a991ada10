//! [`Filter`]: which objects of a scene a query considers, and [`Verdict`],
//! what a filter's predicate answers for one object.
//!
//! The cheap tests come first: the layer mask (one AND), then the excluded
//! ids (a linear scan of a short slice), and only then the user's predicate
//! (an indirect call). All three look at the object's `id` and `mask` only,
//! never at its geometry, so an object that fails them is never cast against.

use std::fmt;

/// What a [`Filter`]'s predicate answers for an object id.
///
/// # Examples
/// ```
/// use raycast::scene::{Filter, Verdict};
/// let walls_only = |id: u32| if id < 100 { Verdict::Accept } else { Verdict::Ignore };
/// let filter = Filter::default().with_predicate(&walls_only);
/// assert_eq!(filter.verdict(7, u32::MAX), Verdict::Accept);
/// assert_eq!(filter.verdict(700, u32::MAX), Verdict::Ignore);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The object is a candidate.
    Accept,
    /// The object is left out, as if it were not in the scene.
    Ignore,
    /// The object is a candidate, and a hit on it ends the search early.
    ///
    /// * `cast`: the first hit found on such an object is the answer at once.
    ///   The traversal goes near to far and shrinks the search to the best hit
    ///   so far, so that hit is the closest of the objects examined until then;
    ///   an object whose bounds the ray entered earlier but that was not yet
    ///   examined may still be closer. Use it for "any good hit will do".
    /// * `hits`: the same as [`Verdict::Accept`] (any hit ends the search).
    /// * `cast_all`: the object *blocks* the ray: the answer is every crossing
    ///   up to and including the object's first crossing, none beyond
    ///   (deterministic: the nearest first crossing of all blocking objects).
    Stop,
}

/// Which objects a scene query considers.
///
/// An object is a candidate when `object.mask & filter.mask != 0`, its id is
/// not in `exclude`, and the predicate (if any) does not answer
/// [`Verdict::Ignore`]. The default filter (`mask` all bits, nothing
/// excluded, no predicate) accepts every object.
///
/// The predicate is `Sync` so that one filter serves every thread of a batch.
///
/// # Examples
/// ```
/// use raycast::scene::{Filter, Verdict};
/// let skip = [3, 9];
/// let f = Filter::default().with_mask(0b10).excluding(&skip);
/// assert_eq!(f.verdict(1, 0b11), Verdict::Accept);
/// assert_eq!(f.verdict(1, 0b01), Verdict::Ignore); // no common layer
/// assert_eq!(f.verdict(9, 0b11), Verdict::Ignore); // excluded
/// ```
#[derive(Clone, Copy)]
pub struct Filter<'a> {
    /// Layer bits: an object is a candidate when `object.mask & mask != 0`.
    pub mask: u32,
    /// Object ids left out (checked linearly: meant for a few ids, such as
    /// the shooter itself).
    pub exclude: &'a [u32],
    /// Decides per object id; `None` accepts every object that passes the
    /// mask and `exclude`.
    pub predicate: Option<&'a (dyn Fn(u32) -> Verdict + Sync)>,
}

impl Filter<'static> {
    /// Every object: all mask bits, nothing excluded, no predicate.
    pub const ALL: Filter<'static> = Filter { mask: u32::MAX, exclude: &[], predicate: None };
}

impl Default for Filter<'_> {
    fn default() -> Self {
        Filter { mask: u32::MAX, exclude: &[], predicate: None }
    }
}

impl<'a> Filter<'a> {
    /// The same filter with the query mask `mask`.
    pub fn with_mask(self, mask: u32) -> Self {
        Self { mask, ..self }
    }

    /// The same filter leaving out the objects with these ids.
    pub fn excluding(self, ids: &'a [u32]) -> Self {
        Self { exclude: ids, ..self }
    }

    /// The same filter deciding with `predicate` on the object id.
    pub fn with_predicate(self, predicate: &'a (dyn Fn(u32) -> Verdict + Sync)) -> Self {
        Self { predicate: Some(predicate), ..self }
    }

    /// The verdict for an object with this `id` and layer `mask`.
    #[inline]
    pub fn verdict(&self, id: u32, mask: u32) -> Verdict {
        if mask & self.mask == 0 || (!self.exclude.is_empty() && self.exclude.contains(&id)) {
            return Verdict::Ignore;
        }
        match self.predicate {
            None => Verdict::Accept,
            Some(p) => p(id),
        }
    }
}

impl fmt::Debug for Filter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("mask", &format_args!("{:#010x}", self.mask))
            .field("exclude", &self.exclude)
            .field("predicate", &self.predicate.map(|_| "Fn(u32) -> Verdict"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_then_exclude_then_predicate() {
        let calls = std::sync::atomic::AtomicU32::new(0);
        let p = |id: u32| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if id == 5 {
                Verdict::Stop
            } else {
                Verdict::Accept
            }
        };
        let ex = [4];
        let f = Filter::default().with_mask(1 << 31).excluding(&ex).with_predicate(&p);
        assert_eq!(f.verdict(5, 1), Verdict::Ignore);
        assert_eq!(f.verdict(4, u32::MAX), Verdict::Ignore);
        // The predicate ran for neither of the two above.
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert_eq!(f.verdict(5, 1 << 31), Verdict::Stop);
        assert_eq!(f.verdict(6, 1 << 31), Verdict::Accept);
        assert_eq!(Filter::default().verdict(0, 0), Verdict::Ignore); // a zero object mask
        assert_eq!(Filter::ALL.with_mask(0).verdict(0, u32::MAX), Verdict::Ignore);
        assert!(format!("{f:?}").contains("0x80000000"));
    }
}
