//! A bounding volume hierarchy over boxes identified by `u32` ids: the
//! acceleration structure of [`TriMesh`](crate::TriMesh) and of scenes.
//!
//! # Layout
//! A wide tree (`Node<W>`): the boxes of a node's `W` children stored as six
//! rows of `W` lanes (`min x`, `min y`, `min z`, `max x`, `max y`, `max z`),
//! so one ray tests them all with a handful of SSE2 instructions, followed
//! by the children's references. A child is an inner node (its index), a
//! leaf (a run `first .. first + count` of the leaf-ordered id array
//! [`Bvh::items`]) or unused (an empty box, never hit). On a CPU with AVX
//! (checked once, then a cached flag) a ray on an 8-wide tree walks in a
//! copy of the loop compiled for AVX, where a node is tested in one 256-bit
//! register; otherwise the walk runs in SSE2, the baseline of every x86_64
//! build, an 8-wide node as two 4-lane halves. The two copies do the same
//! IEEE operations, so they give the same answers bit for bit (the tests
//! run both).
//!
//! `W` is 8 (256 bytes, four cache lines) or 4 (128 bytes), chosen per tree
//! (see `Nodes`). Profiles on the bunny show where the time goes: for
//! incoherent rays, waiting for nodes to arrive from memory (hence the
//! prefetch of pushed children, and SAH leaves of several items to keep the
//! tree small); for coherent rays, the node test and the ordering branches.
//! Eight children halve a mesh tree's depth, so a ray's chain of dependent
//! node loads is shorter: on the bunny 5.3 node visits a ray instead of 8.2
//! (both with the greedy collapse used until stop 22), single incoherent
//! rays 4–8 % faster and camera rays ~6 %. The optimal collapse
//! (`build.rs`) then filled the nodes (6.1 children on average instead of
//! 4.6; incoherent rays another 11–17 % faster). A ray then
//! reads ~30 % more node bytes (5.3 × 256 against 8.2 × 128); on Zen 1 that
//! made trees too large for the caches 16 % slower 8-wide in interleaved
//! batches (the 1.1M-triangle bunny), so until stop 21 trees over 2 MiB of
//! 8-wide nodes stayed 4-wide. On Zen 4, with the AVX walk (paired
//! in-process runs): 8-wide nodes made that mesh's single incoherent rays
//! 11–17 % faster, any-hit 19–22 %, camera rays 7–11 %, its batches no
//! slower, and the 100,000-object scene's casts 13–16 % faster, its refit
//! no slower; so the size bound was dropped (see `Nodes`).
//! A node quantized to 128 bytes (8-bit child boxes relative to the node's
//! box, decoded exactly to `f32` planes so that the test's rounding argument
//! holds) would read fewer bytes than either, for about ten more
//! instructions per row; not built, as on the machines measured (Zen 1, Zen
//! 4) a ray's nodes and leaf arriving from memory are only a fifth to a
//! third of its time.
//! The build is described in `build.rs` (binned SAH binary tree, collapsed
//! into wide nodes by an optimal dynamic programme).
//!
//! # The ray–box test
//! Per ray, `1 / dir` and the origin are splatted once, and for each axis the
//! row holding the near plane is chosen by the sign of `1 / dir` (so `-0.0`
//! gives `-∞` and picks the max row, consistently). Then for the `W` boxes
//! `t_near = max((near − o)·inv, t_min)`, `t_far = min((far − o)·inv, t_max)`.
//! * An axis with `dir = ±0` has `inv = ±∞`. If the origin is outside the slab
//!   both planes give the same infinity and the box is missed, as it must be;
//!   if it lies exactly on a face, `0 · ∞ = NaN`, and the min/max are ordered
//!   so that a NaN lane keeps the accumulator (`maxps` semantics): that slab
//!   simply does not constrain the ray, and the touching ray is kept.
//! * The interval is widened outward by about [`WIDEN`]` · |t|` at both ends,
//!   so that a box is never culled against a closest hit found elsewhere
//!   while a triangle inside it is hit at an equal or smaller computed `t`.
//!   Grazing rays therefore never fall through the gaps between boxes, which
//!   is what keeps meshes watertight. Two forms, chosen per ray:
//! * Range starting at `t_min >= 0` (every forward query): the widening is
//!   folded into the reciprocal, at no cost per node. The near planes use
//!   `inv·(1 − 16u)`, the far planes `inv·(1 + 16u)` (u = 2⁻²⁴; both factors
//!   are `1 ∓ WIDEN` rounded to `f32`, and exact), and the clamps are
//!   `t_min·(1 − 16u)`, `t_max·(1 + 16u)`. A slab `t ≥ 0` then comes out as
//!   `t·(1 ∓ 16u)·(1 + θ)` with `|θ| ≤ γ(4)` (four roundings: reciprocal,
//!   scaled reciprocal, difference, product), so the near end is at most
//!   `t·(1 − 12u)` and the far end at least `t·(1 + 11u)`, the clamps
//!   likewise: over 10u of room for the roundings of the triangle's own
//!   `t`, about what the other form leaves. Signs are exact (a rounded
//!   difference or product keeps the sign), so a negative slab `t` stays
//!   negative: at the near end it loses the max to the clamp `≥ 0`, at the
//!   far end it makes a box that the ray leaves before `t = 0 <= t_min`
//!   missed, as it is by the exact interval. A missed empty box gives `+∞`
//!   and `−∞`, failing `<=`.
//! * Range starting below 0: the plain reciprocal, then `x ∓ |x|·k` with
//!   `k = WIDEN`: the three roundings of the slab `t` are covered by 2γ(3)
//!   (pbrt-v4, Ize 2013) and the rest covers the few roundings of the
//!   triangle's `t`. An infinite `t_near` (a missed empty box) becomes NaN
//!   and fails `<=`.
//!
//! # Traversal
//! Depth first with a fixed stack of (child, entry `t`). In ordered mode the
//! children a ray enters are sorted by entry `t`; the nearest is visited next
//! and the others pushed far-to-near, and a popped entry whose `t` exceeds
//! the current `t_max` (lowered by closer hits) is skipped. The any-order
//! mode skips the sort: cheapest when every leaf is visited, and for
//! occlusion (any-hit) queries too, where the ordered mode reaches a hit
//! after fewer nodes but its sort costs more than they save (see
//! `TriMesh::hits`). With one or two children entered, the common case, the
//! single-ray walk takes no branch on their number or order: those were its
//! costliest mispredictions on incoherent rays (see `descend`).
//! Pushed inner nodes are prefetched (and pushed leaves announced to the
//! caller, who may prefetch their data), so the cache misses overlap with the
//! work on the nearer child.
//!
//! The batches of meshes and scenes can also walk several rays at once
//! (`interleave.rs`): each ray takes exactly the single-ray steps, one node
//! per turn, so that the wait for one ray's next node overlaps with the
//! other rays' tests. That pays on trees larger than a core's caches.
//!
//! # Leaf tags
//! Inside the crate, a leaf also carries a tag (high bits of its count word,
//! set by `Bvh::tag_leaves`, reported by `Bvh::traverse_tagged`). A mesh
//! tags each leaf with the index of its own padded triangle block, so a leaf
//! is read as one block even though leaves are packed back to back in
//! [`Bvh::items`]. Tags are invisible to the public API and kept by `refit`.

mod build;
mod interleave;
mod simd;

use crate::numeric::gamma;
use crate::{Aabb, Interval, Ray};
use glam::{Vec3, Vec3A};
use simd::{Lanes, Sel, SelAvx, Width};
use std::mem::MaybeUninit;
use std::ops::Range;

/// Hints the CPU to bring `items[i]` (and what follows it, up to 128 bytes)
/// into the cache, e.g. the data of a leaf the traversal announced. Any `i`
/// is allowed: out of range, nothing happens.
#[inline(always)]
pub(crate) fn prefetch<T>(items: &[T], i: usize) {
    if let Some(x) = items.get(i) {
        simd::prefetch(x);
    }
}

