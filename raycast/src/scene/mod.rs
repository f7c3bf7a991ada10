//! [`Scene`]: many placed shapes under one top-level BVH, queried with a
//! [`Filter`] (layer mask, excluded ids, a predicate on the object id), one
//! ray at a time or in parallel batches.
//!
//! # Design
//!
//! Objects live in *slots* (a `Vec`, reused through a free list); an
//! [`ObjectKey`] is a slot index plus a generation, so a removed object's key
//! goes stale. The top-level [`Bvh`] is built over one box per slot (item id =
//! slot index): the object's world bounds ([`SceneObject::world_bounds`],
//! tight for round shapes) widened by a relative 2⁻²⁰ against rounding, or
//! [`Aabb::EMPTY`] for a slot the tree must not visit. Every object is in
//! exactly one of four places:
//!
//! * **tree** — the tree's box for its slot (as of the last build or refit)
//!   contains its current bounds; found by traversal.
//! * **moved** — it has a leaf in the tree, but [`Scene::set_transform`] took
//!   it outside the box the tree holds; tested linearly (box first) until the
//!   next [`Scene::refit`] fits the leaf to it again. Moving an object within
//!   its old box keeps it in the tree. Every query is therefore right at
//!   every moment, and `refit` is what makes moved objects fast again.
//! * **pending** — inserted since the last build (no leaf); tested linearly.
//!   When the pending list outgrows `REBUILD_MIN + len / REBUILD_FRACTION`
//!   objects, `insert` rebuilds the tree (SAH), folding them in: a rebuild of
//!   `n` objects every `n / 16` inserts is `O(log n)` amortised per insert.
//! * **unbounded** — infinite bounds (planes): a side list tested linearly,
//!   never in the tree (an infinite box would make every node infinite).
//!
//! Next to the tree, in its leaf order, is one 32-byte *cull record* per
//! leaf item: id, mask (zero unless the object is in the tree) and a bounding
//! sphere. The leaf callback reads only that record until an object passes
//! the mask, the sphere test and the filter; the slot itself (~300 bytes: the
//! shape and three matrices) is loaded only to cast. A removed object's
//! record is zeroed at once, so its stale tree box finds nothing (nor does a
//! reused slot through its previous occupant's box); its box becomes empty at
//! the next refit. [`Scene::refit`] hands the current boxes to [`Bvh::refit`]
//! (topology kept, `O(n)`) and re-enables the moved objects' records (which
//! `set_transform` already brought up to date); [`Scene::rebuild`] rebuilds
//! the tree from scratch when many moves have worn its quality down.
//!
//! A query first tests the side lists (a near ground plane shrinks the search
//! at once), then traverses the tree near to far, lowering the range's upper
//! end to the best hit so far. Each object is cast in its own frame through
//! [`Transformed`] (skipped when the placement is the identity) and the hit is
//! tagged with the object's user id in [`Hit::object`].
//!
//! Ties: objects hit at exactly the same `t` keep the one found first (the
//! traversal order); every query is deterministic, so a batch returns exactly
//! what the single-ray queries return.

mod batch;
mod filter;
mod object;
mod query;

pub use filter::{Filter, Verdict};
pub use object::{ObjectKey, SceneObject};
/// The rayon crate, for building a [`rayon::ThreadPool`] to pass to
/// [`Scene::cast_batch_in`] and [`Scene::hits_batch_in`].
#[cfg(feature = "parallel")]
pub use rayon;

use crate::bvh::Bvh;
use crate::shapes::{RayCast, Shape, Transformed};
use crate::{Aabb, Affine3A, Hit, Ray, ShapeError, Vec3};
use glam::Vec3A;

/// Objects pending insertion below this count never trigger a rebuild.
const REBUILD_MIN: usize = 16;
/// A rebuild happens once more than `len / REBUILD_FRACTION` objects (plus
/// `REBUILD_MIN`) wait in the pending list.
const REBUILD_FRACTION: usize = 16;

/// Where a slot's object is looked for (see the module documentation); the
/// number is the object's position in that side list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Tree,
    Moved(u32),
    Pending(u32),
    Unbounded(u32),
}

struct Slot {
    object: Option<SceneObject>,
    /// Padded world bounds of the object; `EMPTY` when free.
    world: Aabb,
    generation: u32,
    /// The placement is the identity: cast the shape directly.
    identity: bool,
}

/// Where a slot's object is, kept apart from the (large) [`Slot`]s so that
/// a refit touches 12 bytes per moved object, not a slot's cache lines.
#[derive(Clone, Copy, Debug)]
struct Meta {
    state: State,
    /// The slot's position in the tree's leaf order ([`Bvh::items`]) when it
    /// has a leaf (it had a non-empty box at the last build, so a refit can
    /// fit it to a new box); [`NO_LEAF`] otherwise.
    leaf: u32,
}

/// `Meta::leaf` of a slot without a leaf.
const NO_LEAF: u32 = u32::MAX;

