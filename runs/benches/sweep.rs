//! Benchmark of sweep points: runs per second of short runs of the
//! sliding-mode tutorial (examples/smc_tutorial.toml), every point a
//! distinct α = 1 + k/N, metric `final(controller.sigma[0])`, in one
//! thread:
//!
//! * **text per point** — each point reads the scenario text again
//!   (`Scenario::from_str`, overrides, run): what a sweep did before
//!   [`run_points`] parsed once per batch;
//! * **parsed once** — [`run_points`]: the text read once, each point a
//!   copy of the parsed scenario with its overrides.
//!
//! Both at T = 0.1 s (1 000 steps a run) and T = 0.0002 s (2 steps: the
//! cost of a run besides its steps), with where one point's time goes
//! (reading the text, building, the loop's set-up, the steps).
//!
//! Run: `cargo bench -p nonsmooth-runs --bench sweep [N]` (release build;
//! N points, default 2 000; each figure is the best of
//! `NONSMOOTH_BENCH_REPEAT` passes, default 3). Report the load average
//! beside the figures: on a shared machine they move with it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nonsmooth_runs::{run, run_points, Metric, RunOptions};
use nonsmooth_scenario::{BuildCache, Quantity, Scenario};

/// One pass over the points with the text read for every point; the
/// metric's values, to check both ways agree.
fn text_per_point(
    text: &str,
    path: &Path,
    points: &[Vec<(String, Quantity)>],
    options: &RunOptions,
    metric: &Metric,
) -> Vec<f64> {
    points
        .iter()
        .map(|p| {
            let mut s = Scenario::from_str(text, path).expect("the tutorial parses");
            for (n, v) in p {
                s.set_parameter(n, v.clone()).expect("alpha is a parameter");
            }
            let rec = run(&s, options).expect("the tutorial runs");
            metric.evaluate(&rec).expect("the column is recorded")
        })
        .collect()
}

/// The best of `repeat` timings of `f`, and its last output.
fn best<T>(repeat: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut fastest = Duration::MAX;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let o = f();
        fastest = fastest.min(t.elapsed());
        out = Some(o);
    }
    (fastest, out.expect("one pass"))
}

/// Where one point's time goes: reading the text, building the scenario
/// (fresh, and in a batch: through a [`BuildCache`] its earlier points
/// filled), setting up the loop, stepping it (best of `repeat` each).
fn parts(text: &str, path: &Path, t_end: f64, repeat: usize) -> [Duration; 5] {
    let mut fastest = [Duration::MAX; 5];
    let cache = BuildCache::default();
    for k in 0..repeat.max(1) * 50 {
        let t0 = Instant::now();
        let mut s = Scenario::from_str(text, path).expect("parse");
        s.set_parameter("t_end", t_end).expect("t_end");
        s.set_parameter("alpha", 1.0 + k as f64 * 1e-3)
            .expect("alpha");
        let t1 = Instant::now();
        let built = s.build_with(nonsmooth_runs::laws()).expect("build");
        let t2 = Instant::now();
        let cached = s
            .build_cached(nonsmooth_runs::laws(), &cache)
            .expect("build in a batch");
        let t3 = Instant::now();
        let mut cl = built.control_loop().expect("loop");
        let t4 = Instant::now();
        cl.run(|_| {}).expect("steps");
        let t5 = Instant::now();
        drop(cached);
        for (f, d) in fastest
            .iter_mut()
            .zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4])
        {
            *f = (*f).min(d);
        }
    }
    fastest
}

fn main() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/smc_tutorial.toml");
    let text = std::fs::read_to_string(&path).expect("examples/smc_tutorial.toml");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000);
    let repeat: usize = std::env::var("NONSMOOTH_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let metric: Metric = "final(controller.sigma[0])".parse().expect("metric");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for t_end in [0.1, 0.0002] {
        let points: Vec<Vec<(String, Quantity)>> = (0..n)
            .map(|k| {
                vec![
                    ("alpha".to_string(), (1.0 + k as f64 / n as f64).into()),
                    ("t_end".to_string(), t_end.into()),
                ]
            })
            .collect();
        let options = RunOptions::default();
        let (old, a) = best(repeat, || {
            text_per_point(&text, &path, &points, &options, &metric)
        });
        let (new, b) = best(repeat, || {
            run_points(
                &text,
                &path,
                &points,
                &options,
                std::slice::from_ref(&metric),
            )
        });
        for (x, o) in a.iter().zip(&b) {
            assert!(o.error.is_none(), "{:?}", o.error);
            assert_eq!(x.to_bits(), o.metrics[0].to_bits(), "both ways agree");
        }
        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        println!("{n} runs of smc_tutorial, T = {t_end} s, one thread:");
        println!(
            "  text per point : {:8.0} runs/s  ({:7.1} µs/run)",
            rate(old),
            us(old) / n as f64
        );
        println!(
            "  parsed once    : {:8.0} runs/s  ({:7.1} µs/run)  {:.2}×",
            rate(new),
            us(new) / n as f64,
            old.as_secs_f64() / new.as_secs_f64()
        );
        let [read, build, batched, set_up, steps] = parts(&text, &path, t_end, repeat);
        println!(
            "  one point      : read {:.1} µs, build {:.1} µs (in a batch {:.1} µs), \
             loop set-up {:.1} µs, steps {:.1} µs",
            us(read),
            us(build),
            us(batched),
            us(set_up),
            us(steps)
        );
    }
}
