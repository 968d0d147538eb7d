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

use std::fmt;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::Side;

use super::{Lcp, LcpSolver};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::report::Stopwatch;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

const NAME: &str = "sparse";

/// Block pivots allowed without a new least number of infeasibilities before
/// single pivots take over (Júdice–Pires' p̄).
const BLOCK_PIVOTS: usize = 3;

/// Largest accepted asymmetry, relative to max(|M_ij|, |M_ji|, √|M_ii M_jj|).
const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// Smallest accepted ratio of a Cholesky pivot L_kk² to its diagonal entry
/// K_kk: below it, M_AA is taken as singular.
const PIVOT_RATIO: f64 = 1e-12;

/// No stored entry.
const NONE: usize = usize::MAX;

/// Sparse block principal pivoting (see the module documentation).
pub struct SparsePivoting {
    settings: SolverSettings,
    /// Whether solves read the clock (see [`Stopwatch`]).
    timed: bool,
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
            timed: true,
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

/// The flat value array of M that [`Analysis::src`] indexes.
fn values(m: &Matrix) -> &[f64] {
    match m {
        Matrix::Dense(d) => d.as_slice(),
        Matrix::BlockSparse(b) => b.parts().values,
    }
}

fn entry(vals: &[f64], s: usize) -> f64 {
    if s == NONE {
        0.0
    } else {
        vals[s]
    }
}

/// What defines a pattern: the storage arrays (block-sparse) or the set of
/// non-zero entries (dense).
#[derive(Debug, PartialEq)]
enum PatternKey {
    Dense {
        n: usize,
        nonzero: Vec<bool>,
    },
    Block {
        row_offsets: Vec<usize>,
        col_offsets: Vec<usize>,
        row_ptr: Vec<usize>,
        block_col: Vec<usize>,
    },
}

impl PatternKey {
    fn of(m: &Matrix) -> Self {
        match m {
            Matrix::Dense(d) => PatternKey::Dense {
                n: d.nrows(),
                nonzero: d.as_slice().iter().map(|v| *v != 0.0).collect(),
            },
            Matrix::BlockSparse(b) => {
                let p = b.parts();
                PatternKey::Block {
                    row_offsets: p.row_offsets.to_vec(),
                    col_offsets: p.col_offsets.to_vec(),
                    row_ptr: p.row_ptr.to_vec(),
                    block_col: p.block_col.to_vec(),
                }
            }
        }
    }

