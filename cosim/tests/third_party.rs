//! A third-party FMU: a mass–spring–damper with an input force written as a
//! Python class (tests/pythonfmu/msd.py) and packaged by `pythonfmu`
//! (PyPI; in the FMI virtual environment) as an FMI 2.0 co-simulation FMU
//! stepped by its own integrator (semi-implicit Euler, 10 substeps per
//! communication step). Checked
//! * in a closed loop (the control loop's sensor and a PD law acting on the
//!   FMU's input through the master) against a hand-written recursion of
//!   the same sampled system, and
//! * in open loop with the input sequence F_k = sin(0.7 k) against FMPy
//!   driving the same FMU with the same inputs.
//!
//! pythonfmu's binary takes the Python C API from the host process, so the
//! checks run in a child process of this test binary with libpython
//! preloaded (`LD_PRELOAD`); the outer tests start it and fail with its
//! output when it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use nalgebra::DMatrix;
use nonsmooth::control::{
    ActuatorSpec, ControlError, ControlLoopBuilder, Controller, ControllerSetup, InputMap,
    Measurement, SensorSpec, Timing,
};
use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::{EventKind, Simulation, StepOutcome};
use nonsmooth_cosim::{CoSimulation, Fmu, FmuSpec, MasterSettings};

const H: f64 = 0.05;
const STEPS: usize = 100;
const SUBSTEPS: usize = 10;
const M: f64 = 1.0;
const K: f64 = 4.0;
const C: f64 = 0.4;
const KP: f64 = 3.0;
const KD: f64 = 2.0;

fn build_fmu(dir: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pythonfmu/msd.py");
    let out = Command::new(common::venv_python())
        .args(["-m", "pythonfmu", "build", "-f"])
        .arg(&script)
        .arg("-d")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pythonfmu build (is pythonfmu in the FMI venv? .ci/fmi-requirements.txt): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("Msd.fmu")
}

fn libpython() -> String {
    let out = Command::new(common::venv_python())
        .args([
            "-c",
            "import sysconfig, os; print(os.path.join(sysconfig.get_config_var('LIBDIR'), sysconfig.get_config_var('LDLIBRARY')))",
        ])
        .output()
        .unwrap();
    let path = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        Path::new(&path).exists(),
        "{path} (the venv Python's shared libpython, which pythonfmu's binary needs in the host) is missing; on Debian: apt-get install libpython3-dev"
    );
    path
}

/// Runs the ignored test `name` of this binary in a child process with
/// libpython preloaded and the FMU's path in NONSMOOTH_PYFMU.
fn in_child(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let fmu = build_fmu(dir.path());
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LD_PRELOAD", libpython())
        .env("NONSMOOTH_PYFMU", &fmu)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran no test: {text}");
}

fn fmu_from_env() -> PathBuf {
    PathBuf::from(std::env::var_os("NONSMOOTH_PYFMU").expect("run by the outer test"))
}

fn master(fmu: &Path) -> CoSimulation {
    let spec = FmuSpec {
        name: "msd".into(),
        fmu: Fmu::load(fmu).unwrap(),
        step: H,
        parameters: vec![("k".into(), K), ("c".into(), C), ("m".into(), M)],
        outputs: vec!["x".into(), "v".into()],
        inputs: vec!["F".into()],
    };
    let settings = MasterSettings {
        t0: 0.0,
        t_end: H * STEPS as f64,
        coupling: Default::default(),
        output_period: None,
        retry_discards: false,
    };
    CoSimulation::new(vec![spec], &[], &settings, &[("control period", H)]).unwrap()
}

/// One communication step of the FMU's integrator, written again here.
fn recursion_step(x: &mut f64, v: &mut f64, f: f64) {
    let dt = H / SUBSTEPS as f64;
    for _ in 0..SUBSTEPS {
        *v += dt * (-K * *x - C * *v + f) / M;
        *x += dt * *v;
    }
}

/// u = −(kp y₀ + kd y₁).
struct Pd;

