//! The Schatzman–Paoli scheme: a two-step (central-difference) scheme on
//! positions with the impact law written at position level (Paoli and
//! Schatzman 2002; Siconos' SchatzmanPaoliOSI), for `LagrangianLinearTi`
//! systems M q̈ + C q̇ + K q = F_ext(t) + g + p under linear relations
//! y = H q + b with Newton impact (or complementarity, e = 0) laws.
//!
//! One step from t_k to t_{k+1} = t_k + h, with θ ∈ [0, 1] weighting the
//! stiffness and the external forces over t_{k−1}, t_k, t_{k+1}:
//!
//! ```text
//! M(q_{k+1} − 2q_k + q_{k−1}) + (h/2) C (q_{k+1} − q_{k−1})
//!   + h² K (θ q_{k+1} + (1 − 2θ) q_k + θ q_{k−1})
//!   = h² (θ F_{k+1} + (1 − 2θ) F_k + θ F_{k−1} + g) + Σ Hᵀ Λ_{k+1},
//! ```
//!
//! 0 ≤ y_{k+1} + e y_{k−1} ⊥ Λ_{k+1} ≥ 0 on the rows of the active
//! interactions (y_j = H q_j + b; for e > 0 this is g((q_{k+1} + e q_{k−1})
//! / (1 + e)) ≥ 0, the position-level form of Newton's law).
//!
//! With W = M + (h/2) C + h²θ K (factored once) and q_free = W⁻¹[M(2q_k −
//! q_{k−1}) + (h/2) C q_{k−1} − h² K((1 − 2θ) q_k + θ q_{k−1}) + h²(…F…)],
//! q_{k+1} = q_free + W⁻¹ Σ Hᵀ Λ and the one-step problem is the LCP
//! w = H W⁻¹ Hᵀ Λ + (H q_free + b + e y_{k−1}), assembled and solved by the
//! same [`OneStepProblem`] as Moreau–Jean's (rows at
//! [`LawLevel::Position`]). Λ is a position-level multiplier (an impulse
//! times h, in mass × length), recorded as the interaction's λ.
//!
//! The velocity is the centred difference v_{k+1} = (q_{k+1} − q_{k−1}) /
//! (2h) (a second-order value of v(t_k), as Siconos 4.4 records it), used
//! for ẏ = H v and nowhere in the recursion.
//!
//! **Start.** The first step needs q_{−1}: [`SchatzmanPaoliStart::Taylor`]
//! takes q_{−1} = q₀ − h v₀ + (h²/2) M⁻¹ F(t₀, q₀, v₀), so that the first
//! free step is q₁ = q₀ + h v₀ + (h²/2) a₀ (exact for a constant force);
//! [`SchatzmanPaoliStart::Siconos`] takes q_{−1} = q₀ − h v₀ as Siconos
//! 4.4 does. q_{k−1} is part of the saved state.
//!
//! **Activation.** An interaction enters the problem when some row has
//! H q_free + b + e y_{k−1} ≤ 0 (the law would be violated without it) or
//! is closed at t_k (y_k ≤ its rounding bound); after the solve, an
//! interaction left out whose new positions violate the law
//! (y_{k+1} + e y_{k−1} < −10⁻¹² × its scale: a contact pushed shut by its
//! neighbours) joins and the problem is solved again, so that the result
//! satisfies the law on every row, as the LCP over all rows would; any
//! other row has Λ = 0.
//!
//! **Energy.** For C = K = 0 and a constant force F = −∇V, multiplying
//! the step by (q_{k+1} − q_{k−1}) / (2h²) gives the discrete balance
//! E_{k+½} − E_{k−½} = Σ Λ·(y_{k+1} − y_{k−1}) / (2h²), with
//! E_{k+½} = ½ ‖(q_{k+1} − q_k)/h‖²_M + V((q_{k+1} + q_k)/2). With Λ > 0
//! the law gives y_{k+1} = −e y_{k−1}, so the change is
//! −(1 + e) Λ y_{k−1} / (2h²): never positive when y_{k−1} ≥ 0, positive
//! when the contact was already penetrated two steps before (the second
//! step of a typical two-step impact). The scheme guarantees the balance,
//! not a monotone energy.

