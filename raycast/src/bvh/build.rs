//! The build: a binary tree by binned SAH, collapsed into 8-wide or 4-wide
//! nodes (see `Nodes` for which).
//!
//! **Binary tree.** Every node bins the centroids of its items into [`BINS`]
//! equal slots along each axis and evaluates the surface-area heuristic at
//! the `BINS - 1` planes between them (Wald, *On fast construction of
//! SAH-based bounding volume hierarchies*, 2007):
//! `cost = C_t + (A_L·N_L + A_R·N_R) / A`, in units of one item test, with
//! `C_t` = [`BuildOptions::traversal_cost`]. A node becomes a leaf when it
//! holds at most `max_leaf` items and the leaf (`N` item tests) is no dearer
//! than the best split. When no plane separates the centroids (all equal, or an infinite box
//! makes every cost infinite) or the tree is already [`MAX_DEPTH`] deep, the
//! items are split at their median instead, so the depth stays below
//! `MAX_DEPTH + 32` and the traversal's fixed stack cannot overflow.
//!
//! Empty boxes ([`Aabb::EMPTY`], or any box with a NaN) are set apart first and
//! put under their own child of the root: their bounds are empty, so no ray
//! visits them, yet they stay in the tree and a [`refit`](super::Bvh::refit)
//! that gives them a real box makes them reachable.
//!
//! Subtrees over many items are built in parallel with rayon (the
//! `parallel` feature; with a single rayon thread the build just recurses);
//! the result does not depend on it.
//!
//! **Memory.** Each item's box travels with its id: the builder partitions
//! an array of ids and an array of boxes in step, so both passes over a
//! node's items (binning; partition, which also gathers each child's bounds
//! and centroid bounds, so the child needs no pass of its own) read memory
//! in order, whatever the order of the input. Looking boxes up by id instead
//! costs a cache miss per item per level when the boxes outgrow the cache
//! (35 MB for a 1.1M-triangle mesh) and the input is not already in spatial
//! order.
//!
//! **Collapse.** The binary tree becomes a `W`-wide one by choosing which
//! binary inner nodes stay nodes: each kept node's children are the roots
//! of a cut through its binary subtree, at most `W` of them. The choice
//! minimises the tree's SAH node term, the sum of the kept nodes' surface
//! areas (a ray enters a node with probability proportional to its area;
//! the leaves and their costs are fixed by the binary tree, whatever the
//! collapse), by dynamic programming over the binary tree, children before
//! parents (the optimal collapse of Ylitie, Karras & Laine, *Efficient
//! incoherent ray traversal on GPUs through compressed wide BVHs*, 2017,
//! with its leaves fixed). For a binary node `x` and `k ≤ W`, `F(x, k)` is the
//! least cost of covering `x`'s subtree with at most `k` roots: 0 for a
//! leaf, and for an inner node the cheaper of keeping `x` (its area plus
//! `G(x, W)`) and, when `k ≥ 2`, splitting `k` between its two children,
//! `G(x, k) = min_j F(left, j) + F(right, k − j)`. The greedy collapse used
//! until stop 22 (open the largest inner child until there are `W`; Wald,
//! Benthin & Boulos, *Getting rid of packets*, 2008) left the lowest nodes
//! with few children: on the bunny 5,893 8-wide nodes of 4.6 children on
//! average and a node term of 8.48 root areas, against 4,136 nodes of 6.1
//! children and 8.18 for this one; incoherent rays were 11–17 % faster
//! (paired runs, Zen 4). The programme costs `O(W²)` per binary node and a
//! few bytes per node per width; both widths are collapsed (see `Nodes`).
//! Nodes are stored in pre-order, so every child has a larger index than
//! its parent and a refit is one reverse sweep; a kept node's children are
//! proper descendants of it in the binary tree, so the wide tree is no
//! deeper than the binary one (the traversal's stack bound).

use super::{BuildOptions, Node, Nodes, NONE};
use crate::Aabb;
use glam::Vec3A;

