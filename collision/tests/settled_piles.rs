//! Piles and stacks at rest under the pile settings
//! (`ContactSettings::pile()`, docs/rigid-bodies.md "Settled piles"):
//!
//! * 100 spheres dropped into a box (the layout of Siconos 4.4's
//!   spheres-in-a-box run), their first 0.5 s: every step solved, and the
//!   energy (kinetic plus gravity) never rises at a step beyond 10⁻¹⁰ of
//!   itself (θ = 1, e = 0: contacts dissipate);
//! * a stack of 10 boxes and a 3-layer pyramid of 14 spheres in a box, put
//!   down in contact and at rest, stay there for 10 s: every step solved,
//!   the energy never above its start by more than 10⁻¹⁰ of itself, and
//!   every centre within 3 g h² per layer of where it started. That bound,
//!   not 10⁻⁶ m: a resting contact whose gap rounds above 0 is inactive by
//!   the γ-rule for one step, and the bodies above it fall for that step,
//!   g h² = 2.5·10⁻⁴ m, whatever the solver's tolerance (the same drift at
//!   10⁻⁸; docs/rigid-bodies.md, "Settled piles").
//!
//! The oracles are physical: the energy balance of a dissipative scheme
//! and the equilibrium of bodies placed at rest.

use std::sync::Arc;

use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, ContactSettings, RigidBody};
use nonsmooth_collision::{
    pile_in_box, Collider, ContactDetector, Material, PileInBox, RigidWorld, ShapeDesc,
};

fn gravity() -> Vector3<f64> {
    Vector3::new(0.0, 0.0, -9.81)
}

/// The settings under test.
fn pile_settings() -> ContactSettings {
    ContactSettings::pile()
}

fn energy(w: &RigidWorld) -> f64 {
    w.kinetic_energy() + w.potential_energy()
}

#[test]
fn the_pour_of_100_spheres_is_solved_at_every_step_without_energy_gain() {
    // The first 0.5 s of the 100-sphere pile (the whole 6 s run, with its
    // kinetic energy after settling, is the `settled_piles` benchmark: it
    // takes minutes with these settings, docs/rigid-bodies.md).
    let p = PileInBox::siconos(100);
    assert_eq!((p.per_row(), p.width()), (5, 5.5));
    let scene = pile_in_box(&p).unwrap();
    let det = ContactDetector::new(scene.colliders, 0.1 * p.radius).unwrap();
    let mut w = RigidWorld::new(
        scene.bodies,
        scene.states,
        det,
        pile_settings(),
        gravity(),
        0.0,
    )
    .unwrap();
    let h = 5e-3;
    let mut e0 = energy(&w);
    let scale = e0.abs();
    let (mut unsolved, mut rises, mut steps, mut most) = (0, Vec::new(), 0, 0);
    while w.time() < 0.5 - 0.5 * h {
        let rep = w.step(h).unwrap();
        let t = w.time();
        most = most.max(rep.active);
        if let Some(s) = rep.solve {
            steps += 1;
            if !s.status.is_solved() {
                unsolved += 1;
                eprintln!("t = {t:.3}: unsolved, error {:e}", s.error);
            }
        }
        let e = energy(&w);
        if e > e0 + 1e-10 * scale {
            rises.push((t, e - e0, rep.solve.map(|s| s.error)));
        }
        e0 = e;
    }
    eprintln!("{steps} steps with contacts, {unsolved} unsolved, most active contacts {most}");
    assert!(most > 100, "the spheres pile up: {most} active contacts");
    assert_eq!(unsolved, 0, "steps left unsolved");
    assert!(rises.is_empty(), "energy rose at (t, ΔE, error): {rises:?}");
}

/// Runs `w` for `seconds` from rest: asserts every step solved; returns
/// the largest displacement of a centre and the largest energy gain over
/// the start (kinetic plus gravity) and the starting energy, and reports the steps whose energy
/// rose with their solver error.
fn stays_at_rest(mut w: RigidWorld, seconds: f64, label: &str) -> (f64, f64, f64) {
    let h = 5e-3;
    let start: Vec<Vector3<f64>> = w.states().iter().map(|s| s.position).collect();
    let e_start = energy(&w);
    let mut e_prev = e_start;
    let (mut drift, mut gain, mut rises, mut steps) = (0.0f64, 0.0f64, 0, 0);
    while w.time() < seconds - 0.5 * h {
        let rep = w.step(h).unwrap();
        let s = rep.solve.expect("the bodies touch");
        assert!(
            s.status.is_solved(),
            "{label}, t = {}: {:?}, error {:e}",
            w.time(),
            s.status,
            s.error
        );
        let e = energy(&w);
        if e > e_prev {
            rises += 1;
            if rises <= 3 {
                eprintln!(
                    "{label}, t = {:.3}: energy rose by {:.2e} J at a step solved to {:.2e}",
                    w.time(),
                    e - e_prev,
                    s.error
                );
            }
        }
        e_prev = e;
        gain = gain.max(e - e_start);
        for (x0, s) in start.iter().zip(w.states()) {
            drift = drift.max((s.position - x0).norm());
        }
        steps += 1;
    }
    eprintln!(
        "{label}: {steps} steps, largest drift {drift:e} m, largest energy gain {gain:e} J, \
         {rises} steps with a rise"
    );
    (drift, gain, e_start)
}

