//! `raycast query`: JSON-lines ray queries (DESIGN §6).
//!
//! One JSON object per input line, one JSON result per output line, in the
//! same order. A bad line gets an `{"error": "line N: ..."}` result naming the
//! field, and the stream goes on with the next line.

mod answer;
pub(crate) mod build;
mod traverse;
pub(crate) mod wire;

use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};
use wire::{Op, Query};

use raycast::{Filter, Interval};

/// Answers every line of `input` on `output`. Returns how many lines failed.
pub fn run(input: impl BufRead, mut output: impl Write, flush_each_line: bool) -> std::io::Result<usize> {
    let mut failed = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let result = answer_line(&line, i + 1);
        if result.get("error").is_some() {
            failed += 1;
        }
        serde_json::to_writer(&mut output, &result)?;
        output.write_all(b"\n")?;
        if flush_each_line {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(failed)
}

/// The result object for one line (`line_no` counts from 1).
pub fn answer_line(line: &str, line_no: usize) -> Value {
    // The id is echoed even on errors when the line is an object with one.
    let id = serde_json::from_str::<Value>(line).ok().and_then(|v| v.get("id").cloned());
    let mut out = Map::new();
    if let Some(id) = id.clone() {
        out.insert("id".into(), id);
    }
    match parse(line).and_then(answer) {
        Ok(Value::Object(m)) => out.extend(m),
        Ok(other) => {
            out.insert("result".into(), other);
        }
        Err(e) => {
            out.insert("error".into(), json!(format!("line {line_no}: {e}")));
        }
    }
    Value::Object(out)
}

fn parse(line: &str) -> Result<Query, String> {
    wire::from_json(line)
}

fn range(q: &Query) -> Interval {
    Interval::new(q.t_min.unwrap_or(0.0), q.t_max.unwrap_or(f32::INFINITY))
}

fn answer(q: Query) -> Result<Value, String> {
    let op = q.op.unwrap_or(Op::Cast);
    if op == Op::Traverse {
        return traverse::answer(&q);
    }
    if q.grid.is_some()
        || q.from.is_some()
        || q.to.is_some()
        || q.supercover.is_some()
        || q.max_steps.is_some()
    {
        return Err("`grid`, `from`, `to`, `supercover` and `max_steps` go with op traverse".into());
    }
    let ray = build::ray(q.ray.as_ref().ok_or("missing field `ray`")?)?;
    let range = range(&q);
    match (q.shape, q.objects) {
        (Some(_), Some(_)) => Err("give either `shape` or `objects`, not both".into()),
        (None, None) => Err("missing field `shape` (or `objects`)".into()),
        (Some(shape), None) => {
            if q.mask.is_some() {
                return Err("mask: only a scene query (`objects`) takes a mask".into());
            }
            let p = build::placed(shape, q.transform.as_ref(), "")?;
            Ok(match op {
                Op::Cast => json!({ "hit": answer::cast(&p, &ray, range).as_ref().map(answer::hit_json) }),
                Op::Any => json!({ "hit": answer::any(&p, &ray, range) }),
                Op::All => {
                    json!({ "hits": answer::all(&p, &ray, range).iter().map(answer::hit_json).collect::<Vec<_>>() })
                }
                Op::Span => {
                    if q.t_min.is_some() || q.t_max.is_some() {
                        return Err("op span takes no t_min/t_max: it answers for the whole line".into());
                    }
                    let s = answer::span(&p, &ray).ok_or(
                        "op span: shape is not a convex solid (sphere, cuboid, cylinder, cone, capsule)",
                    )?;
                    json!({ "span": s.map(|s| json!({ "enter": answer::hit_json(&s.enter), "exit": answer::hit_json(&s.exit) })) })
                }
                Op::Traverse => unreachable!("handled above"),
            })
        }
        (None, Some(objects)) => {
            if q.transform.is_some() {
                return Err("transform: a scene query places each object with its own transform".into());
            }
            let scene = build::objects(objects)?;
            let filter = Filter::default().with_mask(q.mask.unwrap_or(u32::MAX));
            Ok(match op {
                Op::Cast => json!({ "hit": scene.cast(&ray, range, &filter).as_ref().map(answer::hit_json) }),
                Op::Any => json!({ "hit": scene.hits(&ray, range, &filter) }),
                Op::All => {
                    json!({ "hits": scene.cast_all(&ray, range, &filter).iter().map(answer::hit_json).collect::<Vec<_>>() })
                }
                Op::Span => return Err("op span is not defined for a scene (`objects`)".into()),
                Op::Traverse => unreachable!("handled above"),
            })
        }
    }
}
