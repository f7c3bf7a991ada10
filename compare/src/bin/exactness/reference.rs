//! An independent f64 reference for ray–primitive crossings, written apart
//! from raycast's kernels (and differently from them):
//!
//! * The line is re-parametrised first: its origin moves to the point of the
//!   line closest to the shape's centre and the direction is made unit, so
//!   every equation below is solved with O(size) coefficients whatever the
//!   original origin (1e4 sizes away) and direction magnitude.
//! * Convex solids are intersections (and the capsule a union) of *sets*:
//!   the part of the line where a quadratic is ≤ 0 (possibly two half-lines
//!   when it opens downward) and slabs; the answer is the list of pieces of
//!   the whole line inside the solid, not a first root.
//! * The torus is not solved as a quartic at all: its pieces are found by
//!   sphere tracing its exact f64 distance function along the line and
//!   bisecting each sign change (see `torus`).
//! * Triangle and plane: the crossing of the (f64) plane, and barycentrics.
//!
//! Signed distance functions (exact, f64) give the "depth" of a piece: how
//! far inside the solid the line goes there. A piece of depth δ can be missed
//! or added by moving the ray by δ, which is how near-tangent disagreements
//! are scored (see `main.rs`).

use glam::{dvec2, dvec3, DVec2, DVec3};
use raycast_compare::prims::Prim;

/// A line `o + t·d` in f64 (copied from the f32 ray, so exact).
#[derive(Clone, Copy, Debug)]
pub struct Line {
    pub o: DVec3,
    pub d: DVec3,
}

impl Line {
    pub fn at(&self, t: f64) -> DVec3 {
        self.o + t * self.d
    }
    /// Distance from `p` to the line.
    pub fn distance(&self, p: DVec3) -> f64 {
        let t = (p - self.o).dot(self.d) / self.d.length_squared();
        (p - self.at(t)).length()
    }
    /// Parameter of the point of the line closest to `p`.
    pub fn param(&self, p: DVec3) -> f64 {
        (p - self.o).dot(self.d) / self.d.length_squared()
    }
}

/// `[enter, exit]` of the line inside a solid, in the line's `t`; for a
/// surface, `enter == exit` is the crossing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub enter: f64,
    pub exit: f64,
}

fn d3(v: glam::Vec3) -> DVec3 {
    v.as_dvec3()
}

/// Where `A·s² + 2·B·s + C ≤ 0`, as sorted closed intervals (may be
/// unbounded). Roots by the cancellation-free pair q/A, C/q.
fn quadric_set(a: f64, b: f64, c: f64) -> Vec<(f64, f64)> {
    const INF: f64 = f64::INFINITY;
    if a == 0.0 {
        return if b == 0.0 {
            if c <= 0.0 {
                vec![(-INF, INF)]
            } else {
                vec![]
            }
        } else if b > 0.0 {
            vec![(-INF, -c / (2.0 * b))]
        } else {
            vec![(-c / (2.0 * b), INF)]
        };
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return if a < 0.0 { vec![(-INF, INF)] } else { vec![] };
    }
    let q = -(b + disc.sqrt().copysign(b));
    let (r1, r2) = if q == 0.0 { (0.0, 0.0) } else { (q / a, c / q) };
    let (lo, hi) = (r1.min(r2), r1.max(r2));
    if a > 0.0 {
        vec![(lo, hi)]
    } else {
        vec![(-INF, lo), (hi, INF)]
    }
}

/// Where `lo ≤ x0 + s·dx ≤ hi`.
fn slab(x0: f64, dx: f64, lo: f64, hi: f64) -> Option<(f64, f64)> {
    if dx == 0.0 {
        return (lo <= x0 && x0 <= hi).then_some((f64::NEG_INFINITY, f64::INFINITY));
    }
    let (a, b) = ((lo - x0) / dx, (hi - x0) / dx);
    Some((a.min(b), a.max(b)))
}

