//! `nonsmooth fmu export` end to end, checked by real importers:
//!
//! * the archive's layout and modelDescription.xml (no external tool);
//! * `fmpy validate`, and `fmpy simulate` against the native `nonsmooth
//!   run` at every communication point (also with a parameter set);
//! * `fmutool -check` (fmu-manipulation-toolbox);
//! * a Python host (fmpy's FMU2Slave): rollback, serialized states,
//!   several instances (`tests/fmi/python_host.py`);
//! * a C host compiled with gcc that makes every mistake it can
//!   (`tests/fmi/bad_host.c`);
//! * a plant FMU and a controller FMU connected in libcosim
//!   (`tests/fmi/cosim.py`) against the same loop in one process;
//! * FMUs of control loops (sensors, controllers): `fmpy validate` and
//!   `fmpy simulate` of the sliding-mode examples against `nonsmooth run`,
//!   `fmutool -check`, rollback through fmpy (`tests/fmi/rollback.py`), and
//!   the sliding-mode loop split into a plant FMU and a controller FMU in
//!   libcosim (`tests/fmi/cosim_smc.py`) against the single-process loop
//!   with an actuation delay of one communication step.
//!
//! The Python tools live in a virtual environment: `NONSMOOTH_FMI_VENV`, or
//! `target/fmi-venv` at the workspace root when it is not set. `.ci/fmi-venv`
//! creates it. Without it these tests FAIL (they never skip): see README.md.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nonsmooth::modelling::SystemId;
use nonsmooth_scenario::Scenario;

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn example(name: &str) -> PathBuf {
    manifest().join("examples").join(name)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn nonsmooth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs")
}

/// Exports `scenario` (with `--set` values) into `dir`; returns the FMU path.
fn export(dir: &Path, scenario: &str, sets: &[&str]) -> PathBuf {
    export_file(dir, &example(scenario), sets)
}

/// Exports the scenario file `file` (with `--set` values) into `dir`.
fn export_file(dir: &Path, file: &Path, sets: &[&str]) -> PathBuf {
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let fmu = dir.join(format!("{stem}.fmu"));
    let mut args = vec![
        "fmu",
        "export",
        file.to_str().unwrap(),
        "-o",
        fmu.to_str().unwrap(),
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = nonsmooth(&args);
    assert!(out.status.success(), "export failed: {}", stderr(&out));
    fmu
}

/// The virtual environment with fmpy and fmu-manipulation-toolbox; fails
/// with instructions when it is missing.
fn venv() -> PathBuf {
    let dir = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("target/fmi-venv"));
    let python = dir.join("bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import fmpy, fmu_manipulation_toolbox, libcosimpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "the FMI test tools are missing: {} cannot import fmpy, fmu_manipulation_toolbox and libcosimpy.\n\
         Create the environment with `.ci/fmi-venv` (or `python3 -m venv target/fmi-venv && \
         target/fmi-venv/bin/pip install -r .ci/fmi-requirements.txt`), or point \
         NONSMOOTH_FMI_VENV at one.",
        python.display()
    );
    dir
}

fn tool(venv: &Path, name: &str, args: &[&str]) -> Output {
    Command::new(venv.join("bin").join(name))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Header and rows of a CSV of numbers (quotes around names removed).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(|s| s.trim_matches('"').to_string())
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}

/// The entries of a zip archive, with their contents.
fn unzip(fmu: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(fs::File::open(fmu).unwrap()).unwrap();
    (0..z.len())
        .map(|k| {
            let mut f = z.by_index(k).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().to_string(), data)
        })
        .collect()
}

fn extract(fmu: &Path, dir: &Path) {
    for (name, data) in unzip(fmu) {
        let p = dir.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    }
}

fn attribute(xml: &str, name: &str) -> String {
    let key = format!("{name}=\"");
    let start = xml.find(&key).unwrap_or_else(|| panic!("no {name}")) + key.len();
    xml[start..start + xml[start..].find('"').unwrap()].to_string()
}

