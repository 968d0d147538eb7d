//! The PID law in closed loop with the double integrator, against a
//! hand-written recursion of the same discrete PID and of the exact
//! zero-order-hold plant (x_{k+1} = [[1, T], [0, 1]] x_k + (T²/2, T) u_k).

mod common;

use common::*;
use nalgebra::{dmatrix, DMatrix};
use nonsmooth::control::{ControlError, ControlLoopBuilder, Controller, Measurement};
use nonsmooth_controllers::{AntiWindup, Gain, Pid};

#[derive(Clone, Copy)]
struct Setting {
    kp: f64,
    ki: f64,
    kd: f64,
    reference: f64,
    limits: Option<(f64, f64)>,
    /// "none", "conditional" or "back" (back-calculation, k_t = 1/T).
    anti_windup: &'static str,
}

/// The recursion, written from the equations of docs/control.md: returns
/// (x₁, x₂, u) at each instant k = 0..=n.
fn hand_recursion(x0: [f64; 2], s: Setting, t: f64, n: usize) -> Vec<(f64, f64, f64)> {
    let (mut x1, mut x2) = (x0[0], x0[1]);
    let mut integral = 0.0;
    let mut y_prev: Option<f64> = None;
    let mut out = Vec::new();
    for _ in 0..=n {
        let y = x1;
        let e = s.reference - y;
        let d = y_prev.map_or(0.0, |yp| -s.kd * (y - yp) / t);
        let inc = t * s.ki * e;
        let mut v = s.kp * e + integral + inc + d;
        let (lo, hi) = s.limits.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        let mut u = v.max(lo).min(hi);
        match s.anti_windup {
            "none" => integral += inc,
            "conditional" => {
                if (v > hi && inc > 0.0) || (v < lo && inc < 0.0) {
                    v -= inc;
                    u = v.max(lo).min(hi);
                } else {
                    integral += inc;
                }
            }
            "back" => integral += inc + (u - v),
            _ => unreachable!(),
        }
        out.push((x1, x2, u));
        y_prev = Some(y);
        x1 += t * x2 + 0.5 * t * t * u;
        x2 += t * u;
    }
    out
}

fn pid_of(s: Setting) -> Pid {
    let aw = match s.anti_windup {
        "none" => AntiWindup::None,
        "conditional" => AntiWindup::Conditional,
        "back" => AntiWindup::BackCalculation {
            tracking_gain: None,
        },
        _ => unreachable!(),
    };
    Pid::new(Gain::Scalar(s.kp), Gain::Scalar(s.ki), Gain::Scalar(s.kd))
        .with_reference(vec![s.reference])
        .with_output_limits(s.limits.map(|l| vec![l.0]), s.limits.map(|l| vec![l.1]))
        .with_anti_windup(aw)
}

/// The loop: y = x₁ by a sensor at period T, the PID at period T, B = (0, 1)ᵀ,
/// integration step h.
fn run_loop(x0: [f64; 2], law: Pid, period: f64, step: f64, t_end: f64) -> Vec<Sample> {
    let (model, plant) = double_integrator(x0);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, dmatrix![1.0, 0.0], period))
        .unwrap();
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            Box::new(law),
            actuator(plant, dmatrix![0.0; 1.0], period),
        )
        .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(step, t_end)).unwrap();
    run_recording(&mut cl, plant, ctl, &["e"], |_| {})
}

/// Largest difference of (x₁, x₂, u), relative to the largest magnitude.
fn compare(samples: &[Sample], hand: &[(f64, f64, f64)]) -> f64 {
    assert_eq!(samples.len(), hand.len());
    let scale = hand.iter().fold(1.0_f64, |m, h| {
        m.max(h.0.abs()).max(h.1.abs()).max(h.2.abs())
    });
    let mut worst = 0.0_f64;
    for (s, h) in samples.iter().zip(hand) {
        worst = worst
            .max((s.x[0] - h.0).abs())
            .max((s.x[1] - h.1).abs())
            .max((s.u[0] - h.2).abs());
    }
    worst / scale
}

