//! The `[[fmus]]` and `[[connections]]` of a scenario file
//! ([`nonsmooth_scenario::CosimPlan`]) checked against the FMUs themselves:
//! each FMU opened, each parameter a variable of causality `parameter`,
//! each connection from an `output` to an `input`. Errors are the scenario
//! crate's located [`ScenarioError::Invalid`] (file, line, column). Building
//! the `CoSimulation` from the plan is not done yet (docs/cosimulation.md).

// The errors are the scenario crate's own type, unboxed as everywhere it
// is returned; a check runs once per file, not per step.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use nonsmooth_scenario::{CosimPlan, Endpoint, Place, ScenarioError};

use crate::import::{Fmu, VarCausality};

/// Opens the plan's FMUs, in plan order, and checks every name the plan
/// gives against their model descriptions.
pub fn open_plan(plan: &CosimPlan) -> Result<Vec<Arc<Fmu>>, ScenarioError> {
    let mut fmus = Vec::with_capacity(plan.fmus.len());
    for f in &plan.fmus {
        let fmu = Fmu::load(&f.path)
            .map_err(|e| invalid(&f.name_place, format!("FMU `{}`: {e}", f.name)))?;
        for (variable, _, place) in &f.parameters {
            expect(&fmu, &f.name, variable, place, VarCausality::Parameter)?;
        }
        fmus.push(fmu);
    }
    for c in &plan.connections {
        let end = |e: &Endpoint, causality| {
            let i = plan
                .fmus
                .iter()
                .position(|f| f.name == e.fmu)
                .ok_or_else(|| invalid(&e.place, format!("no FMU named `{}`", e.fmu)))?;
            expect(&fmus[i], &e.fmu, &e.variable, &e.place, causality)
        };
        end(&c.from, VarCausality::Output)?;
        end(&c.to, VarCausality::Input)?;
    }
    Ok(fmus)
}

fn invalid(at: &Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid {
        at: at.clone(),
        reason,
    }
}

/// `variable` exists in `fmu` with the causality `want`.
fn expect(
    fmu: &Fmu,
    name: &str,
    variable: &str,
    at: &Place,
    want: VarCausality,
) -> Result<(), ScenarioError> {
    let d = fmu.description();
    match d.variable(variable) {
        None => {
            let names: Vec<&str> = d.with_causality(want).map(|v| v.name.as_str()).collect();
            Err(invalid(
                at,
                format!(
                    "FMU `{name}` has no variable `{variable}` ({want:?} variables: {})",
                    names.join(", ")
                ),
            ))
        }
        Some(v) if v.causality != want => Err(invalid(
            at,
            format!(
                "`{name}.{variable}` has causality {:?}; {want:?} expected here",
                v.causality
            ),
        )),
        Some(_) => Ok(()),
    }
}
