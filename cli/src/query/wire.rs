//! The JSON wire format of `raycast query` (DESIGN §6), as serde types.
//!
//! Every struct refuses unknown fields and (through serde's derive) duplicate
//! keys, so a typo is an error instead of being silently ignored.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// Reads one JSON document into `T`; an error names the JSON path of the
/// problem (`objects[2].shape.radius: ...`), and trailing characters after
/// the document are an error too.
pub fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// One input line.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// Echoed back as given (read from the raw line, so that error results
    /// carry it too); declared here so that it is a known field.
    #[serde(default)]
    #[allow(dead_code)]
    pub id: Option<Value>,
    #[serde(default)]
    pub op: Option<Op>,
    #[serde(default)]
    pub shape: Option<WireShape>,
    #[serde(default)]
    pub transform: Option<WireTransform>,
    #[serde(default)]
    pub ray: Option<WireRay>,
    #[serde(default)]
    pub t_min: Option<f32>,
    /// `null` means +∞.
    #[serde(default)]
    pub t_max: Option<f32>,
    #[serde(default)]
    pub objects: Option<Vec<WireObject>>,
    #[serde(default)]
    pub mask: Option<u32>,
    #[serde(default)]
    pub grid: Option<WireGrid>,
    #[serde(default)]
    pub from: Option<Vec<f32>>,
    #[serde(default)]
    pub to: Option<Vec<f32>>,
    #[serde(default)]
    pub supercover: Option<bool>,
    #[serde(default)]
    pub max_steps: Option<u64>,
}

/// What to compute.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Closest hit (the default).
    Cast,
    /// Whether anything is hit.
    Any,
    /// Every crossing, by `t`.
    All,
    /// Enter and exit of a convex solid.
    Span,
    /// Grid walk.
    Traverse,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct WireRay {
    /// 3 numbers (2 for a 2D grid walk); checked where it is used.
    pub origin: Vec<f32>,
    pub dir: Vec<f32>,
}

/// A number (uniform) or a 3-array.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(untagged)]
pub enum Scale {
    Uniform(f32),
    PerAxis([f32; 3]),
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct WireTransform {
    #[serde(default)]
    pub translation: Option<[f32; 3]>,
    /// Quaternion `[x, y, z, w]`, normalised on reading.
    #[serde(default)]
    pub rotation: Option<[f32; 4]>,
    #[serde(default)]
    pub scale: Option<Scale>,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum WireShape {
    Sphere {
        radius: f32,
    },
    Cuboid {
        half_extents: [f32; 3],
    },
    Cylinder {
        radius: f32,
        half_height: f32,
    },
    Cone {
        radius: f32,
        half_height: f32,
    },
    Capsule {
        a: [f32; 3],
        b: [f32; 3],
        radius: f32,
    },
    Triangle {
        a: [f32; 3],
        b: [f32; 3],
        c: [f32; 3],
    },
    Plane {
        normal: [f32; 3],
        #[serde(default)]
        point: Option<[f32; 3]>,
    },
    Torus {
        major_radius: f32,
        minor_radius: f32,
    },
    Mesh {
        #[serde(default)]
        vertices: Option<Vec<[f32; 3]>>,
        #[serde(default)]
        triangles: Option<Vec<[u32; 3]>>,
        #[serde(default)]
        path: Option<String>,
    },
    Voxels {
        cell_size: CellSize,
        #[serde(default)]
        origin: Option<[f32; 3]>,
        cells: Vec<[i32; 3]>,
    },
    /// A MagicaVoxel `.vox` model (an extension beyond DESIGN §6, used by
    /// scene files): `model` picks one of the file's models (default 0).
    Vox {
        path: String,
        #[serde(default)]
        cell_size: Option<CellSize>,
        #[serde(default)]
        origin: Option<[f32; 3]>,
        #[serde(default)]
        model: Option<usize>,
    },
}

/// A number (every axis) or one per axis.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum CellSize {
    Uniform(f32),
    PerAxis(Vec<f32>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct WireObject {
    pub shape: WireShape,
    #[serde(default)]
    pub transform: Option<WireTransform>,
    #[serde(default)]
    pub id: Option<u32>,
    #[serde(default)]
    pub mask: Option<u32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct WireGrid {
    #[serde(default)]
    pub dims: Option<u8>,
    #[serde(default)]
    pub cell_size: Option<CellSize>,
    #[serde(default)]
    pub origin: Option<Vec<f32>>,
}
