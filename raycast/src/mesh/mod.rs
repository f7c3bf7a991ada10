//! [`TriMesh`]: an indexed triangle mesh under a [`Bvh`].
//!
//! # Design
//! * **Exactness.** Every triangle is tested with the project's watertight
//!   kernel (Woop–Benthin–Wald 2013, [`ShearedRay`]): the shear of the ray is
//!   computed once per query, and each triangle is then tested with exactly
//!   the arithmetic of [`ray_triangle`](crate::shapes::ray_triangle), so the
//!   mesh's `t`, `u`, `v` are bit-identical to a brute-force loop over the
//!   triangles. Two triangles sharing an edge compute that edge's function
//!   from the same vertex values, so a ray through the edge hits at least one
//!   of them; the BVH's box test is conservative (widened by a few ulps, see
//!   [`crate::bvh`]), so no box around such a triangle is ever culled. That is
//!   what makes a closed mesh watertight.
//! * **Layout.** The BVH is built over one box per triangle with leaves of up
//!   to `BVH_OPTIONS.max_leaf` = 4 triangles. The three corners of the
//!   triangles of each leaf are copied into one block of four lanes stored as
//!   structure of arrays (144 bytes, unused lanes padding), blocks in the
//!   BVH's leaf order; the leaf's tag in the tree is its block's index. So a
//!   leaf is one contiguous read with no index indirection and one SIMD
//!   pre-test (`block.rs`), which runs the kernel's sign test on its triangles
//!   at once; only the triangles it keeps go through the scalar kernel. The
//!   original triangle index of lane `l` of block `b` is `ids[4·b + l]`, read
//!   only for a hit. Degenerate triangles (zero cross product,
//!   decided exactly) get an empty box and are never visited; the kernel
//!   would reject them anyway.
//! * **Ties.** When several triangles are hit at exactly the same `t` (a ray
//!   through a shared edge or vertex), `cast` reports the lowest triangle
//!   index, so the answer does not depend on the tree. `cast_all` merges hits
//!   at the same `t` on triangles that share a corner (a crossing through an
//!   edge or a vertex) into one, keeping the lowest index (DESIGN §5); equal-`t`
//!   hits on unconnected triangles (two surfaces touching) stay separate.

mod batch;
mod block;
#[cfg(feature = "load")]
mod load;
#[cfg(feature = "load")]
pub use load::{load, load_obj, load_ply, load_stl, LoadError, LoadErrorKind};

use crate::bvh::{BuildOptions, Bvh, Leaf, LeafRef, Order, MAX_TAG};
use crate::error::{finite_vec, or_panic};
use crate::shapes::{RayCast, ShearedRay, TriangleHit};
use crate::{Aabb, Hit, Interval, Part, Ray, ShapeError};
use block::{Block, Filter};
use glam::{DVec3, Vec2, Vec3, Vec3A};

/// The BVH parameters of every mesh: leaves of up to 4 triangles (one SIMD
/// pre-test block), and a node visit priced at 3 triangle tests. A leaf of 4
/// costs about what a leaf of 1 does, so fuller leaves pay: on the bunny this
/// gives 44 % fewer nodes than a cost of 1 (10,608 against 18,835) at the
/// same speed, measured.
pub const BVH_OPTIONS: BuildOptions = BuildOptions { max_leaf: 4, traversal_cost: 3.0 };

