//! Triangle-mesh terrain: meshes read from OBJ and STL files and generated
//! from heights over a grid, the contact frame and Jacobian of a
//! point–triangle contact on a curved grid mesh against finite
//! differences, and a ball sliding with spin across a flat mesh of many
//! triangles, which must move as on a plane (no catching on the edges
//! between triangles, thanks to parry3d's internal-edge fix).

use std::io::Write;
use std::sync::Arc;

use nalgebra::{DMatrix, Isometry3, Point3, UnitQuaternion, Vector3, Vector6};
use nonsmooth::rigid::{BodyState, Contact, ContactSettings, RigidBody};
use nonsmooth_collision::{
    grid_mesh, read_mesh_file, Collider, CollisionError, ContactDetector, Material, RigidWorld,
    ShapeDesc,
};

const G: f64 = 9.81;

fn fixed(desc: ShapeDesc) -> Collider {
    Collider::new(0, true, desc, Isometry3::identity(), Material::default()).unwrap()
}

fn detect(ground: &Collider, shape: ShapeDesc, s: BodyState, margin: f64) -> Vec<Contact> {
    let body = Collider::new(1, false, shape, Isometry3::identity(), Material::default()).unwrap();
    let mut det = ContactDetector::new(vec![ground.clone(), body], margin).unwrap();
    let mut out = Vec::new();
    det.detect(&[BodyState::default(), s], &mut out).unwrap();
    out
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth-mesh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

/// The unit square [0, 1]² at z = 0 as a quad (OBJ, split by the reader)
/// and as two triangles (ASCII and binary STL): the same four vertices and
/// two triangles, and a ball over it sees the gap z − r and the normal +z.
#[test]
fn obj_and_stl_files_give_the_same_mesh() {
    let obj = temp_file(
        "square.obj",
        b"# a unit square\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n",
    );
    let tri = [
        [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]],
        [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
    ];
    let mut ascii = String::from("solid square\n");
    for t in &tri {
        ascii += "facet normal 0 0 1\nouter loop\n";
        for v in t {
            ascii += &format!("vertex {} {} {}\n", v[0], v[1], v[2]);
        }
        ascii += "endloop\nendfacet\n";
    }
    ascii += "endsolid square\n";
    let stl_ascii = temp_file("square_ascii.stl", ascii.as_bytes());
    // Binary STL: 80-byte header, triangle count, then per triangle the
    // normal, three vertices (f32, little endian) and a 2-byte attribute.
    let mut bin = vec![0u8; 80];
    bin.extend_from_slice(&(tri.len() as u32).to_le_bytes());
    for t in &tri {
        for v in std::iter::once(&[0.0f32, 0.0, 1.0]).chain(t.iter()) {
            for c in v {
                bin.extend_from_slice(&c.to_le_bytes());
            }
        }
        bin.extend_from_slice(&[0, 0]);
    }
    let stl_bin = temp_file("square_binary.STL", &bin);
    for path in [obj, stl_ascii, stl_bin] {
        let desc = read_mesh_file(&path).unwrap();
        let ShapeDesc::TriMesh {
            vertices,
            triangles,
        } = &desc
        else {
            panic!("{}: not a mesh", path.display());
        };
        assert_eq!(vertices.len(), 4, "{}", path.display());
        assert_eq!(triangles.len(), 2, "{}", path.display());
        // Both triangles counter-clockwise seen from +z.
        for t in triangles {
            let [a, b, c] = t.map(|i| vertices[i as usize]);
            assert!((b - a).cross(&(c - a)).z > 0.0);
        }
        let ground = fixed(desc);
        for (x, y) in [(0.3, 0.6), (0.5, 0.5), (0.7, 0.2)] {
            let s = BodyState::at(Vector3::new(x, y, 0.13), UnitQuaternion::identity());
            let c = detect(&ground, ShapeDesc::Sphere { radius: 0.1 }, s, 0.05);
            assert!(!c.is_empty(), "{}: no contact", path.display());
            for k in c {
                assert!((k.gap - 0.03).abs() < 1e-12, "gap {}", k.gap);
                assert!((k.normal - Vector3::z()).norm() < 1e-12);
                assert!((k.point1 - Vector3::new(x, y, 0.0)).norm() < 1e-12);
            }
        }
    }
}

fn mesh_error(path: &std::path::Path) -> String {
    match read_mesh_file(path) {
        Err(e @ CollisionError::MeshFile { .. }) => e.to_string(),
        other => panic!(
            "{}: expected a mesh-file error, got {other:?}",
            path.display()
        ),
    }
}

/// Bad files are refused with the file's name and what is wrong.
#[test]
fn bad_mesh_files_are_refused() {
    let missing = std::env::temp_dir().join("nonsmooth-no-such-mesh.obj");
    assert!(mesh_error(&missing).contains("cannot open"));
    let e = mesh_error(&temp_file("terrain.ply", b"ply\n"));
    assert!(
        e.contains("terrain.ply") && e.contains(".obj or .stl"),
        "{e}"
    );
    let e = mesh_error(&temp_file("beyond.obj", b"v 0 0 0\nv 1 0 0\nf 1 2 7\n"));
    assert!(e.contains("beyond.obj"), "{e}");
    let e = mesh_error(&temp_file("empty.obj", b"v 0 0 0\nv 1 0 0\n"));
    assert!(e.contains("no triangle"), "{e}");
    let e = mesh_error(&temp_file("junk.obj", b"v 0 zero 0\nf 1 1 1\n"));
    assert!(e.contains("junk.obj") && e.contains("OBJ"), "{e}");
    let e = mesh_error(&temp_file("junk.stl", b"solid x\nfacet nonsense\n"));
    assert!(e.contains("junk.stl") && e.contains("STL"), "{e}");
}

fn grid(f: impl Fn(f64, f64) -> f64, size: [f64; 2], n: [usize; 2]) -> ShapeDesc {
    let mut heights = DMatrix::zeros(n[1], n[0]);
    for i in 0..n[1] {
        let y = -0.5 * size[1] + size[1] * i as f64 / (n[1] - 1) as f64;
        for j in 0..n[0] {
            let x = -0.5 * size[0] + size[0] * j as f64 / (n[0] - 1) as f64;
            heights[(i, j)] = f(x, y);
        }
    }
    grid_mesh(&heights, size).unwrap()
}

/// A planar height z = a x + b y gridded into many triangles: a ball
/// above any point (interior, edge or vertex of the grid) sees the plane's
/// normal (−a, −b, 1)/√(1 + a² + b²) and the distance to the plane less r.
#[test]
fn grid_mesh_of_a_plane_is_that_plane() {
    let (a, b) = (0.2, -0.1);
    let mesh = fixed(grid(|x, y| a * x + b * y, [4.0, 3.0], [9, 7]));
    let ShapeDesc::TriMesh { vertices, .. } = &mesh.desc else {
        unreachable!()
    };
    assert_eq!(vertices.len(), 63);
    assert!((vertices[62] - Point3::new(2.0, 1.5, 2.0 * a + 1.5 * b)).norm() < 1e-15);
    let n = Vector3::new(-a, -b, 1.0).normalize();
    let r = 0.2;
    // (0.5, 0.5) is a grid vertex, (0.25, 0.5) on an edge, (0.3, 0.1) inside.
    for (x, y) in [(0.3, 0.1), (0.25, 0.5), (0.5, 0.5), (-1.1, 0.7)] {
        let foot = Vector3::new(x, y, a * x + b * y);
        let centre = foot + n * (r + 0.01);
        let c = detect(
            &mesh,
            ShapeDesc::Sphere { radius: r },
            BodyState::at(centre, UnitQuaternion::identity()),
            0.05,
        );
        assert!(!c.is_empty());
        for k in &c {
            assert!((k.normal - n).norm() < 1e-12, "({x}, {y}): {:?}", k.normal);
            assert!((k.gap - 0.01).abs() < 1e-12, "({x}, {y}): gap {}", k.gap);
            assert!((k.point1 - foot).norm() < 1e-12);
        }
    }
}

/// A box corner above the interior of one triangle of a curved grid mesh
/// (z = 0.3 sin x cos y): the frame is orthonormal and right-handed with
/// that triangle's normal; the normal row of J is the derivative of the
/// gap parry3d reports, and the three rows are the velocity of the
/// material contact point in the frame, by central differences (10⁻⁸).
#[test]
fn point_triangle_jacobian_on_a_grid_mesh() {
    let f = |x: f64, y: f64| 0.3 * x.sin() * y.cos();
    let mesh = fixed(grid(f, [4.0, 4.0], [9, 9]));
    // The triangle (a, b, c) of the cell [0, 0.5]²: a = (0, 0), b = (0.5, 0),
    // c = (0.5, 0.5); its point at barycentric (0.5, 0.3, 0.2).
    let p = |x: f64, y: f64| Vector3::new(x, y, f(x, y));
    let (pa, pb, pc) = (p(0.0, 0.0), p(0.5, 0.0), p(0.5, 0.5));
    let n = (pb - pa).cross(&(pc - pa)).normalize();
    let foot = 0.5 * pa + 0.3 * pb + 0.2 * pc;
    let half = Vector3::new(0.1, 0.15, 0.2);
    let q = UnitQuaternion::from_euler_angles(0.7, 0.4, -0.5);
    let lowest = (0..8)
        .map(|k| {
            let c = Vector3::new(
                if k & 1 == 0 { -half.x } else { half.x },
                if k & 2 == 0 { -half.y } else { half.y },
                if k & 4 == 0 { -half.z } else { half.z },
            );
            (q * c, (q * c).dot(&n))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let gap0 = 0.01;
    let s0 = BodyState::at(foot - lowest.0 + n * gap0, q);
    let cube = Collider::new(
        1,
        false,
        ShapeDesc::Cuboid { half_extents: half },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap();
    let ground = BodyState::default();
    let mut det = ContactDetector::new(vec![mesh, cube], 0.02).unwrap();
    let mut out = Vec::new();
    det.detect(&[ground, s0], &mut out).unwrap();
    let c = *out
        .iter()
        .min_by(|a, b| a.gap.total_cmp(&b.gap))
        .expect("a contact");
    assert!((c.gap - gap0).abs() < 1e-12, "gap {}", c.gap);
    assert!((c.normal - n).norm() < 1e-12, "{:?} vs {n:?}", c.normal);
    assert!((c.point1 - foot).norm() < 1e-12);
    let fr = c.frame();
    assert!((fr.transpose() * fr - nalgebra::Matrix3::identity()).norm() < 1e-14);
    assert!((fr.determinant() - 1.0).abs() < 1e-14);
    let (_, j2) = c.jacobians(&ground, &s0);
    let r_body = s0.orientation.inverse() * (c.point2 - s0.position);
    let eps = 1e-6;
    let moved = |v: &Vector3<f64>, w: &Vector3<f64>, e: f64| BodyState {
        position: s0.position + e * v,
        orientation: s0.orientation * UnitQuaternion::from_scaled_axis(e * w),
        ..s0
    };
    for (v, w) in [
        (Vector3::new(0.3, -0.2, 0.5), Vector3::zeros()),
        (Vector3::zeros(), Vector3::new(1.0, 0.5, -0.7)),
        (Vector3::new(-0.4, 0.1, 0.2), Vector3::new(-0.3, 0.8, 0.2)),
    ] {
        let u = j2 * Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z);
        let (sp, sm) = (moved(&v, &w, eps), moved(&v, &w, -eps));
        let mut gap = |s: BodyState| {
            det.detect(&[ground, s], &mut out).unwrap();
            out.iter().find(|k| k.id == c.id).expect("persists").gap
        };
        let dg = (gap(sp) - gap(sm)) / (2.0 * eps);
        assert!((dg - u.x).abs() < 1e-8, "ġ = {dg}, J_N v = {}", u.x);
        let pp = sp.position + sp.orientation * r_body;
        let pm = sm.position + sm.orientation * r_body;
        let local = fr.transpose() * ((pp - pm) / (2.0 * eps));
        assert!((local - u).norm() < 1e-8, "{local:?} vs {u:?}");
    }
}

/// A ball of radius r thrown with v₀ along a diagonal and a side spin on
/// a ground with μ = 0.3, over 0.5 s: on a half-space, and on a flat grid
/// mesh of 2 × 40 × 40 triangles whose edges the ball crosses (15 cells
/// of 0.1 m, besides the diagonals inside them). Every step the
/// two runs agree: position, velocity and spin to 10⁻⁹ (the runs differ
/// only by the contact points the detectors give: on the plane, on a
/// triangle of the mesh).
#[test]
fn ball_slides_and_rolls_on_a_flat_mesh_as_on_a_plane() {
    let (r, m) = (0.1, 2.0);
    let mat = Material {
        friction: 0.3,
        restitution: 0.0,
    };
    let ball = ShapeDesc::Sphere { radius: r };
    let mp = ball.mass_properties(1.0, 1).unwrap().unwrap();
    let bodies: Arc<[RigidBody]> = vec![
        RigidBody::fixed(),
        RigidBody::new(m, mp.inertia * (m / mp.mass)),
    ]
    .into();
    let start = BodyState {
        position: Vector3::new(-1.93, -1.71, r),
        orientation: UnitQuaternion::identity(),
        velocity: Vector3::new(2.0, 1.5, 0.0),
        omega: Vector3::new(5.0, -8.0, 3.0),
    };
    let world = |ground: ShapeDesc| {
        let colliders = vec![
            Collider::new(0, true, ground, Isometry3::identity(), mat).unwrap(),
            Collider::new(1, false, ball.clone(), Isometry3::identity(), mat).unwrap(),
        ];
        RigidWorld::new(
            Arc::clone(&bodies),
            vec![BodyState::default(), start],
            ContactDetector::new(colliders, 0.01).unwrap(),
            ContactSettings::default(),
            Vector3::new(0.0, 0.0, -G),
            0.0,
        )
        .unwrap()
    };
    let mut plane = world(ShapeDesc::HalfSpace {
        normal: Vector3::z(),
    });
    let mut mesh = world(grid(|_, _| 0.0, [4.0, 4.0], [41, 41]));
    let (mut crossings, mut cell) = (0, (0, 0));
    let mut ids = std::collections::BTreeSet::new();
    while plane.time() < 0.5 {
        let rp = plane.step(1e-3).unwrap();
        let rm = mesh.step(1e-3).unwrap();
        for rep in [rp, rm] {
            let sol = rep.solve.expect("the ball touches the ground");
            assert!(sol.status.is_solved(), "{sol:?}");
        }
        ids.extend(mesh.contacts().iter().map(|c| c.id));
        let (a, b) = (plane.states()[1], mesh.states()[1]);
        let t = plane.time();
        assert!((a.position - b.position).norm() < 1e-9, "t = {t}");
        assert!((a.velocity - b.velocity).norm() < 1e-9, "t = {t}");
        assert!((a.omega - b.omega).norm() < 1e-9, "t = {t}");
        assert!(
            (b.position.z - r).abs() < 1e-12,
            "t = {t}: z = {}",
            b.position.z
        );
        let now = (
            (b.position.x / 0.1).floor() as i64,
            (b.position.y / 0.1).floor() as i64,
        );
        if now != cell {
            crossings += 1;
            cell = now;
        }
    }
    // The ball crossed many cells (so many edges and vertices).
    assert!(crossings >= 12, "{crossings} crossings");
    // Each triangle touched gives its own contact id.
    assert!(ids.len() > crossings, "{} triangles touched", ids.len());
    let s = mesh.states()[1];
    assert!(s.velocity.norm() > 0.5);
}
