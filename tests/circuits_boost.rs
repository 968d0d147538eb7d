//! The boost converter from a netlist (V_in, L, gated switch to ground,
//! diode to the output capacitor C and load R), open loop: the switch is
//! driven at a fixed duty D by a PWM gate held over each integration step.
//! Oracles: the textbook steady states of continuous conduction
//! (V_out = V_in/(1 − D), inductor ripple V_in D T/L) and of discontinuous
//! conduction (V_out/V_in = (1 + √(1 + 4D²/K))/2, K = 2L/(R T), with the
//! inductor current at zero over 1 − D − D₂ of the period,
//! D₂ = D V_in/(V_out − V_in)).

use nalgebra::DVector;
use nonsmooth::circuits::{reduce, DiodeForm, Element, ElementKind, Netlist, SourceValue};
use nonsmooth::modelling::{ModelBuilder, NonsmoothLaw};
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

struct Run {
    /// Per step of the last period: (i_L, v_C, switch current, gate).
    last: Vec<(f64, f64, f64, f64)>,
}

/// Simulates the boost for `periods` PWM periods of `steps` steps each,
/// the gate closed over the first `on` steps of each period.
#[allow(clippy::too_many_arguments)]
fn boost(
    v_in: f64,
    l: f64,
    c: f64,
    r: f64,
    t: f64,
    steps: usize,
    on: usize,
    periods: usize,
) -> Run {
    let mut net = Netlist::new();
    let mut add = |name: &str, kind, a: &str, b: &str| {
        net.add(Element {
            name: name.into(),
            kind,
            a: a.into(),
            b: b.into(),
            line: None,
        })
        .unwrap()
    };
    add("V1", ElementKind::VoltageSource, "in", "0");
    add(
        "L1",
        ElementKind::Inductor {
            inductance: l,
            initial_current: 0.0,
        },
        "in",
        "sw",
    );
    add(
        "S1",
        ElementKind::GatedSwitch {
            blocking_voltage: 10.0 * v_in,
        },
        "sw",
        "0",
    );
    add("D1", ElementKind::Diode, "sw", "out");
    add(
        "C1",
        ElementKind::Capacitor {
            capacitance: c,
            initial_voltage: 0.0,
        },
        "out",
        "0",
    );
    add("R1", ElementKind::Resistor(r), "out", "0");
    let lcs = reduce(&net, &[]).unwrap();
    assert_eq!(lcs.states, ["i(L1)", "v(C1)"]);
    assert_eq!(lcs.diodes, ["S1", "D1"]);
    let mut mb = ModelBuilder::new();
    let sys = mb
        .add_system("boost", lcs.system(&[SourceValue::Constant(v_in)]))
        .unwrap();
    let rel = lcs.relation(&[v_in]).unwrap();
    let int = mb
        .add_interaction(
            "boost_diodes",
            &[sys],
            rel,
            NonsmoothLaw::Complementarity { size: 2 },
        )
        .unwrap();
    let h = t / steps as f64;
    let total = steps * periods;
    let settings = TimeSteppingSettings::new(h, h * total as f64);
    let mut sim = TimeStepping::new(mb.build(), settings).unwrap();
    let mut last = Vec::new();
    for k in 0..total {
        let u = if k % steps < on { 1.0 } else { 0.0 };
        sim.set_input(int, &[u]).unwrap();
        let g = &lcs.g * DVector::from_element(1, u);
        sim.set_system_input(sys, g.as_slice()).unwrap();
        sim.step().unwrap();
        if k >= total - steps {
            let (x, lam, y) = (sim.q(sys), sim.lambda(int), sim.y(int));
            let i_s = match lcs.diode_forms[0] {
                DiodeForm::Current => lam[0],
                DiodeForm::Voltage => y[0],
            };
            last.push((x[0], x[1], i_s, u));
        }
    }
    Run { last }
}

