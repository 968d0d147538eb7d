//! examples/boost_smc.toml with each gate law and sliding surface chosen
//! by its parameters `law` and `surface` (law `boost_smc`): every
//! combination runs and does what docs/circuits.md says of it after the
//! load step (R' = R/2 = 10 Ω at t_load = 5 ms, 11 ms before the end).
//!
//! Oracles, read from the plant's recorded state over the last 2 ms (every
//! step): energy balance of the ideal (lossless) converter in steady state,
//! V_in ī_L = mean(v²)/R', for every combination; then the voltage surface
//! brings v̄ back to v_ref; the current surface holds the current at i_ref
//! (so v̄ = √(R' V_in ī_L) by the balance, far below v_ref); the open loop
//! holds v̄ at V_in/(1 − D) (continuous conduction, independent of the load).

use std::path::PathBuf;
use std::sync::Arc;

use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

const V_IN: f64 = 10.0;
const V_REF: f64 = 20.0;
const R_AFTER: f64 = 10.0;
/// i_ref of the example: v_ref²/(R V_in).
const I_REF: f64 = 2.0;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/boost_smc.toml")
}

/// The run's (i_L, v_C) at every instant after `from`, with `sets` applied.
fn run(sets: &[(&str, &str)], from: f64) -> (Vec<f64>, Vec<f64>) {
    let mut sc = Scenario::from_file(example()).unwrap();
    for (k, v) in sets {
        sc.set_parameter(k, *v).unwrap();
    }
    let built = sc.build_with(Arc::new(Catalog)).unwrap();
    let header: Vec<String> = built.header().iter().map(|s| s.to_string()).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (kt, ki, kv) = (col("t"), col("boost.i(L1)"), col("boost.v(C1)"));
    let mut sim = built.control_loop().unwrap();
    let mut row = vec![0.0; header.len()];
    let (mut i, mut v) = (Vec::new(), Vec::new());
    sim.run(|s| {
        built.row(s, &mut row);
        if row[kt] > from {
            i.push(row[ki]);
            v.push(row[kv]);
        }
    })
    .unwrap();
    (i, v)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Runs one combination and checks the energy balance; returns (ī_L, v̄).
fn steady(law: &str, surface: &str) -> (f64, f64) {
    let (i, v) = run(&[("law", law), ("surface", surface)], 0.014);
    let (i_bar, v_bar) = (mean(&i), mean(&v));
    let v2: Vec<f64> = v.iter().map(|v| v * v).collect();
    let p_in = V_IN * i_bar;
    let p_out = mean(&v2) / R_AFTER;
    eprintln!(
        "{law}/{surface}: i = {i_bar:.5} A, v = {v_bar:.5} V, P_in {p_in:.4} W, P_out {p_out:.4} W"
    );
    assert!(
        (p_in - p_out).abs() <= 0.01 * p_out,
        "{law}/{surface}: energy balance {p_in} W in, {p_out} W out"
    );
    (i_bar, v_bar)
}

#[test]
fn voltage_surface_brings_v_back_to_v_ref() {
    for law in ["implicit", "explicit"] {
        let (i, v) = steady(law, "voltage");
        assert!((v - V_REF).abs() < 0.05, "{law}: v̄ = {v}");
        let i_power = V_REF * V_REF / (R_AFTER * V_IN);
        assert!((i - i_power).abs() < 0.02 * i_power, "{law}: ī = {i}");
    }
}

#[test]
fn current_surface_holds_i_ref_and_v_follows_power_balance() {
    for law in ["implicit", "explicit"] {
        let (i, v) = steady(law, "current");
        // The implicit law holds i_L = i_ref at the period's start; the mean
        // of the triangle is above it by at most V_in T_s/(2L) = 0.05 A.
        assert!((i - I_REF).abs() <= 0.05, "{law}: ī = {i}");
        let v_power = (R_AFTER * V_IN * I_REF).sqrt();
        assert!(
            (v - v_power).abs() < 0.02 * v_power,
            "{law}: v̄ = {v} vs {v_power}"
        );
    }
}

#[test]
fn open_loop_holds_v_in_over_one_minus_d() {
    for law in ["open_loop", "pwm"] {
        let (i, v) = steady(law, "current");
        let d = 1.0 - V_IN / V_REF;
        assert!((v - V_IN / (1.0 - d)).abs() < 0.1, "{law}: v̄ = {v}");
        assert!(i > 1.9 * I_REF, "{law}: the current doubled ({i})");
    }
}

#[test]
fn an_unknown_law_or_surface_is_a_located_error() {
    for (key, word) in [("law", "bogus"), ("surface", "flux")] {
        let mut sc = Scenario::from_file(example()).unwrap();
        sc.set_parameter(key, word).unwrap();
        let err = sc.build_with(Arc::new(Catalog)).unwrap_err().to_string();
        eprintln!("{err}");
        assert!(err.contains(word), "{err}");
        assert!(err.contains("boost_smc.toml:"), "located: {err}");
    }
}