/// What a leaf test tells the traversal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// Nothing found; go on.
    Miss,
    /// Found a hit at this `t`: the current range's `max` is lowered to it
    /// (closest-hit search). A `t` above the current `max` changes nothing.
    Hit(f32),
    /// End the traversal (any-hit search, or the caller found what it wanted).
    Stop,
}

/// In which order [`Bvh::traverse_leaves`] visits the leaves a ray enters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Nearer boxes first (by entry `t`): best for closest-hit searches.
    NearFirst,
    /// Tree order, no sorting: cheapest when every leaf is visited anyway or
    /// the first hit ends the search.
    Any,
}

/// Relative widening of every ray–box interval (see the module doc): the
/// slab arithmetic (2γ(3), or γ(4) when folded into the reciprocal) plus
/// room for ~10 roundings of a leaf's own `t`.
pub const WIDEN: f32 = gamma(16);

/// Parameters of [`Bvh::build_with`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildOptions {
    /// Most items in one leaf (clamped to `1..=16`); the SAH picks smaller
    /// leaves when they are cheaper.
    pub max_leaf: usize,
    /// Cost of visiting a node relative to testing one item, for the SAH:
    /// larger values give shallower trees with fuller leaves.
    pub traversal_cost: f32,
}

impl Default for BuildOptions {
    /// One item per leaf (see [`Bvh::build`]).
    fn default() -> Self {
        Self { max_leaf: 1, traversal_cost: 1.0 }
    }
}

/// Marks an unused child slot.
const NONE: u32 = u32::MAX;

/// Bits of a leaf's `Node::count` holding its item count (at most 16); the
/// bits above hold the leaf's tag, a number the owner of the tree attaches to
/// each leaf ([`Bvh::tag_leaves`]; a mesh stores there the index of the
/// leaf's triangle block, so its leaves need not be contiguous in `items`
/// order to be read in one block). Sharing the word keeps the node at 128
/// bytes.
const COUNT_BITS: u32 = 5;
const COUNT_MASK: u32 = (1 << COUNT_BITS) - 1;
/// The largest leaf tag.
pub(crate) const MAX_TAG: u32 = u32::MAX >> COUNT_BITS;

/// A leaf reached by the traversal, as the crate's own users see it: its run
/// `first .. first + count` of [`Bvh::items`] and its tag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafRef {
    pub(crate) first: usize,
    pub(crate) count: usize,
    pub(crate) tag: u32,
}

/// Stack depth of a walk on `W`-wide nodes: the tree is at most
/// `MAX_DEPTH + 33` levels deep (median splits past `MAX_DEPTH` halve the
/// items; +1 for the empty-box subtree) and each level pushes at most
/// `W − 1` entries; the spare room above also takes the entry `descend` may
/// write just above the top without keeping it. Sized per width: a 4-wide
/// walk with the 8-wide walk's stack (6.9 KiB, and 55 KiB for the eight
/// rays of an interleaved batch) was 6–12 % slower.
const fn stack_len(w: usize) -> usize {
    (w - 1) * (build::MAX_DEPTH + 34) + 1
}
const STACK_4: usize = stack_len(4);
const STACK_8: usize = stack_len(8);

/// One `W`-wide node (`W` is 4 or 8, see [`Nodes`]): child boxes in SoA
/// rows, then the child references.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Node<const W: usize> {
    /// Rows `min x, min y, min z, max x, max y, max z`, one lane per child.
    bounds: [[f32; W]; 6],
    /// Inner child: node index. Leaf: first position in `items`. Unused: `NONE`.
    child: [u32; W],
    /// Leaf: number of items (> 0) in the low [`COUNT_BITS`], and above them
    /// the leaf's tag (see [`Bvh::tag_leaves`]). Inner or unused: 0.
    count: [u32; W],
}

impl<const W: usize> Node<W> {
    const EMPTY: Self = Node {
        bounds: [
            [f32::INFINITY; W],
            [f32::INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::NEG_INFINITY; W],
        ],
        child: [NONE; W],
        count: [0; W],
    };

    #[inline]
    fn set_box(&mut self, slot: usize, b: Aabb) {
        for a in 0..3 {
            self.bounds[a][slot] = b.min[a];
            self.bounds[a + 3][slot] = b.max[a];
        }
    }

    #[inline]
    fn slot_box(&self, slot: usize) -> Aabb {
        let r = &self.bounds;
        Aabb::new(
            glam::vec3(r[0][slot], r[1][slot], r[2][slot]),
            glam::vec3(r[3][slot], r[4][slot], r[5][slot]),
        )
    }

    /// Union of the child boxes.
    #[inline]
    fn union(&self) -> Aabb {
        (0..W).fold(Aabb::EMPTY, |b, s| b.union(self.slot_box(s)))
    }
}

/// The lanes of a `W`-wide node's test chosen by the selector `S`
/// ([`Sel`], or [`simd::SelAvx`] inside an AVX-compiled walk).
type L<const W: usize, S = Sel> = <S as Width<W>>::L;

/// A ray prepared for testing a node's `W` boxes at once (see the module
/// doc), in the lanes `S` selects.
#[derive(Clone, Copy)]
struct RayBoxes<const W: usize, S = Sel>
where
    S: Width<W>,
{
    origin: [L<W, S>; 3],
    /// `1 / dir` for the near and the far planes: scaled by [`NEAR_SCALE`]
    /// and [`FAR_SCALE`] when the range starts at `t >= 0`, plain otherwise.
    inv_near: [L<W, S>; 3],
    inv_far: [L<W, S>; 3],
    /// Byte offset in `Node::bounds` of the row holding the near and the far
    /// plane per axis.
    near: [usize; 3],
    far: [usize; 3],
    /// The range may start at `t < 0`: widen by `|t|` after the test.
    signed: bool,
}

/// `1 − 16u` and `1 + 16u` (u = 2⁻²⁴), exactly representable: `1 ∓ WIDEN`
/// rounded to `f32` (see the module doc).
const NEAR_SCALE: f32 = 1.0 - WIDEN;
const FAR_SCALE: f32 = 1.0 + WIDEN;

impl<const W: usize, S> RayBoxes<W, S>
where
    S: Width<W>,
{
    /// Branch-free: the near row of axis `a` is `a + 3` exactly when
    /// `1 / dir[a]` has its sign bit set (a `-0.0` direction gives `-∞`).
    #[inline(always)]
    fn new(ray: &Ray, range: Interval) -> Self {
        let inv = Vec3::ONE / ray.dir;
        let flip = |a: usize| 3 * usize::from(inv[a].is_sign_negative());
        let row = |r: usize| r * std::mem::size_of::<[f32; W]>();
        let signed = !(range.min >= 0.0);
        let (near, far) = if signed { (inv, inv) } else { (inv * NEAR_SCALE, inv * FAR_SCALE) };
        let splat = |v: Vec3| [L::<W, S>::splat(v.x), L::<W, S>::splat(v.y), L::<W, S>::splat(v.z)];
        RayBoxes {
            origin: splat(ray.origin),
            inv_near: splat(near),
            inv_far: splat(far),
            near: [row(flip(0)), row(1 + flip(1)), row(2 + flip(2))],
            far: [row(3 - flip(0)), row(4 - flip(1)), row(5 - flip(2))],
            signed,
        }
    }

    /// Bit `i` set when the ray enters child `i` within `[t_min, t_max]`,
    /// and the (widened) entry `t` of each child.
    ///
    /// `SIGNED` must be `self.signed`: a parameter so that each walk is
    /// compiled for one case, with no test of the flag per node.
    #[inline(always)]
    fn test<const SIGNED: bool>(&self, node: &Node<W>, t_min: f32, t_max: f32) -> (u32, L<W, S>) {
        let rows = node.bounds.as_ptr().cast::<u8>();
        // SAFETY: the offsets are those of rows 0..6 of `bounds` (`new`).
        let slab = |off: usize, a: usize, inv: &[L<W, S>; 3]| {
            L::<W, S>::load(unsafe { &*rows.add(off).cast::<[f32; W]>() }).sub(self.origin[a]).mul(inv[a])
        };
        let (lo, hi) = if SIGNED { (t_min, t_max) } else { (t_min * NEAR_SCALE, t_max * FAR_SCALE) };
        let (n, f) = (&self.inv_near, &self.inv_far);
        let near = slab(self.near[0], 0, n)
            .max_or(slab(self.near[1], 1, n).max_or(slab(self.near[2], 2, n).max_or(L::<W, S>::splat(lo))));
        let far = slab(self.far[0], 0, f)
            .min_or(slab(self.far[1], 1, f).min_or(slab(self.far[2], 2, f).min_or(L::<W, S>::splat(hi))));
        if SIGNED {
            let k = L::<W, S>::splat(WIDEN);
            let near = near.sub(near.abs().mul(k));
            let far = far.add(far.abs().mul(k));
            (near.le_mask(far), near)
        } else {
            (near.le_mask(far), near)
        }
    }
}

