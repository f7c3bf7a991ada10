//! What the batch queries of meshes and scenes share: rays are answered in
//! runs of [`RUN`], each run one parallel task with rayon when the
//! `parallel` feature is on (the default), in order otherwise.
//!
//! A run is the unit of work stealing, so its overhead (~1 µs per split)
//! stays small against the rays' cost (~0.1–1 µs each); within a run the
//! owner may walk its tree for several rays at once (`bvh::interleave`).
//! Every answer is written to its own ray's position, so the order of the
//! input is kept whatever the threads do.

use crate::Ray;

/// Rays per run (and per parallel task).
pub(crate) const RUN: usize = 64;

/// Makes `out` one answer per ray (`fill` where its length must change;
/// a buffer of the right length is reused as it is, since every entry is
/// overwritten) and calls `answer(rays, out)` on matching runs of both.
pub(crate) fn in_runs<T: Clone + Send>(
    rays: &[Ray],
    out: &mut Vec<T>,
    fill: T,
    answer: impl Fn(&[Ray], &mut [T]) + Sync,
) {
    if out.len() != rays.len() {
        out.clear();
        out.resize(rays.len(), fill);
    }
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(RUN).zip(rays.par_chunks(RUN)).for_each(|(out, rays)| answer(rays, out));
    }
    #[cfg(not(feature = "parallel"))]
    for (out, rays) in out.chunks_mut(RUN).zip(rays.chunks(RUN)) {
        answer(rays, out);
    }
}
