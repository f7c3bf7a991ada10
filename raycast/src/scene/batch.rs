//! Batches: many rays against one scene, in parallel with rayon when the
//! `parallel` feature is on (the default), sequentially otherwise.
//!
//! Rays are handed out in runs of 64, one parallel task each (see
//! `crate::batch`). Within a run, when the scene's tree is too large for a
//! core's own caches (≥ 2 MiB of nodes, ~50,000 objects) and the rays are
//! not coherent (a camera's neighbouring pixels are), the rays walk the tree
//! together, eight at a time (`bvh::interleave`): while one ray waits for a
//! node to arrive from memory the others advance, which makes a batch on one
//! thread ~1.3× faster than the same rays cast one by one on a
//! 100,000-object scene. Otherwise the rays are walked one by one. Either
//! way each ray takes exactly the steps of the single-ray query, which is
//! deterministic and reads the scene only, so a batch returns exactly the
//! single-ray answers, each written to its own position in input order.

use super::{Filter, Scene};
use crate::{Hit, Interval, Ray};

impl Scene {
    /// [`Scene::cast`] for every ray, in order. In parallel on rayon's
    /// current pool (the global one unless called inside
    /// [`ThreadPool::install`](rayon::ThreadPool::install); see
    /// [`Scene::cast_batch_in`]).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Filter, Scene, SceneObject};
    /// use raycast::{vec3, Interval, Ray, Sphere};
    /// let scene = Scene::from_objects([SceneObject::local(Sphere::new(1.0), 1)]);
    /// let rays: Vec<Ray> = (0..1000).map(|i| Ray::new(vec3(i as f32 * 0.002, 0.0, -5.0), vec3(0.0, 0.0, 1.0))).collect();
    /// let hits = scene.cast_batch(&rays, Interval::FORWARD, &Filter::default());
    /// assert_eq!(hits.len(), 1000);
    /// assert!(hits[..500].iter().all(Option::is_some) && hits[501..].iter().all(Option::is_none));
    /// assert_eq!(hits[7], scene.cast(&rays[7], Interval::FORWARD, &Filter::default()));
    /// ```
    pub fn cast_batch(&self, rays: &[Ray], range: Interval, filter: &Filter) -> Vec<Option<Hit>> {
        let mut out = Vec::new();
        self.cast_batch_into(rays, range, filter, &mut out);
        out
    }

    /// [`Scene::cast_batch`] into `out`, which ends up with one answer per
    /// ray: reusing one buffer from batch to batch (a lidar's scans, a
    /// camera's frames) saves allocating and first touching it every time
    /// (80 bytes per ray).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{Filter, Scene, SceneObject};
    /// use raycast::{vec3, Interval, Ray, Sphere};
    /// let scene = Scene::from_objects([SceneObject::local(Sphere::new(1.0), 1)]);
    /// let mut hits = Vec::new();
    /// for frame in 0..3 {
    ///     let x = frame as f32;
    ///     let rays = [Ray::new(vec3(x, 0.0, -5.0), vec3(0.0, 0.0, 1.0)), Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, -1.0))];
    ///     scene.cast_batch_into(&rays, Interval::FORWARD, &Filter::default(), &mut hits);
    ///     assert_eq!(hits.len(), 2);
    ///     assert_eq!(hits[0].is_some(), frame < 2); // x = 2 passes beside the sphere
    ///     assert!(hits[1].is_none());
    /// }
    /// ```
    pub fn cast_batch_into(
        &self,
        rays: &[Ray],
        range: Interval,
        filter: &Filter,
        out: &mut Vec<Option<Hit>>,
    ) {
        crate::batch::in_runs(rays, out, None, |rays, out| self.cast_into(rays, range, filter, out));
    }

    /// [`Scene::hits`] for every ray, in order; in parallel like
    /// [`Scene::cast_batch`].
    pub fn hits_batch(&self, rays: &[Ray], range: Interval, filter: &Filter) -> Vec<bool> {
        let mut out = Vec::new();
        self.hits_batch_into(rays, range, filter, &mut out);
        out
    }

    /// [`Scene::hits_batch`] into `out` (see [`Scene::cast_batch_into`]).
    pub fn hits_batch_into(&self, rays: &[Ray], range: Interval, filter: &Filter, out: &mut Vec<bool>) {
        crate::batch::in_runs(rays, out, false, |rays, out| self.hits_into(rays, range, filter, out));
    }

