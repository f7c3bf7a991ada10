//! The scene queries: [`Scene::cast`] (closest hit), [`Scene::hits`] (any
//! hit) and [`Scene::cast_all`] (every crossing), and [`RayCast`] for a scene
//! with the default filter.
//!
//! All three share one shape: the side lists first (unbounded objects, then
//! pending and moved ones, each culled by its box), then the tree, whose
//! traversal calls back per leaf with the range still open. The callback
//! reads the leaf's compact cull record (see `Cull` in the parent module):
//! its mask is zero unless the object is *in the tree* (a moved one was
//! already tested from its list, a freed slot's stale box finds nothing), so
//! one AND applies the query mask and the state; then the bounding-sphere
//! test, the rest of the filter, and only then the object is loaded and cast
//! over `[t_min, best]`:
//! every kernel answers the first crossing at or after `t_min`, which does not
//! depend on the upper end once that end is at or beyond it, so lowering the
//! upper end to the best hit so far changes no answer, it only prunes.

use super::filter::{Filter, Verdict};
use super::object::SceneObject;
use super::{placed_cast, Scene, Slot};
use crate::bvh::{prefetch, Leaf, Order};
use crate::shapes::RayCast;
use crate::{Aabb, Hit, Interval, Ray};

/// The object of a live slot that the filter accepts, and whether a hit on it
/// ends the search.
#[inline]
fn candidate<'s>(slot: &'s Slot, filter: &Filter) -> Option<(&'s SceneObject, bool)> {
    let o = slot.object.as_ref()?;
    match filter.verdict(o.id, o.mask) {
        Verdict::Ignore => None,
        Verdict::Accept => Some((o, false)),
        Verdict::Stop => Some((o, true)),
    }
}

/// Whether `o` (in `slot`) is hit in `range`: through its placement, or
/// directly when that is the identity.
#[inline]
fn placed_hits(slot: &Slot, o: &SceneObject, ray: &Ray, range: Interval) -> bool {
    if slot.identity {
        o.placed.shape().hits(ray, range)
    } else {
        o.placed.hits(ray, range)
    }
}

#[inline]
fn tagged(mut h: Hit, id: u32) -> Hit {
    h.object = Some(id);
    h
}

/// What `cast_all` has gathered so far and up to where it still looks.
struct Gathered {
    hits: Vec<Hit>,
    max: f32,
}

/// Adds one object's crossings in `[t_min, g.max]`; true when it blocks the
/// ray (`stop`) and lowered `g.max` to its first crossing.
fn gather(slot: &Slot, o: &SceneObject, stop: bool, ray: &Ray, t_min: f32, g: &mut Gathered) -> bool {
    let r = Interval::new(t_min, g.max);
    let hits = if slot.identity { o.placed.shape().cast_all(ray, r) } else { o.placed.cast_all(ray, r) };
    let lowered = match hits.first() {
        Some(h) if stop && h.t < g.max => {
            g.max = h.t;
            true
        }
        _ => false,
    };
    g.hits.extend(hits.into_iter().map(|h| tagged(h, o.id)));
    lowered
}

