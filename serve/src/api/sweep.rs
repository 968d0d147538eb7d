//! `POST /api/sweep`: a grid of parameter values (every combination, the
//! first parameter varying slowest) and metrics, as `nonsmooth sweep`
//! takes them; the points run in turn through one batch (the scenario
//! read once), as one job of the queue.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::Json;
use nonsmooth_runs::{quantity, Batch, Metric, RunOptions};
use nonsmooth_scenario::Quantity;
use serde::{Deserialize, Serialize};

use super::run::Number;
use super::{open, AppState};
use crate::error::ApiError;

/// One swept parameter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// The parameter.
    pub name: String,
    /// Its values: numbers or texts.
    pub values: Vec<serde_json::Value>,
}

/// The body of `POST /api/sweep`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRequest {
    /// The scenario file, relative to the folder.
    pub path: String,
    /// Values set in every run.
    #[serde(default)]
    pub set: BTreeMap<String, serde_json::Value>,
    /// The grid, first parameter slowest.
    pub grid: Vec<Axis>,
    /// Metrics, `NAME=EXPR` or `EXPR` (final(COL), max_abs_after(COL, T),
    /// reaching_time(COL, TOL)).
    pub metrics: Vec<String>,
    /// Final time of every run.
    pub t_end: Option<f64>,
    /// A name for progress and cancellation.
    pub id: Option<String>,
}

#[derive(Serialize)]
struct Point {
    values: Vec<serde_json::Value>,
    metrics: Vec<Number>,
    error: Option<String>,
}

#[derive(Serialize)]
struct SweepBody {
    parameters: Vec<String>,
    metrics: Vec<String>,
    points: Vec<Point>,
}

/// A grid value as a parameter value.
fn value(name: &str, v: &serde_json::Value) -> Result<Quantity, ApiError> {
    match v {
        serde_json::Value::Number(n) => n
            .as_f64()
            .map(Quantity::from)
            .ok_or_else(|| ApiError::bad(format!("grid `{name}`: {n} is not a number"))),
        serde_json::Value::String(s) if !s.trim().is_empty() => Ok(quantity(s)),
        v => Err(ApiError::bad(format!(
            "grid `{name}`: {v} is neither a number nor a text"
        ))),
    }
}

/// `POST /api/sweep` (see the module documentation).
pub async fn sweep(
    State(shared): AppState,
    Json(req): Json<SweepRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let (scenario, _) = open(&shared, &req.path, &req.set)?;
    let mut check = scenario.clone();
    let mut axes = Vec::new();
    let mut count: usize = 1;
    for a in &req.grid {
        check
            .set_parameter(&a.name, 0.0)
            .map_err(|e| ApiError::bad(shared.root.relative_message(&e.to_string())))?;
        if a.values.is_empty() {
            return Err(ApiError::bad(format!("grid `{}`: no values", a.name)));
        }
        let values = a
            .values
            .iter()
            .map(|v| value(&a.name, v))
            .collect::<Result<Vec<_>, _>>()?;
        count = count.saturating_mul(values.len());
        axes.push((a.name.clone(), values));
    }
    if count > shared.max_sweep_points {
        return Err(ApiError::bad(format!(
            "the grid has {count} points, more than the server runs in one sweep ({})",
            shared.max_sweep_points
        )));
    }
    let mut names = Vec::new();
    let mut metrics = Vec::new();
    for m in &req.metrics {
        let (name, expr) = match m.split_once('=') {
            Some((n, e)) if !n.contains('(') => (n.trim().to_string(), e),
            _ => (m.trim().to_string(), m.as_str()),
        };
        let metric: Metric = expr
            .parse()
            .map_err(|e| ApiError::bad(format!("metric `{m}`: {e}")))?;
        names.push(name);
        metrics.push(metric);
    }
    let t_end = req.t_end;
    let grid_axes = axes.clone();
    let done = shared
        .jobs
        .execute(req.id.clone(), move |watch| {
            let options = RunOptions {
                t_end,
                watch: Some(watch.clone()),
                ..RunOptions::default()
            };
            let mut batch = Batch::new();
            let mut out = Vec::with_capacity(count);
            for k in 0..count {
                if watch.is_stopped() {
                    break;
                }
                // Point k in mixed radix, the first axis slowest.
                let mut rest = k;
                let mut overrides: Vec<(String, Quantity)> = vec![];
                for (name, values) in grid_axes.iter().rev() {
                    overrides.push((name.clone(), values[rest % values.len()].clone()));
                    rest /= values.len();
                }
                overrides.reverse();
                out.push(batch.run_point(&scenario, &overrides, &options, &metrics));
            }
            out
        })
        .await?;
    if let Some(e) = done.stop_error() {
        return Err(e);
    }
    let points = done
        .value
        .into_iter()
        .enumerate()
        .map(|(k, o)| {
            let mut rest = k;
            let mut values = vec![];
            for a in req.grid.iter().rev() {
                values.push(a.values[rest % a.values.len()].clone());
                rest /= a.values.len();
            }
            values.reverse();
            Point {
                values,
                metrics: o.metrics.into_iter().map(Number).collect(),
                error: o.error.map(|e| shared.root.relative_message(&e)),
            }
        })
        .collect();
    let body = SweepBody {
        parameters: req.grid.iter().map(|a| a.name.clone()).collect(),
        metrics: names,
        points,
    };
    serde_json::to_value(body)
        .map(Json)
        .map_err(|e| ApiError::bad(e.to_string()))
}
