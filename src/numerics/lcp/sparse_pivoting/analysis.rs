//! The symbolic analysis of one pattern: K's compressed columns, faer's
//! ordering and structure of L, and the permuted pattern and row patterns
//! the numeric factorisation replays (`factor.rs`); the symmetry check.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::Side;

use super::pattern::{entry, stored_entries, PatternKey, NONE};
use super::{NAME, SYMMETRY_TOLERANCE};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::matrix::{Matrix, ProblemMatrix};

/// The matrix K of one pattern — upper triangle, compressed columns with
/// sorted rows — with its symbolic factorisation (faer's: approximate
/// minimum degree ordering, elimination tree, structure of L) and every
/// workspace a numeric factorisation and solve need.
///
/// The numeric factorisation is faer's up-looking simplicial Cholesky,
/// replayed on the fixed structure: the permuted pattern of K and the row
/// patterns of L (each row's elimination-tree reach, in faer's order) are
/// computed once with the analysis, so an iteration does no permutation and
/// no graph traversal. And it is restricted to the active set: an inactive
/// index has an identity row and column in K, so its column of L is the
/// unit vector and every update it would make or receive is by an exact
/// zero; skipping those leaves every other operation, and its order,
/// unchanged — the factor and the solution are the ones faer computes on
/// the whole K, to the last bit, at a cost that follows the active rows.
pub(super) struct Analysis {
    pub(super) key: PatternKey,
    pub(super) n: usize,
    pub(super) col_ptr: Vec<usize>,
    pub(super) row_idx: Vec<usize>,
    /// For stored entry (i, j), i ≤ j: flat indices of M_ij and M_ji
    /// ([`NONE`] where M stores no entry).
    pub(super) src: Vec<[usize; 2]>,
    /// Position of K_jj in `row_idx`.
    pub(super) diag: Vec<usize>,
    /// Fill-reducing ordering: the k-th unknown of the permuted system is
    /// unknown `fwd[k]` of K.
    pub(super) fwd: Vec<usize>,
    /// Permuted K, upper triangle: for permuted column k, its entries
    /// (permuted row, position in `k_values`) in faer's storage order.
    pub(super) a_ptr: Vec<usize>,
    pub(super) a_entries: Vec<(usize, usize)>,
    /// Structure of L (compressed columns, diagonal first, rows ascending).
    pub(super) l_ptr: Vec<usize>,
    pub(super) l_row: Vec<usize>,
    /// Row k of L: its off-diagonal entries (column j, position in
    /// `l_values`) in the order the factorisation visits them.
    pub(super) reach_ptr: Vec<usize>,
    pub(super) reach: Vec<(usize, usize)>,
    pub(super) k_values: Vec<f64>,
    pub(super) l_values: Vec<f64>,
    /// Permuted active set and scratch vectors (zero between uses: `x`).
    pub(super) active_p: Vec<bool>,
    pub(super) x: Vec<f64>,
    pub(super) rhs: Vec<f64>,
}