impl Scene {
    /// The closest hit with `t` in `range` over the objects `filter` accepts,
    /// tagged with the object's id.
    ///
    /// Objects hit at exactly the same `t` keep the one found first. A
    /// [`Verdict::Stop`] object's hit ends the search at once (see there).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Filter, Scene, SceneObject, Verdict};
    /// use raycast::{vec3, Affine3A, Cuboid, Interval, Ray, Vec3};
    /// let scene = Scene::from_objects((0..10).map(|i| {
    ///     SceneObject::new(Cuboid::new(Vec3::splat(0.5)), Affine3A::from_translation(vec3(2.0 * i as f32, 0.0, 0.0)), i)
    /// }));
    /// let ray = Ray::new(vec3(-5.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0));
    /// let hit = scene.cast(&ray, Interval::FORWARD, &Filter::default()).unwrap();
    /// assert_eq!((hit.t, hit.object, hit.part.name()), (4.5, Some(0), "-x"));
    /// // Only odd ids.
    /// let odd = |id: u32| if id % 2 == 1 { Verdict::Accept } else { Verdict::Ignore };
    /// let hit = scene.cast(&ray, Interval::FORWARD, &Filter::default().with_predicate(&odd)).unwrap();
    /// assert_eq!((hit.t, hit.object), (6.5, Some(1)));
    /// // The range is inclusive and applies to the hit's t.
    /// assert!(scene.cast(&ray, Interval::new(0.0, 4.4), &Filter::default()).is_none());
    /// ```
    pub fn cast(&self, ray: &Ray, range: Interval, filter: &Filter) -> Option<Hit> {
        if !ray.is_valid() || range.is_empty() {
            return None;
        }
        let (mut best, stopped) = self.cast_side(ray, range, filter);
        if let (Some(bvh), false) = (&self.bvh, stopped) {
            let dir_len2 = ray.dir.length_squared();
            let max = best.map_or(range.max, |b| b.t);
            bvh.traverse_leaves(ray, Interval::new(range.min, max), Order::NearFirst, |leaves, _| {
                self.cast_leaf(leaves, ray, dir_len2, range, filter, &mut best)
            });
        }
        best
    }

    /// The closest hit among the side lists' objects (unbounded, pending,
    /// moved; see the module doc), and whether it ends the search (a
    /// [`Verdict::Stop`] object was hit).
    #[inline(always)]
    fn cast_side(&self, ray: &Ray, range: Interval, filter: &Filter) -> (Option<Hit>, bool) {
        let mut best: Option<Hit> = None;
        let mut max = range.max;
        for (list, clip) in [(&self.unbounded, false), (&self.pending, true), (&self.moved, true)] {
            for &i in list {
                let slot = &self.slots[i as usize];
                let Some((o, stop)) = candidate(slot, filter) else { continue };
                let r = Interval::new(range.min, max);
                if clip && slot.world.clip(ray, r).is_none() {
                    continue;
                }
                if let Some(h) = placed_cast(slot.identity, &o.placed, ray, r) {
                    if stop {
                        return (Some(tagged(h, o.id)), true);
                    }
                    if best.is_none_or(|b| h.t < b.t) {
                        max = h.t;
                        best = Some(tagged(h, o.id));
                    }
                }
            }
        }
        (best, false)
    }

    /// The closest-hit test of the tree items `leaves`: each accepted object
    /// is cast over `[range.min, best]` (`range.max` while nothing is found);
    /// `best` is replaced by a nearer hit. The upper end only prunes: every
    /// kernel answers the first crossing at or after `range.min` (module doc).
    #[inline(always)]
    fn cast_leaf(
        &self,
        leaves: std::ops::Range<usize>,
        ray: &Ray,
        dir_len2: f32,
        range: Interval,
        filter: &Filter,
        best: &mut Option<Hit>,
    ) -> Leaf {
        let mut out = Leaf::Miss;
        for p in leaves {
            let Some((slot, o, stop)) = self.tree_candidate(p, ray, dir_len2, filter) else {
                continue;
            };
            let max = best.map_or(range.max, |b| b.t);
            let Some(h) = placed_cast(slot.identity, &o.placed, ray, Interval::new(range.min, max)) else {
                continue;
            };
            if stop {
                *best = Some(tagged(h, o.id));
                return Leaf::Stop;
            }
            if best.is_none_or(|b| h.t < b.t) {
                *best = Some(tagged(h, o.id));
                out = Leaf::Hit(h.t);
            }
        }
        out
    }

    /// [`Scene::cast`] for each of `rays`, written to `out` (same length):
    /// the rays walk the tree together (see `bvh::interleave`), which hides
    /// much of the memory latency of large scenes. Answers are those of
    /// [`Scene::cast`], bit for bit.
    pub(super) fn cast_into(&self, rays: &[Ray], range: Interval, filter: &Filter, out: &mut [Option<Hit>]) {
        if self.bvh.as_ref().is_some_and(|b| b.interleaving_pays(rays)) {
            self.cast_interleaved(rays, range, filter, out);
        } else {
            for (ray, o) in rays.iter().zip(out) {
                *o = self.cast(ray, range, filter);
            }
        }
    }

