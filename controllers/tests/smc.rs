//! Sliding-mode laws on σ = C_s x in closed loop with exactly integrated
//! (zero-order hold) linear plants. The oracles are analytic: the reaching
//! law σ_{k+1} = σ_k − α C_sΓ sign(σ_k) with C_sΓ = T + T²/2 computed by hand
//! for the double integrator, and the orders in T of the sliding bands.

mod common;

use common::*;
use nalgebra::{dmatrix, DMatrix};
use nonsmooth::control::{ControlError, ControlLoopBuilder, Controller, InputMap, Measurement};
use nonsmooth_controllers::{ExplicitSmc, ImplicitSmc, ImprovedSmc, Ot2Smc};

/// The double integrator x0 = (1, 0), C = I sensor and law at period T, B =
/// (0, 1)ᵀ, integration step h, an optional matched perturbation p(t)
/// (held over each integration step); the samples of the law's instants and
/// the largest |σ(t)| between instants after `after` (with σ = x₁ + x₂).
fn run_double_integrator(
    law: Box<dyn Controller>,
    period: f64,
    step: f64,
    t_end: f64,
    perturbation: Option<fn(f64) -> f64>,
) -> Vec<Sample> {
    let (model, plant) = double_integrator([1.0, 0.0]);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, DMatrix::identity(2, 2), period))
        .unwrap();
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            law,
            actuator(plant, dmatrix![0.0; 1.0], period),
        )
        .unwrap();
    if let Some(p) = perturbation {
        add_open_loop(&mut lb, "perturbation", plant, dmatrix![0.0; 1.0], step, p);
    }
    let mut cl = lb.build_time_stepping(zoh_settings(step, t_end)).unwrap();
    run_recording(&mut cl, plant, ctl, &["sigma", "u_s", "u_eq"], |_| {})
}

#[test]
fn implicit_smc_reaches_the_surface_at_the_analytic_time_and_stays_on_it() {
    let (period, step, alpha) = (1e-2, 1e-3, 1.0);
    let (model, plant) = double_integrator([1.0, 0.0]);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, DMatrix::identity(2, 2), period))
        .unwrap();
    let law = ImplicitSmc::new(dmatrix![1.0, 1.0], vec![alpha]);
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            Box::new(law),
            actuator(plant, dmatrix![0.0; 1.0], period),
        )
        .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(step, 3.0)).unwrap();
    // σ(t) at every integration step after reaching, against the bound of
    // the inter-sample ripple: with σ_k = 0 and u = −x₂/(1 + T/2),
    // σ(t_k + s) = x₂ s (T − s) / (2 (1 + T/2)), at most |x₂| T²/8.
    let mut reached = false;
    let mut x2_at_instant = 0.0_f64;
    let mut worst_ripple = 0.0_f64;
    let samples = run_recording(&mut cl, plant, ctl, &["sigma", "u_s"], |cl| {
        let x = cl.plant().q(plant);
        if fired(cl, "ctl") {
            reached = reached || cl.controller_signal(ctl, "sigma").unwrap()[0].abs() <= 1e-9;
            x2_at_instant = x[1];
        } else if reached {
            let ripple = (x[0] + x[1]).abs() - x2_at_instant.abs() * period * period / 8.0;
            worst_ripple = worst_ripple.max(ripple);
        }
    });
    assert_eq!(samples.len(), 301);
    let k_reach = samples
        .iter()
        .position(|s| s.signals[0][0].abs() <= 1e-9)
        .expect("σ reaches 0");
    let t_reach = samples[k_reach].t;
    // Continuous time: σ̇ = −α from σ(0) = 1, so t = 1. Discrete: σ moves by
    // α C_sΓ = α (T + T²/2) per period, 100 periods.
    assert!((t_reach - 1.0).abs() <= period, "t_reach = {t_reach}");
    assert_eq!(k_reach, 100);
    let cs_gamma = period + period * period / 2.0;
    for (k, s) in samples[..k_reach].iter().enumerate() {
        let want = 1.0 - k as f64 * alpha * cs_gamma;
        assert!((s.signals[0][0] - want).abs() < 1e-12, "k = {k}");
        if k + 1 < k_reach {
            assert_eq!(s.signals[1][0], -alpha, "reaching: u_s = −α at k = {k}");
        }
    }
    let after = &samples[k_reach..];
    let sigma_max = max_abs(after.iter().map(|s| s.signals[0][0]));
    let us_max = max_abs(after.iter().map(|s| s.signals[1][0]));
    assert!(sigma_max <= 1e-9, "|σ| after reaching: {sigma_max:e}");
    assert!(us_max < alpha, "|u_s| = {us_max}");
    // Without perturbation the discrete sliding mode needs no switching at all.
    assert!(us_max <= 1e-9, "|u_s| = {us_max:e}");
    assert!(
        worst_ripple <= 1e-12,
        "inter-sample σ above its bound by {worst_ripple:e}"
    );
    // Reaching: σ̇ = −α, ẋ₂ = −x₂ − α, so x₁(1) = 1 − e⁻¹; then the state
    // slides on x₁ + x₂ = 0: x₁(3) = (1 − e⁻¹) e⁻² (to O(T) for the sampling).
    let last = samples.last().unwrap();
    let want = (1.0 - (-1.0f64).exp()) * (-2.0f64).exp();
    assert!(
        (last.x[0] / want - 1.0).abs() < 0.02,
        "x₁(3) = {}",
        last.x[0]
    );
}

