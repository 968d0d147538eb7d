//! Errors of the control layer.

use thiserror::Error;

use crate::simulation::{ClockError, SimulationError};

/// Why a control loop cannot be built or go on. Errors name the object
/// (sensor, observer, controller) they concern.
#[derive(Debug, Error)]
pub enum ControlError {
    /// A matrix or vector of the wrong size.
    #[error("{object}: {what} has size {got}, expected {expected}")]
    Dimension {
        /// The object.
        object: String,
        /// Which quantity.
        what: &'static str,
        /// Its size, as `r×c` or `n`.
        got: String,
        /// The size it must have.
        expected: String,
    },
    /// A value out of range (a negative period, a NaN gain, …).
    #[error("{object}: {what} = {value}: {reason}")]
    InvalidValue {
        /// The object.
        object: String,
        /// Which quantity.
        what: String,
        /// Its value.
        value: f64,
        /// What is wrong.
        reason: String,
    },
    /// A reference to an object that does not exist, or a name used twice.
    #[error("{0}")]
    BadReference(String),
    /// A law that needs what the plant does not offer (e.g. a linear
    /// time-invariant plant for an implicit sliding-mode law).
    #[error("{object}: {reason}")]
    Unsupported {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// A law failed while computing (its one-step problem was not solved, a
    /// matrix it inverts is singular, …).
    #[error("t = {t}: {object}: {reason}")]
    LawFailed {
        /// The time of the control instant.
        t: f64,
        /// The object.
        object: String,
        /// What failed.
        reason: String,
    },
    /// A period, offset or delay that does not fit the exact clock.
    #[error("{object}: {source}")]
    Clock {
        /// The object.
        object: String,
        /// The clock's error.
        source: ClockError,
    },
    /// A saved state that does not fit the loop or law it is restored into,
    /// or damaged bytes.
    #[error("{object}: {reason}")]
    State {
        /// The object (or the law) whose state it is.
        object: String,
        /// What does not fit.
        reason: String,
    },
    /// The plant simulation failed or refused a setting.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
}

impl ControlError {
    /// The name of the object the error concerns, when it names one.
    pub fn object(&self) -> Option<&str> {
        match self {
            ControlError::Dimension { object, .. }
            | ControlError::InvalidValue { object, .. }
            | ControlError::Unsupported { object, .. }
            | ControlError::LawFailed { object, .. }
            | ControlError::Clock { object, .. }
            | ControlError::State { object, .. } => Some(object),
            ControlError::BadReference(_) | ControlError::Simulation(_) => None,
        }
    }
}
