//! `nonsmooth run` of co-simulation scenarios (`[[fmus]]`): the bundled
//! examples run through the command line with FMUs exported by this
//! project at test time, checked against independent runs —
//! `examples/fmu_plant_smc.toml` (the implicit sliding-mode law around a
//! plant FMU) against the all-native loop of
//! `examples/smc_double_integrator.toml`, `examples/two_fmus.toml` (plant
//! FMU and controller FMU coupled by connections) against libcosim running
//! the same FMUs — and the errors of bad co-simulation scenarios, each
//! with its exit code and nothing written.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn nonsmooth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the nonsmooth binary runs")
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Exports `scenario` (relative to the repository root) as `dir/name`.
fn export(scenario: &str, dir: &Path, name: &str) -> PathBuf {
    let fmu = dir.join(name);
    let out = nonsmooth(&[
        "fmu",
        "export",
        root().join(scenario).to_str().unwrap(),
        "-o",
        fmu.to_str().unwrap(),
    ]);
    ok(&out, "fmu export");
    fmu
}

/// Copies an example next to its FMUs (its `path`s are relative to it).
fn example_in(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(root().join("examples").join(name), &to).unwrap();
    to
}

type Table = (Vec<String>, Vec<Vec<f64>>);

fn csv(path: &Path) -> Table {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

fn column(t: &Table, name: &str) -> Vec<f64> {
    let k =
        t.0.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", t.0));
    t.1.iter().map(|r| r[k]).collect()
}

fn venv_python() -> PathBuf {
    let dir = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/fmi-venv"));
    let py = dir.join("bin/python");
    assert!(
        py.exists(),
        "{} is missing: create the FMI tools' environment with .ci/fmi-venv",
        py.display()
    );
    py
}

#[test]
fn fmu_plant_smc_example_equals_the_native_loop() {
    let dir = tempfile::tempdir().unwrap();
    export(
        "examples/double_integrator_plant.toml",
        dir.path(),
        "double_integrator_plant.fmu",
    );
    let scenario = example_in(dir.path(), "fmu_plant_smc.toml");
    let (out_fmu, out_native) = (dir.path().join("fmu"), dir.path().join("native"));
    let events = dir.path().join("events.csv");
    ok(
        &nonsmooth(&[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out_fmu.to_str().unwrap(),
            "--events",
            events.to_str().unwrap(),
            "--plot",
        ]),
        "run fmu_plant_smc",
    );
    ok(
        &nonsmooth(&[
            "run",
            "examples/smc_double_integrator.toml",
            "--out",
            out_native.to_str().unwrap(),
            "--quiet",
        ]),
        "run smc_double_integrator",
    );
    let fmu = csv(&out_fmu.join("fmu_plant_smc.csv"));
    let native = csv(&out_native.join("smc_double_integrator.csv"));
    assert_eq!(
        fmu.0,
        [
            "t",
            "plant.plant.x[0]",
            "plant.plant.x[1]",
            "plant.u",
            "sensor.y[0]",
            "sensor.y[1]",
            "controller.u[0]",
            "controller.u_eq[0]",
            "controller.u_s[0]",
            "controller.sigma[0]"
        ]
    );
    // One row per control instant, t0 and t_end included.
    assert_eq!(fmu.1.len(), 501);
    let (t, tn) = (column(&fmu, "t"), column(&native, "t"));
    let pairs = [
        ("plant.plant.x[0]", "plant.x[0]"),
        ("plant.plant.x[1]", "plant.x[1]"),
        ("plant.u", "controller.u[0]"),
        ("controller.u[0]", "controller.u[0]"),
        ("controller.sigma[0]", "controller.sigma[0]"),
        ("sensor.y[1]", "sensor.y[1]"),
    ];
    for (ours, theirs) in pairs {
        let (a, b) = (column(&fmu, ours), column(&native, theirs));
        for (k, &tk) in t.iter().enumerate() {
            assert!((tk - 0.01 * k as f64).abs() < 1e-12, "row {k}: t = {tk}");
            let j = tn
                .iter()
                .position(|&s| (s - tk).abs() < 1e-9)
                .unwrap_or_else(|| panic!("no native row at t = {tk}"));
            assert!(
                (a[k] - b[j]).abs() <= 1e-12,
                "t = {tk}: {ours} = {} (FMU) vs {theirs} = {} (native)",
                a[k],
                b[j]
            );
        }
    }
    // The law did its work: σ = x₀ + x₁ reached 0 (at t = σ(0)/α = 1).
    let sigma = column(&fmu, "controller.sigma[0]");
    assert!(sigma.last().unwrap().abs() < 1e-9);
    assert!(sigma[50].abs() > 0.4, "σ(0.5) = {}", sigma[50]);
    // The event log names the FMU's communication points.
    let log = std::fs::read_to_string(&events).unwrap();
    let comm = log
        .lines()
        .filter(|l| l.ends_with(",communication,plant"))
        .count();
    assert_eq!(comm, 500, "communication points in the event log");
    assert!(out_fmu.join("fmu_plant_smc.svg").is_file());
}

#[test]
fn two_fmus_example_equals_libcosim() {
    let dir = tempfile::tempdir().unwrap();
    let plant = export("cli/tests/fmi/smc_plant.toml", dir.path(), "smc_plant.fmu");
    let ctrl = export(
        "cli/tests/fmi/smc_controller.toml",
        dir.path(),
        "smc_controller.fmu",
    );
    let scenario = example_in(dir.path(), "two_fmus.toml");
    let out = dir.path().join("out");
    ok(
        &nonsmooth(&[
            "run",
            scenario.to_str().unwrap(),
            "--set",
            "t_end=3",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]),
        "run two_fmus",
    );
    let ours = csv(&out.join("two_fmus.csv"));
    let steps = 300;
    assert_eq!(ours.1.len(), steps + 1, "t0 and every step");
    let theirs_csv = dir.path().join("libcosim.csv");
    let py = Command::new(venv_python())
        .args([
            root().join("cli/tests/fmi/cosim_smc.py").to_str().unwrap(),
            plant.to_str().unwrap(),
            ctrl.to_str().unwrap(),
            "10000000",
            &steps.to_string(),
            theirs_csv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    ok(&py, "libcosim");
    let theirs = csv(&theirs_csv);
    let names = [
        "plant.plant.x[0]",
        "plant.plant.x[1]",
        "controller.controller.u[0]",
        "controller.controller.sigma[0]",
    ];
    for (j, name) in names.iter().enumerate() {
        let a = column(&ours, name);
        for k in 0..steps {
            let b = theirs.1[k][j + 1];
            assert!(
                (a[k + 1] - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "step {}: {name}: nonsmooth run {} vs libcosim {b}",
                k + 1,
                a[k + 1]
            );
        }
    }
}

#[test]
fn native_plant_with_a_controller_fmu_equals_libcosim() {
    let dir = tempfile::tempdir().unwrap();
    let plant = export("cli/tests/fmi/smc_plant.toml", dir.path(), "smc_plant.fmu");
    let ctrl = export(
        "cli/tests/fmi/smc_controller.toml",
        dir.path(),
        "smc_controller.fmu",
    );
    let scenario = example_in(dir.path(), "native_plant_fmu_controller.toml");
    let out = dir.path().join("out");
    ok(
        &nonsmooth(&[
            "run",
            scenario.to_str().unwrap(),
            "--set",
            "t_end=3",
            "--out",
            out.to_str().unwrap(),
            "--plot",
            "--quiet",
        ]),
        "run native_plant_fmu_controller",
    );
    let ours = csv(&out.join("native_plant_fmu_controller.csv"));
    let steps = 300;
    assert_eq!(ours.1.len(), steps + 1, "t0 and every communication point");
    // libcosim runs the plant as an FMU (the same double integrator,
    // exported) with the same controller FMU, Jacobi, H = 10 ms.
    let theirs_csv = dir.path().join("libcosim.csv");
    let py = Command::new(venv_python())
        .args([
            root().join("cli/tests/fmi/cosim_smc.py").to_str().unwrap(),
            plant.to_str().unwrap(),
            ctrl.to_str().unwrap(),
            "10000000",
            &steps.to_string(),
            theirs_csv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    ok(&py, "libcosim");
    let theirs = csv(&theirs_csv);
    let names = [
        "plant.x[0]",
        "plant.x[1]",
        "controller.controller.u[0]",
        "controller.controller.sigma[0]",
    ];
    let t = column(&ours, "t");
    for (j, name) in names.iter().enumerate() {
        let a = column(&ours, name);
        for k in 0..steps {
            assert!((t[k + 1] - 0.01 * (k + 1) as f64).abs() < 1e-12);
            let b = theirs.1[k][j + 1];
            assert!(
                (a[k + 1] - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "step {}: {name}: nonsmooth run {} vs libcosim {b}",
                k + 1,
                a[k + 1]
            );
        }
    }
    // The law acts: σ leaves its initial value 1 and approaches 0.
    let sigma = column(&ours, "controller.controller.sigma[0]");
    assert!(sigma[steps].abs() < 0.1, "σ(3) = {}", sigma[steps]);
    assert!(out.join("native_plant_fmu_controller.svg").is_file());
}

/// Writes a co-simulation scenario around `fmu` (copied into `dir` as
/// plant.fmu) with the given sections after `[[fmus]]`.
fn scenario_with(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("bad.toml");
    let text = format!(
        r#"name = "bad"
[simulation]
t_end = 0.1
step = 0.01
[[fmus]]
name = "plant"
path = "plant.fmu"
step = 0.01
{body}"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs a bad scenario: exit code `code`, a message holding every piece
/// of `needles`, no CSV written.
fn refused(dir: &Path, scenario: &Path, code: i32, needles: &[&str]) {
    let out_dir = dir.join("out");
    let out = nonsmooth(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(!out_dir.join("bad.csv").exists(), "a CSV was written");
}

/// The archive `from` without the entries whose name starts with `skip`.
fn without(from: &Path, to: &Path, skip: &str) {
    let mut zin = zip::ZipArchive::new(std::fs::File::open(from).unwrap()).unwrap();
    let mut zout = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        if name.starts_with(skip) {
            continue;
        }
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        zout.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zout.write_all(&data).unwrap();
    }
    zout.finish().unwrap();
}

#[test]
fn bad_cosimulation_scenarios_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sensor = r#"
[[sensors]]
name = "sensor"
system = "plant"
outputs = ["plant.x[0]"]
period = 0.01
"#;
    // No FMU file.
    let s = scenario_with(d, sensor);
    refused(d, &s, 2, &["bad.toml:7:", "no FMU file"]);
    export("examples/double_integrator_plant.toml", d, "plant.fmu");
    // The good scenario runs.
    let s = scenario_with(d, sensor);
    ok(
        &nonsmooth(&[
            "run",
            s.to_str().unwrap(),
            "--out",
            d.join("good").to_str().unwrap(),
        ]),
        "a good scenario",
    );
    // An unknown variable.
    let s = scenario_with(d, &sensor.replace("plant.x[0]", "plant.x[7]"));
    refused(
        d,
        &s,
        2,
        &["bad.toml:13:", "no variable `plant.x[7]`", "plant.x[0]"],
    );
    // A sensor on an input.
    let s = scenario_with(d, &sensor.replace("plant.x[0]", "u"));
    refused(
        d,
        &s,
        2,
        &["bad.toml:13:", "is an input: a sensor measures outputs"],
    );
    // A controller driving an output.
    let ctrl = format!(
        r#"{sensor}
[[controllers]]
name = "c"
law = "pid"
input = "sensor"
system = "plant"
inputs = ["plant.x[1]"]
period = 0.01
[controllers.params]
kp = 1
"#
    );
    let s = scenario_with(d, &ctrl);
    refused(
        d,
        &s,
        2,
        &["bad.toml:", "is an output: a controller drives inputs"],
    );
    // A record of an unknown FMU variable.
    let s = scenario_with(d, "[output]\nrecord = [\"plant.y\"]\n");
    refused(d, &s, 2, &["bad.toml:10:", "no variable `y`"]);
    // A connection to an output.
    let s = scenario_with(
        d,
        "[[connections]]\nfrom = \"plant.plant.x[0]\"\nto = \"plant.plant.x[1]\"\n",
    );
    refused(
        d,
        &s,
        2,
        &["bad.toml:11:", "causality Output; Input expected"],
    );
    // A native system beside the FMU, connected both ways: it runs.
    let native = "[[systems]]\nname = \"s\"\ntype = \"first_order_linear\"\nx0 = [1]\nA = [[0]]\n\
                  [[connections]]\nfrom = \"s.x[0]\"\nto = \"plant.u\"\n\
                  [[connections]]\nfrom = \"plant.plant.x[0]\"\nto = \"s.g[0]\"\n";
    let s = scenario_with(d, native);
    ok(
        &nonsmooth(&[
            "run",
            s.to_str().unwrap(),
            "--out",
            d.join("good_native").to_str().unwrap(),
        ]),
        "a native system beside an FMU",
    );
    // A native variable that does not exist, one that is not an input.
    let s = scenario_with(d, &native.replace("from = \"s.x[0]\"", "from = \"s.y[0]\""));
    refused(d, &s, 2, &["bad.toml:15:", "has no variable `y`"]);
    let s = scenario_with(d, &native.replace("to = \"s.g[0]\"", "to = \"s.x[0]\""));
    refused(d, &s, 2, &["bad.toml:19:", "is not an input of the model"]);
    // A native source into an FMU output.
    let s = scenario_with(
        d,
        &native.replace("to = \"plant.u\"", "to = \"plant.plant.x[1]\""),
    );
    refused(
        d,
        &s,
        2,
        &["bad.toml:16:", "causality Output; Input expected"],
    );
    // Circuits beside FMUs are not supported.
    let s = scenario_with(d, "[[circuits]]\nname = \"c\"\nelements = [\"R1 1 0 1\"]\n");
    refused(
        d,
        &s,
        2,
        &["bad.toml:9:", "[[circuits]] beside FMUs are not supported"],
    );
    // A coupling that does not exist.
    let s = scenario_with(
        d,
        &format!("{sensor}[cosimulation]\ncoupling = \"gauss\"\n"),
    );
    refused(d, &s, 2, &["bad.toml:16:", "unknown coupling `gauss`"]);
    // An FMU that fails to instantiate (its resources removed): exit 1,
    // naming the FMU and the time.
    let good = d.join("plant.fmu");
    let broken = d.join("broken.fmu");
    without(&good, &broken, "resources/");
    std::fs::rename(&broken, &good).unwrap();
    let s = scenario_with(d, sensor);
    refused(d, &s, 1, &["FMU 'plant'", "instantiate", "t = 0"]);
}

/// `nonsmooth sweep` of a co-simulation: each point's metrics equal the
/// last row of `nonsmooth run` with the same values (the same texts: both
/// write shortest round-trip numbers); `--t-end` ends the FMUs' run;
/// another strategy and an FMU export of the loop are refused (exit 2).
#[test]
fn a_sweep_of_a_cosimulation_equals_single_runs() {
    let dir = tempfile::tempdir().unwrap();
    export(
        "examples/double_integrator_plant.toml",
        dir.path(),
        "double_integrator_plant.fmu",
    );
    let scenario = example_in(dir.path(), "fmu_plant_smc.toml");
    let s = scenario.to_str().unwrap();
    let table = dir.path().join("t.csv");
    let t = table.to_str().unwrap();
    let metrics = [
        "final(controller.sigma[0])",
        "final(plant.plant.x[0])",
        "final(t)",
    ];
    let mut args = vec!["sweep", s, "--grid", "alpha=0.5,2,4", "--t-end", "1.5"];
    for m in &metrics {
        args.extend(["--metric", m]);
    }
    args.extend(["-o", t, "-j", "2"]);
    ok(&nonsmooth(&args), "sweep fmu_plant_smc");
    let text = std::fs::read_to_string(&table).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert_eq!(row[4], "", "error column: {row:?}");
        assert_eq!(row[3], "1.5", "the runs end at --t-end");
        let out = dir.path().join(format!("alpha{}", row[0]));
        ok(
            &nonsmooth(&[
                "run",
                "-q",
                s,
                "--set",
                &format!("alpha={}", row[0]),
                "--set",
                "t_end=1.5",
                "--out",
                out.to_str().unwrap(),
            ]),
            "run",
        );
        let csv_text = std::fs::read_to_string(out.join("fmu_plant_smc.csv")).unwrap();
        let header: Vec<&str> = csv_text.lines().next().unwrap().split(',').collect();
        let last: Vec<&str> = csv_text.lines().last().unwrap().split(',').collect();
        let at = |name: &str| last[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(row[1], at("controller.sigma[0]"), "alpha = {}", row[0]);
        assert_eq!(row[2], at("plant.plant.x[0]"), "alpha = {}", row[0]);
    }
    let out = nonsmooth(&[
        "sweep",
        s,
        "--grid",
        "alpha=1,2",
        "--strategy",
        "event-driven",
        "--metric",
        "final(t)",
        "-o",
        t,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("time-stepping only"));
    let fmu = dir.path().join("loop.fmu");
    let out = nonsmooth(&["fmu", "export", s, "-o", fmu.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be exported as an FMU"), "{err}");
    assert!(!fmu.exists());
}
