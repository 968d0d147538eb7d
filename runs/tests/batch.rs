//! A batch (expressions parsed once, FMUs opened once: `Batch`) gives
//! every point the recording a fresh run of the same overrides gives, bit
//! for bit: after a point that failed, and when a parameter changes the
//! structure (a law, a clock period, the number of systems).
//!
//! The oracle is `nonsmooth_runs::run` on a freshly read file, which
//! shares nothing with the batch.

use std::path::{Path, PathBuf};

use nonsmooth_runs::{run, run_points, Batch, Metric, Recording, RunOptions};
use nonsmooth_scenario::{Quantity, Scenario};

fn smc() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/smc_tutorial.toml")
}

/// Bodies on a line, their number a parameter (`repeat`): a structural
/// parameter (sizes and counts change with it).
const CHAIN: &str = r#"
name = "chain"
[parameters]
n = 2
g = 9.81
d = 0.5
[simulation]
t_end = 0.05
step = 0.01
[[systems]]
name = "b{i}"
repeat = { i = "0 .. n" }
type = "lagrangian_linear"
q0 = ["i * d"]
v0 = ["sin(i + g)"]
mass = [["1 + i"]]
fext = ["-g * (1 + i)"]
"#;

fn fresh(text: &str, path: &str, set: &[(String, Quantity)]) -> Result<Recording, String> {
    let mut s = Scenario::from_str(text, path).map_err(|e| e.to_string())?;
    for (n, v) in set {
        s.set_parameter(n, v.clone()).map_err(|e| e.to_string())?;
    }
    run(&s, &RunOptions::default()).map_err(|e| e.to_string())
}

fn batched(
    batch: &mut Batch,
    base: &Scenario,
    set: &[(String, Quantity)],
) -> Result<Recording, String> {
    let mut s = base.clone();
    for (n, v) in set {
        s.set_parameter(n, v.clone()).map_err(|e| e.to_string())?;
    }
    batch
        .run(&s, &RunOptions::default())
        .map_err(|e| e.to_string())
}

fn assert_same(a: &Result<Recording, String>, b: &Result<Recording, String>, what: &str) {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.header, b.header, "{what}");
            assert_eq!(a.data.len(), b.data.len(), "{what}");
            for (k, (x, y)) in a.data.iter().zip(&b.data).enumerate() {
                assert_eq!(x.to_bits(), y.to_bits(), "{what}: value {k}: {x} vs {y}");
            }
            assert_eq!(a.steps, b.steps, "{what}");
            assert_eq!(a.solver_iterations, b.solver_iterations, "{what}");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
        _ => panic!("{what}: {a:?} vs {b:?}", a = a.is_ok(), b = b.is_ok()),
    }
}

fn set(pairs: &[(&str, Quantity)]) -> Vec<(String, Quantity)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect()
}

#[test]
fn batched_smc_points_equal_fresh_runs_bit_for_bit() {
    let text = std::fs::read_to_string(smc()).unwrap();
    let path = smc().display().to_string();
    let base = Scenario::from_str(&text, &path).unwrap();
    let short = ("t_end", Quantity::from(0.05));
    let points = [
        set(&[short.clone(), ("alpha", 2.0.into())]),
        // A bad value: an error row, and nothing left behind for the next.
        set(&[short.clone(), ("alpha", "nonsense + 1".into())]),
        set(&[short.clone(), ("alpha", 3.0.into())]),
        // A law that fails at set-up or runs: either way as a fresh run.
        set(&[short.clone(), ("law", "no_such_law".into())]),
        // Structural: another law, another control period (the clock).
        set(&[short.clone(), ("law", "smc_explicit".into())]),
        set(&[short.clone(), ("control_period", 2.5e-3.into())]),
        set(&[
            short.clone(),
            ("step", 2e-4.into()),
            ("alpha", "2 * step".into()),
        ]),
        set(std::slice::from_ref(&short)),
    ];
    let mut batch = Batch::new();
    let mut failed = 0;
    for p in &points {
        let a = batched(&mut batch, &base, p);
        let b = fresh(&text, &path, p);
        failed += usize::from(a.is_err());
        assert_same(&a, &b, &format!("{p:?}"));
    }
    assert_eq!(failed, 2, "the bad value and the unknown law fail");
}

#[test]
fn batched_points_with_a_structural_count_equal_fresh_runs() {
    let base = Scenario::from_str(CHAIN, "chain.toml").unwrap();
    let points = [
        set(&[("n", 3.0.into())]),
        set(&[("n", 1.0.into()), ("g", 1.62.into())]),
        set(&[("n", 2.5.into())]), // not an integer: an error
        set(&[("n", 5.0.into()), ("d", "g / 10".into())]),
        set(&[]),
    ];
    let mut batch = Batch::new();
    for p in &points {
        let a = batched(&mut batch, &base, p);
        let b = fresh(CHAIN, "chain.toml", p);
        assert_same(&a, &b, &format!("{p:?}"));
    }
    // The header follows the count: t, then q and v of each body.
    let five = batched(&mut batch, &base, &points[3]).unwrap();
    assert_eq!(five.header.len(), 1 + 2 * 5);
    assert!(batched(&mut batch, &base, &points[2]).is_err());
}

#[test]
fn run_points_equals_fresh_runs_metric_by_metric() {
    let text = std::fs::read_to_string(smc()).unwrap();
    let path = smc().display().to_string();
    let metrics: Vec<Metric> = [
        "final(controller.sigma[0])",
        "max_abs_after(plant.x[0], 0.01)",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect();
    let points: Vec<Vec<(String, Quantity)>> = (0..6)
        .map(|k| {
            let mut p = set(&[("t_end", 0.03.into()), ("alpha", (1.0 + k as f64).into())]);
            if k == 2 {
                p.push(("alpha".into(), "bad bad".into()));
            }
            if k == 4 {
                p.push(("law".into(), "smc_ot2".into()));
            }
            p
        })
        .collect();
    let out = run_points(
        &text,
        Path::new(&path),
        &points,
        &RunOptions::default(),
        &metrics,
    );
    for (p, o) in points.iter().zip(&out) {
        match fresh(&text, &path, p) {
            Ok(rec) => {
                assert!(o.error.is_none(), "{p:?}: {:?}", o.error);
                for (m, x) in metrics.iter().zip(&o.metrics) {
                    assert_eq!(m.evaluate(&rec).unwrap().to_bits(), x.to_bits(), "{p:?}");
                }
            }
            Err(e) => assert_eq!(o.error.as_deref(), Some(e.as_str()), "{p:?}"),
        }
    }
    assert!(out[2].error.is_some());
    assert!(out[3].error.is_none() && out[5].error.is_none());
}
