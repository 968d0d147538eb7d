//! Points of a parameter sweep: a scenario read once, the overrides of
//! each point, the metrics; a failure is reported, never raised, so that a
//! sweep always gives one row per point.
//!
//! The scenario text is read (TOML, schema) once per batch, not once per
//! point: each point runs a copy of the read [`Scenario`] (a few shared
//! pointers and the overrides) with its own values. The points of a batch
//! share a [`Batch`]: the expressions of the file parsed once, the FMUs of
//! a co-simulation opened once. A point costs its build (the parameters
//! evaluated, the model and loop made) and its steps, and gives the
//! numbers a run of the same overrides on a freshly read file gives, bit
//! for bit.

use std::path::Path;

use nonsmooth_cosim::scenario::OpenFmus;
use nonsmooth_scenario::{BuildCache, Quantity, Scenario};

use super::error::RunError;
use super::metrics::Metric;
use super::recording::{run_in, Recording, RunOptions};

/// What one point of a sweep gave.
#[derive(Debug, Clone, PartialEq)]
pub struct PointOutcome {
    /// The metrics, in the order asked (NaN for all when the run failed).
    pub metrics: Vec<f64>,
    /// The error of a run that failed (bad override, failed build or
    /// simulation, metric on an unknown column).
    pub error: Option<String>,
}

impl PointOutcome {
    /// The outcome of a point that failed with `error`.
    fn failed(error: String, metrics: usize) -> PointOutcome {
        PointOutcome {
            metrics: vec![f64::NAN; metrics],
            error: Some(error),
        }
    }
}

/// What the points of a batch share, so that a point after the first
/// costs its build and steps only: the expressions' parses
/// ([`BuildCache`]: a parse depends on the text alone, values are computed
/// per point) and a co-simulation's FMUs, open ([`OpenFmus`]: each point
/// instantiates them afresh). Nothing that depends on a parameter is
/// kept, so a point of a batch gives the numbers of a fresh run, whatever
/// the parameter changes (sizes, counts, laws, periods included), and a
/// failed point leaves nothing behind.
///
/// One per thread (not `Send`): a batch runs its points in turn.
#[derive(Debug, Default)]
pub struct Batch {
    pub(crate) parses: BuildCache,
    pub(crate) fmus: OpenFmus,
}

impl Batch {
    /// An empty batch (nothing parsed or opened yet).
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Runs `scenario` as [`run`](crate::run) does, through what the
    /// batch's earlier runs parsed and opened: the same recording, bit for
    /// bit.
    pub fn run(
        &mut self,
        scenario: &Scenario,
        options: &RunOptions,
    ) -> Result<Recording, RunError> {
        run_in(scenario, options, Some(self))
    }

    /// Runs one point of the batch: as [`run_point`], through what the
    /// batch's earlier points parsed and opened.
    pub fn run_point(
        &mut self,
        scenario: &Scenario,
        overrides: &[(String, Quantity)],
        options: &RunOptions,
        metrics: &[Metric],
    ) -> PointOutcome {
        point(scenario, overrides, options, metrics, Some(self))
    }
}

/// Runs one point: a copy of `scenario` (its own overrides kept) with the
/// point's `overrides` on top, and evaluates the metrics.
pub fn run_point(
    scenario: &Scenario,
    overrides: &[(String, Quantity)],
    options: &RunOptions,
    metrics: &[Metric],
) -> PointOutcome {
    point(scenario, overrides, options, metrics, None)
}

fn point(
    scenario: &Scenario,
    overrides: &[(String, Quantity)],
    options: &RunOptions,
    metrics: &[Metric],
    batch: Option<&mut Batch>,
) -> PointOutcome {
    let attempt = || -> Result<Vec<f64>, String> {
        let mut scenario = scenario.clone();
        for (name, value) in overrides {
            scenario
                .set_parameter(name, value.clone())
                .map_err(|e| e.to_string())?;
        }
        let rec = run_in(&scenario, options, batch).map_err(|e| e.to_string())?;
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
        Err(e) => PointOutcome::failed(e, metrics.len()),
    }
}

