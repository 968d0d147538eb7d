//! What early return costs on an event-driven FMI 3.0 FMU: the bouncing
//! ball of `cli/tests/fmi/ball_event_driven.toml` run to T = 10 s with
//! communication steps of 0.1 s through the FMI 3.0 instance, with and
//! without early return, against the native event-driven run (the same
//! simulation without the FMU layer). Prints µs per run and the number of
//! doStep calls.
//! `cargo run --release -p nonsmooth-fmus --example fmu3_cost` (figures in
//! docs/fmi.md).

use std::path::Path;
use std::time::Instant;

use nonsmooth::simulation::StepOutcome;
use nonsmooth_fmus::config::{make_runner, FmuConfig};
use nonsmooth_fmus::instance::{Instance, Status};
use nonsmooth_fmus::runner::ScenarioRunner;
use nonsmooth_scenario::Scenario;

const RUNS: usize = 50;

fn instance(path: &Path, early: bool) -> Instance<ScenarioRunner> {
    let text = std::fs::read_to_string(path).unwrap();
    let path = path.to_path_buf();
    let cfg = FmuConfig {
        format: 1,
        guid: "{cost}".into(),
        model_identifier: "cost".into(),
        fmi_version: 3,
        scenario: "scenario.toml".into(),
        overrides: vec![],
    };
    Instance::fmi3(
        Box::new(move || make_runner(&cfg, &text, &path)),
        Box::new(|_, _, _| {}),
        false,
        early,
        early,
    )
    .unwrap()
}

/// One FMU run to 10 s; the number of doStep calls.
fn fmu_run(path: &Path, early: bool) -> usize {
    let mut inst = instance(path, early);
    assert_eq!(
        inst.enter_initialization_mode_at(0.0, Some(10.0)),
        Status::Ok
    );
    assert_eq!(inst.exit_initialization_mode(), Status::Ok);
    if early {
        inst.update_discrete_states().unwrap();
        assert_eq!(inst.enter_step_mode(), Status::Ok);
    }
    let (mut t, mut k, mut calls) = (0.0f64, 0usize, 0usize);
    while k < 100 {
        let target = (k + 1) as f64 * 0.1;
        let (s, out) = inst.step(t, target - t);
        assert_eq!(s, Status::Ok);
        calls += 1;
        if out.early_return {
            t = out.last_successful_time;
        } else {
            t = target;
            k += 1;
        }
        if out.event_handling_needed {
            assert_eq!(inst.enter_event_mode(), Status::Ok);
            inst.update_discrete_states().unwrap();
            assert_eq!(inst.enter_step_mode(), Status::Ok);
        }
    }
    calls
}

fn main() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fmi/ball_event_driven.toml");
    let built = Scenario::from_file(&path)
        .unwrap()
        .build_with(nonsmooth_fmus::runner::laws())
        .unwrap();
    let t = Instant::now();
    for _ in 0..RUNS {
        let mut cl = built.control_loop().unwrap();
        while let StepOutcome::Advanced { .. } = cl.step().unwrap() {}
    }
    let native = t.elapsed().as_secs_f64() * 1e6 / RUNS as f64;
    let mut report = vec![format!("native event-driven run: {native:.0} µs")];
    for early in [false, true] {
        let t = Instant::now();
        let mut calls = 0;
        for _ in 0..RUNS {
            calls = fmu_run(&path, early);
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / RUNS as f64;
        report.push(format!(
            "FMI 3.0, early return {early}: {us:.0} µs per run ({calls} doStep calls, {:.1} µs each)",
            us / calls as f64
        ));
    }
    for line in report {
        println!("{line}");
    }
}
