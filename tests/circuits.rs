//! Circuits from netlists (`nonsmooth::circuits`, docs/circuits.md): the
//! modified nodal analysis against matrices derived by hand from
//! Kirchhoff's laws, the topological errors, and the diode bridge of
//! seed 002 §3.1 from a netlist against the hand-written complementarity
//! system of examples/diode_bridge.toml.

use std::path::Path;

use nalgebra::{dmatrix, DMatrix};
use nonsmooth::circuits::{reduce, CircuitError, DiodeForm, Element, ElementKind, Netlist};
use nonsmooth_scenario::Scenario;

fn el(name: &str, kind: ElementKind, a: &str, b: &str) -> Element {
    Element {
        name: name.into(),
        kind,
        a: a.into(),
        b: b.into(),
        line: None,
    }
}

fn net(elements: Vec<Element>) -> Result<Netlist, CircuitError> {
    let mut n = Netlist::new();
    for e in elements {
        n.add(e)?;
    }
    Ok(n)
}

fn ind(l: f64) -> ElementKind {
    ElementKind::Inductor {
        inductance: l,
        initial_current: 0.0,
    }
}

fn cap(c: f64, v0: f64) -> ElementKind {
    ElementKind::Capacitor {
        capacitance: c,
        initial_voltage: v0,
    }
}

fn close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) {
    assert_eq!(a.shape(), b.shape(), "{a} vs {b}");
    let d = (a - b).abs().max();
    assert!(d <= tol, "differ by {d:e}: {a} vs {b}");
}

/// Series R-L-C from a source: L di/dt = V − R i − v, C dv/dt = i.
#[test]
fn series_rlc_matches_kirchhoff() {
    let (r, l, c) = (3.0, 0.5, 0.25);
    let n = net(vec![
        el("V1", ElementKind::VoltageSource, "in", "0"),
        el("R1", ElementKind::Resistor(r), "in", "a"),
        el("L1", ind(l), "a", "b"),
        el("C1", cap(c, 2.0), "b", "0"),
    ])
    .unwrap();
    let lcs = reduce(&n, &[]).unwrap();
    assert_eq!(lcs.states, ["i(L1)", "v(C1)"]);
    assert_eq!(lcs.x0.as_slice(), [0.0, 2.0]);
    close(&lcs.a, &dmatrix![-r / l, -1.0 / l; 1.0 / c, 0.0], 1e-14);
    close(&lcs.e, &dmatrix![1.0 / l; 0.0], 1e-14);
    assert_eq!(lcs.b.ncols(), 0);
}

/// Parallel RC fed by a current source through an inductor-free path:
/// C dv/dt = I − v/R (SPICE: I flows from `0` through the source into
/// `out`).
#[test]
fn current_source_into_rc() {
    let (r, c) = (2.0, 0.1);
    let n = net(vec![
        el("I1", ElementKind::CurrentSource, "0", "out"),
        el("R1", ElementKind::Resistor(r), "out", "0"),
        el("C1", cap(c, 0.0), "out", "0"),
    ])
    .unwrap();
    let lcs = reduce(&n, &[]).unwrap();
    close(&lcs.a, &dmatrix![-1.0 / (r * c)], 1e-14);
    close(&lcs.e, &dmatrix![1.0 / c], 1e-14);
}

/// A half-wave rectifier: V → D → (C ∥ R). V1 and C1 already join `in`
/// and `out` through ground, so the diode stays in current form:
/// λ = i_D, w = v_out − v_in = v − V, and C dv/dt = i_D − v/R.
#[test]
fn half_wave_rectifier_in_voltage_form() {
    let (r, c) = (10.0, 1e-3);
    let n = net(vec![
        el("V1", ElementKind::VoltageSource, "in", "0"),
        el("D1", ElementKind::Diode, "in", "out"),
        el("C1", cap(c, 0.0), "out", "0"),
        el("R1", ElementKind::Resistor(r), "out", "0"),
    ])
    .unwrap();
    let lcs = reduce(&n, &[]).unwrap();
    assert_eq!(lcs.diode_forms, [DiodeForm::Current]);
    close(&lcs.c, &dmatrix![1.0], 1e-14);
    close(&lcs.f, &dmatrix![-1.0], 1e-14);
    close(&lcs.d, &dmatrix![0.0], 1e-14);
    close(&lcs.a, &dmatrix![-1.0 / (r * c)], 1e-14);
    close(&lcs.b, &dmatrix![1.0 / c], 1e-14);
}

/// An inductor discharging through a diode into a resistor (L1 from
/// ground to `a`, D1 from `a` to `b`, R1 from `b` to ground): `a` reaches
/// ground only through the diode, which takes the voltage form λ = −v_D,
/// w = i_D = i_L (KCL at `a`). v_a = v_D + R i_L, and L di/dt = 0 − v_a
/// = λ − R i.
#[test]
fn freewheeling_diode_in_voltage_form() {
    let (r, l) = (4.0, 2.0);
    let n = net(vec![
        el("L1", ind(l), "0", "a"),
        el("D1", ElementKind::Diode, "a", "b"),
        el("R1", ElementKind::Resistor(r), "b", "0"),
    ])
    .unwrap();
    let lcs = reduce(&n, &[]).unwrap();
    assert_eq!(lcs.diode_forms, [DiodeForm::Voltage]);
    close(&lcs.c, &dmatrix![1.0], 1e-14);
    close(&lcs.d, &dmatrix![0.0], 1e-14);
    close(&lcs.a, &dmatrix![-r / l], 1e-14);
    close(&lcs.b, &dmatrix![1.0 / l], 1e-14);
}

