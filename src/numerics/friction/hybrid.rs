//! NSGS with a stall detector handing over to the nonsmooth Newton method
//! (`nsgs-newton`), for the large coupled islands of piles and stacks.
//!
//! NSGS converges linearly, and on the one big island of a settled pile
//! its rate ρ (error ratio per sweep) comes close to 1: it reaches 10⁻⁴ in
//! tens of sweeps and then stalls. The Newton method on the Alart–Curnier
//! function converges fast once the contact statuses (open, sticking,
//! sliding) are right, which NSGS's point usually gives. So:
//!
//! 1. NSGS in chunks of [`CHUNK`] sweeps from the warm start; after each
//!    chunk the Siconos-normalised error e_k (u = W r + q recomputed);
//! 2. the observed rate over the chunk, ρ = (e_k / e_{k−1})^{1/CHUNK},
//!    predicts the sweeps still needed, s = ln(tol / e_k) / ln ρ (infinite
//!    when ρ ≥ 1); NSGS is **stalled** when s exceeds the sweeps left in
//!    the budget or [`NsgsNewton::with_stall_sweeps`] (1000 by default: on
//!    the 100-sphere pile a Newton step, one sparse factorisation, costs
//!    about as much as 400 sweeps, docs/rigid-bodies.md);
//! 3. on a stall, Newton (`newton-ac`'s iteration and factorisations: the
//!    block LU in the contacts' order, else faer's sparse LU, for a
//!    block-sparse W) runs from the best point so far for at most
//!    [`NsgsNewton::with_newton_steps`] steps (20 by default); it stops at
//!    the tolerance;
//! 4. if Newton did not meet it, NSGS resumes from the best point; the next
//!    stall hands over again, at most [`MAX_HANDOVERS`] times per solve.
//!
//! The returned r is the best met (smallest error); `iterations` counts
//! NSGS sweeps plus Newton steps, and the whole budget
//! (`settings.max_iterations`, 1000 by default) bounds both. The report's
//! solver is the stage that produced r. Problems too large to factor (a
//! dense W beyond 3000 unknowns) never hand over: NSGS alone.

use super::default::keep_best;
use super::newton::NewtonWork;
use super::nsgs::Nsgs;
use super::sparse_jacobian::SparseJacobian;
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::error::Result;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// NSGS sweeps between two stall tests.
pub const CHUNK: usize = 10;

/// Handovers to Newton per solve at most.
pub const MAX_HANDOVERS: usize = 3;

/// Largest number of unknowns of a dense W that Newton factors.
const DENSE_LIMIT: usize = 3000;

/// NSGS, then Newton when NSGS stalls (see the module documentation).
#[derive(Debug, Clone)]
pub struct NsgsNewton {
    settings: SolverSettings,
    nsgs: Nsgs,
    newton: NewtonWork,
    best: Vec<f64>,
    stall_sweeps: f64,
    newton_steps: usize,
    /// Counters over the solver's life: (solves, solves that handed over,
    /// solves that Newton finished).
    counts: (usize, usize, usize),
}

impl NsgsNewton {
    /// The solver with the default stall test (1000 predicted sweeps) and
    /// 20 Newton steps per handover.
    pub fn new(settings: SolverSettings) -> Self {
        NsgsNewton {
            settings,
            nsgs: Nsgs::new(settings),
            newton: NewtonWork::default(),
            best: Vec::new(),
            stall_sweeps: 1000.0,
            newton_steps: 20,
            counts: (0, 0, 0),
        }
    }

    /// NSGS is stalled when the sweeps it still needs at its observed
    /// rate exceed `sweeps` (f64::INFINITY: only when the error stops
    /// falling).
    pub fn with_stall_sweeps(mut self, sweeps: f64) -> Self {
        self.stall_sweeps = if sweeps.is_nan() {
            1000.0
        } else {
            sweeps.max(0.0)
        };
        self
    }

