//! modelDescription.xml (FMI 2.0, co-simulation) from an [`Interface`],
//! written by hand with every attribute value escaped.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::variables::{Interface, VarKind};

/// Log categories the runtime knows, with their descriptions.
pub const LOG_CATEGORIES: [(&str, &str); 5] = [
    (
        "logStatusError",
        "errors: bad calls from the host, failed simulation steps",
    ),
    ("logStatusWarning", "warnings"),
    ("logStatusDiscard", "discarded steps (past the stop time)"),
    (
        "logEvents",
        "simulation progress: communication steps, state saves and restores",
    ),
    ("logCalls", "every FMI function call"),
];

/// Escapes text for an XML attribute value in double quotes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// A finite number as an xs:double (shortest round-trip form).
fn number(x: f64) -> String {
    format!("{x:?}")
}

/// The text of modelDescription.xml.
pub fn model_description(iface: &Interface, guid: &str, tool: &str) -> String {
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = write!(
        x,
        r#"<fmiModelDescription fmiVersion="2.0" modelName="{}" guid="{}""#,
        escape(&iface.model_name),
        escape(guid)
    );
    if let Some(d) = &iface.description {
        let _ = write!(x, r#" description="{}""#, escape(d.trim()));
    }
    let _ = writeln!(
        x,
        r#" generationTool="{}" variableNamingConvention="flat" numberOfEventIndicators="0">"#,
        escape(tool)
    );
    let _ = writeln!(
        x,
        r#"  <CoSimulation modelIdentifier="{}" needsExecutionTool="false" canHandleVariableCommunicationStepSize="true" canInterpolateInputs="false" maxOutputDerivativeOrder="0" canRunAsynchronuously="false" canBeInstantiatedOnlyOncePerProcess="false" canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="true" canSerializeFMUstate="true" providesDirectionalDerivative="false"/>"#,
        escape(&iface.model_identifier)
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
            r#"    <ScalarVariable name="{}" valueReference="{}""#,
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
        let _ = write!(x, ">\n      <Real");
        if let Some(u) = &v.unit {
            let _ = write!(x, r#" unit="{}""#, escape(u));
        }
        if let Some(s) = v.start {
            let _ = write!(x, r#" start="{}""#, number(s));
        }
        let _ = writeln!(x, "/>\n    </ScalarVariable>");
    }
    let _ = writeln!(x, "  </ModelVariables>");
    let _ = writeln!(x, "  <ModelStructure>");
    let outputs: Vec<_> = iface.outputs().collect();
    if !outputs.is_empty() {
        let _ = writeln!(x, "    <Outputs>");
        for v in &outputs {
            let deps: Vec<String> = iface
                .output_dependencies(v)
                .iter()
                .map(|vr| (vr + 1).to_string())
                .collect();
            let _ = writeln!(
                x,
                r#"      <Unknown index="{}" dependencies="{}"/>"#,
                v.value_reference + 1,
                deps.join(" ")
            );
        }
        let _ = writeln!(x, "    </Outputs>");
        // Outputs with initial="calculated" are initial unknowns; their
        // initial values depend on the parameters (q0, x0 …) only.
        let _ = writeln!(x, "    <InitialUnknowns>");
        let params: Vec<String> = iface
            .variables
            .iter()
            .filter(|v| matches!(v.kind, VarKind::Parameter { .. }))
            .map(|v| (v.value_reference + 1).to_string())
            .collect();
        for v in &outputs {
            let _ = writeln!(
                x,
                r#"      <Unknown index="{}" dependencies="{}"/>"#,
                v.value_reference + 1,
                params.join(" ")
            );
        }
        let _ = writeln!(x, "    </InitialUnknowns>");
    }
    let _ = writeln!(x, "  </ModelStructure>");
    let _ = writeln!(x, "</fmiModelDescription>");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_values_are_escaped() {
        assert_eq!(
            escape(r#"a<b & "c" 'd'>"#),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(escape("x\ny\u{1}"), "x&#10;y");
    }
}
