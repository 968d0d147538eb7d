//! Runs of scenarios kept in memory, and the metrics and sweep points built
//! on them.
//!
//! The command line writes each row of a run to a CSV file; a notebook or a
//! sweep wants the rows as numbers. [`run`] drives the one loop of every
//! run (`BuiltScenario::control_loop`, stepped until it finishes, a row at
//! each output instant, docs/architecture.md) and keeps the rows in one
//! row-major buffer ([`Recording`]), with the events the CLI's `--events`
//! log would hold. [`Metric`] reduces a recording to one number (final
//! value, max |·| after a time, reaching time); [`run_point`] runs one
//! sweep point (a copy of a read scenario with the point's parameter
//! overrides) and evaluates the metrics, reporting a failure as an error
//! message instead of stopping the sweep; [`run_points`] runs a batch of
//! points reading the scenario text once. A co-simulation scenario
//! (`[[fmus]]`) is built around its FMUs as `nonsmooth run` builds it
//! (nonsmooth-cosim).
//!
//! ```
//! use nonsmooth_runs::{run, Metric, RunOptions};
//! use nonsmooth_scenario::Scenario;
//!
//! let text = r#"
//! name = "fall"
//! [simulation]
//! t_end = 0.1
//! step = 0.01
//! [[systems]]
//! name = "body"
//! type = "lagrangian_linear"
//! q0 = [1]
//! mass = [[1]]
//! fext = [-10]
//! "#;
//! let scenario = Scenario::from_str(text, "fall.toml").unwrap();
//! let rec = run(&scenario, &RunOptions::default()).unwrap();
//! assert_eq!(rec.header, ["t", "body.q[0]", "body.v[0]"]);
//! assert_eq!(rec.rows(), 11);
//! let v_end: Metric = "final(body.v[0])".parse().unwrap();
//! assert!((v_end.evaluate(&rec).unwrap() + 1.0).abs() < 1e-12);
//! ```

mod cosim;
mod error;
mod metrics;
mod point;
mod recording;
mod watch;

pub use error::RunError;
pub use metrics::{Metric, MetricError};
pub use point::{run_point, run_points, Batch, PointOutcome};
pub use recording::{columns, run, run_built, EndedEarly, EventRecord, Recording, RunOptions};
pub use watch::RunWatch;

/// The control laws scenarios may name (the same catalog as the command
/// line's).
pub fn laws() -> std::sync::Arc<dyn nonsmooth::control::LawCatalog> {
    std::sync::Arc::new(nonsmooth_controllers::Catalog)
}

/// A parameter value as the command line's `--set` reads it: a number when
/// it parses as one, else an expression of the other parameters (or a
/// word, such as a law name).
pub fn quantity(value: &str) -> nonsmooth_scenario::Quantity {
    match value.trim().parse::<f64>() {
        Ok(x) => x.into(),
        Err(_) => value.trim().into(),
    }
}
