//! The D1-minus-linear scheme (Schindler and Acary 2014, time-discontinuous
//! Galerkin with piecewise-linear velocities; Siconos' D1MinusLinearOSI,
//! half-explicit at acceleration level) for `LagrangianLinearTi` systems
//! M v̇ = F(t, q, v) + g + Hᵀλ, F = F_ext − C v − K q, under linear
//! relations y = H q + b with Newton impact (or complementarity, e = 0)
//! laws. Non-impulsive contact forces act on the interval; impulses are
//! concentrated at its ends (the impulse at t_{k+1} is the start of the
//! next interval).
//!
//! One step from (q_k, v_k⁺) at t_k to t_{k+1} = t_k + h:
//!
//! 1. forces at t_k⁺: over the contacts closed and at rest at (q_k, v_k)
//!    (y ≤ its rounding bound and |ẏ| ≤ `rest_velocity`), the LCP
//!    0 ≤ H a ⊥ λ⁺ ≥ 0 with a = M⁻¹(F(t_k, q_k, v_k) + g + Hᵀλ⁺): a_k;
//! 2. v_{k,1} = v_k + h a_k, q_{k+1} = q_k + (h/2)(v_k + v_{k,1});
//! 3. forces at t_{k+1}⁻: the same LCP over the contacts closed and at rest
//!    at (q_{k+1}, v_{k,1}), with F(t_{k+1}, q_{k+1}, v_{k,1}): a_{k+1}⁻;
//! 4. v_{k+1}⁻ = v_k + (h/2)(a_k + a_{k+1}⁻) (Heun: exact for a constant
//!    force, like the position update);
//! 5. impact at t_{k+1}: over the contacts closed at q_{k+1}, the LCP
//!    0 ≤ ẏ_{k+1}⁺ + e ẏ_{k+1}⁻ ⊥ Λ ≥ 0 with ẏ⁻ = H v_{k+1}⁻ and
//!    v_{k+1}⁺ = v_{k+1}⁻ + M⁻¹ Σ Hᵀ Λ (Newton's law at the instant, with
//!    the velocity just before the impact).
//!
//! Steps 1, 3 and 5 are one-step problems assembled and solved by the
//! same [`OneStepProblem`] code as Moreau–Jean's, with W = M: the rows of
//! 1 and 3 at [`LawLevel::Acceleration`] (q = H M⁻¹ F), those of 5 at
//! [`LawLevel::Velocity`]. The recorded λ is the impulse Λ of step 5 (as
//! Moreau–Jean's); the forces λ± are kept as the next warm start
//! (`lambda_force`, part of the saved state).
//!
//! **Energy.** Between impacts, under a constant force and no force
//! problem, steps 2 and 4 are exact, so E = ½‖v‖²_M + V(q) is kept to
//! rounding. An impact changes the kinetic energy by
//! ½ Σ Λ (ẏ⁺ + ẏ⁻) = ½ Σ Λ (1 − e) ẏ⁻ for each row with Λ > 0: never
//! positive for one contact (Λ > 0 needs ẏ⁻ < 0), zero for e = 1. The
//! position is not projected: a contact closed at the end of a step stays
//! penetrated by at most h|ẏ⁻| (the positions drift while bounces
//! accumulate, as in Siconos 4.4).

use super::interaction_work::{InteractionWork, LawLevel};
use super::problem::OneStepProblem;
use super::schatzman_paoli::{check_scope, initial_force};
use super::system_work::SystemWork;
use super::{SchemeWork, SimulationError, TimeStepping, TimeSteppingSettings};
use crate::modelling::dynamical_system::DynamicalSystem;
use crate::modelling::model::Model;

/// Checks the model for the D1-minus-linear scheme.
pub(super) fn check_model(model: &Model) -> Result<(), SimulationError> {
    check_scope(model, "D1-minus-linear")
}

