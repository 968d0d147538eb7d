//! What the FMU layer costs: µs per fmi2DoStep (one integration step per
//! communication step) against the native step, and per FMU state save,
//! restore and serialization, for the bundled bouncing ball, a column of
//! 100 beads and two sliding-mode control loops.
//! `cargo run --release -p nonsmooth-fmus --example fmu_cost` (figures in
//! docs/fmi.md).

use std::path::Path;
use std::time::Instant;

use nonsmooth_fmus::config::{make_runner, FmuConfig};
use nonsmooth_fmus::instance::{Instance, Status};
use nonsmooth_fmus::runner::{Runner, ScenarioRunner};
use nonsmooth_scenario::Scenario;

fn instance(path: &Path, overrides: &[(&str, &str)]) -> Instance<ScenarioRunner> {
    let text = std::fs::read_to_string(path).unwrap();
    let path = path.to_path_buf();
    let cfg = FmuConfig {
        format: 1,
        guid: "{cost}".into(),
        model_identifier: "cost".into(),
        fmi_version: 2,
        scenario: "scenario.toml".into(),
        overrides: overrides
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    };
    Instance::fmi2(
        Box::new(move || make_runner(&cfg, &text, &path)),
        Box::new(|_, _, _| {}),
        false,
    )
    .unwrap()
}

fn measure(file: &str, overrides: &[(&str, &str)], steps: usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(file);
    let mut scenario = Scenario::from_file(&path).unwrap();
    for (k, v) in overrides {
        scenario
            .set_parameter(k, nonsmooth_fmus::runner::quantity(v))
            .unwrap();
    }
    let built = scenario.build_with(nonsmooth_fmus::runner::laws()).unwrap();
    let h = built.settings.step;
    // The run (the plant alone, or its control loop) as the FMU drives it.
    let native = {
        let mut cl = built
            .control_loop_with(nonsmooth::simulation::Strategy::TimeStepping)
            .unwrap();
        cl.step().unwrap();
        let t = Instant::now();
        for _ in 0..steps {
            cl.step().unwrap();
        }
        t.elapsed().as_secs_f64() * 1e6 / steps as f64
    };

    let mut c = instance(&path, overrides);
    assert_eq!(c.setup_experiment(0.0, None), Status::Ok);
    assert_eq!(c.enter_initialization_mode(), Status::Ok);
    assert_eq!(c.exit_initialization_mode(), Status::Ok);
    let vrs: Vec<u32> = c
        .runner()
        .interface()
        .outputs()
        .map(|v| v.value_reference)
        .collect();
    let mut out = vec![0.0; vrs.len()];
    let mut tc = 0.0;
    let t = Instant::now();
    for _ in 0..steps {
        assert_eq!(c.do_step(tc, h), Status::Ok);
        tc += h;
        c.get_real(&vrs, &mut out);
    }
    let fmu = t.elapsed().as_secs_f64() * 1e6 / steps as f64;

    let n = 2000;
    let t = Instant::now();
    let mut s = c.get_state(None).unwrap().unwrap();
    for _ in 0..n {
        c.get_state(Some(&mut s)).unwrap();
    }
    let get = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    for _ in 0..n {
        assert_eq!(c.set_state(&s), Status::Ok);
    }
    let set = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let mut bytes = 0;
    for _ in 0..n {
        bytes = c.runner().serialize_state(&s).len();
    }
    let ser = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!(
        "{file} {overrides:?}: native step {native:.2} µs; fmi2DoStep + fmi2GetReal({} outputs) {fmu:.2} µs; \
         get state {get:.2} µs, set state {set:.2} µs, serialize {ser:.2} µs ({bytes} bytes)",
        vrs.len()
    );
}

fn main() {
    measure("bouncing_ball.toml", &[("t_end", "2000")], 200_000);
    measure(
        "beads_column.toml",
        &[("beads", "100"), ("gap", "0"), ("t_end", "10")],
        2_000,
    );
    // Control loops: the implicit sliding-mode law (a relay problem per
    // control period), with measurements and inputs in transit.
    measure("smc_tutorial.toml", &[("t_end", "30")], 200_000);
    measure(
        "smc_double_integrator.toml",
        &[
            ("sensor_delay", "0.025"),
            ("actuator_delay", "0.013"),
            ("t_end", "300"),
        ],
        200_000,
    );
}
