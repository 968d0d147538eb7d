//! Contact detection: gaps, normals and points against analytic geometry,
//! the BVH broad phase against all pairs, persistent ids, the pair pool,
//! mass properties against textbook formulas.

use std::f64::consts::PI;

use nalgebra::{DMatrix, Isometry3, Point3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, Contact};
use nonsmooth_collision::{
    AllPairs, BvhBroadPhase, Collider, ContactDetector, Material, ShapeDesc,
};

fn collider(body: usize, fixed: bool, desc: ShapeDesc) -> Collider {
    Collider::new(
        body,
        fixed,
        desc,
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap()
}

fn ground() -> Collider {
    collider(
        0,
        true,
        ShapeDesc::HalfSpace {
            normal: Vector3::z(),
        },
    )
}

fn at(x: f64, y: f64, z: f64) -> BodyState {
    BodyState::at(Vector3::new(x, y, z), UnitQuaternion::identity())
}

fn detect(colliders: Vec<Collider>, states: &[BodyState], margin: f64) -> Vec<Contact> {
    let mut d = ContactDetector::new(colliders, margin).unwrap();
    let mut out = Vec::new();
    d.detect(states, &mut out).unwrap();
    out
}

#[test]
fn sphere_on_plane_gap_normal_points() {
    let r = 0.3;
    for z in [0.35, 0.3, 0.29, 0.31] {
        let c = detect(
            vec![
                ground(),
                collider(1, false, ShapeDesc::Sphere { radius: r }),
            ],
            &[at(0.0, 0.0, 0.0), at(1.5, -2.0, z)],
            0.1,
        );
        assert_eq!(c.len(), 1, "z = {z}");
        let c = c[0];
        assert_eq!((c.body1, c.body2), (0, 1));
        assert!((c.gap - (z - r)).abs() < 1e-12, "gap {} at z = {z}", c.gap);
        assert!((c.normal - Vector3::z()).norm() < 1e-12);
        assert!((c.point2 - Vector3::new(1.5, -2.0, z - r)).norm() < 1e-12);
        assert!((c.point1.z).abs() < 1e-12);
        assert!(((c.point2 - c.point1).dot(&c.normal) - c.gap).abs() < 1e-12);
    }
    // Beyond the margin: no contact.
    let c = detect(
        vec![
            ground(),
            collider(1, false, ShapeDesc::Sphere { radius: r }),
        ],
        &[at(0.0, 0.0, 0.0), at(0.0, 0.0, r + 0.2)],
        0.1,
    );
    assert!(c.is_empty());
}

#[test]
fn sphere_sphere_gap() {
    let c = detect(
        vec![
            collider(0, false, ShapeDesc::Sphere { radius: 0.5 }),
            collider(1, false, ShapeDesc::Sphere { radius: 0.25 }),
        ],
        &[at(0.0, 0.0, 0.0), at(0.3, 0.4, 0.6)],
        0.2,
    );
    let d = (0.09f64 + 0.16 + 0.36).sqrt();
    assert_eq!(c.len(), 1);
    assert!((c[0].gap - (d - 0.75)).abs() < 1e-12);
    assert!((c[0].normal - Vector3::new(0.3, 0.4, 0.6) / d).norm() < 1e-12);
}

/// A cube of half side a tilted by α about x: its lowest edge is
/// a (cos α + sin α) below the centre; flat, its four corners are a below.
#[test]
fn box_on_plane_gaps() {
    let a = 0.5;
    let cube = || {
        collider(
            1,
            false,
            ShapeDesc::Cuboid {
                half_extents: Vector3::repeat(a),
            },
        )
    };
    let c = detect(
        vec![ground(), cube()],
        &[at(0.0, 0.0, 0.0), at(0.0, 0.0, 0.52)],
        0.05,
    );
    assert_eq!(c.len(), 4);
    for k in &c {
        assert!((k.gap - 0.02).abs() < 1e-12);
        assert!((k.normal - Vector3::z()).norm() < 1e-12);
        assert!((k.point2.x.abs() - a).abs() < 1e-12 && (k.point2.y.abs() - a).abs() < 1e-12);
    }
    let mut ids: Vec<u64> = c.iter().map(|k| k.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "contact ids are distinct");
    for alpha in [0.1, 0.3, PI / 4.0] {
        let z = a * (alpha.cos() + alpha.sin()) + 0.01;
        let s = BodyState::at(
            Vector3::new(0.0, 0.0, z),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), alpha),
        );
        let c = detect(vec![ground(), cube()], &[at(0.0, 0.0, 0.0), s], 0.02);
        assert!(!c.is_empty());
        let lowest = c.iter().map(|k| k.gap).fold(f64::INFINITY, f64::min);
        assert!((lowest - 0.01).abs() < 1e-12, "α = {alpha}: gap {lowest}");
    }
}

