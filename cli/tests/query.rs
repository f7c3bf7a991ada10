//! End-to-end tests of `raycast query`: the binary is run on JSON lines.

mod common;

use serde_json::Value;

/// Runs `raycast query` on `input`; returns the parsed output lines and the exit code.
fn query(input: &str) -> (Vec<Value>, i32) {
    common::query_in(&std::env::temp_dir(), input)
}

#[test]
fn sphere_cast_matches_design_example() {
    let (out, code) = query(
        r#"{"id": 7, "op": "cast", "shape": {"type": "sphere", "radius": 1.0}, "transform": {"translation": [0,0,0], "rotation": [0,0,0,1], "scale": [1,1,1]}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}, "t_min": 0.0, "t_max": null}"#,
    );
    assert_eq!(code, 0);
    let hit = &out[0]["hit"];
    assert_eq!(out[0]["id"], 7);
    assert_eq!(hit["t"], 4.0);
    assert_eq!(hit["point"], serde_json::json!([0.0, 0.0, -1.0]));
    assert_eq!(hit["normal"], serde_json::json!([0.0, 0.0, -1.0]));
    assert_eq!(hit["front_face"], true);
    assert_eq!(hit["part"], "surface");
}

#[test]
fn every_op_answers_in_order() {
    let ray = r#""ray": {"origin": [0,0,-5], "dir": [0,0,1]}"#;
    let input = [
        format!(r#"{{"id": 1, "op": "any", "shape": {{"type": "sphere", "radius": 1}}, {ray}}}"#),
        format!(r#"{{"id": 2, "op": "all", "shape": {{"type": "sphere", "radius": 1}}, {ray}}}"#),
        format!(r#"{{"id": 3, "op": "span", "shape": {{"type": "sphere", "radius": 1}}, {ray}}}"#),
        format!(r#"{{"id": 4, "shape": {{"type": "sphere", "radius": 1}}, {ray}, "t_max": 3.0}}"#),
    ]
    .join("\n");
    let (out, code) = query(&input);
    assert_eq!(code, 0);
    assert_eq!(out[0]["hit"], true);
    assert_eq!(out[1]["hits"].as_array().unwrap().len(), 2);
    assert_eq!(out[2]["span"]["enter"]["t"], 4.0);
    assert_eq!(out[2]["span"]["exit"]["t"], 6.0);
    assert_eq!(out[3]["hit"], Value::Null);
    let ids: Vec<i64> = out.iter().map(|v| v["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 4]);
}

#[test]
fn bad_lines_get_errors_and_the_stream_goes_on() {
    let good = r#"{"id": "ok", "shape": {"type": "sphere", "radius": 1}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#;
    let bad = [
        "this is not json",
        r#"{"id": 1, "shape": {"type": "sphere", "radius": -1}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
        r#"{"id": 2, "shape": {"type": "sphere", "radius": 1, "radious": 1}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
        r#"{"id": 3, "shape": {"type": "blob"}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
        r#"{"id": 4, "shape": {"type": "sphere", "radius": 1}, "ray": {"origin": [0,0], "dir": [0,0,1]}}"#,
        r#"{"id": 5, "shape": {"type": "torus", "major_radius": 1, "minor_radius": 2}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
        r#"{"id": 6, "op": "teleport", "shape": {"type": "sphere", "radius": 1}, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
        r#"{"id": 7, "mask": 1, "mask": 2, "objects": [], "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
    ];
    let mut lines = vec![good.to_string()];
    for b in bad {
        lines.push(b.to_string());
        lines.push(good.to_string());
    }
    let (out, code) = query(&lines.join("\n"));
    assert_eq!(code, 1, "a failed line makes the exit status 1");
    assert_eq!(out.len(), lines.len(), "no line is lost");
    for (i, v) in out.iter().enumerate() {
        if i % 2 == 0 {
            assert_eq!(v["hit"]["t"], 4.0, "line {}: {v}", i + 1);
        } else {
            let msg = v["error"].as_str().unwrap_or_else(|| panic!("line {}: {v}", i + 1));
            assert!(msg.starts_with(&format!("line {}:", i + 1)), "{msg}");
        }
    }
    // The error names the field and the value.
    assert!(out[3]["error"].as_str().unwrap().contains("shape.radius must be finite and > 0, got -1"));
    assert!(out[5]["error"].as_str().unwrap().contains("radious"));
}

#[test]
fn degenerate_rays_are_misses_not_errors() {
    let (out, code) = query(
        r#"{"shape": {"type": "sphere", "radius": 1}, "ray": {"origin": [0,0,-5], "dir": [0,0,0]}}
{"op": "span", "shape": {"type": "sphere", "radius": 1}, "ray": {"origin": [0,0,-5], "dir": [0,0,0]}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out[0]["hit"], Value::Null);
    assert_eq!(out[1]["span"], Value::Null);
}

#[test]
fn scene_objects_carry_ids_and_respect_masks() {
    let (out, code) = query(
        r#"{"op": "cast", "objects": [{"shape": {"type": "sphere", "radius": 1}, "id": 4294967295, "mask": 2}, {"shape": {"type": "sphere", "radius": 1}, "transform": {"translation": [0,0,5]}, "id": 9, "mask": 1}], "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}
{"op": "cast", "objects": [{"shape": {"type": "sphere", "radius": 1}, "id": 4294967295, "mask": 2}, {"shape": {"type": "sphere", "radius": 1}, "transform": {"translation": [0,0,5]}, "id": 9, "mask": 1}], "mask": 1, "ray": {"origin": [0,0,-5], "dir": [0,0,1]}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out[0]["hit"]["object"], 4294967295u32);
    assert_eq!(out[1]["hit"]["object"], 9);
    assert_eq!(out[1]["hit"]["t"], 9.0);
}

#[test]
fn traverse_walks_2d_and_3d_grids_with_corner_groups() {
    let (out, code) = query(
        r#"{"id": 1, "op": "traverse", "grid": {"dims": 2, "cell_size": [1,1], "origin": [0,0]}, "from": [-1.5, 0.5], "to": [2.5, 1.5], "supercover": true}
{"id": 2, "op": "traverse", "grid": {"dims": 3}, "from": [0.5, 0.5, 0.5], "to": [2.5, 2.5, 2.5]}
{"id": 3, "op": "traverse", "grid": {"dims": 2}, "ray": {"origin": [0.5, 0.5], "dir": [1, 0]}, "t_max": 2.0}
{"id": 4, "op": "traverse", "grid": {"dims": 4}, "from": [0, 0], "to": [1, 1]}"#,
    );
    assert_eq!(code, 1);
    let steps = out[0]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["t"], 0.0);
    assert_eq!(steps[0]["cells"], serde_json::json!([[-2, 0]]));
    assert_eq!(steps[1]["t"], 0.125);
    assert_eq!(steps[1]["cells"], serde_json::json!([[-1, 0]]));
    // The 3D diagonal passes through lattice corners: 7 cells at each.
    let sizes: Vec<usize> =
        out[1]["steps"].as_array().unwrap().iter().map(|s| s["cells"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [1, 7, 7]);
    let cells: Vec<&Value> = out[2]["steps"].as_array().unwrap().iter().map(|s| &s["cells"][0]).collect();
    assert_eq!(cells, [&serde_json::json!([0, 0]), &serde_json::json!([1, 0]), &serde_json::json!([2, 0])]);
    assert!(out[3]["error"].as_str().unwrap().contains("grid.dims"));
}

#[test]
fn voxels_report_cell_and_face() {
    let (out, code) = query(
        r#"{"shape": {"type": "voxels", "cell_size": [1,1,1], "origin": [0,0,0], "cells": [[2,0,0],[5,0,0]]}, "ray": {"origin": [0.5,0.5,0.5], "dir": [1,0,0]}}
{"shape": {"type": "voxels", "cell_size": 2.0, "cells": [[0,0,0]]}, "ray": {"origin": [1,1,-3], "dir": [0,0,2]}}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out[0]["hit"]["t"], 1.5);
    assert_eq!(out[0]["hit"]["cell"], serde_json::json!([2, 0, 0]));
    assert_eq!(out[0]["hit"]["part"], "-x");
    assert_eq!(out[1]["hit"]["t"], 1.5);
    assert_eq!(out[1]["hit"]["normal"], serde_json::json!([0.0, 0.0, -1.0]));
}
