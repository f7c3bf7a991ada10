//! From the wire format to library values, validating as we go. Every error
//! names the field it is about (`shape.radius`, `objects[3].transform.scale`).

use super::wire::{CellSize, Scale, WireObject, WireRay, WireShape, WireTransform};
use raycast::{
    affine_from_trs, Affine3A, Capsule, ChunkedVoxels, Cone, Cuboid, Cylinder, IVec3, Plane, Quat, Ray,
    Scene, SceneObject, Shape, ShapeError, Sphere, Torus, Transformed, TriMesh, Triangle, Vec3, VoxelVolume,
};
use std::sync::Arc;

/// A shape with its placement, ready to query.
// One value per query line, built and dropped there: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Placed {
    /// No transform given: the shape's frame is the world.
    Local(Shape),
    /// Placed by an affine map.
    World(Transformed<Shape>),
}

pub fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::from_array(a)
}

/// `n` numbers from `v`, or an error naming `field`.
pub fn exactly(v: &[f32], n: usize, field: &str) -> Result<Vec<f32>, String> {
    if v.len() == n {
        Ok(v.to_vec())
    } else {
        Err(format!("{field} must have {n} numbers, got {}", v.len()))
    }
}

pub fn ray(r: &WireRay) -> Result<Ray, String> {
    let o = exactly(&r.origin, 3, "ray.origin")?;
    let d = exactly(&r.dir, 3, "ray.dir")?;
    Ok(Ray::new(Vec3::new(o[0], o[1], o[2]), Vec3::new(d[0], d[1], d[2])))
}

/// Builds a library shape; errors are prefixed with `prefix` (e.g. `shape`).
pub fn shape(s: WireShape, prefix: &str) -> Result<Shape, String> {
    let err = |e: ShapeError| e.within(prefix).to_string();
    Ok(match s {
        WireShape::Sphere { radius } => Sphere::try_new(radius).map_err(err)?.into(),
        WireShape::Cuboid { half_extents } => Cuboid::try_new(v3(half_extents)).map_err(err)?.into(),
        WireShape::Cylinder { radius, half_height } => {
            Cylinder::try_new(radius, half_height).map_err(err)?.into()
        }
        WireShape::Cone { radius, half_height } => Cone::try_new(radius, half_height).map_err(err)?.into(),
        WireShape::Capsule { a, b, radius } => Capsule::try_new(v3(a), v3(b), radius).map_err(err)?.into(),
        WireShape::Triangle { a, b, c } => Triangle::try_new(v3(a), v3(b), v3(c)).map_err(err)?.into(),
        WireShape::Plane { normal, point } => {
            Plane::try_new(v3(normal), point.map_or(Vec3::ZERO, v3)).map_err(err)?.into()
        }
        WireShape::Torus { major_radius, minor_radius } => {
            Torus::try_new(major_radius, minor_radius).map_err(err)?.into()
        }
        WireShape::Mesh { vertices, triangles, path } => {
            Shape::Mesh(Arc::new(mesh(vertices, triangles, path, prefix)?))
        }
        WireShape::Voxels { cell_size, origin, cells } => voxels(cell_size, origin, cells, prefix)?,
        WireShape::Vox { path, cell_size, origin, model } => vox(&path, cell_size, origin, model, prefix)?,
    })
}

/// One model of a MagicaVoxel file.
fn vox(
    path: &str,
    cell_size: Option<CellSize>,
    origin: Option<[f32; 3]>,
    model: Option<usize>,
    prefix: &str,
) -> Result<Shape, String> {
    let size =
        cell_size_vec(&cell_size.unwrap_or(CellSize::Uniform(1.0)), 3, &format!("{prefix}.cell_size"))?;
    let mut models =
        VoxelVolume::load_vox(path, Vec3::new(size[0], size[1], size[2]), origin.map_or(Vec3::ZERO, v3))
            .map_err(|e| e.within(prefix).to_string())?;
    let k = model.unwrap_or(0);
    if k >= models.len() {
        return Err(format!("{prefix}.model: {path} has {} models, asked for model {k}", models.len()));
    }
    Ok(models.swap_remove(k).into())
}

