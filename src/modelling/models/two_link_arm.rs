//! A planar two-link arm with revolute joints: its Lagrangian dynamics, the
//! kinematics of its elbow and tip, and the nonsmooth relations on their
//! heights.
//!
//! Conventions (SI units): the base joint is at the origin, x horizontal,
//! y vertical (up), gravity −g along y. θ₁ is the angle of link 1 from the
//! x-axis, θ₂ the angle of link 2 relative to link 1 (counter-clockwise
//! positive). Each link i has length lᵢ, mass mᵢ at its middle and moment of
//! inertia Iᵢ about its centre of mass. With h = m₂l₁l₂/2, c₂ = cos θ₂,
//! s₂ = sin θ₂, θ₁₂ = θ₁ + θ₂:
//!
//! ```text
//! M₁₁ = m₁l₁²/4 + m₂(l₁² + l₂²/4 + l₁l₂c₂) + I₁ + I₂
//! M₁₂ = M₂₁ = m₂l₂²/4 + h c₂ + I₂,     M₂₂ = m₂l₂²/4 + I₂
//! C(θ, θ̇) = [−h s₂ θ̇₂   −h s₂(θ̇₁ + θ̇₂)]
//!           [ h s₂ θ̇₁           0      ]      (Ṁ − 2C skew-symmetric)
//! G₁ = g[(m₁/2 + m₂)l₁ cos θ₁ + (m₂l₂/2) cos θ₁₂],  G₂ = g(m₂l₂/2) cos θ₁₂
//! M(θ)θ̈ + C(θ, θ̇)θ̇ + G(θ) = τ + ∇h(θ)ᵀλ
//! tip: x = l₁ cos θ₁ + l₂ cos θ₁₂,  y = l₁ sin θ₁ + l₂ sin θ₁₂
//! ```

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

use super::super::dynamical_system::{LagrangianNonlinear, Mass};
use super::super::error::ModelError;
use super::super::relation::LagrangianScleronomous;

/// The geometric and inertial data of a two-link arm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoLinkArm {
    /// l₁, l₂ (m).
    pub lengths: [f64; 2],
    /// m₁, m₂ (kg).
    pub masses: [f64; 2],
    /// I₁, I₂ about each link's centre of mass (kg·m²).
    pub inertias: [f64; 2],
    /// g (m/s²), acting along −y.
    pub gravity: f64,
}

/// A point of the arm whose height a relation watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmPoint {
    /// The joint between the links: y = l₁ sin θ₁.
    Elbow,
    /// The end effector: y = l₁ sin θ₁ + l₂ sin(θ₁ + θ₂).
    Tip,
}

