//! End-to-end tests of meshes in `raycast query`: inline meshes
//! (`vertices` + `triangles`) and mesh files (`path`, OBJ/STL/PLY, relative to
//! the working directory), with answers checked by hand on a unit cube and
//! on the bundled Stanford bunny.
//!
//! The cube is `[0,1]³` with outward winding; the ray `(0.25, 0.5, -5) + t·ẑ`
//! enters the `z = 0` face at `t = 5` in triangle 0 (`v0 v3 v2`, the half
//! `x ≤ y`) at `uv = (0.25, 0.25)`, and leaves through `z = 1` at `t = 6` in
//! triangle 3 (`v4 v6 v7`), again at `uv = (0.25, 0.25)`.

mod common;

use common::query_in;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A fresh directory under the temp dir, named after the test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("raycast-mesh-files-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The repository root (where `assets/` is).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

const CUBE_VERTICES: [[f32; 3]; 8] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [1.0, 0.0, 1.0],
    [1.0, 1.0, 1.0],
    [0.0, 1.0, 1.0],
];

/// Two triangles a face, outward: -z, +z, -y, +x, +y, -x.
const CUBE_TRIANGLES: [[u32; 3]; 12] = [
    [0, 3, 2],
    [0, 2, 1],
    [4, 5, 6],
    [4, 6, 7],
    [0, 1, 5],
    [0, 5, 4],
    [1, 2, 6],
    [1, 6, 5],
    [3, 7, 6],
    [3, 6, 2],
    [0, 4, 7],
    [0, 7, 3],
];

fn inline_cube() -> String {
    json!({"type": "mesh", "vertices": CUBE_VERTICES, "triangles": CUBE_TRIANGLES}).to_string()
}

/// The same cube as an OBJ file: 1-based, the z faces as quads (fanned into
/// exactly `CUBE_TRIANGLES[0..4]`), the rest as triangles, one with relative
/// indices.
fn cube_obj() -> String {
    let mut s = String::from("# unit cube\n");
    for v in CUBE_VERTICES {
        s += &format!("v {} {} {}\n", v[0], v[1], v[2]);
    }
    s += "g z_faces\nf 1 4 3 2\nf 5 6 7 8\ng sides\n";
    for t in &CUBE_TRIANGLES[4..11] {
        s += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s + "f -8 -1 -5\n"
}

/// The cube as ASCII STL (every triangle on its own; the loader shares them).
fn cube_stl() -> String {
    let mut s = String::from("solid cube\n");
    for t in CUBE_TRIANGLES {
        s += "facet normal 0 0 0\nouter loop\n";
        for i in t {
            let v = CUBE_VERTICES[i as usize];
            s += &format!("vertex {} {} {}\n", v[0], v[1], v[2]);
        }
        s += "endloop\nendfacet\n";
    }
    s + "endsolid cube\n"
}

/// The cube as ASCII PLY with int indices.
fn cube_ply() -> String {
    let mut s = String::from(
        "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\nproperty float z\n\
         element face 12\nproperty list uchar int vertex_indices\nend_header\n",
    );
    for v in CUBE_VERTICES {
        s += &format!("{} {} {}\n", v[0], v[1], v[2]);
    }
    for t in CUBE_TRIANGLES {
        s += &format!("3 {} {} {}\n", t[0], t[1], t[2]);
    }
    s
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() <= 1e-6 * b.abs().max(1.0))
}

fn assert_vec(v: &Value, expect: [f64; 3], what: &str) {
    let got: Vec<f64> =
        v.as_array().unwrap_or_else(|| panic!("{what}: {v}")).iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(
        got.len() == 3 && got.iter().zip(expect).all(|(g, e)| (g - e).abs() <= 1e-6 * e.abs().max(1.0)),
        "{what}: got {v}, expected {expect:?}"
    );
}

/// The hit `h` is the cube's entry through `z = 0` at `(x, y)` = (0.25, 0.5),
/// offset by `shift` and scaled by `scale` (a transform of the cube).
fn assert_entry(h: &Value, shift: [f64; 3], scale: f64, t: f64) {
    assert!(close(&h["t"], t), "t: {h}");
    assert_vec(&h["point"], [shift[0] + 0.25 * scale, shift[1] + 0.5 * scale, shift[2]], "point");
    assert_vec(&h["normal"], [0.0, 0.0, -1.0], "normal");
    assert_eq!(h["front_face"], true, "{h}");
    assert_eq!(h["part"], "face", "{h}");
    assert_eq!(h["triangle"], 0, "{h}");
    assert_vec(&json!([h["uv"][0], h["uv"][1], 0.0]), [0.25, 0.25, 0.0], "uv");
}

