//! The output products of a linear first-order relation with their
//! structural zeros dropped once, when the simulation is built.
//!
//! For y = C x + D λ + F u + e (C split by linked system, C = [C₁ … C_k])
//! the general code runs, per row r,
//!
//! y_r = (((0 + Σ_c C_rc x_c) + e_r) + Σ_c D_rc λ_c) + Σ_c F_rc u_c,
//!
//! each sum over every column in column order. C, D and F are constant, so
//! their nonzero entries are listed once in that (column-major) order, and a
//! step adds only those products: the additions each row receives are the
//! same, in the same order, minus terms a_rc x_c with a_rc = 0. The
//! accumulator starts at +0 and (round to nearest) is never −0, so adding a
//! zero product leaves it unchanged: for finite x, λ and u the result has
//! the bits of the general code (the unit test below compares them).

use nalgebra::DMatrix;

/// One nonzero entry a of a constant matrix: out[row] += a · x[col].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    row: usize,
    col: usize,
    value: f64,
}

/// The nonzero entries of `a`, column by column (the order of a
/// column-major product loop).
fn entries(a: &DMatrix<f64>) -> Vec<Entry> {
    let rows = a.nrows();
    a.as_slice()
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(k, &value)| Entry {
            row: k % rows,
            col: k / rows,
            value,
        })
        .collect()
}

/// out[e.row] += e.value · x[e.col] over the entries, in order.
#[inline(always)]
fn add_entries(list: &[Entry], x: &[f64], out: &mut [f64]) {
    for e in list {
        out[e.row] += e.value * x[e.col];
    }
}

/// The nonzero entries of C (per linked system), D and F of a linear
/// first-order relation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinearOutput {
    c: Vec<Vec<Entry>>,
    d: Vec<Entry>,
    f: Vec<Entry>,
}

impl LinearOutput {
    /// From the relation's C blocks (one per linked system, m × n_i), D
    /// (m × m) and F (m × p), absent ones being zero.
    pub fn new(out: &[DMatrix<f64>], d: Option<&DMatrix<f64>>, f: Option<&DMatrix<f64>>) -> Self {
        LinearOutput {
            c: out.iter().map(entries).collect(),
            d: d.map(entries).unwrap_or_default(),
            f: f.map(entries).unwrap_or_default(),
        }
    }

    /// out ← Σ_i C_i x_i + e (+ D λ when `lambda` is given) + F u, with x_i
    /// = `x(i)` for the i-th linked system. Up to four rows the sums are
    /// kept in a four-entry array indexed by the row's low two bits (no
    /// index checks on the rows), then stored.
    #[inline]
    pub fn apply<'a>(
        &self,
        x: impl Fn(usize) -> &'a [f64],
        e: &[f64],
        lambda: Option<&[f64]>,
        u: &[f64],
        out: &mut [f64],
    ) {
        if out.len() > 4 {
            out.iter_mut().for_each(|v| *v = 0.0);
            for (i, list) in self.c.iter().enumerate() {
                add_entries(list, x(i), out);
            }
            for (o, &ei) in out.iter_mut().zip(e) {
                *o += ei;
            }
            if let Some(lambda) = lambda {
                add_entries(&self.d, lambda, out);
            }
            add_entries(&self.f, u, out);
            return;
        }
        let mut acc = [0.0f64; 4];
        let add = |acc: &mut [f64; 4], list: &[Entry], x: &[f64]| {
            for en in list {
                acc[en.row & 3] += en.value * x[en.col];
            }
        };
        for (i, list) in self.c.iter().enumerate() {
            add(&mut acc, list, x(i));
        }
        for (a, &ei) in acc.iter_mut().zip(e) {
            *a += ei;
        }
        if let Some(lambda) = lambda {
            add(&mut acc, &self.d, lambda);
        }
        add(&mut acc, &self.f, u);
        let m = out.len();
        out.copy_from_slice(&acc[..m]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general code's order: zero, C column by column, e, D, F.
    fn general(
        out: &[DMatrix<f64>],
        xs: &[Vec<f64>],
        e: &[f64],
        d: &DMatrix<f64>,
        lambda: Option<&[f64]>,
        f: &DMatrix<f64>,
        u: &[f64],
    ) -> Vec<f64> {
        let m = e.len();
        let mut y = vec![0.0; m];
        for (c_i, x) in out.iter().zip(xs) {
            for c in 0..c_i.ncols() {
                for r in 0..m {
                    y[r] += c_i[(r, c)] * x[c];
                }
            }
        }
        for r in 0..m {
            y[r] += e[r];
        }
        if let Some(l) = lambda {
            for c in 0..m {
                for r in 0..m {
                    y[r] += d[(r, c)] * l[c];
                }
            }
        }
        for c in 0..u.len() {
            for r in 0..m {
                y[r] += f[(r, c)] * u[c];
            }
        }
        y
    }

    /// A reproducible value in [−1, 1] with about a third of them zero.
    fn value(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = (*seed >> 33) % 3;
        let v = ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
        if k == 0 {
            0.0
        } else {
            v * 10f64.powi((*seed % 7) as i32 - 3)
        }
    }

    #[test]
    fn the_sparse_products_have_the_bits_of_the_dense_ones() {
        let mut seed = 7u64;
        for trial in 0..200 {
            let m = 1 + trial % 6;
            let dims = [1 + trial % 3, 2 + trial % 2];
            let p = trial % 3;
            let out: Vec<DMatrix<f64>> = dims
                .iter()
                .map(|&n| DMatrix::from_fn(m, n, |_, _| value(&mut seed)))
                .collect();
            let d = DMatrix::from_fn(m, m, |_, _| value(&mut seed));
            let f = DMatrix::from_fn(m, p, |_, _| value(&mut seed));
            let xs: Vec<Vec<f64>> = dims
                .iter()
                .map(|&n| (0..n).map(|_| value(&mut seed) * 1e3).collect())
                .collect();
            let e: Vec<f64> = (0..m).map(|_| value(&mut seed)).collect();
            let lambda: Vec<f64> = (0..m).map(|_| value(&mut seed).abs()).collect();
            let u: Vec<f64> = (0..p).map(|_| value(&mut seed)).collect();
            let lin = LinearOutput::new(&out, Some(&d), Some(&f));
            for l in [Some(lambda.as_slice()), None] {
                let want = general(&out, &xs, &e, &d, l, &f, &u);
                let mut got = vec![f64::NAN; m];
                lin.apply(|i| &xs[i], &e, l, &u, &mut got);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "trial {trial}");
            }
        }
    }

    #[test]
    fn absent_matrices_and_zero_entries_are_not_listed() {
        let c = DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 2.0, 0.0, 0.0, 3.0]);
        let lin = LinearOutput::new(std::slice::from_ref(&c), None, None);
        assert_eq!(lin.c[0].len(), 3);
        assert!(lin.d.is_empty() && lin.f.is_empty());
        // Column-major order: (0, 0), then column 2: (0, 2), (1, 2).
        let at: Vec<(usize, usize)> = lin.c[0].iter().map(|e| (e.row, e.col)).collect();
        assert_eq!(at, [(0, 0), (0, 2), (1, 2)]);
        let mut y = [0.0; 2];
        lin.apply(|_| &[1.0, 5.0, 2.0][..], &[0.5, -1.0], None, &[], &mut y);
        assert_eq!(y, [1.0 + 4.0 + 0.5, 6.0 - 1.0]);
    }
}
