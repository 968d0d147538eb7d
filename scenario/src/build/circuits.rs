//! The `[[circuits]]` entries: netlists, one SPICE-like line per element,
//! reduced by modified nodal analysis (`nonsmooth::circuits`) to a
//! first-order linear system `<name>` and, with diodes, a complementarity
//! interaction `<name>_diodes`. Syntax: docs/circuits.md.
//!
//! ```text
//! R1 a b <resistance>       L1 a b <inductance> [ic=<current>]
//! C1 a b <capacitance> [ic=<voltage>]
//! V1 a b <value of t>       I1 a b <value of t>
//! D1 anode cathode          S1 a b <blocking voltage>
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use super::model_error;
use crate::error::{Result, ScenarioError};
use crate::expr::Value;
use crate::schema::{CircuitEntry, SStr, ScenarioFile};
use crate::values::Ctx;
use crate::Places;
use nalgebra::DMatrix;
use nonsmooth::circuits::{reduce, CircuitError, Element, ElementKind, Netlist, SourceValue};
use nonsmooth::modelling::{InteractionId, ModelBuilder, NonsmoothLaw, SystemId};

/// The recordable state names of the circuits: `<circuit>.i(L1)`,
/// `<circuit>.v(C1)` → (system, index in x).
pub(crate) type CircuitStates = HashMap<String, (SystemId, usize)>;

/// The gated switches of a circuit, for the controllers that drive them:
/// the gates u enter ẋ as G u and the switches' relation as H u (the
/// relation's input, of size `names.len()`).
#[derive(Debug, Clone)]
pub(crate) struct CircuitGates {
    /// The switches, the order of the relation's input.
    pub names: Vec<String>,
    /// G, n × q.
    pub g: DMatrix<f64>,
    /// The interaction `<circuit>_diodes`.
    pub interaction: InteractionId,
}

/// The circuits with gated switches, by system.
pub(crate) type Gates = HashMap<SystemId, CircuitGates>;

/// Adds every circuit's system and diode interaction to `builder`.
pub(super) fn add_circuits(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    builder: &mut ModelBuilder,
    places: &mut Places,
) -> Result<(CircuitStates, Gates)> {
    let mut states = CircuitStates::new();
    let mut gates = Gates::new();
    for entry in &file.circuits {
        circuit(ctx, entry, builder, places, &mut states, &mut gates)?;
    }
    Ok((states, gates))
}

/// One element line, parsed: the element and its source value (V, I).
fn element(ctx: Ctx<'_>, circuit: &str, s: &SStr) -> Result<(Element, Option<SourceValue>)> {
    let at = ctx.at(s.span());
    let text = s.get_ref();
    let bad = |reason: String| ScenarioError::Invalid {
        at: at.clone(),
        reason: format!("circuit `{circuit}`, element line `{text}`: {reason}"),
    };
    let mut tokens = text.split_whitespace();
    let (Some(name), Some(a), Some(b)) = (tokens.next(), tokens.next(), tokens.next()) else {
        return Err(bad(
            "expected `<name> <node> <node> [value]`, e.g. `R1 out 0 resistance`".into(),
        ));
    };
    for (what, word) in [("element name", name), ("node", a), ("node", b)] {
        if !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad(format!(
                "{what} `{word}`: letters, digits and `_` only"
            )));
        }
    }
    let mut value = Vec::new();
    let mut ic = None;
    for tok in tokens {
        match tok.get(..3) {
            Some(p) if p.eq_ignore_ascii_case("ic=") => ic = Some(&tok[3..]),
            _ => value.push(tok),
        }
    }
    let value = value.join(" ");
    let letter = name
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase())
        .unwrap_or(' ');
    let constant = |what: &str, text: &str| -> Result<f64> {
        if text.is_empty() {
            return Err(bad(format!("{name} needs its {what}")));
        }
        ctx.scope
            .constant_value(text)
            .map_err(|f| ctx.fault(at.clone(), text, &format!("the {what} of {name}"), f))
    };
    let initial = |what: &str| -> Result<f64> {
        match ic {
            Some(t) => constant(what, t),
            None => Ok(0.0),
        }
    };
    let no_value = |kind: &str| -> Result<()> {
        if !value.is_empty() {
            return Err(bad(format!("a {kind} takes no value, got `{value}`")));
        }
        Ok(())
    };
    if ic.is_some() && !matches!(letter, 'L' | 'C') {
        return Err(bad("only inductors and capacitors take `ic=`".into()));
    }
    let mut source = None;
    let kind = match letter {
        'R' => ElementKind::Resistor(constant("resistance", &value)?),
        'L' => ElementKind::Inductor {
            inductance: constant("inductance", &value)?,
            initial_current: initial("initial current")?,
        },
        'C' => ElementKind::Capacitor {
            capacitance: constant("capacitance", &value)?,
            initial_voltage: initial("initial voltage")?,
        },
        'V' | 'I' => {
            if value.is_empty() {
                return Err(bad(format!(
                    "{name} needs its value (a number or an expression of t)"
                )));
            }
            let v =
                ctx.scope.with_time(true).compile(&value).map_err(|f| {
                    ctx.fault(at.clone(), &value, &format!("the value of {name}"), f)
                })?;
            source = Some(match v {
                Value::Constant(x) => SourceValue::Constant(x),
                Value::Timed(e) => SourceValue::Function(Arc::new(move |t| e.eval(t))),
            });
            if letter == 'V' {
                ElementKind::VoltageSource
            } else {
                ElementKind::CurrentSource
            }
        }
        'D' => {
            no_value("diode")?;
            ElementKind::Diode
        }
        'S' => ElementKind::GatedSwitch {
            blocking_voltage: constant("blocking voltage", &value)?,
        },
        _ => {
            return Err(bad(format!(
                "unknown element `{name}`: the first letter gives the kind \
                 (R, L, C, V, I, D or S)"
            )))
        }
    };
    Ok((
        Element {
            name: name.to_string(),
            kind,
            a: a.to_string(),
            b: b.to_string(),
            line: at.line(),
        },
        source,
    ))
}

