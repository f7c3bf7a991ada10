//! End-to-end tests of `raycast render` and `raycast demo`: the binary is run
//! on scene files and the PNG it writes is decoded and checked pixel by pixel.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("raycast-render-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Decodes an 8-bit RGB PNG: (width, height, pixels).
fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Linear intensity to the 8-bit sRGB value the renderer writes.
fn srgb(v: f32) -> u8 {
    let s = if v <= 0.003_130_8 { 12.92 * v } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0 + 0.5) as u8
}

fn close(got: &[u8], want: [u8; 3]) -> bool {
    got.iter().zip(want).all(|(&g, w)| (i32::from(g) - i32::from(w)).abs() <= 2)
}

/// Seen from straight above (eye at y = 10, 60° field of view, 101 × 101
/// pixels, image right = +x): a white ground slab with its top at y = 0 out
/// to |x|, |z| ≤ 4, a red unit-half-extent cube floating at y ∈ [1, 3], and a
/// sun toward (1, 1, 0)/√2 with ambient 0.2 and intensity 0.8.
///
/// Column x of the centre row sees ground point `10·tan(30°)·((x + ½)/101·2 − 1)`:
/// column 32 sees x ≈ −2 (in the cube's shadow, which falls 1 to 3 units
/// toward −x), column 76 sees x ≈ +3 (lit), column 50 the cube's top; the
/// corner sees past the slab (background).
const SCENE: &str = r#"{
  "camera": {"eye": [0, 10, 0], "target": [0, 0, 0], "up": [0, 0, -1], "fov_y": 60},
  "width": 101, "height": 101,
  "background": [0, 0, 1],
  "ambient": 0.2,
  "lights": [{"toward": [1, 1, 0], "intensity": 0.8}],
  "objects": [
    {"shape": {"type": "cuboid", "half_extents": [4, 0.5, 4]}, "transform": {"translation": [0, -0.5, 0]}, "colour": [1, 1, 1]},
    {"shape": {"type": "cuboid", "half_extents": [1, 1, 1]}, "transform": {"translation": [0, 2, 0]}, "colour": [1, 0, 0], "id": 5}
  ]
}"#;

