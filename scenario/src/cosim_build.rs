//! Building a co-simulation scenario (`[[fmus]]`): the FMUs' interface
//! systems, the sensors, observers and controllers acting on them, the
//! recorded columns and plots — everything but the FMUs themselves, which
//! the caller (nonsmooth-cosim) opens and steps.
//!
//! **Interface systems.** Each FMU `f` is one first-order system named
//! `f` of dimension n = n_out + n_in, never integrated: its state is
//! (the exposed outputs at the last communication point, the exposed
//! inputs held). The exposed outputs are, in order of first mention, the
//! variables the sensors measure (`outputs = [...]`) and the records
//! (`f.var`, `f.*`: every output); the exposed inputs are those the
//! controllers drive (`inputs = [...]`). A sensor's C is then
//! `C · S_out` and a controller's B is `S_in · B` (C and B default to
//! the identity), S the selections of the named variables.
//!
//! **Native models.** The file's `[[systems]]` and `[[interactions]]`
//! form the native model, integrated by time-stepping with `[simulation]
//! step` on the same clock; the scenario's model holds the native systems
//! first (ids 0..n_native, as in the native model alone), then one
//! interface system per FMU. Connections may join native variables and
//! FMU variables ([`super::cosim_native`]).
//!
//! What the FMUs hold is told by the caller ([`FmuVariables`]), so that
//! every name is checked here with the place of the entry that gives it:
//! an unknown variable, a sensor on an input, a controller on an output,
//! a record of an input no controller drives.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use nonsmooth::modelling::{FirstOrderLinear, ModelBuilder};
use nonsmooth::simulation::Strategy;

use super::build::{self, output};
use super::control;
use super::cosim_native::{self, NativePart};
use super::cosim_plan::CosimPlan;
use super::error::{Place, Result, ScenarioError, Source};
use super::expr::Scope;
use super::params::parameters_and_words;
use super::parsed::Parsed;
use super::record::{self, Column, Variable};
use super::schema::{Inputs, Quantity, ScenarioFile};
use super::settings::settings;
use super::values::Ctx;
use super::{BuiltScenario, Catalog, FmiSpec, Places};

/// How a variable of an FMU may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmuCausality {
    /// An output: measured, recorded, connected from.
    Output,
    /// An input: driven by a controller or a connection.
    Input,
    /// Readable only (a parameter or a local variable): recorded or
    /// measured, never driven.
    Readable,
    /// Not exchanged (a string, or the independent variable).
    Other,
}

/// The variables one FMU declares, as the caller read them from its
/// modelDescription.xml.
#[derive(Debug, Clone, PartialEq)]
pub struct FmuVariables {
    /// The FMU's name in the scenario.
    pub fmu: String,
    /// Its variables, in file order: name, causality.
    pub variables: Vec<(String, FmuCausality)>,
}

impl FmuVariables {
    fn causality(&self, name: &str) -> Option<FmuCausality> {
        self.variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| *c)
    }

    fn outputs(&self) -> impl Iterator<Item = &str> {
        self.variables
            .iter()
            .filter(|(_, c)| *c == FmuCausality::Output)
            .map(|(n, _)| n.as_str())
    }

    fn unknown(&self, variable: &str, at: Place) -> ScenarioError {
        let outs: Vec<&str> = self.outputs().collect();
        let ins: Vec<&str> = self
            .variables
            .iter()
            .filter(|(_, c)| *c == FmuCausality::Input)
            .map(|(n, _)| n.as_str())
            .collect();
        invalid(
            at,
            format!(
                "the FMU `{}` has no variable `{variable}` (outputs: {}; inputs: {})",
                self.fmu,
                list(&outs),
                list(&ins)
            ),
        )
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// What one FMU exposes to the loop, in the order of its interface
/// system's entries: outputs, then inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmuInterface {
    /// The FMU's name (its system's name).
    pub name: String,
    /// Exposed outputs (entries 0 .. n_out of the system's state).
    pub outputs: Vec<String>,
    /// Exposed inputs (the next n_in entries).
    pub inputs: Vec<String>,
}

impl FmuInterface {
    /// n = n_out + n_in.
    pub fn dim(&self) -> usize {
        self.outputs.len() + self.inputs.len()
    }
}

