//! The JSON scene files of `raycast render SCENE.json`.
//!
//! A scene file is one JSON object. Shapes and transforms are written exactly
//! as in the query protocol (DESIGN §6), so there is one vocabulary to learn;
//! paths (`mesh` and `vox` shapes) are relative to the scene file's folder.
//!
//! ```json
//! {
//!   "camera": {"eye": [0, 3, 8], "target": [0, 0.5, 0], "up": [0, 1, 0], "fov_y": 45},
//!   "width": 800, "height": 450,
//!   "lights": [{"toward": [-0.4, 0.8, 0.5], "colour": [1, 1, 1], "intensity": 0.8}],
//!   "ambient": 0.2,
//!   "ambient_occlusion": {"samples": 8, "distance": 1.0},
//!   "background": [0.9, 0.9, 0.95],
//!   "camera_mask": 4294967295, "shadow_mask": 4294967295,
//!   "objects": [
//!     {"shape": {"type": "plane", "normal": [0, 1, 0]}, "colour": [0.8, 0.8, 0.8]},
//!     {"shape": {"type": "sphere", "radius": 1}, "transform": {"translation": [0, 1, 0]},
//!      "colour": [0.9, 0.2, 0.2], "id": 7, "mask": 1},
//!     {"shape": {"type": "mesh", "path": "bunny.obj"}, "transform": {"scale": 10}},
//!     {"shape": {"type": "vox", "path": "castle.vox", "cell_size": 0.1}}
//!   ]
//! }
//! ```
//!
//! Every field but `camera` and `objects` is optional: `width` × `height`
//! default to 960 × 540 (the command line's `--width`/`--height` win),
//! `lights` to one white sun from the upper left, `ambient` to 0.2, no
//! ambient occlusion, the sky gradient as background. `up` defaults to +Y and
//! `fov_y` (vertical, degrees) to 45. An object's `colour` defaults to light
//! grey, its `id` to its index, its `mask` to all bits. Primary rays see the
//! objects whose `mask & camera_mask != 0`; shadow and occlusion rays are
//! blocked by those whose `mask & shadow_mask != 0` — so a light fixture can
//! be visible but cast no shadow. The `vox` shape loads a MagicaVoxel model
//! (`model`: which one, default 0; `cell_size` default 1; MagicaVoxel is
//! Z-up, rotate it with the transform).
//!
//! Unknown fields are errors, and every error names the file, the JSON path
//! and what is wrong: `scene.json: objects[2].shape.radius must be finite and
//! > 0, got -1`.

