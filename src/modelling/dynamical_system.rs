//! Dynamical systems: the smooth part of the model, between nonsmooth
//! events. Each one owns its initial state; the simulation copies it.
//!
//! | kind | equation |
//! |---|---|
//! | [`FirstOrderLinear`] | ẋ = A(t) x + b(t) + r |
//! | [`FirstOrderNonlinear`] | ẋ = f(t, x) + r |
//! | [`LagrangianLinearTi`] | M v̇ + C v + K q = F_ext(t) + p,  q̇ = v |
//! | [`LagrangianNonlinear`] | M(q) v̇ + F_gyr(q, v) + F_int(t, q, v) = F_ext(t) + p,  q̇ = v |
//!
//! r and p are the inputs the interactions send to the system.

use nalgebra::{DMatrix, DVector};

use super::error::{check_finite_values, check_size, ModelError, Result};
use super::functions::{
    ForceFn, ForceJacobianFn, MassFn, StateFn, StateJacobianFn, TimeMatrix, TimeVector,
};

/// ẋ = A(t) x + b(t) + r. Time-invariant when A and b are constant.
#[derive(Debug, Clone)]
pub struct FirstOrderLinear {
    /// Initial state x(t₀).
    pub x0: DVector<f64>,
    /// A(t), n × n.
    pub a: TimeMatrix,
    /// b(t), length n (absent: zero).
    pub b: Option<TimeVector>,
}

impl FirstOrderLinear {
    /// The time-invariant system ẋ = A x + r.
    pub fn new(x0: DVector<f64>, a: DMatrix<f64>) -> Self {
        FirstOrderLinear {
            x0,
            a: TimeMatrix::Constant(a),
            b: None,
        }
    }

    /// Adds the drift b(t).
    pub fn with_b(mut self, b: TimeVector) -> Self {
        self.b = Some(b);
        self
    }

    /// Replaces A by a function of time.
    pub fn with_a(mut self, a: TimeMatrix) -> Self {
        self.a = a;
        self
    }

    /// True when A and b do not depend on time.
    pub fn is_time_invariant(&self) -> bool {
        self.a.is_constant() && self.b.as_ref().is_none_or(|b| b.is_constant())
    }
}

/// ẋ = f(t, x) + r, with the Jacobian ∂f/∂x given or by finite differences.
#[derive(Clone)]
pub struct FirstOrderNonlinear {
    /// Initial state x(t₀).
    pub x0: DVector<f64>,
    /// The vector field f(t, x).
    pub f: StateFn,
    /// ∂f/∂x; when absent, forward differences are used.
    pub jacobian: Option<StateJacobianFn>,
}

impl std::fmt::Debug for FirstOrderNonlinear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FirstOrderNonlinear(n = {}, jacobian: {})",
            self.x0.len(),
            self.jacobian.is_some()
        )
    }
}

/// M v̇ + C v + K q = F_ext(t) + p, q̇ = v, with constant M (symmetric
/// positive definite), C and K.
#[derive(Debug, Clone)]
pub struct LagrangianLinearTi {
    /// Initial position q(t₀).
    pub q0: DVector<f64>,
    /// Initial velocity v(t₀).
    pub v0: DVector<f64>,
    /// Mass matrix M.
    pub mass: DMatrix<f64>,
    /// Stiffness K (absent: zero).
    pub stiffness: Option<DMatrix<f64>>,
    /// Damping C (absent: zero).
    pub damping: Option<DMatrix<f64>>,
    /// External force F_ext(t) (absent: zero).
    pub fext: Option<TimeVector>,
}

impl LagrangianLinearTi {
    /// A free body: M v̇ = p.
    pub fn new(q0: DVector<f64>, v0: DVector<f64>, mass: DMatrix<f64>) -> Self {
        LagrangianLinearTi {
            q0,
            v0,
            mass,
            stiffness: None,
            damping: None,
            fext: None,
        }
    }

    /// Adds the stiffness K.
    pub fn with_stiffness(mut self, k: DMatrix<f64>) -> Self {
        self.stiffness = Some(k);
        self
    }

    /// Adds the damping C.
    pub fn with_damping(mut self, c: DMatrix<f64>) -> Self {
        self.damping = Some(c);
        self
    }

