//! What defines the pattern of M (its storage arrays, or its non-zero
//! entries for dense storage) and M's stored entries with their positions
//! in its flat value array.

use crate::numerics::matrix::Matrix;

/// No stored entry.
pub(super) const NONE: usize = usize::MAX;

/// The flat value array of M that `Analysis::src` indexes.
pub(super) fn values(m: &Matrix) -> &[f64] {
    match m {
        Matrix::Dense(d) => d.as_slice(),
        Matrix::BlockSparse(b) => b.parts().values,
    }
}

pub(super) fn entry(vals: &[f64], s: usize) -> f64 {
    if s == NONE {
        0.0
    } else {
        vals[s]
    }
}

/// What defines a pattern: the storage arrays (block-sparse) or the set of
/// non-zero entries (dense).
#[derive(Debug, PartialEq)]
pub(super) enum PatternKey {
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
    pub(super) fn of(m: &Matrix) -> Self {
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
    pub(super) fn matches(&self, m: &Matrix) -> bool {
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
pub(super) fn stored_entries(m: &Matrix) -> Vec<(usize, usize, usize)> {
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
