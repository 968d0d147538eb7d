//! The Newton Jacobian J = D + E (W + σ I) over the contact blocks of a
//! block-sparse W: factored first by the block LU in the contacts' order
//! ([`super::block_lu`]: no pivoting between blocks, refused on too much
//! fill, a singular pivot block or a poor residual), otherwise assembled
//! and solved by faer's sparse LU. Used instead of the
//! dense LU from [`SPARSE_FROM`] unknowns, and from [`SPARSE_SPARSE_FROM`]
//! unknowns when at most a quarter of W's contact blocks are stored (a
//! chain or a stack of contacts: there the dense LU's n³/3 flops already
//! dominate at a few dozen unknowns). A singular J is regularised as
//! in the dense case (J + δ I, δ growing from 10⁻¹² max|J|).
//!
//! J has the block pattern of W plus the diagonal blocks. The pattern — J's
//! compressed columns, the place of every block entry in them, the
//! fill-reducing ordering and symbolic factorisation — is analysed once per
//! pattern of W and kept while W's pattern stays the same; each Newton
//! iteration then writes J's values in place, factors them into a reused
//! numeric factorisation with a workspace sized once, and solves in place:
//! no allocation once the factors have reached their size.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::PartialPivLuParams;
use faer::sparse::linalg::lu::{factorize_symbolic_lu, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Spec};

use super::block_lu::BlockLu;
use super::FrictionProblem;
use crate::numerics::matrix::Matrix;

/// Smallest number of unknowns for which a block-sparse W is factored sparse.
pub(crate) const SPARSE_FROM: usize = 200;

/// Smallest number of unknowns for which a block-sparse W with at most a
/// quarter of its n_c² contact blocks stored is factored sparse.
pub(crate) const SPARSE_SPARSE_FROM: usize = 24;

/// A d × d block, row-major in the top-left corner.
type Block3 = [[f64; 3]; 3];

/// J's compressed-column pattern for one block pattern of W, with its
/// symbolic LU factorisation and the workspaces of the numeric one.
struct Analysis {
    /// W's block pattern the analysis was made for (`row_ptr`, then
    /// `block_col`), to recognise the next problem's.
    row_ptr: Vec<usize>,
    block_col: Vec<usize>,
    /// Compressed columns of J (rows ascending in each column).
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For W's stored block k (block row i, block column c): the rank of
    /// block row i among the blocks of block column c, so that entry (a, b)
    /// of the block is value `col_ptr[c·d + b] + rank·d + a`.
    rank: Vec<usize>,
    /// For block row i: the rank of its diagonal block in block column i.
    diag_rank: Vec<usize>,
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    values: Vec<f64>,
    /// Positions of J's diagonal entries in `values`.
    diag: Vec<usize>,
    mem: MemBuffer,
}

/// Assembly buffers and the analysis of the current pattern.
#[derive(Debug, Default)]
pub(crate) struct SparseJacobian {
    /// The block LU in the contacts' order, tried first.
    block: BlockLu,
    analysis: Option<Analysis>,
    rhs: Vec<f64>,
}

impl Clone for SparseJacobian {
    /// A fresh work area: the clone redoes the analysis on its first solve.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analysis")
            .field("unknowns", &(self.col_ptr.len() - 1))
            .field("entries", &self.row_idx.len())
            .finish_non_exhaustive()
    }
}

impl SparseJacobian {
    /// Nothing to forget: the analysis is kept while W's pattern stays the
    /// same, and redone when it changes (checked at each solve).
    pub fn reset(&mut self) {}

