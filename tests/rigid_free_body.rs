//! Newton–Euler bodies without contact: the θ-scheme against analytic
//! solutions, conserved quantities and a hand-written RK4 reference of
//! Euler's equations.

use std::sync::Arc;

use nalgebra::{UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, Load, NewtonEulerScheme, RigidBody};

const I: [f64; 3] = [1.0, 2.0, 3.0];

fn top() -> RigidBody {
    RigidBody::principal(1.0, I)
}

fn scheme(theta: f64) -> NewtonEulerScheme {
    NewtonEulerScheme {
        theta,
        ..Default::default()
    }
}

/// Runs a body for `steps` steps of h with no gravity; returns the states.
fn run(body: &RigidBody, s0: BodyState, theta: f64, h: f64, steps: usize) -> Vec<BodyState> {
    let sc = scheme(theta);
    let mut s = s0;
    let mut out = vec![s];
    for k in 0..steps {
        sc.step_free(0, body, &mut s, k as f64 * h, h, &Vector3::zeros())
            .unwrap();
        out.push(s);
    }
    out
}

/// Euler's equations I Ω̇ = −Ω × I Ω, with Q̇ = ½ Q ⊗ (0, Ω), by classical
/// RK4 (written here, independent of the scheme under test).
fn rk4_reference(
    w0: Vector3<f64>,
    t: f64,
    steps: usize,
) -> (Vector3<f64>, nalgebra::Quaternion<f64>) {
    let f = |w: &Vector3<f64>| {
        Vector3::new(
            (I[1] - I[2]) * w.y * w.z / I[0],
            (I[2] - I[0]) * w.z * w.x / I[1],
            (I[0] - I[1]) * w.x * w.y / I[2],
        )
    };
    let qdot = |q: &nalgebra::Quaternion<f64>, w: &Vector3<f64>| {
        q * nalgebra::Quaternion::new(0.0, w.x, w.y, w.z) * 0.5
    };
    let h = t / steps as f64;
    let mut w = w0;
    let mut q = nalgebra::Quaternion::identity();
    for _ in 0..steps {
        let (k1w, k1q) = (f(&w), qdot(&q, &w));
        let w2 = w + 0.5 * h * k1w;
        let q2 = q + k1q * (0.5 * h);
        let (k2w, k2q) = (f(&w2), qdot(&q2, &w2));
        let w3 = w + 0.5 * h * k2w;
        let q3 = q + k2q * (0.5 * h);
        let (k3w, k3q) = (f(&w3), qdot(&q3, &w3));
        let w4 = w + h * k3w;
        let q4 = q + k3q * h;
        let (k4w, k4q) = (f(&w4), qdot(&q4, &w4));
        w += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        q += (k1q + k2q * 2.0 + k3q * 2.0 + k4q) * (h / 6.0);
    }
    (w, q)
}

fn spinning(w: [f64; 3]) -> BodyState {
    BodyState {
        omega: Vector3::from(w),
        ..Default::default()
    }
}

#[test]
fn midpoint_keeps_energy_and_body_momentum_of_the_torque_free_top() {
    let body = top();
    let s0 = spinning([1.0, 0.3, 0.8]);
    let e0 = s0.kinetic_energy(&body);
    let m0 = (body.inertia * s0.omega).norm();
    for s in run(&body, s0, 0.5, 0.01, 5000) {
        assert!((s.kinetic_energy(&body) - e0).abs() <= 1e-12 * e0);
        assert!(((body.inertia * s.omega).norm() - m0).abs() <= 1e-12 * m0);
        assert!((s.orientation.quaternion().norm() - 1.0).abs() <= 1e-15);
    }
}

