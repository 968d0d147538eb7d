//! The floor under the sliding-mode tutorial's step: one call of the
//! platform's `f64::sin` (glibc's libm) at the tutorial's arguments
//! 50 t_k, t_k = k h, h = 1e-4, k = 0 … 10 000 (so 0 to 50 rad).
//!
//! * **latency**: each call waits for the one before, as in the control
//!   loop (the state x_{k+1} depends on b(t_{k+1}) through the step):
//!   x_{k+1} = sin(50 t_k + 1e-300 · x_k). The added term is below the
//!   rounding of every argument but 0, so the arguments are the
//!   tutorial's, yet the next call cannot start before the last one ends.
//! * **throughput**: the same arguments without the dependency
//!   (Σ_k sin 50 t_k), the calls free to overlap.
//!
//! Best of `NONSMOOTH_BENCH_REPEAT` sweeps (default 200) over the 10 001
//! arguments. Run: `cargo bench --bench sine`.

use std::hint::black_box;
use std::time::Instant;

const STEPS: usize = 10_000;
const H: f64 = 1e-4;

/// One latency-bound sweep: the calls form one dependency chain.
fn chained(h: f64) -> f64 {
    let mut x = 0.0f64;
    for k in 0..=STEPS {
        let t = k as f64 * h;
        x = (50.0 * t + 1e-300 * x).sin();
    }
    x
}

/// One throughput-bound sweep: independent calls, summed.
fn independent(h: f64) -> f64 {
    let mut acc = 0.0f64;
    for k in 0..=STEPS {
        let t = k as f64 * h;
        acc += (50.0 * t).sin();
    }
    acc
}

fn best_ns_per_call(repeat: usize, sweep: fn(f64) -> f64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..repeat {
        let start = Instant::now();
        black_box(sweep(black_box(H)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e9 / (STEPS + 1) as f64
}

fn main() {
    let repeat: usize = std::env::var("NONSMOOTH_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    // The chained arguments are the tutorial's own: the added term changes
    // no argument but the first (0 + 1e-300·0 = 0 there too).
    let mut x = 0.0f64;
    for k in 0..=STEPS {
        let t = k as f64 * H;
        let arg = 50.0 * t + 1e-300 * x;
        assert_eq!(arg.to_bits(), (50.0 * t).to_bits(), "argument {k}");
        x = arg.sin();
    }
    println!("| f64::sin at 50 t, t = k·1e-4 | ns per call (best of {repeat}) |");
    println!("|---|---:|");
    println!(
        "| latency (chained) | {:.2} |",
        best_ns_per_call(repeat, chained)
    );
    println!(
        "| throughput (independent) | {:.2} |",
        best_ns_per_call(repeat, independent)
    );
}
