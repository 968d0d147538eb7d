//! How `nonsmooth run` ends a co-simulation whose FMU ends it or fails:
//!
//! * the Reference FMU Stair (fmi2Terminated when its counter reaches 10,
//!   at t = 9) run to t = 10: exit 0, a note naming the FMU and the time,
//!   the rows equal FMPy's `simulate_fmu` up to t = 9;
//! * the test FMU `cosim/tests/fmus/faulty.c` (ẋ = −x by forward Euler
//!   with the internal step 1/64 s): a step discarded above `h_max` and
//!   retried as half steps gives the CSV of the run with the half step;
//!   fmi2Error at a chosen time exits 1 naming the FMU and the time, with
//!   the rows up to that time written; ending the simulation between two
//!   communication points ends the run at the next point;
//! * an FMU whose modelDescription.xml is missing or malformed: exit 2,
//!   the scenario's line, the FMU file and what is wrong with the XML
//!   (line and column), nothing written.

#[path = "../../cosim/tests/common/mod.rs"]
mod common;
#[path = "../../cosim/tests/common/faulty.rs"]
mod faulty;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nonsmooth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .output()
        .expect("the nonsmooth binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `dir/<name>.toml`: one FMU `fmu` of `path`, the given step, final
/// time, parameters and records.
fn scenario(dir: &Path, name: &str, path: &Path, step: f64, t_end: f64, extra: &str) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\n\
         [simulation]\n\
         t_end = {t_end}\n\
         step = {step}\n\
         [[fmus]]\n\
         name = \"fmu\"\n\
         path = \"{}\"\n\
         step = {step}\n\
         {extra}",
        path.display()
    );
    std::fs::write(&file, text).unwrap();
    file
}

fn run(file: &Path, out: &Path) -> Output {
    nonsmooth(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ])
}

/// The CSV: header, rows.
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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

/// x after n internal steps of faulty.c (k = 1, u = 0, x₀ = 1).
fn euler(n: usize) -> f64 {
    let mut x: f64 = 1.0;
    for _ in 0..n {
        x += (1.0 / 64.0) * (-x + 0.0);
    }
    x
}

#[test]
fn stair_ends_the_run_at_nine_with_fmpys_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stair = common::reference_fmus().join("Stair.fmu");
    let file = scenario(
        d,
        "stair",
        &stair,
        0.2,
        10.0,
        "[output]\nrecord = [\"fmu.counter\"]\n",
    );
    let out = run(&file, &d.join("out"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("FMU 'fmu' ended the simulation at t = 9"),
        "no note naming the FMU and the time: {err}"
    );
    let (header, rows) = csv(&d.join("out/stair.csv"));
    assert_eq!(header, ["t", "fmu.counter"]);
    let fmpy = common::fmpy_simulate(&stair, 0.2, 10.0, &["counter"]);
    assert_eq!(rows.len(), 46, "t = 0, 0.2, …, 9");
    assert_eq!(rows.len(), fmpy.len());
    for (k, (r, f)) in rows.iter().zip(&fmpy).enumerate() {
        assert!(
            (r[0] - f[0]).abs() < 1e-12,
            "row {k}: t {} vs {}",
            r[0],
            f[0]
        );
        assert_eq!(r[1], f[1], "row {k}: counter");
    }
    assert_eq!(rows.last().unwrap(), &vec![9.0, 10.0]);
}

