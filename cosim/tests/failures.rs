//! The master's failure paths, on the test FMU `tests/fmus/faulty.c`
//! (ẋ = −k x + u by forward Euler with an internal step δ = 1/64 s, so
//! that with k = 1, u = 0, x₀ = 1 the state after n internal steps is the
//! hand-written recursion xₙ₊₁ = xₙ + δ(−xₙ)) and the Reference FMU Stair
//! (which ends the simulation when its counter reaches 10, at t = 9)
//! against FMPy:
//!
//! * a step longer than the FMU's `h_max` is discarded, retried as two
//!   half steps from the state saved before it, and the run equals the
//!   run with the half step (bit for bit) and the recursion; without
//!   retries the discard stops the run, naming the FMU and the time;
//! * an FMU returning fmi2Error stops the run after the rows before it,
//!   naming the FMU, the call and the time;
//! * an FMU ending the simulation (fmi2Terminated) ends the run at the
//!   first point of the master's grid at or after its time, with its
//!   values at that time; [`CoSimulation::ended`] names it.

mod common;
#[path = "common/faulty.rs"]
mod faulty;

use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::{Simulation, SimulationError, StepOutcome};
use nonsmooth_cosim::{CoSimulation, CosimError, Coupling, Fmu, FmuSpec, MasterSettings};

/// δ of faulty.c.
const DT: f64 = 1.0 / 64.0;

/// x after n internal steps of faulty.c (k = 1, u = 0, x₀ = 1), with the
/// FMU's operations in its order: x + δ (−k x + u).
fn euler(n: usize) -> f64 {
    let mut x: f64 = 1.0;
    for _ in 0..n {
        x += DT * (-x + 0.0);
    }
    x
}

fn spec(fmu: &std::path::Path, step: f64, parameters: &[(&str, f64)]) -> FmuSpec {
    FmuSpec {
        name: "faulty".into(),
        fmu: Fmu::load(fmu).unwrap(),
        step,
        parameters: parameters
            .iter()
            .map(|(n, x)| (n.to_string(), *x))
            .collect(),
        outputs: vec!["x".into(), "discards".into()],
        inputs: vec![],
    }
}

fn settings(t_end: f64, output: f64, retry: bool) -> MasterSettings {
    MasterSettings {
        t0: 0.0,
        t_end,
        coupling: Coupling::Jacobi,
        output_period: Some(output),
        retry_discards: retry,
    }
}

/// (t, x, discards) at each output instant, then the error if the run
/// failed.
type Rows = Vec<(f64, f64, f64)>;

fn run(m: &mut CoSimulation) -> (Rows, Option<SimulationError>) {
    let mut rows = Vec::new();
    loop {
        match m.step() {
            Ok(StepOutcome::Advanced { t, .. }) => {
                if m.is_output_instant() {
                    let q = m.q(SystemId(0));
                    rows.push((t, q[0], q[1]));
                }
            }
            Ok(StepOutcome::Finished) => return (rows, None),
            Err(e) => return (rows, Some(e)),
        }
    }
}

#[test]
fn a_discarded_step_is_retried_as_half_steps() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = faulty::build(dir.path());
    // Steps of 0.25 s, discarded above 0.125 s: every step is retried as
    // two halves.
    let mut retried = CoSimulation::new(
        vec![spec(&fmu, 0.25, &[("h_max", 0.125)])],
        &[],
        &settings(2.0, 0.25, true),
        &[],
    )
    .unwrap();
    let (rows, err) = run(&mut retried);
    assert!(err.is_none(), "{err:?}");
    let mut small = CoSimulation::new(
        vec![spec(&fmu, 0.125, &[])],
        &[],
        &settings(2.0, 0.25, true),
        &[],
    )
    .unwrap();
    let (reference, err) = run(&mut small);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(rows.len(), 9);
    assert_eq!(reference.len(), 9);
    for (k, (a, b)) in rows.iter().zip(&reference).enumerate() {
        assert_eq!(a.0, b.0, "row {k}: t");
        assert_eq!(
            a.1.to_bits(),
            b.1.to_bits(),
            "row {k}: x {} vs {}",
            a.1,
            b.1
        );
        assert_eq!(a.1, euler(16 * k), "row {k}: x against the recursion");
        // One discard per communication step of the retried run, none in
        // the other.
        assert_eq!(a.2, k as f64, "row {k}: discards");
        assert_eq!(b.2, 0.0, "row {k}: discards of the small step");
    }
    assert!(rows[8].1 < 0.2, "x decays: {}", rows[8].1);
}

#[test]
fn a_discard_that_cannot_be_retried_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = faulty::build(dir.path());
    let mut m = CoSimulation::new(
        vec![spec(&fmu, 0.25, &[("h_max", 0.125)])],
        &[],
        &settings(2.0, 0.25, false),
        &[],
    )
    .unwrap();
    let (rows, err) = run(&mut m);
    assert_eq!(rows.len(), 1, "only the row at t0: {rows:?}");
    let Some(SimulationError::Imported(e)) = err else {
        panic!("expected an FMU error, got {err:?}");
    };
    let e = e.downcast_ref::<CosimError>().expect("a CosimError");
    assert!(
        matches!(e, CosimError::Discarded { fmu, time } if fmu == "faulty" && *time == 0.0),
        "{e}"
    );
}

