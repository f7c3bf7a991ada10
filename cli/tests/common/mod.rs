//! Helpers shared by the end-to-end tests: running the `raycast` binary.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `raycast query` in `dir` on `input`; returns the parsed output lines
/// and the exit code.
pub fn query_in(dir: &Path, input: &str) -> (Vec<Value>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .arg("query")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect();
    (lines, out.status.code().unwrap())
}