/// A traversal stack entry: a child reference (`count` as in `Node::count`,
/// tag included) and its entry `t`.
#[derive(Clone, Copy)]
struct Entry {
    child: u32,
    count: u32,
    t: f32,
}

impl Entry {
    /// The root node, entered at `t = -∞` (it is tested like any node).
    const ROOT: Entry = Entry { child: 0, count: 0, t: f32::NEG_INFINITY };

    #[inline(always)]
    fn leaf(self) -> LeafRef {
        LeafRef {
            first: self.child as usize,
            count: (self.count & COUNT_MASK) as usize,
            tag: self.count >> COUNT_BITS,
        }
    }
}

/// The traversal's stack of entries put aside, the next one to visit on top.
/// Fixed size `N` ([`stack_len`] of the node width): the build bounds the
/// depth (see `build::MAX_DEPTH`), and a `W`-wide node pushes at most
/// `W − 1` entries.
struct Stack<const N: usize> {
    entries: [MaybeUninit<Entry>; N],
    len: usize,
}

impl<const N: usize> Stack<N> {
    /// An empty stack. The entries are left uninitialised: written as the
    /// array literal `[MaybeUninit::uninit(); N]` inside a struct, LLVM
    /// filled all of it (3 KiB for a 4-wide walk) with a `memset` on every
    /// ray.
    #[inline(always)]
    fn new() -> Self {
        // SAFETY: an array of `MaybeUninit` needs no initialisation (the
        // pattern documented for `MaybeUninit` arrays).
        let entries = unsafe { MaybeUninit::<[MaybeUninit<Entry>; N]>::uninit().assume_init() };
        Stack { entries, len: 0 }
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        self.entries[self.len] = MaybeUninit::new(e);
        self.len += 1;
    }

    /// Writes `e` at `len + i` without growing the stack: the caller adds
    /// to `len` the writes it keeps (the stack has room for one more entry
    /// than a walk ever keeps: see [`stack_len`]).
    #[inline(always)]
    fn put(&mut self, i: usize, e: Entry) {
        self.entries[self.len + i] = MaybeUninit::new(e);
    }

    /// Pops entries until one entered at or before `max` (one that can still
    /// hold a hit in range); `None` when the stack runs out.
    #[inline(always)]
    fn pop_within(&mut self, max: f32) -> Option<Entry> {
        while self.len > 0 {
            self.len -= 1;
            // SAFETY: entries below `len` were written by `push`.
            let e = unsafe { self.entries[self.len].assume_init() };
            if e.t <= max {
                return Some(e);
            }
        }
        None
    }
}

/// A bounding volume hierarchy over axis-aligned boxes with ids `0..n`.
///
/// It knows nothing but boxes: the caller's closure tests the items a ray
/// reaches and steers the search with [`Leaf`].
///
/// # Examples
/// ```
/// use raycast::bvh::{Bvh, Leaf};
/// use raycast::{vec3, Aabb, Interval, Ray};
/// let boxes: Vec<Aabb> = (0..10)
///     .map(|i| Aabb::new(vec3(i as f32 * 2.0, 0.0, 0.0), vec3(i as f32 * 2.0 + 1.0, 1.0, 1.0)))
///     .collect();
/// let bvh = Bvh::build(&boxes);
/// bvh.validate(&boxes).unwrap();
/// // Along +x through every box: all visited, nearest first.
/// let ray = Ray::new(vec3(-1.0, 0.5, 0.5), vec3(1.0, 0.0, 0.0));
/// let mut seen = Vec::new();
/// bvh.traverse(&ray, Interval::FORWARD, |id, _| { seen.push(id); Leaf::Miss });
/// assert_eq!(seen, (0..10).collect::<Vec<u32>>());
/// // Closest hit: after the first `Hit`, farther boxes are skipped.
/// let mut seen = Vec::new();
/// bvh.traverse(&ray, Interval::FORWARD, |id, r| { seen.push(id); Leaf::Hit(r.min.max(1.0 + 2.0 * id as f32)) });
/// assert_eq!(seen, [0]);
/// ```
#[derive(Clone)]
pub struct Bvh {
    nodes: Nodes,
    items: Vec<u32>,
    bounds: Aabb,
}

/// The nodes of a tree, 8-wide or 4-wide.
///
/// A tree is built 8-wide when its 8-wide nodes number at most 75 % of its
/// 4-wide ones; otherwise 4-wide (see the module doc for why). With the
/// optimal collapse (`build.rs`) every tree measured here is 8-wide: the
/// bunny 4,136 nodes against 8,410, the 1.1M-triangle bunny 65,791
/// against 132,918, 10,000 and 100,000 random boxes one per leaf 3,046
/// against 4,632 and 22,908 against 42,838. (Under the greedy collapse
/// used until stop 22 a small scene's tree shrank only to 80 % and stayed
/// 4-wide, where 8-wide nodes had cast no faster and refit 1.5× slower;
/// with this collapse the 10,000-object comparison scene, now 8-wide, cast
/// 2.54× parry3d's speed against 2.04–2.35× before, and refit 1.61× against
/// 1.10–1.48×.) Either width can be walked interleaved (from
/// [`INTERLEAVE_MIN_BYTES`](interleave::INTERLEAVE_MIN_BYTES) of nodes).
/// Both collapses are made from one binary SAH tree.
#[derive(Clone, Debug)]
pub(crate) enum Nodes {
    Four(Vec<Node<4>>),
    Eight(Vec<Node<8>>),
}

/// `$body` with `$n` bound to the node vector of `$nodes` (a `Nodes`,
/// borrowed as `$nodes` is), whatever its width.
macro_rules! with_nodes {
    ($nodes:expr, $n:ident => $body:expr) => {
        match $nodes {
            Nodes::Four($n) => $body,
            Nodes::Eight($n) => $body,
        }
    };
}
/// `$body` with `$t` bound to the [`Tree`] of `$nodes` (a `&Nodes`), with
/// the stack depth of its width.
macro_rules! with_tree {
    ($nodes:expr, $t:ident => $body:expr) => {
        match $nodes {
            Nodes::Four(nodes) => {
                let $t = Tree::<4, STACK_4> { nodes };
                $body
            }
            Nodes::Eight(nodes) => {
                let $t = Tree::<8, STACK_8> { nodes };
                $body
            }
        }
    };
}
pub(crate) use with_tree;

impl Nodes {
    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        with_nodes!(self, n => n.len())
    }

    /// Bytes of the nodes allocated.
    pub(crate) fn bytes(&self) -> usize {
        with_nodes!(self, n => std::mem::size_of_val(n.as_slice()))
    }

    /// The union of the root's child boxes.
    fn root_union(&self) -> Aabb {
        with_nodes!(self, n => n[0].union())
    }
}

