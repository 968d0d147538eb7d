//! The immutable description of a Newton–Euler rigid body and its state.
//!
//! A body's configuration is q = (x_G, Q): the position of its centre of
//! mass in the world frame and a unit quaternion Q rotating body-frame
//! vectors into the world frame (R(Q) a = Q a Q*). Its velocity is
//! v = (v_G, Ω): the velocity of the centre in the world frame and the
//! angular velocity in the body frame (ω = R Ω in the world frame).
//! The Newton–Euler equations are
//!
//! m v̇_G = F_ext(t),   I Ω̇ + Ω × I Ω = Rᵀ M_ext(t),   ẋ_G = v_G,   Q̇ = ½ Q ⊗ (0, Ω),
//!
//! with the mass m, the inertia I in the body frame (constant), the world
//! force F_ext (gravity m g included) and the world torque M_ext about the
//! centre of mass.

use std::fmt;
use std::sync::Arc;

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use super::error::{Result, RigidError};

/// A world-frame vector of time: a force or a torque.
#[derive(Clone, Default)]
pub enum Load {
    /// No load.
    #[default]
    None,
    /// A constant vector.
    Constant(Vector3<f64>),
    /// A function of time (an expression compiled by the scenario layer, or
    /// any callback).
    Function(Arc<dyn Fn(f64) -> Vector3<f64> + Send + Sync>),
}

impl Load {
    /// The load at time t.
    pub fn at(&self, t: f64) -> Vector3<f64> {
        match self {
            Load::None => Vector3::zeros(),
            Load::Constant(v) => *v,
            Load::Function(f) => f(t),
        }
    }
}

impl fmt::Debug for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::None => write!(f, "None"),
            Load::Constant(v) => write!(f, "Constant({}, {}, {})", v.x, v.y, v.z),
            Load::Function(_) => write!(f, "Function(..)"),
        }
    }
}

/// The input held on a body over a step (zero-order hold): a force
/// through the centre of mass, world frame (N), and a torque about the
/// centre of mass, **body frame** (N·m). Both enter the free velocity as
/// external loads, beside gravity and the body's own [`Load`]s:
/// F ← F_θ + F_u and T_θ ← R_kᵀ M_θ + τ_u (see `scheme`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeldInput {
    /// F_u, world frame.
    pub force: Vector3<f64>,
    /// τ_u, body frame.
    pub torque: Vector3<f64>,
}

/// The immutable description of one rigid body.
#[derive(Debug, Clone)]
pub struct RigidBody {
    /// Mass m > 0 (ignored for fixed bodies).
    pub mass: f64,
    /// Inertia about the centre of mass, in the body frame (symmetric,
    /// positive definite; ignored for fixed bodies).
    pub inertia: Matrix3<f64>,
    /// A fixed body never moves (ground, walls, terrain): infinite mass.
    pub fixed: bool,
    /// External force in the world frame, without gravity.
    pub force: Load,
    /// External torque about the centre of mass, in the world frame.
    pub torque: Load,
}

impl RigidBody {
    /// A free body of mass `mass` and body-frame inertia `inertia`.
    pub fn new(mass: f64, inertia: Matrix3<f64>) -> Self {
        RigidBody {
            mass,
            inertia,
            fixed: false,
            force: Load::None,
            torque: Load::None,
        }
    }

    /// A fixed body (infinite mass).
    pub fn fixed() -> Self {
        RigidBody {
            mass: f64::INFINITY,
            inertia: Matrix3::identity(),
            fixed: true,
            force: Load::None,
            torque: Load::None,
        }
    }

    /// A free body with principal moments of inertia (I₁, I₂, I₃) along
    /// the body axes.
    pub fn principal(mass: f64, moments: [f64; 3]) -> Self {
        Self::new(mass, Matrix3::from_diagonal(&Vector3::from(moments)))
    }

    /// Checks mass and inertia (body index `index` for the message).
    pub fn validate(&self, index: usize) -> Result<()> {
        if self.fixed {
            return Ok(());
        }
        let bad = |reason: String| RigidError::InvalidBody {
            body: index,
            reason,
        };
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(bad(format!(
                "mass must be finite and > 0, got {}",
                self.mass
            )));
        }
        if self.inertia.iter().any(|v| !v.is_finite()) {
            return Err(bad("inertia has a non-finite entry".into()));
        }
        let asym = (self.inertia - self.inertia.transpose()).abs().max();
        if asym > 1e-12 * self.inertia.abs().max() {
            return Err(bad(format!("inertia is not symmetric (by {asym:e})")));
        }
        if self.inertia.cholesky().is_none() {
            return Err(bad("inertia is not positive definite".into()));
        }
        Ok(())
    }

    /// The inverse of the inertia (zero for fixed bodies).
    pub fn inverse_inertia(&self) -> Matrix3<f64> {
        if self.fixed {
            return Matrix3::zeros();
        }
        self.inertia
            .cholesky()
            .map(|c| c.inverse())
            .unwrap_or_else(Matrix3::zeros)
    }

    /// 1/m (zero for fixed bodies).
    pub fn inverse_mass(&self) -> f64 {
        if self.fixed {
            0.0
        } else {
            1.0 / self.mass
        }
    }
}

/// The state of one body: configuration and velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyState {
    /// Centre of mass x_G, world frame.
    pub position: Vector3<f64>,
    /// Orientation Q (body → world).
    pub orientation: UnitQuaternion<f64>,
    /// Velocity of the centre v_G, world frame.
    pub velocity: Vector3<f64>,
    /// Angular velocity Ω, body frame.
    pub omega: Vector3<f64>,
}

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            position: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
            velocity: Vector3::zeros(),
            omega: Vector3::zeros(),
        }
    }
}

impl BodyState {
    /// A body at rest at `position` with orientation `orientation`.
    pub fn at(position: Vector3<f64>, orientation: UnitQuaternion<f64>) -> Self {
        BodyState {
            position,
            orientation,
            ..Default::default()
        }
    }

    /// Angular velocity in the world frame, ω = R Ω.
    pub fn omega_world(&self) -> Vector3<f64> {
        self.orientation * self.omega
    }

    /// Velocity of the material point at world position p:
    /// v_G + ω × (p − x_G).
    pub fn point_velocity(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.velocity + self.omega_world().cross(&(p - self.position))
    }

    /// Kinetic energy ½ m |v_G|² + ½ Ωᵀ I Ω (zero for fixed bodies).
    pub fn kinetic_energy(&self, body: &RigidBody) -> f64 {
        if body.fixed {
            return 0.0;
        }
        0.5 * body.mass * self.velocity.norm_squared()
            + 0.5 * self.omega.dot(&(body.inertia * self.omega))
    }

    /// Angular momentum about the world origin, world frame:
    /// m x_G × v_G + R I Ω.
    pub fn angular_momentum(&self, body: &RigidBody) -> Vector3<f64> {
        if body.fixed {
            return Vector3::zeros();
        }
        body.mass * self.position.cross(&self.velocity)
            + self.orientation * (body.inertia * self.omega)
    }

    /// Checks that every component is finite (body index for the message).
    pub fn validate(&self, index: usize) -> Result<()> {
        let q = self.orientation.quaternion();
        let finite = self.position.iter().all(|v| v.is_finite())
            && self.velocity.iter().all(|v| v.is_finite())
            && self.omega.iter().all(|v| v.is_finite())
            && q.coords.iter().all(|v| v.is_finite());
        if finite {
            Ok(())
        } else {
            Err(RigidError::InvalidBody {
                body: index,
                reason: "initial state has a non-finite component".into(),
            })
        }
    }
}
