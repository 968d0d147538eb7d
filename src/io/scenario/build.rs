//! From the parsed file to a [`Model`], [`TimeSteppingSettings`], recorded
//! columns and plots: parameters are resolved, repeated entries expanded,
//! expressions evaluated, and every error located in the file.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use exmex::Express;
use nalgebra::{DMatrix, DVector};

use super::error::{Place, Result, ScenarioError, Source};
use super::expr::{self, Fault, Scope, Value};
use super::record::{self, Column, DEFAULT_COLUMN_LIMIT};
use super::schema::{
    InteractionEntry, LawTable, Quantity, RelationTable, Repeat, SMat, SStr, SVec, ScenarioFile,
    SimulationTable, SystemEntry, SQ,
};
use super::{BuiltScenario, Places, PlotSpec};
use crate::modelling::{
    DynamicalSystem, FirstOrderLinear, FirstOrderLinearTi, LagrangianLinearTi, LagrangianLinearTiR,
    ModelBuilder, ModelError, NonsmoothLaw, Relation, SystemId, TimeMatrix, TimeVector,
};
use crate::numerics::lcp::{lcp_solver, LCP_SOLVERS};
use crate::numerics::mlcp::{mlcp_solver, MLCP_SOLVERS};
use crate::numerics::relay::{relay_solver, RELAY_SOLVERS};
use crate::numerics::{NumericsError, SolverSettings};
use crate::simulation::{
    ClockError, FirstOrderScheme, SimulationError, TimeBase, TimeSteppingSettings,
};

/// The most instances one `repeat` may create.
const MAX_REPEAT: i64 = 10_000_000;

/// Evaluation of the file's values in a scope, with errors located.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    src: &'a Source,
    scope: Scope<'a>,
    /// The initial time, at which functions of time are checked.
    t0: f64,
}

impl<'a> Ctx<'a> {
    fn at(&self, span: std::ops::Range<usize>) -> Place {
        self.src.span(span)
    }

    fn fault(&self, at: Place, expression: &str, what: &str, f: Fault) -> ScenarioError {
        fault_error(at, expression, what, &self.scope, f)
    }

    /// A value that may depend on `t` when `time` is set.
    fn value(&self, q: &SQ, what: &str, time: bool) -> Result<Value> {
        let at = self.at(q.span());
        match q.get_ref() {
            Quantity::Number(x) if x.is_finite() => Ok(Value::Constant(*x)),
            Quantity::Number(x) => Err(ScenarioError::NonFinite {
                at,
                what: what.to_string(),
                value: *x,
            }),
            Quantity::Expression(text) => {
                let v = self
                    .scope
                    .with_time(time)
                    .compile(text)
                    .map_err(|f| self.fault(at.clone(), text, what, f))?;
                if let Value::Timed(e) = &v {
                    let x = e.eval(self.t0);
                    if !x.is_finite() {
                        return Err(ScenarioError::NonFinite {
                            at,
                            what: format!("{what} = `{text}` at t0 = {}", self.t0),
                            value: x,
                        });
                    }
                }
                Ok(v)
            }
        }
    }

    fn number(&self, q: &SQ, what: &str) -> Result<f64> {
        match self.value(q, what, false)? {
            Value::Constant(v) => Ok(v),
            Value::Timed(_) => unreachable!("time is not in scope"),
        }
    }