    /// The interleaved walk of [`Scene::cast_into`], used whatever the
    /// tree's size.
    pub(super) fn cast_interleaved(
        &self,
        rays: &[Ray],
        range: Interval,
        filter: &Filter,
        out: &mut [Option<Hit>],
    ) {
        debug_assert_eq!(rays.len(), out.len());
        // Each ray's tree range after its side lists (empty: nothing to walk).
        let empty = Interval::new(1.0, 0.0);
        let starts: Vec<Interval> = rays
            .iter()
            .zip(out.iter_mut())
            .map(|(ray, o)| {
                *o = None;
                if !ray.is_valid() || range.is_empty() {
                    return empty;
                }
                let (best, stopped) = self.cast_side(ray, range, filter);
                *o = best;
                if stopped {
                    empty
                } else {
                    Interval::new(range.min, best.map_or(range.max, |b| b.t))
                }
            })
            .collect();
        self.walk_interleaved(rays, &starts, Order::NearFirst, |i, leaves, ray, dir_len2| {
            self.cast_leaf(leaves, ray, dir_len2, range, filter, &mut out[i])
        });
    }

    /// The tree walk of the interleaved batches: ray `i` from `starts[i]`
    /// (empty: no walk), `leaf(i, items, ray, |dir|²)` per leaf reached, the
    /// cull records of leaves prefetched as they are announced.
    #[inline(always)]
    fn walk_interleaved(
        &self,
        rays: &[Ray],
        starts: &[Interval],
        order: Order,
        mut leaf: impl FnMut(usize, std::ops::Range<usize>, &Ray, f32) -> Leaf,
    ) {
        let Some(bvh) = &self.bvh else { return };
        bvh.traverse_interleaved(
            rays.len(),
            order,
            |i| (rays[i], starts[i]),
            |l| prefetch(&self.cull, l.first),
            |i, l, _| {
                let ray = &rays[i];
                leaf(i, l.first..l.first + l.count, ray, ray.dir.length_squared())
            },
        );
    }

