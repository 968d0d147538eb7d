//! Per-contact access to W for the Gauss–Seidel sweep: its diagonal blocks
//! W_ii, and its off-diagonal blocks W_ji (j ≠ i) copied once per solve
//! block column by block column (values contiguous in the order the sweep
//! reads them). Dense W contributes only its nonzero blocks.
//!
//! The sweep does not form the row product q_i + Σ_{j≠i} W_ij r_j at each
//! visit: it keeps the free velocities v_i = q_i + Σ_{j≠i} W_ij r_j of all
//! contacts up to date, and when contact i's impulse changes by Δ it adds
//! W_ji Δ to v_j for the stored blocks of block column i
//! ([`Contacts::scatter`]). A visit whose r_i does not change (a separated
//! contact staying separated, a converged contact) then costs no product at
//! all, and u = W r + q is v_i + W_ii r_i at O(contacts).

use super::{local, FrictionProblem};
use crate::numerics::matrix::{Matrix, ProblemMatrix};

/// One stored off-diagonal block W_ji of block column i: its block row j
/// and its columns, each padded to four entries (zeros beyond d), so that
/// the product W_ji Δ is straight-line packed arithmetic.
#[derive(Debug, Clone, Copy)]
struct OffBlock {
    row: usize,
    /// Column b of W_ji in `w[b][..d]`.
    w: [[f64; 4]; 3],
}

/// W_ii⁻¹ of one contact, computed when first needed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Inverse {
    /// Not computed yet in this solve.
    Unknown,
    /// W_ii is singular ([`local::invert_block`] gave none).
    Singular,
    /// W_ii⁻¹.
    Ready([[f64; 3]; 3]),
}

impl Inverse {
    /// W_ii⁻¹ of `w` (dimension `d`), computed at the first call.
    #[inline]
    pub fn get(&mut self, d: usize, w: &[[f64; 3]; 3]) -> Option<&[[f64; 3]; 3]> {
        if let Inverse::Unknown = self {
            *self = match local::invert_block(d, w) {
                Some(m) => Inverse::Ready(m),
                None => Inverse::Singular,
            };
        }
        match self {
            Inverse::Ready(m) => Some(m),
            _ => None,
        }
    }
}

/// The diagonal blocks of W, its off-diagonal block columns and the free
/// velocities. Sized once per number of contacts and stored blocks;
/// [`Contacts::prepare`] does not allocate again for a problem of the same
/// size and pattern.
#[derive(Debug, Default, Clone)]
pub(crate) struct Contacts {
    /// W_ii, row-major in the top-left d × d corner.
    pub diag: Vec<[[f64; 3]; 3]>,
    /// W_ii⁻¹ for the sticking case of the local solver, computed once per
    /// solve at the contact's first visit that needs it (a contact that
    /// stays separated never does).
    pub inv: Vec<Inverse>,
    /// The Alart–Curnier parameter ρ_i = 1 / max_k (W_ii)_kk of each contact.
    pub rho: Vec<f64>,
    /// Start of block column i in `blocks` (length contacts + 1).
    ptr: Vec<usize>,
    /// The stored off-diagonal blocks W_ji, block column by block column.
    blocks: Vec<OffBlock>,
    /// v_i = q_i + Σ_{j≠i} W_ij r_j (fourth entry zero), kept by `scatter`.
    free: Vec<[f64; 4]>,
    /// Scratch: the next free place of each block column while filling.
    next: Vec<usize>,
    /// Scratch of the dense scan: the block rows j of the nonzero
    /// off-diagonal blocks (j, c), block column by block column (`ptr`).
    rows: Vec<usize>,
    /// Scratch of the dense scan: Σ_b |W_kb| over the d columns b of one
    /// block column, row by row.
    sums: Vec<f64>,
    /// The blocks above hold W (false: W is block-sparse with blocks that
    /// are not the contact blocks; rows are then taken from W itself).
    copied: bool,
    /// Whether every entry of W was read finite by `prepare` (dense W only;
    /// None when the entries were not all read).
    finite: Option<bool>,
}

