//! Exactness report: the hit-point error of raycast (and of parry3d) against
//! an independent f64 reference, on ~1M adversarial rays per shape.
//!
//! Every shape is taken at three sizes (×1e-2, ×1, ×1e2) in its own frame.
//! The rays (generated in f64, then rounded to the f32 rays both libraries
//! get; the reference works on those f32 values exactly) come in equal
//! shares of seven kinds, all with unnormalised directions of magnitude
//! 10^U(−3, 3):
//!
//! 1. aimed: from 10^U(0.1, 2) sizes away toward a point of the bounding box
//!    grown by 10 % (hits and near misses);
//! 2. far: the same from 10^U(3, 4) sizes away;
//! 3. grazing: tangent to the surface at a reference surface point, offset
//!    along the normal by ±10^U(−9, −2) sizes and tilted by as much;
//! 4. near-surface targets: from afar toward a reference surface point moved
//!    by 10^U(−9, −3) sizes (edges, rims and apexes included when the point
//!    lands near one);
//! 5. inside: from a point of the bounding ball (often inside the solid) in
//!    a random direction;
//! 6. axis-parallel: one or two zero direction components;
//! 7. log-uniform: every origin and direction component 10^U(−6, 4) resp.
//!    10^U(−6, 3) with a random sign.
//!
//! The error of one ray, relative to the scene scale
//! `sc = max(|origin|, |hit − origin|, size)`:
//! * both miss: not counted;
//! * raycast hits at `p`: the least of `|p − P_j|` over the reference's
//!   crossings `P_j`, each raised to the depth of the pieces it skips (a
//!   piece of depth δ can vanish under a move of the ray by δ, so skipping a
//!   grazed piece costs only its depth), and of "a spurious graze":
//!   `max(|sdf(p)|, dist(p, line))`;
//! * raycast misses, reference hits: the depth of the deepest piece it missed.
//!
//! parry3d is scored the same way (its point is `o + t·d` evaluated in f64,
//! which favours it slightly); it has no torus.
//!
//! Run: `cd compare && cargo run --release --bin exactness [rays_per_shape]`.

mod reference;

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raycast::{Interval, Ray, RayCast};
use raycast_compare::prims::{self, Prim};
use reference::{depth, pieces, sdf, Line, Piece};

/// Targets of DESIGN / BRIEF: error ≤ 4e-6·sc at p99.9, ≤ 2e-5·sc worst.
const P999_TARGET: f64 = 4e-6;
const MAX_TARGET: f64 = 2e-5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 10 && args[1] == "debug" {
        return debug(&args[2..]);
    }
    let per_shape: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let scales = [1e-2f32, 1.0, 1e2];
    println!(
        "{per_shape} rays per shape ({} sizes × 7 kinds), errors relative to the scene scale",
        scales.len()
    );
    println!("point = forward error |p − exact first crossing| (grazed pieces may be skipped at the cost of their depth);");
    println!("backward = smallest move of the ray for which the answer is exact (on the surface and the ray, no piece crossed before it).");
    println!("(near a tangency an f32 kernel moves the point along the ray by ~sqrt(u)·sc while staying on the surface:");
    println!(" the conformance suite accepts that, so the backward figures are the ones it judges by.)");
    println!("met: p99.9 ≤ {P999_TARGET:e} and max ≤ {MAX_TARGET:e}; `scored` = rays where the library or the reference hits");
    println!("| shape    | lib     | scored   | p50      | p99.9    | max      | >4e-6  | >2e-5  | met  | bwd p99.9 | bwd max  | met  |");
    println!("|----------|---------|----------|----------|----------|----------|--------|--------|------|-----------|----------|------|");
    let mut worst_lines = Vec::new();
    let mut skipped = Vec::new();
    for base in prims::all() {
        let mut ours = Stats::default();
        let mut theirs = Stats::default();
        let mut stub = true;
        for (k, &s) in scales.iter().enumerate() {
            let prim = base.scaled(s);
            let shape = prim.ours();
            let parry = prim.parry();
            let mut rng = Pcg64::seed_from_u64(0xe4ac_7000 + k as u64);
            let n = per_shape / scales.len();
            for i in 0..n {
                let ray = make_ray(&prim, i % 7, &mut rng);
                let line = Line { o: ray.origin.as_dvec3(), d: ray.dir.as_dvec3() };
                let reference = pieces(&prim, &line);
                let hit = shape.cast(&ray, Interval::FORWARD);
                stub &= hit.is_none();
                if let Some(e) = score(&prim, &line, &reference, hit.map(|h| h.point.as_dvec3())) {
                    ours.push(e, &ray, i % 7, s);
                }
                if let Some(p) = &parry {
                    let pr = prims::parry_ray(&ray);
                    let h = p.cast_local_ray_and_get_normal(&pr, f32::MAX, false);
                    let point = h.map(|h| line.at(h.time_of_impact as f64));
                    if let Some(e) = score(&prim, &line, &reference, point) {
                        theirs.push(e, &ray, i % 7, s);
                    }
                }
            }
        }
        let name = base.name();
        if stub {
            skipped.push(name);
        } else {
            ours.print(name, "raycast");
            for (what, (e, ray, kind, size)) in [("point", ours.worst), ("backward", ours.worst_backward)] {
                if let Some(r) = ray {
                    worst_lines.push(format!(
                        "{name:<8} raycast worst {what:<8} {e:.2e} (kind {kind}, size ×{size}): origin {:?} dir {:?}",
                        r.origin.to_array(),
                        r.dir.to_array()
                    ));
                }
            }
        }
        if base.parry().is_some() {
            theirs.print(name, "parry3d");
        }
    }
    println!();
    for l in worst_lines {
        println!("{l}");
    }
    if !skipped.is_empty() {
        println!(
            "not measured for raycast (kernel answers no hit at all: not merged yet): {}",
            skipped.join(", ")
        );
    }
}

