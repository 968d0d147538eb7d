//! Block principal pivoting with a sparse Cholesky factorisation, for large
//! LCPs whose M is symmetric positive definite and sparse — the Delassus
//! matrices W = H M⁻¹ Hᵀ of mechanics (a column of N beads gives a
//! tridiagonal W).
//!
//! # Method
//!
//! An active set A ⊆ {1 … n} (with I its complement) fixes a candidate:
//!
//! z_I = 0,   M_AA z_A = −q_A,   w = M z + q   (so w_A = 0).
//!
//! Its infeasible indices are H = {i ∈ A : zᵢ < 0} ∪ {i ∈ I : wᵢ < 0}. The
//! block pivot A ← A △ H is one semismooth Newton step on min(z, w) = 0
//! (the primal–dual active set method: A = {i : zᵢ − c·wᵢ > 0}). For a
//! symmetric M-matrix these steps alone converge; for a general symmetric
//! positive definite M they may cycle, so the Júdice–Pires safeguard runs
//! them only while |H| reaches a new minimum or for at most three further
//! steps, then swaps only the least index of H (Murty's pivot, finite for
//! P-matrices) until |H| falls below its least value again. The iteration
//! stops as soon as the candidate's normalised error meets the tolerance.
//! Iterations count candidates, i.e. factorisations.
//!
//! The first active set comes from the caller's z: zᵢ > 0 ⇒ i ∈ A. Passing
//! the previous time step's solution (warm start) usually ends in one or two
//! iterations.
//!
//! # Factorisation on a fixed pattern
//!
//! M_AA z_A = −q_A is solved as K x = b with
//!
//! K_ij = (M_ij + M_ji)/2 for i, j ∈ A,   K_ij = δ_ij otherwise,
//! b_A = −q_A,   b_I = 0,
//!
//! where K keeps the whole (symmetrised) pattern of M, with explicit zeros.
//! The symbolic Cholesky analysis of that pattern — an approximate minimum
//! degree ordering, the elimination tree, the column counts and the
//! workspace size — is done once per pattern; each iteration only refills
//! K's values (O(nnz M)), factorises K = L Lᵀ numerically and solves with L
//! (faer's simplicial sparse Cholesky). A pattern change is detected by
//! comparing the storage arrays that define it, and only then is the
//! analysis redone.
//!
//! # Cost
//!
//! Per iteration: one numeric factorisation (Σⱼ cⱼ² flops with cⱼ the
//! column counts of L), two triangular solves (O(nnz L)) and one product
//! M z (O(nnz M)). For a chain of N beads, nnz L = O(N) and so is every
//! iteration.
//!
//! # Contract
//!
//! * M must be symmetric: every pair satisfies
//!   |M_ij − M_ji| ≤ 10⁻¹⁰·max(|M_ij|, |M_ji|, √|M_ii M_jj|), otherwise the
//!   solver refuses with `NotApplicable`; the symmetric part is factorised.
//! * M should be positive definite (or a symmetric M-matrix). If some M_AA
//!   met on the way is not numerically positive definite — the factorisation
//!   breaks down, or a pivot keeps less than 10⁻¹² of its diagonal entry —
//!   the solve stops with `NumericalTrouble` and returns the last candidate
//!   (z = 0 if there is none).
//! * The pattern of a block-sparse M is its block structure (block sizes and
//!   which blocks are stored); every entry of a stored block belongs to it,
//!   zero or not. So a contact is switched off without changing the pattern
//!   by zeroing its row and column inside their blocks, with Mᵢᵢ = 1 and
//!   qᵢ = 1. Once a pattern has been solved, further solves on it do not
//!   allocate.
//! * A dense M is accepted; its pattern is the set of its non-zero entries
//!   plus the diagonal, so a change in which entries are zero triggers a new
//!   analysis (and allocations). Dense storage suits small problems; large
//!   ones belong in block-sparse storage.

//!
//! # Files
//!
//! `pattern.rs`: what defines a pattern and the stored entries of M;
//! `analysis.rs`: the symbolic analysis of a pattern (ordering, structure
//! of L, the replay's row patterns) and the symmetry check; `factor.rs`:
//! the numeric factorisation and solve restricted to the active set; this
//! file: the solver and its pivoting loop.

mod analysis;
mod factor;
mod pattern;
#[cfg(test)]
mod tests;

use std::fmt;

use super::{Lcp, LcpSolver};
use crate::numerics::error::Result;
use crate::numerics::matrix::Matrix;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;
use analysis::Analysis;
use pattern::values;

const NAME: &str = "sparse";

/// Block pivots allowed without a new least number of infeasibilities before
/// single pivots take over (Júdice–Pires' p̄).
const BLOCK_PIVOTS: usize = 3;

/// Largest accepted asymmetry, relative to max(|M_ij|, |M_ji|, √|M_ii M_jj|).
const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// Smallest accepted ratio of a Cholesky pivot L_kk² to its diagonal entry
/// K_kk: below it, M_AA is taken as singular.
const PIVOT_RATIO: f64 = 1e-12;

