//! Batches: many rays against one voxel volume, in parallel with rayon when
//! the `parallel` feature is on (the default), in order otherwise: what a
//! lidar's scan or a camera's frame asks.
//!
//! Rays are handed out in runs of 64, one parallel task each (see
//! `crate::batch`), and cast one by one: every answer is exactly
//! [`RayCast::cast`]'s for its ray, at its ray's position.
//!
//! (Tried at stop 34 and dropped: walking eight rays at once in the lanes
//! of AVX-512 registers, a lane that finishes taking the next ray, so that
//! the loops' exits become masks. It gave the same answers but was 1.4–1.6×
//! slower than one by one on the terrain; see the README.)

use super::{ChunkedVoxels, VoxelVolume};
use crate::shapes::RayCast;
use crate::{Hit, Interval, Ray};

macro_rules! voxel_batches {
    ($ty:ty, $example:literal) => {
        impl $ty {
            /// [`RayCast::cast`] for every ray, in order. In parallel on
            /// rayon's current pool (the global one unless called inside
            /// [`ThreadPool::install`](rayon::ThreadPool::install)).
            ///
            /// # Examples
            /// ```
            #[doc = $example]
            /// let rays: Vec<Ray> = (0..8).map(|i| Ray::new(vec3(i as f32 + 0.5, 0.5, -5.0), Vec3::Z)).collect();
            /// let hits = v.cast_batch(&rays, Interval::FORWARD);
            /// assert_eq!(hits[3].unwrap().cell, Some(ivec3(3, 0, 0)));
            /// assert_eq!(hits[3].unwrap().t, 5.0);
            /// assert!(hits[4].is_none());
            /// assert_eq!(hits[2], v.cast(&rays[2], Interval::FORWARD));
            /// ```
            pub fn cast_batch(&self, rays: &[Ray], range: Interval) -> Vec<Option<Hit>> {
                let mut out = Vec::new();
                self.cast_batch_into(rays, range, &mut out);
                out
            }

            /// [`Self::cast_batch`] into `out`, which ends up with one
            /// answer per ray: reusing one buffer from batch to batch (a
            /// lidar's scans) saves allocating and first touching it.
            pub fn cast_batch_into(&self, rays: &[Ray], range: Interval, out: &mut Vec<Option<Hit>>) {
                crate::batch::in_runs(rays, out, None, |rays, out| cast_run(self, rays, range, out));
            }

            /// [`RayCast::hits`] for every ray, in order; in parallel like
            /// [`Self::cast_batch`].
            pub fn hits_batch(&self, rays: &[Ray], range: Interval) -> Vec<bool> {
                let mut out = Vec::new();
                self.hits_batch_into(rays, range, &mut out);
                out
            }

            /// [`Self::hits_batch`] into `out` (see [`Self::cast_batch_into`]).
            pub fn hits_batch_into(&self, rays: &[Ray], range: Interval, out: &mut Vec<bool>) {
                crate::batch::in_runs(rays, out, false, |rays, out| {
                    for (ray, o) in rays.iter().zip(out) {
                        *o = self.hits(ray, range);
                    }
                });
            }

            /// [`Self::cast_batch`] on the threads of `pool` (this is how
            /// the number of threads is chosen).
            #[cfg(feature = "parallel")]
            pub fn cast_batch_in(
                &self,
                pool: &rayon::ThreadPool,
                rays: &[Ray],
                range: Interval,
            ) -> Vec<Option<Hit>> {
                pool.install(|| self.cast_batch(rays, range))
            }

            /// [`Self::hits_batch`] on the threads of `pool`.
            #[cfg(feature = "parallel")]
            pub fn hits_batch_in(
                &self,
                pool: &rayon::ThreadPool,
                rays: &[Ray],
                range: Interval,
            ) -> Vec<bool> {
                pool.install(|| self.hits_batch(rays, range))
            }
        }
    };
}

voxel_batches!(
    VoxelVolume,
    "use raycast::{glam::{ivec3, vec3, UVec3, Vec3}, grid::VoxelVolume, Interval, Ray, RayCast};\nlet v = VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, (0..4).map(|x| ivec3(x, 0, 0))).unwrap();"
);
voxel_batches!(
    ChunkedVoxels,
    "use raycast::{glam::{ivec3, vec3, Vec3}, grid::ChunkedVoxels, Interval, Ray, RayCast};\nlet v = ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, (0..4).map(|x| ivec3(x, 0, 0))).unwrap();"
);