/// An indexed triangle mesh with a BVH, answering closest, any and all hits.
///
/// Triangles are two-sided unless back-face culling is on. A hit carries the
/// triangle index and the barycentrics `(u, v)` with
/// `point = (1-u-v)·a + u·b + v·c`; the normal is `normalize((b-a) × (c-a))`.
///
/// # Examples
/// ```
/// use raycast::{vec2, vec3, Interval, Ray, RayCast, TriMesh, Vec3};
/// // A unit square in z = 0 made of two triangles sharing the diagonal.
/// let square = TriMesh::new(
///     vec![Vec3::ZERO, Vec3::X, vec3(1.0, 1.0, 0.0), Vec3::Y],
///     vec![[0, 1, 2], [0, 2, 3]],
/// );
/// let down = Ray::new(vec3(0.25, 0.5, 2.0), vec3(0.0, 0.0, -1.0));
/// let hit = square.cast(&down, Interval::FORWARD).unwrap();
/// assert_eq!((hit.t, hit.triangle, hit.uv), (2.0, Some(1), Some(vec2(0.25, 0.25))));
/// assert!(hit.front_face && hit.normal == Vec3::Z);
/// // Through the shared diagonal: one crossing, reported once.
/// let diag = Ray::new(vec3(0.5, 0.5, 2.0), vec3(0.0, 0.0, -1.0));
/// assert_eq!(square.cast_all(&diag, Interval::FORWARD).len(), 1);
/// assert!(square.hits(&diag, Interval::FORWARD));
/// // Index out of range: refused.
/// assert!(TriMesh::try_new(vec![Vec3::ZERO], vec![[0, 0, 1]]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct TriMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    bvh: Bvh,
    /// Corners of the triangles, one block per BVH leaf (the leaf's tag is
    /// its block's index), in leaf order.
    blocks: Vec<Block>,
    /// Triangle index of each block lane (`4 · block + lane`); unused lanes
    /// hold `u32::MAX`.
    ids: Vec<u32>,
    cull_back_faces: bool,
}

impl TriMesh {
    /// A mesh from vertices and triangle indices; builds the BVH.
    ///
    /// Degenerate triangles are allowed (and never hit), and so is a mesh
    /// without triangles.
    ///
    /// # Errors
    /// [`ShapeError`] naming `vertices[i]` when a vertex is not finite, or
    /// `triangles[k]` when one of its indices is not below the vertex count.
    pub fn try_new(mut vertices: Vec<Vec3>, mut triangles: Vec<[u32; 3]>) -> Result<Self, ShapeError> {
        // The field name is formatted only for the vertex that fails: per
        // vertex it cost more than the rest of the validation.
        if let Some(i) = vertices.iter().position(|v| !v.is_finite()) {
            finite_vec(&format!("vertices[{i}]"), vertices[i])?;
        }
        let n = vertices.len();
        for (k, tri) in triangles.iter().enumerate() {
            if let Some(&i) = tri.iter().find(|&&i| i as usize >= n) {
                return Err(ShapeError::new(
                    format!("triangles[{k}]"),
                    format!("index {i} out of range for {n} vertices"),
                ));
            }
        }
        if triangles.len() > MAX_TAG as usize {
            return Err(ShapeError::new(
                "triangles",
                format!("{} triangles, more than the {MAX_TAG} a mesh holds", triangles.len()),
            ));
        }
        let corners = |t: &[u32; 3]| t.map(|i| vertices[i as usize]);
        let boxes: Vec<Aabb> = triangles
            .iter()
            .map(|t| {
                let [a, b, c] = corners(t);
                if is_degenerate(a, b, c) {
                    Aabb::EMPTY
                } else {
                    let (a, b, c) = (Vec3A::from(a), Vec3A::from(b), Vec3A::from(c));
                    Aabb::new(a.min(b).min(c).into(), a.max(b).max(c).into())
                }
            })
            .collect();
        let mut bvh = Bvh::build_with(&boxes, &BVH_OPTIONS);
        // One block per leaf (at most `max_leaf` = 4 triangles), padded: a
        // leaf is one pre-test and one contiguous 144-byte read, where packing
        // the leaves back to back made 59 % of the bunny's leaves straddle two
        // blocks. Costs 22 % more block memory on the bunny.
        let mut blocks = Vec::with_capacity(triangles.len() / 2);
        let mut ids = Vec::with_capacity(triangles.len() * 2);
        bvh.tag_leaves(|run| {
            let mut tris = [[Vec3::ZERO; 3]; 4];
            for (t, &k) in tris.iter_mut().zip(run) {
                *t = corners(&triangles[k as usize]);
            }
            blocks.push(Block::pack(&tris[..run.len()]));
            ids.extend_from_slice(run);
            ids.resize(4 * blocks.len(), u32::MAX);
            (blocks.len() - 1) as u32
        });
        let (blocks, ids) = (crate::pages::on_huge_pages(blocks), crate::pages::on_huge_pages(ids));
        // A loader's arrays usually come with spare capacity (the bunny's
        // OBJ: 5 bytes a triangle); a mesh keeps them for its lifetime.
        vertices.shrink_to_fit();
        triangles.shrink_to_fit();
        Ok(Self { vertices, triangles, bvh, blocks, ids, cull_back_faces: false })
    }