/// Runs a batch of points of the scenario `text` (named `path` in
/// messages), reading the text once and sharing one [`Batch`]: one
/// outcome per point, in order. A text that does not read gives each
/// point its error.
pub fn run_points(
    text: &str,
    path: &Path,
    points: &[Vec<(String, Quantity)>],
    options: &RunOptions,
    metrics: &[Metric],
) -> Vec<PointOutcome> {
    match Scenario::from_str(text, path) {
        Ok(scenario) => {
            let mut batch = Batch::new();
            points
                .iter()
                .map(|p| batch.run_point(&scenario, p, options, metrics))
                .collect()
        }
        Err(e) => {
            let e = e.to_string();
            points
                .iter()
                .map(|_| PointOutcome::failed(e.clone(), metrics.len()))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::run;

    /// A scenario whose final velocity is known in closed form: a body
    /// falling from rest under `g` for `t_end`, v(T) = −g·T on the
    /// time-stepping grid (θ = 1/2: exact for a constant force).
    const FALL: &str = r#"
name = "fall"
[parameters]
g = 9.81
t_end = 0.1
h = "t_end / 10"
[simulation]
t_end = "t_end"
step = "h"
[[systems]]
name = "body"
type = "lagrangian_linear"
q0 = [1]
mass = [[1]]
fext = ["-g"]
"#;

    fn q(x: f64) -> Quantity {
        x.into()
    }

    /// Each point on its own freshly read file, as `nonsmooth run --set`.
    fn alone(overrides: &[(String, Quantity)], metrics: &[Metric]) -> PointOutcome {
        let mut s = Scenario::from_str(FALL, "fall.toml").unwrap();
        for (n, v) in overrides {
            if let Err(e) = s.set_parameter(n, v.clone()) {
                return PointOutcome::failed(e.to_string(), metrics.len());
            }
        }
        match run(&s, &RunOptions::default()) {
            Ok(rec) => PointOutcome {
                metrics: metrics.iter().map(|m| m.evaluate(&rec).unwrap()).collect(),
                error: None,
            },
            Err(e) => PointOutcome::failed(e.to_string(), metrics.len()),
        }
    }

    #[test]
    fn a_batch_read_once_equals_each_point_read_alone() {
        let metrics: Vec<Metric> = ["final(body.v[0])", "final(body.q[0])", "final(t)"]
            .iter()
            .map(|m| m.parse().unwrap())
            .collect();
        let points: Vec<Vec<(String, Quantity)>> = vec![
            vec![("g".into(), q(1.62))],
            // No override of g: the file's 9.81, not the previous point's.
            vec![("t_end".into(), q(0.2))],
            vec![("g".into(), "nonsense + 1".into())],
            vec![("no_such".into(), q(1.0))],
            // An expression of another parameter.
            vec![("g".into(), "2 * t_end".into()), ("t_end".into(), q(0.3))],
            vec![],
        ];
        let batch = run_points(
            FALL,
            Path::new("fall.toml"),
            &points,
            &RunOptions::default(),
            &metrics,
        );
        assert_eq!(batch.len(), points.len());
        for (p, o) in points.iter().zip(&batch) {
            let a = alone(p, &metrics);
            assert_eq!(o.error, a.error, "{p:?}");
            for (x, y) in o.metrics.iter().zip(&a.metrics) {
                assert_eq!(x.to_bits(), y.to_bits(), "{p:?}");
            }
        }
        // v(T) = −g T (the closed form, to rounding).
        let v = |k: usize| batch[k].metrics[0];
        assert!((v(0) + 1.62 * 0.1).abs() < 1e-12, "{}", v(0));
        assert!((v(1) + 9.81 * 0.2).abs() < 1e-12, "{}", v(1));
        assert!((v(4) + 0.6 * 0.3).abs() < 1e-12, "{}", v(4));
        assert!((v(5) + 9.81 * 0.1).abs() < 1e-12, "{}", v(5));
        assert_eq!(batch[1].metrics[2], 0.2);
        assert!(batch[2].error.as_deref().unwrap().contains("nonsense"));
        assert!(batch[3].error.as_deref().unwrap().contains("no_such"));
        assert!(batch[3].metrics.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn a_text_that_does_not_read_is_an_error_for_every_point() {
        let points = vec![vec![], vec![("g".to_string(), q(1.0))]];
        let out = run_points(
            "name = \"x\"\n[simulation\n",
            Path::new("bad.toml"),
            &points,
            &RunOptions::default(),
            &["final(t)".parse().unwrap()],
        );
        assert_eq!(out.len(), 2);
        for o in out {
            assert!(
                o.error.as_deref().unwrap().starts_with("bad.toml:2:"),
                "{:?}",
                o.error
            );
            assert!(o.metrics[0].is_nan());
        }
    }
}