impl Contacts {
    /// Reads the diagonal blocks of `p.w` and copies its off-diagonal
    /// blocks, block column by block column.
    pub fn prepare(&mut self, p: &FrictionProblem) {
        let (d, nc) = (p.dim, p.contacts());
        self.diag.clear();
        self.diag.resize(nc, [[0.0; 3]; 3]);
        self.ptr.clear();
        self.blocks.clear();
        self.finite = None;
        self.copied = match &p.w {
            Matrix::BlockSparse(b) => {
                let parts = b.parts();
                let ok = |off: &[usize]| {
                    off.len() == nc + 1 && off.iter().enumerate().all(|(k, &o)| o == k * d)
                };
                if ok(parts.row_offsets) && ok(parts.col_offsets) {
                    // Counting pass: the off-diagonal blocks of each block
                    // column, then their places.
                    self.ptr.resize(nc + 1, 0);
                    for i in 0..nc {
                        for &c in &parts.block_col[parts.row_ptr[i]..parts.row_ptr[i + 1]] {
                            if c != i && c < nc {
                                self.ptr[c + 1] += 1;
                            }
                        }
                    }
                    for c in 0..nc {
                        self.ptr[c + 1] += self.ptr[c];
                    }
                    self.next.clear();
                    self.next.extend_from_slice(&self.ptr[..nc]);
                    let empty = OffBlock {
                        row: 0,
                        w: [[0.0; 4]; 3],
                    };
                    self.blocks.resize(self.ptr[nc], empty);
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
                            let Some(blk) =
                                self.next.get(c).and_then(|&at| self.blocks.get_mut(at))
                            else {
                                continue;
                            };
                            blk.row = i;
                            for (wb, col) in blk.w.iter_mut().zip(src.chunks_exact(d)) {
                                wb[..d].copy_from_slice(col);
                            }
                            self.next[c] += 1;
                        }
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
                self.scan_dense(m.as_slice(), d, nc);
                true
            }
        };
        self.inv.clear();
        self.inv.resize(nc, Inverse::Unknown);
        self.rho.clear();
        self.rho
            .extend(self.diag.iter().map(|w| local::rho_of(d, w)));
        self.free.clear();
        self.free.resize(nc, [0.0; 4]);
    }

    /// One pass over a dense, column-major W of `nc` contacts of dimension
    /// `d` (n = nc·d): block column c is d contiguous columns; for each row
    /// k the sum s_k = Σ_b |W_kb| over them, then block (j, c) is nonzero
    /// exactly when the sum of its d rows' s_k is ≠ 0, and W is finite when
    /// every such sum is (a sum that overflows reads as not finite: the
    /// caller then checks W entry by entry). The same pass thus finds the
    /// stored blocks and checks W's finiteness. Then the marked off-diagonal
    /// blocks are copied, into storage reserved to their exact number, and
    /// the diagonal blocks read.
    fn scan_dense(&mut self, w: &[f64], d: usize, nc: usize) {
        if d == 3 {
            self.scan_dense_d::<3>(w, nc);
        } else {
            self.scan_dense_d::<2>(w, nc);
        }
    }

    /// [`Contacts::scan_dense`] with the contact dimension as a constant.
    fn scan_dense_d<const D: usize>(&mut self, w: &[f64], nc: usize) {
        let n = nc * D;
        self.sums.clear();
        self.sums.resize(n, 0.0);
        self.rows.clear();
        self.ptr.push(0);
        let mut finite = true;
        for (c, cols) in w.chunks_exact((n * D).max(1)).enumerate() {
            // s_k = Σ_b |W_{k, cD+b}| over the block column's D columns
            // (plain float loops over contiguous columns: they vectorise).
            // The D columns are read side by side: one store per row.
            let acc = &mut self.sums[..n];
            let column: [&[f64]; D] = std::array::from_fn(|b| &cols[b * n..b * n + n]);
            for (k, a) in acc.iter_mut().enumerate() {
                let mut s = 0.0;
                for c in &column {
                    s += c[k].abs();
                }
                *a = s;
            }
            let (segs, _) = acc.as_chunks::<D>();
            for (j, seg) in segs.iter().enumerate() {
                // A sum of |entries|: zero exactly when the block is zero
                // (no rounding to zero: every term is ≥ 0 and ≤ the sum),
                // not finite when an entry is not (or the sum overflows).
                let sum: f64 = seg.iter().sum();
                finite &= sum.is_finite();
                if sum != 0.0 && j != c {
                    self.rows.push(j);
                }
            }
            self.ptr.push(self.rows.len());
            if let Some(diag) = self.diag.get_mut(c) {
                for (b, column) in cols.chunks_exact(n).enumerate() {
                    for (a, row) in diag.iter_mut().enumerate().take(D) {
                        row[b] = column[c * D + a];
                    }
                }
            }
        }
        self.finite = Some(finite);
        self.blocks.reserve_exact(self.rows.len());
        for (c, cols) in w.chunks_exact((n * D).max(1)).enumerate() {
            let (Some(&s), Some(&e)) = (self.ptr.get(c), self.ptr.get(c + 1)) else {
                break;
            };
            for &j in &self.rows[s..e] {
                let mut blk = [[0.0; 4]; 3];
                for (wb, column) in blk.iter_mut().zip(cols.chunks_exact(n)) {
                    wb[..D].copy_from_slice(&column[j * D..j * D + D]);
                }
                self.blocks.push(OffBlock { row: j, w: blk });
            }
        }
    }

