//! FMU export (`Scenario.export_fmu`): the code of `nonsmooth fmu export`.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use nonsmooth_fmus::export::{export_scenario, ExportError};
use nonsmooth_scenario::Scenario;

use super::errors::raise;
use super::runs::Value;

/// An override as the FMU records it (the text of a `--set` value):
/// numbers in Rust's shortest round-trip form, so they read back equal.
fn override_text(v: Value) -> String {
    match v {
        Value::Number(x) => format!("{x:?}"),
        Value::Text(s) => s,
    }
}

/// Writes an FMI `fmi_version` (2 or 3) co-simulation FMU of the scenario (`text`, reported
/// as `path`) with the overrides, carrying the runtime `library`; returns
/// a dict of what was written. Bad scenarios raise `ScenarioError`; a
/// missing or bad library and write failures raise `FmuExportError`.
#[pyfunction]
pub fn export_fmu<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    set: Vec<(String, Value)>,
    library: String,
    output: String,
    fmi_version: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let overrides: Vec<(String, String)> = set
        .into_iter()
        .map(|(n, v)| (n, override_text(v)))
        .collect();
    let result = py.detach(|| {
        let scenario = Scenario::from_str(&text, &path).map_err(Box::new)?;
        export_scenario(
            scenario,
            &overrides,
            Path::new(&library),
            Path::new(&output),
            fmi_version,
        )
    });
    let summary = result.map_err(|e| match e {
        ExportError::Scenario(se) => raise(
            py,
            "ScenarioError",
            se.to_string(),
            Some(path.clone()),
            se.line(),
        ),
        other => raise(
            py,
            "FmuExportError",
            other.to_string(),
            Some(path.clone()),
            None,
        ),
    })?;
    let d = PyDict::new(py);
    d.set_item("path", summary.path.display().to_string())?;
    d.set_item("model_identifier", summary.model_identifier)?;
    d.set_item("guid", summary.guid)?;
    d.set_item("parameters", summary.parameters)?;
    d.set_item("tunable", summary.tunable)?;
    d.set_item("inputs", summary.inputs)?;
    d.set_item("outputs", summary.outputs)?;
    d.set_item("glibc", summary.glibc)?;
    Ok(d)
}
