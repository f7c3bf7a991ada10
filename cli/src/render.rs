//! A small ray-traced renderer: a pinhole camera, Lambert shading from
//! directional lights with hard shadows from any-hit rays, optional ambient
//! occlusion (more any-hit rays over the hemisphere), and a sky gradient.
//!
//! It knows nothing about what it renders: the caller passes a closest-hit
//! query (`cast`) and an occlusion query (`occluded`), so the same code draws
//! a list of shapes or a scene. Rows are split into bands rendered on all
//! cores with `std::thread::scope`; every pixel depends only on its own rays,
//! so the picture is the same whatever the thread count.

use raycast::{Hit, Interval, Ray, Vec3};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A pinhole camera looking from `eye` toward `target`.
#[derive(Clone, Copy, Debug)]
pub struct Camera {
    pub eye: Vec3,
    pub target: Vec3,
    pub up: Vec3,
    /// Vertical field of view in degrees.
    pub fov_y: f32,
}

impl Camera {
    /// The primary ray through pixel `(x, y)` (its centre) of a `w × h` image.
    /// `dir` is not normalised: the renderer never needs unit directions.
    pub fn ray(&self, x: u32, y: u32, w: u32, h: u32) -> Ray {
        let forward = (self.target - self.eye).normalize();
        let right = forward.cross(self.up).normalize();
        let up = right.cross(forward);
        let half = (self.fov_y.to_radians() * 0.5).tan();
        let aspect = w as f32 / h as f32;
        let sx = ((x as f32 + 0.5) / w as f32 * 2.0 - 1.0) * half * aspect;
        let sy = (1.0 - (y as f32 + 0.5) / h as f32 * 2.0) * half;
        Ray::new(self.eye, forward + sx * right + sy * up)
    }
}

/// What the renderer asks of the world.
pub struct World<'a> {
    /// Closest hit along a ray, with the colour of what was hit.
    pub cast: &'a (dyn Fn(&Ray) -> Option<(Hit, Vec3)> + Sync),
    /// Whether anything blocks the ray within the interval.
    pub occluded: &'a (dyn Fn(&Ray, Interval) -> bool + Sync),
}

/// A directional light (a sun).
#[derive(Clone, Copy, Debug)]
pub struct Light {
    /// Direction *toward* the light (normalised by the renderer).
    pub toward: Vec3,
    /// Colour times intensity.
    pub colour: Vec3,
}

/// Ambient occlusion: `samples` any-hit rays over the hemisphere, up to `distance`.
#[derive(Clone, Copy, Debug)]
pub struct Occlusion {
    pub samples: u32,
    pub distance: f32,
}

/// Everything that lights a picture.
#[derive(Clone, Debug)]
pub struct Lighting {
    pub lights: Vec<Light>,
    /// Light from everywhere (dimmed by ambient occlusion when it is on).
    pub ambient: Vec3,
    pub occlusion: Option<Occlusion>,
    /// A flat background; `None` draws the sky gradient.
    pub background: Option<Vec3>,
}

impl Lighting {
    /// One white sun toward `toward` and a grey ambient term.
    pub fn sun(toward: Vec3, ambient: f32) -> Self {
        Self {
            lights: vec![Light { toward, colour: Vec3::splat(1.0 - ambient) }],
            ambient: Vec3::splat(ambient),
            occlusion: None,
            background: None,
        }
    }
}

/// A rendered picture (RGB, 8 bits) and what it cost.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
    pub rays: u64,
    pub elapsed: Duration,
}

/// Renders `w × h` pixels on `threads` threads; `progress` is called with the
/// number of rows finished, from any thread, as bands complete.
pub fn render(
    world: &World,
    camera: &Camera,
    lighting: &Lighting,
    size: (u32, u32),
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Image {
    let (w, h) = size;
    let start = Instant::now();
    let rays = AtomicU64::new(0);
    let mut rgb = vec![0u8; (w as usize) * (h as usize) * 3];
    let mut lighting = lighting.clone();
    for l in &mut lighting.lights {
        l.toward = l.toward.normalize_or(Vec3::Y);
    }
    let lighting = &lighting;
    let threads = threads.max(1);
    // Interleaved bands of 8 rows balance the load (the sky is cheaper than objects).
    let band_rows = 8usize;
    let band_bytes = band_rows * w as usize * 3;
    let bands: Vec<(usize, &mut [u8])> = rgb.chunks_mut(band_bytes).enumerate().collect();
    let mut per_thread: Vec<Vec<(usize, &mut [u8])>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, band) in bands {
        per_thread[i % threads].push((i, band));
    }
    std::thread::scope(|s| {
        for work in per_thread {
            let rays = &rays;
            s.spawn(move || {
                let mut count = 0u64;
                for (band, pixels) in work {
                    for (k, px) in pixels.chunks_mut(3).enumerate() {
                        let y = (band * band_rows + k / w as usize) as u32;
                        let x = (k % w as usize) as u32;
                        let seed = u64::from(y) << 32 | u64::from(x);
                        let (c, n) = shade(world, &camera.ray(x, y, w, h), lighting, seed);
                        count += n;
                        px.copy_from_slice(&to_srgb8(c));
                    }
                    progress((pixels.len() / 3 / w as usize) as u64);
                }
                rays.fetch_add(count, Ordering::Relaxed);
            });
        }
    });
    Image { width: w, height: h, rgb, rays: rays.into_inner(), elapsed: start.elapsed() }
}

