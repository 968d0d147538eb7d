//! Bodies in contact through detection and the Moreau–Jean contact step,
//! against analytic mechanics: a bouncing ball (rebound heights e²ⁿ H),
//! a ball at rest (height r, impulse m g h per step), a ball sliding into
//! rolling (t = 2v₀/(7μg), speed 5v₀/7), a tilted spinning cube coming to
//! rest on a face.

use std::sync::Arc;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, ContactSettings, RigidBody};
use nonsmooth_collision::{Collider, ContactDetector, Material, RigidWorld, ShapeDesc};

const G: f64 = 9.81;

fn gravity() -> Vector3<f64> {
    Vector3::new(0.0, 0.0, -G)
}

/// The ground (body 0, half-space z ≤ 0) and one body (body 1).
fn world(
    shape: ShapeDesc,
    mass: f64,
    state: BodyState,
    mat: Material,
    margin: f64,
    theta: f64,
) -> RigidWorld {
    let mp = shape.mass_properties(1.0, 1).unwrap().unwrap();
    let inertia = mp.inertia * (mass / mp.mass);
    let bodies: Arc<[RigidBody]> = vec![RigidBody::fixed(), RigidBody::new(mass, inertia)].into();
    let colliders = vec![
        Collider::new(
            0,
            true,
            ShapeDesc::HalfSpace {
                normal: Vector3::z(),
            },
            Isometry3::identity(),
            mat,
        )
        .unwrap(),
        Collider::new(1, false, shape, Isometry3::identity(), mat).unwrap(),
    ];
    let det = ContactDetector::new(colliders, margin).unwrap();
    RigidWorld::new(
        bodies,
        vec![BodyState::default(), state],
        det,
        settings(theta),
        gravity(),
        0.0,
    )
    .unwrap()
}

fn settings(theta: f64) -> ContactSettings {
    let mut s = ContactSettings::default();
    s.scheme.theta = theta;
    s
}

fn ball_at(z: f64) -> BodyState {
    BodyState::at(Vector3::new(0.0, 0.0, z), UnitQuaternion::identity())
}

/// Dropped from H above the ground, a ball with restitution e rises to
/// e² H, then e⁴ H (up to O(h)).
#[test]
fn bouncing_ball_rebound_heights() {
    for theta in [0.5, 1.0] {
        bouncing_ball(theta);
    }
}

fn bouncing_ball(theta: f64) {
    let (r, h0, e) = (0.1, 1.0, 0.8);
    let mat = Material {
        friction: 0.0,
        restitution: e,
    };
    let mut w = world(
        ShapeDesc::Sphere { radius: r },
        1.0,
        ball_at(r + h0),
        mat,
        0.05,
        theta,
    );
    let h = 1e-4;
    let mut apexes = Vec::new();
    let mut prev_vz = 0.0;
    let mut lowest = f64::INFINITY;
    while w.time() < 2.5 {
        w.step(h).unwrap();
        let s = w.states()[1];
        lowest = lowest.min(s.position.z - r);
        if prev_vz > 0.0 && s.velocity.z <= 0.0 {
            apexes.push(s.position.z - r);
        }
        prev_vz = s.velocity.z;
    }
    assert!(apexes.len() >= 2, "{apexes:?}");
    for (n, a) in apexes.iter().take(2).enumerate() {
        let expect = e.powi(2 * (n as i32 + 1)) * h0;
        assert!(
            (a - expect).abs() < 2e-3 * h0,
            "apex {n}: {a}, expected {expect}"
        );
    }
    // Penetration at most one step of the impact speed.
    assert!(
        lowest > -h * (2.0 * G * h0).sqrt() * 1.01,
        "lowest gap {lowest}"
    );
}

/// A ball set on the ground stays at height r; each step's normal impulse
/// is m g h (the weight over the step) and the solver reports solved.
#[test]
fn ball_at_rest_on_the_ground() {
    for theta in [0.5, 1.0] {
        ball_at_rest(theta);
    }
}

fn ball_at_rest(theta: f64) {
    let (r, m, h) = (0.2, 3.0, 1e-3);
    let mat = Material {
        friction: 0.5,
        restitution: 0.5,
    };
    let mut w = world(
        ShapeDesc::Sphere { radius: r },
        m,
        ball_at(r),
        mat,
        0.01,
        theta,
    );
    for _ in 0..1000 {
        let rep = w.step(h).unwrap();
        assert_eq!(rep.active, 1);
        assert!(rep.solve.unwrap().status.is_solved());
        let imp = w.impulses()[0];
        assert!(
            (imp[0] - m * G * h).abs() < 1e-10 * m * G * h,
            "impulse {imp:?}"
        );
        assert!(imp[1].abs() < 1e-14 && imp[2].abs() < 1e-14);
        let s = w.states()[1];
        assert!((s.position.z - r).abs() < 1e-12, "height {}", s.position.z);
        assert!(s.velocity.norm() < 1e-12);
    }
}

