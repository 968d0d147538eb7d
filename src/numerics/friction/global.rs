//! The global frictional contact problem and its reduction to the local one.
//!
//! M v = H r + f,  u = Hᵀ v + w,  K*_μ ∋ û ⊥ r ∈ K_μ (Siconos calls f `q`
//! and w `b`). With M invertible, v = M⁻¹ (H r + f) and
//! u = W r + q with W = Hᵀ M⁻¹ H and q = Hᵀ M⁻¹ f + w: the local problem.
//! M is factored densely (Cholesky when symmetric positive definite, LU
//! otherwise; block by block when M is block-sparse with diagonal blocks
//! only, as for rigid bodies).

use nalgebra::DMatrix;

use super::{FrictionErrors, FrictionProblem, FrictionSolver};
use crate::numerics::error::{check_finite, check_len, NumericsError, Result};
use crate::numerics::matrix::{BlockSparseMatrix, Matrix, ProblemMatrix};
use crate::numerics::report::SolveReport;
use crate::numerics::residual::norm2;

/// A global frictional contact problem (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalFrictionProblem {
    /// Dimension of a contact: 2 or 3.
    pub dim: usize,
    /// The n × n matrix M.
    pub m: Matrix,
    /// The n × (d·nc) matrix H.
    pub h: Matrix,
    /// f, length n (Siconos' q).
    pub f: Vec<f64>,
    /// w, length d·nc (Siconos' b).
    pub w: Vec<f64>,
    /// Friction coefficients, one per contact.
    pub mu: Vec<f64>,
}

/// A solution of a global problem.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalSolution {
    /// Velocities v = M⁻¹ (H r + f).
    pub v: Vec<f64>,
    /// Contact impulses.
    pub r: Vec<f64>,
    /// Contact velocities u = Hᵀ v + w.
    pub u: Vec<f64>,
    /// The solve's report (on the reduced problem).
    pub report: SolveReport,
    /// Error measures of (r, u = Hᵀ v + w) on the global problem's data,
    /// normalised with q = Hᵀ M⁻¹ f + w.
    pub errors: FrictionErrors,
    /// ‖M v − H r − f‖₂ (zero up to rounding).
    pub momentum_residual: f64,
}

type DenseLu = nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>;

enum Factor {
    Cholesky(nalgebra::Cholesky<f64, nalgebra::Dyn>),
    Lu(DenseLu),
    /// A block-diagonal M (rigid bodies): (first row, LU) of each block.
    BlockDiagonal(Vec<(usize, DenseLu)>),
}

impl Factor {
    fn solve_in_place(&self, b: &mut DMatrix<f64>) -> bool {
        match self {
            Factor::Cholesky(c) => {
                c.solve_mut(b);
                true
            }
            Factor::Lu(l) => l.solve_mut(b),
            Factor::BlockDiagonal(blocks) => blocks.iter().all(|(r0, lu)| {
                let k = lu.l().nrows();
                let mut part = b.rows(*r0, k).clone_owned();
                let ok = lu.solve_mut(&mut part);
                b.rows_mut(*r0, k).copy_from(&part);
                ok
            }),
        }
    }
}

/// The diagonal blocks of a block-sparse M whose stored blocks all lie on
/// the diagonal (square): (first row, dense block).
fn diagonal_blocks(m: &Matrix) -> Option<Vec<(usize, DMatrix<f64>)>> {
    let Matrix::BlockSparse(b) = m else {
        return None;
    };
    let (rs, cs) = (b.row_sizes(), b.col_sizes());
    if rs != cs {
        return None;
    }
    let mut offsets = Vec::with_capacity(rs.len());
    let mut acc = 0;
    for s in &rs {
        offsets.push(acc);
        acc += s;
    }
    let mut out: Vec<(usize, DMatrix<f64>)> = rs
        .iter()
        .zip(&offsets)
        .map(|(&s, &o)| (o, DMatrix::zeros(s, s)))
        .collect();
    for (r, c, values) in b.blocks() {
        if r != c {
            return None;
        }
        let k = rs[r];
        out[r]
            .1
            .copy_from(&DMatrix::from_column_slice(k, k, values));
    }
    Some(out)
}

/// Hᵀ Y, over the non-zeros of H when H is sparse (a contact touches a few
/// bodies), densely otherwise.
fn transpose_product(h: &DMatrix<f64>, y: &DMatrix<f64>) -> DMatrix<f64> {
    let nnz = h.iter().filter(|v| **v != 0.0).count();
    if nnz * 10 > h.len() {
        return h.transpose() * y;
    }
    let (n, m) = h.shape();
    let mut w = DMatrix::zeros(m, y.ncols());
    for i in 0..m {
        let col = h.column(i);
        let nz: Vec<(usize, f64)> = (0..n)
            .filter(|&k| col[k] != 0.0)
            .map(|k| (k, col[k]))
            .collect();
        for j in 0..y.ncols() {
            let yc = y.column(j);
            w[(i, j)] = nz.iter().map(|&(k, v)| v * yc[k]).sum();
        }
    }
    w
}

