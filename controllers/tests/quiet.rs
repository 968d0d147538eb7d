//! The bulk path of a control loop (`ControlLoop::step_quiet`: the
//! instants at which the loop does nothing, taken in one call) against one
//! `ControlLoop::step` per instant: the same instants, events, states,
//! inputs, counters and saved states, to the bit.

use std::path::Path;
use std::sync::Arc;

use nonsmooth::control::{ControlLoop, PlantState};
use nonsmooth::io::scenario::Scenario;
use nonsmooth::simulation::{Event, StepOutcome};
use nonsmooth_controllers::Catalog;

/// What one instant leaves: tick, time, events, the plant's state, the
/// controller's input and the step count.
type Row = (i64, f64, Vec<Event>, Vec<f64>, Vec<f64>, u64);

fn example(file: &str, params: &[(&str, &str)]) -> ControlLoop {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(file);
    let mut scenario = Scenario::from_file(&path).unwrap();
    for (name, value) in params {
        let value: nonsmooth::io::scenario::Quantity = match value.parse::<f64>() {
            Ok(x) => x.into(),
            Err(_) => (*value).into(),
        };
        scenario.set_parameter(name, value).unwrap();
    }
    scenario
        .build_with(Arc::new(Catalog))
        .unwrap()
        .control_loop()
        .unwrap()
}

/// Runs the loop to the end, in bulk or not; the rows of every instant and
/// the plant's saved state at instant `save_at`.
fn run(mut cl: ControlLoop, bulk: bool, save_at: usize) -> (Vec<Row>, Option<PlantState>, usize) {
    let plant = cl.plant().model().system_id("plant").unwrap();
    let ctl = cl.controller_id("controller").unwrap();
    let mut rows: Vec<Row> = Vec::new();
    let mut saved = None;
    let mut in_bulk = 0;
    loop {
        if bulk {
            let u = cl.controller_input(ctl).to_vec();
            in_bulk += cl
                .step_quiet(usize::MAX, |t, p| {
                    let (tick, _) = p.tick();
                    rows.push((
                        tick,
                        t,
                        p.last_events().to_vec(),
                        p.q(plant).to_vec(),
                        u.clone(),
                        p.statistics().steps,
                    ));
                    if rows.len() == save_at + 1 {
                        saved = Some(PlantState::TimeStepping(p.save_state()));
                    }
                })
                .unwrap();
        }
        match cl.step().unwrap() {
            StepOutcome::Advanced { tick, t } => {
                let p = cl.plant();
                rows.push((
                    tick,
                    t,
                    p.last_events().to_vec(),
                    p.q(plant).to_vec(),
                    cl.controller_input(ctl).to_vec(),
                    p.statistics().steps,
                ));
                if rows.len() == save_at + 1 {
                    saved = Some(p.save_state().unwrap());
                }
            }
            _ => break,
        }
    }
    (rows, saved, in_bulk)
}

fn assert_same_run(file: &str, params: &[(&str, &str)]) {
    let save_at = 537;
    let (step_rows, step_saved, _) = run(example(file, params), false, save_at);
    let (bulk_rows, bulk_saved, in_bulk) = run(example(file, params), true, save_at);
    assert!(
        in_bulk > step_rows.len() / 2,
        "{file} {params:?}: most instants are quiet ({in_bulk} of {})",
        step_rows.len()
    );
    assert_eq!(step_rows.len(), bulk_rows.len(), "{file} {params:?}");
    for (k, (a, b)) in step_rows.iter().zip(&bulk_rows).enumerate() {
        assert_eq!(a, b, "{file} {params:?}: instant {k}");
    }
    assert!(step_saved.is_some());
    assert_eq!(step_saved, bulk_saved, "{file} {params:?}: saved state");
}

#[test]
fn quiet_instants_in_bulk_equal_steps_one_by_one_smc_tutorial() {
    for law in ["smc_implicit", "smc_explicit", "smc_ot2", "smc_improved"] {
        assert_same_run("smc_tutorial.toml", &[("law", law)]);
    }
}

#[test]
fn quiet_instants_in_bulk_equal_steps_one_by_one_with_delays() {
    assert_same_run(
        "smc_double_integrator.toml",
        &[("sensor_delay", "0.02"), ("actuator_delay", "0.013")],
    );
}

/// A restored state in the middle of a quiet run continues as the
/// original did.
#[test]
fn bulk_run_after_a_restore_continues_the_original() {
    let file = "smc_tutorial.toml";
    let (rows, saved, _) = run(example(file, &[]), false, 300);
    let mut cl = example(file, &[]);
    // Move the loop elsewhere first, then put the saved plant state back
    // together with the laws' states of the same instant.
    let mut other = example(file, &[]);
    for _ in 0..=300 {
        other.step().unwrap();
    }
    let state = other.save_state().unwrap();
    assert_eq!(state.plant(), saved.as_ref().unwrap());
    for _ in 0..77 {
        cl.step().unwrap();
    }
    cl.restore_state(&state).unwrap();
    let plant = cl.plant().model().system_id("plant").unwrap();
    let mut k = 301;
    loop {
        cl.step_quiet(usize::MAX, |t, p| {
            assert_eq!((t, p.q(plant)), (rows[k].1, &rows[k].3[..]), "instant {k}");
            k += 1;
        })
        .unwrap();
        match cl.step().unwrap() {
            StepOutcome::Advanced { t, .. } => {
                assert_eq!((t, cl.plant().q(plant)), (rows[k].1, &rows[k].3[..]));
                k += 1;
            }
            _ => break,
        }
    }
    assert_eq!(k, rows.len());
}

/// Models with interactions have no bulk path: it takes no instant.
#[test]
fn models_with_interactions_take_no_quiet_instant() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/bouncing_ball.toml");
    let built = Scenario::from_file(&path).unwrap().build().unwrap();
    let mut sim = built.simulation().unwrap();
    let mut calls = 0;
    assert_eq!(sim.step_quiet(100, |_, _| calls += 1).unwrap(), 0);
    assert_eq!(calls, 0);
    assert!(matches!(sim.step().unwrap(), StepOutcome::Advanced { .. }));
}