    /// Whether `prepare` found every entry of W finite: Some for a dense W
    /// (read whole by the scan), None when it did not read every entry.
    pub fn w_finite(&self) -> Option<bool> {
        self.finite
    }

    /// Whether the off-diagonal blocks are copied (then the sweep reads the
    /// free velocities and scatters changes, otherwise it takes W's own
    /// rows); the sweep picks its loop once, not per contact.
    pub fn is_copied(&self) -> bool {
        self.copied
    }

    /// v_i ← q_i + Σ_{j≠i} W_ij r_j for every contact (copied blocks only):
    /// v = q, then the block columns of the contacts with r_i ≠ 0 scattered
    /// (nothing more from r = 0).
    pub fn reset_free(&mut self, p: &FrictionProblem, r: &[f64]) {
        let d = p.dim;
        for (v, q) in self.free.iter_mut().zip(p.q.chunks_exact(d)) {
            *v = [0.0; 4];
            v[..d].copy_from_slice(q);
        }
        if d == 3 {
            let (triples, _) = r.as_chunks::<3>();
            for (i, ri) in triples.iter().enumerate() {
                if *ri != [0.0; 3] {
                    self.scatter::<3>(i, ri);
                }
            }
        } else {
            let (pairs, _) = r.as_chunks::<2>();
            for (i, ri) in pairs.iter().enumerate() {
                if *ri != [0.0; 2] {
                    self.scatter::<2>(i, ri);
                }
            }
        }
    }

    /// v_j ← v_j + W_ji Δ for the stored blocks of block column i: contact
    /// i's impulse changed by Δ. `D` is the contact dimension.
    #[inline]
    pub fn scatter<const D: usize>(&mut self, i: usize, delta: &[f64; D]) {
        let (Some(&s), Some(&e)) = (self.ptr.get(i), self.ptr.get(i + 1)) else {
            return;
        };
        let free = &mut self.free;
        for blk in &self.blocks[s..e] {
            let mut t = [0.0; 4];
            for (wb, &db) in blk.w.iter().zip(delta) {
                for a in 0..4 {
                    t[a] += wb[a] * db;
                }
            }
            if let Some(v) = free.get_mut(blk.row) {
                for a in 0..4 {
                    v[a] += t[a];
                }
            }
        }
    }

    /// The free velocity v_i of contact i (copied blocks only).
    #[inline]
    pub fn free(&self, i: usize) -> [f64; 3] {
        let v = self.free[i];
        [v[0], v[1], v[2]]
    }

    /// u ← W r + q: with copied blocks, v recomputed from r
    /// ([`Contacts::reset_free`]) then u_i = v_i + W_ii r_i (stored blocks
    /// only: a dense W with zero blocks costs its nonzero blocks, not n²);
    /// otherwise W's own product.
    pub fn velocity(&mut self, p: &FrictionProblem, r: &[f64], u: &mut [f64]) {
        if !self.copied {
            p.compute_u(r, u);
            return;
        }
        self.reset_free(p, r);
        self.velocity_from_free(p, r, u);
    }

    /// u_i ← v_i + W_ii r_i from the kept free velocities (copied blocks
    /// only): W r + q up to the rounding the updates of v have gathered.
    pub fn velocity_from_free(&self, p: &FrictionProblem, r: &[f64], u: &mut [f64]) {
        let d = p.dim;
        let rows = u.chunks_exact_mut(d).zip(r.chunks_exact(d));
        for ((ui, ri), (w, v)) in rows.zip(self.diag.iter().zip(&self.free)) {
            for a in 0..d {
                ui[a] = v[a] + (0..d).map(|b| w[a][b] * ri[b]).sum::<f64>();
            }
        }
    }

