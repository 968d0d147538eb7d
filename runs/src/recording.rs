//! A run kept in memory: the recorded rows in one row-major buffer and the
//! event log, read from the loop exactly as `nonsmooth run` writes them to
//! its CSV and `--events` files.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use nonsmooth::control::ControlLoop;
use nonsmooth::simulation::{EventKind, StepOutcome, Strategy};
use nonsmooth_scenario::{BuiltScenario, Scenario};

use super::error::RunError;
use super::point::Batch;
use super::watch::RunWatch;

/// Options of a run beyond the scenario's own settings.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The strategy (none: `[simulation] strategy` of the scenario).
    pub strategy: Option<Strategy>,
    /// The final time (none: the scenario's `t_end`).
    pub t_end: Option<f64>,
    /// Keep the event log ([`Recording::events`]).
    pub events: bool,
    /// Report the time reached and stop when asked ([`RunWatch`]; none:
    /// the run goes to its end unwatched).
    pub watch: Option<Arc<RunWatch>>,
}

/// One line of the event log: the instant, the kind (`time_discretisation`,
/// `sensor`, `actuator`, … or, for located nonsmooth events, the
/// transition: `impact`, `contact`, `take_off`, `mode_switch`) and the
/// object (an index into [`Recording::objects`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventRecord {
    /// Time, in seconds.
    pub t: f64,
    /// Kind of event or transition.
    pub kind: &'static str,
    /// The object's index in [`Recording::objects`].
    pub object: u32,
}

/// The recorded rows of a run, the names of its columns, and its events.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Column names: `t`, then `<object>.<variable>[<index>]` (the CSV
    /// header of `nonsmooth run`).
    pub header: Vec<String>,
    /// The rows, one after the other (`rows() × header.len()` numbers).
    pub data: Vec<f64>,
    /// The event log (empty unless [`RunOptions::events`]).
    pub events: Vec<EventRecord>,
    /// Names of the objects the events refer to.
    pub objects: Vec<String>,
    /// Time steps (or event-driven integration steps) taken.
    pub steps: u64,
    /// Iterations of the one-step solvers, summed.
    pub solver_iterations: u64,
    /// Set when an FMU of a co-simulation ended the run before its final
    /// time (fmi2Terminated): the rows stop at [`EndedEarly::end`].
    pub ended_early: Option<EndedEarly>,
}

/// A co-simulation that one of its FMUs ended before the final time.
#[derive(Debug, Clone, PartialEq)]
pub struct EndedEarly {
    /// The FMU that ended it.
    pub fmu: String,
    /// The FMU's time when it ended it (fmi2LastSuccessfulTime).
    pub time: f64,
    /// The time of the run's last row.
    pub end: f64,
}

impl Recording {
    /// Number of rows (output instants, t₀ included).
    pub fn rows(&self) -> usize {
        if self.header.is_empty() {
            0
        } else {
            self.data.len() / self.header.len()
        }
    }

    /// The index of a column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The values of column `j`, one per row (a copy: the buffer is
    /// row-major).
    pub fn column(&self, j: usize) -> Vec<f64> {
        let n = self.header.len();
        self.data
            .iter()
            .skip(j)
            .step_by(n.max(1))
            .copied()
            .collect()
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        let n = self.header.len();
        &self.data[i * n..(i + 1) * n]
    }
}

/// Builds `scenario` with the laws of `nonsmooth-controllers` and runs it
/// (see [`run_built`]). A co-simulation scenario (`[[fmus]]`) is built
/// around its FMUs as `nonsmooth run` builds it (nonsmooth-cosim; the
/// strategy can only be time-stepping).
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<Recording, RunError> {
    run_in(scenario, options, None)
}

/// As [`run`], one point of a batch when `batch` is given: the scenario
/// built through the batch's parses and FMUs ([`Batch`]).
pub(crate) fn run_in(
    scenario: &Scenario,
    options: &RunOptions,
    batch: Option<&mut Batch>,
) -> Result<Recording, RunError> {
    if scenario.is_cosim() {
        let (built, cl, watch) = super::cosim::build(scenario, options, batch)?;
        let mut rec = record(&built, cl, scenario.path(), options)?;
        rec.ended_early = watch.get().map(|t| EndedEarly {
            fmu: t.fmu,
            time: t.time,
            end: t.end,
        });
        return Ok(rec);
    }
    let built = match batch {
        Some(b) => scenario.build_cached(super::laws(), &b.parses)?,
        None => scenario.build_with(super::laws())?,
    };
    run_built(built, scenario.path(), options)
}

