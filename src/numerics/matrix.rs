//! Matrices of one-step problems: the operations solvers need, over dense and
//! block-sparse storage.
//!
//! Pivoting solvers copy the matrix into a dense workspace once per solve
//! ([`ProblemMatrix::write_dense`]); splitting solvers (Gauss–Seidel) only need
//! rows and diagonal entries, so they run in O(nnz) per sweep on block-sparse
//! storage.

use nalgebra::DMatrix;

use super::error::{NumericsError, Result};

/// The operations a solver asks of a problem matrix.
pub trait ProblemMatrix {
    /// Number of rows.
    fn nrows(&self) -> usize;
    /// Number of columns.
    fn ncols(&self) -> usize;
    /// y ← α·M·x + β·y. `x.len() == ncols`, `y.len() == nrows`.
    fn gemv(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]);
    /// (M·x)ᵢ, the dot product of row `i` with `x`.
    fn row_dot(&self, i: usize, x: &[f64]) -> f64;
    /// Mᵢᵢ.
    fn diagonal(&self, i: usize) -> f64;
    /// Entry (i, j) (zero where block-sparse storage has no block).
    fn get(&self, i: usize, j: usize) -> f64;
    /// Writes M into `out`, which must already be nrows × ncols.
    fn write_dense(&self, out: &mut DMatrix<f64>);
    /// The first stored entry that is NaN or infinite, as a row-major flat index and value.
    fn first_non_finite(&self) -> Option<(usize, f64)>;
}

impl ProblemMatrix for DMatrix<f64> {
    fn nrows(&self) -> usize {
        self.nrows()
    }
    fn ncols(&self) -> usize {
        self.ncols()
    }
    fn gemv(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
        let (nr, nc) = self.shape();
        if beta == 0.0 {
            y.iter_mut().for_each(|v| *v = 0.0);
        } else if beta != 1.0 {
            y.iter_mut().for_each(|v| *v *= beta);
        }
        // Column-major storage: accumulate column by column.
        let data = self.as_slice();
        for (j, &xj) in x.iter().enumerate().take(nc) {
            let s = alpha * xj;
            if s == 0.0 {
                continue;
            }
            let col = &data[j * nr..(j + 1) * nr];
            for (yi, &mij) in y.iter_mut().zip(col) {
                *yi += mij * s;
            }
        }
    }
    fn row_dot(&self, i: usize, x: &[f64]) -> f64 {
        let nr = self.nrows();
        let data = self.as_slice();
        x.iter()
            .enumerate()
            .map(|(j, &xj)| data[j * nr + i] * xj)
            .sum()
    }
    fn diagonal(&self, i: usize) -> f64 {
        self[(i, i)]
    }
    fn get(&self, i: usize, j: usize) -> f64 {
        self[(i, j)]
    }
    fn write_dense(&self, out: &mut DMatrix<f64>) {
        out.copy_from(self);
    }
    fn first_non_finite(&self) -> Option<(usize, f64)> {
        let (nr, nc) = self.shape();
        // The position is looked for only when some entry is not finite.
        if all_finite(self.as_slice()) {
            return None;
        }
        self.as_slice()
            .iter()
            .position(|v| !v.is_finite())
            .map(|k| ((k % nr) * nc + k / nr, self.as_slice()[k]))
    }
}

/// Whether every entry of `v` is finite, without a branch per entry: a
/// double is NaN or infinite exactly when its exponent bits are all ones,
/// i.e. when |bits| ≥ 0x7ff0…0, i.e. when |bits| + 2⁵² has its top bit set;
/// the OR of those sums over `v` (integer operations, which vectorise) has
/// its top bit clear exactly when all entries are finite.
fn all_finite(v: &[f64]) -> bool {
    const ABS: u64 = !(1 << 63);
    let top = v
        .iter()
        .fold(0u64, |acc, x| acc | ((x.to_bits() & ABS) + (1 << 52)));
    top >> 63 == 0
}

