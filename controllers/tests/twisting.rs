//! Twisting laws on σ̈ = κ u + φ and super-twisting laws on σ̇ = κ u + φ, in
//! closed loop with the exactly integrated plants: finite-time convergence,
//! the order in T of the bands (twisting: σ = O(T²); super-twisting:
//! explicit O(T²), implicit O(T) under a perturbation), and the absence of
//! switching of the implicit variants.

mod common;

use common::*;
use nalgebra::{dmatrix, DMatrix};
use nonsmooth::control::{ControlLoopBuilder, Controller, Measurement};
use nonsmooth_controllers::{SuperTwisting, Twisting, TwistingVariant};

const KAPPA: f64 = 2.0;

fn phi(t: f64) -> f64 {
    0.5 * (3.0 * t).sin()
}
/// sup |φ̇|.
const PHI_RATE: f64 = 1.5;

/// Runs a law on the double integrator (σ, σ̇) = (x₁, x₂), x0 = (1, 0),
/// ẋ₂ = κ u + φ, sensor C = I, ten integration steps per period.
fn run_twisting(law: Box<dyn Controller>, period: f64, t_end: f64, perturbed: bool) -> Vec<Sample> {
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
            actuator(plant, dmatrix![0.0; KAPPA], period),
        )
        .unwrap();
    let step = period / 10.0;
    if perturbed {
        add_open_loop(
            &mut lb,
            "perturbation",
            plant,
            dmatrix![0.0; 1.0],
            step,
            phi,
        );
    }
    let mut cl = lb.build_time_stepping(zoh_settings(step, t_end)).unwrap();
    run_recording(&mut cl, plant, ctl, &[], |_| {})
}

/// Runs a law on σ̇ = κ u + φ, σ(0) = 1, sensor C = [1].
fn run_super_twisting(
    law: Box<dyn Controller>,
    period: f64,
    t_end: f64,
    perturbed: bool,
) -> Vec<Sample> {
    let (model, plant) = linear_plant(&[1.0], dmatrix![0.0]);
    let mut lb = ControlLoopBuilder::new(model);
    let s = lb
        .add_sensor("sensor", sensor(plant, dmatrix![1.0], period))
        .unwrap();
    let ctl = lb
        .add_controller(
            "ctl",
            Measurement::Sensor(s),
            law,
            actuator(plant, dmatrix![KAPPA], period),
        )
        .unwrap();
    let step = period / 10.0;
    if perturbed {
        add_open_loop(&mut lb, "perturbation", plant, dmatrix![1.0], step, phi);
    }
    let mut cl = lb.build_time_stepping(zoh_settings(step, t_end)).unwrap();
    run_recording(&mut cl, plant, ctl, &["v"], |_| {})
}

fn twisting(v: TwistingVariant) -> Box<dyn Controller> {
    Box::new(Twisting::new(v, 3.0, 1.5).with_input_gain(KAPPA))
}

/// (max |σ|, max |u_k − u_{k−1}|) at the instants of the second half.
fn tail_stats(samples: &[Sample]) -> (f64, f64) {
    let tail = &samples[samples.len() / 2..];
    let band = max_abs(tail.iter().map(|s| s.x[0]));
    let du = max_abs(tail.windows(2).map(|w| w[1].u[0] - w[0].u[0]));
    (band, du)
}

/// The first instant from which every later one satisfies `ok`.
fn settled_from(samples: &[Sample], ok: impl Fn(&Sample) -> bool) -> Option<usize> {
    let k = samples.iter().rposition(|s| !ok(s)).map_or(0, |k| k + 1);
    (k < samples.len()).then_some(k)
}

#[test]
fn implicit_twisting_reaches_the_origin_exactly_without_perturbation() {
    for period in [1e-2, 5e-3] {
        let samples = run_twisting(twisting(TwistingVariant::Implicit), period, 8.0, false);
        let k = settled_from(&samples, |s| {
            s.x[0].abs() <= 1e-12 && s.x[1].abs() <= 1e-12 && s.u[0].abs() <= 1e-10
        })
        .expect("the origin is reached");
        println!(
            "implicit, T = {period}: at the origin from t = {:.3}",
            samples[k].t
        );
        assert!(samples[k].t < 5.0);
    }
}

#[test]
fn regular_twisting_reaches_sigma_zero_and_keeps_a_neutral_velocity_cycle() {
    // On σ = 0 the regular law maps σ̇ to −σ̇ (w = −2σ̇/T puts σ_{k+1} at 0):
    // a neutral 2-cycle whose size is the σ̇ left when σ first hits 0.
    for period in [1e-2, 5e-3] {
        let samples = run_twisting(twisting(TwistingVariant::Regular), period, 8.0, false);
        let k = settled_from(&samples, |s| s.x[0].abs() <= 1e-12 && s.x[1].abs() <= 1e-10)
            .expect("σ = 0 is reached");
        let tail = &samples[k..];
        let v = tail[0].x[1];
        for w in tail.windows(2) {
            assert!((w[1].x[1] + w[0].x[1]).abs() <= 1e-14, "t = {}", w[1].t);
        }
        println!(
            "regular, T = {period}: σ = 0 from t = {:.3}, σ̇ cycling at ±{:.1e}",
            tail[0].t,
            v.abs()
        );
        assert!(tail[0].t < 5.0);
    }
}

