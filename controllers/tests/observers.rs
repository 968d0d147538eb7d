//! Observers on the harmonic oscillator ẋ₁ = x₂, ẋ₂ = −x₁ + u with only x₁
//! measured, against the error recursions written with the analytic
//! Φ = [[cos T, sin T], [−sin T, cos T]] (independent of the code under test).

mod common;

use common::*;
use nalgebra::{dmatrix, DMatrix};
use nonsmooth::control::{ControlError, ControlLoopBuilder, Measurement, Timing};
use nonsmooth_controllers::{ImplicitSmc, Luenberger, SlidingObserver};

const PERIOD: f64 = 0.1;

/// Runs the oscillator x0 = (1, 0) with an excitation u = cos 2t (held over
/// each period) and the observer `law` (x̂0 = (0, 0.5)); returns (x, x̂) at
/// the observer's instants.
fn run_oscillator(
    law: Box<dyn nonsmooth::control::Observer>,
    t_end: f64,
) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let (model, plant) = linear_plant(&[1.0, 0.0], dmatrix![0.0, 1.0; -1.0, 0.0]);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, dmatrix![1.0, 0.0], PERIOD))
        .unwrap();
    let o = lb
        .add_observer(
            "obs",
            s,
            law,
            Timing::periodic(PERIOD),
            Some(vec![0.0, 0.5]),
        )
        .unwrap();
    add_open_loop(
        &mut lb,
        "excitation",
        plant,
        dmatrix![0.0; 1.0],
        PERIOD,
        |t| (2.0 * t).cos(),
    );
    let mut cl = lb.build_time_stepping(zoh_settings(0.01, t_end)).unwrap();
    let mut out = Vec::new();
    cl.run(|cl| {
        if fired(cl, "obs") {
            out.push((
                cl.time(),
                cl.plant().q(plant).to_vec(),
                cl.observer_estimate(o).to_vec(),
            ));
        }
    })
    .unwrap();
    out
}

#[test]
fn luenberger_error_follows_the_discrete_error_dynamics_exactly() {
    let (c, s) = (PERIOD.cos(), PERIOD.sin());
    // L placing the eigenvalues of Φ − L C at 0.5 and 0.3.
    let (l1, l2) = {
        let (sum, prod) = (0.8, 0.15);
        let l1 = 2.0 * c - sum;
        (l1, (prod - (c - l1) * c) / s - s)
    };
    let m = dmatrix![c - l1, s; -s - l2, c];
    let run = run_oscillator(Box::new(Luenberger::new(dmatrix![l1; l2])), 4.0);
    assert_eq!(run.len(), 41);
    let e0 = nalgebra::DVector::from_vec(vec![0.0 - 1.0, 0.5 - 0.0]);
    let mut worst = 0.0_f64;
    let mut mk = DMatrix::identity(2, 2);
    for (k, (t, x, xhat)) in run.iter().enumerate() {
        assert!((t - k as f64 * PERIOD).abs() < 1e-12);
        let want = &mk * &e0;
        for i in 0..2 {
            worst = worst.max((xhat[i] - x[i] - want[i]).abs());
        }
        mk = &m * mk;
    }
    println!("max |e_k − (Φ − LC)^k e_0| = {worst:.2e}");
    assert!(worst < 1e-12, "{worst:e}");
    // And the error has decayed: 0.5⁴⁰ ≈ 1e-12 times the transient gain of
    // the non-normal Φ − L C (below 100 here).
    let (_, x, xhat) = run.last().unwrap();
    assert!((xhat[0] - x[0]).abs() < 1e-10 && (xhat[1] - x[1]).abs() < 1e-10);
}

#[test]
fn sliding_observer_with_a_large_gain_is_in_its_sliding_phase_from_the_start() {
    let (c, s) = (PERIOD.cos(), PERIOD.sin());
    // P L = (0, ℓ): the unmeasured error is multiplied by c − ℓ s = 0.5.
    let ell = (c - 0.5) / s;
    let run = run_oscillator(
        Box::new(SlidingObserver::new(dmatrix![0.0; ell], vec![100.0])),
        4.0,
    );
    let mut worst = 0.0_f64;
    for (k, (_, x, xhat)) in run.iter().enumerate() {
        // The measured component is the measurement.
        assert_eq!(xhat[0], x[0]);
        worst = worst.max((xhat[1] - x[1] - 0.5 * 0.5f64.powi(k as i32)).abs());
    }
    assert!(worst < 1e-12, "{worst:e}");
}

