//! `nonsmooth fmu export --fmi-version 3` end to end, checked by real
//! importers and independent oracles:
//!
//! * the archive's layout and modelDescription.xml; `fmpy validate`;
//!   `fmutool -check` (fmu-manipulation-toolbox);
//! * the event-driven bouncing ball under FMPy's `simulate_fmu` with event
//!   mode and early return (`tests/fmi/fmi3_ball.py`): the impact times the
//!   host sees against the analytic ones, and the number of `fmi3DoStep`
//!   calls against 100 communication steps plus one per impact before the
//!   accumulation rule (counted from the analytic bounces); without early
//!   return, the outputs against `nonsmooth run` of the same scenario;
//! * the time-stepping ball as FMI 3.0 against the FMI 2.0 FMU;
//! * the event-driven ball as FMI 2.0 (`tests/fmi/fmi2_events.py`): the
//!   transitions located inside fmi2DoStep (logged in logEvents) against
//!   the `--events` log of `nonsmooth run --strategy event-driven`, and the
//!   outputs at the communication points against its CSV;
//! * the implicit sliding-mode loop (`examples/smc_tutorial.toml`) driven
//!   by an event-mode host (`tests/fmi/fmi3_smc.py`): early returns at the
//!   sampling instants, `nextEventTime` the next sampling instant, outputs
//!   equal to `nonsmooth run` at every point the host sees, and a rollback
//!   through serialized bytes bit-identical.
//!
//! The Python tools live in the virtual environment of `.ci/fmi-venv`
//! (`NONSMOOTH_FMI_VENV`, or `target/fmi-venv`); without it these tests
//! fail, never skip.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
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

/// The event-driven ball of the tests.
fn ball_ed() -> PathBuf {
    manifest().join("cli/tests/fmi/ball_event_driven.toml")
}