const PAPER: Setting = Setting {
    kp: 0.25,
    ki: 0.125,
    kd: 2.0,
    reference: 0.0,
    limits: None,
    anti_windup: "none",
};

#[test]
fn pid_on_the_double_integrator_matches_the_hand_recursion() {
    let (period, t_end) = (0.05, 100.0);
    // Five integration steps per period: the loop composes five exact
    // zero-order-hold steps where the recursion takes one; the two differ by
    // rounding only, and the closed loop is stable, so rounding does not grow.
    let samples = run_loop([10.0, 0.0], pid_of(PAPER), period, 0.01, t_end);
    let hand = hand_recursion([10.0, 0.0], PAPER, period, 2000);
    let rel = compare(&samples, &hand);
    println!(
        "max relative difference {rel:.2e} over {} instants",
        hand.len()
    );
    assert!(rel < 1e-12, "{rel:e}");
    // No derivative kick at t = 0: u_0 = (K_p + T K_i) e_0, not + K_d e_0 / T.
    let e0 = -10.0;
    assert_eq!(samples[0].t, 0.0);
    assert!((samples[0].u[0] - (PAPER.kp + period * PAPER.ki) * e0).abs() < 1e-15);
    assert!(
        (samples[0].u[0] - (PAPER.kp + PAPER.kd / period + period * PAPER.ki) * e0).abs() > 100.0
    );
    assert_eq!(samples[0].signals[0], vec![e0]);
    // The loop settles: the continuous closed loop s³ + 2s² + s/4 + 1/8 has
    // poles −1.90 and −0.048 ± 0.25i; the slow pair decays as e^{−0.048 t}.
    let last = samples.last().unwrap();
    let envelope = max_abs(samples.iter().map(|s| s.x[0])) * (-0.048f64 * 100.0).exp();
    assert!(
        last.x[0].abs() < 2.0 * envelope,
        "{:?}, envelope {envelope}",
        last.x
    );
}

#[test]
fn the_period_is_the_one_the_loop_schedules() {
    // Same law object, other period: the recursion with T = 0.1 (not 0.05,
    // not the integration step) is reproduced.
    for (period, step) in [(0.1, 0.01), (0.02, 0.01)] {
        let samples = run_loop([10.0, 0.0], pid_of(PAPER), period, step, 20.0);
        let n = (20.0 / period).round() as usize;
        let hand = hand_recursion([10.0, 0.0], PAPER, period, n);
        let rel = compare(&samples, &hand);
        assert!(rel < 1e-12, "T = {period}: {rel:e}");
    }
}

#[test]
fn output_limits_and_anti_windup_match_their_equations() {
    let mut overshoot = Vec::new();
    for aw in ["none", "conditional", "back"] {
        let s = Setting {
            kp: 0.25,
            ki: 0.125,
            kd: 2.0,
            reference: 0.0,
            limits: Some((-0.5, 0.4)),
            anti_windup: aw,
        };
        let samples = run_loop([10.0, 0.0], pid_of(s), 0.05, 0.01, 60.0);
        let hand = hand_recursion([10.0, 0.0], s, 0.05, 1200);
        let rel = compare(&samples, &hand);
        assert!(rel < 1e-12, "{aw}: {rel:e}");
        assert!(samples.iter().all(|s| (-0.5..=0.4).contains(&s.u[0])));
        overshoot.push(max_abs(samples.iter().map(|s| s.x[0].min(0.0))));
    }
    // Winding up makes the response overshoot more (x₁ goes from 10 to 0).
    println!(
        "overshoot below 0: none {}, conditional {}, back-calculation {}",
        overshoot[0], overshoot[1], overshoot[2]
    );
    assert!(overshoot[1] < overshoot[0] && overshoot[2] < overshoot[0]);
}

