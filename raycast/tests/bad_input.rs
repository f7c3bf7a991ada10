//! Bad input, for every shape: invalid parameters are refused at construction
//! with an error naming the field and the value given (and `new` panics with
//! that message), and degenerate rays are misses — never a panic, never NaN.

use raycast::{
    affine_from_trs, vec3, Affine3A, Capsule, ChunkedVoxels, Cone, Cuboid, Cylinder, Filter, IVec3, Interval,
    Plane, Quat, Ray, RayCast, Scene, SceneObject, Shape, ShapeError, Sphere, Torus, Transformed, TriMesh,
    Triangle, Vec3, VoxelVolume,
};

/// The error's field and that its message carries the value.
fn refused<T: std::fmt::Debug>(r: Result<T, ShapeError>, field: &str, value: &str) {
    let e = r.expect_err("should be refused");
    assert_eq!(e.field, field, "{e}");
    assert!(e.to_string().contains(value), "`{e}` should contain `{value}`");
}

#[test]
fn invalid_parameters_are_refused_with_field_and_value() {
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let v = format!("{bad}");
        refused(Sphere::try_new(bad), "radius", &v);
        refused(Cylinder::try_new(bad, 1.0), "radius", &v);
        refused(Cylinder::try_new(1.0, bad), "half_height", &v);
        refused(Cone::try_new(bad, 1.0), "radius", &v);
        refused(Cone::try_new(1.0, bad), "half_height", &v);
        refused(Capsule::try_new(Vec3::ZERO, Vec3::Y, bad), "radius", &v);
        refused(Torus::try_new(bad, 0.5), "major_radius", &v);
        refused(Torus::try_new(1.0, bad), "minor_radius", &v);
        refused(Cuboid::try_new(vec3(1.0, bad, 1.0)), "half_extents[1]", &v);
    }
    refused(Torus::try_new(1.0, 2.0), "minor_radius", "2");
    refused(Capsule::try_new(vec3(f32::NAN, 0.0, 0.0), Vec3::Y, 1.0), "a", "NaN");
    refused(Triangle::try_new(Vec3::ZERO, Vec3::X, Vec3::INFINITY), "c", "inf");
    refused(Plane::try_new(Vec3::ZERO, Vec3::ZERO), "normal", "0");
    refused(Plane::try_new(Vec3::Y, vec3(0.0, f32::NAN, 0.0)), "point", "NaN");
    refused(
        TriMesh::try_new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2], [0, 1, 3]]),
        "triangles[1]",
        "3",
    );
    refused(TriMesh::try_new(vec![Vec3::ZERO, Vec3::NAN, Vec3::Y], vec![[0, 1, 2]]), "vertices[1]", "NaN");
    refused(affine_from_trs(Vec3::ZERO, Quat::IDENTITY, vec3(1.0, 0.0, 1.0)), "scale", "0");
    refused(affine_from_trs(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), Vec3::ONE), "rotation", "0");
    refused(affine_from_trs(Vec3::NAN, Quat::IDENTITY, Vec3::ONE), "translation", "NaN");
    refused(
        Transformed::try_new(Sphere::new(1.0), Affine3A::from_scale(vec3(1.0, 0.0, 1.0))),
        "transform",
        "0",
    );
    refused(
        VoxelVolume::try_new(vec3(1.0, -1.0, 1.0), Vec3::ZERO, IVec3::ZERO, glam::UVec3::ONE),
        "cell_size",
        "-1",
    );
    refused(ChunkedVoxels::try_new(Vec3::ONE, Vec3::NAN), "origin", "NaN");
}

#[test]
fn new_panics_with_the_same_message() {
    let err = std::panic::catch_unwind(|| Sphere::new(-2.0)).expect_err("panics");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert_eq!(msg, Sphere::try_new(-2.0).unwrap_err().to_string());
}

