//! `nonsmooth run` end to end: runs the built binary on scenario files and
//! checks the CSV, the event log, the exit statuses and that failures leave
//! no file behind.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nonsmooth_scenario::Scenario;

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn example(name: &str) -> PathBuf {
    manifest().join("examples").join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .arg("run")
        .args(args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Header and rows of a CSV of numbers.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|x| {
                    x.parse::<f64>()
                        .unwrap_or_else(|_| panic!("not a number: {x}"))
                })
                .collect()
        })
        .collect();
    (header, rows)
}

/// The rows of a library run of a scenario (with parameter overrides).
fn library_rows(file: &Path, set: &[(&str, f64)]) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut s = Scenario::from_file(file).unwrap();
    for (k, v) in set {
        s.set_parameter(k, *v).unwrap();
    }
    let built = s.build().unwrap();
    let mut sim = built.control_loop().unwrap();
    let mut rows = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    sim.run(|s| {
        if s.plant().is_output_instant() {
            built.row(s, &mut row);
            rows.push(row.clone());
        }
    })
    .unwrap();
    let header = built.header().iter().map(|s| s.to_string()).collect();
    (header, rows)
}

#[test]
fn bouncing_ball_csv_and_event_log() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out/nested");
    let events = dir.path().join("log/events.csv");
    let ball = example("bouncing_ball.toml");
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("2000 steps") && err.contains("µs/step") && err.contains("solver iterations"),
        "summary: {err}"
    );
    assert!(err.contains("bouncing_ball.csv"), "{err}");
    assert!(out.stdout.is_empty());

    assert_eq!(listing(&out_dir), ["bouncing_ball.csv"]);
    let (header, rows) = read_csv(&out_dir.join("bouncing_ball.csv"));
    assert_eq!(
        header,
        [
            "t",
            "ball.q[0]",
            "ball.q[1]",
            "ball.q[2]",
            "ball.v[0]",
            "ball.v[1]",
            "ball.v[2]",
            "floor.y[0]",
            "floor.lambda[0]"
        ]
    );
    assert_eq!(rows.len(), 2001);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert_eq!(rows[0][0], 0.0);
    assert_eq!(rows[2000][0], 10.0);

    // Every value reads back to the exact f64 of the library run.
    let (lib_header, lib_rows) = library_rows(&ball, &[]);
    assert_eq!(lib_header, header);
    assert_eq!(lib_rows.len(), rows.len());
    for (k, (a, b)) in rows.iter().zip(&lib_rows).enumerate() {
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.to_bits(), y.to_bits(), "row {k}: {x} vs {y}");
        }
    }

    // Event log: t, kind, object; the output at t0, then each step's events.
    let text = fs::read_to_string(&events).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t,kind,object"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 3));
    assert_eq!(rows[0], ["0", "output", "output"]);
    assert_eq!(rows[1], ["0.005", "time_discretisation", "step"]);
    assert_eq!(rows[2], ["0.005", "output", "output"]);
    assert_eq!(rows.len(), 1 + 2 * 2000);
    for r in &rows {
        assert!(r[0].parse::<f64>().is_ok());
        assert!(matches!(
            (r[1], r[2]),
            ("output", "output") | ("time_discretisation", "step")
        ));
    }
    assert_eq!(listing(&dir.path().join("log")), ["events.csv"]);
}

#[test]
fn set_changes_the_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let ball = example("bouncing_ball.toml");
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        a.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "quiet: {}", stderr(&out));
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
        "--set",
        "restitution=0.5",
        "--set",
        "height=2*radius + 0.9",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, ra) = read_csv(&a.join("bouncing_ball.csv"));
    let (_, rb) = read_csv(&b.join("bouncing_ball.csv"));
    assert_eq!(rb[0][1], 2.0 * 0.1 + 0.9);
    assert_ne!(ra, rb);
    let (_, lib) = library_rows(&ball, &[("restitution", 0.5), ("height", 1.1)]);
    assert_eq!(lib.len(), rb.len());
    // Same values as the library run with those parameters.
    for (x, y) in rb.iter().flatten().zip(lib.iter().flatten()) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
}

#[test]
fn every_bundled_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (file, set) in [
        ("diode_bridge.toml", vec!["t_end=1e-3"]),
        ("relay.toml", vec!["t_end=2"]),
        ("beads_column.toml", vec!["beads=1000", "t_end=0.01"]),
    ] {
        let path = example(file);
        let mut args = vec![
            path.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ];
        for s in set {
            args.extend(["--set", s]);
        }
        let out = run(&args);
        assert!(out.status.success(), "{file}: {}", stderr(&out));
    }
    assert_eq!(
        listing(dir.path()),
        ["beads_column.csv", "diode_bridge.csv", "relay.csv"]
    );
    let (header, _) = read_csv(&dir.path().join("beads_column.csv"));
    assert_eq!(header.len(), 5);
}