fn circuit(
    ctx: Ctx<'_>,
    entry: &toml::Spanned<CircuitEntry>,
    builder: &mut ModelBuilder,
    places: &mut Places,
    states: &mut CircuitStates,
    gates: &mut Gates,
) -> Result<()> {
    let e = entry.get_ref();
    let name = ctx.render(&e.name, "the name")?;
    let mut net = Netlist::new();
    let mut spans = HashMap::new();
    let mut sources = Vec::new();
    for s in e.elements.get_ref() {
        let (el, source) = element(ctx, &name, s)?;
        spans.insert(el.name.clone(), s.span());
        net.add(el).map_err(|source| ScenarioError::Circuit {
            at: ctx.at(s.span()),
            circuit: name.clone(),
            source: Box::new(source),
        })?;
        sources.extend(source);
    }
    // Where an error points: at its element's line, else at the entry.
    let located = |source: CircuitError| {
        let element = match &source {
            CircuitError::DuplicateName { element, .. }
            | CircuitError::BadValue { element, .. }
            | CircuitError::ShortedElement { element, .. }
            | CircuitError::DanglingNode { element, .. }
            | CircuitError::FloatingNode { element, .. }
            | CircuitError::VoltageLoop { element }
            | CircuitError::CurrentCutSet { element, .. } => Some(&element.name),
            _ => None,
        };
        let span = element
            .and_then(|n| spans.get(n).cloned())
            .unwrap_or_else(|| e.elements.span());
        ScenarioError::Circuit {
            at: ctx.at(span),
            circuit: name.clone(),
            source: Box::new(source),
        }
    };
    let lcs = reduce(&net, &[]).map_err(located)?;
    let mut constants = vec![0.0; sources.len()];
    for (k, s) in sources.iter().enumerate() {
        match s {
            SourceValue::Constant(v) => constants[k] = *v,
            SourceValue::Function(_) if lcs.source_in_complementarity(k) => {
                let src = &lcs.sources[k];
                return Err(ScenarioError::Invalid {
                    at: ctx.at(spans[src].clone()),
                    reason: format!(
                        "circuit `{name}`: source `{src}` varies with t and enters the \
                         diodes' complementarity conditions; only a constant value is \
                         supported there"
                    ),
                });
            }
            SourceValue::Function(_) => {}
        }
    }
    let id = builder
        .add_system(&name, lcs.system(&sources))
        .map_err(|source| model_error(ctx, entry.span(), source))?;
    places.systems.insert(name.clone(), ctx.at(entry.span()));
    for (k, s) in lcs.states.iter().enumerate() {
        states.insert(format!("{name}.{s}"), (id, k));
    }
    if let Some(rel) = lcs.relation(&constants) {
        let interaction = builder
            .add_interaction(
                &format!("{name}_diodes"),
                &[id],
                rel,
                NonsmoothLaw::Complementarity {
                    size: lcs.diodes.len(),
                },
            )
            .map_err(|source| model_error(ctx, entry.span(), source))?;
        if !lcs.gates.is_empty() {
            gates.insert(
                id,
                CircuitGates {
                    names: lcs.gates.clone(),
                    g: lcs.g.clone(),
                    interaction,
                },
            );
        }
    }
    Ok(())
}
