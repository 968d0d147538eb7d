//! Solver settings, shared by every family, validated before use.

use super::error::{NumericsError, Result};

/// The largest accepted [`SolverSettings::warm_start_max_size`].
pub const WARM_START_MAX: usize = 64;

/// Settings of a solve. Construct with [`SolverSettings::default`] and
/// override fields; [`SolverSettings::validate`] is called by every solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverSettings {
    /// Tolerance on the normalised error measure (see [`super::report::SolveReport`]).
    pub tolerance: f64,
    /// Iteration limit; `None` uses each solver's own default
    /// (Lemke 10·n + 100 pivots, Gauss–Seidel 10 000 sweeps, Newton 100 steps).
    pub max_iterations: Option<usize>,
    /// Over-relaxation ω ∈ (0, 2) of PSOR.
    pub relaxation: f64,
    /// Largest size accepted by enumeration (2ⁿ subsets).
    pub enumeration_max_size: usize,
    /// Largest size for which the default chain starts with a pivoting method.
    pub pivoting_max_size: usize,
    /// Largest size (from 2 on) for which the default LCP chain first tries the active
    /// set of the initial guess (B = { i : zᵢ > 0 }) with one direct solve of
    /// M_BB z_B = −q_B, before Lemke; 0 turns that stage off. The answer
    /// solves the same problem to the same tolerance but not with Lemke's
    /// rounding: a run that must repeat Lemke's bits names `lemke`.
    pub warm_start_max_size: usize,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            tolerance: 1e-10,
            max_iterations: None,
            relaxation: 1.2,
            enumeration_max_size: 16,
            pivoting_max_size: 500,
            warm_start_max_size: 8,
        }
    }
}

impl SolverSettings {
    /// Checks every field's range.
    pub fn validate(&self) -> Result<()> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(NumericsError::InvalidSetting {
                name: "tolerance",
                reason: format!("must be finite and > 0, got {}", self.tolerance),
            });
        }
        if self.max_iterations == Some(0) {
            return Err(NumericsError::InvalidSetting {
                name: "max_iterations",
                reason: "must be at least 1".into(),
            });
        }
        if !(self.relaxation > 0.0 && self.relaxation < 2.0) {
            return Err(NumericsError::InvalidSetting {
                name: "relaxation",
                reason: format!("must lie in (0, 2), got {}", self.relaxation),
            });
        }
        if self.enumeration_max_size > 30 {
            return Err(NumericsError::InvalidSetting {
                name: "enumeration_max_size",
                reason: format!(
                    "at most 30 (2^30 subsets), got {}",
                    self.enumeration_max_size
                ),
            });
        }
        if self.warm_start_max_size > WARM_START_MAX {
            return Err(NumericsError::InvalidSetting {
                name: "warm_start_max_size",
                reason: format!(
                    "at most {WARM_START_MAX} (a dense factorisation per declined guess), got {}",
                    self.warm_start_max_size
                ),
            });
        }
        Ok(())
    }

    /// The iteration limit, or `default` when none is set.
    pub fn iterations_or(&self, default: usize) -> usize {
        self.max_iterations.unwrap_or(default)
    }
}