use super::interaction_work::{LawLevel, RowKind};
use super::{SchatzmanPaoliStart, SchemeWork, SimulationError, TimeStepping};
use crate::modelling::dynamical_system::DynamicalSystem;
use crate::modelling::law::NonsmoothLaw;
use crate::modelling::model::Model;
use crate::modelling::relation::Relation;

/// Checks that a model is in the scope of the Schatzman–Paoli and
/// D1-minus-linear schemes: `LagrangianLinearTi` systems, linear Lagrangian
/// relations, Newton impact or complementarity laws.
pub(super) fn check_scope(model: &Model, scheme: &str) -> Result<(), SimulationError> {
    for s in model.systems() {
        match &s.ds {
            DynamicalSystem::LagrangianLinearTi(_) => {}
            DynamicalSystem::LagrangianNonlinear(_) => {
                return Err(SimulationError::Unsupported(format!(
                    "system '{}': the {scheme} scheme handles lagrangian_linear systems only \
                     (nonlinear Lagrangian systems: use Moreau–Jean)",
                    s.name
                )))
            }
            _ => {
                return Err(SimulationError::Unsupported(format!(
                    "system '{}': the {scheme} scheme is for Lagrangian systems; a first-order \
                     system needs the Moreau–Jean setting (Euler–Moreau or zero-order hold)",
                    s.name
                )))
            }
        }
    }
    for i in model.interactions() {
        if !matches!(i.relation, Relation::LagrangianLinearTi(_)) {
            return Err(SimulationError::Unsupported(format!(
                "interaction '{}': the {scheme} scheme handles linear Lagrangian relations \
                 (y = H q + b) only",
                i.name
            )));
        }
        match &i.law {
            NonsmoothLaw::NewtonImpact { .. } | NonsmoothLaw::Complementarity { .. } => {}
            NonsmoothLaw::NewtonImpactFriction { .. } => {
                return Err(SimulationError::Unsupported(format!(
                    "interaction '{}': friction is not implemented with the {scheme} scheme \
                     (use Moreau–Jean)",
                    i.name
                )))
            }
            _ => {
                return Err(SimulationError::Unsupported(format!(
                    "interaction '{}': the {scheme} scheme handles newton_impact and \
                     complementarity laws only",
                    i.name
                )))
            }
        }
    }
    Ok(())
}

/// Checks the model for the Schatzman–Paoli scheme.
pub(super) fn check_model(model: &Model) -> Result<(), SimulationError> {
    check_scope(model, "Schatzman–Paoli")
}

/// Scratch of the Schatzman–Paoli steps, sized once.
pub(crate) struct SpWork {
    /// Per system: the right-hand side, then q_free.
    rhs: Vec<Vec<f64>>,
    /// Per system: F_ext at one instant.
    force: Vec<Vec<f64>>,
    /// Per system: the new q before it is committed.
    next: Vec<Vec<f64>>,
    /// Per interaction: H q_free + b.
    test: Vec<Vec<f64>>,
}

impl SpWork {
    pub(super) fn new(
        sys: &[super::system_work::SystemWork],
        inters: &mut [super::interaction_work::InteractionWork],
    ) -> Self {
        for w in inters.iter_mut() {
            w.level = LawLevel::Position;
        }
        SpWork {
            rhs: sys.iter().map(|w| vec![0.0; w.n]).collect(),
            force: sys.iter().map(|w| vec![0.0; w.n]).collect(),
            next: sys.iter().map(|w| vec![0.0; w.n]).collect(),
            test: inters.iter().map(|w| vec![0.0; w.m]).collect(),
        }
    }
}

