//! Block LU of the Newton Jacobian J = D + E (W + σ I) over W's d × d
//! contact blocks, in the contacts' order, without pivoting between blocks.
//!
//! J has the block pattern of W plus the diagonal blocks (made symmetric:
//! a block (i, c) stored implies room for (c, i)). Eliminating block
//! column k,
//!
//! P_k = J_kk⁻¹ (d × d, Gauss–Jordan with partial pivoting inside the
//! block), L_ik = J_ik P_k, J_ij ← J_ij − L_ik J_kj for i, j > k in the
//! structure of column k,
//!
//! fills exactly the pattern of the symbolic Cholesky factor of the
//! symmetric pattern (column k's structure is its own rows below k and the
//! structures of its elimination-tree children, less k). That analysis —
//! the filled structure, where each block of W lands, which three blocks
//! each update reads and writes — is made once per pattern of W; the
//! numeric factorisation and the solves then run over flat block arrays,
//! sized once. For a chain of contacts (W block-tridiagonal) there is no
//! fill and the work is O(n_c d³).
//!
//! The factorisation refuses (and the caller falls back to a pivoting
//! sparse LU) when the natural order fills too much (more than
//! [`FILL_RATIO`] times the blocks of J), when a pivot block is singular
//! relative to max |J|, or when the factors grew: the computed L U is
//! J + ΔJ with |ΔJ| ≲ γ_n |L| |U| (Wilkinson's backward-error bound for
//! elimination without pivoting), so max|L| · max|U| ≤ [`GROWTH`] · max|J|
//! is required, and max|P_k⁻¹| · max|U| ≤ [`CONDITION`] for the pivot
//! blocks' inverses. The Newton method checks the true error of its
//! iterates, so an inaccurate step costs iterations, never a wrong answer.

use super::FrictionProblem;
use crate::numerics::matrix::Matrix;

/// A d × d block, row-major in the top-left corner (d ≤ 3).
type Block3 = [[f64; 3]; 3];

/// Largest ratio of the filled pattern's blocks to J's blocks for which the
/// natural order is used.
pub(crate) const FILL_RATIO: usize = 3;

/// Largest max|L| · max|U| / max|J| accepted (element growth of the
/// elimination without pivoting between blocks).
const GROWTH: f64 = 1e6;

/// Largest max|P_k⁻¹| · max|U| accepted (a bound on the pivot blocks'
/// condition numbers, up to a factor d²).
const CONDITION: f64 = 1e12;

/// Where a block of J lives in the factor's storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Diagonal block of contact i.
    Diag(usize),
    /// Entry e of the structure: L part (row adj[e], column k).
    Lower(usize),
    /// Entry e of the structure: U part (row k, column adj[e]).
    Upper(usize),
}

/// The symbolic analysis for one pattern of W and the numeric factors.
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockLu {
    /// W's block pattern the analysis was made for.
    row_ptr: Vec<usize>,
    block_col: Vec<usize>,
    nc: usize,
    /// Whether the natural order is usable for this pattern.
    usable: bool,
    /// Structure of block column k of L (= block row k of U): block rows
    /// `adj[adj_ptr[k]..adj_ptr[k + 1]]`, ascending, all > k.
    adj_ptr: Vec<usize>,
    adj: Vec<usize>,
    /// Slot of every stored block of W.
    target: Vec<Slot>,
    /// Updates of step k: `upd[upd_ptr[k]..upd_ptr[k + 1]]`, each
    /// (entry of L_ik, entry of U_kj, slot of J_ij).
    upd_ptr: Vec<usize>,
    upd: Vec<(usize, usize, Slot)>,
    /// Values: J's blocks, then the factors.
    diag: Vec<Block3>,
    lower: Vec<Block3>,
    upper: Vec<Block3>,
    /// Inverses of the pivot blocks.
    inv: Vec<Block3>,
    /// Solution workspace.
    x: Vec<f64>,
    /// Workspaces of the analysis, kept so that a new pattern is analysed
    /// without allocating once they have reached its size.
    scratch: Scratch,
}

/// Workspaces of [`BlockLu::build`].
#[derive(Debug, Clone, Default)]
struct Scratch {
    low_ptr: Vec<usize>,
    fill: Vec<usize>,
    low: Vec<usize>,
    head: Vec<usize>,
    next: Vec<usize>,
    mark: Vec<usize>,
    buf: Vec<usize>,
}