#[derive(Default)]
struct Stats {
    forward: Vec<f64>,
    backward: Vec<f64>,
    /// Worst forward error, its ray and kind (1-based).
    worst: (f64, Option<Ray>, usize, f32),
    /// Worst backward error, its ray and kind (1-based).
    worst_backward: (f64, Option<Ray>, usize, f32),
}

impl Stats {
    fn push(&mut self, (forward, backward): (f64, f64), ray: &Ray, kind: usize, size: f32) {
        self.forward.push(forward);
        self.backward.push(backward);
        if forward > self.worst.0 || self.worst.1.is_none() {
            self.worst = (forward, Some(*ray), kind + 1, size);
        }
        if backward > self.worst_backward.0 || self.worst_backward.1.is_none() {
            self.worst_backward = (backward, Some(*ray), kind + 1, size);
        }
    }

    /// p50, p99.9, max and the count above each target.
    fn summary(v: &mut [f64]) -> (f64, f64, f64, usize, usize) {
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
        let over = |x: f64| v.iter().filter(|&&e| e > x).count();
        (q(0.5), q(0.999), v.last().copied().unwrap_or(0.0), over(P999_TARGET), over(MAX_TARGET))
    }

    fn print(&mut self, shape: &str, lib: &str) {
        let (p50, p999, max, o4, o2) = Self::summary(&mut self.forward);
        let (_, bp999, bmax, _, _) = Self::summary(&mut self.backward);
        let met = |p999: f64, max: f64| if p999 <= P999_TARGET && max <= MAX_TARGET { "yes" } else { "NO" };
        println!(
            "| {shape:<8} | {lib:<7} | {:>8} | {p50:>8.1e} | {p999:>8.1e} | {max:>8.1e} | {o4:>6} | {o2:>6} | {:<4} | {bp999:>9.1e} | {bmax:>8.1e} | {:<4} |",
            self.forward.len(),
            met(p999, max),
            met(bp999, bmax)
        );
    }
}

