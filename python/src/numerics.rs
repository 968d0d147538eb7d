//! One-step problems from NumPy arrays: the same solvers and report as
//! `nonsmooth solve`.

use nalgebra::DMatrix;
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use nonsmooth::numerics::lcp::{lcp_solver, Lcp};
use nonsmooth::numerics::SolverSettings;

/// Solves the LCP w = M z + q, 0 ≤ z ⊥ w ≥ 0 from z = 0 with the named
/// solver (`default`, `lemke`, `pgs`, …, as `nonsmooth solve --solver`);
/// returns the report as a dict: status, solver, iterations, error,
/// error_abs, time_s, z, w. Bad shapes or settings raise `ValueError`.
#[pyfunction]
#[pyo3(signature = (m, q, solver="default", tol=None, max_iter=None))]
pub fn solve_lcp<'py>(
    py: Python<'py>,
    m: PyReadonlyArray2<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
    solver: &str,
    tol: Option<f64>,
    max_iter: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let shape = m.shape();
    let (r, c) = (shape[0], shape[1]);
    let q = q.as_slice()?.to_vec();
    if r != c || r != q.len() {
        return Err(PyValueError::new_err(format!(
            "solve_lcp: M is {r}×{c} and q has {} entries: M must be square with one row per entry of q",
            q.len()
        )));
    }
    let mv = m.as_array();
    let dm = DMatrix::from_fn(r, c, |i, j| mv[[i, j]]);
    let bad =
        |e: nonsmooth::numerics::NumericsError| PyValueError::new_err(format!("solve_lcp: {e}"));
    let problem = Lcp::new(dm, q).map_err(bad)?;
    let settings = SolverSettings {
        tolerance: tol.unwrap_or(SolverSettings::default().tolerance),
        max_iterations: max_iter,
        ..SolverSettings::default()
    };
    let mut s = lcp_solver(solver, settings).map_err(bad)?;
    let n = problem.size();
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let report = py
        .detach(|| s.solve(&problem, &mut z, &mut w))
        .map_err(bad)?;
    let d = PyDict::new(py);
    d.set_item("status", report.status.to_string())?;
    d.set_item("solver", report.solver)?;
    d.set_item("iterations", report.iterations)?;
    d.set_item("error", report.error)?;
    d.set_item("error_abs", report.error_abs)?;
    d.set_item("time_s", report.time.as_secs_f64())?;
    d.set_item("z", PyArray1::from_vec(py, z))?;
    d.set_item("w", PyArray1::from_vec(py, w))?;
    Ok(d)
}
