//! Frame files for viewers: what is written reads back as the states.

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, RigidBody};
use nonsmooth_collision::{Collider, FrameWriter, Material, ShapeDesc, FRAME_HEADER};

#[test]
fn frames_read_back_as_the_states() {
    let dir = std::env::temp_dir().join(format!("nonsmooth-frames-{}", std::process::id()));
    let bodies = vec![
        RigidBody::fixed(),
        RigidBody::principal(1.0, [1.0, 2.0, 3.0]),
    ];
    let colliders = vec![
        Collider::new(
            0,
            true,
            ShapeDesc::HalfSpace {
                normal: Vector3::z(),
            },
            Isometry3::identity(),
            Material::default(),
        )
        .unwrap(),
        Collider::new(
            1,
            false,
            ShapeDesc::Cuboid {
                half_extents: Vector3::new(0.1, 0.2, 0.3),
            },
            Isometry3::identity(),
            Material::default(),
        )
        .unwrap(),
    ];
    let s = BodyState {
        position: Vector3::new(1.25, -2.5, 1.0 / 3.0),
        orientation: UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3),
        velocity: Vector3::new(0.5, 0.0, -1.0),
        omega: Vector3::new(0.0, 2.0, 0.0),
    };
    let states = vec![BodyState::default(), s];
    let mut w = FrameWriter::new(&dir, "cube", 2, &colliders).unwrap();
    w.write(0.0, &bodies, &states, &colliders).unwrap();
    let path = w.write(0.125, &bodies, &states, &colliders).unwrap();
    assert!(path.ends_with("cube_000001.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(FRAME_HEADER));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(lines.next().is_none(), "fixed bodies are not written");
    let num = |k: usize| row[k].parse::<f64>().unwrap();
    assert_eq!(num(0), 0.125);
    assert_eq!(row[1], "1");
    let q = s.orientation.quaternion();
    let expect = [
        s.position.x,
        s.position.y,
        s.position.z,
        q.w,
        q.i,
        q.j,
        q.k,
        s.velocity.x,
        s.velocity.y,
        s.velocity.z,
        s.omega.x,
        s.omega.y,
        s.omega.z,
    ];
    for (k, e) in expect.iter().enumerate() {
        assert_eq!(num(2 + k), *e, "column {k}");
    }
    assert_eq!(row[15], "box");
    assert_eq!((num(16), num(17), num(18)), (0.1, 0.2, 0.3));
    std::fs::remove_dir_all(&dir).unwrap();
}