/// A volume from a cell list: dense over the cells' bounding box when that is
/// small (fast, no hashing), a chunked world when the cells are far apart.
fn voxels(
    cell_size: CellSize,
    origin: Option<[f32; 3]>,
    cells: Vec<[i32; 3]>,
    prefix: &str,
) -> Result<Shape, String> {
    const DENSE_LIMIT: i64 = 1 << 24;
    let size = cell_size_vec(&cell_size, 3, &format!("{prefix}.cell_size"))?;
    let size = Vec3::new(size[0], size[1], size[2]);
    let origin = origin.map_or(Vec3::ZERO, v3);
    let cells: Vec<IVec3> = cells.into_iter().map(IVec3::from_array).collect();
    let (lo, hi) = cells.iter().fold((IVec3::MAX, IVec3::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    let extent = (hi.as_i64vec3() - lo.as_i64vec3() + 1).max(glam::I64Vec3::ZERO);
    let err = |e: ShapeError| e.within(prefix).to_string();
    Ok(if extent.element_product() <= DENSE_LIMIT {
        VoxelVolume::from_cells(size, origin, cells).map_err(err)?.into()
    } else {
        ChunkedVoxels::from_cells(size, origin, cells).map_err(err)?.into()
    })
}

/// `cell_size` as `dims` numbers: one number for every axis, or one per axis.
pub fn cell_size_vec(c: &CellSize, dims: usize, field: &str) -> Result<Vec<f32>, String> {
    match c {
        CellSize::Uniform(s) => Ok(vec![*s; dims]),
        CellSize::PerAxis(v) if v.len() == dims => Ok(v.clone()),
        CellSize::PerAxis(v) => Err(format!("{field} must have {dims} numbers, got {}", v.len())),
    }
}

fn mesh(
    vertices: Option<Vec<[f32; 3]>>,
    triangles: Option<Vec<[u32; 3]>>,
    path: Option<String>,
    prefix: &str,
) -> Result<TriMesh, String> {
    match (vertices, triangles, path) {
        (Some(v), Some(t), None) => {
            TriMesh::try_new(v.into_iter().map(v3).collect(), t).map_err(|e| e.within(prefix).to_string())
        }
        // Relative to the working directory. The error names the field, then
        // the loader's `FILE: line N: problem`.
        (None, None, Some(p)) => raycast::mesh::load(&p).map_err(|e| format!("{prefix}.path: {e}")),
        _ => Err(format!("{prefix}: a mesh needs either `vertices` and `triangles`, or `path`")),
    }
}

/// `translation · rotation · scale`, every part optional.
pub fn transform(t: &WireTransform, prefix: &str) -> Result<Affine3A, String> {
    let translation = t.translation.map_or(Vec3::ZERO, v3);
    let rotation = t.rotation.map_or(Quat::IDENTITY, Quat::from_array);
    let scale = match t.scale {
        None => Vec3::ONE,
        Some(Scale::Uniform(s)) => Vec3::splat(s),
        Some(Scale::PerAxis(s)) => v3(s),
    };
    affine_from_trs(translation, rotation, scale).map_err(|e| e.within(prefix).to_string())
}

pub fn placed(
    shape_w: WireShape,
    transform_w: Option<&WireTransform>,
    prefix: &str,
) -> Result<Placed, String> {
    let shape = shape(shape_w, &format!("{prefix}shape"))?;
    Ok(match transform_w {
        None => Placed::Local(shape),
        Some(t) => {
            let m = transform(t, &format!("{prefix}transform"))?;
            let prefix = format!("{prefix}transform");
            Placed::World(Transformed::try_new(shape, m).map_err(|e| e.within(&prefix).to_string())?)
        }
    })
}

/// The scene of a query's `objects`, its tree built once. Errors name the
/// object (`objects[3].shape.radius`); an object without `id` gets its index.
pub fn objects(list: Vec<WireObject>) -> Result<Scene, String> {
    let objects = list
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            let placed = match placed(o.shape, o.transform.as_ref(), &format!("objects[{i}]."))? {
                // The identity placement: the scene casts such an object's shape directly.
                Placed::Local(s) => Transformed::new(s, Affine3A::IDENTITY),
                Placed::World(t) => t,
            };
            Ok(SceneObject { placed, id: o.id.unwrap_or(i as u32), mask: o.mask.unwrap_or(u32::MAX) })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Scene::from_objects(objects))
}
