//! Errors of the rigid-body layer.

use thiserror::Error;

/// What went wrong in describing or stepping rigid bodies.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RigidError {
    /// A body's description is invalid (mass, inertia, state).
    #[error("body {body}: {reason}")]
    InvalidBody {
        /// Index of the body.
        body: usize,
        /// What is wrong.
        reason: String,
    },
    /// A setting of the scheme is out of range.
    #[error("invalid setting {name}: {reason}")]
    InvalidSetting {
        /// The setting.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The Newton iteration on the gyroscopic term did not converge.
    #[error(
        "body {body}: the implicit gyroscopic equation did not converge \
         ({iterations} iterations, residual {residual:e}); reduce the step"
    )]
    Gyroscopic {
        /// Index of the body.
        body: usize,
        /// Newton iterations taken.
        iterations: usize,
        /// Final residual norm.
        residual: f64,
    },
    /// A contact refers to a body that does not exist.
    #[error("contact {contact}: body {body} does not exist ({bodies} bodies)")]
    UnknownBody {
        /// Index of the contact.
        contact: usize,
        /// The body index it names.
        body: usize,
        /// Number of bodies.
        bodies: usize,
    },
    /// The one-step contact problem could not be set up or solved.
    #[error("contact problem: {0}")]
    Numerics(#[from] crate::numerics::NumericsError),
}

/// Result of the rigid-body layer.
pub type Result<T> = std::result::Result<T, RigidError>;
