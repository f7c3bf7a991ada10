//! Loading [`TriMesh`]es from OBJ, STL and PLY files (the `load` feature).
//!
//! The parsing is done by well-kept crates — [`tobj`] for Wavefront OBJ,
//! [`stl_io`] for STL, [`ply_rs_bw`] for PLY — and this module turns what they
//! return into one indexed triangle list, with errors that say which file and,
//! where the parser knows it, which line.
//!
//! * **OBJ**: every object and group is merged into one mesh, triangles in file
//!   order. Polygons are fan-triangulated in file order (`a b c d` becomes
//!   `a b c`, `a c d`); negative (relative) indices count back from the last
//!   vertex read; points and lines are dropped; materials, texture coordinates
//!   and normals are ignored. `tobj` renumbers the vertices of each group in
//!   first-use order, dropping those no face uses, so vertices with
//!   bit-identical positions are merged again here (which also joins groups
//!   along their shared edges); the triangles and the order of their corners
//!   are exactly the file's, the vertex numbering is not.
//! * **STL**: binary and ASCII (told apart by the binary size rule, so a binary
//!   header that happens to start with `solid` still loads). STL stores every
//!   triangle on its own; corners with bit-identical positions are merged, so
//!   a closed model becomes an indexed, watertight mesh.
//! * **PLY**: ASCII and binary (either byte order). The `vertex` element's
//!   `x`, `y`, `z` (any numeric type) and the `face` element's
//!   `vertex_indices` (or `vertex_index`) lists of any integer type, fan
//!   triangulated. The file's vertices are kept as they are.
//!
//! Invalid content that parses — an index out of range, a non-finite
//! coordinate — is refused by [`TriMesh::try_new`], and its [`ShapeError`]
//! comes back inside the [`LoadError`].
//!
//! ```no_run
//! # fn main() -> Result<(), raycast::mesh::LoadError> {
//! let bunny = raycast::mesh::load("assets/meshes/bunny.obj")?;
//! assert_eq!(bunny.triangles().len(), 69_451);
//! # Ok(())
//! # }
//! ```

use super::TriMesh;
use crate::ShapeError;
use glam::Vec3;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a mesh file could not be loaded.
///
/// Its [`Display`](fmt::Display) reads `FILE: line N: what went wrong` (the file
/// and the line when they are known), e.g.
/// `cube.obj: line 12: face parse error: f 1 2 x`.
#[derive(Debug)]
pub struct LoadError {
    path: Option<PathBuf>,
    line: Option<usize>,
    kind: LoadErrorKind,
}

/// What went wrong while loading a mesh.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// The file name's extension is not `obj`, `stl` or `ply` (in any case).
    UnknownFormat {
        /// The extension that was given, if any.
        extension: Option<String>,
    },
    /// The file could not be opened or read.
    Io(io::Error),
    /// The parser refused the content.
    Parse(String),
    /// The content parsed but is not a valid mesh (e.g. an index out of range).
    Shape(ShapeError),
}

impl LoadError {
    fn new(kind: LoadErrorKind) -> Self {
        Self { path: None, line: None, kind }
    }

    fn parse(message: impl Into<String>) -> Self {
        Self::new(LoadErrorKind::Parse(message.into()))
    }

