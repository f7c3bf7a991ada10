//! Line of sight: can each guard see the player? And which floor tiles can
//! the player see — a visibility map from one batch of any-hit rays.
//!
//! Run: `cargo run --example line_of_sight`
//!
//! A segment from `a` to `b` is the ray `(a, b − a)` over `t ∈ [0, 1]`, so
//! "is anything in between?" is one any-hit query on `Interval::SEGMENT`.
//! Each guard ignores its own body and the player's (`excluding`); the map
//! uses `hits_batch`, which runs in parallel and answers exactly as the
//! single-ray queries would, in order.

use raycast::{vec3, Affine3A, Capsule, Cuboid, Filter, Interval, Ray, Scene, SceneObject, Vec3};

fn main() {
    let at = |x: f32, z: f32, h: f32| Affine3A::from_translation(vec3(x, h, z));
    let mut objects = vec![
        // Walls of a small courtyard, 2.5 m high.
        SceneObject::new(Cuboid::new(vec3(4.0, 1.25, 0.1)), at(0.0, -2.0, 1.25), 1),
        SceneObject::new(Cuboid::new(vec3(0.1, 1.25, 1.5)), at(-1.0, 1.0, 1.25), 2),
        SceneObject::new(Cuboid::new(vec3(1.0, 1.25, 0.1)), at(2.5, 1.5, 1.25), 3),
        // The player (id 100), a capsule standing at (0, 0).
        SceneObject::local(Capsule::new(vec3(0.0, 0.3, 0.0), vec3(0.0, 1.5, 0.0), 0.3), 100),
    ];
    let guards = [
        (200, vec3(-3.0, 1.6, 1.0)),
        (201, vec3(3.0, 1.6, -3.5)),
        (202, vec3(3.5, 1.6, -1.0)),
        (203, vec3(-3.0, 1.6, -3.0)),
    ];
    for (id, eye) in guards {
        objects.push(SceneObject::local(
            Capsule::new(eye - vec3(0.0, 1.3, 0.0), eye - vec3(0.0, 0.1, 0.0), 0.3),
            id,
        ));
    }
    let scene = Scene::from_objects(objects);

    let player_eye = vec3(0.0, 1.6, 0.0);
    for (id, eye) in guards {
        let skip = [id, 100];
        let blocked = scene.hits(
            &Ray::segment(eye, player_eye),
            Interval::SEGMENT,
            &Filter::default().excluding(&skip),
        );
        println!(
            "guard {id} at ({:.1}, {:.1}) {} the player",
            eye.x,
            eye.z,
            if blocked { "cannot see" } else { "sees" }
        );
    }

    // Visibility map: which cells of the floor can the player see? One
    // segment per cell centre (at knee height), tested in one parallel batch.
    let (n, cell) = (33usize, 0.25f32);
    let centre = |i: usize| (i as f32 - (n / 2) as f32) * cell;
    let targets: Vec<Vec3> = (0..n * n).map(|k| vec3(centre(k % n), 0.5, centre(k / n))).collect();
    let rays: Vec<Ray> = targets.iter().map(|&p| Ray::segment(player_eye, p)).collect();
    let skip = [100];
    let blocked = scene.hits_batch(&rays, Interval::SEGMENT, &Filter::default().excluding(&skip));
    let seen = blocked.iter().filter(|b| !**b).count();
    println!("\nvisibility from the player (# hidden, . seen, @ player), {seen} of {} cells seen:", n * n);
    for (j, row) in blocked.chunks(n).enumerate().rev() {
        let mark = |(i, &b): (usize, &bool)| match (i == n / 2 && j == n / 2, b) {
            (true, _) => '@',
            (_, true) => '#',
            _ => '.',
        };
        println!("  {}", row.iter().enumerate().map(mark).collect::<String>());
    }
}