    /// Newton steps per handover (at least 1).
    pub fn with_newton_steps(mut self, steps: usize) -> Self {
        self.newton_steps = steps.max(1);
        self
    }

    /// NSGS over-relaxation ω (see [`Nsgs::with_relaxation`]).
    pub fn with_relaxation(mut self, omega: f64) -> Self {
        self.nsgs = self.nsgs.with_relaxation(omega);
        self
    }

    /// (solves, solves that handed over to Newton, solves Newton finished)
    /// since the solver was built.
    pub fn counts(&self) -> (usize, usize, usize) {
        self.counts
    }
}

/// Whether NSGS, whose error went from `before` to `after` over `sweeps`
/// sweeps, needs more than `limit` further sweeps to reach `tol` at that
/// rate.
fn stalled(before: f64, after: f64, sweeps: usize, tol: f64, limit: f64) -> bool {
    if !(after.is_finite() && before.is_finite()) || after >= before {
        return true;
    }
    let rate = (after / before).ln() / sweeps as f64;
    let needed = (tol / after).ln() / rate;
    needed > limit
}

impl FrictionSolver for NsgsNewton {
    fn name(&self) -> &'static str {
        "nsgs-newton"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        let tol = self.settings.tolerance;
        let budget = self.settings.iterations_or(1000);
        self.counts.0 += 1;
        self.best.resize(p.size(), 0.0);
        self.best.copy_from_slice(r);
        let mut best_err = keep_best(p, r, u, &mut self.best, f64::INFINITY);
        let factorable = p.size() <= DENSE_LIMIT || SparseJacobian::applies(p);
        let (mut used, mut handovers) = (0, 0);
        let mut solver = "nsgs";
        let mut last = best_err;
        if best_err > tol {
            self.nsgs.prepare(p);
        }
        while best_err > tol && used < budget {
            let chunk = CHUNK.min(budget - used);
            let k = self.nsgs.run(p, r, u, chunk, tol);
            used += k;
            let e = p.errors(r, u).siconos;
            if e < best_err {
                self.best.copy_from_slice(r);
                best_err = e;
                solver = "nsgs";
            }
            if best_err <= tol || used >= budget {
                break;
            }
            let left = (budget - used) as f64;
            let stall = stalled(last, e, k, tol, self.stall_sweeps.min(left));
            last = e;
            if stall && factorable && handovers < MAX_HANDOVERS {
                handovers += 1;
                if handovers == 1 {
                    self.counts.1 += 1;
                }
                r.copy_from_slice(&self.best);
                self.newton.prepare(p);
                let steps = self.newton_steps.min(budget - used);
                let (k, _) = self.newton.run(p, &p.q, r, u, steps, tol, None);
                used += k.max(1);
                if r.iter().all(|v| v.is_finite()) {
                    let before = best_err;
                    best_err = keep_best(p, r, u, &mut self.best, best_err);
                    if best_err < before {
                        solver = "newton-ac";
                    }
                }
                if best_err <= tol {
                    self.counts.2 += 1;
                    break;
                }
                // Back to NSGS from the best point.
                r.copy_from_slice(&self.best);
                p.compute_u(r, u);
                last = best_err;
            }
        }
        r.copy_from_slice(&self.best);
        let stop = Stop {
            solver,
            iterations: used,
            otherwise: SolveStatus::IterationLimit,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}

#[cfg(test)]
mod tests {
    use super::stalled;

    #[test]
    fn the_stall_test_predicts_the_sweeps_left_at_the_observed_rate() {
        // Halving every 10 sweeps: from 1e-3 to 1e-6 takes about 100 sweeps.
        assert!(!stalled(2e-3, 1e-3, 10, 1e-6, 110.0));
        assert!(stalled(2e-3, 1e-3, 10, 1e-6, 90.0));
        // No decrease, or a rise: stalled whatever the limit.
        assert!(stalled(1e-3, 1e-3, 10, 1e-6, f64::INFINITY));
        assert!(stalled(1e-3, 2e-3, 10, 1e-6, f64::INFINITY));
    }
}