/// Centroid bins per axis (at most; small nodes use fewer).
const BINS: usize = 16;
/// Depth beyond which nodes are split at the median, bounding the depth.
pub(super) const MAX_DEPTH: usize = 48;

/// A binary node; `count > 0` is a leaf over `items[first .. first + count]`.
struct BNode {
    bounds: Aabb,
    kids: [u32; 2],
    first: u32,
    count: u32,
}

/// The box with NaN-carrying boxes replaced by [`Aabb::EMPTY`].
#[inline]
pub(super) fn sanitize(b: Aabb) -> Aabb {
    if b.is_empty() {
        Aabb::EMPTY
    } else {
        b
    }
}

/// The builder's box: [`Vec3A`] corners, so a union is two SIMD instructions.
#[derive(Clone, Copy)]
struct B {
    min: Vec3A,
    max: Vec3A,
}

impl B {
    const EMPTY: B = B { min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };

    #[inline(always)]
    fn union(self, o: B) -> B {
        B { min: self.min.min(o.min), max: self.max.max(o.max) }
    }

    #[inline(always)]
    fn grow(self, p: Vec3A) -> B {
        B { min: self.min.min(p), max: self.max.max(p) }
    }

    /// Half the surface area, never NaN: extents are clamped to
    /// `[0, f32::MAX]`, so an empty box has area 0 and an unbounded one `+∞`
    /// (not `∞ · 0`).
    #[inline(always)]
    fn half_area(&self) -> f32 {
        let s = (self.max - self.min).max(Vec3A::ZERO).min(Vec3A::splat(f32::MAX));
        s.x * s.y + s.y * s.z + s.z * s.x
    }

    fn aabb(&self) -> Aabb {
        Aabb::new(self.min.into(), self.max.into())
    }
}

/// Half the surface area of an [`Aabb`], as [`B::half_area`].
#[inline]
fn half_area(b: &Aabb) -> f32 {
    B { min: b.min.into(), max: b.max.into() }.half_area()
}

/// A finite representative point of a box (its centre, with infinite sides
/// clamped to `±f32::MAX`; the empty box gives the origin).
#[inline(always)]
fn centroid(b: &B) -> Vec3A {
    let lim = Vec3A::splat(f32::MAX);
    0.5 * b.min.clamp(-lim, lim) + 0.5 * b.max.clamp(-lim, lim)
}

/// What every subtree build reads: the options, and whether to fork.
struct Builder {
    max_leaf: usize,
    traversal_cost: f32,
    /// Whether rayon has more than one thread. With one, forking gains
    /// nothing and each subtree's own node list costs an allocation and a
    /// copy (`append`): 3% of the single-thread build of a 1.1M-triangle
    /// mesh. Both ways give the same nodes in the same order.
    #[cfg(feature = "parallel")]
    parallel: bool,
}

/// The union of `boxes` and the bounds of their centroids.
fn bounds_of(boxes: &[B]) -> (B, B) {
    let (mut bounds, mut cb) = (B::EMPTY, B::EMPTY);
    for b in boxes {
        bounds = bounds.union(*b);
        cb = cb.grow(centroid(b));
    }
    (bounds, cb)
}

/// The chosen split: SAH cost, axis, first bin of the right side, and the
/// binning's origin and scale (so the partition bins exactly as the sweep).
struct Split {
    cost: f32,
    axis: usize,
    bin: usize,
    lo: Vec3A,
    scale: Vec3A,
}

/// Subtrees over at least this many items are built in parallel (rayon),
/// each into its own node list, merged afterwards.
#[cfg(feature = "parallel")]
const PARALLEL_MIN: usize = 4096;

fn push(out: &mut Vec<BNode>, n: BNode) -> u32 {
    out.push(n);
    (out.len() - 1) as u32
}

fn inner(out: &mut Vec<BNode>, l: u32, r: u32) -> u32 {
    let bounds = out[l as usize].bounds.union(out[r as usize].bounds);
    push(out, BNode { bounds, kids: [l, r], first: 0, count: 0 })
}