    /// True when `m` has this pattern; O(n²) for dense M, O(blocks) for
    /// block-sparse M, and no allocation.
    fn matches(&self, m: &Matrix) -> bool {
        match (self, m) {
            (PatternKey::Dense { n, nonzero }, Matrix::Dense(d)) => {
                *n == d.nrows()
                    && nonzero.len() == d.len()
                    && nonzero
                        .iter()
                        .zip(d.as_slice())
                        .all(|(nz, v)| *nz == (*v != 0.0))
            }
            (
                PatternKey::Block {
                    row_offsets,
                    col_offsets,
                    row_ptr,
                    block_col,
                },
                Matrix::BlockSparse(b),
            ) => {
                let p = b.parts();
                row_offsets[..] == *p.row_offsets
                    && col_offsets[..] == *p.col_offsets
                    && row_ptr[..] == *p.row_ptr
                    && block_col[..] == *p.block_col
            }
            _ => false,
        }
    }
}

/// Every stored scalar entry of M as (row, column, flat index in
/// [`values`]); the diagonal of a dense M is always included.
fn stored_entries(m: &Matrix) -> Vec<(usize, usize, usize)> {
    match m {
        Matrix::Dense(d) => {
            let n = d.nrows();
            let mut out = Vec::new();
            for j in 0..d.ncols() {
                for i in 0..n {
                    let f = j * n + i;
                    if i == j || d.as_slice()[f] != 0.0 {
                        out.push((i, j, f));
                    }
                }
            }
            out
        }
        Matrix::BlockSparse(b) => {
            let p = b.parts();
            let mut out = Vec::with_capacity(p.values.len());
            for r in 0..p.row_ptr.len().saturating_sub(1) {
                let (r0, nr) = (p.row_offsets[r], p.row_offsets[r + 1] - p.row_offsets[r]);
                for k in p.row_ptr[r]..p.row_ptr[r + 1] {
                    let c = p.block_col[k];
                    let (c0, nc) = (p.col_offsets[c], p.col_offsets[c + 1] - p.col_offsets[c]);
                    for b in 0..nc {
                        for a in 0..nr {
                            out.push((r0 + a, c0 + b, p.value_ptr[k] + b * nr + a));
                        }
                    }
                }
            }
            out
        }
    }
}

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
struct Analysis {
    key: PatternKey,
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// For stored entry (i, j), i ≤ j: flat indices of M_ij and M_ji
    /// ([`NONE`] where M stores no entry).
    src: Vec<[usize; 2]>,
    /// Position of K_jj in `row_idx`.
    diag: Vec<usize>,
    /// Fill-reducing ordering: the k-th unknown of the permuted system is
    /// unknown `fwd[k]` of K.
    fwd: Vec<usize>,
    /// Permuted K, upper triangle: for permuted column k, its entries
    /// (permuted row, position in `k_values`) in faer's storage order.
    a_ptr: Vec<usize>,
    a_entries: Vec<(usize, usize)>,
    /// Structure of L (compressed columns, diagonal first, rows ascending).
    l_ptr: Vec<usize>,
    l_row: Vec<usize>,
    /// Row k of L: its off-diagonal entries (column j, position in
    /// `l_values`) in the order the factorisation visits them.
    reach_ptr: Vec<usize>,
    reach: Vec<(usize, usize)>,
    k_values: Vec<f64>,
    l_values: Vec<f64>,
    /// Permuted active set and scratch vectors (zero between uses: `x`).
    active_p: Vec<bool>,
    x: Vec<f64>,
    rhs: Vec<f64>,
}

impl Analysis {
    /// Symbolic analysis of the pattern of `m` (allocates). `None` if the
    /// factoriser cannot do it (out of memory or index range).
    fn new(m: &Matrix) -> Option<Self> {
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
    fn check_symmetric(&self, vals: &[f64]) -> Result<()> {
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

    /// Solves M_AA x_A = −q_A with x_I = 0 (A = `active`) into `x`. False
    /// when M_AA is not numerically positive definite or x is not finite.
    fn solve_active(&mut self, vals: &[f64], q: &[f64], active: &[bool], x: &mut [f64]) -> bool {
        // K's entries between active indices (the others are not read).
        for j in 0..self.n {
            if !active[j] {
                continue;
            }
            for k in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[k];
                let [a, b] = self.src[k];
                if i == j {
                    self.k_values[k] = entry(vals, a);
                } else if active[i] {
                    self.k_values[k] = 0.5 * (entry(vals, a) + entry(vals, b));
                }
            }
        }
        for (ap, &f) in self.active_p.iter_mut().zip(&self.fwd) {
            *ap = active[f];
        }
        if !self.factorize() {
            return false;
        }
        for k in 0..self.n {
            let var = self.fwd[k];
            if self.active_p[k] {
                let l = self.l_values[self.l_ptr[k]];
                if l * l <= PIVOT_RATIO * self.k_values[self.diag[var]] {
                    return false;
                }
            }
        }
        // rhs = P b with b_A = −q_A, b_I = 0; then L Lᵀ y = rhs; x = Pᵀ y.
        for (r, &f) in self.rhs.iter_mut().zip(&self.fwd) {
            *r = if active[f] { -q[f] } else { 0.0 };
        }
        self.solve_factored();
        for (&f, &y) in self.fwd.iter().zip(&self.rhs) {
            x[f] = if active[f] { y } else { 0.0 };
        }
        x.iter().all(|v| v.is_finite())
    }

    /// K = L Lᵀ over the active set (see [`Analysis`]): faer's up-looking
    /// factorisation — for each row k, scatter K's column k, then for each
    /// j of its reach l_kj = x_j / l_jj, x_i −= l_ij l_kj below it,
    /// d −= l_kj², and l_kk = √d. False when a pivot d is not positive.
    fn factorize(&mut self) -> bool {
        let Analysis {
            a_ptr,
            a_entries,
            l_ptr,
            l_row,
            reach_ptr,
            reach,
            k_values,
            l_values,
            active_p: act,
            x,
            ..
        } = self;
        for k in 0..act.len() {
            let k_start = l_ptr[k];
            if !act[k] {
                l_values[k_start] = 1.0;
                continue;
            }
            for &(i, s) in &a_entries[a_ptr[k]..a_ptr[k + 1]] {
                if act[i] {
                    x[i] += k_values[s];
                }
            }
            let mut d = x[k];
            x[k] = 0.0;
            for &(j, pos) in &reach[reach_ptr[k]..reach_ptr[k + 1]] {
                if !act[j] {
                    continue;
                }
                let j_start = l_ptr[j];
                let xj = x[j];
                x[j] = 0.0;
                let lkj = xj * l_values[j_start].recip();
                for t in j_start + 1..pos {
                    let i = l_row[t];
                    if act[i] {
                        x[i] -= l_values[t] * lkj;
                    }
                }
                d -= lkj * lkj;
                l_values[pos] = lkj;
            }
            // Not positive (NaN included): faer's breakdown test.
            let positive = d > 0.0;
            if !positive {
                // Leave the scratch vector clean for the next factorisation.
                x.iter_mut().for_each(|v| *v = 0.0);
                return false;
            }
            l_values[k_start] = d.sqrt();
        }
        true
    }

    /// rhs ← (L Lᵀ)⁻¹ rhs over the active set: faer's column-oriented
    /// forward substitution and dot-product backward substitution, with the
    /// inactive unknowns (zero) left out.
    fn solve_factored(&mut self) {
        let Analysis {
            l_ptr,
            l_row,
            l_values,
            active_p: act,
            rhs: y,
            ..
        } = self;
        let n = act.len();
        for j in 0..n {
            if !act[j] {
                continue;
            }
            let (start, end) = (l_ptr[j], l_ptr[j + 1]);
            let yj = y[j] * l_values[start].recip();
            y[j] = yj;
            for t in start + 1..end {
                let i = l_row[t];
                if act[i] {
                    y[i] -= l_values[t] * yj;
                }
            }
        }
        for j in (0..n).rev() {
            if !act[j] {
                continue;
            }
            let (start, end) = (l_ptr[j], l_ptr[j + 1]);
            let mut acc = 0.0;
            for t in (start + 1..end).rev() {
                let i = l_row[t];
                if act[i] {
                    acc += l_values[t] * y[i];
                }
            }
            y[j] = (y[j] - acc) * l_values[start].recip();
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

    fn set_timed(&mut self, timed: bool) {
        self.timed = timed;
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        let start = Stopwatch::start(self.timed);
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
            return Ok(finish(
                problem,
                z,
                w,
                stop(0, SolveStatus::Solved),
                tol,
                start,
            ));
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
                return Ok(finish(problem, z, w, s, tol, start));
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
        Ok(finish(
            problem,
            z,
            w,
            stop(iterations, otherwise),
            tol,
            start,
        ))
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;
    use crate::numerics::lcp::Enumeration;
    use crate::numerics::matrix::{Block, BlockSparseMatrix};

    fn solver() -> SparsePivoting {
        SparsePivoting::new(SolverSettings::default())
    }

    /// The n × n tridiagonal matrix (2, −1) in 1 × 1 blocks.
    fn chain(n: usize) -> BlockSparseMatrix {
        let mut blocks = Vec::new();
        for i in 0..n {
            blocks.push(Block {
                row: i,
                col: i,
                values: vec![2.0],
            });
            if i + 1 < n {
                for (r, c) in [(i, i + 1), (i + 1, i)] {
                    blocks.push(Block {
                        row: r,
                        col: c,
                        values: vec![-1.0],
                    });
                }
            }
        }
        BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap()
    }

    /// q = w* − M z* for the complementary pair z*, w* given by `active`.
    fn planted(m: &Matrix, active: &[bool]) -> (Vec<f64>, Vec<f64>) {
        let n = active.len();
        let zs: Vec<f64> = (0..n)
            .map(|i| if active[i] { 1.0 + (i % 3) as f64 } else { 0.0 })
            .collect();
        let mut q: Vec<f64> = (0..n)
            .map(|i| if active[i] { 0.0 } else { 0.5 + (i % 2) as f64 })
            .collect();
        m.gemv(-1.0, &zs, 1.0, &mut q);
        (zs, q)
    }

    fn run(s: &mut SparsePivoting, lcp: &Lcp, z: &mut [f64]) -> SolveReport {
        let mut w = vec![0.0; lcp.size()];
        s.solve(lcp, z, &mut w).unwrap()
    }

    #[test]
    fn planted_solution_is_found_for_dense_and_block_sparse_storage() {
        let n = 12;
        let active: Vec<bool> = (0..n).map(|i| i % 3 != 1).collect();
        let sparse = Matrix::BlockSparse(chain(n));
        let dense = Matrix::Dense(sparse.to_dense());
        for m in [sparse, dense] {
            let (zs, q) = planted(&m, &active);
            let lcp = Lcp::new(m, q).unwrap();
            let mut z = vec![0.0; n];
            let r = run(&mut solver(), &lcp, &mut z);
            assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
            assert_eq!(r.solver, "sparse");
            for i in 0..n {
                assert!((z[i] - zs[i]).abs() <= 1e-12 * (1.0 + zs[i]), "z[{i}]");
            }
        }
    }

    /// The active-set factorisation and solve give, to the last bit, what
    /// faer's numeric Cholesky and solve give on the whole K (identity rows
    /// for the inactive indices), for an irregular pattern (a grid with
    /// extra couplings, so the ordering permutes and L fills) and many
    /// active sets.
    #[test]
    fn active_factorisation_equals_faer_on_the_whole_matrix_to_the_bit() {
        use faer::dyn_stack::StackReq;
        use faer::linalg::cholesky::llt::factor::LltRegularization;
        use faer::{Conj, MatMut, Par};

        let side = 7;
        let n = side * side;
        let mut dense = DMatrix::<f64>::zeros(n, n);
        for i in 0..n {
            dense[(i, i)] = 7.5 + (i % 5) as f64 * 0.1;
            for j in [i + 1, i + side, i + 2 * side + 1] {
                if j < n && (j != i + 1 || (i + 1) % side != 0) {
                    let v = -1.0 + (i * 7 + j) as f64 % 3.0 * 0.05;
                    dense[(i, j)] = v;
                    dense[(j, i)] = v;
                }
            }
        }
        let m = Matrix::Dense(dense);
        let vals = values(&m).to_vec();
        let q: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64 - 5.0) / 3.0).collect();
        let mut a = Analysis::new(&m).expect("analysis");
        assert!(
            a.fwd.iter().enumerate().any(|(k, &f)| k != f),
            "a real ordering"
        );
        assert!(a.l_row.len() > a.row_idx.len(), "fill-in");
        for seed in 0..12usize {
            let active: Vec<bool> = (0..n)
                .map(|i| seed == 0 || (i * 31 + seed * 17) % 5 < 3)
                .collect();
            let mut x = vec![0.0; n];
            assert!(a.solve_active(&vals, &q, &active, &mut x), "seed {seed}");
            // Reference: faer on the whole K.
            let pattern = SymbolicSparseColMatRef::new_checked(n, n, &a.col_ptr, None, &a.row_idx);
            let symbolic = factorize_symbolic_cholesky(
                pattern,
                Side::Upper,
                SymmetricOrdering::Amd,
                CholeskySymbolicParams {
                    supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                    ..Default::default()
                },
            )
            .unwrap();
            let kv: Vec<f64> = (0..a.row_idx.len())
                .map(|k| {
                    let j = (0..n).find(|&c| a.col_ptr[c + 1] > k).unwrap();
                    let i = a.row_idx[k];
                    let [s0, s1] = a.src[k];
                    if i == j {
                        if active[j] {
                            entry(&vals, s0)
                        } else {
                            1.0
                        }
                    } else if active[i] && active[j] {
                        0.5 * (entry(&vals, s0) + entry(&vals, s1))
                    } else {
                        0.0
                    }
                })
                .collect();
            let mut l = vec![0.0; symbolic.len_val()];
            let mut mem = MemBuffer::new(StackReq::any_of(&[
                symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
                symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
            ]));
            let llt = symbolic
                .factorize_numeric_llt::<f64>(
                    &mut l,
                    SparseColMatRef::new(pattern, &kv),
                    Side::Upper,
                    LltRegularization::default(),
                    Par::Seq,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .unwrap();
            let mut y: Vec<f64> = (0..n)
                .map(|i| if active[i] { -q[i] } else { 0.0 })
                .collect();
            llt.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(&mut y, n, 1),
                Par::Seq,
                MemStack::new(&mut mem),
            );
            for i in 0..n {
                let expected = if active[i] { y[i] } else { 0.0 };
                assert_eq!(x[i].to_bits(), expected.to_bits(), "seed {seed}, x[{i}]");
            }
        }
    }

    #[test]
    fn non_symmetric_matrix_is_refused() {
        let m = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 0.0, 2.0]);
        let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
        let (mut z, mut w) = (vec![0.0; 2], vec![0.0; 2]);
        let err = solver().solve(&lcp, &mut z, &mut w).unwrap_err();
        assert!(
            matches!(
                err,
                NumericsError::NotApplicable {
                    solver: "sparse",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn rounding_level_asymmetry_is_accepted() {
        let m = DMatrix::from_row_slice(2, 2, &[2.0, -1.0, -1.0 + 1e-15, 2.0]);
        let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
        let mut z = vec![0.0; 2];
        let r = run(&mut solver(), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    }

    /// M = [1 1; 1 1], q = (−1, −1): the first active set is {1, 2}, whose
    /// block is singular. The solver must stop, not return garbage.
    #[test]
    fn singular_active_block_reports_numerical_trouble_not_garbage() {
        let m = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0]);
        let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
        let mut z = vec![0.0; 2];
        let r = run(&mut solver(), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::NumericalTrouble, "{r:?}");
        assert_eq!(z, vec![0.0, 0.0]);
    }

    /// Rank-two M = G Gᵀ (G 3 × 2): factorising the full active set ends on
    /// a positive pivot of rounding size (≈ 4·10⁻¹⁶ of its diagonal entry)
    /// that the factorisation itself accepts; the pivot-ratio test must
    /// catch it.
    #[test]
    fn rounding_level_pivot_is_taken_as_singular() {
        let g = DMatrix::from_fn(3, 2, |i, j| ((7 * i + 3 * j) as f64 * 0.37).sin());
        let m = &g * g.transpose();
        let lcp = Lcp::new(m, vec![-1.0; 3]).unwrap();
        let mut z = vec![0.0; 3];
        let r = run(&mut solver(), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::NumericalTrouble, "{r:?}");
        assert!(z.iter().all(|v| v.is_finite() && v.abs() < 1e3), "{z:?}");
    }

    #[test]
    fn pattern_is_analysed_once_and_again_only_when_it_changes() {
        let n = 30;
        let mut s = solver();
        let active: Vec<bool> = (0..n).map(|i| i % 4 != 0).collect();
        let m = Matrix::BlockSparse(chain(n));
        let (_, q) = planted(&m, &active);
        let mut lcp = Lcp::new(m, q).unwrap();
        let mut z = vec![0.0; n];
        assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
        assert_eq!(s.symbolic_analyses(), 1);
        // Same pattern, other values and another active set.
        if let Matrix::BlockSparse(b) = &mut lcp.m {
            let blocks: Vec<Block> = b
                .blocks()
                .map(|(r, c, v)| Block {
                    row: r,
                    col: c,
                    values: v.iter().map(|x| 3.0 * x).collect(),
                })
                .collect();
            *b = BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap();
        }
        let other: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
        let (_, q) = planted(&lcp.m, &other);
        lcp.q = q;
        z.fill(0.0);
        assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
        assert_eq!(s.symbolic_analyses(), 1);
        // A new block (0, 2) and (2, 0): a new pattern.
        if let Matrix::BlockSparse(b) = &mut lcp.m {
            let mut blocks: Vec<Block> = b
                .blocks()
                .map(|(r, c, v)| Block {
                    row: r,
                    col: c,
                    values: v.to_vec(),
                })
                .collect();
            for (r, c) in [(0, 2), (2, 0)] {
                blocks.push(Block {
                    row: r,
                    col: c,
                    values: vec![0.5],
                });
            }
            *b = BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap();
        }
        let (_, q) = planted(&lcp.m, &other);
        lcp.q = q;
        z.fill(0.0);
        assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
        assert_eq!(s.symbolic_analyses(), 2);
        // Dense: a change of which entries are zero is a new pattern.
        let mut d = lcp.m.to_dense();
        let (_, q) = planted(&Matrix::Dense(d.clone()), &other);
        let dense = Lcp::new(d.clone(), q).unwrap();
        z.fill(0.0);
        assert_eq!(run(&mut s, &dense, &mut z).status, SolveStatus::Solved);
        assert_eq!(s.symbolic_analyses(), 3);
        d[(0, 2)] = 0.0;
        d[(2, 0)] = 0.0;
        d[(5, 5)] = 3.0;
        let (_, q) = planted(&Matrix::Dense(d.clone()), &other);
        let dense = Lcp::new(d, q).unwrap();
        z.fill(0.0);
        assert_eq!(run(&mut s, &dense, &mut z).status, SolveStatus::Solved);
        assert_eq!(s.symbolic_analyses(), 4);
    }

    #[test]
    fn warm_start_from_the_solution_takes_one_iteration() {
        let n = 50;
        let active: Vec<bool> = (0..n).map(|i| (i / 5) % 2 == 0).collect();
        let m = Matrix::BlockSparse(chain(n));
        let (zs, q) = planted(&m, &active);
        let lcp = Lcp::new(m, q).unwrap();
        let mut s = solver();
        let mut z = vec![0.0; n];
        let cold = run(&mut s, &lcp, &mut z);
        assert_eq!(cold.status, SolveStatus::Solved);
        assert!(cold.iterations > 1, "{cold:?}");
        let mut z = zs.clone();
        let warm = run(&mut s, &lcp, &mut z);
        assert_eq!(warm.status, SolveStatus::Solved);
        assert_eq!(warm.iterations, 1);
    }

    /// A symmetric positive definite M on which pure block pivoting from
    /// z = 0 cycles through the active sets ∅ → {1, 3} → {3, 4} → ∅.
    fn cycling_problem() -> Lcp {
        let m = DMatrix::from_row_slice(
            4,
            4,
            &[
                1.794, -0.498, 1.392, -0.653, //
                -0.498, 0.958, -0.264, -0.129, //
                1.392, -0.264, 1.374, -1.161, //
                -0.653, -0.129, -1.161, 2.018,
            ],
        );
        Lcp::new(m, vec![-0.14, 0.19, -0.53, 0.93]).unwrap()
    }

    #[test]
    fn block_pivoting_cycle_is_broken_by_single_pivots() {
        let lcp = cycling_problem();
        let settings = SolverSettings {
            max_iterations: Some(60),
            ..SolverSettings::default()
        };
        // Without the safeguard the block pivots cycle.
        let mut unguarded = SparsePivoting::new(settings);
        unguarded.block_pivots = usize::MAX;
        let mut z = vec![0.0; 4];
        let r = run(&mut unguarded, &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::IterationLimit, "{r:?}");
        // With it the solve ends, on the unique solution.
        let mut z = vec![0.0; 4];
        let r = run(&mut SparsePivoting::new(settings), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
        let (mut ze, mut we) = (vec![0.0; 4], vec![0.0; 4]);
        let re = Enumeration::new(settings)
            .solve(&lcp, &mut ze, &mut we)
            .unwrap();
        assert_eq!(re.status, SolveStatus::Solved);
        for i in 0..4 {
            assert!(
                (z[i] - ze[i]).abs() <= 1e-12,
                "z[{i}] {} vs {}",
                z[i],
                ze[i]
            );
        }
    }

    /// A row and column without any stored block (Mᵢᵢ not stored) is fine
    /// while i stays inactive (qᵢ > 0).
    #[test]
    fn unstored_diagonal_of_an_inactive_row_is_harmless() {
        let blocks = vec![
            Block {
                row: 0,
                col: 0,
                values: vec![2.0],
            },
            Block {
                row: 2,
                col: 2,
                values: vec![3.0],
            },
        ];
        let m = BlockSparseMatrix::new(&[1, 1, 1], &[1, 1, 1], blocks).unwrap();
        let lcp = Lcp::new(m, vec![-2.0, 1.0, -3.0]).unwrap();
        let mut z = vec![0.0; 3];
        let r = run(&mut solver(), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
        for (zi, expected) in z.iter().zip([1.0, 0.0, 1.0]) {
            assert!((zi - expected).abs() <= 1e-15, "{z:?}");
        }
    }

    #[test]
    fn empty_problem_is_solved() {
        let lcp = Lcp::new(DMatrix::<f64>::zeros(0, 0), vec![]).unwrap();
        let r = run(&mut solver(), &lcp, &mut []);
        assert_eq!(r.status, SolveStatus::Solved);
        assert_eq!(r.iterations, 0);
    }
}
