//! Per-contact access to W: its diagonal blocks W_ii and the row-block
//! products Σ_{j≠i} W_ij r_j, in O(stored blocks of block row i) on
//! block-sparse storage whose blocks are the d × d contact blocks.

use super::FrictionProblem;
use crate::numerics::matrix::{Matrix, ProblemMatrix};

/// The diagonal blocks of W and how to take its row-block products. Sized
/// once per number of contacts; [`Contacts::prepare`] does not allocate
/// again for a problem of the same size.
#[derive(Debug, Default, Clone)]
pub(crate) struct Contacts {
    /// W_ii, row-major in the top-left d × d corner.
    pub diag: Vec<[[f64; 3]; 3]>,
    /// Block-sparse W with contact-aligned d × d blocks.
    aligned: bool,
}

impl Contacts {
    /// Reads the diagonal blocks of `p.w` and checks its block layout.
    pub fn prepare(&mut self, p: &FrictionProblem) {
        let (d, nc) = (p.dim, p.contacts());
        self.diag.resize(nc, [[0.0; 3]; 3]);
        self.aligned = match &p.w {
            Matrix::BlockSparse(b) => {
                let parts = b.parts();
                let ok = |off: &[usize]| {
                    off.len() == nc + 1 && off.iter().enumerate().all(|(k, &o)| o == k * d)
                };
                ok(parts.row_offsets) && ok(parts.col_offsets)
            }
            Matrix::Dense(_) => false,
        };
        for (i, blk) in self.diag.iter_mut().enumerate() {
            for (a, row) in blk.iter_mut().enumerate().take(d) {
                for (b, v) in row.iter_mut().enumerate().take(d) {
                    *v = p.w.get(i * d + a, i * d + b);
                }
            }
        }
    }

    /// out ← q_i + Σ_{j≠i} W_ij r_j: the free velocity of contact i when the
    /// others are frozen (then u_i = W_ii r_i + out).
    #[inline]
    pub fn local_q(&self, p: &FrictionProblem, i: usize, r: &[f64], out: &mut [f64; 3]) {
        let d = p.dim;
        let base = i * d;
        out[..d].copy_from_slice(&p.q[base..base + d]);
        match &p.w {
            Matrix::BlockSparse(b) if self.aligned => {
                let parts = b.parts();
                for k in parts.row_ptr[i]..parts.row_ptr[i + 1] {
                    let c = parts.block_col[k];
                    if c == i {
                        continue;
                    }
                    let vals = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                    let rc = &r[c * d..c * d + d];
                    for (bcol, &rv) in rc.iter().enumerate() {
                        let col = &vals[bcol * d..bcol * d + d];
                        for a in 0..d {
                            out[a] += col[a] * rv;
                        }
                    }
                }
            }
            w => {
                let blk = &self.diag[i];
                for a in 0..d {
                    let own: f64 = (0..d).map(|b| blk[a][b] * r[base + b]).sum();
                    out[a] += w.row_dot(base + a, r) - own;
                }
            }
        }
    }
}
