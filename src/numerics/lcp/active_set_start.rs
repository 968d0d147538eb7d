//! The first stage of the default LCP chain for small dense problems: the
//! active set of the initial guess, tried with one direct solve.
//!
//! With B = { i : zᵢ > 0 } read from the caller's guess (a time step hands
//! the previous step's multipliers, so B is the previous step's basis) and
//! N its complement, the candidate is
//!
//! M_BB z_B = −q_B,   z_N = 0,   w = M z + q,
//!
//! accepted when z_B ≥ 0, w_N ≥ 0 (then w_B = 0 up to rounding and
//! 0 ≤ w ⊥ z ≥ 0 holds) and the normalised error of (z, w) meets the
//! tolerance (B empty: z = 0, kept when q ≥ 0). Anything else (M_BB
//! numerically singular, a sign violated, the error too large) declines, and the chain goes on to Lemke.
//! On a sequence of problems whose basis rarely changes, as the one-step
//! problems of a piecewise-linear circuit between switchings, this replaces
//! Lemke's pivots by one k × k LU factorisation (k = |B|).

use super::Lcp;
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::matrix::Matrix;
use crate::numerics::report::{SolveReport, SolveStatus};

/// Name in the reports of solves the warm start answered.
pub(crate) const NAME: &str = "active-set";

/// Buffers of the warm start, sized on first use of each size (no
/// allocation on later solves of a size already seen).
#[derive(Debug, Clone, Default)]
pub(crate) struct ActiveSetStart {
    /// The indices of B.
    basis: Vec<usize>,
    /// M_BB, column-major, then its LU factors.
    lu: Vec<f64>,
    /// The row swaps of the factorisation.
    piv: Vec<usize>,
    /// −q_B, then z_B.
    rhs: Vec<f64>,
    /// The basis whose factors `lu`, `piv` hold, and
    /// whether they are those of the current M: a later solve with the same
    /// basis and a matrix its caller states unchanged reuses them.
    kept_basis: Vec<usize>,
    kept: bool,
}

impl ActiveSetStart {
    /// Tries the active set of `z` on a validated problem. Returns the report
    /// of a solve that meets `tolerance` (z and w then hold the solution), or
    /// `None`, with z and w left in an unspecified state, when the guess's
    /// active set does not give one. `same_matrix`: M is that of the
    /// previous call, unchanged; the factors of M_BB kept from an earlier
    /// call with the same basis are then reused (the same operations on
    /// −q_B as a new factorisation: the same z_B to the last bit).
    pub(crate) fn try_solve(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
        tolerance: f64,
        same_matrix: bool,
    ) -> Option<SolveReport> {
        if !same_matrix {
            self.forget();
        }
        let Matrix::Dense(m) = &problem.m else {
            return None;
        };
        let n = problem.size();
        self.basis.clear();
        self.basis.extend((0..n).filter(|&i| z[i] > 0.0));
        let k = self.basis.len();
        self.rhs.resize(k, 0.0);
        let a = m.as_slice();
        let reuse = same_matrix && self.kept && k > 0 && self.kept_basis == self.basis;
        let solved = match k {
            // B empty: z = 0, a solution exactly when q ≥ 0.
            0 => true,
            _ => self.solve_basis(a, n, &problem.q, reuse),
        };
        if k > 0 && !reuse {
            // New factors (or none, M_BB singular).
            self.kept = solved;
            self.kept_basis.clear();
            self.kept_basis.extend_from_slice(&self.basis);
        }
        if !solved || self.rhs.iter().any(|x| x.is_nan() || *x < 0.0) {
            return None;
        }
        z.iter_mut().for_each(|v| *v = 0.0);
        for (&i, &x) in self.basis.iter().zip(&self.rhs) {
            z[i] = x;
        }
        // w = M z + q over the columns of B (z_N = 0), then the report's
        // error measures of (z, w).
        w.copy_from_slice(&problem.q);
        for (&j, &zj) in self.basis.iter().zip(&self.rhs) {
            for (wi, &mij) in w.iter_mut().zip(&a[j * n..(j + 1) * n]) {
                *wi += mij * zj;
            }
        }
        // One pass over the rows: the sign test off the basis (w_N ≥ 0)
        // and the sums of the report's error measures, ‖min(z, w)‖₂ and
        // ‖q‖₂ ([`Lcp::errors`]), all from this w.
        let (mut natural, mut q2) = (0.0f64, 0.0f64);
        for ((&zi, &wi), &qi) in z.iter().zip(w.iter()).zip(&problem.q) {
            if wi.is_nan() || (zi == 0.0 && wi < 0.0) {
                return None;
            }
            let r = zi.min(wi);
            natural += r * r;
            q2 += qi * qi;
        }
        let error_abs = natural.sqrt();
        let nq = q2.sqrt();
        let error = if nq > 0.0 { error_abs / nq } else { error_abs };
        (error <= tolerance).then_some(SolveReport {
            status: SolveStatus::Solved,
            solver: NAME,
            iterations: 1,
            error,
            error_abs,
        })
    }

