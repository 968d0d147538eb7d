//! User-supplied functions of time and state. Every function writes into an
//! output buffer the simulation owns, so evaluating it allocates nothing.

use std::fmt;
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

/// `out ← f(t)`, a vector-valued function of time (external forces, b(t)).
pub type TimeFn = Arc<dyn Fn(f64, &mut [f64]) + Send + Sync>;

/// `out ← A(t)`, a matrix-valued function of time.
pub type TimeMatrixFn = Arc<dyn Fn(f64, &mut DMatrix<f64>) + Send + Sync>;

/// `out ← f(t, x)`: a vector field of time and one state vector.
pub type StateFn = Arc<dyn Fn(f64, &[f64], &mut [f64]) + Send + Sync>;

/// `out ← ∂f/∂x (t, x)`: a Jacobian of time and one state vector.
pub type StateJacobianFn = Arc<dyn Fn(f64, &[f64], &mut DMatrix<f64>) + Send + Sync>;

/// `out ← f(t, q, v)`: a force of time, position and velocity.
pub type ForceFn = Arc<dyn Fn(f64, &[f64], &[f64], &mut [f64]) + Send + Sync>;

/// `out ← ∂f/∂q or ∂f/∂v (t, q, v)`.
pub type ForceJacobianFn = Arc<dyn Fn(f64, &[f64], &[f64], &mut DMatrix<f64>) + Send + Sync>;

/// `out ← M(q)`: a configuration-dependent mass matrix.
pub type MassFn = Arc<dyn Fn(&[f64], &mut DMatrix<f64>) + Send + Sync>;

/// `out ← g(t, x, λ)`: a first-order relation's output or input map.
pub type RelationFn = Arc<dyn Fn(f64, &[f64], &[f64], &mut [f64]) + Send + Sync>;

/// `out ← ∂g/∂x or ∂g/∂λ (t, x, λ)`.
pub type RelationJacobianFn = Arc<dyn Fn(f64, &[f64], &[f64], &mut DMatrix<f64>) + Send + Sync>;

/// `out ← h(q)`: a scleronomous constraint function.
pub type PositionFn = Arc<dyn Fn(&[f64], &mut [f64]) + Send + Sync>;

/// `out ← ∇h(q)ᵀ` (rows: constraints, columns: coordinates).
pub type PositionJacobianFn = Arc<dyn Fn(&[f64], &mut DMatrix<f64>) + Send + Sync>;

/// A vector that is either constant or a function of time.
#[derive(Clone)]
pub enum TimeVector {
    /// A constant vector.
    Constant(DVector<f64>),
    /// `out ← f(t)`; `dim` is the length of `out`.
    Function {
        /// Length of the vector.
        dim: usize,
        /// The function.
        f: TimeFn,
    },
}

impl TimeVector {
    /// Length of the vector.
    pub fn dim(&self) -> usize {
        match self {
            TimeVector::Constant(v) => v.len(),
            TimeVector::Function { dim, .. } => *dim,
        }
    }

    /// `out ← value(t)`.
    pub fn eval(&self, t: f64, out: &mut [f64]) {
        match self {
            TimeVector::Constant(v) => out.copy_from_slice(v.as_slice()),
            TimeVector::Function { f, .. } => f(t, out),
        }
    }

    /// True for a constant vector.
    pub fn is_constant(&self) -> bool {
        matches!(self, TimeVector::Constant(_))
    }
}

impl fmt::Debug for TimeVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeVector::Constant(v) => write!(f, "Constant({:?})", v.as_slice()),
            TimeVector::Function { dim, .. } => write!(f, "Function(dim = {dim})"),
        }
    }
}

/// A matrix that is either constant or a function of time.
#[derive(Clone)]
pub enum TimeMatrix {
    /// A constant matrix.
    Constant(DMatrix<f64>),
    /// `out ← A(t)`, of the given shape.
    Function {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// The function.
        f: TimeMatrixFn,
    },
}

impl TimeMatrix {
    /// (rows, columns).
    pub fn shape(&self) -> (usize, usize) {
        match self {
            TimeMatrix::Constant(m) => m.shape(),
            TimeMatrix::Function { rows, cols, .. } => (*rows, *cols),
        }
    }

    /// `out ← value(t)`.
    pub fn eval(&self, t: f64, out: &mut DMatrix<f64>) {
        match self {
            TimeMatrix::Constant(m) => out.copy_from(m),
            TimeMatrix::Function { f, .. } => f(t, out),
        }
    }

    /// True for a constant matrix.
    pub fn is_constant(&self) -> bool {
        matches!(self, TimeMatrix::Constant(_))
    }
}

impl fmt::Debug for TimeMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeMatrix::Constant(m) => write!(f, "Constant({}×{})", m.nrows(), m.ncols()),
            TimeMatrix::Function { rows, cols, .. } => write!(f, "Function({rows}×{cols})"),
        }
    }
}

/// Forward-difference step for finite-difference Jacobians: √ε·max(1, |x|).
pub(crate) fn fd_step(x: f64) -> f64 {
    f64::EPSILON.sqrt() * x.abs().max(1.0)
}
