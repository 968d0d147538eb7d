//! One-step problems from NumPy arrays: the same solvers and report as
//! `nonsmooth solve`.

use std::time::{Duration, Instant};

use nalgebra::DMatrix;
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use nonsmooth::numerics::lcp::{lcp_solver, Lcp};
use nonsmooth::numerics::mlcp::{mlcp_solver, Mlcp};
use nonsmooth::numerics::relay::{relay_solver, Relay};
use nonsmooth::numerics::{NumericsError, SolveReport, SolverSettings};

/// M (square, one row per entry of q) as a dense matrix, and q.
fn matrix_and_q(
    what: &str,
    m: &PyReadonlyArray2<'_, f64>,
    q: &PyReadonlyArray1<'_, f64>,
) -> PyResult<(DMatrix<f64>, Vec<f64>)> {
    let shape = m.shape();
    let (r, c) = (shape[0], shape[1]);
    let q = q.as_slice()?.to_vec();
    if r != c || r != q.len() {
        return Err(PyValueError::new_err(format!(
            "{what}: M is {r}×{c} and q has {} entries: M must be square with one row per entry of q",
            q.len()
        )));
    }
    let mv = m.as_array();
    Ok((DMatrix::from_fn(r, c, |i, j| mv[[i, j]]), q))
}

fn settings(tol: Option<f64>, max_iter: Option<usize>) -> SolverSettings {
    SolverSettings {
        tolerance: tol.unwrap_or(SolverSettings::default().tolerance),
        max_iterations: max_iter,
        ..SolverSettings::default()
    }
}

/// The result of `f` with the wall time it took.
fn timed<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<(T, Duration), E> {
    let start = Instant::now();
    f().map(|r| (r, start.elapsed()))
}

fn bad(what: &'static str) -> impl Fn(NumericsError) -> PyErr {
    move |e| PyValueError::new_err(format!("{what}: {e}"))
}

/// The report as `nonsmooth solve --json` gives it.
fn report<'py>(
    py: Python<'py>,
    (r, time): (SolveReport, Duration),
    z: Vec<f64>,
    w: Vec<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("status", r.status.to_string())?;
    d.set_item("solver", r.solver)?;
    d.set_item("iterations", r.iterations)?;
    d.set_item("error", r.error)?;
    d.set_item("error_abs", r.error_abs)?;
    d.set_item("time_s", time.as_secs_f64())?;
    d.set_item("z", PyArray1::from_vec(py, z))?;
    d.set_item("w", PyArray1::from_vec(py, w))?;
    Ok(d)
}

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
    let (dm, q) = matrix_and_q("solve_lcp", &m, &q)?;
    let problem = Lcp::new(dm, q).map_err(bad("solve_lcp"))?;
    let mut s = lcp_solver(solver, settings(tol, max_iter)).map_err(bad("solve_lcp"))?;
    let n = problem.size();
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = py
        .detach(|| timed(|| s.solve(&problem, &mut z, &mut w)))
        .map_err(bad("solve_lcp"))?;
    report(py, r, z, w)
}

/// Solves the MLCP whose first `n_eq` rows are equalities:
/// [A C; D B] (u, v) + (a, b) = (0, w), 0 ≤ v ⊥ w ≥ 0, from zero; the
/// report as for [`solve_lcp`] (z = (u, v), w the residual of every row).
#[pyfunction]
#[pyo3(signature = (m, q, n_eq, solver="default", tol=None, max_iter=None))]
#[allow(clippy::too_many_arguments)]
pub fn solve_mlcp<'py>(
    py: Python<'py>,
    m: PyReadonlyArray2<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
    n_eq: usize,
    solver: &str,
    tol: Option<f64>,
    max_iter: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let (dm, q) = matrix_and_q("solve_mlcp", &m, &q)?;
    let n = q.len();
    let problem = Mlcp::new(dm, q, n_eq).map_err(bad("solve_mlcp"))?;
    let mut s = mlcp_solver(solver, settings(tol, max_iter)).map_err(bad("solve_mlcp"))?;
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = py
        .detach(|| timed(|| s.solve(&problem, &mut z, &mut w)))
        .map_err(bad("solve_mlcp"))?;
    report(py, r, z, w)
}

/// Solves the relay (box-constrained LCP) w = M z + q, z ∈ [lb, ub],
/// −w ∈ N_[lb,ub](z), from zero; the report as for [`solve_lcp`].
#[pyfunction]
#[pyo3(signature = (m, q, lb, ub, solver="default", tol=None, max_iter=None))]
#[allow(clippy::too_many_arguments)]
pub fn solve_relay<'py>(
    py: Python<'py>,
    m: PyReadonlyArray2<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
    lb: PyReadonlyArray1<'py, f64>,
    ub: PyReadonlyArray1<'py, f64>,
    solver: &str,
    tol: Option<f64>,
    max_iter: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let (dm, q) = matrix_and_q("solve_relay", &m, &q)?;
    let n = q.len();
    let problem = Relay::new(dm, q, lb.as_slice()?.to_vec(), ub.as_slice()?.to_vec())
        .map_err(bad("solve_relay"))?;
    let mut s = relay_solver(solver, settings(tol, max_iter)).map_err(bad("solve_relay"))?;
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = py
        .detach(|| timed(|| s.solve(&problem, &mut z, &mut w)))
        .map_err(bad("solve_relay"))?;
    report(py, r, z, w)
}
