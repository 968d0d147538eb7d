//! Enumeration of active sets, for small n.
//!
//! For every subset α ⊆ {1 … n} (by increasing size) it solves
//! M_αα z_α = −q_α with z_ᾱ = 0 and accepts the first candidate with
//! z_α ≥ 0 and w_ᾱ = M_ᾱα z_α + q_ᾱ ≥ 0 whose error meets the tolerance.
//! If every subset is nonsingular and none is accepted, the LCP has no
//! solution (status `NoSolution`); if some principal submatrices were
//! singular, solutions on those faces were not examined and the status is
//! `NumericalTrouble`. Refuses n above `enumeration_max_size`.

use std::time::Instant;

use super::{Lcp, LcpSolver};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::{finish, Stop};
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::settings::SolverSettings;

/// Exhaustive active-set enumeration.
#[derive(Debug, Clone)]
pub struct Enumeration {
    settings: SolverSettings,
    sub: Vec<f64>,
    rhs: Vec<f64>,
    piv: Vec<usize>,
    idx: Vec<usize>,
}

impl Enumeration {
    /// An enumeration solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Enumeration {
            settings,
            sub: Vec::new(),
            rhs: Vec::new(),
            piv: Vec::new(),
            idx: Vec::new(),
        }
    }
}

/// Advances `idx` (a sorted k-subset of 0..n) to the next one in
/// lexicographic order; returns false after the last.
pub(crate) fn next_combination(idx: &mut [usize], n: usize) -> bool {
    let k = idx.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if idx[i] < n - k + i {
            idx[i] += 1;
            for j in i + 1..k {
                idx[j] = idx[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

impl LcpSolver for Enumeration {
    fn name(&self) -> &'static str {
        "enum"
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        let start = Instant::now();
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        let limit = self.settings.enumeration_max_size;
        if n > limit {
            return Err(NumericsError::TooLarge {
                solver: "enum",
                size: n,
                limit,
            });
        }
        let tol = self.settings.tolerance;
        if self.sub.len() < n * n {
            self.sub.resize(n * n, 0.0);
            self.rhs.resize(n, 0.0);
            self.piv.resize(n, 0);
        }
        self.idx.clear();
        self.idx.reserve(n);
        let m = &problem.m;
        let mut tried = 0usize;
        let mut singular = false;
        for k in 0..=n {
            self.idx.clear();
            self.idx.extend(0..k);
            loop {
                tried += 1;
                let idx = &self.idx;
                for (b, &j) in idx.iter().enumerate() {
                    for (a, &i) in idx.iter().enumerate() {
                        self.sub[b * k + a] = m.get(i, j);
                    }
                    self.rhs[b] = -problem.q[j];
                }
                if lu_factor(&mut self.sub, k, &mut self.piv) {
                    lu_solve(&self.sub, k, &self.piv, &mut self.rhs);
                    if self.rhs[..k].iter().all(|v| *v >= 0.0) {
                        z.iter_mut().for_each(|v| *v = 0.0);
                        for (b, &j) in idx.iter().enumerate() {
                            z[j] = self.rhs[b];
                        }
                        problem.compute_w(z, w);
                        if problem.errors(z, w).0 <= tol {
                            return Ok(finish(
                                problem,
                                z,
                                w,
                                Stop {
                                    solver: "enum",
                                    iterations: tried,
                                    otherwise: SolveStatus::Solved,
                                },
                                tol,
                                start,
                            ));
                        }
                    }
                } else {
                    singular = true;
                }
                if k == 0 || !next_combination(&mut self.idx, n) {
                    break;
                }
            }
        }
        let status = if singular {
            SolveStatus::NumericalTrouble
        } else {
            SolveStatus::NoSolution
        };
        z.iter_mut().for_each(|v| *v = 0.0);
        Ok(finish(
            problem,
            z,
            w,
            Stop {
                solver: "enum",
                iterations: tried,
                otherwise: status,
            },
            tol,
            start,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::next_combination;

    #[test]
    fn combinations_of_three_among_five() {
        let mut idx = vec![0, 1, 2];
        let mut count = 1;
        while next_combination(&mut idx, 5) {
            count += 1;
        }
        assert_eq!(count, 10);
        assert_eq!(idx, vec![2, 3, 4]);
    }
}