/// The hit `h` is the untransformed cube's exit through `z = 1`.
fn assert_exit(h: &Value) {
    assert!(close(&h["t"], 6.0), "t: {h}");
    assert_vec(&h["point"], [0.25, 0.5, 1.0], "point");
    assert_vec(&h["normal"], [0.0, 0.0, 1.0], "normal");
    assert_eq!(h["front_face"], false, "{h}");
    assert_eq!(h["triangle"], 3, "{h}");
    assert_vec(&json!([h["uv"][0], h["uv"][1], 0.0]), [0.25, 0.25, 0.0], "uv");
}

const RAY: &str = r#""ray": {"origin": [0.25, 0.5, -5], "dir": [0, 0, 1]}"#;

/// cast, any, all and a miss on one mesh shape (JSON text).
fn ops_on(shape: &str) -> String {
    [
        format!(r#"{{"id": "cast", "op": "cast", "shape": {shape}, {RAY}}}"#),
        format!(r#"{{"id": "any", "op": "any", "shape": {shape}, {RAY}}}"#),
        format!(r#"{{"id": "all", "op": "all", "shape": {shape}, {RAY}}}"#),
        format!(r#"{{"id": "short", "shape": {shape}, {RAY}, "t_max": 4.5}}"#),
        format!(r#"{{"id": "miss", "op": "any", "shape": {shape}, "ray": {{"origin": [2, 0.5, -5], "dir": [0, 0, 1]}}}}"#),
    ]
    .join("\n")
}

fn assert_ops(out: &[Value], what: &str) {
    assert_eq!(out.len(), 5, "{what}: {out:?}");
    assert_entry(&out[0]["hit"], [0.0; 3], 1.0, 5.0);
    assert_eq!(out[1]["hit"], true, "{what}");
    let all = out[2]["hits"].as_array().unwrap_or_else(|| panic!("{what}: {}", out[2]));
    assert_eq!(all.len(), 2, "{what}: {}", out[2]);
    assert_entry(&all[0], [0.0; 3], 1.0, 5.0);
    assert_exit(&all[1]);
    assert_eq!(out[3]["hit"], Value::Null, "{what}");
    assert_eq!(out[4]["hit"], false, "{what}");
}

#[test]
fn inline_mesh_answers_cast_any_all() {
    let (out, code) = query_in(&std::env::temp_dir(), &ops_on(&inline_cube()));
    assert_eq!(code, 0, "{out:?}");
    assert_ops(&out, "inline cube");
}

#[test]
fn mesh_files_answer_like_the_inline_mesh() {
    let dir = scratch("formats");
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    std::fs::write(dir.join("cube.STL"), cube_stl()).unwrap();
    std::fs::write(dir.join("cube.ply"), cube_ply()).unwrap();
    for file in ["cube.obj", "cube.STL", "cube.ply"] {
        // Relative to the working directory of the process.
        let shape = json!({"type": "mesh", "path": file}).to_string();
        let (out, code) = query_in(&dir, &ops_on(&shape));
        assert_eq!(code, 0, "{file}: {out:?}");
        assert_ops(&out, file);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_edge_crossing_counts_once_in_all() {
    // Through the diagonal x = y shared by triangles 0 and 1 (and 2 and 3):
    // one crossing each, reported by the lower triangle index (DESIGN §5).
    let line = format!(
        r#"{{"op": "all", "shape": {}, "ray": {{"origin": [0.5, 0.5, -5], "dir": [0, 0, 1]}}}}"#,
        inline_cube()
    );
    let (out, code) = query_in(&std::env::temp_dir(), &line);
    assert_eq!(code, 0);
    let hits = out[0]["hits"].as_array().unwrap();
    let tris: Vec<&Value> = hits.iter().map(|h| &h["triangle"]).collect();
    assert_eq!(tris, [&json!(0), &json!(2)], "{}", out[0]);
}

#[test]
fn transformed_mesh_file() {
    let dir = scratch("transformed");
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    // Scaled by 2 and moved to x = 10: the cube spans [10,12]×[0,2]×[0,2].
    let line = r#"{"shape": {"type": "mesh", "path": "cube.obj"}, "transform": {"translation": [10, 0, 0], "scale": 2}, "ray": {"origin": [10.5, 1, -5], "dir": [0, 0, 1]}}
{"op": "any", "shape": {"type": "mesh", "path": "cube.obj"}, "transform": {"translation": [10, 0, 0], "scale": 2}, "ray": {"origin": [0.25, 0.5, -5], "dir": [0, 0, 1]}}
{"op": "cast", "objects": [{"shape": {"type": "mesh", "path": "cube.obj"}, "transform": {"translation": [10, 0, 0], "scale": 2}, "id": 7}], "ray": {"origin": [10.5, 1, -5], "dir": [0, 0, 1]}}"#;
    let (out, code) = query_in(&dir, line);
    assert_eq!(code, 0, "{out:?}");
    assert_entry(&out[0]["hit"], [10.0, 0.0, 0.0], 2.0, 5.0);
    assert_eq!(out[1]["hit"], false, "the untransformed place is empty");
    assert_entry(&out[2]["hit"], [10.0, 0.0, 0.0], 2.0, 5.0);
    assert_eq!(out[2]["hit"]["object"], 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bundled_bunny_loads_and_is_hit() {
    // Down the z axis through the middle of the bunny's bounding box: in the
    // body at t ≈ 4.9587 (triangle 10868), out at t ≈ 5.0201 (triangle 46174),
    // as a brute-force f64 check over all 69,451 triangles finds.
    let ray = r#""ray": {"origin": [-0.0168, 0.11, 5], "dir": [0, 0, -1]}"#;
    let shape = r#""shape": {"type": "mesh", "path": "assets/meshes/bunny.obj"}"#;
    let input = format!("{{{shape}, {ray}}}\n{{\"op\": \"all\", {shape}, {ray}}}");
    let (out, code) = query_in(&repo_root(), &input);
    assert_eq!(code, 0, "{out:?}");
    let hit = &out[0]["hit"];
    assert!((hit["t"].as_f64().unwrap() - 4.958749).abs() < 1e-4, "{hit}");
    assert_eq!(hit["triangle"], 10868, "{hit}");
    let all: Vec<&Value> = out[1]["hits"].as_array().unwrap().iter().map(|h| &h["triangle"]).collect();
    assert_eq!(all, [&json!(10868), &json!(46174)]);
}

#[test]
fn bad_meshes_get_errors_and_the_stream_goes_on() {
    let dir = scratch("errors");
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    // Line 16 of this file points at vertex 9 of 8.
    std::fs::write(dir.join("bad.obj"), cube_obj().replace("f 2 3 7\n", "f 2 3 9\n")).unwrap();
    std::fs::write(dir.join("cube.fbx"), "not a mesh").unwrap();
    let good = format!(r#"{{"id": "ok", "shape": {{"type": "mesh", "path": "cube.obj"}}, {RAY}}}"#);
    let mut bad_triangles = CUBE_TRIANGLES;
    bad_triangles[5] = [0, 5, 8];
    let bad = [
        // An index out of range in an inline mesh.
        json!({"id": 1, "shape": {"type": "mesh", "vertices": CUBE_VERTICES, "triangles": bad_triangles}, "ray": {"origin": [0.25, 0.5, -5], "dir": [0, 0, 1]}}).to_string(),
        // The same in a file.
        format!(r#"{{"id": 2, "shape": {{"type": "mesh", "path": "bad.obj"}}, {RAY}}}"#),
        // A file that is not there.
        format!(r#"{{"id": 3, "shape": {{"type": "mesh", "path": "missing.obj"}}, {RAY}}}"#),
        // A format that is not known.
        format!(r#"{{"id": 4, "shape": {{"type": "mesh", "path": "cube.fbx"}}, {RAY}}}"#),
        // Both a path and inline data.
        format!(r#"{{"id": 5, "shape": {{"type": "mesh", "path": "cube.obj", "vertices": [], "triangles": []}}, {RAY}}}"#),
    ];
    let mut lines = vec![good.clone()];
    for b in &bad {
        lines.push(b.clone());
        lines.push(good.clone());
    }
    let (out, code) = query_in(&dir, &lines.join("\n"));
    assert_eq!(code, 1, "a failed line makes the exit status 1");
    assert_eq!(out.len(), lines.len(), "no line is lost");
    for (i, v) in out.iter().enumerate() {
        if i % 2 == 0 {
            assert_entry(&v["hit"], [0.0; 3], 1.0, 5.0);
        } else {
            let msg = v["error"].as_str().unwrap_or_else(|| panic!("line {}: {v}", i + 1));
            assert!(msg.starts_with(&format!("line {}: shape", i + 1)), "{msg}");
        }
    }
    let err = |k: usize| out[2 * k + 1]["error"].as_str().unwrap().to_string();
    assert!(err(0).contains("shape.triangles"), "{}", err(0));
    assert!(err(1).contains("shape.path: bad.obj: line 16: "), "{}", err(1));
    assert!(err(1).contains("out of bounds"), "{}", err(1));
    assert!(err(2).contains("shape.path: missing.obj: "), "{}", err(2));
    assert!(err(3).contains("shape.path: cube.fbx: unknown mesh format `.fbx`"), "{}", err(3));
    assert!(err(4).contains("either `vertices` and `triangles`, or `path`"), "{}", err(4));
    std::fs::remove_dir_all(&dir).unwrap();
}
