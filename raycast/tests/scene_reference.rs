//! Scenes against brute force: every object of a random scene is cast on its
//! own and the answers are combined by hand; [`Scene`] must give exactly the
//! same answers, with and without filters, after moves (before and after the
//! refit), inserts, removes and a rebuild, and its batches exactly the
//! single-ray answers, in order.
//!
//! The scene mixes every primitive under random poses (rotation, non-uniform
//! scale 0.4–2.5, translation), planes, one small closed mesh placed five
//! times (one `Arc`, instanced) and a voxel volume placed twice (once as is,
//! once rotated). Ids are unique, so "the same answer" is exact: the closest
//! `t` equal to the brute-force minimum, and the hit equal to what that
//! object answers alone. (An object placed by the identity is cast by its
//! shape directly, in the scene and here alike.) `cast_all` is compared as a
//! multiset, since crossings at equal `t` may come in any order.
//!
//! Seeded xorshift; about 250 rays per check, so the debug build runs in a
//! few seconds.

use raycast::glam::{ivec3, vec3, Affine3A, IVec3, Quat, Vec3};
use raycast::scene::{Filter, ObjectKey, Scene, SceneObject, Verdict};
use raycast::{
    Capsule, Cone, Cuboid, Cylinder, Hit, Interval, Plane, Ray, RayCast, Shape, Sphere, Torus, TriMesh,
    Triangle, VoxelVolume,
};
use std::sync::Arc;

/// xorshift64* (Vigna 2016): tiny and seedable, enough for test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `[lo, hi)`.
    fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn v(&mut self, lo: f32, hi: f32) -> Vec3 {
        vec3(self.f(lo, hi), self.f(lo, hi), self.f(lo, hi))
    }
    fn rotation(&mut self) -> Quat {
        let q = Quat::from_xyzw(self.f(-1.0, 1.0), self.f(-1.0, 1.0), self.f(-1.0, 1.0), self.f(-1.0, 1.0));
        if q.length() < 0.1 {
            Quat::IDENTITY
        } else {
            q.normalize()
        }
    }
    fn pose(&mut self, spread: f32) -> Affine3A {
        let scale = vec3(self.f(0.4, 2.5), self.f(0.4, 2.5), self.f(0.4, 2.5));
        Affine3A::from_scale_rotation_translation(scale, self.rotation(), self.v(-spread, spread))
    }
}

/// A small closed mesh: an octahedron with one vertex pulled out.
fn gem() -> Arc<TriMesh> {
    let v = vec![
        vec3(1.0, 0.0, 0.0),
        vec3(-1.0, 0.0, 0.0),
        vec3(0.0, 1.6, 0.0),
        vec3(0.0, -1.0, 0.0),
        vec3(0.0, 0.0, 1.0),
        vec3(0.0, 0.0, -1.0),
    ];
    let t = vec![[0, 2, 4], [4, 2, 1], [1, 2, 5], [5, 2, 0], [4, 3, 0], [1, 3, 4], [5, 3, 1], [0, 3, 5]];
    Arc::new(TriMesh::new(v, t))
}

fn volume() -> Arc<VoxelVolume> {
    let cells = (0..5).flat_map(|x| (0..3).flat_map(move |y| (0..4).map(move |z| ivec3(x, y, z))));
    let cells: Vec<IVec3> = cells.filter(|c| (c.x + c.y + c.z) % 3 != 0).collect();
    Arc::new(VoxelVolume::from_cells(vec3(0.7, 0.5, 0.9), vec3(-4.0, 2.0, 1.0), cells).unwrap())
}