use crate::query::build::{self, v3};
use crate::query::wire::{self, WireShape, WireTransform};
use crate::render::{self, Camera, Image, Light, Lighting, Occlusion, World};
use raycast::{Filter, Interval, Ray, Scene, SceneObject as Placed, Shape, Transformed, Vec3};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    camera: FileCamera,
    #[serde(default)]
    width: Option<u32>,
    #[serde(default)]
    height: Option<u32>,
    #[serde(default)]
    lights: Option<Vec<FileLight>>,
    #[serde(default)]
    ambient: Option<f32>,
    #[serde(default)]
    ambient_occlusion: Option<FileOcclusion>,
    #[serde(default)]
    background: Option<[f32; 3]>,
    #[serde(default)]
    camera_mask: Option<u32>,
    #[serde(default)]
    shadow_mask: Option<u32>,
    objects: Vec<FileObject>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileCamera {
    eye: [f32; 3],
    target: [f32; 3],
    #[serde(default)]
    up: Option<[f32; 3]>,
    #[serde(default)]
    fov_y: Option<f32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileLight {
    toward: [f32; 3],
    #[serde(default)]
    colour: Option<[f32; 3]>,
    #[serde(default)]
    intensity: Option<f32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileOcclusion {
    #[serde(default)]
    samples: Option<u32>,
    #[serde(default)]
    distance: Option<f32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileObject {
    shape: WireShape,
    #[serde(default)]
    transform: Option<WireTransform>,
    #[serde(default)]
    colour: Option<[f32; 3]>,
    #[serde(default)]
    id: Option<u32>,
    #[serde(default)]
    mask: Option<u32>,
}

/// One object ready to render.
pub struct RenderObject {
    pub shape: Transformed<Shape>,
    pub colour: Vec3,
    pub id: u32,
    pub mask: u32,
}

/// A scene file, read and built.
pub struct LoadedScene {
    pub camera: Camera,
    pub lighting: Lighting,
    pub size: (u32, u32),
    pub camera_mask: u32,
    pub shadow_mask: u32,
    pub objects: Vec<RenderObject>,
}

impl LoadedScene {
    /// Renders the scene at `size` on `threads` threads (see [`render::render`]).
    ///
    /// The objects go into a library [`Scene`] (one top-level BVH) with their
    /// index as the scene id, which finds the colour; the user's ids are not
    /// needed to draw. Primary rays query with `camera_mask`, shadow and
    /// occlusion rays with `shadow_mask`.
    pub fn render(&self, size: (u32, u32), threads: usize, progress: &(dyn Fn(u64) + Sync)) -> Image {
        let scene = Scene::from_objects(self.objects.iter().enumerate().map(|(i, o)| Placed {
            placed: o.shape.clone(),
            id: i as u32,
            mask: o.mask,
        }));
        let seen = Filter::default().with_mask(self.camera_mask);
        let blocks = Filter::default().with_mask(self.shadow_mask);
        let cast = |r: &Ray| {
            let h = scene.cast(r, Interval::FORWARD, &seen)?;
            Some((h, self.objects[h.object? as usize].colour))
        };
        let occluded = |r: &Ray, range: Interval| scene.hits(r, range, &blocks);
        let world = World { cast: &cast, occluded: &occluded };
        render::render(&world, &self.camera, &self.lighting, size, threads, progress)
    }
}

/// Reads and builds the scene file at `path`; the error names the file, the
/// JSON path and the problem.
pub fn load(path: &Path) -> Result<LoadedScene, String> {
    let file = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&text, &base).map_err(|e| format!("{file}: {e}"))
}

/// Parses scene JSON; relative paths are taken from `base`.
pub fn parse(text: &str, base: &Path) -> Result<LoadedScene, String> {
    build_scene(wire::from_json(text)?, base)
}

fn finite(v: [f32; 3], field: &str) -> Result<Vec3, String> {
    let v = v3(v);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{field} must be finite, got {v}"))
    }
}

fn build_scene(f: SceneFile, base: &Path) -> Result<LoadedScene, String> {
    let eye = finite(f.camera.eye, "camera.eye")?;
    let target = finite(f.camera.target, "camera.target")?;
    let up = finite(f.camera.up.unwrap_or([0.0, 1.0, 0.0]), "camera.up")?;
    if eye == target {
        return Err("camera.target must differ from camera.eye".into());
    }
    if (target - eye).cross(up).length_squared() == 0.0 {
        return Err("camera.up must not be parallel to the view direction".into());
    }
    let fov_y = f.camera.fov_y.unwrap_or(45.0);
    if !(fov_y > 0.0 && fov_y < 180.0) {
        return Err(format!("camera.fov_y must be in (0, 180) degrees, got {fov_y}"));
    }
    let size = (f.width.unwrap_or(960), f.height.unwrap_or(540));
    if size.0 == 0 || size.1 == 0 {
        return Err(format!("width and height must be > 0, got {} x {}", size.0, size.1));
    }
    let ambient = f.ambient.unwrap_or(0.2);
    if !(ambient.is_finite() && ambient >= 0.0) {
        return Err(format!("ambient must be finite and >= 0, got {ambient}"));
    }
    let lights = match f.lights {
        None => {
            vec![Light { toward: Vec3::new(-0.45, 0.8, 0.55), colour: Vec3::splat(1.0 - ambient.min(1.0)) }]
        }
        Some(ls) => ls
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let toward = finite(l.toward, &format!("lights[{i}].toward"))?;
                if toward == Vec3::ZERO {
                    return Err(format!("lights[{i}].toward must not be zero"));
                }
                let colour = finite(l.colour.unwrap_or([1.0; 3]), &format!("lights[{i}].colour"))?;
                let intensity = l.intensity.unwrap_or(1.0);
                if !(intensity.is_finite() && intensity >= 0.0) {
                    return Err(format!("lights[{i}].intensity must be finite and >= 0, got {intensity}"));
                }
                Ok(Light { toward, colour: colour * intensity })
            })
            .collect::<Result<_, String>>()?,
    };
    let occlusion = match f.ambient_occlusion {
        None => None,
        Some(o) => {
            let samples = o.samples.unwrap_or(8);
            let distance = o.distance.unwrap_or(1.0);
            if !(distance.is_finite() && distance > 0.0) {
                return Err(format!("ambient_occlusion.distance must be finite and > 0, got {distance}"));
            }
            if samples > 1024 {
                return Err(format!("ambient_occlusion.samples must be at most 1024, got {samples}"));
            }
            Some(Occlusion { samples, distance })
        }
    };
    let background = f.background.map(|b| finite(b, "background")).transpose()?;
    let objects = f
        .objects
        .into_iter()
        .enumerate()
        .map(|(i, o)| object(o, i, base))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(LoadedScene {
        camera: Camera { eye, target, up, fov_y },
        lighting: Lighting { lights, ambient: Vec3::splat(ambient), occlusion, background },
        size,
        camera_mask: f.camera_mask.unwrap_or(u32::MAX),
        shadow_mask: f.shadow_mask.unwrap_or(u32::MAX),
        objects,
    })
}