fn stats(v: impl Iterator<Item = f64> + Clone) -> (f64, f64, f64) {
    let n = v.clone().count() as f64;
    let mean = v.clone().sum::<f64>() / n;
    let max = v.clone().fold(f64::NEG_INFINITY, f64::max);
    let min = v.fold(f64::INFINITY, f64::min);
    (mean, min, max)
}

#[test]
fn boost_open_loop_continuous_conduction() {
    let (v_in, l, c, r, t, d) = (10.0, 1e-3, 1e-4, 20.0, 1e-4, 0.5);
    let (steps, on) = (100, 50);
    let run = boost(v_in, l, c, r, t, steps, on, 600);
    // Inductor current: rises by exactly V_in D T/L while the switch is
    // closed (the last step of the on-phase is index on − 1; the period's
    // start is the previous period's end, index steps − 1).
    let i_start = run.last[steps - 1].0;
    let i_peak = run.last[on - 1].0;
    let (_, i_min, i_max) = stats(run.last.iter().map(|s| s.0));
    let ripple = v_in * d * t / l;
    println!(
        "CCM: i from {i_min:.6} to {i_max:.6}, ripple {:.9} (formula {ripple})",
        i_max - i_min
    );
    assert!(i_min > 0.5, "continuous conduction: i_L > 0 ({i_min})");
    assert!(
        ((i_max - i_min) - ripple).abs() <= 1e-6 * ripple,
        "{i_min} {i_max}"
    );
    assert!((i_peak - i_max).abs() < 1e-12 && (i_start - i_min).abs() < 1e-6);
    // Output voltage: V_in/(1 − D) up to the ripple.
    let (v_mean, v_min, v_max) = stats(run.last.iter().map(|s| s.1));
    let v_ss = v_in / (1.0 - d);
    println!("CCM: v mean {v_mean:.6} in [{v_min:.6}, {v_max:.6}], V_in/(1-D) = {v_ss}");
    assert!((v_mean - v_ss).abs() <= v_max - v_min, "{v_mean} vs {v_ss}");
    assert!(v_max - v_min < 0.05 * v_ss);
    // The open switch carries no current.
    for s in run.last.iter().filter(|s| s.3 == 0.0) {
        assert!(s.2.abs() <= 1e-9, "open switch current {}", s.2);
    }
}

#[test]
fn boost_open_loop_discontinuous_conduction() {
    let (v_in, l, c, r, t, d) = (10.0, 1e-3, 1e-5, 500.0, 1e-4, 0.5);
    let (steps, on) = (200, 100);
    let run = boost(v_in, l, c, r, t, steps, on, 600);
    let k = 2.0 * l / (r * t);
    assert!(k < d * (1.0 - d) * (1.0 - d), "light load: DCM expected");
    let m = (1.0 + (1.0 + 4.0 * d * d / k).sqrt()) / 2.0;
    let (v_mean, v_min, v_max) = stats(run.last.iter().map(|s| s.1));
    println!(
        "DCM: v mean {v_mean:.4} in [{v_min:.4}, {v_max:.4}], formula {:.4}",
        m * v_in
    );
    assert!(
        (v_mean - m * v_in).abs() <= v_max - v_min,
        "{v_mean} vs {}",
        m * v_in
    );
    // The inductor current stays at zero over part of the period, for the
    // fraction the textbook gives.
    let (_, i_min, i_max) = stats(run.last.iter().map(|s| s.0));
    assert!(i_min >= -1e-9 * i_max, "{i_min}");
    let zero = run
        .last
        .iter()
        .filter(|s| s.0.abs() <= 1e-9 * i_max)
        .count() as f64;
    let d2 = d * v_in / (m * v_in - v_in);
    let expected = 1.0 - d - d2;
    println!(
        "DCM: i_L = 0 over {:.3} of the period (formula {expected:.3})",
        zero / steps as f64
    );
    assert!(zero > 0.0);
    assert!((zero / steps as f64 - expected).abs() < 0.03);
    // Peak current V_in D T/L: from zero at the start of each period.
    assert!((i_max - v_in * d * t / l).abs() <= 1e-9 * i_max, "{i_max}");
}