    /// [`Scene::cast_batch`] on the threads of `pool` (this is how the number
    /// of threads is chosen).
    ///
    /// # Examples
    /// ```
    /// use raycast::scene::{rayon, Filter, Scene, SceneObject};
    /// use raycast::{vec3, Interval, Ray, Sphere};
    /// let scene = Scene::from_objects([SceneObject::local(Sphere::new(1.0), 1)]);
    /// let rays = vec![Ray::new(vec3(0.0, 0.0, -5.0), vec3(0.0, 0.0, 1.0)); 256];
    /// let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let hits = scene.cast_batch_in(&two, &rays, Interval::FORWARD, &Filter::default());
    /// assert!(hits.iter().all(|h| h.unwrap().t == 4.0));
    /// ```
    #[cfg(feature = "parallel")]
    pub fn cast_batch_in(
        &self,
        pool: &rayon::ThreadPool,
        rays: &[Ray],
        range: Interval,
        filter: &Filter,
    ) -> Vec<Option<Hit>> {
        pool.install(|| self.cast_batch(rays, range, filter))
    }

    /// [`Scene::hits_batch`] on the threads of `pool`.
    #[cfg(feature = "parallel")]
    pub fn hits_batch_in(
        &self,
        pool: &rayon::ThreadPool,
        rays: &[Ray],
        range: Interval,
        filter: &Filter,
    ) -> Vec<bool> {
        pool.install(|| self.hits_batch(rays, range, filter))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SceneObject, Verdict};
    use super::*;
    use crate::{vec3, Affine3A, Capsule, Plane, Vec3};

    #[test]
    fn batches_equal_single_rays_in_order() {
        let mut scene = Scene::from_objects((0..200).map(|i| {
            let p = vec3((i % 10) as f32, (i / 10 % 5) as f32, (i / 50) as f32) * 3.0;
            SceneObject::new(
                Capsule::new(Vec3::ZERO, vec3(0.5, 1.0, 0.2), 0.6),
                Affine3A::from_translation(p),
                i,
            )
        }));
        // A plane (always on a side list) and a moved object (on the moved
        // list until a refit): the side lists run before the tree walk.
        scene.insert(SceneObject::local(Plane::new(vec3(0.0, 1.0, 0.0), vec3(0.0, -2.0, 0.0)), 1000));
        let key = scene.iter().find(|(_, o)| o.id == 7).unwrap().0;
        scene.set_transform(key, Affine3A::from_translation(vec3(6.0, 9.0, 1.0))).unwrap();
        let mut rays: Vec<Ray> = (0..3000)
            .map(|i| {
                let a = i as f32 * 0.618;
                Ray::new(vec3(-5.0, 6.0, -5.0), vec3(a.cos() + 1.5, (a * 1.3).sin(), a.sin() + 1.2))
            })
            .collect();
        rays[10] = Ray::new(Vec3::ZERO, Vec3::ZERO);
        rays[11] = Ray::new(Vec3::NAN, Vec3::X);
        let odd = |id: u32| if id % 2 == 1 { Verdict::Accept } else { Verdict::Ignore };
        let walls = |id: u32| if id % 7 == 3 { Verdict::Stop } else { Verdict::Accept };
        let filters = [
            Filter::default(),
            Filter::default().with_predicate(&odd),
            Filter::default().with_predicate(&walls),
            Filter::default().excluding(&[1000, 7]),
        ];
        for f in filters {
            for range in [Interval::FORWARD, Interval::new(2.0, 9.0), Interval::new(3.0, 1.0)] {
                let c = scene.cast_batch(&rays, range, &f);
                let h = scene.hits_batch(&rays, range, &f);
                // A reused buffer of another length, or of the same with stale answers.
                let (mut cb, mut hb) = (vec![None; 7], vec![true; rays.len()]);
                scene.cast_batch_into(&rays, range, &f, &mut cb);
                scene.hits_batch_into(&rays, range, &f, &mut hb);
                assert_eq!((&cb, &hb), (&c, &h));
                assert_eq!((c.len(), h.len()), (rays.len(), rays.len()));
                // This tree is small, so the batches walk the rays one by
                // one; the interleaved walk of large trees is checked too.
                let mut ci = vec![None; rays.len()];
                let mut hi = vec![false; rays.len()];
                scene.cast_interleaved(&rays, range, &f, &mut ci);
                scene.hits_interleaved(&rays, range, &f, &mut hi);
                for (i, r) in rays.iter().enumerate() {
                    let (cast, hits) = (scene.cast(r, range, &f), scene.hits(r, range, &f));
                    assert_eq!((c[i], ci[i]), (cast, cast), "ray {i}");
                    assert_eq!((h[i], hi[i]), (hits, hits), "ray {i}");
                }
                if !range.is_empty() {
                    assert!(c.iter().filter(|h| h.is_some()).count() > 100);
                    assert!(h.iter().any(|&h| !h));
                }
            }
        }
        assert!(scene.cast_batch(&[], Interval::FORWARD, &Filter::default()).is_empty());
    }
}
