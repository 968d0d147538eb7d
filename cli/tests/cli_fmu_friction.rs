//! FMUs of scenarios with frictional contacts (`newton_impact_friction`),
//! exported by `nonsmooth fmu export` and driven by fmpy's FMU2Slave
//! (`tests/fmi/rollback.py`): fmi2GetFMUstate, steps, fmi2SetFMUstate and
//! the same steps again give the same outputs bit for bit (q, v, impulses,
//! contact statuses), and so does a serialized state read by another
//! instance — through the woodpecker's jams, slips and beak impacts and the
//! puck's sliding and stopping. The in-process rollback is
//! `scenario/tests/friction_rollback.rs`.
//!
//! The Python tools live in the virtual environment `NONSMOOTH_FMI_VENV`
//! (or `target/fmi-venv`); without it this test FAILS, as those of
//! `cli_fmu.rs` (README.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn venv_python() -> PathBuf {
    let dir = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("target/fmi-venv"));
    let python = dir.join("bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import fmpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "the FMI test tools are missing: {} cannot import fmpy. Create the environment with \
         `.ci/fmi-venv`, or point NONSMOOTH_FMI_VENV at one.",
        python.display()
    );
    python
}

fn export(dir: &Path, scenario: &str, sets: &[&str]) -> PathBuf {
    let file = manifest().join("examples").join(scenario);
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
    let out: Output = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(&args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs");
    assert!(out.status.success(), "export failed: {}", text(&out.stderr));
    fmu
}

#[test]
fn frictional_fmus_roll_back_bit_identically_through_fmpy() {
    let python = venv_python();
    let dir = tempfile::tempdir().unwrap();
    let host = manifest().join("cli/tests/fmi/rollback.py");
    // (scenario, --set, communication step, steps before the save, after):
    // the woodpecker saved at 0.06 s, its sleeve jammed, and run over the
    // next cycle (slip, free flight, beak impact at 0.081 s, jams); the
    // puck saved while it slides, run through its stop at 0.68 s.
    for (scenario, sets, step, before, after) in [
        (
            "woodpecker.toml",
            &["t_end=0.3"][..],
            "0.0001",
            "600",
            "1500",
        ),
        ("sliding_puck.toml", &[][..], "0.002", "150", "350"),
    ] {
        let fmu = export(dir.path(), scenario, sets);
        let out = Command::new(&python)
            .args([
                host.to_str().unwrap(),
                fmu.to_str().unwrap(),
                step,
                before,
                after,
            ])
            .output()
            .expect("python runs");
        let stdout = text(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("4 passed, 0 failed"),
            "rollback of {scenario}:\n{stdout}{}",
            text(&out.stderr)
        );
    }
}
