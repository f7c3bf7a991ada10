//! Mouse picking: which object is under the cursor, where, and on which part.
//!
//! Run: `cargo run --example picking`
//!
//! A camera looks at a small scene (a floor, boxes, a ball, a capsule and two
//! instances of one shared mesh). Each click is a pixel; its ray through the
//! camera is cast against the scene. The UI gizmo sits in layer 2 and the
//! pick ignores it with the query mask; the hit says which object (`id`),
//! where (`point`), which part (face of a box, `triangle` of a mesh).

use raycast::{
    vec3, Affine3A, Cuboid, Filter, Interval, Plane, Quat, Ray, Scene, SceneObject, Sphere, TriMesh, Vec3,
};
use raycast::{Capsule, Part};
use std::sync::Arc;

/// A pinhole camera: the ray through pixel (x, y) of a w × h image.
fn pixel_ray(eye: Vec3, target: Vec3, fov_y_deg: f32, (w, h): (u32, u32), (x, y): (u32, u32)) -> Ray {
    let forward = (target - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let half = (fov_y_deg.to_radians() * 0.5).tan();
    let sx = ((x as f32 + 0.5) / w as f32 * 2.0 - 1.0) * half * w as f32 / h as f32;
    let sy = (1.0 - (y as f32 + 0.5) / h as f32 * 2.0) * half;
    Ray::new(eye, forward + sx * right + sy * up)
}

/// An octahedron of radius 1: a closed mesh small enough to write by hand.
fn octahedron() -> TriMesh {
    let v = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
    let t = vec![[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]];
    TriMesh::try_new(v, t).expect("valid indices")
}

fn main() {
    let gem = Arc::new(octahedron()); // shared by both instances, never copied
    let at = |x: f32, y: f32, z: f32| Affine3A::from_translation(vec3(x, y, z));
    let scene = Scene::from_objects([
        SceneObject::local(Plane::new(Vec3::Y, Vec3::ZERO), 1),
        SceneObject::new(Cuboid::new(vec3(0.5, 0.5, 0.5)), at(-1.5, 0.5, 0.0), 10),
        SceneObject::new(Cuboid::new(vec3(0.4, 1.0, 0.4)), at(1.5, 1.0, -1.0), 11),
        SceneObject::new(Sphere::new(0.6), at(0.0, 0.6, 1.0), 20),
        SceneObject::local(Capsule::new(vec3(-2.0, 0.3, 2.0), vec3(-0.5, 0.3, 2.5), 0.3), 30),
        SceneObject::new(
            gem.clone(),
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(0.5),
                Quat::from_rotation_y(0.4),
                vec3(0.2, 2.2, -0.5),
            ),
            40,
        ),
        SceneObject::new(gem, at(2.5, 0.5, 1.5), 41),
        // A UI gizmo floating in front of the camera, in layer 2 only.
        SceneObject::new(Sphere::new(0.3), at(0.0, 1.6, 3.0), 99).with_mask(0b10),
    ]);

    let (eye, target, size) = (vec3(0.0, 3.0, 6.0), vec3(0.0, 0.8, 0.0), (800, 450));
    let world = Filter::default().with_mask(0b01); // pick in layer 1: skip the gizmo
    for click in [(400, 225), (200, 260), (560, 180), (410, 120), (620, 280), (20, 20)] {
        let ray = pixel_ray(eye, target, 45.0, size, click);
        match scene.cast(&ray, Interval::FORWARD, &world) {
            Some(hit) => {
                let what = match (hit.part, hit.triangle) {
                    (Part::Face, Some(k)) => format!("triangle {k}"),
                    (part, _) => part.to_string(),
                };
                println!(
                    "click {click:?}: object {} ({what}) at {:.3}, distance {:.3}",
                    hit.object.unwrap(),
                    hit.point,
                    hit.t * ray.dir.length()
                );
            }
            None => println!("click {click:?}: nothing"),
        }
    }
    // The same click without the mask sees the gizmo first.
    let ray = pixel_ray(eye, target, 45.0, size, (400, 225));
    let gizmo = scene.cast(&ray, Interval::FORWARD, &Filter::default()).unwrap();
    println!("with every layer, click (400, 225) hits object {}", gizmo.object.unwrap());
}