    fn integer(&self, q: &SQ, what: &str) -> Result<i64> {
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

    fn render(&self, s: &SStr, what: &str) -> Result<String> {
        expr::render(s.get_ref(), &self.scope).map_err(|f| {
            let what = format!("each {{…}} part of {what}");
            self.fault(self.at(s.span()), s.get_ref(), &what, f)
        })
    }

    fn vector(&self, v: &SVec, what: &str) -> Result<DVector<f64>> {
        let values = v
            .get_ref()
            .iter()
            .enumerate()
            .map(|(k, q)| self.number(q, &format!("{what}[{k}]")))
            .collect::<Result<Vec<f64>>>()?;
        Ok(DVector::from_vec(values))
    }

    fn time_vector(&self, v: &SVec, what: &str) -> Result<TimeVector> {
        let values = v
            .get_ref()
            .iter()
            .enumerate()
            .map(|(k, q)| self.value(q, &format!("{what}[{k}]"), true))
            .collect::<Result<Vec<Value>>>()?;
        if let Some(c) = constants(&values) {
            return Ok(TimeVector::Constant(DVector::from_vec(c)));
        }
        let dim = values.len();
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
    fn shape(&self, m: &SMat, what: &str) -> Result<(usize, usize)> {
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

    fn matrix_values(
        &self,
        m: &SMat,
        what: &str,
        time: bool,
    ) -> Result<(usize, usize, Vec<Value>)> {
        let (rows, cols) = self.shape(m, what)?;
        let mut values = Vec::with_capacity(rows * cols);
        for (i, row) in m.get_ref().iter().enumerate() {
            for (j, q) in row.iter().enumerate() {
                values.push(self.value(q, &format!("{what}[{i}][{j}]"), time)?);
            }
        }
        Ok((rows, cols, values))
    }

    fn matrix(&self, m: &SMat, what: &str) -> Result<DMatrix<f64>> {
        let (rows, cols, values) = self.matrix_values(m, what, false)?;
        let c = constants(&values).expect("constant values");
        Ok(DMatrix::from_row_slice(rows, cols, &c))
    }

    fn time_matrix(&self, m: &SMat, what: &str) -> Result<TimeMatrix> {
        let (rows, cols, values) = self.matrix_values(m, what, true)?;
        if let Some(c) = constants(&values) {
            return Ok(TimeMatrix::Constant(DMatrix::from_row_slice(
                rows, cols, &c,
            )));
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

/// The values when all are constant.
fn constants(values: &[Value]) -> Option<Vec<f64>> {
    values
        .iter()
        .map(|v| match v {
            Value::Constant(c) => Some(*c),
            Value::Timed(_) => None,
        })
        .collect()
}

fn fault_error(
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

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

// ---------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------

struct ParamDef<'a> {
    quantity: &'a Quantity,
    place: Place,
}

/// Resolves every parameter (file values, replaced by overrides), in
/// dependency order.
pub(super) fn parameters(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
) -> Result<BTreeMap<String, f64>> {
    let mut defs: BTreeMap<&str, ParamDef<'_>> = BTreeMap::new();
    if let Some(p) = &file.parameters {
        for (name, q) in p.get_ref() {
            let place = src.span(q.span());
            if !is_identifier(name) || expr::is_reserved(name) {
                return Err(ScenarioError::Invalid {
                    at: place,
                    reason: format!(
                        "`{name}` cannot be a parameter name: use letters, digits and `_`, \
                         not starting with a digit, and none of t, pi, {}",
                        expr::FUNCTIONS.join(", ")
                    ),
                });
            }
            let def = match overrides.get(name) {
                Some(o) => ParamDef {
                    quantity: o,
                    place: src.override_of(name),
                },
                None => ParamDef {
                    quantity: q.get_ref(),
                    place,
                },
            };
            defs.insert(name, def);
        }
    }
    let mut done = BTreeMap::new();
    let names: Vec<&str> = defs.keys().copied().collect();
    for name in &names {
        let mut stack = Vec::new();
        resolve(name, &defs, &mut done, &mut stack)?;
    }
    Ok(done)
}

fn resolve<'a>(
    name: &'a str,
    defs: &BTreeMap<&'a str, ParamDef<'a>>,
    done: &mut BTreeMap<String, f64>,
    stack: &mut Vec<&'a str>,
) -> Result<f64> {
    if let Some(&v) = done.get(name) {
        return Ok(v);
    }
    let def = &defs[name];
    if stack.contains(&name) {
        stack.push(name);
        return Err(ScenarioError::Invalid {
            at: def.place.clone(),
            reason: format!(
                "parameter `{name}` depends on itself ({})",
                stack.join(" → ")
            ),
        });
    }
    let text = match def.quantity {
        Quantity::Number(x) => {
            if !x.is_finite() {
                return Err(ScenarioError::NonFinite {
                    at: def.place.clone(),
                    what: format!("parameter `{name}`"),
                    value: *x,
                });
            }
            done.insert(name.to_string(), *x);
            return Ok(*x);
        }
        Quantity::Expression(text) => text.as_str(),
    };
    let known: Vec<&str> = defs.keys().copied().collect();
    let located = |f: Fault, done: &BTreeMap<String, f64>| match f {
        Fault::UnknownName(n) => ScenarioError::UnknownParameter {
            at: def.place.clone(),
            name: n,
            expression: text.to_string(),
            known: expr::list(&known),
        },
        Fault::TimeNotAllowed => ScenarioError::Expression {
            at: def.place.clone(),
            expression: text.to_string(),
            reason: format!("parameter `{name}` cannot depend on time `t`"),
        },
        f => fault_error(
            def.place.clone(),
            text,
            &format!("parameter `{name}`"),
            &Scope::constant(done),
            f,
        ),
    };
    let ex = expr::parse(text).map_err(|f| located(f, done))?;
    stack.push(name);
    for var in ex.var_names() {
        if var == "t" {
            return Err(located(Fault::TimeNotAllowed, done));
        }
        let Some((&dep, _)) = defs.get_key_value(var.as_str()) else {
            return Err(located(Fault::UnknownName(var.clone()), done));
        };
        resolve(dep, defs, done, stack)?;
    }
    stack.pop();
    let v = Scope::constant(done)
        .constant_value(text)
        .map_err(|f| located(f, done))?;
    done.insert(name.to_string(), v);
    Ok(v)
}

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

fn settings(
    ctx: Ctx<'_>,
    sim: &SimulationTable,
    every: Option<&SQ>,
    places: &mut Places,
) -> Result<TimeSteppingSettings> {
    let src = ctx.src;
    let mut key = |name: &'static str, span: std::ops::Range<usize>| {
        places.settings.insert(name, src.span(span));
    };
    key("t_end", sim.t_end.span());
    key("step", sim.step.span());
    let mut s = TimeSteppingSettings::new(
        ctx.number(&sim.step, "step")?,
        ctx.number(&sim.t_end, "t_end")?,
    );
    fn opt<'q>(q: &'q Option<SQ>, name: &'static str) -> Option<(&'q SQ, &'static str)> {
        q.as_ref().map(|q| (q, name))
    }
    for (q, name) in [
        opt(&sim.theta, "theta"),
        opt(&sim.t0, "t0"),
        opt(&sim.activation_gamma, "activation_gamma"),
        opt(&sim.tolerance, "tolerance"),
        opt(&sim.newton_tolerance, "newton_tolerance"),
    ]
    .into_iter()
    .flatten()
    {
        key(name, q.span());
        let v = ctx.number(q, name)?;
        match name {
            "theta" => s.theta = v,
            "t0" => s.t0 = v,
            "activation_gamma" => s.activation_gamma = v,
            "tolerance" => s.solver_settings.tolerance = v,
            _ => s.newton_tolerance = v,
        }
    }
    let count = |q: &SQ, name: &str| -> Result<u64> {
        let n = ctx.integer(q, name)?;
        u64::try_from(n)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ScenarioError::Setting {
                at: ctx.at(q.span()),
                what: name.to_string(),
                reason: format!("must be at least 1, got {n}"),
            })
    };
    if let Some(q) = &sim.max_iterations {
        key("max_iterations", q.span());
        s.solver_settings.max_iterations = Some(count(q, "max_iterations")? as usize);
    }
    if let Some(q) = &sim.newton_max_iterations {
        key("newton_max_iterations", q.span());
        s.newton_max_iterations = count(q, "newton_max_iterations")? as usize;
    }
    if let Some(q) = every {
        key("output_every", q.span());
        s.output_every = count(q, "every")?;
    }
    if let Some(scheme) = &sim.first_order_scheme {
        s.first_order_scheme = match scheme.get_ref().as_str() {
            "euler_moreau" => FirstOrderScheme::EulerMoreau,
            "zero_order_hold" => FirstOrderScheme::ZeroOrderHold,
            other => {
                return Err(ScenarioError::Setting {
                    at: ctx.at(scheme.span()),
                    what: "first_order_scheme".into(),
                    reason: format!(
                        "unknown scheme `{other}` (schemes: euler_moreau, zero_order_hold)"
                    ),
                })
            }
        };
    }
    if let Some(solver) = &sim.solver {
        key("solver", solver.span());
        let name = solver.get_ref().as_str();
        let st = SolverSettings::default();
        let known = lcp_solver(name, st).is_ok()
            || mlcp_solver(name, st).is_ok()
            || relay_solver(name, st).is_ok();
        if !known {
            return Err(ScenarioError::Setting {
                at: ctx.at(solver.span()),
                what: "solver".into(),
                reason: format!(
                    "unknown solver `{name}` (LCP: {LCP_SOLVERS}; MLCP: {MLCP_SOLVERS}; relay: {RELAY_SOLVERS})"
                ),
            });
        }
        s.solver = name.to_string();
    }
    check_clock(&s).map_err(|e| places.simulation_error(e))?;
    Ok(s)
}

/// The checks [`crate::simulation::TimeStepping::new`] makes of the settings
/// and clock, so they fail when the scenario is built.
fn check_clock(s: &TimeSteppingSettings) -> std::result::Result<(), SimulationError> {
    s.validate()?;
    let base = TimeBase::for_times(&[("t0", s.t0), ("t_end", s.t_end), ("step", s.step)])?;
    base.ticks("t0", s.t0)?;
    base.period("step", s.step)?;
    base.ticks("t_end", s.t_end)?;
    Ok(())
}

impl Places {
    /// Locates an error of the simulation set-up in the file.
    pub(super) fn simulation_error(&self, e: SimulationError) -> ScenarioError {
        let setting = |name: &str| {
            self.settings
                .get(name)
                .cloned()
                .unwrap_or_else(|| self.simulation.clone())
        };
        match e {
            SimulationError::InvalidSetting {
                what,
                value,
                reason,
            } => ScenarioError::Setting {
                at: setting(what),
                what: if what == "output_every" {
                    "every"
                } else {
                    what
                }
                .to_string(),
                reason: format!("{value}: {reason}"),
            },
            SimulationError::Numerics(NumericsError::InvalidSetting { name, reason }) => {
                ScenarioError::Setting {
                    at: setting(name),
                    what: name.to_string(),
                    reason,
                }
            }
            SimulationError::Numerics(e) => ScenarioError::Setting {
                at: setting("solver"),
                what: "solver".into(),
                reason: e.to_string(),
            },
            SimulationError::Clock(
                ClockError::OutOfRange { what, .. } | ClockError::NotRational { what, .. },
            ) => ScenarioError::Simulation {
                at: setting(what),
                source: e,
            },
            SimulationError::SingularIterationMatrix { ref system } => ScenarioError::Simulation {
                at: self
                    .systems
                    .get(system)
                    .cloned()
                    .unwrap_or_else(|| self.simulation.clone()),
                source: e,
            },
            e => ScenarioError::Simulation {
                at: self.simulation.clone(),
                source: e,
            },
        }
    }
}

// ---------------------------------------------------------------------------
// Systems and interactions
// ---------------------------------------------------------------------------

/// The index values of an entry: one `None` without `repeat`.
fn instances(ctx: Ctx<'_>, repeat: &Option<Repeat>) -> Result<(Option<String>, Vec<i64>)> {
    let Some(r) = repeat else {
        return Ok((None, vec![0]));
    };
    let at = ctx.at(r.span());
    let bad = |reason: String| ScenarioError::Invalid {
        at: at.clone(),
        reason,
    };
    let mut entries = r.get_ref().iter();
    let (Some((var, range)), None) = (entries.next(), entries.next()) else {
        return Err(bad(
            "repeat takes exactly one index, e.g. repeat = { i = \"0 .. n\" }".into(),
        ));
    };
    if !is_identifier(var) || expr::is_reserved(var) || ctx.scope.params.contains_key(var) {
        return Err(bad(format!(
            "`{var}` cannot be a repeat index: it must be a name that is not a parameter, \
             t, pi or a function"
        )));
    }
    let text = range.get_ref();
    let range_at = ctx.at(range.span());
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| ScenarioError::Invalid {
            at: range_at.clone(),
            reason: format!("repeat range `{text}`: expected `start .. end` (end excluded)"),
        })?;
    let bound = |s: &str| {
        ctx.scope
            .integer(s)
            .map_err(|f| ctx.fault(range_at.clone(), text, "a repeat bound", f))
    };
    let (start, end) = (bound(a)?, bound(b)?);
    if end.saturating_sub(start) > MAX_REPEAT {
        return Err(ScenarioError::Invalid {
            at: range_at,
            reason: format!("repeat range `{text}` has more than {MAX_REPEAT} values"),
        });
    }
    Ok((Some(var.clone()), (start..end).collect()))
}

/// Fails when a key of another kind is present.
fn refuse<T>(
    ctx: Ctx<'_>,
    value: &Option<toml::Spanned<T>>,
    key: &str,
    kind: &str,
    accepted: &str,
) -> Result<()> {
    match value {
        Some(v) => Err(ScenarioError::UnknownKey {
            at: ctx.at(v.span()),
            message: format!("`{key}` does not apply to {kind} (its keys: {accepted})"),
        }),
        None => Ok(()),
    }
}

fn required<'v, T>(
    ctx: Ctx<'_>,
    value: &'v Option<toml::Spanned<T>>,
    entry: std::ops::Range<usize>,
    key: &str,
    kind: &str,
) -> Result<&'v toml::Spanned<T>> {
    value.as_ref().ok_or_else(|| ScenarioError::Invalid {
        at: ctx.at(entry),
        reason: format!("{kind} needs `{key}`"),
    })
}

