//! The default LCP solver: a chain that tries, in order,
//!
//! 1. Lemke (n ≤ `pivoting_max_size`): exact and finite;
//! 2. semismooth Newton (Fischer–Burmeister), started from the best point so far;
//! 3. PGS, when every Mᵢᵢ > 0;
//! 4. enumeration, when n ≤ `enumeration_max_size`: it either finds a
//!    solution or proves there is none.
//!
//! It returns the first solution that meets the tolerance. If none does, it
//! returns the most informative status (a proof of no solution first, then a
//! ray termination) with the iterate of smallest error. Iterations are summed
//! over the chain; the report names the solver that produced the vectors.

use super::pgs::first_nonpositive_diagonal;
use super::{untimed, Enumeration, Lcp, LcpSolver, Lemke, NewtonFb, Pgs};
use crate::numerics::error::Result;
use crate::numerics::report::Stopwatch;
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::settings::SolverSettings;

/// Lemke → Newton–FB → PGS → enumeration.
#[derive(Debug, Clone)]
pub struct DefaultLcp {
    settings: SolverSettings,
    /// Whether solves read the clock (see [`Stopwatch`]).
    timed: bool,
    lemke: Lemke,
    newton: NewtonFb,
    pgs: Pgs,
    enumeration: Enumeration,
    best_z: Vec<f64>,
}

impl DefaultLcp {
    /// The default chain with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        DefaultLcp {
            settings,
            timed: true,
            lemke: untimed(Lemke::new(settings)),
            newton: untimed(NewtonFb::new(settings)),
            pgs: untimed(Pgs::new(settings)),
            enumeration: untimed(Enumeration::new(settings)),
            best_z: Vec::new(),
        }
    }
}

fn rank(s: SolveStatus) -> u8 {
    match s {
        SolveStatus::Solved => 0,
        SolveStatus::NoSolution => 1,
        SolveStatus::RayTermination => 2,
        SolveStatus::IterationLimit => 3,
        SolveStatus::NumericalTrouble => 4,
    }
}

impl LcpSolver for DefaultLcp {
    fn name(&self) -> &'static str {
        "default"
    }

    fn set_timed(&mut self, timed: bool) {
        self.timed = timed;
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        let start = Stopwatch::start(self.timed);
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        self.best_z.clear();
        self.best_z.extend_from_slice(z);
        let mut best: Option<SolveReport> = None;
        let mut best_err = f64::INFINITY;
        let mut iterations = 0;
        let mut verdict = SolveStatus::IterationLimit;
        for stage in 0..4 {
            let report = match stage {
                // Checked above, with the same settings.
                0 if n <= self.settings.pivoting_max_size => {
                    self.lemke.solve_validated(problem, z, w)
                }
                1 => {
                    z.copy_from_slice(&self.best_z);
                    self.newton.solve(problem, z, w)?
                }
                2 if first_nonpositive_diagonal(&problem.m, 0..n).is_none() => {
                    z.copy_from_slice(&self.best_z);
                    self.pgs.solve(problem, z, w)?
                }
                3 if n <= self.settings.enumeration_max_size => {
                    self.enumeration.solve(problem, z, w)?
                }
                _ => continue,
            };
            iterations += report.iterations;
            if rank(report.status) < rank(verdict) {
                verdict = report.status;
            }
            if report.status.is_solved() {
                return Ok(SolveReport {
                    iterations,
                    time: start.elapsed(),
                    ..report
                });
            }
            if report.error < best_err || best.is_none() {
                best_err = report.error;
                self.best_z.copy_from_slice(z);
                best = Some(report);
            }
        }
        z.copy_from_slice(&self.best_z);
        problem.compute_w(z, w);
        let report = best.expect("the Newton stage always runs");
        Ok(SolveReport {
            status: verdict,
            iterations,
            time: start.elapsed(),
            ..report
        })
    }
}
