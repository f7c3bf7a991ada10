//! Answering one parsed query, and the JSON form of the answers.

use super::build::Placed;
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