#[test]
fn mimo_gains_act_per_channel_with_a_reference() {
    // Two double integrators, y = (x₁, x₃); diagonal gains given as vectors.
    let a = dmatrix![
        0.0, 1.0, 0.0, 0.0;
        0.0, 0.0, 0.0, 0.0;
        0.0, 0.0, 0.0, 1.0;
        0.0, 0.0, 0.0, 0.0
    ];
    let (model, plant) = linear_plant(&[10.0, 0.0, 1.0, 0.5], a);
    let period = 0.05;
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor(
            "sensor",
            sensor(
                plant,
                dmatrix![1.0, 0.0, 0.0, 0.0; 0.0, 0.0, 1.0, 0.0],
                period,
            ),
        )
        .unwrap();
    let law = Pid::new(
        Gain::Diagonal(vec![0.25, 0.5]),
        Gain::Diagonal(vec![0.125, 0.1]),
        Gain::Matrix(dmatrix![2.0; 1.5]),
    )
    .with_reference(vec![0.0, -2.0]);
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            Box::new(law),
            actuator(
                plant,
                dmatrix![0.0, 0.0; 1.0, 0.0; 0.0, 0.0; 0.0, 1.0],
                period,
            ),
        )
        .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(0.01, 30.0)).unwrap();
    let samples = run_recording(&mut cl, plant, ctl, &[], |_| {});
    let n = 600;
    let ch = [
        (hand_recursion([10.0, 0.0], PAPER, period, n), 0),
        (
            hand_recursion(
                [1.0, 0.5],
                Setting {
                    kp: 0.5,
                    ki: 0.1,
                    kd: 1.5,
                    reference: -2.0,
                    ..PAPER
                },
                period,
                n,
            ),
            1,
        ),
    ];
    for (hand, i) in ch {
        for (s, h) in samples.iter().zip(&hand) {
            assert!((s.x[2 * i] - h.0).abs() < 1e-11);
            assert!((s.x[2 * i + 1] - h.1).abs() < 1e-11);
            assert!((s.u[i] - h.2).abs() < 1e-11);
        }
    }
}

#[test]
fn bad_pid_parameters_are_typed_errors() {
    let build = |law: Pid| {
        let (model, plant) = double_integrator([1.0, 0.0]);
        let mut lb = ControlLoopBuilder::new(model);
        let s = lb
            .add_sensor("sensor", sensor(plant, dmatrix![1.0, 0.0], 0.05))
            .unwrap();
        lb.add_controller(
            "ctl",
            Measurement::Sensor(s),
            Box::new(law) as Box<dyn Controller>,
            actuator(plant, dmatrix![0.0; 1.0], 0.05),
        )
        .unwrap();
        lb.build_time_stepping(zoh_settings(0.01, 0.1)).err()
    };
    let g = Gain::Scalar;
    let e = build(Pid::new(g(-1.0), g(0.0), g(0.0)));
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "kp"),
        "{e:?}"
    );
    let e = build(Pid::new(g(1.0), Gain::Matrix(DMatrix::zeros(2, 2)), g(0.0)));
    assert!(
        matches!(e, Some(ControlError::Dimension { what: "ki", .. })),
        "{e:?}"
    );
    let e = build(Pid::new(g(1.0), g(0.0), g(0.0)).with_reference(vec![0.0, 1.0]));
    assert!(
        matches!(
            e,
            Some(ControlError::Dimension {
                what: "reference",
                ..
            })
        ),
        "{e:?}"
    );
    let e = build(
        Pid::new(g(1.0), g(0.0), g(0.0)).with_output_limits(Some(vec![1.0]), Some(vec![0.0])),
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "u_min"),
        "{e:?}"
    );
    let e = build(
        Pid::new(g(1.0), g(1.0), g(0.0)).with_anti_windup(AntiWindup::BackCalculation {
            tracking_gain: Some(-2.0),
        }),
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "tracking_gain"),
        "{e:?}"
    );
    // A full matrix gain may be negative (reverse action).
    assert!(build(Pid::new(Gain::Matrix(dmatrix![-1.0]), g(0.0), g(0.0))).is_none());
}