#[test]
fn sliding_observer_reaches_its_sliding_phase_with_a_bounded_injection() {
    let (c, s) = (PERIOD.cos(), PERIOD.sin());
    let ell = (c - 0.5) / s;
    let m = 0.05;
    let run = run_oscillator(
        Box::new(SlidingObserver::new(dmatrix![0.0; ell], vec![m])),
        6.0,
    );
    // e₂,k = c e₂,k−1 − ℓ v_k, v_k = clamp(s e₂,k−1, ±T M): the injection is
    // saturated while |s e₂| > T M, then equals s e₂ (factor 0.5 per period).
    let tm = PERIOD * m;
    let mut e2 = 0.5;
    let (mut saturated, mut sliding) = (0, 0);
    let mut worst = 0.0_f64;
    for (_, x, xhat) in run.iter().skip(1) {
        let v = (s * e2).clamp(-tm, tm);
        if (s * e2).abs() > tm {
            saturated += 1;
        } else {
            sliding += 1;
        }
        e2 = c * e2 - ell * v;
        assert_eq!(xhat[0], x[0]);
        worst = worst.max((xhat[1] - x[1] - e2).abs());
    }
    println!(
        "{saturated} saturated instants, then {sliding} in the sliding phase; worst {worst:.1e}"
    );
    assert!(worst < 1e-12, "{worst:e}");
    assert!(saturated >= 5 && sliding >= 10);
    assert!(e2.abs() < 1e-6);
}

#[test]
fn an_observer_feeds_an_implicit_sliding_mode_controller() {
    // Double integrator, only x₁ measured; a dead-beat Luenberger observer
    // (Φ − L C nilpotent: L = (2, 1/T)) gives the state to the implicit SMC.
    let period = 0.01;
    let (model, plant) = double_integrator([1.0, 0.0]);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, dmatrix![1.0, 0.0], period))
        .unwrap();
    let o = lb
        .add_observer(
            "obs",
            s,
            Box::new(Luenberger::new(dmatrix![2.0; 1.0 / period])),
            Timing::periodic(period),
            Some(vec![0.8, 0.3]),
        )
        .unwrap();
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Observer(o),
            Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])),
            actuator(plant, dmatrix![0.0; 1.0], period),
        )
        .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(1e-3, 3.0)).unwrap();
    let samples = run_recording(&mut cl, plant, ctl, &["sigma"], |_| {});
    // Two periods after the start the estimate is exact, and the true σ
    // reaches 0 and stays there.
    let tail: Vec<&Sample> = samples.iter().filter(|s| s.t >= 1.5).collect();
    for s in tail {
        assert!((s.x[0] + s.x[1]).abs() <= 1e-9, "t = {}", s.t);
        assert!((s.signals[0][0] - (s.x[0] + s.x[1])).abs() <= 1e-9);
    }
}

#[test]
fn observer_errors_are_typed() {
    let build = |law: Box<dyn nonsmooth::control::Observer>, c: DMatrix<f64>| {
        let (model, plant) = linear_plant(&[1.0, 0.0], dmatrix![0.0, 1.0; -1.0, 0.0]);
        let mut lb = ControlLoopBuilder::new(model);
        let s = lb.add_sensor("sensor", sensor(plant, c, PERIOD)).unwrap();
        lb.add_observer("obs", s, law, Timing::periodic(PERIOD), None)
            .unwrap();
        lb.build_time_stepping(zoh_settings(0.01, 0.1)).err()
    };
    // Φ − L C unstable (L = 0 on an undamped oscillator: radius 1).
    let e = build(
        Box::new(Luenberger::new(dmatrix![0.0; 0.0])),
        dmatrix![1.0, 0.0],
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "L"),
        "{e:?}"
    );
    // L of the wrong size.
    let e = build(
        Box::new(Luenberger::new(dmatrix![1.0, 0.0])),
        dmatrix![1.0, 0.0],
    );
    assert!(
        matches!(e, Some(ControlError::Dimension { what: "L", .. })),
        "{e:?}"
    );
    // Everything measured: nothing for a reduced-order observer.
    let e = build(
        Box::new(SlidingObserver::new(DMatrix::zeros(2, 2), vec![1.0])),
        DMatrix::identity(2, 2),
    );
    assert!(matches!(e, Some(ControlError::Unsupported { .. })), "{e:?}");
    // A non-positive injection bound.
    let e = build(
        Box::new(SlidingObserver::new(dmatrix![0.0; 1.0], vec![0.0])),
        dmatrix![1.0, 0.0],
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "M"),
        "{e:?}"
    );
}