impl std::fmt::Debug for Bvh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bvh")
            .field("items", &self.items.len())
            .field("nodes", &self.nodes.len())
            .field("bounds", &self.bounds)
            .finish()
    }
}

impl Bvh {
    /// Builds the tree over `boxes`; item `i` is `boxes[i]`. Every leaf holds
    /// one item, so [`Bvh::traverse`] calls the closure exactly for the items
    /// whose own box the ray enters (the right choice for a scene, whose items
    /// are expensive). Empty boxes ([`Aabb::EMPTY`]) are allowed and never
    /// visited. Binned SAH quality (see the module doc).
    pub fn build(boxes: &[Aabb]) -> Bvh {
        Self::build_with(boxes, &BuildOptions::default())
    }

    /// Like [`Bvh::build`] with leaves of up to `max_leaf` items (see
    /// [`Bvh::build_with`]; the traversal cost is the default).
    pub fn build_with_leaf_size(boxes: &[Aabb], max_leaf: usize) -> Bvh {
        Self::build_with(boxes, &BuildOptions { max_leaf, ..BuildOptions::default() })
    }

    /// Like [`Bvh::build`] but leaves may hold up to `opts.max_leaf` items
    /// when the SAH finds that cheaper: right for cheap items such as
    /// triangles. Items sharing a leaf are visited together, so the closure
    /// may also be called for an item whose own box the ray misses.
    ///
    /// # Panics
    /// With `2^32 - 1` boxes or more.
    pub fn build_with(boxes: &[Aabb], opts: &BuildOptions) -> Bvh {
        assert!(boxes.len() < NONE as usize, "Bvh: at most 2^32 - 2 items");
        #[cfg(test)]
        let width = TEST_WIDTH.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let width = None;
        let (nodes, items) = build::build(boxes, opts, width);
        let bounds = nodes.root_union();
        Bvh { nodes, items, bounds }
    }

    /// Number of items (boxes given to the build).
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are no items.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The box around every item ([`Aabb::EMPTY`] if there are none).
    #[inline]
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// The item ids in leaf order: a leaf visited by
    /// [`Bvh::traverse_leaves`] is a range of this slice. Store per-item data
    /// in this order to read it contiguously during a traversal.
    #[inline]
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// Bytes held by the tree (nodes and the id array).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + with_nodes!(&self.nodes, n => capacity_bytes(n))
            + self.items.capacity() * std::mem::size_of::<u32>()
    }

    /// Number of nodes (8 or 4 children each: see the module doc).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Updates every box for moved items without changing the tree: `boxes`
    /// must have the same length as at the build (any may now be empty). One
    /// bottom-up sweep, O(n). The tree's quality degrades if items move far;
    /// rebuild then.
    ///
    /// # Panics
    /// If `boxes.len() != self.len()`.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        assert_eq!(boxes.len(), self.items.len(), "Bvh::refit: expected {} boxes", self.items.len());
        self.bounds = with_nodes!(&mut self.nodes, n => refit_nodes(n, &self.items, boxes));
    }

    /// Visits the items whose boxes `ray` enters within `range`, nearer boxes
    /// first, calling `leaf(id, current_range)`:
    /// * [`Leaf::Miss`] goes on (collect every hit);
    /// * [`Leaf::Hit`]`(t)` lowers the current `range.max` to `t`, so boxes
    ///   entered beyond it are skipped (closest hit);
    /// * [`Leaf::Stop`] ends the traversal (any hit).
    ///
    /// A degenerate ray ([`Ray::is_valid`] false) or an empty range visits
    /// nothing. Box tests are conservative (widened by a few ulps): a ray
    /// that touches a box is never lost, and one passing within rounding
    /// distance of it may visit it too.
    #[inline]
    pub fn traverse<F: FnMut(u32, Interval) -> Leaf>(&self, ray: &Ray, range: Interval, mut leaf: F) {
        self.walk::<true, _, _>(
            ray,
            range,
            |_| {},
            |l, mut r| {
                let mut out = Leaf::Miss;
                for &id in &self.items[l.first..l.first + l.count] {
                    match leaf(id, r) {
                        Leaf::Miss => {}
                        Leaf::Hit(t) => {
                            if t < r.max {
                                r.max = t;
                                out = Leaf::Hit(t);
                            }
                        }
                        Leaf::Stop => return Leaf::Stop,
                    }
                }
                out
            },
        );
    }

    /// Like [`Bvh::traverse`] but calls `leaf` once per leaf with the range of
    /// positions in [`Bvh::items`] it holds, in the given [`Order`].
    #[inline]
    pub fn traverse_leaves<F: FnMut(Range<usize>, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        order: Order,
        leaf: F,
    ) {
        self.traverse_leaves_prefetch(ray, range, order, |_| {}, leaf);
    }

    /// Like [`Bvh::traverse_leaves`], and calls `prefetch(first)` for each
    /// leaf (a run of [`Bvh::items`] starting at `first`) that is put aside
    /// for later while a nearer child is visited: the caller can start
    /// loading that leaf's data into the cache (a prefetch instruction), so
    /// the memory latency overlaps with the work on the nearer child.
    #[inline]
    pub fn traverse_leaves_prefetch<P: Fn(usize), F: FnMut(Range<usize>, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        order: Order,
        prefetch: P,
        leaf: F,
    ) {
        let mut leaf = leaf;
        self.traverse_tagged(
            ray,
            range,
            order,
            // `traverse_tagged` also hints with nodes' refs (count 0).
            |l| {
                if l.count != 0 {
                    prefetch(l.first);
                }
            },
            |l, r| leaf(l.first..l.first + l.count, r),
        );
    }

    /// Like [`Bvh::traverse_leaves_prefetch`], with each leaf given as a
    /// [`LeafRef`] (its tag included). `prefetch` may also be called with
    /// the ref of an inner node (`count` 0, tag 0), or of the child visited
    /// next: it is a hint that must be harmless for any ref (see `descend`).
    #[inline(always)]
    pub(crate) fn traverse_tagged<P: Fn(LeafRef), F: FnMut(LeafRef, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        order: Order,
        prefetch: P,
        leaf: F,
    ) {
        match order {
            Order::NearFirst => self.walk::<true, _, _>(ray, range, prefetch, leaf),
            Order::Any => self.walk::<false, _, _>(ray, range, prefetch, leaf),
        }
    }

    /// Gives every leaf a tag: `tag(ids)` is called once per leaf, in
    /// [`Bvh::items`] order, with the leaf's items, and its answer (at most
    /// [`MAX_TAG`]) is what [`Bvh::traverse_tagged`] reports for the leaf.
    /// A build leaves every tag at 0.
    ///
    /// # Panics
    /// If a tag exceeds [`MAX_TAG`].
    pub(crate) fn tag_leaves(&mut self, mut tag: impl FnMut(&[u32]) -> u32) {
        with_nodes!(&mut self.nodes, n => tag_nodes(n, &self.items, &mut tag));
    }

    /// The traversal loop (see the module doc), on the nodes of the tree's width.
    #[inline(always)]
    fn walk<const ORDERED: bool, P: Fn(LeafRef), F: FnMut(LeafRef, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        prefetch_leaf: P,
        leaf: F,
    ) {
        if !ray.is_valid() || range.is_empty() || self.items.is_empty() {
            return;
        }
        with_tree!(&self.nodes, tree => tree.walk_ray::<ORDERED, P, F>(ray, range, prefetch_leaf, leaf));
    }

    /// Checks the invariants: `boxes` has one box per item, every item is in
    /// exactly one leaf, every node is reached exactly once from the root,
    /// children come after their parents, and every box contains its
    /// children's boxes and its items' boxes. Tests call it after every build
    /// and refit.
    ///
    /// # Errors
    /// A message naming the first broken invariant.
    pub fn validate(&self, boxes: &[Aabb]) -> Result<(), String> {
        if boxes.len() != self.items.len() {
            return Err(format!("{} boxes for {} items", boxes.len(), self.items.len()));
        }
        let n = self.items.len();
        let mut seen_item = vec![false; n];
        for &id in &self.items {
            let slot = seen_item.get_mut(id as usize).ok_or(format!("item id {id} out of range"))?;
            if std::mem::replace(slot, true) {
                return Err(format!("item id {id} listed twice"));
            }
        }
        let mut covered = vec![false; n];
        with_nodes!(&self.nodes, nodes => validate_nodes(nodes, &self.items, boxes, &mut covered))?;
        if let Some(p) = covered.iter().position(|&c| !c) {
            return Err(format!("items[{p}] (id {}) in no leaf", self.items[p]));
        }
        if !self.bounds.contains(&self.nodes.root_union()) {
            return Err("bounds() misses the root's children".into());
        }
        Ok(())
    }
}