impl TimeStepping {
    /// One Schatzman–Paoli step (module documentation). A step that fails
    /// leaves the state of its start.
    #[inline(never)]
    pub(super) fn integrate_schatzman_paoli(
        &mut self,
        t0: f64,
        t1: f64,
        step: u64,
    ) -> Result<(), SimulationError> {
        let (h, theta) = (self.settings.step, self.settings.theta);
        let first = self.tick == self.t0_tick;
        let start = self.settings.schatzman_paoli_start;
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
        let SchemeWork::SchatzmanPaoli(sp) = schemes else {
            unreachable!("the Schatzman–Paoli work exists for this scheme")
        };
        stats.newton_iterations += 1;
        for (k, (w, s)) in sys.iter_mut().zip(model.systems()).enumerate() {
            let DynamicalSystem::LagrangianLinearTi(d) = &s.ds else {
                unreachable!("checked when the simulation was built")
            };
            let n = w.n;
            w.q_start.copy_from_slice(&w.q);
            w.v_start.copy_from_slice(&w.v);
            let (rhs, f) = (&mut sp.rhs[k], &mut sp.force[k]);
            if first {
                // q_{−1} from the start rule.
                for i in 0..n {
                    w.q_prev[i] = w.q[i] - h * w.v[i];
                }
                if start == SchatzmanPaoliStart::Taylor {
                    // a₀ = M⁻¹ (F_ext(t₀) + g − C v₀ − K q₀) (first step only).
                    initial_force(d, t0, &w.q, &w.v, &w.control, f);
                    let a = d
                        .mass
                        .clone()
                        .lu()
                        .solve(&nalgebra::DVector::from_column_slice(f))
                        .ok_or_else(|| SimulationError::SingularIterationMatrix {
                            system: w.name.clone(),
                        })?;
                    for i in 0..n {
                        w.q_prev[i] += 0.5 * h * h * a[i];
                    }
                }
            }
            // rhs = M(2q_k − q_{k−1}) + (h/2) C q_{k−1} − h² K((1 − 2θ) q_k + θ q_{k−1})
            //       + h²(θ F_{k+1} + (1 − 2θ) F_k + θ F_{k−1} + g).
            rhs.fill(0.0);
            for j in 0..n {
                let x = 2.0 * w.q[j] - w.q_prev[j];
                for i in 0..n {
                    rhs[i] += d.mass[(i, j)] * x;
                }
            }
            if let Some(c) = &d.damping {
                for j in 0..n {
                    let x = 0.5 * h * w.q_prev[j];
                    for i in 0..n {
                        rhs[i] += c[(i, j)] * x;
                    }
                }
            }
            if let Some(kk) = &d.stiffness {
                for j in 0..n {
                    let x = h * h * ((1.0 - 2.0 * theta) * w.q[j] + theta * w.q_prev[j]);
                    for i in 0..n {
                        rhs[i] -= kk[(i, j)] * x;
                    }
                }
            }
            if let Some(fe) = &d.fext {
                if fe.is_constant() {
                    fe.eval(t1, f);
                    for i in 0..n {
                        rhs[i] += h * h * f[i];
                    }
                } else {
                    for (t, weight) in [(t1, theta), (t0, 1.0 - 2.0 * theta), (t0 - h, theta)] {
                        fe.eval(t, f);
                        for i in 0..n {
                            rhs[i] += h * h * weight * f[i];
                        }
                    }
                }
            }
            if w.has_control {
                for i in 0..n {
                    rhs[i] += h * h * w.control[i];
                }
            }
            w.solve_w(rhs);
            w.free.copy_from_slice(rhs);
        }
        // The law's earlier value y_{k−1}, and activation.
        let mut any = false;
        for (a, w) in inters.iter_mut().enumerate() {
            let mut yp = std::mem::take(&mut w.ydot_start);
            w.linear_output(sys, |s| &s.q_prev, true, &mut yp);
            w.ydot_start = yp;
            w.level = LawLevel::Position;
            let test = &mut sp.test[a];
            w.linear_output(sys, |s| &s.free, true, test);
            w.active = (0..w.m).any(|r| {
                w.rows[r] == RowKind::Complementarity
                    && (test[r] + w.restitution * w.ydot_start[r] <= 0.0 || w.y[r] <= w.y_noise[r])
            });
            any |= w.active;
        }
        // Solve; then any inactive row the new positions violate
        // (y_{k+1} + e y_{k−1} < 0 beyond rounding, a contact pushed shut
        // by its neighbours) joins the problem, which is solved again: at
        // most once per interaction.
        for _ in 0..=inters.len() {
            if any {
                osnsp.solve(model, sys, inters, t1, step)?;
            } else {
                for w in inters.iter_mut() {
                    w.lambda.fill(0.0);
                }
            }
            // q_{k+1} = q_free + Σ W⁻¹ Hᵀ Λ, checked before it is committed.
            for (k, w) in sys.iter().enumerate() {
                sp.next[k].copy_from_slice(&w.free);
            }
            for w in inters.iter().filter(|w| w.active) {
                for (k, &s) in w.systems.iter().enumerate() {
                    let next = &mut sp.next[s];
                    let n = next.len();
                    for (c, col) in w.resp[k].as_slice().chunks_exact(n).enumerate() {
                        let l = w.lambda[c];
                        if l != 0.0 {
                            next.iter_mut().zip(col).for_each(|(x, r)| *x += r * l);
                        }
                    }
                }
            }
            let mut grown = false;
            for (a, w) in inters.iter_mut().enumerate() {
                if w.active {
                    continue;
                }
                let test = &mut sp.test[a];
                w.linear_output_of(&sp.next, true, test);
                let violated = (0..w.m).any(|r| {
                    let value = test[r] + w.restitution * w.ydot_start[r];
                    let scale = test[r].abs() + w.e[r].abs() + w.y_noise[r];
                    w.rows[r] == RowKind::Complementarity && value < -1e-12 * scale
                });
                if violated {
                    w.active = true;
                    grown = true;
                }
            }
            if !grown {
                break;
            }
            any = true;
        }
        if let Some(k) = sp
            .next
            .iter()
            .position(|q| q.iter().any(|x| !x.is_finite()))
        {
            return Err(SimulationError::NonFinite {
                t: t1,
                step,
                object: sys[k].name.clone(),
            });
        }
        for (k, w) in sys.iter_mut().enumerate() {
            let next = &sp.next[k];
            for i in 0..w.n {
                w.v[i] = (next[i] - w.q_prev[i]) / (2.0 * h);
            }
            w.q.copy_from_slice(next);
            w.q_prev.copy_from_slice(&w.q_start);
        }
        for (w, inter) in inters.iter_mut().zip(model.interactions()) {
            w.update_output(&inter.relation, sys, t1);
        }
        stats.steps += 1;
        stats.solves = osnsp.solves;
        stats.solver_iterations = osnsp.iterations;
        Ok(())
    }
}

/// out ← F_ext(t) + g − C v − K q of a linear time-invariant system.
pub(super) fn initial_force(
    d: &crate::modelling::dynamical_system::LagrangianLinearTi,
    t: f64,
    q: &[f64],
    v: &[f64],
    g: &[f64],
    out: &mut [f64],
) {
    let n = q.len();
    match &d.fext {
        Some(f) => f.eval(t, out),
        None => out.fill(0.0),
    }
    for i in 0..n {
        out[i] += g[i];
    }
    if let Some(c) = &d.damping {
        for j in 0..n {
            for i in 0..n {
                out[i] -= c[(i, j)] * v[j];
            }
        }
    }
    if let Some(k) = &d.stiffness {
        for j in 0..n {
            for i in 0..n {
                out[i] -= k[(i, j)] * q[j];
            }
        }
    }
}
