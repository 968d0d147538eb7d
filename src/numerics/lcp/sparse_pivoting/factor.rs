//! The numeric factorisation K = L Lᵀ and the solve, restricted to the
//! active set, replayed on the structure the analysis fixed (see
//! [`Analysis`]).

use super::analysis::Analysis;
use super::pattern::entry;
use super::PIVOT_RATIO;

impl Analysis {
    /// Solves M_AA x_A = −q_A with x_I = 0 (A = `active`) into `x`. False
    /// when M_AA is not numerically positive definite or x is not finite.
    pub(super) fn solve_active(
        &mut self,
        vals: &[f64],
        q: &[f64],
        active: &[bool],
        x: &mut [f64],
    ) -> bool {
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