const LAGRANGIAN_KEYS: &str = "q0, v0, mass or mass_diagonal, stiffness, damping, fext";
const FIRST_ORDER_KEYS: &str = "x0, A, b";

fn system(ctx: Ctx<'_>, e: &SystemEntry, span: std::ops::Range<usize>) -> Result<DynamicalSystem> {
    match e.kind.get_ref().as_str() {
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear system";
            refuse(ctx, &e.x0, "x0", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.a, "A", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.b, "b", kind, LAGRANGIAN_KEYS)?;
            let q0 = ctx.vector(required(ctx, &e.q0, span.clone(), "q0", kind)?, "q0")?;
            let v0 = match &e.v0 {
                Some(v) => ctx.vector(v, "v0")?,
                None => DVector::zeros(q0.len()),
            };
            let mass = match (&e.mass, &e.mass_diagonal) {
                (Some(m), None) => ctx.matrix(m, "mass")?,
                (None, Some(d)) => DMatrix::from_diagonal(&ctx.vector(d, "mass_diagonal")?),
                (Some(_), Some(d)) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(d.span()),
                        reason: "give either `mass` or `mass_diagonal`, not both".into(),
                    })
                }
                (None, None) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(span),
                        reason: format!("{kind} needs `mass` or `mass_diagonal`"),
                    })
                }
            };
            let mut ds = LagrangianLinearTi::new(q0, v0, mass);
            if let Some(k) = &e.stiffness {
                ds = ds.with_stiffness(ctx.matrix(k, "stiffness")?);
            }
            if let Some(c) = &e.damping {
                ds = ds.with_damping(ctx.matrix(c, "damping")?);
            }
            if let Some(f) = &e.fext {
                ds = ds.with_fext(ctx.time_vector(f, "fext")?);
            }
            Ok(ds.into())
        }
        "first_order_linear" => {
            let kind = "a first_order_linear system";
            for (v, key) in [
                (&e.q0, "q0"),
                (&e.v0, "v0"),
                (&e.mass_diagonal, "mass_diagonal"),
                (&e.fext, "fext"),
            ] {
                refuse(ctx, v, key, kind, FIRST_ORDER_KEYS)?;
            }
            for (m, key) in [
                (&e.mass, "mass"),
                (&e.stiffness, "stiffness"),
                (&e.damping, "damping"),
            ] {
                refuse(ctx, m, key, kind, FIRST_ORDER_KEYS)?;
            }
            let x0 = ctx.vector(required(ctx, &e.x0, span.clone(), "x0", kind)?, "x0")?;
            let a = ctx.time_matrix(required(ctx, &e.a, span, "A", kind)?, "A")?;
            let mut ds = FirstOrderLinear::new(x0, DMatrix::zeros(0, 0)).with_a(a);
            if let Some(b) = &e.b {
                ds = ds.with_b(ctx.time_vector(b, "b")?);
            }
            Ok(ds.into())
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(e.kind.span()),
            reason: format!(
                "unknown system type `{other}` (types: lagrangian_linear, first_order_linear)"
            ),
        }),
    }
}

