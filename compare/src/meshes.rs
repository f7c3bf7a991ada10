//! The inputs of the `mesh` comparison: a mesh refined by midpoint
//! subdivision, the two ray sets (a pinhole camera and incoherent rays from a
//! sphere around the mesh), and a two-sided Möller–Trumbore test for the peer
//! that brings a BVH but no two-sided triangle test (the `bvh` crate's own
//! `intersects_triangle` culls back faces).
//!
//! Everything is seeded and built identically for every library; the rays
//! are raycast rays (`origin + t·dir`, `dir` not normalised), converted to each
//! peer's type before any timing.

use glam::{vec3, Vec3};
use rand::Rng;
use raycast::Ray;
use std::collections::HashMap;

/// Midpoint subdivision, once: every triangle `a b c` becomes the four
/// triangles `a ab ca`, `ab b bc`, `ca bc c`, `ab bc ca` (same winding), where
/// `ab` is the midpoint of edge `a b`. Midpoints are shared between the two
/// triangles of an edge (one new vertex per edge, computed once), so an
/// indexed, watertight mesh stays so. The surface is unchanged; there are 4×
/// as many triangles.
pub fn subdivide(vertices: &[Vec3], triangles: &[[u32; 3]]) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut out_v = vertices.to_vec();
    let mut out_t = Vec::with_capacity(triangles.len() * 4);
    let mut midpoints: HashMap<(u32, u32), u32> = HashMap::with_capacity(triangles.len() * 2);
    let mut mid = |i: u32, j: u32, out_v: &mut Vec<Vec3>| -> u32 {
        *midpoints.entry((i.min(j), i.max(j))).or_insert_with(|| {
            let (a, b) = (vertices[i.min(j) as usize], vertices[i.max(j) as usize]);
            out_v.push((a + b) * 0.5);
            (out_v.len() - 1) as u32
        })
    };
    for &[a, b, c] in triangles {
        let ab = mid(a, b, &mut out_v);
        let bc = mid(b, c, &mut out_v);
        let ca = mid(c, a, &mut out_v);
        out_t.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    (out_v, out_t)
}

/// The axis-aligned bounds of the vertices that triangles use.
pub fn bounds(vertices: &[Vec3], triangles: &[[u32; 3]]) -> (Vec3, Vec3) {
    triangles.iter().flatten().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &i| {
        (lo.min(vertices[i as usize]), hi.max(vertices[i as usize]))
    })
}

/// A `width × width` pinhole camera (40° field of view, unit-length
/// directions, row by row) looking at the centre of the box `lo..hi` from
/// outside it: from 1.5 box diagonals away, slightly above and to the side.
pub fn camera_rays(lo: Vec3, hi: Vec3, width: usize) -> Vec<Ray> {
    let centre = (lo + hi) * 0.5;
    let diag = (hi - lo).length();
    let eye = centre + vec3(0.35, 0.25, 1.0).normalize() * (1.5 * diag);
    let forward = (centre - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let half = (20.0f32).to_radians().tan();
    let mut rays = Vec::with_capacity(width * width);
    for row in 0..width {
        for col in 0..width {
            let x = ((col as f32 + 0.5) / width as f32 * 2.0 - 1.0) * half;
            let y = (1.0 - (row as f32 + 0.5) / width as f32 * 2.0) * half;
            rays.push(Ray::new(eye, (forward + x * right + y * up).normalize()));
        }
    }
    rays
}

/// `n` incoherent rays: each from a uniformly random point of the sphere of
/// radius `2 ×` the box diagonal around the box's centre, toward a uniformly
/// random point inside the box (`dir` is that difference, so the target is at
/// `t = 1`).
pub fn sphere_rays(lo: Vec3, hi: Vec3, n: usize, rng: &mut impl Rng) -> Vec<Ray> {
    let centre = (lo + hi) * 0.5;
    let radius = 2.0 * (hi - lo).length();
    (0..n)
        .map(|_| {
            let on_sphere = loop {
                let p = vec3(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                let len2 = p.length_squared();
                if len2 > 1e-4 && len2 <= 1.0 {
                    break p / len2.sqrt();
                }
            };
            let origin = centre + on_sphere * radius;
            let target = lo + (hi - lo) * vec3(rng.random(), rng.random(), rng.random());
            Ray::new(origin, target - origin)
        })
        .collect()
}

/// Two-sided Möller–Trumbore in `f32`: the `t` (in units of `d`) where
/// `o + t·d` crosses triangle `tri`, if it does within `0..=t_max`.
#[inline]
pub fn moller_trumbore(o: Vec3, d: Vec3, tri: &[Vec3; 3], t_max: f32) -> Option<f32> {
    let e1 = tri[1] - tri[0];
    let e2 = tri[2] - tri[0];
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - tri[0];
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (0.0..=t_max).contains(&t).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn subdivision_quadruples_and_shares_midpoints() {
        // A tetrahedron: 4 vertices, 6 edges, 4 faces.
        let v = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        let t = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        let (v1, t1) = subdivide(&v, &t);
        assert_eq!((v1.len(), t1.len()), (4 + 6, 16));
        let (v2, t2) = subdivide(&v1, &t1);
        assert_eq!(t2.len(), 64);
        // Closed: every edge in exactly two triangles.
        let mut edges = HashMap::new();
        for tri in &t2 {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&n| n == 2));
        assert_eq!(bounds(&v2, &t2), (Vec3::ZERO, Vec3::ONE));
    }

    #[test]
    fn ray_sets_aim_at_the_box() {
        let (lo, hi) = (Vec3::ZERO, Vec3::new(2.0, 1.0, 1.0));
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        for r in sphere_rays(lo, hi, 100, &mut rng) {
            let target = r.origin + r.dir;
            assert!(target.cmpge(lo).all() && target.cmple(hi).all());
            let radius = (r.origin - Vec3::new(1.0, 0.5, 0.5)).length();
            assert!((radius - 2.0 * hi.length()).abs() < 1e-4);
        }
        let cam = camera_rays(lo, hi, 8);
        assert_eq!(cam.len(), 64);
        assert!(cam.iter().all(|r| (r.dir.length() - 1.0).abs() < 1e-5));
    }

    #[test]
    fn moller_trumbore_is_two_sided() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let down = moller_trumbore(vec3(0.25, 0.25, 1.0), -Vec3::Z, &tri, f32::INFINITY);
        let up = moller_trumbore(vec3(0.25, 0.25, -2.0), Vec3::Z * 2.0, &tri, f32::INFINITY);
        assert_eq!((down, up), (Some(1.0), Some(1.0)));
        assert_eq!(moller_trumbore(vec3(0.75, 0.75, 1.0), -Vec3::Z, &tri, f32::INFINITY), None);
        assert_eq!(moller_trumbore(vec3(0.25, 0.25, 1.0), -Vec3::Z, &tri, 0.5), None);
    }
}
