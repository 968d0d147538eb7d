//! The native model of a co-simulation scenario: the `[[systems]]` and
//! `[[interactions]]` beside `[[fmus]]`, and the ends of `[[connections]]`
//! that name it.
//!
//! A native end is resolved against the model with the place of the
//! connection entry:
//!
//! * a **source** (`from`) is a recorded variable of the model, one
//!   component: `<system>.x[i]`, `<system>.q[i]`, `<system>.v[i]`,
//!   `<interaction>.y[i]`, `<interaction>.lambda[i]` (the names
//!   `[output] record` accepts);
//! * a **target** (`to`) is a held input of the model, one component:
//!   `<system>.g[i]` (the external input g of M v̇ = F + g or ẋ = f + g)
//!   or `<interaction>.u[i]` (the input u of a first-order linear
//!   relation, y = C x + F u + e) — the inputs an `[fmi]` input may
//!   target.
//!
//! A held input driven by a connection may also be driven by actuators:
//! the value held is the sum g = Σ_a B_a u_a + Σ_c e_{i_c} y_c (a
//! component driven by two connections is an error).

use std::sync::Arc;

use nonsmooth::modelling::{InteractionId, Model, SystemId};

use super::cosim_plan::{CosimPlan, Endpoint};
use super::error::{Place, Result, ScenarioError};
use super::record::{self, Variable};

/// A native value read for a connection (its source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeSource {
    /// The connection's index in [`CosimPlan::connections`].
    pub connection: usize,
    /// What is read (`Q`, `V`, `X`, `Y`, `Lambda` or `ContactStatus`).
    pub variable: Variable,
    /// The component.
    pub index: usize,
}

/// A held native input driven by a connection (its target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeInput {
    /// Component `index` of the input g of a system.
    System {
        /// The system.
        system: SystemId,
        /// The component.
        index: usize,
    },
    /// Component `index` of the input u of a relation.
    Relation {
        /// The interaction.
        interaction: InteractionId,
        /// The component.
        index: usize,
    },
}

/// A connection's native target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeTarget {
    /// The connection's index in [`CosimPlan::connections`].
    pub connection: usize,
    /// The input driven.
    pub input: NativeInput,
}

/// The native part of a co-simulation scenario.
#[derive(Debug, Clone)]
pub struct NativePart {
    /// The native model alone (its systems and interactions have the same
    /// ids as in the scenario's model, whose systems go on with one
    /// interface system per FMU).
    pub model: Arc<Model>,
    /// Connections from the native model to FMU inputs.
    pub sources: Vec<NativeSource>,
    /// Connections from FMU outputs to the native model's inputs.
    pub targets: Vec<NativeTarget>,
}

fn invalid(at: &Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid {
        at: at.clone(),
        reason,
    }
}

/// `<object>.<var>[<index>]`.
fn split(text: &str) -> Option<(&str, &str, usize)> {
    let (object, rest) = text.split_once('.')?;
    let (var, idx) = rest.split_once('[')?;
    let idx = idx.strip_suffix(']')?.trim().parse().ok()?;
    Some((object, var, idx))
}

/// The names a native end may start with, for messages.
fn known(model: &Model, plan: &CosimPlan) -> String {
    let names = |v: Vec<&str>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    format!(
        "FMUs: {}; systems: {}; interactions: {}",
        names(plan.fmus.iter().map(|f| f.name.as_str()).collect()),
        names(model.systems().iter().map(|s| s.name.as_str()).collect()),
        names(
            model
                .interactions()
                .iter()
                .map(|i| i.name.as_str())
                .collect()
        )
    )
}

