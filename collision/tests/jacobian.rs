//! The contact frame and the 3 × 6 Jacobian blocks of point–triangle and
//! body–body contacts against finite differences of the geometry
//! (seed 003, §2.2: the gap of a point to a triangle, the local frame, and
//! the Jacobian mapping the body's velocity to the contact's).

use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, Contact};
use nonsmooth_collision::{Collider, ContactDetector, Material, ShapeDesc};

/// The state after moving for ε with velocity (v, Ω): x + ε v, Q ⊗ exp(ε Ω/2).
fn moved(s: &BodyState, v: &Vector3<f64>, w: &Vector3<f64>, eps: f64) -> BodyState {
    BodyState {
        position: s.position + eps * v,
        orientation: s.orientation * UnitQuaternion::from_scaled_axis(eps * w),
        ..*s
    }
}

fn find(contacts: &[Contact], id: u64) -> Contact {
    *contacts
        .iter()
        .find(|c| c.id == id)
        .expect("the contact persists under a small motion")
}

/// A box corner above the interior of a tilted triangle: the normal row of
/// the Jacobian is the derivative of parry3d's gap, and all three rows are
/// the velocity of the material contact point in the frame, by central
/// differences.
#[test]
fn point_triangle_contact_frame_and_jacobian() {
    let tilt = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.1);
    let tri: Vec<Point3<f64>> = [
        Point3::new(-2.0, -2.0, 0.0),
        Point3::new(3.0, -1.0, 0.0),
        Point3::new(0.0, 3.0, 0.0),
    ]
    .iter()
    .map(|p| tilt * p)
    .collect();
    let n_tri = tilt * Vector3::z();
    let mesh = Collider::new(
        0,
        true,
        ShapeDesc::TriMesh {
            vertices: tri,
            triangles: vec![[0, 1, 2]],
        },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap();
    let half = Vector3::new(0.2, 0.3, 0.4);
    let cube = Collider::new(
        1,
        false,
        ShapeDesc::Cuboid { half_extents: half },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap();
    // Orientation chosen so that one corner is clearly lowest along n_tri.
    let q = UnitQuaternion::from_euler_angles(0.7, 0.4, -0.5);
    let corners: Vec<Vector3<f64>> = (0..8)
        .map(|k| {
            Vector3::new(
                if k & 1 == 0 { -half.x } else { half.x },
                if k & 2 == 0 { -half.y } else { half.y },
                if k & 4 == 0 { -half.z } else { half.z },
            )
        })
        .collect();
    let lowest = corners
        .iter()
        .map(|c| (q * c).dot(&n_tri))
        .fold(f64::INFINITY, f64::min);
    let gap0 = 0.01;
    let centre = tilt * Vector3::new(0.2, 0.1, 0.0) + n_tri * (gap0 - lowest);
    let s0 = BodyState::at(centre, q);
    let ground = BodyState::default();
    let mut det = ContactDetector::new(vec![mesh, cube], 0.05).unwrap();
    let mut out = Vec::new();
    det.detect(&[ground, s0], &mut out).unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    let c = out[0];
    assert!((c.gap - gap0).abs() < 1e-12, "gap {}", c.gap);
    assert!((c.normal - n_tri).norm() < 1e-12);
    // The frame: orthonormal, right-handed, normal first.
    let f = c.frame();
    assert!((f.transpose() * f - nalgebra::Matrix3::identity()).norm() < 1e-14);
    assert!((f.determinant() - 1.0).abs() < 1e-14);
    assert!((f.column(0) - n_tri).norm() < 1e-15);
    let (_, j2) = c.jacobians(&ground, &s0);
    let r_body = s0.orientation.inverse() * (c.point2 - s0.position);
    let eps = 1e-6;
    for (v, w) in [
        (Vector3::new(0.3, -0.2, 0.5), Vector3::zeros()),
        (Vector3::zeros(), Vector3::new(1.0, 0.5, -0.7)),
        (Vector3::new(-0.4, 0.1, 0.2), Vector3::new(-0.3, 0.8, 0.2)),
    ] {
        let u = j2 * nalgebra::Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z);
        let sp = moved(&s0, &v, &w, eps);
        let sm = moved(&s0, &v, &w, -eps);
        det.detect(&[ground, sp], &mut out).unwrap();
        let gp = find(&out, c.id).gap;
        det.detect(&[ground, sm], &mut out).unwrap();
        let gm = find(&out, c.id).gap;
        let dg = (gp - gm) / (2.0 * eps);
        assert!((dg - u.x).abs() < 1e-8, "ġ = {dg}, J_N v = {}", u.x);
        // The material point's velocity, in the frame.
        let pp = sp.position + sp.orientation * r_body;
        let pm = sm.position + sm.orientation * r_body;
        let local = f.transpose() * ((pp - pm) / (2.0 * eps));
        assert!((local - u).norm() < 1e-8, "{local:?} vs {u:?}");
        // And the relative velocity of the contact agrees with J v.
        let moving = BodyState {
            velocity: v,
            omega: w,
            ..s0
        };
        assert!((c.relative_velocity(&ground, &moving) - u).norm() < 1e-12);
    }
}

/// Two free bodies: a ball on a box's top face, both moving. The normal
/// rows J₁ v₁ + J₂ v₂ give the derivative of the gap.
#[test]
fn body_body_jacobians_by_finite_differences() {
    let cube = Collider::new(
        0,
        false,
        ShapeDesc::Cuboid {
            half_extents: Vector3::new(1.0, 1.0, 0.5),
        },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap();
    let ball = Collider::new(
        1,
        false,
        ShapeDesc::Sphere { radius: 0.25 },
        Isometry3::identity(),
        Material::default(),
    )
    .unwrap();
    let q1 = UnitQuaternion::from_euler_angles(0.1, -0.15, 0.4);
    let s1 = BodyState::at(Vector3::new(0.1, 0.2, -0.1), q1);
    let s2 = BodyState::at(
        s1.position + q1 * Vector3::new(0.3, -0.2, 0.5 + 0.25 + 0.02),
        UnitQuaternion::from_euler_angles(1.0, 2.0, 0.5),
    );
    let mut det = ContactDetector::new(vec![cube, ball], 0.05).unwrap();
    let mut out = Vec::new();
    det.detect(&[s1, s2], &mut out).unwrap();
    assert_eq!(out.len(), 1);
    let c = out[0];
    assert!((c.gap - 0.02).abs() < 1e-12);
    let (j1, j2) = c.jacobians(&s1, &s2);
    let (v1, w1) = (Vector3::new(0.2, -0.1, 0.3), Vector3::new(0.5, -0.4, 0.9));
    let (v2, w2) = (Vector3::new(-0.3, 0.6, -0.2), Vector3::new(2.0, 0.1, -1.0));
    let u = j1 * nalgebra::Vector6::new(v1.x, v1.y, v1.z, w1.x, w1.y, w1.z)
        + j2 * nalgebra::Vector6::new(v2.x, v2.y, v2.z, w2.x, w2.y, w2.z);
    let eps = 1e-6;
    let gap_at = |e: f64, det: &mut ContactDetector, out: &mut Vec<Contact>| {
        det.detect(&[moved(&s1, &v1, &w1, e), moved(&s2, &v2, &w2, e)], out)
            .unwrap();
        find(out, c.id).gap
    };
    let dg = (gap_at(eps, &mut det, &mut out) - gap_at(-eps, &mut det, &mut out)) / (2.0 * eps);
    assert!((dg - u.x).abs() < 1e-8, "ġ = {dg}, J v = {}", u.x);
}