    /// Whether any object `filter` accepts is hit with `t` in `range`
    /// (occlusion, shadow rays): stops at the first hit found.
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Filter, Scene, SceneObject};
    /// use raycast::{vec3, Interval, Ray, Sphere};
    /// let scene = Scene::from_objects([SceneObject::local(Sphere::new(1.0), 5)]);
    /// let shadow = Ray::segment(vec3(0.0, 5.0, 0.0), vec3(0.0, -5.0, 0.0));
    /// assert!(scene.hits(&shadow, Interval::SEGMENT, &Filter::default()));
    /// assert!(!scene.hits(&shadow, Interval::SEGMENT, &Filter::default().excluding(&[5])));
    /// ```
    pub fn hits(&self, ray: &Ray, range: Interval, filter: &Filter) -> bool {
        if !ray.is_valid() || range.is_empty() {
            return false;
        }
        if self.hits_side(ray, range, filter) {
            return true;
        }
        let mut found = false;
        if let Some(bvh) = &self.bvh {
            // Any order: the first hit ends the search, nearness buys nothing.
            let dir_len2 = ray.dir.length_squared();
            bvh.traverse_leaves(ray, range, Order::Any, |leaves, _| {
                self.hits_leaf(leaves, ray, dir_len2, range, filter, &mut found)
            });
        }
        found
    }

    /// Whether an object of the side lists is hit (see [`Scene::hits`]).
    #[inline(always)]
    fn hits_side(&self, ray: &Ray, range: Interval, filter: &Filter) -> bool {
        let test = |slot: &Slot, clip: bool| {
            candidate(slot, filter).is_some_and(|(o, _)| {
                !(clip && slot.world.clip(ray, range).is_none()) && placed_hits(slot, o, ray, range)
            })
        };
        [(&self.unbounded, false), (&self.pending, true), (&self.moved, true)]
            .into_iter()
            .any(|(list, clip)| list.iter().any(|&i| test(&self.slots[i as usize], clip)))
    }

    /// The any-hit test of the tree items `leaves`: stops at the first
    /// accepted object hit in `range`, setting `found`.
    #[inline(always)]
    fn hits_leaf(
        &self,
        leaves: std::ops::Range<usize>,
        ray: &Ray,
        dir_len2: f32,
        range: Interval,
        filter: &Filter,
        found: &mut bool,
    ) -> Leaf {
        for p in leaves {
            if self
                .tree_candidate(p, ray, dir_len2, filter)
                .is_some_and(|(slot, o, _)| placed_hits(slot, o, ray, range))
            {
                *found = true;
                return Leaf::Stop;
            }
        }
        Leaf::Miss
    }

    /// [`Scene::hits`] for each of `rays`, written to `out`, the rays walking
    /// the tree together like [`Scene::cast_into`]'s.
    pub(super) fn hits_into(&self, rays: &[Ray], range: Interval, filter: &Filter, out: &mut [bool]) {
        if self.bvh.as_ref().is_some_and(|b| b.interleaving_pays(rays)) {
            self.hits_interleaved(rays, range, filter, out);
        } else {
            for (ray, o) in rays.iter().zip(out) {
                *o = self.hits(ray, range, filter);
            }
        }
    }

    /// The interleaved walk of [`Scene::hits_into`], used whatever the
    /// tree's size.
    pub(super) fn hits_interleaved(&self, rays: &[Ray], range: Interval, filter: &Filter, out: &mut [bool]) {
        debug_assert_eq!(rays.len(), out.len());
        for (ray, o) in rays.iter().zip(out.iter_mut()) {
            *o = ray.is_valid() && !range.is_empty() && self.hits_side(ray, range, filter);
        }
        let empty = Interval::new(1.0, 0.0);
        let starts: Vec<Interval> = out.iter().map(|&found| if found { empty } else { range }).collect();
        self.walk_interleaved(rays, &starts, Order::Any, |i, leaves, ray, dir_len2| {
            self.hits_leaf(leaves, ray, dir_len2, range, filter, &mut out[i])
        });
    }

    /// Every crossing with `t` in `range` of every object `filter` accepts
    /// (each object's crossings as for that shape alone), sorted by `t`;
    /// crossings at equal `t` keep the order in which they were found.
    ///
    /// A [`Verdict::Stop`] object blocks the ray: the answer ends at its first
    /// crossing (included).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Filter, Scene, SceneObject, Verdict};
    /// use raycast::{vec3, Affine3A, Interval, Ray, Sphere};
    /// let scene = Scene::from_objects((0..4).map(|i| {
    ///     SceneObject::new(Sphere::new(1.0), Affine3A::from_translation(vec3(0.0, 0.0, 10.0 * i as f32)), i)
    /// }));
    /// let ray = Ray::new(vec3(0.0, 0.0, -10.0), vec3(0.0, 0.0, 1.0));
    /// let all = scene.cast_all(&ray, Interval::FORWARD, &Filter::default());
    /// let ts: Vec<f32> = all.iter().map(|h| h.t).collect();
    /// assert_eq!(ts, [9.0, 11.0, 19.0, 21.0, 29.0, 31.0, 39.0, 41.0]);
    /// // Object 2 is a wall: nothing behind its front face.
    /// let wall = |id: u32| if id == 2 { Verdict::Stop } else { Verdict::Accept };
    /// let some = scene.cast_all(&ray, Interval::FORWARD, &Filter::default().with_predicate(&wall));
    /// assert_eq!(some.iter().map(|h| h.object.unwrap()).collect::<Vec<_>>(), [0, 0, 1, 1, 2]);
    /// ```
    pub fn cast_all(&self, ray: &Ray, range: Interval, filter: &Filter) -> Vec<Hit> {
        let mut g = Gathered { hits: Vec::new(), max: range.max };
        if !ray.is_valid() || range.is_empty() {
            return g.hits;
        }
        for (list, clip) in [(&self.unbounded, false), (&self.pending, true), (&self.moved, true)] {
            for &i in list {
                let slot = &self.slots[i as usize];
                if let Some((o, stop)) = candidate(slot, filter) {
                    if !(clip && slot.world.clip(ray, Interval::new(range.min, g.max)).is_none()) {
                        gather(slot, o, stop, ray, range.min, &mut g);
                    }
                }
            }
        }
        if let Some(bvh) = &self.bvh {
            let dir_len2 = ray.dir.length_squared();
            // Near first only pays when a blocking object may cut the search short.
            let order = if filter.predicate.is_some() { Order::NearFirst } else { Order::Any };
            bvh.traverse_leaves(ray, Interval::new(range.min, g.max), order, |leaves, _| {
                let mut out = Leaf::Miss;
                for p in leaves {
                    if let Some((slot, o, stop)) = self.tree_candidate(p, ray, dir_len2, filter) {
                        if gather(slot, o, stop, ray, range.min, &mut g) {
                            out = Leaf::Hit(g.max);
                        }
                    }
                }
                out
            });
        }
        let max = g.max;
        g.hits.retain(|h| h.t <= max);
        g.hits.sort_by(|a, b| a.t.total_cmp(&b.t)); // stable: ties keep their order
        g.hits
    }

    /// The object of tree item `p` (a position in leaf order) when the filter
    /// accepts it and the line of `ray` may meet its bounding sphere (see
    /// [`Cull`](super::Cull)); with whether a hit on it ends the search.
    #[inline(always)]
    fn tree_candidate(
        &self,
        p: usize,
        ray: &Ray,
        dir_len2: f32,
        filter: &Filter,
    ) -> Option<(&Slot, &SceneObject, bool)> {
        let c = &self.cull[p];
        if c.mask & filter.mask == 0 || !c.line_may_hit(ray, dir_len2) {
            return None;
        }
        let stop = match filter.verdict(c.id, c.mask) {
            Verdict::Ignore => return None,
            Verdict::Accept => false,
            Verdict::Stop => true,
        };
        let slot = &self.slots[c.slot as usize];
        Some((slot, slot.object.as_ref()?, stop))
    }
}