/// A tree's nodes of one width, which the walks run on with stacks of `N`
/// entries.
#[derive(Clone, Copy)]
struct Tree<'a, const W: usize, const N: usize> {
    nodes: &'a [Node<W>],
}

impl<'a, const W: usize, const N: usize> Tree<'a, W, N>
where
    Sel: Width<W>,
    SelAvx: Width<W>,
{
    /// The walk of one ray: for an 8-wide tree on a CPU with AVX, in a copy
    /// of the loop compiled for it, whose node test runs in one 256-bit
    /// register ([`SelAvx`]); otherwise in SSE2 lanes. Both do the same
    /// IEEE operations (no fused multiply-add: Rust never contracts
    /// `a·b + c`), so they give the same answers bit for bit. On the bunny's
    /// 8-wide tree the AVX copy runs ~10 % fewer instructions per cast and
    /// incoherent rays are 4–5 % faster (camera rays the same); a 4-wide
    /// tree gains nothing from it (VEX encoding only): incoherent rays the
    /// same, camera rays 4–5 % slower, so it keeps the SSE2 walk.
    #[inline(always)]
    fn walk_ray<const ORDERED: bool, P: Fn(LeafRef), F: FnMut(LeafRef, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        prefetch_leaf: P,
        leaf: F,
    ) {
        #[cfg(target_arch = "x86_64")]
        if W == 8 && simd::has_avx() {
            // SAFETY: the CPU has AVX.
            return unsafe { self.walk_ray_avx::<ORDERED, P, F>(ray, range, prefetch_leaf, leaf) };
        }
        self.walk_ray_in::<ORDERED, Sel, P, F>(ray, range, prefetch_leaf, leaf);
    }

    /// [`Tree::walk_ray`] compiled for AVX.
    ///
    /// # Safety
    /// The CPU must have AVX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn walk_ray_avx<const ORDERED: bool, P: Fn(LeafRef), F: FnMut(LeafRef, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        prefetch_leaf: P,
        leaf: F,
    ) {
        self.walk_ray_in::<ORDERED, SelAvx, P, F>(ray, range, prefetch_leaf, leaf);
    }

    /// Prepares the ray in the lanes `S` selects and runs the loop.
    #[inline(always)]
    fn walk_ray_in<const ORDERED: bool, S: Width<W>, P: Fn(LeafRef), F: FnMut(LeafRef, Interval) -> Leaf>(
        &self,
        ray: &Ray,
        range: Interval,
        prefetch_leaf: P,
        leaf: F,
    ) {
        let rb = RayBoxes::<W, S>::new(ray, range);
        if rb.signed {
            self.walk_from::<ORDERED, true, S, P, F>(&rb, range, prefetch_leaf, leaf);
        } else {
            self.walk_from::<ORDERED, false, S, P, F>(&rb, range, prefetch_leaf, leaf);
        }
    }
}

impl<'a, const W: usize, const N: usize> Tree<'a, W, N>
where
    Sel: Width<W>,
{
    /// The node of an inner-node entry, without a bounds check (3 of the ~40
    /// instructions of a node visit).
    #[inline(always)]
    fn node(&self, e: Entry) -> &'a Node<W> {
        debug_assert!(e.count == 0 && (e.child as usize) < self.nodes.len());
        // SAFETY: entries are made from the slots a ray enters, and a slot
        // whose `count` is 0 either holds a node index (below `nodes.len()`,
        // checked by `validate`) or is unused. An unused slot's box is
        // `Node::EMPTY`'s (min +∞, max −∞; `refit` keeps it), which the test
        // never enters: for a valid ray (finite origin, finite non-zero
        // direction) every axis gives entry +∞ and exit −∞ (the ±∞ of
        // `1 / ±0` only multiplies an infinite difference), and `+∞ <= −∞`
        // (or NaN after widening) is false. The root entry is node 0.
        unsafe { self.nodes.get_unchecked(e.child as usize) }
    }

    /// Asks for node `i` to be brought into the cache, all of its lines
    /// (any index is allowed: a prefetch never faults).
    #[inline(always)]
    fn prefetch_node(&self, i: usize) {
        let p = self.nodes.as_ptr().wrapping_add(i).cast::<u8>();
        for off in (0..std::mem::size_of::<Node<W>>()).step_by(128) {
            simd::prefetch(p.wrapping_add(off));
        }
    }

    /// Asks for the node (or, through `leaf`, the leaf data) of a pushed
    /// entry to be brought into the cache.
    #[inline(always)]
    fn prefetch(&self, e: Entry, leaf: &impl Fn(LeafRef)) {
        if e.count == 0 {
            self.prefetch_node(e.child as usize);
        } else {
            leaf(e.leaf());
        }
    }

    /// The loop of [`Bvh::walk`] for the prepared ray `rb` (`SIGNED` is
    /// `rb.signed`).
    #[inline(always)]
    fn walk_from<
        const ORDERED: bool,
        const SIGNED: bool,
        S: Width<W>,
        P: Fn(LeafRef),
        F: FnMut(LeafRef, Interval) -> Leaf,
    >(
        &self,
        rb: &RayBoxes<W, S>,
        range: Interval,
        prefetch_leaf: P,
        mut leaf: F,
    ) {
        let mut range = range;
        let mut stack = Stack::new();
        let mut cur = Entry::ROOT;
        loop {
            if cur.count == 0 {
                let node = self.node(cur);
                let (mask, near) = rb.test::<SIGNED>(node, range.min, range.max);
                if mask != 0 {
                    cur = self.descend::<ORDERED, true, S, P>(node, mask, near, &mut stack, &prefetch_leaf);
                    continue;
                }
            } else {
                match leaf(cur.leaf(), range) {
                    Leaf::Miss => {}
                    Leaf::Hit(t) => {
                        if t < range.max {
                            range.max = t;
                        }
                    }
                    Leaf::Stop => return,
                }
            }
            match stack.pop_within(range.max) {
                Some(e) => cur = e,
                None => return,
            }
        }
    }

    /// One step down from `node`, which the ray enters in the children of
    /// `mask` (not 0) at the entry `t`s `near`: returns the child to visit
    /// next and pushes the others, so that the nearest is popped first in
    /// ordered mode, prefetching each pushed one.
    ///
    /// One or two children, the common case, take no branch: whether a ray
    /// enters one child or two, and which of two is nearer, is close to a
    /// coin toss for incoherent rays, and those two branches were the walk's
    /// costliest mispredictions (~3.7 a ray on the bunny). The second slot is
    /// the first one again when there is one, the farther entry is written
    /// above the top and kept only when there are two, and it is prefetched
    /// unconditionally (with one child, that is the one visited next): its
    /// node, or the root when it is a leaf, and through `prefetch_leaf` its
    /// leaf data (a count-0 ref for a node). Measured on incoherent bunny
    /// rays: ~10 % more rays/s, for 11 % more instructions; coherent (camera)
    /// rays, whose branches predict well, lose ~5 %. `BRANCHLESS` selects
    /// this form; the interleaved walk, whose time goes to memory rather than
    /// mispredictions, keeps the branches (one child taken at once, the
    /// farther of two pushed) and was ~4 % slower without them on the
    /// 100,000-object scene. Both push the same entries in the same order.
    #[inline(always)]
    fn descend<const ORDERED: bool, const BRANCHLESS: bool, S: Width<W>, P: Fn(LeafRef)>(
        &self,
        node: &Node<W>,
        mask: u32,
        near: L<W, S>,
        stack: &mut Stack<N>,
        prefetch_leaf: &P,
    ) -> Entry {
        let near = near.to_array();
        let entry = |s: u32| {
            let s = s as usize;
            Entry { child: node.child[s], count: node.count[s], t: near[s] }
        };
        let rest = mask & (mask - 1);
        if rest & rest.wrapping_sub(1) == 0 {
            // One or two (see above).
            let s0 = mask.trailing_zeros();
            if !BRANCHLESS && rest == 0 {
                return entry(s0);
            }
            let s1 = (if rest != 0 { rest } else { mask }).trailing_zeros();
            let swap = ORDERED && near[s1 as usize] < near[s0 as usize];
            let (s_near, s_far) = if swap { (s1, s0) } else { (s0, s1) };
            let far = entry(s_far);
            if BRANCHLESS {
                stack.put(0, far);
                stack.len += usize::from(rest != 0);
                let at = if far.count == 0 { far.child as usize } else { 0 };
                self.prefetch_node(at);
                prefetch_leaf(far.leaf());
            } else {
                self.prefetch(far, prefetch_leaf);
                stack.push(far);
            }
            return entry(s_near);
        }
        let e0 = entry(mask.trailing_zeros());
        let e1 = entry(rest.trailing_zeros());
        let rest = rest & (rest - 1);
        let mut hits = [e0; W];
        hits[1] = e1;
        let mut k = 2;
        let mut m = rest;
        while m != 0 {
            hits[k] = entry(m.trailing_zeros());
            k += 1;
            m &= m - 1;
        }
        if ORDERED {
            // Insertion sort, farthest first (3 to 8 entries).
            for i in 1..k {
                let e = hits[i];
                let mut j = i;
                while j > 0 && hits[j - 1].t < e.t {
                    hits[j] = hits[j - 1];
                    j -= 1;
                }
                hits[j] = e;
            }
        }
        for e in &hits[..k - 1] {
            self.prefetch(*e, prefetch_leaf);
            stack.push(*e);
        }
        hits[k - 1]
    }
}

