//! Batches: many rays against one mesh, in parallel with rayon when the
//! `parallel` feature is on (the default), sequentially otherwise.
//!
//! Rays are handed out in runs of 64, one parallel task each (see
//! `crate::batch`). Within a run, when the mesh's tree is too large for a
//! core's own caches (≥ 2 MiB of nodes, ~100,000 triangles) and the rays
//! are not coherent (a camera's neighbouring pixels are), the rays walk the
//! tree together, eight at a time (`bvh::interleave`), so that one ray's
//! wait for a node or a triangle block from memory overlaps with the other
//! rays' work: on the 1.1M-triangle bunny, incoherent rays run ~1.5× faster
//! than one by one. Otherwise the rays are walked one by one. Either way
//! every ray takes exactly the steps of [`RayCast::cast`] /
//! [`RayCast::hits`], so a batch returns exactly the single-ray answers,
//! each at its ray's position.

use super::{Closest, TriMesh};
use crate::bvh::{Leaf, Order};
use crate::shapes::RayCast;
use crate::{Hit, Interval, Ray};

impl TriMesh {
    /// [`RayCast::cast`] for every ray, in order. In parallel on rayon's
    /// current pool (the global one unless called inside
    /// [`ThreadPool::install`](rayon::ThreadPool::install); see
    /// [`TriMesh::cast_batch_in`]).
    ///
    /// # Examples
    /// ```
    /// use raycast::{vec3, Interval, Ray, RayCast, TriMesh};
    /// let quad = TriMesh::new(
    ///     vec![vec3(-1.0, -1.0, 0.0), vec3(1.0, -1.0, 0.0), vec3(1.0, 1.0, 0.0), vec3(-1.0, 1.0, 0.0)],
    ///     vec![[0, 1, 2], [0, 2, 3]],
    /// );
    /// let rays: Vec<Ray> = (0..100).map(|i| Ray::new(vec3(i as f32 * 0.05 - 2.5, 0.1, 3.0), vec3(0.0, 0.0, -1.0))).collect();
    /// let hits = quad.cast_batch(&rays, Interval::FORWARD);
    /// assert_eq!(hits.iter().filter(|h| h.is_some()).count(), 41);
    /// assert_eq!(hits[50], quad.cast(&rays[50], Interval::FORWARD));
    /// ```
    pub fn cast_batch(&self, rays: &[Ray], range: Interval) -> Vec<Option<Hit>> {
        let mut out = Vec::new();
        self.cast_batch_into(rays, range, &mut out);
        out
    }

    /// [`TriMesh::cast_batch`] into `out`, which ends up with one answer per
    /// ray: reusing one buffer from batch to batch (a lidar's scans, a
    /// camera's frames) saves allocating and first touching it every time
    /// (80 bytes per ray).
    ///
    /// # Examples
    /// ```
    /// use raycast::{vec3, Interval, Ray, TriMesh};
    /// let tri = TriMesh::new(vec![vec3(0.0, 0.0, 0.0), vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0)], vec![[0, 1, 2]]);
    /// let mut hits = Vec::new();
    /// for scan in 0..3 {
    ///     let rays: Vec<Ray> = (0..10).map(|i| Ray::new(vec3(0.1 * i as f32, 0.2, 1.0 + scan as f32), vec3(0.0, 0.0, -1.0))).collect();
    ///     tri.cast_batch_into(&rays, Interval::FORWARD, &mut hits);
    ///     assert_eq!(hits.iter().filter(|h| h.is_some()).count(), 8); // x = 0.0 ..= 0.7
    ///     assert_eq!(hits[0].unwrap().t, 1.0 + scan as f32);
    /// }
    /// ```
    pub fn cast_batch_into(&self, rays: &[Ray], range: Interval, out: &mut Vec<Option<Hit>>) {
        crate::batch::in_runs(rays, out, None, |rays, out| self.cast_into(rays, range, out));
    }

    /// [`RayCast::hits`] for every ray, in order; in parallel like
    /// [`TriMesh::cast_batch`].
    pub fn hits_batch(&self, rays: &[Ray], range: Interval) -> Vec<bool> {
        let mut out = Vec::new();
        self.hits_batch_into(rays, range, &mut out);
        out
    }

    /// [`TriMesh::hits_batch`] into `out` (see [`TriMesh::cast_batch_into`]).
    pub fn hits_batch_into(&self, rays: &[Ray], range: Interval, out: &mut Vec<bool>) {
        crate::batch::in_runs(rays, out, false, |rays, out| self.hits_into(rays, range, out));
    }

    /// [`TriMesh::cast_batch`] on the threads of `pool` (this is how the
    /// number of threads is chosen).
    #[cfg(feature = "parallel")]
    pub fn cast_batch_in(&self, pool: &rayon::ThreadPool, rays: &[Ray], range: Interval) -> Vec<Option<Hit>> {
        pool.install(|| self.cast_batch(rays, range))
    }