/// Ids persist while the contacts persist (a small move), and the pair's
/// record returns to the pool when the bodies separate.
#[test]
fn ids_persist_and_pairs_are_pooled() {
    let cube = collider(
        1,
        false,
        ShapeDesc::Cuboid {
            half_extents: Vector3::repeat(0.5),
        },
    );
    let ball = collider(2, false, ShapeDesc::Sphere { radius: 0.5 });
    let mut d = ContactDetector::new(vec![ground(), cube, ball], 0.05).unwrap();
    let mut out = Vec::new();
    let mut states = vec![at(0.0, 0.0, 0.0), at(0.0, 0.0, 0.51), at(5.0, 0.0, 3.0)];
    d.detect(&states, &mut out).unwrap();
    let mut first: Vec<u64> = out.iter().map(|c| c.id).collect();
    first.sort_unstable();
    states[1].position += Vector3::new(0.01, -0.02, -0.005);
    d.detect(&states, &mut out).unwrap();
    let mut second: Vec<u64> = out.iter().map(|c| c.id).collect();
    second.sort_unstable();
    assert_eq!(first, second);
    // Pairs: ground–cube and ground–ball (the half-space's box is the
    // whole space); the ball is far from the cube.
    assert_eq!(d.stats().pairs, 2);
    let pool = d.stats().pool;
    assert_eq!(pool, 2);
    // The cube leaves, the ball lands: the cube's record is reused.
    states[1].position.z = 3.0;
    states[2].position.z = 0.52;
    d.detect(&states, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].body2, 2);
    assert_eq!(d.stats().pool, pool, "{:?}", d.stats());
}

/// The BVH broad phase proposes exactly the pairs the all-pairs test
/// finds, over moving random spheres (a fixed seed).
#[test]
fn bvh_broad_phase_matches_all_pairs() {
    let mut seed: u64 = 12345;
    let mut rand = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 300;
    let colliders: Vec<Collider> = (0..n)
        .map(|i| {
            collider(
                i,
                false,
                ShapeDesc::Sphere {
                    radius: 0.05 + 0.1 * rand(),
                },
            )
        })
        .collect();
    let mut states: Vec<BodyState> = (0..n)
        .map(|_| at(3.0 * rand(), 3.0 * rand(), 3.0 * rand()))
        .collect();
    let mut bvh =
        ContactDetector::with_broad_phase(colliders.clone(), 0.01, Box::new(BvhBroadPhase::new()))
            .unwrap();
    let mut all = ContactDetector::with_broad_phase(colliders, 0.01, Box::new(AllPairs)).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        bvh.detect(&states, &mut a).unwrap();
        all.detect(&states, &mut b).unwrap();
        assert_eq!(bvh.stats().pairs, all.stats().pairs);
        assert!(bvh.stats().pairs > 50);
        assert_eq!(a, b);
        for s in &mut states {
            s.position += Vector3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 0.2;
        }
    }
}