#[test]
fn export_writes_the_fmu_layout_and_model_description() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export(dir.path(), "bouncing_ball.toml", &["height=2"]);
    let entries = unzip(&fmu);
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "modelDescription.xml",
            "binaries/linux64/bouncing_ball.so",
            "resources/scenario.toml",
            "resources/nonsmooth-fmu.json"
        ]
    );
    let xml = String::from_utf8(entries[0].1.clone()).unwrap();
    assert!(entries[1].1.starts_with(b"\x7fELF"));
    let config = String::from_utf8(entries[3].1.clone()).unwrap();
    let guid = attribute(&xml, "guid");
    assert!(config.contains(&guid), "{config}");
    assert!(config.contains("\"height\"") && config.contains("\"2\""));
    for needle in [
        r#"modelIdentifier="bouncing_ball""#,
        r#"canHandleVariableCommunicationStepSize="true""#,
        r#"canGetAndSetFMUstate="true""#,
        r#"canSerializeFMUstate="true""#,
        r#"<ScalarVariable name="height" valueReference="1" causality="parameter" variability="fixed" initial="exact">"#,
        r#"<Real unit="m" start="2.0"/>"#,
        r#"name="restitution" valueReference="4" causality="parameter" variability="tunable""#,
        r#"name="push" valueReference="8" description="vertical force on the ball" causality="input" variability="continuous">"#,
        r#"<Real unit="N" start="0.0"/>"#,
        r#"name="ball.q[0]" valueReference="9""#,
        r#"<Unit name="m/s2"/>"#,
        r#"<Unknown index="10" dependencies=""/>"#,
        r#"<DefaultExperiment startTime="0.0" stopTime="10.0" stepSize="0.005"/>"#,
    ] {
        assert!(xml.contains(needle), "missing {needle} in\n{xml}");
    }
    // The same scenario and values give the same GUID; others another.
    let again = export(
        &dir.path().join("again"),
        "bouncing_ball.toml",
        &["height=2"],
    );
    assert_eq!(
        attribute(
            &String::from_utf8(unzip(&again)[0].1.clone()).unwrap(),
            "guid"
        ),
        guid
    );
    let other = export(
        &dir.path().join("other"),
        "bouncing_ball.toml",
        &["height=3"],
    );
    assert_ne!(
        attribute(
            &String::from_utf8(unzip(&other)[0].1.clone()).unwrap(),
            "guid"
        ),
        guid
    );
}

