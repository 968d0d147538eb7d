//! The contact step's solver on piles: the islands of the contact graph
//! solved one by one give the impulses of the whole problem, and a
//! settling pile solved by the `default` chain meets the tolerance at
//! every step, checked by the natural map recomputed here from the
//! returned impulses and the velocities after the step (not from the
//! solver's report).

use std::sync::Arc;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, ContactOrder, ContactSettings, RigidBody};
use nonsmooth_collision::{
    spheres_in_box, Collider, ContactDetector, Material, RigidWorld, ShapeDesc, SpheresInBox,
};

fn gravity() -> Vector3<f64> {
    Vector3::new(0.0, 0.0, -9.81)
}

/// ‖r − P_K(r − û)‖² of one contact, û = u + μ‖u_T‖ e_N, P_K the projection
/// on the cone ‖r_T‖ ≤ μ r_N (written here, apart from the numerics).
fn natural_map_sq(r: Vector3<f64>, u: Vector3<f64>, mu: f64) -> f64 {
    let ut = (u.y * u.y + u.z * u.z).sqrt();
    let z = r - Vector3::new(u.x + mu * ut, u.y, u.z);
    let (zn, zt) = (z.x, (z.y * z.y + z.z * z.z).sqrt());
    let p = if zt <= mu * zn {
        z
    } else if mu * zt <= -zn {
        Vector3::zeros()
    } else {
        let pn = (zn + mu * zt) / (1.0 + mu * mu);
        Vector3::new(pn, mu * pn * z.y / zt, mu * pn * z.z / zt)
    };
    (r - p).norm_squared()
}

/// The Siconos-normalised natural map ‖F‖ / max(‖q‖, ‖r‖, ‖u‖) of the last
/// step of `w`, taken from `before` (the states at its start): the active
/// contacts by the activation rule g + γ h u_N ≤ ε (|g| + γ h s), u = J v
/// after the step (restitution 0), q = J v_free.
fn recomputed_error(w: &RigidWorld, before: &[BodyState], t: f64, h: f64) -> f64 {
    let s = w.contact_settings();
    let free: Vec<_> = w
        .bodies()
        .iter()
        .zip(before)
        .enumerate()
        .map(|(b, (body, st))| {
            s.scheme
                .free_velocity(b, body, st, t, h, &gravity())
                .unwrap()
        })
        .collect();
    let (mut f2, mut q2, mut r2, mut u2) = (0.0, 0.0, 0.0, 0.0);
    for (c, r) in w.contacts().iter().zip(w.impulses()) {
        let (s1, s2) = (&before[c.body1], &before[c.body2]);
        let un = c.relative_velocity(s1, s2).x;
        let scale = s1.velocity.norm()
            + s1.omega.norm() * (c.point1 - s1.position).norm()
            + s2.velocity.norm()
            + s2.omega.norm() * (c.point2 - s2.position).norm();
        let gh = s.gamma * h;
        if c.gap + gh * un > 1e-12 * (c.gap.abs() + gh * scale) {
            assert_eq!(*r, [0.0; 3], "an inactive contact carries an impulse");
            continue;
        }
        let (j1, j2) = c.jacobians(s1, s2);
        let six =
            |v: Vector3<f64>, o: Vector3<f64>| nalgebra::Vector6::new(v.x, v.y, v.z, o.x, o.y, o.z);
        let (a1, a2) = (&w.states()[c.body1], &w.states()[c.body2]);
        let u = j1 * six(a1.velocity, a1.omega) + j2 * six(a2.velocity, a2.omega);
        let q = j1 * six(free[c.body1].velocity, free[c.body1].omega)
            + j2 * six(free[c.body2].velocity, free[c.body2].omega);
        let r = Vector3::new(r[0], r[1], r[2]);
        f2 += natural_map_sq(r, u, c.friction);
        q2 += q.norm_squared();
        r2 += r.norm_squared();
        u2 += u.norm_squared();
    }
    f2.sqrt() / q2.max(r2).max(u2).sqrt().max(f64::EPSILON)
}

fn floor() -> Collider {
    Collider::new(
        0,
        true,
        ShapeDesc::HalfSpace {
            normal: Vector3::z(),
        },
        Isometry3::identity(),
        Material {
            friction: 0.4,
            restitution: 0.0,
        },
    )
    .unwrap()
}