impl TwoLinkArm {
    /// An arm with the given data, checked: lengths, masses and inertias
    /// positive and finite, gravity finite and ≥ 0.
    pub fn new(
        lengths: [f64; 2],
        masses: [f64; 2],
        inertias: [f64; 2],
        gravity: f64,
    ) -> Result<Self, ModelError> {
        let positive = [
            ("lengths", lengths[0]),
            ("lengths", lengths[1]),
            ("masses", masses[0]),
            ("masses", masses[1]),
        ];
        for (what, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(ModelError::InvalidValue {
                    object: "two-link arm".into(),
                    what,
                    value,
                    reason: "must be positive and finite",
                });
            }
        }
        for value in inertias {
            if !(value.is_finite() && value >= 0.0) {
                return Err(ModelError::InvalidValue {
                    object: "two-link arm".into(),
                    what: "inertias",
                    value,
                    reason: "must be finite and non-negative",
                });
            }
        }
        if !(gravity.is_finite() && gravity >= 0.0) {
            return Err(ModelError::InvalidValue {
                object: "two-link arm".into(),
                what: "gravity",
                value: gravity,
                reason: "must be finite and non-negative",
            });
        }
        Ok(TwoLinkArm {
            lengths,
            masses,
            inertias,
            gravity,
        })
    }

    /// The arm of the switching-control study: l = 0.5 m, m = 1 kg,
    /// I = 1 kg·m², g = 9.81 m/s².
    pub fn study() -> Self {
        TwoLinkArm {
            lengths: [0.5, 0.5],
            masses: [1.0, 1.0],
            inertias: [1.0, 1.0],
            gravity: 9.81,
        }
    }

    /// h = m₂l₁l₂/2, the coupling coefficient.
    #[inline]
    fn coupling(&self) -> f64 {
        0.5 * self.masses[1] * self.lengths[0] * self.lengths[1]
    }

    /// M(θ), symmetric positive definite.
    #[inline]
    pub fn mass(&self, q: &[f64]) -> [[f64; 2]; 2] {
        let [l1, l2] = self.lengths;
        let [m1, m2] = self.masses;
        let [i1, i2] = self.inertias;
        let hc = self.coupling() * q[1].cos();
        let m22 = 0.25 * m2 * l2 * l2 + i2;
        let m12 = m22 + hc;
        let m11 = 0.25 * m1 * l1 * l1 + m2 * (l1 * l1 + 0.25 * l2 * l2) + 2.0 * hc + i1 + i2;
        [[m11, m12], [m12, m22]]
    }

    /// C(θ, θ̇) in the Christoffel form (Ṁ − 2C skew-symmetric).
    #[inline]
    pub fn coriolis(&self, q: &[f64], v: &[f64]) -> [[f64; 2]; 2] {
        let hs = self.coupling() * q[1].sin();
        [[-hs * v[1], -hs * (v[0] + v[1])], [hs * v[0], 0.0]]
    }

    /// C(θ, θ̇)θ̇ = (−h s₂(2θ̇₁θ̇₂ + θ̇₂²), h s₂ θ̇₁²).
    #[inline]
    pub fn gyroscopic(&self, q: &[f64], v: &[f64]) -> [f64; 2] {
        let hs = self.coupling() * q[1].sin();
        [-hs * (2.0 * v[0] * v[1] + v[1] * v[1]), hs * v[0] * v[0]]
    }

    /// G(θ), the gradient of the potential energy.
    #[inline]
    pub fn gravity_torque(&self, q: &[f64]) -> [f64; 2] {
        let [l1, l2] = self.lengths;
        let [m1, m2] = self.masses;
        let g = self.gravity;
        let c12 = (q[0] + q[1]).cos();
        let g2 = g * 0.5 * m2 * l2 * c12;
        [g * (0.5 * m1 + m2) * l1 * q[0].cos() + g2, g2]
    }

    /// ∂G/∂θ.
    #[inline]
    pub fn gravity_jacobian(&self, q: &[f64]) -> [[f64; 2]; 2] {
        let [l1, l2] = self.lengths;
        let [m1, m2] = self.masses;
        let g = self.gravity;
        let s12 = (q[0] + q[1]).sin();
        let d2 = -g * 0.5 * m2 * l2 * s12;
        [[-g * (0.5 * m1 + m2) * l1 * q[0].sin() + d2, d2], [d2, d2]]
    }

    /// Kinetic plus potential energy ½θ̇ᵀMθ̇ + g[(m₁/2 + m₂)l₁ sin θ₁ + (m₂l₂/2) sin θ₁₂].
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        let m = self.mass(q);
        let kinetic =
            0.5 * (m[0][0] * v[0] * v[0] + 2.0 * m[0][1] * v[0] * v[1] + m[1][1] * v[1] * v[1]);
        let [l1, l2] = self.lengths;
        let [m1, m2] = self.masses;
        let potential = self.gravity
            * ((0.5 * m1 + m2) * l1 * q[0].sin() + 0.5 * m2 * l2 * (q[0] + q[1]).sin());
        kinetic + potential
    }

    /// The tip (x, y).
    #[inline]
    pub fn tip(&self, q: &[f64]) -> [f64; 2] {
        let [l1, l2] = self.lengths;
        let q12 = q[0] + q[1];
        [
            l1 * q[0].cos() + l2 * q12.cos(),
            l1 * q[0].sin() + l2 * q12.sin(),
        ]
    }

    /// J(θ) = ∂(x, y)/∂θ of the tip (row 0: x, row 1: y).
    #[inline]
    pub fn tip_jacobian(&self, q: &[f64]) -> [[f64; 2]; 2] {
        let [l1, l2] = self.lengths;
        let q12 = q[0] + q[1];
        let (s1, c1) = q[0].sin_cos();
        let (s12, c12) = q12.sin_cos();
        [
            [-l1 * s1 - l2 * s12, -l2 * s12],
            [l1 * c1 + l2 * c12, l2 * c12],
        ]
    }

    /// J̇(θ, θ̇), the time derivative of [`TwoLinkArm::tip_jacobian`].
    #[inline]
    pub fn tip_jacobian_rate(&self, q: &[f64], v: &[f64]) -> [[f64; 2]; 2] {
        let [l1, l2] = self.lengths;
        let q12 = q[0] + q[1];
        let w12 = v[0] + v[1];
        let (s1, c1) = q[0].sin_cos();
        let (s12, c12) = q12.sin_cos();
        [
            [-l1 * c1 * v[0] - l2 * c12 * w12, -l2 * c12 * w12],
            [-l1 * s1 * v[0] - l2 * s12 * w12, -l2 * s12 * w12],
        ]
    }

    /// The height of a point of the arm.
    #[inline]
    pub fn height(&self, point: ArmPoint, q: &[f64]) -> f64 {
        match point {
            ArmPoint::Elbow => self.lengths[0] * q[0].sin(),
            ArmPoint::Tip => self.tip(q)[1],
        }
    }

    /// ∂y/∂θ of a point's height.
    #[inline]
    pub fn height_gradient(&self, point: ArmPoint, q: &[f64]) -> [f64; 2] {
        match point {
            ArmPoint::Elbow => [self.lengths[0] * q[0].cos(), 0.0],
            ArmPoint::Tip => self.tip_jacobian(q)[1],
        }
    }

    /// The horizontal position of a point of the arm (along the ground line).
    #[inline]
    pub fn abscissa(&self, point: ArmPoint, q: &[f64]) -> f64 {
        match point {
            ArmPoint::Elbow => self.lengths[0] * q[0].cos(),
            ArmPoint::Tip => self.tip(q)[0],
        }
    }

    /// ∂x/∂θ of a point's horizontal position.
    #[inline]
    pub fn abscissa_gradient(&self, point: ArmPoint, q: &[f64]) -> [f64; 2] {
        match point {
            ArmPoint::Elbow => [-self.lengths[0] * q[0].sin(), 0.0],
            ArmPoint::Tip => self.tip_jacobian(q)[0],
        }
    }

    /// The arm as a nonlinear Lagrangian system M(θ)θ̈ + F_gyr + F_int = p
    /// with F_gyr = C(θ, θ̇)θ̇ and F_int = G(θ), all Jacobians analytic.
    pub fn system(&self, q0: DVector<f64>, v0: DVector<f64>) -> LagrangianNonlinear {
        let arm = *self;
        let mut ds = LagrangianNonlinear::new(
            q0,
            v0,
            Mass::Function(Arc::new(move |q: &[f64], out: &mut DMatrix<f64>| {
                let m = arm.mass(q);
                out[(0, 0)] = m[0][0];
                out[(0, 1)] = m[0][1];
                out[(1, 0)] = m[1][0];
                out[(1, 1)] = m[1][1];
            })),
        );
        ds.fgyr = Some(Arc::new(
            move |_t, q: &[f64], v: &[f64], out: &mut [f64]| {
                out.copy_from_slice(&arm.gyroscopic(q, v));
            },
        ));
        // ∂(Cθ̇)/∂θ: only θ₂ enters, through s₂.
        ds.fgyr_jacobian_q = Some(Arc::new(
            move |_t, q: &[f64], v: &[f64], out: &mut DMatrix<f64>| {
                let hc = arm.coupling() * q[1].cos();
                out[(0, 0)] = 0.0;
                out[(1, 0)] = 0.0;
                out[(0, 1)] = -hc * (2.0 * v[0] * v[1] + v[1] * v[1]);
                out[(1, 1)] = hc * v[0] * v[0];
            },
        ));
        ds.fgyr_jacobian_v = Some(Arc::new(
            move |_t, q: &[f64], v: &[f64], out: &mut DMatrix<f64>| {
                let hs = arm.coupling() * q[1].sin();
                out[(0, 0)] = -2.0 * hs * v[1];
                out[(0, 1)] = -2.0 * hs * (v[0] + v[1]);
                out[(1, 0)] = 2.0 * hs * v[0];
                out[(1, 1)] = 0.0;
            },
        ));
        ds.fint = Some(Arc::new(
            move |_t, q: &[f64], _v: &[f64], out: &mut [f64]| {
                out.copy_from_slice(&arm.gravity_torque(q));
            },
        ));
        ds.fint_jacobian_q = Some(Arc::new(
            move |_t, q: &[f64], _v: &[f64], out: &mut DMatrix<f64>| {
                let j = arm.gravity_jacobian(q);
                for (r, row) in j.iter().enumerate() {
                    for (c, x) in row.iter().enumerate() {
                        out[(r, c)] = *x;
                    }
                }
            },
        ));
        ds.fint_jacobian_v = Some(Arc::new(
            move |_t, _q: &[f64], _v: &[f64], out: &mut DMatrix<f64>| out.fill(0.0),
        ));
        ds
    }

    /// The height of `point` as a scleronomous relation y = h(θ),
    /// ∇h analytic (used with a unilateral law: y ≥ 0 keeps the point above
    /// the ground line through the base).
    pub fn height_relation(&self, point: ArmPoint) -> LagrangianScleronomous {
        let arm = *self;
        LagrangianScleronomous {
            output_dim: 1,
            h: Arc::new(move |q: &[f64], out: &mut [f64]| out[0] = arm.height(point, q)),
            jacobian: Some(Arc::new(move |q: &[f64], out: &mut DMatrix<f64>| {
                let g = arm.height_gradient(point, q);
                out[(0, 0)] = g[0];
                out[(0, 1)] = g[1];
            })),
        }
    }

    /// The contact of `point` with the ground for a 2D frictional contact:
    /// y = [height, horizontal position] (normal row, then tangent row),
    /// J = [∇height; ∇x] analytic.
    pub fn contact_relation(&self, point: ArmPoint) -> LagrangianScleronomous {
        let arm = *self;
        LagrangianScleronomous {
            output_dim: 2,
            h: Arc::new(move |q: &[f64], out: &mut [f64]| {
                out[0] = arm.height(point, q);
                out[1] = arm.abscissa(point, q);
            }),
            jacobian: Some(Arc::new(move |q: &[f64], out: &mut DMatrix<f64>| {
                let g = arm.height_gradient(point, q);
                let x = arm.abscissa_gradient(point, q);
                out[(0, 0)] = g[0];
                out[(0, 1)] = g[1];
                out[(1, 0)] = x[0];
                out[(1, 1)] = x[1];
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> TwoLinkArm {
        TwoLinkArm::new([0.4, 0.7], [1.3, 0.8], [0.2, 0.5], 9.81).unwrap()
    }

    const Q: [f64; 2] = [0.7, -1.1];
    const V: [f64; 2] = [1.3, -0.4];

    fn fd<const N: usize>(f: impl Fn(&[f64]) -> [f64; N], x: &[f64], c: usize) -> [f64; N] {
        let e = 1e-6;
        let mut p = x.to_vec();
        let mut m = x.to_vec();
        p[c] += e;
        m[c] -= e;
        let (fp, fm) = (f(&p), f(&m));
        let mut out = [0.0; N];
        for i in 0..N {
            out[i] = (fp[i] - fm[i]) / (2.0 * e);
        }
        out
    }

    #[test]
    fn jacobians_match_central_differences() {
        let a = arm();
        for c in 0..2 {
            let dg = fd(|q| a.gravity_torque(q), &Q, c);
            let dt = fd(|q| a.tip(q), &Q, c);
            let dgy = fd(|q| a.gyroscopic(q, &V), &Q, c);
            let dgv = fd(|v| a.gyroscopic(&Q, v), &V, c);
            let gj = a.gravity_jacobian(&Q);
            let tj = a.tip_jacobian(&Q);
            let sys = a.system(
                DVector::from_column_slice(&Q),
                DVector::from_column_slice(&V),
            );
            let mut jq = DMatrix::zeros(2, 2);
            let mut jv = DMatrix::zeros(2, 2);
            (sys.fgyr_jacobian_q.as_ref().unwrap())(0.0, &Q, &V, &mut jq);
            (sys.fgyr_jacobian_v.as_ref().unwrap())(0.0, &Q, &V, &mut jv);
            for r in 0..2 {
                assert!((gj[r][c] - dg[r]).abs() < 1e-8);
                assert!((tj[r][c] - dt[r]).abs() < 1e-8);
                assert!((jq[(r, c)] - dgy[r]).abs() < 1e-8);
                assert!((jv[(r, c)] - dgv[r]).abs() < 1e-8);
            }
        }
    }

    #[test]
    fn gravity_is_the_gradient_of_the_potential_and_c_is_skew_compatible() {
        let a = arm();
        let pot = |q: &[f64]| [a.energy(q, &[0.0, 0.0])];
        let g = a.gravity_torque(&Q);
        for (c, gc) in g.iter().enumerate() {
            assert!((fd(pot, &Q, c)[0] - gc).abs() < 1e-8);
        }
        // Ṁ − 2C is skew-symmetric, and C θ̇ is the gyroscopic force.
        let dm = fd(|q| a.mass(q)[0], &Q, 1);
        let dm2 = fd(|q| a.mass(q)[1], &Q, 1);
        let mdot = [[dm[0] * V[1], dm[1] * V[1]], [dm2[0] * V[1], dm2[1] * V[1]]];
        let c = a.coriolis(&Q, &V);
        let n = [
            [mdot[0][0] - 2.0 * c[0][0], mdot[0][1] - 2.0 * c[0][1]],
            [mdot[1][0] - 2.0 * c[1][0], mdot[1][1] - 2.0 * c[1][1]],
        ];
        assert!(n[0][0].abs() < 1e-8 && n[1][1].abs() < 1e-8);
        assert!((n[0][1] + n[1][0]).abs() < 1e-8);
        let cv = a.gyroscopic(&Q, &V);
        for (r, row) in c.iter().enumerate() {
            assert!((row[0] * V[0] + row[1] * V[1] - cv[r]).abs() < 1e-12);
        }
        // J̇ by differentiating J along the velocity.
        let jr = a.tip_jacobian_rate(&Q, &V);
        let e = 1e-6;
        let qp = [Q[0] + e * V[0], Q[1] + e * V[1]];
        let qm = [Q[0] - e * V[0], Q[1] - e * V[1]];
        let (jp, jm) = (a.tip_jacobian(&qp), a.tip_jacobian(&qm));
        for r in 0..2 {
            for c in 0..2 {
                assert!((jr[r][c] - (jp[r][c] - jm[r][c]) / (2.0 * e)).abs() < 1e-7);
            }
        }
    }

    #[test]
    fn bad_data_is_refused() {
        assert!(TwoLinkArm::new([0.0, 1.0], [1.0, 1.0], [1.0, 1.0], 9.81).is_err());
        assert!(TwoLinkArm::new([1.0, 1.0], [1.0, f64::NAN], [1.0, 1.0], 9.81).is_err());
        assert!(TwoLinkArm::new([1.0, 1.0], [1.0, 1.0], [-1.0, 1.0], 9.81).is_err());
        assert!(TwoLinkArm::new([1.0, 1.0], [1.0, 1.0], [1.0, 1.0], -1.0).is_err());
    }
}
