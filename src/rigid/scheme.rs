//! Moreau–Jean θ-scheme for Newton–Euler bodies (the smooth part of a step).
//!
//! Over a step [t_k, t_{k+1}], h = t_{k+1} − t_k, with θ ∈ [0, 1]:
//!
//! * **free velocity** (no contact impulse):
//!   v_G,free = v_G,k + h g + (h/m) [(1−θ) F(t_k) + θ F(t_{k+1})],
//!   and Ω_free solves the implicit gyroscopic equation
//!   I (Ω_free − Ω_k) = h [T_θ − Ω_θ × I Ω_θ],  Ω_θ = (1−θ) Ω_k + θ Ω_free,
//!   T_θ = R_kᵀ [(1−θ) M(t_k) + θ M(t_{k+1})] (world torque into the body
//!   frame at the step's start), by Newton's method with the Jacobian
//!   I + hθ ([Ω_θ]× I − [I Ω_θ]×); a held input (F_u world, τ_u body
//!   frame, constant over the step) adds to the loads:
//!   F_θ + F_u and T_θ + τ_u;
//! * **velocity** v_{k+1} = v_free + M⁻¹ Hᵀ P with the contact impulses P of
//!   the step (see `one_step`; the impulse enters linearly, the gyroscopic
//!   term being frozen at its free value);
//! * **configuration**, with v̄ = (1−θ) v_k + θ v_{k+1}:
//!   x_{k+1} = x_k + h v̄_G, and the quaternion by the exponential map in
//!   the body frame, Q_{k+1} = Q_k ⊗ exp(½ h Ω̄) with
//!   exp(½ φ) = (cos(|φ|/2), sin(|φ|/2) φ/|φ|), then renormalised
//!   Q ← Q/|Q| (the exponential map keeps |Q| = 1 exactly in exact
//!   arithmetic; renormalising removes the round-off drift).
//!
//! θ = ½ is the implicit midpoint rule on Euler's equations: it keeps the
//! kinetic energy ½ Ωᵀ I Ω and |I Ω| of a torque-free body exactly (both are
//! quadratic invariants), and the scheme is of order 2 for smooth motions;
//! θ = 1 (and θ = 0) are of order 1. Siconos 4.4's `MoreauJeanOSI` for
//! Newton–Euler systems uses the same θ-weighting with a linearised
//! gyroscopic term instead of the Newton solve.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use super::body::{BodyState, HeldInput, RigidBody};
use super::error::{Result, RigidError};

/// Settings of the θ-scheme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonEulerScheme {
    /// θ ∈ [0, 1] (½ by default).
    pub theta: f64,
    /// Tolerance of the Newton solve on |G(Ω)| / max(|I Ω_k|, ε) where G is
    /// the gyroscopic residual.
    pub newton_tolerance: f64,
    /// Newton iteration limit.
    pub newton_max_iterations: usize,
}

impl Default for NewtonEulerScheme {
    fn default() -> Self {
        NewtonEulerScheme {
            theta: 0.5,
            newton_tolerance: 1e-14,
            newton_max_iterations: 30,
        }
    }
}

/// The free velocity of one body over a step, and the Newton iterations its
/// gyroscopic solve took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreeVelocity {
    /// v_G,free (world frame).
    pub velocity: Vector3<f64>,
    /// Ω_free (body frame).
    pub omega: Vector3<f64>,
    /// Newton iterations (0 when the gyroscopic term vanishes identically).
    pub iterations: usize,
    /// Final relative residual of the gyroscopic equation.
    pub residual: f64,
}

