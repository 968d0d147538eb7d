//! The Newton Jacobian J = D + E (W + σ I) assembled over the contact blocks
//! of a block-sparse W and solved by faer's sparse LU (the symbolic
//! factorisation is computed once per problem, the numeric one per step).
//! Used instead of the dense LU beyond [`SPARSE_FROM`] unknowns. A singular J
//! is regularised as in the dense case (J + δ I, δ growing from 10⁻¹² max|J|).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
use faer::sparse::{SparseColMat, Triplet};

use super::FrictionProblem;
use crate::numerics::matrix::Matrix;

/// Smallest number of unknowns for which a block-sparse W is factored sparse.
pub(crate) const SPARSE_FROM: usize = 200;

/// A d × d block, row-major in the top-left corner.
type Block3 = [[f64; 3]; 3];

/// Assembly buffers and the cached symbolic factorisation.
#[derive(Debug, Clone, Default)]
pub(crate) struct SparseJacobian {
    triplets: Vec<Triplet<usize, usize, f64>>,
    symbolic: Option<SymbolicLu<usize>>,
    rhs: Vec<f64>,
}

impl SparseJacobian {
    /// Forgets the symbolic factorisation (a new problem).
    pub fn reset(&mut self) {
        self.symbolic = None;
    }

    /// Whether `p`'s W is block-sparse over its contact blocks and large
    /// enough for the sparse path.
    pub fn applies(p: &FrictionProblem) -> bool {
        let (d, nc) = (p.dim, p.contacts());
        match &p.w {
            Matrix::BlockSparse(b) if p.size() >= SPARSE_FROM => {
                let parts = b.parts();
                let ok = |off: &[usize]| {
                    off.len() == nc + 1 && off.iter().enumerate().all(|(k, &o)| o == k * d)
                };
                ok(parts.row_offsets) && ok(parts.col_offsets)
            }
            _ => false,
        }
    }

    /// The LU factorisation of the assembled triplets.
    fn factor(&mut self, n: usize) -> Option<Lu<usize, f64>> {
        let mat = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &self.triplets).ok()?;
        if self.symbolic.is_none() {
            self.symbolic = SymbolicLu::try_new(mat.symbolic()).ok();
        }
        let sym = self.symbolic.clone()?;
        Lu::try_new_with_symbolic(sym, mat.as_ref()).ok()
    }

    /// Solves J x = b in place (`b` receives x); false when the
    /// factorisation fails (singular J).
    pub fn solve(
        &mut self,
        p: &FrictionProblem,
        dm: &[Block3],
        em: &[Block3],
        shift: f64,
        b: &mut [f64],
    ) -> bool {
        let Matrix::BlockSparse(w) = &p.w else {
            return false;
        };
        let (d, n) = (p.dim, p.size());
        let parts = w.parts();
        self.triplets.clear();
        for i in 0..p.contacts() {
            let (e, dd) = (&em[i], &dm[i]);
            let mut has_diag = false;
            for k in parts.row_ptr[i]..parts.row_ptr[i + 1] {
                let c = parts.block_col[k];
                let vals = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                for a in 0..d {
                    for bcol in 0..d {
                        let mut v: f64 = (0..d).map(|kk| e[a][kk] * vals[bcol * d + kk]).sum();
                        if c == i {
                            v += dd[a][bcol] + shift * e[a][bcol];
                        }
                        self.triplets.push(Triplet::new(i * d + a, c * d + bcol, v));
                    }
                }
                has_diag |= c == i;
            }
            if !has_diag {
                for a in 0..d {
                    for bcol in 0..d {
                        let v = dd[a][bcol] + shift * e[a][bcol];
                        self.triplets.push(Triplet::new(i * d + a, i * d + bcol, v));
                    }
                }
            }
        }
        let scale = self.triplets.iter().fold(0.0f64, |m, t| m.max(t.val.abs()));
        let mut delta = 0.0;
        loop {
            if let Some(lu) = self.factor(n) {
                self.rhs.clear();
                self.rhs.extend_from_slice(b);
                let mut x = faer::MatMut::from_column_major_slice_mut(&mut self.rhs, n, 1);
                lu.solve_in_place(&mut x);
                if self.rhs.iter().all(|v| v.is_finite()) {
                    break;
                }
            }
            // Singular J (rank-deficient W): J + δ I, δ = 10⁻¹² max|J| then ×100.
            let step = if delta == 0.0 {
                1e-12 * scale
            } else {
                delta * 99.0
            };
            delta += step;
            if delta.is_nan() || delta <= 0.0 || delta > 1e-2 * scale {
                return false;
            }
            for t in self.triplets.iter_mut().filter(|t| t.row == t.col) {
                t.val += step;
            }
        }
        b.copy_from_slice(&self.rhs);
        true
    }
}
