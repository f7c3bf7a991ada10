//! Batches: many rays against one scene, in parallel with rayon when the
//! `parallel` feature is on (the default), sequentially otherwise.
//!
//! Each ray is answered by the single-ray query itself, which is
//! deterministic and reads the scene only, so a batch returns exactly the
//! single-ray answers, in input order (rayon's indexed `collect` writes every
//! result to its own position). Rays are handed out in runs of at least
//! [`MIN_RUN`] so that the work-stealing overhead (~1 µs per split) stays
//! small against the rays' cost (~0.1–1 µs each).

use super::{Filter, Scene};
use crate::{Hit, Interval, Ray};

/// Fewest rays per parallel task.
#[cfg(feature = "parallel")]
const MIN_RUN: usize = 64;

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
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            rays.par_iter().with_min_len(MIN_RUN).map(|r| self.cast(r, range, filter)).collect()
        }
        #[cfg(not(feature = "parallel"))]
        {
            rays.iter().map(|r| self.cast(r, range, filter)).collect()
        }
    }

    /// [`Scene::hits`] for every ray, in order; in parallel like
    /// [`Scene::cast_batch`].
    pub fn hits_batch(&self, rays: &[Ray], range: Interval, filter: &Filter) -> Vec<bool> {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            rays.par_iter().with_min_len(MIN_RUN).map(|r| self.hits(r, range, filter)).collect()
        }
        #[cfg(not(feature = "parallel"))]
        {
            rays.iter().map(|r| self.hits(r, range, filter)).collect()
        }
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
    use crate::{vec3, Affine3A, Capsule, Vec3};

    #[test]
    fn batches_equal_single_rays_in_order() {
        let scene = Scene::from_objects((0..200).map(|i| {
            let p = vec3((i % 10) as f32, (i / 10 % 5) as f32, (i / 50) as f32) * 3.0;
            SceneObject::new(
                Capsule::new(Vec3::ZERO, vec3(0.5, 1.0, 0.2), 0.6),
                Affine3A::from_translation(p),
                i,
            )
        }));
        let rays: Vec<Ray> = (0..3000)
            .map(|i| {
                let a = i as f32 * 0.618;
                Ray::new(vec3(-5.0, 6.0, -5.0), vec3(a.cos() + 1.5, (a * 1.3).sin(), a.sin() + 1.2))
            })
            .collect();
        let odd = |id: u32| if id % 2 == 1 { Verdict::Accept } else { Verdict::Ignore };
        for f in [Filter::default(), Filter::default().with_predicate(&odd)] {
            let c = scene.cast_batch(&rays, Interval::FORWARD, &f);
            let h = scene.hits_batch(&rays, Interval::FORWARD, &f);
            for (i, r) in rays.iter().enumerate() {
                assert_eq!(c[i], scene.cast(r, Interval::FORWARD, &f));
                assert_eq!(h[i], scene.hits(r, Interval::FORWARD, &f));
            }
            assert!(c.iter().filter(|h| h.is_some()).count() > 100);
        }
    }
}