/// Error at T = 2 of Ω and of the spatial angular momentum R I Ω for
/// h, h/2, h/4: the observed order is the scheme's (2 for θ = ½, 1 for θ = 1).
#[test]
fn torque_free_top_converges_with_the_order_of_the_scheme() {
    let body = top();
    let w0 = Vector3::new(1.0, 0.3, 0.8);
    let t_end = 2.0;
    let (w_ref, _) = rk4_reference(w0, t_end, 200_000);
    let l0 = body.inertia * w0; // spatial momentum at t = 0 (R = identity)
    for (theta, order) in [(0.5, 2.0), (1.0, 1.0), (0.0, 1.0)] {
        let mut ew = Vec::new();
        let mut el = Vec::new();
        for steps in [200usize, 400, 800] {
            let h = t_end / steps as f64;
            let s = *run(&body, spinning(w0.into()), theta, h, steps)
                .last()
                .unwrap();
            ew.push((s.omega - w_ref).norm());
            el.push((s.angular_momentum(&body) - l0).norm());
        }
        for k in 0..2 {
            let pw = (ew[k] / ew[k + 1]).log2();
            assert!(
                (pw - order).abs() < 0.15,
                "θ = {theta}: order of Ω {pw}, expected {order} ({ew:?})"
            );
            let pl = (el[k] / el[k + 1]).log2();
            assert!(
                pl > order - 0.15,
                "θ = {theta}: order of the spatial momentum {pl}, expected ≥ {order} ({el:?})"
            );
        }
        if theta != 0.5 {
            // Order 1: energy drifts, and halves with h.
            let drift = |steps: usize| {
                let h = t_end / steps as f64;
                let s = *run(&body, spinning(w0.into()), theta, h, steps)
                    .last()
                    .unwrap();
                (s.kinetic_energy(&body) - spinning(w0.into()).kinetic_energy(&body)).abs()
            };
            let p = (drift(400) / drift(800)).log2();
            assert!(
                (p - 1.0).abs() < 0.15,
                "θ = {theta}: energy drift order {p}"
            );
        }
    }
}

#[test]
fn orientation_follows_the_reference() {
    let body = top();
    let w0 = Vector3::new(0.2, 1.5, -0.4);
    let t_end = 1.0;
    let (_, q_ref) = rk4_reference(w0, t_end, 100_000);
    let q_ref = UnitQuaternion::from_quaternion(q_ref);
    let mut errs = Vec::new();
    for steps in [250usize, 500, 1000] {
        let s = *run(&body, spinning(w0.into()), 0.5, t_end / steps as f64, steps)
            .last()
            .unwrap();
        errs.push(s.orientation.angle_to(&q_ref));
    }
    let p = (errs[1] / errs[2]).log2();
    assert!((p - 2.0).abs() < 0.15, "orientation order {p} ({errs:?})");
    assert!(errs[2] < 1e-5);
}

/// Spinning about the intermediate axis is unstable: a 10⁻³ perturbation
/// grows until the body flips (Ω₂ changes sign); about the largest and the
/// smallest axes it stays small.
#[test]
fn intermediate_axis_is_unstable() {
    let body = top();
    let eps = 1e-3;
    let states = run(&body, spinning([eps, 1.0, eps]), 0.5, 1e-3, 30_000);
    let min_w2 = states
        .iter()
        .map(|s| s.omega.y)
        .fold(f64::INFINITY, f64::min);
    assert!(
        min_w2 < -0.9,
        "no flip about the intermediate axis: min Ω₂ = {min_w2}"
    );
    for (axis, w) in [(2usize, [eps, eps, 1.0]), (0, [1.0, eps, eps])] {
        let states = run(&body, spinning(w), 0.5, 1e-3, 30_000);
        for s in &states {
            assert!(
                s.omega[axis] > 0.99,
                "spin about axis {axis} left: Ω = {:?}",
                s.omega
            );
            let off: f64 = (0..3)
                .filter(|i| *i != axis)
                .map(|i| s.omega[i].abs())
                .sum();
            assert!(
                off < 10.0 * eps,
                "perturbation grew about axis {axis}: {off}"
            );
        }
    }
}