    /// Like [`TriMesh::try_new`].
    ///
    /// # Panics
    /// With the error's message on a non-finite vertex or an index out of range.
    #[track_caller]
    pub fn new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Self {
        or_panic(Self::try_new(vertices, triangles))
    }

    /// The same mesh with back-face culling on or off: with culling, a ray
    /// arriving from behind a triangle (`dir · ((b−a)×(c−a)) >= 0`) does not
    /// hit it.
    pub fn with_back_face_culling(mut self, cull: bool) -> Self {
        self.cull_back_faces = cull;
        self
    }

    /// Whether back faces are culled.
    pub fn cull_back_faces(&self) -> bool {
        self.cull_back_faces
    }

    /// The vertices.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// The triangles (indices into [`TriMesh::vertices`]).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The BVH over the triangles (item `k` is triangle `k`).
    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    /// The corners of triangle `k`.
    ///
    /// # Panics
    /// If `k` is out of range.
    pub fn triangle(&self, k: usize) -> [Vec3; 3] {
        self.triangles[k].map(|i| self.vertices[i as usize])
    }

    /// Bytes held by the mesh: vertices, indices, the BVH and the leaf-ordered
    /// corner copies. Divide by the triangle count for bytes per triangle.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.vertices.capacity() * std::mem::size_of::<Vec3>()
            + self.triangles.capacity() * std::mem::size_of::<[u32; 3]>()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.ids.capacity() * std::mem::size_of::<u32>()
            + self.bvh.memory_bytes()
    }

    /// Calls `f(slot, corners)` for every triangle of `leaf` that passes the
    /// SIMD pre-test (see `block.rs`), `slot` being `4 · block + lane` (its
    /// index in `ids`), until `f` returns true; returns whether it did.
    #[inline(always)]
    fn candidates(
        &self,
        filter: &Filter,
        leaf: LeafRef,
        mut f: impl FnMut(usize, [Vec3; 3]) -> bool,
    ) -> bool {
        let b = leaf.tag as usize;
        let block = &self.blocks[b];
        let lanes = (1u32 << leaf.count) - 1;
        let mut m = filter.test(block, lanes) & lanes;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            if f(4 * b + lane, block.corners(lane)) {
                return true;
            }
        }
        false
    }

    /// Prefetches the block of `leaf`.
    #[inline(always)]
    fn prefetch(&self, leaf: LeafRef) {
        block::prefetch(self.blocks.as_ptr().wrapping_add(leaf.tag as usize));
    }

    /// The nearest hit as (block slot, kernel answer); ties in `t` go to
    /// the lowest triangle index.
    #[inline]
    fn closest(&self, ray: &Ray, range: Interval) -> Option<(usize, TriangleHit)> {
        let mut walk = Closest::default();
        let prefetch = |leaf| self.prefetch(leaf);
        self.bvh.traverse_tagged(ray, range, Order::NearFirst, prefetch, |leaf, r| {
            self.closest_leaf(ray, leaf, r, &mut walk)
        });
        walk.best
    }

    /// The closest-hit test of one leaf for `ray` within `r`, updating the
    /// ray's `walk`.
    #[inline(always)]
    fn closest_leaf(&self, ray: &Ray, leaf: LeafRef, mut r: Interval, walk: &mut Closest) -> Leaf {
        let items = &self.ids;
        let cull = self.cull_back_faces;
        let (sr, filter) = prepared(&mut walk.prep, ray, cull);
        let best = &mut walk.best;
        let mut out = Leaf::Miss;
        self.candidates(filter, leaf, |p, [a, b, c]| {
            if let Some(h) = sr.intersect(a, b, c, r, cull) {
                let better = match *best {
                    Some((q, bh)) => h.t < bh.t || (h.t == bh.t && items[p] < items[q]),
                    None => true,
                };
                if better {
                    *best = Some((p, h));
                    r.max = h.t;
                    out = Leaf::Hit(h.t);
                }
            }
            false
        });
        out
    }

    /// The any-hit test of one leaf for `ray` within `r`: true when one of
    /// its triangles is hit.
    #[inline(always)]
    fn hits_leaf(
        &self,
        ray: &Ray,
        leaf: LeafRef,
        r: Interval,
        prep: &mut Option<(ShearedRay, Filter)>,
    ) -> bool {
        let cull = self.cull_back_faces;
        let (sr, filter) = prepared(prep, ray, cull);
        self.candidates(filter, leaf, |_, [a, b, c]| sr.intersect(a, b, c, r, cull).is_some())
    }

    /// The full hit of a closest-hit walk's answer.
    #[inline]
    fn hit_of(&self, ray: &Ray, (p, h): (usize, TriangleHit)) -> Hit {
        let [a, b, c] = self.blocks[p / 4].corners(p % 4); // already in cache
        hit_from(ray, a, b, c, self.ids[p], h)
    }

    /// Every hit as (original triangle index, kernel answer), unsorted.
    fn all(&self, ray: &Ray, range: Interval) -> Vec<(u32, TriangleHit)> {
        let Some(sr) = ShearedRay::new(ray) else { return Vec::new() };
        let filter = Filter::new(&sr, self.cull_back_faces);
        let items = &self.ids;
        let mut out = Vec::new();
        self.bvh.traverse_tagged(
            ray,
            range,
            Order::Any,
            |_| {},
            |leaf, r| {
                self.candidates(&filter, leaf, |p, [a, b, c]| {
                    if let Some(h) = sr.intersect(a, b, c, r, self.cull_back_faces) {
                        out.push((items[p], h));
                    }
                    false
                });
                Leaf::Miss
            },
        );
        out
    }

    /// The full [`Hit`] for triangle `k` from the kernel's answer.
    fn hit(&self, ray: &Ray, k: u32, h: TriangleHit) -> Hit {
        let [a, b, c] = self.triangle(k as usize);
        hit_from(ray, a, b, c, k, h)
    }
}