fn invalid(at: Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid { at, reason }
}

/// Refuses the sections a co-simulation cannot hold (yet): circuits,
/// rigid bodies, and `[fmi]`.
fn refuse_native_parts(ctx: Ctx<'_>, file: &ScenarioFile) -> Result<()> {
    let first = file
        .circuits
        .first()
        .map(|s| (s.span(), "[[circuits]]"))
        .or(file.bodies.first().map(|s| (s.span(), "[[bodies]]")))
        .or(file
            .generators
            .first()
            .map(|s| (s.span(), "[[generators]]")))
        .or(file.rigid.as_ref().map(|s| (s.span(), "[rigid]")));
    if let Some((span, what)) = first {
        return Err(invalid(
            ctx.at(span),
            format!(
                "a scenario with [[fmus]] runs FMUs beside native [[systems]] and \
                 [[interactions]]; {what} beside FMUs are not supported (export them as an FMU \
                 with `nonsmooth fmu export` and add it to [[fmus]])"
            ),
        ));
    }
    if let Some(f) = &file.fmi {
        return Err(invalid(
            ctx.at(f.span()),
            "[fmi] describes an exported FMU; a co-simulation scenario cannot be exported".into(),
        ));
    }
    Ok(())
}

/// Adds `name` to `list` once.
fn expose(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|n| n == name) {
        list.push(name.to_string());
    }
}

/// The exposed outputs and inputs of every FMU, checked against the
/// FMUs' variables; and the recorded FMU columns' selectors resolved to
/// (FMU index, variable name), with `None` for control-object selectors.
#[allow(clippy::type_complexity)]
fn interfaces(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    plan: &CosimPlan,
    vars: &[FmuVariables],
) -> Result<(
    Vec<FmuInterface>,
    Option<Vec<(String, Place, Option<Vec<(usize, String)>>)>>,
)> {
    let mut out: Vec<FmuInterface> = plan
        .fmus
        .iter()
        .map(|f| FmuInterface {
            name: f.name.clone(),
            outputs: Vec::new(),
            inputs: Vec::new(),
        })
        .collect();
    let index: HashMap<&str, usize> = plan
        .fmus
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let described = |i: usize| -> &FmuVariables {
        // The caller gives the FMUs in plan order.
        &vars[i]
    };
    if vars.len() != plan.fmus.len() || vars.iter().zip(&plan.fmus).any(|(v, f)| v.fmu != f.name) {
        return Err(invalid(
            plan.fmus
                .first()
                .map(|f| f.name_place.clone())
                .unwrap_or_else(|| ctx.at(file.name.span())),
            "the FMUs' variables are not given in the order of [[fmus]]".into(),
        ));
    }
    // Controllers first: a recorded input must be driven.
    for entry in &file.controllers {
        let e = entry.get_ref();
        let Some(&i) = index.get(e.system.get_ref().as_str()) else {
            continue;
        };
        let Some(inputs) = &e.inputs else { continue };
        let Inputs::Gates(names) = inputs.get_ref() else {
            continue;
        };
        let d = described(i);
        for n in names {
            let at = ctx.at(inputs.span());
            match d.causality(n) {
                None => return Err(d.unknown(n, at)),
                Some(FmuCausality::Input) => expose(&mut out[i].inputs, n),
                Some(c) => {
                    return Err(invalid(
                        at,
                        format!(
                            "`{}.{n}` is {}: a controller drives inputs",
                            d.fmu,
                            describe(c)
                        ),
                    ))
                }
            }
        }
    }
    for entry in &file.sensors {
        let e = entry.get_ref();
        let Some(&i) = index.get(e.system.get_ref().as_str()) else {
            continue;
        };
        let d = described(i);
        for n in e.outputs.iter().flat_map(|o| o.get_ref()) {
            let at = ctx.at(n.span());
            match d.causality(n.get_ref()) {
                None => return Err(d.unknown(n.get_ref(), at)),
                Some(FmuCausality::Output | FmuCausality::Readable) => {
                    expose(&mut out[i].outputs, n.get_ref())
                }
                Some(c) => {
                    return Err(invalid(
                        at,
                        format!(
                            "`{}.{}` is {}: a sensor measures outputs",
                            d.fmu,
                            n.get_ref(),
                            describe(c)
                        ),
                    ))
                }
            }
        }
    }
    // Records.
    let record_list = file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().record.as_ref());
    let Some(list) = record_list else {
        for (i, iface) in out.iter_mut().enumerate() {
            for n in described(i).outputs() {
                expose(&mut iface.outputs, n);
            }
        }
        return Ok((out, None));
    };
    let mut selectors = Vec::new();
    for s in list.get_ref() {
        let text = ctx.render(s, "a record entry")?;
        let at = ctx.at(s.span());
        let fmu = text
            .split_once('.')
            .and_then(|(o, rest)| index.get(o).map(|&i| (i, rest.to_string())));
        let Some((i, rest)) = fmu else {
            selectors.push((text, at, None));
            continue;
        };
        let d = described(i);
        let mut cols = Vec::new();
        if rest == "*" {
            for n in d.outputs() {
                expose(&mut out[i].outputs, n);
                cols.push((i, n.to_string()));
            }
            for n in &out[i].inputs {
                cols.push((i, n.clone()));
            }
        } else {
            match d.causality(&rest) {
                None => return Err(d.unknown(&rest, at)),
                Some(FmuCausality::Output | FmuCausality::Readable) => {
                    expose(&mut out[i].outputs, &rest);
                }
                Some(FmuCausality::Input) if out[i].inputs.contains(&rest) => {}
                Some(FmuCausality::Input) => {
                    return Err(invalid(
                        at,
                        format!(
                            "`{text}` is an input that no controller drives: record what feeds it"
                        ),
                    ))
                }
                Some(c) => {
                    return Err(invalid(
                        at,
                        format!("`{text}` is {}: it cannot be recorded", describe(c)),
                    ))
                }
            }
            cols.push((i, rest));
        }
        selectors.push((text, at, Some(cols)));
    }
    Ok((out, Some(selectors)))
}

