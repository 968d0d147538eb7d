//! Vectors and matrices of expressions of named variables (the state, the
//! position, the multipliers), compiled once with [`Scope::compile_vars`]
//! (the parameters folded in) for the nonlinear systems and relations. An
//! evaluation takes a function from a variable's slot to its value and
//! allocates nothing.
//!
//! [`Scope::compile_vars`]: crate::expr::Scope::compile_vars

use std::sync::Arc;

use nalgebra::DMatrix;

use crate::error::{Result, ScenarioError};
use crate::expr::{self, Fault, VarExpr};
use crate::schema::{Quantity, SMat, SVec, SQ};
use crate::values::Ctx;

/// One compiled component.
#[derive(Debug, Clone)]
pub(super) enum Component {
    /// A number.
    Constant(f64),
    /// An expression of the variables.
    Expr(VarExpr),
}

impl Component {
    /// The value for the variables' values `value(slot)`.
    #[inline]
    fn eval(&self, value: impl Fn(usize) -> f64) -> f64 {
        match self {
            Component::Constant(x) => *x,
            Component::Expr(e) => e.eval(value),
        }
    }
}

/// A vector of compiled components, f_i(vars).
#[derive(Debug, Clone)]
pub(super) struct VectorFn(Arc<Vec<Component>>);

impl VectorFn {
    /// Its length.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `out_i ← f_i(vars)`, `value(k)` the value of the k-th variable.
    #[inline]
    pub fn eval(&self, value: impl Fn(usize) -> f64 + Copy, out: &mut [f64]) {
        for (o, c) in out.iter_mut().zip(self.0.iter()) {
            *o = c.eval(value);
        }
    }
}

/// A matrix of compiled components, J_ij(vars), stored row by row.
#[derive(Debug, Clone)]
pub(super) struct MatrixFn {
    cols: usize,
    entries: Arc<Vec<Component>>,
}

impl MatrixFn {
    /// `out_ij ← J_ij(vars)`.
    #[inline]
    pub fn eval(&self, value: impl Fn(usize) -> f64 + Copy, out: &mut DMatrix<f64>) {
        for (k, c) in self.entries.iter().enumerate() {
            out[(k / self.cols, k % self.cols)] = c.eval(value);
        }
    }
}

/// The variables `prefix0 … prefix{n−1}`.
pub(super) fn names(prefix: &str, n: usize) -> impl Iterator<Item = String> + '_ {
    (0..n).map(move |i| format!("{prefix}{i}"))
}

fn component(ctx: Ctx<'_>, q: &SQ, what: &str, vars: &[String]) -> Result<Component> {
    let at = ctx.at(q.span());
    match q.get_ref() {
        Quantity::Number(x) if x.is_finite() => Ok(Component::Constant(*x)),
        Quantity::Number(x) => Err(ScenarioError::NonFinite {
            at,
            what: what.to_string(),
            value: *x,
        }),
        Quantity::Expression(text) => ctx
            .scope
            .compile_vars(text, vars)
            .map(Component::Expr)
            .map_err(|f| match f {
                // `t` where the variables do not include it is an unknown
                // name here, not a misplaced time.
                Fault::TimeNotAllowed => unknown(ctx, at.clone(), what, text, "t", vars),
                Fault::UnknownName(name) => unknown(ctx, at.clone(), what, text, &name, vars),
                f => ctx.fault(at.clone(), text, what, f),
            }),
    }
}

/// An unknown name in an expression of variables.
fn unknown(
    ctx: Ctx<'_>,
    at: crate::error::Place,
    what: &str,
    text: &str,
    name: &str,
    vars: &[String],
) -> ScenarioError {
    ScenarioError::Invalid {
        at,
        reason: format!(
            "{what} = `{text}`: unknown name `{name}` (the variables here: {}; parameters: {})",
            expr::list(&vars.iter().map(String::as_str).collect::<Vec<_>>()),
            ctx.scope.known()
        ),
    }
}

/// Compiles `v`, which must have `len` components, over `vars`.
pub(super) fn vector(
    ctx: Ctx<'_>,
    v: &SVec,
    key: &str,
    len: usize,
    len_is: &str,
    vars: &[String],
) -> Result<VectorFn> {
    let items = v.get_ref();
    if items.len() != len {
        return Err(ScenarioError::Shape {
            at: ctx.at(v.span()),
            what: key.to_string(),
            reason: format!("{} components, {len_is} is {len}", items.len()),
        });
    }
    let out = items
        .iter()
        .enumerate()
        .map(|(i, q)| component(ctx, q, &format!("{key}[{i}]"), vars))
        .collect::<Result<Vec<_>>>()?;
    Ok(VectorFn(Arc::new(out)))
}

/// Compiles `m`, which must be `rows × cols`, over `vars`.
pub(super) fn matrix(
    ctx: Ctx<'_>,
    m: &SMat,
    key: &str,
    (rows, cols): (usize, usize),
    vars: &[String],
) -> Result<MatrixFn> {
    let shape = ctx.shape(m, key)?;
    if shape != (rows, cols) {
        return Err(ScenarioError::Shape {
            at: ctx.at(m.span()),
            what: key.to_string(),
            reason: format!("it is {} × {}, expected {rows} × {cols}", shape.0, shape.1),
        });
    }
    let mut entries = Vec::with_capacity(rows * cols);
    for (i, row) in m.get_ref().iter().enumerate() {
        for (j, q) in row.iter().enumerate() {
            entries.push(component(ctx, q, &format!("{key}[{i}][{j}]"), vars)?);
        }
    }
    Ok(MatrixFn {
        cols,
        entries: Arc::new(entries),
    })
}