/// A block-sparse matrix in block-row compressed storage (the Siconos "SBM"
/// layout): block rows and columns have their own sizes, and each stored
/// block is dense, column-major.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSparseMatrix {
    /// Cumulative row offsets, starting at 0: block row `r` spans rows
    /// `row_offsets[r]..row_offsets[r + 1]`.
    row_offsets: Vec<usize>,
    /// Cumulative column offsets, starting at 0.
    col_offsets: Vec<usize>,
    /// For block row `r`, its blocks are `row_ptr[r]..row_ptr[r + 1]`.
    row_ptr: Vec<usize>,
    /// Block-column index of each stored block.
    block_col: Vec<usize>,
    /// Start of each block's values in `values` (one more entry than blocks).
    value_ptr: Vec<usize>,
    /// Block values, each block column-major.
    values: Vec<f64>,
    /// Block row of every scalar row (for O(1) row access).
    row_block: Vec<usize>,
}

/// A view of a [`BlockSparseMatrix`]'s storage. The first four arrays are
/// its pattern: two matrices with equal arrays store their values at the
/// same places. Stored block `k` of block row `r` (`row_ptr[r] ≤ k <
/// row_ptr[r + 1]`) sits at block column `block_col[k]`, and its entry
/// (a, b) is `values[value_ptr[k] + b·rows + a]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockParts<'a> {
    pub row_offsets: &'a [usize],
    pub col_offsets: &'a [usize],
    pub row_ptr: &'a [usize],
    pub block_col: &'a [usize],
    pub value_ptr: &'a [usize],
    pub values: &'a [f64],
}

/// One stored block, as given to [`BlockSparseMatrix::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Block row index.
    pub row: usize,
    /// Block column index.
    pub col: usize,
    /// Values, column-major, `rows × cols` of the block.
    pub values: Vec<f64>,
}

impl BlockSparseMatrix {
    /// Builds a block-sparse matrix from the sizes of its block rows and
    /// columns and its stored blocks (in any order; at most one block per
    /// position).
    pub fn new(row_sizes: &[usize], col_sizes: &[usize], mut blocks: Vec<Block>) -> Result<Self> {
        let cumulative = |sizes: &[usize]| {
            let mut off = Vec::with_capacity(sizes.len() + 1);
            off.push(0);
            for s in sizes {
                off.push(off.last().copied().unwrap_or(0) + s);
            }
            off
        };
        let row_offsets = cumulative(row_sizes);
        let col_offsets = cumulative(col_sizes);
        blocks.sort_by_key(|b| (b.row, b.col));
        let mut row_ptr = vec![0usize; row_sizes.len() + 1];
        let mut block_col = Vec::with_capacity(blocks.len());
        let mut value_ptr = Vec::with_capacity(blocks.len() + 1);
        let mut values = Vec::new();
        value_ptr.push(0);
        for (k, b) in blocks.iter().enumerate() {
            if b.row >= row_sizes.len() || b.col >= col_sizes.len() {
                return Err(NumericsError::DimensionMismatch {
                    what: "block index",
                    expected: row_sizes.len().max(col_sizes.len()),
                    found: b.row.max(b.col),
                });
            }
            if k > 0 && blocks[k - 1].row == b.row && blocks[k - 1].col == b.col {
                return Err(NumericsError::InvalidSetting {
                    name: "blocks",
                    reason: format!("two blocks at block position ({}, {})", b.row, b.col),
                });
            }
            let expected = row_sizes[b.row] * col_sizes[b.col];
            if b.values.len() != expected {
                return Err(NumericsError::DimensionMismatch {
                    what: "block values",
                    expected,
                    found: b.values.len(),
                });
            }
            row_ptr[b.row + 1] += 1;
            block_col.push(b.col);
            values.extend_from_slice(&b.values);
            value_ptr.push(values.len());
        }
        for r in 0..row_sizes.len() {
            row_ptr[r + 1] += row_ptr[r];
        }
        let mut row_block = Vec::with_capacity(*row_offsets.last().unwrap_or(&0));
        for (r, s) in row_sizes.iter().enumerate() {
            row_block.extend(std::iter::repeat_n(r, *s));
        }
        Ok(BlockSparseMatrix {
            row_offsets,
            col_offsets,
            row_ptr,
            block_col,
            value_ptr,
            values,
            row_block,
        })
    }