    /// out ← q_i + Σ_{j≠i} W_ij r_j from W's own rows (blocks not copied):
    /// the free velocity of contact i when the others are frozen.
    #[inline]
    pub fn row_free(&self, p: &FrictionProblem, i: usize, r: &[f64], out: &mut [f64; 3]) {
        let d = p.dim;
        let base = i * d;
        out[..d].copy_from_slice(&p.q[base..base + d]);
        let blk = &self.diag[i];
        for a in 0..d {
            let own: f64 = (0..d).map(|b| blk[a][b] * r[base + b]).sum();
            out[a] += p.w.row_dot(base + a, r) - own;
        }
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;
    use crate::numerics::matrix::BlockSparseMatrix;

    /// A nonsymmetric W of `nc` contacts of dimension `d` whose blocks (i, j)
    /// with (i + 2j) % 3 == 1 and i ≠ j are zero.
    fn sample_w(d: usize, nc: usize) -> DMatrix<f64> {
        DMatrix::from_fn(d * nc, d * nc, |a, b| {
            let (i, j) = (a / d, b / d);
            if i == j {
                if a == b {
                    4.0 + a as f64
                } else {
                    0.3 / (1.0 + (a + 2 * b) as f64)
                }
            } else if (i + 2 * j) % 3 == 1 {
                0.0
            } else {
                0.1 * ((a * 7 + b * 3) % 11) as f64 - 0.4
            }
        })
    }

    /// q_i + Σ_{j≠i} W_ij r_j entry by entry from the dense W.
    fn free_direct(w: &DMatrix<f64>, q: &[f64], r: &[f64], d: usize, i: usize) -> Vec<f64> {
        (0..d)
            .map(|a| {
                let row = i * d + a;
                q[row]
                    + (0..r.len())
                        .filter(|&b| b / d != i)
                        .map(|b| w[(row, b)] * r[b])
                        .sum::<f64>()
            })
            .collect()
    }

    #[test]
    fn kept_free_velocities_match_the_row_products_after_scatters() {
        for d in [2, 3] {
            let nc = 5;
            let dense = sample_w(d, nc);
            let sizes = vec![d; nc];
            let sparse = BlockSparseMatrix::from_dense(&dense, &sizes, &sizes).unwrap();
            let q: Vec<f64> = (0..d * nc).map(|k| (k as f64 * 0.37).sin()).collect();
            let mut r: Vec<f64> = (0..d * nc).map(|k| (k as f64 * 0.91).cos()).collect();
            for w in [Matrix::Dense(dense.clone()), Matrix::BlockSparse(sparse)] {
                let p = FrictionProblem::new(d, w, q.clone(), vec![0.5; nc]).unwrap();
                let mut c = Contacts::default();
                c.prepare(&p);
                assert!(c.is_copied());
                // Only the nonzero off-diagonal blocks are stored.
                let stored = (0..nc)
                    .flat_map(|i| (0..nc).map(move |j| (i, j)))
                    .filter(|&(i, j)| i != j && (i + 2 * j) % 3 != 1)
                    .count();
                assert_eq!(c.blocks.len(), stored);
                for i in 0..nc {
                    for a in 0..d {
                        for b in 0..d {
                            assert_eq!(c.diag[i][a][b], dense[(i * d + a, i * d + b)]);
                        }
                    }
                }
                c.reset_free(&p, &r);
                let check = |c: &Contacts, r: &[f64]| {
                    for i in 0..nc {
                        let want = free_direct(&dense, &q, r, d, i);
                        let got = c.free(i);
                        for a in 0..d {
                            assert!((got[a] - want[a]).abs() < 1e-13, "{d} {i} {a}");
                        }
                    }
                };
                check(&c, &r);
                // Change contacts 1 and 3 and scatter their changes.
                for (i, delta) in [(1, [0.25, -0.5, 0.125]), (3, [-1.0, 0.75, 2.0])] {
                    for a in 0..d {
                        r[i * d + a] += delta[a];
                    }
                    if d == 3 {
                        c.scatter::<3>(i, &delta);
                    } else {
                        c.scatter::<2>(i, &[delta[0], delta[1]]);
                    }
                }
                check(&c, &r);
                // u = W r + q, from the kept velocities and recomputed.
                let mut u = vec![0.0; d * nc];
                c.velocity_from_free(&p, &r, &mut u);
                let direct = &dense * nalgebra::DVector::from_column_slice(&r);
                for k in 0..d * nc {
                    assert!((u[k] - direct[k] - q[k]).abs() < 1e-13);
                }
                c.velocity(&p, &r, &mut u);
                for k in 0..d * nc {
                    assert!((u[k] - direct[k] - q[k]).abs() < 1e-13);
                }
                for k in r.iter_mut() {
                    *k *= -1.0;
                }
            }
        }
    }

    #[test]
    fn inverses_are_computed_at_first_use_and_match_the_cofactor_inverse() {
        let d = 3;
        let nc = 4;
        let mut dense = sample_w(d, nc);
        // Contact 2's diagonal block singular: its first two rows equal.
        for b in 0..d {
            dense[(2 * d + 1, 2 * d + b)] = dense[(2 * d, 2 * d + b)];
        }
        let q: Vec<f64> = (0..d * nc).map(|k| (k as f64 * 0.37).sin()).collect();
        let p = FrictionProblem::new(d, Matrix::Dense(dense.clone()), q, vec![0.5; nc]).unwrap();
        let mut c = Contacts::default();
        c.prepare(&p);
        assert!(c.inv.iter().all(|v| matches!(v, Inverse::Unknown)));
        for i in [1, 2, 1] {
            let w = c.diag[i];
            let got = c.inv[i].get(d, &w).copied();
            if i == 2 {
                assert!(got.is_none());
                assert!(matches!(c.inv[i], Inverse::Singular));
                continue;
            }
            let inv = got.expect("regular block");
            // W_ii W_ii⁻¹ = I, W_ii read from the dense W itself.
            for a in 0..d {
                for b in 0..d {
                    let prod: f64 = (0..d)
                        .map(|k| dense[(i * d + a, i * d + k)] * inv[k][b])
                        .sum();
                    let want = if a == b { 1.0 } else { 0.0 };
                    assert!((prod - want).abs() < 1e-13, "{i} {a} {b}");
                }
            }
        }
        // Untouched contacts stay uncomputed; a new solve forgets them all.
        assert!(matches!(c.inv[0], Inverse::Unknown));
        c.prepare(&p);
        assert!(matches!(c.inv[1], Inverse::Unknown));
    }

    #[test]
    fn dense_scan_stores_nonzero_blocks_and_checks_finiteness() {
        // Three contacts of dimension 3, W = 2 I plus: block (1, 0) holding
        // only −0.0 (a zero block), block (2, 0) a single subnormal entry
        // (nonzero), block (0, 2) an ordinary entry.
        let d = 3;
        let mut w = DMatrix::<f64>::identity(9, 9) * 2.0;
        for a in 0..3 {
            for b in 0..3 {
                w[(3 + a, b)] = -0.0;
            }
        }
        w[(7, 1)] = 1e-310;
        w[(0, 8)] = 0.25;
        let p =
            FrictionProblem::new(d, Matrix::Dense(w.clone()), vec![-1.0; 9], vec![0.3; 3]).unwrap();
        let mut c = Contacts::default();
        c.prepare(&p);
        assert_eq!(c.w_finite(), Some(true));
        let stored: Vec<(usize, usize)> = (0..3)
            .flat_map(|col| {
                c.blocks[c.ptr[col]..c.ptr[col + 1]]
                    .iter()
                    .map(move |b| (b.row, col))
            })
            .collect();
        assert_eq!(stored, vec![(2, 0), (0, 2)]);
        assert_eq!(c.blocks[0].w[1][1], 1e-310);
        assert_eq!(c.blocks[1].w[2][0], 0.25);
        // A non-finite entry anywhere, in an off-diagonal or a diagonal block.
        for (i, j) in [(5, 0), (4, 4)] {
            let mut bad = w.clone();
            bad[(i, j)] = f64::NAN;
            let p = FrictionProblem {
                dim: d,
                w: Matrix::Dense(bad),
                q: vec![-1.0; 9],
                mu: vec![0.3; 3],
            };
            c.prepare(&p);
            assert_eq!(c.w_finite(), Some(false), "({i}, {j})");
        }
        // A block-sparse W is not read whole: no answer.
        let sizes = vec![d; 3];
        let sparse = BlockSparseMatrix::from_dense(&w, &sizes, &sizes).unwrap();
        let p = FrictionProblem::new(d, Matrix::BlockSparse(sparse), vec![-1.0; 9], vec![0.3; 3])
            .unwrap();
        c.prepare(&p);
        assert_eq!(c.w_finite(), None);
    }
}
