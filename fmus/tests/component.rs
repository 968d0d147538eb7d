//! The FMU instance logic without the C layer: lifecycle, outputs equal to
//! the native simulation, rollback, tunable parameters, inputs, several
//! instances, and the host's mistakes (each an error or a discard with a
//! log message, the instance still usable).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use nonsmooth_fmus::config::{make_runner, FmuConfig};
use nonsmooth_fmus::instance::{Instance, Phase, Status};
use nonsmooth_fmus::runner::{Runner, ScenarioRunner};
use nonsmooth_scenario::Scenario;

type Log = Arc<Mutex<Vec<(Status, String, String)>>>;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn instance(file: &str, overrides: &[(&str, &str)]) -> (Instance<ScenarioRunner>, Log) {
    let path = example(file);
    let text = std::fs::read_to_string(&path).unwrap();
    instance_of(text, path, overrides)
}

fn instance_of(
    text: String,
    path: PathBuf,
    overrides: &[(&str, &str)],
) -> (Instance<ScenarioRunner>, Log) {
    let cfg = FmuConfig {
        format: 1,
        guid: "{test}".into(),
        model_identifier: "test".into(),
        fmi_version: 2,
        scenario: "scenario.toml".into(),
        overrides: overrides
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    };
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let comp = Instance::fmi2(
        Box::new(move || make_runner(&cfg, &text, &path)),
        Box::new(move |s, c, m| sink.lock().unwrap().push((s, c.to_string(), m.to_string()))),
        false,
    )
    .unwrap();
    (comp, log)
}

fn vr(c: &Instance<ScenarioRunner>, name: &str) -> u32 {
    c.runner()
        .interface()
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .value_reference
}

fn get(c: &mut Instance<ScenarioRunner>, name: &str) -> f64 {
    let r = vr(c, name);
    let mut out = [f64::NAN];
    assert_eq!(c.get_real(&[r], &mut out), Status::Ok);
    out[0]
}

fn outputs(c: &mut Instance<ScenarioRunner>) -> Vec<u64> {
    let vrs: Vec<u32> = c
        .runner()
        .interface()
        .outputs()
        .map(|v| v.value_reference)
        .collect();
    let mut out = vec![0.0; vrs.len()];
    assert_eq!(c.get_real(&vrs, &mut out), Status::Ok);
    out.iter().map(|x| x.to_bits()).collect()
}

fn start(c: &mut Instance<ScenarioRunner>, stop: Option<f64>) {
    assert_eq!(c.setup_experiment(0.0, stop), Status::Ok);
    assert_eq!(c.enter_initialization_mode(), Status::Ok);
    assert_eq!(c.exit_initialization_mode(), Status::Ok);
}

/// Steps of `h` from the current time; returns the outputs after each.
fn steps(c: &mut Instance<ScenarioRunner>, n: usize, h: f64) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            let t = c.last_successful_time();
            assert_eq!(c.do_step(t, h), Status::Ok, "step from {t}");
            outputs(c)
        })
        .collect()
}

fn last_message(log: &Log) -> String {
    log.lock()
        .unwrap()
        .last()
        .cloned()
        .map(|m| m.2)
        .unwrap_or_default()
}

#[test]
fn outputs_equal_the_native_run_at_every_communication_point() {
    let built = Scenario::from_file(example("bouncing_ball.toml"))
        .unwrap()
        .build()
        .unwrap();
    let mut sim = built.control_loop().unwrap();
    let mut native = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    sim.run(|s| {
        built.row(s, &mut row);
        native.push(row.clone());
    })
    .unwrap();

    // Communication step = 2 integration steps, then 1, then 5.
    let (mut c, _) = instance("bouncing_ball.toml", &[]);
    start(&mut c, Some(10.0));
    let vrs: Vec<u32> = c
        .runner()
        .interface()
        .outputs()
        .map(|v| v.value_reference)
        .collect();
    let mut got = vec![0.0; vrs.len()];
    c.get_real(&vrs, &mut got);
    assert_eq!(got, native[0][1..], "t0");
    let mut k = 0;
    for (n, every) in [(300, 2), (200, 1), (100, 5)] {
        for _ in 0..n {
            let t = c.last_successful_time();
            assert_eq!(c.do_step(t, every as f64 * 0.005), Status::Ok);
            k += every;
            c.get_real(&vrs, &mut got);
            assert_eq!(got, native[k][1..], "row {k}");
        }
    }
    // A communication step off the grid sees the last grid instant.
    let t = c.last_successful_time();
    assert_eq!(c.do_step(t, 0.0125), Status::Ok);
    c.get_real(&vrs, &mut got);
    assert_eq!(got, native[k + 2][1..]);
}

