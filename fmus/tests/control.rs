//! FMU instances of scenarios with sensors and controllers run the control
//! loop: outputs (plant, sensor values, controller inputs and signals)
//! equal the native loop at every communication point, initialization
//! outputs are the row at t₀, rollback is bit-identical (in memory, through
//! bytes, into another instance) with values in transit on delay lines,
//! tunable law parameters act from the next step, and inputs reach the
//! loop.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nonsmooth::simulation::{StepOutcome, Strategy};
use nonsmooth_fmus::config::{make_runner, FmuConfig};
use nonsmooth_fmus::instance::{Instance, Status};
use nonsmooth_fmus::runner::{Runner, ScenarioRunner};
use nonsmooth_scenario::Scenario;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn text_of(name: &str) -> String {
    std::fs::read_to_string(example(name)).unwrap()
}

fn instance(text: &str, overrides: &[(&str, &str)]) -> Instance<ScenarioRunner> {
    let cfg = FmuConfig {
        format: 1,
        guid: "{control}".into(),
        model_identifier: "control".into(),
        fmi_version: 2,
        scenario: "scenario.toml".into(),
        overrides: overrides
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    };
    let text = text.to_string();
    let comp = Instance::fmi2(
        Box::new(move || make_runner(&cfg, &text, Path::new("scenario.toml"))),
        Box::new(|_, _, _| {}),
        false,
    )
    .unwrap();
    comp
}

/// The rows of the native loop (as `nonsmooth run` writes them).
fn native(text: &str, overrides: &[(&str, &str)]) -> Vec<Vec<f64>> {
    let mut s = Scenario::from_str(text, "scenario.toml").unwrap();
    for (k, v) in overrides {
        s.set_parameter(k, nonsmooth_fmus::runner::quantity(v))
            .unwrap();
    }
    let built = s
        .build_with(Arc::new(nonsmooth_controllers::Catalog))
        .unwrap();
    let mut cl = built.control_loop_with(Strategy::TimeStepping).unwrap();
    let mut row = vec![0.0; built.header().len()];
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        if cl.plant().is_output_instant() {
            built.row(&cl, &mut row);
            rows.push(row.clone());
        }
    }
    rows
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

fn outputs(c: &mut Instance<ScenarioRunner>) -> Vec<f64> {
    let vrs: Vec<u32> = c
        .runner()
        .interface()
        .outputs()
        .map(|v| v.value_reference)
        .collect();
    let mut out = vec![0.0; vrs.len()];
    assert_eq!(c.get_real(&vrs, &mut out), Status::Ok);
    out
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn start(c: &mut Instance<ScenarioRunner>) {
    assert_eq!(c.setup_experiment(0.0, None), Status::Ok);
    assert_eq!(c.enter_initialization_mode(), Status::Ok);
    assert_eq!(c.exit_initialization_mode(), Status::Ok);
}

fn steps(c: &mut Instance<ScenarioRunner>, n: usize, h: f64) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            let t = c.last_successful_time();
            assert_eq!(c.do_step(t, h), Status::Ok, "step from {t}");
            bits(&outputs(c))
        })
        .collect()
}

#[test]
fn control_fmus_give_the_native_loop_at_every_communication_point() {
    type Sets = &'static [(&'static str, &'static str)];
    let cases: [(&str, Sets, f64); 4] = [
        ("smc_tutorial.toml", &[("t_end", "0.3")], 1e-4),
        (
            "smc_tutorial.toml",
            &[("t_end", "0.3"), ("law", "smc_improved")],
            1e-4,
        ),
        (
            "smc_double_integrator.toml",
            &[("sensor_delay", "0.025"), ("actuator_delay", "0.013")],
            1e-3,
        ),
        ("observer.toml", &[], 0.01),
    ];
    for (file, sets, h) in cases {
        let text = text_of(file);
        let rows = native(&text, sets);
        let mut c = instance(&text, sets);
        assert_eq!(c.setup_experiment(0.0, None), Status::Ok);
        assert_eq!(c.enter_initialization_mode(), Status::Ok);
        // Initialization outputs: the row at t0 (after the t0 captures and
        // computations).
        assert_eq!(outputs(&mut c), rows[0][1..], "{file}: t0");
        assert_eq!(c.exit_initialization_mode(), Status::Ok);
        assert_eq!(outputs(&mut c), rows[0][1..], "{file}: t0");
        let mut k = 0;
        for (n, every) in [(40, 1), (20, 3), (10, 10), (5, 7)] {
            for _ in 0..n {
                let t = c.last_successful_time();
                assert_eq!(c.do_step(t, every as f64 * h), Status::Ok);
                k += every;
                assert_eq!(outputs(&mut c), rows[k][1..], "{file} {sets:?}: row {k}");
            }
        }
    }
}