fn relation(ctx: Ctx<'_>, r: &toml::Spanned<RelationTable>) -> Result<Relation> {
    let span = r.span();
    let r = r.get_ref();
    match r.kind.get_ref().as_str() {
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear relation";
            let keys = "H, b";
            for (m, key) in [(&r.c, "C"), (&r.b_matrix, "B"), (&r.d, "D"), (&r.f, "F")] {
                refuse(ctx, m, key, kind, keys)?;
            }
            refuse(ctx, &r.e, "e", kind, keys)?;
            let h = ctx.matrix(required(ctx, &r.h, span, "H", kind)?, "H")?;
            let mut rel = LagrangianLinearTiR::new(h);
            if let Some(b) = &r.b {
                rel = rel.with_b(ctx.vector(b, "b")?);
            }
            Ok(rel.into())
        }
        "first_order_linear" => {
            let kind = "a first_order_linear relation";
            let keys = "C, B, D, F, e";
            refuse(ctx, &r.h, "H", kind, keys)?;
            refuse(ctx, &r.b, "b", kind, keys)?;
            let c = ctx.matrix(required(ctx, &r.c, span.clone(), "C", kind)?, "C")?;
            let b = ctx.matrix(required(ctx, &r.b_matrix, span, "B", kind)?, "B")?;
            let mut rel = FirstOrderLinearTi::new(c, b);
            if let Some(d) = &r.d {
                rel = rel.with_d(ctx.matrix(d, "D")?);
            }
            if let Some(f) = &r.f {
                rel = rel.with_f(ctx.matrix(f, "F")?);
            }
            if let Some(e) = &r.e {
                rel = rel.with_e(ctx.vector(e, "e")?);
            }
            Ok(rel.into())
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(r.kind.span()),
            reason: format!(
                "unknown relation type `{other}` (types: lagrangian_linear, first_order_linear)"
            ),
        }),
    }
}