#[test]
fn an_fmu_error_stops_the_run_after_the_rows_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = faulty::build(dir.path());
    // The step (0.5, 0.625] crosses fail_at = 0.55.
    let mut m = CoSimulation::new(
        vec![spec(&fmu, 0.125, &[("fail_at", 0.55)])],
        &[],
        &settings(2.0, 0.125, true),
        &[],
    )
    .unwrap();
    let (rows, err) = run(&mut m);
    let ts: Vec<f64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ts, [0.0, 0.125, 0.25, 0.375, 0.5]);
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r.1, euler(8 * k), "row {k}");
    }
    let Some(SimulationError::Imported(e)) = err else {
        panic!("expected an FMU error, got {err:?}");
    };
    let e = e.downcast_ref::<CosimError>().expect("a CosimError");
    assert!(
        matches!(e, CosimError::Call { fmu, call: "fmi2DoStep", time, .. }
            if fmu == "faulty" && *time == 0.5),
        "{e}"
    );
    assert!(
        e.to_string().contains("'faulty'") && e.to_string().contains("t = 0.5"),
        "{e}"
    );
    assert!(m.ended().is_none());
}

#[test]
fn an_fmu_that_ends_the_simulation_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = faulty::build(dir.path());
    // On the grid: end_at = 0.5 is reached by the step (0.375, 0.5].
    let mut m = CoSimulation::new(
        vec![spec(&fmu, 0.125, &[("end_at", 0.5)])],
        &[],
        &settings(2.0, 0.125, true),
        &[],
    )
    .unwrap();
    let watch = m.end_watch();
    let (rows, err) = run(&mut m);
    assert!(err.is_none(), "{err:?}");
    let ts: Vec<f64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ts, [0.0, 0.125, 0.25, 0.375, 0.5]);
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r.1, euler(8 * k), "row {k}");
    }
    let ended = m.ended().expect("the FMU ended the run").clone();
    assert_eq!(ended.fmu, "faulty");
    assert_eq!((ended.time, ended.end), (0.5, 0.5));
    assert_eq!(watch.get(), Some(ended));
    assert_eq!(m.t_end(), 0.5);
    assert!(matches!(m.step(), Ok(StepOutcome::Finished)));

    // Between two points: end_at = 0.3 is reached by the 20th internal
    // step (t = 0.3125) of the step (0.25, 0.375]; the run ends at 0.375
    // with the value at 0.3125.
    let mut m = CoSimulation::new(
        vec![spec(&fmu, 0.125, &[("end_at", 0.3)])],
        &[],
        &settings(2.0, 0.125, true),
        &[],
    )
    .unwrap();
    let (rows, err) = run(&mut m);
    assert!(err.is_none(), "{err:?}");
    let ts: Vec<f64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ts, [0.0, 0.125, 0.25, 0.375]);
    assert_eq!(rows[3].1, euler(20));
    let ended = m.ended().unwrap();
    assert_eq!((ended.time, ended.end), (0.3125, 0.375));
    let text = ended.to_string();
    assert!(
        text.contains("'faulty'") && text.contains("t = 0.3125"),
        "{text}"
    );
}

/// The Reference FMU Stair (counter + 1 at t = 1, 2, …; fmi2Terminated
/// once it reaches 10, at t = 9) to t = 10 with the step 0.2: the rows
/// equal FMPy's `simulate_fmu` up to the termination at t = 9, which both
/// record last.
#[test]
fn stair_ends_the_run_at_nine_as_fmpy_does() {
    let path = common::reference_fmus().join("Stair.fmu");
    let mut m = CoSimulation::new(
        vec![FmuSpec {
            name: "stair".into(),
            fmu: Fmu::load(&path).unwrap(),
            step: 0.2,
            parameters: vec![],
            outputs: vec!["counter".into()],
            inputs: vec![],
        }],
        &[],
        &settings(10.0, 0.2, true),
        &[],
    )
    .unwrap();
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { t, .. } = m.step().unwrap() {
        if m.is_output_instant() {
            rows.push((t, m.q(SystemId(0))[0]));
        }
    }
    let fmpy = common::fmpy_simulate(&path, 0.2, 10.0, &["counter"]);
    assert_eq!(rows.len(), 46, "t = 0, 0.2, …, 9");
    assert_eq!(rows.len(), fmpy.len(), "FMPy: {fmpy:?}");
    for (k, ((t, c), f)) in rows.iter().zip(&fmpy).enumerate() {
        assert!((t - f[0]).abs() < 1e-12, "row {k}: t {t} vs {}", f[0]);
        assert_eq!(*c, f[1], "row {k} (t = {t}): counter");
    }
    assert_eq!(rows.last().unwrap().1, 10.0);
    let ended = m.ended().unwrap();
    assert_eq!(
        (ended.fmu.as_str(), ended.time, ended.end),
        ("stair", 9.0, 9.0)
    );
}
