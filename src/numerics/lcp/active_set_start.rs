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
use std::time::Duration;

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
}

impl ActiveSetStart {
    /// Tries the active set of `z` on a validated problem. Returns the report
    /// of a solve that meets `tolerance` (z and w then hold the solution), or
    /// `None`, with z and w left in an unspecified state, when the guess's
    /// active set does not give one.
    pub(crate) fn try_solve(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
        tolerance: f64,
    ) -> Option<SolveReport> {
        let Matrix::Dense(m) = &problem.m else {
            return None;
        };
        let n = problem.size();
        self.basis.clear();
        self.basis.extend((0..n).filter(|&i| z[i] > 0.0));
        let k = self.basis.len();
        self.rhs.resize(k, 0.0);
        let a = m.as_slice();
        let solved = match k {
            // B empty: z = 0, a solution exactly when q ≥ 0.
            0 => true,
            1 => solve_fixed::<1>(a, n, &self.basis, &problem.q, &mut self.rhs),
            2 => solve_fixed::<2>(a, n, &self.basis, &problem.q, &mut self.rhs),
            3 => solve_fixed::<3>(a, n, &self.basis, &problem.q, &mut self.rhs),
            4 => solve_fixed::<4>(a, n, &self.basis, &problem.q, &mut self.rhs),
            _ => self.solve_general(a, n, &problem.q),
        };
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
        if (0..n).any(|i| z[i] == 0.0 && (w[i].is_nan() || w[i] < 0.0)) {
            return None;
        }
        let (error, error_abs) = problem.errors(z, w);
        (error <= tolerance).then_some(SolveReport {
            status: SolveStatus::Solved,
            solver: NAME,
            iterations: 1,
            error,
            error_abs,
            time: Duration::ZERO,
        })
    }

    /// z_B ← M_BB⁻¹ (−q_B) by LU with partial pivoting on the kept buffers
    /// (k = |B| above the unrolled sizes). False when M_BB is numerically
    /// singular.
    fn solve_general(&mut self, a: &[f64], n: usize, q: &[f64]) -> bool {
        let k = self.basis.len();
        self.lu.resize(k * k, 0.0);
        self.piv.resize(k, 0);
        for (c, &j) in self.basis.iter().enumerate() {
            for (r, &i) in self.basis.iter().enumerate() {
                self.lu[c * k + r] = a[j * n + i];
            }
        }
        for (r, &i) in self.basis.iter().enumerate() {
            self.rhs[r] = -q[i];
        }
        if !lu_factor(&mut self.lu, k, &mut self.piv) {
            return false;
        }
        lu_solve(&self.lu, k, &self.piv, &mut self.rhs);
        true
    }
}

/// z_B ← M_BB⁻¹ (−q_B) for |B| = K, Gaussian elimination with partial
/// pivoting on a K × K array (unrolled by the compiler). `m` is the n × n
/// column-major M. False when a pivot is at most 1e-14 times the largest
/// |entry| of M_BB (the threshold of [`lu_factor`]).
fn solve_fixed<const K: usize>(
    m: &[f64],
    n: usize,
    basis: &[usize],
    q: &[f64],
    z_b: &mut [f64],
) -> bool {
    let mut a = [[0.0; K]; K];
    let mut b = [0.0; K];
    let mut scale = 0.0f64;
    for r in 0..K {
        b[r] = -q[basis[r]];
        for c in 0..K {
            a[r][c] = m[basis[c] * n + basis[r]];
            scale = scale.max(a[r][c].abs());
        }
    }
    let tiny = scale * 1e-14;
    for k in 0..K {
        let mut p = k;
        for i in k + 1..K {
            if a[i][k].abs() > a[p][k].abs() {
                p = i;
            }
        }
        let pivot = a[p][k].abs();
        if pivot.is_nan() || pivot <= tiny {
            return false;
        }
        a.swap(k, p);
        b.swap(k, p);
        for i in k + 1..K {
            let f = a[i][k] / a[k][k];
            for j in k + 1..K {
                a[i][j] -= f * a[k][j];
            }
            b[i] -= f * b[k];
        }
    }
    for k in (0..K).rev() {
        let mut s = b[k];
        for j in k + 1..K {
            s -= a[k][j] * b[j];
        }
        b[k] = s / a[k][k];
    }
    z_b[..K].copy_from_slice(&b);
    true
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
            .try_solve(&p, &mut z, &mut w, 1e-12)
            .expect("accepted");
        assert_eq!(r.status, SolveStatus::Solved);
        assert_eq!((r.solver, r.iterations), (NAME, 1));
        assert_eq!(z, [1.0, 0.0, 2.0]);
        assert_eq!(w, [0.0, 1.0, 0.0]);
        assert!(r.error <= 1e-15);
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
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        // Guess B = {0}: z₀ = −q₀/2 < 0.
        let mut z = [1.0, 0.0, 0.0];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        // Guess B = {0, 1}: [[2, 1], [1, 2]] z_B = (−1, 2) gives z = (−4/3, 5/3): declined.
        let mut z = [1.0, 1.0, 0.0];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        // The true basis {1} is accepted.
        let mut z = [0.0, 3.0, 0.0];
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12)
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
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        let mut z = [2.0, 0.0, 2.0];
        start
            .try_solve(&p, &mut z, &mut w, 1e-12)
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
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        // An empty guess: q has a negative entry, declined.
        let mut z = [0.0; 3];
        assert!(start.try_solve(&p, &mut z, &mut w, 1e-12).is_none());
        // An empty guess with q ≥ 0: z = 0, w = q.
        let p = Lcp::new(m(), vec![0.5, 0.0, 2.0]).unwrap();
        let mut z = [0.0; 3];
        let r = start
            .try_solve(&p, &mut z, &mut w, 1e-12)
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
            .try_solve(&p, &mut z, &mut w, 1e-12)
            .expect("accepted");
        assert!(r.status.is_solved());
        for i in 0..n {
            assert!((z[i] - zs[i]).abs() <= 1e-14, "z[{i}] = {}", z[i]);
        }
        assert!((w[3] - 1.0).abs() <= 1e-14);
    }
}