/// The CSV header of a run of `scenario` (`t`, then the recorded
/// columns), after building it and setting up its loop as [`run`] would
/// (the FMUs of a co-simulation are opened and initialised): a check of
/// the scenario without running it.
pub fn columns(scenario: &Scenario) -> Result<Vec<String>, RunError> {
    let built = if scenario.is_cosim() {
        super::cosim::build(scenario, &RunOptions::default(), None)?.0
    } else {
        let built = scenario.build_with(super::laws())?;
        built.control_loop()?;
        built
    };
    Ok(built.header().iter().map(|h| h.to_string()).collect())
}

/// Runs a built scenario to its end, keeping a row at every output instant
/// (t, then every recorded column: `BuiltScenario::row`) and, when asked,
/// the events of every instant.
/// `path` names the scenario in error messages.
pub fn run_built(
    mut built: BuiltScenario,
    path: &Path,
    options: &RunOptions,
) -> Result<Recording, RunError> {
    if let Some(t_end) = options.t_end {
        if !(t_end.is_finite() && t_end > built.settings.t0) {
            return Err(RunError::Option {
                path: path.to_path_buf(),
                reason: format!(
                    "t_end = {t_end} must be a finite time after t0 = {}",
                    built.settings.t0
                ),
            });
        }
        built.settings.t_end = t_end;
        built.event_driven.t_end = t_end;
    }
    let strategy = options.strategy.unwrap_or(built.strategy);
    let cl = built.control_loop_with(strategy)?;
    record(&built, cl, path, options)
}

/// Steps a loop of `built` to its end, keeping the rows and (when asked)
/// the events.
fn record(
    built: &BuiltScenario,
    mut cl: ControlLoop,
    path: &Path,
    options: &RunOptions,
) -> Result<Recording, RunError> {
    let header: Vec<String> = built.header().iter().map(|s| s.to_string()).collect();
    let mut rec = Recording {
        header,
        ..Recording::default()
    };
    let mut row = vec![0.0; rec.header.len()];
    let mut names: HashMap<String, u32> = HashMap::new();
    let watch = options.watch.as_deref();
    if let Some(w) = watch {
        w.start(built.settings.t0, built.settings.t_end);
    }
    loop {
        if let Some(w) = watch.filter(|w| w.is_stopped()) {
            return Err(RunError::Stopped {
                path: path.to_path_buf(),
                t: w.time(),
            });
        }
        match cl.step() {
            Ok(StepOutcome::Advanced { t, .. }) => {
                if let Some(w) = watch {
                    w.reached(t);
                }
                if cl.plant().is_output_instant() {
                    built.row(&cl, &mut row);
                    rec.data.extend_from_slice(&row);
                }
                if options.events {
                    log_events(&cl, t, &mut rec, &mut names);
                }
            }
            Ok(StepOutcome::Finished) => break,
            Err(e) => {
                return Err(RunError::Simulation {
                    path: path.to_path_buf(),
                    step: cl.plant().statistics().steps + 1,
                    t: cl.time(),
                    message: e.to_string(),
                })
            }
        }
    }
    let stats = cl.plant().statistics();
    rec.steps = stats.steps;
    rec.solver_iterations = stats.solver_iterations;
    Ok(rec)
}

/// Appends the events of the current instant, as `nonsmooth run --events`
/// writes them.
fn log_events(cl: &ControlLoop, t: f64, rec: &mut Recording, names: &mut HashMap<String, u32>) {
    let mut object = |name: &str, rec: &mut Recording| -> u32 {
        if let Some(&k) = names.get(name) {
            return k;
        }
        let k = rec.objects.len() as u32;
        rec.objects.push(name.to_string());
        names.insert(name.to_string(), k);
        k
    };
    for ev in cl.plant().last_events() {
        if ev.kind == EventKind::NonSmooth {
            for tr in cl.plant().transitions() {
                let name = &cl.plant().model().interaction(tr.interaction).name;
                let object = object(name, rec);
                rec.events.push(EventRecord {
                    t,
                    kind: tr.kind.as_str(),
                    object,
                });
            }
            continue;
        }
        let object = object(cl.source_name(ev.source), rec);
        rec.events.push(EventRecord {
            t,
            kind: ev.kind.as_str(),
            object,
        });
    }
}