/// What the leaf callback reads before it touches an object (32 bytes, in
/// the tree's leaf order, so the leaves of one subtree are adjacent in
/// memory): the filter's inputs and a bounding sphere.
///
/// `mask` is the object's mask while the object is *in the tree* and 0
/// otherwise (free, moved, pending), so one AND both applies the query mask
/// and skips slots the tree must not answer for.
///
/// The sphere is a second, cheap cull after the tree's box test: a line
/// that enters an object's (loose, axis-aligned) world box often passes
/// beside a rotated or round object, and the sphere test rejects it without
/// loading the object (~300 bytes, several cache lines).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cull {
    center: Vec3,
    radius: f32,
    /// `refit_mask` while the object is in the tree, else 0.
    mask: u32,
    /// What `mask` becomes at the next refit: the object's mask if it has
    /// its leaf (in the tree or moved), else 0 (free, or a plane that reused
    /// the slot).
    refit_mask: u32,
    id: u32,
    slot: u32,
}

impl Cull {
    const DEAD: Cull =
        Cull { center: Vec3::ZERO, radius: 0.0, mask: 0, refit_mask: 0, id: 0, slot: u32::MAX };

    /// The cull record of slot `slot` holding `o` in state `state`.
    fn new(o: &SceneObject, slot: usize, state: State) -> Self {
        let (center, radius) = world_sphere(o);
        let mask = if state == State::Tree { o.mask } else { 0 };
        let refit_mask = if matches!(state, State::Tree | State::Moved(_)) { o.mask } else { 0 };
        Cull { center, radius, mask, refit_mask, id: o.id, slot: slot as u32 }
    }

    /// False only when the line of `ray` certainly passes outside the sphere:
    /// `|oc × d|² > (r + slack)²·|d|²`, with `oc = centre − origin`. The
    /// cross product's rounding is a few ulp of `|oc|·|d|`; a slack of 2⁻¹⁶
    /// of `|oc|₁ ≥ |oc|` covers it many times over and keeps the test
    /// conservative (a tangent line is kept) at any distance, without a
    /// square root.
    #[inline(always)]
    fn line_may_hit(&self, ray: &Ray, dir_len2: f32) -> bool {
        let oc = self.center - ray.origin;
        let reach = self.radius + oc.abs().element_sum() * (1.0 / 65_536.0);
        // `!(a > b)`: a NaN from overflowing input keeps the object.
        !(oc.cross(ray.dir).length_squared() > reach * reach * dir_len2)
    }
}

/// A sphere around the shape in its own frame: tight for the round shapes,
/// the box's half diagonal otherwise. The centre is `None` when it is the
/// local origin (most shapes), so that it maps to the translation with no
/// product.
///
/// `√(r² + h²)` is within 2 ulp of the exact hypotenuse (three roundings, the
/// square root halving the sum's), far inside the 2⁻¹⁶ that [`world_sphere`]
/// adds; an overflow gives ∞, which keeps every line.
fn local_sphere(shape: &Shape) -> (Option<Vec3>, f32) {
    let hypot = |r: f32, h: f32| (r * r + h * h).sqrt();
    match shape {
        Shape::Sphere(s) => (None, s.radius()),
        // The box of a cuboid is centred on the origin: its half diagonal
        // is the length of the half extents.
        Shape::Cuboid(c) => (None, c.half_extents().length()),
        Shape::Capsule(c) => (Some(0.5 * (c.a() + c.b())), 0.5 * (c.b() - c.a()).length() + c.radius()),
        Shape::Cylinder(c) => (None, hypot(c.radius(), c.half_height())),
        Shape::Cone(c) => (None, hypot(c.radius(), c.half_height())),
        Shape::Torus(t) => (None, t.major_radius() + t.minor_radius()),
        _ => {
            let b = shape.local_bounds();
            (Some(b.center()), 0.5 * b.size().length())
        }
    }
}

/// The local sphere carried into the world: centre mapped, radius times a
/// bound on the map's largest stretch. That stretch is `√λ_max(MᵀM)`, and
/// any row sum of `|MᵀM|` bounds `λ_max` (Gershgorin); for a rotation times
/// a scale it is exact. The radius is widened by 2⁻¹⁶ for the roundings.
///
/// `MᵀM` in lanes, from the rows `r₀, r₁, r₂` of `M` (the columns of `Mᵀ`):
/// lane `i` of `Σₖ rₖ·rₖ` is `|Mᵢ|²` and lane `i` of `Σₖ rₖ·rₖ.yzx` is
/// `Mᵢ·Mᵢ₊₁` (column `i` of `M`, indices mod 3), so row `i` of `|MᵀM|` sums
/// to lane `i` of `diag + off + off.zxy`, `off` being the second sum's
/// magnitudes.
fn world_sphere(o: &SceneObject) -> (Vec3, f32) {
    use glam::Vec3Swizzles;
    let m = o.placed.world_from_local();
    let (c, r) = local_sphere(o.placed.shape());
    let rows = m.matrix3.transpose();
    let (a, b, d) = (rows.x_axis, rows.y_axis, rows.z_axis);
    let diag = a * a + b * b + d * d;
    let off = (a * a.yzx() + b * b.yzx() + d * d.yzx()).abs();
    let lambda = (diag + off + off.zxy()).max_element();
    // `M·0 + t` is `t` (the map is finite).
    let centre = c.map_or(m.translation.into(), |c| m.transform_point3(c));
    (centre, r * lambda.sqrt() * (1.0 + 1.0 / 65_536.0))
}

