//! Answering one parsed query, and the JSON form of the answers.

use super::build::{Object, Placed};
use raycast::{Hit, Interval, Ray, RayCast, Span};
use serde_json::{json, Map, Value};

pub fn cast(p: &Placed, ray: &Ray, range: Interval) -> Option<Hit> {
    match p {
        Placed::Local(s) => s.cast(ray, range),
        Placed::World(t) => t.cast(ray, range),
    }
}

pub fn any(p: &Placed, ray: &Ray, range: Interval) -> bool {
    match p {
        Placed::Local(s) => s.hits(ray, range),
        Placed::World(t) => t.hits(ray, range),
    }
}

pub fn all(p: &Placed, ray: &Ray, range: Interval) -> Vec<Hit> {
    match p {
        Placed::Local(s) => s.cast_all(ray, range),
        Placed::World(t) => t.cast_all(ray, range),
    }
}

/// `None` (the outer one) when the shape is not a convex solid.
pub fn span(p: &Placed, ray: &Ray) -> Option<Option<Span>> {
    match p {
        Placed::Local(s) => s.is_convex_solid().then(|| s.span(ray)),
        Placed::World(t) => t.shape().is_convex_solid().then(|| {
            let s = t.shape().span(&t.to_local(ray))?;
            Some(Span { enter: t.to_world(ray, s.enter), exit: t.to_world(ray, s.exit) })
        }),
    }
}

fn candidates<'a>(objects: &'a [Object], mask: u32) -> impl Iterator<Item = &'a Object> + 'a {
    objects.iter().filter(move |o| o.mask & mask != 0)
}

fn tag(mut h: Hit, id: u32) -> Hit {
    h.object = Some(id);
    h
}

/// Closest hit over the candidate objects (brute force; ties keep the first).
pub fn scene_cast(objects: &[Object], mask: u32, ray: &Ray, range: Interval) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    for o in candidates(objects, mask) {
        let r = best.map_or(range, |b| range.with_max(b.t));
        if let Some(h) = cast(&o.placed, ray, r) {
            if best.is_none_or(|b| h.t < b.t) {
                best = Some(tag(h, o.id));
            }
        }
    }
    best
}

pub fn scene_any(objects: &[Object], mask: u32, ray: &Ray, range: Interval) -> bool {
    candidates(objects, mask).any(|o| any(&o.placed, ray, range))
}

pub fn scene_all(objects: &[Object], mask: u32, ray: &Ray, range: Interval) -> Vec<Hit> {
    let mut hits = Vec::new();
    for o in candidates(objects, mask) {
        hits.extend(all(&o.placed, ray, range).into_iter().map(|h| tag(h, o.id)));
    }
    hits.sort_by(|a, b| a.t.total_cmp(&b.t));
    hits
}

fn vec3_json(v: raycast::Vec3) -> Value {
    json!([v.x, v.y, v.z])
}

/// A hit as DESIGN §6 writes it.
pub fn hit_json(h: &Hit) -> Value {
    let mut m = Map::new();
    m.insert("t".into(), json!(h.t));
    m.insert("point".into(), vec3_json(h.point));
    m.insert("normal".into(), vec3_json(h.normal));
    m.insert("front_face".into(), json!(h.front_face));
    m.insert("part".into(), json!(h.part.name()));
    if let Some(uv) = h.uv {
        m.insert("uv".into(), json!([uv.x, uv.y]));
    }
    if let Some(tri) = h.triangle {
        m.insert("triangle".into(), json!(tri));
    }
    if let Some(c) = h.cell {
        m.insert("cell".into(), json!([c.x, c.y, c.z]));
    }
    if let Some(o) = h.object {
        m.insert("object".into(), json!(o));
    }
    Value::Object(m)
}