/// A ball pressed on a flat mesh of many triangles, over an internal edge
/// and over an internal vertex: with the internal-edge fix every normal is
/// the plane's (no catching on edges). The same for a flat height field.
#[test]
fn flat_mesh_and_height_field_have_no_internal_edge_normals() {
    // A 4 × 4 grid of squares in the plane z = 0, two triangles each.
    let mut vertices = Vec::new();
    for j in 0..5 {
        for i in 0..5 {
            vertices.push(Point3::new(i as f64, j as f64, 0.0));
        }
    }
    let mut triangles = Vec::new();
    for j in 0..4u32 {
        for i in 0..4u32 {
            let v = j * 5 + i;
            triangles.push([v, v + 1, v + 6]);
            triangles.push([v, v + 6, v + 5]);
        }
    }
    let mesh = collider(
        0,
        true,
        ShapeDesc::TriMesh {
            vertices,
            triangles,
        },
    );
    // Heights along y for parry's height field: turn it so y → z.
    let turn = Isometry3::rotation(Vector3::x() * (PI / 2.0));
    let field = Collider::new(
        0,
        true,
        ShapeDesc::HeightField {
            heights: DMatrix::zeros(5, 5),
            scale: Vector3::new(4.0, 1.0, 4.0),
        },
        turn,
        Material::default(),
    )
    .unwrap();
    for (ground, up, centre) in [
        (
            mesh,
            Vector3::z(),
            [(1.5, 1.5), (1.0, 1.5), (2.0, 2.0), (1.25, 1.25)],
        ),
        (
            field,
            turn * Vector3::y(),
            [(0.5, -0.5), (0.0, -0.5), (1.0, 1.0), (0.25, 0.25)],
        ),
    ] {
        for (x, y) in centre {
            let ball = collider(1, false, ShapeDesc::Sphere { radius: 0.2 });
            let pos = Vector3::new(x, y, 0.0) + up * 0.19;
            let c = detect(
                vec![ground.clone(), ball],
                &[
                    at(0.0, 0.0, 0.0),
                    BodyState::at(pos, UnitQuaternion::identity()),
                ],
                0.05,
            );
            assert!(
                !c.is_empty(),
                "{}: no contact at ({x}, {y})",
                ground.desc.kind()
            );
            for k in &c {
                assert!(
                    (k.normal - up).norm() < 1e-9,
                    "{} at ({x}, {y}): normal {:?}",
                    ground.desc.kind(),
                    k.normal
                );
                assert!((k.gap + 0.01).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn mass_properties_of_solids() {
    let rho = 2.0;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * b.abs().max(1.0);
    let r = 0.3;
    let s = ShapeDesc::Sphere { radius: r }
        .mass_properties(rho, 0)
        .unwrap()
        .unwrap();
    let m = rho * 4.0 / 3.0 * PI * r.powi(3);
    assert!(close(s.mass, m));
    assert!(close(s.inertia[(0, 0)], 0.4 * m * r * r) && close(s.inertia[(2, 2)], 0.4 * m * r * r));
    let (a, b, c) = (0.5, 1.0, 1.5);
    let bx = ShapeDesc::Cuboid {
        half_extents: Vector3::new(a, b, c),
    }
    .mass_properties(rho, 0)
    .unwrap()
    .unwrap();
    let m = rho * 8.0 * a * b * c;
    assert!(close(bx.mass, m));
    assert!(close(bx.inertia[(0, 0)], m / 3.0 * (b * b + c * c)));
    assert!(close(bx.inertia[(1, 1)], m / 3.0 * (a * a + c * c)));
    assert!(close(bx.inertia[(2, 2)], m / 3.0 * (a * a + b * b)));
    assert!(bx.inertia[(0, 1)].abs() < 1e-12);
    let (hh, r) = (0.4, 0.2);
    let cy = ShapeDesc::Cylinder {
        half_height: hh,
        radius: r,
    }
    .mass_properties(rho, 0)
    .unwrap()
    .unwrap();
    let m = rho * PI * r * r * 2.0 * hh;
    assert!(close(cy.mass, m));
    assert!(close(cy.inertia[(1, 1)], 0.5 * m * r * r));
    assert!(close(
        cy.inertia[(0, 0)],
        m * (3.0 * r * r + 4.0 * hh * hh) / 12.0
    ));
    // A convex hull of the unit cube's corners is the cube.
    let pts: Vec<Point3<f64>> = (0..8)
        .map(|k| Point3::new((k & 1) as f64, ((k >> 1) & 1) as f64, ((k >> 2) & 1) as f64))
        .collect();
    let h = ShapeDesc::ConvexHull { points: pts }
        .mass_properties(1.0, 0)
        .unwrap()
        .unwrap();
    assert!(close(h.mass, 1.0));
    assert!((h.center - Vector3::repeat(0.5)).norm() < 1e-12);
    assert!(close(h.inertia[(0, 0)], 1.0 / 6.0));
    assert!(ShapeDesc::HalfSpace {
        normal: Vector3::z()
    }
    .mass_properties(1.0, 0)
    .unwrap()
    .is_none());
}

#[test]
fn bad_shapes_are_refused_with_their_body() {
    let e = ShapeDesc::Sphere { radius: -1.0 }.build(4).unwrap_err();
    assert!(
        e.to_string().contains("body 4") && e.to_string().contains("radius"),
        "{e}"
    );
    let e = Collider::new(
        2,
        false,
        ShapeDesc::HalfSpace {
            normal: Vector3::z(),
        },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("fixed body"), "{e}");
    assert!(ShapeDesc::ConvexHull {
        points: vec![
            Point3::origin(),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0)
        ]
    }
    .build(0)
    .is_err());
    assert!(ShapeDesc::TriMesh {
        vertices: vec![Point3::origin()],
        triangles: vec![[0, 1, 2]]
    }
    .build(0)
    .is_err());
    assert!(ContactDetector::new(vec![], -1.0).is_err());
}
