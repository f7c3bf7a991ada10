//! The mesh's BVH queries against brute force over every triangle with
//! [`ray_triangle`], on the bunny (69,451 triangles), spot and the teapot.
//!
//! * `cast` must give exactly the brute-force closest hit: the same `t`
//!   bit for bit, and the same triangle, `uv`, point and normal. On an exact
//!   tie in `t` both take the lowest triangle index, so even ties agree.
//! * `hits` must agree with `cast` (and brute force) ray by ray.
//! * `cast_all` must equal the brute-force list sorted by `(t, index)` with
//!   equal-`t` hits on triangles that share a corner merged (DESIGN §5).
//! * Intervals: ranges ending exactly at the first hit include it, ranges
//!   ending one ulp before exclude it; random sub-ranges and `Interval::ALL`
//!   from origins inside the box; back-face culling.
//!
//! Ray families: incoherent rays from a sphere of twice the box diagonal
//! toward random points in the box; rays aimed exactly at vertices (ties
//! between all triangles around the vertex); rays from inside the box in
//! random directions over the whole line.
//!
//! Brute force costs `rays × triangles`; to keep debug test times at a few
//! seconds it skips triangles whose bounding sphere the ray's line provably
//! misses, first by runs of 32 triangles close on a Morton curve, then one
//! by one (an `f64` distance test with a generous margin: it only ever lets
//! extra triangles through to `ray_triangle`). Seeds are fixed.
#![cfg(feature = "load")]

mod common;

use common::Rng;
use raycast::glam::DVec3;
use raycast::shapes::ray_triangle;
use raycast::{vec3, Hit, Interval, Part, Ray, RayCast, TriMesh, Vec3};

fn load(name: &str) -> TriMesh {
    let path = format!("{}/../assets/meshes/{name}", env!("CARGO_MANIFEST_DIR"));
    raycast::mesh::load(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Brute force over every triangle, with a conservative bounding-sphere skip.
struct Brute<'a> {
    mesh: &'a TriMesh,
    /// Per triangle: centre x, y, z and squared radius (plain `f64`, fast in
    /// debug builds).
    spheres: Vec<[f64; 4]>,
    /// Triangle indices sorted along a Morton curve of their centres, so
    /// that runs of [`CHUNK`] are compact.
    order: Vec<usize>,
    /// Per run of [`CHUNK`] triangles of `order`: a sphere around theirs (a
    /// conservative skip, like the per-triangle one).
    chunks: Vec<[f64; 4]>,
}

/// `x`, `y`, `z` in `[0, 1]` to a 30-bit Morton code (10 bits per axis).
fn morton(p: [f64; 3]) -> u32 {
    let spread = |v: f64| {
        let mut x = (v.clamp(0.0, 1.0) * 1023.0) as u32;
        x = (x | (x << 16)) & 0x0300_00ff;
        x = (x | (x << 8)) & 0x0300_f00f;
        x = (x | (x << 4)) & 0x030c_30c3;
        (x | (x << 2)) & 0x0924_9249
    };
    spread(p[0]) | (spread(p[1]) << 1) | (spread(p[2]) << 2)
}

/// Triangles per chunk of the brute force's two-level skip.
const CHUNK: usize = 32;

/// True when the line `o + t·d` (`dd = |d|²`) may pass within the sphere
/// `s` (centre, squared radius): `|v × d|² <= r²·|d|²`, `v` = centre − o.
#[inline]
fn near_line(s: &[f64; 4], o: &[f64; 3], d: &[f64; 3], dd: f64) -> bool {
    let v = [s[0] - o[0], s[1] - o[1], s[2] - o[2]];
    let x = v[1] * d[2] - v[2] * d[1];
    let y = v[2] * d[0] - v[0] * d[2];
    let z = v[0] * d[1] - v[1] * d[0];
    x * x + y * y + z * z <= s[3] * dd
}

/// Every crossing of one ray's whole line, sorted by `(t, index)`: the kernel
/// computes `t` independently of the range, so any range and the culled
/// variant (`front_face` hits only, the ones with `det > 0`) are filters of it.
struct Line(Vec<(f32, u32, Hit)>);

impl Line {
    fn hits(&self, range: Interval, cull: bool) -> impl Iterator<Item = &(f32, u32, Hit)> + '_ {
        self.0.iter().filter(move |x| range.contains(x.0) && (!cull || x.2.front_face))
    }

    fn closest(&self, range: Interval, cull: bool) -> Option<Hit> {
        self.hits(range, cull).next().map(|x| x.2)
    }
}

