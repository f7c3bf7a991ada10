//! Interleaved traversal: several rays walk the tree at once, one node (or
//! leaf) at a time each, in turn.
//!
//! A single ray's walk is a chain of dependent loads: the next node's
//! address is known only once the current node has been tested. On trees
//! larger than the caches (a 100,000-object scene, a million-triangle mesh)
//! incoherent rays spend most of their time waiting for those loads. With
//! [`LANES`] rays in flight, each ray's next node (or leaf data) is
//! prefetched as soon as it is chosen, and the other rays' steps run while
//! it arrives. Every ray takes exactly the steps of [`Bvh::traverse_tagged`]
//! in the same order, so its answers are those of the single-ray walk, bit
//! for bit; only the order in which rays advance changes.

use super::simd::{Sel, Width};
use super::{with_tree, Bvh, Entry, Leaf, LeafRef, Nodes, Order, RayBoxes, Stack, Tree, STACK_4, STACK_8};
use crate::{Interval, Ray};

/// Rays in flight. Eight lanes hide the latency of a node fetched from the
/// shared cache (~40 ns, about eight node tests) on the scenes and meshes of
/// the benchmarks; their stacks take ~25 KiB of the caller's stack on a
/// 4-wide tree (~55 KiB on an 8-wide one).
pub(crate) const LANES: usize = 8;

/// Trees with fewer node bytes than this are walked ray by ray: their nodes
/// (and what their leaves point to) mostly stay in the caches, where a miss
/// costs a few nanoseconds and interleaving only adds its bookkeeping. On the
/// 10,000-object scene (0.4 MiB of nodes) a batch was ~10 % slower
/// interleaved, on the bunny (69,451 triangles, 1.3 MiB of nodes, 6 MiB in
/// all) ~10 % slower; on the 100,000-object scene (4.1 MiB) ~30 % faster and
/// on the 1.1M-triangle bunny (21 MiB) ~45 % faster (measured with 4-wide
/// nodes; with 8-wide ones, which those two trees have since stop 21, the
/// batches run as fast as they did 4-wide).
pub(super) const INTERLEAVE_MIN_BYTES: usize = 2 << 20;

/// One ray's walk in progress.
struct Lane<const W: usize, const N: usize>
where
    Sel: Width<W>,
{
    rb: RayBoxes<W>,
    range: Interval,
    cur: Entry,
    stack: Stack<N>,
    /// The ray's index in the batch, or [`IDLE`].
    ray: usize,
}

/// `Lane::ray` of a lane with no ray.
const IDLE: usize = usize::MAX;

impl Bvh {
    /// Whether [`Bvh::traverse_interleaved`] is expected to beat walking
    /// `rays` one by one: when the tree is too large for the caches near a
    /// core (see [`INTERLEAVE_MIN_BYTES`]) and the rays are not coherent.
    ///
    /// Coherent rays (a camera's or a lidar's neighbouring rays: one origin,
    /// nearly parallel) visit nearly the same nodes one after another, so
    /// those nodes are in the L1 cache already and interleaving only adds
    /// its bookkeeping: on a 1.1M-triangle mesh, camera rays ran at 4.7
    /// Mrays/s interleaved against 7.0 one by one, while incoherent ones ran
    /// 1.5× faster interleaved. Rays count as coherent here when their
    /// origins lie within 1/64 of the tree's extent of each other and their
    /// directions within 25° of the first one's (64 neighbouring pixels of a
    /// 256-pixel-wide, 40° camera span 10°; random directions are never
    /// that close).
    pub(crate) fn interleaving_pays(&self, rays: &[Ray]) -> bool {
        if self.nodes.bytes() < INTERLEAVE_MIN_BYTES {
            return false;
        }
        let Some(first) = rays.first() else { return false };
        let (mut lo, mut hi) = (first.origin, first.origin);
        let d0 = first.dir.normalize_or_zero();
        let mut parallel = true;
        for r in rays {
            lo = lo.min(r.origin);
            hi = hi.max(r.origin);
            // cos 25° ≈ 0.906; NaN (a degenerate ray) counts as not parallel.
            parallel &= r.dir.normalize_or_zero().dot(d0) >= 0.906;
        }
        let near = (hi - lo).max_element() <= self.bounds.size().max_element() / 64.0;
        !(near && parallel)
    }