/// The force problem and the scratch of the D1-minus-linear steps.
pub(crate) struct D1Work {
    /// The acceleration-level problem (its own storage and warm starts).
    forces: OneStepProblem,
    /// Per system: a_k, the acceleration at the start of the step.
    acc_start: Vec<Vec<f64>>,
    /// Per system: a_{k+1}⁻.
    acc_end: Vec<Vec<f64>>,
    /// Per system: F at one instant.
    force: Vec<Vec<f64>>,
    /// |ẏ| below which a closed contact is at rest.
    rest_velocity: f64,
}

impl D1Work {
    pub(super) fn new(
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        settings: &TimeSteppingSettings,
        resp_fixed: &[bool],
    ) -> Result<Self, SimulationError> {
        let mut forces = OneStepProblem::new(
            model,
            inters,
            &settings.solver,
            settings.solver_settings,
            settings.assembly,
        )?;
        forces.set_fixed_blocks(resp_fixed);
        for w in inters.iter_mut() {
            w.lambda_force = vec![0.0; w.m];
        }
        let per_system = || sys.iter().map(|w| vec![0.0; w.n]).collect();
        Ok(D1Work {
            forces,
            acc_start: per_system(),
            acc_end: per_system(),
            force: per_system(),
            rest_velocity: settings.rest_velocity,
        })
    }

