//! The Moreau–Jean θ-scheme of Lagrangian systems M(q) v̇ = F(t, q, v) + g + p
//! on (q, v):
//!
//! q_{k+1} = q_k + h((1−θ) v_k + θ v_{k+1}),
//! M (v_{k+1} − v_k) = h(θ F_{k+1} + (1−θ) F_k + g) + p_{k+1},
//!
//! with W = M + hθC + h²θ²K, constant, for linear time-invariant systems
//! (`LagrangianLinearTi`, one pass per step) and a Newton iteration on v with
//! W = M(q_θ) − hθ(∂F/∂v + hθ ∂F/∂q) for nonlinear ones.

use nalgebra::DMatrix;

use super::SystemWork;
use crate::modelling::dynamical_system::{LagrangianLinearTi, LagrangianNonlinear, Mass};
use crate::modelling::functions::fd_step;
use crate::numerics::dense_lu::lu_solve;
use crate::simulation::error::SimulationError;

impl SystemWork {
    /// A linear time-invariant system: W = M + hθC + h²θ²K, factored once;
    /// without damping and stiffness and with constant (or no) external
    /// forces, also the step's constant velocity increment
    /// Δv = W⁻¹ h(θ F_ext + (1 − θ) F_ext).
    pub(super) fn setup_lagrangian_linear_ti(
        &mut self,
        d: &LagrangianLinearTi,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        let n = self.n;
        // W = M + hθC + h²θ²K, constant.
        let mut w = d.mass.clone();
        if let Some(c) = &d.damping {
            w += c * (h * theta);
        }
        if let Some(k) = &d.stiffness {
            w += k * (h * h * theta * theta);
        }
        self.w.copy_from_slice(w.as_slice());
        self.factor_w()?;
        self.w_fixed = true;
        let constant_forces = d.fext.as_ref().is_none_or(|f| f.is_constant());
        if constant_forces && d.damping.is_none() && d.stiffness.is_none() {
            // rhs = h(θ F_ext(t₁) + (1 − θ) F_ext(t₀)) with F_ext(t₁) = F_ext(t₀).
            let mut rhs = vec![0.0; n];
            if let Some(f) = &d.fext {
                f.eval(0.0, &mut self.at_end);
                f.eval(0.0, &mut self.at_start);
                for i in 0..n {
                    rhs[i] = h * (theta * self.at_end[i] + (1.0 - theta) * self.at_start[i]);
                }
            }
            lu_solve(&self.w, n, &self.piv, &mut rhs);
            self.free_increment = Some(rhs);
        }
        Ok(())
    }

    /// Free velocity of a linear time-invariant system:
    /// rhs = h(θF_ext(t₁) + (1−θ)F_ext(t₀) + g) − hC v_k − hK(q_k + hθ v_k),
    /// free = v_k + W⁻¹ rhs (v_k + Δv when the increment is constant).
    #[inline(always)]
    pub(super) fn free_lagrangian_linear_ti(
        &mut self,
        d: &LagrangianLinearTi,
        free: &mut [f64],
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) {
        let n = self.n;
        if let (Some(dv), false) = (self.free_increment.as_deref(), self.has_control) {
            for ((f, &v), &dvi) in free.iter_mut().zip(&self.v_start).zip(dv) {
                *f = v + dvi;
            }
            return;
        }
        let rhs = &mut self.rhs;
        rhs.iter_mut().for_each(|x| *x = 0.0);
        if let Some(f) = &d.fext {
            f.eval(t1, &mut self.at_end);
            f.eval(t0, &mut self.at_start);
            for i in 0..n {
                rhs[i] = h * (theta * self.at_end[i] + (1.0 - theta) * self.at_start[i]);
            }
        }
        if self.has_control {
            for i in 0..n {
                rhs[i] += h * self.control[i];
            }
        }
        if let Some(c) = &d.damping {
            for j in 0..n {
                let vj = self.v_start[j];
                for i in 0..n {
                    rhs[i] -= h * c[(i, j)] * vj;
                }
            }
        }
        if let Some(k) = &d.stiffness {
            for j in 0..n {
                let qj = self.q_start[j] + h * theta * self.v_start[j];
                for i in 0..n {
                    rhs[i] -= h * k[(i, j)] * qj;
                }
            }
        }
        lu_solve(&self.w, n, &self.piv, rhs);
        for i in 0..n {
            free[i] = self.v_start[i] + rhs[i];
        }
    }

    /// F_k = F(t_k, q_k, v_k) of a nonlinear system, at the start of a step.
    pub(super) fn begin_lagrangian_nonlinear(&mut self, d: &LagrangianNonlinear, t0: f64) {
        lagrangian_forces(
            d,
            t0,
            &self.q_start,
            &self.v_start,
            &mut self.f_start,
            &mut self.force_part,
        );
    }