/// Peak-to-peak of σ at the instants after its first sign change.
fn band_after_first_crossing(samples: &[Sample]) -> (f64, usize) {
    let s0 = samples[0].signals[0][0].signum();
    let k = samples
        .iter()
        .position(|s| s.signals[0][0].signum() != s0)
        .expect("σ changes sign");
    let sig = samples[k..].iter().map(|s| s.signals[0][0]);
    let (lo, hi) = sig.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    (hi - lo, k)
}

#[test]
fn the_explicit_band_scales_with_the_period_and_the_implicit_law_does_not_chatter() {
    let alpha = 1.0;
    let mut bands = Vec::new();
    for period in [1e-2, 5e-3] {
        let law = ExplicitSmc::new(dmatrix![1.0, 1.0], vec![alpha]);
        let samples = run_double_integrator(Box::new(law), period, 5e-4, 2.0, None);
        let (band, k) = band_after_first_crossing(&samples);
        // σ_{k+1} = σ_k − α C_sΓ sign(σ_k): a 2-cycle of width α C_sΓ.
        let width = alpha * (period + period * period / 2.0);
        assert!(
            (band - width).abs() <= 1e-9 * width,
            "T = {period}: band {band:e}, α C_sΓ = {width:e}"
        );
        // u_s switches between ±α at every instant of the band.
        for w in samples[k..].windows(2) {
            assert_eq!(w[0].signals[1][0].abs(), alpha);
            assert_eq!(w[0].signals[1][0], -w[1].signals[1][0], "t = {}", w[0].t);
        }
        bands.push(band);

        let law = ImplicitSmc::new(dmatrix![1.0, 1.0], vec![alpha]);
        let samples = run_double_integrator(Box::new(law), period, 5e-4, 2.0, None);
        let k = samples
            .iter()
            .position(|s| s.signals[0][0].abs() <= 1e-9)
            .unwrap();
        let after = &samples[k..];
        assert!(max_abs(after.iter().map(|s| s.signals[0][0])) <= 1e-9);
        assert!(max_abs(after.iter().map(|s| s.signals[1][0])) <= 1e-9);
    }
    // Halving T halves the band: α (T + T²/2) / α (T/2 + T²/8) = 2.005 for T = 0.01.
    let ratio = bands[0] / bands[1];
    assert!((1.9..=2.1).contains(&ratio), "ratio {ratio}");
}

#[test]
fn the_boundary_layer_bounds_u_s_by_alpha_and_removes_the_switching() {
    let (period, alpha) = (1e-2, 1.0);
    // ε = 0.02 > α C_sΓ / 2: inside the layer σ_{k+1} = (1 − α C_sΓ/ε) σ_k.
    let eps = 0.02;
    let law = ExplicitSmc::new(dmatrix![1.0, 1.0], vec![alpha]).with_boundary_layer(vec![eps]);
    let samples = run_double_integrator(Box::new(law), period, 1e-3, 3.0, None);
    let factor = 1.0 - alpha * (period + period * period / 2.0) / eps;
    let k = samples
        .iter()
        .position(|s| s.signals[0][0].abs() < eps)
        .unwrap();
    for w in samples[k..].windows(2) {
        assert!(w[0].signals[1][0].abs() <= alpha);
        let (s0, s1) = (w[0].signals[0][0], w[1].signals[0][0]);
        assert!((s1 - factor * s0).abs() <= 1e-14, "t = {}", w[1].t);
    }
    assert!(samples.iter().all(|s| s.signals[1][0].abs() <= alpha));
}