#[test]
fn a_stack_of_ten_boxes_stays_at_rest() {
    let mat = Material {
        friction: 0.5,
        restitution: 0.0,
    };
    let cube = ShapeDesc::Cuboid {
        half_extents: Vector3::repeat(0.5),
    };
    let mp = cube.mass_properties(1.0, 1).unwrap().unwrap();
    let mut bodies = vec![RigidBody::fixed()];
    let mut states = vec![BodyState::default()];
    let mut colliders = vec![Collider::new(
        0,
        true,
        ShapeDesc::HalfSpace {
            normal: Vector3::z(),
        },
        Isometry3::identity(),
        mat,
    )
    .unwrap()];
    for k in 0..10 {
        bodies.push(RigidBody::new(mp.mass, mp.inertia));
        states.push(BodyState::at(
            Vector3::new(0.0, 0.0, 0.5 + k as f64),
            UnitQuaternion::identity(),
        ));
        colliders
            .push(Collider::new(k + 1, false, cube.clone(), Isometry3::identity(), mat).unwrap());
    }
    let bodies: Arc<[RigidBody]> = bodies.into();
    let det = ContactDetector::new(colliders, 0.01).unwrap();
    let w = RigidWorld::new(bodies, states, det, pile_settings(), gravity(), 0.0).unwrap();
    let (drift, gain, e0) = stays_at_rest(w, 10.0, "10 boxes");
    assert!(
        drift <= 3.0 * 9.81 * 25e-6 * 10.0,
        "a box moved {drift:e} m"
    );
    assert!(gain <= 1e-10 * e0.abs(), "energy gain {gain:e} J");
}

#[test]
fn a_pyramid_of_spheres_stays_at_rest() {
    // 3 × 3 spheres on the floor between the walls of a box 3 diameters
    // wide, 2 × 2 in their pockets, one on top: each sphere touches those
    // below it along a 45° line (centres √2 r apart across, √2 r up).
    let r = 0.5;
    let mat = Material {
        friction: 0.3,
        restitution: 0.0,
    };
    let half = 3.0 * r;
    let mut bodies = vec![RigidBody::fixed()];
    let mut states = vec![BodyState::default()];
    let mut colliders = Vec::new();
    for (normal, at) in [
        (Vector3::z(), Vector3::zeros()),
        (-Vector3::x(), Vector3::new(half, 0.0, 0.0)),
        (Vector3::x(), Vector3::new(-half, 0.0, 0.0)),
        (-Vector3::y(), Vector3::new(0.0, half, 0.0)),
        (Vector3::y(), Vector3::new(0.0, -half, 0.0)),
    ] {
        colliders.push(
            Collider::new(
                0,
                true,
                ShapeDesc::HalfSpace { normal },
                Isometry3::translation(at.x, at.y, at.z),
                mat,
            )
            .unwrap(),
        );
    }
    let rise = std::f64::consts::SQRT_2 * r;
    let mut centres = Vec::new();
    for (n, z) in [(3usize, r), (2, r + rise), (1, r + 2.0 * rise)] {
        let first = -(n as f64 - 1.0) * r;
        for i in 0..n {
            for j in 0..n {
                centres.push(Vector3::new(
                    first + 2.0 * r * i as f64,
                    first + 2.0 * r * j as f64,
                    z,
                ));
            }
        }
    }
    assert_eq!(centres.len(), 14);
    let (mass, inertia) = (1.0, Matrix3::from_diagonal_element(0.4 * r * r));
    let ball = ShapeDesc::Sphere { radius: r };
    for c in centres {
        let b = bodies.len();
        bodies.push(RigidBody::new(mass, inertia));
        states.push(BodyState::at(c, UnitQuaternion::identity()));
        colliders.push(Collider::new(b, false, ball.clone(), Isometry3::identity(), mat).unwrap());
    }
    let bodies: Arc<[RigidBody]> = bodies.into();
    let det = ContactDetector::new(colliders, 0.05).unwrap();
    let w = RigidWorld::new(bodies, states, det, pile_settings(), gravity(), 0.0).unwrap();
    let (drift, gain, e0) = stays_at_rest(w, 10.0, "pyramid");
    assert!(
        drift <= 3.0 * 9.81 * 25e-6 * 3.0,
        "a sphere moved {drift:e} m"
    );
    assert!(gain <= 1e-10 * e0.abs(), "energy gain {gain:e} J");
}
