//! Triangles in blocks of four (structure of arrays) and a SIMD pre-test that
//! decides, for four triangles at once, which ones the watertight kernel can
//! possibly hit.
//!
//! The pre-test repeats, lane by lane, exactly the `f64` operations with
//! which [`ShearedRay::intersect`](crate::shapes::ShearedRay::intersect)
//! computes the sheared vertices and the three edge functions (same operands,
//! same order, no fused multiply-add: IEEE arithmetic is the same in a SIMD
//! lane as in a scalar register), and applies the same sign test. So it
//! rejects a triangle exactly when the kernel would reject it at its sign
//! test, and the triangles it keeps are passed to the kernel itself, which
//! gives the answer (`t`, `u`, `v` bit-identical to
//! [`ray_triangle`](crate::shapes::ray_triangle) by construction). A unit test
//! checks the agreement on random rays and triangles.
//!
//! Most triangles a ray reaches fail the sign test, so this moves nearly all
//! the kernel's work into 2- or 4-lane arithmetic: SSE2 (`f64 × 2`, the x86_64
//! baseline) or AVX (`f64 × 4`) when the CPU has it (checked once per query
//! with `is_x86_feature_detected!`, which caches its answer).

use crate::shapes::ShearedRay;
use glam::Vec3;

/// Four triangles: row `3·v + axis` holds coordinate `axis` of corner `v`
/// (`a`, `b`, `c`) of the four triangles, one per lane.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub(super) struct Block {
    rows: [[f32; 4]; 9],
}

impl Block {
    /// Packs up to four triangles; missing lanes are zero (a degenerate
    /// triangle, and never part of a leaf range anyway).
    pub(super) fn pack(tris: &[[Vec3; 3]]) -> Self {
        let mut rows = [[0.0f32; 4]; 9];
        for (lane, tri) in tris.iter().enumerate() {
            for (v, p) in tri.iter().enumerate() {
                for axis in 0..3 {
                    rows[3 * v + axis][lane] = p[axis];
                }
            }
        }
        Self { rows }
    }

    /// The corners of the triangle in `lane` (taken modulo 4). Written out
    /// row by row with constant row indices and a masked lane, so that no
    /// index is checked: the generic `map` over `3·v + axis` was an
    /// out-of-line call with nine bounds checks per triangle.
    #[inline(always)]
    pub(super) fn corners(&self, lane: usize) -> [Vec3; 3] {
        let r = &self.rows;
        let l = lane & 3;
        [
            Vec3::new(r[0][l], r[1][l], r[2][l]),
            Vec3::new(r[3][l], r[4][l], r[5][l]),
            Vec3::new(r[6][l], r[7][l], r[8][l]),
        ]
    }
}

/// Hints the CPU to load block `b` (three cache lines) into the cache; a
/// no-op off x86_64. Prefetching never faults.
#[inline(always)]
pub(super) fn prefetch(b: *const Block) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE baseline; a prefetch has no architectural effect.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = b.cast::<i8>();
        _mm_prefetch::<_MM_HINT_T0>(p);
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// The per-ray constants of the pre-test: the shear of
/// [`ShearedRay`](crate::shapes::ShearedRay), recomputed here the same way.
#[derive(Clone, Copy, Debug)]
pub(super) struct Filter {
    /// The ray's origin and direction, in the order `kx, ky, kz` (as the
    /// kernel holds them): the tests read them at constant positions, where
    /// indexing a vector by a per-ray axis compiled to a branch per read.
    origin: [f64; 3],
    dir: [f64; 3],
    /// Rows of `x`, `y`, `z` in the sheared frame (`kx`, `ky`, `kz`).
    k: [usize; 3],
    cull: bool,
    #[cfg(target_arch = "x86_64")]
    avx: bool,
}

impl Filter {
    /// The pre-test for the ray sheared as `sr`: its axes, origin and
    /// direction are the kernel's own, so the two can never disagree on them.
    #[inline]
    pub(super) fn new(sr: &ShearedRay, cull: bool) -> Self {
        Self {
            origin: sr.origin(),
            dir: sr.dir(),
            k: sr.axes(),
            cull,
            #[cfg(target_arch = "x86_64")]
            avx: std::arch::is_x86_feature_detected!("avx"),
        }
    }

