//! The control loops of the per-step benchmarks keep their trajectories to
//! the last bit: examples/smc_tutorial.toml under its three laws and
//! examples/boost_smc.toml (6 ms, the load step at 5 ms included), run
//! through the scenario layer and `ControlLoop::step` as `nonsmooth run`
//! does, against CSV files written by `nonsmooth run` at commit 2782af7
//! (before the per-step work of the w4-loop branch; tests/pins/,
//! every tenth row of the tutorial, every row of the boost run). Numbers in
//! those files are in shortest round-trip form, so parsing them gives the
//! recorded bits back. Those files were written by Lemke's method; the
//! default LCP chain first tries the previous step's active set with a direct
//! solve (docs/numerics.md), which rounds differently, so the bit comparison
//! runs the loops with `[simulation] solver = "lemke"`, and the default run
//! is compared with that one to 1e-13 relative.

use std::path::Path;
use std::sync::Arc;

use nonsmooth::simulation::StepOutcome;
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The header and rows of a reference file.
fn reference(name: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let path = root().join("tests/pins").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}

/// Runs an example with parameters set (its one-step problems by Lemke's
/// method when `lemke`, else by the default chain) and returns its header
/// and every output row.
fn run(example: &str, sets: &[(&str, &str)], lemke: bool) -> (Vec<String>, Vec<Vec<f64>>) {
    let path = root().join("examples").join(example);
    let mut text = std::fs::read_to_string(&path).unwrap();
    if lemke {
        assert!(!text.contains("solver ="), "{example} names no solver");
        text = text.replacen("[simulation]\n", "[simulation]\nsolver = \"lemke\"\n", 1);
        assert!(
            text.contains("solver = \"lemke\""),
            "{example}: [simulation]"
        );
    }
    let mut scenario = Scenario::from_str(&text, &path).unwrap();
    // As `--set` reads them: a number when it parses as one.
    for (k, v) in sets {
        match v.parse::<f64>() {
            Ok(x) => scenario.set_parameter(k, x),
            Err(_) => scenario.set_parameter(k, *v),
        }
        .unwrap();
    }
    let built = scenario.build_with(Arc::new(Catalog)).unwrap();
    let header: Vec<String> = built.header().iter().map(|s| s.to_string()).collect();
    let mut run = built.control_loop().unwrap();
    let mut rows = Vec::new();
    let mut row = vec![0.0; header.len()];
    while let StepOutcome::Advanced { .. } = run.step().unwrap() {
        if run.plant().is_output_instant() {
            built.row(&run, &mut row);
            rows.push(row.clone());
        }
    }
    (header, rows)
}

/// Every value of `got` (keeping one row in `every`) has the bits of the
/// reference.
fn assert_same_bits(what: &str, got: (Vec<String>, Vec<Vec<f64>>), file: &str, every: usize) {
    let (header, rows) = reference(file);
    assert_eq!(got.0, header, "{what}: columns");
    let kept: Vec<&Vec<f64>> = got.1.iter().step_by(every).collect();
    assert_eq!(kept.len(), rows.len(), "{what}: rows");
    for (k, (a, b)) in kept.iter().zip(&rows).enumerate() {
        for (c, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                x.to_bits() == y.to_bits(),
                "{what}: row {k} ({} = {}), column {}: {x:e} against {y:e}",
                header[0],
                b[0],
                header[c]
            );
        }
    }
}

#[test]
fn the_smc_tutorial_keeps_its_bits_under_each_law() {
    for law in ["smc_implicit", "smc_explicit", "smc_ot2"] {
        let got = run("smc_tutorial.toml", &[("law", law)], true);
        assert_same_bits(law, got, &format!("smc_tutorial_{law}.csv"), 10);
    }
}

#[test]
fn the_boost_converter_loop_keeps_its_bits() {
    let got = run("boost_smc.toml", &[("t_end", "0.006")], true);
    assert_same_bits("boost_smc", got, "boost_smc_6ms.csv", 1);
}

/// Every value of `got` is within 1e-13 of the same value of `lemke`,
/// relative to the largest |value| of its column over the run, or absolute
/// when that is below 1: σ = i_L − i_ref (≈ 3 A each) is a few mA, so a
/// rounding of i_L is 1e-13 of σ's own scale (the same rows and columns).
fn assert_close(what: &str, got: &[Vec<f64>], lemke: &[Vec<f64>]) -> f64 {
    assert_eq!(got.len(), lemke.len(), "{what}: rows");
    let cols = lemke[0].len();
    let mut worst = 0.0f64;
    for c in 0..cols {
        let scale = lemke.iter().fold(0.0f64, |m, r| m.max(r[c].abs()));
        for (k, (a, b)) in got.iter().zip(lemke).enumerate() {
            let rel = (a[c] - b[c]).abs() / scale.max(1.0);
            assert!(
                rel <= 1e-13,
                "{what}: row {k} (t = {}), column {c}: {:e} against Lemke's {:e} ({rel:e})",
                b[0],
                a[c],
                b[c]
            );
            worst = worst.max(rel);
        }
    }
    worst
}

#[test]
fn the_warm_started_default_chain_follows_lemkes_trajectory() {
    let (header, lemke) = run("boost_smc.toml", &[("t_end", "0.006")], true);
    let (h, got) = run("boost_smc.toml", &[("t_end", "0.006")], false);
    assert_eq!(h, header);
    assert!(
        got != lemke,
        "the default chain rounds differently (the warm start ran)"
    );
    let worst = assert_close("boost_smc", &got, &lemke);
    println!("boost_smc: largest relative difference {worst:e}");
    for law in ["smc_implicit", "smc_explicit", "smc_ot2"] {
        let (_, lemke) = run("smc_tutorial.toml", &[("law", law)], true);
        let (_, got) = run("smc_tutorial.toml", &[("law", law)], false);
        let worst = assert_close(law, &got, &lemke);
        println!("{law}: largest relative difference {worst:e}");
    }
}