/// The scene with the default filter (every object).
///
/// # Examples
/// ```
/// use raycast::scene::{Scene, SceneObject};
/// use raycast::{vec3, Interval, Ray, RayCast, Sphere};
/// let scene = Scene::from_objects([SceneObject::local(Sphere::new(1.0), 3)]);
/// let ray = Ray::new(vec3(0.0, 0.0, -4.0), vec3(0.0, 0.0, 1.0));
/// // The inherent `cast` takes a filter; the trait's is called through the trait.
/// assert_eq!(RayCast::cast(&scene, &ray, Interval::FORWARD).unwrap().object, Some(3));
/// assert_eq!(scene.local_bounds().max, scene.bounds().max);
/// ```
impl RayCast for Scene {
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        Scene::cast(self, ray, range, &Filter::ALL)
    }

    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        Scene::hits(self, ray, range, &Filter::ALL)
    }

    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        Scene::cast_all(self, ray, range, &Filter::ALL)
    }

    /// The world bounds of every object (a scene's frame is the world).
    fn local_bounds(&self) -> Aabb {
        self.bounds()
    }
}

#[cfg(test)]
mod tests {
    use super::super::SceneObject;
    use super::*;
    use crate::{vec3, Affine3A, Cuboid, Plane, Sphere, Vec3};

    /// A wall of unit boxes along x at z = 0 (layer 1), plus a ground plane at
    /// y = -1 (layer 2).
    fn wall() -> Scene {
        let mut s = Scene::from_objects((0..32).map(|i| {
            SceneObject::new(
                Cuboid::new(Vec3::splat(0.5)),
                Affine3A::from_translation(vec3(i as f32, 0.0, 0.0)),
                i,
            )
            .with_mask(1)
        }));
        s.insert(SceneObject::local(Plane::new(vec3(0.0, 1.0, 0.0), vec3(0.0, -1.0, 0.0)), 100).with_mask(2));
        s
    }

