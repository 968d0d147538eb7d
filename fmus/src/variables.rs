//! The scenario → FMI variable mapping, in one place: which variables an
//! FMU has, their value references, causality, variability, start values,
//! units and descriptions. Both modelDescription.xml and the runtime use
//! [`Interface`], so the two can never disagree.
//!
//! Layout (value references are the positions in this list, from 0):
//!
//! 1. the `[parameters]`, in alphabetical order: causality `parameter`,
//!    variability `tunable` for those listed in `[fmi] tunable`, `fixed`
//!    otherwise; start = the value after `--set`;
//! 2. the `[fmi] inputs`, in file order: causality `input`, variability
//!    `continuous`, start = their `start`;
//! 3. the outputs (`[fmi] outputs`, or the recorded columns), in column
//!    order: causality `output`, variability `continuous`, initial
//!    `calculated`.
//!
//! Outputs depend on no input at the same communication point (see
//! [`Interface::output_dependencies`]).

use nonsmooth_scenario::{BuiltScenario, Column, InputTarget, Variable};

/// What an FMI variable is.
#[derive(Debug, Clone, PartialEq)]
pub enum VarKind {
    /// A `[parameters]` entry.
    Parameter {
        /// Its name in the scenario.
        name: String,
        /// May change between communication steps.
        tunable: bool,
    },
    /// The k-th declared input.
    Input(usize),
    /// The k-th output column.
    Output(usize),
}

/// One FMI scalar variable (all are `Real`).
#[derive(Debug, Clone, PartialEq)]
pub struct FmiVariable {
    /// The variable name.
    pub name: String,
    /// Its value reference.
    pub value_reference: u32,
    /// What it is.
    pub kind: VarKind,
    /// Start value (parameters and inputs).
    pub start: Option<f64>,
    /// Unit, if the scenario gives one.
    pub unit: Option<String>,
    /// Description.
    pub description: Option<String>,
}

impl FmiVariable {
    /// `parameter`, `input` or `output`.
    pub fn causality(&self) -> &'static str {
        match self.kind {
            VarKind::Parameter { .. } => "parameter",
            VarKind::Input(_) => "input",
            VarKind::Output(_) => "output",
        }
    }

    /// `fixed`, `tunable` or `continuous`.
    pub fn variability(&self) -> &'static str {
        match self.kind {
            VarKind::Parameter { tunable: false, .. } => "fixed",
            VarKind::Parameter { tunable: true, .. } => "tunable",
            _ => "continuous",
        }
    }

    /// `exact` (parameters), none (inputs), `calculated` (outputs).
    pub fn initial(&self) -> Option<&'static str> {
        match self.kind {
            VarKind::Parameter { .. } => Some("exact"),
            VarKind::Input(_) => None,
            VarKind::Output(_) => Some("calculated"),
        }
    }
}

/// The FMI view of a built scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Interface {
    /// Model name (the scenario name).
    pub model_name: String,
    /// Description (the scenario's).
    pub description: Option<String>,
    /// The model identifier.
    pub model_identifier: String,
    /// The variables; `variables[k].value_reference == k`.
    pub variables: Vec<FmiVariable>,
    /// Number of parameters (they come first).
    pub parameters: usize,
    /// Number of inputs (after the parameters).
    pub inputs: usize,
    /// The output columns, in order.
    pub output_columns: Vec<Column>,
    /// Default experiment: t0, t_end, step.
    pub default_experiment: (f64, f64, f64),
}

fn column_description(c: &Column) -> &'static str {
    match c.variable {
        Variable::Q(_) => "position q of a Lagrangian system",
        Variable::V(_) => "velocity v of a Lagrangian system",
        Variable::X(_) => "state x of a first-order system",
        Variable::Y(_) => "output y of an interaction",
        Variable::Lambda(_) => {
            "multiplier λ of an interaction (impulse of the step for impact laws)"
        }
        Variable::ContactStatus(_) => {
            "status of a frictional contact: 0 separated, 1 sticking, 2 sliding"
        }
        Variable::SensorY(_) => "latest measurement delivered by a sensor",
        Variable::ObserverXhat(_) => "state estimate of an observer",
        Variable::ControllerU(_) => "input applied by a controller's actuator",
        Variable::ControllerSignal(..) => "signal of a control law",
        Variable::Part(..) => "pose, velocity of a rigid body, or a value of the rigid world",
    }
}