/// Many placed shapes under one top-level BVH.
///
/// Objects are any [`Shape`] (primitives, shared meshes, voxel volumes) with
/// an affine placement, a user `id` and a layer `mask` ([`SceneObject`]).
/// Queries take an inclusive range of `t` and a [`Filter`]; every hit carries
/// [`Hit::object`] = the object's id, plus what the shape's own hit carries
/// (part, triangle and uv, cell).
///
/// Insert, remove and move objects at any time; after moving objects, call
/// [`Scene::refit`] (`O(n)`, no rebuild) so that the moved ones are found by
/// the tree again instead of one by one.
///
/// [`RayCast`] is implemented with the default filter; through the trait the
/// calls are `RayCast::cast(&scene, &ray, range)` (the inherent methods of the
/// same names take a filter).
///
/// # Examples
/// ```
/// use raycast::scene::{Filter, Scene, SceneObject};
/// use raycast::{vec3, Affine3A, Cuboid, Interval, Plane, Ray, Sphere, Vec3};
/// let mut scene = Scene::new();
/// let ball = scene.insert(
///     SceneObject::new(Sphere::new(1.0), Affine3A::from_translation(vec3(0.0, 0.0, 5.0)), 1).with_mask(0b01),
/// );
/// scene.insert(SceneObject::new(Cuboid::new(Vec3::ONE), Affine3A::from_translation(vec3(0.0, 0.0, 9.0)), 2).with_mask(0b10));
/// scene.insert(SceneObject::local(Plane::new(vec3(0.0, 0.0, -1.0), vec3(0.0, 0.0, 20.0)), 3));
///
/// let ray = Ray::new(Vec3::ZERO, vec3(0.0, 0.0, 1.0));
/// let hit = scene.cast(&ray, Interval::FORWARD, &Filter::default()).unwrap();
/// assert_eq!((hit.t, hit.object), (4.0, Some(1)));
/// // Only layer 0b10: the box.
/// let hit = scene.cast(&ray, Interval::FORWARD, &Filter::default().with_mask(0b10)).unwrap();
/// assert_eq!((hit.t, hit.object), (8.0, Some(2)));
/// // Leave out the ball and the box: the plane.
/// let hit = scene.cast(&ray, Interval::FORWARD, &Filter::default().excluding(&[1, 2])).unwrap();
/// assert_eq!((hit.t, hit.object), (20.0, Some(3)));
///
/// // Move the ball away, refit, and the box is first.
/// scene.set_transform(ball, Affine3A::from_translation(vec3(0.0, 50.0, 5.0)))?;
/// scene.refit();
/// assert_eq!(scene.cast(&ray, Interval::FORWARD, &Filter::default()).unwrap().object, Some(2));
/// assert_eq!(scene.cast_all(&ray, Interval::FORWARD, &Filter::default()).len(), 3);
/// # Ok::<(), raycast::ShapeError>(())
/// ```
pub struct Scene {
    slots: Vec<Slot>,
    /// One per slot.
    meta: Vec<Meta>,
    /// The box of every slot for the next build or refit: the current world
    /// bounds of objects with a leaf (tree or moved), `EMPTY` otherwise.
    boxes: Vec<Aabb>,
    /// The boxes the tree holds now (as of the last build or refit).
    fitted: Vec<Aabb>,
    bvh: Option<Bvh>,
    /// One per tree item, in leaf order (see [`Cull`]).
    cull: Vec<Cull>,
    /// Number of items the tree was built over (slots at the last build).
    built: usize,
    pending: Vec<u32>,
    moved: Vec<u32>,
    unbounded: Vec<u32>,
    free: Vec<u32>,
    len: usize,
}

/// The world box of an object as the scene stores it: widened on every side
/// by 2⁻²⁰ (about 8 ulp) of the box's largest coordinate magnitude plus its
/// largest extent. A shape's kernel may report a crossing a few ulp outside
/// the exact bounds (rounding in its own frame and in the transform back), and
/// a grazing ray must still enter the box to be tested; the widening is far
/// below any size that matters for culling. Empty and unbounded boxes are
/// returned as they are.
fn padded(b: Aabb) -> Aabb {
    let (lo, hi, _) = padded_corners(b.min.into(), b.max.into());
    Aabb::new(lo.into(), hi.into())
}

/// [`padded`] on the corners in 4-lane vectors (the same lane-wise
/// operations as on `Vec3`, so the same box), with whether the box is
/// *bounded*: finite and not empty (`min ≤ max` on every axis; a NaN fails).
fn padded_corners(lo: Vec3A, hi: Vec3A) -> (Vec3A, Vec3A, bool) {
    if !(lo.is_finite_mask() & hi.is_finite_mask() & lo.cmple(hi)).all() {
        return (lo, hi, false);
    }
    let pad = (lo.abs().max(hi.abs()).max_element() + (hi - lo).max_element()) * (1.0 / 1_048_576.0);
    let (lo, hi) = (lo - pad, hi + pad);
    // Still not empty (`pad ≥ 0`), but a box near `f32::MAX` may overflow
    // to ∞ here, and is then unbounded.
    (lo, hi, (lo.is_finite_mask() & hi.is_finite_mask()).all())
}

