//! `op: traverse`: the ordered grid walk of DESIGN §4 in 2D or 3D.

use super::build::{cell_size_vec, exactly};
use super::wire::Query;
use raycast::grid::Grid;
use raycast::{GridWalk, Interval, Ray, Vec2, Vec3};
use serde_json::{json, Value};

const DEFAULT_MAX_STEPS: u64 = 100_000;

/// The start, the direction and the parameter range of the walk: a segment
/// `from → to` over `[0, 1]`, or a `ray` over `[t_min, t_max]`.
enum Path {
    Segment(Vec<f32>, Vec<f32>),
    Ray(Vec<f32>, Vec<f32>, Interval),
}

pub fn answer(q: &Query) -> Result<Value, String> {
    let grid = q.grid.as_ref().ok_or("missing field `grid`")?;
    let dims = grid.dims.unwrap_or(3) as usize;
    if dims != 2 && dims != 3 {
        return Err(format!("grid.dims must be 2 or 3, got {dims}"));
    }
    if q.shape.is_some() || q.objects.is_some() || q.transform.is_some() || q.mask.is_some() {
        return Err("op traverse takes a `grid`, not `shape`, `objects`, `transform` or `mask`".into());
    }
    let size = match &grid.cell_size {
        None => vec![1.0; dims],
        Some(c) => cell_size_vec(c, dims, "grid.cell_size")?,
    };
    let origin = match &grid.origin {
        None => vec![0.0; dims],
        Some(o) => exactly(o, dims, "grid.origin")?,
    };
    let path = match (&q.from, &q.to, &q.ray) {
        (Some(f), Some(t), None) => {
            if q.t_min.is_some() || q.t_max.is_some() {
                return Err("t_min/t_max go with `ray`; a `from`/`to` segment is walked over [0, 1]".into());
            }
            Path::Segment(exactly(f, dims, "from")?, exactly(t, dims, "to")?)
        }
        (None, None, Some(r)) => {
            let range = Interval::new(q.t_min.unwrap_or(0.0), q.t_max.unwrap_or(f32::INFINITY));
            Path::Ray(exactly(&r.origin, dims, "ray.origin")?, exactly(&r.dir, dims, "ray.dir")?, range)
        }
        _ => return Err("op traverse needs either `from` and `to`, or `ray`".into()),
    };
    let supercover = q.supercover.unwrap_or(true);
    let max_steps = u32::try_from(q.max_steps.unwrap_or(DEFAULT_MAX_STEPS)).unwrap_or(u32::MAX);
    let steps: Vec<Value> = if dims == 3 {
        let v = |a: &[f32]| Vec3::new(a[0], a[1], a[2]);
        let g = Grid::<3>::try_new(v(&size), v(&origin)).map_err(|e| e.within("grid").to_string())?;
        let walk = match path {
            Path::Segment(f, t) => GridWalk::<3>::segment(&g, v(&f), v(&t), supercover),
            Path::Ray(o, d, range) => GridWalk::<3>::new(&g, &Ray::new(v(&o), v(&d)), range, supercover),
        };
        walk.max_steps(max_steps)
            .map(|s| json!({"t": s.t, "t_exit": s.t_exit, "cells": s.cells().map(|c| [c.x, c.y, c.z]).collect::<Vec<_>>()}))
            .collect()
    } else {
        let v = |a: &[f32]| Vec2::new(a[0], a[1]);
        let g = Grid::<2>::try_new(v(&size), v(&origin)).map_err(|e| e.within("grid").to_string())?;
        let walk = match path {
            Path::Segment(f, t) => GridWalk::<2>::segment(&g, v(&f), v(&t), supercover),
            Path::Ray(o, d, range) => GridWalk::<2>::new(&g, v(&o), v(&d), range, supercover),
        };
        walk.max_steps(max_steps)
            .map(|s| json!({"t": s.t, "t_exit": s.t_exit, "cells": s.cells().map(|c| [c.x, c.y]).collect::<Vec<_>>()}))
            .collect()
    };
    Ok(json!({ "steps": steps }))
}