    /// Solves the force problem at t over the contacts closed and at rest in
    /// the interactions' current y, ẏ, with the free accelerations in the
    /// systems' `free`; `acc` ← free + Σ M⁻¹ Hᵀ λ.
    fn accelerations(
        &mut self,
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        t: f64,
        step: u64,
        at_end: bool,
    ) -> Result<(), SimulationError> {
        let mut any = false;
        for w in inters.iter_mut() {
            w.level = LawLevel::Acceleration;
            w.active = w.unilateral
                && (0..w.m)
                    .any(|r| w.y[r] <= w.y_noise[r] && w.ydot[r].abs() <= self.rest_velocity);
            any |= w.active;
            std::mem::swap(&mut w.lambda, &mut w.lambda_force);
        }
        let solved = if any {
            self.forces.solve(model, sys, inters, t, step).map(|_| ())
        } else {
            inters.iter_mut().for_each(|w| w.lambda.fill(0.0));
            Ok(())
        };
        for w in inters.iter_mut() {
            std::mem::swap(&mut w.lambda, &mut w.lambda_force);
        }
        solved?;
        let acc = if at_end {
            &mut self.acc_end
        } else {
            &mut self.acc_start
        };
        for (a, w) in acc.iter_mut().zip(sys) {
            a.copy_from_slice(&w.free);
        }
        for w in inters.iter().filter(|w| w.active) {
            for (k, &s) in w.systems.iter().enumerate() {
                let a = &mut acc[s];
                let n = a.len();
                for (c, col) in w.resp[k].as_slice().chunks_exact(n).enumerate() {
                    let l = w.lambda_force[c];
                    if l != 0.0 {
                        a.iter_mut().zip(col).for_each(|(x, r)| *x += r * l);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Every system's free acceleration M⁻¹ (F(t, q, v) + g) into its `free`.
fn free_accelerations(
    model: &Model,
    sys: &mut [SystemWork],
    force: &mut [Vec<f64>],
    t: f64,
) -> Result<(), SimulationError> {
    for ((w, s), f) in sys.iter_mut().zip(model.systems()).zip(force.iter_mut()) {
        let DynamicalSystem::LagrangianLinearTi(d) = &s.ds else {
            unreachable!("checked when the simulation was built")
        };
        initial_force(d, t, &w.q, &w.v, &w.control, f);
        w.solve_w(f);
        w.free.copy_from_slice(f);
    }
    Ok(())
}

impl TimeStepping {
    /// One D1-minus-linear step (module documentation). A step that fails
    /// leaves the state of its start.
    #[inline(never)]
    pub(super) fn integrate_d1_minus_linear(
        &mut self,
        t0: f64,
        t1: f64,
        step: u64,
    ) -> Result<(), SimulationError> {
        let h = self.settings.step;
        let TimeStepping {
            model,
            sys,
            inters,
            osnsp,
            stats,
            schemes,
            ..
        } = self;
        let model: &Model = model;
        let SchemeWork::D1MinusLinear(d1) = schemes else {
            unreachable!("the D1-minus-linear work exists for this scheme")
        };
        stats.newton_iterations += 1;
        for w in sys.iter_mut() {
            w.q_start.copy_from_slice(&w.q);
            w.v_start.copy_from_slice(&w.v);
        }
        let result = d1_step(d1, model, sys, inters, osnsp, t0, t1, h, step);
        if let Err(e) = result {
            // Back to the start: state, outputs.
            for w in sys.iter_mut() {
                w.restore_start();
            }
            for (w, inter) in inters.iter_mut().zip(model.interactions()) {
                w.update_output(&inter.relation, sys, t0);
            }
            return Err(e);
        }
        stats.steps += 1;
        stats.solves = osnsp.solves + d1.forces.solves;
        stats.solver_iterations = osnsp.iterations + d1.forces.iterations;
        Ok(())
    }
}

/// Steps 1–5 of the module documentation, from the start state in q, v.
#[allow(clippy::too_many_arguments)]
fn d1_step(
    d1: &mut D1Work,
    model: &Model,
    sys: &mut [SystemWork],
    inters: &mut [InteractionWork],
    osnsp: &mut OneStepProblem,
    t0: f64,
    t1: f64,
    h: f64,
    step: u64,
) -> Result<(), SimulationError> {
    // 1. Forces at t_k⁺ (y, ẏ are those of (q_k, v_k⁺)).
    free_accelerations(model, sys, &mut d1.force, t0)?;
    d1.accelerations(model, sys, inters, t0, step, false)?;
    // 2. v_{k,1} and q_{k+1}.
    for (w, a) in sys.iter_mut().zip(&d1.acc_start) {
        for i in 0..w.n {
            w.v[i] = w.v_start[i] + h * a[i];
            w.q[i] = w.q_start[i] + 0.5 * h * (w.v_start[i] + w.v[i]);
        }
    }
    for (w, inter) in inters.iter_mut().zip(model.interactions()) {
        w.update_output(&inter.relation, sys, t1);
    }
    // 3. Forces at t_{k+1}⁻.
    free_accelerations(model, sys, &mut d1.force, t1)?;
    d1.accelerations(model, sys, inters, t1, step, true)?;
    // 4. v_{k+1}⁻ into `free` (the impact problem's free unknown).
    for ((w, a0), a1) in sys.iter_mut().zip(&d1.acc_start).zip(&d1.acc_end) {
        for i in 0..w.n {
            w.free[i] = w.v_start[i] + 0.5 * h * (a0[i] + a1[i]);
        }
    }
    // 5. Impact at t_{k+1} over the contacts closed at q_{k+1}.
    let mut any = false;
    for w in inters.iter_mut() {
        w.level = LawLevel::Velocity;
        let mut pre = std::mem::take(&mut w.ydot_start);
        w.linear_output(sys, |s| &s.free, false, &mut pre);
        w.ydot_start = pre;
        w.active = w.unilateral && (0..w.m).any(|r| w.y[r] <= w.y_noise[r]);
        any |= w.active;
    }
    if any {
        osnsp.solve(model, sys, inters, t1, step)?;
    } else {
        inters.iter_mut().for_each(|w| w.lambda.fill(0.0));
    }
    for w in sys.iter_mut() {
        w.v.copy_from_slice(&w.free);
    }
    for w in inters.iter().filter(|w| w.active) {
        for (k, &s) in w.systems.iter().enumerate() {
            let v = &mut sys[s].v;
            let n = v.len();
            for (c, col) in w.resp[k].as_slice().chunks_exact(n).enumerate() {
                let l = w.lambda[c];
                if l != 0.0 {
                    v.iter_mut().zip(col).for_each(|(x, r)| *x += r * l);
                }
            }
        }
    }
    if let Some(w) = sys
        .iter()
        .find(|w| w.q.iter().chain(&w.v).any(|x| !x.is_finite()))
    {
        return Err(SimulationError::NonFinite {
            t: t1,
            step,
            object: w.name.clone(),
        });
    }
    for (w, inter) in inters.iter_mut().zip(model.interactions()) {
        w.update_output(&inter.relation, sys, t1);
    }
    Ok(())
}
