//! From the parsed file to a [`nonsmooth::modelling::Model`], the settings,
//! recorded columns and plots: parameters are resolved (`params`), settings
//! checked (`settings`), repeated entries expanded, values evaluated
//! (`values`), and every error located in the file.
//!
//! The systems are built in `systems`, the interactions (relations and
//! laws) in `interactions`, the recorded columns and plots in `output`.
//! Expressions are parsed once per build ([`Parsed`]): the instances of a
//! repeated entry share their texts and only evaluate them.

pub(crate) mod bodies;
pub(crate) mod circuits;
mod functions;
mod interactions;
mod nonlinear_relations;
pub(crate) mod output;
pub(crate) mod rigid_control;
mod shapes;
mod systems;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::control::{self as control_plan, ControlPlan};
use super::error::{Result, ScenarioError, Source};
use super::expr::{self, Scope};
use super::params::parameters_and_words;
use super::parsed::Parsed;
use super::record;
use super::schema::{Quantity, Repeat, ScenarioFile};
use super::settings::{settings, AllSettings};
use super::values::{is_identifier, Ctx};
use super::{BuiltScenario, Catalog, Places};
use nonsmooth::modelling::{Model, ModelBuilder, ModelError};

/// The most instances one `repeat` may create.
const MAX_REPEAT: i64 = 10_000_000;

/// The index name and values of an entry: no name and one value without
/// `repeat`.
fn instances(ctx: Ctx<'_>, repeat: &Option<Repeat>) -> Result<(Option<String>, Vec<i64>)> {
    let Some(r) = repeat else {
        return Ok((None, vec![0]));
    };
    let at = ctx.at(r.span());
    let bad = |reason: String| ScenarioError::Invalid {
        at: at.clone(),
        reason,
    };
    let mut entries = r.get_ref().iter();
    let (Some((var, range)), None) = (entries.next(), entries.next()) else {
        return Err(bad(
            "repeat takes exactly one index, e.g. repeat = { i = \"0 .. n\" }".into(),
        ));
    };
    if !is_identifier(var) || expr::is_reserved(var) || ctx.scope.params.contains_key(var) {
        return Err(bad(format!(
            "`{var}` cannot be a repeat index: it must be a name that is not a parameter, \
             t, pi or a function"
        )));
    }
    let text = range.get_ref();
    let range_at = ctx.at(range.span());
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| ScenarioError::Invalid {
            at: range_at.clone(),
            reason: format!("repeat range `{text}`: expected `start .. end` (end excluded)"),
        })?;
    let bound = |s: &str| {
        ctx.scope
            .integer(s)
            .map_err(|f| ctx.fault(range_at.clone(), text, "a repeat bound", f))
    };
    let (start, end) = (bound(a)?, bound(b)?);
    if end.saturating_sub(start) > MAX_REPEAT {
        return Err(ScenarioError::Invalid {
            at: range_at,
            reason: format!("repeat range `{text}` has more than {MAX_REPEAT} values"),
        });
    }
    Ok((Some(var.clone()), (start..end).collect()))
}

/// Fails when a key of another kind is present.
fn refuse<T>(
    ctx: Ctx<'_>,
    value: &Option<toml::Spanned<T>>,
    key: &str,
    kind: impl std::fmt::Display,
    accepted: &str,
) -> Result<()> {
    match value {
        Some(v) => Err(ScenarioError::UnknownKey {
            at: ctx.at(v.span()),
            message: format!("`{key}` does not apply to {kind} (its keys: {accepted})"),
        }),
        None => Ok(()),
    }
}

fn required<'v, T>(
    ctx: Ctx<'_>,
    value: &'v Option<toml::Spanned<T>>,
    entry: std::ops::Range<usize>,
    key: &str,
    kind: impl std::fmt::Display,
) -> Result<&'v toml::Spanned<T>> {
    value.as_ref().ok_or_else(|| ScenarioError::Invalid {
        at: ctx.at(entry),
        reason: format!("{kind} needs `{key}`"),
    })
}

fn model_error(ctx: Ctx<'_>, span: std::ops::Range<usize>, source: ModelError) -> ScenarioError {
    ScenarioError::Model {
        at: ctx.at(span),
        source,
    }
}

/// "a {name} {what}" (e.g. "a relay law"), for messages: written only
/// when one is.
#[derive(Clone, Copy)]
struct Kind<'a> {
    name: &'a str,
    what: &'a str,
}

