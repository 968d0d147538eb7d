//! Contact points between bodies, their local frames and Jacobians.
//!
//! A contact joins a point p₁ on body 1 and a point p₂ on body 2 (world
//! frame) with a unit normal n pointing from body 1 toward body 2; the gap
//! is g = (p₂ − p₁)·n (negative when the shapes overlap). The local frame is
//! C = [n t₁ t₂], orthonormal and right-handed, and the relative velocity of
//! the contact in that frame is
//!
//! u = Cᵀ (v₂(p₂) − v₁(p₁)),  v_b(p) = v_G,b + ω_b × (p − x_G,b),
//!
//! normal first (u_N > 0: separating). Since ω × r = −[r]× R Ω, u is linear
//! in each body's velocity (v_G, Ω):
//!
//! u = J₂ (v_G,2, Ω₂) + J₁ (v_G,1, Ω₁),
//! J₂ = Cᵀ [I₃ | −[r₂]× R₂],  J₁ = −Cᵀ [I₃ | −[r₁]× R₁],  r_b = p_b − x_G,b,
//!
//! each a 3 × 6 block (seed 003, §2.2.3: the local frame's rotation applied
//! to the point's velocity, "assuming the local frame is not moving"). The
//! contact impulse r = (r_N, r_T1, r_T2) in the local frame acts on body b
//! as the generalised impulse J_bᵀ r (force C r at p_b, world frame; torque
//! in the body frame).

use nalgebra::{Matrix3, SMatrix, Vector3};

use super::body::BodyState;

/// A 3 × 6 contact Jacobian block of one body.
pub type ContactJacobian = SMatrix<f64, 3, 6>;

/// One contact point between two bodies, as a detector reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Index of body 1 (the normal points away from it).
    pub body1: usize,
    /// Index of body 2.
    pub body2: usize,
    /// Contact point on body 1, world frame.
    pub point1: Vector3<f64>,
    /// Contact point on body 2, world frame.
    pub point2: Vector3<f64>,
    /// Unit normal from body 1 toward body 2, world frame.
    pub normal: Vector3<f64>,
    /// Gap g = (p₂ − p₁)·n.
    pub gap: f64,
    /// Identifier that persists while the contact persists (same pair, same
    /// features), used to warm-start the solver.
    pub id: u64,
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Newton restitution coefficient e ∈ [0, 1].
    pub restitution: f64,
}

/// An orthonormal right-handed frame C = [n t₁ t₂] around a unit normal n.
///
/// t₁ is the normalised cross product of n with the world axis least
/// aligned with n (so |n × a| ≥ √(2/3)), t₂ = n × t₁.
pub fn contact_frame(n: &Vector3<f64>) -> Matrix3<f64> {
    let a = if n.x.abs() <= n.y.abs() && n.x.abs() <= n.z.abs() {
        Vector3::x()
    } else if n.y.abs() <= n.z.abs() {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = n.cross(&a).normalize();
    let t2 = n.cross(&t1);
    Matrix3::from_columns(&[*n, t1, t2])
}

/// The Jacobian block Cᵀ [I₃ | −[p − x_G]× R] of a body at world point p
/// (the sign of body 1, −1, is applied by the caller).
pub fn point_jacobian(
    frame: &Matrix3<f64>,
    state: &BodyState,
    p: &Vector3<f64>,
) -> ContactJacobian {
    let r = p - state.position;
    let rot = state.orientation.to_rotation_matrix();
    let skew = Matrix3::new(0.0, -r.z, r.y, r.z, 0.0, -r.x, -r.y, r.x, 0.0);
    let ct = frame.transpose();
    let mut j = ContactJacobian::zeros();
    j.fixed_view_mut::<3, 3>(0, 0).copy_from(&ct);
    j.fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&(-(ct * skew * rot.matrix())));
    j
}

impl Contact {
    /// The local frame C = [n t₁ t₂].
    pub fn frame(&self) -> Matrix3<f64> {
        contact_frame(&self.normal)
    }

    /// The two Jacobian blocks (J₁, J₂) for the bodies' states.
    pub fn jacobians(
        &self,
        state1: &BodyState,
        state2: &BodyState,
    ) -> (ContactJacobian, ContactJacobian) {
        let c = self.frame();
        (
            -point_jacobian(&c, state1, &self.point1),
            point_jacobian(&c, state2, &self.point2),
        )
    }

    /// The relative velocity u = Cᵀ (v₂(p₂) − v₁(p₁)) in the local frame.
    pub fn relative_velocity(&self, state1: &BodyState, state2: &BodyState) -> Vector3<f64> {
        self.frame().transpose()
            * (state2.point_velocity(&self.point2) - state1.point_velocity(&self.point1))
    }
}
