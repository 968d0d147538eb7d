//! The master's coupling and its delays on Reference FMUs with a
//! hand-written oracle: Dahlquist (ẋ = −k x, forward Euler inside with
//! its fixed step 0.1, so x(t_n) = 0.9ⁿ for k = 1, h = 0.1) feeds
//! Feedthrough, whose output is its input.

mod common;

use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::{EventKind, Simulation, StepOutcome};
use nonsmooth_cosim::{
    CoSimulation, Connection, CosimError, Coupling, Fmu, FmuSpec, MasterSettings,
};

fn specs() -> Vec<FmuSpec> {
    let dir = common::reference_fmus();
    vec![
        FmuSpec {
            name: "dahlquist".into(),
            fmu: Fmu::load(dir.join("Dahlquist.fmu")).unwrap(),
            step: 0.1,
            parameters: vec![("k".into(), 1.0)],
            outputs: vec!["x".into()],
            inputs: vec![],
        },
        FmuSpec {
            name: "through".into(),
            fmu: Fmu::load(dir.join("Feedthrough.fmu")).unwrap(),
            step: 0.1,
            parameters: vec![],
            outputs: vec!["Float64_continuous_output".into()],
            inputs: vec![],
        },
    ]
}

fn settings(coupling: Coupling) -> MasterSettings {
    MasterSettings {
        t0: 0.0,
        t_end: 2.0,
        coupling,
        output_period: None,
        retry_discards: false,
    }
}

fn link() -> Vec<Connection> {
    vec![Connection {
        from: ("dahlquist".into(), "x".into()),
        to: ("through".into(), "Float64_continuous_input".into()),
    }]
}

/// (x, feedthrough output) at each communication point after t0.
fn run(coupling: Coupling) -> Vec<(f64, f64)> {
    let mut m = CoSimulation::new(specs(), &link(), &settings(coupling), &[]).unwrap();
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { .. } = m.step().unwrap() {
        if m.last_events()
            .iter()
            .any(|e| e.kind == EventKind::Communication)
        {
            rows.push((m.q(SystemId(0))[0], m.q(SystemId(1))[0]));
        }
    }
    rows
}

#[test]
fn jacobi_delays_a_connection_by_one_step() {
    let rows = run(Coupling::Jacobi);
    assert_eq!(rows.len(), 20);
    for (n, (x, y)) in rows.iter().enumerate() {
        let n = n as i32 + 1;
        assert!((x - 0.9f64.powi(n)).abs() < 1e-12, "x at step {n}: {x}");
        // Over (t_(n-1), t_n] the input is x(t_(n-1)).
        assert!((y - 0.9f64.powi(n - 1)).abs() < 1e-12, "y at step {n}: {y}");
    }
}

#[test]
fn gauss_seidel_has_no_delay_along_the_order() {
    let rows = run(Coupling::GaussSeidel);
    assert_eq!(rows.len(), 20);
    for (n, (x, y)) in rows.iter().enumerate() {
        let n = n as i32 + 1;
        assert!((x - 0.9f64.powi(n)).abs() < 1e-12);
        assert!((y - 0.9f64.powi(n)).abs() < 1e-12, "y at step {n}: {y}");
    }
}

#[test]
fn different_steps_publish_at_each_fmu_own_points() {
    let mut s = specs();
    s[1].step = 0.2;
    let mut m = CoSimulation::new(s, &link(), &settings(Coupling::Jacobi), &[]).unwrap();
    let mut seen = Vec::new();
    while let StepOutcome::Advanced { t, .. } = m.step().unwrap() {
        let names: Vec<_> = m
            .last_events()
            .iter()
            .filter(|e| e.kind == EventKind::Communication)
            .map(|e| m.source_name(e.source).to_string())
            .collect();
        if !names.is_empty() {
            seen.push((t, names, m.q(SystemId(1))[0]));
        }
    }
    // Dahlquist at every 0.1, Feedthrough at every 0.2, with the input
    // held over its step: x(t − 0.2).
    assert_eq!(seen.len(), 20);
    for (k, (t, names, y)) in seen.iter().enumerate() {
        let n = k + 1;
        assert!((t - 0.1 * n as f64).abs() < 1e-12);
        if n % 2 == 0 {
            assert_eq!(names, &["dahlquist", "through"]);
            assert!(
                (y - 0.9f64.powi(n as i32 - 2)).abs() < 1e-12,
                "t = {t}: {y}"
            );
        } else {
            assert_eq!(names, &["dahlquist"]);
        }
    }
}

#[test]
fn bad_connections_are_typed_errors() {
    let bad = |from: (&str, &str), to: (&str, &str)| {
        let c = vec![Connection {
            from: (from.0.into(), from.1.into()),
            to: (to.0.into(), to.1.into()),
        }];
        CoSimulation::new(specs(), &c, &settings(Coupling::Jacobi), &[])
            .err()
            .expect("an error")
    };
    // Output to output: mismatched causality.
    let e = bad(("dahlquist", "x"), ("through", "Float64_continuous_output"));
    assert!(matches!(e, CosimError::Misuse { .. }), "{e}");
    assert!(e.to_string().contains("Float64_continuous_output"), "{e}");
    // Input as a source.
    let e = bad(
        ("through", "Float64_continuous_input"),
        ("through", "Int32_input"),
    );
    assert!(matches!(e, CosimError::Misuse { .. }), "{e}");
    // Unknown variable, unknown FMU.
    let e = bad(
        ("dahlquist", "nope"),
        ("through", "Float64_continuous_input"),
    );
    assert!(matches!(e, CosimError::UnknownVariable { .. }), "{e}");
    let e = bad(("ghost", "x"), ("through", "Float64_continuous_input"));
    assert!(e.to_string().contains("ghost"), "{e}");
}