#[test]
fn explicit_twisting_band_is_of_order_t_squared() {
    let mut bands = Vec::new();
    for period in [1e-2, 5e-3, 2.5e-3] {
        let samples = run_twisting(twisting(TwistingVariant::Explicit), period, 8.0, false);
        let (band, du) = tail_stats(&samples);
        println!(
            "explicit, T = {period}: band {band:.3e} = {:.2} T², max |Δu| {du}",
            band / period / period
        );
        // The input keeps switching by at least 2b/κ.
        assert!(du >= 2.0 * 1.5 / KAPPA - 1e-12);
        bands.push(band / (period * period));
    }
    // band / T² is constant within 20 % over a 4× range of T: O(T²). An
    // O(T) band would double band / T² at each halving (a spread of 4).
    let (lo, hi) = bands
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(l, h), b| (l.min(*b), h.max(*b)));
    assert!(hi / lo <= 1.2 && hi < 20.0, "band/T²: {bands:?}");
}

#[test]
fn perturbed_twisting_bands_are_of_order_t_squared_and_the_implicit_law_does_not_switch() {
    for v in [
        TwistingVariant::Implicit,
        TwistingVariant::Regular,
        TwistingVariant::Explicit,
    ] {
        let mut bands = Vec::new();
        for period in [1e-2, 5e-3] {
            let samples = run_twisting(twisting(v), period, 10.0, true);
            let (band, du) = tail_stats(&samples);
            println!(
                "{v:?}, T = {period}: band {band:.3e} = {:.2} T², max |Δu| {du:.3e}",
                band / period / period
            );
            match v {
                // u follows −φ/κ: its change per period is about T sup|φ̇|/κ.
                TwistingVariant::Implicit => assert!(du <= 1.5 * period * PHI_RATE / KAPPA, "{du}"),
                // A jump of the sign of σ̇ at least.
                TwistingVariant::Explicit => assert!(du >= 2.0 * 1.5 / KAPPA - 1e-12),
                TwistingVariant::Regular => {}
            }
            bands.push(band);
        }
        let ratio = bands[0] / bands[1];
        assert!(
            (4.0 / 1.5..4.0 * 1.5).contains(&ratio),
            "{v:?}: ratio {ratio}"
        );
    }
}

fn super_twisting(implicit: bool) -> Box<dyn Controller> {
    Box::new(SuperTwisting::new(implicit, 2.5, 3.0).with_input_gain(KAPPA))
}

#[test]
fn implicit_super_twisting_reaches_zero_exactly_without_perturbation() {
    for period in [1e-2, 5e-3] {
        let samples = run_super_twisting(super_twisting(true), period, 4.0, false);
        // σ may touch 0 before v has converged; once both are there, they stay.
        let k = settled_from(&samples, |s| s.x[0].abs() <= 1e-14 && s.u[0].abs() <= 1e-14)
            .expect("σ reaches 0");
        println!(
            "implicit super-twisting, T = {period}: σ = 0 from t = {:.3}",
            samples[k].t
        );
        assert!(samples[k].t < 2.0);
        // The explicit law only reaches a band |σ| ≤ O(T²) (here (T/2)² κ-free:
        // the band is set by the integral gain W).
        let samples = run_super_twisting(super_twisting(false), period, 4.0, false);
        let (band, _) = tail_stats(&samples);
        assert!(band > 0.0 && band <= 3.0 * period * period, "{band:e}");
    }
}

#[test]
fn perturbed_super_twisting_orders_explicit_t_squared_implicit_t_without_switching() {
    for implicit in [false, true] {
        let mut bands = Vec::new();
        for period in [1e-2, 5e-3] {
            let samples = run_super_twisting(super_twisting(implicit), period, 8.0, true);
            let (band, du) = tail_stats(&samples);
            println!(
                "{} super-twisting, T = {period}: band {band:.3e}, max |Δu| {du:.3e}",
                if implicit { "implicit" } else { "explicit" }
            );
            if implicit {
                // σ_{k+1} is the unpredicted effect of φ over a period: ≤ T sup|φ|.
                assert!(band <= period * 0.5 * 1.01, "{band:e}");
                assert!(du <= 1.5 * period * PHI_RATE / KAPPA, "{du:e}");
            }
            bands.push(band);
        }
        let ratio = bands[0] / bands[1];
        let want = if implicit { 2.0 } else { 4.0 };
        assert!(
            ratio > want / 1.5 && ratio < want * 1.5,
            "implicit = {implicit}: ratio {ratio}"
        );
    }
}
