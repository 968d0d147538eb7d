//! One point of a parameter sweep: the scenario text, the overrides of the
//! point, the metrics; a failure is reported, never raised, so that a sweep
//! always gives one row per point.

use std::path::Path;

use nonsmooth_scenario::{Quantity, Scenario};

use super::metrics::Metric;
use super::recording::{run, RunOptions};

/// What one point of a sweep gave.
#[derive(Debug, Clone, PartialEq)]
pub struct PointOutcome {
    /// The metrics, in the order asked (NaN for all when the run failed).
    pub metrics: Vec<f64>,
    /// The error of a run that failed (bad override, failed build or
    /// simulation, metric on an unknown column).
    pub error: Option<String>,
}

/// Reads the scenario from `text` (named `path` in messages), applies the
/// overrides, runs it and evaluates the metrics.
pub fn run_point(
    text: &str,
    path: &Path,
    overrides: &[(String, Quantity)],
    options: &RunOptions,
    metrics: &[Metric],
) -> PointOutcome {
    let attempt = || -> Result<Vec<f64>, String> {
        let mut scenario = Scenario::from_str(text, path).map_err(|e| e.to_string())?;
        for (name, value) in overrides {
            scenario
                .set_parameter(name, value.clone())
                .map_err(|e| e.to_string())?;
        }
        let rec = run(&scenario, options).map_err(|e| e.to_string())?;
        metrics
            .iter()
            .map(|m| m.evaluate(&rec).map_err(|e| e.to_string()))
            .collect()
    };
    match attempt() {
        Ok(metrics) => PointOutcome {
            metrics,
            error: None,
        },
        Err(e) => PointOutcome {
            metrics: vec![f64::NAN; metrics.len()],
            error: Some(e),
        },
    }
}