impl<'a> Brute<'a> {
    fn new(mesh: &'a TriMesh) -> Self {
        let spheres = (0..mesh.triangles().len())
            .map(|k| {
                let [a, b, c] = mesh.triangle(k).map(|p| p.as_dvec3());
                let m = (a + b + c) / 3.0;
                let r = (a - m).length().max((b - m).length()).max((c - m).length());
                // 1e-6 relative plus an absolute floor: far above f64 rounding.
                let r = r * (1.0 + 1e-6) + 1e-6 * m.abs().max_element() + 1e-30;
                [m.x, m.y, m.z, r * r]
            })
            .collect::<Vec<_>>();
        let b = mesh.local_bounds();
        let (lo, size) = (b.min.as_dvec3(), b.size().as_dvec3().max(raycast::glam::DVec3::splat(1e-30)));
        let mut order: Vec<usize> = (0..spheres.len()).collect();
        order.sort_by_key(|&k| {
            let s: &[f64; 4] = &spheres[k];
            morton([(s[0] - lo.x) / size.x, (s[1] - lo.y) / size.y, (s[2] - lo.z) / size.z])
        });
        let chunks = order
            .chunks(CHUNK)
            .map(|c| {
                let c: Vec<[f64; 4]> = c.iter().map(|&k| spheres[k]).collect();
                let n = c.len() as f64;
                let m = c.iter().fold([0.0; 3], |m, s| [m[0] + s[0] / n, m[1] + s[1] / n, m[2] + s[2] / n]);
                let r = c.iter().fold(0.0f64, |r, s| {
                    let d = ((s[0] - m[0]).powi(2) + (s[1] - m[1]).powi(2) + (s[2] - m[2]).powi(2)).sqrt();
                    r.max(d + s[3].sqrt())
                });
                let r = r * (1.0 + 1e-6) + 1e-6 * m[0].abs().max(m[1].abs()).max(m[2].abs()) + 1e-30;
                [m[0], m[1], m[2], r * r]
            })
            .collect();
        Self { mesh, spheres, order, chunks }
    }

