//! Relations: how an interaction's output y is computed from the state of
//! its systems (x, or q and v), and how its multiplier λ feeds back into
//! them (r, or p). The state of an interaction that links two systems is
//! the concatenation of theirs, in the order the systems were given.
//!
//! | kind | output | input |
//! |---|---|---|
//! | [`FirstOrderLinearTi`] | y = C x + F u + D λ + e | r = B λ |
//! | [`FirstOrderNonlinearR`] | y = h(t, x, λ) | r = g(t, x, λ) |
//! | [`LagrangianLinearTiR`] | y = H q + b,  ẏ = H v | p = Hᵀ λ |
//! | [`LagrangianScleronomous`] | y = h(q),  ẏ = J(q) v | p = J(q)ᵀ λ, J = ∂h/∂q |

use nalgebra::{DMatrix, DVector};

use super::error::{check_finite_values, check_size, ModelError, Result};
use super::functions::{PositionFn, PositionJacobianFn, RelationFn, RelationJacobianFn};

/// y = C x + F u + D λ + e, r = B λ (all matrices constant).
#[derive(Debug, Clone)]
pub struct FirstOrderLinearTi {
    /// C, m × n.
    pub c: DMatrix<f64>,
    /// D, m × m (absent: zero).
    pub d: Option<DMatrix<f64>>,
    /// F, m × p, acting on the control input u (absent: no input).
    pub f: Option<DMatrix<f64>>,
    /// e, length m (absent: zero).
    pub e: Option<DVector<f64>>,
    /// B, n × m.
    pub b: DMatrix<f64>,
}

impl FirstOrderLinearTi {
    /// y = C x, r = B λ.
    pub fn new(c: DMatrix<f64>, b: DMatrix<f64>) -> Self {
        FirstOrderLinearTi {
            c,
            d: None,
            f: None,
            e: None,
            b,
        }
    }

    /// Adds the feedthrough D.
    pub fn with_d(mut self, d: DMatrix<f64>) -> Self {
        self.d = Some(d);
        self
    }

    /// Adds the constant e.
    pub fn with_e(mut self, e: DVector<f64>) -> Self {
        self.e = Some(e);
        self
    }

    /// Adds the input matrix F.
    pub fn with_f(mut self, f: DMatrix<f64>) -> Self {
        self.f = Some(f);
        self
    }
}

/// y = h(t, x, λ), r = g(t, x, λ). Jacobians C = ∂h/∂x, D = ∂h/∂λ,
/// B = ∂g/∂λ, K = ∂g/∂x are given or computed by forward differences.
#[derive(Clone)]
pub struct FirstOrderNonlinearR {
    /// m, the size of y and λ.
    pub output_dim: usize,
    /// h(t, x, λ).
    pub h: RelationFn,
    /// g(t, x, λ).
    pub g: RelationFn,
    /// ∂h/∂x.
    pub jacobian_h_x: Option<RelationJacobianFn>,
    /// ∂h/∂λ.
    pub jacobian_h_lambda: Option<RelationJacobianFn>,
    /// ∂g/∂λ.
    pub jacobian_g_lambda: Option<RelationJacobianFn>,
    /// ∂g/∂x.
    pub jacobian_g_x: Option<RelationJacobianFn>,
}

impl std::fmt::Debug for FirstOrderNonlinearR {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FirstOrderNonlinearR(m = {})", self.output_dim)
    }
}

/// y = H q + b, p = Hᵀ λ.
#[derive(Debug, Clone)]
pub struct LagrangianLinearTiR {
    /// H, m × n.
    pub h: DMatrix<f64>,
    /// b, length m (absent: zero).
    pub b: Option<DVector<f64>>,
}

impl LagrangianLinearTiR {
    /// y = H q.
    pub fn new(h: DMatrix<f64>) -> Self {
        LagrangianLinearTiR { h, b: None }
    }

    /// y = H q + b.
    pub fn with_b(mut self, b: DVector<f64>) -> Self {
        self.b = Some(b);
        self
    }
}

/// y = h(q), p = J(q)ᵀ λ with J = ∂h/∂q (given, or by forward differences).
#[derive(Clone)]
pub struct LagrangianScleronomous {
    /// m, the size of y.
    pub output_dim: usize,
    /// h(q).
    pub h: PositionFn,
    /// J(q) = ∂h/∂q, m × n.
    pub jacobian: Option<PositionJacobianFn>,
}