    /// Builds the block-sparse form of a dense matrix with uniform square-ish
    /// blocks of the given sizes, keeping only blocks with a non-zero entry.
    pub fn from_dense(m: &DMatrix<f64>, row_sizes: &[usize], col_sizes: &[usize]) -> Result<Self> {
        let rs: usize = row_sizes.iter().sum();
        let cs: usize = col_sizes.iter().sum();
        if rs != m.nrows() || cs != m.ncols() {
            return Err(NumericsError::DimensionMismatch {
                what: "block sizes",
                expected: m.nrows() * m.ncols(),
                found: rs * cs,
            });
        }
        let mut blocks = Vec::new();
        let mut r0 = 0;
        for (br, &nr) in row_sizes.iter().enumerate() {
            let mut c0 = 0;
            for (bc, &nc) in col_sizes.iter().enumerate() {
                let view = m.view((r0, c0), (nr, nc));
                if view.iter().any(|v| *v != 0.0) {
                    blocks.push(Block {
                        row: br,
                        col: bc,
                        values: view.iter().copied().collect(),
                    });
                }
                c0 += nc;
            }
            r0 += nr;
        }
        Self::new(row_sizes, col_sizes, blocks)
    }

    /// Writes into `out` (its buffers reused) the principal submatrix of
    /// this matrix over the block indices `i` with `keep[i] != usize::MAX`,
    /// block `i` becoming block `keep[i]`; `keep` must number the kept
    /// blocks 0, 1, 2, … in increasing order, and the rows and columns
    /// must have the same block sizes (a square block partition). Stored
    /// blocks between two kept indices are copied in their order.
    pub(crate) fn principal_submatrix_into(&self, keep: &[usize], out: &mut BlockSparseMatrix) {
        out.row_offsets.clear();
        out.row_offsets.push(0);
        out.row_ptr.clear();
        out.row_ptr.push(0);
        out.block_col.clear();
        out.value_ptr.clear();
        out.value_ptr.push(0);
        out.values.clear();
        out.row_block.clear();
        for (i, &ki) in keep.iter().enumerate() {
            if ki == usize::MAX {
                continue;
            }
            let size = self.row_offsets[i + 1] - self.row_offsets[i];
            out.row_block.extend(std::iter::repeat_n(ki, size));
            let last = *out.row_offsets.last().unwrap_or(&0);
            out.row_offsets.push(last + size);
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                let kc = keep[self.block_col[k]];
                if kc == usize::MAX {
                    continue;
                }
                out.block_col.push(kc);
                out.values
                    .extend_from_slice(&self.values[self.value_ptr[k]..self.value_ptr[k + 1]]);
                out.value_ptr.push(out.values.len());
            }
            out.row_ptr.push(out.block_col.len());
        }
        out.col_offsets.clear();
        out.col_offsets.extend_from_slice(&out.row_offsets);
    }

    /// Number of stored blocks.
    pub fn block_count(&self) -> usize {
        self.block_col.len()
    }

    /// Index of the stored block at (block row `r`, block column `c`), for
    /// [`BlockSparseMatrix::block_values_mut`]; `None` when not stored.
    /// O(blocks in row r).
    pub fn block_index(&self, r: usize, c: usize) -> Option<usize> {
        (self.row_ptr[r]..self.row_ptr[r + 1]).find(|&k| self.block_col[k] == c)
    }

    /// The column-major values of stored block `k`, to update in place (the
    /// pattern stays fixed).
    pub fn block_values_mut(&mut self, k: usize) -> &mut [f64] {
        &mut self.values[self.value_ptr[k]..self.value_ptr[k + 1]]
    }

    /// All stored values, to reset in place.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Sizes of the block rows.
    pub fn row_sizes(&self) -> Vec<usize> {
        self.row_offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Sizes of the block columns.
    pub fn col_sizes(&self) -> Vec<usize> {
        self.col_offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The stored blocks in block-row order: (block row, block column, column-major values).
    pub fn blocks(&self) -> impl Iterator<Item = (usize, usize, &[f64])> + '_ {
        (0..self.row_ptr.len() - 1).flat_map(move |r| {
            (self.row_ptr[r]..self.row_ptr[r + 1]).map(move |k| {
                (
                    r,
                    self.block_col[k],
                    &self.values[self.value_ptr[k]..self.value_ptr[k + 1]],
                )
            })
        })
    }

    /// The storage arrays, for solvers that work on the scalar pattern (see
    /// [`BlockParts`]).
    pub(crate) fn parts(&self) -> BlockParts<'_> {
        BlockParts {
            row_offsets: &self.row_offsets,
            col_offsets: &self.col_offsets,
            row_ptr: &self.row_ptr,
            block_col: &self.block_col,
            value_ptr: &self.value_ptr,
            values: &self.values,
        }
    }

    fn block_dims(&self, r: usize, c: usize) -> (usize, usize, usize, usize) {
        (
            self.row_offsets[r],
            self.row_offsets[r + 1] - self.row_offsets[r],
            self.col_offsets[c],
            self.col_offsets[c + 1] - self.col_offsets[c],
        )
    }
}