/// One ray's closest-hit walk in progress: the kernel's per-ray constants
/// (made at the first leaf: most rays that miss the mesh never reach one)
/// and the best hit so far as (block slot, kernel answer).
#[derive(Clone, Copy, Default)]
struct Closest {
    prep: Option<(ShearedRay, Filter)>,
    best: Option<(usize, TriangleHit)>,
}

/// The kernel's constants for `ray`, made on first use and kept in `prep`,
/// lent in place (a copy per leaf moved 140 bytes). The walks only reach a
/// leaf with a valid ray, which is all the shear needs.
#[inline(always)]
fn prepared<'p>(
    prep: &'p mut Option<(ShearedRay, Filter)>,
    ray: &Ray,
    cull: bool,
) -> &'p (ShearedRay, Filter) {
    prep.get_or_insert_with(|| {
        let sr = ShearedRay::new_unchecked(ray);
        (sr, Filter::new(&sr, cull))
    })
}

/// True when `(b − a) × (c − a)` is exactly zero. The differences are exact
/// in `f64` and so are their products (≤ 50 bits), so each component is one
/// rounding of an exact difference: zero exactly when the exact one is.
fn is_degenerate(a: Vec3, b: Vec3, c: Vec3) -> bool {
    let a = a.as_dvec3();
    (b.as_dvec3() - a).cross(c.as_dvec3() - a) == DVec3::ZERO
}