/// Appends a subtree built on its own (`root` indexes `sub`); returns the
/// root's index in `out`.
#[cfg(feature = "parallel")]
fn append(out: &mut Vec<BNode>, sub: Vec<BNode>, root: u32) -> u32 {
    let base = out.len() as u32;
    out.extend(sub.into_iter().map(|mut n| {
        if n.count == 0 {
            n.kids = n.kids.map(|k| k + base);
        }
        n
    }));
    root + base
}

impl Builder {
    /// Builds the subtree over `items` with their boxes `boxes` (`boxes[k]`
    /// is the box of `items[k]`; both permuted together; the items start at
    /// position `first` of the whole id array, `items.len() >= 1`), whose
    /// union is `bounds` and whose centroids span `cb` (see [`bounds_of`]),
    /// appending its nodes to `out`; returns the index of its root in `out`.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &self,
        items: &mut [u32],
        boxes: &mut [B],
        first: usize,
        depth: usize,
        bounds: B,
        cb: B,
        out: &mut Vec<BNode>,
    ) -> u32 {
        let count = items.len();
        let leaf = |out: &mut Vec<BNode>| {
            push(
                out,
                BNode { bounds: bounds.aabb(), kids: [NONE; 2], first: first as u32, count: count as u32 },
            )
        };
        if count == 1 {
            return leaf(out);
        }
        let split = if depth < MAX_DEPTH { self.best_split(boxes, &cb, &bounds) } else { None };
        let (mid, [lb, rb], [lc, rc]) = match split {
            Some(s) => {
                if count <= self.max_leaf && count as f32 <= s.cost {
                    return leaf(out);
                }
                split_by(items, boxes, &s)
            }
            None if count <= self.max_leaf => return leaf(out),
            None => {
                let mid = median(items, boxes, &cb);
                let ((lb, lc), (rb, rc)) = (bounds_of(&boxes[..mid]), bounds_of(&boxes[mid..]));
                (mid, [lb, rb], [lc, rc])
            }
        };
        let (left, right) = items.split_at_mut(mid);
        let (left_boxes, right_boxes) = boxes.split_at_mut(mid);
        #[cfg(feature = "parallel")]
        if self.parallel && count >= PARALLEL_MIN {
            let sub = |items: &mut [u32], boxes: &mut [B], first: usize, b: B, c: B| {
                let mut v = Vec::new();
                let root = self.node(items, boxes, first, depth + 1, b, c, &mut v);
                (v, root)
            };
            let ((lv, lr), (rv, rr)) = rayon::join(
                || sub(left, left_boxes, first, lb, lc),
                || sub(right, right_boxes, first + mid, rb, rc),
            );
            let l = append(out, lv, lr);
            let r = append(out, rv, rr);
            return inner(out, l, r);
        }
        let l = self.node(left, left_boxes, first, depth + 1, lb, lc, out);
        let r = self.node(right, right_boxes, first + mid, depth + 1, rb, rc, out);
        inner(out, l, r)
    }

    /// The cheapest binned SAH split, or `None` when no plane separates the
    /// centroids with a finite cost. One pass bins all three axes.
    fn best_split(&self, boxes: &[B], cb: &B, bounds: &B) -> Option<Split> {
        // A node of few items gets as many bins as items (at least 4): more
        // bins than items mostly stay empty, and sweeping them cost more than
        // the binning itself for the small nodes, which are most nodes.
        let bins = boxes.len().clamp(4, BINS);
        // The bin arrays are sized to the bin count (rounded up to 4, 8 or
        // 16): filling all 3 × BINS empty boxes (1.5 kB) for each of the
        // million small nodes of a 1.1M-triangle mesh was 8% of the build's
        // instructions.
        match bins {
            4 => self.sah::<4>(boxes, cb, bounds, bins),
            5..=8 => self.sah::<8>(boxes, cb, bounds, bins),
            _ => self.sah::<BINS>(boxes, cb, bounds, bins),
        }
    }

    /// [`Builder::best_split`] with `bins <= N` bins.
    #[inline(always)]
    fn sah<const N: usize>(&self, boxes: &[B], cb: &B, bounds: &B, bins: usize) -> Option<Split> {
        let n = boxes.len();
        let lo = cb.min;
        let ext = cb.max - cb.min;
        // Slightly under bins / extent so the largest centroid lands in the
        // last bin; a flat axis (extent 0) puts everything in bin 0.
        let scale = Vec3A::select(ext.cmpgt(Vec3A::ZERO), (bins as f32 * (1.0 - 1e-6)) / ext, Vec3A::ZERO);
        let (bin_box, bin_count) = if n >= SPLIT_BINS_MIN {
            // Two sets of bins, for the even and the odd items, merged at the
            // end (unions and counts are exact: the same bins): neighbouring
            // items mostly fall in the same bins, and with one set each
            // item's update waits for the previous one's store. 10% off the
            // single-thread build of a 1.1M-triangle mesh; small nodes keep
            // one set, which is cheaper to clear and merge.
            let (mut b0, mut c0) = ([[B::EMPTY; N]; 3], [[0u32; N]; 3]);
            let (mut b1, mut c1) = ([[B::EMPTY; N]; 3], [[0u32; N]; 3]);
            let mut pairs = boxes.chunks_exact(2);
            for p in &mut pairs {
                bin_into(&mut b0, &mut c0, p[0], lo, scale, bins);
                bin_into(&mut b1, &mut c1, p[1], lo, scale, bins);
            }
            for &b in pairs.remainder() {
                bin_into(&mut b0, &mut c0, b, lo, scale, bins);
            }
            for axis in 0..3 {
                for k in 0..bins {
                    b0[axis][k] = b0[axis][k].union(b1[axis][k]);
                    c0[axis][k] += c1[axis][k];
                }
            }
            (b0, c0)
        } else {
            let (mut b0, mut c0) = ([[B::EMPTY; N]; 3], [[0u32; N]; 3]);
            for &b in boxes {
                bin_into(&mut b0, &mut c0, b, lo, scale, bins);
            }
            (b0, c0)
        };
        let inv_area = 1.0 / bounds.half_area();
        let mut best: Option<Split> = None;
        let mut best_cost = f32::INFINITY;
        for axis in 0..3 {
            if !(ext[axis] > 0.0) {
                continue;
            }
            let (boxes, counts) = (&bin_box[axis][..bins], &bin_count[axis][..bins]);
            // Right-to-left sweep: area·count of the right side for each plane.
            let mut right_cost = [0.0f32; N];
            let (mut rb, mut rn) = (B::EMPTY, 0u32);
            for k in (1..bins).rev() {
                rb = rb.union(boxes[k]);
                rn += counts[k];
                right_cost[k] = rb.half_area() * rn as f32;
            }
            let (mut lb, mut ln) = (B::EMPTY, 0u32);
            for k in 1..bins {
                lb = lb.union(boxes[k - 1]);
                ln += counts[k - 1];
                if ln == 0 || ln as usize == n {
                    continue;
                }
                let cost = self.traversal_cost + (lb.half_area() * ln as f32 + right_cost[k]) * inv_area;
                // `<` is false for NaN (∞/∞ with unbounded boxes): never chosen.
                if cost < best_cost {
                    best_cost = cost;
                    best = Some(Split { cost, axis, bin: k, lo, scale });
                }
            }
        }
        best
    }
}

