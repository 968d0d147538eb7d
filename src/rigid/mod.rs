//! Rigid bodies in 3D: Newton–Euler bodies, their time-stepping, contact
//! frames and Jacobians, and the one-step contact problem
//! (docs/rigid-bodies.md).
//!
//! * `body` — the immutable description ([`RigidBody`]) and the state
//!   ([`BodyState`]) of a body;
//! * `scheme` — the θ-scheme of the smooth motion (free velocity with the
//!   gyroscopic term, quaternion update by the exponential map);
//! * `contact` — contact points as detectors report them, the local frame
//!   and the 3 × 6 Jacobian blocks;
//! * `one_step` — the Moreau–Jean contact step (activation, Delassus
//!   assembly, NSGS, velocity and configuration update).
//!
//! Contact detection from shapes is in the `nonsmooth-collision` crate
//! (parry3d), which fills [`Contact`] records; this module depends on
//! nothing but nalgebra and the numerics layer.

mod body;
mod contact;
mod error;
mod islands;
mod one_step;
mod scheme;

pub use body::{BodyState, HeldInput, Load, RigidBody};
pub use contact::{contact_frame, point_jacobian, Contact, ContactJacobian};
pub use error::{Result, RigidError};
pub use islands::ContactOrder;
pub use one_step::{ContactSettings, ContactStep, StepReport};
pub use scheme::{FreeVelocity, NewtonEulerScheme};