    #[test]
    fn degenerate_rays_and_empty_ranges_miss() {
        let s = wall();
        let f = Filter::default();
        for ray in [
            Ray::new(Vec3::ZERO, Vec3::ZERO),
            Ray::new(vec3(f32::NAN, 0.0, -5.0), vec3(0.0, 0.0, 1.0)),
            Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, f32::INFINITY, 1.0)),
        ] {
            assert!(s.cast(&ray, Interval::FORWARD, &f).is_none());
            assert!(!s.hits(&ray, Interval::FORWARD, &f));
            assert!(s.cast_all(&ray, Interval::FORWARD, &f).is_empty());
        }
        let ray = Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 1.0));
        assert!(s.cast(&ray, Interval::new(5.0, 4.0), &f).is_none());
        assert!(!s.hits(&ray, Interval::new(f32::NAN, 4.0), &f));
    }

    #[test]
    fn seam_between_boxes_and_inclusive_ends() {
        let s = wall();
        let f = Filter::default();
        // Along the seam x = 0.5 between boxes 0 and 1: either, at t = 4.5.
        let ray = Ray::new(vec3(0.5, 0.0, -5.0), vec3(0.0, 0.0, 1.0));
        let h = s.cast(&ray, Interval::FORWARD, &f).unwrap();
        assert_eq!(h.t, 4.5);
        assert!(matches!(h.object, Some(0 | 1)));
        assert_eq!(s.cast_all(&ray, Interval::FORWARD, &f).len(), 4);
        assert!(s.hits(&ray, Interval::new(0.0, 4.5), &f));
        assert!(!s.hits(&ray, Interval::new(0.0, 4.4999), &f));
        assert_eq!(s.cast(&ray, Interval::new(5.5, 5.5), &f).unwrap().t, 5.5); // exit face
    }

    #[test]
    fn masks_leave_objects_out() {
        let s = wall();
        let down = Ray::new(vec3(3.0, 5.0, 0.0), vec3(0.0, -1.0, 0.0));
        let h = s.cast(&down, Interval::FORWARD, &Filter::default()).unwrap();
        assert_eq!((h.t, h.object), (4.5, Some(3)));
        let h = s.cast(&down, Interval::FORWARD, &Filter::default().with_mask(2)).unwrap();
        assert_eq!((h.t, h.object), (6.0, Some(100)));
        assert!(s.cast(&down, Interval::FORWARD, &Filter::default().with_mask(4)).is_none());
        assert!(s.cast(&down, Interval::FORWARD, &Filter::default().with_mask(0)).is_none());
        let ids: Vec<u32> = s
            .cast_all(&down, Interval::FORWARD, &Filter::default())
            .iter()
            .map(|h| h.object.unwrap())
            .collect();
        assert_eq!(ids, [3, 3, 100]);
    }

    #[test]
    fn stop_ends_the_search_and_blocks_cast_all() {
        let mut s = Scene::new();
        for i in 0..8 {
            s.insert(SceneObject::new(
                Sphere::new(0.25),
                Affine3A::from_translation(vec3(0.0, 0.0, i as f32)),
                i,
            ));
        }
        let ray = Ray::new(vec3(0.0, 0.0, -1.0), vec3(0.0, 0.0, 1.0));
        let stop_at_5 = |id: u32| if id == 5 { Verdict::Stop } else { Verdict::Ignore };
        let f = Filter::default().with_predicate(&stop_at_5);
        assert_eq!(s.cast(&ray, Interval::FORWARD, &f).unwrap().object, Some(5));
        let block_at_5 = |id: u32| if id == 5 { Verdict::Stop } else { Verdict::Accept };
        let f = Filter::default().with_predicate(&block_at_5);
        let all = s.cast_all(&ray, Interval::FORWARD, &f);
        assert_eq!(all.len(), 11);
        assert_eq!(all.last().map(|h| (h.t, h.object)), Some((5.75, Some(5))));
        assert!(s.hits(&ray, Interval::FORWARD, &f));
    }
}