    /// Drops the kept factors (M may have changed).
    pub(crate) fn forget(&mut self) {
        self.kept = false;
    }

    /// z_B ← M_BB⁻¹ (−q_B) by LU with partial pivoting on the kept buffers
    /// (the factorisation skipped when `reuse`). False when M_BB is
    /// numerically singular.
    fn solve_basis(&mut self, a: &[f64], n: usize, q: &[f64], reuse: bool) -> bool {
        let k = self.basis.len();
        if !reuse {
            self.lu.resize(k * k, 0.0);
            self.piv.resize(k, 0);
            for (c, &j) in self.basis.iter().enumerate() {
                for (r, &i) in self.basis.iter().enumerate() {
                    self.lu[c * k + r] = a[j * n + i];
                }
            }
        }
        for (r, &i) in self.basis.iter().enumerate() {
            self.rhs[r] = -q[i];
        }
        if !reuse && !lu_factor(&mut self.lu, k, &mut self.piv) {
            return false;
        }
        lu_solve(&self.lu, k, &self.piv, &mut self.rhs);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// M = [[2, 1, 0], [1, 2, 1], [0, 1, 2]] (symmetric positive definite:
    /// one solution for every q).
    fn m() -> DMatrix<f64> {
        DMatrix::from_row_slice(3, 3, &[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 2.0])
    }

    fn lcp(q: [f64; 3]) -> Lcp {
        Lcp::new(m(), q.to_vec()).unwrap()
    }

    #[test]
    fn the_guess_basis_gives_the_solution_in_one_solve() {
        // q = −M (1, 0, 2) + (0, 1, 0): z = (1, 0, 2), w = (0, 1, 0) by
        // construction (B = {0, 2}).
        let q = [-2.0, -3.0 + 1.0, -4.0];
        let p = lcp(q);
        let mut z = [0.5, 0.0, 7.0];
        let mut w = [0.0; 3];
        let mut start = ActiveSetStart::default();
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!(r.status, SolveStatus::Solved);
        assert_eq!((r.solver, r.iterations), (NAME, 1));
        assert_eq!(z, [1.0, 0.0, 2.0]);
        assert_eq!(w, [0.0, 1.0, 0.0]);
        assert!(r.error <= 1e-15);
    }

    #[test]
    fn the_reported_errors_are_those_of_the_returned_vectors() {
        // Random positive definite M = A Aᵀ + I and q; the guess is the
        // basis of the solution found by enumeration of the warm start's
        // own guesses (every subset): each accepted report must carry
        // exactly Lcp::errors of the (z, w) it returns, and w = M z + q.
        let mut seed = 11u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut accepted = 0;
        for n in 2..=6 {
            let a = DMatrix::from_fn(n, n, |_, _| next());
            let m = &a * a.transpose() + DMatrix::identity(n, n);
            let q: Vec<f64> = (0..n).map(|_| next()).collect();
            let p = Lcp::new(m, q).unwrap();
            let mut start = ActiveSetStart::default();
            for set in 0..(1u32 << n) {
                let mut z: Vec<f64> = (0..n)
                    .map(|i| if set >> i & 1 == 1 { 1.0 } else { 0.0 })
                    .collect();
                let mut w = vec![0.0; n];
                if let Some(r) = start.try_solve(&p, &mut z, &mut w, 1e-10, false) {
                    accepted += 1;
                    let mut w2 = vec![0.0; n];
                    p.compute_w(&z, &mut w2);
                    for i in 0..n {
                        assert!((w[i] - w2[i]).abs() <= 1e-14 * (1.0 + w2[i].abs()));
                        assert!(z[i] >= 0.0 && (z[i] > 0.0 || w[i] >= 0.0));
                    }
                    let (error, error_abs) = p.errors(&z, &w);
                    assert_eq!((r.error, r.error_abs), (error, error_abs), "n = {n}");
                }
            }
        }
        // A positive definite LCP has one solution, found from its basis.
        assert!(accepted >= 5, "{accepted}");
    }

    #[test]
    fn kept_factors_give_the_bits_of_new_ones() {
        // n = 6, M = tridiag(−1, 4, −1) + a nonsymmetric part; a sequence of
        // q with the same basis (k = 1 … 6): the solve that reuses the factors (same_matrix)
        // returns the bits of a solve that factors afresh.
        let n = 6;
        let m = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => 4.0 + 0.1 * i as f64,
            1 => -1.0 + 0.05 * (i as f64 - j as f64),
            _ => 0.01 * (i + 2 * j) as f64,
        });
        let mut reused = 0;
        for k in 1..=n {
            let mut kept = ActiveSetStart::default();
            for step in 0..5 {
                // z* > 0 on the first k rows, w* > 0 on the others.
                let zs: Vec<f64> = (0..n)
                    .map(|i| {
                        if i < k {
                            1.0 + 0.3 * (i + step) as f64
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let q: Vec<f64> = (0..n)
                    .map(|i| {
                        let w = if i < k { 0.0 } else { 2.0 + step as f64 };
                        w - (0..n).map(|j| m[(i, j)] * zs[j]).sum::<f64>()
                    })
                    .collect();
                let p = Lcp::new(m.clone(), q).unwrap();
                let guess: Vec<f64> = (0..n).map(|i| if i < k { 1.0 } else { 0.0 }).collect();
                let (mut z1, mut w1) = (guess.clone(), vec![0.0; n]);
                let r1 = kept
                    .try_solve(&p, &mut z1, &mut w1, 1e-10, step > 0)
                    .expect("accepted");
                reused += usize::from(step > 0 && kept.kept);
                let (mut z2, mut w2) = (guess, vec![0.0; n]);
                let r2 = ActiveSetStart::default()
                    .try_solve(&p, &mut z2, &mut w2, 1e-10, false)
                    .expect("accepted");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&z1), bits(&z2), "k = {k}, step {step}");
                assert_eq!(bits(&w1), bits(&w2));
                assert_eq!(r1.error.to_bits(), r2.error.to_bits());
            }
        }
        assert_eq!(reused, 4 * n);
    }

