//! Why a run did not give a recording.

use std::path::PathBuf;

use thiserror::Error;

use nonsmooth_scenario::ScenarioError;

/// Why a run failed: bad input (the scenario, an override, an option) or a
/// simulation that stopped.
#[derive(Debug, Error)]
pub enum RunError {
    /// The scenario could not be read or built; the message starts with
    /// `path:line:column:` when the fault is in the file.
    /// (Boxed: a scenario error is large, a run's result small.)
    #[error(transparent)]
    Scenario(Box<ScenarioError>),
    /// An option of the run is not valid (e.g. `t_end` before `t0`).
    #[error("{}: {reason}", path.display())]
    Option {
        /// The scenario file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An FMU of a co-simulation failed while it was instantiated or
    /// initialised (the message names the FMU and the time).
    #[error("{message}")]
    FmuSetup {
        /// The scenario file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The simulation stopped with an error.
    #[error("{}: simulation failed in step {step} from t = {t}: {message}", path.display())]
    Simulation {
        /// The scenario file.
        path: PathBuf,
        /// The step that failed (from 1).
        step: u64,
        /// The time the step started from.
        t: f64,
        /// What the simulation said.
        message: String,
    },
    /// The run was stopped from outside ([`RunWatch::stop`](crate::RunWatch::stop)).
    #[error("{}: the run was stopped at t = {t}", path.display())]
    Stopped {
        /// The scenario file.
        path: PathBuf,
        /// The time reached.
        t: f64,
    },
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> RunError {
        RunError::Scenario(Box::new(e))
    }
}

impl RunError {
    /// The scenario file the error is about.
    pub fn path(&self) -> Option<PathBuf> {
        match self {
            RunError::Scenario(e) => match e.as_ref() {
                ScenarioError::Io { path, .. } | ScenarioError::NoSuchParameter { path, .. } => {
                    Some(path.clone())
                }
                e => match e.place() {
                    Some(nonsmooth_scenario::Place::File(l)) => Some(l.path.clone()),
                    Some(nonsmooth_scenario::Place::Override { path, .. }) => Some(path.clone()),
                    None => None,
                },
            },
            RunError::Option { path, .. }
            | RunError::FmuSetup { path, .. }
            | RunError::Simulation { path, .. }
            | RunError::Stopped { path, .. } => Some(path.clone()),
        }
    }

    /// The line of the fault in the scenario file, when there is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            RunError::Scenario(e) => e.line(),
            _ => None,
        }
    }

    /// True for bad input (the scenario or the options), false for a
    /// simulation (or an FMU's set-up) that failed or a run stopped.
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            RunError::Simulation { .. } | RunError::FmuSetup { .. } | RunError::Stopped { .. }
        )
    }
}
