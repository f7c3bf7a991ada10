//! A 64-beam spinning lidar over a street scene, written as a PLY point cloud.
//!
//! Run: `cargo run --release --example lidar` (writes `lidar-scan.ply`)
//!
//! The sensor sits 1.8 m above the road; 64 beams fan from −25° to +15° in
//! elevation and spin through 2048 azimuth steps: 131,072 rays per sweep,
//! cast in one parallel batch. Each return becomes a point with the object
//! id that reflected it; beams that reach nothing within 120 m give none.

use raycast::{
    vec3, Affine3A, Capsule, Cuboid, Cylinder, Filter, Interval, Plane, Quat, Ray, Scene, SceneObject,
    Sphere, TriMesh, Vec3,
};
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

fn main() -> std::io::Result<()> {
    let scene = street();
    let sensor = vec3(0.0, 1.8, 0.0);
    let (beams, steps) = (64u32, 2048u32);
    let rays: Vec<Ray> = (0..beams * steps)
        .map(|k| {
            let elevation = (-25.0 + 40.0 * (k % beams) as f32 / (beams - 1) as f32).to_radians();
            let azimuth = std::f32::consts::TAU * (k / beams) as f32 / steps as f32;
            let d = vec3(elevation.cos() * azimuth.cos(), elevation.sin(), elevation.cos() * azimuth.sin());
            Ray::new(sensor, d) // unit direction: t is metres
        })
        .collect();

    let start = Instant::now();
    let hits = scene.cast_batch(&rays, Interval::new(0.0, 120.0), &Filter::default());
    let secs = start.elapsed().as_secs_f64();
    let points: Vec<(Vec3, u32)> = hits.iter().flatten().map(|h| (h.point, h.object.unwrap())).collect();
    println!(
        "{} rays, {} returns in {:.1} ms ({:.1} Mrays/s)",
        rays.len(),
        points.len(),
        secs * 1e3,
        rays.len() as f64 / secs / 1e6
    );

    let path = "lidar-scan.ply";
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "ply\nformat ascii 1.0\nelement vertex {}", points.len())?;
    writeln!(out, "property float x\nproperty float y\nproperty float z\nproperty uint object\nend_header")?;
    for (p, id) in &points {
        writeln!(out, "{} {} {} {id}", p.x, p.y, p.z)?;
    }
    out.flush()?;
    println!("wrote {path}");
    Ok(())
}

/// A road with buildings, lamp posts, pedestrians, a parked "car" and a
/// shared mesh (a tetrahedral traffic marker) placed many times.
fn street() -> Scene {
    let at = |x: f32, y: f32, z: f32| Affine3A::from_translation(vec3(x, y, z));
    let mut objects = vec![SceneObject::local(Plane::new(Vec3::Y, Vec3::ZERO), 0)];
    let mut id = 1;
    let marker = Arc::new(
        TriMesh::try_new(
            vec![vec3(0.0, 0.6, 0.0), vec3(-0.3, 0.0, -0.3), vec3(0.3, 0.0, -0.3), vec3(0.0, 0.0, 0.35)],
            vec![[0, 2, 1], [0, 3, 2], [0, 1, 3], [1, 2, 3]],
        )
        .expect("valid indices"),
    );
    for i in -6..=6 {
        let x = i as f32 * 9.0;
        for side in [-1.0f32, 1.0] {
            let h = 6.0 + 4.0 * ((i as f32 * 1.7 + side).sin() * 0.5 + 0.5);
            objects.push(SceneObject::new(
                Cuboid::new(vec3(3.5, h * 0.5, 3.0)),
                at(x, h * 0.5, side * 12.0),
                id,
            ));
            objects.push(SceneObject::new(Cylinder::new(0.12, 2.5), at(x + 4.5, 2.5, side * 7.5), id + 1));
            objects.push(SceneObject::new(marker.clone(), at(x + 2.0, 0.0, side * 5.0), id + 2));
            id += 3;
        }
        objects.push(SceneObject::local(
            Capsule::new(vec3(x + 1.0, 0.3, 6.0), vec3(x + 1.0, 1.45, 6.0), 0.25),
            id,
        ));
        id += 1;
    }
    // A parked car: a box body and a flattened-sphere roof, turned a little.
    let car = Affine3A::from_rotation_translation(Quat::from_rotation_y(0.1), vec3(6.0, 0.0, -3.5));
    objects.push(SceneObject::new(Cuboid::new(vec3(2.2, 0.55, 0.9)), car * at(0.0, 0.75, 0.0), id));
    objects.push(SceneObject::new(
        Sphere::new(1.0),
        car * Affine3A::from_scale_rotation_translation(
            vec3(1.3, 0.45, 0.8),
            Quat::IDENTITY,
            vec3(-0.2, 1.3, 0.0),
        ),
        id + 1,
    ));
    Scene::from_objects(objects)
}
