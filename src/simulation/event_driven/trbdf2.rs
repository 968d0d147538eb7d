//! TR-BDF2 (Bank et al. 1985; Hosea and Shampine 1996): a trapezoidal
//! stage to t + γh followed by a BDF2 stage to t + h, γ = 2 − √2, so that
//! both stages share one iteration matrix W = I − d h J, d = γ/2:
//!
//! z − d h f(t + γh, z) = x + d h f(t, x),
//! x₁ − d h f(t + h, x₁) = (1 + c) z − c x,  c = (1 − γ)² / (γ(2 − γ)).
//!
//! It is L-stable and of order 2. The local error is estimated by the
//! difference with the third-order quadrature
//! x̂₁ = x + h[(1 − w)/3 f(t, x) + (3w + 1)/3 f(z) + d/3 f(x₁)], w = √2/4
//! (exact on polynomials of degree 2 at the nodes 0, γ, 1), filtered by
//! W⁻¹ so that stiff components do not inflate it. Each stage is solved by
//! a simplified Newton iteration with a Jacobian J = ∂f/∂x computed by
//! forward differences at the step start; the dense output is the cubic
//! Hermite interpolant of (x, f(t, x)) and (x₁, f(t + h, x₁)).

use super::integrator::{weighted_rms, OdeRhs};
use crate::modelling::functions::fd_step;
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::simulation::error::SimulationError;

const GAMMA: f64 = 2.0 - std::f64::consts::SQRT_2;
const D: f64 = GAMMA / 2.0;
const W: f64 = std::f64::consts::SQRT_2 / 4.0;
/// Newton iterations per stage before the step is retried smaller.
const NEWTON_MAX: usize = 7;
/// Newton stops when the weighted update norm is below this.
const NEWTON_TOL: f64 = 1e-3;

/// Outcome of one attempt.
pub(crate) enum Attempt {
    /// The stages converged; the weighted error norm (≤ 1: acceptable).
    Done(f64),
    /// A stage's Newton iteration did not converge: retry with a smaller step.
    NewtonFailed,
}

pub(crate) struct TrBdf2 {
    n: usize,
    pub(super) f0: Vec<f64>,
    fz: Vec<f64>,
    f1: Vec<f64>,
    z: Vec<f64>,
    pub x1: Vec<f64>,
    rhs: Vec<f64>,
    dx: Vec<f64>,
    tmp: Vec<f64>,
    /// J = ∂f/∂x at the step start, column-major.
    pub(super) jac: Vec<f64>,
    pub(super) jac_fresh: bool,
    /// W = I − d h J, LU-factored, for `w_h`.
    pub(super) w: Vec<f64>,
    pub(super) piv: Vec<usize>,
    pub(super) w_h: f64,
    /// Dense output of the last accepted step: x, f(t,x), x₁, f(t+h,x₁), h.
    pub(super) d_x0: Vec<f64>,
    pub(super) d_f0: Vec<f64>,
    pub(super) d_x1: Vec<f64>,
    pub(super) d_f1: Vec<f64>,
    pub(super) d_h: f64,
    /// Newton iterations done (statistics).
    pub newton_iterations: u64,
}

impl TrBdf2 {
    pub fn new(n: usize) -> Self {
        let v = || vec![0.0; n];
        TrBdf2 {
            n,
            f0: v(),
            fz: v(),
            f1: v(),
            z: v(),
            x1: v(),
            rhs: v(),
            dx: v(),
            tmp: v(),
            jac: vec![0.0; n * n],
            jac_fresh: false,
            w: vec![0.0; n * n],
            piv: vec![0; n],
            w_h: f64::NAN,
            d_x0: v(),
            d_f0: v(),
            d_x1: v(),
            d_f1: v(),
            d_h: 0.0,
            newton_iterations: 0,
        }
    }

    /// f(t, x) and the Jacobian at a (re)start.
    pub fn restart(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
    ) -> Result<(), SimulationError> {
        f.rhs(t, x, &mut self.f0)?;
        self.jacobian(f, t, x)
    }

    /// f(t, x) of the current step start.
    pub fn f_start(&self) -> &[f64] {
        &self.f0
    }

    /// J ← ∂f/∂x (t, x) by forward differences around f0 = f(t, x).
    fn jacobian(&mut self, f: &mut impl OdeRhs, t: f64, x: &[f64]) -> Result<(), SimulationError> {
        let n = self.n;
        self.tmp.copy_from_slice(x);
        for c in 0..n {
            let xc = self.tmp[c];
            let dx = fd_step(xc);
            self.tmp[c] = xc + dx;
            f.rhs(t, &self.tmp, &mut self.dx)?;
            self.tmp[c] = xc;
            for r in 0..n {
                self.jac[c * n + r] = (self.dx[r] - self.f0[r]) / dx;
            }
        }
        self.jac_fresh = true;
        self.w_h = f64::NAN;
        Ok(())
    }