fn law(ctx: Ctx<'_>, l: &toml::Spanned<LawTable>, size: usize) -> Result<NonsmoothLaw> {
    let span = l.span();
    let l = l.get_ref();
    let kind_name = l.kind.get_ref().as_str();
    let kind = format!("a {kind_name} law");
    let none = |keys: &str| -> Result<()> {
        if keys != "restitution" {
            refuse(ctx, &l.restitution, "restitution", &kind, keys)?;
        }
        if keys != "lb, ub" {
            refuse(ctx, &l.lb, "lb", &kind, keys)?;
            refuse(ctx, &l.ub, "ub", &kind, keys)?;
        }
        if keys != "equalities" {
            refuse(ctx, &l.equalities, "equalities", &kind, keys)?;
        }
        Ok(())
    };
    match kind_name {
        "complementarity" => {
            none("none")?;
            Ok(NonsmoothLaw::Complementarity { size })
        }
        "equality" => {
            none("none")?;
            Ok(NonsmoothLaw::Equality { size })
        }
        "newton_impact" => {
            none("restitution")?;
            let e = required(ctx, &l.restitution, span, "restitution", &kind)?;
            Ok(NonsmoothLaw::NewtonImpact {
                size,
                restitution: ctx.number(e, "restitution")?,
            })
        }
        "relay" => {
            none("lb, ub")?;
            let lb = ctx.vector(required(ctx, &l.lb, span.clone(), "lb", &kind)?, "lb")?;
            let ub = ctx.vector(required(ctx, &l.ub, span, "ub", &kind)?, "ub")?;
            Ok(NonsmoothLaw::Relay {
                lb: lb.as_slice().to_vec(),
                ub: ub.as_slice().to_vec(),
            })
        }
        "mixed_complementarity" => {
            none("equalities")?;
            let q = required(ctx, &l.equalities, span, "equalities", &kind)?;
            let k = ctx.integer(q, "equalities")?;
            if k < 0 || k as usize > size {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(q.span()),
                    reason: format!(
                        "equalities = {k} must lie in 0 ..= {size}, the size of the relation"
                    ),
                });
            }
            let k = k as usize;
            Ok(NonsmoothLaw::MixedComplementarity {
                equalities: k,
                inequalities: size - k,
            })
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(l.kind.span()),
            reason: format!(
                "unknown law type `{other}` (types: complementarity, newton_impact, relay, \
                 equality, mixed_complementarity)"
            ),
        }),
    }
}