fn describe(c: FmuCausality) -> &'static str {
    match c {
        FmuCausality::Output => "an output",
        FmuCausality::Input => "an input",
        FmuCausality::Readable => "a parameter or local variable",
        FmuCausality::Other => "not exchanged (a string or the independent variable)",
    }
}

/// The column of an exposed FMU variable (FMU `i`'s system follows the
/// `n_native` native systems).
fn fmu_column(ifaces: &[FmuInterface], n_native: usize, i: usize, variable: &str) -> Column {
    let f = &ifaces[i];
    let index = match f.outputs.iter().position(|o| o == variable) {
        Some(k) => k,
        None => {
            f.outputs.len()
                + f.inputs
                    .iter()
                    .position(|o| o == variable)
                    .unwrap_or(usize::MAX - f.outputs.len())
        }
    };
    Column {
        name: format!("{}.{variable}", f.name),
        variable: Variable::X(nonsmooth::modelling::SystemId(n_native + i)),
        index,
    }
}

/// A co-simulation scenario built around its FMUs.
#[derive(Debug, Clone)]
pub struct CosimBuild {
    /// The scenario: its model holds the native systems, then one
    /// interface system per FMU; its interactions are the native ones.
    pub built: BuiltScenario,
    /// What each FMU exposes, in the order of its system's entries.
    pub interfaces: Vec<FmuInterface>,
    /// The native model and the connections that read or drive it (none
    /// when the file has no `[[systems]]`).
    pub native: Option<NativePart>,
}