/// A smooth matched perturbation, |p| ≤ 0.5 < α.
fn perturbation(t: f64) -> f64 {
    0.3 * (4.0 * t).sin() + 0.2 * (2.5 * t + 0.3).cos()
}

/// max |σ| at the instants of t ∈ [2, 4] (long after reaching).
fn sliding_band(law: Box<dyn Controller>, period: f64) -> (f64, f64) {
    let samples = run_double_integrator(law, period, 1e-3, 4.0, Some(perturbation));
    let tail: Vec<&Sample> = samples.iter().filter(|s| s.t >= 2.0).collect();
    let band = max_abs(tail.iter().map(|s| s.signals[0][0]));
    let us = max_abs(tail.iter().map(|s| s.signals[1][0]));
    (band, us)
}

#[test]
fn perturbation_prediction_raises_the_order_of_the_sliding_band() {
    let cs = || dmatrix![1.0, 1.0];
    type Make = Box<dyn Fn() -> Box<dyn Controller>>;
    // (law, expected order of the band in T)
    let cases: Vec<(&str, Make, i32)> = vec![
        (
            "implicit",
            Box::new(move || Box::new(ImplicitSmc::new(cs(), vec![1.0]))),
            1,
        ),
        ("ot2", Box::new(move || Box::new(Ot2Smc::new(cs()))), 2),
        (
            "improved 0",
            Box::new(move || Box::new(ImprovedSmc::new(cs(), vec![1.0], 0))),
            2,
        ),
        (
            "improved 1",
            Box::new(move || Box::new(ImprovedSmc::new(cs(), vec![1.0], 1))),
            3,
        ),
        (
            "improved 2",
            Box::new(move || Box::new(ImprovedSmc::new(cs(), vec![1.0], 2))),
            4,
        ),
    ];
    for (name, make, order) in cases {
        let (b1, us1) = sliding_band(make(), 2e-2);
        let (b2, _) = sliding_band(make(), 1e-2);
        let ratio = b1 / b2;
        let want = 2f64.powi(order);
        println!("{name}: band {b1:.3e} (T = 0.02), {b2:.3e} (T = 0.01), ratio {ratio:.2}");
        // Within a factor 1.5 of 2^order.
        assert!(
            ratio > want / 1.5 && ratio < want * 1.5,
            "{name}: band ratio {ratio} for order {order}"
        );
        if name != "ot2" {
            // The relay stays inside its range: a discrete sliding mode, no switching.
            assert!(us1 < 1.0, "{name}: |u_s| = {us1}");
        }
    }
}