/// Splits at the median centroid along the widest centroid axis (or just in
/// the middle when all centroids coincide), keeping `boxes` in step with
/// `items`; returns the split index. A rare path (degenerate centroids or a
/// very deep tree), so it sorts through a temporary array.
fn median(items: &mut [u32], boxes: &mut [B], cb: &B) -> usize {
    let ext = cb.max - cb.min;
    let axis = if ext.x >= ext.y && ext.x >= ext.z {
        0
    } else if ext.y >= ext.z {
        1
    } else {
        2
    };
    let half = items.len() / 2;
    if ext[axis] > 0.0 {
        let mut pairs: Vec<(u32, B)> = items.iter().copied().zip(boxes.iter().copied()).collect();
        pairs.select_nth_unstable_by(half, |a, b| centroid(&a.1)[axis].total_cmp(&centroid(&b.1)[axis]));
        for (k, (i, b)) in pairs.into_iter().enumerate() {
            items[k] = i;
            boxes[k] = b;
        }
    }
    half
}

/// Nodes over at least this many items bin into two sets of bins.
const SPLIT_BINS_MIN: usize = 256;

/// Adds box `b` to its bin on each axis.
#[inline(always)]
fn bin_into<const N: usize>(
    bin_box: &mut [[B; N]; 3],
    bin_count: &mut [[u32; N]; 3],
    b: B,
    lo: Vec3A,
    scale: Vec3A,
    bins: usize,
) {
    let k = bins_of(centroid(&b), lo, scale, bins);
    for axis in 0..3 {
        bin_box[axis][k[axis]] = bin_box[axis][k[axis]].union(b);
        bin_count[axis][k[axis]] += 1;
    }
}