/// `v` holding `len` copies of `value`, its storage reused.
fn refill<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    v.clear();
    v.resize(len, value);
}

impl BlockLu {
    /// Makes (or keeps) the analysis for `p`'s block-sparse W; false when
    /// the natural order is not usable (too much fill) or W is not
    /// block-sparse over uniform d × d contact blocks.
    pub fn analyse(&mut self, p: &FrictionProblem) -> bool {
        let Matrix::BlockSparse(w) = &p.w else {
            return false;
        };
        let parts = w.parts();
        let nc = p.contacts();
        let same = self.nc == nc
            && self.row_ptr == parts.row_ptr
            && self.block_col == parts.block_col
            && !self.adj_ptr.is_empty();
        if !same {
            self.build(parts.row_ptr, parts.block_col, nc);
        }
        self.usable
    }

    /// The symbolic analysis of W's pattern (`row_ptr`, `block_col`).
    fn build(&mut self, row_ptr: &[usize], block_col: &[usize], nc: usize) {
        self.row_ptr.clear();
        self.row_ptr.extend_from_slice(row_ptr);
        self.block_col.clear();
        self.block_col.extend_from_slice(block_col);
        self.nc = nc;
        // Symmetric off-diagonal pattern, lower part by column (rows i > k),
        // compressed: counted, placed, then sorted and deduplicated.
        const NONE: usize = usize::MAX;
        let Scratch {
            low_ptr,
            fill,
            low,
            head,
            next,
            mark,
            buf,
        } = &mut self.scratch;
        refill(low_ptr, nc + 1, 0);
        for i in 0..nc {
            for &c in &block_col[row_ptr[i]..row_ptr[i + 1]] {
                if c != i {
                    low_ptr[c.min(i) + 1] += 1;
                }
            }
        }
        for k in 0..nc {
            low_ptr[k + 1] += low_ptr[k];
        }
        fill.clear();
        fill.extend_from_slice(low_ptr);
        refill(low, low_ptr[nc], 0);
        for i in 0..nc {
            for &c in &block_col[row_ptr[i]..row_ptr[i + 1]] {
                if c != i {
                    low[fill[c.min(i)]] = c.max(i);
                    fill[c.min(i)] += 1;
                }
            }
        }
        let mut j_blocks = nc;
        for k in 0..nc {
            let seg = &mut low[low_ptr[k]..low_ptr[k + 1]];
            seg.sort_unstable();
            j_blocks += 2 * seg.len();
        }
        // Column structures of the factor through the elimination tree:
        // column k's rows below k and its children's structures less k
        // (children in a linked list, a mark per row against repeats).
        let mut adj_ptr = std::mem::take(&mut self.adj_ptr);
        let mut adj = std::mem::take(&mut self.adj);
        adj_ptr.clear();
        adj.clear();
        adj_ptr.push(0);
        refill(head, nc, NONE);
        refill(next, nc, NONE);
        refill(mark, nc, NONE);
        for k in 0..nc {
            buf.clear();
            for &i in &low[low_ptr[k]..low_ptr[k + 1]] {
                if mark[i] != k {
                    mark[i] = k;
                    buf.push(i);
                }
            }
            let mut child = head[k];
            while child != NONE {
                for &i in &adj[adj_ptr[child]..adj_ptr[child + 1]] {
                    if i != k && mark[i] != k {
                        mark[i] = k;
                        buf.push(i);
                    }
                }
                child = next[child];
            }
            buf.sort_unstable();
            if let Some(&parent) = buf.first() {
                next[k] = head[parent];
                head[parent] = k;
            }
            adj.extend_from_slice(buf);
            adj_ptr.push(adj.len());
            if nc + 2 * adj.len() > FILL_RATIO * j_blocks {
                self.usable = false;
                adj_ptr.clear();
                adj_ptr.push(0);
                self.adj_ptr = adj_ptr;
                self.adj = adj;
                return;
            }
        }
        let find = |k: usize, i: usize| -> usize {
            let s = &adj[adj_ptr[k]..adj_ptr[k + 1]];
            adj_ptr[k] + s.binary_search(&i).expect("filled structure")
        };
        let slot = |i: usize, j: usize| -> Slot {
            match i.cmp(&j) {
                std::cmp::Ordering::Equal => Slot::Diag(i),
                std::cmp::Ordering::Greater => Slot::Lower(find(j, i)),
                std::cmp::Ordering::Less => Slot::Upper(find(i, j)),
            }
        };
        self.target.clear();
        for i in 0..nc {
            for &c in &block_col[row_ptr[i]..row_ptr[i + 1]] {
                self.target.push(slot(i, c));
            }
        }
        let mut upd_ptr = std::mem::take(&mut self.upd_ptr);
        let mut upd = std::mem::take(&mut self.upd);
        upd_ptr.clear();
        upd.clear();
        upd_ptr.push(0);
        for k in 0..nc {
            for ei in adj_ptr[k]..adj_ptr[k + 1] {
                for ej in adj_ptr[k]..adj_ptr[k + 1] {
                    upd.push((ei, ej, slot(adj[ei], adj[ej])));
                }
            }
            upd_ptr.push(upd.len());
        }
        let e = adj.len();
        let z = [[0.0; 3]; 3];
        for (v, len) in [
            (&mut self.diag, nc),
            (&mut self.inv, nc),
            (&mut self.lower, e),
            (&mut self.upper, e),
        ] {
            v.clear();
            v.resize(len, z);
        }
        self.adj_ptr = adj_ptr;
        self.adj = adj;
        self.upd_ptr = upd_ptr;
        self.upd = upd;
        self.usable = true;
    }

