//! Typed errors of the numerics layer: bad input, never a solver outcome.
//!
//! A solve that runs but does not converge is *not* an error: it returns a
//! [`SolveReport`](super::report::SolveReport) whose status says why it stopped.

use thiserror::Error;

/// What can be wrong with a problem, its vectors or a solver's settings.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NumericsError {
    /// A vector or matrix does not have the size the problem implies.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which object has the wrong size.
        what: &'static str,
        /// The size the problem implies.
        expected: usize,
        /// The size given.
        found: usize,
    },
    /// A matrix that must be square is not.
    #[error("matrix {what} must be square, it is {rows}x{cols}")]
    NotSquare {
        /// Which matrix.
        what: &'static str,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// A NaN or an infinity in the data.
    #[error("non-finite value ({value}) in {what} at index {index}")]
    NonFinite {
        /// Which object holds it.
        what: &'static str,
        /// Flat index (row-major for matrices: row * ncols + col).
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A box with lb > ub (or a NaN bound).
    #[error("lower bound exceeds upper bound at index {index}: lb = {lb}, ub = {ub}")]
    InvertedBounds {
        /// Component index.
        index: usize,
        /// Lower bound.
        lb: f64,
        /// Upper bound.
        ub: f64,
    },
    /// A solver setting outside its valid range.
    #[error("invalid solver setting `{name}`: {reason}")]
    InvalidSetting {
        /// Setting name.
        name: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// The problem is larger than the solver accepts (enumeration is exponential).
    #[error("problem of size {size} is too large for {solver} (limit {limit}; raise `enumeration_max_size` to force it)")]
    TooLarge {
        /// Solver name.
        solver: &'static str,
        /// Problem size.
        size: usize,
        /// Largest size accepted.
        limit: usize,
    },
    /// The solver cannot be applied to this problem (e.g. a zero diagonal for Gauss–Seidel).
    #[error("solver {solver} does not apply to this problem: {reason}")]
    NotApplicable {
        /// Solver name.
        solver: &'static str,
        /// Why.
        reason: String,
    },
    /// A solver name that is not known for this problem family.
    #[error("unknown solver `{name}` for {family}; known: {known}")]
    UnknownSolver {
        /// The name asked for.
        name: String,
        /// Problem family.
        family: &'static str,
        /// Comma-separated known names.
        known: &'static str,
    },
}

/// Result alias of the numerics layer.
pub type Result<T> = std::result::Result<T, NumericsError>;

/// Checks that every entry of `v` is finite.
pub fn check_finite(what: &'static str, v: &[f64]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(NumericsError::NonFinite {
            what,
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}

/// Checks that `v` has length `expected`.
pub fn check_len(what: &'static str, v: &[f64], expected: usize) -> Result<()> {
    if v.len() == expected {
        Ok(())
    } else {
        Err(NumericsError::DimensionMismatch {
            what,
            expected,
            found: v.len(),
        })
    }
}