/// Builds a co-simulation scenario (see the module documentation).
pub(super) fn build(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
    catalog: Catalog,
    plan: &CosimPlan,
    vars: &[FmuVariables],
    cache: Option<&super::parsed::BuildCache>,
) -> Result<CosimBuild> {
    let (params, words) = parameters_and_words(src, file, overrides)?;
    let parsed = Parsed::with(cache);
    let mut ctx = Ctx {
        src,
        scope: Scope::constant(&params).with_parsed(&parsed),
        t0: 0.0,
    };
    refuse_native_parts(ctx, file)?;
    let mut places = Places {
        simulation: src.span(file.simulation.span()),
        settings: HashMap::new(),
        systems: HashMap::new(),
    };
    let every = file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().every.as_ref());
    let all = settings(ctx, file.simulation.get_ref(), every, &words, &mut places)?;
    if all.strategy != Strategy::TimeStepping {
        let at = places
            .settings
            .get("strategy")
            .cloned()
            .unwrap_or_else(|| places.simulation.clone());
        return Err(invalid(
            at,
            "a co-simulation steps its FMUs at their communication points: the strategy is time-stepping".into(),
        ));
    }
    ctx.t0 = all.time_stepping.t0;

    let (ifaces, selectors) = interfaces(ctx, file, plan, vars)?;
    let has_native = !file.systems.is_empty();
    let native_model = Arc::new(build::native_builder(ctx, file, &mut places)?.build());
    let n_native = native_model.systems().len();
    let (sources, targets) = cosim_native::resolve(plan, &native_model)?;
    if !has_native && !file.interactions.is_empty() {
        return Err(invalid(
            ctx.at(file.interactions[0].span()),
            "interactions need the native systems they join: the file has no [[systems]]".into(),
        ));
    }
    let mut builder = if has_native {
        build::native_builder(ctx, file, &mut places)?
    } else {
        ModelBuilder::new()
    };
    for (f, p) in ifaces.iter().zip(&plan.fmus) {
        let n = f.dim();
        if n == 0 {
            return Err(invalid(
                p.name_place.clone(),
                format!(
                    "the FMU `{}` exposes nothing to the loop: no sensor measures it, no \
                     controller drives it and no record names it",
                    f.name
                ),
            ));
        }
        builder
            .add_system(
                &f.name,
                FirstOrderLinear::new(DVector::zeros(n), DMatrix::zeros(n, n)),
            )
            .map_err(|e| ScenarioError::Model {
                at: p.name_place.clone(),
                source: e,
            })?;
    }
    let model = Arc::new(builder.build());
    let gates = Default::default();
    let control = control::plan(ctx, file, &model, &gates, &words, &ifaces, &[])?;
    let control_vars = if control.is_empty() {
        Vec::new()
    } else {
        // A probe loop tells the sizes of the laws' signals: on an
        // event-driven plant of the interface model (no grid: the FMUs'
        // grid is checked when the master is built), or on a
        // time-stepping plant when there is a native model.
        let probe = control::instantiate(
            &control,
            &model,
            if has_native {
                Strategy::TimeStepping
            } else {
                Strategy::EventDriven
            },
            &all.time_stepping,
            &all.event_driven,
            catalog.0.as_ref(),
            &places,
            &[],
            None,
        )?;
        output::control_variables(&probe, &control)
    };
    let mut columns = Vec::new();
    match selectors {
        None => {
            if has_native {
                columns.extend(record::everything(&native_model, &Vec::new()));
            }
            for (i, f) in ifaces.iter().enumerate() {
                for n in f.outputs.iter().chain(&f.inputs) {
                    columns.push(fmu_column(&ifaces, n_native, i, n));
                }
            }
            for (name, vs) in &control_vars {
                for v in vs {
                    for k in 0..v.2 {
                        columns.push(Column {
                            name: format!("{name}.{}[{k}]", v.0),
                            variable: v.1,
                            index: k,
                        });
                    }
                }
            }
        }
        Some(list) => {
            for (text, at, fmu) in list {
                match fmu {
                    Some(cols) => {
                        for (i, n) in cols {
                            columns.push(fmu_column(&ifaces, n_native, i, &n));
                        }
                    }
                    None => {
                        record::select(&model, &control_vars, &text, "record", &at, &mut columns)?
                    }
                }
            }
            record::dedup(&mut columns);
        }
    }
    let plots = output::plots(ctx, file, &model, &control_vars, &columns)?;
    let fmi = FmiSpec {
        model_identifier: String::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        output_units: Vec::new(),
        tunable: Vec::new(),
        parameter_units: BTreeMap::new(),
    };
    let built = BuiltScenario {
        name: file.name.get_ref().clone(),
        description: file.description.clone(),
        parameters: params,
        words,
        model,
        settings: all.time_stepping,
        strategy: all.strategy,
        event_driven: all.event_driven,
        control,
        catalog,
        columns,
        plots,
        fmi,
        places,
        cosim: true,
        rigid: None,
    };
    Ok(CosimBuild {
        built,
        interfaces: ifaces,
        native: has_native.then(|| NativePart {
            model: native_model,
            sources,
            targets,
        }),
    })
}
