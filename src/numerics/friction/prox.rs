//! The proximal point method around the Newton solver (PROX).
//!
//! Outer iteration k solves, by [`super::NewtonAc`]'s iteration, the
//! regularised problem u = (W + η I) r + (q − η r_k), Coulomb's law on
//! (r, u), whose solution r_{k+1} is the proximal point of r_k; a fixed point
//! r_{k+1} = r_k solves the original problem. W + η I is better conditioned
//! than W (positive definite when W is positive semidefinite). η starts at
//! max_i (W_ii) and is divided by 4 after an outer step whose inner solve
//! converged (‖Φ‖ reduced 1000-fold), multiplied by 4 otherwise. The outer
//! loop stops when the Siconos-normalised error of the original problem
//! meets the tolerance (checked at every inner step too).

use super::newton::NewtonWork;
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::error::Result;
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// PROX (see the module documentation); at most `settings.max_iterations`
/// outer iterations (200 by default), 50 Newton steps each.
#[derive(Debug, Clone)]
pub struct Prox {
    settings: SolverSettings,
    work: NewtonWork,
    q_shift: Vec<f64>,
}

impl Prox {
    /// A solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Prox {
            settings,
            work: NewtonWork::default(),
            q_shift: Vec::new(),
        }
    }

    /// Runs the outer loop; returns (Newton steps in all, status).
    pub(crate) fn run(
        &mut self,
        p: &FrictionProblem,
        r: &mut [f64],
        u: &mut [f64],
        max_outer: usize,
        tol: f64,
    ) -> (usize, SolveStatus) {
        self.work.prepare(p);
        self.q_shift.resize(p.size(), 0.0);
        let n = p.size();
        let mut eta = (0..n).fold(0.0f64, |m, i| m.max(p.w.diagonal(i)));
        if !(eta > 0.0 && eta.is_finite()) {
            eta = 1.0;
        }
        let mut steps = 0;
        for _ in 0..max_outer {
            p.compute_u(r, u);
            let e = p.errors(r, u);
            if e.siconos <= tol {
                return (steps, SolveStatus::Solved);
            }
            if !e.absolute.is_finite() {
                return (steps, SolveStatus::NumericalTrouble);
            }
            for k in 0..n {
                self.q_shift[k] = p.q[k] - eta * r[k];
            }
            self.work.shift = eta;
            let (s, status) =
                self.work
                    .run(p, &self.q_shift, r, u, 50, tol, Some(0.1 * e.absolute));
            steps += s.max(1);
            if !r.iter().all(|v| v.is_finite()) {
                return (steps, SolveStatus::NumericalTrouble);
            }
            if status == SolveStatus::Solved {
                eta = (eta / 4.0).max(1e-12);
            } else {
                eta *= 4.0;
            }
        }
        p.compute_u(r, u);
        (steps, SolveStatus::IterationLimit)
    }
}

impl FrictionSolver for Prox {
    fn name(&self) -> &'static str {
        "prox"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        let tol = self.settings.tolerance;
        let (iterations, status) = self.run(p, r, u, self.settings.iterations_or(200), tol);
        let otherwise = match status {
            SolveStatus::Solved => SolveStatus::IterationLimit,
            s => s,
        };
        let stop = Stop {
            solver: "prox",
            iterations,
            otherwise,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
