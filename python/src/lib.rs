//! The native module of the `nonsmooth` Python package (`nonsmooth._native`).
//!
//! Thin bindings over `nonsmooth-runs`: a run is read, built and simulated
//! in Rust with the interpreter released (`Python::detach`), and its rows
//! are handed to NumPy as one array without a copy (the row-major buffer
//! becomes the array's memory). Errors become the Python exceptions of
//! `nonsmooth._errors` (`ScenarioError` for bad input, `SimulationError`
//! for a run that stopped), carrying the file, the line and the message.
//! The Python side (`nonsmooth/*.py`) builds the user-facing API on these
//! functions: `run`, `Result`, `Scenario`, `sweep`.

mod errors;
mod fmu;
mod numerics;
mod runs;

use pyo3::prelude::*;

/// The module `nonsmooth._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(runs::run, m)?)?;
    m.add_function(wrap_pyfunction!(runs::run_batch, m)?)?;
    m.add_function(wrap_pyfunction!(runs::parameters, m)?)?;
    m.add_function(wrap_pyfunction!(runs::validate, m)?)?;
    m.add_function(wrap_pyfunction!(fmu::export_fmu, m)?)?;
    m.add_function(wrap_pyfunction!(numerics::solve_lcp, m)?)?;
    m.add_function(wrap_pyfunction!(numerics::solve_mlcp, m)?)?;
    m.add_function(wrap_pyfunction!(numerics::solve_relay, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