impl std::fmt::Debug for LagrangianScleronomous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LagrangianScleronomous(m = {})", self.output_dim)
    }
}

/// A relation of one of the four kinds.
#[derive(Debug, Clone)]
pub enum Relation {
    /// y = C x + F u + D λ + e, r = B λ.
    FirstOrderLinearTi(FirstOrderLinearTi),
    /// y = h(t, x, λ), r = g(t, x, λ).
    FirstOrderNonlinear(FirstOrderNonlinearR),
    /// y = H q + b, p = Hᵀ λ.
    LagrangianLinearTi(LagrangianLinearTiR),
    /// y = h(q), p = J(q)ᵀ λ.
    LagrangianScleronomous(LagrangianScleronomous),
}

impl From<FirstOrderLinearTi> for Relation {
    fn from(r: FirstOrderLinearTi) -> Self {
        Relation::FirstOrderLinearTi(r)
    }
}
impl From<FirstOrderNonlinearR> for Relation {
    fn from(r: FirstOrderNonlinearR) -> Self {
        Relation::FirstOrderNonlinear(r)
    }
}
impl From<LagrangianLinearTiR> for Relation {
    fn from(r: LagrangianLinearTiR) -> Self {
        Relation::LagrangianLinearTi(r)
    }
}
impl From<LagrangianScleronomous> for Relation {
    fn from(r: LagrangianScleronomous) -> Self {
        Relation::LagrangianScleronomous(r)
    }
}

impl Relation {
    /// m, the size of y and λ.
    pub fn output_dim(&self) -> usize {
        match self {
            Relation::FirstOrderLinearTi(r) => r.c.nrows(),
            Relation::FirstOrderNonlinear(r) => r.output_dim,
            Relation::LagrangianLinearTi(r) => r.h.nrows(),
            Relation::LagrangianScleronomous(r) => r.output_dim,
        }
    }

    /// True for relations on Lagrangian systems.
    pub fn is_lagrangian(&self) -> bool {
        matches!(
            self,
            Relation::LagrangianLinearTi(_) | Relation::LagrangianScleronomous(_)
        )
    }

    /// True when the relation is linear with constant matrices.
    pub fn is_linear(&self) -> bool {
        matches!(
            self,
            Relation::FirstOrderLinearTi(_) | Relation::LagrangianLinearTi(_)
        )
    }

    /// Size of the control input u (0 when the relation has none).
    pub fn input_dim(&self) -> usize {
        match self {
            Relation::FirstOrderLinearTi(r) => r.f.as_ref().map_or(0, |f| f.ncols()),
            _ => 0,
        }
    }

    /// Checks the shapes against n, the summed dimension of the linked systems.
    pub fn validate(&self, name: &str, n: usize) -> Result<()> {
        let m = self.output_dim();
        if m == 0 {
            return Err(ModelError::DimensionMismatch {
                object: name.into(),
                what: "relation output".into(),
                expected: 1,
                found: 0,
            });
        }
        match self {
            Relation::FirstOrderLinearTi(r) => {
                check_size(name, "columns of C", r.c.ncols(), n)?;
                check_finite_values(name, "C", r.c.iter())?;
                check_size(name, "rows of B", r.b.nrows(), n)?;
                check_size(name, "columns of B", r.b.ncols(), m)?;
                check_finite_values(name, "B", r.b.iter())?;
                if let Some(d) = &r.d {
                    check_size(name, "rows of D", d.nrows(), m)?;
                    check_size(name, "columns of D", d.ncols(), m)?;
                    check_finite_values(name, "D", d.iter())?;
                }
                if let Some(f) = &r.f {
                    check_size(name, "rows of F", f.nrows(), m)?;
                    check_finite_values(name, "F", f.iter())?;
                }
                if let Some(e) = &r.e {
                    check_size(name, "e", e.len(), m)?;
                    check_finite_values(name, "e", e.iter())?;
                }
            }
            Relation::LagrangianLinearTi(r) => {
                check_size(name, "columns of H", r.h.ncols(), n)?;
                check_finite_values(name, "H", r.h.iter())?;
                if let Some(b) = &r.b {
                    check_size(name, "b", b.len(), m)?;
                    check_finite_values(name, "b", b.iter())?;
                }
            }
            Relation::FirstOrderNonlinear(_) | Relation::LagrangianScleronomous(_) => {}
        }
        Ok(())
    }
}