/// Resolves the native ends of the plan's connections against `model`
/// (the native model alone). A plan with native ends and no native model
/// (`model` with no system) is refused at the first such end.
pub(crate) fn resolve(
    plan: &CosimPlan,
    model: &Arc<Model>,
) -> Result<(Vec<NativeSource>, Vec<NativeTarget>)> {
    let mut sources = Vec::new();
    let mut targets: Vec<NativeTarget> = Vec::new();
    for (k, c) in plan.connections.iter().enumerate() {
        if c.from.native {
            let (variable, index) = source(&c.from, model, plan)?;
            sources.push(NativeSource {
                connection: k,
                variable,
                index,
            });
        }
        if c.to.native {
            let input = target(&c.to, model, plan)?;
            if targets.iter().any(|t| t.input == input) {
                return Err(invalid(
                    &c.to.place,
                    format!(
                        "`{}.{}` is driven by two connections",
                        c.to.fmu, c.to.variable
                    ),
                ));
            }
            targets.push(NativeTarget {
                connection: k,
                input,
            });
        }
    }
    Ok((sources, targets))
}

fn text(e: &Endpoint) -> String {
    format!("{}.{}", e.fmu, e.variable)
}

fn unknown_object(e: &Endpoint, model: &Model, plan: &CosimPlan) -> ScenarioError {
    invalid(
        &e.place,
        format!(
            "connection end `{}`: no FMU, system or interaction is named `{}` ({})",
            text(e),
            e.fmu,
            known(model, plan)
        ),
    )
}

fn source(e: &Endpoint, model: &Model, plan: &CosimPlan) -> Result<(Variable, usize)> {
    let t = text(e);
    if model.system_id(&e.fmu).is_none() && model.interaction_id(&e.fmu).is_none() {
        return Err(unknown_object(e, model, plan));
    }
    let Some((_, var, _)) = split(&t) else {
        return Err(invalid(
            &e.place,
            format!(
                "connection source `{t}`: expected one component of a recorded variable, \
                 `<system>.x[i]` (or q, v) or `<interaction>.y[i]` (or lambda)"
            ),
        ));
    };
    if var == "g" || var == "u" {
        return Err(invalid(
            &e.place,
            format!(
                "connection source `{t}` is a held input of the model: a connection goes from \
                 an output (an FMU output, or a recorded variable x, q, v, y, lambda of the \
                 model) to an input"
            ),
        ));
    }
    let mut cols = Vec::new();
    record::select(
        model,
        &Vec::new(),
        &t,
        "connection source",
        &e.place,
        &mut cols,
    )?;
    match cols.as_slice() {
        [c] => Ok((c.variable, c.index)),
        _ => Err(invalid(
            &e.place,
            format!("connection source `{t}` must name one component"),
        )),
    }
}

fn target(e: &Endpoint, model: &Model, plan: &CosimPlan) -> Result<NativeInput> {
    let t = text(e);
    let system = model.system_id(&e.fmu);
    let interaction = model.interaction_id(&e.fmu);
    if system.is_none() && interaction.is_none() {
        return Err(unknown_object(e, model, plan));
    }
    let not_input = || {
        invalid(
            &e.place,
            format!(
                "connection target `{t}` is not an input of the model: a connection drives \
                 `<system>.g[i]` or `<interaction>.u[i]`"
            ),
        )
    };
    let Some((_, var, index)) = split(&t) else {
        return Err(not_input());
    };
    let out_of_range = |n: usize, what: &str| {
        invalid(
            &e.place,
            format!("connection target `{t}`: index {index} is out of range, {what} {n}"),
        )
    };
    match (var, system, interaction) {
        ("g", Some(system), _) => {
            let n = model.system(system).ds.dim();
            if index >= n {
                return Err(out_of_range(n, &format!("`{}` has dimension", e.fmu)));
            }
            Ok(NativeInput::System { system, index })
        }
        ("u", _, Some(interaction)) => {
            let n = model.interaction(interaction).relation.input_dim();
            if index >= n {
                return Err(out_of_range(
                    n,
                    &format!("the relation of `{}` takes inputs:", e.fmu),
                ));
            }
            Ok(NativeInput::Relation { interaction, index })
        }
        _ => Err(not_input()),
    }
}