/// The bin of centroid `c` along each axis (of `bins`).
#[inline(always)]
fn bins_of(c: Vec3A, lo: Vec3A, scale: Vec3A, bins: usize) -> [usize; 3] {
    // `as u32` saturates (NaN → 0), and `min` keeps rounding in range.
    let k = ((c - lo) * scale).as_uvec3().min(glam::UVec3::splat(bins as u32 - 1));
    [k.x as usize, k.y as usize, k.z as usize]
}

/// Reorders `items` and `boxes` together so that the items left of split
/// `s` come first; returns their count and the two sides' bounds and
/// centroid bounds, gathered on the way so that the children need no pass
/// of their own (the same unions as [`bounds_of`]: min and max are exact,
/// so the order does not matter).
fn split_by(items: &mut [u32], boxes: &mut [B], s: &Split) -> (usize, [B; 2], [B; 2]) {
    let (mut lb, mut rb, mut lc, mut rc) = (B::EMPTY, B::EMPTY, B::EMPTY, B::EMPTY);
    // `bins_of(c, ..)[axis] < bin` on the split axis alone and without the
    // integer conversion: `(x as u32).min(bins - 1) < bin` is `!(x >= bin)`
    // for every `x` (NaN included), as `1 <= bin < bins`, and the scalar
    // `x` is the vector's lane bit for bit. A tenth of the build time.
    let (lo, scale, bin) = (s.lo[s.axis], s.scale[s.axis], s.bin as f32);
    let mut i = 0;
    for j in 0..items.len() {
        let b = boxes[j];
        let c = centroid(&b);
        if !((c[s.axis] - lo) * scale >= bin) {
            lb = lb.union(b);
            lc = lc.grow(c);
            items.swap(i, j);
            boxes.swap(i, j);
            i += 1;
        } else {
            rb = rb.union(b);
            rc = rc.grow(c);
        }
    }
    (i, [lb, rb], [lc, rc])
}

/// Reorders `items` and `boxes` together so that the items whose box
/// satisfies `pred` come first; returns their count.
fn partition(items: &mut [u32], boxes: &mut [B], mut pred: impl FnMut(&B) -> bool) -> usize {
    let mut i = 0;
    for j in 0..items.len() {
        if pred(&boxes[j]) {
            items.swap(i, j);
            boxes.swap(i, j);
            i += 1;
        }
    }
    i
}

