//! modelDescription.xml of an FMI 2.0 or 3.0 co-simulation FMU from an
//! [`Interface`], written once for both versions through a serializer
//! (serde and quick-xml, which escape every attribute value): the types
//! below are the elements and attributes written, the two standards
//! differing only in the capability flags of `<CoSimulation>`, the variable
//! elements (`<ScalarVariable><Real/></ScalarVariable>` against
//! `<Float64/>`, plus FMI 3.0's independent variable `time`, whose value
//! reference follows the others) and the model structure (1-based indices
//! in `<Outputs>`/`<InitialUnknowns>` against value references).
//!
//! Outputs depend on no input (`dependencies=""`: no direct feedthrough,
//! docs/fmi.md); initial unknowns depend on the parameters.

use std::collections::BTreeSet;

use serde::{Serialize, Serializer};

use crate::instance::Standard;
use crate::instance_log::LOG_CATEGORIES;
use crate::variables::{FmiVariable, Interface, VarKind};

/// A number as an xs:double in its shortest round-trip form (`0.0`,
/// `1e-5`).
struct Num(f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:?}", self.0))
    }
}

/// Text without the control characters XML 1.0 cannot hold (tabs and line
/// breaks become spaces, as an XML reader normalizes them in attributes).
fn clean(s: &str) -> String {
    s.chars()
        .filter_map(|c| match c {
            '\t' | '\n' | '\r' => Some(' '),
            c if (c as u32) < 0x20 => None,
            c => Some(c),
        })
        .collect()
}

#[derive(Serialize)]
struct ModelDescription<'a> {
    #[serde(rename = "@fmiVersion")]
    fmi_version: &'static str,
    #[serde(rename = "@modelName")]
    model_name: String,
    #[serde(rename = "@guid", skip_serializing_if = "Option::is_none")]
    guid: Option<String>,
    #[serde(
        rename = "@instantiationToken",
        skip_serializing_if = "Option::is_none"
    )]
    instantiation_token: Option<String>,
    #[serde(rename = "@description", skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(rename = "@generationTool")]
    generation_tool: String,
    #[serde(rename = "@variableNamingConvention")]
    naming: &'static str,
    #[serde(
        rename = "@numberOfEventIndicators",
        skip_serializing_if = "Option::is_none"
    )]
    event_indicators: Option<u32>,
    #[serde(rename = "CoSimulation")]
    co_simulation: CoSimulation,
    #[serde(rename = "UnitDefinitions", skip_serializing_if = "Option::is_none")]
    units: Option<Units<'a>>,
    #[serde(rename = "LogCategories")]
    log_categories: LogCategories,
    #[serde(rename = "DefaultExperiment")]
    default_experiment: DefaultExperiment,
    #[serde(rename = "ModelVariables")]
    model_variables: Items<Variable>,
    #[serde(rename = "ModelStructure")]
    model_structure: Items<Structure>,
}

/// The capability flags of `<CoSimulation>`.
#[derive(Serialize)]
#[serde(untagged)]
enum CoSimulation {
    Fmi2 {
        #[serde(rename = "@modelIdentifier")]
        model_identifier: String,
        #[serde(rename = "@needsExecutionTool")]
        needs_execution_tool: bool,
        #[serde(rename = "@canHandleVariableCommunicationStepSize")]
        variable_step: bool,
        #[serde(rename = "@canInterpolateInputs")]
        interpolate_inputs: bool,
        #[serde(rename = "@maxOutputDerivativeOrder")]
        output_derivative_order: u32,
        #[serde(rename = "@canRunAsynchronuously")]
        asynchronous: bool,
        #[serde(rename = "@canBeInstantiatedOnlyOncePerProcess")]
        once_per_process: bool,
        #[serde(rename = "@canNotUseMemoryManagementFunctions")]
        no_memory_functions: bool,
        #[serde(rename = "@canGetAndSetFMUstate")]
        get_set_state: bool,
        #[serde(rename = "@canSerializeFMUstate")]
        serialize_state: bool,
        #[serde(rename = "@providesDirectionalDerivative")]
        directional_derivative: bool,
    },
    Fmi3 {
        #[serde(rename = "@modelIdentifier")]
        model_identifier: String,
        #[serde(rename = "@needsExecutionTool")]
        needs_execution_tool: bool,
        #[serde(rename = "@canBeInstantiatedOnlyOncePerProcess")]
        once_per_process: bool,
        #[serde(rename = "@canGetAndSetFMUState")]
        get_set_state: bool,
        #[serde(rename = "@canSerializeFMUState")]
        serialize_state: bool,
        #[serde(rename = "@providesDirectionalDerivatives")]
        directional_derivatives: bool,
        #[serde(rename = "@providesAdjointDerivatives")]
        adjoint_derivatives: bool,
        #[serde(rename = "@providesPerElementDependencies")]
        per_element_dependencies: bool,
        #[serde(rename = "@canHandleVariableCommunicationStepSize")]
        variable_step: bool,
        #[serde(rename = "@maxOutputDerivativeOrder")]
        output_derivative_order: u32,
        #[serde(rename = "@providesIntermediateUpdate")]
        intermediate_update: bool,
        #[serde(rename = "@mightReturnEarlyFromDoStep")]
        early_return: bool,
        #[serde(rename = "@canReturnEarlyAfterIntermediateUpdate")]
        early_return_after_update: bool,
        #[serde(rename = "@hasEventMode")]
        event_mode: bool,
        #[serde(rename = "@providesEvaluateDiscreteStates")]
        evaluate_discrete_states: bool,
    },
}

