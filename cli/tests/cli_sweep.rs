//! `nonsmooth sweep` end to end: the reaching time of implicit sliding mode
//! on a double integrator against the analytic σ₀/α, error rows, exit
//! statuses, and equality with single runs of `nonsmooth run`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn smc() -> PathBuf {
    manifest().join("examples/smc_double_integrator.toml")
}

fn nonsmooth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs")
}

fn read_table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn reaching_time_is_sigma0_over_alpha_for_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.csv");
    let out = nonsmooth(&[
        "sweep",
        smc().to_str().unwrap(),
        "--grid",
        "alpha=0.5,1,2,4,5",
        "--grid",
        "control_period=0.01,0.005,0.002",
        "--set",
        "t_end=3",
        "--metric",
        "reach=reaching_time(controller.sigma[0], 1e-9)",
        "--metric",
        "final(plant.x[0])",
        "-o",
        table.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (header, rows) = read_table(&table);
    assert_eq!(
        header,
        [
            "alpha",
            "control_period",
            "reach",
            "final(plant.x[0])",
            "error"
        ]
    );
    assert_eq!(rows.len(), 15);
    let alphas = [0.5, 1.0, 2.0, 4.0, 5.0];
    for (k, row) in rows.iter().enumerate() {
        let alpha: f64 = row[0].parse().unwrap();
        assert_eq!(alpha, alphas[k / 3], "grid order");
        let reach: f64 = row[2].parse().unwrap();
        // σ(0) = x₁(0) + x₂(0) = 1, reached at σ₀/α.
        assert!((reach - 1.0 / alpha).abs() <= 1e-12, "{row:?}");
        assert_eq!(row[4], "");
    }
}

#[test]
fn metrics_equal_the_last_row_of_a_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.csv");
    let out = nonsmooth(&[
        "sweep",
        smc().to_str().unwrap(),
        "--grid",
        "law=smc_explicit,smc_implicit",
        "--t-end",
        "0.7",
        "--metric",
        "x=final(plant.x[1])",
        "-o",
        table.to_str().unwrap(),
        "-j",
        "2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, rows) = read_table(&table);
    for row in rows {
        let run_dir = dir.path().join(&row[0]);
        let out = nonsmooth(&[
            "run",
            "-q",
            smc().to_str().unwrap(),
            "--set",
            &format!("law={}", row[0]),
            "--set",
            "t_end=0.7",
            "--out",
            run_dir.to_str().unwrap(),
        ]);
        assert!(out.status.success());
        let (header, rows) = read_table(&run_dir.join("smc_double_integrator.csv"));
        let j = header.iter().position(|h| h == "plant.x[1]").unwrap();
        assert_eq!(rows.last().unwrap()[j], row[1], "law {}", row[0]);
    }
}

#[test]
fn a_failed_run_is_an_error_row_and_bad_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.csv");
    let scenario = smc();
    let out = nonsmooth(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--grid",
        "alpha=1,nonsense,2",
        "--t-end",
        "2",
        "--metric",
        "reaching_time(controller.sigma[0], 1e-9)",
        "-o",
        table.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let (_, rows) = read_table(&table);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0][1], "1");
    assert_eq!(rows[2][1], "0.5");
    assert_eq!(rows[1][1], "NaN");
    assert!(rows[1][2].contains("nonsense"), "{:?}", rows[1]);

    for (args, what) in [
        (vec!["--grid", "beta=1,2"], "beta"),
        (vec!["--metric", "mean(plant.x[0])"], "unknown metric"),
    ] {
        let mut a = vec![
            "sweep",
            scenario.to_str().unwrap(),
            "-o",
            table.to_str().unwrap(),
        ];
        a.extend(args);
        let out = nonsmooth(&a);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(what), "{err}");
    }
}

/// A co-simulation sweep in one batch (`-j 1`: every point in one thread,
/// the FMU opened once and instantiated afresh per point) gives each point
/// the numbers a separate `nonsmooth run` (its own process, the FMU
/// opened anew) writes, to the last digit of the CSV (shortest round-trip
/// decimals: equal text is equal bits). A point whose value is bad in the
/// middle of the batch is an error row, and the next point is unaffected.
#[test]
fn a_cosimulation_sweep_keeps_its_fmus_open_and_equals_separate_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("double_integrator_plant.fmu");
    let out = nonsmooth(&[
        "fmu",
        "export",
        manifest()
            .join("examples/double_integrator_plant.toml")
            .to_str()
            .unwrap(),
        "-o",
        fmu.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scenario = dir.path().join("fmu_plant_smc.toml");
    std::fs::copy(manifest().join("examples/fmu_plant_smc.toml"), &scenario).unwrap();
    let table = dir.path().join("t.csv");
    let out = nonsmooth(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--grid",
        "alpha=0.5,2*pi,nonsense,4",
        "--t-end",
        "1.5",
        "--metric",
        "s=final(controller.sigma[0])",
        "--metric",
        "x=final(plant.plant.x[0])",
        "-o",
        table.to_str().unwrap(),
        "-j",
        "1",
    ]);
    // A failed point makes the exit status 1 (error rows), not 2.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (header, rows) = read_table(&table);
    assert_eq!(header, ["alpha", "s", "x", "error"]);
    assert_eq!(rows.len(), 4);
    assert!(rows[2][3].contains("nonsense"), "{:?}", rows[2]);
    for row in rows.iter().filter(|r| r[3].is_empty()) {
        let run_dir = dir.path().join(format!("run-{}", row[0].replace('*', "x")));
        let out = nonsmooth(&[
            "run",
            "-q",
            scenario.to_str().unwrap(),
            "--set",
            &format!("alpha={}", row[0]),
            "--set",
            "t_end=1.5",
            "--out",
            run_dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (h, r) = read_table(&run_dir.join("fmu_plant_smc.csv"));
        let last = r.last().unwrap();
        let col = |name: &str| &last[h.iter().position(|x| x == name).unwrap()];
        assert_eq!(col("controller.sigma[0]"), &row[1], "alpha {}", row[0]);
        assert_eq!(col("plant.plant.x[0]"), &row[2], "alpha {}", row[0]);
    }
}