/// Builds the tree over `boxes`, `width`-wide (4 or 8), or as the rule of
/// [`Nodes`] chooses when `width` is `None`; returns the nodes (root first)
/// and the item ids in leaf order.
pub(super) fn build(boxes: &[Aabb], opts: &BuildOptions, width: Option<usize>) -> (Nodes, Vec<u32>) {
    // As `sanitize`, on SIMD corners.
    let mut boxes: Vec<B> = boxes
        .iter()
        .map(|b| {
            let (min, max) = (Vec3A::from(b.min), Vec3A::from(b.max));
            if min.cmple(max).all() {
                B { min, max }
            } else {
                B::EMPTY
            }
        })
        .collect();
    let n = boxes.len();
    let mut items: Vec<u32> = (0..n as u32).collect();
    // Every box is now either valid (min <= max on all axes) or B::EMPTY
    // (min.x = +∞ > max.x = −∞), so one comparison tells them apart.
    let filled = partition(&mut items, &mut boxes, |b| b.min.x <= b.max.x);
    let b = Builder {
        max_leaf: opts.max_leaf.clamp(1, 16),
        traversal_cost: opts.traversal_cost.max(0.0),
        #[cfg(feature = "parallel")]
        parallel: rayon::current_num_threads() > 1,
    };
    let node = |items: &mut [u32], boxes: &mut [B], first, depth, out: &mut Vec<BNode>| {
        let (bounds, cb) = bounds_of(boxes);
        b.node(items, boxes, first, depth, bounds, cb, out)
    };
    let mut bn = Vec::with_capacity(2 * n);
    let (full, empty) = items.split_at_mut(filled);
    let (full_boxes, empty_boxes) = boxes.split_at_mut(filled);
    let root = match (full.len(), empty.len()) {
        (0, 0) => None,
        (_, 0) => Some(node(full, full_boxes, 0, 0, &mut bn)),
        (0, _) => Some(node(empty, empty_boxes, 0, 1, &mut bn)),
        (f, _) => {
            let l = node(full, full_boxes, 0, 1, &mut bn);
            let r = node(empty, empty_boxes, f, 1, &mut bn);
            Some(inner(&mut bn, l, r))
        }
    };
    drop(boxes);
    // Both collapses (each a small fraction of the build) and the rule of
    // `Nodes`: 8-wide when that takes at most 75 % of the 4-wide tree's
    // nodes.
    let four = |n| Nodes::Four(crate::pages::on_huge_pages(n));
    let eight = |n| Nodes::Eight(crate::pages::on_huge_pages(n));
    let nodes = match width {
        Some(4) => four(collapse::<4>(&bn, root)),
        Some(_) => eight(collapse::<8>(&bn, root)),
        None => {
            let (wide, narrow) = (collapse::<8>(&bn, root), collapse::<4>(&bn, root));
            if 4 * wide.len() <= 3 * narrow.len() {
                eight(wide)
            } else {
                four(narrow)
            }
        }
    };
    (nodes, crate::pages::on_huge_pages(items))
}

/// The `W`-wide nodes of the binary tree `bn` whose root is `root` (see
/// the module doc). A leaf root gives a root node with that one leaf.
fn collapse<const W: usize>(bn: &[BNode], root: Option<u32>) -> Vec<Node<W>> {
    let mut nodes = Vec::with_capacity(bn.len() / (W - 1) + 1);
    nodes.push(Node::EMPTY);
    if let Some(r) = root {
        let cuts = Cuts::<W>::new(bn);
        let mut kids = Vec::with_capacity(W);
        if bn[r as usize].count > 0 {
            kids.push(r);
        } else {
            cuts.children(r as usize, &mut kids);
        }
        fill(&cuts, 0, &kids, &mut nodes);
    }
    nodes
}

/// Writes node `at` with the binary subtrees `kids` as its children,
/// appending (in pre-order) a node for each inner one.
fn fill<const W: usize>(cuts: &Cuts<W>, at: usize, kids: &[u32], nodes: &mut Vec<Node<W>>) {
    for (slot, &k) in kids.iter().enumerate() {
        let b = &cuts.bn[k as usize];
        nodes[at].set_box(slot, b.bounds);
        if b.count > 0 {
            nodes[at].child[slot] = b.first;
            nodes[at].count[slot] = b.count;
        } else {
            let idx = nodes.len();
            nodes.push(Node::EMPTY);
            nodes[at].child[slot] = idx as u32;
            let mut below = Vec::with_capacity(W);
            cuts.children(k as usize, &mut below);
            fill(cuts, idx, &below, nodes);
        }
    }
}

/// The collapse's dynamic programme over a binary tree (module doc): for
/// each binary node, how to cover its subtree with at most `k` roots.
struct Cuts<'a, const W: usize> {
    bn: &'a [BNode],
    /// `cover[x][k − 1]`: 0 when `x` itself is the one root of its best
    /// cover by at most `k` roots (always for a leaf, and for `k = 1`),
    /// else the `j` roots given to its left child (`k − j` to the right).
    cover: Vec<[u8; W]>,
    /// `wide[x]`: for an inner node kept as a wide node, the `j` of the
    /// best split of its `W` children's slots, `j` to the left child.
    wide: Vec<u8>,
}

