//! Evaluation of the file's numbers, vectors, matrices and name templates in
//! a scope, with every error located in the file.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

use super::error::{Place, Result, ScenarioError, Source};
use super::expr::{self, Fault, Scope, Value};
use super::schema::{Quantity, SMat, SStr, SVec, SQ};
use super::tape::{Sym, Tape};
use nonsmooth::modelling::{TimeMatrix, TimeVector};

/// Evaluation of the file's values in a scope, with errors located.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    /// The file, for locations.
    pub src: &'a Source,
    /// The names in scope.
    pub scope: Scope<'a>,
    /// The initial time, at which functions of time are checked.
    pub t0: f64,
}

impl<'a> Ctx<'a> {
    pub fn at(&self, span: std::ops::Range<usize>) -> Place {
        self.src.span(span)
    }

    pub fn fault(&self, at: Place, expression: &str, what: &str, f: Fault) -> ScenarioError {
        fault_error(at, expression, what, &self.scope, f)
    }

    /// A value that may depend on `t` when `time` is set, named by `what`
    /// and located only when it is at fault: a repeated entry evaluates its
    /// values many times, and a place costs a search of the line and a
    /// copy of the path.
    fn value_of(&self, q: &SQ, what: impl Fn() -> String, time: bool) -> Result<Value> {
        match q.get_ref() {
            Quantity::Number(x) if x.is_finite() => Ok(Value::Constant(*x)),
            Quantity::Number(x) => Err(ScenarioError::NonFinite {
                at: self.at(q.span()),
                what: what(),
                value: *x,
            }),
            Quantity::Expression(text) => {
                let v = self
                    .scope
                    .with_time(time)
                    .compile(text)
                    .map_err(|f| self.fault(self.at(q.span()), text, &what(), f))?;
                if let Value::Timed(e) = &v {
                    let x = e.eval(self.t0);
                    if !x.is_finite() {
                        return Err(ScenarioError::NonFinite {
                            at: self.at(q.span()),
                            what: format!("{} = `{text}` at t0 = {}", what(), self.t0),
                            value: x,
                        });
                    }
                }
                Ok(v)
            }
        }
    }

    /// A constant value, named by `what` (called only on error).
    fn number_of(&self, q: &SQ, what: impl Fn() -> String) -> Result<f64> {
        match self.value_of(q, what, false)? {
            Value::Constant(v) => Ok(v),
            Value::Timed(_) => unreachable!("time is not in scope"),
        }
    }

    pub fn number(&self, q: &SQ, what: &str) -> Result<f64> {
        self.number_of(q, || what.to_string())
    }

    pub fn integer(&self, q: &SQ, what: &str) -> Result<i64> {
        let v = self.number(q, what)?;
        if v.fract() == 0.0 && v.abs() <= 9.0e15 {
            Ok(v as i64)
        } else {
            Err(ScenarioError::Invalid {
                at: self.at(q.span()),
                reason: format!("{what} must be an integer, got {v}"),
            })
        }
    }

    pub fn render(&self, s: &SStr, what: &str) -> Result<String> {
        expr::render(s.get_ref(), &self.scope).map_err(|f| {
            let what = format!("each {{…}} part of {what}");
            self.fault(self.at(s.span()), s.get_ref(), &what, f)
        })
    }

    pub fn vector(&self, v: &SVec, what: &str) -> Result<DVector<f64>> {
        let values = v
            .get_ref()
            .iter()
            .enumerate()
            .map(|(k, q)| self.number_of(q, || format!("{what}[{k}]")))
            .collect::<Result<Vec<f64>>>()?;
        Ok(DVector::from_vec(values))
    }

    /// A vector of time: constant, or its expressions compiled to one tape
    /// (components share their subexpressions) when they can be.
    pub fn time_vector(&self, v: &SVec, what: &str) -> Result<TimeVector> {
        let values = v
            .get_ref()
            .iter()
            .enumerate()
            .map(|(k, q)| self.value_of(q, || format!("{what}[{k}]"), true))
            .collect::<Result<Vec<Value>>>()?;
        if let Some(c) = constants(&values) {
            return Ok(TimeVector::Constant(DVector::from_vec(c)));
        }
        let dim = values.len();
        if let Some(tape) = tape_of(&values, self.t0) {
            return Ok(TimeVector::Function {
                dim,
                f: tape.into_fn(),
            });
        }
        Ok(TimeVector::Function {
            dim,
            f: Arc::new(move |t, out: &mut [f64]| {
                for (o, v) in out.iter_mut().zip(&values) {
                    *o = match v {
                        Value::Constant(c) => *c,
                        Value::Timed(e) => e.eval(t),
                    };
                }
            }),
        })
    }