/// The error of one answer (see the module doc), relative to the scene
/// scale; `None` when both the library and the reference miss.
fn score(prim: &Prim, line: &Line, reference: &[Piece], lib: Option<DVec3>) -> Option<(f64, f64)> {
    // The crossings with t ≥ 0, in order, with the piece each belongs to.
    // An entry within 1e-12 of the scale behind the origin is the origin on
    // the surface (the reference's re-parametrisation rounds t = 0 to ±tiny).
    let eps_t = 1e-12 * line.o.length().max(prim.bounding_sphere().1 as f64) / line.d.length();
    let mut crossings: Vec<(f64, usize)> = Vec::new();
    for (i, p) in reference.iter().enumerate() {
        if p.enter >= -eps_t {
            crossings.push((p.enter.max(0.0), i));
        }
        if p.exit >= 0.0 && p.exit != p.enter {
            crossings.push((p.exit, i));
        }
    }
    if crossings.is_empty() && lib.is_none() {
        return None;
    }
    let size = prim.bounding_sphere().1 as f64;
    let mut sc = line.o.length().max(size);
    if let Some(&(t, _)) = crossings.first() {
        sc = sc.max((line.at(t) - line.o).length());
    }
    if let Some(p) = lib {
        sc = sc.max((p - line.o).length());
    }
    if !sc.is_finite() {
        sc = f64::MAX;
    }
    // Skipping piece i costs its depth, or moving the origin past its first
    // crossing (an origin on or just outside the surface may be taken as
    // inside: the conformance suite accepts either answer there).
    let depth_of = |i: usize| {
        let piece = reference[i];
        let first = if piece.enter >= 0.0 { piece.enter } else { piece.exit };
        depth(prim, line, piece).min((line.at(first) - line.o).length())
    };
    let solid = !matches!(prim, Prim::Triangle(..) | Prim::Plane(..));
    let (forward, backward) = match lib {
        None => {
            // Every piece was missed: the deepest one is the error.
            let mut seen = Vec::new();
            let mut e: f64 = 0.0;
            for &(_, i) in &crossings {
                if !seen.contains(&i) {
                    seen.push(i);
                    e = e.max(depth_of(i));
                }
            }
            (e, e)
        }
        Some(p) => {
            let first = crossings.first().map(|&(t, _)| (p - line.at(t)).length()).unwrap_or(f64::INFINITY);
            let on_surface = sdf(prim, p).abs().max(line.distance(p));
            if first <= 1e-9 * sc {
                // Matched to the first crossing: nothing more to explain.
                (first, first)
            } else {
                // Matched to a later crossing, paying for the pieces skipped.
                let mut forward = f64::INFINITY;
                let mut skipped: f64 = 0.0;
                for &(t, i) in &crossings {
                    forward = forward.min(skipped.max((p - line.at(t)).length()));
                    skipped = skipped.max(depth_of(i));
                }
                if crossings.is_empty() {
                    forward = on_surface; // a graze the reference does not see
                }
                // Or: `p` is on the surface and on the ray, and the ray crossed
                // no piece of the solid before it (a surface has no inside to
                // cross: a point of it on the ray is a valid answer for a ray
                // moved by `on_surface`).
                let t_p = line.param(p);
                let mut before: f64 = 0.0;
                if solid {
                    // How deep the ray went inside before reaching `p` through a
                    // crossing it did not report (the piece it started in excepted).
                    for piece in reference {
                        if piece.enter >= 0.0 && piece.enter < t_p {
                            let part = Piece { enter: piece.enter, exit: piece.exit.min(t_p) };
                            before = before.max(depth(prim, line, part));
                        } else if piece.enter < 0.0 && piece.exit >= 0.0 && piece.exit < t_p {
                            before = before
                                .max(depth(prim, line, *piece).min((line.at(piece.exit) - line.o).length()));
                        }
                    }
                }
                (forward, forward.min(on_surface.max(before)))
            }
        }
    };
    Some((forward / sc, backward / sc))
}

/// 10^U(lo, hi).
fn log_uniform(rng: &mut impl Rng, lo: f64, hi: f64) -> f64 {
    10f64.powf(rng.random_range(lo..hi))
}

/// ±10^U(lo, hi).
fn signed_log_uniform(rng: &mut impl Rng, lo: f64, hi: f64) -> f64 {
    let x = log_uniform(rng, lo, hi);
    if rng.random::<bool>() {
        x
    } else {
        -x
    }
}

fn unit(rng: &mut impl Rng) -> DVec3 {
    prims::on_sphere(rng).as_dvec3()
}

/// A point on the reference surface: the first crossing of a random aimed
/// ray (retried until one hits).
fn surface_point(prim: &Prim, rng: &mut impl Rng) -> DVec3 {
    let (c, r) = prim.bounding_sphere();
    let (c, r) = (c.as_dvec3(), r as f64);
    loop {
        let o = c + 3.0 * r * unit(rng);
        let target = prim.interior(rng).as_dvec3();
        let line = Line { o, d: target - o };
        if let Some(p) = pieces(prim, &line).first() {
            return line.at(p.enter);
        }
    }
}

