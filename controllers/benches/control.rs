//! Benchmark of the sliding-mode tutorial loop (examples/smc_tutorial.toml:
//! first-order plant, b(t) = (sin 50t, −sin 50t), h = 1e-4, control period
//! 1e-2, T = 1) with the implicit, explicit and OT2 laws, beside Siconos
//! 4.4's ControlZOHSimulation with LinearSMC, ExplicitLinearSMC and
//! LinearSMCOT2 (benches/siconos/siconos_control.cpp, same machine).
//!
//! One run = build the loop (laws, sensor, actuator, plant simulation),
//! simulate to T and store every step's (t, x, u) in a preallocated table,
//! as ControlZOHSimulation stores its data matrix. The scenario file is
//! parsed once. Best of `NONSMOOTH_BENCH_REPEAT` runs (default 20).
//!
//! The loop is driven as every run is: one `ControlLoop::step` call per
//! instant.
//!
//! A second scenario, `constant_b` (benches/data/smc_tutorial_constant_b.toml,
//! used by this benchmark only), is the tutorial with b(t) replaced by a
//! constant vector: the cost of the loop without the sine and its
//! expression (issue 15's floor, docs/simulation-benchmark.md).
//!
//! Run: `cargo bench -p nonsmooth-controllers --bench control [tutorial |
//! constant_b]` (both without a name).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use nonsmooth::simulation::StepOutcome;
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

fn main() {
    let repeat: usize = std::env::var("NONSMOOTH_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenarios = [
        ("tutorial", root.join("examples/smc_tutorial.toml")),
        (
            "constant_b",
            root.join("benches/data/smc_tutorial_constant_b.toml"),
        ),
    ];
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!("| scenario | law | steps | µs per step (best of {repeat}) | whole run [ms] |");
    println!("|---|---|---:|---:|---:|");
    for (name, file) in &scenarios {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        run_scenario(name, file, repeat);
    }
}

/// Runs one scenario with each of the three laws and prints its lines.
fn run_scenario(name: &str, file: &Path, repeat: usize) {
    for law in ["smc_implicit", "smc_explicit", "smc_ot2"] {
        let mut scenario = Scenario::from_file(file).expect("the example reads");
        scenario.set_parameter("law", law).unwrap();
        let built = scenario
            .build_with(Arc::new(Catalog))
            .expect("the example builds");
        let plant = built.model.system_id("plant").unwrap();
        let steps =
            ((built.settings.t_end - built.settings.t0) / built.settings.step).round() as usize;
        let mut table = vec![[0.0f64; 4]; steps + 1];
        let mut best = f64::INFINITY;
        for _ in 0..repeat {
            let start = Instant::now();
            let mut cl = built.control_loop().expect("the loop builds");
            let ctl = cl.controller_id("controller").unwrap();
            let mut k = 0;
            while let StepOutcome::Advanced { t, .. } = cl.step().expect("the run succeeds") {
                let x = cl.plant().q(plant);
                table[k] = [t, x[0], x[1], cl.controller_input(ctl)[0]];
                k += 1;
            }
            best = best.min(start.elapsed().as_secs_f64());
            assert_eq!(k, steps + 1);
            std::hint::black_box(&table);
        }
        println!(
            "| {name} | {law} | {steps} | {:.4} | {:.3} |",
            best * 1e6 / steps as f64,
            best * 1e3
        );
    }
}