#[test]
fn rollback_is_bit_identical_in_memory_and_through_bytes() {
    let (mut c, _) = instance("bouncing_ball.toml", &[]);
    start(&mut c, None);
    steps(&mut c, 70, 0.005);
    let push = vr(&c, "push");
    assert_eq!(c.set_real(&[push], &[3.0]), Status::Ok);
    let saved = c.get_state(None).unwrap().unwrap();
    // Across the first impact (t ≈ 0.43 s).
    let first = steps(&mut c, 60, 0.005);
    assert_eq!(c.set_real(&[push], &[-7.0]), Status::Ok);
    assert_eq!(c.set_state(&saved), Status::Ok);
    assert_eq!(get(&mut c, "push"), 3.0);
    assert_eq!(steps(&mut c, 60, 0.005), first);

    // Serialized, then read by another instance of the same FMU.
    let bytes = c.runner().serialize_state(&saved);
    let (mut other, _) = instance("bouncing_ball.toml", &[]);
    start(&mut other, None);
    let read = other.runner().deserialize_state(&bytes).unwrap();
    assert_eq!(read, saved);
    assert_eq!(other.set_state(&read), Status::Ok);
    assert_eq!(steps(&mut other, 60, 0.005), first);

    // Overwriting a state in place.
    let mut slot = saved.clone();
    assert!(c.get_state(Some(&mut slot)).unwrap().is_none());
    assert_ne!(slot, saved);
}

#[test]
fn a_tunable_parameter_changes_the_run_from_the_next_step_and_rolls_back_with_the_state() {
    let (mut a, _) = instance("bouncing_ball.toml", &[]);
    let (mut b, _) = instance("bouncing_ball.toml", &[]);
    start(&mut a, None);
    start(&mut b, None);
    steps(&mut a, 50, 0.005);
    steps(&mut b, 50, 0.005);
    let saved = b.get_state(None).unwrap().unwrap();
    let e = vr(&b, "restitution");
    assert_eq!(b.set_real(&[e], &[0.5]), Status::Ok);
    assert_eq!(get(&mut b, "restitution"), 0.5);
    let ra = steps(&mut a, 150, 0.005);
    let rb = steps(&mut b, 150, 0.005);
    // Same until the first impact, then a lower rebound.
    let q = |r: &Vec<u64>| f64::from_bits(r[0]);
    assert_eq!(ra[10], rb[10]);
    let (max_a, max_b) = (
        ra[100..].iter().map(q).fold(f64::MIN, f64::max),
        rb[100..].iter().map(q).fold(f64::MIN, f64::max),
    );
    assert!(max_b < max_a - 0.1, "{max_a} {max_b}");
    // The state saved before the change brings the old value back.
    assert_eq!(b.set_state(&saved), Status::Ok);
    assert_eq!(get(&mut b, "restitution"), 0.9);
    let (mut c, _) = instance("bouncing_ball.toml", &[]);
    start(&mut c, None);
    steps(&mut c, 50, 0.005);
    assert_eq!(steps(&mut b, 150, 0.005), steps(&mut c, 150, 0.005));
}

#[test]
fn an_input_force_holds_the_ball() {
    let (mut c, _) = instance("bouncing_ball.toml", &[]);
    let push = vr(&c, "push");
    // Set before initialization: held from t0.
    assert_eq!(c.set_real(&[push], &[9.81]), Status::Ok);
    start(&mut c, Some(1.0));
    steps(&mut c, 100, 0.01);
    assert_eq!(get(&mut c, "ball.q[0]"), 1.0);
    assert_eq!(get(&mut c, "ball.v[0]"), 0.0);
}