fn primitive(rng: &mut Rng) -> Shape {
    match rng.below(7) {
        0 => Sphere::new(rng.f(0.3, 2.0)).into(),
        1 => Cuboid::new(rng.v(0.2, 1.5)).into(),
        2 => Cylinder::new(rng.f(0.2, 1.2), rng.f(0.2, 1.5)).into(),
        3 => Cone::new(rng.f(0.2, 1.2), rng.f(0.3, 1.5)).into(),
        4 => Capsule::new(rng.v(-1.0, 1.0), rng.v(-1.0, 1.0), rng.f(0.2, 0.8)).into(),
        5 => Torus::new(rng.f(0.8, 1.5), rng.f(0.1, 0.6)).into(),
        _ => Triangle::new(rng.v(-1.5, 1.5), rng.v(-1.5, 1.5), rng.v(-1.5, 1.5)).into(),
    }
}

/// Unique ids: the multiplication by an odd constant is a bijection of u32.
fn id_of(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761)
}

/// The scene's objects as the test keeps them, next to the scene.
struct World {
    scene: Scene,
    objects: Vec<(ObjectKey, SceneObject)>,
    next: usize,
    /// Where the scene is centred.
    offset: Vec3,
}

impl World {
    fn new(rng: &mut Rng, n: usize) -> Self {
        Self::at(rng, n, Vec3::ZERO)
    }

    /// The scene centred at `offset` (far from the origin: large coordinates).
    fn at(rng: &mut Rng, n: usize, offset: Vec3) -> Self {
        let mesh = gem();
        let vox = volume();
        let mut objects = Vec::new();
        for i in 0..n {
            let shape = match i {
                0..=4 => Shape::Mesh(mesh.clone()),
                5 | 6 => Shape::Voxels(vox.clone()),
                7 | 8 => Plane::new(rng.v(-1.0, 1.0), offset + rng.v(-25.0, 25.0)).into(),
                _ => primitive(rng),
            };
            let pose = match i {
                5 if offset == Vec3::ZERO => Affine3A::IDENTITY,
                7 | 8 => Affine3A::IDENTITY,
                _ => Affine3A::from_translation(offset) * rng.pose(15.0),
            };
            let mask = 1 << rng.below(4);
            objects.push(SceneObject::new(shape, pose, id_of(i)).with_mask(mask));
        }
        assert_eq!(Arc::strong_count(&mesh), 6, "the mesh is shared, not copied");
        let scene = Scene::from_objects(objects.iter().cloned());
        let keys: Vec<ObjectKey> = scene.iter().map(|(k, _)| k).collect();
        World { scene, objects: keys.into_iter().zip(objects).collect(), next: n, offset }
    }

    fn rays(&self, rng: &mut Rng, n: usize) -> Vec<Ray> {
        (0..n)
            .map(|i| {
                let o = self.offset + rng.v(-30.0, 30.0);
                let dir = if i % 3 == 0 {
                    rng.v(-1.0, 1.0) // anywhere
                } else {
                    // Toward an object (most of these hit something).
                    let (_, obj) = &self.objects[rng.below(self.objects.len() as u64) as usize];
                    let b = obj.world_bounds();
                    let c = if b.max.is_finite() { b.center() } else { self.offset + rng.v(-10.0, 10.0) };
                    c + rng.v(-0.5, 0.5) - o
                };
                // Rescale some directions: t is in units of dir.
                Ray::new(o, dir * rng.f(0.25, 3.0))
            })
            .collect()
    }
}

fn alone(o: &SceneObject, ray: &Ray, range: Interval) -> Option<Hit> {
    let h = if *o.placed.world_from_local() == Affine3A::IDENTITY {
        o.placed.shape().cast(ray, range)
    } else {
        o.placed.cast(ray, range)
    };
    h.map(|h| Hit { object: Some(o.id), ..h })
}

fn alone_all(o: &SceneObject, ray: &Ray, range: Interval) -> Vec<Hit> {
    let hs = if *o.placed.world_from_local() == Affine3A::IDENTITY {
        o.placed.shape().cast_all(ray, range)
    } else {
        o.placed.cast_all(ray, range)
    };
    hs.into_iter().map(|h| Hit { object: Some(o.id), ..h }).collect()
}

/// Sorted by every field that orders, for a multiset comparison.
fn canonical(mut hs: Vec<Hit>) -> Vec<Hit> {
    hs.sort_by(|a, b| {
        a.t.total_cmp(&b.t).then(a.object.cmp(&b.object)).then(a.front_face.cmp(&b.front_face))
    });
    hs
}