impl<'a, const W: usize> Cuts<'a, W> {
    /// Solves the programme, children before parents (`bn` lists every
    /// inner node after its children). Costs are `f32` half areas; an
    /// unbounded box (infinite or NaN area) only makes some comparisons
    /// false, and each choice then keeps a valid default (keep `x`, or the
    /// first split tried).
    fn new(bn: &'a [BNode]) -> Self {
        let mut cost = vec![[0.0f32; W]; bn.len()];
        let mut cover = vec![[0u8; W]; bn.len()];
        let mut wide = vec![0u8; bn.len()];
        for x in 0..bn.len() {
            let b = &bn[x];
            if b.count > 0 {
                continue; // a leaf: its own one root, at no cost
            }
            let [l, r] = b.kids.map(|k| k as usize);
            debug_assert!(l < x && r < x, "children before parents");
            let (cl, cr) = (cost[l], cost[r]);
            // The best split of `k >= 2` roots between the children, as
            // (cost, roots to the left).
            let best = |k: usize| {
                let mut best = (cl[0] + cr[k - 2], 1);
                for j in 2..k {
                    let c = cl[j - 1] + cr[k - j - 1];
                    if c < best.0 {
                        best = (c, j);
                    }
                }
                best
            };
            let (below, j) = best(W);
            wide[x] = j as u8;
            let keep = half_area(&b.bounds) + below;
            cost[x][0] = keep;
            for k in 2..=W {
                let (c, j) = best(k);
                // On a tie, split: the same cost with one node fewer.
                if c <= keep {
                    cost[x][k - 1] = c;
                    cover[x][k - 1] = j as u8;
                } else {
                    cost[x][k - 1] = keep;
                }
            }
        }
        Cuts { bn, cover, wide }
    }

    /// Appends the roots of the best cover of `x`'s subtree by at most `k`
    /// roots.
    fn roots(&self, x: usize, k: usize, out: &mut Vec<u32>) {
        match self.cover[x][k - 1] as usize {
            0 => out.push(x as u32),
            j => {
                let [l, r] = self.bn[x].kids;
                self.roots(l as usize, j, out);
                self.roots(r as usize, k - j, out);
            }
        }
    }