impl ProblemMatrix for BlockSparseMatrix {
    fn nrows(&self) -> usize {
        *self.row_offsets.last().unwrap_or(&0)
    }
    fn ncols(&self) -> usize {
        *self.col_offsets.last().unwrap_or(&0)
    }
    fn gemv(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
        if beta == 0.0 {
            y.iter_mut().for_each(|v| *v = 0.0);
        } else if beta != 1.0 {
            y.iter_mut().for_each(|v| *v *= beta);
        }
        if self.row_ptr.len() == y.len() + 1 && self.col_offsets.len() == x.len() + 1 {
            // Every block is 1 × 1 (one block row per row, one block column
            // per column): block k is values[k]. The sums of the general
            // loop below, in the same order.
            let (vals, cols) = (&self.values[..], &self.block_col[..]);
            for (yr, w) in y.iter_mut().zip(self.row_ptr.windows(2)) {
                let mut acc = *yr;
                for (v, &c) in vals[w[0]..w[1]].iter().zip(&cols[w[0]..w[1]]) {
                    acc += v * alpha * x[c];
                }
                *yr = acc;
            }
            return;
        }
        for r in 0..self.row_ptr.len() - 1 {
            let (r0, nr) = (
                self.row_offsets[r],
                self.row_offsets[r + 1] - self.row_offsets[r],
            );
            let blocks = self.row_ptr[r]..self.row_ptr[r + 1];
            if nr == 2 || nr == 3 {
                // Contact blocks (2D and 3D): the block row's sums kept in
                // registers, added in the order of the general loop below.
                let mut acc = [0.0; 3];
                acc[..nr].copy_from_slice(&y[r0..r0 + nr]);
                for (&c, w) in self.block_col[blocks.clone()]
                    .iter()
                    .zip(self.value_ptr[blocks.start..=blocks.end].windows(2))
                {
                    let (c0, nc) = (
                        self.col_offsets[c],
                        self.col_offsets[c + 1] - self.col_offsets[c],
                    );
                    let blk = &self.values[w[0]..w[1]];
                    for (col, &xj) in blk.chunks_exact(nr).zip(&x[c0..c0 + nc]) {
                        let s = alpha * xj;
                        for (a, &v) in acc.iter_mut().zip(col) {
                            *a += v * s;
                        }
                    }
                }
                y[r0..r0 + nr].copy_from_slice(&acc[..nr]);
                continue;
            }
            for k in blocks {
                let (c0, nc) = {
                    let c = self.block_col[k];
                    (
                        self.col_offsets[c],
                        self.col_offsets[c + 1] - self.col_offsets[c],
                    )
                };
                let blk = &self.values[self.value_ptr[k]..self.value_ptr[k + 1]];
                if nr == 1 && nc == 1 {
                    // Scalar blocks (one-dimensional contacts): the common case.
                    y[r0] += blk[0] * alpha * x[c0];
                    continue;
                }
                for j in 0..nc {
                    let s = alpha * x[c0 + j];
                    for i in 0..nr {
                        y[r0 + i] += blk[j * nr + i] * s;
                    }
                }
            }
        }
    }
    fn row_dot(&self, i: usize, x: &[f64]) -> f64 {
        let r = self.row_block[i];
        let mut acc = 0.0;
        for k in self.row_ptr[r]..self.row_ptr[r + 1] {
            let (r0, nr, c0, nc) = self.block_dims(r, self.block_col[k]);
            let blk = &self.values[self.value_ptr[k]..self.value_ptr[k + 1]];
            let li = i - r0;
            for j in 0..nc {
                acc += blk[j * nr + li] * x[c0 + j];
            }
        }
        acc
    }
    fn diagonal(&self, i: usize) -> f64 {
        self.get(i, i)
    }
    fn get(&self, i: usize, j: usize) -> f64 {
        let r = self.row_block[i];
        for k in self.row_ptr[r]..self.row_ptr[r + 1] {
            let (r0, nr, c0, nc) = self.block_dims(r, self.block_col[k]);
            if j >= c0 && j < c0 + nc {
                return self.values[self.value_ptr[k] + (j - c0) * nr + (i - r0)];
            }
        }
        0.0
    }
    fn write_dense(&self, out: &mut DMatrix<f64>) {
        out.fill(0.0);
        for r in 0..self.row_ptr.len() - 1 {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                let (r0, nr, c0, nc) = self.block_dims(r, self.block_col[k]);
                let blk = &self.values[self.value_ptr[k]..self.value_ptr[k + 1]];
                for j in 0..nc {
                    for i in 0..nr {
                        out[(r0 + i, c0 + j)] = blk[j * nr + i];
                    }
                }
            }
        }
    }
    fn first_non_finite(&self) -> Option<(usize, f64)> {
        if all_finite(&self.values) {
            return None;
        }
        let nc = self.ncols();
        for r in 0..self.row_ptr.len() - 1 {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                let (r0, nr, c0, _) = self.block_dims(r, self.block_col[k]);
                let blk = &self.values[self.value_ptr[k]..self.value_ptr[k + 1]];
                if let Some(p) = blk.iter().position(|v| !v.is_finite()) {
                    return Some(((r0 + p % nr) * nc + c0 + p / nr, blk[p]));
                }
            }
        }
        None
    }
}