fn interaction(
    ctx: Ctx<'_>,
    b: &mut ModelBuilder,
    ids: &HashMap<String, SystemId>,
    e: &InteractionEntry,
    span: std::ops::Range<usize>,
) -> Result<()> {
    let name = ctx.render(&e.name, "the name")?;
    let list = e.systems.get_ref();
    if list.is_empty() || list.len() > 2 {
        return Err(ScenarioError::Invalid {
            at: ctx.at(e.systems.span()),
            reason: format!(
                "interaction `{name}`: systems lists {} names; it must list one or two",
                list.len()
            ),
        });
    }
    let mut systems = Vec::with_capacity(2);
    for s in list {
        let sys = ctx.render(s, "a system name")?;
        match ids.get(&sys) {
            Some(&id) => systems.push(id),
            None => {
                let mut known: Vec<&str> = ids.keys().map(|k| k.as_str()).collect();
                known.sort_unstable();
                return Err(ScenarioError::UnknownSystem {
                    at: ctx.at(s.span()),
                    interaction: name,
                    system: sys,
                    known: expr::list(&known),
                });
            }
        }
    }
    let rel = relation(ctx, &e.relation)?;
    let law = law(ctx, &e.law, rel.output_dim())?;
    b.add_interaction(&name, &systems, rel, law)
        .map_err(|source| model_error(ctx, span, source))?;
    Ok(())
}

