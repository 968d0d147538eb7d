//! The default frictional contact solver: picks and falls back.
//!
//! 1. NSGS (Alart–Curnier local Newton), at most 50 sweeps: it often solves
//!    easy problems outright and always gives a good starting point (skipped
//!    for problems of at most 30 unknowns);
//! 2. nonsmooth Newton on the Alart–Curnier function from there (30 steps):
//!    fast when NSGS has found the contact statuses;
//! 3. PROX (proximal point around the Newton method) from the best point so
//!    far (100 outer iterations): the most robust route to tight tolerances;
//! 4. Newton again from the best point (50 steps);
//! 5. NSGS again from the best point, for the rest of the iteration budget
//!    (`settings.max_iterations` sweeps, 2000 by default).
//!
//! PROX and Newton factor the Jacobian (sparse LU for a block-sparse W
//! beyond 200 unknowns, dense otherwise); with a dense W they are skipped
//! beyond 3000 unknowns. Each stage stops as soon as the Siconos-normalised error
//! meets the tolerance; the returned r is the best one met (smallest
//! error), and it is reported solved only if its recomputed error meets the
//! tolerance.

use super::newton::NewtonWork;
use super::nsgs::Nsgs;
use super::prox::Prox;
use super::sparse_jacobian::SparseJacobian;
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::error::Result;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// Largest number of unknowns for which the first NSGS stage is skipped.
const SMALL: usize = 30;

/// Largest number of unknowns for the dense Newton and PROX stages.
const DENSE_LIMIT: usize = 3000;

/// The default chain (see the module documentation).
#[derive(Debug, Clone)]
pub struct DefaultFriction {
    settings: SolverSettings,
    nsgs: Nsgs,
    newton: NewtonWork,
    prox: Prox,
    best: Vec<f64>,
}

impl DefaultFriction {
    /// A solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        DefaultFriction {
            settings,
            // Exact local solves: the later stages start from NSGS's point
            // (with η > 0 RockPile_tob1 ended at a larger error).
            nsgs: Nsgs::new(settings).with_local_forcing(0.0),
            newton: NewtonWork::default(),
            prox: Prox::new(settings),
            best: Vec::new(),
        }
    }
}

/// Keeps the better of r and `best` in `best`; returns the best error.
pub(super) fn keep_best(
    p: &FrictionProblem,
    r: &[f64],
    u: &mut [f64],
    best: &mut [f64],
    best_err: f64,
) -> f64 {
    p.compute_u(r, u);
    let e = p.errors(r, u).siconos;
    if e < best_err || !best_err.is_finite() {
        best.copy_from_slice(r);
        e
    } else {
        best_err
    }
}

impl FrictionSolver for DefaultFriction {
    fn name(&self) -> &'static str {
        "default"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        let tol = self.settings.tolerance;
        let n = p.size();
        self.best.resize(n, 0.0);
        self.best.copy_from_slice(r);
        let mut best_err = f64::INFINITY;
        best_err = keep_best(p, r, u, &mut self.best, best_err);
        let mut iterations = 0;
        let mut solver = "nsgs";
        let done = |e: f64| e <= tol;
        let factorable = n <= DENSE_LIMIT || SparseJacobian::applies(p);
        // Small problems go straight to Newton: NSGS sweeps cost more than
        // the dense factorisations there.
        if !done(best_err) && n > SMALL {
            self.nsgs.prepare(p);
            iterations += self.nsgs.run(p, r, u, 50, tol);
            best_err = keep_best(p, r, u, &mut self.best, best_err);
        }
        if !done(best_err) && factorable {
            solver = "newton-ac";
            r.copy_from_slice(&self.best);
            self.newton.prepare(p);
            let (k, _) = self.newton.run(p, &p.q, r, u, 30, tol, None);
            iterations += k;
            if r.iter().all(|v| v.is_finite()) {
                best_err = keep_best(p, r, u, &mut self.best, best_err);
            }
        }
        if !done(best_err) && factorable {
            solver = "prox";
            r.copy_from_slice(&self.best);
            let (k, _) = self.prox.run(p, r, u, 100, tol);
            iterations += k;
            if r.iter().all(|v| v.is_finite()) {
                best_err = keep_best(p, r, u, &mut self.best, best_err);
            }
        }
        if !done(best_err) && factorable {
            solver = "newton-ac";
            r.copy_from_slice(&self.best);
            self.newton.prepare(p);
            let (k, _) = self.newton.run(p, &p.q, r, u, 50, tol, None);
            iterations += k;
            if r.iter().all(|v| v.is_finite()) {
                best_err = keep_best(p, r, u, &mut self.best, best_err);
            }
        }
        if !done(best_err) {
            solver = "nsgs";
            r.copy_from_slice(&self.best);
            self.nsgs.prepare(p);
            iterations += self
                .nsgs
                .run(p, r, u, self.settings.iterations_or(2000), tol);
            if r.iter().all(|v| v.is_finite()) {
                best_err = keep_best(p, r, u, &mut self.best, best_err);
            }
        }
        let _ = best_err;
        r.copy_from_slice(&self.best);
        let stop = Stop {
            solver,
            iterations,
            otherwise: SolveStatus::IterationLimit,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