    fn factor(&mut self, h: f64, t: f64) -> Result<(), SimulationError> {
        if self.w_h == h {
            return Ok(());
        }
        let n = self.n;
        for c in 0..n {
            for r in 0..n {
                self.w[c * n + r] = if r == c { 1.0 } else { 0.0 } - D * h * self.jac[c * n + r];
            }
        }
        if !lu_factor(&mut self.w, n, &mut self.piv) {
            return Err(SimulationError::StepSizeTooSmall { t, h });
        }
        self.w_h = h;
        Ok(())
    }

    /// Solves out − d h f(tt, out) = rhs by simplified Newton from the
    /// initial guess in `out`; f(tt, out) is left in `fout`.
    #[allow(clippy::too_many_arguments)]
    fn stage(
        &mut self,
        f: &mut impl OdeRhs,
        tt: f64,
        h: f64,
        scale_ref: &[f64],
        rtol: f64,
        atol: f64,
        which: usize,
    ) -> Result<bool, SimulationError> {
        let n = self.n;
        for _ in 0..NEWTON_MAX {
            self.newton_iterations += 1;
            let (out, fout) = if which == 0 {
                (&mut self.z, &mut self.fz)
            } else {
                (&mut self.x1, &mut self.f1)
            };
            f.rhs(tt, out, fout)?;
            for i in 0..n {
                self.dx[i] = self.rhs[i] - out[i] + D * h * fout[i];
            }
            lu_solve(&self.w, n, &self.piv, &mut self.dx);
            for i in 0..n {
                out[i] += self.dx[i];
            }
            let norm = weighted_rms(&self.dx, scale_ref, out, rtol, atol);
            if !norm.is_finite() {
                return Ok(false);
            }
            if norm <= NEWTON_TOL {
                f.rhs(tt, out, fout)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Attempts a step of size h from (t, x); `x1` holds the result.
    #[allow(clippy::too_many_arguments)]
    pub fn attempt(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
        h: f64,
        rtol: f64,
        atol: f64,
    ) -> Result<Attempt, SimulationError> {
        let n = self.n;
        self.factor(h, t)?;
        // Trapezoidal stage.
        for i in 0..n {
            self.rhs[i] = x[i] + D * h * self.f0[i];
            self.z[i] = x[i] + GAMMA * h * self.f0[i];
        }
        if !self.stage(f, t + GAMMA * h, h, x, rtol, atol, 0)? {
            return Ok(Attempt::NewtonFailed);
        }
        // BDF2 stage.
        let c = (1.0 - GAMMA) * (1.0 - GAMMA) / (GAMMA * (2.0 - GAMMA));
        for i in 0..n {
            self.rhs[i] = (1.0 + c) * self.z[i] - c * x[i];
            self.x1[i] = self.z[i] + (1.0 - GAMMA) * h * self.fz[i];
        }
        if !self.stage(f, t + h, h, x, rtol, atol, 1)? {
            return Ok(Attempt::NewtonFailed);
        }
        for i in 0..n {
            let hat = x[i]
                + h * ((1.0 - W) / 3.0 * self.f0[i]
                    + (3.0 * W + 1.0) / 3.0 * self.fz[i]
                    + D / 3.0 * self.f1[i]);
            self.tmp[i] = hat - self.x1[i];
        }
        lu_solve(&self.w, n, &self.piv, &mut self.tmp);
        Ok(Attempt::Done(weighted_rms(
            &self.tmp, x, &self.x1, rtol, atol,
        )))
    }

    /// After a failed Newton iteration: refresh the Jacobian at the step start.
    pub fn refresh(
        &mut self,
        f: &mut impl OdeRhs,
        t: f64,
        x: &[f64],
    ) -> Result<bool, SimulationError> {
        if self.jac_fresh {
            return Ok(false);
        }
        self.jacobian(f, t, x)?;
        Ok(true)
    }

    /// Accepts the last attempt: x ← x₁, dense output prepared. The
    /// Jacobian is kept (it is refreshed after a Newton failure or a restart).
    pub fn accept(&mut self, x: &mut [f64], h: f64) {
        self.d_x0.copy_from_slice(x);
        self.d_f0.copy_from_slice(&self.f0);
        self.d_x1.copy_from_slice(&self.x1);
        self.d_f1.copy_from_slice(&self.f1);
        self.d_h = h;
        x.copy_from_slice(&self.x1);
        self.f0.copy_from_slice(&self.f1);
        self.jac_fresh = false;
    }

    /// Cubic Hermite interpolant on the last accepted step, θ ∈ [0, 1].
    pub fn dense(&self, theta: f64, out: &mut [f64]) {
        let (s, h) = (theta, self.d_h);
        let h00 = (1.0 + 2.0 * s) * (1.0 - s) * (1.0 - s);
        let h10 = s * (1.0 - s) * (1.0 - s);
        let h01 = s * s * (3.0 - 2.0 * s);
        let h11 = s * s * (s - 1.0);
        for i in 0..out.len() {
            out[i] = h00 * self.d_x0[i]
                + h10 * h * self.d_f0[i]
                + h01 * self.d_x1[i]
                + h11 * h * self.d_f1[i];
        }
    }
}