    /// Walks rays `0..n` through the tree [`LANES`] at a time, each exactly
    /// as [`Bvh::traverse_tagged`] would (same order, same leaves, same
    /// answers): `start(i)` gives ray `i` and its range (rays that are
    /// degenerate or have an empty range visit nothing), and
    /// `leaf(i, leaf, range)` tests a leaf for ray `i`. Rays are started in
    /// index order; `prefetch` is called for every leaf a ray will visit
    /// later (the one it goes to next included).
    #[inline(always)]
    pub(crate) fn traverse_interleaved<S, P, F>(&self, n: usize, order: Order, start: S, prefetch: P, leaf: F)
    where
        S: FnMut(usize) -> (Ray, Interval),
        P: Fn(LeafRef),
        F: FnMut(usize, LeafRef, Interval) -> Leaf,
    {
        if self.items.is_empty() {
            return;
        }
        with_tree!(&self.nodes, tree => {
            match order {
                Order::NearFirst => tree.interleave::<true, S, P, F>(n, start, prefetch, leaf),
                Order::Any => tree.interleave::<false, S, P, F>(n, start, prefetch, leaf),
            }
        })
    }
}

impl<const W: usize, const N: usize> Tree<'_, W, N>
where
    Sel: Width<W>,
{
    #[inline(always)]
    fn interleave<const ORDERED: bool, S, P, F>(&self, n: usize, mut start: S, prefetch: P, mut leaf: F)
    where
        S: FnMut(usize) -> (Ray, Interval),
        P: Fn(LeafRef),
        F: FnMut(usize, LeafRef, Interval) -> Leaf,
    {
        let mut lanes: [Lane<W, N>; LANES] = std::array::from_fn(|_| Lane {
            rb: RayBoxes::new(&Ray::new(glam::Vec3::ZERO, glam::Vec3::X), Interval::FORWARD),
            range: Interval::FORWARD,
            cur: Entry::ROOT,
            stack: Stack::new(),
            ray: IDLE,
        });
        let mut next = 0;
        // Gives `lane` the next ray that has something to walk; false when
        // none is left.
        let mut refill = |lane: &mut Lane<W, N>, next: &mut usize| {
            while *next < n {
                let i = *next;
                *next += 1;
                let (ray, range) = start(i);
                if ray.is_valid() && !range.is_empty() {
                    lane.rb = RayBoxes::new(&ray, range);
                    lane.range = range;
                    lane.cur = Entry::ROOT;
                    lane.stack.len = 0;
                    lane.ray = i;
                    return true;
                }
            }
            lane.ray = IDLE;
            false
        };
        let mut live = 0;
        for lane in &mut lanes {
            if !refill(lane, &mut next) {
                break;
            }
            live += 1;
        }
        while live > 0 {
            for lane in &mut lanes {
                if lane.ray != IDLE
                    && !self.step::<ORDERED, P, F>(lane, &prefetch, &mut leaf)
                    && !refill(lane, &mut next)
                {
                    live -= 1;
                }
            }
        }
    }

    /// Advances `lane` by one node or one leaf, as one turn of the loop in
    /// `Bvh::walk`, then prefetches what it visits next. False when the
    /// ray's walk is over.
    #[inline(always)]
    fn step<const ORDERED: bool, P: Fn(LeafRef), F: FnMut(usize, LeafRef, Interval) -> Leaf>(
        &self,
        lane: &mut Lane<W, N>,
        prefetch: &P,
        leaf: &mut F,
    ) -> bool {
        let cur = lane.cur;
        if cur.count == 0 {
            let node = self.node(cur);
            let (mask, near) = if lane.rb.signed {
                lane.rb.test::<true>(node, lane.range.min, lane.range.max)
            } else {
                lane.rb.test::<false>(node, lane.range.min, lane.range.max)
            };
            if mask != 0 {
                lane.cur =
                    self.descend::<ORDERED, false, Sel, P>(node, mask, near, &mut lane.stack, prefetch);
                self.prefetch(lane.cur, prefetch);
                return true;
            }
        } else {
            match leaf(lane.ray, cur.leaf(), lane.range) {
                Leaf::Miss => {}
                Leaf::Hit(t) => {
                    if t < lane.range.max {
                        lane.range.max = t;
                    }
                }
                Leaf::Stop => return false,
            }
        }
        match lane.stack.pop_within(lane.range.max) {
            Some(e) => {
                lane.cur = e;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{vec3, Aabb};

    /// Pseudo-random boxes and rays (xorshift), some rays degenerate.
    fn setup(n: usize, rays: usize) -> (Vec<Aabb>, Vec<(Ray, Interval)>) {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut f = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        let boxes = (0..n)
            .map(|_| {
                let p = vec3(f(), f(), f()) * 20.0;
                Aabb::new(p, p + vec3(f(), f(), f()) * 2.0)
            })
            .collect();
        let rays = (0..rays)
            .map(|i| {
                let o = vec3(f(), f(), f()) * 24.0 - 2.0;
                let d = if i % 17 == 0 { glam::Vec3::ZERO } else { vec3(f(), f(), f()) - 0.5 };
                let range =
                    if i % 23 == 0 { Interval::new(5.0, 1.0) } else { Interval::new(f(), 10.0 + 40.0 * f()) };
                (Ray::new(o, d), range)
            })
            .collect();
        (boxes, rays)
    }

    /// The leaves each ray visits, with the range it had there, and where it
    /// stopped: recorded by the single-ray walk and the interleaved one.
    #[test]
    fn every_ray_takes_the_single_ray_steps() {
        crate::bvh::each_width(|| {
            let (boxes, rays) = setup(3000, 500);
            for max_leaf in [1, 4] {
                let bvh = Bvh::build_with_leaf_size(&boxes, max_leaf);
                for order in [Order::NearFirst, Order::Any] {
                    // A leaf "hits" at its entry range's midpoint for every third
                    // item, and ray 5k stops at its third leaf: both steer the walk.
                    let answer = |i: usize, l: LeafRef, r: Interval, seen: usize| {
                        if i.is_multiple_of(5) && seen == 2 {
                            Leaf::Stop
                        } else if bvh.items()[l.first].is_multiple_of(3) {
                            Leaf::Hit(r.min.max(0.0) + 0.5 * (r.max.min(1e3) - r.min.max(0.0)))
                        } else {
                            Leaf::Miss
                        }
                    };
                    let single: Vec<Vec<(usize, u32)>> = rays
                        .iter()
                        .enumerate()
                        .map(|(i, (ray, range))| {
                            let mut seen = Vec::new();
                            bvh.traverse_tagged(
                                ray,
                                *range,
                                order,
                                |_| {},
                                |l, r| {
                                    seen.push((l.first, r.max.to_bits()));
                                    answer(i, l, r, seen.len() - 1)
                                },
                            );
                            seen
                        })
                        .collect();
                    let mut many = vec![Vec::new(); rays.len()];
                    bvh.traverse_interleaved(
                        rays.len(),
                        order,
                        |i| rays[i],
                        |_| {},
                        |i, l, r| {
                            many[i].push((l.first, r.max.to_bits()));
                            answer(i, l, r, many[i].len() - 1)
                        },
                    );
                    assert_eq!(single, many, "max_leaf {max_leaf}, {order:?}");
                    let long = single.iter().filter(|s| s.len() > 3).count();
                    assert!(long > 50, "{long}");
                }
            }
        });
    }

    #[test]
    fn interleaving_is_for_large_trees_and_incoherent_rays() {
        // 60,000 one-item leaves: over 2 MiB of nodes.
        let (boxes, _) = setup(60_000, 0);
        let big = Bvh::build(&boxes);
        assert!(big.nodes.bytes() >= INTERLEAVE_MIN_BYTES);
        let small = Bvh::build(&boxes[..1000]);
        let (_, random) = setup(10, 64);
        let random: Vec<Ray> = random.into_iter().map(|(r, _)| r).collect();
        // 64 neighbouring pixels of a camera row: one origin, 10° of spread.
        let eye = vec3(10.0, 10.0, -30.0);
        let camera: Vec<Ray> =
            (0..64).map(|i| Ray::new(eye, vec3((i as f32 / 64.0 - 0.5) * 0.18, 0.0, 1.0))).collect();
        assert!(big.interleaving_pays(&random));
        assert!(!big.interleaving_pays(&camera));
        assert!(!small.interleaving_pays(&random));
        assert!(!big.interleaving_pays(&[]));
    }

    #[test]
    fn fewer_rays_than_lanes_and_empty_trees() {
        crate::bvh::each_width(|| {
            let (boxes, rays) = setup(50, 3);
            let bvh = Bvh::build(&boxes);
            let mut visits = 0;
            bvh.traverse_interleaved(
                rays.len(),
                Order::NearFirst,
                |i| rays[i],
                |_| {},
                |_, _, _| {
                    visits += 1;
                    Leaf::Miss
                },
            );
            let single: usize = rays
                .iter()
                .map(|(ray, range)| {
                    let mut v = 0;
                    bvh.traverse(ray, *range, |_, _| {
                        v += 1;
                        Leaf::Miss
                    });
                    v
                })
                .sum();
            assert_eq!(visits, single);
            let empty = Bvh::build(&[]);
            empty.traverse_interleaved(rays.len(), Order::Any, |i| rays[i], |_| {}, |_, _, _| unreachable!());
        });
    }
}
