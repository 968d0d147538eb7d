//! FMI 3.0 co-simulation import on the Reference FMUs built for FMI 3.0,
//! against FMPy's `simulate_fmu` of the same FMU with the same step (an
//! independent importer driving the same binary) and hand-written
//! recursions of the FMUs' forward Euler:
//!
//! * Dahlquist (ẋ = −k x, internal step 0.1): xₙ = 0.9ⁿ, through the
//!   master;
//! * BouncingBall (state events handled inside the FMU's steps): h and v
//!   at every communication point equal FMPy's, through the master;
//! * StateSpace (arrays sized by structural parameters): the elements
//!   `y[1]`…`y[3]` with an element of the input array `u` set,
//!   against FMPy with the same start values and against
//!   xₙ₊₁ = xₙ + δ (A xₙ + B u), y = C x + D u (A = B = C = D = I, δ = 1e-3);
//! * FMU states: saved, serialised, restored into the running instance,
//!   the steps after it repeated bit for bit;
//! * Stair ending the simulation (terminateSimulation) at t = 9: the
//!   master's rows equal FMPy's up to it.

mod common;

use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::{Simulation, StepOutcome};
use nonsmooth_cosim::{
    CoSimulation, Coupling, Fmu, FmuSpec, Instance, MasterSettings, StepResult, VarCausality,
    VarType,
};

fn fmu(model: &str) -> std::sync::Arc<Fmu> {
    let f = Fmu::load(common::reference_fmus3().join(format!("{model}.fmu"))).unwrap();
    assert_eq!(f.fmi_version(), 3);
    f
}

/// The master over one FMU: (t, exposed outputs) at every output instant.
fn master_rows(
    model: &str,
    step: f64,
    t_end: f64,
    outputs: &[&str],
    parameters: &[(&str, f64)],
) -> Vec<Vec<f64>> {
    let mut m = CoSimulation::new(
        vec![FmuSpec {
            name: model.to_lowercase(),
            fmu: fmu(model),
            step,
            parameters: parameters
                .iter()
                .map(|(n, x)| (n.to_string(), *x))
                .collect(),
            outputs: outputs.iter().map(|o| o.to_string()).collect(),
            inputs: vec![],
        }],
        &[],
        &MasterSettings {
            t0: 0.0,
            t_end,
            coupling: Coupling::Jacobi,
            output_period: Some(step),
            retry_discards: false,
        },
        &[],
    )
    .unwrap();
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { t, .. } = m.step().unwrap() {
        if m.is_output_instant() {
            let mut r = vec![t];
            r.extend_from_slice(m.q(SystemId(0)));
            rows.push(r);
        }
    }
    rows
}

fn assert_close(ours: &[Vec<f64>], theirs: &[Vec<f64>], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: number of rows");
    for (a, b) in ours.iter().zip(theirs) {
        assert_eq!(a.len(), b.len(), "{what}: columns");
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{what} at t = {}: column {k}: {x} vs FMPy {y}",
                b[0]
            );
        }
    }
}

#[test]
fn the_description_of_an_fmi3_fmu() {
    let d = fmu("StateSpace");
    let d = d.description();
    assert_eq!(d.model_identifier, "StateSpace");
    assert!(d.capabilities.get_set_state && d.capabilities.serialize_state);
    // y has n = 3 elements (the structural parameter's start value).
    let names: Vec<&str> = d
        .variables
        .iter()
        .filter(|v| v.causality == VarCausality::Output)
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(names, ["y[1]", "y[2]", "y[3]"]);
    let a = d.variable("A[2,3]").unwrap();
    assert_eq!(a.element.map(|e| (e.index, e.len)), Some((5, 9)));
    assert_eq!(
        d.variable("u[3]").unwrap().start,
        Some(nonsmooth_cosim::Start::Real(3.0))
    );
    // Structural parameters are readable, not settable; UInt64 is not
    // exchanged.
    let n = d.variable("n").unwrap();
    assert_eq!(n.causality, VarCausality::CalculatedParameter);
    assert_eq!(n.kind, VarType::String);
    let bb = fmu("BouncingBall");
    assert_eq!(
        bb.description().variable("h").unwrap().unit.as_deref(),
        Some("m")
    );
}