impl Controller for Pd {
    fn law(&self) -> &'static str {
        "pd"
    }
    fn initialize(&mut self, _: &ControllerSetup) -> Result<(), ControlError> {
        Ok(())
    }
    fn compute(&mut self, _: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = -(KP * y[0] + KD * y[1]);
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

#[test]
#[ignore = "run in a child process with libpython preloaded by pythonfmu_closed_loop_matches_the_recursion"]
fn child_closed_loop() {
    let cosim = master(&fmu_from_env());
    let mut b = ControlLoopBuilder::new(cosim.model().clone());
    let sensor = b
        .add_sensor(
            "sensor",
            SensorSpec {
                system: SystemId(0),
                c: DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
                timing: Timing::periodic(H),
            },
        )
        .unwrap();
    b.add_controller(
        "pd",
        Measurement::Sensor(sensor),
        Box::new(Pd),
        ActuatorSpec {
            system: SystemId(0),
            input: InputMap::Matrix(DMatrix::from_row_slice(3, 1, &[0.0, 0.0, 1.0])),
            timing: Timing::periodic(H),
            u0: None,
        },
    )
    .unwrap();
    let mut run = b.build(Box::new(cosim)).unwrap();
    let (mut x, mut v) = (1.0, 0.0);
    let mut n = 0;
    while let StepOutcome::Advanced { .. } = run.step().unwrap() {
        if !run
            .plant()
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::Communication)
        {
            continue;
        }
        let f = -(KP * x + KD * v);
        recursion_step(&mut x, &mut v, f);
        let q = run.plant().q(SystemId(0));
        assert!(
            (q[0] - x).abs() <= 1e-12 && (q[1] - v).abs() <= 1e-12,
            "step {n}: {q:?} vs ({x}, {v})"
        );
        n += 1;
    }
    assert_eq!(n, STEPS);
    // The loop is stable: the state decays.
    assert!(x.abs() < 0.05 && v.abs() < 0.05, "({x}, {v})");
}

#[test]
fn pythonfmu_closed_loop_matches_the_recursion() {
    in_child("child_closed_loop");
}

#[test]
#[ignore = "run in a child process with libpython preloaded by pythonfmu_open_loop_matches_fmpy"]
fn child_open_loop() {
    let fmu = fmu_from_env();
    // FMPy drives the same FMU with F_k = sin(0.7 k) over (t_k, t_k+1].
    let script = format!(
        "import math\n\
         from fmpy import read_model_description, extract\n\
         from fmpy.fmi2 import FMU2Slave\n\
         md = read_model_description({fmu:?})\n\
         d = extract({fmu:?})\n\
         vr = {{v.name: v.valueReference for v in md.modelVariables}}\n\
         s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier, instanceName='msd')\n\
         s.instantiate()\n\
         s.setReal([vr['k'], vr['c'], vr['m']], [{K:?}, {C:?}, {M:?}])\n\
         s.setupExperiment(startTime=0.0)\n\
         s.enterInitializationMode()\n\
         s.exitInitializationMode()\n\
         for k in range({STEPS}):\n\
         \x20   s.setReal([vr['F']], [math.sin(0.7 * k)])\n\
         \x20   s.doStep(currentCommunicationPoint=k * {H:?}, communicationStepSize={H:?})\n\
         \x20   x, v = s.getReal([vr['x'], vr['v']])\n\
         \x20   print(repr(x), repr(v))\n",
        fmu = fmu.display().to_string()
    );
    let out = Command::new(common::venv_python())
        .args(["-c", &script])
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fmpy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<(f64, f64)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut it = l.split(' ').map(|x| x.parse::<f64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    assert_eq!(theirs.len(), STEPS);
    let mut m = master(&fmu);
    let mut n = 0;
    m.step().unwrap(); // the instant t0
    m.set_system_input(SystemId(0), &[0.0, 0.0, 0.0f64.sin()])
        .unwrap();
    while let StepOutcome::Advanced { .. } = m.step().unwrap() {
        let q = m.q(SystemId(0)).to_vec();
        let (x, v) = theirs[n];
        assert!(
            (q[0] - x).abs() <= 1e-12 && (q[1] - v).abs() <= 1e-12,
            "step {n}: {q:?} vs FMPy ({x}, {v})"
        );
        n += 1;
        m.set_system_input(SystemId(0), &[0.0, 0.0, (0.7 * n as f64).sin()])
            .unwrap();
    }
    assert_eq!(n, STEPS);
}

#[test]
fn pythonfmu_open_loop_matches_fmpy() {
    in_child("child_open_loop");
}