/// A relative path taken from the scene file's folder.
fn rebase(path: String, base: &Path) -> String {
    let p = PathBuf::from(&path);
    if p.is_absolute() {
        path
    } else {
        base.join(p).to_string_lossy().into_owned()
    }
}

fn object(o: FileObject, i: usize, base: &Path) -> Result<RenderObject, String> {
    let prefix = format!("objects[{i}].");
    let shape = match o.shape {
        WireShape::Mesh { vertices, triangles, path } => {
            WireShape::Mesh { vertices, triangles, path: path.map(|p| rebase(p, base)) }
        }
        WireShape::Vox { path, cell_size, origin, model } => {
            WireShape::Vox { path: rebase(path, base), cell_size, origin, model }
        }
        other => other,
    };
    let shape = build::shape(shape, &format!("{prefix}shape"))?;
    let m = match &o.transform {
        None => raycast::Affine3A::IDENTITY,
        Some(t) => build::transform(t, &format!("{prefix}transform"))?,
    };
    let shape =
        Transformed::try_new(shape, m).map_err(|e| e.within(&format!("{prefix}transform")).to_string())?;
    let colour = finite(o.colour.unwrap_or([0.8, 0.8, 0.8]), &format!("{prefix}colour"))?;
    Ok(RenderObject { shape, colour, id: o.id.unwrap_or(i as u32), mask: o.mask.unwrap_or(u32::MAX) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new(".")).err().expect("should fail")
    }

    #[test]
    fn minimal_scene_takes_the_defaults() {
        let s = parse(
            r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0]},
                "objects": [{"shape": {"type": "sphere", "radius": 1}}]}"#,
            Path::new("."),
        )
        .unwrap();
        assert_eq!(s.size, (960, 540));
        assert_eq!(s.lighting.lights.len(), 1);
        assert_eq!((s.objects[0].id, s.objects[0].mask), (0, u32::MAX));
    }

    #[test]
    fn errors_name_the_json_path() {
        let e = err(r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0]},
                        "objects": [{"shape": {"type": "sphere", "radius": 1}}, {"shape": {"type": "sphere", "radius": -1}}]}"#);
        assert!(e.contains("objects[1].shape.radius"), "{e}");
        let e = err(r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0], "zoom": 2}, "objects": []}"#);
        assert!(e.contains("camera") && e.contains("zoom"), "{e}");
        let e = err(r#"{"camera": {"eye": [0, 2, 5], "target": [0, 2, 5]}, "objects": []}"#);
        assert!(e.contains("camera.target"), "{e}");
        let e = err(
            r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0]}, "objects": [{"shape": {"type": "blob"}}]}"#,
        );
        assert!(e.contains("objects[0]"), "{e}");
        let e = err(
            r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0]}, "objects": [], "lights": [{"toward": [0, 0, 0]}]}"#,
        );
        assert!(e.contains("lights[0].toward"), "{e}");
        let e = err(
            r#"{"camera": {"eye": [0, 2, 5], "target": [0, 0, 0]}, "objects": [{"shape": {"type": "mesh", "path": "no-such.obj"}}]}"#,
        );
        assert!(e.contains("objects[0].shape") && e.contains("no-such.obj"), "{e}");
        assert!(err("{").contains("EOF"), "{}", err("{"));
    }

    #[test]
    fn paths_are_taken_from_the_scene_folder() {
        assert_eq!(
            rebase("m.obj".into(), Path::new("scenes")),
            Path::new("scenes").join("m.obj").to_string_lossy()
        );
        assert_eq!(rebase("/abs/m.obj".into(), Path::new("scenes")), "/abs/m.obj");
    }
}