    /// [`TriMesh::hits_batch`] on the threads of `pool`.
    #[cfg(feature = "parallel")]
    pub fn hits_batch_in(&self, pool: &rayon::ThreadPool, rays: &[Ray], range: Interval) -> Vec<bool> {
        pool.install(|| self.hits_batch(rays, range))
    }

    /// One run of [`TriMesh::cast_batch`].
    fn cast_into(&self, rays: &[Ray], range: Interval, out: &mut [Option<Hit>]) {
        if self.bvh.interleaving_pays(rays) {
            self.cast_interleaved(rays, range, out);
        } else {
            for (ray, o) in rays.iter().zip(out) {
                *o = self.cast(ray, range);
            }
        }
    }

    /// One run of [`TriMesh::hits_batch`].
    fn hits_into(&self, rays: &[Ray], range: Interval, out: &mut [bool]) {
        if self.bvh.interleaving_pays(rays) {
            self.hits_interleaved(rays, range, out);
        } else {
            for (ray, o) in rays.iter().zip(out) {
                *o = self.hits(ray, range);
            }
        }
    }

    /// The interleaved walk of [`TriMesh::cast_into`], whatever the tree's
    /// size.
    fn cast_interleaved(&self, rays: &[Ray], range: Interval, out: &mut [Option<Hit>]) {
        let mut walks = vec![Closest::default(); rays.len()];
        self.bvh.traverse_interleaved(
            rays.len(),
            Order::NearFirst,
            |i| (rays[i], range),
            |leaf| self.prefetch(leaf),
            |i, leaf, r| self.closest_leaf(&rays[i], leaf, r, &mut walks[i]),
        );
        for ((o, walk), ray) in out.iter_mut().zip(walks).zip(rays) {
            *o = walk.best.map(|c| self.hit_of(ray, c));
        }
    }

    /// The interleaved walk of [`TriMesh::hits_into`], whatever the tree's
    /// size.
    fn hits_interleaved(&self, rays: &[Ray], range: Interval, out: &mut [bool]) {
        let mut preps = vec![None; rays.len()];
        out.fill(false);
        self.bvh.traverse_interleaved(
            rays.len(),
            Order::Any,
            |i| (rays[i], range),
            |leaf| self.prefetch(leaf),
            |i, leaf, r| {
                let hit = self.hits_leaf(&rays[i], leaf, r, &mut preps[i]);
                out[i] = hit;
                if hit {
                    Leaf::Stop
                } else {
                    Leaf::Miss
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{vec3, Vec3};

    /// A closed, bumpy sphere (a UV sphere with a wavy radius).
    fn blob(n: usize) -> TriMesh {
        let mut vertices = Vec::new();
        for i in 0..=n {
            for j in 0..2 * n {
                let (th, ph) =
                    (std::f32::consts::PI * i as f32 / n as f32, std::f32::consts::PI * j as f32 / n as f32);
                let r = 1.0 + 0.2 * (3.0 * th).sin() * (5.0 * ph).cos();
                vertices.push(vec3(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin()) * r);
            }
        }
        let at = |i: usize, j: usize| (i * 2 * n + j % (2 * n)) as u32;
        let mut triangles = Vec::new();
        for i in 0..n {
            for j in 0..2 * n {
                triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
        TriMesh::new(vertices, triangles)
    }

    #[test]
    fn batches_equal_single_rays_in_order() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut f = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        for mesh in [blob(40), blob(40).with_back_face_culling(true)] {
            let mut rays: Vec<Ray> =
                (0..1500).map(|_| Ray::new(vec3(f(), f(), f()) * 2.0, vec3(f(), f(), f()))).collect();
            rays[3] = Ray::new(Vec3::ZERO, Vec3::ZERO);
            rays[4] = Ray::new(Vec3::INFINITY, Vec3::X);
            for range in [Interval::FORWARD, Interval::new(0.5, 1.5), Interval::new(2.0, 1.0)] {
                let (c, h) = (mesh.cast_batch(&rays, range), mesh.hits_batch(&rays, range));
                // A reused buffer of another length, or of the same with stale answers.
                let (mut ci, mut hi) = (vec![None; 7], vec![true; rays.len()]);
                mesh.cast_batch_into(&rays, range, &mut ci);
                mesh.hits_batch_into(&rays, range, &mut hi);
                assert_eq!((&ci, &hi), (&c, &h));
                // The blob's tree is small, so the batches walk ray by ray;
                // the interleaved walk of large trees is checked too.
                let (mut ci, mut hi) = (vec![None; rays.len()], vec![true; rays.len()]);
                mesh.cast_interleaved(&rays, range, &mut ci);
                mesh.hits_interleaved(&rays, range, &mut hi);
                for (i, r) in rays.iter().enumerate() {
                    let (cast, hits) = (mesh.cast(r, range), mesh.hits(r, range));
                    assert_eq!((c[i], ci[i]), (cast, cast), "ray {i}");
                    assert_eq!((h[i], hi[i]), (hits, hits), "ray {i}");
                }
                if !range.is_empty() {
                    let n = c.iter().filter(|h| h.is_some()).count();
                    assert!(n > 50 && n < 1400, "{n}");
                }
            }
        }
    }
}