    /// Solves (D + E (W + σ I)) x = b in place (`b` receives x), after
    /// [`BlockLu::analyse`] returned true for `p`; false when a pivot block
    /// is singular or the growth test fails (`b` is then unchanged).
    pub fn solve(
        &mut self,
        p: &FrictionProblem,
        dm: &[Block3],
        em: &[Block3],
        shift: f64,
        b: &mut [f64],
    ) -> bool {
        match p.dim {
            2 => self.solve_d::<2>(p, dm, em, shift, b),
            3 => self.solve_d::<3>(p, dm, em, shift, b),
            _ => false,
        }
    }

    fn solve_d<const D: usize>(
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
        if !self.usable {
            return false;
        }
        let parts = w.parts();
        let nc = self.nc;
        let z = [[0.0; 3]; 3];
        self.diag.fill(z);
        self.lower.fill(z);
        self.upper.fill(z);
        // J = D + E (W + σ I): the diagonal terms, then E_i W_ic per block.
        for i in 0..nc {
            let (e, dd) = (&em[i], &dm[i]);
            let blk = &mut self.diag[i];
            for a in 0..D {
                for c in 0..D {
                    blk[a][c] = dd[a][c] + shift * e[a][c];
                }
            }
        }
        for i in 0..nc {
            let e = &em[i];
            for k in parts.row_ptr[i]..parts.row_ptr[i + 1] {
                let vals = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                let blk = match self.target[k] {
                    Slot::Diag(x) => &mut self.diag[x],
                    Slot::Lower(x) => &mut self.lower[x],
                    Slot::Upper(x) => &mut self.upper[x],
                };
                for a in 0..D {
                    for c in 0..D {
                        let mut v = 0.0;
                        for m in 0..D {
                            v += e[a][m] * vals[c * D + m];
                        }
                        blk[a][c] += v;
                    }
                }
            }
        }
        let maxima = [
            max_abs::<D>(&self.diag),
            max_abs::<D>(&self.lower),
            max_abs::<D>(&self.upper),
        ];
        if maxima.iter().any(|m| !m.is_finite()) {
            return false;
        }
        let scale = maxima[0].max(maxima[1]).max(maxima[2]);
        if scale == 0.0 {
            return false;
        }
        // Factor, right-looking by block column.
        for k in 0..nc {
            let Some(inv) = invert::<D>(&self.diag[k], 1e-13 * scale) else {
                return false;
            };
            self.inv[k] = inv;
            for e in self.adj_ptr[k]..self.adj_ptr[k + 1] {
                self.lower[e] = mul::<D>(&self.lower[e], &inv);
            }
            for &(ei, ej, dest) in &self.upd[self.upd_ptr[k]..self.upd_ptr[k + 1]] {
                let prod = mul::<D>(&self.lower[ei], &self.upper[ej]);
                let blk = match dest {
                    Slot::Diag(x) => &mut self.diag[x],
                    Slot::Lower(x) => &mut self.lower[x],
                    Slot::Upper(x) => &mut self.upper[x],
                };
                for a in 0..D {
                    for c in 0..D {
                        blk[a][c] -= prod[a][c];
                    }
                }
            }
        }
        // Growth: the computed factors are those of J + ΔJ with
        // |ΔJ| ≲ γ |L| |U| (Wilkinson's bound for elimination without
        // pivoting), and each pivot block is inverted to its condition.
        let (lmax, umax, imax) = (
            max_abs::<D>(&self.lower),
            max_abs::<D>(&self.diag).max(max_abs::<D>(&self.upper)),
            max_abs::<D>(&self.inv),
        );
        if !(lmax * umax <= GROWTH * scale && imax * umax <= CONDITION) {
            return false;
        }
        // Forward (L y = b, unit block diagonal), then backward (U x = y).
        let n = nc * D;
        self.x.resize(n, 0.0);
        let x = &mut self.x;
        x.copy_from_slice(&b[..n]);
        for k in 0..nc {
            let yk: [f64; D] = std::array::from_fn(|a| x[k * D + a]);
            for e in self.adj_ptr[k]..self.adj_ptr[k + 1] {
                let i = self.adj[e];
                let l = &self.lower[e];
                for a in 0..D {
                    x[i * D + a] -= (0..D).map(|c| l[a][c] * yk[c]).sum::<f64>();
                }
            }
        }
        for k in (0..nc).rev() {
            let mut s: [f64; D] = std::array::from_fn(|a| x[k * D + a]);
            for e in self.adj_ptr[k]..self.adj_ptr[k + 1] {
                let j = self.adj[e];
                let u = &self.upper[e];
                for a in 0..D {
                    s[a] -= (0..D).map(|c| u[a][c] * x[j * D + c]).sum::<f64>();
                }
            }
            let inv = &self.inv[k];
            for a in 0..D {
                x[k * D + a] = (0..D).map(|c| inv[a][c] * s[c]).sum();
            }
        }
        if !x.iter().all(|v| v.is_finite()) {
            return false;
        }
        b[..n].copy_from_slice(x);
        true
    }
}

