//! Shared helpers for the peer comparison binaries in `src/bin/`.

pub mod meshes;
pub mod prims;
pub mod scene_gen;

use std::time::Instant;

/// Runs `f` `reps` times and returns the median wall time in seconds.
pub fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Millions of rays per second for `n` rays in `secs`.
pub fn mrays(n: usize, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}
