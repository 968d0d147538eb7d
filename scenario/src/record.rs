//! Output selection: which values are recorded, one column each.
//!
//! A selector is `<object>.<variable>` (every index), `<object>.<variable>[i]`
//! or `<object>.*` (every variable). Variables: `q`, `v` for Lagrangian
//! systems, `x` for first-order systems, `y`, `lambda` for interactions
//! (and `status` for frictional contacts: 0 separated, 1 sticking, 2 sliding),
//! `y` for sensors, `xhat` for observers, `u` and the law's signals (`u_eq`,
//! `u_s`, `sigma`, …) for controllers; `position`, `quaternion`, `velocity`,
//! `omega` for rigid bodies and `kinetic_energy`, `potential_energy`,
//! `contacts`, `active_contacts`, `solver_iterations` for `world`.
//! Columns are named `<object>.<variable>[<index>]`, after the time column `t`.

use std::collections::HashSet;

use super::error::{Place, Result, ScenarioError};
use nonsmooth::control::{ControlLoop, ControllerId, ObserverId, SensorId};
use nonsmooth::modelling::{InteractionId, Model, SystemId};

/// The most columns recorded when `record` is not given.
pub const DEFAULT_COLUMN_LIMIT: usize = 1000;

/// The quantity a column reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variable {
    /// Position q of a Lagrangian system.
    Q(SystemId),
    /// Velocity v of a Lagrangian system.
    V(SystemId),
    /// State x of a first-order system.
    X(SystemId),
    /// Output y of an interaction.
    Y(InteractionId),
    /// Multiplier λ (impulse for impact laws) of an interaction.
    Lambda(InteractionId),
    /// Status of a frictional contact (0 separated, 1 sticking, 2 sliding).
    ContactStatus(InteractionId),
    /// The latest measurement a sensor delivered.
    SensorY(SensorId),
    /// An observer's estimate.
    ObserverXhat(ObserverId),
    /// The input a controller's actuator applies.
    ControllerU(ControllerId),
    /// A signal of a controller's law.
    ControllerSignal(ControllerId, &'static str),
    /// Rigid bodies: the values of a stand-in system from an offset on (a
    /// body's position, quaternion, velocity or angular velocity, or one
    /// of the world's values; see `nonsmooth_collision::BODY_LAYOUT`).
    Part(SystemId, usize),
}