/// Checks every query on every ray against brute force over `w.objects`;
/// returns how many rays hit something.
fn check(w: &World, rays: &[Ray], range: Interval, filter: &Filter, what: &str) -> usize {
    w.scene.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
    let verdict = |o: &SceneObject| filter.verdict(o.id, o.mask);
    let by_id = |id: u32| &w.objects.iter().find(|(_, o)| o.id == id).expect("hit on a known object").1;
    let stops = w.objects.iter().any(|(_, o)| verdict(o) == Verdict::Stop);
    let mut hits = 0;
    for (k, ray) in rays.iter().enumerate() {
        let ctx = || format!("{what}, ray {k}: {ray:?} {range:?}");
        let accepted = || w.objects.iter().map(|(_, o)| o).filter(|o| verdict(o) != Verdict::Ignore);
        let best = accepted().filter_map(|o| alone(o, ray, range)).min_by(|a, b| a.t.total_cmp(&b.t));

        // cast
        let got = w.scene.cast(ray, range, filter);
        assert_eq!(got.is_some(), best.is_some(), "{}: cast {got:?}, brute force {best:?}", ctx());
        if let (Some(g), Some(b)) = (got, best) {
            hits += 1;
            let own = by_id(g.object.unwrap());
            assert_eq!(Some(g), alone(own, ray, range), "{}: not that object's own hit", ctx());
            if verdict(own) == Verdict::Stop {
                assert!(g.t >= b.t, "{}", ctx()); // an early stop: not closer than the closest
            } else {
                assert_eq!(g.t, b.t, "{}: cast t vs brute force {b:?}", ctx());
            }
        }

        // hits
        assert_eq!(w.scene.hits(ray, range, filter), best.is_some(), "{}: hits", ctx());

        // cast_all: a Stop object blocks the ray at its first crossing.
        let mut all: Vec<Hit> = accepted().flat_map(|o| alone_all(o, ray, range)).collect();
        if stops {
            let block = accepted()
                .filter(|o| verdict(o) == Verdict::Stop)
                .filter_map(|o| alone_all(o, ray, range).first().map(|h| h.t))
                .fold(f32::INFINITY, f32::min);
            all.retain(|h| h.t <= block);
        }
        let got_all = w.scene.cast_all(ray, range, filter);
        assert!(got_all.windows(2).all(|p| p[0].t <= p[1].t), "{}: cast_all not sorted", ctx());
        assert_eq!(canonical(got_all), canonical(all), "{}: cast_all", ctx());
    }
    hits
}

/// `check`, insisting that at least a quarter of the rays hit (else the
/// test would prove little).
fn check_many(w: &World, rays: &[Ray], range: Interval, filter: &Filter, what: &str) {
    let hits = check(w, rays, range, filter, what);
    assert!(hits * 4 >= rays.len(), "{what}: only {hits} of {} rays hit: a weak test", rays.len());
}

#[test]
fn scene_equals_brute_force_with_filters() {
    let mut rng = Rng(0x5_eed5_ce2e);
    let w = World::new(&mut rng, 90);
    let rays = w.rays(&mut rng, 250);
    let ids: Vec<u32> = w.objects.iter().map(|(_, o)| o.id).collect();
    check_many(&w, &rays, Interval::FORWARD, &Filter::default(), "default filter");
    assert!(check(&w, &rays, Interval::new(2.0, 9.0), &Filter::default(), "range [2, 9]") > 20);
    check_many(&w, &rays, Interval::FORWARD, &Filter::default().with_mask(0b0101), "mask 0b0101");
    let exclude = [ids[0], ids[5], ids[7], ids[20], ids[33]];
    check_many(&w, &rays, Interval::FORWARD, &Filter::default().excluding(&exclude), "excluded ids");
    let third = |id: u32| if id.is_multiple_of(3) { Verdict::Ignore } else { Verdict::Accept };
    check_many(&w, &rays, Interval::FORWARD, &Filter::default().with_predicate(&third), "predicate ignore");
    let stopping = |id: u32| match id % 5 {
        0 => Verdict::Stop,
        1 => Verdict::Ignore,
        _ => Verdict::Accept,
    };
    let f = Filter::default().with_mask(0b1110).with_predicate(&stopping);
    check_many(&w, &rays, Interval::FORWARD, &f, "predicate stop + mask");
    assert_eq!(check(&w, &rays, Interval::FORWARD, &Filter::default().with_mask(0), "mask 0"), 0);
}