impl Analysis {
    /// Symbolic analysis of the pattern of `m` (allocates). `None` if the
    /// factoriser cannot do it (out of memory or index range).
    pub(super) fn new(m: &Matrix) -> Option<Self> {
        let n = m.nrows();
        // Upper-triangle entries (column, row) with the sources of M_ij, M_ji.
        let mut entries: Vec<(usize, usize, [usize; 2])> = stored_entries(m)
            .into_iter()
            .map(|(i, j, f)| {
                if i <= j {
                    (j, i, [f, NONE])
                } else {
                    (i, j, [NONE, f])
                }
            })
            .chain((0..n).map(|d| (d, d, [NONE, NONE])))
            .collect();
        entries.sort_unstable_by_key(|&(c, r, _)| (c, r));
        let mut col_ptr = vec![0usize; n + 1];
        let mut row_idx = Vec::with_capacity(entries.len());
        let mut src: Vec<[usize; 2]> = Vec::with_capacity(entries.len());
        let mut diag = vec![0usize; n];
        let mut last = None;
        for (c, r, s) in entries {
            if last == Some((c, r)) {
                if let Some(merged) = src.last_mut() {
                    for (slot, new) in merged.iter_mut().zip(s) {
                        if new != NONE {
                            *slot = new;
                        }
                    }
                }
                continue;
            }
            last = Some((c, r));
            if r == c {
                diag[c] = row_idx.len();
            }
            row_idx.push(r);
            src.push(s);
            col_ptr[c + 1] += 1;
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        for &d in &diag {
            // A diagonal entry has one source, M_jj.
            src[d][1] = src[d][0];
        }
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        };
        let symbolic =
            factorize_symbolic_cholesky(pattern, Side::Upper, SymmetricOrdering::Amd, params)
                .ok()?;
        let SymbolicCholeskyRaw::Simplicial(simplicial) = symbolic.raw() else {
            return None;
        };
        let l_ptr: Vec<usize> = simplicial.col_ptr().to_vec();
        let l_row: Vec<usize> = simplicial.row_idx().to_vec();
        let fwd: Vec<usize> = match symbolic.perm() {
            Some(p) => p.arrays().0.to_vec(),
            None => (0..n).collect(),
        };
        // The permuted upper triangle as faer builds it before factorising,
        // with each entry's position in K as its value.
        let nnz = row_idx.len();
        let positions: Vec<f64> = (0..nnz).map(|k| k as f64).collect();
        let mut a_values = vec![0.0; nnz];
        let mut a_col = vec![0usize; n + 1];
        let mut a_row = vec![0usize; nnz];
        match symbolic.perm() {
            Some(perm) => {
                let mut mem = MemBuffer::try_new(
                    faer::sparse::utils::permute_self_adjoint_scratch::<usize>(n),
                )
                .ok()?;
                faer::sparse::utils::permute_self_adjoint_to_unsorted(
                    &mut a_values,
                    &mut a_col,
                    &mut a_row,
                    SparseColMatRef::new(pattern, &positions),
                    perm,
                    Side::Upper,
                    Side::Upper,
                    MemStack::new(&mut mem),
                );
            }
            None => {
                a_values.copy_from_slice(&positions);
                a_col.copy_from_slice(&col_ptr);
                a_row.copy_from_slice(&row_idx);
            }
        }
        let a_entries: Vec<(usize, usize)> = a_row
            .iter()
            .zip(&a_values)
            .map(|(&r, &v)| (r, v as usize))
            .collect();
        // Elimination tree: the parent of j is the first off-diagonal row of
        // column j of L.
        let parent: Vec<usize> = (0..n)
            .map(|j| {
                if l_ptr[j + 1] > l_ptr[j] + 1 {
                    l_row[l_ptr[j] + 1]
                } else {
                    NONE
                }
            })
            .collect();
        // Row patterns: faer's `ereach`, row by row, and the position each
        // entry takes in its column (columns fill downwards, row by row).
        let mut cursor: Vec<usize> = l_ptr[..n].to_vec();
        let mut visited = vec![NONE; n];
        let mut stack = vec![0usize; n];
        let mut reach_ptr = Vec::with_capacity(n + 1);
        let mut reach = Vec::with_capacity(l_row.len().saturating_sub(n));
        reach_ptr.push(0);
        for k in 0..n {
            let mut top = n;
            visited[k] = k;
            for &i0 in &a_row[a_col[k]..a_col[k + 1]] {
                if i0 >= k {
                    continue;
                }
                let mut len = 0;
                let mut i = i0;
                while visited[i] != k {
                    stack[len] = i;
                    len += 1;
                    visited[i] = k;
                    i = parent[i];
                }
                stack.copy_within(..len, top - len);
                top -= len;
            }
            for &j in &stack[top..] {
                cursor[j] += 1;
                reach.push((j, cursor[j]));
            }
            reach_ptr.push(reach.len());
        }
        Some(Analysis {
            key: PatternKey::of(m),
            n,
            k_values: vec![0.0; nnz],
            l_values: vec![0.0; l_row.len()],
            col_ptr,
            row_idx,
            src,
            diag,
            fwd,
            a_ptr: a_col,
            a_entries,
            l_ptr,
            l_row,
            reach_ptr,
            reach,
            active_p: vec![false; n],
            x: vec![0.0; n],
            rhs: vec![0.0; n],
        })
    }

    /// Refuses an M that is not symmetric (see the module documentation).
    pub(super) fn check_symmetric(&self, vals: &[f64]) -> Result<()> {
        for j in 0..self.n {
            let mjj = entry(vals, self.src[self.diag[j]][0]);
            for k in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[k];
                if i == j {
                    continue;
                }
                let [a, b] = self.src[k].map(|s| entry(vals, s));
                let mii = entry(vals, self.src[self.diag[i]][0]);
                let scale = a.abs().max(b.abs()).max((mii * mjj).abs().sqrt());
                if (a - b).abs() > SYMMETRY_TOLERANCE * scale {
                    return Err(NumericsError::NotApplicable {
                        solver: NAME,
                        reason: format!(
                            "M is not symmetric: M[{i},{j}] = {a} but M[{j},{i}] = {b}"
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}
