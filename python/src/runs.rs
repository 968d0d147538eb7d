//! Runs, sweep batches and scenario queries.

use std::path::Path;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use nonsmooth::simulation::Strategy;
use nonsmooth_runs::{run_points, Metric, Recording, RunError, RunOptions};
use nonsmooth_scenario::{Quantity, Scenario};

use super::errors::{raise, run_error};

/// A parameter value from Python: a number, or a text (an expression of
/// the other parameters, or a word such as a law name).
#[derive(Debug, Clone, FromPyObject)]
pub enum Value {
    /// A number (ints are read as floats).
    Number(f64),
    /// A text.
    Text(String),
}

impl From<Value> for Quantity {
    fn from(v: Value) -> Quantity {
        match v {
            Value::Number(x) => x.into(),
            Value::Text(s) => nonsmooth_runs::quantity(&s),
        }
    }
}

fn overrides(set: Vec<(String, Value)>) -> Vec<(String, Quantity)> {
    set.into_iter().map(|(n, v)| (n, v.into())).collect()
}

fn scenario(text: &str, path: &str, set: &[(String, Quantity)]) -> Result<Scenario, RunError> {
    let mut s = Scenario::from_str(text, path)?;
    for (name, value) in set {
        s.set_parameter(name, value.clone())?;
    }
    Ok(s)
}

fn options(
    py: Python<'_>,
    path: &str,
    strategy: Option<&str>,
    t_end: Option<f64>,
    events: bool,
) -> PyResult<RunOptions> {
    let strategy = match strategy {
        None => None,
        Some(s) => Some(s.parse::<Strategy>().map_err(|e| {
            raise(
                py,
                "ScenarioError",
                format!("{path}: strategy: {e}"),
                Some(path.to_string()),
                None,
            )
        })?),
    };
    Ok(RunOptions {
        strategy,
        t_end,
        events,
        watch: None,
    })
}

/// Parsed metrics, or a `ScenarioError` naming the bad one.
fn metrics(py: Python<'_>, path: &str, specs: &[String]) -> PyResult<Vec<Metric>> {
    specs
        .iter()
        .map(|s| {
            s.parse::<Metric>().map_err(|e| {
                raise(
                    py,
                    "ScenarioError",
                    e.to_string(),
                    Some(path.to_string()),
                    None,
                )
            })
        })
        .collect()
}

/// What `run` returns to Python.
type RunOutput<'py> = (
    Vec<String>,
    Bound<'py, PyAny>,
    Bound<'py, PyArray1<f64>>,
    Vec<&'static str>,
    Vec<String>,
    Vec<f64>,
    (u64, u64, f64),
);

/// Runs a scenario given as text (named `path` in messages) with the
/// parameter overrides `set`; the interpreter is released while it runs.
/// Returns (columns, rows as a 2-D array, event times, event kinds, event
/// objects, the metrics' values, (steps, solver iterations, seconds spent
/// in Rust: reading, building, simulating and keeping the rows)).
#[pyfunction]
#[pyo3(signature = (text, path, set, strategy=None, t_end=None, events=true, metric_specs=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn run<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    set: Vec<(String, Value)>,
    strategy: Option<String>,
    t_end: Option<f64>,
    events: bool,
    metric_specs: Vec<String>,
) -> PyResult<RunOutput<'py>> {
    let opts = options(py, &path, strategy.as_deref(), t_end, events)?;
    let ms = metrics(py, &path, &metric_specs)?;
    let set = overrides(set);
    let started = std::time::Instant::now();
    let outcome: Result<(Recording, Result<Vec<f64>, String>), RunError> = py.detach(|| {
        let s = scenario(&text, &path, &set)?;
        let rec = nonsmooth_runs::run(&s, &opts)?;
        let values = ms
            .iter()
            .map(|m| m.evaluate(&rec).map_err(|e| e.to_string()))
            .collect();
        Ok((rec, values))
    });
    let native_s = started.elapsed().as_secs_f64();
    let (rec, values) = outcome.map_err(|e| run_error(py, e))?;
    let values = values.map_err(|e| raise(py, "ScenarioError", e, Some(path.clone()), None))?;
    let rows = rec.rows();
    let cols = rec.header.len();
    let data = PyArray1::from_vec(py, rec.data)
        .reshape([rows, cols])?
        .into_any();
    let times = PyArray1::from_vec(py, rec.events.iter().map(|e| e.t).collect());
    let kinds = rec.events.iter().map(|e| e.kind).collect();
    let objects = rec
        .events
        .iter()
        .map(|e| rec.objects[e.object as usize].clone())
        .collect();
    Ok((
        rec.header,
        data,
        times,
        kinds,
        objects,
        values,
        (rec.steps, rec.solver_iterations, native_s),
    ))
}

/// Runs the points of a sweep one after the other, with the interpreter
/// released, reading the scenario text once for the whole batch: for each
/// point (a list of (name, value) overrides), its metrics' values and its
/// error (None when it ran).
#[pyfunction]
#[pyo3(signature = (text, path, points, metric_specs, strategy=None, t_end=None))]
pub fn run_batch(
    py: Python<'_>,
    text: String,
    path: String,
    points: Vec<Vec<(String, Value)>>,
    metric_specs: Vec<String>,
    strategy: Option<String>,
    t_end: Option<f64>,
) -> PyResult<Vec<(Vec<f64>, Option<String>)>> {
    let opts = options(py, &path, strategy.as_deref(), t_end, false)?;
    let ms = metrics(py, &path, &metric_specs)?;
    let points: Vec<Vec<(String, Quantity)>> = points.into_iter().map(overrides).collect();
    Ok(py.detach(|| {
        run_points(&text, Path::new(&path), &points, &opts, &ms)
            .into_iter()
            .map(|o| (o.metrics, o.error))
            .collect()
    }))
}

/// The parameters of a scenario after the overrides: a dict of name →
/// number (or text, for word parameters such as a law's name, as written).
/// The scenario is built (errors raise `ScenarioError`), except a
/// co-simulation, whose parameters are evaluated without opening its FMUs.
#[pyfunction]
pub fn parameters<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    set: Vec<(String, Value)>,
) -> PyResult<Bound<'py, PyDict>> {
    let set = overrides(set);
    let s = scenario(&text, &path, &set).map_err(|e| run_error(py, e))?;
    let (numbers, words) = if s.is_cosim() {
        (s.parameters(), s.words())
    } else {
        s.build_with(nonsmooth_runs::laws())
            .map(|b| (Ok(b.parameters), Ok(b.words)))
            .map_err(|e| run_error(py, e.into()))?
    };
    let bad = |e: nonsmooth_scenario::ScenarioError| run_error(py, e.into());
    let d = PyDict::new(py);
    for (k, v) in numbers.map_err(bad)? {
        d.set_item(k, v)?;
    }
    for (k, v) in words.map_err(bad)? {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// Builds the scenario (model, control loop, recorded columns; a
/// co-simulation's FMUs opened and initialised) without running it;
/// returns the column names. Errors raise `ScenarioError` (bad input) or
/// `SimulationError` (an FMU that failed to set up).
#[pyfunction]
pub fn validate(
    py: Python<'_>,
    text: String,
    path: String,
    set: Vec<(String, Value)>,
) -> PyResult<Vec<String>> {
    let set = overrides(set);
    let built = py
        .detach(|| -> Result<_, RunError> {
            let s = scenario(&text, &path, &set)?;
            nonsmooth_runs::columns(&s)
        })
        .map_err(|e| run_error(py, e))?;
    Ok(built)
}
