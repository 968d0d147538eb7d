//! The master's overhead per communication step and FMU beyond the FMU's
//! own work: the Reference FMU Dahlquist stepped N times directly
//! (fmi2DoStep + fmi2GetReal of its output) and by the master
//! (`CoSimulation::step`, one exposed output); the difference per step is
//! the master's overhead (clock, events, publication). Median of 7 runs.
//!
//! Needs the FMI 2.0 Reference FMUs (built like the tests do:
//! `cargo test -p nonsmooth-cosim --test reference_fmus` builds them into
//! the target directory).

use std::path::PathBuf;
use std::time::Instant;

use nonsmooth::simulation::{Simulation, StepOutcome};
use nonsmooth_cosim::{CoSimulation, Coupling, Fmu, FmuSpec, Instance, MasterSettings};

const N: usize = 200_000;
const H: f64 = 0.1;

fn fmu_path() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let p = target.join("reference-fmus-2/fmus/Dahlquist.fmu");
    assert!(
        p.exists(),
        "{} is missing: run `cargo test --release -p nonsmooth-cosim --test reference_fmus` first",
        p.display()
    );
    p
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn direct(fmu: &std::sync::Arc<Fmu>) -> f64 {
    let mut inst = Instance::new(fmu, "direct").unwrap();
    // k = 0: x stays 1, no underflow over many steps.
    inst.set_start("k", 0.0).unwrap();
    inst.initialize(0.0, None).unwrap();
    let vr = [inst.variable("x").unwrap().value_reference];
    let mut x = [0.0];
    let start = Instant::now();
    for n in 1..=N {
        inst.do_step(H, n as f64 * H).unwrap();
        inst.get_real(&vr, &mut x).unwrap();
    }
    std::hint::black_box(x);
    start.elapsed().as_secs_f64() / N as f64
}

fn master(fmu: &std::sync::Arc<Fmu>) -> f64 {
    let spec = FmuSpec {
        name: "dahlquist".into(),
        fmu: fmu.clone(),
        step: H,
        parameters: vec![("k".into(), 0.0)],
        outputs: vec!["x".into()],
        inputs: vec![],
    };
    let settings = MasterSettings {
        t0: 0.0,
        t_end: N as f64 * H,
        coupling: Coupling::Jacobi,
        output_period: None,
        retry_discards: false,
    };
    let mut m = CoSimulation::new(vec![spec], &[], &settings, &[]).unwrap();
    let start = Instant::now();
    let mut steps = 0usize;
    while let StepOutcome::Advanced { .. } = m.step().unwrap() {
        steps += 1;
    }
    let t = start.elapsed().as_secs_f64();
    // N communication instants after t0, plus the instant t0 itself.
    assert_eq!(steps, N + 1);
    t / N as f64
}

fn main() {
    let fmu = Fmu::load(fmu_path()).unwrap();
    let d = median((0..7).map(|_| direct(&fmu)).collect());
    let m = median((0..7).map(|_| master(&fmu)).collect());
    println!("Dahlquist (Reference FMU), {N} communication steps, median of 7:");
    println!("  doStep + getReal directly : {:8.3} µs/step", d * 1e6);
    println!("  through the master        : {:8.3} µs/step", m * 1e6);
    println!(
        "  master overhead           : {:8.3} µs/step/FMU",
        (m - d) * 1e6
    );
}