#[derive(Serialize)]
struct Units<'a> {
    #[serde(rename = "Unit")]
    units: Vec<Named<'a>>,
}

#[derive(Serialize)]
struct Named<'a> {
    #[serde(rename = "@name")]
    name: &'a str,
}

#[derive(Serialize)]
struct LogCategories {
    #[serde(rename = "Category")]
    categories: Vec<Category>,
}

#[derive(Serialize)]
struct Category {
    #[serde(rename = "@name")]
    name: &'static str,
    #[serde(rename = "@description")]
    description: &'static str,
}

#[derive(Serialize)]
struct DefaultExperiment {
    #[serde(rename = "@startTime")]
    start: Num,
    #[serde(rename = "@stopTime")]
    stop: Num,
    #[serde(rename = "@stepSize")]
    step: Num,
}

/// Child elements named by their variant.
#[derive(Serialize)]
struct Items<T> {
    #[serde(rename = "$value")]
    items: Vec<T>,
}

/// A variable element: FMI 2.0 nests its unit and start value in
/// `<Real>`, FMI 3.0 has them as attributes.
#[derive(Serialize)]
struct Var {
    #[serde(rename = "@name")]
    name: String,
    #[serde(rename = "@valueReference")]
    value_reference: u32,
    #[serde(rename = "@description", skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(rename = "@causality")]
    causality: &'static str,
    #[serde(rename = "@variability")]
    variability: &'static str,
    #[serde(rename = "@initial", skip_serializing_if = "Option::is_none")]
    initial: Option<&'static str>,
    #[serde(rename = "@unit", skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(rename = "@start", skip_serializing_if = "Option::is_none")]
    start: Option<Num>,
    #[serde(rename = "Real", skip_serializing_if = "Option::is_none")]
    real: Option<Real>,
}

/// FMI 2.0's `<Real>`.
#[derive(Serialize)]
struct Real {
    #[serde(rename = "@unit", skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(rename = "@start", skip_serializing_if = "Option::is_none")]
    start: Option<Num>,
}

#[derive(Serialize)]
enum Variable {
    /// FMI 2.0.
    ScalarVariable(Var),
    /// FMI 3.0.
    Float64(Var),
}

#[derive(Serialize)]
enum Structure {
    /// FMI 2.0.
    Outputs(Unknowns),
    /// FMI 2.0.
    InitialUnknowns(Unknowns),
    /// FMI 3.0.
    Output(Unknown),
    /// FMI 3.0.
    InitialUnknown(Unknown),
}

#[derive(Serialize)]
struct Unknowns {
    #[serde(rename = "Unknown")]
    unknowns: Vec<Unknown>,
}

#[derive(Serialize)]
struct Unknown {
    #[serde(rename = "@index", skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(rename = "@valueReference", skip_serializing_if = "Option::is_none")]
    value_reference: Option<u32>,
    #[serde(rename = "@dependencies")]
    dependencies: String,
}

/// The element of `v` in `standard`.
fn variable(v: &FmiVariable, standard: Standard) -> Variable {
    let unit = v.unit.as_deref().map(clean);
    let start = v.start.map(Num);
    let mut var = Var {
        name: clean(&v.name),
        value_reference: v.value_reference,
        description: v.description.as_deref().map(clean),
        causality: v.causality(),
        variability: v.variability(),
        initial: v.initial(),
        unit: None,
        start: None,
        real: None,
    };
    match standard {
        Standard::Fmi2 => {
            var.real = Some(Real { unit, start });
            Variable::ScalarVariable(var)
        }
        Standard::Fmi3 => {
            (var.unit, var.start) = (unit, start);
            Variable::Float64(var)
        }
    }
}

fn co_simulation(standard: Standard, model_identifier: String) -> CoSimulation {
    match standard {
        Standard::Fmi2 => CoSimulation::Fmi2 {
            model_identifier,
            needs_execution_tool: false,
            variable_step: true,
            interpolate_inputs: false,
            output_derivative_order: 0,
            asynchronous: false,
            once_per_process: false,
            no_memory_functions: true,
            get_set_state: true,
            serialize_state: true,
            directional_derivative: false,
        },
        Standard::Fmi3 => CoSimulation::Fmi3 {
            model_identifier,
            needs_execution_tool: false,
            once_per_process: false,
            get_set_state: true,
            serialize_state: true,
            directional_derivatives: false,
            adjoint_derivatives: false,
            per_element_dependencies: false,
            variable_step: true,
            output_derivative_order: 0,
            intermediate_update: false,
            early_return: true,
            early_return_after_update: false,
            event_mode: true,
            evaluate_discrete_states: false,
        },
    }
}

