//! Rust errors as the Python exceptions of `nonsmooth._errors`.

use pyo3::prelude::*;

use nonsmooth_runs::RunError;

/// Raises `nonsmooth._errors.<class>(message, file, line)`.
pub fn raise(
    py: Python<'_>,
    class: &str,
    message: String,
    file: Option<String>,
    line: Option<usize>,
) -> PyErr {
    let made = py
        .import("nonsmooth._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(), file, line)));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A run's error: `ScenarioError` for bad input, `SimulationError` for a
/// simulation that stopped.
pub fn run_error(py: Python<'_>, e: RunError) -> PyErr {
    let class = if e.is_bad_input() {
        "ScenarioError"
    } else {
        "SimulationError"
    };
    let file = e.path().map(|p| p.display().to_string());
    raise(py, class, e.to_string(), file, e.line())
}