/// True for a box with infinite or NaN coordinates that is not the empty box.
fn unbounded(b: &Aabb) -> bool {
    !(b.min.is_finite() && b.max.is_finite()) && *b != Aabb::EMPTY
}

impl Default for Scene {
    fn default() -> Self {
        Self::new()
    }
}

impl Scene {
    /// An empty scene.
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            meta: Vec::new(),
            boxes: Vec::new(),
            fitted: Vec::new(),
            bvh: None,
            cull: Vec::new(),
            built: 0,
            pending: Vec::new(),
            moved: Vec::new(),
            unbounded: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    /// A scene of these objects, with its tree built once (over all of them,
    /// however few).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Scene, SceneObject};
    /// use raycast::{vec3, Affine3A, Sphere};
    /// let scene = Scene::from_objects(
    ///     (0..100).map(|i| SceneObject::new(Sphere::new(0.4), Affine3A::from_translation(vec3(i as f32, 0.0, 0.0)), i)),
    /// );
    /// assert_eq!(scene.len(), 100);
    /// ```
    pub fn from_objects(objects: impl IntoIterator<Item = SceneObject>) -> Self {
        let mut s = Self::new();
        for o in objects {
            s.insert_unbuilt(o);
        }
        s.rebuild();
        s
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the scene has no object.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds an object; returns its key. Amortised `O(log n)`: the object is
    /// tested linearly until enough have been inserted to fold them into a
    /// rebuild of the tree.
    pub fn insert(&mut self, object: SceneObject) -> ObjectKey {
        let key = self.insert_unbuilt(object);
        self.maybe_rebuild();
        key
    }

    /// Adds every object, then rebuilds the tree at most once; returns their
    /// keys in order.
    pub fn insert_many(&mut self, objects: impl IntoIterator<Item = SceneObject>) -> Vec<ObjectKey> {
        let keys = objects.into_iter().map(|o| self.insert_unbuilt(o)).collect();
        self.maybe_rebuild();
        keys
    }

    /// Removes an object and gives it back; `None` for a stale key. `O(1)`.
    pub fn remove(&mut self, key: ObjectKey) -> Option<SceneObject> {
        let i = self.index(key)?;
        let slot = &mut self.slots[i];
        let object = slot.object.take();
        slot.world = Aabb::EMPTY;
        slot.generation = slot.generation.wrapping_add(1);
        self.relocate(i);
        self.free.push(i as u32);
        self.len -= 1;
        object
    }

    /// The object behind `key`; `None` for a stale key.
    pub fn get(&self, key: ObjectKey) -> Option<&SceneObject> {
        self.slots[self.index(key)?].object.as_ref()
    }

    /// True while `key` names an object of this scene.
    pub fn contains(&self, key: ObjectKey) -> bool {
        self.index(key).is_some()
    }

    /// Every object with its key, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (ObjectKey, &SceneObject)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            let o = s.object.as_ref()?;
            Some((ObjectKey { index: i as u32, generation: s.generation }, o))
        })
    }

    /// Moves an object to a new placement. `O(1)`; the tree keeps its shape:
    /// an object that leaves the box the tree holds for it is tested linearly
    /// until the next [`Scene::refit`] (call it once after moving objects).
    ///
    /// # Errors
    /// [`ShapeError`] on `transform` when the map is not finite and
    /// invertible, on `key` when the key is stale; nothing changes then.
    pub fn set_transform(&mut self, key: ObjectKey, world_from_local: Affine3A) -> Result<(), ShapeError> {
        let i = self.index(key).ok_or_else(stale_key)?;
        let slot = &mut self.slots[i];
        let Some(object) = slot.object.as_mut() else { return Err(stale_key()) };
        object.placed.set_world_from_local(world_from_local)?;
        let (lo, hi) = object.world_corners();
        let (lo, hi, bounded) = padded_corners(lo, hi);
        let world = Aabb::new(lo.into(), hi.into());
        slot.world = world;
        slot.identity = world_from_local == Affine3A::IDENTITY;
        // The common moves of an object with a leaf and a bounded box: it
        // stays in the tree (inside its fitted box), stays moved (outside
        // it), or leaves the tree (a push on the moved list). These are
        // `relocate`'s answers, taken without its general case analysis;
        // anything else (back into the tree, a plane, an empty box) goes
        // through it.
        let meta = self.meta[i];
        if meta.leaf == NO_LEAF || !bounded {
            return self.relocated(i);
        }
        // `Aabb::contains` of a box known not to be empty, in lanes.
        let fitted = &self.fitted[i];
        let inside = (Vec3A::from(fitted.min).cmple(lo) & hi.cmple(fitted.max.into())).all();
        let state = match (meta.state, inside) {
            (State::Tree, true) | (State::Moved(_), false) => meta.state,
            (State::Tree, false) => {
                self.moved.push(i as u32);
                let p = State::Moved((self.moved.len() - 1) as u32);
                self.meta[i].state = p;
                p
            }
            _ => return self.relocated(i),
        };
        self.boxes[i] = world;
        self.cull[meta.leaf as usize] = Cull::new(object, i, state);
        Ok(())
    }

    /// Sets an object's layer mask; `false` for a stale key.
    pub fn set_mask(&mut self, key: ObjectKey, mask: u32) -> bool {
        let Some(i) = self.index(key) else { return false };
        if let Some(o) = self.slots[i].object.as_mut() {
            o.mask = mask;
        }
        self.sync_cull(i);
        true
    }

    /// Fits the tree to the objects' current bounds, keeping its topology
    /// (`O(n)`): moved objects are found by traversal again and removed ones'
    /// boxes become empty. Objects inserted since the last build stay in the
    /// pending list (they have no leaf); see [`Scene::rebuild`].
    pub fn refit(&mut self) {
        let n = self.built;
        if let Some(bvh) = &mut self.bvh {
            bvh.refit(&self.boxes[..n]);
        }
        self.fitted[..n].copy_from_slice(&self.boxes[..n]);
        // The moved objects' cull records are current (`set_transform` wrote
        // them); they only need their mask back. When many moved, one
        // sequential sweep over all records beats random writes.
        let sweep = self.moved.len() > self.cull.len() / 8;
        for &i in &self.moved {
            let m = &mut self.meta[i as usize];
            m.state = State::Tree;
            if !sweep {
                let c = &mut self.cull[m.leaf as usize];
                c.mask = c.refit_mask;
            }
        }
        if sweep {
            for c in &mut self.cull {
                c.mask = c.refit_mask;
            }
        }
        self.moved.clear();
    }

    /// Rebuilds the tree over every bounded object (SAH), folding in pending
    /// objects and restoring full quality after many moves. `O(n log n)`.
    pub fn rebuild(&mut self) {
        self.pending.clear();
        self.moved.clear();
        let mut any = false;
        for (i, (slot, meta)) in self.slots.iter().zip(&mut self.meta).enumerate() {
            let live_bounded = slot.object.is_some() && !matches!(meta.state, State::Unbounded(_));
            let leaf = live_bounded && !slot.world.is_empty();
            if live_bounded {
                meta.state = State::Tree;
            }
            meta.leaf = NO_LEAF;
            self.boxes[i] = if leaf { slot.world } else { Aabb::EMPTY };
            any |= leaf;
        }
        self.built = self.slots.len();
        // One object per leaf. Leaves of up to 4 or 8 objects (fewer nodes,
        // but objects tested whose own box the ray misses) measured worse
        // under cachegrind on the bench's 100,000-object scene: 5,270 vs
        // 5,850 vs 6,210 instructions and 99 vs 102 vs 108 L1 misses per
        // closest-hit ray.
        self.bvh = any.then(|| Bvh::build(&self.boxes));
        self.fitted.clone_from(&self.boxes);
        self.cull.clear();
        if let Some(bvh) = &self.bvh {
            for (p, &i) in bvh.items().iter().enumerate() {
                let record = match &self.slots[i as usize].object {
                    Some(o) if !self.boxes[i as usize].is_empty() => {
                        self.meta[i as usize].leaf = p as u32;
                        Cull::new(o, i as usize, State::Tree)
                    }
                    _ => Cull::DEAD,
                };
                self.cull.push(record);
            }
        }
        // What a ray reads per object, on huge pages when large (see `pages`).
        self.slots = crate::pages::on_huge_pages(std::mem::take(&mut self.slots));
        self.cull = crate::pages::on_huge_pages(std::mem::take(&mut self.cull));
    }

    /// Bounds of every object in the world frame (infinite with a plane in
    /// the scene, empty for an empty scene). `O(n)`.
    pub fn bounds(&self) -> Aabb {
        self.slots.iter().filter(|s| s.object.is_some()).fold(Aabb::EMPTY, |b, s| b.union(s.world))
    }

    /// Heap bytes held by the scene's index (slots, boxes, lists and tree),
    /// not counting shared meshes and volumes.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.slots.capacity() * size_of::<Slot>()
            + (self.boxes.capacity() + self.fitted.capacity()) * size_of::<Aabb>()
            + (self.pending.capacity()
                + self.moved.capacity()
                + self.unbounded.capacity()
                + self.free.capacity())
                * size_of::<u32>()
            + self.bvh.as_ref().map_or(0, Bvh::memory_bytes)
    }

    /// Checks the internal invariants (every object in exactly one place,
    /// side-list positions, boxes, the tree against [`Bvh::validate`]).
    /// For tests; `O(n)`.
    #[doc(hidden)]
    pub fn validate(&self) -> Result<(), String> {
        let mut live = 0;
        for (i, (s, m)) in self.slots.iter().zip(&self.meta).enumerate() {
            let list = |l: &Vec<u32>, p: u32| l.get(p as usize) == Some(&(i as u32));
            let ok = match m.state {
                State::Free => s.object.is_none() && self.boxes[i].is_empty(),
                State::Tree => {
                    (m.leaf != NO_LEAF || s.world.is_empty())
                        && self.fitted[i].contains(&s.world)
                        && self.boxes[i] == s.world
                }
                State::Moved(p) => m.leaf != NO_LEAF && list(&self.moved, p) && self.boxes[i] == s.world,
                State::Pending(p) => list(&self.pending, p) && self.boxes[i].is_empty(),
                State::Unbounded(p) => list(&self.unbounded, p) && self.boxes[i].is_empty(),
            };
            if !ok {
                return Err(format!("slot {i}: inconsistent state {:?}", m.state));
            }
            if m.leaf != NO_LEAF {
                let want = match &s.object {
                    Some(o) => Cull::new(o, i, m.state),
                    None => Cull { slot: i as u32, ..Cull::DEAD },
                };
                let got = self.cull[m.leaf as usize];
                if got.slot != i as u32 || got.mask != want.mask || (s.object.is_some() && got != want) {
                    return Err(format!("slot {i}: cull record {got:?}, expected {want:?}"));
                }
            }
            live += usize::from(s.object.is_some());
        }
        if live != self.len {
            return Err(format!("{live} live slots, len {}", self.len));
        }
        match &self.bvh {
            Some(b) => b.validate(&self.fitted[..self.built]),
            None => Ok(()),
        }
    }

    /// Fills a slot without rebuilding.
    fn insert_unbuilt(&mut self, object: SceneObject) -> ObjectKey {
        let world = padded(object.world_bounds());
        let identity = *object.placed.world_from_local() == Affine3A::IDENTITY;
        let i = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Slot { object: None, world: Aabb::EMPTY, generation: 0, identity: false });
                self.meta.push(Meta { state: State::Free, leaf: NO_LEAF });
                self.boxes.push(Aabb::EMPTY);
                self.fitted.push(Aabb::EMPTY);
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[i];
        slot.object = Some(object);
        slot.world = world;
        slot.identity = identity;
        self.relocate(i);
        self.len += 1;
        ObjectKey { index: i as u32, generation: self.slots[i].generation }
    }

    fn maybe_rebuild(&mut self) {
        if self.pending.len() > REBUILD_MIN + self.len / REBUILD_FRACTION {
            self.rebuild();
        }
    }

    fn index(&self, key: ObjectKey) -> Option<usize> {
        let i = key.index as usize;
        let s = self.slots.get(i)?;
        (s.generation == key.generation && s.object.is_some()).then_some(i)
    }

    /// Puts slot `i` where its object now belongs (see the module
    /// documentation) and sets its tree box.
    fn relocate(&mut self, i: usize) {
        let slot = &self.slots[i];
        let meta = self.meta[i];
        let want = if slot.object.is_none() {
            State::Free
        } else if unbounded(&slot.world) {
            State::Unbounded(0)
        } else if slot.world.is_empty() {
            // Never hit (an empty voxel volume): nothing to test, no box.
            State::Tree
        } else if meta.leaf != NO_LEAF && self.fitted[i].contains(&slot.world) {
            State::Tree
        } else if meta.leaf != NO_LEAF {
            State::Moved(0)
        } else {
            State::Pending(0)
        };
        self.boxes[i] = if matches!(want, State::Tree | State::Moved(_)) { slot.world } else { Aabb::EMPTY };
        if std::mem::discriminant(&want) == std::mem::discriminant(&meta.state) {
            self.sync_cull(i);
            return;
        }
        // Leave the old side list (swap-remove, then fix the position of the
        // object that took the freed place).
        let old = match meta.state {
            State::Moved(p) => Some((&mut self.moved, p)),
            State::Pending(p) => Some((&mut self.pending, p)),
            State::Unbounded(p) => Some((&mut self.unbounded, p)),
            State::Free | State::Tree => None,
        };
        if let Some((list, pos)) = old {
            list.swap_remove(pos as usize);
            if let Some(&j) = list.get(pos as usize) {
                match &mut self.meta[j as usize].state {
                    State::Moved(p) | State::Pending(p) | State::Unbounded(p) => *p = pos,
                    State::Free | State::Tree => unreachable!("side lists hold only side-list states"),
                }
            }
        }
        let push = |list: &mut Vec<u32>| {
            list.push(i as u32);
            (list.len() - 1) as u32
        };
        self.meta[i].state = match want {
            State::Moved(_) => State::Moved(push(&mut self.moved)),
            State::Pending(_) => State::Pending(push(&mut self.pending)),
            State::Unbounded(_) => State::Unbounded(push(&mut self.unbounded)),
            other => other,
        };
        self.sync_cull(i);
    }

    /// [`Scene::relocate`], out of line (the rare path of `set_transform`).
    #[inline(never)]
    fn relocated(&mut self, i: usize) -> Result<(), ShapeError> {
        self.relocate(i);
        Ok(())
    }

    /// Refreshes slot `i`'s cull record (if it has a leaf) from its object
    /// and state.
    fn sync_cull(&mut self, i: usize) {
        let (slot, meta) = (&self.slots[i], self.meta[i]);
        if meta.leaf != NO_LEAF {
            self.cull[meta.leaf as usize] = match &slot.object {
                Some(o) => Cull::new(o, i, meta.state),
                None => Cull { slot: i as u32, ..Cull::DEAD },
            };
        }
    }
}