    /// Every crossing of the ray's line.
    fn line(&self, ray: &Ray) -> Line {
        let o = [f64::from(ray.origin.x), f64::from(ray.origin.y), f64::from(ray.origin.z)];
        let d = [f64::from(ray.dir.x), f64::from(ray.dir.y), f64::from(ray.dir.z)];
        let dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        let mut out = Vec::new();
        let candidates = (0..self.chunks.len())
            .filter(|&c| near_line(&self.chunks[c], &o, &d, dd))
            .flat_map(|c| &self.order[c * CHUNK..((c + 1) * CHUNK).min(self.order.len())])
            .copied()
            .filter(|&k| near_line(&self.spheres[k], &o, &d, dd));
        for k in candidates {
            let [a, b, c] = self.mesh.triangle(k);
            if let Some(h) = ray_triangle(ray, a, b, c, Interval::ALL, false) {
                let (da, db, dc) = (a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
                let normal = (db - da).cross(dc - da).normalize().as_vec3();
                let (u, w) = (f64::from(h.u), f64::from(h.v));
                let point = (da * (1.0 - u - w) + db * u + dc * w).as_vec3();
                let hit = Hit {
                    uv: Some(raycast::vec2(h.u, h.v)),
                    triangle: Some(k as u32),
                    front_face: h.front_face,
                    ..Hit::with_point(ray, h.t, point, normal, Part::Face)
                };
                out.push((h.t, k as u32, hit));
            }
        }
        out.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        Line(out)
    }

    /// The sorted list in `range` with equal-`t` hits on corner-sharing
    /// triangles merged.
    fn merged(&self, line: &Line, range: Interval) -> Vec<Hit> {
        let all: Vec<_> = line.hits(range, false).collect();
        let share = |j: u32, k: u32| {
            let (a, b) = (self.mesh.triangle(j as usize), self.mesh.triangle(k as usize));
            a.iter().any(|p| b.contains(p))
        };
        let mut out = Vec::new();
        for (i, x) in all.iter().enumerate() {
            let dup = all[..i].iter().any(|y| y.0 == x.0 && share(y.1, x.1));
            if !dup {
                out.push(x.2);
            }
        }
        out
    }
}

/// Ray families over the mesh's box (see the module doc).
fn rays(mesh: &TriMesh, rng: &mut Rng, n: usize) -> Vec<(Ray, Interval)> {
    let b = mesh.local_bounds();
    let (c, diag) = (b.center(), b.size().length());
    let verts = mesh.vertices();
    (0..n)
        .map(|i| match i % 4 {
            0 | 1 => {
                let o = c + 2.0 * diag * rng.on_sphere();
                (Ray::new(o, rng.in_box(b.min, b.max) - o), Interval::FORWARD)
            }
            2 => {
                let o = c + 2.0 * diag * rng.on_sphere();
                let v = verts[(rng.next() % verts.len() as u64) as usize];
                (Ray::new(o, v - o), Interval::FORWARD)
            }
            _ => {
                let o = rng.in_box(b.min, b.max);
                let d = rng.on_sphere() * (0.1 + rng.unit());
                (Ray::new(o, d), Interval::ALL)
            }
        })
        .collect()
}

fn check_mesh(name: &str, n_rays: usize, n_all: usize) {
    let mesh = load(name);
    mesh.bvh().validate(&boxes(&mesh)).unwrap();
    let culled = mesh.clone().with_back_face_culling(true);
    let brute = Brute::new(&mesh);
    let mut rng = Rng(0xb0_5eed ^ name.len() as u64);
    let (mut hit_count, mut ties) = (0, 0);
    for (i, (ray, range)) in rays(&mesh, &mut rng, n_rays).into_iter().enumerate() {
        let line = brute.line(&ray);
        let want = line.closest(range, false);
        let got = mesh.cast(&ray, range);
        assert_eq!(got, want, "{name}: cast of ray {i} {ray:?} over {range:?}");
        assert_eq!(mesh.hits(&ray, range), want.is_some(), "{name}: hits of ray {i} {ray:?}");
        assert_eq!(culled.cast(&ray, range), line.closest(range, true), "{name}: culled ray {i}");
        assert_eq!(culled.hits(&ray, range), line.closest(range, true).is_some(), "{name}: culled ray {i}");
        if let Some(h) = want {
            hit_count += 1;
            // Inclusive ends: the hit is at the very end of the range...
            let to_hit = Interval::new(range.min, h.t);
            assert_eq!(mesh.cast(&ray, to_hit).map(|x| x.t), Some(h.t));
            assert!(mesh.hits(&ray, to_hit));
            // ...and a range one ulp short must find what brute force finds there.
            let short = Interval::new(range.min, raycast::numeric::next_down(h.t));
            assert_eq!(mesh.cast(&ray, short), line.closest(short, false), "{name}: short range ray {i}");
            // A random sub-range starting past the first hit.
            let later = Interval::new(h.t + rng.unit() * h.t.abs().max(1e-3), f32::INFINITY);
            assert_eq!(mesh.cast(&ray, later), line.closest(later, false), "{name}: later ray {i}");
        }
        if i < n_all {
            let all = mesh.cast_all(&ray, range);
            let want_all = brute.merged(&line, range);
            ties += line.hits(range, false).count() - want_all.len();
            assert_eq!(all, want_all, "{name}: cast_all of ray {i} {ray:?}");
            assert!(all.windows(2).all(|w| w[0].t <= w[1].t));
        }
    }
    println!("{name}: {n_rays} rays, {hit_count} hit; {ties} equal-t hits merged in cast_all");
    assert!(hit_count > n_rays / 4, "{name}: too few hits to mean anything");
}

fn boxes(mesh: &TriMesh) -> Vec<raycast::Aabb> {
    (0..mesh.triangles().len())
        .map(|k| {
            let [a, b, c] = mesh.triangle(k);
            let a64 = a.as_dvec3();
            let n = (b.as_dvec3() - a64).cross(c.as_dvec3() - a64);
            if n == DVec3::ZERO {
                raycast::Aabb::EMPTY
            } else {
                raycast::Aabb::from_points([a, b, c])
            }
        })
        .collect()
}

#[test]
fn bunny_matches_brute_force() {
    check_mesh("bunny.obj", 2000, 500);
}

#[test]
fn spot_matches_brute_force() {
    check_mesh("spot.obj", 3000, 1000);
}

#[test]
fn teapot_matches_brute_force() {
    check_mesh("teapot.obj", 3000, 1000);
}

/// Rays aimed at vertices of a flat grid of squares: many exact ties in `t`,
/// every crossing reported once by `cast_all`, `cast` the lowest index.
#[test]
fn flat_grid_ties_are_merged() {
    let n = 8u32;
    let vertices: Vec<Vec3> =
        (0..=n).flat_map(|y| (0..=n).map(move |x| vec3(x as f32, y as f32, 0.0))).collect();
    let mut triangles = Vec::new();
    for y in 0..n {
        for x in 0..n {
            let i = y * (n + 1) + x;
            triangles.push([i, i + 1, i + n + 2]);
            triangles.push([i, i + n + 2, i + n + 1]);
        }
    }
    let mesh = TriMesh::new(vertices.clone(), triangles);
    let brute = Brute::new(&mesh);
    let mut rng = Rng(7);
    for _ in 0..500 {
        // Interior vertices: aimed at a border vertex, the rounded direction
        // may rightly pass just outside the grid.
        let (x, y) = (1 + rng.next() % u64::from(n - 1), 1 + rng.next() % u64::from(n - 1));
        let target = vertices[(y * u64::from(n + 1) + x) as usize];
        let o = vec3(4.0, 4.0, 5.0) + 3.0 * rng.on_sphere();
        let o = if o.z < 0.5 { vec3(o.x, o.y, 1.0) } else { o };
        let ray = Ray::new(o, target - o);
        let all = mesh.cast_all(&ray, Interval::FORWARD);
        assert_eq!(all.len(), 1, "{ray:?} {all:?}");
        assert_eq!(mesh.cast(&ray, Interval::FORWARD), Some(all[0]));
        assert_eq!(all, brute.merged(&brute.line(&ray), Interval::FORWARD));
    }
}

/// The mesh's BVH (its tree and leaf order) does not change an answer:
/// shuffling the triangle order gives the same hits, up to renumbering.
#[test]
fn answers_do_not_depend_on_triangle_order() {
    let mesh = load("spot.obj");
    let mut order: Vec<usize> = (0..mesh.triangles().len()).collect();
    let mut rng = Rng(11);
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let shuffled =
        TriMesh::new(mesh.vertices().to_vec(), order.iter().map(|&k| mesh.triangles()[k]).collect());
    for (ray, range) in rays(&mesh, &mut rng, 2000) {
        let (a, b) = (mesh.cast(&ray, range), shuffled.cast(&ray, range));
        assert_eq!(a.map(|h| h.t), b.map(|h| h.t), "{ray:?}");
        assert_eq!(mesh.cast_all(&ray, range).len(), shuffled.cast_all(&ray, range).len(), "{ray:?}");
    }
}