/// Free fall x(t) = x₀ + v₀ t + g t²/2: exact (to round-off) for θ = ½;
/// for θ = 1 the recursion x_{k+1} = x_k + h v_{k+1} gives exactly
/// x₀ + v₀ t + g t²/2 + g h t/2.
#[test]
fn free_fall_is_analytic() {
    let g = Vector3::new(0.0, 0.0, -9.81);
    let x0 = Vector3::new(1.0, -2.0, 10.0);
    let v0 = Vector3::new(0.5, 0.25, 3.0);
    let body = RigidBody::principal(2.5, [0.1, 0.2, 0.3]);
    for theta in [0.5, 1.0] {
        let sc = scheme(theta);
        let h = 1e-3;
        let mut s = BodyState {
            position: x0,
            velocity: v0,
            omega: Vector3::new(0.0, 0.0, 2.0),
            ..Default::default()
        };
        for k in 0..2000 {
            sc.step_free(0, &body, &mut s, k as f64 * h, h, &g).unwrap();
            let t = (k + 1) as f64 * h;
            let mut x = x0 + v0 * t + 0.5 * g * t * t;
            if theta == 1.0 {
                x += 0.5 * g * h * t;
            }
            assert!((s.position - x).norm() < 1e-11, "θ = {theta}, t = {t}");
            assert!((s.velocity - (v0 + g * t)).norm() < 1e-11);
            // Spin about a principal axis: Ω constant, rotation angle 2t.
            assert!((s.omega - Vector3::new(0.0, 0.0, 2.0)).norm() < 1e-13);
            let angle = s.orientation.angle();
            let expect = (2.0 * t) % (2.0 * std::f64::consts::PI);
            let expect = expect.min(2.0 * std::f64::consts::PI - expect);
            assert!((angle - expect).abs() < 1e-9);
        }
    }
}

/// A time-dependent force F(t) = m (cos t, 0, 0) from a callback:
/// v(t) = sin t, trapezoidal in time for θ = ½ (order 2).
#[test]
fn force_of_time_by_callback() {
    let mut body = RigidBody::principal(2.0, [1.0, 1.0, 1.0]);
    body.force = Load::Function(Arc::new(|t: f64| Vector3::new(2.0 * t.cos(), 0.0, 0.0)));
    let mut errs = Vec::new();
    for steps in [100usize, 200, 400] {
        let h = 1.0 / steps as f64;
        let sc = scheme(0.5);
        let mut s = BodyState::default();
        for k in 0..steps {
            sc.step_free(0, &body, &mut s, k as f64 * h, h, &Vector3::zeros())
                .unwrap();
        }
        errs.push((
            (s.velocity.x - 1f64.sin()).abs(),
            (s.position.x - (1.0 - 1f64.cos())).abs(),
        ));
    }
    for k in 0..2 {
        let pv = (errs[k].0 / errs[k + 1].0).log2();
        let px = (errs[k].1 / errs[k + 1].1).log2();
        assert!((pv - 2.0).abs() < 0.1 && (px - 2.0).abs() < 0.1, "{errs:?}");
    }
}

#[test]
fn fixed_bodies_do_not_move_and_bad_bodies_are_refused() {
    let sc = scheme(0.5);
    let mut s = BodyState::at(Vector3::new(1.0, 2.0, 3.0), UnitQuaternion::identity());
    let before = s;
    sc.step_free(
        0,
        &RigidBody::fixed(),
        &mut s,
        0.0,
        0.1,
        &Vector3::new(0.0, 0.0, -9.81),
    )
    .unwrap();
    assert_eq!(s, before);
    assert!(RigidBody::principal(0.0, [1.0, 1.0, 1.0])
        .validate(3)
        .is_err());
    assert!(RigidBody::principal(1.0, [1.0, -1.0, 1.0])
        .validate(0)
        .is_err());
    let e = RigidBody::principal(f64::NAN, [1.0, 1.0, 1.0])
        .validate(7)
        .unwrap_err();
    assert!(e.to_string().contains("body 7"), "{e}");
    assert!(NewtonEulerScheme {
        theta: 1.5,
        ..Default::default()
    }
    .validate()
    .is_err());
}