    /// One Newton pass of a nonlinear system at the iterate v:
    /// q(v) = q_k + h((1−θ)v_k + θv);
    /// R(v) = M(q_θ)(v − v_k) − h[θF(t₁, q(v), v) + (1−θ)F_k + g];
    /// W = M(q_θ) − hθ(∂F/∂v + hθ ∂F/∂q), with M(q) taken at
    /// q_θ = q_k + θ(q(v) − q_k), the θ-point of the step (at q_k the scheme
    /// would be first order only); the derivative of M(q_θ) with respect to
    /// v is left out of W. free = v − W⁻¹ R(v).
    #[inline(always)]
    pub(super) fn free_lagrangian_nonlinear(
        &mut self,
        d: &LagrangianNonlinear,
        free: &mut [f64],
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        let n = self.n;
        for i in 0..n {
            self.q_iterate[i] =
                self.q_start[i] + h * ((1.0 - theta) * self.v_start[i] + theta * self.iterate[i]);
        }
        if let Mass::Function(mf) = &d.mass {
            for i in 0..n {
                self.q_theta[i] = self.q_start[i] + theta * (self.q_iterate[i] - self.q_start[i]);
            }
            mf(&self.q_theta, &mut self.mass);
        }
        lagrangian_forces(
            d,
            t1,
            &self.q_iterate,
            &self.iterate,
            &mut self.at_end,
            &mut self.force_part,
        );
        // jacobian_v ← ∂F/∂v, then jacobian ← ∂F/∂q.
        force_jacobian(
            d,
            t1,
            &self.q_iterate,
            &self.iterate,
            false,
            &self.at_end,
            &mut self.jacobian,
            &mut self.jacobian_term,
            &mut self.force_part,
            &mut self.fd_point,
            &mut self.fd_value,
        );
        self.jacobian_v.copy_from(&self.jacobian);
        force_jacobian(
            d,
            t1,
            &self.q_iterate,
            &self.iterate,
            true,
            &self.at_end,
            &mut self.jacobian,
            &mut self.jacobian_term,
            &mut self.force_part,
            &mut self.fd_point,
            &mut self.fd_value,
        );
        for j in 0..n {
            for i in 0..n {
                let dfdx = self.jacobian_v[(i, j)] + h * theta * self.jacobian[(i, j)];
                self.w[j * n + i] = self.mass[(i, j)] - h * theta * dfdx;
            }
        }
        self.factor_w()?;
        for i in 0..n {
            let mut mv = 0.0;
            for j in 0..n {
                mv += self.mass[(i, j)] * (self.iterate[j] - self.v_start[j]);
            }
            self.rhs[i] = mv
                - h * (theta * self.at_end[i] + (1.0 - theta) * self.f_start[i] + self.control[i]);
        }
        lu_solve(&self.w, n, &self.piv, &mut self.rhs);
        for i in 0..n {
            free[i] = self.iterate[i] - self.rhs[i];
        }
        Ok(())
    }
}

/// out ← F(t, q, v) = F_ext(t) − F_int(t, q, v) − F_gyr(q, v); `part` holds
/// F_int, then F_gyr.
fn lagrangian_forces(
    d: &LagrangianNonlinear,
    t: f64,
    q: &[f64],
    v: &[f64],
    out: &mut [f64],
    part: &mut [f64],
) {
    match &d.fext {
        Some(f) => f.eval(t, out),
        None => out.iter_mut().for_each(|x| *x = 0.0),
    }
    if let Some(fi) = &d.fint {
        fi(t, q, v, part);
        out.iter_mut().zip(part.iter()).for_each(|(o, s)| *o -= s);
    }
    if let Some(fg) = &d.fgyr {
        fg(t, q, v, part);
        out.iter_mut().zip(part.iter()).for_each(|(o, s)| *o -= s);
    }
}

/// out ← ∂F/∂q (`wrt_q`) or ∂F/∂v of F = F_ext − F_int − F_gyr, from the
/// user's Jacobians when all needed ones are given (each into `term`), else
/// by forward differences around `f` = F(t, q, v): column c is
/// (F(x + dx e_c) − f)/dx, F evaluated at `shifted` into `fplus`.
#[allow(clippy::too_many_arguments)]
fn force_jacobian(
    d: &LagrangianNonlinear,
    t: f64,
    q: &[f64],
    v: &[f64],
    wrt_q: bool,
    f: &[f64],
    out: &mut DMatrix<f64>,
    term: &mut DMatrix<f64>,
    part: &mut [f64],
    shifted: &mut [f64],
    fplus: &mut [f64],
) {
    let (ji, jg) = if wrt_q {
        (&d.fint_jacobian_q, &d.fgyr_jacobian_q)
    } else {
        (&d.fint_jacobian_v, &d.fgyr_jacobian_v)
    };
    let int_ok = d.fint.is_none() || ji.is_some();
    let gyr_ok = d.fgyr.is_none() || jg.is_some();
    out.fill(0.0);
    if int_ok && gyr_ok {
        // ∂F/∂x = −∂F_int/∂x − ∂F_gyr/∂x.
        let given = [(d.fint.is_some(), ji), (d.fgyr.is_some(), jg)];
        for (present, j) in given {
            if let (true, Some(j)) = (present, j) {
                j(t, q, v, term);
                *out -= &*term;
            }
        }
        return;
    }
    let n = q.len();
    shifted.copy_from_slice(if wrt_q { q } else { v });
    for c in 0..n {
        let x0 = shifted[c];
        let dx = fd_step(x0);
        shifted[c] = x0 + dx;
        if wrt_q {
            lagrangian_forces(d, t, shifted, v, fplus, part);
        } else {
            lagrangian_forces(d, t, q, shifted, fplus, part);
        }
        shifted[c] = x0;
        for r in 0..n {
            out[(r, c)] = (fplus[r] - f[r]) / dx;
        }
    }
}