    /// Whether `p`'s W is block-sparse over its contact blocks and large
    /// enough for the sparse path.
    pub fn applies(p: &FrictionProblem) -> bool {
        let (d, nc) = (p.dim, p.contacts());
        match &p.w {
            Matrix::BlockSparse(b)
                if p.size() >= SPARSE_FROM
                    || (p.size() >= SPARSE_SPARSE_FROM && 4 * b.block_count() <= nc * nc) =>
            {
                let parts = b.parts();
                let ok = |off: &[usize]| {
                    off.len() == nc + 1 && off.iter().enumerate().all(|(k, &o)| o == k * d)
                };
                ok(parts.row_offsets) && ok(parts.col_offsets)
            }
            _ => false,
        }
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
        if self.block.analyse(p) && self.block.solve(p, dm, em, shift, b) {
            return true;
        }
        let (d, n, nc) = (p.dim, p.size(), p.contacts());
        let parts = w.parts();
        let same = self.analysis.as_ref().is_some_and(|a| {
            a.row_ptr == parts.row_ptr && a.block_col == parts.block_col && a.diag_rank.len() == nc
        });
        if !same {
            self.analysis = Analysis::new(parts.row_ptr, parts.block_col, nc, d);
        }
        let Some(an) = self.analysis.as_mut() else {
            return false;
        };
        // J = D + E (W + σ I), block by block.
        an.values.iter_mut().for_each(|v| *v = 0.0);
        let at =
            |c: usize, rank: usize, a: usize, bcol: usize| an.col_ptr[c * d + bcol] + rank * d + a;
        for i in 0..nc {
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
                        let pos = at(c, an.rank[k], a, bcol);
                        an.values[pos] += v;
                    }
                }
                has_diag |= c == i;
            }
            if !has_diag {
                for a in 0..d {
                    for bcol in 0..d {
                        let pos = at(i, an.diag_rank[i], a, bcol);
                        an.values[pos] += dd[a][bcol] + shift * e[a][bcol];
                    }
                }
            }
        }
        let scale = an.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        self.rhs.resize(n, 0.0);
        let mut delta = 0.0;
        loop {
            if an.factor_and_solve(b, &mut self.rhs) {
                break;
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
            for &k in &an.diag {
                an.values[k] += step;
            }
        }
        b.copy_from_slice(&self.rhs);
        true
    }
}

impl Analysis {
    /// The pattern of J for W's block pattern (`row_ptr`, `block_col`) over
    /// `nc` contacts of dimension `d`, and its symbolic factorisation;
    /// `None` when faer cannot analyse it.
    fn new(row_ptr: &[usize], block_col: &[usize], nc: usize, d: usize) -> Option<Analysis> {
        // Blocks of each block column: (block row, W's block index or none
        // for an added diagonal block), block rows ascending.
        let mut by_col: Vec<Vec<(usize, Option<usize>)>> = vec![Vec::new(); nc];
        for i in 0..nc {
            let mut has_diag = false;
            for (k, &c) in block_col
                .iter()
                .enumerate()
                .take(row_ptr[i + 1])
                .skip(row_ptr[i])
            {
                by_col[c].push((i, Some(k)));
                has_diag |= c == i;
            }
            if !has_diag {
                by_col[i].push((i, None));
            }
        }
        let mut rank = vec![0; block_col.len()];
        let mut diag_rank = vec![0; nc];
        let mut col_ptr = Vec::with_capacity(nc * d + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for (c, blocks) in by_col.iter_mut().enumerate() {
            blocks.sort_by_key(|&(i, _)| i);
            // Repeated blocks (i, c) share their entries: the values add.
            let mut rows: Vec<usize> = blocks.iter().map(|&(i, _)| i).collect();
            rows.dedup();
            for &(i, k) in blocks.iter() {
                let r = rows.partition_point(|&x| x < i);
                match k {
                    Some(k) => rank[k] = r,
                    None => diag_rank[i] = r,
                }
                if i == c {
                    diag_rank[i] = r;
                }
            }
            for _ in 0..d {
                for &i in &rows {
                    row_idx.extend((0..d).map(|a| i * d + a));
                }
                col_ptr.push(row_idx.len());
            }
        }
        let n = nc * d;
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_lu(pattern, Default::default()).ok()?;
        let params: Spec<PartialPivLuParams, f64> = Default::default();
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, params),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        let mem = MemBuffer::try_new(req).ok()?;
        let diag = (0..n)
            .map(|j| {
                let (c, bcol) = (j / d, j % d);
                col_ptr[j] + diag_rank[c] * d + bcol
            })
            .collect();
        Some(Analysis {
            row_ptr: row_ptr.to_vec(),
            block_col: block_col.to_vec(),
            values: vec![0.0; row_idx.len()],
            col_ptr,
            row_idx,
            rank,
            diag_rank,
            symbolic,
            numeric: NumericLu::new(),
            diag,
            mem,
        })
    }

    /// Factors J (its current values) and solves J x = b into `x`; false
    /// when the factorisation fails or x is not finite.
    fn factor_and_solve(&mut self, b: &[f64], x: &mut [f64]) -> bool {
        let n = b.len();
        let pattern =
            SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let stack = MemStack::new(&mut self.mem);
        let Ok(lu) = self.symbolic.factorize_numeric_lu(
            &mut self.numeric,
            SparseColMatRef::new(pattern, &self.values),
            Par::Seq,
            stack,
            Default::default(),
        ) else {
            return false;
        };
        x.copy_from_slice(b);
        let rhs = MatMut::from_column_major_slice_mut(x, n, 1);
        lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(&mut self.mem));
        x.iter().all(|v| v.is_finite())
    }
}
