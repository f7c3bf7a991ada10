//! `raycast demo` (and plain `raycast`): the built-in showcase.
//!
//! Every primitive stands on a ground plane — sphere, cuboid, cylinder, cone,
//! capsule, torus and a pair of triangles — some rotated, one sphere scaled
//! into an ellipsoid and one cylinder scaled unevenly, next to the Stanford
//! bunny (69,451 triangles, embedded in the binary so the demo runs from any
//! folder) and a small voxel terrain. It is lit by one sun with hard shadows
//! (any-hit rays) and written to a PNG; the summary line gives the rays cast
//! and rays per second.

use crate::render::{self, Camera, Lighting};
use crate::scene_file::{LoadedScene, RenderObject};
use raycast::{
    affine_from_trs, vec3, Capsule, Cone, Cuboid, Cylinder, IVec3, Plane, Quat, Shape, Sphere, Torus,
    Transformed, Triangle, Vec3, VoxelVolume,
};
use std::path::Path;

/// The Stanford bunny, from the Stanford 3D Scanning Repository.
const BUNNY_OBJ: &[u8] = include_bytes!("../../assets/meshes/bunny.obj");

fn place(shape: impl Into<Shape>, t: Vec3, r: Quat, s: Vec3, colour: Vec3) -> RenderObject {
    // The transforms below are finite and invertible by construction.
    let m = affine_from_trs(t, r, s).expect("demo transform");
    RenderObject { shape: Transformed::new(shape.into(), m), colour, id: 0, mask: u32::MAX }
}

/// The showcase objects, with ids in order.
pub fn showcase() -> Vec<RenderObject> {
    let one = Vec3::ONE;
    let id = Quat::IDENTITY;
    let mut objects = vec![
        place(Plane::new(Vec3::Y, Vec3::ZERO), Vec3::ZERO, id, one, vec3(0.75, 0.75, 0.72)),
        place(Sphere::new(1.0), vec3(-4.5, 1.0, 0.0), id, one, vec3(0.85, 0.25, 0.2)),
        place(
            Cuboid::new(vec3(0.8, 0.8, 0.8)),
            vec3(-2.0, 0.8, 0.3),
            Quat::from_rotation_y(0.6),
            one,
            vec3(0.25, 0.55, 0.85),
        ),
        place(Cylinder::new(0.7, 1.0), vec3(0.3, 1.0, 0.0), id, one, vec3(0.3, 0.75, 0.35)),
        place(Cone::new(0.9, 1.1), vec3(2.5, 1.1, 0.2), id, one, vec3(0.95, 0.7, 0.2)),
        place(
            Capsule::new(vec3(-0.9, 0.0, 0.0), vec3(0.9, 0.0, 0.0), 0.45),
            vec3(4.8, 0.9, 0.0),
            Quat::from_rotation_z(0.5),
            one,
            vec3(0.65, 0.35, 0.8),
        ),
        place(
            Torus::new(0.9, 0.3),
            vec3(-3.2, 1.2, 2.8),
            Quat::from_rotation_x(1.1),
            one,
            vec3(0.9, 0.45, 0.6),
        ),
        // A sphere scaled into an ellipsoid, and a cylinder scaled unevenly and tipped over.
        place(Sphere::new(1.0), vec3(-0.6, 0.55, 2.9), id, vec3(1.3, 0.55, 0.8), vec3(0.95, 0.95, 0.95)),
        place(
            Cylinder::new(0.5, 0.9),
            vec3(1.6, 0.45, 3.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            vec3(0.9, 1.0, 1.6),
            vec3(0.4, 0.8, 0.8),
        ),
    ];
    // Two triangles: a sail standing behind the row.
    let (a, b, c, d) =
        (vec3(-1.5, 0.0, -2.5), vec3(1.5, 0.0, -2.5), vec3(1.5, 2.6, -2.5), vec3(-1.5, 2.0, -2.7));
    for (p, q, r) in [(a, b, c), (a, c, d)] {
        objects.push(place(Triangle::new(p, q, r), Vec3::ZERO, id, one, vec3(0.95, 0.85, 0.55)));
    }
    // The Stanford bunny (Stanford 3D Scanning Repository), scaled to ~2 m.
    let bunny = raycast::mesh::load_obj(BUNNY_OBJ).expect("the embedded bunny parses");
    objects.push(place(
        bunny,
        vec3(-6.6, -0.66, 0.2),
        Quat::from_rotation_y(0.3),
        Vec3::splat(20.0),
        vec3(0.86, 0.62, 0.42),
    ));
    // A voxel terrain: columns of a height field on a 0.25 grid.
    let mut cells = Vec::new();
    for i in 0..14 {
        for k in 0..10 {
            let h = (1.5 + 1.2 * ((i as f32) * 0.5).sin() * ((k as f32) * 0.6).cos()).round() as i32;
            for j in 0..h.max(1) {
                cells.push(IVec3::new(i, j, k));
            }
        }
    }
    let terrain =
        VoxelVolume::from_cells(Vec3::splat(0.25), vec3(3.3, 0.0, 1.6), cells).expect("demo voxels");
    objects.push(place(terrain, Vec3::ZERO, id, one, vec3(0.45, 0.7, 0.3)));
    for (i, o) in objects.iter_mut().enumerate() {
        o.id = i as u32;
    }
    objects
}

/// The showcase scene: the objects, the camera and one sun.
pub fn scene() -> LoadedScene {
    LoadedScene {
        camera: Camera { eye: vec3(-0.9, 5.0, 12.5), target: vec3(-0.6, 0.9, 0.4), up: Vec3::Y, fov_y: 47.0 },
        lighting: Lighting::sun(vec3(-0.45, 0.8, 0.55), 0.22),
        size: (1280, 720),
        camera_mask: u32::MAX,
        shadow_mask: u32::MAX,
        objects: showcase(),
    }
}

/// Renders the showcase to `output` and returns the summary line.
pub fn run(output: &Path, width: u32, height: u32, threads: usize) -> Result<String, String> {
    let image = scene().render((width, height), threads, &|_| ());
    render::write_png(&image, output)?;
    Ok(render::summary(&image, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_is_in_the_showcase() {
        let objects = showcase();
        let kinds: std::collections::HashSet<&str> = objects
            .iter()
            .map(|o| match o.shape.shape() {
                Shape::Sphere(_) => "sphere",
                Shape::Cuboid(_) => "cuboid",
                Shape::Cylinder(_) => "cylinder",
                Shape::Cone(_) => "cone",
                Shape::Capsule(_) => "capsule",
                Shape::Triangle(_) => "triangle",
                Shape::Plane(_) => "plane",
                Shape::Torus(_) => "torus",
                Shape::Voxels(_) => "voxels",
                Shape::Mesh(_) => "mesh",
                _ => "other",
            })
            .collect();
        for k in [
            "sphere", "cuboid", "cylinder", "cone", "capsule", "triangle", "plane", "torus", "voxels", "mesh",
        ] {
            assert!(kinds.contains(k), "{k} missing");
        }
    }

    #[test]
    fn renders_a_small_picture() {
        let path = std::env::temp_dir().join(format!("raycast-demo-test-{}.png", std::process::id()));
        let line = run(&path, 64, 36, 2).unwrap();
        assert!(line.contains("rays") && line.contains("Mrays/s"), "{line}");
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let _ = std::fs::remove_file(&path);
    }
}