fn model_error(ctx: Ctx<'_>, span: std::ops::Range<usize>, source: ModelError) -> ScenarioError {
    ScenarioError::Model {
        at: ctx.at(span),
        source,
    }
}

// ---------------------------------------------------------------------------
// The whole scenario
// ---------------------------------------------------------------------------

pub(super) fn build(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
) -> Result<BuiltScenario> {
    let params = parameters(src, file, overrides)?;
    let mut ctx = Ctx {
        src,
        scope: Scope::constant(&params),
        t0: 0.0,
    };
    let mut places = Places {
        simulation: src.span(file.simulation.span()),
        settings: HashMap::new(),
        systems: HashMap::new(),
    };
    let every = file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().every.as_ref());
    let settings = settings(ctx, file.simulation.get_ref(), every, &mut places)?;
    ctx.t0 = settings.t0;

    let mut builder = ModelBuilder::new();
    let mut ids: HashMap<String, SystemId> = HashMap::new();
    for entry in &file.systems {
        let span = entry.span();
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = Ctx {
                scope: Scope {
                    index: var.as_deref().map(|v| (v, i)),
                    ..ctx.scope
                },
                ..ctx
            };
            let name = ctx.render(&e.name, "the name")?;
            let ds = system(ctx, e, span.clone())?;
            let id = builder
                .add_system(&name, ds)
                .map_err(|source| model_error(ctx, span.clone(), source))?;
            places.systems.insert(name.clone(), ctx.at(span.clone()));
            ids.insert(name, id);
        }
    }
    for entry in &file.interactions {
        let span = entry.span();
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = Ctx {
                scope: Scope {
                    index: var.as_deref().map(|v| (v, i)),
                    ..ctx.scope
                },
                ..ctx
            };
            interaction(ctx, &mut builder, &ids, e, span.clone())?;
        }
    }
    let model = builder.build();

    let mut columns: Vec<Column> = Vec::new();
    match file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().record.as_ref())
    {
        Some(list) => {
            for s in list.get_ref() {
                let selector = ctx.render(s, "a record entry")?;
                record::select(&model, &selector, "record", &ctx.at(s.span()), &mut columns)?;
            }
            record::dedup(&mut columns);
        }
        None => {
            columns = record::everything(&model);
            if columns.len() > DEFAULT_COLUMN_LIMIT {
                let at = match &file.output {
                    Some(o) => ctx.at(o.span()),
                    None => ctx.at(file.name.span()),
                };
                return Err(ScenarioError::Invalid {
                    at,
                    reason: format!(
                        "recording every variable gives {} columns, more than {DEFAULT_COLUMN_LIMIT}: \
                         choose them with `record` in [output], e.g. record = [\"name.q\", \"name.lambda[0]\"]",
                        columns.len()
                    ),
                });
            }
        }
    }

    let mut plots = Vec::with_capacity(file.plots.len());
    for p in &file.plots {
        let pe = p.get_ref();
        let recorded = |name: &str| name == "t" || columns.iter().any(|c| c.name == name);
        let check = |s: &SStr, out: &mut Vec<String>| -> Result<()> {
            let text = ctx.render(s, "a plot column")?;
            if recorded(&text) {
                out.push(text);
                return Ok(());
            }
            let at = ctx.at(s.span());
            let mut sel = Vec::new();
            record::select(&model, &text, "plot column", &at, &mut sel)?;
            for c in sel {
                if !recorded(&c.name) {
                    return Err(ScenarioError::Invalid {
                        at: at.clone(),
                        reason: format!(
                            "plot column `{}` is not recorded: add it to `record` in [output]",
                            c.name
                        ),
                    });
                }
                out.push(c.name);
            }
            Ok(())
        };
        let mut x = Vec::new();
        match &pe.x {
            Some(s) => check(s, &mut x)?,
            None => x.push("t".to_string()),
        }
        if x.len() != 1 {
            return Err(ScenarioError::Invalid {
                at: ctx.at(pe.x.as_ref().map_or(p.span(), |s| s.span())),
                reason: "a plot's x must name one column".into(),
            });
        }
        let mut y = Vec::new();
        for s in pe.y.get_ref() {
            check(s, &mut y)?;
        }
        if y.is_empty() {
            return Err(ScenarioError::Invalid {
                at: ctx.at(pe.y.span()),
                reason: "a plot needs at least one y column".into(),
            });
        }
        let output = ctx.render(&pe.output, "the plot output")?;
        if output.trim().is_empty() {
            return Err(ScenarioError::Invalid {
                at: ctx.at(pe.output.span()),
                reason: "the plot output file name is empty".into(),
            });
        }
        plots.push(PlotSpec {
            title: pe.title.clone(),
            x: x.remove(0),
            y,
            output: PathBuf::from(output),
        });
    }

    Ok(BuiltScenario {
        name: file.name.get_ref().clone(),
        description: file.description.clone(),
        parameters: params,
        model: Arc::new(model),
        settings,
        columns,
        plots,
        places,
    })
}
