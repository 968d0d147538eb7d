//! Two FMUs exported by `nonsmooth fmu export` (tests/fmi/smc_plant.toml:
//! the double integrator with its sensor, force as input;
//! tests/fmi/smc_controller.toml: the implicit sliding-mode law reading the
//! measurement as inputs) coupled by the co-simulation master's
//! connections with Jacobi coupling and H = 0.01 s equal libcosim
//! (libcosimpy, tests/fmi/cosim_smc.py) running the same two FMUs with the
//! same step and connections, at every communication point; and the whole
//! co-simulation rolls back bit-identically.

use std::path::{Path, PathBuf};
use std::process::Command;

use nonsmooth::simulation::{EventKind, Simulation, StepOutcome};
use nonsmooth_cosim::{CoSimulation, Connection, Fmu, FmuSpec, MasterSettings};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn venv_python() -> PathBuf {
    let dir = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/fmi-venv"));
    let py = dir.join("bin/python");
    assert!(
        py.exists(),
        "{} is missing: create the FMI tools' environment with .ci/fmi-venv",
        py.display()
    );
    py
}

fn export(dir: &Path, file: &str) -> PathBuf {
    let src = root().join("cli/tests/fmi").join(file);
    let fmu = dir.join(file.replace(".toml", ".fmu"));
    let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args([
            "fmu",
            "export",
            src.to_str().unwrap(),
            "-o",
            fmu.to_str().unwrap(),
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fmu
}

fn conn(a: &str, x: &str, b: &str, y: &str) -> Connection {
    Connection {
        from: (a.into(), x.into()),
        to: (b.into(), y.into()),
    }
}

fn master(plant: &Path, ctrl: &Path) -> CoSimulation {
    let plant = FmuSpec {
        name: "plant".into(),
        fmu: Fmu::load(plant).unwrap(),
        step: 0.01,
        parameters: vec![],
        outputs: vec!["plant.x[0]".into(), "plant.x[1]".into()],
        inputs: vec![],
    };
    let ctrl = FmuSpec {
        name: "controller".into(),
        fmu: Fmu::load(ctrl).unwrap(),
        step: 0.01,
        parameters: vec![],
        outputs: vec!["controller.u[0]".into(), "controller.sigma[0]".into()],
        inputs: vec![],
    };
    let connections = [
        conn("plant", "sensor.y[0]", "controller", "y0"),
        conn("plant", "sensor.y[1]", "controller", "y1"),
        conn("controller", "controller.u[0]", "plant", "force"),
    ];
    let settings = MasterSettings {
        t0: 0.0,
        t_end: 3.0,
        coupling: Default::default(),
        output_period: None,
        retry_discards: false,
    };
    CoSimulation::new(vec![plant, ctrl], &connections, &settings, &[]).unwrap()
}

/// (x0, x1, u, σ) after each communication step.
fn rows_of(m: &mut CoSimulation, steps: usize) -> Vec<[f64; 4]> {
    let mut rows = Vec::new();
    while rows.len() < steps {
        match m.step().unwrap() {
            StepOutcome::Advanced { .. } => {}
            StepOutcome::Finished => break,
        }
        if m.last_events()
            .iter()
            .any(|e| e.kind == EventKind::Communication)
        {
            let (p, c) = (
                m.q(nonsmooth::modelling::SystemId(0)),
                m.q(nonsmooth::modelling::SystemId(1)),
            );
            rows.push([p[0], p[1], c[0], c[1]]);
        }
    }
    rows
}

#[test]
fn two_fmus_coupled_by_connections_equal_libcosim() {
    let dir = tempfile::tempdir().unwrap();
    let plant = export(dir.path(), "smc_plant.toml");
    let ctrl = export(dir.path(), "smc_controller.toml");
    let steps = 300;
    let csv = dir.path().join("libcosim.csv");
    let out = Command::new(venv_python())
        .args([
            root().join("cli/tests/fmi/cosim_smc.py").to_str().unwrap(),
            plant.to_str().unwrap(),
            ctrl.to_str().unwrap(),
            "10000000",
            &steps.to_string(),
            csv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "libcosim: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<Vec<f64>> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    let mut m = master(&plant, &ctrl);
    let ours = rows_of(&mut m, steps);
    assert_eq!(ours.len(), steps);
    assert_eq!(theirs.len(), steps);
    for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        for j in 0..4 {
            assert!(
                (a[j] - b[j + 1]).abs() <= 1e-12 * (1.0 + b[j + 1].abs()),
                "step {}: column {j}: master {} vs libcosim {}",
                k + 1,
                a[j],
                b[j + 1]
            );
        }
    }
    // The law worked through the connections: σ = x0 + x1 went from 1 to
    // a band of the order of α·T around 0 (the one-step Jacobi delay makes
    // the discrete law chatter there).
    let last = ours.last().unwrap();
    assert!((last[0] + last[1]).abs() < 0.05, "{last:?}");
}

#[test]
fn the_whole_cosimulation_rolls_back_bit_identically() {
    let dir = tempfile::tempdir().unwrap();
    let plant = export(dir.path(), "smc_plant.toml");
    let ctrl = export(dir.path(), "smc_controller.toml");
    let mut m = master(&plant, &ctrl);
    rows_of(&mut m, 50);
    let mut saved = m.save().unwrap();
    let t_saved = m.time();
    let first = rows_of(&mut m, 100);
    m.restore(&saved).unwrap();
    assert_eq!(m.time(), t_saved);
    let second = rows_of(&mut m, 100);
    assert_eq!(first, second, "replay after restore");
    // Saving into the same slots, then rolling back again.
    m.save_into(&mut saved).unwrap();
    let third = rows_of(&mut m, 20);
    m.restore(&saved).unwrap();
    assert_eq!(rows_of(&mut m, 20), third);
}
