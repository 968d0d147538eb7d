//! Linear complementarity problems: find z with
//!
//! w = M z + q,   0 ≤ w ⊥ z ≥ 0.
//!
//! Solvers: [`Lemke`] (complementary pivoting, lexicographic), [`Pgs`]
//! (projected Gauss–Seidel and over-relaxed PSOR), [`Enumeration`] (all 2ⁿ
//! active sets, small n), [`NewtonFb`] (semismooth Newton on the
//! Fischer–Burmeister function), [`DefaultLcp`], which chains them, and
//! [`SparsePivoting`] (block principal pivoting on a sparse Cholesky
//! factorisation, for large sparse symmetric positive definite M).

mod active_set_start;
mod default;
mod enumeration;
pub(crate) use enumeration::ActiveSetSearch;
mod lemke;
mod newton_fb;
mod pgs;
mod sparse_pivoting;

pub use default::DefaultLcp;
pub use enumeration::Enumeration;
pub(crate) use lemke::scalar_lcp;
pub use lemke::Lemke;
pub use newton_fb::NewtonFb;
pub use pgs::Pgs;
pub use sparse_pivoting::SparsePivoting;

use super::error::{check_finite, check_len, NumericsError, Result};
use super::matrix::{Matrix, ProblemMatrix};
use super::report::SolveReport;
use super::residual::{lcp_natural_norm, norm2};
use super::settings::SolverSettings;

/// An LCP (M, q): w = M z + q, 0 ≤ w ⊥ z ≥ 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Lcp {
    /// The n × n matrix M.
    pub m: Matrix,
    /// The vector q of length n.
    pub q: Vec<f64>,
}

impl Lcp {
    /// Builds and validates an LCP.
    pub fn new(m: impl Into<Matrix>, q: Vec<f64>) -> Result<Self> {
        let lcp = Lcp { m: m.into(), q };
        lcp.validate()?;
        Ok(lcp)
    }

    /// n.
    pub fn size(&self) -> usize {
        self.q.len()
    }

    /// Checks that M is square n × n and M, q are finite. Every solver calls it.
    pub fn validate(&self) -> Result<()> {
        self.m.check_square("M", self.q.len())?;
        check_finite("q", &self.q)
    }

    /// Validates the problem and the caller's vectors before a solve.
    pub(crate) fn check_vectors(&self, z: &[f64], w: &[f64]) -> Result<()> {
        self.validate()?;
        check_len("z", z, self.size())?;
        check_len("w", w, self.size())?;
        check_finite("z (initial guess)", z)
    }

    /// [`Self::check_vectors`] without the check of M's entries, for a
    /// matrix that passed it and has not changed since (its row count is
    /// still compared with q's length).
    /// One pass for the common case; the error, when there is one, comes
    /// from the full check.
    pub(crate) fn check_vectors_same_matrix(&self, z: &[f64], w: &[f64]) -> Result<()> {
        let n = self.q.len();
        if self.m.nrows() == n
            && z.len() == n
            && w.len() == n
            && self.q.iter().chain(z).all(|x| x.is_finite())
        {
            return Ok(());
        }
        self.check_vectors(z, w)
    }

    /// w ← M z + q.
    pub fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        w.copy_from_slice(&self.q);
        self.m.gemv(1.0, z, 1.0, w);
    }

    /// Error measures of z, w (with w = M z + q already computed):
    /// `(normalised, absolute)` where absolute = ‖min(z, w)‖₂ and
    /// normalised = absolute / ‖q‖₂ (Siconos' `lcp_compute_error`
    /// normalisation; absolute when q = 0).
    pub fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        let abs = lcp_natural_norm(z, w);
        let nq = norm2(&self.q);
        let rel = if nq > 0.0 { abs / nq } else { abs };
        (rel, abs)
    }
}

/// A solver of LCPs. Once it has solved a problem of size n, further solves
/// of size n do not allocate.
pub trait LcpSolver: Send {
    /// Name used in reports and on the command line.
    fn name(&self) -> &'static str;
    /// Solves `problem`. `z` holds the initial guess (iterative solvers) and
    /// receives the solution; `w` receives M z + q. The report's status says
    /// whether the vectors are a solution; errors are for bad input only.
    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport>;

    /// [`Self::solve`] for a caller that guarantees `problem.m` is the
    /// matrix of its previous call to this solver, unchanged since, and
    /// that this call found it valid (square, finite) — a time stepping
    /// reusing its assembled W. A solver may skip checking M again and
    /// reuse what it computed from M (factorisations); q, z and w are
    /// checked as by `solve`. By default this is `solve`.
    fn solve_same_matrix(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
    ) -> Result<SolveReport> {
        self.solve(problem, z, w)
    }
}

/// Names of the LCP solvers, as accepted by [`lcp_solver`].
pub const LCP_SOLVERS: &str = "default, lemke, pgs, psor, enum, newton-fb, sparse";

/// Builds an LCP solver by name (see [`LCP_SOLVERS`]).
pub fn lcp_solver(name: &str, settings: SolverSettings) -> Result<Box<dyn LcpSolver>> {
    settings.validate()?;
    Ok(match name {
        "default" => Box::new(DefaultLcp::new(settings)),
        "lemke" => Box::new(Lemke::new(settings)),
        "pgs" => Box::new(Pgs::new(settings)),
        "psor" => Box::new(Pgs::psor(settings)),
        "enum" => Box::new(Enumeration::new(settings)),
        "newton-fb" => Box::new(NewtonFb::new(settings)),
        "sparse" => Box::new(SparsePivoting::new(settings)),
        _ => {
            return Err(NumericsError::UnknownSolver {
                name: name.to_string(),
                family: "LCP",
                known: LCP_SOLVERS,
            })
        }
    })
}

impl super::report::Measured for Lcp {
    fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        Lcp::compute_w(self, z, w)
    }
    fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        Lcp::errors(self, z, w)
    }
}
