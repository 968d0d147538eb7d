//! The Euler–Moreau θ-scheme of first-order systems ẋ = f(t, x) + g + r on x:
//!
//! x_{k+1} = x_k + h(θ f_{k+1} + (1−θ) f_k + g) + h r_{k+1},
//!
//! with W = I − hθA(t_{k+1}) for linear systems f = A(t) x + b(t) (factored
//! once when A is constant, at each step otherwise; one pass per step) and a
//! Newton iteration on x with W = I − hθ ∂f/∂x(t_{k+1}, x) for nonlinear ones.

use nalgebra::DMatrix;

use super::SystemWork;
use crate::modelling::dynamical_system::{FirstOrderLinear, FirstOrderNonlinear};
use crate::modelling::functions::{fd_step, TimeMatrix, TimeVector};
use crate::numerics::dense_lu::lu_solve;
use crate::simulation::error::SimulationError;

impl SystemWork {
    /// W = I − hθA.
    pub(super) fn set_first_order_w(&mut self, a: &DMatrix<f64>, h: f64, theta: f64) {
        let n = self.n;
        for j in 0..n {
            for i in 0..n {
                self.w[j * n + i] = if i == j { 1.0 } else { 0.0 } - h * theta * a[(i, j)];
            }
        }
    }

    /// A constant A: W = I − hθA, factored once.
    pub(super) fn setup_first_order_linear(
        &mut self,
        d: &FirstOrderLinear,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        if d.a.is_constant() {
            let n = self.n;
            let mut a = DMatrix::zeros(n, n);
            d.a.eval(0.0, &mut a);
            self.set_first_order_w(&a, h, theta);
            self.factor_w()?;
            self.w_fixed = true;
        }
        Ok(())
    }

    /// A constant A: W = I − hθA factored again for a step of length `h`
    /// (a split step's sub-steps, then the grid step again: the operations
    /// of [`Self::setup_first_order_linear`], hence the same values).
    pub(crate) fn refactor_constant_first_order_w(
        &mut self,
        d: &FirstOrderLinear,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        let n = self.n;
        let mut a = DMatrix::zeros(n, n);
        d.a.eval(0.0, &mut a);
        self.set_first_order_w(&a, h, theta);
        self.factor_w()
    }

    /// A(t) varies: W = I − hθA(t_{k+1}), factored.
    pub(super) fn refactor_first_order_w(
        &mut self,
        d: &FirstOrderLinear,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        d.a.eval(t1, &mut self.a_end);
        let a = std::mem::replace(&mut self.a_end, DMatrix::zeros(0, 0));
        self.set_first_order_w(&a, h, theta);
        self.a_end = a;
        self.factor_w()
    }

    /// Free state of a linear system:
    /// free = W⁻¹ [x_k + h(1−θ)(A(t₀) x_k + b(t₀)) + hθ b(t₁) + h g].
    /// A constant A or b is read in place (no copy per step); the right-hand
    /// side is [`free_rhs`], unrolled for n ≤ 4.
    #[inline(always)]
    pub(super) fn free_first_order_linear(
        &mut self,
        d: &FirstOrderLinear,
        free: &mut [f64],
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) {
        let n = self.n;
        let a = match &d.a {
            TimeMatrix::Constant(a) => a.as_slice(),
            a => {
                a.eval(t0, &mut self.a_start);
                self.a_start.as_slice()
            }
        };
        let b = match &d.b {
            None => None,
            Some(TimeVector::Constant(b)) => Some((b.as_slice(), b.as_slice())),
            Some(b) => {
                b.eval(t0, &mut self.at_start);
                b.eval(t1, &mut self.at_end);
                Some((self.at_start.as_slice(), self.at_end.as_slice()))
            }
        };
        let g = self.has_control.then_some(self.control.as_slice());
        let x = self.q_start.as_slice();
        let rhs = self.rhs.as_mut_slice();
        free_rhs(n, a, x, b, g, h, theta, rhs);
        lu_solve(&self.w, n, &self.piv, rhs);
        free.copy_from_slice(rhs);
    }

