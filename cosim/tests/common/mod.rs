//! Test helpers: the Modelica Reference FMUs built with cmake from the
//! shared source, and FMPy (in the FMI virtual environment) as the
//! independent importer.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The target directory (CARGO_TARGET_DIR or <root>/target).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// The FMI virtual environment (NONSMOOTH_FMI_VENV or target/fmi-venv);
/// the tests fail, never skip, when it is missing.
pub fn venv_python() -> PathBuf {
    let venv = std::env::var_os("NONSMOOTH_FMI_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/fmi-venv"));
    let py = venv.join("bin/python");
    assert!(
        py.exists(),
        "{} is missing: create the FMI tools' environment with .ci/fmi-venv (see README.md)",
        py.display()
    );
    py
}

/// Builds the FMI 2.0 Reference FMUs (cmake, gcc) once per test binary
/// and returns the folder that holds `<Model>.fmu`.
pub fn reference_fmus() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = root().join("../shared/fmus/Reference-FMUs");
        assert!(src.is_dir(), "{} is missing", src.display());
        let build = target_dir().join("reference-fmus-2");
        let fmus = build.join("fmus");
        if !fmus.join("Feedthrough.fmu").exists() {
            let ok = Command::new("cmake")
                .arg("-S")
                .arg(&src)
                .arg("-B")
                .arg(&build)
                .args([
                    "-DFMI_VERSION=2",
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_C_FLAGS=-Wno-error=stringop-truncation",
                ])
                .status()
                .expect("cmake (apt-get install cmake gcc)")
                .success();
            assert!(ok, "cmake configure of the Reference FMUs failed");
            let ok = Command::new("cmake")
                .arg("--build")
                .arg(&build)
                .arg("-j2")
                .status()
                .expect("cmake")
                .success();
            assert!(ok, "cmake build of the Reference FMUs failed");
        }
        fmus
    })
}

/// FMPy's `simulate_fmu` of a co-simulation FMU with communication step
/// `h` up to `stop`: one row per communication point (t0 included), the
/// time then the named outputs, as floats printed with `repr` (exact).
pub fn fmpy_simulate(fmu: &Path, h: f64, stop: f64, outputs: &[&str]) -> Vec<Vec<f64>> {
    let script = format!(
        "import fmpy\n\
         r = fmpy.simulate_fmu({fmu:?}, fmi_type='CoSimulation', stop_time={stop:?}, \
         output_interval={h:?}, output={outputs:?})\n\
         for row in r:\n    print(' '.join(repr(float(v)) for v in row))\n",
        fmu = fmu.display().to_string(),
    );
    let out = Command::new(venv_python())
        .args(["-c", &script])
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "fmpy failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
        .collect()
}

/// Builds the FMI 3.0 Reference FMUs (cmake, gcc) once per test binary
/// and returns the folder that holds `<Model>.fmu`.
pub fn reference_fmus3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = root().join("../shared/fmus/Reference-FMUs");
        assert!(src.is_dir(), "{} is missing", src.display());
        let build = target_dir().join("reference-fmus-3");
        let fmus = build.join("fmus");
        if !fmus.join("StateSpace.fmu").exists() {
            let ok = Command::new("cmake")
                .arg("-S")
                .arg(&src)
                .arg("-B")
                .arg(&build)
                .args([
                    "-DFMI_VERSION=3",
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_C_FLAGS=-Wno-error=stringop-truncation",
                ])
                .status()
                .expect("cmake (apt-get install cmake gcc)")
                .success();
            assert!(ok, "cmake configure of the FMI 3.0 Reference FMUs failed");
            let ok = Command::new("cmake")
                .arg("--build")
                .arg(&build)
                .arg("-j2")
                .status()
                .expect("cmake")
                .success();
            assert!(ok, "cmake build of the FMI 3.0 Reference FMUs failed");
        }
        fmus
    })
}

/// Runs a Python script in the FMI virtual environment and parses each
/// line of its output as space-separated floats.
pub fn python_rows(script: &str) -> Vec<Vec<f64>> {
    let out = Command::new(venv_python())
        .args(["-c", script])
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
        .collect()
}