    /// Adds the external force F_ext(t).
    pub fn with_fext(mut self, f: TimeVector) -> Self {
        self.fext = Some(f);
        self
    }
}

/// The mass matrix of a nonlinear Lagrangian system.
#[derive(Clone)]
pub enum Mass {
    /// Constant M.
    Constant(DMatrix<f64>),
    /// M(q).
    Function(MassFn),
}

/// M(q) v̇ + F_gyr(q, v) + F_int(t, q, v) = F_ext(t) + p, q̇ = v.
///
/// The Jacobians of F_int and F_gyr with respect to q and v are used by the
/// Newton loop of Moreau–Jean; absent ones are computed by forward
/// differences.
#[derive(Clone)]
pub struct LagrangianNonlinear {
    /// Initial position q(t₀).
    pub q0: DVector<f64>,
    /// Initial velocity v(t₀).
    pub v0: DVector<f64>,
    /// M or M(q).
    pub mass: Mass,
    /// Nonlinear inertia F_gyr(q, v) (the `t` argument is ignored).
    pub fgyr: Option<ForceFn>,
    /// Internal forces F_int(t, q, v).
    pub fint: Option<ForceFn>,
    /// External forces F_ext(t).
    pub fext: Option<TimeVector>,
    /// ∂F_int/∂q.
    pub fint_jacobian_q: Option<ForceJacobianFn>,
    /// ∂F_int/∂v.
    pub fint_jacobian_v: Option<ForceJacobianFn>,
    /// ∂F_gyr/∂q.
    pub fgyr_jacobian_q: Option<ForceJacobianFn>,
    /// ∂F_gyr/∂v.
    pub fgyr_jacobian_v: Option<ForceJacobianFn>,
}

impl LagrangianNonlinear {
    /// A system with mass M(q) and no forces yet.
    pub fn new(q0: DVector<f64>, v0: DVector<f64>, mass: Mass) -> Self {
        LagrangianNonlinear {
            q0,
            v0,
            mass,
            fgyr: None,
            fint: None,
            fext: None,
            fint_jacobian_q: None,
            fint_jacobian_v: None,
            fgyr_jacobian_q: None,
            fgyr_jacobian_v: None,
        }
    }
}

impl std::fmt::Debug for LagrangianNonlinear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LagrangianNonlinear(n = {})", self.q0.len())
    }
}

/// A dynamical system of one of the four kinds.
#[derive(Debug, Clone)]
pub enum DynamicalSystem {
    /// ẋ = A(t) x + b(t) + r.
    FirstOrderLinear(FirstOrderLinear),
    /// ẋ = f(t, x) + r.
    FirstOrderNonlinear(FirstOrderNonlinear),
    /// M v̇ + C v + K q = F_ext(t) + p.
    LagrangianLinearTi(LagrangianLinearTi),
    /// M(q) v̇ + F_gyr + F_int = F_ext(t) + p.
    LagrangianNonlinear(LagrangianNonlinear),
}

impl From<FirstOrderLinear> for DynamicalSystem {
    fn from(ds: FirstOrderLinear) -> Self {
        DynamicalSystem::FirstOrderLinear(ds)
    }
}
impl From<FirstOrderNonlinear> for DynamicalSystem {
    fn from(ds: FirstOrderNonlinear) -> Self {
        DynamicalSystem::FirstOrderNonlinear(ds)
    }
}
impl From<LagrangianLinearTi> for DynamicalSystem {
    fn from(ds: LagrangianLinearTi) -> Self {
        DynamicalSystem::LagrangianLinearTi(ds)
    }
}
impl From<LagrangianNonlinear> for DynamicalSystem {
    fn from(ds: LagrangianNonlinear) -> Self {
        DynamicalSystem::LagrangianNonlinear(ds)
    }
}

impl DynamicalSystem {
    /// Dimension: n of x for first-order systems, of q (and v) for Lagrangian ones.
    pub fn dim(&self) -> usize {
        match self {
            DynamicalSystem::FirstOrderLinear(d) => d.x0.len(),
            DynamicalSystem::FirstOrderNonlinear(d) => d.x0.len(),
            DynamicalSystem::LagrangianLinearTi(d) => d.q0.len(),
            DynamicalSystem::LagrangianNonlinear(d) => d.q0.len(),
        }
    }

