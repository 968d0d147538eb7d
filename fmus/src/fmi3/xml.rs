//! modelDescription.xml of an FMI 3.0 co-simulation FMU from an
//! [`Interface`]: the same variables as the FMI 2.0 description (as
//! `<Float64>`, with the same value references) plus the independent
//! variable `time`, whose value reference follows the others.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::variables::{Interface, VarKind};
use crate::xml::{escape, LOG_CATEGORIES};

/// The value reference of the independent variable `time`: after every
/// variable of the interface.
pub fn time_value_reference(iface: &Interface) -> u32 {
    iface.variables.len() as u32
}

fn number(x: f64) -> String {
    format!("{x:?}")
}

/// The text of an FMI 3.0 modelDescription.xml (co-simulation with event
/// mode and early return, complete state get/set and serialization, for
/// time-stepping and event-driven plants alike) with the given
/// instantiation token.
pub fn model_description(iface: &Interface, token: &str, tool: &str) -> String {
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = write!(
        x,
        r#"<fmiModelDescription fmiVersion="3.0" modelName="{}" instantiationToken="{}""#,
        escape(&iface.model_name),
        escape(token)
    );
    if let Some(d) = &iface.description {
        let _ = write!(x, r#" description="{}""#, escape(d.trim()));
    }
    let _ = writeln!(
        x,
        r#" generationTool="{}" variableNamingConvention="flat">"#,
        escape(tool)
    );
    let _ = writeln!(
        x,
        r#"  <CoSimulation modelIdentifier="{}" needsExecutionTool="false" canBeInstantiatedOnlyOncePerProcess="false" canGetAndSetFMUState="true" canSerializeFMUState="true" providesDirectionalDerivatives="false" providesAdjointDerivatives="false" providesPerElementDependencies="false" canHandleVariableCommunicationStepSize="true" maxOutputDerivativeOrder="0" providesIntermediateUpdate="false" mightReturnEarlyFromDoStep="true" canReturnEarlyAfterIntermediateUpdate="false" hasEventMode="true" providesEvaluateDiscreteStates="false"/>"#,
        escape(&iface.model_identifier),
    );
    let units: BTreeSet<&str> = iface
        .variables
        .iter()
        .filter_map(|v| v.unit.as_deref())
        .collect();
    if !units.is_empty() {
        let _ = writeln!(x, "  <UnitDefinitions>");
        for u in units {
            let _ = writeln!(x, r#"    <Unit name="{}"/>"#, escape(u));
        }
        let _ = writeln!(x, "  </UnitDefinitions>");
    }
    let _ = writeln!(x, "  <LogCategories>");
    for (name, d) in LOG_CATEGORIES {
        let _ = writeln!(
            x,
            r#"    <Category name="{name}" description="{}"/>"#,
            escape(d)
        );
    }
    let _ = writeln!(x, "  </LogCategories>");
    let (t0, t_end, step) = iface.default_experiment;
    let _ = writeln!(
        x,
        r#"  <DefaultExperiment startTime="{}" stopTime="{}" stepSize="{}"/>"#,
        number(t0),
        number(t_end),
        number(step)
    );
    let _ = writeln!(x, "  <ModelVariables>");
    for v in &iface.variables {
        let _ = write!(
            x,
            r#"    <Float64 name="{}" valueReference="{}""#,
            escape(&v.name),
            v.value_reference
        );
        if let Some(d) = &v.description {
            let _ = write!(x, r#" description="{}""#, escape(d));
        }
        let _ = write!(
            x,
            r#" causality="{}" variability="{}""#,
            v.causality(),
            v.variability()
        );
        if let Some(i) = v.initial() {
            let _ = write!(x, r#" initial="{i}""#);
        }
        if let Some(u) = &v.unit {
            let _ = write!(x, r#" unit="{}""#, escape(u));
        }
        if let Some(s) = v.start {
            let _ = write!(x, r#" start="{}""#, number(s));
        }
        let _ = writeln!(x, "/>");
    }
    let _ = writeln!(
        x,
        r#"    <Float64 name="time" valueReference="{}" causality="independent" variability="continuous" description="simulation time"/>"#,
        time_value_reference(iface)
    );
    let _ = writeln!(x, "  </ModelVariables>");
    let _ = writeln!(x, "  <ModelStructure>");
    let outputs: Vec<_> = iface.outputs().collect();
    for v in &outputs {
        let deps: Vec<String> = iface
            .output_dependencies(v)
            .iter()
            .map(|vr| vr.to_string())
            .collect();
        let _ = writeln!(
            x,
            r#"    <Output valueReference="{}" dependencies="{}"/>"#,
            v.value_reference,
            deps.join(" ")
        );
    }
    // Outputs with initial="calculated" are initial unknowns; their initial
    // values depend on the parameters (q0, x0 …) only.
    let params: Vec<String> = iface
        .variables
        .iter()
        .filter(|v| matches!(v.kind, VarKind::Parameter { .. }))
        .map(|v| v.value_reference.to_string())
        .collect();
    for v in &outputs {
        let _ = write!(
            x,
            r#"    <InitialUnknown valueReference="{}""#,
            v.value_reference
        );
        if params.is_empty() {
            let _ = writeln!(x, r#" dependencies=""/>"#);
        } else {
            let _ = writeln!(x, r#" dependencies="{}"/>"#, params.join(" "));
        }
    }
    let _ = writeln!(x, "  </ModelStructure>");
    let _ = writeln!(x, "</fmiModelDescription>");
    x
}