    /// Appends the children of the wide node kept at the inner binary node
    /// `x`: the best cover of its two children's subtrees by `W` roots.
    fn children(&self, x: usize, out: &mut Vec<u32>) {
        let [l, r] = self.bn[x].kids.map(|k| k as usize);
        let j = self.wide[x] as usize;
        self.roots(l, j, out);
        self.roots(r, W - j, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{vec3, Vec3};

    /// A random binary tree of `leaves` leaves (random shape, random leaf
    /// boxes; inner bounds are the unions), children before parents as the
    /// builder lists them. Returns the nodes and the root.
    fn random_tree(leaves: usize, seed: &mut u64) -> (Vec<BNode>, u32) {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut bn = Vec::new();
        let mut roots: Vec<u32> = (0..leaves)
            .map(|i| {
                let c = vec3(next(), next(), next()) * 10.0;
                let e = vec3(next(), next(), next()) + Vec3::splat(0.1);
                let bounds = Aabb::new(c, c + e);
                push(&mut bn, BNode { bounds, kids: [NONE; 2], first: i as u32, count: 1 })
            })
            .collect();
        while roots.len() > 1 {
            let i = (next() * roots.len() as f32) as usize % roots.len();
            let l = roots.swap_remove(i);
            let j = (next() * roots.len() as f32) as usize % roots.len();
            let r = roots.swap_remove(j);
            roots.push(inner(&mut bn, l, r));
        }
        (bn, roots[0])
    }

    /// The least node term over every collapse, by brute force: each set of
    /// inner nodes kept (the root always) is allowed when every kept node
    /// has at most `w` children, its nearest kept descendants and leaves.
    fn brute_force_cost(bn: &[BNode], root: u32, w: usize) -> f32 {
        let inner: Vec<usize> = (0..bn.len()).filter(|&x| bn[x].count == 0).collect();
        let others: Vec<usize> = inner.iter().copied().filter(|&x| x != root as usize).collect();
        // The children a kept node `x` has when `kept` tells which nodes stay.
        fn children(bn: &[BNode], x: usize, kept: &dyn Fn(usize) -> bool) -> usize {
            bn[x]
                .kids
                .iter()
                .map(|&k| k as usize)
                .map(|k| if bn[k].count > 0 || kept(k) { 1 } else { children(bn, k, kept) })
                .sum()
        }
        let mut best = f32::INFINITY;
        for mask in 0u32..(1 << others.len()) {
            let kept = |x: usize| {
                x == root as usize || others.iter().position(|&o| o == x).is_some_and(|i| mask >> i & 1 == 1)
            };
            if inner.iter().all(|&x| !kept(x) || children(bn, x, &kept) <= w) {
                best = best.min(inner.iter().filter(|&&x| kept(x)).map(|&x| half_area(&bn[x].bounds)).sum());
            }
        }
        best
    }

    /// Collapses a random tree of `leaves` leaves `W`-wide and checks it:
    /// its shape, and its node term against the brute force.
    fn check_collapse<const W: usize>(leaves: usize, seed: &mut u64) {
        let (bn, root) = random_tree(leaves, seed);
        let nodes = collapse::<W>(&bn, Some(root));
        check_shape(&bn, &nodes);
        let want = brute_force_cost(&bn, root, W);
        let got: f32 = nodes.iter().map(|n| half_area(&n.union())).sum();
        assert!((got - want).abs() <= 1e-4 * want, "{leaves} leaves, {W}-wide: {got} vs {want}");
    }

    /// Every child slot of every node, inner or leaf, reached once; leaves
    /// are the binary tree's.
    fn check_shape<const W: usize>(bn: &[BNode], nodes: &[Node<W>]) {
        let leaves = bn.iter().filter(|b| b.count > 0).count();
        let (mut inner, mut leaf) = (0, 0);
        for (i, n) in nodes.iter().enumerate() {
            for s in 0..W {
                match (n.child[s], n.count[s]) {
                    (NONE, _) => {}
                    (c, 0) => {
                        assert!(c as usize > i, "pre-order");
                        inner += 1;
                    }
                    _ => leaf += 1,
                }
            }
        }
        assert_eq!((inner, leaf), (nodes.len() - 1, leaves));
    }

    /// The collapse is the cheapest one (its node term equals a brute force
    /// over every allowed set of kept nodes) on random trees, 4 and 8 wide.
    #[test]
    fn collapse_is_optimal() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for case in 0..60 {
            check_collapse::<4>(6 + case % 9, &mut seed);
            check_collapse::<8>(10 + case % 8, &mut seed);
        }
    }

    /// A balanced tree of 64 leaves becomes a root and eight full nodes; a
    /// lone leaf, a root holding it.
    #[test]
    fn collapse_fills_nodes() {
        let mut bn = Vec::new();
        let mut level: Vec<u32> = (0..64)
            .map(|i| {
                let c = vec3(i as f32, 0.0, 0.0);
                push(
                    &mut bn,
                    BNode { bounds: Aabb::new(c, c + Vec3::ONE), kids: [NONE; 2], first: i, count: 1 },
                )
            })
            .collect();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| inner(&mut bn, p[0], p[1])).collect();
        }
        let nodes = collapse::<8>(&bn, Some(level[0]));
        assert_eq!(nodes.len(), 9);
        assert!(nodes.iter().all(|n| n.child.iter().all(|&c| c != NONE)));
        let one = collapse::<8>(&bn[..1], Some(0));
        assert_eq!((one.len(), one[0].count[0], one[0].child[1]), (1, 1, NONE));
        assert_eq!(collapse::<4>(&[], None).len(), 1);
    }
}
