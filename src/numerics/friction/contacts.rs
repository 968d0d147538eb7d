//! Per-contact access to W for the Gauss–Seidel sweep: its diagonal blocks
//! W_ii and its off-diagonal blocks W_ij (j ≠ i) copied once per solve into
//! a compressed block-row layout (CSR of d × d blocks, values contiguous in
//! the order the sweep reads them), so that the row-block product
//! Σ_{j≠i} W_ij r_j costs O(stored blocks of block row i) with no indirection
//! through the source storage. Dense W contributes only its nonzero blocks.

use super::{local, FrictionProblem};
use crate::numerics::matrix::{Matrix, ProblemMatrix};

/// The diagonal blocks of W and its off-diagonal block rows. Sized once per
/// number of contacts and stored blocks; [`Contacts::prepare`] does not
/// allocate again for a problem of the same size and pattern.
#[derive(Debug, Default, Clone)]
pub(crate) struct Contacts {
    /// W_ii, row-major in the top-left d × d corner.
    pub diag: Vec<[[f64; 3]; 3]>,
    /// W_ii⁻¹ (None when W_ii is singular), computed once per solve for the
    /// sticking case of the local solver.
    pub inv: Vec<Option<[[f64; 3]; 3]>>,
    /// The Alart–Curnier parameter ρ_i = 1 / max_k (W_ii)_kk of each contact.
    pub rho: Vec<f64>,
    /// Start of block row i in `cols` / `vals` (length contacts + 1).
    ptr: Vec<usize>,
    /// Block column j of each stored off-diagonal block.
    cols: Vec<usize>,
    /// W_ij column-major: entry (a, b) at `b * 3 + a` (d ≤ 3, zero padded).
    vals: Vec<[f64; 9]>,
    /// The CSR above holds W (false: W is block-sparse with blocks that are
    /// not the contact blocks; rows are then taken from W itself).
    csr: bool,
}

impl Contacts {
    /// Reads the diagonal blocks of `p.w` and copies its off-diagonal blocks.
    pub fn prepare(&mut self, p: &FrictionProblem) {
        let (d, nc) = (p.dim, p.contacts());
        self.diag.resize(nc, [[0.0; 3]; 3]);
        for (i, blk) in self.diag.iter_mut().enumerate() {
            for (a, row) in blk.iter_mut().enumerate().take(d) {
                for (b, v) in row.iter_mut().enumerate().take(d) {
                    *v = p.w.get(i * d + a, i * d + b);
                }
            }
        }
        self.inv.clear();
        self.inv
            .extend(self.diag.iter().map(|w| local::invert_block(d, w)));
        self.rho.clear();
        self.rho
            .extend(self.diag.iter().map(|w| local::rho_of(d, w)));
        self.ptr.clear();
        self.cols.clear();
        self.vals.clear();
        self.ptr.push(0);
        self.csr = match &p.w {
            Matrix::BlockSparse(b) => {
                let parts = b.parts();
                let ok = |off: &[usize]| {
                    off.len() == nc + 1 && off.iter().enumerate().all(|(k, &o)| o == k * d)
                };
                if ok(parts.row_offsets) && ok(parts.col_offsets) {
                    for i in 0..nc {
                        for k in parts.row_ptr[i]..parts.row_ptr[i + 1] {
                            let c = parts.block_col[k];
                            if c == i {
                                continue;
                            }
                            let src = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                            let mut blk = [0.0; 9];
                            for (bcol, col) in src.chunks_exact(d).enumerate() {
                                blk[bcol * 3..bcol * 3 + d].copy_from_slice(col);
                            }
                            self.cols.push(c);
                            self.vals.push(blk);
                        }
                        self.ptr.push(self.cols.len());
                    }
                    true
                } else {
                    false
                }
            }
            Matrix::Dense(m) => {
                for i in 0..nc {
                    for c in (0..nc).filter(|&c| c != i) {
                        let mut blk = [0.0; 9];
                        for b in 0..d {
                            for a in 0..d {
                                blk[b * 3 + a] = m[(i * d + a, c * d + b)];
                            }
                        }
                        if blk.iter().any(|&v| v != 0.0) {
                            self.cols.push(c);
                            self.vals.push(blk);
                        }
                    }
                    self.ptr.push(self.cols.len());
                }
                true
            }
        };
    }

    /// Whether the off-diagonal blocks are in the CSR (then
    /// `Contacts::local_q` takes `CSR = true`, otherwise `false`); the
    /// sweep picks its loop once, not per contact.
    pub fn is_csr(&self) -> bool {
        self.csr
    }

    /// u ← W r + q, block row by block row: u_i = W_ii r_i + q_i +
    /// Σ_{j≠i} W_ij r_j over the stored blocks only (a dense W with zero
    /// blocks costs its nonzero blocks, not n²).
    pub fn velocity(&self, p: &FrictionProblem, r: &[f64], u: &mut [f64]) {
        if !self.csr {
            p.compute_u(r, u);
            return;
        }
        let d = p.dim;
        for (i, (ui, ri)) in u.chunks_exact_mut(d).zip(r.chunks_exact(d)).enumerate() {
            let mut out = [0.0; 3];
            self.local_q::<true>(p, i, r, &mut out);
            let w = &self.diag[i];
            for a in 0..d {
                ui[a] = out[a] + (0..d).map(|b| w[a][b] * ri[b]).sum::<f64>();
            }
        }
    }

    /// out ← q_i + Σ_{j≠i} W_ij r_j: the free velocity of contact i when the
    /// others are frozen (then u_i = W_ii r_i + out). `CSR` must be
    /// `Contacts::is_csr`: the block rows come from the CSR, otherwise
    /// from W's own rows.
    #[inline]
    pub fn local_q<const CSR: bool>(
        &self,
        p: &FrictionProblem,
        i: usize,
        r: &[f64],
        out: &mut [f64; 3],
    ) {
        let d = p.dim;
        let base = i * d;
        out[..d].copy_from_slice(&p.q[base..base + d]);
        if CSR {
            let (s, e) = (self.ptr[i], self.ptr[i + 1]);
            let blocks = self.cols[s..e].iter().zip(&self.vals[s..e]);
            if d == 3 {
                let [mut o0, mut o1, mut o2] = *out;
                // r as contact triples: one bounds check per block.
                let (triples, _) = r.as_chunks::<3>();
                for (&c, w) in blocks {
                    let Some(rc) = triples.get(c) else {
                        continue;
                    };
                    for b in 0..3 {
                        o0 += w[b * 3] * rc[b];
                        o1 += w[b * 3 + 1] * rc[b];
                        o2 += w[b * 3 + 2] * rc[b];
                    }
                }
                *out = [o0, o1, o2];
            } else {
                for (&c, w) in blocks {
                    let rc = &r[c * d..c * d + d];
                    for (b, &rv) in rc.iter().enumerate() {
                        for a in 0..d {
                            out[a] += w[b * 3 + a] * rv;
                        }
                    }
                }
            }
        } else {
            let blk = &self.diag[i];
            for a in 0..d {
                let own: f64 = (0..d).map(|b| blk[a][b] * r[base + b]).sum();
                out[a] += p.w.row_dot(base + a, r) - own;
            }
        }
    }
}