/// The recordable variables of the control objects: (object, [(variable,
/// what it reads, size)]).
pub type ControlVariables = Vec<(String, Vec<(&'static str, Variable, usize)>)>;

/// One recorded column (the time column `t` is implicit and comes first).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// `<object>.<variable>[<index>]`.
    pub name: String,
    /// What it reads.
    pub variable: Variable,
    /// Which component.
    pub index: usize,
}

impl Column {
    /// The current value in a control loop built for the scenario.
    pub fn value(&self, cl: &ControlLoop) -> f64 {
        let p = cl.plant();
        let slice = match self.variable {
            Variable::Q(s) | Variable::X(s) => p.q(s),
            Variable::Part(s, offset) => p.q(s).get(offset..).unwrap_or_default(),
            Variable::V(s) => p.v(s),
            Variable::Y(i) => p.y(i),
            Variable::Lambda(i) => p.lambda(i),
            Variable::ContactStatus(i) => p.contact_status(i),
            Variable::SensorY(s) => cl.sensor_output(s),
            Variable::ObserverXhat(o) => cl.observer_estimate(o),
            Variable::ControllerU(c) => cl.controller_input(c),
            Variable::ControllerSignal(c, name) => {
                cl.controller_signal(c, name).unwrap_or_default()
            }
        };
        slice.get(self.index).copied().unwrap_or(f64::NAN)
    }
}

/// The variables of an object: (name, variable, size).
fn variables(
    model: &Model,
    control: &ControlVariables,
    object: &str,
) -> Option<Vec<(&'static str, Variable, usize)>> {
    if let Some((_, vars)) = control.iter().find(|(n, _)| n == object) {
        return Some(vars.clone());
    }
    if let Some(s) = model.system_id(object) {
        let ds = &model.system(s).ds;
        let n = ds.dim();
        return Some(if ds.is_lagrangian() {
            vec![("q", Variable::Q(s), n), ("v", Variable::V(s), n)]
        } else {
            vec![("x", Variable::X(s), n)]
        });
    }
    let i = model.interaction_id(object)?;
    let m = model.interaction(i).dim();
    let mut vars = vec![("y", Variable::Y(i), m), ("lambda", Variable::Lambda(i), m)];
    if matches!(
        model.interaction(i).law,
        nonsmooth::modelling::NonsmoothLaw::NewtonImpactFriction { .. }
    ) {
        vars.push(("status", Variable::ContactStatus(i), 1));
    }
    Some(vars)
}

fn push_all(
    out: &mut Vec<Column>,
    object: &str,
    (var, variable, n): (&str, Variable, usize),
    index: Option<usize>,
) {
    let range = match index {
        Some(k) => k..k + 1,
        None => 0..n,
    };
    for k in range {
        out.push(Column {
            name: format!("{object}.{var}[{k}]"),
            variable,
            index: k,
        });
    }
}

/// Every variable of every system, then of every interaction.
pub(crate) fn everything(model: &Model, control: &ControlVariables) -> Vec<Column> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let names = model
        .systems()
        .iter()
        .map(|s| s.name.as_str())
        .chain(model.interactions().iter().map(|i| i.name.as_str()))
        .chain(control.iter().map(|(n, _)| n.as_str()));
    for name in names {
        if !seen.insert(name) {
            continue;
        }
        for v in variables(model, control, name).unwrap_or_default() {
            push_all(&mut out, name, v, None);
        }
    }
    out
}

/// The columns of one selector, appended to `out`.
/// `label` names the selector's role in messages (`record`, `plot column`).
pub(crate) fn select(
    model: &Model,
    control: &ControlVariables,
    selector: &str,
    label: &str,
    at: &Place,
    out: &mut Vec<Column>,
) -> Result<()> {
    let bad = |reason: String| ScenarioError::Invalid {
        at: at.clone(),
        reason: format!("{label} `{selector}`: {reason}"),
    };
    let (object, rest) = selector.split_once('.').ok_or_else(|| {
        bad("expected `<object>.<variable>`, `<object>.<variable>[i]` or `<object>.*`".into())
    })?;
    let vars = variables(model, control, object).ok_or_else(|| {
        bad(format!(
            "no system, interaction, sensor, observer or controller is named `{object}`"
        ))
    })?;
    if rest == "*" {
        for v in vars {
            push_all(out, object, v, None);
        }
        return Ok(());
    }
    let (var, index) = match rest.split_once('[') {
        None => (rest, None),
        Some((var, idx)) => {
            let idx = idx
                .strip_suffix(']')
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(
                    || bad("the index must be a non-negative integer in brackets".into()),
                )?;
            (var, Some(idx))
        }
    };
    let names: Vec<&str> = vars.iter().map(|v| v.0).collect();
    let v = vars.iter().find(|v| v.0 == var).copied().ok_or_else(|| {
        bad(format!(
            "`{object}` has no variable `{var}` (its variables: {})",
            names.join(", ")
        ))
    })?;
    if let Some(k) = index {
        if k >= v.2 {
            return Err(bad(format!(
                "index {k} is out of range: `{object}.{var}` has {} components",
                v.2
            )));
        }
    }
    push_all(out, object, v, index);
    Ok(())
}

/// Removes repeated columns, keeping the first occurrence.
pub(crate) fn dedup(columns: &mut Vec<Column>) {
    let mut seen = HashSet::new();
    columns.retain(|c| seen.insert(c.name.clone()));
}