    #[test]
    fn factors_are_not_reused_for_a_changed_matrix() {
        // The same basis {0, 2} on two matrices: the second call states M
        // changed (same_matrix false), so it must factor the new M_BB.
        let mut start = ActiveSetStart::default();
        let (mut z, mut w) = ([1.0, 0.0, 1.0], [0.0; 3]);
        start
            .try_solve(&lcp([-2.0, -1.0, -2.0]), &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!(z, [1.0, 0.0, 1.0]);
        // 2M: the solution halves.
        let p = Lcp::new(m() * 2.0, vec![-2.0, -1.0, -2.0]).unwrap();
        let mut z = [1.0, 0.0, 1.0];
        start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!(z, [0.5, 0.0, 0.5]);
        // 4M stated changed by a call whose guess has an empty basis
        // (declined: q has negative entries), then the basis {0, 2} on the
        // unchanged 4M: factored anew, not 2M's factors.
        let p = Lcp::new(m() * 4.0, vec![-2.0, -1.0, -2.0]).unwrap();
        let mut z = [0.0; 3];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        let mut z = [1.0, 0.0, 1.0];
        start
            .try_solve(&p, &mut z, &mut w, 1e-12, true)
            .expect("accepted");
        assert_eq!(z, [0.25, 0.0, 0.25]);
    }

    #[test]
    fn a_changed_basis_is_declined() {
        let mut start = ActiveSetStart::default();
        // q = −M e₁ + (2, 0, 2) = (1, −2, 1): the solution is z = e₁,
        // w = (2, 0, 2) (B = {1}).
        let p = lcp([1.0, -2.0, 1.0]);
        let mut w = [0.0; 3];
        // Guess B = {0, 2}: M_BB z_B = −q_B = (−1, −1) gives z_B < 0.
        let mut z = [1.0, 0.0, 1.0];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        // Guess B = {0}: z₀ = −q₀/2 < 0.
        let mut z = [1.0, 0.0, 0.0];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        // Guess B = {0, 1}: [[2, 1], [1, 2]] z_B = (−1, 2) gives z = (−4/3, 5/3): declined.
        let mut z = [1.0, 1.0, 0.0];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        // The true basis {1} is accepted.
        let mut z = [0.0, 3.0, 0.0];
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!(z, [0.0, 1.0, 0.0]);
        assert_eq!(w, [2.0, 0.0, 2.0]);
        assert!(r.status.is_solved());
    }

    #[test]
    fn a_sign_violated_off_the_basis_is_declined() {
        // q = (−2, −1, −2): B = {1} gives z₁ = 1/2 ≥ 0 but w₀ = 1/2 − 2 < 0.
        // The solution is z = (1, 0, 1), w = (0, 1, 0) (B = {0, 2}).
        let p = lcp([-2.0, -1.0, -2.0]);
        let mut w = [0.0; 3];
        let mut z = [0.0, 1.0, 0.0];
        let mut start = ActiveSetStart::default();
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        let mut z = [2.0, 0.0, 2.0];
        start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!(z, [1.0, 0.0, 1.0]);
        assert_eq!(w, [0.0, 1.0, 0.0]);
    }

    #[test]
    fn a_singular_block_or_an_empty_guess_is_declined() {
        // M_BB singular for B = {0, 1}.
        let singular =
            DMatrix::from_row_slice(3, 3, &[1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        let p = Lcp::new(singular, vec![-1.0, -1.0, 1.0]).unwrap();
        let (mut z, mut w) = ([1.0, 1.0, 0.0], [0.0; 3]);
        let mut start = ActiveSetStart::default();
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        // An empty guess: q has a negative entry, declined.
        let mut z = [0.0; 3];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12, false).is_none());
        // An empty guess with q ≥ 0: z = 0, w = q.
        let p = Lcp::new(m(), vec![0.5, 0.0, 2.0]).unwrap();
        let mut z = [0.0; 3];
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert_eq!((z, w), ([0.0; 3], [0.5, 0.0, 2.0]));
        assert_eq!(r.error, 0.0);
    }

    #[test]
    fn a_basis_above_the_unrolled_sizes_is_solved_by_lu() {
        // n = 7, M = tridiag(−1, 4, −1) (diagonally dominant); z* with six
        // positive entries (k = 6 > 4) and w* = e₃: q = w* − M z*.
        let n = 7;
        let m = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => 4.0,
            1 => -1.0,
            _ => 0.0,
        });
        let zs = [1.0, 2.0, 0.5, 0.0, 3.0, 1.5, 0.25];
        let mut q = vec![0.0; n];
        for (i, qi) in q.iter_mut().enumerate() {
            *qi = if i == 3 { 1.0 } else { 0.0 } - (0..n).map(|j| m[(i, j)] * zs[j]).sum::<f64>();
        }
        let p = Lcp::new(m, q).unwrap();
        let mut z = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0];
        let mut w = [0.0; 7];
        let mut start = ActiveSetStart::default();
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12, false)
            .expect("accepted");
        assert!(r.status.is_solved());
        for i in 0..n {
            assert!((z[i] - zs[i]).abs() <= 1e-14, "z[{i}] = {}", z[i]);
        }
        assert!((w[3] - 1.0).abs() <= 1e-14);
    }
}