#[test]
fn control_fmu_rollback_is_bit_identical_with_values_in_transit() {
    let text = text_of("smc_double_integrator.toml");
    let sets = [("sensor_delay", "0.025"), ("actuator_delay", "0.013")];
    let mut c = instance(&text, &sets);
    start(&mut c);
    steps(&mut c, 137, 1e-3);
    let saved = c.get_state(None).unwrap().unwrap();
    let first = steps(&mut c, 300, 2e-3);
    assert_eq!(c.set_state(&saved), Status::Ok);
    assert_eq!(steps(&mut c, 300, 2e-3), first);

    // Serialized, then read by another instance.
    let bytes = c.runner().serialize_state(&saved);
    let mut other = instance(&text, &sets);
    start(&mut other);
    let read = other.runner().deserialize_state(&bytes).unwrap();
    assert_eq!(read, saved);
    assert_eq!(other.set_state(&read), Status::Ok);
    assert_eq!(steps(&mut other, 300, 2e-3), first);
    // Damaged bytes are refused.
    for n in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(other.runner().deserialize_state(&bytes[..n]).is_err());
    }

    // Overwritten in place, and set back.
    let mut slot = saved.clone();
    assert!(c.get_state(Some(&mut slot)).unwrap().is_none());
    assert_ne!(slot, saved);
    assert_eq!(c.set_state(&saved), Status::Ok);
    assert_eq!(steps(&mut c, 300, 2e-3), first);
}

#[test]
fn a_tunable_law_parameter_acts_from_the_next_step_and_a_period_cannot_change() {
    let text = format!(
        "{}\n[fmi]\ntunable = [\"alpha\", \"control_period\"]\n",
        text_of("smc_double_integrator.toml")
    );
    let mut a = instance(&text, &[]);
    let mut b = instance(&text, &[]);
    start(&mut a);
    start(&mut b);
    steps(&mut a, 50, 0.01);
    steps(&mut b, 50, 0.01);
    let saved = b.get_state(None).unwrap().unwrap();
    let alpha = vr(&b, "alpha");
    assert_eq!(b.set_real(&[alpha], &[0.5]), Status::Ok);
    let ra = steps(&mut a, 100, 0.01);
    let rb = steps(&mut b, 100, 0.01);
    // σ (1 at t0) decreases at the rate α: slower with α = 0.5.
    let sigma = vr(&a, "controller.sigma[0]") as usize - a.runner().interface().parameters;
    let at = |r: &Vec<Vec<u64>>, k: usize| f64::from_bits(r[k][sigma]);
    assert!(
        at(&rb, 20) > at(&ra, 20) + 0.05,
        "{} {}",
        at(&ra, 20),
        at(&rb, 20)
    );
    // A period is part of the loop's schedule: refused, value kept.
    let period = vr(&b, "control_period");
    assert_eq!(b.set_real(&[period], &[0.02]), Status::Error);
    let mut got = [0.0];
    assert_eq!(b.get_real(&[period], &mut got), Status::Ok);
    assert_eq!(got, [0.01]);
    // The state saved before brings α = 1 back.
    assert_eq!(b.set_state(&saved), Status::Ok);
    assert_eq!(b.get_real(&[alpha], &mut got), Status::Ok);
    assert_eq!(got, [1.0]);
    let mut c = instance(&text, &[]);
    start(&mut c);
    steps(&mut c, 50, 0.01);
    assert_eq!(steps(&mut b, 100, 0.01), steps(&mut c, 100, 0.01));
}

#[test]
fn inputs_add_to_the_actuators_input() {
    // A force on the plant's second state, set by the host before
    // initialization, gives the run of the scenario whose input starts at
    // that value.
    let with_start = |start: f64| {
        format!(
            "{}\n[fmi]\ninputs = [{{ name = \"push\", target = \"plant.g[1]\", start = {start} }}]\n",
            text_of("smc_double_integrator.toml")
        )
    };
    let rows = native(&with_start(0.3), &[]);
    let mut c = instance(&with_start(0.0), &[]);
    let push = vr(&c, "push");
    assert_eq!(c.set_real(&[push], &[0.3]), Status::Ok);
    start(&mut c);
    assert_eq!(outputs(&mut c), rows[0][1..]);
    for (k, row) in rows.iter().enumerate().take(301).skip(1) {
        steps(&mut c, 1, 1e-3);
        assert_eq!(outputs(&mut c), row[1..], "row {k}");
    }
    // The input is a matched perturbation: the implicit law keeps σ at 0
    // once reached, u_eq + u_s compensating it.
    assert_ne!(native(&with_start(0.0), &[])[300], rows[300]);
}
