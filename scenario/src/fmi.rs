//! `[fmi]`: what an FMU exported from the scenario exposes besides its
//! parameters — declared inputs (a held system input g, a relation input u,
//! or the measurement of a sensor fed from outside),
//! the outputs (recorded columns unless chosen), which parameters may change
//! between communication steps, and units. Checked when the scenario is
//! built; the FMI variables themselves are laid out by the `nonsmooth-fmus`
//! crate from the [`FmiSpec`].

use std::collections::{BTreeMap, HashSet};

use super::error::{Result, ScenarioError};
use super::record::Variable;
use super::record::{self, Column};
use super::schema::{FmiTable, ScenarioFile};
use super::values::{is_identifier, Ctx};
use nonsmooth::control::{ControlError, ControlLoop, SensorId};
use nonsmooth::modelling::{InteractionId, Model, SystemId};

/// Where an input enters the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputTarget {
    /// Component `index` of the held input g of a system
    /// ([`ControlLoop::set_external_input`]): a force on a Lagrangian system,
    /// a term of ẋ (like b(t)) on a first-order one.
    System {
        /// The system.
        system: SystemId,
        /// The component.
        index: usize,
    },
    /// Component `index` of the input u of a first-order linear relation
    /// ([`ControlLoop::set_relation_input`]; it enters y through F u).
    Relation {
        /// The interaction.
        interaction: InteractionId,
        /// The component.
        index: usize,
    },
    /// Component `index` of the measurement of a sensor fed from outside
    /// ([`ControlLoop::set_sensor_input`]): the sensor captures the value
    /// held at its instants in place of C x. Every component of such a
    /// sensor is an input.
    Sensor {
        /// The sensor.
        sensor: SensorId,
        /// The component.
        index: usize,
    },
}

/// A declared input.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiInput {
    /// Variable name (the target, `ball.g[0]`, unless given).
    pub name: String,
    /// Where it enters.
    pub target: InputTarget,
    /// The value held until one is set.
    pub start: f64,
    /// Unit, if given in `[fmi.units]`.
    pub unit: Option<String>,
    /// Description, if given.
    pub description: Option<String>,
}

/// The `[fmi]` table, checked (defaults filled in when the table is absent).
#[derive(Debug, Clone, PartialEq)]
pub struct FmiSpec {
    /// The model identifier: a C identifier, from `model_identifier` or the
    /// scenario name (characters other than letters, digits and `_` become
    /// `_`).
    pub model_identifier: String,
    /// The declared inputs, in file order.
    pub inputs: Vec<FmiInput>,
    /// The outputs: `[fmi] outputs` if given, else the recorded columns.
    pub outputs: Vec<Column>,
    /// Unit of each output (same order), if given.
    pub output_units: Vec<Option<String>>,
    /// Parameters that may be changed between communication steps.
    pub tunable: Vec<String>,
    /// Units of parameters.
    pub parameter_units: BTreeMap<String, String>,
}

impl FmiSpec {
    /// Holds `values` (one per input, in order) on the simulation: each
    /// input's component of its system's g or its relation's u is set, the
    /// other components keep their value.
    pub fn apply_inputs(
        &self,
        sim: &mut ControlLoop,
        values: &[f64],
    ) -> std::result::Result<(), ControlError> {
        if values.len() != self.inputs.len() {
            return Err(ControlError::BadReference(format!(
                "{} input values for {} inputs",
                values.len(),
                self.inputs.len()
            )));
        }
        let mut g: Vec<(SystemId, Vec<f64>)> = Vec::new();
        let mut u: Vec<(InteractionId, Vec<f64>)> = Vec::new();
        let mut y: Vec<(SensorId, Vec<f64>)> = Vec::new();
        for (input, &x) in self.inputs.iter().zip(values) {
            match input.target {
                InputTarget::System { system, index } => {
                    let k = match g.iter().position(|(s, _)| *s == system) {
                        Some(k) => k,
                        None => {
                            g.push((system, sim.external_input(system).to_vec()));
                            g.len() - 1
                        }
                    };
                    g[k].1[index] = x;
                }
                InputTarget::Relation { interaction, index } => {
                    let k = match u.iter().position(|(i, _)| *i == interaction) {
                        Some(k) => k,
                        None => {
                            u.push((
                                interaction,
                                sim.plant().relation_input(interaction).to_vec(),
                            ));
                            u.len() - 1
                        }
                    };
                    u[k].1[index] = x;
                }
                InputTarget::Sensor { sensor, index } => {
                    let k = match y.iter().position(|(s, _)| *s == sensor) {
                        Some(k) => k,
                        None => {
                            y.push((sensor, sim.sensor_input(sensor).to_vec()));
                            y.len() - 1
                        }
                    };
                    let held = &mut y[k].1;
                    if index >= held.len() {
                        return Err(ControlError::BadReference(format!(
                            "input `{}`: sensor {} is not fed from outside here",
                            input.name, sensor.0
                        )));
                    }
                    held[index] = x;
                }
            }
        }
        for (s, v) in &g {
            if sim.external_input(*s) != v.as_slice() {
                sim.set_external_input(*s, v)?;
            }
        }
        for (i, v) in &u {
            if sim.plant().relation_input(*i) != v.as_slice() {
                sim.set_relation_input(*i, v)?;
            }
        }
        for (s, v) in &y {
            if sim.sensor_input(*s) != v.as_slice() {
                sim.set_sensor_input(*s, v)?;
            }
        }
        Ok(())
    }

