//! The default LCP solver: a chain that tries, in order,
//!
//! 0. the active set of the initial guess (2 ≤ n ≤ `warm_start_max_size`,
//!    dense M; one row is Lemke's closed form already): one direct solve of M_BB z_B = −q_B, kept when it
//!    is a solution (module `active_set_start`);
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

use super::active_set_start::ActiveSetStart;
use super::pgs::first_nonpositive_diagonal;
use super::{Enumeration, Lcp, LcpSolver, Lemke, NewtonFb, Pgs};
use crate::numerics::error::Result;
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::settings::SolverSettings;

/// (Active set of the guess →) Lemke → Newton–FB → PGS → enumeration.
#[derive(Debug, Clone)]
pub struct DefaultLcp {
    settings: SolverSettings,
    lemke: Lemke,
    newton: NewtonFb,
    pgs: Pgs,
    enumeration: Enumeration,
    warm: ActiveSetStart,
    best_z: Vec<f64>,
    /// The settings passed [`SolverSettings::validate`] (checked once, when
    /// the chain is built: they never change).
    settings_valid: bool,
}

impl DefaultLcp {
    /// The default chain with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        DefaultLcp {
            settings,
            lemke: Lemke::new(settings),
            newton: NewtonFb::new(settings),
            pgs: Pgs::new(settings),
            enumeration: Enumeration::new(settings),
            warm: ActiveSetStart::default(),
            best_z: Vec::new(),
            settings_valid: settings.validate().is_ok(),
        }
    }

    /// The chain; M is checked (square, finite) when `check_matrix`, the
    /// rest of the input always.
    fn solve_checked(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
        check_matrix: bool,
    ) -> Result<SolveReport> {
        if !self.settings_valid {
            self.settings.validate()?;
        }
        if check_matrix {
            // M may have changed: no factors kept from earlier solves.
            self.warm.forget();
            problem.check_vectors(z, w)?;
        } else {
            problem.check_vectors_same_matrix(z, w)?;
        }
        let n = problem.size();
        self.best_z.clear();
        self.best_z.extend_from_slice(z);
        if (2..=self.settings.warm_start_max_size).contains(&n) {
            let tol = self.settings.tolerance;
            if let Some(report) = self.warm.try_solve(problem, z, w, tol, !check_matrix) {
                return Ok(SolveReport { ..report });
            }
        }
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
            if report.status.rank() < verdict.rank() {
                verdict = report.status;
            }
            if report.status.is_solved() {
                return Ok(SolveReport {
                    iterations,
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
            ..report
        })
    }
}

impl LcpSolver for DefaultLcp {
    fn name(&self) -> &'static str {
        "default"
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.solve_checked(problem, z, w, true)
    }

    fn solve_same_matrix(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
    ) -> Result<SolveReport> {
        self.solve_checked(problem, z, w, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::lcp::active_set_start::NAME;
    use nalgebra::DMatrix;

    /// M = [[2, 1, 0], [1, 2, 1], [0, 1, 2]] and q = (−2, −1, −2): the one
    /// solution is z = (1, 0, 1), w = (0, 1, 0) (M is positive definite).
    fn problem() -> Lcp {
        let m = DMatrix::from_row_slice(3, 3, &[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 2.0]);
        Lcp::new(m, vec![-2.0, -1.0, -2.0]).unwrap()
    }

    fn solve(settings: SolverSettings, guess: [f64; 3]) -> (SolveReport, Vec<f64>) {
        let mut z = guess.to_vec();
        let mut w = vec![0.0; 3];
        let r = DefaultLcp::new(settings)
            .solve(&problem(), &mut z, &mut w)
            .unwrap();
        assert!(r.status.is_solved(), "{r:?}");
        (r, z)
    }

    #[test]
    fn the_warm_start_answers_its_basis_and_falls_back_to_lemke_otherwise() {
        let s = SolverSettings::default();
        // The guess's basis is the solution's: one direct solve.
        let (r, z) = solve(s, [0.3, 0.0, 4.0]);
        assert_eq!((r.solver, r.iterations), (NAME, 1));
        assert_eq!(z, [1.0, 0.0, 1.0]);
        // The basis changed ({1}, then {0, 1}): Lemke from scratch, same solution.
        for guess in [[0.0, 2.0, 0.0], [1.0, 1.0, 0.0]] {
            let (r, z) = solve(s, guess);
            assert_eq!(r.solver, "lemke", "guess {guess:?}");
            assert!(r.iterations >= 1);
            assert_eq!(z, [1.0, 0.0, 1.0]);
        }
        // Off: Lemke even from the right basis.
        let off = SolverSettings {
            warm_start_max_size: 0,
            ..s
        };
        let (r, z) = solve(off, [0.3, 0.0, 4.0]);
        assert_eq!(r.solver, "lemke");
        assert_eq!(z, [1.0, 0.0, 1.0]);
        // Larger than the limit: Lemke.
        let small = SolverSettings {
            warm_start_max_size: 2,
            ..s
        };
        assert_eq!(solve(small, [0.3, 0.0, 4.0]).0.solver, "lemke");
    }

    #[test]
    fn a_solve_on_the_same_matrix_still_checks_q_and_the_vectors() {
        let mut chain = DefaultLcp::new(SolverSettings::default());
        let mut p = problem();
        let (mut z, mut w) = (vec![1.0, 0.0, 1.0], vec![0.0; 3]);
        let r = chain.solve(&p, &mut z, &mut w).unwrap();
        assert!(r.status.is_solved());
        // Same M: the warm start reuses its factors, same answer.
        let (mut z2, mut w2) = (vec![1.0, 0.0, 1.0], vec![0.0; 3]);
        let r2 = chain.solve_same_matrix(&p, &mut z2, &mut w2).unwrap();
        assert_eq!((z2.as_slice(), r2.error), (z.as_slice(), r.error));
        // Bad q, bad guess, wrong lengths: errors, as from `solve`.
        p.q[1] = f64::NAN;
        assert!(chain.solve_same_matrix(&p, &mut z2, &mut w2).is_err());
        p.q[1] = -1.0;
        let mut bad = vec![f64::INFINITY, 0.0, 0.0];
        assert!(chain.solve_same_matrix(&p, &mut bad, &mut w2).is_err());
        let mut short = vec![0.0; 2];
        assert!(chain.solve_same_matrix(&p, &mut short, &mut w2).is_err());
        assert!(chain.solve_same_matrix(&p, &mut z2, &mut short).is_err());
    }

    #[test]
    fn the_warm_start_limit_is_validated() {
        let s = SolverSettings {
            warm_start_max_size: crate::numerics::settings::WARM_START_MAX + 1,
            ..SolverSettings::default()
        };
        let mut z = vec![0.0; 3];
        let mut w = vec![0.0; 3];
        assert!(DefaultLcp::new(s)
            .solve(&problem(), &mut z, &mut w)
            .is_err());
    }
}