/// A problem matrix in one of the supported storages.
#[derive(Debug, Clone, PartialEq)]
pub enum Matrix {
    /// Dense, column-major (nalgebra).
    Dense(DMatrix<f64>),
    /// Block-sparse, block-row compressed.
    BlockSparse(BlockSparseMatrix),
}

impl From<DMatrix<f64>> for Matrix {
    fn from(m: DMatrix<f64>) -> Self {
        Matrix::Dense(m)
    }
}

impl From<BlockSparseMatrix> for Matrix {
    fn from(m: BlockSparseMatrix) -> Self {
        Matrix::BlockSparse(m)
    }
}

impl Matrix {
    /// A dense copy.
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            Matrix::Dense(m) => m.clone(),
            Matrix::BlockSparse(b) => {
                let mut out = DMatrix::zeros(b.nrows(), b.ncols());
                b.write_dense(&mut out);
                out
            }
        }
    }

    /// Checks that the matrix is square of size `n` and finite.
    pub fn check_square(&self, what: &'static str, n: usize) -> Result<()> {
        self.check_square_shape(what, n)?;
        if let Some((index, value)) = self.first_non_finite() {
            return Err(NumericsError::NonFinite { what, index, value });
        }
        Ok(())
    }

    /// The shape part of [`Matrix::check_square`] alone (n × n), for callers
    /// that check the entries' finiteness while reading them.
    pub fn check_square_shape(&self, what: &'static str, n: usize) -> Result<()> {
        let (rows, cols) = (self.nrows(), self.ncols());
        if rows != cols {
            return Err(NumericsError::NotSquare { what, rows, cols });
        }
        if rows != n {
            return Err(NumericsError::DimensionMismatch {
                what,
                expected: n,
                found: rows,
            });
        }
        Ok(())
    }
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            Matrix::Dense($m) => $e,
            Matrix::BlockSparse($m) => $e,
        }
    };
}