fn stale_key() -> ShapeError {
    ShapeError::new("key", "names no object of this scene (it was removed)")
}

impl std::fmt::Debug for Scene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene")
            .field("len", &self.len)
            .field("in_tree", &(self.len - self.pending.len() - self.moved.len() - self.unbounded.len()))
            .field("moved", &self.moved.len())
            .field("pending", &self.pending.len())
            .field("unbounded", &self.unbounded.len())
            .finish()
    }
}

impl Extend<SceneObject> for Scene {
    fn extend<I: IntoIterator<Item = SceneObject>>(&mut self, objects: I) {
        self.insert_many(objects);
    }
}

impl FromIterator<SceneObject> for Scene {
    fn from_iter<I: IntoIterator<Item = SceneObject>>(objects: I) -> Self {
        Self::from_objects(objects)
    }
}

/// An object's shape cast in the world: through its placement, or directly
/// when that is the identity.
///
/// With a branch, unlike `Transformed::cast` (`Transformed::cast_branched`,
/// which casts a shape with a world form as `cast` does): most objects a scene ray
/// tests are misses (their box and bounding sphere were entered, the shape
/// not), and the branch-free form would bring every miss's local hit back to
/// the world, reading the placement's two other matrices for nothing.
#[inline]
fn placed_cast(identity: bool, p: &Transformed<Shape>, ray: &Ray, range: crate::Interval) -> Option<Hit> {
    if identity {
        p.shape().cast(ray, range)
    } else {
        p.cast_branched(ray, range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{vec3, Interval, Plane, Ray, Sphere, Vec3};

    fn ball(x: f32, id: u32) -> SceneObject {
        SceneObject::new(Sphere::new(0.5), Affine3A::from_translation(vec3(x, 0.0, 0.0)), id)
    }

    fn first(scene: &Scene, ray: &Ray) -> Option<(f32, u32)> {
        scene.cast(ray, Interval::FORWARD, &Filter::default()).map(|h| (h.t, h.object.unwrap()))
    }

    #[test]
    fn keys_go_stale_and_slots_are_reused() {
        let mut s = Scene::from_objects((0..40).map(|i| ball(i as f32 * 2.0, i)));
        let keys: Vec<_> = s.iter().map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 40);
        let gone = s.remove(keys[3]).unwrap();
        assert_eq!(gone.id, 3);
        assert!(s.remove(keys[3]).is_none() && !s.contains(keys[3]) && s.get(keys[3]).is_none());
        assert_eq!(s.set_transform(keys[3], Affine3A::IDENTITY).unwrap_err().field, "key");
        let k = s.insert(ball(100.0, 99));
        assert_eq!(k.index(), 3); // the freed slot
        assert!(s.get(keys[3]).is_none());
        assert_eq!(s.get(k).unwrap().id, 99);
        assert_eq!(s.len(), 40);
        s.validate().unwrap();
        let ray = Ray::new(vec3(-10.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0));
        assert_eq!(first(&s, &ray), Some((9.5, 0)));
        // The x = 6 ball is gone: a ray across x = 6 only finds the new one at 100.
        let down = Ray::new(vec3(6.0, 10.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert_eq!(first(&s, &down), None);
        let down = Ray::new(vec3(100.0, 10.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert_eq!(first(&s, &down), Some((9.5, 99)));
    }

    #[test]
    fn moved_objects_are_found_before_and_after_refit() {
        let mut s = Scene::from_objects((0..64).map(|i| ball(i as f32 * 2.0, i)));
        let keys: Vec<_> = s.iter().map(|(k, _)| k).collect();
        s.set_transform(keys[10], Affine3A::from_translation(vec3(0.0, 30.0, 0.0))).unwrap();
        assert!(format!("{s:?}").contains("moved: 1"));
        // Back within its old box: in the tree again, without a refit.
        s.set_transform(keys[11], Affine3A::from_translation(vec3(22.0, 30.0, 0.0))).unwrap();
        s.set_transform(keys[11], Affine3A::from_translation(vec3(22.0, 0.0, 0.0))).unwrap();
        assert!(format!("{s:?}").contains("moved: 1"));
        s.validate().unwrap();
        let up = Ray::new(vec3(0.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0));
        assert_eq!(first(&s, &up), Some((0.5, 0)));
        let up = Ray::new(vec3(0.0, 1.0, 0.0), vec3(0.0, 1.0, 0.0));
        assert_eq!(first(&s, &up), Some((28.5, 10)));
        s.refit();
        s.validate().unwrap();
        assert!(format!("{s:?}").contains("moved: 0"));
        assert_eq!(first(&s, &up), Some((28.5, 10)));
        let along = Ray::new(vec3(19.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0));
        assert_eq!(first(&s, &along), Some((2.5, 11)));
        s.rebuild();
        s.validate().unwrap();
        assert_eq!(first(&s, &up), Some((28.5, 10)));
    }

    #[test]
    fn inserts_fold_into_a_rebuild_and_planes_stay_aside() {
        let mut s = Scene::new();
        s.insert(SceneObject::local(Plane::new(vec3(0.0, 1.0, 0.0), vec3(0.0, -5.0, 0.0)), 1000));
        for i in 0..200 {
            s.insert(ball(i as f32 * 2.0, i));
            s.validate().unwrap();
        }
        assert!(s.pending.len() <= REBUILD_MIN + s.len / REBUILD_FRACTION);
        assert_eq!(s.unbounded.len(), 1);
        assert!(!s.bounds().max.is_finite());
        let down = Ray::new(vec3(1.0, 0.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert_eq!(first(&s, &down), Some((5.0, 1000)));
        let down = Ray::new(vec3(398.0, 10.0, 0.0), vec3(0.0, -1.0, 0.0));
        assert_eq!(first(&s, &down), Some((9.5, 199)));
    }

    #[test]
    fn scenes_are_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Scene>();
        send_sync::<Filter<'static>>();
    }

    /// `set_transform`'s shortcuts (the spelt-out inverse and lane-wise
    /// normal map, the scale formed only for spheres, the common-move path)
    /// leave every object as a fresh placement would: the same maps and
    /// hits, the same padded box, a cull sphere around the shape.
    #[test]
    fn moves_match_fresh_placements() {
        use crate::{Capsule, Cone, Cuboid, Cylinder, Quat, Torus};
        let shapes: [Shape; 6] = [
            Sphere::new(1.3).into(),
            Cuboid::new(vec3(0.5, 1.5, 0.25)).into(),
            Capsule::new(vec3(-0.5, 0.2, 0.1), vec3(0.7, -0.4, 0.3), 0.4).into(),
            Cylinder::new(0.6, 1.1).into(),
            Cone::new(0.8, 0.9).into(),
            Torus::new(1.2, 0.3).into(),
        ];
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.4, -1.1, 0.8);
        let t = vec3(3.0, -2.0, 7.0);
        let maps = [
            Affine3A::IDENTITY,
            Affine3A::from_translation(t),
            Affine3A::from_rotation_translation(q, t),
            Affine3A::from_scale_rotation_translation(Vec3::splat(2.5), q, t),
            Affine3A::from_scale_rotation_translation(vec3(1.5, 0.7, 2.0), q, t),
            Affine3A::from_scale_rotation_translation(vec3(-1.0, 1.0, 1.0), q, t),
            Affine3A::from_scale_rotation_translation(vec3(1.0, 1.0 + 1e-6, 1.0), q, t),
        ];
        let mut s = Scene::from_objects(
            shapes.iter().enumerate().map(|(i, sh)| SceneObject::new(sh.clone(), maps[0], i as u32)),
        );
        let keys: Vec<_> = s.iter().map(|(k, _)| k).collect();
        for (n, m) in maps.iter().cycle().take(3 * maps.len()).enumerate() {
            let m = Affine3A::from_translation(vec3(0.0, (n % 4) as f32, 0.0)) * *m;
            for (k, sh) in keys.iter().zip(&shapes) {
                s.set_transform(*k, m).unwrap();
                let fresh = SceneObject::new(sh.clone(), m, 0);
                let o = s.get(*k).unwrap();
                let p = (&o.placed, &fresh.placed);
                assert_eq!(p.0.world_from_local(), p.1.world_from_local());
                assert_eq!(p.0.local_from_world(), p.1.local_from_world(), "{sh:?} under {m:?}");
                // The normal map and the world form, through the hits of rays
                // from all sides towards the centre.
                for j in 0..64 {
                    let a = j as f32 * 0.7;
                    let from = vec3(a.cos() * a.sin(), (j as f32 * 0.3).cos(), a.sin()) * 20.0;
                    let ray = Ray::new(Vec3::from(m.translation) + from, -from);
                    assert_eq!(p.0.cast(&ray, Interval::FORWARD), p.1.cast(&ray, Interval::FORWARD));
                }
                assert_eq!(s.slots[k.index() as usize].world, padded(fresh.world_bounds()));
                if let Shape::Cuboid(_) = sh {
                    // Spelt out in `world_bounds`: the same box as the general way.
                    assert_eq!(fresh.world_bounds(), fresh.placed.local_bounds());
                }
                let (c, r) = world_sphere(o);
                let b = o.placed.shape().local_bounds();
                for i in 0..8 {
                    let p = vec3(
                        if i & 1 == 0 { b.min.x } else { b.max.x },
                        if i & 2 == 0 { b.min.y } else { b.max.y },
                        if i & 4 == 0 { b.min.z } else { b.max.z },
                    );
                    // The round shapes' spheres are tight, not their boxes':
                    // a box corner may lie outside, its point on the sphere
                    // of the local frame may not.
                    let (lc, lr) = local_sphere(o.placed.shape());
                    let lc = lc.unwrap_or(Vec3::ZERO);
                    let p = lc + (p - lc).clamp_length_max(lr);
                    assert!(m.transform_point3(p).distance(c) <= r * (1.0 + 1e-6), "{sh:?}: {p}");
                }
            }
            s.validate().unwrap();
            if n % 3 == 2 {
                s.refit();
            }
        }
    }

    #[test]
    fn padding_widens_finite_boxes_only() {
        let b = padded(Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0)));
        assert!(b.min.x < 1.0 && b.max.x > 2.0 && b.max.x < 2.0001);
        assert_eq!(padded(Aabb::EMPTY), Aabb::EMPTY);
        assert!(unbounded(&Aabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY)));
        assert!(!unbounded(&Aabb::EMPTY));
    }
}