impl Interface {
    /// The variables of a built scenario.
    pub fn new(built: &BuiltScenario) -> Interface {
        let spec = &built.fmi;
        let mut variables = Vec::new();
        let mut push = |name: String, kind, start, unit, description| {
            let value_reference = variables.len() as u32;
            variables.push(FmiVariable {
                name,
                value_reference,
                kind,
                start,
                unit,
                description,
            });
        };
        for (name, &value) in &built.parameters {
            push(
                name.clone(),
                VarKind::Parameter {
                    name: name.clone(),
                    tunable: spec.tunable.contains(name),
                },
                Some(value),
                spec.parameter_units.get(name).cloned(),
                None,
            );
        }
        for (k, input) in spec.inputs.iter().enumerate() {
            let description = input.description.clone().or_else(|| {
                Some(match input.target {
                    InputTarget::System { .. } => {
                        "held input g of a system (force, or term of dx/dt)".to_string()
                    }
                    InputTarget::Relation { .. } => {
                        "held input u of a relation (enters y through F u)".to_string()
                    }
                    InputTarget::Sensor { .. } => {
                        "measurement of a sensor fed from outside (read at its instants)"
                            .to_string()
                    }
                })
            });
            push(
                input.name.clone(),
                VarKind::Input(k),
                Some(input.start),
                input.unit.clone(),
                description,
            );
        }
        for (k, c) in spec.outputs.iter().enumerate() {
            push(
                c.name.clone(),
                VarKind::Output(k),
                None,
                spec.output_units[k].clone(),
                Some(column_description(c).to_string()),
            );
        }
        let s = &built.settings;
        Interface {
            model_name: built.name.clone(),
            description: built.description.clone(),
            model_identifier: spec.model_identifier.clone(),
            parameters: built.parameters.len(),
            inputs: spec.inputs.len(),
            output_columns: spec.outputs.clone(),
            variables,
            default_experiment: (s.t0, s.t_end, s.step),
        }
    }

    /// The variable of a value reference.
    pub fn variable(&self, vr: u32) -> Option<&FmiVariable> {
        self.variables.get(vr as usize)
    }

    /// The value references of the outputs.
    pub fn outputs(&self) -> impl Iterator<Item = &FmiVariable> {
        self.variables
            .iter()
            .filter(|v| matches!(v.kind, VarKind::Output(_)))
    }

    /// The inputs an output depends on directly, as value references: none.
    /// Inputs are held over the next communication step and enter the
    /// state (through g) or the one-step problem (through u) only during
    /// that step; outputs are values at the end of the last step. So an
    /// input set at a communication point changes no output before the next
    /// `fmi2DoStep`: no direct feedthrough, `dependencies=""`.
    pub fn output_dependencies(&self, _output: &FmiVariable) -> Vec<u32> {
        Vec::new()
    }

    /// The value reference of FMI 3.0's independent variable `time`: after
    /// every variable of the interface.
    pub fn time_reference(&self) -> u32 {
        self.variables.len() as u32
    }

    /// Names and kinds only (what must stay the same when a tunable
    /// parameter changes and the scenario is rebuilt).
    pub fn same_layout(&self, other: &Interface) -> bool {
        self.variables.len() == other.variables.len()
            && self
                .variables
                .iter()
                .zip(&other.variables)
                .all(|(a, b)| a.name == b.name && a.kind == b.kind)
            && self.output_columns == other.output_columns
    }
}

/// A GUID made from the bytes that define an FMU (128-bit FNV-1a, written
/// as `{8-4-4-4-12}` hexadecimal): the same scenario, settings and runtime
/// version give the same GUID, any change gives another.
pub fn guid_of(parts: &[&[u8]]) -> String {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for part in parts {
        // Length first, so that part boundaries count.
        for b in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            h ^= *b as u128;
            h = h.wrapping_mul(PRIME);
        }
    }
    let x = format!("{h:032x}");
    format!(
        "{{{}-{}-{}-{}-{}}}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_are_stable_and_sensitive() {
        let a = guid_of(&[b"abc", b"def"]);
        assert_eq!(a, guid_of(&[b"abc", b"def"]));
        assert_ne!(a, guid_of(&[b"abcd", b"ef"]));
        assert_eq!(a.len(), 38);
        assert!(a.starts_with('{') && a.ends_with('}'));
    }
}