#[test]
fn faulty_fmus_end_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = faulty::build(d);
    let record = "[output]\nrecord = [\"fmu.x\", \"fmu.discards\"]\n";

    // Discarded above h_max = 0.125 and retried as two half steps: the
    // CSV of the run with the step 0.125 (recorded every 0.25 s).
    let retried = scenario(
        d,
        "retried",
        &fmu,
        0.25,
        2.0,
        &format!("parameters = {{ h_max = 0.125 }}\n{record}"),
    );
    let out = run(&retried, &d.join("out"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let small = d.join("small.toml");
    std::fs::write(
        &small,
        std::fs::read_to_string(&retried)
            .unwrap()
            .replace("name = \"retried\"", "name = \"small\"")
            .replace(
                "step = 0.25\nparameters = { h_max = 0.125 }",
                "step = 0.125",
            ),
    )
    .unwrap();
    let out = run(&small, &d.join("out"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (_, a) = csv(&d.join("out/retried.csv"));
    let (_, b) = csv(&d.join("out/small.csv"));
    assert_eq!(a.len(), 9);
    assert_eq!(b.len(), 9);
    for (k, (ra, rb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(ra[..2], rb[..2], "row {k}");
        assert_eq!(ra[1], euler(16 * k), "row {k}: the recursion");
        assert_eq!((ra[2], rb[2]), (k as f64, 0.0), "row {k}: discards");
    }

    // fmi2Error on the step (0.5, 0.625]: exit 1, the FMU and the time
    // named, the rows up to t = 0.5 written.
    let failing = scenario(
        d,
        "failing",
        &fmu,
        0.125,
        2.0,
        &format!("parameters = {{ fail_at = 0.55 }}\n{record}"),
    );
    let out = run(&failing, &d.join("out"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in ["FMU 'fmu'", "fmi2DoStep", "Error", "t = 0.5", "failing.csv"] {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
    let (_, rows) = csv(&d.join("out/failing.csv"));
    let ts: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ts, [0.0, 0.125, 0.25, 0.375, 0.5]);
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r[1], euler(8 * k), "row {k}");
    }

    // Ended at t = 0.3125 (end_at = 0.3), between the points 0.25 and
    // 0.375: the last row is at 0.375 with x(0.3125); exit 0.
    let ending = scenario(
        d,
        "ending",
        &fmu,
        0.125,
        2.0,
        &format!("parameters = {{ end_at = 0.3 }}\n{record}"),
    );
    let out = run(&ending, &d.join("out"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("FMU 'fmu' ended the simulation at t = 0.3125") && err.contains("t = 0.375"),
        "{err}"
    );
    let (_, rows) = csv(&d.join("out/ending.csv"));
    let ts: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ts, [0.0, 0.125, 0.25, 0.375]);
    assert_eq!(rows[3][1], euler(20));
}

#[test]
fn a_missing_or_malformed_model_description_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lib = faulty::compile(d);
    let cases: [(&str, Option<String>, &[&str]); 3] = [
        (
            "missing",
            None,
            &["the archive has no modelDescription.xml"],
        ),
        (
            "truncated",
            Some(
                faulty::MODEL_DESCRIPTION
                    [..faulty::MODEL_DESCRIPTION.find("</ModelVariables>").unwrap()]
                    .to_string(),
            ),
            &[
                "modelDescription.xml:",
                "the text ends inside <ModelVariables>",
            ],
        ),
        (
            "unclosed",
            Some(faulty::MODEL_DESCRIPTION.replacen(
                "<Real/></ScalarVariable>",
                "<Real></ScalarVariable>",
                1,
            )),
            &[
                "modelDescription.xml:8:",
                "</ScalarVariable> closes <Real> opened at 8:",
            ],
        ),
    ];
    for (name, xml, needles) in cases {
        let fmu = d.join(format!("{name}.fmu"));
        faulty::pack(&fmu, xml.as_deref(), &lib);
        let file = scenario(d, name, &fmu, 0.125, 1.0, "");
        let out = run(&file, &d.join("out"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        let at = format!("{name}.toml:6:");
        assert!(err.contains(&at), "{name}: no `{at}` in: {err}");
        assert!(err.contains(&format!("{name}.fmu")), "{name}: {err}");
        for n in needles {
            assert!(err.contains(n), "{name}: `{n}` not in: {err}");
        }
        assert!(
            !d.join(format!("out/{name}.csv")).exists(),
            "{name}: a CSV was written"
        );
    }
}