/// The model structure: outputs with their dependencies on inputs (none),
/// and the same outputs as initial unknowns depending on the parameters.
fn structure(iface: &Interface, standard: Standard) -> Vec<Structure> {
    let fmi2 = standard == Standard::Fmi2;
    // FMI 2.0 names variables by their 1-based index, FMI 3.0 by their
    // value reference.
    let id = |vr: u32| if fmi2 { vr + 1 } else { vr };
    let list = |vrs: &[u32]| {
        let ids: Vec<String> = vrs.iter().map(|vr| id(*vr).to_string()).collect();
        ids.join(" ")
    };
    let unknown = |vr: u32, dependencies: String| Unknown {
        index: fmi2.then_some(id(vr)),
        value_reference: (!fmi2).then_some(vr),
        dependencies,
    };
    let params: Vec<u32> = iface
        .variables
        .iter()
        .filter(|v| matches!(v.kind, VarKind::Parameter { .. }))
        .map(|v| v.value_reference)
        .collect();
    let outputs: Vec<&FmiVariable> = iface.outputs().collect();
    let output = |v: &&FmiVariable| unknown(v.value_reference, list(&iface.output_dependencies(v)));
    let initial = |v: &&FmiVariable| unknown(v.value_reference, list(&params));
    if outputs.is_empty() {
        return Vec::new();
    }
    if fmi2 {
        vec![
            Structure::Outputs(Unknowns {
                unknowns: outputs.iter().map(output).collect(),
            }),
            Structure::InitialUnknowns(Unknowns {
                unknowns: outputs.iter().map(initial).collect(),
            }),
        ]
    } else {
        let o = outputs.iter().map(|v| Structure::Output(output(v)));
        let i = outputs
            .iter()
            .map(|v| Structure::InitialUnknown(initial(v)));
        o.chain(i).collect()
    }
}

/// The text of modelDescription.xml for `standard`, with the GUID (FMI 2.0)
/// or instantiation token (FMI 3.0) `token`.
pub fn model_description(iface: &Interface, standard: Standard, token: &str, tool: &str) -> String {
    let fmi2 = standard == Standard::Fmi2;
    let units: BTreeSet<&str> = iface
        .variables
        .iter()
        .filter_map(|v| v.unit.as_deref())
        .collect();
    let mut variables: Vec<Variable> = iface
        .variables
        .iter()
        .map(|v| variable(v, standard))
        .collect();
    if !fmi2 {
        variables.push(Variable::Float64(Var {
            name: "time".into(),
            value_reference: iface.time_reference(),
            description: Some("simulation time".into()),
            causality: "independent",
            variability: "continuous",
            initial: None,
            unit: None,
            start: None,
            real: None,
        }));
    }
    let (t0, t_end, step) = iface.default_experiment;
    let md = ModelDescription {
        fmi_version: if fmi2 { "2.0" } else { "3.0" },
        model_name: clean(&iface.model_name),
        guid: fmi2.then(|| clean(token)),
        instantiation_token: (!fmi2).then(|| clean(token)),
        description: iface.description.as_deref().map(|d| clean(d.trim())),
        generation_tool: clean(tool),
        naming: "flat",
        event_indicators: fmi2.then_some(0),
        co_simulation: co_simulation(standard, clean(&iface.model_identifier)),
        units: (!units.is_empty()).then(|| Units {
            units: units.into_iter().map(|name| Named { name }).collect(),
        }),
        log_categories: LogCategories {
            categories: LOG_CATEGORIES
                .iter()
                .map(|&(name, description)| Category { name, description })
                .collect(),
        },
        default_experiment: DefaultExperiment {
            start: Num(t0),
            stop: Num(t_end),
            step: Num(step),
        },
        model_variables: Items { items: variables },
        model_structure: Items {
            items: structure(iface, standard),
        },
    };
    to_xml("fmiModelDescription", &md)
}

/// An XML document of `value` under the root element `root`, indented,
/// every attribute value escaped.
fn to_xml(root: &str, value: &impl Serialize) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut ser =
        quick_xml::se::Serializer::with_root(&mut xml, Some(root)).expect("a valid root name");
    ser.indent(' ', 2);
    ser.set_quote_level(quick_xml::se::QuoteLevel::Full);
    value
        .serialize(ser)
        .expect("the model description serializes: every name is an XML name");
    xml.push('\n');
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_values_are_escaped_and_cleaned() {
        assert_eq!(clean("x\ny\u{1}\tz"), "x y z");
        let xml = to_xml(
            "Unit",
            &Named {
                name: r#"a<b & "c" 'd'>"#,
            },
        );
        assert!(
            xml.ends_with("<Unit name=\"a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\"/>\n"),
            "{xml}"
        );
        let num = to_xml(
            "DefaultExperiment",
            &DefaultExperiment {
                start: Num(0.0),
                stop: Num(1e-5),
                step: Num(0.1),
            },
        );
        assert!(
            num.contains(r#"startTime="0.0" stopTime="1e-5" stepSize="0.1""#),
            "{num}"
        );
    }
}