    /// True for Lagrangian systems (state q, v).
    pub fn is_lagrangian(&self) -> bool {
        matches!(
            self,
            DynamicalSystem::LagrangianLinearTi(_) | DynamicalSystem::LagrangianNonlinear(_)
        )
    }

    /// A short name of the kind, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            DynamicalSystem::FirstOrderLinear(_) => "first-order linear",
            DynamicalSystem::FirstOrderNonlinear(_) => "first-order nonlinear",
            DynamicalSystem::LagrangianLinearTi(_) => "Lagrangian linear time-invariant",
            DynamicalSystem::LagrangianNonlinear(_) => "Lagrangian nonlinear",
        }
    }

    /// Checks dimensions and values; `name` is used in errors.
    pub fn validate(&self, name: &str) -> Result<()> {
        let n = self.dim();
        if n == 0 {
            return Err(ModelError::DimensionMismatch {
                object: name.into(),
                what: "state".into(),
                expected: 1,
                found: 0,
            });
        }
        match self {
            DynamicalSystem::FirstOrderLinear(d) => {
                check_finite_values(name, "x0", d.x0.iter())?;
                check_square(name, "A", d.a.shape())?;
                check_size(name, "A", d.a.shape().0, n)?;
                if let TimeMatrix::Constant(a) = &d.a {
                    check_finite_values(name, "A", a.iter())?;
                }
                if let Some(b) = &d.b {
                    check_time_vector(name, "b", b, n)?;
                }
            }
            DynamicalSystem::FirstOrderNonlinear(d) => {
                check_finite_values(name, "x0", d.x0.iter())?;
            }
            DynamicalSystem::LagrangianLinearTi(d) => {
                check_finite_values(name, "q0", d.q0.iter())?;
                check_size(name, "v0", d.v0.len(), n)?;
                check_finite_values(name, "v0", d.v0.iter())?;
                check_mass(name, &d.mass, n)?;
                for (what, m) in [("K", &d.stiffness), ("C", &d.damping)] {
                    if let Some(m) = m {
                        check_square(name, what, m.shape())?;
                        check_size(name, what, m.nrows(), n)?;
                        check_finite_values(name, what, m.iter())?;
                    }
                }
                if let Some(f) = &d.fext {
                    check_time_vector(name, "F_ext", f, n)?;
                }
            }
            DynamicalSystem::LagrangianNonlinear(d) => {
                check_finite_values(name, "q0", d.q0.iter())?;
                check_size(name, "v0", d.v0.len(), n)?;
                check_finite_values(name, "v0", d.v0.iter())?;
                match &d.mass {
                    Mass::Constant(m) => check_mass(name, m, n)?,
                    Mass::Function(f) => {
                        let mut m = DMatrix::zeros(n, n);
                        f(d.q0.as_slice(), &mut m);
                        check_mass(name, &m, n)?;
                    }
                }
                if let Some(f) = &d.fext {
                    check_time_vector(name, "F_ext", f, n)?;
                }
            }
        }
        Ok(())
    }
}

fn check_square(object: &str, what: &'static str, (rows, cols): (usize, usize)) -> Result<()> {
    if rows == cols {
        Ok(())
    } else {
        Err(ModelError::NotSquare {
            object: object.into(),
            what,
            rows,
            cols,
        })
    }
}

fn check_time_vector(object: &str, what: &str, v: &TimeVector, n: usize) -> Result<()> {
    check_size(object, what, v.dim(), n)?;
    if let TimeVector::Constant(c) = v {
        check_finite_values(object, what, c.iter())?;
    }
    Ok(())
}

/// M must be square n × n, finite, symmetric and positive definite.
fn check_mass(object: &str, m: &DMatrix<f64>, n: usize) -> Result<()> {
    check_square(object, "mass matrix", m.shape())?;
    check_size(object, "mass matrix", m.nrows(), n)?;
    check_finite_values(object, "mass matrix", m.iter())?;
    let scale = m.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let symmetric = (0..n).all(|i| (0..i).all(|j| (m[(i, j)] - m[(j, i)]).abs() <= 1e-12 * scale));
    if !symmetric || m.clone().cholesky().is_none() {
        return Err(ModelError::SingularMass {
            object: object.into(),
        });
    }
    Ok(())
}
