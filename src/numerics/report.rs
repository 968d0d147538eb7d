//! The outcome of a solve: a status plus the measures that justify it.

use serde::Serialize;

/// Why a solver stopped. Only [`SolveStatus::Solved`] means the returned
/// vectors satisfy the problem to the requested tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SolveStatus {
    /// The error measure is at or below the tolerance.
    Solved,
    /// The iteration limit was reached before the tolerance.
    IterationLimit,
    /// Lemke's method ended on a secondary ray: it found no solution. For a
    /// copositive-plus matrix this proves that none exists.
    RayTermination,
    /// An exhaustive method proved that no solution exists.
    NoSolution,
    /// Singular pivots, non-finite iterates or a failed line search.
    NumericalTrouble,
}

impl SolveStatus {
    /// Short lowercase name, as printed by the command-line tool.
    pub fn as_str(self) -> &'static str {
        match self {
            SolveStatus::Solved => "solved",
            SolveStatus::IterationLimit => "iteration_limit",
            SolveStatus::RayTermination => "ray_termination",
            SolveStatus::NoSolution => "no_solution",
            SolveStatus::NumericalTrouble => "numerical_trouble",
        }
    }

    /// True only for [`SolveStatus::Solved`].
    pub fn is_solved(self) -> bool {
        self == SolveStatus::Solved
    }

    /// How much a status says about the problem, for a chain of solvers
    /// that reports the most telling verdict of its stages (lower is more
    /// telling): solved, then a proof that no solution exists (an
    /// exhaustive search, Lemke's secondary ray), then an iteration limit,
    /// then numerical trouble.
    pub fn rank(self) -> u8 {
        match self {
            SolveStatus::Solved => 0,
            SolveStatus::NoSolution => 1,
            SolveStatus::RayTermination => 2,
            SolveStatus::IterationLimit => 3,
            SolveStatus::NumericalTrouble => 4,
        }
    }
}

impl std::fmt::Display for SolveStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a solve did and how good its answer is.
///
/// Both error measures are recomputed from the returned vectors, independently
/// of the solver's internal iterates:
/// * `error_abs` — the absolute natural-map norm ‖x − P(x − F(x))‖₂ of the
///   problem family (see each problem's `residual`);
/// * `error` — the same normalised as Siconos normalises it for the family
///   (the measure the tolerance applies to).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SolveReport {
    /// Why the solver stopped.
    pub status: SolveStatus,
    /// Name of the solver that produced the returned vectors.
    pub solver: &'static str,
    /// Iterations (pivots for Lemke, sweeps for Gauss–Seidel, Newton steps,
    /// subsets tried for enumeration; summed over a chain).
    pub iterations: usize,
    /// Normalised error (the tolerance applies to it).
    pub error: f64,
    /// Absolute natural-map norm.
    pub error_abs: f64,
}

/// A problem whose candidate solutions can be measured: every family implements
/// it, and every solver ends through [`finish`].
pub(crate) trait Measured {
    /// w ← M z + q.
    fn compute_w(&self, z: &[f64], w: &mut [f64]);
    /// `(normalised, absolute)` error of (z, w).
    fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64);
}

/// How a solver's iteration ended, before the returned vectors are measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stop {
    /// Solver that produced z.
    pub solver: &'static str,
    /// Its iteration count.
    pub iterations: usize,
    /// The status to report if z does not meet the tolerance.
    pub otherwise: SolveStatus,
}

/// Ends a solve: recomputes w = M z + q and both error measures from z, and
/// reports `Solved` exactly when the normalised error meets the tolerance.
pub(crate) fn finish<P: Measured>(
    problem: &P,
    z: &[f64],
    w: &mut [f64],
    stop: Stop,
    tolerance: f64,
) -> SolveReport {
    problem.compute_w(z, w);
    let (error, error_abs) = problem.errors(z, w);
    let status = if error <= tolerance && z.iter().all(|v| v.is_finite()) {
        SolveStatus::Solved
    } else {
        stop.otherwise
    };
    SolveReport {
        status,
        solver: stop.solver,
        iterations: stop.iterations,
        error,
        error_abs,
    }
}
