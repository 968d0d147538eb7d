//! Semismooth Newton on the Fischer–Burmeister reformulation of a mixed
//! complementarity problem with dense data.
//!
//! Unknowns x ∈ ℝⁿ, F(x) = M x + q. The first `n_eq` components are free with
//! Fᵢ(x) = 0; the others satisfy 0 ≤ xᵢ ⊥ Fᵢ(x) ≥ 0. The residual
//!
//! Φᵢ(x) = Fᵢ(x) (i < n_eq),   Φᵢ(x) = φ(xᵢ, Fᵢ(x)) (i ≥ n_eq),
//!
//! with φ the Fischer–Burmeister function, vanishes exactly at solutions. Each
//! step solves H d = −Φ for an element H of the generalised Jacobian
//! (rows Mᵢ for equalities, aᵢ eᵢ + bᵢ Mᵢ otherwise), falls back to the
//! steepest-descent direction −Hᵀ Φ when H is singular or d is not a descent
//! direction of Ψ = ½‖Φ‖², and takes an Armijo backtracking step on Ψ.

use nalgebra::DMatrix;

use super::dense_lu::{lu_factor, lu_solve};
use super::report::SolveStatus;
use super::residual::{fischer_burmeister, fischer_burmeister_gradient};

/// Workspace of the Newton kernel, sized once per problem size.
#[derive(Debug, Clone, Default)]
pub(crate) struct FbNewton {
    n: usize,
    jac: Vec<f64>,
    piv: Vec<usize>,
    f: Vec<f64>,
    phi: Vec<f64>,
    grad: Vec<f64>,
    d: Vec<f64>,
    xt: Vec<f64>,
    ft: Vec<f64>,
    phit: Vec<f64>,
}

const ARMIJO: f64 = 1e-4;
const MIN_STEP: f64 = 1e-16;
const DESCENT_RHO: f64 = 1e-10;
const DESCENT_P: f64 = 2.1;

fn gemv(m: &DMatrix<f64>, x: &[f64], q: &[f64], out: &mut [f64]) {
    out.copy_from_slice(q);
    let n = x.len();
    let data = m.as_slice();
    for (j, &xj) in x.iter().enumerate() {
        if xj != 0.0 {
            let col = &data[j * n..(j + 1) * n];
            for (o, &c) in out.iter_mut().zip(col) {
                *o += c * xj;
            }
        }
    }
}

fn residual(n_eq: usize, x: &[f64], f: &[f64], phi: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        phi[i] = if i < n_eq {
            f[i]
        } else {
            fischer_burmeister(x[i], f[i])
        };
        s += phi[i] * phi[i];
    }
    0.5 * s
}

impl FbNewton {
    pub(crate) fn resize(&mut self, n: usize) {
        if self.n != n || self.jac.len() != n * n {
            self.n = n;
            self.jac = vec![0.0; n * n];
            self.piv = vec![0; n];
            self.f = vec![0.0; n];
            self.phi = vec![0.0; n];
            self.grad = vec![0.0; n];
            self.d = vec![0.0; n];
            self.xt = vec![0.0; n];
            self.ft = vec![0.0; n];
            self.phit = vec![0.0; n];
        }
    }

    /// Runs at most `max_iter` Newton steps from `x`, stopping as soon as
    /// `error(x, F(x)) ≤ tol`. Returns (status, iterations); `x` holds the
    /// last iterate. `Solved` here only means the caller's measure passed.
    pub(crate) fn run(
        &mut self,
        m: &DMatrix<f64>,
        q: &[f64],
        n_eq: usize,
        x: &mut [f64],
        (tol, max_iter): (f64, usize),
        mut error: impl FnMut(&[f64], &[f64]) -> f64,
    ) -> (SolveStatus, usize) {
        let n = x.len();
        self.resize(n);
        gemv(m, x, q, &mut self.f);
        let mut psi = residual(n_eq, x, &self.f, &mut self.phi);
        for it in 0..max_iter {
            let err = error(x, &self.f);
            if !err.is_finite() || !psi.is_finite() {
                return (SolveStatus::NumericalTrouble, it);
            }
            if err <= tol {
                return (SolveStatus::Solved, it);
            }
            // Jacobian element H, column-major.
            for i in 0..n {
                let (a, b) = if i < n_eq {
                    (0.0, 1.0)
                } else {
                    fischer_burmeister_gradient(x[i], self.f[i])
                };
                for j in 0..n {
                    self.jac[j * n + i] = b * m[(i, j)];
                }
                self.jac[i * n + i] += a;
            }
            // ∇Ψ = Hᵀ Φ.
            for j in 0..n {
                let col = &self.jac[j * n..(j + 1) * n];
                self.grad[j] = col.iter().zip(&self.phi).map(|(h, p)| h * p).sum();
            }
            // Newton direction H d = −Φ, accepted if it is a sufficient
            // descent direction of Ψ: ∇Ψ·d ≤ −ρ‖d‖^p (De Luca–Facchinei–Kanzow).
            self.d.iter_mut().zip(&self.phi).for_each(|(d, p)| *d = -p);
            let mut newton_ok = false;
            if lu_factor(&mut self.jac, n, &mut self.piv) {
                lu_solve(&self.jac, n, &self.piv, &mut self.d);
                let slope: f64 = self.grad.iter().zip(&self.d).map(|(g, d)| g * d).sum();
                let dn = self.d.iter().map(|v| v * v).sum::<f64>().sqrt();
                newton_ok = self.d.iter().all(|v| v.is_finite())
                    && slope <= -DESCENT_RHO * dn.powf(DESCENT_P);
            }
            if !newton_ok {
                self.d.iter_mut().zip(&self.grad).for_each(|(d, g)| *d = -g);
            }
            let slope: f64 = self.grad.iter().zip(&self.d).map(|(g, d)| g * d).sum();
            if slope.is_nan() || slope >= 0.0 {
                return (SolveStatus::NumericalTrouble, it);
            }
            // Armijo backtracking on Ψ.
            let mut t = 1.0;
            loop {
                for i in 0..n {
                    self.xt[i] = x[i] + t * self.d[i];
                }
                gemv(m, &self.xt, q, &mut self.ft);
                let psit = residual(n_eq, &self.xt, &self.ft, &mut self.phit);
                if psit <= psi + ARMIJO * t * slope {
                    x.copy_from_slice(&self.xt);
                    std::mem::swap(&mut self.f, &mut self.ft);
                    std::mem::swap(&mut self.phi, &mut self.phit);
                    psi = psit;
                    break;
                }
                t *= 0.5;
                if t < MIN_STEP {
                    return (SolveStatus::NumericalTrouble, it + 1);
                }
            }
        }
        let err = error(x, &self.f);
        if err <= tol {
            (SolveStatus::Solved, max_iter)
        } else {
            (SolveStatus::IterationLimit, max_iter)
        }
    }
}