#[test]
fn bad_input_exits_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let text = fs::read_to_string(example("bouncing_ball.toml"))
        .unwrap()
        .replace("q0 = [\"height\", 0, 0]", "q0 = [\"heigth\", 0, 0]");
    let line = text.lines().position(|l| l.contains("heigth")).unwrap() + 1;
    fs::write(&bad, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&[bad.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("bad.toml:{line}:")) && err.contains("unknown parameter `heigth`"),
        "{err}"
    );
    assert!(listing(&out_dir).is_empty());

    // Unknown parameter in --set, bad --set syntax, missing file.
    let ball = example("bouncing_ball.toml");
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--set",
        "gravty=1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no parameter `gravty`"),
        "{}",
        stderr(&out)
    );
    let out = run(&[ball.to_str().unwrap(), "--set", "gravity"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["no/such/file.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no/such/file.toml"));
}

#[test]
fn invalid_settings_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let ball = example("bouncing_ball.toml");
    let line = fs::read_to_string(&ball)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("step = \"step\""))
        .unwrap()
        + 1;
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
        "--events",
        dir.path().join("ev.csv").to_str().unwrap(),
        "--set",
        "step=-1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("bouncing_ball.toml:{line}:")) && err.contains("step"),
        "{err}"
    );
    assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
}

#[test]
fn a_simulation_failure_exits_1_and_leaves_no_file() {
    // The bead column with a Gauss–Seidel solver whose iteration limit is a
    // parameter: one sweep cannot solve the coupled contacts of a resting
    // column.
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(example("beads_column.toml"))
        .unwrap()
        .replace("t_end = 1\n", "t_end = 1\niters = 10000\n")
        .replace(
            "step = \"step\"\n",
            "step = \"step\"\nsolver = \"pgs\"\nmax_iterations = \"iters\"\n",
        );
    assert!(text.contains("iters = 10000") && text.contains("\"pgs\""));
    let file = dir.path().join("column.toml");
    fs::write(&file, text).unwrap();
    let common = [
        file.to_str().unwrap(),
        "--set",
        "gap=0",
        "--set",
        "beads=5",
        "--set",
        "t_end=0.05",
    ];
    let ok_dir = dir.path().join("ok");
    let mut args = common.to_vec();
    args.extend(["--out", ok_dir.to_str().unwrap()]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(listing(&ok_dir), ["beads_column.csv"]);

    let fail_dir = dir.path().join("fail");
    let events = fail_dir.join("events.csv");
    let mut args = common.to_vec();
    args.extend([
        "--out",
        fail_dir.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--set",
        "iters=1",
    ]);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("simulation failed") && err.contains("t = ") && err.contains("step"),
        "{err}"
    );
    assert!(listing(&fail_dir).is_empty(), "{:?}", listing(&fail_dir));
}

#[test]
fn plot_flag_draws_the_plots_the_scenario_declares() {
    let dir = tempfile::tempdir().unwrap();
    let ball = example("bouncing_ball.toml");
    let out = run(&[
        ball.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
        "--plot",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        listing(dir.path()),
        ["bouncing_ball.csv", "bouncing_ball_height.svg"]
    );
    let svg = std::fs::read_to_string(dir.path().join("bouncing_ball_height.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("ball.q[0]"),
        "the plot names its column"
    );
}

#[test]
fn help_describes_the_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "--set",
        "--out",
        "--events",
        "--quiet",
        "--plot",
        "Exit status",
    ] {
        assert!(text.contains(word), "{word}: {text}");
    }
}

#[test]
fn strategy_flag_runs_the_same_example_event_driven() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.csv");
    let ball = example("bouncing_ball.toml");
    let out = run(&[
        ball.to_str().unwrap(),
        "--strategy",
        "event-driven",
        "--out",
        dir.path().to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Same columns and output instants as time-stepping.
    let (header, rows) = read_csv(&dir.path().join("bouncing_ball.csv"));
    assert_eq!(header[0], "t");
    assert_eq!(rows.len(), 2001);
    let (_, ts_rows) = library_rows(&ball, &[]);
    for (k, (r, ts)) in rows.iter().zip(&ts_rows).enumerate() {
        assert_eq!(r[0], ts[0], "row {k}: the same instant");
    }
    // The first impact, at the exact time of the fall of 0.9 m.
    let text = fs::read_to_string(&events).unwrap();
    let impacts: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[1] == "impact")
        .map(|r| {
            assert_eq!(r[2], "floor");
            r[0].parse().unwrap()
        })
        .collect();
    assert!(impacts.len() > 40, "{} impacts", impacts.len());
    let t1 = (2.0f64 * 0.9 / 9.81).sqrt();
    assert!((impacts[0] - t1).abs() < 1e-14, "{} vs {t1}", impacts[0]);

    // An unknown strategy is bad input.
    let out = run(&[ball.to_str().unwrap(), "--strategy", "leapfrog", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("event-driven"), "{}", stderr(&out));
}
