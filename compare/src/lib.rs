//! Shared helpers for the peer comparison binaries in `src/bin/`.

pub mod meshes;
pub mod prims;
pub mod scene_gen;

/// Seconds of CPU time this thread has used (Linux: `CLOCK_THREAD_CPUTIME_ID`;
/// elsewhere wall time since the first call).
///
/// Every timing in these binaries uses it: on a shared machine a thread that
/// is descheduled for a while inflates a wall-clock sample by that while,
/// and the medians swung up to 2× under load; CPU time leaves that out (it
/// still includes what sharing the caches costs, which is real). All timed
/// work here runs on the calling thread.
pub fn cpu_secs() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }
    #[cfg(not(target_os = "linux"))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
    }
}

/// Seconds of CPU time the whole process has used (Linux:
/// `CLOCK_PROCESS_CPUTIME_ID`; elsewhere wall time). For work that may run on
/// rayon's pool while the calling thread waits (the mesh builds, with the
/// pool limited to one thread): steady under load like [`cpu_secs`], and it
/// counts the pool's thread, which the caller's own clock would not.
pub fn process_cpu_secs() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }
    #[cfg(not(target_os = "linux"))]
    {
        cpu_secs()
    }
}

/// CPU seconds (see [`cpu_secs`]) that `f` takes on this thread.
pub fn time_secs(f: impl FnOnce()) -> f64 {
    let t = cpu_secs();
    f();
    cpu_secs() - t
}

/// Runs `f` `reps` times and returns the median CPU time in seconds.
pub fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..reps).map(|_| time_secs(&mut f)).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Millions of rays per second for `n` rays in `secs`.
pub fn mrays(n: usize, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}