#[test]
fn render_gives_the_expected_pixels() {
    let scene = tmp("scene.json");
    let out = tmp("scene.png");
    std::fs::write(&scene, SCENE).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args(["render", scene.to_str().unwrap(), "-o", out.to_str().unwrap(), "--threads", "2"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary = String::from_utf8_lossy(&run.stdout);
    assert!(summary.contains("rays") && summary.contains("Mrays/s"), "{summary}");
    let (w, h, px) = read_png(&out);
    assert_eq!((w, h), (101, 101));
    let at = |x: u32, y: u32| &px[((y * w + x) * 3) as usize..][..3];
    let lit = 0.2 + 0.8 * std::f32::consts::FRAC_1_SQRT_2;
    assert!(close(at(0, 0), [0, 0, 255]), "background {:?}", at(0, 0));
    assert!(close(at(76, 50), [srgb(lit); 3]), "lit ground {:?}", at(76, 50));
    assert!(close(at(32, 50), [srgb(0.2); 3]), "shadowed ground {:?}", at(32, 50));
    assert!(close(at(50, 50), [srgb(lit), 0, 0]), "cube top {:?}", at(50, 50));
}

#[test]
fn size_flags_override_the_scene() {
    let scene = tmp("size.json");
    let out = tmp("size.png");
    std::fs::write(&scene, SCENE).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args([
            "render",
            scene.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--width",
            "40",
            "--height",
            "30",
        ])
        .output()
        .unwrap();
    assert!(run.status.success());
    let (w, h, _) = read_png(&out);
    assert_eq!((w, h), (40, 30));
}

#[test]
fn masks_hide_objects_from_the_camera_and_from_shadows() {
    // The cube is in mask 2: with camera_mask 1 it is not seen (the centre
    // shows the lit ground under it), with shadow_mask 1 it casts no shadow.
    let scene = tmp("masks.json");
    let out = tmp("masks.png");
    let text = SCENE.replace(r#""id": 5"#, r#""id": 5, "mask": 2"#).replace(
        r#""background": [0, 0, 1],"#,
        r#""background": [0, 0, 1], "camera_mask": 1, "shadow_mask": 1,"#,
    );
    std::fs::write(&scene, text).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args(["render", scene.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let (w, _, px) = read_png(&out);
    let at = |x: u32, y: u32| &px[((y * w + x) * 3) as usize..][..3];
    let lit = srgb(0.2 + 0.8 * std::f32::consts::FRAC_1_SQRT_2);
    assert!(close(at(50, 50), [lit; 3]), "{:?}", at(50, 50));
    assert!(close(at(32, 50), [lit; 3]), "{:?}", at(32, 50));
}

#[test]
fn malformed_scene_fails_with_file_and_json_path() {
    let scene = tmp("bad.json");
    let out = tmp("bad.png");
    std::fs::write(&scene, SCENE.replace(r#""half_extents": [1, 1, 1]"#, r#""half_extents": [1, -1, 1]"#))
        .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args(["render", scene.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("bad.json") && err.contains("objects[1].shape.half_extents"), "{err}");
    assert!(!out.exists());

    let missing =
        Command::new(env!("CARGO_BIN_EXE_raycast")).args(["render", "no-such-scene.json"]).output().unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such-scene.json"));
}

#[test]
fn demo_writes_a_png_and_reports_rays_per_second() {
    let out = tmp("demo.png");
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args(["demo", "-o", out.to_str().unwrap(), "--width", "160", "--height", "90"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary = String::from_utf8_lossy(&run.stdout);
    assert!(summary.contains(out.to_str().unwrap()) && summary.contains("Mrays/s"), "{summary}");
    let (w, h, px) = read_png(&out);
    assert_eq!((w, h), (160, 90));
    // Not a blank picture: many distinct colours.
    let distinct: std::collections::HashSet<&[u8]> = px.chunks(3).collect();
    assert!(distinct.len() > 100, "{}", distinct.len());
}

/// A minimal MagicaVoxel file: one model of `size` with the given voxels.
fn vox_bytes(size: [u32; 3], voxels: &[[u8; 3]]) -> Vec<u8> {
    let chunk = |id: &[u8; 4], content: &[u8], children: &[u8]| {
        let mut c = id.to_vec();
        c.extend((content.len() as u32).to_le_bytes());
        c.extend((children.len() as u32).to_le_bytes());
        c.extend(content);
        c.extend(children);
        c
    };
    let size: Vec<u8> = size.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut xyzi = (voxels.len() as u32).to_le_bytes().to_vec();
    for v in voxels {
        xyzi.extend([v[0], v[1], v[2], 1]);
    }
    let children = [chunk(b"SIZE", &size, &[]), chunk(b"XYZI", &xyzi, &[])].concat();
    let mut bytes = b"VOX ".to_vec();
    bytes.extend(150u32.to_le_bytes());
    bytes.extend(chunk(b"MAIN", &[], &children));
    bytes
}

#[test]
fn vox_models_load_relative_to_the_scene_file() {
    // One 2 m block (a single voxel, cell size 2) seen from above on a dark
    // background: the centre pixel is its lit top, a corner the background.
    let dir = tmp("vox-scene");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("block.vox"), vox_bytes([1, 1, 1], &[[0, 0, 0]])).unwrap();
    let scene = dir.join("scene.json");
    let out = dir.join("scene.png");
    std::fs::write(
        &scene,
        r#"{"camera": {"eye": [0, 10, 0], "target": [0, 0, 0], "up": [0, 0, -1], "fov_y": 30},
            "width": 21, "height": 21, "background": [0, 0, 0], "ambient": 0.2,
            "lights": [{"toward": [0, 1, 0], "intensity": 0.8}],
            "objects": [{"shape": {"type": "vox", "path": "block.vox", "cell_size": 2, "origin": [-1, -1, -1]},
                         "colour": [0, 1, 0]}]}"#,
    )
    .unwrap();
    // Run from elsewhere: the path must be taken from the scene's folder.
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .current_dir(std::env::temp_dir())
        .args(["render", scene.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let (w, _, px) = read_png(&out);
    let at = |x: u32, y: u32| &px[((y * w + x) * 3) as usize..][..3];
    assert!(close(at(10, 10), [0, 255, 0]), "{:?}", at(10, 10));
    assert!(close(at(0, 0), [0, 0, 0]), "{:?}", at(0, 0));

    // A model index the file does not have is an error naming the field.
    std::fs::write(
        &scene,
        std::fs::read_to_string(&scene)
            .unwrap()
            .replace(r#""cell_size": 2"#, r#""cell_size": 2, "model": 3"#),
    )
    .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_raycast"))
        .args(["render", scene.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("objects[0].shape.model"));
}
