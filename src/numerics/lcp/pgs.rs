//! Projected Gauss–Seidel (PGS) and projected successive over-relaxation (PSOR).
//!
//! One sweep updates, for i = 1 … n in turn,
//!
//! zᵢ ← max(0, zᵢ − ω (qᵢ + Σⱼ Mᵢⱼ zⱼ) / Mᵢᵢ),
//!
//! with ω = 1 for PGS. After each sweep w = M z + q is recomputed and the
//! sweep loop stops on the true complementarity error ‖min(z, w)‖ (normalised
//! as in [`Lcp::errors`]), not on the size of the increment. Converges for
//! symmetric positive-definite M (and ω ∈ (0, 2)); needs Mᵢᵢ > 0. Works on
//! block-sparse M in O(nnz) per sweep.

use super::{Lcp, LcpSolver};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::SolveReport;
use crate::numerics::report::{finish, Stop};
use crate::numerics::settings::SolverSettings;
use crate::numerics::splitting::projected_sweeps;

/// Projected Gauss–Seidel / PSOR.
#[derive(Debug, Clone)]
pub struct Pgs {
    settings: SolverSettings,
    omega: f64,
    name: &'static str,
}

impl Pgs {
    /// Plain PGS (ω = 1).
    pub fn new(settings: SolverSettings) -> Self {
        Pgs {
            settings,
            omega: 1.0,
            name: "pgs",
        }
    }

    /// PSOR with ω = `settings.relaxation`.
    pub fn psor(settings: SolverSettings) -> Self {
        Pgs {
            settings,
            omega: settings.relaxation,
            name: "psor",
        }
    }
}

/// Returns the first index whose diagonal entry is not strictly positive.
pub(crate) fn first_nonpositive_diagonal(
    m: &impl ProblemMatrix,
    range: std::ops::Range<usize>,
) -> Option<(usize, f64)> {
    range.map(|i| (i, m.diagonal(i))).find(|&(_, d)| d <= 0.0)
}

impl LcpSolver for Pgs {
    fn name(&self) -> &'static str {
        self.name
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        if let Some((i, d)) = first_nonpositive_diagonal(&problem.m, 0..n) {
            return Err(NumericsError::NotApplicable {
                solver: self.name,
                reason: format!("diagonal entry M[{i},{i}] = {d} is not positive"),
            });
        }
        let tol = self.settings.tolerance;
        let max_sweeps = self.settings.iterations_or(10_000);
        // Start from the projection of the guess.
        z.iter_mut().for_each(|v| *v = v.max(0.0));
        let (status, iterations) = projected_sweeps(
            problem,
            (&problem.m, &problem.q),
            z,
            w,
            (self.omega, tol, max_sweeps),
            |_, x| x.max(0.0),
        );
        let stop = Stop {
            solver: self.name,
            iterations,
            otherwise: status,
        };
        Ok(finish(problem, z, w, stop, tol))
    }
}