/// Four clusters far apart, each three balls in a row on the floor pushed
/// together, the middle one spinning: four islands.
fn clusters(settings: ContactSettings) -> RigidWorld {
    let r = 0.1;
    let mat = Material {
        friction: 0.4,
        restitution: 0.0,
    };
    let ball = ShapeDesc::Sphere { radius: r };
    let mp = ball.mass_properties(1000.0, 1).unwrap().unwrap();
    let mut bodies = vec![RigidBody::fixed()];
    let mut states = vec![BodyState::default()];
    let mut colliders = vec![floor()];
    for k in 0..4 {
        for i in 0..3 {
            let b = bodies.len();
            bodies.push(RigidBody::new(mp.mass, mp.inertia));
            // Slightly overlapping the floor and each other (10⁻⁶ m).
            let x = 3.0 * k as f64 + (2.0 * r - 1e-6) * i as f64;
            let mut s = BodyState::at(
                Vector3::new(x, 0.1 * k as f64, r - 1e-6),
                UnitQuaternion::identity(),
            );
            s.velocity = Vector3::new(0.3 * (1.0 - i as f64), 0.05 * k as f64, -0.2);
            s.omega = Vector3::new(0.0, 2.0 * (i == 1) as u8 as f64, 1.0);
            states.push(s);
            colliders
                .push(Collider::new(b, false, ball.clone(), Isometry3::identity(), mat).unwrap());
        }
    }
    let bodies: Arc<[RigidBody]> = bodies.into();
    let det = ContactDetector::new(colliders, 1e-3).unwrap();
    RigidWorld::new(bodies, states, det, settings, gravity(), 0.0).unwrap()
}

#[test]
fn islands_give_the_impulses_of_the_whole_problem() {
    let mut settings = ContactSettings {
        solver_name: "default",
        islands: true,
        ..ContactSettings::default()
    };
    settings.solver.tolerance = 1e-12;
    let mut whole = settings;
    whole.islands = false;
    let mut a = clusters(settings);
    let mut b = clusters(whole);
    let h = 1e-3;
    let before = a.states().to_vec();
    let ra = a.step(h).unwrap();
    let rb = b.step(h).unwrap();
    assert_eq!(ra.active, 20, "3 floor and 2 ball contacts per cluster");
    assert_eq!((ra.islands, rb.islands), (4, 1));
    assert!(ra.solve.unwrap().status.is_solved() && rb.solve.unwrap().status.is_solved());
    let scale = a
        .impulses()
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    for (x, y) in a.impulses().iter().zip(b.impulses()) {
        for k in 0..3 {
            assert!(
                (x[k] - y[k]).abs() <= 1e-9 * scale,
                "islands {x:?}, whole {y:?}"
            );
        }
    }
    // Each island was solved to tol/√3: the whole meets the tolerance.
    let e = recomputed_error(&a, &before, 0.0, h);
    assert!(e <= 1e-12 + 1e-14, "recomputed error {e:e}");
}

#[test]
fn a_settling_pile_reports_the_error_of_its_impulses() {
    // The pile of spheres_in_box.rs (64 spheres, μ = 0.3), 0.5 s, solved by
    // the `default` chain to 10⁻⁶, islands apart, contacts top-down: every
    // step's reported error is the natural map recomputed here from the
    // returned impulses, and a step reported solved meets the tolerance.
    let p = SpheresInBox {
        spheres: 64,
        radius: 0.05,
        density: 1000.0,
        width: 0.5,
        spacing: 0.01,
        speed: 0.5,
        seed: 7,
        material: Material {
            friction: 0.3,
            restitution: 0.0,
        },
    };
    let scene = spheres_in_box(&p).unwrap();
    let tol = 1e-6;
    let mut settings = ContactSettings {
        solver_name: "default",
        islands: true,
        order: ContactOrder::TopDown,
        ..ContactSettings::default()
    };
    settings.solver.tolerance = tol;
    settings.solver.max_iterations = Some(500);
    let det = ContactDetector::new(scene.colliders, 0.02).unwrap();
    let mut w = RigidWorld::new(scene.bodies, scene.states, det, settings, gravity(), 0.0).unwrap();
    let h = 1e-3;
    let (mut most, mut several, mut short, mut steps) = (0, 0, 0, 0);
    while w.time() < 0.5 - 0.5 * h {
        let (before, t) = (w.states().to_vec(), w.time());
        let rep = w.step(h).unwrap();
        most = most.max(rep.active);
        several += usize::from(rep.islands > 1);
        if let Some(s) = rep.solve {
            steps += 1;
            let e = recomputed_error(&w, &before, t, h);
            // Rounding of u computed two ways: 10⁻⁹ relative, 10⁻¹⁵ absolute.
            assert!(
                (e - s.error).abs() <= 1e-9 * s.error + 1e-15,
                "t = {t}: reported {:e}, recomputed {e:e}",
                s.error
            );
            if s.status.is_solved() {
                assert!(e <= tol + 1e-12, "t = {t}: solved with error {e:e}");
            } else {
                short += 1;
            }
        }
    }
    eprintln!("most active contacts {most}; {short} of {steps} steps short of {tol:e}; {several} steps with several islands");
    assert!(most > 64, "the spheres touch: {most}");
    assert!(several > 0, "the pile forms from separate islands");
}