fn skew(a: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

impl NewtonEulerScheme {
    /// Checks θ and the Newton settings.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.theta) {
            return Err(RigidError::InvalidSetting {
                name: "theta",
                reason: format!("must lie in [0, 1], got {}", self.theta),
            });
        }
        if !(self.newton_tolerance.is_finite() && self.newton_tolerance > 0.0) {
            return Err(RigidError::InvalidSetting {
                name: "newton_tolerance",
                reason: format!("must be finite and > 0, got {}", self.newton_tolerance),
            });
        }
        if self.newton_max_iterations == 0 {
            return Err(RigidError::InvalidSetting {
                name: "newton_max_iterations",
                reason: "must be at least 1".into(),
            });
        }
        Ok(())
    }

    /// The free velocity of body `index` over [t, t + h] under gravity `g`.
    pub fn free_velocity(
        &self,
        index: usize,
        body: &RigidBody,
        state: &BodyState,
        t: f64,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<FreeVelocity> {
        self.free_velocity_held(index, body, state, t, h, gravity, None)
    }

    /// As [`NewtonEulerScheme::free_velocity`], with an input held over
    /// the step (none: exactly `free_velocity`).
    #[allow(clippy::too_many_arguments)]
    pub fn free_velocity_held(
        &self,
        index: usize,
        body: &RigidBody,
        state: &BodyState,
        t: f64,
        h: f64,
        gravity: &Vector3<f64>,
        held: Option<&HeldInput>,
    ) -> Result<FreeVelocity> {
        if body.fixed {
            return Ok(FreeVelocity {
                velocity: Vector3::zeros(),
                omega: Vector3::zeros(),
                iterations: 0,
                residual: 0.0,
            });
        }
        let th = self.theta;
        let mut force = (1.0 - th) * body.force.at(t) + th * body.force.at(t + h);
        if let Some(u) = held {
            force += u.force;
        }
        let velocity = state.velocity + h * gravity + (h / body.mass) * force;
        let torque_world = (1.0 - th) * body.torque.at(t) + th * body.torque.at(t + h);
        let mut torque = state.orientation.inverse_transform_vector(&torque_world);
        if let Some(u) = held {
            torque += u.torque;
        }
        let inertia = &body.inertia;
        let ok = inertia * state.omega;
        // G(Ω) = I (Ω − Ω_k) − h T + h Ω_θ × I Ω_θ.
        let residual_of = |w: &Vector3<f64>| {
            let wt = (1.0 - th) * state.omega + th * w;
            inertia * (w - state.omega) - h * torque + h * wt.cross(&(inertia * wt))
        };
        let scale = ok.norm().max(h * torque.norm()).max(f64::MIN_POSITIVE);
        // Explicit predictor.
        let mut w = state.omega + body.inverse_inertia() * (h * (torque - state.omega.cross(&ok)));
        let mut g = residual_of(&w);
        let mut iterations = 0;
        while g.norm() > self.newton_tolerance * scale {
            if iterations == self.newton_max_iterations {
                return Err(RigidError::Gyroscopic {
                    body: index,
                    iterations,
                    residual: g.norm() / scale,
                });
            }
            let wt = (1.0 - th) * state.omega + th * w;
            let jac = inertia + h * th * (skew(&wt) * inertia - skew(&(inertia * wt)));
            let Some(dw) = jac.lu().solve(&g) else {
                return Err(RigidError::Gyroscopic {
                    body: index,
                    iterations,
                    residual: g.norm() / scale,
                });
            };
            w -= dw;
            g = residual_of(&w);
            iterations += 1;
        }
        Ok(FreeVelocity {
            velocity,
            omega: w,
            iterations,
            residual: g.norm() / scale,
        })
    }

    /// The configuration update: from `state` (the step's start, velocities
    /// v_k) with the end velocities (v_{k+1}, Ω_{k+1}), writes the end state.
    pub fn advance(
        &self,
        state: &mut BodyState,
        velocity: Vector3<f64>,
        omega: Vector3<f64>,
        h: f64,
    ) {
        let th = self.theta;
        let vbar = (1.0 - th) * state.velocity + th * velocity;
        let wbar = (1.0 - th) * state.omega + th * omega;
        state.position += h * vbar;
        // UnitQuaternion::from_scaled_axis(φ) is exp(½ φ) as a quaternion.
        let mut q = state.orientation * UnitQuaternion::from_scaled_axis(h * wbar);
        q.renormalize();
        state.orientation = q;
        state.velocity = velocity;
        state.omega = omega;
    }

    /// One step of a body with no contact: free velocity, then the
    /// configuration update. Returns the Newton iterations.
    pub fn step_free(
        &self,
        index: usize,
        body: &RigidBody,
        state: &mut BodyState,
        t: f64,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<usize> {
        if body.fixed {
            return Ok(0);
        }
        let f = self.free_velocity(index, body, state, t, h, gravity)?;
        self.advance(state, f.velocity, f.omega, h);
        Ok(f.iterations)
    }
}
