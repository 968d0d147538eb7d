//! Enumeration of active sets, for small n.
//!
//! For every subset α ⊆ {1 … n} (by increasing size) it solves
//! M_αα z_α = −q_α with z_ᾱ = 0 and accepts the first candidate with
//! z_α ≥ 0 and w_ᾱ = M_ᾱα z_α + q_ᾱ ≥ 0 whose error meets the tolerance.
//! If every subset is nonsingular and none is accepted, the LCP has no
//! solution (status `NoSolution`); if some principal submatrices were
//! singular, solutions on those faces were not examined and the status is
//! `NumericalTrouble`. Refuses n above `enumeration_max_size`.

use super::{Lcp, LcpSolver};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::report::{finish, Measured, Stop};
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::settings::SolverSettings;

/// Exhaustive active-set enumeration.
#[derive(Debug, Clone)]
pub struct Enumeration {
    settings: SolverSettings,
    search: ActiveSetSearch,
}

impl Enumeration {
    /// An enumeration solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Enumeration {
            settings,
            search: ActiveSetSearch::default(),
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

/// The active-set search shared by the LCP and MLCP enumeration solvers.
///
/// The first `n_eq` unknowns are free (equality rows); for every subset α of
/// the other indices, by increasing size, it solves the square system of the
/// rows and columns {0 … n_eq−1} ∪ α, M_SS x_S = −q_S, with x = 0 elsewhere,
/// and accepts the first candidate with x_α ≥ 0 whose error meets the
/// tolerance. Buffers are kept between runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct ActiveSetSearch {
    sub: Vec<f64>,
    rhs: Vec<f64>,
    piv: Vec<usize>,
    rows: Vec<usize>,
    alpha: Vec<usize>,
}

impl ActiveSetSearch {
    /// Runs the search. `Solved` if a candidate passed, otherwise
    /// `NoSolution` (every system was nonsingular) or `NumericalTrouble`
    /// (some faces had singular systems and were not examined; z = 0 then).
    pub(crate) fn run<P: Measured>(
        &mut self,
        (m, q, n_eq): (&Matrix, &[f64], usize),
        problem: &P,
        tol: f64,
        z: &mut [f64],
        w: &mut [f64],
    ) -> (SolveStatus, usize) {
        let size = q.len();
        let mc = size - n_eq;
        if self.sub.len() < size * size {
            self.sub.resize(size * size, 0.0);
            self.rhs.resize(size, 0.0);
            self.piv.resize(size, 0);
        }
        self.rows.clear();
        self.rows.reserve(size);
        self.alpha.clear();
        self.alpha.reserve(mc);
        let mut tried = 0;
        let mut singular = false;
        for k in 0..=mc {
            self.alpha.clear();
            self.alpha.extend(0..k);
            loop {
                tried += 1;
                self.rows.clear();
                self.rows.extend(0..n_eq);
                self.rows.extend(self.alpha.iter().map(|a| n_eq + a));
                let s = self.rows.len();
                for (b, &j) in self.rows.iter().enumerate() {
                    for (a, &i) in self.rows.iter().enumerate() {
                        self.sub[b * s + a] = m.get(i, j);
                    }
                    self.rhs[b] = -q[j];
                }
                if lu_factor(&mut self.sub, s, &mut self.piv) {
                    lu_solve(&self.sub, s, &self.piv, &mut self.rhs);
                    if self.rhs[n_eq..s].iter().all(|v| *v >= 0.0) {
                        z.iter_mut().for_each(|v| *v = 0.0);
                        for (b, &j) in self.rows.iter().enumerate() {
                            z[j] = self.rhs[b];
                        }
                        problem.compute_w(z, w);
                        if problem.errors(z, w).0 <= tol {
                            return (SolveStatus::Solved, tried);
                        }
                    }
                } else {
                    singular = true;
                }
                if k == 0 || !next_combination(&mut self.alpha, mc) {
                    break;
                }
            }
        }
        z.iter_mut().for_each(|v| *v = 0.0);
        let status = if singular {
            SolveStatus::NumericalTrouble
        } else {
            SolveStatus::NoSolution
        };
        (status, tried)
    }
}

impl LcpSolver for Enumeration {
    fn name(&self) -> &'static str {
        "enum"
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
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
        let (status, iterations) = self
            .search
            .run((&problem.m, &problem.q, 0), problem, tol, z, w);
        let stop = Stop {
            solver: "enum",
            iterations,
            otherwise: status,
        };
        Ok(finish(problem, z, w, stop, tol))
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