#[test]
fn scene_equals_brute_force_after_edits() {
    let mut rng = Rng(0xe_d175_ce2e);
    let mut w = World::new(&mut rng, 80);
    let rays = w.rays(&mut rng, 200);
    let f = Filter::default();

    // Move a third of the objects (some far, some slightly), check before and
    // after the refit.
    for k in 0..w.objects.len() {
        if k % 3 == 0 {
            let (key, o) = &mut w.objects[k];
            let m = if k % 2 == 0 {
                rng.pose(15.0)
            } else {
                Affine3A::from_translation(rng.v(-0.3, 0.3)) * *o.placed.world_from_local()
            };
            w.scene.set_transform(*key, m).unwrap();
            o.placed = raycast::Transformed::new(o.placed.shape().clone(), m);
        }
    }
    check_many(&w, &rays, Interval::FORWARD, &f, "moved, before refit");
    w.scene.refit();
    check_many(&w, &rays, Interval::FORWARD, &f, "moved, refit");

    // Insert (pending, then folded into a rebuild) and remove.
    for _ in 0..30 {
        let o =
            SceneObject::new(primitive(&mut rng), rng.pose(15.0), id_of(w.next)).with_mask(1 << rng.below(4));
        w.next += 1;
        let key = w.scene.insert(o.clone());
        w.objects.push((key, o));
    }
    check_many(&w, &rays, Interval::FORWARD, &f, "inserted");
    for _ in 0..25 {
        let (key, o) = w.objects.swap_remove(rng.below(w.objects.len() as u64) as usize);
        assert_eq!(w.scene.remove(key).map(|r| r.id), Some(o.id));
        assert!(w.scene.remove(key).is_none());
    }
    check_many(&w, &rays, Interval::FORWARD, &f, "removed");
    for _ in 0..5 {
        let o = SceneObject::new(primitive(&mut rng), rng.pose(15.0), id_of(w.next));
        w.next += 1;
        let key = w.scene.insert(o.clone()); // reuses freed slots
        w.objects.push((key, o));
    }
    let mask = Filter::default().with_mask(0b0011);
    check_many(&w, &rays, Interval::FORWARD, &mask, "slots reused, mask");
    w.scene.refit();
    check_many(&w, &rays, Interval::FORWARD, &f, "slots reused, refit");
    w.scene.rebuild();
    check_many(&w, &rays, Interval::FORWARD, &mask, "rebuilt");
    assert_eq!(w.scene.len(), w.objects.len());
}

#[test]
fn far_from_the_origin() {
    for offset in [vec3(3e4, -1e4, 2e4), vec3(-1e5, 4e4, 7e4)] {
        let mut rng = Rng(0xfa2 ^ offset.x.to_bits() as u64);
        let w = World::at(&mut rng, 60, offset);
        let rays = w.rays(&mut rng, 150);
        check_many(&w, &rays, Interval::FORWARD, &Filter::default(), &format!("centred at {offset}"));
    }
}