/// A solid ball thrown along x without spin on a floor with friction μ
/// slides with v = v₀ − μ g t while r ω = (5/2) μ g t, until it rolls at
/// t* = 2 v₀ / (7 μ g), with speed 5 v₀ / 7; then it rolls on.
#[test]
fn sliding_ball_starts_rolling_at_the_analytic_time() {
    for theta in [0.5, 1.0] {
        sliding_ball(theta);
    }
}

fn sliding_ball(theta: f64) {
    let (r, m, mu, v0, h) = (0.1, 2.0, 0.3, 2.0, 1e-3);
    let mat = Material {
        friction: mu,
        restitution: 0.0,
    };
    let mut s = ball_at(r);
    s.velocity.x = v0;
    let mut w = world(ShapeDesc::Sphere { radius: r }, m, s, mat, 0.01, theta);
    let t_star = 2.0 * v0 / (7.0 * mu * G);
    let mut t_roll = None;
    while w.time() < 1.5 * t_star + 0.2 {
        w.step(h).unwrap();
        let s = w.states()[1];
        let omega = s.omega_world();
        let slip = s.velocity.x - r * omega.y;
        if t_roll.is_none() && slip.abs() < 1e-9 {
            t_roll = Some(w.time());
        }
        if t_roll.is_none() {
            // Sliding: the analytic velocities, to round-off (constant
            // friction impulse μ m g h per step).
            let t = w.time();
            assert!((s.velocity.x - (v0 - mu * G * t)).abs() < 1e-9, "t = {t}");
            assert!((r * omega.y - 2.5 * mu * G * t).abs() < 1e-9, "t = {t}");
        }
        assert!(
            (s.position.z - r).abs() < 1e-12,
            "t = {}: z − r = {:e}",
            w.time(),
            s.position.z - r
        );
    }
    let t_roll = t_roll.expect("the ball rolls");
    assert!(
        (t_roll - t_star).abs() <= h,
        "rolls at {t_roll}, analytic {t_star}"
    );
    let s = w.states()[1];
    assert!(
        (s.velocity.x - 5.0 * v0 / 7.0).abs() < 1e-9,
        "speed {}",
        s.velocity.x
    );
    assert!((s.velocity.x - r * s.omega_world().y).abs() < 1e-9);
}

/// A cube dropped with a tilt and a spin onto a plane with friction comes
/// to rest on a face: one body axis vertical, gap within the margin,
/// velocities below 10⁻⁶; with the default θ = 1 the total energy never
/// increases (ΔE = r·u_{k+1} − ½|Δv|²_M ≤ 0 for e = 0).
#[test]
fn cube_comes_to_rest_on_a_face() {
    let a = 0.5;
    let mat = Material {
        friction: 0.5,
        restitution: 0.0,
    };
    let margin = 0.01;
    let s = BodyState {
        position: Vector3::new(0.0, 0.0, 1.5),
        orientation: UnitQuaternion::from_euler_angles(0.4, 0.3, 0.2),
        velocity: Vector3::new(0.5, 0.0, 0.0),
        omega: Vector3::new(1.0, -2.0, 3.0),
    };
    let mut w = world(
        ShapeDesc::Cuboid {
            half_extents: Vector3::repeat(a),
        },
        1.0,
        s,
        mat,
        margin,
        ContactSettings::default().scheme.theta,
    );
    let h = 1e-3;
    let mut energy = w.kinetic_energy() + w.potential_energy();
    while w.time() < 4.0 {
        let rep = w.step(h).unwrap();
        if let Some(sol) = rep.solve {
            assert!(sol.status.is_solved(), "t = {}: {sol:?}", w.time());
        }
        let e = w.kinetic_energy() + w.potential_energy();
        assert!(
            e <= energy + 1e-9,
            "energy rose at t = {}: {energy} → {e}",
            w.time()
        );
        energy = e;
    }
    let s = w.states()[1];
    assert!(s.velocity.norm() < 1e-6, "v = {:?}", s.velocity);
    assert!(s.omega.norm() < 1e-6, "Ω = {:?}", s.omega);
    let up = (0..3)
        .map(|k| (s.orientation * Vector3::ith(k, 1.0)).z.abs())
        .fold(0.0, f64::max);
    assert!((up - 1.0).abs() < 1e-6, "no axis vertical: {up}");
    assert!(
        (s.position.z - a).abs() <= margin,
        "centre height {}",
        s.position.z
    );
    assert_eq!(w.last_report().unwrap().active, 4);
}