/// A run of a volume's `cast_batch`: one by one.
fn cast_run(shape: &impl RayCast, rays: &[Ray], range: Interval, out: &mut [Option<Hit>]) {
    for (ray, o) in rays.iter().zip(out) {
        *o = shape.cast(ray, range);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{IVec3, Vec3};
    use proptest::prelude::*;

    /// Random volumes (some cells far from the origin, non-unit cells) and
    /// rays, among them lattice rays whose crossings tie: every batch
    /// answer is the single cast's, bit for bit.
    fn volume_and_rays(seed: u64, n: usize) -> (VoxelVolume, Vec<IVec3>, Vec<Ray>, Interval) {
        // `test_ints` is xorshift: a zero state stays zero.
        let mut next = crate::grid::test_ints(seed | 1);
        // Uniform in `[lo, hi)`, to 2^-20 of the width.
        let mut f = move |lo: f32, hi: f32| lo + (hi - lo) * (next(1 << 20) as f32 / (1 << 20) as f32);
        let mut v3 = |lo: f32, hi: f32| Vec3::new(f(lo, hi), f(lo, hi), f(lo, hi));
        let size = v3(0.25, 2.0);
        let origin = v3(-9.0, 9.0);
        let lo = v3(-40.0, 40.0).floor().as_ivec3();
        let ext = v3(1.0, 40.0).floor().as_ivec3();
        let fill = v3(0.0, 0.3).x;
        let mut cells = Vec::new();
        for x in 0..ext.x {
            for y in 0..ext.y {
                for z in 0..ext.z {
                    if v3(0.0, 1.0).x < fill {
                        cells.push(lo + IVec3::new(x, y, z));
                    }
                }
            }
        }
        let v = VoxelVolume::from_cells(size, origin, cells.iter().copied()).unwrap();
        let centre = origin + (lo.as_vec3() + ext.as_vec3() * 0.5) * size;
        let span = ext.as_vec3() * size;
        let rays = (0..n)
            .map(|i| {
                let o = centre + span * v3(-1.0, 1.0);
                // Lattice directions (one ray in five): ties at edges and corners.
                let d = if i % 5 == 0 { v3(-2.0, 3.0).floor() } else { v3(-1.0, 1.0) };
                let o = if i % 7 == 0 { (o / size).round() * size + origin } else { o };
                Ray::new(o, d)
            })
            .collect();
        let range =
            if seed.is_multiple_of(3) { Interval::new(0.5, v3(1.0, 80.0).x) } else { Interval::FORWARD };
        (v, cells, rays, range)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn batches_answer_as_single_casts(seed in any::<u64>(), n in 0usize..300) {
            let (v, _, rays, range) = volume_and_rays(seed, n);
            let single: Vec<Option<Hit>> = rays.iter().map(|r| v.cast(r, range)).collect();
            let bits = |h: &Option<Hit>| h.map(|h| (h.t.to_bits(), h.point.to_array().map(f32::to_bits), h.normal.to_array().map(f32::to_bits), h.cell, h.part));
            let batch = v.cast_batch(&rays, range);
            prop_assert_eq!(batch.iter().map(bits).collect::<Vec<_>>(), single.iter().map(bits).collect::<Vec<_>>());
            let mut out = vec![None; 3];
            v.cast_batch_into(&rays, range, &mut out);
            prop_assert_eq!(&out, &single);
            prop_assert_eq!(v.hits_batch(&rays, range), single.iter().map(Option::is_some).collect::<Vec<_>>());
            let w = ChunkedVoxels::from_cells(v.grid().cell_size.into(), v.grid().origin.into(), (0..0).map(|_| IVec3::ZERO)).unwrap();
            prop_assert!(w.cast_batch(&rays, range).iter().all(Option::is_none));
        }
    }

    #[test]
    fn long_batches_and_empty_volumes() {
        // Several runs of 64, so that the parallel split is exercised.
        let (v, cells, rays, range) = volume_and_rays(7, 16 * 64 + 5);
        let single: Vec<Option<Hit>> = rays.iter().map(|r| v.cast(r, range)).collect();
        assert_eq!(v.cast_batch(&rays, range), single);
        assert!(single.iter().filter(|h| h.is_some()).count() > 100);
        let chunked =
            ChunkedVoxels::from_cells(v.grid().cell_size.into(), v.grid().origin.into(), cells).unwrap();
        assert_eq!(chunked.cast_batch(&rays, range), single);
        let empty = VoxelVolume::try_new(Vec3::ONE, Vec3::ZERO, IVec3::ZERO, glam::UVec3::splat(8)).unwrap();
        assert!(empty.cast_batch(&rays, range).iter().all(Option::is_none));
        assert!(v.cast_batch(&[], range).is_empty());
    }
}