#[test]
fn parameters_set_before_initialization_are_used() {
    let (mut c, _) = instance("bouncing_ball.toml", &[("height", "2")]);
    assert_eq!(get(&mut c, "height"), 2.0);
    let h = vr(&c, "height");
    assert_eq!(c.set_real(&[h], &[3.0]), Status::Ok);
    assert_eq!(c.setup_experiment(0.0, None), Status::Ok);
    assert_eq!(c.enter_initialization_mode(), Status::Ok);
    assert_eq!(get(&mut c, "ball.q[0]"), 3.0);
    // Still settable in initialization mode.
    assert_eq!(c.set_real(&[h], &[4.0]), Status::Ok);
    assert_eq!(get(&mut c, "ball.q[0]"), 4.0);
    assert_eq!(c.exit_initialization_mode(), Status::Ok);
    assert_eq!(get(&mut c, "ball.q[0]"), 4.0);
    // Reset: back to the exported values.
    assert_eq!(c.reset(), Status::Ok);
    assert_eq!(c.phase(), Phase::Instantiated);
    start(&mut c, None);
    assert_eq!(get(&mut c, "ball.q[0]"), 2.0);
}

#[test]
fn several_instances_interleaved_equal_separate_runs() {
    let (mut a, _) = instance("bouncing_ball.toml", &[]);
    let (mut b, _) = instance("bouncing_ball.toml", &[("restitution", "0.3")]);
    start(&mut a, None);
    start(&mut b, None);
    let mut ra = Vec::new();
    let mut rb = Vec::new();
    for _ in 0..300 {
        ra.extend(steps(&mut a, 1, 0.005));
        rb.extend(steps(&mut b, 1, 0.005));
    }
    let (mut a2, _) = instance("bouncing_ball.toml", &[]);
    start(&mut a2, None);
    assert_eq!(steps(&mut a2, 300, 0.005), ra);
    assert_ne!(ra, rb);
}

#[test]
fn host_mistakes_are_errors_with_a_message_and_the_instance_stays_usable() {
    let (mut c, log) = instance("bouncing_ball.toml", &[]);
    let err = |c: &mut Instance<ScenarioRunner>, s: Status, what: &str| {
        assert_eq!(s, Status::Error, "{what}");
        let m = last_message(&log);
        assert!(!m.is_empty(), "{what}: no message");
        let _ = c;
        m
    };
    // Out of order.
    let s = c.do_step(0.0, 0.1);
    let m = err(&mut c, s, "doStep before initialization");
    assert!(
        m.contains("fmi2DoStep") && m.contains("instantiated"),
        "{m}"
    );
    let s = c.exit_initialization_mode();
    err(&mut c, s, "exit before enter");
    let s = c.terminate();
    err(&mut c, s, "terminate before initialization");
    assert!(c.get_state(None).is_err());
    assert_eq!(c.setup_experiment(0.0, Some(-1.0)), Status::Error);
    assert!(last_message(&log).contains("before the start time"));
    assert_eq!(c.setup_experiment(f64::NAN, None), Status::Error);
    assert_eq!(c.setup_experiment(0.0, Some(1.0)), Status::Ok);
    assert_eq!(c.enter_initialization_mode(), Status::Ok);
    let s = c.setup_experiment(0.0, None);
    err(&mut c, s, "setup in initialization mode");
    let s = c.enter_initialization_mode();
    err(&mut c, s, "enter twice");
    assert_eq!(c.exit_initialization_mode(), Status::Ok);

    // Unknown value references, outputs and fixed parameters.
    let mut out = [0.0];
    let s = c.get_real(&[9999], &mut out);
    assert!(err(&mut c, s, "unknown vr").contains("9999"));
    let s = c.set_real(&[9999], &[1.0]);
    err(&mut c, s, "unknown vr set");
    let q = vr(&c, "ball.q[0]");
    let s = c.set_real(&[q], &[1.0]);
    assert!(err(&mut c, s, "set output").contains("output"));
    let radius = vr(&c, "radius");
    let s = c.set_real(&[radius], &[0.2]);
    assert!(err(&mut c, s, "fixed parameter").contains("fixed"));
    let push = vr(&c, "push");
    let s = c.set_real(&[push], &[f64::INFINITY]);
    err(&mut c, s, "infinite input");
    let s = c.no_such_type("fmi2GetInteger", &[0]);
    err(&mut c, s, "integer");
    assert_eq!(c.no_such_type("fmi2GetInteger", &[]), Status::Ok);

    // Bad steps.
    for h in [0.0, -0.005, f64::NAN, f64::INFINITY] {
        let s = c.do_step(0.0, h);
        assert!(err(&mut c, s, "bad step").contains("step size"), "{h}");
    }
    let s = c.do_step(0.5, 0.005);
    assert!(err(&mut c, s, "wrong time").contains("currentCommunicationPoint"));
    let s = c.set_debug_logging(true, &["logNoSuchThing"]);
    err(&mut c, s, "unknown category");

    // Nothing above changed the instance.
    assert_eq!(c.phase(), Phase::StepMode);
    let (mut fresh, _) = instance("bouncing_ball.toml", &[]);
    start(&mut fresh, Some(1.0));
    assert_eq!(steps(&mut c, 100, 0.005), steps(&mut fresh, 100, 0.005));

    // Past the stop time: discarded, nothing computed.
    let before = outputs(&mut c);
    assert_eq!(c.do_step(0.5, 0.6), Status::Discard);
    assert!(c.terminated());
    assert_eq!(c.phase(), Phase::StepDiscarded);
    assert_eq!(outputs(&mut c), before);
    assert!((c.last_successful_time() - 0.5).abs() < 1e-12);
    assert_eq!(c.do_step(0.5, 0.005), Status::Error);
    assert_eq!(c.terminate(), Status::Ok);
    assert_eq!(c.do_step(0.5, 0.005), Status::Error);
    assert!(last_message(&log).contains("terminated"));
}