fn clip(set: Vec<(f64, f64)>, by: Option<(f64, f64)>) -> Vec<(f64, f64)> {
    let Some((lo, hi)) = by else { return vec![] };
    set.into_iter().map(|(a, b)| (a.max(lo), b.min(hi))).filter(|(a, b)| a <= b).collect()
}

/// Sorts and merges touching or overlapping intervals.
fn merge(mut set: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    set.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, b) in set {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Where the unit line `o + s·u` is within `r` of the point `m`.
fn ball(o: DVec3, u: DVec3, m: DVec3, r: f64) -> Vec<(f64, f64)> {
    let q = o - m;
    quadric_set(1.0, q.dot(u), q.length_squared() - r * r)
}

/// The pieces of the line inside `prim` (for triangle and plane: the
/// crossing), in `t`, sorted.
pub fn pieces(prim: &Prim, line: &Line) -> Vec<Piece> {
    let centre = d3(prim.bounding_sphere().0);
    let dn = line.d.length();
    let u = line.d / dn;
    let tc = (centre - line.o).dot(line.d) / line.d.length_squared();
    let o = line.at(tc); // closest point of the line to the centre
                         // Quadric sets are solved in s (unit steps from `o`) and brought to t;
                         // slabs are solved in t on the original line, where an origin exactly on
                         // a face gives exactly t = 0 (the shift to `o` would round it to ±tiny).
    let to_t = |set: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        set.into_iter().map(|(a, b)| (tc + a / dn, tc + b / dn)).collect()
    };
    let (lo_, ld) = (line.o, line.d);
    let set: Vec<(f64, f64)> = match *prim {
        Prim::Sphere(r) => to_t(ball(o, u, DVec3::ZERO, r as f64)),
        Prim::Cuboid(h) => {
            let h = d3(h);
            let mut acc = Some((f64::NEG_INFINITY, f64::INFINITY));
            for i in 0..3 {
                acc = match (acc, slab(lo_[i], ld[i], -h[i], h[i])) {
                    (Some((a, b)), Some((c, d))) if a.max(c) <= b.min(d) => Some((a.max(c), b.min(d))),
                    _ => None,
                };
            }
            acc.into_iter().collect()
        }
        Prim::Cylinder(r, hh) => {
            let (r, hh) = (r as f64, hh as f64);
            let a = u.x * u.x + u.z * u.z;
            let b = o.x * u.x + o.z * u.z;
            let c = o.x * o.x + o.z * o.z - r * r;
            clip(to_t(quadric_set(a, b, c)), slab(lo_.y, ld.y, -hh, hh))
        }
        Prim::Cone(r, hh) => {
            // x² + z² ≤ k²·(hh − y)², k = r / (2·hh), and −hh ≤ y ≤ hh.
            let (r, hh) = (r as f64, hh as f64);
            let k2 = (r / (2.0 * hh)).powi(2);
            let w0 = hh - o.y;
            let a = u.x * u.x + u.z * u.z - k2 * u.y * u.y;
            let b = o.x * u.x + o.z * u.z + k2 * w0 * u.y;
            let c = o.x * o.x + o.z * o.z - k2 * w0 * w0;
            merge(clip(to_t(quadric_set(a, b, c)), slab(lo_.y, ld.y, -hh, hh)))
        }
        Prim::Capsule(a, b, r) => {
            let (a, b, r) = (d3(a), d3(b), r as f64);
            let mut set = to_t(ball(o, u, a, r));
            set.extend(to_t(ball(o, u, b, r)));
            let len = (b - a).length();
            if len > 0.0 {
                let ax = (b - a) / len;
                let q = o - a;
                let qp = q - q.dot(ax) * ax;
                let dp = u - u.dot(ax) * ax;
                let side = quadric_set(dp.length_squared(), qp.dot(dp), qp.length_squared() - r * r);
                set.extend(clip(to_t(side), slab((lo_ - a).dot(ax), ld.dot(ax), 0.0, len)));
            }
            merge(set)
        }
        Prim::Torus(big, small) => to_t(torus(o, u, big as f64, small as f64)),
        Prim::Triangle(a, b, c) => {
            let (a, b, c) = (d3(a), d3(b), d3(c));
            let n = (b - a).cross(c - a);
            let dn = n.dot(line.d);
            if dn == 0.0 || n == DVec3::ZERO {
                return vec![];
            }
            let t = n.dot(a - line.o) / dn;
            let p = line.at(t);
            let (l0, l1, l2) = barycentric(p, a, b, c, n);
            return if l0 >= 0.0 && l1 >= 0.0 && l2 >= 0.0 {
                vec![Piece { enter: t, exit: t }]
            } else {
                vec![]
            };
        }
        Prim::Plane(n) => {
            let n = d3(n);
            let dn = n.dot(line.d);
            if dn == 0.0 {
                return vec![];
            }
            let t = -n.dot(line.o) / dn;
            return vec![Piece { enter: t, exit: t }];
        }
    };
    set.into_iter().map(|(a, b)| Piece { enter: a, exit: b }).collect()
}