#[test]
fn bad_parameters_and_loops_are_typed_errors() {
    let build = |law: Box<dyn Controller>, c: DMatrix<f64>, input: InputMap| {
        let (model, plant) = double_integrator([1.0, 0.0]);
        let mut lb = ControlLoopBuilder::new(model);
        let s = lb.add_sensor("sensor", sensor(plant, c, 0.01)).unwrap();
        let mut act = actuator(plant, dmatrix![0.0; 1.0], 0.01);
        act.input = input;
        lb.add_controller("ctl", Measurement::Sensor(s), law, act)
            .unwrap();
        lb.build_time_stepping(zoh_settings(1e-3, 0.1)).err()
    };
    let b = || InputMap::Matrix(dmatrix![0.0; 1.0]);
    let eye = || DMatrix::identity(2, 2);
    // Wrong size of C_s.
    let e = build(
        Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0, 1.0], vec![1.0])),
        eye(),
        b(),
    );
    assert!(
        matches!(
            e,
            Some(ControlError::Dimension {
                what: "csurface",
                ..
            })
        ),
        "{e:?}"
    );
    // Negative α.
    let e = build(
        Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0], vec![-1.0])),
        eye(),
        b(),
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "alpha"),
        "{e:?}"
    );
    // C_s Γ singular: C_s orthogonal to Γ = (T²/2, T).
    let e = build(
        Box::new(ExplicitSmc::new(dmatrix![0.0, 0.0], vec![1.0])),
        eye(),
        b(),
    );
    assert!(matches!(e, Some(ControlError::Unsupported { .. })), "{e:?}");
    // C_s Γ < 0: the implicit relay would not be well posed.
    let e = build(
        Box::new(ImplicitSmc::new(dmatrix![-1.0, -1.0], vec![1.0])),
        eye(),
        b(),
    );
    assert!(matches!(e, Some(ControlError::Unsupported { .. })), "{e:?}");
    // The measurement is not the state.
    let e = build(
        Box::new(Ot2Smc::new(dmatrix![1.0, 1.0])),
        dmatrix![1.0, 0.0],
        b(),
    );
    assert!(
        matches!(
            e,
            Some(ControlError::Dimension {
                what: "measurement",
                ..
            })
        ),
        "{e:?}"
    );
    // A measurement of the state's size that is not the state: y = C x
    // with C ≠ I (here the components swapped, then scaled), for each law.
    for c in [dmatrix![0.0, 1.0; 1.0, 0.0], dmatrix![2.0, 0.0; 0.0, 2.0]] {
        let laws: [Box<dyn Controller>; 4] = [
            Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])),
            Box::new(ExplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])),
            Box::new(Ot2Smc::new(dmatrix![1.0, 1.0])),
            Box::new(ImprovedSmc::new(dmatrix![1.0, 1.0], vec![1.0], 1)),
        ];
        for law in laws {
            let e = build(law, c.clone(), b());
            assert!(
                matches!(&e, Some(ControlError::Unsupported { reason, .. })
                    if reason.contains("must be y = x") && reason.contains("C = [[")),
                "{e:?}"
            );
        }
    }
    // No linear plant: the input enters through a function.
    let f = InputMap::Function {
        inputs: 1,
        map: std::sync::Arc::new(|_, _, _, u: &[f64], g: &mut [f64]| {
            g[0] = 0.0;
            g[1] = u[0];
        }),
    };
    let e = build(
        Box::new(ImplicitSmc::new(dmatrix![1.0, 1.0], vec![1.0])),
        eye(),
        f,
    );
    assert!(matches!(e, Some(ControlError::Unsupported { .. })), "{e:?}");
    // Prediction order out of range.
    let e = build(
        Box::new(ImprovedSmc::new(dmatrix![1.0, 1.0], vec![1.0], 3)),
        eye(),
        b(),
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "order"),
        "{e:?}"
    );
    // A non-positive clamp.
    let e = build(
        Box::new(Ot2Smc::new(dmatrix![1.0, 1.0]).with_clamp(vec![0.0])),
        eye(),
        b(),
    );
    assert!(
        matches!(&e, Some(ControlError::InvalidValue { what, .. }) if what == "clamp"),
        "{e:?}"
    );
}

#[test]
fn two_inputs_with_coupled_surfaces() {
    // Two double integrators coupled through B; σ = C_s x with C_s 2 × 4.
    let a = dmatrix![
        0.0, 1.0, 0.0, 0.0;
        0.0, 0.0, 0.0, 0.0;
        0.0, 0.0, 0.0, 1.0;
        0.0, 0.0, 0.0, 0.0
    ];
    let b = dmatrix![0.0, 0.0; 1.0, 0.3; 0.0, 0.0; -0.2, 1.0];
    let (model, plant) = linear_plant(&[1.0, 0.0, -0.5, 0.2], a);
    let period = 1e-2;
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, DMatrix::identity(4, 4), period))
        .unwrap();
    let cs = dmatrix![1.0, 1.0, 0.0, 0.0; 0.0, 0.0, 2.0, 1.0];
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            Box::new(ImplicitSmc::new(cs, vec![1.0, 2.0])),
            actuator(plant, b, period),
        )
        .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(1e-3, 3.0)).unwrap();
    let samples = run_recording(&mut cl, plant, ctl, &["sigma", "u_s"], |_| {});
    let tail: Vec<&Sample> = samples.iter().filter(|s| s.t >= 1.5).collect();
    for s in &tail {
        assert!(
            s.signals[0].iter().all(|v| v.abs() <= 1e-9),
            "t = {}: σ = {:?}",
            s.t,
            s.signals[0]
        );
        assert!(s.signals[1][0].abs() < 1.0 && s.signals[1][1].abs() < 2.0);
    }
}