#[test]
fn export_errors_are_reported_with_exit_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("x.fmu");
    let ball = example("bouncing_ball.toml");
    let out = nonsmooth(&[
        "fmu",
        "export",
        ball.to_str().unwrap(),
        "-o",
        fmu.to_str().unwrap(),
        "--set",
        "heigth=1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no parameter `heigth`"),
        "{}",
        stderr(&out)
    );
    let out = nonsmooth(&[
        "fmu",
        "export",
        ball.to_str().unwrap(),
        "-o",
        fmu.to_str().unwrap(),
        "--library",
        "/no/such/lib.so",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/no/such/lib.so"), "{}", stderr(&out));
    // A bad [fmi] table is located in the file.
    let bad = dir.path().join("bad.toml");
    let text = fs::read_to_string(&ball)
        .unwrap()
        .replace("ball.g[0]", "ball.g[7]");
    fs::write(&bad, text).unwrap();
    let out = nonsmooth(&[
        "fmu",
        "export",
        bad.to_str().unwrap(),
        "-o",
        fmu.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad.toml:") && stderr(&out).contains("out of range"),
        "{}",
        stderr(&out)
    );
    assert!(!fmu.exists());
}

/// Rows of `fmpy simulate` equal those of `nonsmooth run` at every
/// communication point (the grid is a multiple of the step).
fn compare_with_native(sim_csv: &Path, native_csv: &Path, every: usize) {
    let (h1, fmu_rows) = read_csv(sim_csv);
    let (h2, native_rows) = read_csv(native_csv);
    assert_eq!(h1[1..], h2[1..], "same output columns");
    let native: Vec<&Vec<f64>> = native_rows.iter().step_by(every).collect();
    assert_eq!(fmu_rows.len(), native.len());
    let mut worst = 0.0f64;
    for (a, b) in fmu_rows.iter().zip(native) {
        assert!((a[0] - b[0]).abs() < 1e-9, "times {} and {}", a[0], b[0]);
        for (x, y) in a[1..].iter().zip(&b[1..]) {
            worst = worst.max((x - y).abs());
        }
    }
    assert!(worst <= 1e-12, "largest difference {worst:e}");
}

#[test]
fn fmpy_validates_and_simulates_like_the_native_run() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = export(d, "bouncing_ball.toml", &[]);
    fmpy_validate(&venv, &fmu);

    let native = native_run(d, "bouncing_ball.toml", &[]);
    for (interval, every) in [("0.005", 1), ("0.05", 10)] {
        let csv = d.join(format!("fmpy_{every}.csv"));
        fmpy_simulate(&venv, &fmu, interval, &[], &csv);
        compare_with_native(&csv, &native, every);
    }

    // A parameter set by the importer, and the same --set natively.
    let csv = d.join("fmpy_e.csv");
    fmpy_simulate(&venv, &fmu, "0.005", &["restitution", "0.5"], &csv);
    let native_e = native_run(d, "bouncing_ball.toml", &["restitution=0.5"]);
    compare_with_native(&csv, &native_e, 1);
}

#[test]
fn fmpy_simulates_the_relay_and_the_diode_bridge_like_the_native_run() {
    // A relay (sliding-mode) feedback loop, and an MLCP circuit.
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (scenario, step) in [("relay.toml", "0.01"), ("diode_bridge.toml", "1e-6")] {
        let fmu = export(d, scenario, &[]);
        let name = scenario.trim_end_matches(".toml");
        let csv = d.join(format!("{name}_fmpy.csv"));
        fmpy_simulate(&venv, &fmu, step, &[], &csv);
        compare_with_native(&csv, &native_run(d, scenario, &[]), 1);
    }
}

#[test]
fn fmutool_checks_the_fmu() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    for scenario in [
        "bouncing_ball.toml",
        "diode_bridge.toml",
        "relay.toml",
        "smc_tutorial.toml",
        "smc_double_integrator.toml",
    ] {
        let fmu = export(dir.path(), scenario, &[]);
        let out = tool(
            &venv,
            "fmutool",
            &["-input", fmu.to_str().unwrap(), "-check"],
        );
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            out.status.success()
                && text.contains("compliant with FMI-2.0")
                && text.contains("No semantic error")
                && !text.contains("ERROR"),
            "fmutool -check {scenario}:\n{text}"
        );
    }
}