/// One adversarial ray of the given kind (0–6, see the module doc).
fn make_ray(prim: &Prim, kind: usize, rng: &mut Pcg64) -> Ray {
    let (c, r) = prim.bounding_sphere();
    let (c, l) = (c.as_dvec3(), r as f64);
    let box_point = |rng: &mut Pcg64| {
        let b = raycast::RayCast::local_bounds(&prim.ours());
        let (bc, bh) = if b.size().is_finite() {
            (b.center().as_dvec3(), 0.5 * b.size().as_dvec3())
        } else {
            (c, DVec3::splat(l))
        };
        let v = DVec3::new(prims::sym(rng) as f64, prims::sym(rng) as f64, prims::sym(rng) as f64);
        bc + 1.1 * bh * v
    };
    let mag = log_uniform(rng, -3.0, 3.0);
    let (o, d) = match kind {
        0 | 1 => {
            let dist = if kind == 0 { log_uniform(rng, 0.1, 2.0) } else { log_uniform(rng, 3.0, 4.0) };
            let o = c + dist * l * unit(rng);
            let target = box_point(rng);
            (o, (target - o).normalize() * mag)
        }
        2 => {
            let p = surface_point(prim, rng);
            let n = reference::normal(prim, p, 1e-7 * l);
            let t = n.cross(unit(rng)).normalize_or(n.any_orthonormal_vector());
            let off = signed_log_uniform(rng, -9.0, -2.0) * l;
            let tilt = signed_log_uniform(rng, -9.0, -2.0);
            let o = p - t * l * rng.random_range(0.5..5.0) + n * off;
            (o, (t + n * tilt) * mag)
        }
        3 => {
            let p = surface_point(prim, rng) + log_uniform(rng, -9.0, -3.0) * l * unit(rng);
            let o = c + log_uniform(rng, 0.3, 2.0) * l * unit(rng);
            (o, (p - o).normalize() * mag)
        }
        4 => (c + l * prims::in_ball(rng).as_dvec3(), unit(rng) * mag),
        5 => {
            let mut d = unit(rng);
            let zeros = rng.random_range(1..3);
            let first = rng.random_range(0..3);
            for z in 0..zeros {
                d[(first + z) % 3] = 0.0;
            }
            let o = c + l * DVec3::new(
                rng.random_range(-1.5..1.5),
                rng.random_range(-1.5..1.5),
                rng.random_range(-1.5..1.5),
            );
            (o, d.normalize_or(DVec3::X) * mag)
        }
        _ => {
            let comp = |rng: &mut Pcg64, lo, hi| signed_log_uniform(rng, lo, hi);
            let o = c + l * DVec3::new(comp(rng, -6.0, 4.0), comp(rng, -6.0, 4.0), comp(rng, -6.0, 4.0));
            let d = DVec3::new(comp(rng, -6.0, 3.0), comp(rng, -6.0, 3.0), comp(rng, -6.0, 3.0));
            (o, d)
        }
    };
    Ray::new(o.as_vec3(), d.as_vec3())
}

/// `exactness debug SHAPE SIZE ox oy oz dx dy dz`: the reference pieces and
/// both libraries' answers for one ray, with the scores.
fn debug(a: &[String]) {
    let f =
        |i: usize| a[i].trim_matches(|c| c == ',' || c == '[' || c == ']').parse::<f32>().expect("a number");
    let base = prims::all().into_iter().find(|p| p.name() == a[0]).expect("a shape name");
    let prim = base.scaled(f(1));
    let ray = Ray::new(glam::vec3(f(2), f(3), f(4)), glam::vec3(f(5), f(6), f(7)));
    let line = Line { o: ray.origin.as_dvec3(), d: ray.dir.as_dvec3() };
    let reference = pieces(&prim, &line);
    println!("{prim:?}\n{ray:?}");
    for p in &reference {
        println!(
            "piece t {:e} .. {:e}  points {:?} .. {:?}  depth {:e}",
            p.enter,
            p.exit,
            line.at(p.enter).to_array(),
            line.at(p.exit).to_array(),
            depth(&prim, &line, *p)
        );
    }
    let hit = prim.ours().cast(&ray, Interval::FORWARD);
    println!("raycast {hit:?}");
    if let Some(h) = hit {
        let p = h.point.as_dvec3();
        println!("  sdf(point) {:e}, dist to line {:e}", sdf(&prim, p), line.distance(p));
    }
    println!("raycast score {:?}", score(&prim, &line, &reference, hit.map(|h| h.point.as_dvec3())));
    if let Some(pp) = prim.parry() {
        let h = pp.cast_local_ray_and_get_normal(&prims::parry_ray(&ray), f32::MAX, false);
        println!("parry t {:?}", h.map(|h| h.time_of_impact));
        println!(
            "parry score {:?}",
            score(&prim, &line, &reference, h.map(|h| line.at(h.time_of_impact as f64)))
        );
    }
}