#[test]
fn dahlquist_through_the_master_is_the_recursion_and_fmpy() {
    let rows = master_rows("Dahlquist", 0.1, 10.0, &["x"], &[]);
    assert_eq!(rows.len(), 101);
    let mut x: f64 = 1.0;
    for (n, r) in rows.iter().enumerate() {
        assert!((r[1] - x).abs() <= 1e-15, "x at step {n}: {} vs {x}", r[1]);
        x += 0.1 * -x;
    }
    let path = common::reference_fmus3().join("Dahlquist.fmu");
    let fmpy = common::fmpy_simulate(&path, 0.1, 10.0, &["x"]);
    assert_close(&rows, &fmpy, "Dahlquist");
}

#[test]
fn bouncing_ball_through_the_master_equals_fmpy() {
    let rows = master_rows("BouncingBall", 0.01, 3.0, &["h", "v"], &[]);
    assert_eq!(rows.len(), 301);
    let path = common::reference_fmus3().join("BouncingBall.fmu");
    let fmpy = common::fmpy_simulate(&path, 0.01, 3.0, &["h", "v"]);
    assert_close(&rows, &fmpy, "BouncingBall");
    // It bounces: v changes sign upwards at least twice.
    let bounces = rows
        .windows(2)
        .filter(|w| w[0][2] < 0.0 && w[1][2] > 0.0)
        .count();
    assert!(bounces >= 2, "{bounces} bounces");
}

#[test]
fn state_space_arrays_equal_fmpy_and_the_recursion() {
    let params = [("u[2]", 5.0)];
    let rows = master_rows("StateSpace", 0.1, 1.0, &["y[1]", "y[2]", "y[3]"], &params);
    assert_eq!(rows.len(), 11);
    let path = common::reference_fmus3().join("StateSpace.fmu");
    let script = format!(
        "import fmpy\n\
         r = fmpy.simulate_fmu({p:?}, fmi_type='CoSimulation', stop_time=1.0, \
         output_interval=0.1, output=['y'], start_values={{'u': [1.0, 5.0, 3.0]}})\n\
         for row in r:\n    print(' '.join(repr(float(v)) for v in [row['time'], *row['y']]))\n",
        p = path.display().to_string()
    );
    let fmpy = common::python_rows(&script);
    assert_close(&rows, &fmpy, "StateSpace");
    // x' = x + u by forward Euler with δ = 1e-3, y = x + u.
    let u = [1.0, 5.0, 3.0];
    let mut x = [0.0, 0.0, 0.0];
    for (n, r) in rows.iter().enumerate() {
        for i in 0..3 {
            let y = x[i] + u[i];
            assert!(
                (r[1 + i] - y).abs() <= 1e-9 * (1.0 + y.abs()),
                "y[{}] at row {n}: {} vs {y}",
                i + 1,
                r[1 + i]
            );
        }
        for _ in 0..100 {
            for i in 0..3 {
                x[i] += 1e-3 * (x[i] + u[i]);
            }
        }
    }
}

#[test]
fn an_fmi3_state_is_saved_serialised_and_restored() {
    let f = fmu("BouncingBall");
    let mut inst = Instance::new(&f, "ball").unwrap();
    inst.initialize(0.0, Some(3.0)).unwrap();
    let h = inst.variable("h").unwrap().clone();
    let mut t = 0.0;
    for k in 1..=50 {
        let next = k as f64 * 0.01;
        assert_eq!(inst.do_step(next - t, next).unwrap(), StepResult::Done);
        t = next;
    }
    let saved = inst.get_state().unwrap();
    let bytes = inst.serialize_state(&saved).unwrap();
    let mut first = Vec::new();
    for k in 51..=100 {
        let next = k as f64 * 0.01;
        inst.do_step(next - t, next).unwrap();
        t = next;
        first.push(inst.get_as_real(&h).unwrap());
    }
    for restored in [saved, inst.deserialize_state(&bytes).unwrap()] {
        inst.set_state(&restored).unwrap();
        assert_eq!(inst.time(), 0.5);
        let mut t = 0.5;
        for (j, k) in (51..=100).enumerate() {
            let next = k as f64 * 0.01;
            inst.do_step(next - t, next).unwrap();
            t = next;
            assert_eq!(inst.get_as_real(&h).unwrap().to_bits(), first[j].to_bits());
        }
    }
}

#[test]
fn stair_ends_the_run_at_nine_as_fmpy_does() {
    let rows = master_rows("Stair", 0.2, 10.0, &["counter"], &[]);
    let path = common::reference_fmus3().join("Stair.fmu");
    let fmpy = common::fmpy_simulate(&path, 0.2, 10.0, &["counter"]);
    assert_eq!(rows.len(), 46, "t = 0, 0.2, …, 9");
    assert_close(&rows, &fmpy, "Stair");
    assert_eq!(rows.last().unwrap()[1], 10.0);
}
