//! The outcome of a solve: a status plus the measures that justify it.

use serde::Serialize;
use std::time::Duration;

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
    /// Wall time of the solve (zero when the solver's timing is off, see
    /// `set_timed` of the solver traits).
    #[serde(serialize_with = "ser_secs")]
    pub time: Duration,
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
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
    start: Stopwatch,
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
        time: start.elapsed(),
    }
}

/// The wall time of a solve for [`SolveReport::time`]: the clock is read at
/// the start and at the end when the solver's timing is on, and not at all
/// when it is off (the time is then zero). A clock read costs tens of
/// nanoseconds, as much as a whole small solve inside a time step, so the
/// simulation turns timing off (`set_timed(false)`), and chains of solvers
/// do not time the solvers they call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopwatch(Option<std::time::Instant>);

impl Stopwatch {
    /// Starts timing when `timed`.
    pub fn start(timed: bool) -> Self {
        Stopwatch(timed.then(std::time::Instant::now))
    }

    /// The time since the start (zero when not timed).
    pub fn elapsed(self) -> Duration {
        self.0.map_or(Duration::ZERO, |s| s.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use crate::numerics::lcp::{lcp_solver, Lcp, LCP_SOLVERS};
    use crate::numerics::mlcp::{mlcp_solver, Mlcp, MLCP_SOLVERS};
    use crate::numerics::relay::{relay_solver, Relay, RELAY_SOLVERS};
    use crate::numerics::SolverSettings;

    fn spd(n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => 4.0,
            1 => -1.0,
            _ => 0.0,
        })
    }

    /// With timing off every solver reports a zero time and the same
    /// solution as with timing on.
    #[test]
    fn untimed_solves_report_zero_time_and_the_same_solution() {
        let s = SolverSettings::default();
        let q = vec![-1.0, 0.5, -2.0, 0.3];
        let lcp = Lcp::new(spd(4), q.clone()).unwrap();
        let mlcp = Mlcp::new(spd(4), q.clone(), 1).unwrap();
        let relay = Relay::new(spd(4), q, vec![-1.0; 4], vec![1.0; 4]).unwrap();
        let run = |timed: bool| {
            let mut out = Vec::new();
            for name in LCP_SOLVERS.split(", ") {
                let mut solver = lcp_solver(name, s).unwrap();
                solver.set_timed(timed);
                let (mut z, mut w) = (vec![0.0; 4], vec![0.0; 4]);
                let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
                assert!(r.status.is_solved(), "{name}");
                assert_eq!(r.time.is_zero(), !timed, "LCP {name}");
                out.push(z);
            }
            for name in MLCP_SOLVERS.split(", ") {
                let mut solver = mlcp_solver(name, s).unwrap();
                solver.set_timed(timed);
                let (mut z, mut w) = (vec![0.0; 4], vec![0.0; 4]);
                let r = solver.solve(&mlcp, &mut z, &mut w).unwrap();
                assert_eq!(r.time.is_zero(), !timed, "MLCP {name}");
                out.push(z);
            }
            for name in RELAY_SOLVERS.split(", ") {
                let mut solver = relay_solver(name, s).unwrap();
                solver.set_timed(timed);
                let (mut z, mut w) = (vec![0.0; 4], vec![0.0; 4]);
                let r = solver.solve(&relay, &mut z, &mut w).unwrap();
                assert_eq!(r.time.is_zero(), !timed, "relay {name}");
                out.push(z);
            }
            out
        };
        assert_eq!(run(true), run(false));
    }
}