    fn at_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    fn in_file(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The file, when the mesh was loaded from one (not from a reader).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The 1-based line of the file where the problem is, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What went wrong.
    pub fn kind(&self) -> &LoadErrorKind {
        &self.kind
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        match &self.kind {
            LoadErrorKind::UnknownFormat { extension: Some(e) } => {
                write!(f, "unknown mesh format `.{e}` (expected .obj, .stl or .ply)")
            }
            LoadErrorKind::UnknownFormat { extension: None } => {
                write!(f, "no file extension to tell the mesh format (expected .obj, .stl or .ply)")
            }
            LoadErrorKind::Io(e) => write!(f, "{e}"),
            LoadErrorKind::Parse(m) => write!(f, "{m}"),
            LoadErrorKind::Shape(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LoadErrorKind::Io(e) => Some(e),
            LoadErrorKind::Shape(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for LoadError {
    fn from(e: io::Error) -> Self {
        Self::new(LoadErrorKind::Io(e))
    }
}

impl From<ShapeError> for LoadError {
    fn from(e: ShapeError) -> Self {
        Self::new(LoadErrorKind::Shape(e))
    }
}

/// Loads a triangle mesh from an `.obj`, `.stl` or `.ply` file, chosen by the
/// extension (in any case).
///
/// * OBJ: all objects and groups in one mesh, triangles in file order;
///   polygons fan-triangulated (`a b c d` → `a b c`, `a c d`); negative
///   indices relative; points, lines, materials, normals and texture
///   coordinates ignored. Vertices are renumbered (bit-identical positions
///   merged, unused ones dropped); triangles and their corner order are the
///   file's.
/// * STL, binary or ASCII: corners with bit-identical positions merged into
///   shared vertices, so a closed model gives a watertight indexed mesh.
/// * PLY, ASCII or binary: `vertex` `x y z`, `face` `vertex_indices` (any
///   numeric types), fan-triangulated; vertices as in the file.
///
/// # Errors
/// A [`LoadError`] naming the file (and the line, when the parser gives it):
/// an unknown extension, an I/O error, a parse error, or a mesh refused by
/// [`TriMesh::try_new`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let path = std::env::temp_dir().join(format!("raycast-doc-{}.obj", std::process::id()));
/// std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n")?;
/// let quad = raycast::mesh::load(&path)?;
/// assert_eq!(quad.triangles(), &[[0, 1, 2], [0, 2, 3]]);
/// std::fs::remove_file(&path)?;
///
/// let err = raycast::mesh::load("model.fbx").unwrap_err();
/// assert!(err.to_string().starts_with("model.fbx: unknown mesh format `.fbx`"));
/// # Ok(())
/// # }
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<TriMesh, LoadError> {
    let path = path.as_ref();
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let reader = |p: &Path| std::fs::File::open(p).map(io::BufReader::new);
    let result = match extension.as_deref() {
        Some("obj") => reader(path).map_err(LoadError::from).and_then(load_obj),
        Some("stl") => reader(path).map_err(LoadError::from).and_then(load_stl),
        Some("ply") => reader(path).map_err(LoadError::from).and_then(load_ply),
        _ => Err(LoadError::new(LoadErrorKind::UnknownFormat {
            extension: path.extension().map(|e| e.to_string_lossy().into_owned()),
        })),
    };
    result.map_err(|e| e.in_file(path))
}

/// Loads a Wavefront OBJ mesh from a reader (see [`load`] for what is kept).
/// Errors carry the line but no file name.
///
/// # Errors
/// As for [`load`].
///
/// ```
/// let obj = "o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\no b\nv 0 0 1\nf -1 -3 -2\n";
/// let mesh = raycast::mesh::load_obj(obj.as_bytes()).unwrap();
/// assert_eq!(mesh.vertices().len(), 4);
/// assert_eq!(mesh.triangles(), &[[0, 1, 2], [3, 1, 2]]);
///
/// let err = raycast::mesh::load_obj("v 0 0 0\nv 1 oops 0\n".as_bytes()).unwrap_err();
/// assert_eq!(err.line(), Some(2));
/// ```
pub fn load_obj(mut reader: impl Read) -> Result<TriMesh, LoadError> {
    let mut data = Vec::new();
    reader.read_to_end(&mut data)?;
    // The struct update covers the fields that tobj's optional `merging` and
    // `reordering` features add, should another crate turn them on.
    #[allow(clippy::needless_update)]
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // `&[u8]` is a `BufRead` that consumes exactly the lines read so far, so
    // when tobj stops on a bad line, what is left says which line it was.
    let mut rest: &[u8] = &data;
    let parsed = tobj::load_obj_buf(&mut rest, &options, |_| Err(tobj::LoadError::OpenFileFailed));
    let (models, _materials) = match parsed {
        Ok(m) => m,
        Err(e) => {
            let consumed = data.len() - rest.len();
            let line = match e {
                // These are found when a group is closed, not on the face's
                // own line: look for that line.
                tobj::LoadError::FaceVertexOutOfBounds
                | tobj::LoadError::FaceTexCoordOutOfBounds
                | tobj::LoadError::FaceNormalOutOfBounds
                | tobj::LoadError::FaceColorOutOfBounds => obj_bad_face_line(&data),
                _ => Some(line_of(&data, consumed)),
            };
            let text =
                line.and_then(|l| obj_line_text(&data, l)).map(|t| format!(": {t}")).unwrap_or_default();
            return Err(LoadError::parse(format!("{e}{text}")).at_line(line));
        }
    };
    let mut merge = VertexMerge::default();
    let mut triangles = Vec::new();
    for model in &models {
        let m = &model.mesh;
        let remap: Vec<u32> =
            m.positions.chunks_exact(3).map(|p| merge.index(Vec3::new(p[0], p[1], p[2]))).collect();
        triangles.extend(m.indices.chunks_exact(3).map(|t| [0, 1, 2].map(|k| remap[t[k] as usize])));
    }
    Ok(TriMesh::try_new(merge.vertices, triangles)?)
}

/// Loads an STL mesh, binary or ASCII, from a reader, merging corners with
/// bit-identical positions. Errors carry no file name.
///
/// # Errors
/// As for [`load`].
///
/// ```
/// let stl = "solid t\n\
///   facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n endloop\n endfacet\n\
///   facet normal 0 0 1\n outer loop\n  vertex 1 0 0\n  vertex 1 1 0\n  vertex 0 1 0\n endloop\n endfacet\n\
///   endsolid t\n";
/// let mesh = raycast::mesh::load_stl(stl.as_bytes()).unwrap();
/// assert_eq!(mesh.vertices().len(), 4); // the shared edge is shared
/// assert_eq!(mesh.triangles(), &[[0, 1, 2], [1, 3, 2]]);
/// ```
pub fn load_stl(mut reader: impl Read) -> Result<TriMesh, LoadError> {
    let mut data = Vec::new();
    reader.read_to_end(&mut data)?;
    // A binary STL is an 80-byte header, a u32 count and 50 bytes a triangle.
    let binary_count = data.get(80..84).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64);
    let binary_size = binary_count.map(|n| 84 + 50 * n);
    let starts_solid = data.starts_with(b"solid");
    if starts_solid && binary_size == Some(data.len() as u64) {
        // A binary file whose free-form header starts with `solid`: stl_io
        // would take it for ASCII.
        data[..5].copy_from_slice(b"SOLID");
    } else if starts_solid {
        // ASCII. stl_io wants `solid ` with a space, even without a name.
        if matches!(data.get(5), Some(b'\r' | b'\n') | None) {
            data.insert(5, b' ');
        }
    } else {
        match binary_size {
            None => return Err(LoadError::parse("not an STL file: too short for a binary STL header")),
            Some(size) if (data.len() as u64) < size => {
                return Err(LoadError::parse(format!(
                    "binary STL truncated: the header announces {} triangles ({size} bytes), the file has {} bytes",
                    binary_count.unwrap_or(0),
                    data.len()
                )))
            }
            Some(_) => {}
        }
    }
    let indexed =
        stl_io::read_stl(&mut io::Cursor::new(data)).map_err(|e| LoadError::parse(format!("STL: {e}")))?;
    let vertices = indexed.vertices.iter().map(|v| Vec3::from_array(v.0)).collect();
    let triangles = indexed.faces.iter().map(|f| f.vertices.map(|i| i as u32)).collect();
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// Loads a PLY mesh (ASCII or binary) from a reader. Errors carry the line for
/// ASCII files but no file name.
///
/// # Errors
/// As for [`load`].
///
/// ```
/// let ply = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
///   property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n\
///   0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n";
/// let mesh = raycast::mesh::load_ply(ply.as_bytes()).unwrap();
/// assert_eq!(mesh.triangles(), &[[0, 1, 2], [0, 2, 3]]);
/// ```
pub fn load_ply(mut reader: impl Read) -> Result<TriMesh, LoadError> {
    let mut data = Vec::new();
    reader.read_to_end(&mut data)?;
    // ply-rs-bw counts lines in binary payloads too (one per element): only
    // an ASCII file's line numbers are lines of the file.
    let ascii = data.split(|&b| b == b'\n').take_while(|l| !l.starts_with(b"end_header")).any(|l| {
        let mut words = l.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
        words.next() == Some(b"format") && words.next() == Some(b"ascii")
    });
    let ply = ply_rs_bw::parser::Parser::<PlyElement>::new()
        .read_ply(&mut data.as_slice())
        .map_err(|e| ply_error(&e.to_string(), ascii))?;
    let vertices_in =
        ply.payload.get("vertex").ok_or_else(|| LoadError::parse("PLY has no `vertex` element"))?;
    let mut vertices = Vec::with_capacity(vertices_in.len());
    for (i, v) in vertices_in.iter().enumerate() {
        if v.have != 0b111 {
            return Err(LoadError::parse(format!("PLY vertex {i} lacks one of the properties x, y, z")));
        }
        vertices.push(Vec3::new(v.xyz[0] as f32, v.xyz[1] as f32, v.xyz[2] as f32));
    }
    let faces = ply.payload.get("face").map(Vec::as_slice).unwrap_or_default();
    let mut triangles = Vec::with_capacity(faces.len());
    for (i, f) in faces.iter().enumerate() {
        if let Some(bad) = f.indices.iter().find(|&&k| !(0..=i64::from(u32::MAX)).contains(&k)) {
            return Err(LoadError::parse(format!("PLY face {i} has vertex index {bad}, out of range")));
        }
        match f.indices.as_slice() {
            [] if !f.has_list => {
                return Err(LoadError::parse(format!("PLY face {i} has no `vertex_indices` list")));
            }
            [a, rest @ ..] if rest.len() >= 2 => {
                triangles.extend(rest.windows(2).map(|w| [*a as u32, w[0] as u32, w[1] as u32]));
            }
            short => {
                return Err(LoadError::parse(format!(
                    "PLY face {i} has {} vertices; a face needs at least 3",
                    short.len()
                )));
            }
        }
    }
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// ply-rs-bw's error text — `Line N: headline`, then tab-indented
/// `String: '<the line>'` and `Error: <nested Debug>` parts — as a one-line
/// parse error: the headline and the offending text, with the line number
/// taken out (and kept only when `lines_are_real`).
fn ply_error(text: &str, lines_are_real: bool) -> LoadError {
    let mut parts = text.split("\n\t");
    let first = parts.next().unwrap_or_default().lines().next().unwrap_or_default();
    let (line, headline) = match first.strip_prefix("Line ").and_then(|r| r.split_once(':')) {
        Some((n, rest)) => (n.parse::<usize>().ok(), rest.trim()),
        None => (None, first.trim()),
    };
    let quoted = parts
        .find_map(|p| p.strip_prefix("String: "))
        .map(|q| format!(": `{}`", q.trim_matches(|c: char| c == '\'' || c.is_whitespace())))
        .unwrap_or_default();
    let e = LoadError::parse(format!("PLY: {}{quoted}", headline.trim_end_matches('.')));
    e.at_line(line.filter(|&n| n > 0 && lines_are_real))
}

/// One PLY element: the vertex coordinates or the face's index list (one type
/// for every element, as ply-rs-bw's parser wants; other properties are
/// dropped as they are read).
#[derive(Default)]
struct PlyElement {
    xyz: [f64; 3],
    /// Bit `k` set when coordinate `k` was given.
    have: u8,
    indices: Vec<i64>,
    has_list: bool,
}

impl ply_rs_bw::ply::PropertyAccess for PlyElement {
    fn new() -> Self {
        Self::default()
    }

    fn set_property(&mut self, name: &str, property: ply_rs_bw::ply::Property) {
        use ply_rs_bw::ply::Property as P;
        let axis = match name {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some(k) = axis {
            let value = match property {
                P::Char(v) => f64::from(v),
                P::UChar(v) => f64::from(v),
                P::Short(v) => f64::from(v),
                P::UShort(v) => f64::from(v),
                P::Int(v) => f64::from(v),
                P::UInt(v) => f64::from(v),
                P::Float(v) => f64::from(v),
                P::Double(v) => v,
                _ => return,
            };
            self.xyz[k] = value;
            self.have |= 1 << k;
        } else if name == "vertex_indices" || name == "vertex_index" {
            self.indices = match property {
                P::ListChar(v) => v.into_iter().map(i64::from).collect(),
                P::ListUChar(v) => v.into_iter().map(i64::from).collect(),
                P::ListShort(v) => v.into_iter().map(i64::from).collect(),
                P::ListUShort(v) => v.into_iter().map(i64::from).collect(),
                P::ListInt(v) => v.into_iter().map(i64::from).collect(),
                P::ListUInt(v) => v.into_iter().map(i64::from).collect(),
                _ => return,
            };
            self.has_list = true;
        }
    }
}

/// Gives each distinct position (by bit pattern) one index.
#[derive(Default)]
struct VertexMerge {
    vertices: Vec<Vec3>,
    index: HashMap<[u32; 3], u32>,
}

impl VertexMerge {
    fn index(&mut self, p: Vec3) -> u32 {
        let next = self.vertices.len() as u32;
        let i = *self.index.entry(p.to_array().map(f32::to_bits)).or_insert(next);
        if i == next {
            self.vertices.push(p);
        }
        i
    }
}

/// The 1-based line that the byte at `consumed - 1` is on (the last line read).
fn line_of(data: &[u8], consumed: usize) -> usize {
    let newlines = data[..consumed].iter().filter(|&&b| b == b'\n').count();
    let partial = consumed > 0 && data[consumed - 1] != b'\n';
    (newlines + usize::from(partial)).max(1)
}

/// The text of 1-based line `n`, trimmed and cut to a readable length.
fn obj_line_text(data: &[u8], n: usize) -> Option<String> {
    let line = data.split(|&b| b == b'\n').nth(n - 1)?;
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    Some(if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text.into()
    })
}

/// The first `f` line whose vertex, texture or normal index is out of range
/// (OBJ indices are 1-based, negative ones relative to the count so far; the
/// range is what the whole file declares, as tobj checks it).
fn obj_bad_face_line(data: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(data);
    let total = |kw: &str| text.lines().filter(|l| l.split_whitespace().next() == Some(kw)).count() as i64;
    let totals = [total("v"), total("vt"), total("vn")];
    let mut seen = [0i64; 3];
    for (n, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => seen[0] += 1,
            Some("vt") => seen[1] += 1,
            Some("vn") => seen[2] += 1,
            Some("f") => {
                for corner in words {
                    for (k, part) in corner.split('/').enumerate().take(3) {
                        let Ok(i) = part.parse::<i64>() else { continue };
                        let resolved = if i < 0 { seen[k] + i } else { i - 1 };
                        if !(0..totals[k]).contains(&resolved) {
                            return Some(n + 1);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Writes `bytes` to a fresh file named `*.{ext}` in the temp dir.
    fn temp_file(ext: &str, bytes: &[u8]) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("raycast-load-{}-{n}.{ext}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Loads `bytes` as a file with extension `ext`, removing the file after.
    fn load_bytes(ext: &str, bytes: &[u8]) -> (PathBuf, Result<TriMesh, LoadError>) {
        let path = temp_file(ext, bytes);
        let r = load(&path);
        std::fs::remove_file(&path).unwrap();
        (path, r)
    }

    /// The unit cube [0,1]³ as 6 quads, outward winding, split into groups.
    const CUBE_OBJ: &str = "# cube\n\
        v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
        o bottom_and_top\nf 1 4 3 2\nf 5 6 7 8\n\
        g sides\nf 1 2 6 5\nf 2 3 7 6\nf -5 -1 -2 -6\nf 4 1 5 8\n";

    fn cube_stl_triangles() -> Vec<[Vec3; 3]> {
        let m = load_obj(CUBE_OBJ.as_bytes()).unwrap();
        m.triangles().iter().map(|t| t.map(|i| m.vertices()[i as usize])).collect()
    }

    fn ascii_stl(tris: &[[Vec3; 3]], header: &str) -> String {
        let mut s = format!("{header}\n");
        for t in tris {
            let n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
            s += &format!("  facet normal {} {} {}\n    outer loop\n", n.x, n.y, n.z);
            for v in t {
                s += &format!("      vertex {} {} {}\n", v.x, v.y, v.z);
            }
            s += "    endloop\n  endfacet\n";
        }
        s + "endsolid cube\n"
    }

    fn binary_stl(tris: &[[Vec3; 3]], header: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 80];
        b[..header.len()].copy_from_slice(header);
        b.extend((tris.len() as u32).to_le_bytes());
        for t in tris {
            let n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
            for v in [n, t[0], t[1], t[2]] {
                for c in v.to_array() {
                    b.extend(c.to_le_bytes());
                }
            }
            b.extend([0, 0]);
        }
        b
    }

    /// Checks the loaded cube: 8 shared vertices, 12 triangles, closed (every
    /// edge in exactly two triangles), outward winding, and the triangle
    /// positions equal to `expect`.
    fn assert_is_cube(m: &TriMesh, expect: &[[Vec3; 3]]) {
        assert_eq!(m.vertices().len(), 8);
        assert_eq!(m.triangles().len(), 12);
        let got: Vec<[Vec3; 3]> = m.triangles().iter().map(|t| t.map(|i| m.vertices()[i as usize])).collect();
        assert_eq!(got, expect);
        let mut edges = HashMap::new();
        for t in m.triangles() {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
            let [a, b, c] = t.map(|i| m.vertices()[i as usize]);
            let centroid = (a + b + c) / 3.0;
            assert!((b - a).cross(c - a).dot(centroid - Vec3::splat(0.5)) > 0.0, "outward winding");
        }
        assert!(edges.values().all(|&n| n == 2), "closed: {edges:?}");
    }

    #[test]
    fn obj_quads_are_fan_triangulated_and_groups_merged() {
        let m = load_obj(CUBE_OBJ.as_bytes()).unwrap();
        // Fans in file order: `1 4 3 2` → (1 4 3), (1 3 2).
        assert_eq!(&m.triangles()[..2], &[[0, 1, 2], [0, 2, 3]]);
        assert_eq!(&m.vertices()[..4], &[Vec3::ZERO, Vec3::Y, Vec3::new(1.0, 1.0, 0.0), Vec3::X]);
        let expect = cube_stl_triangles();
        assert_is_cube(&m, &expect);
        // The relative face `f -5 -1 -2 -6` is `f 4 8 7 3`... as the cube says.
        let (_, r) = load_bytes("OBJ", CUBE_OBJ.as_bytes());
        assert_is_cube(&r.unwrap(), &expect);
    }

    #[test]
    fn obj_polygon_fan_and_relative_indices() {
        let obj = "v 0 0 0\nv 1 0 0\nv 2 1 0\nv 1 2 0\nv 0 1 0\nf -5 -4 -3 -2 -1\nl 1 2\np 3\n";
        let m = load_obj(obj.as_bytes()).unwrap();
        assert_eq!(m.triangles(), &[[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
    }

    #[test]
    fn obj_errors_name_file_and_line() {
        let (path, r) = load_bytes("obj", b"v 0 0 0\nv 1 0 0\n# fine\nv 0 1 zero\nf 1 2 3\n");
        let e = r.unwrap_err();
        assert_eq!(e.path(), Some(path.as_path()));
        assert_eq!(e.line(), Some(4));
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("{}: line 4: ", path.display())), "{msg}");
        assert!(msg.contains("v 0 1 zero"), "{msg}");

        let e = load_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n".as_bytes()).unwrap_err();
        assert_eq!(e.line(), Some(4), "{e}");

        // Out of range: found by tobj only at the end of the group.
        let e = load_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\nf 1 2 3\n".as_bytes()).unwrap_err();
        assert_eq!(e.line(), Some(5), "{e}");
        assert!(e.to_string().contains("out of bounds"), "{e}");
        let e = load_obj("v 0 0 0\nv 1 0 0\nf -3 -2 -1\n".as_bytes()).unwrap_err();
        assert_eq!(e.line(), Some(3), "{e}");
        let e = load_obj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2".as_bytes()).unwrap_err();
        assert_eq!(e.line(), Some(4), "{e}");
    }

    #[test]
    fn stl_ascii_and_binary_give_the_same_indexed_cube() {
        let tris = cube_stl_triangles();
        let (_, ascii) = load_bytes("stl", ascii_stl(&tris, "solid cube").as_bytes());
        assert_is_cube(&ascii.unwrap(), &tris);
        // `solid` without a name, and CRLF line ends.
        let (_, bare) = load_bytes("Stl", ascii_stl(&tris, "solid").replace('\n', "\r\n").as_bytes());
        assert_is_cube(&bare.unwrap(), &tris);
        let (_, binary) = load_bytes("stl", &binary_stl(&tris, b"binary cube"));
        assert_is_cube(&binary.unwrap(), &tris);
        // A binary header that starts with `solid` is still binary.
        let (_, tricky) = load_bytes("STL", &binary_stl(&tris, b"solid but binary"));
        assert_is_cube(&tricky.unwrap(), &tris);
    }

    #[test]
    fn stl_errors_name_the_file() {
        let tris = cube_stl_triangles();
        let mut cut = binary_stl(&tris, b"cut");
        cut.truncate(84 + 50 * 5);
        let (path, r) = load_bytes("stl", &cut);
        let msg = r.unwrap_err().to_string();
        assert!(msg.starts_with(&format!("{}: binary STL truncated", path.display())), "{msg}");
        let bad = ascii_stl(&tris, "solid cube").replacen("vertex 0 0 0", "vertex 0 0 nope", 1);
        let (path, r) = load_bytes("stl", bad.as_bytes());
        let msg = r.unwrap_err().to_string();
        assert!(msg.starts_with(&format!("{}: STL: ", path.display())), "{msg}");
        let (_, r) = load_bytes("stl", b"tiny");
        assert!(r.unwrap_err().to_string().contains("not an STL file"));
    }

    const PLY_HEADER: &str = "ply\nformat ascii 1.0\ncomment a unit square and a triangle\n\
        element vertex 5\nproperty double x\nproperty double y\nproperty double z\nproperty uchar red\n\
        element face 2\nproperty list uchar uint vertex_indices\nend_header\n";

    #[test]
    fn ply_ascii_fans_polygons() {
        let ply = format!("{PLY_HEADER}0 0 0 1\n1 0 0 2\n1 1 0 3\n0 1 0 4\n0 0 1 5\n4 0 1 2 3\n3 0 1 4\n");
        let (_, r) = load_bytes("ply", ply.as_bytes());
        let m = r.unwrap();
        assert_eq!(m.vertices().len(), 5);
        assert_eq!(m.vertices()[4], Vec3::Z);
        assert_eq!(m.triangles(), &[[0, 1, 2], [0, 2, 3], [0, 1, 4]]);
    }

    #[test]
    fn ply_binary_both_byte_orders() {
        for (name, big) in [("binary_little_endian", false), ("binary_big_endian", true)] {
            let mut b = format!(
                "ply\nformat {name} 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
                 property float z\nelement face 1\nproperty list uchar short vertex_indices\nend_header\n"
            )
            .into_bytes();
            for v in [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y] {
                for c in v.to_array() {
                    b.extend(if big { c.to_be_bytes() } else { c.to_le_bytes() });
                }
            }
            b.push(4);
            for i in [0i16, 1, 2, 3] {
                b.extend(if big { i.to_be_bytes() } else { i.to_le_bytes() });
            }
            let (_, r) = load_bytes("ply", &b);
            let m = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.vertices()[2], Vec3::new(1.0, 1.0, 0.0), "{name}");
            assert_eq!(m.triangles(), &[[0, 1, 2], [0, 2, 3]], "{name}");
            // Cut short: an error without a line (binary has none).
            let (_, r) = load_bytes("ply", &b[..b.len() - 20]);
            let e = r.unwrap_err();
            assert_eq!(e.line(), None, "{e}");
            assert!(e.to_string().contains("PLY: Unexpected end of file"), "{e}");
        }
    }

    #[test]
    fn ply_errors_name_file_and_line() {
        let ply = format!("{PLY_HEADER}0 0 0 1\n1 0 0 2\n1 1 zero 3\n0 1 0 4\n0 0 1 5\n4 0 1 2 3\n3 0 1 4\n");
        let (path, r) = load_bytes("ply", ply.as_bytes());
        let e = r.unwrap_err();
        assert_eq!(e.line(), Some(14), "{e}");
        let expect = format!("{}: line 14: PLY: Couldn't read element line: `1 1 zero 3`", path.display());
        assert_eq!(e.to_string(), expect);

        let short = format!("{PLY_HEADER}0 0 0 1\n1 0 0 2\n1 1 0 3\n0 1 0 4\n0 0 1 5\n4 0 1 2 3\n2 0 1\n");
        let (_, r) = load_bytes("ply", short.as_bytes());
        assert!(r.unwrap_err().to_string().contains("face 1 has 2 vertices"));

        let (_, r) =
            load_bytes("ply", b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n0\n");
        assert!(r.unwrap_err().to_string().contains("vertex 0 lacks"));
    }

    #[test]
    fn out_of_range_index_is_refused_with_the_shape_error() {
        let ply = format!("{PLY_HEADER}0 0 0 1\n1 0 0 2\n1 1 0 3\n0 1 0 4\n0 0 1 5\n4 0 1 2 3\n3 0 1 5\n");
        let (path, r) = load_bytes("ply", ply.as_bytes());
        let e = r.unwrap_err();
        assert!(e.to_string().starts_with(&format!("{}: ", path.display())), "{e}");
        // The stub `TriMesh::try_new` accepts anything; the real one refuses
        // index 5 of 5 vertices with a `ShapeError`.
        if let LoadErrorKind::Shape(s) = e.kind() {
            assert!(s.field.starts_with("triangles"), "{s}");
        }
    }

    #[test]
    fn unknown_extension_and_missing_file() {
        let e = load("mesh.fbx").unwrap_err();
        assert!(matches!(e.kind(), LoadErrorKind::UnknownFormat { extension: Some(x) } if x == "fbx"));
        assert_eq!(e.to_string(), "mesh.fbx: unknown mesh format `.fbx` (expected .obj, .stl or .ply)");
        assert!(load("no_extension").unwrap_err().to_string().starts_with("no_extension: no file extension"));
        let missing = std::env::temp_dir().join("raycast-surely-missing-file.obj");
        let e = load(&missing).unwrap_err();
        assert!(matches!(e.kind(), LoadErrorKind::Io(io) if io.kind() == io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with(&format!("{}: ", missing.display())));
        assert!(std::error::Error::source(&e).is_some());
    }

    fn assets(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/meshes").join(name)
    }

    #[test]
    fn bundled_meshes_load() {
        let bunny = load(assets("bunny.obj")).unwrap();
        assert_eq!(bunny.triangles().len(), 69_451);
        // 35,947 in the file, 1,113 of them used by no face (dropped).
        assert_eq!(bunny.vertices().len(), 34_834);
        let spot = load(assets("spot.obj")).unwrap();
        assert_eq!((spot.triangles().len(), spot.vertices().len()), (5_856, 2_930));
        let teapot = load(assets("teapot.obj")).unwrap();
        assert_eq!(teapot.triangles().len(), 6_320);
        let b = crate::RayCast::local_bounds(&bunny);
        assert!(b.min.cmplt(b.max).all());
    }
}