/// Touching counts: rays along box faces and tangent to spheres, capsules
/// and cylinders (exact in f32), and duplicated objects (exact ties), near
/// the origin and far from it, must not be culled by the scene's boxes or
/// spheres: the answers equal brute force.
#[test]
fn touching_rays_and_duplicates() {
    for offset in [Vec3::ZERO, vec3(2.0e4, -3.0e4, 1.0e4)] {
        let mut objects = Vec::new();
        for i in 0..6 {
            let at = offset + vec3(3.0 * i as f32, 0.0, 0.0);
            let shape: Shape = match i % 3 {
                0 => Cuboid::new(Vec3::ONE).into(),
                1 => Sphere::new(1.0).into(),
                _ => Capsule::new(vec3(0.0, -1.0, 0.0), vec3(0.0, 1.0, 0.0), 1.0).into(),
            };
            let m = Affine3A::from_translation(at);
            objects.push(SceneObject::new(shape.clone(), m, 2 * i));
            objects.push(SceneObject::new(shape, m, 2 * i + 1)); // a duplicate: exact ties
        }
        objects.push(SceneObject::new(
            Cylinder::new(1.0, 1.0),
            Affine3A::from_translation(offset + vec3(0.0, 0.0, 9.0)),
            99,
        ));
        let scene = Scene::from_objects(objects.iter().cloned());
        let keys: Vec<ObjectKey> = scene.iter().map(|(k, _)| k).collect();
        let w = World { scene, objects: keys.into_iter().zip(objects).collect(), next: 100, offset };
        let mut rays = Vec::new();
        for i in 0..6 {
            let x = offset.x + 3.0 * i as f32;
            for (dy, dz) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, -1.0)] {
                // Along z at the top/bottom/side (tangent or along a face).
                rays.push(Ray::new(vec3(x, offset.y + dy, offset.z - 10.0), vec3(0.0, 0.0, 1.0)));
                // Along x through every object, touching.
                rays.push(Ray::new(vec3(offset.x - 10.0, offset.y + dy, offset.z + dz), vec3(1.0, 0.0, 0.0)));
                rays.push(Ray::new(vec3(x + 1.0, offset.y + dy + 5.0, offset.z + dz), vec3(0.0, -1.0, 0.0)));
            }
        }
        // Tangent to the cylinder's side and along its caps.
        rays.push(Ray::new(offset + vec3(1.0, -5.0, 9.0), vec3(0.0, 1.0, 0.0)));
        rays.push(Ray::new(offset + vec3(-5.0, 1.0, 9.0), vec3(1.0, 0.0, 0.0)));
        let hits = check(&w, &rays, Interval::FORWARD, &Filter::default(), &format!("touching at {offset}"));
        assert!(hits * 2 >= rays.len(), "{hits} of {}", rays.len());
    }
}

#[test]
fn batches_equal_single_rays_in_order() {
    let mut rng = Rng(0x0ba7_c4e5);
    let w = World::new(&mut rng, 120);
    let rays = w.rays(&mut rng, 1500);
    let odd = |id: u32| if id % 2 == 1 { Verdict::Accept } else { Verdict::Ignore };
    for (range, f) in [
        (Interval::FORWARD, Filter::default()),
        (Interval::new(1.0, 12.0), Filter::default().with_mask(0b1010).with_predicate(&odd)),
    ] {
        let single: Vec<Option<Hit>> = rays.iter().map(|r| w.scene.cast(r, range, &f)).collect();
        let any: Vec<bool> = rays.iter().map(|r| w.scene.hits(r, range, &f)).collect();
        assert_eq!(w.scene.cast_batch(&rays, range, &f), single);
        assert_eq!(w.scene.hits_batch(&rays, range, &f), any);
        #[cfg(feature = "parallel")]
        {
            use raycast::scene::rayon::ThreadPoolBuilder;
            let two = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let one = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            assert_eq!(w.scene.cast_batch_in(&two, &rays, range, &f), single);
            assert_eq!(w.scene.cast_batch_in(&one, &rays, range, &f), single);
            assert_eq!(w.scene.hits_batch_in(&two, &rays, range, &f), any);
        }
        let n_hit = single.iter().filter(|h| h.is_some()).count();
        assert!(n_hit > 50, "{n_hit} of {} hit with {f:?} {range:?}", rays.len());
    }
    assert!(w.scene.cast_batch(&[], Interval::FORWARD, &Filter::default()).is_empty());
}