/// The [`Hit`] of triangle `k` (`a b c`) from the kernel's answer. The normal
/// and the point are computed in `f64` (exact differences, one rounding per
/// product), as for [`crate::Triangle`].
fn hit_from(ray: &Ray, a: Vec3, b: Vec3, c: Vec3, k: u32, h: TriangleHit) -> Hit {
    let (da, db, dc) = (a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
    let n = (db - da).cross(dc - da);
    // A triangle that passed the kernel has det != 0, hence n != 0; the
    // fallback only guards a cross product that underflowed to zero.
    let normal = n.try_normalize().map_or(Vec3::Z, |n| n.as_vec3());
    let (u, v) = (f64::from(h.u), f64::from(h.v));
    let point = (da * (1.0 - u - v) + db * u + dc * v).as_vec3();
    Hit {
        uv: Some(Vec2::new(h.u, h.v)),
        triangle: Some(k),
        front_face: h.front_face,
        ..Hit::with_point(ray, h.t, point, normal, Part::Face)
    }
}

impl RayCast for TriMesh {
    /// The nearest hit; on an exact tie in `t` the lowest triangle index.
    fn cast(&self, ray: &Ray, range: Interval) -> Option<Hit> {
        self.closest(ray, range).map(|c| self.hit_of(ray, c))
    }

    /// Whether any triangle is hit in `range`: stops at the first hit found.
    /// Boxes are visited in tree order, unsorted: nearer-first order reaches
    /// a hit after ~6 % fewer node visits on incoherent bunny rays, but the
    /// sort costs more than it saves (stop 23, paired runs: tree order
    /// 1.07–1.10× on the bunny's incoherent rays, 1.17–1.47× on camera rays,
    /// 1.07× / 1.03× on the 1.1M-triangle bunny), as in the scenes.
    fn hits(&self, ray: &Ray, range: Interval) -> bool {
        let mut prep = None;
        let mut found = false;
        let prefetch = |leaf| self.prefetch(leaf);
        self.bvh.traverse_tagged(ray, range, Order::Any, prefetch, |leaf, r| {
            found = self.hits_leaf(ray, leaf, r, &mut prep);
            if found {
                Leaf::Stop
            } else {
                Leaf::Miss
            }
        });
        found
    }

    /// Every crossing, sorted by `t`; hits at the same `t` on triangles that
    /// share a corner (a ray through an edge or vertex) are one crossing,
    /// reported with the lowest triangle index.
    fn cast_all(&self, ray: &Ray, range: Interval) -> Vec<Hit> {
        let mut all = self.all(ray, range);
        all.sort_unstable_by(|x, y| x.1.t.total_cmp(&y.1.t).then(x.0.cmp(&y.0)));
        let mut out: Vec<Hit> = Vec::with_capacity(all.len());
        let mut group = 0; // start of the run of hits at out.last()'s t
        for (i, &(k, h)) in all.iter().enumerate() {
            if i > 0 && all[i - 1].1.t != h.t {
                group = i;
            }
            // Merge into an earlier kept hit of this `t` that shares a corner
            // (directly or through other triangles of the run, in index order).
            let merged = all[group..i].iter().any(|&(j, _)| self.share_corner(j, k));
            if !merged {
                out.push(self.hit(ray, k, h));
            }
        }
        out
    }

    fn local_bounds(&self) -> Aabb {
        self.bvh.bounds()
    }
}

impl TriMesh {
    /// True when triangles `j` and `k` have a corner at the same position.
    fn share_corner(&self, j: u32, k: u32) -> bool {
        let (a, b) = (self.triangle(j as usize), self.triangle(k as usize));
        a.iter().any(|p| b.contains(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::ray_triangle;
    use glam::vec3;

    /// A closed octahedron (8 faces, outward winding).
    fn octahedron() -> TriMesh {
        let v = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let t = vec![[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]];
        TriMesh::new(v, t)
    }

    #[test]
    fn errors_name_the_field() {
        let e = TriMesh::try_new(vec![Vec3::ZERO, vec3(0.0, f32::NAN, 0.0)], vec![]).unwrap_err();
        assert_eq!(e.field, "vertices[1]");
        let e = TriMesh::try_new(vec![Vec3::ZERO; 3], vec![[0, 1, 2], [2, 7, 0]]).unwrap_err();
        assert_eq!(e.field, "triangles[1]");
        assert_eq!(e.to_string(), "triangles[1] index 7 out of range for 3 vertices");
        let r = std::panic::catch_unwind(|| TriMesh::new(vec![], vec![[0, 0, 0]]));
        assert!(r.is_err());
    }

    #[test]
    fn empty_and_degenerate_meshes() {
        let empty = TriMesh::new(vec![], vec![]);
        let ray = Ray::new(Vec3::ZERO, Vec3::X);
        assert!(empty.cast(&ray, Interval::ALL).is_none());
        assert!(!empty.hits(&ray, Interval::ALL));
        assert!(empty.cast_all(&ray, Interval::ALL).is_empty());
        assert!(empty.local_bounds().is_empty());
        // A sliver and a point: never hit.
        let m = TriMesh::new(vec![Vec3::ZERO, Vec3::X, 2.0 * Vec3::X], vec![[0, 1, 2], [1, 1, 1]]);
        m.bvh().validate(&[Aabb::EMPTY, Aabb::EMPTY]).unwrap();
        let r = Ray::new(vec3(0.5, 0.0, -1.0), Vec3::Z);
        assert!(m.cast(&r, Interval::ALL).is_none() && m.cast_all(&r, Interval::ALL).is_empty());
    }

    #[test]
    fn closed_solid_answers() {
        let m = octahedron();
        let ray = Ray::new(vec3(0.1, 0.2, -5.0), Vec3::Z);
        let all = m.cast_all(&ray, Interval::FORWARD);
        assert_eq!(all.len(), 2);
        assert!(all[0].front_face && !all[1].front_face);
        let first = m.cast(&ray, Interval::FORWARD).unwrap();
        assert_eq!(first, all[0]);
        assert!((first.point - ray.at(first.t)).length() < 1e-6);
        let [a, b, c] = m.triangle(first.triangle.unwrap() as usize);
        let (u, v) = (first.uv.unwrap().x, first.uv.unwrap().y);
        assert!(((1.0 - u - v) * a + u * b + v * c - first.point).length() < 1e-6);
        // Inclusive ends, empty range, culling.
        assert!(m.hits(&ray, Interval::new(0.0, first.t)));
        assert!(!m.hits(&ray, Interval::new(0.0, first.t * 0.999)));
        assert!(!m.hits(&ray, Interval::new(3.0, 2.0)));
        let culled = m.clone().with_back_face_culling(true);
        assert_eq!(culled.cast_all(&ray, Interval::FORWARD).len(), 1);
        // Along the z axis through the two apexes: one crossing at each.
        let axis = Ray::new(vec3(0.0, 0.0, -5.0), Vec3::Z);
        let all = m.cast_all(&axis, Interval::FORWARD);
        assert_eq!(all.iter().map(|h| h.t).collect::<Vec<_>>(), [4.0, 6.0]);
        assert_eq!(all.iter().map(|h| h.triangle.unwrap()).collect::<Vec<_>>(), [4, 0]);
        assert_eq!(m.cast(&axis, Interval::FORWARD).unwrap().triangle, Some(4));
    }

    #[test]
    fn degenerate_rays_never_panic() {
        let m = octahedron();
        for ray in [
            Ray::new(Vec3::ZERO, Vec3::ZERO),
            Ray::new(Vec3::NAN, Vec3::X),
            Ray::new(Vec3::ZERO, vec3(f32::INFINITY, 0.0, 0.0)),
        ] {
            assert!(m.cast(&ray, Interval::ALL).is_none());
            assert!(!m.hits(&ray, Interval::ALL));
            assert!(m.cast_all(&ray, Interval::ALL).is_empty());
        }
        let ray = Ray::new(vec3(0.0, 0.0, -5.0), Vec3::Z);
        assert!(m.cast(&ray, Interval::new(f32::NAN, 1.0)).is_none());
    }

    #[test]
    fn mesh_equals_the_kernel_bit_for_bit() {
        let m = octahedron();
        let mut s = 0x1234_5678u32;
        let mut f = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32 * 4.0 - 2.0
        };
        for _ in 0..2000 {
            let ray = Ray::new(vec3(f(), f(), f()) * 3.0, vec3(f(), f(), f()));
            let brute = (0..8u32)
                .filter_map(|k| {
                    let [a, b, c] = m.triangle(k as usize);
                    ray_triangle(&ray, a, b, c, Interval::ALL, false).map(|h| (h.t, k, h))
                })
                .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            let got = m.cast(&ray, Interval::ALL);
            assert_eq!(
                got.map(|h| (h.t, h.triangle.unwrap(), h.uv.unwrap())),
                brute.map(|(t, k, h)| (t, k, Vec2::new(h.u, h.v)))
            );
        }
    }
}