/// The largest |entry| of the D × D corners of `blocks`, by comparisons;
/// NaN when an entry is NaN.
fn max_abs<const D: usize>(blocks: &[Block3]) -> f64 {
    let mut m = 0.0f64;
    let mut nan = false;
    for blk in blocks {
        for row in &blk[..D] {
            for v in &row[..D] {
                nan |= v.is_nan();
                if v.abs() > m {
                    m = v.abs();
                }
            }
        }
    }
    if nan {
        f64::NAN
    } else {
        m
    }
}

/// The product a · b of two D × D blocks.
#[inline(always)]
fn mul<const D: usize>(a: &Block3, b: &Block3) -> Block3 {
    let mut m = [[0.0; 3]; 3];
    for i in 0..D {
        for j in 0..D {
            m[i][j] = (0..D).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

/// The inverse of a D × D block by Gauss–Jordan elimination with partial
/// pivoting; `None` when a pivot is at most `tiny` in magnitude.
fn invert<const D: usize>(blk: &Block3, tiny: f64) -> Option<Block3> {
    let mut a = *blk;
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate().take(D) {
        row[i] = 1.0;
    }
    for col in 0..D {
        let mut piv = col;
        for r in col + 1..D {
            if a[r][col].abs() > a[piv][col].abs() {
                piv = r;
            }
        }
        if a[piv][col].abs() <= tiny || !a[piv][col].is_finite() {
            return None;
        }
        a.swap(col, piv);
        inv.swap(col, piv);
        let f = 1.0 / a[col][col];
        for c in 0..D {
            a[col][c] *= f;
            inv[col][c] *= f;
        }
        for r in 0..D {
            if r != col {
                let g = a[r][col];
                if g != 0.0 {
                    for c in 0..D {
                        a[r][c] -= g * a[col][c];
                        inv[r][c] -= g * inv[col][c];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::matrix::{Block, ProblemMatrix};
    use crate::numerics::BlockSparseMatrix;
    use nalgebra::{DMatrix, DVector};

    /// A problem whose W has the given block pattern with pseudo-random
    /// values (diagonally dominant diagonal blocks).
    fn problem(d: usize, nc: usize, pairs: &[(usize, usize)]) -> FrictionProblem {
        let mut seed = 12345u64;
        let mut rand = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut all: Vec<(usize, usize)> = pairs.to_vec();
        all.extend((0..nc).map(|i| (i, i)));
        all.sort_unstable();
        all.dedup();
        let blocks = all
            .iter()
            .map(|&(row, col)| Block {
                row,
                col,
                values: (0..d * d)
                    .map(|k| {
                        let diag = row == col && k % (d + 1) == 0;
                        rand() + if diag { 4.0 } else { 0.0 }
                    })
                    .collect(),
            })
            .collect();
        let sizes = vec![d; nc];
        let w = BlockSparseMatrix::new(&sizes, &sizes, blocks).expect("valid blocks");
        FrictionProblem::new(d, w, vec![0.0; nc * d], vec![0.3; nc]).expect("valid problem")
    }

    /// The dense J = D + E (W + σ I), for the reference solve.
    fn dense_j(p: &FrictionProblem, dm: &[Block3], em: &[Block3], shift: f64) -> DMatrix<f64> {
        let (n, d) = (p.size(), p.dim);
        let mut wd = DMatrix::zeros(n, n);
        p.w.write_dense(&mut wd);
        DMatrix::from_fn(n, n, |r, c| {
            let (i, a) = (r / d, r % d);
            let mut v: f64 = (0..d).map(|m| em[i][a][m] * wd[(i * d + m, c)]).sum();
            if c / d == i {
                v += dm[i][a][c % d] + shift * em[i][a][c % d];
            }
            v
        })
    }

    fn check(p: &FrictionProblem, dm: &[Block3], em: &[Block3]) {
        let mut lu = BlockLu::default();
        assert!(lu.analyse(p), "natural order usable");
        let n = p.size();
        let b: Vec<f64> = (0..n).map(|k| (k as f64 * 0.7).sin()).collect();
        let mut x = b.clone();
        assert!(lu.solve(p, dm, em, 0.25, &mut x), "factored");
        let j = dense_j(p, dm, em, 0.25);
        let reference = j.lu().solve(&DVector::from_vec(b)).expect("invertible");
        for k in 0..n {
            assert!(
                (x[k] - reference[k]).abs() <= 1e-12 * (1.0 + reference[k].abs()),
                "entry {k}: {} against {}",
                x[k],
                reference[k]
            );
        }
    }

    /// D and E of mixed statuses: identity rows (separated), E = ρ I
    /// (sticking), and a full pair (sliding-like).
    fn statuses(nc: usize) -> (Vec<Block3>, Vec<Block3>) {
        let mut dm = vec![[[0.0; 3]; 3]; nc];
        let mut em = vec![[[0.0; 3]; 3]; nc];
        for i in 0..nc {
            match i % 3 {
                0 => {
                    for a in 0..3 {
                        dm[i][a][a] = 1.0;
                    }
                }
                1 => {
                    for a in 0..3 {
                        em[i][a][a] = 0.5;
                    }
                }
                _ => {
                    dm[i] = [[0.2, 0.1, 0.0], [0.3, 0.6, 0.1], [0.0, 0.1, 0.5]];
                    em[i] = [[0.5, 0.0, 0.1], [0.1, 0.4, 0.0], [0.0, 0.2, 0.3]];
                }
            }
        }
        (dm, em)
    }

    #[test]
    fn chain_matches_the_dense_lu() {
        for d in [2, 3] {
            let nc = 40;
            let pairs: Vec<_> = (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect();
            let p = problem(d, nc, &pairs);
            let (dm, em) = statuses(nc);
            check(&p, &dm, &em);
        }
    }

    #[test]
    fn fill_and_unsymmetric_patterns_match_the_dense_lu() {
        // A chain, the last contact coupled with every other, a coupling
        // 3–8 (fill along the chain through the elimination tree) and one
        // block stored without its transpose.
        let nc = 12;
        let mut pairs: Vec<_> = (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect();
        pairs.extend((0..nc - 1).flat_map(|i| [(nc - 1, i), (i, nc - 1)]));
        pairs.extend([(3, 8), (8, 3), (7, 9)]);
        let p = problem(3, nc, &pairs);
        let (dm, em) = statuses(nc);
        check(&p, &dm, &em);
    }

    #[test]
    fn the_analysis_follows_a_change_of_pattern() {
        // A chain, then a chain with a coupling 2–6 and a contact more, then
        // the chain again: each solve matches the dense LU of its own J.
        let mut lu = BlockLu::default();
        let chain = |nc: usize| -> Vec<(usize, usize)> {
            (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect()
        };
        let mut coupled = chain(11);
        coupled.extend([(2, 6), (6, 2)]);
        for (nc, pairs) in [(10, chain(10)), (11, coupled), (10, chain(10))] {
            let p = problem(2, nc, &pairs);
            let (dm, em) = statuses(nc);
            assert!(lu.analyse(&p));
            let b: Vec<f64> = (0..p.size()).map(|k| 1.0 + k as f64).collect();
            let mut x = b.clone();
            assert!(lu.solve(&p, &dm, &em, 0.0, &mut x));
            let j = dense_j(&p, &dm, &em, 0.0);
            let reference = j.lu().solve(&DVector::from_vec(b)).expect("invertible");
            for k in 0..p.size() {
                assert!((x[k] - reference[k]).abs() <= 1e-12 * (1.0 + reference[k].abs()));
            }
        }
    }

    #[test]
    fn workspaces_kept_across_patterns_leave_no_trace() {
        // A large chain, a refused arrow (too much fill), a small chain, a
        // chain with a coupling, the large chain again: the analysis reuses
        // the storage of the previous one each time; every usable pattern
        // matches the dense LU of its own J, and the refused one is refused.
        let mut lu = BlockLu::default();
        let chain = |nc: usize| -> Vec<(usize, usize)> {
            (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect()
        };
        let arrow: Vec<_> = (1..30).flat_map(|i| [(0, i), (i, 0)]).collect();
        let mut coupled = chain(9);
        coupled.extend([(1, 7), (7, 1)]);
        for (nc, pairs, usable) in [
            (25, chain(25), true),
            (30, arrow, false),
            (6, chain(6), true),
            (9, coupled, true),
            (25, chain(25), true),
        ] {
            let p = problem(3, nc, &pairs);
            assert_eq!(lu.analyse(&p), usable, "{nc} contacts");
            if !usable {
                continue;
            }
            let (dm, em) = statuses(nc);
            let b: Vec<f64> = (0..p.size()).map(|k| (k as f64 * 0.3).cos()).collect();
            let mut x = b.clone();
            assert!(lu.solve(&p, &dm, &em, 0.5, &mut x));
            let j = dense_j(&p, &dm, &em, 0.5);
            let reference = j.lu().solve(&DVector::from_vec(b)).expect("invertible");
            for k in 0..p.size() {
                assert!(
                    (x[k] - reference[k]).abs() <= 1e-12 * (1.0 + reference[k].abs()),
                    "{nc} contacts, entry {k}: {} against {}",
                    x[k],
                    reference[k]
                );
            }
        }
    }

    #[test]
    fn a_singular_pivot_block_is_refused() {
        let nc = 4;
        let pairs: Vec<_> = (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect();
        let p = problem(2, nc, &pairs);
        // Contact 0: D = 0 and E = 0 in its first row: J's row 0 is zero.
        let (mut dm, mut em) = statuses(nc);
        dm[0] = [[0.0; 3]; 3];
        em[0] = [[0.0; 3]; 3];
        em[0][1][1] = 1.0;
        let mut lu = BlockLu::default();
        assert!(lu.analyse(&p));
        let mut b = vec![1.0; p.size()];
        assert!(!lu.solve(&p, &dm, &em, 0.0, &mut b));
        assert!(b.iter().all(|&v| v == 1.0), "b unchanged on failure");
    }

    #[test]
    fn growth_without_pivoting_is_refused() {
        // Contact 0's pivot block is 10⁻¹⁰ of its coupling to contact 1 (a
        // sticking row with E = 10⁻¹⁰ I): nonsingular, but L_10 ≈ 10¹⁰.
        let nc = 4;
        let pairs: Vec<_> = (1..nc).flat_map(|i| [(i - 1, i), (i, i - 1)]).collect();
        let p = problem(2, nc, &pairs);
        let (mut dm, mut em) = statuses(nc);
        dm[0] = [[0.0; 3]; 3];
        em[0] = [[1e-10, 0.0, 0.0], [0.0, 1e-10, 0.0], [0.0; 3]];
        let mut lu = BlockLu::default();
        assert!(lu.analyse(&p));
        let mut b = vec![1.0; p.size()];
        assert!(!lu.solve(&p, &dm, &em, 0.0, &mut b));
        assert!(b.iter().all(|&v| v == 1.0), "b unchanged on failure");
    }

    #[test]
    fn too_much_fill_is_refused() {
        // An arrow pattern with the hub last eliminated first in natural
        // order (contact 0 coupled to all): the factor is dense.
        let nc = 30;
        let pairs: Vec<_> = (1..nc).flat_map(|i| [(0, i), (i, 0)]).collect();
        let p = problem(2, nc, &pairs);
        let mut lu = BlockLu::default();
        assert!(!lu.analyse(&p));
    }
}
