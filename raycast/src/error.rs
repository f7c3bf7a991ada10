//! [`ShapeError`]: why a shape could not be built.

use std::fmt;

/// A shape, mesh, transform or grid was refused at construction.
///
/// `field` names the parameter (`"radius"`, `"triangles[12]"`, ...) and the
/// message says what was wrong and which value was given, e.g.
/// `radius must be finite and > 0, got -1`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeError {
    /// The parameter that was refused.
    pub field: String,
    /// What is wrong with it, including the value given.
    pub message: String,
}

impl ShapeError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }

    /// The same error with its field placed under `prefix` (`shape.` + `radius`).
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = format!("{prefix}.{}", self.field);
        self
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.field, self.message)
    }
}

impl std::error::Error for ShapeError {}

/// `Ok(value)` when `value` is finite and > 0, else an error naming `field`.
pub(crate) fn positive(field: &str, value: f32) -> Result<f32, ShapeError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ShapeError::new(field, format!("must be finite and > 0, got {value}")))
    }
}

/// `Ok(v)` when every component of `v` is finite, else an error naming `field`.
pub(crate) fn finite_vec(field: &str, v: glam::Vec3) -> Result<glam::Vec3, ShapeError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ShapeError::new(field, format!("must be finite, got [{}, {}, {}]", v.x, v.y, v.z)))
    }
}

/// Unwraps a constructor result, panicking with the error's message (the `new`
/// half of the `new` / `try_new` pair, as glam does).
#[track_caller]
pub(crate) fn or_panic<T>(r: Result<T, ShapeError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}
