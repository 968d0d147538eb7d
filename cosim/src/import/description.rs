//! What an FMU declares in its modelDescription.xml: variables (name, value
//! reference, causality, variability, type, start value), the co-simulation
//! capabilities, the default experiment.

use fmi::fmi2::schema::{self, Causality, ScalarVariableElement, Variability};

/// The type of a scalar variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    /// fmi2Real.
    Real,
    /// fmi2Integer.
    Integer,
    /// fmi2Boolean.
    Boolean,
    /// fmi2String, or an FMI 3.0 type other than Float64, Int32 and
    /// Boolean (declared, not exchanged by the master).
    String,
    /// An enumeration (exchanged as an integer).
    Enumeration,
}

/// A start value, by type.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// A real start value.
    Real(f64),
    /// An integer start value.
    Integer(i32),
    /// A boolean start value.
    Boolean(bool),
}

/// The causality of a variable (FMI 2.0 §2.2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarCausality {
    /// Set before initialisation (tunable ones later too).
    Parameter,
    /// Computed from parameters.
    CalculatedParameter,
    /// Set by the master between steps.
    Input,
    /// Read by the master.
    Output,
    /// Internal, readable for records.
    Local,
    /// Time.
    Independent,
}

/// The variability of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarVariability {
    /// Never changes.
    Constant,
    /// Fixed after initialisation.
    Fixed,
    /// Changes only at communication points, through parameters.
    Tunable,
    /// Changes only at communication points.
    Discrete,
    /// Changes continuously.
    Continuous,
}

/// One scalar variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Its full name.
    pub name: String,
    /// Its value reference.
    pub value_reference: u32,
    /// Its causality.
    pub causality: VarCausality,
    /// Its variability (continuous when not given, as the standard says).
    pub variability: VarVariability,
    /// Its type.
    pub kind: VarType,
    /// Its start value, when declared.
    pub start: Option<Start>,
    /// Its description.
    pub description: Option<String>,
    /// Its unit, for a real whose `declaredType` names a `<SimpleType>` of
    /// `<TypeDefinitions>` with a `unit`. A `unit` written on the
    /// variable's own `<Real>` element is not read: the `fmi` crate's
    /// FMI 2.0 schema (fmi-schema 0.7) does not keep it. (FMI 3.0: the
    /// variable's own `unit`, else its declared type's.)
    pub unit: Option<String>,
    /// For an element of an FMI 3.0 array variable, its place in the
    /// array (the value reference is the array's); `None` for a scalar.
    pub element: Option<Element>,
}

/// The place of an element in an FMI 3.0 array variable (row-major, as
/// fmi3Get/Set exchange it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// Its index in the flattened array, from 0.
    pub index: u32,
    /// The number of elements of the array.
    pub len: u32,
}

/// The co-simulation capabilities the FMU declares (FMI 3.0:
/// canGetAndSetFMUState, canSerializeFMUState,
/// canHandleVariableCommunicationStepSize, canBeInstantiatedOnlyOncePerProcess).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// canHandleVariableCommunicationStepSize.
    pub variable_step: bool,
    /// canGetAndSetFMUstate.
    pub get_set_state: bool,
    /// canSerializeFMUstate.
    pub serialize_state: bool,
    /// canBeInstantiatedOnlyOncePerProcess.
    pub only_once_per_process: bool,
    /// canInterpolateInputs.
    pub interpolate_inputs: bool,
}

/// The parts of a modelDescription.xml the master uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// modelName.
    pub model_name: String,
    /// guid.
    pub guid: String,
    /// generationTool.
    pub generation_tool: Option<String>,
    /// The co-simulation modelIdentifier (the binary's name).
    pub model_identifier: String,
    /// The co-simulation capabilities.
    pub capabilities: Capabilities,
    /// DefaultExperiment: start, stop, step size.
    pub default_start: Option<f64>,
    /// DefaultExperiment stopTime.
    pub default_stop: Option<f64>,
    /// DefaultExperiment stepSize.
    pub default_step: Option<f64>,
    /// The variables, in file order.
    pub variables: Vec<Variable>,
}

impl Description {
    /// Reads the description of a parsed FMI 2.0 model description that has
    /// a co-simulation interface.
    pub(crate) fn from_schema(
        md: &schema::Fmi2ModelDescription,
        cs: &schema::CoSimulation,
    ) -> Self {
        let unit_of = |declared: &Option<String>| -> Option<String> {
            let name = declared.as_deref()?;
            md.type_definitions
                .as_ref()?
                .types
                .iter()
                .find(|t| t.name == name)
                .and_then(|t| match &t.elem {
                    schema::SimpleTypeElement::Real(r) => r.unit.clone(),
                    _ => None,
                })
        };
        let variables = md
            .model_variables
            .variables
            .iter()
            .map(|v| {
                let unit = match &v.elem {
                    ScalarVariableElement::Real(r) => unit_of(&r.declared_type),
                    _ => None,
                };
                let (kind, start) = match &v.elem {
                    ScalarVariableElement::Real(r) => (VarType::Real, r.start.map(Start::Real)),
                    ScalarVariableElement::Integer(i) => {
                        (VarType::Integer, i.start.map(Start::Integer))
                    }
                    ScalarVariableElement::Boolean(b) => {
                        (VarType::Boolean, b.start.map(Start::Boolean))
                    }
                    ScalarVariableElement::String => (VarType::String, None),
                    ScalarVariableElement::Enumeration => (VarType::Enumeration, None),
                };
                Variable {
                    name: v.name.clone(),
                    value_reference: v.value_reference,
                    causality: match v.causality {
                        Causality::Parameter => VarCausality::Parameter,
                        Causality::CalculatedParameter => VarCausality::CalculatedParameter,
                        Causality::Input => VarCausality::Input,
                        Causality::Output => VarCausality::Output,
                        Causality::Local => VarCausality::Local,
                        Causality::Independent => VarCausality::Independent,
                    },
                    variability: match v.variability {
                        Some(Variability::Constant) => VarVariability::Constant,
                        Some(Variability::Fixed) => VarVariability::Fixed,
                        Some(Variability::Tunable) => VarVariability::Tunable,
                        Some(Variability::Discrete) => VarVariability::Discrete,
                        Some(Variability::Continuous) | None => VarVariability::Continuous,
                    },
                    kind,
                    start,
                    description: v.description.clone(),
                    unit,
                    element: None,
                }
            })
            .collect();
        let flag = |f: Option<bool>| f.unwrap_or(false);
        let de = md.default_experiment.as_ref();
        Description {
            model_name: md.model_name.clone(),
            guid: md.guid.clone(),
            generation_tool: md.generation_tool.clone(),
            model_identifier: cs.model_identifier.clone(),
            capabilities: Capabilities {
                variable_step: flag(cs.can_handle_variable_communication_step_size),
                get_set_state: flag(cs.can_get_and_set_fmu_state),
                serialize_state: flag(cs.can_serialize_fmu_state),
                only_once_per_process: flag(cs.can_be_instantiated_only_once_per_process),
                interpolate_inputs: flag(cs.can_interpolate_inputs),
            },
            default_start: de.and_then(|d| d.start_time),
            default_stop: de.and_then(|d| d.stop_time),
            default_step: de.and_then(|d| d.step_size),
            variables,
        }
    }

    /// The variable of a name.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// The variables of a causality, in file order.
    pub fn with_causality(&self, c: VarCausality) -> impl Iterator<Item = &Variable> {
        self.variables.iter().filter(move |v| v.causality == c)
    }
}
