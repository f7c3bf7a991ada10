//! Voxel block picking, as in a block-building game: which block is under the
//! cross-hair, which of its faces, and where the next block goes.
//!
//! Run: `cargo run --example voxel_picking`
//!
//! The world is a sparse chunked volume (unbounded, 1 m blocks). The player
//! looks along a ray of reach 8 m; the hit gives the block (`cell`) and the
//! face entered (`normal`), so the new block goes in the cell next to it
//! across that face. Breaking a block clears it and the next ray goes on.

use raycast::{vec3, ChunkedVoxels, IVec3, Interval, Ray, RayCast, Vec3};

fn main() {
    // A small hilly terrain: columns up to a height field, stone below grass.
    let mut world = ChunkedVoxels::new(Vec3::ONE, Vec3::ZERO);
    for x in -32..32 {
        for z in -32..32 {
            let h = 4 + ((x as f32 * 0.3).sin() * 2.0 + (z as f32 * 0.2).cos() * 2.0) as i32;
            for y in 0..=h {
                world.set(IVec3::new(x, y, z), true);
            }
        }
    }
    println!("{} blocks in {} chunks", world.len(), world.chunk_count());

    // The player's eye, looking down and ahead; reach 8 m (dir is a unit
    // vector, so t is in metres and the reach is the interval's end).
    let eye = vec3(0.5, 10.6, 0.5);
    let look = vec3(0.6, -0.55, 0.4).normalize();
    let reach = Interval::new(0.0, 8.0);

    let Some(hit) = world.cast(&Ray::new(eye, look), reach) else {
        println!("nothing within reach");
        return;
    };
    let block = hit.cell.expect("voxel hits carry the cell");
    // The face's outward normal is a unit axis vector: the neighbour across it
    // is where a placed block goes.
    let place = block + hit.normal.round().as_ivec3();
    println!(
        "looking at block {block} (face {}, normal {}) at {:.2} m, point {:.3}",
        hit.part, hit.normal, hit.t, hit.point
    );
    println!("a new block would go at {place}");
    assert!(!world.get(place), "the placing cell is always empty: the ray came through it");

    // Place it, and the next look hits the new block on the same face.
    world.set(place, true);
    let again = world.cast(&Ray::new(eye, look), reach).expect("the new block is in reach");
    println!("after placing: looking at {} (face {}) at {:.2} m", again.cell.unwrap(), again.part, again.t);
    assert_eq!(again.cell, Some(place));

    // Break it and the one behind: the ray reaches further down.
    world.set(place, false);
    world.set(block, false);
    match world.cast(&Ray::new(eye, look), reach) {
        Some(h) => println!("after breaking two: looking at {} at {:.2} m", h.cell.unwrap(), h.t),
        None => println!("after breaking two: nothing within reach"),
    }

    // A long ray across mostly empty space skips empty chunks.
    let far = Ray::new(vec3(-5000.0, 6.5, 0.5), vec3(1.0, 0.0, 0.0));
    let h = world.cast(&far, Interval::FORWARD).expect("the terrain is in the way");
    println!("a ray from x = -5000 first meets block {} at t = {}", h.cell.unwrap(), h.t);
}
