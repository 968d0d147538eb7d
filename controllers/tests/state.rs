//! The complete state of a control loop: a run rolled back to a saved state
//! (in memory, or through bytes into a new loop whose laws start fresh)
//! goes on bit-identically — every recorded column at every instant and the
//! whole state at the end — for every law of the catalog, with sensor and
//! actuator delays longer than a period. States that do not fit and damaged
//! bytes are refused without changing the loop.

use std::path::Path;
use std::sync::Arc;

use nonsmooth::control::{ControlError, ControlLoop, ControlLoopState};
use nonsmooth::simulation::{StepOutcome, Strategy};
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::{BuiltScenario, Scenario};

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` with `delay = …` added to the sensor named `sensor` and the
/// controller named `controller` (when given).
fn with_delays(text: &str, sensor: Option<&str>, controller: Option<&str>) -> String {
    let mut t = text.to_string();
    if let Some(d) = sensor {
        t = t.replacen(
            "name = \"sensor\"\n",
            &format!("name = \"sensor\"\ndelay = {d}\n"),
            1,
        );
    }
    if let Some(d) = controller {
        t = t.replacen(
            "name = \"controller\"\n",
            &format!("name = \"controller\"\ndelay = {d}\n"),
            1,
        );
    }
    t
}

fn build(text: &str, sets: &[(&str, &str)]) -> BuiltScenario {
    let mut s = Scenario::from_str(text, "test.toml").unwrap();
    for (k, v) in sets {
        let q: nonsmooth_scenario::Quantity = match v.parse::<f64>() {
            Ok(x) => x.into(),
            Err(_) => (*v).into(),
        };
        s.set_parameter(k, q).unwrap();
    }
    s.build_with(Arc::new(Catalog)).unwrap()
}

fn new_loop(built: &BuiltScenario) -> ControlLoop {
    built.control_loop_with(Strategy::TimeStepping).unwrap()
}

/// The recorded row of every instant of the next `n` instants, as bits.
fn run(built: &BuiltScenario, cl: &mut ControlLoop, n: usize) -> Vec<Vec<u64>> {
    let mut row = vec![0.0; built.header().len()];
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        match cl.step().unwrap() {
            StepOutcome::Advanced { .. } => {}
            StepOutcome::Finished => panic!("the run ended before the test did"),
        }
        built.row(cl, &mut row);
        rows.push(row.iter().map(|x| x.to_bits()).collect());
    }
    rows
}

/// Runs `before` instants, saves, runs `after`; rolls back in place and
/// into a new loop through bytes, and checks both replays. Returns the
/// saved state's size in bytes.
fn check_rollback(label: &str, built: &BuiltScenario, before: usize, after: usize) -> usize {
    check_rollback_with(label, built, Strategy::TimeStepping, before, after)
}

/// [`check_rollback`] with the plant run by `strategy`.
fn check_rollback_with(
    label: &str,
    built: &BuiltScenario,
    strategy: Strategy,
    before: usize,
    after: usize,
) -> usize {
    let new_loop = |b: &BuiltScenario| b.control_loop_with(strategy).unwrap();
    let mut cl = new_loop(built);
    run(built, &mut cl, before);
    let saved = cl.save_state().unwrap();
    let bytes = saved.to_bytes();
    let reference = run(built, &mut cl, after);
    let end = cl.save_state().unwrap().to_bytes();

    // In place, after the run went on.
    cl.restore_state(&saved).unwrap();
    // Compared as bytes: bit-identical, and NaN (a signal not yet known)
    // equals itself.
    assert_eq!(
        cl.save_state().unwrap().to_bytes(),
        bytes,
        "{label}: restored state"
    );
    assert_eq!(
        run(built, &mut cl, after),
        reference,
        "{label}: replay in place"
    );
    assert_eq!(
        cl.save_state().unwrap().to_bytes(),
        end,
        "{label}: end state"
    );

    // Into a new loop (fresh laws, empty delay lines) through bytes.
    let mut fresh = new_loop(built);
    fresh
        .restore_state(&ControlLoopState::from_bytes(&bytes).unwrap())
        .unwrap();
    assert_eq!(
        run(built, &mut fresh, after),
        reference,
        "{label}: replay in a new loop"
    );
    assert_eq!(
        fresh.save_state().unwrap().to_bytes(),
        end,
        "{label}: end state (new loop)"
    );

    // Into a state reused by save_state_into.
    let mut slot = fresh.save_state().unwrap();
    cl.restore_state(&saved).unwrap();
    cl.save_state_into(&mut slot).unwrap();
    assert_eq!(slot.to_bytes(), bytes, "{label}: save_state_into");
    bytes.len()
}

#[test]
fn sliding_mode_loops_roll_back_bit_identically() {
    let tutorial = example("smc_tutorial.toml");
    for law in ["smc_implicit", "smc_explicit", "smc_ot2", "smc_improved"] {
        let built = build(&tutorial, &[("law", law), ("t_end", "0.1")]);
        check_rollback(law, &built, 237, 400);
    }
    // The improved law with its highest prediction order.
    let text = tutorial.replace("alpha = \"alpha\"", "alpha = \"alpha\"\norder = 2");
    let built = build(&text, &[("law", "smc_improved"), ("t_end", "0.1")]);
    check_rollback("smc_improved, order 2", &built, 351, 300);

    // The double integrator with a sensor delay of 2.5 periods and an
    // actuator delay of 1.3 periods: values in transit on both lines.
    let di = example("smc_double_integrator.toml");
    for law in ["smc_implicit", "smc_explicit", "smc_ot2"] {
        let built = build(
            &di,
            &[
                ("law", law),
                ("sensor_delay", "0.025"),
                ("actuator_delay", "0.013"),
                ("t_end", "2"),
            ],
        );
        check_rollback(&format!("{law}, delayed"), &built, 1237, 600);
    }
}

#[test]
fn pid_twisting_and_super_twisting_loops_roll_back_bit_identically() {
    // PID: period 0.05, step 0.01; delays of 1.4 and 2.4 periods.
    let pid = with_delays(&example("pid.toml"), Some("0.07"), Some("0.12"));
    let built = build(&pid, &[("t_end", "10")]);
    check_rollback("pid, delayed", &built, 333, 500);
    // With output limits and each anti-windup scheme.
    for aw in ["conditional", "back_calculation"] {
        let text = pid.replace(
            "kd = \"kd\"",
            &format!("kd = \"kd\"\nu_min = -0.5\nu_max = 0.5\nanti_windup = \"{aw}\""),
        );
        let built = build(&text, &[("t_end", "10")]);
        check_rollback(&format!("pid, {aw}"), &built, 333, 500);
    }

    // Twisting: period 0.01, step 1e-3; delays of 1.3 and 2.1 periods.
    let twisting = with_delays(&example("twisting.toml"), Some("0.013"), Some("0.021"));
    for law in ["twisting_implicit", "twisting_regular", "twisting_explicit"] {
        let built = build(&twisting, &[("law", law), ("t_end", "2")]);
        check_rollback(law, &built, 777, 600);
    }

    // Super-twisting: its integral state v must come back.
    let st = with_delays(
        &example("super_twisting.toml"),
        Some("0.013"),
        Some("0.021"),
    );
    for law in ["super_twisting_implicit", "super_twisting_explicit"] {
        let built = build(&st, &[("law", law), ("t_end", "2")]);
        check_rollback(law, &built, 777, 600);
    }
}

#[test]
fn observer_loops_roll_back_bit_identically() {
    // Luenberger and sliding observers behind a sensor delayed by 1.5
    // periods (period 0.1, step 0.01).
    let text = with_delays(&example("observer.toml"), Some("0.15"), None);
    let built = build(&text, &[("t_end", "5")]);
    check_rollback("observers, delayed", &built, 123, 250);
    let built = build(&example("observer.toml"), &[("t_end", "5")]);
    check_rollback("observers", &built, 55, 250);
}

#[test]
fn the_laws_memory_is_what_makes_the_replay_identical() {
    // A new loop given only the plant's part of a state (laws, sensors and
    // delay lines as at t0) goes on differently: the replays above are
    // identical because the loop's own memory comes back too.
    let text = with_delays(&example("pid.toml"), Some("0.07"), Some("0.12"));
    let built = build(&text, &[("t_end", "10")]);
    let mut cl = new_loop(&built);
    run(&built, &mut cl, 333);
    let saved = cl.save_state().unwrap();
    let reference = run(&built, &mut cl, 200);
    let nonsmooth::simulation::SimulationState::TimeStepping(plant) = saved.plant() else {
        unreachable!("a time-stepping loop")
    };
    let at_t0 = new_loop(&built).save_state().unwrap();
    let mut other = new_loop(&built);
    other.restore_state(&mix(&at_t0, plant)).unwrap();
    assert_ne!(run(&built, &mut other, 200), reference);
}

/// `state` with its plant part replaced (through bytes: the plant's state
/// is the tail of the loop's bytes, after its length as a varint).
fn mix(
    state: &ControlLoopState,
    plant: &nonsmooth::simulation::TimeSteppingState,
) -> ControlLoopState {
    let bytes = state.to_bytes();
    let own = match state.plant() {
        nonsmooth::simulation::SimulationState::TimeStepping(p) => p.to_bytes(),
        _ => unreachable!(),
    };
    let head = &bytes[..bytes.len() - own.len() - varint(own.len()).len()];
    let mut out = head.to_vec();
    let theirs = plant.to_bytes();
    out.extend_from_slice(&varint(theirs.len()));
    out.extend_from_slice(&theirs);
    ControlLoopState::from_bytes(&out).unwrap()
}

/// `n` as a varint: 7 bits a byte, lowest first, the high bit set on every
/// byte but the last.
fn varint(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out
}

#[test]
fn states_that_do_not_fit_and_damaged_bytes_are_refused() {
    let di = example("smc_double_integrator.toml");
    let delayed = build(
        &di,
        &[
            ("sensor_delay", "0.025"),
            ("actuator_delay", "0.013"),
            ("t_end", "1"),
        ],
    );
    let plain = build(&di, &[("t_end", "1")]);
    let mut a = new_loop(&delayed);
    run(&delayed, &mut a, 100);
    let state = a.save_state().unwrap();

    // Another timing: refused, the loop unchanged.
    let mut b = new_loop(&plain);
    run(&plain, &mut b, 50);
    let before = b.save_state().unwrap();
    let e = b.restore_state(&state).unwrap_err();
    assert!(
        matches!(&e, ControlError::State { object, reason }
            if object == "sensor" && reason.contains("delay 0.025 s")),
        "{e}"
    );
    assert_eq!(b.save_state().unwrap(), before);

    // Another law, with a memory of another size: refused, unchanged.
    let ot2 = build(&di, &[("law", "smc_ot2"), ("t_end", "1")]);
    let mut c = new_loop(&ot2);
    run(&ot2, &mut c, 50);
    let before = c.save_state().unwrap();
    let own = new_loop(&plain).save_state().unwrap();
    let e = c.restore_state(&own).unwrap_err();
    assert!(matches!(e, ControlError::State { .. }), "{e}");
    assert_eq!(c.save_state().unwrap(), before);

    // Every truncation and a flipped byte in each place: errors, no panic.
    let bytes = state.to_bytes();
    for n in 0..bytes.len() {
        assert!(
            ControlLoopState::from_bytes(&bytes[..n]).is_err(),
            "{n} bytes"
        );
    }
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(ControlLoopState::from_bytes(&extra).is_err());
    for k in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[k] ^= 0xA5;
        // A changed number may still be a valid state; restoring it must
        // then either work or be refused, never panic.
        if let Ok(s) = ControlLoopState::from_bytes(&bad) {
            let mut d = new_loop(&delayed);
            let _ = d.restore_state(&s);
        }
    }
}

#[test]
fn an_event_driven_plant_rolls_back_bit_identically() {
    // The event-driven plant saves its whole state (clock, schedules,
    // integrator mid-step): the replay after a rollback equals the run.
    let built = build(&example("smc_tutorial.toml"), &[("t_end", "1")]);
    check_rollback_with("smc_event_driven", &built, Strategy::EventDriven, 40, 60);

    // A time-stepping state does not fit an event-driven loop: refused,
    // the loop unchanged.
    let mut ed = built.control_loop_with(Strategy::EventDriven).unwrap();
    run(&built, &mut ed, 10);
    let before = ed.save_state().unwrap().to_bytes();
    let ts = new_loop(&built).save_state().unwrap();
    assert!(ed.restore_state(&ts).is_err());
    assert_eq!(ed.save_state().unwrap().to_bytes(), before);
}

#[test]
fn manipulator_loop_rolls_back_bit_identically_inside_a_transition() {
    // Step 1e-3: the transition starts at 2.4 s; save at 2.45 s, between
    // impacts, and replay through the constrained phase.
    let built = build(
        &example("manipulator.toml"),
        &[("step", "0.001"), ("cycles", "1")],
    );
    check_rollback("manipulator_switching", &built, 2450, 1500);
}