    /// The sensors fed from outside (targets of inputs), each once.
    pub fn fed_sensors(&self) -> Vec<SensorId> {
        let mut out: Vec<SensorId> = Vec::new();
        for i in &self.inputs {
            if let InputTarget::Sensor { sensor, .. } = i.target {
                if !out.contains(&sensor) {
                    out.push(sensor);
                }
            }
        }
        out
    }

    /// The start values of the inputs.
    pub fn input_starts(&self) -> Vec<f64> {
        self.inputs.iter().map(|i| i.start).collect()
    }
}

/// The model identifier made from a scenario name.
fn identifier_from(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// Parses `<object>.<var>[i]`.
fn split_target(text: &str) -> Option<(&str, &str, usize)> {
    let (object, rest) = text.split_once('.')?;
    let (var, idx) = rest.split_once('[')?;
    let idx = idx.strip_suffix(']')?.trim().parse().ok()?;
    Some((object, var, idx))
}

pub(super) fn fmi_spec(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    model: &Model,
    control: &record::ControlVariables,
    columns: &[Column],
    params: &BTreeMap<String, f64>,
) -> Result<FmiSpec> {
    let default_id = identifier_from(file.name.get_ref());
    let Some(table) = &file.fmi else {
        return Ok(FmiSpec {
            model_identifier: default_id,
            inputs: Vec::new(),
            outputs: columns.to_vec(),
            output_units: vec![None; columns.len()],
            tunable: Vec::new(),
            parameter_units: BTreeMap::new(),
        });
    };
    let t: &FmiTable = table.get_ref();
    let invalid = |span: std::ops::Range<usize>, reason: String| ScenarioError::Invalid {
        at: ctx.at(span),
        reason,
    };

    let model_identifier = match &t.model_identifier {
        None => default_id,
        Some(s) => {
            let id = s.get_ref();
            if !is_identifier(id) {
                return Err(invalid(
                    s.span(),
                    format!("model_identifier `{id}` must be letters, digits and `_`, not starting with a digit"),
                ));
            }
            id.clone()
        }
    };

    let mut outputs = Vec::new();
    match &t.outputs {
        Some(list) => {
            for s in list.get_ref() {
                let sel = ctx.render(s, "an output")?;
                record::select(
                    model,
                    control,
                    &sel,
                    "output",
                    &ctx.at(s.span()),
                    &mut outputs,
                )?;
            }
            record::dedup(&mut outputs);
        }
        None => outputs = columns.to_vec(),
    }

    let mut tunable = Vec::new();
    if let Some(list) = &t.tunable {
        for s in list.get_ref() {
            let name = s.get_ref();
            if !params.contains_key(name) {
                let names: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
                return Err(invalid(
                    s.span(),
                    format!(
                        "tunable `{name}` is not a parameter (parameters: {})",
                        super::expr::list(&names)
                    ),
                ));
            }
            if !tunable.contains(name) {
                tunable.push(name.clone());
            }
        }
    }

    let mut inputs: Vec<FmiInput> = Vec::new();
    let mut spans = Vec::new();
    let mut names: HashSet<String> = params.keys().cloned().collect();
    names.extend(outputs.iter().map(|c| c.name.clone()));
    for entry in &t.inputs {
        let e = entry.get_ref();
        let text = ctx.render(&e.target, "an input target")?;
        let at = e.target.span();
        let Some((object, var, index)) = split_target(&text) else {
            return Err(invalid(
                at,
                format!("input target `{text}`: expected `<system>.g[i]`, `<interaction>.u[i]` or `<sensor>.y[i]`"),
            ));
        };
        let sensor = control
            .iter()
            .find(|(n, _)| n == object)
            .and_then(|(_, vars)| {
                vars.iter().find_map(|(_, v, p)| match v {
                    Variable::SensorY(s) => Some((*s, *p)),
                    _ => None,
                })
            });
        let target = match var {
            "y" if sensor.is_some() => {
                let (sensor, p) = sensor.expect("checked");
                if index >= p {
                    return Err(invalid(
                        at,
                        format!("input target `{text}`: index {index} is out of range, sensor `{object}` measures {p} values"),
                    ));
                }
                InputTarget::Sensor { sensor, index }
            }
            "g" => {
                let system = model.system_id(object).ok_or_else(|| {
                    invalid(at.clone(), format!("input target `{text}`: no system is named `{object}`"))
                })?;
                let n = model.system(system).ds.dim();
                if index >= n {
                    return Err(invalid(
                        at,
                        format!("input target `{text}`: index {index} is out of range, `{object}` has dimension {n}"),
                    ));
                }
                InputTarget::System { system, index }
            }
            "u" => {
                let interaction = model.interaction_id(object).ok_or_else(|| {
                    invalid(
                        at.clone(),
                        format!("input target `{text}`: no interaction is named `{object}`"),
                    )
                })?;
                let n = model.interaction(interaction).relation.input_dim();
                if index >= n {
                    return Err(invalid(
                        at,
                        format!(
                            "input target `{text}`: index {index} is out of range, the relation of `{object}` takes {n} inputs (F has {n} columns)"
                        ),
                    ));
                }
                InputTarget::Relation { interaction, index }
            }
            other => {
                return Err(invalid(
                    at,
                    format!("input target `{text}`: `{other}` is not an input (inputs: `g` of a system, `u` of a relation, `y` of a sensor)"),
                ))
            }
        };
        if inputs.iter().any(|i| i.target == target) {
            return Err(invalid(at, format!("input target `{text}` is given twice")));
        }
        let name = match &e.name {
            Some(n) => ctx.render(n, "an input name")?,
            None => text.clone(),
        };
        let name_at = e.name.as_ref().map_or(at.clone(), |n| n.span());
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(invalid(
                name_at,
                format!("input name `{name}` is empty or has control characters"),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(invalid(
                name_at,
                format!("input name `{name}` is already the name of a parameter, output or input"),
            ));
        }
        let start = match &e.start {
            Some(q) => ctx.number(q, "start")?,
            None => 0.0,
        };
        spans.push(e.target.span());
        inputs.push(FmiInput {
            name,
            target,
            start,
            unit: None,
            description: e.description.clone(),
        });
    }

    // A sensor fed from outside is fed whole.
    for (name, vars) in control {
        for (_, v, p) in vars {
            let Variable::SensorY(sensor) = *v else {
                continue;
            };
            let given: Vec<(usize, std::ops::Range<usize>)> = inputs
                .iter()
                .zip(&spans)
                .filter_map(|(i, span)| match i.target {
                    InputTarget::Sensor { sensor: s, index } if s == sensor => {
                        Some((index, span.clone()))
                    }
                    _ => None,
                })
                .collect();
            if !given.is_empty() && given.len() != *p {
                let missing: Vec<String> = (0..*p)
                    .filter(|k| !given.iter().any(|(i, _)| i == k))
                    .map(|k| format!("`{name}.y[{k}]`"))
                    .collect();
                let at = given[0].1.clone();
                return Err(invalid(
                    at,
                    format!(
                        "sensor `{name}` is fed from outside: every component of its measurement must be an input (missing {})",
                        missing.join(", ")
                    ),
                ));
            }
        }
    }

    let mut output_units = vec![None; outputs.len()];
    let mut parameter_units = BTreeMap::new();
    if let Some(units) = &t.units {
        for (key, unit) in units.get_ref() {
            let u = unit.get_ref();
            let at = unit.span();
            if u.trim().is_empty() || u.chars().any(char::is_control) {
                return Err(invalid(
                    at,
                    format!("unit of `{key}`: `{u}` is empty or has control characters"),
                ));
            }
            if params.contains_key(key) {
                parameter_units.insert(key.clone(), u.clone());
                continue;
            }
            if let Some(i) = inputs.iter_mut().find(|i| &i.name == key) {
                i.unit = Some(u.clone());
                continue;
            }
            let mut sel = Vec::new();
            let found = record::select(
                model,
                control,
                key,
                "unit of",
                &ctx.at(at.clone()),
                &mut sel,
            )
            .is_ok()
                && sel.iter().any(|c| outputs.iter().any(|o| o.name == c.name));
            if !found {
                return Err(invalid(
                    at,
                    format!("unit given for `{key}`, which is no parameter, input or output (selector) of the FMU"),
                ));
            }
            for c in sel {
                if let Some(k) = outputs.iter().position(|o| o.name == c.name) {
                    output_units[k] = Some(u.clone());
                }
            }
        }
    }

    Ok(FmiSpec {
        model_identifier,
        inputs,
        outputs,
        output_units,
        tunable,
        parameter_units,
    })
}