impl ProblemMatrix for Matrix {
    fn nrows(&self) -> usize {
        dispatch!(self, m => ProblemMatrix::nrows(m))
    }
    fn ncols(&self) -> usize {
        dispatch!(self, m => ProblemMatrix::ncols(m))
    }
    fn gemv(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
        dispatch!(self, m => ProblemMatrix::gemv(m, alpha, x, beta, y))
    }
    fn row_dot(&self, i: usize, x: &[f64]) -> f64 {
        dispatch!(self, m => m.row_dot(i, x))
    }
    fn diagonal(&self, i: usize) -> f64 {
        dispatch!(self, m => ProblemMatrix::diagonal(m, i))
    }
    fn get(&self, i: usize, j: usize) -> f64 {
        dispatch!(self, m => ProblemMatrix::get(m, i, j))
    }
    fn write_dense(&self, out: &mut DMatrix<f64>) {
        dispatch!(self, m => m.write_dense(out))
    }
    fn first_non_finite(&self) -> Option<(usize, f64)> {
        dispatch!(self, m => m.first_non_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> DMatrix<f64> {
        DMatrix::from_row_slice(
            5,
            5,
            &[
                4., 1., 0., 0., 2., //
                1., 5., 0., 0., 0., //
                0., 0., 6., 1., 0., //
                0., 0., 1., 7., 0., //
                2., 0., 0., 0., 8.,
            ],
        )
    }

    #[test]
    fn all_finite_agrees_with_is_finite() {
        let specials = [
            0.0,
            -0.0,
            f64::MIN_POSITIVE / 4.0,
            f64::MAX,
            f64::MIN,
            1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &x in &specials {
            for len in [1, 5, 70] {
                for at in [0, len - 1] {
                    let mut v = vec![2.5; len];
                    v[at] = x;
                    assert_eq!(all_finite(&v), x.is_finite(), "{x} at {at} of {len}");
                }
            }
        }
        assert!(all_finite(&[]));
    }

    #[test]
    fn block_sparse_operations_match_dense() {
        let d = sample();
        let b = BlockSparseMatrix::from_dense(&d, &[2, 2, 1], &[2, 2, 1]).unwrap();
        assert_eq!(b.block_count(), 5);
        let x = [1.0, -2.0, 3.0, 0.5, -1.5];
        let mut yd = [1.0; 5];
        let mut yb = [1.0; 5];
        d.gemv(2.0, &x, 0.5, &mut yd);
        b.gemv(2.0, &x, 0.5, &mut yb);
        assert_eq!(yd, yb);
        for i in 0..5 {
            assert_eq!(d.row_dot(i, &x), b.row_dot(i, &x));
            assert_eq!(ProblemMatrix::diagonal(&d, i), b.diagonal(i));
            for j in 0..5 {
                assert_eq!(d[(i, j)], ProblemMatrix::get(&b, i, j));
            }
        }
        let mut out = DMatrix::zeros(5, 5);
        b.write_dense(&mut out);
        assert_eq!(out, d);
    }

    #[test]
    fn non_finite_entry_is_located_row_major() {
        let mut d = sample();
        d[(3, 1)] = f64::NAN;
        let (k, _) = d.first_non_finite().unwrap();
        assert_eq!(k, 3 * 5 + 1);
        let b = BlockSparseMatrix::from_dense(&d, &[2, 2, 1], &[2, 2, 1]);
        // (3,1) lies in block (1,0) which is all zero except the NaN: kept.
        let (k, _) = b.unwrap().first_non_finite().unwrap();
        assert_eq!(k, 3 * 5 + 1);
    }
}
