//! Round trip: a plant-only scenario (the double integrator) exported with
//! `nonsmooth fmu export`, imported back by the co-simulation master
//! (nonsmooth-cosim) and closed with the implicit sliding-mode law equals
//! the native closed loop of examples/smc_double_integrator.toml at every
//! control instant.
//!
//! Timing: the loop's controller acts at each communication point before
//! the FMU steps (actuator events precede the master's next doStep), so the
//! input over (t_k, t_k + T] is u_k = law(x(t_k)) in both runs: no
//! communication delay arises between the loop and one FMU (the Jacobi
//! delay of one step applies only between FMUs coupled by connections).

use std::path::{Path, PathBuf};
use std::process::Command;

use nalgebra::DMatrix;
use nonsmooth::control::{
    ActuatorSpec, ControlLoopBuilder, InputMap, Measurement, SensorSpec, Timing,
};
use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::{EventKind, Simulation, StepOutcome};
use nonsmooth_controllers::ImplicitSmc;
use nonsmooth_cosim::{CoSimulation, Fmu, FmuSpec, MasterSettings, WithNominalPlant};
use nonsmooth_scenario::Scenario;

const PLANT: &str = r#"
name = "double_integrator_plant"
[parameters]
step = 1e-3
t_end = 5
[simulation]
t_end = "t_end"
step = "step"
first_order_scheme = "zero_order_hold"
[[systems]]
name = "plant"
type = "first_order_linear"
x0 = [1, 0]
A = [[0, 1], [0, 0]]
[output]
record = ["plant.x"]
[fmi]
inputs = [{ name = "u", target = "plant.g[1]" }]
"#;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn export_plant(dir: &Path) -> PathBuf {
    let toml = dir.join("double_integrator_plant.toml");
    std::fs::write(&toml, PLANT).unwrap();
    let fmu = dir.join("double_integrator_plant.fmu");
    let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args([
            "fmu",
            "export",
            toml.to_str().unwrap(),
            "-o",
            fmu.to_str().unwrap(),
        ])
        .current_dir(manifest())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fmu
}

/// (t, x₀, x₁, u) at every instant where a controller acted.
type Rows = Vec<[f64; 4]>;

fn native() -> Rows {
    let scenario =
        Scenario::from_file(manifest().join("../examples/smc_double_integrator.toml")).unwrap();
    let built = scenario
        .build_with(std::sync::Arc::new(nonsmooth_controllers::Catalog))
        .unwrap();
    let mut run = built.control_loop().unwrap();
    let c = run.controller_id("controller").unwrap();
    let mut rows = Vec::new();
    let mut record = |run: &nonsmooth::control::ControlLoop| {
        if run
            .plant()
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::Actuator)
        {
            let x = run.plant().q(SystemId(0));
            rows.push([run.time(), x[0], x[1], run.controller_input(c)[0]]);
        }
    };
    record(&run);
    while let StepOutcome::Advanced { .. } = run.step().unwrap() {
        record(&run);
    }
    rows
}

fn imported(fmu: &Path) -> Rows {
    let fmu = Fmu::load(fmu).unwrap();
    let spec = FmuSpec {
        name: "plant".into(),
        fmu,
        step: 1e-2,
        parameters: vec![],
        outputs: vec!["plant.x[0]".into(), "plant.x[1]".into()],
        inputs: vec!["u".into()],
    };
    let settings = MasterSettings {
        t0: 0.0,
        t_end: 5.0,
        coupling: Default::default(),
        output_period: None,
        retry_discards: false,
    };
    let cosim = CoSimulation::new(vec![spec], &[], &settings, &[("control period", 1e-2)]).unwrap();
    let mut b = ControlLoopBuilder::new(cosim.model().clone());
    let sensor = b
        .add_sensor(
            "sensor",
            SensorSpec {
                system: SystemId(0),
                c: DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
                timing: Timing::periodic(1e-2),
            },
        )
        .unwrap();
    let law = ImplicitSmc::new(DMatrix::from_row_slice(1, 2, &[1.0, 1.0]), vec![1.0]);
    let law = WithNominalPlant::new(
        Box::new(law),
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 0.0, 0.0]),
        DMatrix::from_row_slice(2, 1, &[0.0, 1.0]),
    );
    let c = b
        .add_controller(
            "controller",
            Measurement::Sensor(sensor),
            Box::new(law),
            ActuatorSpec {
                system: SystemId(0),
                input: InputMap::Matrix(DMatrix::from_row_slice(3, 1, &[0.0, 0.0, 1.0])),
                timing: Timing::periodic(1e-2),
                u0: None,
            },
        )
        .unwrap();
    let mut run = b.build(Box::new(cosim)).unwrap();
    let mut rows = Vec::new();
    let mut record = |run: &nonsmooth::control::ControlLoop| {
        if run
            .plant()
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::Actuator)
        {
            let x = run.plant().q(SystemId(0));
            rows.push([run.time(), x[0], x[1], run.controller_input(c)[0]]);
        }
    };
    record(&run);
    while let StepOutcome::Advanced { .. } = run.step().unwrap() {
        record(&run);
    }
    rows
}

#[test]
fn imported_plant_fmu_closed_with_implicit_smc_equals_the_native_loop() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_plant(dir.path());
    let (a, b) = (native(), imported(&fmu));
    assert_eq!(a.len(), 501, "control instants of the native loop");
    assert_eq!(a.len(), b.len());
    for (r, s) in a.iter().zip(&b) {
        assert_eq!(r[0], s[0], "instants");
        for k in 1..4 {
            assert!(
                (r[k] - s[k]).abs() <= 1e-12,
                "t = {}: column {k}: native {} vs FMU {}",
                r[0],
                r[k],
                s[k]
            );
        }
    }
    // The law did its work: σ = x₀ + x₁ reached 0 (t = σ(0)/α = 1).
    let last = b.last().unwrap();
    assert!((last[1] + last[2]).abs() < 1e-9, "{last:?}");
}