    /// Bit `i` set when triangle `i` of `b` passes the kernel's sign test;
    /// only lanes in `lanes` are looked at (others may be set or not).
    #[inline(always)]
    pub(super) fn test(&self, b: &Block, lanes: u32) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            if self.avx {
                // SAFETY: AVX support was detected at run time.
                return unsafe { x86::test_avx(self, b) };
            }
            let mut m = 0;
            if lanes & 0b0011 != 0 {
                m |= x86::test_sse2(self, b, false);
            }
            if lanes & 0b1100 != 0 {
                m |= x86::test_sse2(self, b, true) << 2;
            }
            m
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = lanes;
            self.test_scalar(b)
        }
    }

    /// The same test one lane at a time (the reference of the unit test, and
    /// the implementation off x86_64).
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn test_scalar(&self, b: &Block) -> u32 {
        let [kx, ky, kz] = self.k;
        let [dx, dy, dz] = self.dir;
        let o = self.origin;
        let mut m = 0;
        for lane in 0..4 {
            let s = b.corners(lane).map(|p| {
                let q = [f64::from(p[kx]) - o[0], f64::from(p[ky]) - o[1], f64::from(p[kz]) - o[2]];
                (q[0] * dz - dx * q[2], q[1] * dz - dy * q[2])
            });
            let [(ax, ay), (bx, by), (cx, cy)] = s;
            let u = cx * by - cy * bx;
            let v = ax * cy - ay * cx;
            let w = bx * ay - by * ax;
            let pos = u >= 0.0 && v >= 0.0 && w >= 0.0;
            let neg = u <= 0.0 && v <= 0.0 && w <= 0.0;
            if pos || (neg && !self.cull) {
                m |= 1 << lane;
            }
        }
        m
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Block, Filter};
    use std::arch::x86_64::*;

    /// Lanes 0–1 (or 2–3 when `high`) with SSE2 `f64 × 2`.
    #[inline(always)]
    pub(super) fn test_sse2(f: &Filter, b: &Block, high: bool) -> u32 {
        // SAFETY: SSE2 is part of the x86_64 baseline; the loads read rows of `b`.
        unsafe {
            let load = |row: usize| {
                let r = _mm_loadu_ps(b.rows[row].as_ptr());
                _mm_cvtps_pd(if high { _mm_movehl_ps(r, r) } else { r })
            };
            let [kx, ky, kz] = f.k;
            let (ox, oy, oz) = (_mm_set1_pd(f.origin[0]), _mm_set1_pd(f.origin[1]), _mm_set1_pd(f.origin[2]));
            let (dx, dy, dz) = (_mm_set1_pd(f.dir[0]), _mm_set1_pd(f.dir[1]), _mm_set1_pd(f.dir[2]));
            // Sheared corner v: (q[kx]·D − d[kx]·q[kz], q[ky]·D − d[ky]·q[kz]).
            let shear = |v: usize| {
                let qx = _mm_sub_pd(load(3 * v + kx), ox);
                let qy = _mm_sub_pd(load(3 * v + ky), oy);
                let qz = _mm_sub_pd(load(3 * v + kz), oz);
                (
                    _mm_sub_pd(_mm_mul_pd(qx, dz), _mm_mul_pd(dx, qz)),
                    _mm_sub_pd(_mm_mul_pd(qy, dz), _mm_mul_pd(dy, qz)),
                )
            };
            let ((ax, ay), (bx, by), (cx, cy)) = (shear(0), shear(1), shear(2));
            let u = _mm_sub_pd(_mm_mul_pd(cx, by), _mm_mul_pd(cy, bx));
            let v = _mm_sub_pd(_mm_mul_pd(ax, cy), _mm_mul_pd(ay, cx));
            let w = _mm_sub_pd(_mm_mul_pd(bx, ay), _mm_mul_pd(by, ax));
            let zero = _mm_setzero_pd();
            let pos =
                _mm_and_pd(_mm_and_pd(_mm_cmpge_pd(u, zero), _mm_cmpge_pd(v, zero)), _mm_cmpge_pd(w, zero));
            let mut m = _mm_movemask_pd(pos);
            if !f.cull {
                let neg = _mm_and_pd(
                    _mm_and_pd(_mm_cmple_pd(u, zero), _mm_cmple_pd(v, zero)),
                    _mm_cmple_pd(w, zero),
                );
                m |= _mm_movemask_pd(neg);
            }
            m as u32
        }
    }

    /// All four lanes with AVX `f64 × 4`.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn test_avx(f: &Filter, b: &Block) -> u32 {
        let load = |row: usize| _mm256_cvtps_pd(_mm_loadu_ps(b.rows[row].as_ptr()));
        let [kx, ky, kz] = f.k;
        let (ox, oy, oz) =
            (_mm256_set1_pd(f.origin[0]), _mm256_set1_pd(f.origin[1]), _mm256_set1_pd(f.origin[2]));
        let (dx, dy, dz) = (_mm256_set1_pd(f.dir[0]), _mm256_set1_pd(f.dir[1]), _mm256_set1_pd(f.dir[2]));
        let shear = |v: usize| {
            let qx = _mm256_sub_pd(load(3 * v + kx), ox);
            let qy = _mm256_sub_pd(load(3 * v + ky), oy);
            let qz = _mm256_sub_pd(load(3 * v + kz), oz);
            (
                _mm256_sub_pd(_mm256_mul_pd(qx, dz), _mm256_mul_pd(dx, qz)),
                _mm256_sub_pd(_mm256_mul_pd(qy, dz), _mm256_mul_pd(dy, qz)),
            )
        };
        let ((ax, ay), (bx, by), (cx, cy)) = (shear(0), shear(1), shear(2));
        let u = _mm256_sub_pd(_mm256_mul_pd(cx, by), _mm256_mul_pd(cy, bx));
        let v = _mm256_sub_pd(_mm256_mul_pd(ax, cy), _mm256_mul_pd(ay, cx));
        let w = _mm256_sub_pd(_mm256_mul_pd(bx, ay), _mm256_mul_pd(by, ax));
        let zero = _mm256_setzero_pd();
        let ge = |x| _mm256_cmp_pd::<_CMP_GE_OQ>(x, zero);
        let le = |x| _mm256_cmp_pd::<_CMP_LE_OQ>(x, zero);
        let mut m = _mm256_movemask_pd(_mm256_and_pd(_mm256_and_pd(ge(u), ge(v)), ge(w)));
        if !f.cull {
            m |= _mm256_movemask_pd(_mm256_and_pd(_mm256_and_pd(le(u), le(v)), le(w)));
        }
        m as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::ray_triangle;
    use crate::Interval;
    use crate::Ray;
    use glam::vec3;

    /// The SIMD pre-test equals the scalar one lane by lane, and never rejects
    /// a triangle the kernel hits.
    #[test]
    fn simd_filter_equals_scalar_and_keeps_every_hit() {
        let mut s = 0x9e37_79b9u32;
        let mut f = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        };
        for i in 0..20_000 {
            let tris: Vec<[Vec3; 3]> = (0..4)
                .map(|_| {
                    let c = vec3(f(), f(), f()) * 3.0;
                    [c + vec3(f(), f(), f()), c + vec3(f(), f(), f()), c + vec3(f(), f(), f())]
                })
                .collect();
            let b = Block::pack(&tris);
            // Every fourth ray aims exactly at a vertex (edge functions of 0).
            let o = vec3(f(), f(), f()) * 6.0;
            let d = if i % 4 == 0 { tris[i % 3][i % 3] - o } else { vec3(f(), f(), f()) };
            let ray = Ray::new(o, d);
            for cull in [false, true] {
                let filter = Filter::new(&ShearedRay::new(&ray).unwrap(), cull);
                let got = filter.test(&b, 0b1111);
                assert_eq!(got, filter.test_scalar(&b), "{ray:?}");
                for (lane, t) in tris.iter().enumerate() {
                    if ray_triangle(&ray, t[0], t[1], t[2], Interval::ALL, cull).is_some() {
                        assert!(got & (1 << lane) != 0, "{ray:?} lane {lane}");
                    }
                }
            }
        }
    }
}