/// Sparse block principal pivoting (see the module documentation).
pub struct SparsePivoting {
    settings: SolverSettings,
    analysis: Option<Analysis>,
    analyses: usize,
    /// Júdice–Pires' p̄ (a field so that tests can switch the safeguard off).
    block_pivots: usize,
    active: Vec<bool>,
    x: Vec<f64>,
}

impl fmt::Debug for SparsePivoting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparsePivoting")
            .field("settings", &self.settings)
            .field("analyses", &self.analyses)
            .field("factor_nnz", &self.factor_nnz())
            .finish()
    }
}

impl SparsePivoting {
    /// A sparse pivoting solver with the given settings. Default iteration
    /// limit: 10·n + 100 factorisations.
    pub fn new(settings: SolverSettings) -> Self {
        SparsePivoting {
            settings,
            analysis: None,
            analyses: 0,
            block_pivots: BLOCK_PIVOTS,
            active: Vec::new(),
            x: Vec::new(),
        }
    }

    /// How many symbolic analyses this solver has done: one per pattern
    /// change (the first solve included).
    pub fn symbolic_analyses(&self) -> usize {
        self.analyses
    }

    /// Number of stored entries of the Cholesky factor L of the current
    /// pattern (`None` before the first solve).
    pub fn factor_nnz(&self) -> Option<usize> {
        self.analysis.as_ref().map(|a| a.l_values.len())
    }

    /// Makes the analysis match the pattern of `m` (redoing it only when the
    /// pattern changed) and checks that `m` is symmetric. `Ok(false)` when
    /// the analysis could not be done (the factoriser ran out of memory or
    /// of index range).
    fn prepare(&mut self, m: &Matrix) -> Result<bool> {
        if !self.analysis.as_ref().is_some_and(|a| a.key.matches(m)) {
            self.analysis = Analysis::new(m);
            self.analyses += 1;
        }
        match &self.analysis {
            Some(a) => a.check_symmetric(values(m)).map(|()| true),
            None => Ok(false),
        }
    }
}

/// Whether index i is infeasible for its set: zᵢ < 0 in A, wᵢ < 0 in I.
fn infeasible(active: &[bool], z: &[f64], w: &[f64], i: usize) -> bool {
    if active[i] {
        z[i] < 0.0
    } else {
        w[i] < 0.0
    }
}

impl LcpSolver for SparsePivoting {
    fn name(&self) -> &'static str {
        NAME
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        let tol = self.settings.tolerance;
        let stop = |iterations, otherwise| Stop {
            solver: NAME,
            iterations,
            otherwise,
        };
        if n == 0 {
            return Ok(finish(problem, z, w, stop(0, SolveStatus::Solved), tol));
        }
        let analysed = self.prepare(&problem.m)?;
        let max_iterations = self.settings.iterations_or(10 * n + 100);
        let block_pivots = self.block_pivots;
        let SparsePivoting {
            analysis,
            active,
            x,
            ..
        } = self;
        let analysis = match analysis {
            Some(a) if analysed => a,
            _ => {
                z.fill(0.0);
                let s = stop(0, SolveStatus::NumericalTrouble);
                return Ok(finish(problem, z, w, s, tol));
            }
        };
        active.clear();
        active.extend(z.iter().map(|v| *v > 0.0));
        x.resize(n, 0.0);
        let vals = values(&problem.m);
        let mut least_infeasible = usize::MAX;
        let mut block_budget = block_pivots;
        let mut iterations = 0;
        let mut have_candidate = false;
        let otherwise = loop {
            if iterations == max_iterations {
                break SolveStatus::IterationLimit;
            }
            iterations += 1;
            if !analysis.solve_active(vals, &problem.q, active, x) {
                if !have_candidate {
                    z.fill(0.0);
                }
                break SolveStatus::NumericalTrouble;
            }
            z.copy_from_slice(x);
            have_candidate = true;
            problem.compute_w(z, w);
            if problem.errors(z, w).0 <= tol {
                break SolveStatus::Solved;
            }
            let count = (0..n).filter(|&i| infeasible(active, z, w, i)).count();
            if count == 0 {
                // A consistent active set whose solve misses the tolerance:
                // M_AA is too ill-conditioned for it.
                break SolveStatus::NumericalTrouble;
            }
            if count < least_infeasible || block_budget > 0 {
                if count < least_infeasible {
                    least_infeasible = count;
                    block_budget = block_pivots;
                } else {
                    block_budget -= 1;
                }
                for i in 0..n {
                    if infeasible(active, z, w, i) {
                        active[i] = !active[i];
                    }
                }
            } else if let Some(i) = (0..n).find(|&i| infeasible(active, z, w, i)) {
                active[i] = !active[i];
            }
        };
        Ok(finish(problem, z, w, stop(iterations, otherwise), tol))
    }
}
