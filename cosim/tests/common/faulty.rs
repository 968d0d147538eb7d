//! The test FMU `cosim/tests/fmus/faulty.c` (ẋ = −k x + u by forward
//! Euler with an internal step of 1/64 s; a step longer than `h_max` is
//! discarded, a step ending after `fail_at` fails, the internal step
//! reaching `end_at` ends the simulation), compiled with gcc against the
//! FMI 2.0 headers of the Reference FMUs and packed as an FMU. Shared by
//! the cosim tests and the CLI's (`#[path]`).
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Its modelDescription.xml.
pub const MODEL_DESCRIPTION: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="faulty" guid="{faulty-test-fmu}"
  generationTool="nonsmooth tests" variableNamingConvention="flat" numberOfEventIndicators="0">
  <CoSimulation modelIdentifier="faulty" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.125"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0" causality="output" variability="continuous" initial="calculated"><Real/></ScalarVariable>
    <ScalarVariable name="u" valueReference="1" causality="input" variability="continuous"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="k" valueReference="2" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="x0" valueReference="3" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="h_max" valueReference="4" causality="parameter" variability="fixed"><Real start="1e30"/></ScalarVariable>
    <ScalarVariable name="fail_at" valueReference="5" causality="parameter" variability="fixed"><Real start="1e30"/></ScalarVariable>
    <ScalarVariable name="end_at" valueReference="6" causality="parameter" variability="fixed"><Real start="1e30"/></ScalarVariable>
    <ScalarVariable name="discards" valueReference="7" causality="output" variability="discrete" initial="calculated"><Integer/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="1"/>
      <Unknown index="8"/>
    </Outputs>
    <InitialUnknowns>
      <Unknown index="1"/>
      <Unknown index="8"/>
    </InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"#;

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compiles the shared library into `dir` (gcc) and returns its path.
pub fn compile(dir: &Path) -> PathBuf {
    let src = workspace().join("cosim/tests/fmus/faulty.c");
    let include = workspace().join("../shared/fmus/Reference-FMUs/include");
    assert!(include.is_dir(), "{} is missing", include.display());
    let lib = dir.join("faulty.so");
    let out = Command::new("gcc")
        .args(["-O1", "-Wall", "-Werror", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-I")
        .arg(&include)
        .arg("-lm")
        .output()
        .expect("gcc runs (apt-get install gcc)");
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// Packs an FMU at `path` from a modelDescription.xml (none when
/// `description` is `None`) and the shared library `lib`.
pub fn pack(path: &Path, description: Option<&str>, lib: &Path) {
    let mut w = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    if let Some(xml) = description {
        w.start_file("modelDescription.xml", opts).unwrap();
        w.write_all(xml.as_bytes()).unwrap();
    }
    w.start_file("binaries/linux64/faulty.so", opts).unwrap();
    w.write_all(&std::fs::read(lib).unwrap()).unwrap();
    w.finish().unwrap();
}

/// Builds `dir/faulty.fmu` (compiling the library in `dir`).
pub fn build(dir: &Path) -> PathBuf {
    let lib = compile(dir);
    let fmu = dir.join("faulty.fmu");
    pack(&fmu, Some(MODEL_DESCRIPTION), &lib);
    fmu
}