#[test]
fn topological_errors_name_the_element() {
    let v = || el("V1", ElementKind::VoltageSource, "1", "0");
    let loop_err = reduce(
        &net(vec![v(), el("C1", cap(1.0, 0.0), "1", "0")]).unwrap(),
        &[],
    );
    assert!(
        matches!(&loop_err, Err(CircuitError::VoltageLoop { element }) if element.name == "C1"),
        "{loop_err:?}"
    );
    let cut = reduce(
        &net(vec![
            el("I1", ElementKind::CurrentSource, "0", "1"),
            el("L1", ind(1.0), "1", "2"),
            el("R1", ElementKind::Resistor(1.0), "2", "0"),
        ])
        .unwrap(),
        &[],
    );
    assert!(
        matches!(&cut, Err(CircuitError::CurrentCutSet { node, .. }) if node == "1"),
        "{cut:?}"
    );
    let floating = reduce(
        &net(vec![
            el("R1", ElementKind::Resistor(1.0), "1", "0"),
            el("C1", cap(1.0, 0.0), "1", "0"),
            el("R2", ElementKind::Resistor(1.0), "x", "y"),
            el("C2", cap(1.0, 0.0), "x", "y"),
        ])
        .unwrap(),
        &[],
    );
    assert!(
        matches!(&floating, Err(CircuitError::FloatingNode { element, .. }) if element.name == "R2"),
        "{floating:?}"
    );
    let dangling = reduce(
        &net(vec![
            el("R1", ElementKind::Resistor(1.0), "1", "0"),
            el("C1", cap(1.0, 0.0), "1", "0"),
            el("R2", ElementKind::Resistor(1.0), "1", "typo"),
        ])
        .unwrap(),
        &[],
    );
    assert!(
        matches!(&dangling, Err(CircuitError::DanglingNode { element, node }) if element.name == "R2" && node == "typo"),
        "{dangling:?}"
    );
    let dup = net(vec![v(), el("V1", ElementKind::VoltageSource, "2", "0")]);
    assert!(matches!(dup, Err(CircuitError::DuplicateName { .. })));
    let bad = net(vec![el("R1", ElementKind::Resistor(-1.0), "1", "0")]);
    assert!(matches!(bad, Err(CircuitError::BadValue { .. })));
    let no_state = reduce(
        &net(vec![v(), el("R1", ElementKind::Resistor(1.0), "1", "0")]).unwrap(),
        &[],
    );
    assert_eq!(no_state, Err(CircuitError::NoState));
}

/// Closed switch = 0 V branch, open switch = no branch: an RL circuit
/// shorted by a switch.
#[test]
fn switch_states_change_the_topology() {
    let (r, l) = (2.0, 0.5);
    let n = net(vec![
        el("V1", ElementKind::VoltageSource, "in", "0"),
        el("L1", ind(l), "in", "a"),
        el("R1", ElementKind::Resistor(r), "a", "0"),
        el("S1", ElementKind::Switch, "a", "0"),
    ])
    .unwrap();
    let open = reduce(&n, &[false]).unwrap();
    close(&open.a, &dmatrix![-r / l], 1e-14);
    let closed = reduce(&n, &[true]).unwrap();
    close(&closed.a, &dmatrix![0.0], 1e-14);
    close(&closed.e, &dmatrix![1.0 / l], 1e-14);
    assert!(matches!(
        reduce(&n, &[]),
        Err(CircuitError::SwitchCount {
            given: 0,
            expected: 1
        })
    ));
}

fn run(file: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let built = Scenario::from_file(&path).unwrap().build().unwrap();
    let mut sim = built.control_loop().unwrap();
    let mut rows = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    sim.run(|s| {
        built.row(s, &mut row);
        rows.push(row.clone());
    })
    .unwrap();
    let header = built.header().iter().map(|s| s.to_string()).collect();
    (header, rows)
}

/// Seed 002 §3.1: the bridge from its netlist gives the trajectory of the
/// hand-written complementarity system (x = (v_C, i_L)) to 1e-12 at every
/// one of the 5001 instants.
#[test]
fn diode_bridge_netlist_equals_hand_written_matrices() {
    let (h1, hand) = run("diode_bridge.toml");
    let (h2, netlist) = run("diode_bridge_netlist.toml");
    let col = |h: &[String], name: &str| h.iter().position(|c| c == name).unwrap();
    let pairs = [
        (col(&h1, "circuit.x[0]"), col(&h2, "bridge.v(C1)")),
        (col(&h1, "circuit.x[1]"), col(&h2, "bridge.i(L1)")),
    ];
    assert_eq!(hand.len(), netlist.len());
    assert_eq!(hand.len(), 5001);
    let mut worst = [0.0f64; 2];
    for (a, b) in hand.iter().zip(&netlist) {
        assert_eq!(a[0], b[0]);
        for (k, &(i, j)) in pairs.iter().enumerate() {
            worst[k] = worst[k].max((a[i] - b[j]).abs());
        }
    }
    println!(
        "bridge: max |Δv_C| = {:.2e}, max |Δi_L| = {:.2e}",
        worst[0], worst[1]
    );
    assert!(worst[0] <= 1e-12 && worst[1] <= 1e-12, "{worst:?}");
    // The run is not trivial: the capacitor voltage decays from 10 V
    // and changes sign (the bridge rectifies both half-waves).
    let v = col(&h2, "bridge.v(C1)");
    assert!(netlist.iter().any(|r| r[v] < -1.0));
}