#[test]
fn python_host_rolls_back_and_runs_several_instances() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let fmu = export(dir.path(), "bouncing_ball.toml", &[]);
    let host = manifest().join("cli/tests/fmi/python_host.py");
    let out = tool(
        &venv,
        "python",
        &[host.to_str().unwrap(), fmu.to_str().unwrap()],
    );
    assert!(
        out.status.success() && stdout(&out).contains(" passed, 0 failed"),
        "python host:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn c_host_mistakes_are_errors_with_messages_never_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = export(d, "bouncing_ball.toml", &[]);
    let unpacked = d.join("unpacked");
    extract(&fmu, &unpacked);
    let xml = fs::read_to_string(unpacked.join("modelDescription.xml")).unwrap();
    let guid = attribute(&xml, "guid");
    let exe = d.join("bad_host");
    let src = manifest().join("cli/tests/fmi/bad_host.c");
    let cc = Command::new("gcc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(["-ldl", "-lm"])
        .output()
        .expect("gcc runs (the C host needs a C compiler)");
    assert!(cc.status.success(), "gcc: {}", stderr(&cc));
    let lib = unpacked.join("binaries/linux64/bouncing_ball.so");
    let uri = format!("file://{}", unpacked.join("resources").display());
    let out = Command::new(&exe)
        .arg(&lib)
        .arg(&uri)
        .arg(&guid)
        .output()
        .unwrap();
    assert!(
        out.status.success() && stdout(&out).contains(" passed, 0 failed"),
        "C host (status {:?}):\n{}{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn a_plant_and_a_controller_fmu_in_libcosim_match_the_single_process_loop() {
    // Plant: a mass on a spring hitting a stop, force from outside.
    // Controller: a linear filter of the measured position whose second
    // state is the force. libcosim exchanges outputs and inputs at each
    // communication point; the same exchange in one process (both
    // simulations in lockstep, inputs held over the communication step)
    // must give the same numbers.
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = manifest().join("cli/tests/fmi");
    let mut fmus = Vec::new();
    for name in ["plant", "controller"] {
        let fmu = d.join(format!("{name}.fmu"));
        let src = data.join(format!("{name}.toml"));
        let out = nonsmooth(&[
            "fmu",
            "export",
            src.to_str().unwrap(),
            "-o",
            fmu.to_str().unwrap(),
            "-q",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        fmus.push(fmu);
    }
    for (comm_steps, steps) in [(1usize, 500usize), (3, 150)] {
        let csv = d.join(format!("cosim_{comm_steps}.csv"));
        let ns = (comm_steps as u64 * 10_000_000).to_string();
        let out = tool(
            &venv,
            "python",
            &[
                data.join("cosim.py").to_str().unwrap(),
                fmus[0].to_str().unwrap(),
                fmus[1].to_str().unwrap(),
                &ns,
                &steps.to_string(),
                csv.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "libcosim: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let (_, rows) = read_csv(&csv);
        assert_eq!(rows.len(), steps);

        let build = |name: &str| {
            Scenario::from_file(data.join(format!("{name}.toml")))
                .unwrap()
                .build()
                .unwrap()
                .control_loop()
                .unwrap()
        };
        let (mut plant, mut ctrl) = (build("plant"), build("controller"));
        plant.step().unwrap();
        ctrl.step().unwrap();
        let s = SystemId(0);
        let mut worst = 0.0f64;
        let mut impacts = 0;
        for row in &rows {
            let (force, q) = (ctrl.plant().q(s)[1], plant.plant().q(s)[0]);
            plant.set_external_input(s, &[force]).unwrap();
            ctrl.set_external_input(s, &[q, 0.0]).unwrap();
            for _ in 0..comm_steps {
                plant.step().unwrap();
                ctrl.step().unwrap();
                impacts += (plant.plant().lambda(nonsmooth::modelling::InteractionId(0))[0] > 0.0)
                    as usize;
            }
            for (x, y) in row[1..].iter().zip([
                plant.plant().q(s)[0],
                plant.plant().v(s)[0],
                ctrl.plant().q(s)[1],
            ]) {
                worst = worst.max((x - y).abs());
            }
        }
        assert!(impacts > 0, "the stop is hit");
        assert!(
            worst <= 1e-12,
            "communication step {comm_steps} h: largest difference {worst:e}"
        );
    }
}

/// `nonsmooth run` of an example with `--set` values; returns the CSV path.
fn native_run(dir: &Path, scenario: &str, sets: &[&str]) -> PathBuf {
    let out = dir.join(format!("native_{}", sets.join("_").replace(['=', '.'], "")));
    let file = example(scenario);
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let run = nonsmooth(&args);
    assert!(run.status.success(), "{}", stderr(&run));
    out.join(scenario.replace(".toml", ".csv"))
}

/// `fmpy simulate FMU --output-interval INTERVAL [--start-values NAME VALUE...]
/// --output-file CSV`, which must succeed.
/// `fmpy validate` on an FMU must find no problem.
fn fmpy_validate(venv: &Path, fmu: &Path) {
    let out = tool(venv, "fmpy", &["validate", fmu.to_str().unwrap()]);
    assert!(
        out.status.success() && stdout(&out).contains("No problems found"),
        "fmpy validate {}: {}{}",
        fmu.display(),
        stdout(&out),
        stderr(&out)
    );
}

fn fmpy_simulate(venv: &Path, fmu: &Path, interval: &str, start_values: &[&str], csv: &Path) {
    let mut args = vec![
        "simulate",
        fmu.to_str().unwrap(),
        "--output-interval",
        interval,
    ];
    if !start_values.is_empty() {
        args.push("--start-values");
        args.extend_from_slice(start_values);
    }
    args.extend(["--output-file", csv.to_str().unwrap()]);
    let out = tool(venv, "fmpy", &args);
    assert!(
        out.status.success(),
        "fmpy simulate {}: {}{}",
        fmu.display(),
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn fmpy_validates_and_simulates_the_sliding_mode_loops_like_the_native_run() {
    // Control loops: plant, sensor values, controller inputs and signals
    // (u, u_eq, u_s, sigma) as outputs, at communication steps of one
    // integration step and of one control period; the double integrator
    // also with delayed sensor and actuator.
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    /// Communication steps, with the number of integration steps in each.
    type Grids = &'static [(&'static str, usize)];
    let cases: [(&str, &[&str], Grids); 3] = [
        ("smc_tutorial.toml", &[], &[("1e-4", 1), ("1e-2", 100)]),
        (
            "smc_double_integrator.toml",
            &[],
            &[("1e-3", 1), ("1e-2", 10)],
        ),
        (
            "smc_double_integrator.toml",
            &["sensor_delay=0.025", "actuator_delay=0.013"],
            &[("1e-3", 1), ("5e-3", 5)],
        ),
    ];
    for (k, (scenario, sets, grids)) in cases.into_iter().enumerate() {
        let sub = d.join(k.to_string());
        fs::create_dir_all(&sub).unwrap();
        let fmu = export(&sub, scenario, sets);
        fmpy_validate(&venv, &fmu);
        let native = native_run(&sub, scenario, sets);
        let (header, _) = read_csv(&native);
        for column in [
            "controller.u[0]",
            "controller.u_eq[0]",
            "controller.u_s[0]",
            "controller.sigma[0]",
        ] {
            assert!(
                header.iter().any(|h| h == column),
                "{scenario}: no output {column}"
            );
        }
        for &(interval, every) in grids {
            let csv = sub.join(format!("fmpy_{every}.csv"));
            fmpy_simulate(&venv, &fmu, interval, &[], &csv);
            compare_with_native(&csv, &native, every);
        }
    }
}

#[test]
fn a_control_fmu_rolls_back_through_fmpy() {
    // The sliding-mode double integrator with measurements and inputs in
    // transit on both delay lines at the save.
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let host = manifest().join("cli/tests/fmi/rollback.py");
    for (scenario, sets, step, before, after) in [
        (
            "smc_double_integrator.toml",
            &["sensor_delay=0.025", "actuator_delay=0.013"][..],
            "0.002",
            "137",
            "300",
        ),
        (
            "smc_tutorial.toml",
            &["law=smc_improved"][..],
            "0.0003",
            "1001",
            "500",
        ),
    ] {
        let fmu = export(dir.path(), scenario, sets);
        let out = tool(
            &venv,
            "python",
            &[
                host.to_str().unwrap(),
                fmu.to_str().unwrap(),
                step,
                before,
                after,
            ],
        );
        assert!(
            out.status.success() && stdout(&out).contains(" passed, 0 failed"),
            "rollback of {scenario}:\n{}{}",
            stdout(&out),
            stderr(&out)
        );
    }
}

#[test]
fn a_sliding_mode_loop_split_into_two_fmus_in_libcosim_is_the_loop_with_one_step_of_actuation_delay(
) {
    // Plant FMU: the double integrator and its sensor (period T = 0.01 s),
    // force as input. Controller FMU: the law reading the measurement as
    // inputs, sensor and controller from t0 + T. libcosim exchanges them
    // every H = T. Over (t_k, t_(k+1)] the plant is driven by the
    // controller's output at t_k, computed at t_k from the measurement of
    // t_(k-1) (0 over the first step). That is exactly the single-process
    // loop of examples/smc_double_integrator.toml with actuator_delay = T:
    // u_k computed from x(t_k), applied over (t_(k+1), t_(k+2)], u = 0
    // before t_1. So at every communication point t_k: the plant's x(t_k)
    // and the controller's u equal the native row at t_k, and the
    // controller's σ (taken at t_(k-1)) the native σ at t_(k-1).
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = manifest().join("cli/tests/fmi");
    let steps = 300; // 3 s: σ reaches 0 at t ≈ 1 and stays near it
    for law in ["smc_implicit", "smc_ot2"] {
        let sub = d.join(law);
        fs::create_dir_all(&sub).unwrap();
        let plant = export_file(&sub, &data.join("smc_plant.toml"), &[]);
        let law_set = format!("law={law}");
        let ctrl = export_file(&sub, &data.join("smc_controller.toml"), &[&law_set]);
        let csv = sub.join("cosim.csv");
        let out = tool(
            &venv,
            "python",
            &[
                data.join("cosim_smc.py").to_str().unwrap(),
                plant.to_str().unwrap(),
                ctrl.to_str().unwrap(),
                "10000000",
                &steps.to_string(),
                csv.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "libcosim: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let (_, rows) = read_csv(&csv);
        assert_eq!(rows.len(), steps);

        let native = |delay: &str| {
            let (h, r) = read_csv(&native_run(
                &sub,
                "smc_double_integrator.toml",
                &[&law_set, &format!("actuator_delay={delay}")],
            ));
            let col = |name: &str| h.iter().position(|c| c == name).unwrap();
            let cols = [
                col("plant.x[0]"),
                col("plant.x[1]"),
                col("controller.u[0]"),
                col("controller.sigma[0]"),
            ];
            // One row per integration step h = T/10.
            let at = |k: usize| cols.map(|c| r[10 * k][c]);
            (0..=steps).map(at).collect::<Vec<[f64; 4]>>()
        };
        let delayed = native("0.01");
        let mut worst = 0.0f64;
        for row in &rows {
            let k = row[0] as usize;
            let expect = [
                delayed[k][0],
                delayed[k][1],
                delayed[k][2],
                delayed[k - 1][3],
            ];
            for (x, y) in row[1..].iter().zip(expect) {
                worst = worst.max((x - y).abs());
            }
        }
        assert!(worst <= 1e-12, "{law}: largest difference {worst:e}");
        // The loop without the delay is another trajectory: the relation
        // above is not a coincidence of a loop that does not care.
        let undelayed = native("0");
        let gap = rows
            .iter()
            .map(|r| (r[1] - undelayed[r[0] as usize][0]).abs())
            .fold(0.0, f64::max);
        assert!(gap > 1e-3, "{law}: {gap:e}");
        // σ reaches the surface: the loop works.
        let last = rows.last().unwrap();
        assert!(last[4].abs() < 0.01, "{law}: σ = {}", last[4]);
    }
}

#[test]
fn fmpy_simulates_the_manipulator_loop_like_the_native_run() {
    // The nonlinear arm, its impacts and the switching controller (phase,
    // reference, impact count as outputs) through one cycle, h = 1e-3,
    // communication every 10 steps.
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sets = ["step=0.001", "cycles=1"];
    let fmu = export(d, "manipulator.toml", &sets);
    fmpy_validate(&venv, &fmu);
    let native = native_run(d, "manipulator.toml", &sets);
    let (header, rows) = read_csv(&native);
    let phase = header
        .iter()
        .position(|h| h == "controller.phase[0]")
        .expect("the phase is recorded");
    assert!(rows.iter().any(|r| r[phase] == 2.0), "no constrained phase");
    let csv = d.join("fmpy.csv");
    fmpy_simulate(&venv, &fmu, "0.01", &[], &csv);
    compare_with_native(&csv, &native, 1);
}