#[test]
fn logging_follows_the_categories() {
    let (mut c, log) = instance("bouncing_ball.toml", &[]);
    start(&mut c, None);
    steps(&mut c, 2, 0.005);
    assert!(log.lock().unwrap().is_empty(), "logging is off");
    assert_eq!(c.set_debug_logging(true, &["logEvents"]), Status::Ok);
    steps(&mut c, 2, 0.005);
    {
        let l = log.lock().unwrap();
        assert_eq!(l.len(), 2);
        assert!(l
            .iter()
            .all(|(_, cat, m)| cat == "logEvents" && m.starts_with("step to t")));
    }
    assert_eq!(c.set_debug_logging(true, &[]), Status::Ok);
    steps(&mut c, 1, 0.005);
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|(_, cat, m)| cat == "logCalls" && m.starts_with("fmi2DoStep")));
}

#[test]
fn a_failed_simulation_step_is_an_error_state_left_by_restoring_a_state() {
    // Gauss–Seidel with a tunable iteration limit: one sweep cannot solve
    // the coupled contacts of a resting column.
    let text = std::fs::read_to_string(example("beads_column.toml"))
        .unwrap()
        .replace("t_end = 1\n", "t_end = 1\niters = 10000\n")
        .replace(
            "step = \"step\"\n",
            "step = \"step\"\nsolver = \"pgs\"\nmax_iterations = \"iters\"\n",
        )
        + "\n[fmi]\ntunable = [\"iters\"]\n";
    assert!(text.contains("iters = 10000") && text.contains("\"pgs\""));
    let (mut c, log) = instance_of(
        text,
        example("beads_column.toml"),
        &[("beads", "5"), ("gap", "0")],
    );
    start(&mut c, None);
    // From t0 (λ = 0, no warm start to help the solver).
    let saved = c.get_state(None).unwrap().unwrap();
    let ok = steps(&mut c, 3, 0.001);
    assert_eq!(c.set_state(&saved), Status::Ok);
    let iters = vr(&c, "iters");
    assert_eq!(c.set_real(&[iters], &[1.0]), Status::Ok);
    let t = c.last_successful_time();
    assert_eq!(c.do_step(t, 0.001), Status::Error);
    assert_eq!(c.phase(), Phase::Error);
    assert!(
        last_message(&log).contains("simulation failed"),
        "{}",
        last_message(&log)
    );
    assert_eq!(c.do_step(t, 0.001), Status::Error);
    assert!(
        last_message(&log).contains("error state"),
        "{}",
        last_message(&log)
    );
    // Restoring the state saved before brings back its parameter values.
    assert_eq!(c.set_state(&saved), Status::Ok);
    assert_eq!(get(&mut c, "iters"), 10000.0);
    assert_eq!(steps(&mut c, 3, 0.001), ok);
}