    /// One Newton pass of a nonlinear system at the iterate x:
    /// R(x) = x − x_k − h[θ f(t₁, x) + (1−θ) f_k + g];
    /// W = I − hθ ∂f/∂x(t₁, x); free = x − W⁻¹ R(x).
    #[inline(always)]
    pub(super) fn free_first_order_nonlinear(
        &mut self,
        d: &FirstOrderNonlinear,
        free: &mut [f64],
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        let n = self.n;
        let x = &self.iterate;
        (d.f)(t1, x, &mut self.at_end);
        match &d.jacobian {
            Some(j) => j(t1, x, &mut self.jacobian),
            None => fd_jacobian(
                |xx, out| (d.f)(t1, xx, out),
                x,
                &self.at_end,
                &mut self.fd_point,
                &mut self.fd_value,
                &mut self.jacobian,
            ),
        }
        for j in 0..n {
            for i in 0..n {
                self.w[j * n + i] =
                    if i == j { 1.0 } else { 0.0 } - h * theta * self.jacobian[(i, j)];
            }
        }
        self.factor_w()?;
        for i in 0..n {
            self.rhs[i] = self.iterate[i]
                - self.q_start[i]
                - h * (theta * self.at_end[i] + (1.0 - theta) * self.f_start[i] + self.control[i]);
        }
        lu_solve(&self.w, n, &self.piv, &mut self.rhs);
        for i in 0..n {
            free[i] = self.iterate[i] - self.rhs[i];
        }
        Ok(())
    }
}

/// out ← ∂f/∂x by forward differences around `fx` = f(x): column c is
/// (f(x + dx e_c) − fx)/dx, f evaluated at `shifted` into `fplus`.
fn fd_jacobian(
    f: impl Fn(&[f64], &mut [f64]),
    x: &[f64],
    fx: &[f64],
    shifted: &mut [f64],
    fplus: &mut [f64],
    out: &mut DMatrix<f64>,
) {
    let n = x.len();
    shifted.copy_from_slice(x);
    for c in 0..n {
        let x0 = shifted[c];
        let dx = fd_step(x0);
        shifted[c] = x0 + dx;
        f(shifted, fplus);
        shifted[c] = x0;
        for r in 0..fx.len() {
            out[(r, c)] = (fplus[r] - fx[r]) / dx;
        }
    }
}

/// The θ-scheme's right-hand side for a linear system, row by row:
///
/// rhs_i = x_i + h(1−θ) Σ_j A_ij x_j,
/// rhs_i += h((1−θ) b_i(t₀) + θ b_i(t₁)),   rhs_i += h g_i,
///
/// with `a` the n × n column-major A, `b` = (b(t₀), b(t₁)) and `g` when
/// present.
#[allow(clippy::too_many_arguments)]
fn free_rhs(
    n: usize,
    a: &[f64],
    x: &[f64],
    b: Option<(&[f64], &[f64])>,
    g: Option<&[f64]>,
    h: f64,
    theta: f64,
    rhs: &mut [f64],
) {
    let (a, x, rhs) = (&a[..n * n], &x[..n], &mut rhs[..n]);
    for i in 0..n {
        let mut ax = 0.0;
        for j in 0..n {
            ax += a[j * n + i] * x[j];
        }
        rhs[i] = x[i] + h * (1.0 - theta) * ax;
    }
    if let Some((b0, b1)) = b {
        let (b0, b1) = (&b0[..n], &b1[..n]);
        for i in 0..n {
            rhs[i] += h * ((1.0 - theta) * b0[i] + theta * b1[i]);
        }
    }
    if let Some(g) = g {
        let g = &g[..n];
        for i in 0..n {
            rhs[i] += h * g[i];
        }
    }
}