/// The colour seen along `ray`, and how many rays it took.
fn shade(world: &World, ray: &Ray, lighting: &Lighting, seed: u64) -> (Vec3, u64) {
    let Some((hit, albedo)) = (world.cast)(ray) else {
        let sky = lighting.background.unwrap_or_else(|| {
            let up = ray.dir.normalize().y.clamp(-1.0, 1.0) * 0.5 + 0.5;
            Vec3::new(0.93, 0.95, 1.0).lerp(Vec3::new(0.35, 0.55, 0.9), up)
        });
        return (sky, 1);
    };
    let mut rays = 1;
    // Shade the side the ray sees: the normal is outward, never flipped, so
    // a back face (inside of a shell, underside of a triangle) is turned here.
    let n = if hit.front_face { hit.normal } else { -hit.normal };
    // Secondary rays start a little off the surface, scaled to the point's
    // magnitude, so they do not find the surface they start on.
    let eps = 1e-4 * (1.0 + hit.point.abs().max_element());
    let start = hit.point + n * eps;
    let mut light = lighting.ambient;
    if let Some(ao) = lighting.occlusion.filter(|ao| ao.samples > 0) {
        let (t, b) = n.any_orthonormal_pair();
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut open = 0;
        for _ in 0..ao.samples {
            // Cosine-weighted direction: a uniform point of the unit disk lifted onto the hemisphere.
            let (r1, r2) = (next_unit(&mut rng), next_unit(&mut rng));
            let (r, phi) = (r1.sqrt(), std::f32::consts::TAU * r2);
            let d = t * (r * phi.cos()) + b * (r * phi.sin()) + n * (1.0 - r1).max(0.0).sqrt();
            if !(world.occluded)(&Ray::new(start, d), Interval::new(0.0, ao.distance)) {
                open += 1;
            }
        }
        rays += u64::from(ao.samples);
        light *= open as f32 / ao.samples as f32;
    }
    for l in &lighting.lights {
        let lambert = n.dot(l.toward);
        if lambert > 0.0 {
            rays += 1;
            if !(world.occluded)(&Ray::new(start, l.toward), Interval::FORWARD) {
                light += l.colour * lambert;
            }
        }
    }
    (albedo * light, rays)
}

/// A uniform number in `[0, 1)` from a xorshift state.
fn next_unit(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 40) as f32 / (1u64 << 24) as f32
}

/// Linear colour to 8-bit sRGB.
fn to_srgb8(c: Vec3) -> [u8; 3] {
    let f = |v: f32| {
        let v = v.clamp(0.0, 1.0);
        let s = if v <= 0.003_130_8 { 12.92 * v } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
        (s * 255.0 + 0.5) as u8
    };
    [f(c.x), f(c.y), f(c.z)]
}

/// Writes the image as an 8-bit RGB PNG.
pub fn write_png(image: &Image, path: &Path) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), image.width, image.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| format!("{}: {e}", path.display()))?;
    writer.write_image_data(&image.rgb).map_err(|e| format!("{}: {e}", path.display()))?;
    writer.finish().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The summary line: size, rays and rays per second.
pub fn summary(image: &Image, path: &Path) -> String {
    let secs = image.elapsed.as_secs_f64().max(1e-9);
    let mut s = Vec::new();
    let _ = write!(
        s,
        "wrote {} ({}x{}): {} rays in {:.2} s, {:.2} Mrays/s",
        path.display(),
        image.width,
        image.height,
        image.rays,
        secs,
        image.rays as f64 / secs / 1e6
    );
    String::from_utf8(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use raycast::{vec3, RayCast, Sphere};

    #[test]
    fn camera_centre_ray_looks_at_the_target() {
        let cam = Camera { eye: vec3(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y: 60.0 };
        let r = cam.ray(50, 50, 101, 101);
        assert!((r.dir.normalize() - vec3(0.0, 0.0, -1.0)).length() < 1e-6);
    }

    #[test]
    fn lit_shadowed_and_sky_pixels() {
        // A ball over nothing: centre pixel is lit from the camera side, the
        // corner is sky; with an occluder everywhere, the ball is in shadow.
        let ball = Sphere::new(1.0);
        let cast = |r: &Ray| ball.cast(r, Interval::FORWARD).map(|h| (h, Vec3::ONE));
        let never = |_: &Ray, _: Interval| false;
        let always = |_: &Ray, _: Interval| true;
        let cam = Camera { eye: vec3(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y: 40.0 };
        let light = Lighting::sun(vec3(0.0, 0.0, 1.0), 0.1);
        let lit = render(&World { cast: &cast, occluded: &never }, &cam, &light, (9, 9), 2, &|_| ());
        let dark = render(&World { cast: &cast, occluded: &always }, &cam, &light, (9, 9), 1, &|_| ());
        let px = |img: &Image, x: u32, y: u32| img.rgb[((y * 9 + x) * 3) as usize];
        assert_eq!(px(&lit, 4, 4), 255);
        assert!(px(&dark, 4, 4) < 100);
        assert_eq!(px(&lit, 0, 0), px(&dark, 0, 0)); // sky
        assert!(lit.rays > 81 && dark.rays > 81);
    }
}
