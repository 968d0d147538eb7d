//! Benchmark of building a scenario: parsing `examples/beads_column.toml`,
//! `Scenario::build` and creating the control loop (everything before the
//! first step), for columns of 100, 1 000 and 10 000 beads (each bead is
//! one repeated `[[systems]]` entry and one repeated `[[interactions]]`
//! entry).
//!
//! Run: `cargo bench -p nonsmooth-scenario --bench build [BEADS...]`
//! (release build). Each size is built `NONSMOOTH_BENCH_REPEAT` times
//! (default 5); the figure is the best run, in ms, with its parts and the
//! cost per bead.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use nonsmooth_scenario::Scenario;

/// Times of one build: parse, `Scenario::build`, control loop.
fn build_once(text: &str, beads: usize) -> [Duration; 3] {
    let t0 = Instant::now();
    let mut scenario = Scenario::from_str(text, "beads_column.toml").expect("parse");
    scenario
        .set_parameter("beads", beads as f64)
        .expect("beads parameter");
    let t1 = Instant::now();
    let built = scenario.build().expect("build");
    let t2 = Instant::now();
    let run = built.control_loop().expect("control loop");
    let t3 = Instant::now();
    std::hint::black_box(&run);
    [t1 - t0, t2 - t1, t3 - t2]
}

fn main() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/beads_column.toml");
    let text = std::fs::read_to_string(&path).expect("examples/beads_column.toml");
    let repeat: usize = std::env::var("NONSMOOTH_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1_000, 10_000]
    } else {
        sizes
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "beads", "total ms", "parse ms", "build ms", "loop ms", "µs/bead"
    );
    for beads in sizes {
        let best = (0..repeat.max(1))
            .map(|_| build_once(&text, beads))
            .min_by_key(|p| p.iter().sum::<Duration>())
            .expect("one run");
        let total: Duration = best.iter().sum();
        println!(
            "{beads:>8} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            ms(total),
            ms(best[0]),
            ms(best[1]),
            ms(best[2]),
            total.as_secs_f64() * 1e6 / beads as f64
        );
    }
}
