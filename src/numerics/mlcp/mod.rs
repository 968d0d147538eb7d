//! Mixed linear complementarity problems.
//!
//! In block form: find u ∈ ℝⁿ, v ∈ ℝᵐ with
//!
//! A u + C v + a = 0,
//! 0 ≤ v ⊥ w = D u + B v + b ≥ 0,
//!
//! equivalently, with x = (u, v), M = [A C; D B], q = (a, b): the first n
//! components of M x + q vanish and the last m are complementary to v.
//! Both forms are accepted ([`Mlcp::from_blocks`], [`Mlcp::new`]); the problem
//! is stored in the M/q form.

mod solvers;

pub use solvers::{
    DefaultMlcp, MlcpEnumeration, MlcpLemke, MlcpNewtonFb, MlcpPgs, MlcpSolver, MLCP_SOLVERS,
};

use nalgebra::DMatrix;

use super::error::{check_finite, check_len, NumericsError, Result};
use super::matrix::{Matrix, ProblemMatrix};
use super::residual::norm2;
use super::settings::SolverSettings;

/// An MLCP in M/q form with `n_eq` leading equality rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlcp {
    /// The (n + m) × (n + m) matrix [A C; D B].
    pub m: Matrix,
    /// The vector (a, b).
    pub q: Vec<f64>,
    /// n, the number of equalities (and of free unknowns u).
    pub n_eq: usize,
}

impl Mlcp {
    /// Builds an MLCP from M, q and the number of equality rows.
    pub fn new(m: impl Into<Matrix>, q: Vec<f64>, n_eq: usize) -> Result<Self> {
        let p = Mlcp {
            m: m.into(),
            q,
            n_eq,
        };
        p.validate()?;
        Ok(p)
    }

    /// Builds an MLCP from its blocks: A (n×n), B (m×m), C (n×m), D (m×n), a (n), b (m).
    pub fn from_blocks(
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        c: &DMatrix<f64>,
        d: &DMatrix<f64>,
        a_vec: &[f64],
        b_vec: &[f64],
    ) -> Result<Self> {
        let n = a_vec.len();
        let m = b_vec.len();
        let shape = |what, mat: &DMatrix<f64>, r: usize, c: usize| {
            if mat.nrows() != r || mat.ncols() != c {
                Err(NumericsError::DimensionMismatch {
                    what,
                    expected: r * c,
                    found: mat.nrows() * mat.ncols(),
                })
            } else {
                Ok(())
            }
        };
        shape("A", a, n, n)?;
        shape("B", b, m, m)?;
        shape("C", c, n, m)?;
        shape("D", d, m, n)?;
        let mut full = DMatrix::zeros(n + m, n + m);
        full.view_mut((0, 0), (n, n)).copy_from(a);
        full.view_mut((0, n), (n, m)).copy_from(c);
        full.view_mut((n, 0), (m, n)).copy_from(d);
        full.view_mut((n, n), (m, m)).copy_from(b);
        let mut q = Vec::with_capacity(n + m);
        q.extend_from_slice(a_vec);
        q.extend_from_slice(b_vec);
        Mlcp::new(full, q, n)
    }

    /// n + m.
    pub fn size(&self) -> usize {
        self.q.len()
    }

    /// m, the number of complementarity rows.
    pub fn n_comp(&self) -> usize {
        self.q.len() - self.n_eq
    }

    /// The blocks (A, B, C, D) as dense copies.
    pub fn blocks(&self) -> (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>, DMatrix<f64>) {
        let full = self.m.to_dense();
        let (n, m) = (self.n_eq, self.n_comp());
        (
            full.view((0, 0), (n, n)).into_owned(),
            full.view((n, n), (m, m)).into_owned(),
            full.view((0, n), (n, m)).into_owned(),
            full.view((n, 0), (m, n)).into_owned(),
        )
    }

    /// Checks shapes and finiteness.
    pub fn validate(&self) -> Result<()> {
        self.m.check_square("M", self.q.len())?;
        check_finite("q", &self.q)?;
        if self.n_eq > self.q.len() {
            return Err(NumericsError::DimensionMismatch {
                what: "number of equalities",
                expected: self.q.len(),
                found: self.n_eq,
            });
        }
        Ok(())
    }

    pub(crate) fn check_vectors(&self, z: &[f64], w: &[f64]) -> Result<()> {
        self.validate()?;
        check_len("z", z, self.size())?;
        check_len("w", w, self.size())?;
        check_finite("z (initial guess)", z)
    }

    /// w ← M z + q (z = (u, v); the first n components of w are the equality residuals).
    pub fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        w.copy_from_slice(&self.q);
        self.m.gemv(1.0, z, 1.0, w);
    }

    /// Error measures `(normalised, absolute)` of z, w (w = M z + q computed):
    /// absolute = ‖r‖₂ with rᵢ = wᵢ for equalities and rᵢ = min(zᵢ, wᵢ) for
    /// complementarities (the natural map); normalised = absolute / (1 + ‖q‖₂).
    pub fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        let abs = mlcp_natural_norm(self.n_eq, z, w);
        (abs / (1.0 + norm2(&self.q)), abs)
    }
}

/// The MLCP natural-map norm.
pub(crate) fn mlcp_natural_norm(n_eq: usize, z: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..z.len() {
        let r = if i < n_eq { w[i] } else { z[i].min(w[i]) };
        s += r * r;
    }
    s.sqrt()
}

/// Builds an MLCP solver by name (see [`MLCP_SOLVERS`]).
pub fn mlcp_solver(name: &str, settings: SolverSettings) -> Result<Box<dyn MlcpSolver>> {
    settings.validate()?;
    Ok(match name {
        "default" => Box::new(DefaultMlcp::new(settings)),
        "lemke" => Box::new(MlcpLemke::new(settings)),
        "newton-fb" => Box::new(MlcpNewtonFb::new(settings)),
        "enum" => Box::new(MlcpEnumeration::new(settings)),
        "pgs" => Box::new(MlcpPgs::new(settings)),
        _ => {
            return Err(NumericsError::UnknownSolver {
                name: name.to_string(),
                family: "MLCP",
                known: MLCP_SOLVERS,
            })
        }
    })
}

impl super::report::Measured for Mlcp {
    fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        Mlcp::compute_w(self, z, w)
    }
    fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        Mlcp::errors(self, z, w)
    }
}
