//! What a run records and plots: the `[output]` columns and the
//! `[[plots]]` entries, checked against the model and the control objects.

use std::path::PathBuf;

use super::circuits::CircuitStates;
use crate::control::ControlPlan;
use crate::error::{Result, ScenarioError};
use crate::record::{self, Column, ControlVariables, Variable, DEFAULT_COLUMN_LIMIT};
use crate::schema::{PlotEntry, SStr, ScenarioFile};
use crate::values::Ctx;
use crate::PlotSpec;
use nonsmooth::control::{ControlLoop, ControllerId, ObserverId, SensorId};
use nonsmooth::modelling::Model;

/// The recorded columns: those `record` in `[output]` selects (duplicates
/// removed), or every variable when it is absent (refused past
/// [`DEFAULT_COLUMN_LIMIT`] columns). A circuit's state is selected by its
/// name, `<circuit>.i(L1)` or `<circuit>.v(C1)`.
pub(super) fn columns(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    model: &Model,
    control_vars: &ControlVariables,
    circuit_states: &CircuitStates,
) -> Result<Vec<Column>> {
    let record_list = file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().record.as_ref());
    let Some(list) = record_list else {
        let columns = record::everything(model, control_vars);
        if columns.len() > DEFAULT_COLUMN_LIMIT {
            let at = match &file.output {
                Some(o) => ctx.at(o.span()),
                None => ctx.at(file.name.span()),
            };
            return Err(ScenarioError::Invalid {
                at,
                reason: format!(
                    "recording every variable gives {} columns, more than {DEFAULT_COLUMN_LIMIT}: \
                     choose them with `record` in [output], e.g. record = [\"name.q\", \"name.lambda[0]\"]",
                    columns.len()
                ),
            });
        }
        return Ok(columns);
    };
    let mut columns = Vec::new();
    for s in list.get_ref() {
        let selector = ctx.render(s, "a record entry")?;
        if let Some(&(system, index)) = circuit_states.get(&selector) {
            columns.push(Column {
                name: selector,
                variable: Variable::X(system),
                index,
            });
            continue;
        }
        record::select(
            model,
            control_vars,
            &selector,
            "record",
            &ctx.at(s.span()),
            &mut columns,
        )?;
    }
    record::dedup(&mut columns);
    Ok(columns)
}

/// The `[[plots]]` entries, each of recorded columns.
pub(crate) fn plots(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    model: &Model,
    control_vars: &ControlVariables,
    columns: &[Column],
) -> Result<Vec<PlotSpec>> {
    file.plots
        .iter()
        .map(|p| plot(ctx, p, model, control_vars, columns))
        .collect()
}

/// One plot: its x (one column, `t` by default) and y columns, each a
/// recorded column or a selector of recorded columns (`name.q`).
fn plot(
    ctx: Ctx<'_>,
    p: &toml::Spanned<PlotEntry>,
    model: &Model,
    control_vars: &ControlVariables,
    columns: &[Column],
) -> Result<PlotSpec> {
    let pe = p.get_ref();
    let recorded = |name: &str| name == "t" || columns.iter().any(|c| c.name == name);
    let check = |s: &SStr, out: &mut Vec<String>| -> Result<()> {
        let text = ctx.render(s, "a plot column")?;
        if recorded(&text) {
            out.push(text);
            return Ok(());
        }
        let at = ctx.at(s.span());
        let mut sel = Vec::new();
        record::select(model, control_vars, &text, "plot column", &at, &mut sel)?;
        for c in sel {
            if !recorded(&c.name) {
                return Err(ScenarioError::Invalid {
                    at: at.clone(),
                    reason: format!(
                        "plot column `{}` is not recorded: add it to `record` in [output]",
                        c.name
                    ),
                });
            }
            out.push(c.name);
        }
        Ok(())
    };
    let mut x = Vec::new();
    match &pe.x {
        Some(s) => check(s, &mut x)?,
        None => x.push("t".to_string()),
    }
    if x.len() != 1 {
        return Err(ScenarioError::Invalid {
            at: ctx.at(pe.x.as_ref().map_or(p.span(), |s| s.span())),
            reason: "a plot's x must name one column".into(),
        });
    }
    let mut y = Vec::new();
    for s in pe.y.get_ref() {
        check(s, &mut y)?;
    }
    if y.is_empty() {
        return Err(ScenarioError::Invalid {
            at: ctx.at(pe.y.span()),
            reason: "a plot needs at least one y column".into(),
        });
    }
    let output = ctx.render(&pe.output, "the plot output")?;
    if output.trim().is_empty() {
        return Err(ScenarioError::Invalid {
            at: ctx.at(pe.output.span()),
            reason: "the plot output file name is empty".into(),
        });
    }
    Ok(PlotSpec {
        title: pe.title.clone(),
        x: x.remove(0),
        y,
        output: PathBuf::from(output),
    })
}

/// The recordable variables of the control objects of a built loop.
pub(crate) fn control_variables(cl: &ControlLoop, plan: &ControlPlan) -> ControlVariables {
    let mut out = Vec::new();
    for (k, name) in plan.sensor_names().enumerate() {
        let p = cl.sensor_output(SensorId(k)).len();
        out.push((
            name.to_string(),
            vec![("y", Variable::SensorY(SensorId(k)), p)],
        ));
    }
    for (k, name) in plan.observer_names().enumerate() {
        let n = cl.observer_estimate(ObserverId(k)).len();
        out.push((
            name.to_string(),
            vec![("xhat", Variable::ObserverXhat(ObserverId(k)), n)],
        ));
    }
    for (k, name) in plan.controller_names().enumerate() {
        let id = ControllerId(k);
        let mut vars = vec![(
            "u",
            Variable::ControllerU(id),
            cl.controller_input(id).len(),
        )];
        for &sig in cl.controller_signal_names(id) {
            let len = cl.controller_signal(id, sig).map_or(0, |v| v.len());
            vars.push((sig, Variable::ControllerSignal(id, sig), len));
        }
        out.push((name.to_string(), vars));
    }
    out
}