/// Exports `file` as an FMU of the given FMI version into `dir`.
fn export(dir: &Path, file: &Path, version: &str) -> PathBuf {
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let fmu = dir.join(format!("{stem}_fmi{version}.fmu"));
    let out = nonsmooth(&[
        "fmu",
        "export",
        file.to_str().unwrap(),
        "--fmi-version",
        version,
        "-o",
        fmu.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "export failed: {}", stderr(&out));
    fmu
}

fn venv() -> PathBuf {
    let dir = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("target/fmi-venv"));
    let python = dir.join("bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import fmpy, fmu_manipulation_toolbox"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "the FMI test tools are missing: {} cannot import fmpy and fmu_manipulation_toolbox.\n\
         Create the environment with `.ci/fmi-venv`, or point NONSMOOTH_FMI_VENV at one.",
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

/// Runs a script of tests/fmi/ with the venv's Python; its stdout as JSON.
fn script(venv: &Path, name: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(venv.join("bin/python"))
        .arg(manifest().join("cli/tests/fmi").join(name))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Header and rows of a CSV of numbers.
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

/// `nonsmooth run FILE`; the CSV path.
fn native_run(dir: &Path, file: &Path) -> PathBuf {
    let out = dir.join("native");
    let run = nonsmooth(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    // The one CSV file of the run (named after the scenario).
    let csv: Vec<PathBuf> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    assert_eq!(csv.len(), 1, "{csv:?}");
    csv[0].clone()
}

fn rows(v: &serde_json::Value, key: &str) -> Vec<Vec<f64>> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn entries(fmu: &Path) -> Vec<(String, Vec<u8>)> {
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

/// The analytic ball of `ball_event_driven.toml`: radius 0.1, dropped from
/// 1 m, g = 9.81, e = 0.9. Impact n at t₁ + (2v₁/g) e (1 − eⁿ⁻¹)/(1 − e),
/// t₁ = √(2 · 0.9 / g), v₁ = g t₁; the bounce speed after impact n is eⁿ v₁.
struct Ball {
    t1: f64,
    v1: f64,
}

const G: f64 = 9.81;
const E: f64 = 0.9;

impl Ball {
    fn new() -> Ball {
        let t1 = (2.0 * 0.9 / G).sqrt();
        Ball { t1, v1: G * t1 }
    }
    fn impact(&self, n: i32) -> f64 {
        self.t1 + 2.0 * self.v1 / G * E * (1.0 - E.powi(n - 1)) / (1.0 - E)
    }
    /// The impacts before the accumulation rule makes the contact
    /// persistent (that impact included): the first n whose bounce speed
    /// eⁿ v₁ is below 1e-4 m/s with a flight 2eⁿv₁/g below 1e-4 s (the
    /// scenario's accumulation_velocity and accumulation_time).
    fn impacts_before_accumulation(&self) -> i32 {
        (1..)
            .find(|&n| {
                let v = E.powi(n) * self.v1;
                v < 1e-4 && 2.0 * v / G < 1e-4
            })
            .unwrap()
    }
}

#[test]
fn fmi3_export_layout_validation_and_checks() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for file in [ball_ed(), manifest().join("examples/smc_tutorial.toml")] {
        let fmu = export(d, &file, "3");
        let files = entries(&fmu);
        let id = if file == ball_ed() {
            "bouncing_ball_ed"
        } else {
            "smc_tutorial"
        };
        assert!(files
            .iter()
            .any(|(n, _)| *n == format!("binaries/x86_64-linux/{id}.so")));
        let xml = files
            .iter()
            .find(|(n, _)| n == "modelDescription.xml")
            .map(|(_, d)| String::from_utf8(d.clone()).unwrap())
            .unwrap();
        // Complete state for both strategies.
        let state = "true";
        for attr in [
            r#"fmiVersion="3.0""#.to_string(),
            r#"hasEventMode="true""#.into(),
            r#"mightReturnEarlyFromDoStep="true""#.into(),
            r#"canHandleVariableCommunicationStepSize="true""#.into(),
            format!(r#"canGetAndSetFMUState="{state}""#),
            format!(r#"canSerializeFMUState="{state}""#),
            r#"causality="independent""#.into(),
        ] {
            assert!(xml.contains(attr.as_str()), "{attr} missing:\n{xml}");
        }
        let json = files
            .iter()
            .find(|(n, _)| n == "resources/nonsmooth-fmu.json")
            .map(|(_, d)| String::from_utf8(d.clone()).unwrap())
            .unwrap();
        let token = xml
            .split("instantiationToken=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap();
        assert!(json.contains(token), "the token is the resources' GUID");

        let out = tool(&venv, "fmpy", &["validate", fmu.to_str().unwrap()]);
        assert!(
            out.status.success() && stdout(&out).contains("No problems found"),
            "fmpy validate: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let out = tool(
            &venv,
            "fmutool",
            &["-input", fmu.to_str().unwrap(), "-check"],
        );
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            out.status.success()
                && text.contains("compliant with FMI-3.0")
                && text.contains("No semantic error"),
            "fmutool -check: {text}"
        );
    }
    // Only versions 2 and 3.
    let out = nonsmooth(&[
        "fmu",
        "export",
        ball_ed().to_str().unwrap(),
        "--fmi-version",
        "4",
        "-o",
        d.join("x.fmu").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn fmpy_with_event_mode_and_early_return_sees_every_impact_at_its_analytic_time() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let fmu = export(dir.path(), &ball_ed(), "3");
    let seen = script(
        &venv,
        "fmi3_ball.py",
        &[fmu.to_str().unwrap(), "0.1", "10", "events"],
    );
    let ball = Ball::new();
    let n_acc = ball.impacts_before_accumulation();
    // No analytic impact falls on a communication point (else it would end
    // a step instead of returning early).
    for n in 1..=n_acc {
        let k = ball.impact(n) / 0.1;
        assert!((k - k.round()).abs() > 1e-6, "impact {n} on the grid");
    }
    // The impacts the host saw: the recorded times off the 0.1 s grid.
    // FMPy records a row at the early return (the left limit: fmi3DoStep
    // stops before the impact law) and again after event mode (after
    // fmi3UpdateDiscreteStates applied it): per impact, the first and the
    // last row at its time.
    let mut host: Vec<f64> = Vec::new();
    let mut at_impact: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for r in rows(&seen, "rows") {
        let k = r[0] / 0.1;
        if (k - k.round()).abs() <= 1e-9 {
            continue;
        }
        if host.last() == Some(&r[0]) {
            at_impact.last_mut().unwrap().1 = r;
        } else {
            host.push(r[0]);
            at_impact.push((r.clone(), r));
        }
    }
    assert_eq!(host.len() as i32, n_acc, "one early return per impact");
    let mut worst20 = 0.0f64;
    let mut worst = 0.0f64;
    for (n, t) in (1..).zip(&host) {
        let err = (t - ball.impact(n)).abs();
        if n <= 20 {
            worst20 = worst20.max(err);
        }
        worst = worst.max(err);
    }
    assert!(
        worst20 <= 1e-12,
        "first 20 impacts: largest error {worst20:e}"
    );
    assert!(
        worst <= 1e-9,
        "all {n_acc} impacts: largest error {worst:e}"
    );
    // At each impact the ball is on the floor (gap 0): ball.q[0] (column
    // 1) is the radius before and after. The host sees first the velocity
    // ball.v[0] (column 4) before the impact, −eⁿ⁻¹ v₁ (analytic), then the
    // one after it, −e v⁻ (0 at the last, the accumulation rule's plastic
    // impact).
    let cols = names(&seen);
    assert_eq!(cols[1], "ball.q[0]");
    assert_eq!(cols[4], "ball.v[0]");
    let mut worst_pre = 0.0f64;
    let mut worst_pre20 = 0.0f64;
    let mut worst_post = 0.0f64;
    for (n, (pre, post)) in (1..).zip(&at_impact) {
        for r in [pre, post] {
            assert!((r[1] - 0.1).abs() <= 1e-12, "height {} at {}", r[1], r[0]);
        }
        let v_minus = -E.powi(n - 1) * ball.v1;
        assert!(
            pre[4] < 0.0,
            "velocity {} before the impact at {}",
            pre[4],
            pre[0]
        );
        let err = (pre[4] - v_minus).abs();
        worst_pre = worst_pre.max(err);
        if n <= 20 {
            worst_pre20 = worst_pre20.max(err);
        }
        let e = if n == n_acc { 0.0 } else { E };
        let rel = (post[4] + e * pre[4]).abs() / pre[4].abs();
        worst_post = worst_post.max(rel);
        assert!(
            rel <= 1e-15,
            "impact {n} at {}: v+ = {} for v- = {} (relative error {rel:e})",
            pre[0],
            post[4],
            pre[4]
        );
    }
    // Located to the last bits, each impact time is off by ~1e-13 s: the
    // incoming velocity by g·δt.
    assert!(
        worst_pre20 <= 1e-12 && worst_pre <= 1e-11,
        "velocities before the impacts vs analytic: {worst_pre20:e} m/s (first 20), {worst_pre:e} (all)"
    );
    eprintln!(
        "v- error {worst_pre20:e} m/s (first 20), {worst_pre:e} (all); v+ = -e v- to {worst_post:e} relative"
    );
    let do_steps = seen["calls"]["fmi3DoStep"].as_i64().unwrap();
    assert_eq!(
        do_steps,
        100 + n_acc as i64,
        "fmi3DoStep calls: 100 communication steps and one early return per impact"
    );
    // One update per impact (the update applies it) and one per step that
    // ended at an event, at least; none applies anything twice.
    let updates = seen["calls"]["fmi3UpdateDiscreteStates"].as_i64().unwrap();
    assert!(
        updates > n_acc as i64,
        "{updates} fmi3UpdateDiscreteStates calls"
    );
}

#[test]
fn without_early_return_the_event_driven_fmu_gives_the_native_run_and_time_stepping_the_fmi2_fmu() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Event-driven: FMPy without event mode nor early return, step 0.1,
    // against `nonsmooth run` (outputs every 0.005 s: every 20th row).
    let fmu = export(d, &ball_ed(), "3");
    let seen = script(
        &venv,
        "fmi3_ball.py",
        &[fmu.to_str().unwrap(), "0.1", "10", "plain"],
    );
    assert_eq!(seen["calls"]["fmi3DoStep"].as_i64(), Some(100));
    let (header, native) = read_csv(&native_run(d, &ball_ed()));
    assert_eq!(names(&seen)[1..], header[1..]);
    let fmu_rows = rows(&seen, "rows");
    assert_eq!(fmu_rows.len(), 101);
    let mut worst = 0.0f64;
    for (k, r) in fmu_rows.iter().enumerate() {
        let n = &native[20 * k];
        assert!((r[0] - n[0]).abs() < 1e-9);
        for (a, b) in r[1..].iter().zip(&n[1..]) {
            worst = worst.max((a - b).abs());
        }
    }
    assert!(worst <= 1e-12, "event-driven FMU vs native run: {worst:e}");

    // Time-stepping: the FMI 3.0 FMU of examples/bouncing_ball.toml
    // against its FMI 2.0 FMU, both under FMPy.
    let file = manifest().join("examples/bouncing_ball.toml");
    let f3 = export(d, &file, "3");
    let f2 = export(d, &file, "2");
    let r3 = script(
        &venv,
        "fmi3_ball.py",
        &[f3.to_str().unwrap(), "0.1", "10", "plain"],
    );
    let r2 = script(
        &venv,
        "fmi3_ball.py",
        &[f2.to_str().unwrap(), "0.1", "10", "plain"],
    );
    assert_eq!(names(&r3), names(&r2));
    let (a, b) = (rows(&r3, "rows"), rows(&r2, "rows"));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        for (p, q) in x.iter().zip(y) {
            assert_eq!(
                p.to_bits(),
                q.to_bits(),
                "FMI 3.0 and 2.0 differ at t = {}",
                x[0]
            );
        }
    }
}

#[test]
fn an_fmi2_export_of_the_event_driven_ball_runs_event_driven_inside_do_step() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = export(d, &ball_ed(), "2");
    let seen = script(
        &venv,
        "fmi2_events.py",
        &[fmu.to_str().unwrap(), "0.1", "10"],
    );
    // The native event-driven run with its event log.
    let out = d.join("native");
    let ev = d.join("ev.csv");
    let run = nonsmooth(&[
        "run",
        ball_ed().to_str().unwrap(),
        "--strategy",
        "event-driven",
        "--events",
        ev.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let transitions = ["impact", "contact", "take_off", "mode_switch"];
    let native: Vec<(f64, String, String)> = fs::read_to_string(&ev)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(|s| s.trim_matches('"')).collect();
            (f[0].parse().unwrap(), f[1].to_string(), f[2].to_string())
        })
        .filter(|(_, kind, _)| transitions.contains(&kind.as_str()))
        .collect();
    let located: Vec<(f64, String, String)> = seen["located"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x[0].as_f64().unwrap(),
                x[1].as_str().unwrap().to_string(),
                x[2].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The ball bounces about 30 times before the accumulation rule: every
    // bounce is located inside a doStep of 0.1 s, as in the native run.
    assert!(native.len() > 20, "{} native transitions", native.len());
    assert_eq!(located.len(), native.len(), "{located:?}\n{native:?}");
    for (a, b) in located.iter().zip(&native) {
        assert_eq!((&a.1, &a.2), (&b.1, &b.2));
        assert!((a.0 - b.0).abs() <= 1e-12, "FMU {a:?} native {b:?}");
    }
    // The outputs at the communication points: every 20th row of the
    // native CSV (output step 0.005 s).
    let (header, rows_native) = read_csv(&native_run(d, &ball_ed()));
    assert_eq!(names(&seen)[1..], header[1..]);
    let fmu_rows = rows(&seen, "rows");
    assert_eq!(fmu_rows.len(), 101);
    for (k, r) in fmu_rows.iter().enumerate() {
        let n = &rows_native[20 * k];
        assert!((r[0] - n[0]).abs() < 1e-9);
        for (a, b) in r[1..].iter().zip(&n[1..]) {
            assert!((a - b).abs() <= 1e-12, "t = {}: FMU {a} native {b}", n[0]);
        }
    }
}

#[test]
fn the_sliding_mode_loop_reports_its_sampling_instants_and_matches_the_native_run() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = manifest().join("examples/smc_tutorial.toml");
    let fmu = export(d, &file, "3");
    // Communication step 0.025 s, control period T = 0.01 s, h = 1e-4 s.
    let seen = script(
        &venv,
        "fmi3_smc.py",
        &[fmu.to_str().unwrap(), "0.025", "1.0"],
    );
    let (t_s, h) = (0.01, 1e-4);
    let on = |t: f64, p: f64| ((t / p) - (t / p).round()).abs() < 1e-9;
    assert_eq!(seen["first_next_event_time"].as_f64(), Some(t_s));
    let (header, native) = read_csv(&native_run(d, &file));
    assert_eq!(names(&seen), header[1..]);
    let records = seen["records"].as_array().unwrap();
    let cols = names(&seen);
    let u_col = cols.iter().position(|c| c == "controller.u[0]").unwrap();
    let values = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let mut early = 0;
    let mut worst = 0.0f64;
    let mut worst_left = 0.0f64;
    // The controller's output the host saw last (after the last update).
    let mut u_seen: Option<f64> = None;
    let mut updates_changing_u = 0;
    for r in records {
        let t = r["t"].as_f64().unwrap();
        let is_early = r["early"].as_bool().unwrap();
        let event = r["event"].as_bool().unwrap();
        // Early returns at the sampling instants strictly inside a step.
        if is_early {
            early += 1;
            assert!(on(t, t_s) && !on(t, 0.025), "early return at {t}");
        }
        // Event handling at exactly the sampling instants.
        assert_eq!(event, on(t, t_s), "eventHandlingNeeded at {t}");
        if event && t < 1.0 - 1e-9 {
            let next = r["next_event_time"].as_f64().unwrap();
            let expected = ((t / t_s).round() + 1.0) * t_s;
            assert!(
                (next - expected).abs() <= 1e-15,
                "nextEventTime {next} at {t}, expected {expected}"
            );
        }
        // Outputs after the instant's processing: the native row at that
        // instant (after fmi3UpdateDiscreteStates at an event).
        let k = (t / h).round() as usize;
        let row = &native[k];
        assert!((row[0] - t).abs() < 1e-12, "native time {} vs {t}", row[0]);
        let y = values(&r["y"]);
        let after = if event {
            values(&r["y_after"])
        } else {
            y.clone()
        };
        for (a, b) in after.iter().zip(&row[1..]) {
            worst = worst.max((a - b).abs());
        }
        if event {
            // The plant reaches the instant without jumping (time-stepping).
            assert_eq!(r["values_changed"].as_bool(), Some(false), "at {t}");
            // At the left limit (fmi3DoStep's return) the plant is at t and
            // the loop's outputs are those held since the previous sampling
            // instant: the native row one integration step before.
            let before = &native[k - 1];
            for (j, c) in cols.iter().enumerate() {
                let b = if c.starts_with("plant.") {
                    row[j + 1]
                } else {
                    before[j + 1]
                };
                worst_left = worst_left.max((y[j] - b).abs());
            }
        }
        // The controller's output changes only in fmi3UpdateDiscreteStates:
        // fmi3DoStep returns it as the host saw it last.
        if let Some(u) = u_seen {
            assert_eq!(
                y[u_col].to_bits(),
                u.to_bits(),
                "u changed in fmi3DoStep to {t}"
            );
        }
        if event && after[u_col] != y[u_col] {
            updates_changing_u += 1;
        }
        u_seen = Some(after[u_col]);
    }
    assert!(
        updates_changing_u >= 50,
        "the controller's output changed in {updates_changing_u} updates"
    );
    assert!(
        worst_left <= 1e-12,
        "outputs at the left limits vs native run: largest difference {worst_left:e}"
    );
    // 40 steps of 0.025 s, each with two sampling instants strictly inside
    // ((0, 0.025] holds 0.01 and 0.02; (0.025, 0.05] holds 0.03 and 0.04,
    // 0.05 ends it): 80 early returns, 120 returns in all.
    assert_eq!(early, 80);
    assert_eq!(records.len(), 120);
    assert!(
        worst <= 1e-12,
        "outputs vs native run: largest difference {worst:e}"
    );
    // Rolled back through bytes to t = 0.5: the second half again, the same.
    let again = seen["again"].as_array().unwrap();
    assert!(!again.is_empty());
    assert_eq!(&records[records.len() - again.len()..], &again[..]);
}

/// Records of a rerun from a saved state equal the first run's records
/// after the save point, bit for bit (JSON numbers are written with all
/// their digits); returns how many rollbacks started at an early return.
fn check_rollbacks(seen: &serde_json::Value) -> usize {
    let records = seen["records"].as_array().unwrap();
    let rollbacks = seen["rollbacks"].as_array().unwrap();
    assert!(rollbacks.len() >= 4, "{} rollbacks", rollbacks.len());
    let mut at_events = 0;
    for rb in rollbacks {
        let at = rb["at"].as_u64().unwrap() as usize;
        let again = rb["again"].as_array().unwrap();
        assert!(!again.is_empty());
        assert_eq!(
            &records[at + 1..],
            &again[..],
            "rerun from the state saved at t = {}",
            records[at]["t"]
        );
        if records[at]["early"].as_bool().unwrap() {
            at_events += 1;
        }
    }
    // The state saved at the left limit of the first early return (its
    // update pending), through bytes: the outputs there, then the update and
    // the rest of the run, bit for bit.
    let left = &seen["left"];
    let at = left["at"].as_u64().unwrap() as usize;
    assert_eq!(records[at]["early"].as_bool(), Some(true));
    assert_eq!(
        left["y"], records[at]["y"],
        "outputs at the restored left limit"
    );
    assert_eq!(
        &records[at + 1..],
        left["again"].as_array().unwrap().as_slice(),
        "rerun from the left limit at t = {}",
        records[at]["t"]
    );
    at_events
}

#[test]
fn event_driven_fmus_roll_back_bit_for_bit_across_impacts_and_sampling_instants() {
    let venv = venv();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The ball: states saved at the first three impacts (early returns),
    // just before the third, and at t = 1.5; each restored (every other
    // one through serialized bytes) and the run to 3 s repeated.
    let fmu = export(d, &ball_ed(), "3");
    let seen = script(
        &venv,
        "fmi3_rollback.py",
        &[fmu.to_str().unwrap(), "0.1", "3"],
    );
    let records = seen["records"].as_array().unwrap();
    // The impacts before t = 3 (the first at 0.428 s, then flights of
    // 0.77 s, 0.69 s, …): four early returns.
    let early: Vec<f64> = records
        .iter()
        .filter(|r| r["early"].as_bool().unwrap())
        .map(|r| r["t"].as_f64().unwrap())
        .collect();
    let first = ((2.0 * 0.9) / 9.81f64).sqrt();
    assert_eq!(early.len(), 4, "{early:?}");
    assert!((early[0] - first).abs() < 1e-12, "{early:?}");
    assert_eq!(check_rollbacks(&seen), 3);

    // A PID loop on an event-driven plant (examples/pid.toml with the
    // event-driven strategy), sampling period 0.05 s, host step 0.03 s:
    // states saved at sampling instants inside a step.
    let text = std::fs::read_to_string(manifest().join("examples/pid.toml")).unwrap();
    let text = text.replacen(
        "[simulation]",
        "[simulation]\nstrategy = \"event-driven\"",
        1,
    );
    let file = d.join("pid_event_driven.toml");
    std::fs::write(&file, text).unwrap();
    let fmu = export(d, &file, "3");
    let seen = script(
        &venv,
        "fmi3_rollback.py",
        &[fmu.to_str().unwrap(), "0.03", "0.6"],
    );
    let records = seen["records"].as_array().unwrap();
    for r in records.iter().filter(|r| r["early"].as_bool().unwrap()) {
        let t = r["t"].as_f64().unwrap();
        assert!(
            ((t / 0.05) - (t / 0.05).round()).abs() < 1e-9,
            "early return at {t}"
        );
    }
    assert_eq!(check_rollbacks(&seen), 3);
}

#[test]
fn c_host_mistakes_are_errors_with_messages_never_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = export(d, &ball_ed(), "3");
    let unpacked = d.join("unpacked");
    for (name, data) in entries(&fmu) {
        let p = unpacked.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    }
    let xml = fs::read_to_string(unpacked.join("modelDescription.xml")).unwrap();
    let token = xml
        .split("instantiationToken=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let exe = d.join("bad_host3");
    let src = manifest().join("cli/tests/fmi/bad_host3.c");
    let cc = Command::new("gcc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-ldl")
        .output()
        .expect("gcc runs (the C host needs a C compiler)");
    assert!(cc.status.success(), "gcc: {}", stderr(&cc));
    let lib = unpacked.join("binaries/x86_64-linux/bouncing_ball_ed.so");
    let res = format!("{}/", unpacked.join("resources").display());
    let out = Command::new(&exe)
        .arg(&lib)
        .arg(&res)
        .arg(token)
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
