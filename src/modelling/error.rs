//! Errors found while a model is built: every dimension, value and link is
//! checked before a simulation can start.

use thiserror::Error;

/// A model that cannot be built, with the object and the quantity at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// A matrix that must be square is not.
    #[error("{object}: {what} must be square, got {rows}×{cols}")]
    NotSquare {
        /// Name of the system or interaction.
        object: String,
        /// The matrix.
        what: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// A size disagrees with another one it must match.
    #[error("{object}: {what} has size {found}, expected {expected}")]
    DimensionMismatch {
        /// Name of the system or interaction.
        object: String,
        /// The quantity.
        what: String,
        /// The size it must have.
        expected: usize,
        /// The size it has.
        found: usize,
    },
    /// A NaN or infinite value in data that must be finite.
    #[error("{object}: {what} contains a non-finite value")]
    NonFinite {
        /// Name of the system or interaction.
        object: String,
        /// The quantity.
        what: String,
    },
    /// A mass matrix that is not symmetric positive definite.
    #[error("{object}: the mass matrix is not symmetric positive definite")]
    SingularMass {
        /// Name of the system.
        object: String,
    },
    /// A value outside its admissible range.
    #[error("{object}: {what} = {value} is invalid: {reason}")]
    InvalidValue {
        /// Name of the system or interaction.
        object: String,
        /// The quantity.
        what: &'static str,
        /// Its value.
        value: f64,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// Two systems or two interactions share a name.
    #[error("the name '{0}' is used twice")]
    DuplicateName(String),
    /// A name that is empty or contains characters reserved by output columns.
    #[error("the name '{0}' is invalid: use letters, digits and '_' only")]
    InvalidName(String),
    /// A system handle or name that the model does not hold.
    #[error("interaction '{interaction}': unknown system {system}")]
    UnknownSystem {
        /// The interaction.
        interaction: String,
        /// The system reference as given.
        system: String,
    },
    /// A relation, law and systems that do not fit together.
    #[error("interaction '{interaction}': {reason}")]
    Incompatible {
        /// The interaction.
        interaction: String,
        /// What does not fit.
        reason: String,
    },
}

/// Result type of model construction.
pub type Result<T> = std::result::Result<T, ModelError>;

/// Checks that all values are finite.
pub(crate) fn check_finite_values<'a>(
    object: &str,
    what: &str,
    values: impl IntoIterator<Item = &'a f64>,
) -> Result<()> {
    if values.into_iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(ModelError::NonFinite {
            object: object.to_string(),
            what: what.to_string(),
        })
    }
}

/// Checks a size.
pub(crate) fn check_size(object: &str, what: &str, found: usize, expected: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(ModelError::DimensionMismatch {
            object: object.to_string(),
            what: what.to_string(),
            expected,
            found,
        })
    }
}