/// Barycentric weights of `p` (in the plane of a b c with normal `n`), from
/// signed sub-triangle areas.
fn barycentric(p: DVec3, a: DVec3, b: DVec3, c: DVec3, n: DVec3) -> (f64, f64, f64) {
    let nn = n.length_squared();
    let l0 = (b - p).cross(c - p).dot(n) / nn;
    let l1 = (c - p).cross(a - p).dot(n) / nn;
    let l2 = (a - p).cross(b - p).dot(n) / nn;
    (l0, l1, l2)
}

/// Torus pieces along the unit line `o + s·u` whose `o` is the line's
/// closest point to the centre (so |s| ≤ R + r covers every crossing), found
/// on the exact f64 distance function rather than on the quartic: sphere
/// tracing (a step of |sdf| never jumps over the surface) with a floor of
/// `H_MIN` per step, then bisection on each sign change. The floor can step
/// over a piece only if its chord is shorter than `H_MIN`, i.e. its depth is
/// below ~`H_MIN²/(8·r)` (1e-11 of the size): such a piece costs nothing to
/// skip in the scoring anyway.
fn torus(o: DVec3, u: DVec3, big: f64, small: f64) -> Vec<(f64, f64)> {
    let reach = big + small;
    if o.length() > reach {
        return vec![];
    }
    let h_min = 1e-5 * reach;
    let f = |s: f64| {
        let p = o + s * u;
        dvec2(dvec2(p.x, p.z).length() - big, p.y).length() - small
    };
    let root = |mut lo: f64, mut hi: f64| {
        let inside_lo = f(lo) <= 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if (f(mid) <= 0.0) == inside_lo {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let lim = reach * (1.0 + 1e-9);
    let mut out = Vec::new();
    let (mut s, mut fs) = (-lim, f(-lim));
    let mut enter = None;
    while s < lim {
        let next = (s + fs.abs().max(h_min)).min(lim);
        let fn_ = f(next);
        if (fs <= 0.0) != (fn_ <= 0.0) {
            let r = root(s, next);
            match enter.take() {
                None => enter = Some(r),
                Some(e) => out.push((e, r)),
            }
        }
        (s, fs) = (next, fn_);
    }
    out
}

/// Signed distance from `p` to the surface (negative inside); for the
/// triangle the unsigned distance to it, for the plane the signed distance.
pub fn sdf(prim: &Prim, p: DVec3) -> f64 {
    match *prim {
        Prim::Sphere(r) => p.length() - r as f64,
        Prim::Cuboid(h) => {
            let q = p.abs() - d3(h);
            q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
        }
        Prim::Cylinder(r, hh) => {
            let q = dvec2(dvec2(p.x, p.z).length() - r as f64, p.y.abs() - hh as f64);
            q.max(DVec2::ZERO).length() + q.max_element().min(0.0)
        }
        Prim::Cone(r, hh) => {
            // Distance in the (ρ, y) half-plane to the triangle (0,−h) (r,−h) (0,h),
            // the axis edge excluded (it is not part of the surface).
            let (r, h) = (r as f64, hh as f64);
            let q = dvec2(dvec2(p.x, p.z).length(), p.y);
            let base = seg_dist(q, dvec2(0.0, -h), dvec2(r, -h));
            let slant = seg_dist(q, dvec2(r, -h), dvec2(0.0, h));
            let inside = q.y >= -h && q.x * 2.0 * h <= r * (h - q.y);
            if inside {
                -base.min(slant)
            } else {
                base.min(slant)
            }
        }
        Prim::Capsule(a, b, r) => seg_dist3(p, d3(a), d3(b)) - r as f64,
        Prim::Torus(big, small) => dvec2(dvec2(p.x, p.z).length() - big as f64, p.y).length() - small as f64,
        Prim::Triangle(a, b, c) => {
            let (a, b, c) = (d3(a), d3(b), d3(c));
            let n = (b - a).cross(c - a);
            let (l0, l1, l2) = barycentric(p, a, b, c, n);
            if l0 >= 0.0 && l1 >= 0.0 && l2 >= 0.0 {
                (p - a).dot(n).abs() / n.length()
            } else {
                seg_dist3(p, a, b).min(seg_dist3(p, b, c)).min(seg_dist3(p, c, a))
            }
        }
        Prim::Plane(n) => {
            let n = d3(n);
            p.dot(n) / n.length()
        }
    }
}

fn seg_dist(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let s = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    (p - a - s * ab).length()
}

fn seg_dist3(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let l2 = ab.length_squared();
    let s = if l2 > 0.0 { ((p - a).dot(ab) / l2).clamp(0.0, 1.0) } else { 0.0 };
    (p - a - s * ab).length()
}

/// How robust a piece is: the distance by which the ray must move to lose
/// it. Solids: the greatest depth of the line inside over the piece clipped
/// to t ≥ 0 (golden-section search; −sdf is concave along a line through a
/// convex solid, and nearly so over one piece of a torus). Triangle: the
/// smaller of the origin's distance to its plane and the crossing's distance
/// to the nearest edge. Plane: the origin's distance to it.
pub fn depth(prim: &Prim, line: &Line, piece: Piece) -> f64 {
    match *prim {
        Prim::Plane(_) => sdf(prim, line.o).abs(),
        Prim::Triangle(a, b, c) => {
            let (a, b, c) = (d3(a), d3(b), d3(c));
            let p = line.at(piece.enter);
            let edge = seg_dist3(p, a, b).min(seg_dist3(p, b, c)).min(seg_dist3(p, c, a));
            let n = (b - a).cross(c - a);
            edge.min((line.o - a).dot(n).abs() / n.length())
        }
        _ => {
            let (mut lo, mut hi) = (piece.enter.max(0.0), piece.exit);
            if lo > hi || lo.is_nan() || hi.is_nan() {
                return 0.0;
            }
            let g = |t: f64| -sdf(prim, line.at(t));
            const INV_PHI: f64 = 0.618_033_988_749_894_8;
            let mut x1 = hi - INV_PHI * (hi - lo);
            let mut x2 = lo + INV_PHI * (hi - lo);
            let (mut g1, mut g2) = (g(x1), g(x2));
            for _ in 0..80 {
                if g1 < g2 {
                    lo = x1;
                    x1 = x2;
                    g1 = g2;
                    x2 = lo + INV_PHI * (hi - lo);
                    g2 = g(x2);
                } else {
                    hi = x2;
                    x2 = x1;
                    g2 = g1;
                    x1 = hi - INV_PHI * (hi - lo);
                    g1 = g(x1);
                }
            }
            g1.max(g2).max(g(piece.enter.max(0.0))).max(g(piece.exit)).max(0.0)
        }
    }
}

/// Outward unit normal of the surface near `p` (central differences of the
/// sdf; used only to build grazing rays).
pub fn normal(prim: &Prim, p: DVec3, h: f64) -> DVec3 {
    let e = |v: DVec3| sdf(prim, p + h * v) - sdf(prim, p - h * v);
    dvec3(e(DVec3::X), e(DVec3::Y), e(DVec3::Z)).normalize_or(DVec3::Y)
}