    /// Checks that a matrix is a non-empty list of rows of equal length.
    pub fn shape(&self, m: &SMat, what: &str) -> Result<(usize, usize)> {
        let rows = m.get_ref();
        let bad = |reason: String| ScenarioError::Shape {
            at: self.at(m.span()),
            what: what.to_string(),
            reason,
        };
        let cols = rows.first().map_or(0, |r| r.len());
        if rows.is_empty() || cols == 0 {
            return Err(bad(
                "a matrix is a non-empty list of non-empty rows, e.g. [[1, 0], [0, 1]]".into(),
            ));
        }
        if let Some((k, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
            return Err(bad(format!(
                "row {} has {} entries, row 1 has {cols}",
                k + 1,
                r.len()
            )));
        }
        Ok((rows.len(), cols))
    }

    pub fn matrix_values(
        &self,
        m: &SMat,
        what: &str,
        time: bool,
    ) -> Result<(usize, usize, Vec<Value>)> {
        let (rows, cols) = self.shape(m, what)?;
        let mut values = Vec::with_capacity(rows * cols);
        for (i, row) in m.get_ref().iter().enumerate() {
            for (j, q) in row.iter().enumerate() {
                values.push(self.value_of(q, || format!("{what}[{i}][{j}]"), time)?);
            }
        }
        Ok((rows, cols, values))
    }

    pub fn matrix(&self, m: &SMat, what: &str) -> Result<DMatrix<f64>> {
        let (rows, cols) = self.shape(m, what)?;
        let mut values = Vec::with_capacity(rows * cols);
        for (i, row) in m.get_ref().iter().enumerate() {
            for (j, q) in row.iter().enumerate() {
                values.push(self.number_of(q, || format!("{what}[{i}][{j}]"))?);
            }
        }
        Ok(DMatrix::from_row_slice(rows, cols, &values))
    }

    pub fn time_matrix(&self, m: &SMat, what: &str) -> Result<TimeMatrix> {
        let (rows, cols, values) = self.matrix_values(m, what, true)?;
        if let Some(c) = constants(&values) {
            return Ok(TimeMatrix::Constant(DMatrix::from_row_slice(
                rows, cols, &c,
            )));
        }
        // The tape computes the entries in storage (column-major) order.
        let column_major: Vec<Value> = (0..rows * cols)
            .map(|k| values[(k % rows) * cols + k / rows].clone())
            .collect();
        if let Some(tape) = tape_of(&column_major, self.t0) {
            return Ok(TimeMatrix::Function {
                rows,
                cols,
                f: Arc::new(move |t, out: &mut DMatrix<f64>| tape.eval(t, out.as_mut_slice())),
            });
        }
        Ok(TimeMatrix::Function {
            rows,
            cols,
            f: Arc::new(move |t, out: &mut DMatrix<f64>| {
                for i in 0..rows {
                    for j in 0..cols {
                        out[(i, j)] = match &values[i * cols + j] {
                            Value::Constant(c) => *c,
                            Value::Timed(e) => e.eval(t),
                        };
                    }
                }
            }),
        })
    }
}

/// One tape computing all of `values` (constants included), checked against
/// exmex's own evaluation at a few times: `None` when an expression was not
/// recorded, the tape is too long, or (never seen) a value differs in any
/// bit, in which case each expression is evaluated by exmex.
fn tape_of(values: &[Value], t0: f64) -> Option<Tape> {
    let syms = values
        .iter()
        .map(|v| match v {
            Value::Constant(c) => Some(Sym::Num(*c)),
            Value::Timed(e) => e.sym.clone(),
        })
        .collect::<Option<Vec<Sym>>>()?;
    let tape = Tape::new(&syms)?;
    let mut out = vec![0.0; values.len()];
    for t in [t0, t0 + 0.1234567, t0 + 1.0, t0 + 98.765] {
        tape.eval(t, &mut out);
        let same = values.iter().zip(&out).all(|(v, &x)| {
            let y = match v {
                Value::Constant(c) => *c,
                Value::Timed(e) => e.eval(t),
            };
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        });
        if !same {
            return None;
        }
    }
    Some(tape)
}

/// The values when all are constant.
pub(super) fn constants(values: &[Value]) -> Option<Vec<f64>> {
    values
        .iter()
        .map(|v| match v {
            Value::Constant(c) => Some(*c),
            Value::Timed(_) => None,
        })
        .collect()
}

pub(super) fn fault_error(
    at: Place,
    expression: &str,
    what: &str,
    scope: &Scope<'_>,
    f: Fault,
) -> ScenarioError {
    match f {
        Fault::Syntax(reason) => ScenarioError::Expression {
            at,
            expression: expression.to_string(),
            reason,
        },
        Fault::UnknownName(name) => ScenarioError::UnknownParameter {
            at,
            name,
            expression: expression.to_string(),
            known: scope.known(),
        },
        Fault::TimeNotAllowed => ScenarioError::Expression {
            at,
            expression: expression.to_string(),
            reason: format!(
                "{what} must be constant: `t` may only appear in fext, A and b of a system"
            ),
        },
        Fault::NotFinite(value) => ScenarioError::NonFinite {
            at,
            what: format!("{what} = `{expression}`"),
            value,
        },
        Fault::NotInteger(v) => ScenarioError::Expression {
            at,
            expression: expression.to_string(),
            reason: format!("{what} must be an integer, got {v}"),
        },
    }
}

pub(super) fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}