impl GlobalFrictionProblem {
    /// Builds and validates a problem.
    pub fn new(
        dim: usize,
        m: impl Into<Matrix>,
        h: impl Into<Matrix>,
        f: Vec<f64>,
        w: Vec<f64>,
        mu: Vec<f64>,
    ) -> Result<Self> {
        let p = GlobalFrictionProblem {
            dim,
            m: m.into(),
            h: h.into(),
            f,
            w,
            mu,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the sizes, finiteness, d ∈ {2, 3} and μ ≥ 0.
    pub fn validate(&self) -> Result<()> {
        if self.dim != 2 && self.dim != 3 {
            return Err(NumericsError::InvalidSetting {
                name: "dim",
                reason: format!("a contact has dimension 2 or 3, got {}", self.dim),
            });
        }
        let n = self.f.len();
        let m = self.dim * self.mu.len();
        self.m.check_square("M", n)?;
        check_len("w", &self.w, m)?;
        if self.h.nrows() != n || self.h.ncols() != m {
            return Err(NumericsError::DimensionMismatch {
                what: "H (rows x columns)",
                expected: n * m,
                found: self.h.nrows() * self.h.ncols(),
            });
        }
        if let Some((index, value)) = self.h.first_non_finite() {
            return Err(NumericsError::NonFinite {
                what: "H",
                index,
                value,
            });
        }
        check_finite("f", &self.f)?;
        check_finite("w", &self.w)?;
        check_finite("mu", &self.mu)?;
        if let Some(i) = self.mu.iter().position(|m| *m < 0.0) {
            return Err(NumericsError::InvalidSetting {
                name: "mu",
                reason: format!(
                    "friction coefficient {} of contact {i} is negative",
                    self.mu[i]
                ),
            });
        }
        Ok(())
    }

    fn factor(&self) -> Result<Factor> {
        if let Some(blocks) = diagonal_blocks(&self.m) {
            let mut out = Vec::with_capacity(blocks.len());
            for (r0, blk) in blocks {
                let lu = blk.lu();
                if !lu.is_invertible() {
                    return Err(NumericsError::NotApplicable {
                        solver: "global reduction",
                        reason: format!("M is singular (diagonal block at row {r0})"),
                    });
                }
                out.push((r0, lu));
            }
            return Ok(Factor::BlockDiagonal(out));
        }
        let md = self.m.to_dense();
        let symmetric = (0..md.nrows()).all(|i| (0..i).all(|j| md[(i, j)] == md[(j, i)]));
        if symmetric {
            if let Some(c) = md.clone().cholesky() {
                return Ok(Factor::Cholesky(c));
            }
        }
        let lu = md.lu();
        if !lu.is_invertible() {
            return Err(NumericsError::NotApplicable {
                solver: "global reduction",
                reason: "M is singular".into(),
            });
        }
        Ok(Factor::Lu(lu))
    }

    /// The reduced local problem: W = Hᵀ M⁻¹ H (block-sparse over the
    /// contacts' d × d blocks), q = Hᵀ M⁻¹ f + w.
    pub fn reduce(&self) -> Result<FrictionProblem> {
        self.validate()?;
        let fac = self.factor()?;
        let h = self.h.to_dense();
        let mut minv_h = h.clone();
        let mut minv_f = DMatrix::from_column_slice(self.f.len(), 1, &self.f);
        if !(fac.solve_in_place(&mut minv_h) && fac.solve_in_place(&mut minv_f)) {
            return Err(NumericsError::NotApplicable {
                solver: "global reduction",
                reason: "M is singular".into(),
            });
        }
        let w = transpose_product(&h, &minv_h);
        let qv = h.transpose() * &minv_f;
        let q: Vec<f64> = qv.iter().zip(&self.w).map(|(a, b)| a + b).collect();
        let sizes = vec![self.dim; self.mu.len()];
        let wm = BlockSparseMatrix::from_dense(&w, &sizes, &sizes)?;
        FrictionProblem::new(self.dim, wm, q, self.mu.clone())
    }

    /// v = M⁻¹ (H r + f).
    pub fn velocity(&self, r: &[f64]) -> Result<Vec<f64>> {
        check_len("r", r, self.w.len())?;
        let fac = self.factor()?;
        let mut rhs = self.f.clone();
        self.h.gemv(1.0, r, 1.0, &mut rhs);
        let mut b = DMatrix::from_column_slice(rhs.len(), 1, &rhs);
        if !fac.solve_in_place(&mut b) {
            return Err(NumericsError::NotApplicable {
                solver: "global reduction",
                reason: "M is singular".into(),
            });
        }
        Ok(b.as_slice().to_vec())
    }

    /// Solves by reduction to the local problem with `solver`, from r = `r0`
    /// (zero when `None`), and recovers v.
    pub fn solve_reduced(
        &self,
        solver: &mut dyn FrictionSolver,
        r0: Option<&[f64]>,
    ) -> Result<GlobalSolution> {
        let local = self.reduce()?;
        let mut r = match r0 {
            Some(r0) => {
                check_len("r (initial guess)", r0, local.size())?;
                r0.to_vec()
            }
            None => vec![0.0; local.size()],
        };
        let mut u = vec![0.0; local.size()];
        let report = solver.solve(&local, &mut r, &mut u)?;
        let v = self.velocity(&r)?;
        // u = Hᵀ v + w, recomputed from v.
        let h = self.h.to_dense();
        let mut ug = self.w.clone();
        for (j, uj) in ug.iter_mut().enumerate() {
            *uj += h.column(j).iter().zip(&v).map(|(a, b)| a * b).sum::<f64>();
        }
        let errors = local.errors(&r, &ug);
        let mut res = vec![0.0; v.len()];
        self.m.gemv(1.0, &v, 0.0, &mut res);
        self.h.gemv(-1.0, &r, 1.0, &mut res);
        for (a, b) in res.iter_mut().zip(&self.f) {
            *a -= b;
        }
        Ok(GlobalSolution {
            v,
            r,
            u: ug,
            report,
            errors,
            momentum_residual: norm2(&res),
        })
    }
}
