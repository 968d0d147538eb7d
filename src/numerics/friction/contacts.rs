//! Per-contact access to W for the Gauss–Seidel sweep: its diagonal blocks
//! W_ii and its off-diagonal blocks W_ij (j ≠ i) copied once per solve into
//! a compressed block-row layout (CSR of d × d blocks, values contiguous in
//! the order the sweep reads them), so that the row-block product
//! Σ_{j≠i} W_ij r_j costs O(stored blocks of block row i) with no indirection
//! through the source storage. Dense W contributes only its nonzero blocks.

use super::{local, FrictionProblem};
use crate::numerics::matrix::{Matrix, ProblemMatrix};

/// One stored off-diagonal block W_ij of block row i: its block column j
/// and its columns, each padded to four entries (zeros beyond d), so that
/// the product W_ij r_j is straight-line packed arithmetic.
#[derive(Debug, Clone, Copy)]
struct OffBlock {
    col: usize,
    /// Column b of W_ij in `w[b][..d]`.
    w: [[f64; 4]; 3],
}

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
    /// Start of block row i in `blocks` (length contacts + 1).
    ptr: Vec<usize>,
    /// The stored off-diagonal blocks W_ij, block row by block row.
    blocks: Vec<OffBlock>,
    /// Scratch of the dense scan: whether block (i, c) of a dense W has a
    /// nonzero entry, at `c * contacts + i`.
    nz: Vec<bool>,
    /// Scratch of the dense scan: the OR of the absolute bits of one block
    /// column's d columns, entry by entry.
    bits: Vec<u64>,
    /// The CSR above holds W (false: W is block-sparse with blocks that are
    /// not the contact blocks; rows are then taken from W itself).
    csr: bool,
}

impl Contacts {
    /// Reads the diagonal blocks of `p.w` and copies its off-diagonal blocks.
    pub fn prepare(&mut self, p: &FrictionProblem) {
        let (d, nc) = (p.dim, p.contacts());
        self.diag.clear();
        self.diag.resize(nc, [[0.0; 3]; 3]);
        self.ptr.clear();
        self.blocks.clear();
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
                            let src = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                            if c == i {
                                // Column-major source into the row-major W_ii.
                                for (bcol, col) in src.chunks_exact(d).enumerate() {
                                    for (a, &v) in col.iter().enumerate() {
                                        self.diag[i][a][bcol] = v;
                                    }
                                }
                                continue;
                            }
                            let mut w = [[0.0; 4]; 3];
                            for (wb, col) in w.iter_mut().zip(src.chunks_exact(d)) {
                                wb[..d].copy_from_slice(col);
                            }
                            self.blocks.push(OffBlock { col: c, w });
                        }
                        self.ptr.push(self.blocks.len());
                    }
                    true
                } else {
                    for (i, blk) in self.diag.iter_mut().enumerate() {
                        for (a, row) in blk.iter_mut().enumerate().take(d) {
                            for (b, v) in row.iter_mut().enumerate().take(d) {
                                *v = p.w.get(i * d + a, i * d + b);
                            }
                        }
                    }
                    false
                }
            }
            Matrix::Dense(m) => {
                // One contiguous pass over W's columns marks the nonzero
                // blocks (nz[c·nc + i]: block (i, c)): the d columns of
                // block column c are OR-ed entrywise (their absolute bits:
                // nonzero exactly when some entry is ≠ 0), then each block
                // row's d entries. Only those blocks are copied below.
                let n = nc * d;
                self.nz.clear();
                self.nz.resize(nc * nc, false);
                self.bits.clear();
                self.bits.resize(n, 0);
                for (c, cols) in m.as_slice().chunks_exact((n * d).max(1)).enumerate() {
                    self.bits.iter_mut().for_each(|v| *v = 0);
                    for column in cols.chunks_exact(n) {
                        for (acc, v) in self.bits.iter_mut().zip(column) {
                            *acc |= v.to_bits() << 1;
                        }
                    }
                    let marks = &mut self.nz[c * nc..(c + 1) * nc];
                    for (mark, seg) in marks.iter_mut().zip(self.bits.chunks_exact(d)) {
                        *mark = seg.iter().fold(0, |a, v| a | v) != 0;
                    }
                }
                for i in 0..nc {
                    for b in 0..d {
                        let column = m.column(i * d + b);
                        for a in 0..d {
                            self.diag[i][a][b] = column[i * d + a];
                        }
                    }
                    for c in (0..nc).filter(|&c| c != i && self.nz[c * nc + i]) {
                        let mut w = [[0.0; 4]; 3];
                        for (b, wb) in w.iter_mut().enumerate().take(d) {
                            let column = m.column(c * d + b);
                            wb[..d].copy_from_slice(&column.as_slice()[i * d..i * d + d]);
                        }
                        self.blocks.push(OffBlock { col: c, w });
                    }
                    self.ptr.push(self.blocks.len());
                }
                true
            }
        };
        self.inv.clear();
        self.inv
            .extend(self.diag.iter().map(|w| local::invert_block(d, w)));
        self.rho.clear();
        self.rho
            .extend(self.diag.iter().map(|w| local::rho_of(d, w)));
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
            let blocks = &self.blocks[self.ptr[i]..self.ptr[i + 1]];
            if d == 3 {
                // Four lanes (the fourth a zero pad) so that each column of
                // a block is two packed multiply-adds; r as contact
                // triples: one bounds check per block.
                let mut o = [out[0], out[1], out[2], 0.0];
                let (triples, _) = r.as_chunks::<3>();
                for blk in blocks {
                    let Some(rc) = triples.get(blk.col) else {
                        continue;
                    };
                    for (wb, &rb) in blk.w.iter().zip(rc) {
                        for a in 0..4 {
                            o[a] += wb[a] * rb;
                        }
                    }
                }
                *out = [o[0], o[1], o[2]];
            } else {
                for blk in blocks {
                    let rc = &r[blk.col * d..blk.col * d + d];
                    for (wb, &rb) in blk.w.iter().zip(rc) {
                        for a in 0..d {
                            out[a] += wb[a] * rb;
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