impl std::fmt::Display for Kind<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a {} {}", self.name, self.what)
    }
}

/// The same context with the index of a repeated entry set to `i` (`var`
/// is the index's name; none without `repeat`).
fn instance<'a>(ctx: Ctx<'a>, var: Option<&'a str>, i: i64) -> Ctx<'a> {
    Ctx {
        scope: Scope {
            index: var.map(|v| (v, i)),
            ..ctx.scope
        },
        ..ctx
    }
}

// ---------------------------------------------------------------------------
// The whole scenario
// ---------------------------------------------------------------------------

pub(super) fn build(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
    catalog: Catalog,
    cache: Option<&crate::parsed::BuildCache>,
) -> Result<BuiltScenario> {
    let (params, words) = parameters_and_words(src, file, overrides)?;
    let parsed = Parsed::with(cache);
    let mut ctx = Ctx {
        src,
        scope: Scope::constant(&params).with_parsed(&parsed),
        t0: 0.0,
    };
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
    if all.strategy == nonsmooth::simulation::Strategy::EventDriven {
        interactions::refuse_friction_event_driven(ctx, file)?;
    }
    ctx.t0 = all.time_stepping.t0;

    let rigid = bodies::rigid_scene(ctx, file, &all)?;
    let (model, circuit_states, gates) = match &rigid {
        Some(scene) => {
            let model = nonsmooth_collision::stand_in_model(&scene.names).map_err(|source| {
                ScenarioError::Simulation {
                    at: places.simulation.clone(),
                    source,
                }
            })?;
            (model, Default::default(), Default::default())
        }
        None => model(ctx, file, &mut places)?,
    };
    let model = Arc::new(model);
    let bodies = rigid.as_ref().map_or(&[][..], |s| &s.names[..]);
    let control = control_plan::plan(ctx, file, &model, &gates, &words, &[], bodies)?;
    let control_vars = match &rigid {
        Some(scene) => rigid_control::variables(
            scene,
            &model,
            &control,
            &all.time_stepping,
            &all.event_driven,
            catalog.0.as_ref(),
            &places,
        )?,
        None => control_variables(&control, &model, &all, &catalog, &places)?,
    };
    let columns = output::columns(ctx, file, &model, &control_vars, &circuit_states)?;
    let plots = output::plots(ctx, file, &model, &control_vars, &columns)?;
    let fmi = super::fmi::fmi_spec(ctx, file, &model, &control_vars, &columns, &params)?;
    control.check_fed(&fmi.fed_sensors())?;

    Ok(BuiltScenario {
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
        cosim: false,
        rigid: rigid.map(Arc::new),
    })
}

/// The model: every instance of the `[[systems]]` entries, then of the
/// `[[interactions]]` entries, in file order, then the `[[circuits]]`
/// (each a system and its diodes' interaction); with the circuits' state
/// names.
fn model(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    places: &mut Places,
) -> Result<(Model, circuits::CircuitStates, circuits::Gates)> {
    let mut builder = ModelBuilder::new();
    let systems = systems::add_systems(ctx, file, &mut builder, places)?;
    interactions::add_interactions(ctx, file, &mut builder, &systems)?;
    let (states, gates) = circuits::add_circuits(ctx, file, &mut builder, places)?;
    Ok((builder.build(), states, gates))
}

/// The systems and interactions of the file, in a builder (the native
/// model of a co-simulation, to which the FMUs' interface systems are
/// then added).
pub(crate) fn native_builder(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    places: &mut Places,
) -> Result<ModelBuilder> {
    let mut builder = ModelBuilder::new();
    let systems = systems::add_systems(ctx, file, &mut builder, places)?;
    interactions::add_interactions(ctx, file, &mut builder, &systems)?;
    Ok(builder)
}

/// The recordable variables of the sensors, observers and controllers: a
/// first loop checks the laws against their loop and tells the sizes of
/// their signals (none without control objects).
fn control_variables(
    control: &ControlPlan,
    model: &Arc<Model>,
    all: &AllSettings,
    catalog: &Catalog,
    places: &Places,
) -> Result<record::ControlVariables> {
    if control.is_empty() {
        return Ok(Vec::new());
    }
    let probe = control_plan::instantiate(
        control,
        model,
        nonsmooth::simulation::Strategy::TimeStepping,
        &all.time_stepping,
        &all.event_driven,
        catalog.0.as_ref(),
        places,
        &[],
        None,
    )?;
    Ok(output::control_variables(&probe, control))
}
