//! The boost converter of `examples/boost_smc.toml` under the implicit
//! voltage-mode sliding-mode law (one-step relay duty, PWM modulated at
//! T_c = h = 1e-7, switching period 10 µs, the load step at 5 ms) for 10 ms
//! of circuit time: 100 000 steps of the closed loop (sensor, law and
//! modulator every step, three complementarity rows: S1, S2, D1). The
//! figure is the wall time of `ControlLoop::run` (construction excluded)
//! and µs per step, the best of `NONSMOOTH_BENCH_REPEAT` runs (default 3).
//! The target: under 0.1 s.
//!
//! Run: `cargo bench -p nonsmooth-scenario --bench boost_smc`.

use std::sync::Arc;
use std::time::Instant;

use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/boost_smc.toml");
    let mut scenario = Scenario::from_file(path).expect("examples/boost_smc.toml reads");
    scenario.set_parameter("t_end", 0.01).unwrap();
    let built = scenario.build_with(Arc::new(Catalog)).unwrap();
    let repeat: usize = std::env::var("NONSMOOTH_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let mut best = f64::INFINITY;
    let mut steps = 0usize;
    let mut last = Vec::new();
    for _ in 0..repeat.max(1) {
        let mut sim = built.control_loop().unwrap();
        let mut n = 0usize;
        let start = Instant::now();
        sim.run(|_| n += 1).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        steps = n - 1;
        let mut row = vec![0.0; built.header().len()];
        built.row(&sim, &mut row);
        last = row;
    }
    let header = built.header();
    println!(
        "boost_smc (voltage_smc_implicit, h = 1e-7, 10 ms): {steps} steps in {best:.4} s \
         (best of {repeat}), {:.3} µs/step",
        best / steps as f64 * 1e6
    );
    for (name, value) in header.iter().zip(&last).take(3) {
        println!("  {name} = {value}");
    }
}