/// Every kind of shape, in its own frame and placed by a skewed map.
fn every_shape() -> Vec<Shape> {
    let mesh = TriMesh::try_new(
        vec![vec3(0.0, 1.0, 0.0), vec3(-1.0, 0.0, -1.0), vec3(1.0, 0.0, -1.0), vec3(0.0, 0.0, 1.0)],
        vec![[0, 2, 1], [0, 3, 2], [0, 1, 3], [1, 2, 3]],
    )
    .unwrap();
    vec![
        Sphere::new(1.0).into(),
        Cuboid::new(vec3(1.0, 0.5, 2.0)).into(),
        Cylinder::new(0.5, 1.0).into(),
        Cone::new(0.7, 1.0).into(),
        Capsule::new(Vec3::ZERO, Vec3::Y, 0.5).into(),
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y).into(),
        Plane::new(Vec3::Y, Vec3::ZERO).into(),
        Torus::new(1.0, 0.3).into(),
        mesh.into(),
        VoxelVolume::from_cells(Vec3::ONE, Vec3::ZERO, [IVec3::ZERO, IVec3::ONE]).unwrap().into(),
        ChunkedVoxels::from_cells(Vec3::ONE, Vec3::ZERO, [IVec3::ZERO, IVec3::new(100, 0, 0)])
            .unwrap()
            .into(),
    ]
}

#[test]
fn degenerate_rays_miss_on_every_shape() {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let rays = [
        Ray::new(vec3(0.1, 0.2, -5.0), Vec3::ZERO),
        Ray::new(vec3(0.1, 0.2, -5.0), vec3(nan, 0.0, 1.0)),
        Ray::new(vec3(0.1, 0.2, -5.0), vec3(0.0, inf, 1.0)),
        Ray::new(vec3(nan, 0.2, -5.0), vec3(0.0, 0.0, 1.0)),
        Ray::new(vec3(0.1, -inf, -5.0), vec3(0.0, 0.0, 1.0)),
    ];
    let ranges = [Interval::FORWARD, Interval::ALL, Interval::new(nan, 1.0), Interval::new(3.0, 1.0)];
    let skew =
        affine_from_trs(vec3(0.5, -0.2, 0.1), Quat::from_rotation_y(0.7), vec3(2.0, 0.5, 1.0)).unwrap();
    let mut objects = Vec::new();
    for (i, shape) in every_shape().into_iter().enumerate() {
        let placed = Transformed::new(shape.clone(), skew);
        for ray in &rays {
            for &range in &ranges {
                assert!(shape.cast(ray, range).is_none(), "{shape:?} {ray:?}");
                assert!(!shape.hits(ray, range), "{shape:?} {ray:?}");
                assert!(shape.cast_all(ray, range).is_empty(), "{shape:?} {ray:?}");
                assert!(placed.cast(ray, range).is_none() && !placed.hits(ray, range), "{shape:?} {ray:?}");
            }
            assert!(shape.span(ray).is_none(), "{shape:?} {ray:?}");
        }
        objects.push(SceneObject::new(shape, skew, i as u32));
    }
    let scene = Scene::from_objects(objects);
    for ray in &rays {
        for &range in &ranges {
            assert!(scene.cast(ray, range, &Filter::default()).is_none());
            assert!(!scene.hits(ray, range, &Filter::default()));
            assert!(scene.cast_all(ray, range, &Filter::default()).is_empty());
        }
    }
    // A good ray in an empty interval is a miss too, not an error.
    let good = Ray::new(vec3(0.1, 0.2, -5.0), Vec3::Z);
    assert!(scene.cast(&good, Interval::new(3.0, 1.0), &Filter::default()).is_none());
    assert!(scene.cast(&good, Interval::FORWARD, &Filter::default()).is_some());
}

#[test]
fn hits_never_carry_nan_on_extreme_but_valid_rays() {
    // Huge, tiny and subnormal components: answers may be hits or misses,
    // but every number in a hit is finite.
    let dirs =
        [vec3(1e-30, 1e-38, 1.0), vec3(1e30, -1e30, 1e-30), vec3(1e-45, 0.0, -1.0), vec3(3e38, 0.0, 3e38)];
    let origins = [vec3(0.1, 0.2, -5.0), vec3(1e30, 0.0, 0.0), vec3(-3e38, 3e38, 0.5), Vec3::ZERO];
    for shape in every_shape() {
        for o in origins {
            for d in dirs {
                for h in shape.cast_all(&Ray::new(o, d), Interval::ALL) {
                    assert!(
                        h.t.is_finite() && h.point.is_finite() && h.normal.is_finite(),
                        "{shape:?} {o} {d} {h:?}"
                    );
                }
                if let Some(h) = shape.cast(&Ray::new(o, d), Interval::FORWARD) {
                    assert!(h.t.is_finite() && h.normal.is_finite(), "{shape:?} {o} {d} {h:?}");
                }
            }
        }
    }
}