/// The node part of [`Bvh::validate`], on nodes of any width: every node
/// reached once from the root, children after parents, boxes containing
/// their children's and items' boxes; marks in `covered` the items reached.
fn validate_nodes<const W: usize>(
    nodes: &[Node<W>],
    items: &[u32],
    boxes: &[Aabb],
    covered: &mut [bool],
) -> Result<(), String> {
    let n = items.len();
    let mut seen_node = vec![false; nodes.len()];
    let mut todo = vec![0usize];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut seen_node[i], true) {
            return Err(format!("node {i} reached twice"));
        }
        let node = &nodes[i];
        for s in 0..W {
            let b = node.slot_box(s);
            let (child, count) = (node.child[s], (node.count[s] & COUNT_MASK) as usize);
            if count > 0 {
                let first = child as usize;
                if first + count > n {
                    return Err(format!("node {i} slot {s}: leaf {first}+{count} past {n} items"));
                }
                let run = covered[first..first + count].iter_mut().zip(&items[first..first + count]);
                for (p, (seen, &id)) in (first..).zip(run) {
                    if std::mem::replace(seen, true) {
                        return Err(format!("items[{p}] in two leaves"));
                    }
                    if !b.contains(&build::sanitize(boxes[id as usize])) {
                        return Err(format!("node {i} slot {s}: box {b:?} misses item {id}"));
                    }
                }
            } else if child != NONE {
                let c = child as usize;
                if c <= i || c >= nodes.len() {
                    return Err(format!("node {i} slot {s}: bad child index {c}"));
                }
                if !b.contains(&nodes[c].union()) {
                    return Err(format!("node {i} slot {s}: box {b:?} misses child node {c}"));
                }
                todo.push(c);
            } else if !b.is_empty() {
                return Err(format!("node {i} slot {s}: unused slot with a box"));
            }
        }
    }
    if let Some(i) = seen_node.iter().position(|&s| !s) {
        return Err(format!("node {i} unreachable"));
    }
    Ok(())
}

/// [`Bvh::tag_leaves`] on nodes of any width.
fn tag_nodes<const W: usize>(nodes: &mut [Node<W>], items: &[u32], tag: &mut impl FnMut(&[u32]) -> u32) {
    // Leaves in `items` order without sorting: each leaf's (node, slot)
    // is stored at its first position (leaves do not overlap), then the
    // positions are read in order. Sorting the leaf list took 11 % of a
    // 1.1M-triangle mesh build.
    const NO_LEAF: (u32, u8) = (u32::MAX, 0);
    let mut at_first = vec![NO_LEAF; items.len()];
    for (i, node) in nodes.iter().enumerate() {
        for s in 0..W {
            if node.count[s] & COUNT_MASK != 0 {
                at_first[node.child[s] as usize] = (i as u32, s as u8);
            }
        }
    }
    for (first, (i, s)) in at_first.into_iter().enumerate().filter(|(_, l)| *l != NO_LEAF) {
        let (first, i, s) = (first as u32, i as usize, s as usize);
        let c = &mut nodes[i].count[s];
        let count = *c & COUNT_MASK;
        let t = tag(&items[first as usize..(first + count) as usize]);
        assert!(t <= MAX_TAG, "Bvh::tag_leaves: tag {t} above {MAX_TAG}");
        *c = count | t << COUNT_BITS;
    }
}

/// Bytes allocated by `v`.
fn capacity_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// [`Bvh::refit`] on nodes of any width; returns the new bounds.
fn refit_nodes<const W: usize>(nodes: &mut [Node<W>], items: &[u32], boxes: &[Aabb]) -> Aabb {
    // Children have larger indices than their parents: sweep backwards.
    // Each node's union is kept as it is made, so a parent reads its inner
    // children's boxes from `unions` instead of re-reducing their slots;
    // boxes are handled as 4-lane `Vec3A` corners. A 4-wide node, mostly
    // full, is written row by row; an 8-wide node uses about half of its
    // slots, and only those are written (the rest keep `Node::EMPTY`'s box):
    // rewriting all eight lanes of every row made an 8-wide refit 1.7× slower.
    let (empty_lo, empty_hi) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    let mut unions = vec![(empty_lo, empty_hi); nodes.len()];
    // The box of slot `s` of a node, from its items or its child's union.
    let slot_box = |node: &Node<W>, s: usize, unions: &[(Vec3A, Vec3A)]| {
        let (child, count) = (node.child[s], (node.count[s] & COUNT_MASK) as usize);
        let (mut lo, mut hi) = (empty_lo, empty_hi);
        if count > 0 {
            let first = child as usize;
            for &id in &items[first..first + count] {
                let b = &boxes[id as usize];
                let (min, max) = (Vec3A::from(b.min), Vec3A::from(b.max));
                // As `build::sanitize`: an empty or NaN box adds nothing.
                if min.cmple(max).all() {
                    lo = lo.min(min);
                    hi = hi.max(max);
                }
            }
        } else if child != NONE {
            (lo, hi) = unions[child as usize];
        }
        (lo, hi)
    };
    for i in (0..nodes.len()).rev() {
        let node = &mut nodes[i];
        if W == 4 {
            // Four slots, mostly used: whole rows are cheaper.
            let (mut lo, mut hi) = ([empty_lo; W], [empty_hi; W]);
            for s in 0..W {
                (lo[s], hi[s]) = slot_box(node, s, &unions);
            }
            for a in 0..3 {
                node.bounds[a] = lo.map(|v| v[a]);
                node.bounds[a + 3] = hi.map(|v| v[a]);
            }
            unions[i] =
                (lo.into_iter().fold(empty_lo, Vec3A::min), hi.into_iter().fold(empty_hi, Vec3A::max));
            continue;
        }
        let (mut lo_all, mut hi_all) = (empty_lo, empty_hi);
        for s in 0..W {
            if node.child[s] == NONE {
                continue;
            }
            let (lo, hi) = slot_box(node, s, &unions);
            for a in 0..3 {
                node.bounds[a][s] = lo[a];
                node.bounds[a + 3][s] = hi[a];
            }
            (lo_all, hi_all) = (lo_all.min(lo), hi_all.max(hi));
        }
        unions[i] = (lo_all, hi_all);
    }
    let (min, max) = unions[0];
    Aabb::new(min.into(), max.into())
}

