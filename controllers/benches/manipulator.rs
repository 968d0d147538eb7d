//! Benchmark of one 5 s cycle of the switching control of the two-link arm
//! (examples/manipulator.toml: nonlinear arm, Moreau–Jean with Newton
//! iterations, Newton impact on the tip, the controller every step) for
//! h = 1e-3, 1e-4, 1e-5, beside the CPU times the Siconos control-toolbox
//! paper gives for the same cycle (Intel Core 2 6300, 1.86 GHz, 2008).
//!
//! One run = build the loop and simulate the cycle (t = 0 … 5 s), nothing
//! recorded. Best of `NONSMOOTH_BENCH_REPEAT` runs (default 5).
//!
//! Run: `cargo bench -p nonsmooth-controllers --bench manipulator`.

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
        .unwrap_or(5);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/manipulator.toml");
    println!("| h | steps | µs per step | one cycle (best of {repeat}) | published CPU | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (h, published) in [(1e-3, 1.5), (1e-4, 11.2), (1e-5, 111.3)] {
        let mut scenario = Scenario::from_file(&file).expect("the example reads");
        scenario.set_parameter("step", h).unwrap();
        scenario.set_parameter("cycles", 1.0).unwrap();
        let built = scenario
            .build_with(Arc::new(Catalog))
            .expect("the example builds");
        let runs = if h < 1e-4 { repeat.min(2) } else { repeat };
        let mut best = f64::INFINITY;
        let mut steps = 0usize;
        for _ in 0..runs {
            let start = Instant::now();
            let mut cl = built.control_loop().expect("the loop builds");
            steps = 0;
            while let StepOutcome::Advanced { .. } = cl.step().expect("the run succeeds") {
                steps += 1;
            }
            best = best.min(start.elapsed().as_secs_f64());
            std::hint::black_box(cl.time());
        }
        println!(
            "| {h:e} | {steps} | {:.3} | {:.4} s | {published} s | {:.0}× |",
            best * 1e6 / steps as f64,
            best,
            published / best
        );
    }
}