#[cfg(test)]
thread_local! {
    /// The node width the tests' builds use on this thread (`None`: the
    /// rule of [`Nodes`]); see [`each_width`].
    static TEST_WIDTH: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with every tree built on this thread 4-wide, then 8-wide with
/// the walks in their AVX copy (where the CPU has AVX), then 8-wide in SSE2
/// (4-wide trees always walk in SSE2: see `Tree::walk_ray`).
#[cfg(test)]
pub(crate) fn each_width(f: impl Fn()) {
    for (w, sse) in [(4, false), (8, false), (8, true)] {
        simd::TEST_SSE.with(|t| t.set(sse));
        TEST_WIDTH.with(|t| t.set(Some(w)));
        f();
    }
    simd::TEST_SSE.with(|t| t.set(false));
    TEST_WIDTH.with(|t| t.set(None));
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{vec3, Vec3};

    /// SplitMix64: a tiny seeded generator for test inputs.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn f(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
        }
        fn v(&mut self, lo: f32, hi: f32) -> Vec3 {
            vec3(self.f(lo, hi), self.f(lo, hi), self.f(lo, hi))
        }
    }

    fn random_boxes(rng: &mut Rng, n: usize) -> Vec<Aabb> {
        (0..n)
            .map(|_| {
                let c = rng.v(-10.0, 10.0);
                let h = rng.v(0.0, 1.0);
                Aabb::new(c - h, c + h)
            })
            .collect()
    }

    /// Ids visited with `Leaf::Miss`, in visit order.
    fn visited(bvh: &Bvh, ray: &Ray, range: Interval) -> Vec<u32> {
        let mut v = Vec::new();
        bvh.traverse(ray, range, |id, _| {
            v.push(id);
            Leaf::Miss
        });
        v
    }

    fn random_ray(rng: &mut Rng) -> Ray {
        let mut dir = rng.v(-1.0, 1.0);
        // Some axis-parallel and planar directions.
        match rng.next() % 8 {
            0 => dir.x = 0.0,
            1 => dir = vec3(0.0, 0.0, dir.z),
            _ => {}
        }
        Ray::new(rng.v(-15.0, 15.0), dir)
    }

    #[test]
    fn builds_are_valid() {
        super::each_width(|| {
            let mut rng = Rng(1);
            for &n in &[0usize, 1, 2, 3, 4, 5, 7, 16, 17, 100, 1000, 5000] {
                for leaf in [1, 4, 8] {
                    let boxes = random_boxes(&mut rng, n);
                    let bvh = Bvh::build_with(&boxes, &BuildOptions { max_leaf: leaf, traversal_cost: 1.0 });
                    bvh.validate(&boxes).unwrap();
                    assert_eq!(bvh.len(), n);
                    assert_eq!(bvh.is_empty(), n == 0);
                    let all = boxes.iter().fold(Aabb::EMPTY, |b, &x| b.union(x));
                    assert_eq!(bvh.bounds(), all);
                }
            }
        });
    }

    #[test]
    fn identical_empty_and_unbounded_boxes() {
        super::each_width(|| {
            let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
            let same = vec![b; 1000];
            let bvh = Bvh::build(&same);
            bvh.validate(&same).unwrap();
            let ray = Ray::new(vec3(0.5, 0.5, -1.0), vec3(0.0, 0.0, 1.0));
            let mut v = visited(&bvh, &ray, Interval::FORWARD);
            v.sort_unstable();
            assert_eq!(v, (0..1000).collect::<Vec<u32>>());

            // EMPTY and NaN boxes mixed in: never visited, still valid.
            let mut rng = Rng(2);
            let mut boxes = random_boxes(&mut rng, 300);
            for i in (0..300).step_by(3) {
                boxes[i] = if i % 2 == 0 { Aabb::EMPTY } else { Aabb::new(Vec3::NAN, Vec3::ONE) };
            }
            let bvh = Bvh::build(&boxes);
            bvh.validate(&boxes).unwrap();
            for _ in 0..500 {
                let ray = random_ray(&mut rng);
                assert!(visited(&bvh, &ray, Interval::ALL).iter().all(|&id| id % 3 != 0));
            }
            // All empty.
            let empty = vec![Aabb::EMPTY; 50];
            let bvh = Bvh::build(&empty);
            bvh.validate(&empty).unwrap();
            assert!(bvh.bounds().is_empty());
            assert!(visited(&bvh, &ray, Interval::ALL).is_empty());

            // Unbounded and flat-unbounded boxes (planes in a scene).
            let mut boxes = random_boxes(&mut rng, 50);
            boxes.push(Aabb::new(Vec3::NEG_INFINITY, Vec3::INFINITY));
            boxes.push(Aabb::new(
                vec3(f32::NEG_INFINITY, 0.0, f32::NEG_INFINITY),
                vec3(f32::INFINITY, 0.0, f32::INFINITY),
            ));
            let bvh = Bvh::build(&boxes);
            bvh.validate(&boxes).unwrap();
            let down = Ray::new(vec3(3.0, 100.0, -7.0), vec3(0.0, -1.0, 0.0));
            let v = visited(&bvh, &down, Interval::FORWARD);
            assert!(v.contains(&50) && v.contains(&51));
        });
    }

    /// Visits equal the brute-force set (leaf size 1): every box `Aabb::clip`
    /// accepts is visited exactly once; extra visits only within rounding of
    /// the box.
    #[test]
    fn traverse_matches_brute_force() {
        super::each_width(|| {
            let mut rng = Rng(3);
            let boxes = random_boxes(&mut rng, 2000);
            let bvh = Bvh::build(&boxes);
            bvh.validate(&boxes).unwrap();
            for i in 0..3000 {
                let ray = random_ray(&mut rng);
                let range = if i % 3 == 0 {
                    Interval::FORWARD
                } else {
                    Interval::new(rng.f(-5.0, 5.0), rng.f(5.0, 40.0))
                };
                let mut got = visited(&bvh, &ray, range);
                got.sort_unstable();
                assert!(got.windows(2).all(|w| w[0] != w[1]), "an item visited twice");
                let want: Vec<u32> = (0..boxes.len() as u32)
                    .filter(|&i| boxes[i as usize].clip(&ray, range).is_some())
                    .collect();
                for id in &want {
                    assert!(got.binary_search(id).is_ok(), "ray {ray:?} range {range:?} lost box {id}");
                }
                for id in &got {
                    if want.binary_search(id).is_err() {
                        // Only a graze within the widening: the slightly grown box is hit.
                        let b = boxes[*id as usize];
                        let pad = Vec3::splat(1e-4);
                        assert!(
                            Aabb::new(b.min - pad, b.max + pad).clip(&ray, range).is_some(),
                            "spurious {id}"
                        );
                    }
                }
            }
            // Degenerate rays and empty ranges visit nothing.
            let o = Vec3::ZERO;
            for ray in [
                Ray::new(o, Vec3::ZERO),
                Ray::new(o, vec3(f32::NAN, 1.0, 0.0)),
                Ray::new(vec3(f32::INFINITY, 0.0, 0.0), Vec3::X),
            ] {
                assert!(visited(&bvh, &ray, Interval::ALL).is_empty());
            }
            assert!(visited(&bvh, &Ray::new(o, Vec3::X), Interval::new(1.0, 0.0)).is_empty());
            assert!(visited(&bvh, &Ray::new(o, Vec3::X), Interval::new(f32::NAN, 1.0)).is_empty());
        });
    }

    /// Unit boxes on an integer lattice, rays lying exactly in their face
    /// planes or passing exactly through their edges and corners: every box
    /// the ray touches (per `Aabb::clip`) is visited, including the `0 · ∞`
    /// slabs of axis-parallel rays.
    #[test]
    fn grazing_rays_keep_every_touched_box() {
        super::each_width(|| {
            let boxes: Vec<Aabb> = (0..6 * 6 * 6)
                .map(|i| {
                    let p = vec3((i % 6) as f32, (i / 6 % 6) as f32, (i / 36) as f32) * 1.5;
                    Aabb::new(p, p + Vec3::ONE)
                })
                .collect();
            let bvh = Bvh::build(&boxes);
            let mut rng = Rng(8);
            for i in 0..4000 {
                // Origin on a lattice face/edge/corner value, direction with
                // zero components or through another lattice corner.
                let pick = |rng: &mut Rng| (rng.next() % 7) as f32 * 1.5 + (rng.next() % 2) as f32;
                let o = vec3(pick(&mut rng), pick(&mut rng), pick(&mut rng)) - Vec3::splat(2.0);
                let target = vec3(pick(&mut rng), pick(&mut rng), pick(&mut rng));
                let mut d = target - o;
                if i % 2 == 0 {
                    d[(rng.next() % 3) as usize] = 0.0;
                }
                if i % 3 == 0 {
                    d[(rng.next() % 3) as usize] = 0.0;
                }
                let ray = Ray::new(o, d);
                // Both forms of the widening: a range from below 0, and from 0.
                for range in [Interval::ALL, Interval::FORWARD] {
                    let got = visited(&bvh, &ray, range);
                    for (id, b) in boxes.iter().enumerate() {
                        if b.clip(&ray, range).is_some() {
                            assert!(got.contains(&(id as u32)), "{ray:?} {range:?} lost box {id} {b:?}");
                        }
                    }
                }
            }
        });
    }

    #[test]
    fn visits_nearest_first_and_stops() {
        super::each_width(|| {
            let mut rng = Rng(4);
            let boxes = random_boxes(&mut rng, 1000);
            let bvh = Bvh::build(&boxes);
            for _ in 0..500 {
                let ray = random_ray(&mut rng);
                // Closest "hit" is the entry t of each box: the search must end
                // with the smallest entry of all boxes (brute force).
                let entry = |id: u32| boxes[id as usize].clip(&ray, Interval::FORWARD).map(|i| i.min);
                let want = (0..1000).filter_map(entry).min_by(f32::total_cmp);
                let mut best: Option<f32> = None;
                bvh.traverse(&ray, Interval::FORWARD, |id, r| match entry(id) {
                    Some(t) if t <= r.max => {
                        best = Some(t);
                        Leaf::Hit(t)
                    }
                    _ => Leaf::Miss,
                });
                assert_eq!(best, want);
                // Stop ends at once.
                let mut calls = 0;
                bvh.traverse(&ray, Interval::FORWARD, |_, _| {
                    calls += 1;
                    Leaf::Stop
                });
                assert!(calls <= 1);
            }
        });
    }

    #[test]
    fn refit_keeps_valid_and_follows_motion() {
        super::each_width(|| {
            let mut rng = Rng(5);
            let mut boxes = random_boxes(&mut rng, 700);
            let mut bvh = Bvh::build_with(&boxes, &BuildOptions { max_leaf: 4, traversal_cost: 1.0 });
            let nodes = bvh.node_count();
            for round in 0..5 {
                for (i, b) in boxes.iter_mut().enumerate() {
                    let d = rng.v(-2.0, 2.0);
                    *b = if (i + round) % 11 == 0 { Aabb::EMPTY } else { Aabb::new(b.min + d, b.max + d) };
                }
                // An item empty at the build may come back.
                boxes[0] = Aabb::new(Vec3::splat(30.0), Vec3::splat(31.0));
                bvh.refit(&boxes);
                bvh.validate(&boxes).unwrap();
                assert_eq!(bvh.node_count(), nodes);
                let all = boxes.iter().fold(Aabb::EMPTY, |b, &x| b.union(x));
                assert_eq!(bvh.bounds(), all);
                let ray = Ray::new(Vec3::splat(25.0), Vec3::ONE);
                assert!(visited(&bvh, &ray, Interval::FORWARD).contains(&0));
            }
            let e = vec![Aabb::EMPTY; 3];
            let mut bvh = Bvh::build(&e);
            bvh.refit(&[Aabb::new(Vec3::ZERO, Vec3::ONE); 3]);
            bvh.validate(&[Aabb::new(Vec3::ZERO, Vec3::ONE); 3]).unwrap();
        });
    }

    #[test]
    fn validate_reports_breakage() {
        super::each_width(|| {
            let mut rng = Rng(6);
            let boxes = random_boxes(&mut rng, 100);
            let mut bvh = Bvh::build(&boxes);
            assert!(bvh.validate(&boxes[..99]).is_err());
            let mut moved = boxes.clone();
            moved[17] = Aabb::new(Vec3::splat(50.0), Vec3::splat(51.0));
            assert!(bvh.validate(&moved).unwrap_err().contains("item 17"));
            bvh.items.swap(0, 1);
            bvh.items[0] = bvh.items[1];
            assert!(bvh.validate(&boxes).is_err());
        });
    }

    /// Tags reach the tagged traversal, leave the public one unchanged and
    /// survive a refit.
    #[test]
    fn leaf_tags() {
        super::each_width(|| {
            let mut rng = Rng(9);
            let boxes = random_boxes(&mut rng, 900);
            let mut bvh = Bvh::build_with(&boxes, &BuildOptions { max_leaf: 16, traversal_cost: 8.0 });
            let mut tagged: Vec<Vec<u32>> = Vec::new();
            bvh.tag_leaves(|ids| {
                tagged.push(ids.to_vec());
                MAX_TAG - (tagged.len() as u32 - 1)
            });
            assert_eq!(tagged.concat(), bvh.items());
            bvh.refit(&boxes);
            bvh.validate(&boxes).unwrap();
            for _ in 0..300 {
                let ray = random_ray(&mut rng);
                let mut plain = Vec::new();
                bvh.traverse_leaves(&ray, Interval::ALL, Order::Any, |r, _| {
                    plain.push(bvh.items()[r].to_vec());
                    Leaf::Miss
                });
                let mut by_tag = Vec::new();
                bvh.traverse_tagged(
                    &ray,
                    Interval::ALL,
                    Order::Any,
                    |_| {},
                    |l, _| {
                        let leaf = &tagged[(MAX_TAG - l.tag) as usize];
                        assert_eq!(leaf[..], bvh.items()[l.first..l.first + l.count]);
                        by_tag.push(leaf.clone());
                        Leaf::Miss
                    },
                );
                assert_eq!(plain, by_tag);
            }
        });
    }

    /// The folded widening's factors are exactly `1 ∓ 16u` (module doc).
    #[test]
    fn widening_factors_are_exact() {
        let u = f32::EPSILON / 2.0;
        assert_eq!(f64::from(NEAR_SCALE), 1.0 - 16.0 * f64::from(u));
        assert_eq!(f64::from(FAR_SCALE), 1.0 + 16.0 * f64::from(u));
        assert!(WIDEN >= 16.0 * u);
    }

    #[test]
    fn send_sync_and_size() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Bvh>();
        assert_eq!(std::mem::size_of::<Node<4>>(), 128);
        assert_eq!(std::mem::size_of::<Node<8>>(), 256);
    }
}
