//! From the parsed file to a [`nonsmooth::modelling::Model`], the settings,
//! recorded columns and plots: parameters are resolved (`params`), settings
//! checked (`settings`), repeated entries expanded, values evaluated
//! (`values`), and every error located in the file.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

use super::control::{self as control_plan, ControlPlan};
use super::error::{Result, ScenarioError, Source};
use super::expr::{self, Scope};
use super::params::parameters_and_words;
use super::record::{self, Column, Variable, DEFAULT_COLUMN_LIMIT};
use super::schema::{
    InteractionEntry, LawTable, Quantity, RelationTable, Repeat, SStr, ScenarioFile, SystemEntry,
};
use super::settings::settings;
use super::values::{is_identifier, Ctx};
use super::{BuiltScenario, Catalog, Places, PlotSpec};
use nonsmooth::control::{ControlLoop, ControllerId, ObserverId, SensorId};
use nonsmooth::modelling::models::{ArmPoint, TwoLinkArm};
use nonsmooth::modelling::{
    DynamicalSystem, FirstOrderLinear, FirstOrderLinearTi, LagrangianLinearTi, LagrangianLinearTiR,
    ModelBuilder, ModelError, NonsmoothLaw, Relation, SystemId,
};

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
    kind: &str,
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
    kind: &str,
) -> Result<&'v toml::Spanned<T>> {
    value.as_ref().ok_or_else(|| ScenarioError::Invalid {
        at: ctx.at(entry),
        reason: format!("{kind} needs `{key}`"),
    })
}

const LAGRANGIAN_KEYS: &str = "q0, v0, mass or mass_diagonal, stiffness, damping, fext";
const FIRST_ORDER_KEYS: &str = "x0, A, b";
const ARM_KEYS: &str = "q0, v0, lengths, masses, inertias, gravity";

/// Refuses the two-link arm's keys on another system type.
fn refuse_arm_keys(ctx: Ctx<'_>, e: &SystemEntry, kind: &str, keys: &str) -> Result<()> {
    for (v, key) in [
        (&e.lengths, "lengths"),
        (&e.masses, "masses"),
        (&e.inertias, "inertias"),
    ] {
        refuse(ctx, v, key, kind, keys)?;
    }
    refuse(ctx, &e.gravity, "gravity", kind, keys)
}

/// A two-link arm's data from its entry: two values per vector.
fn arm_data(ctx: Ctx<'_>, e: &SystemEntry, span: std::ops::Range<usize>) -> Result<TwoLinkArm> {
    let kind = "a two_link_arm system";
    let pair = |key: &str, v: &Option<toml::Spanned<_>>| -> Result<[f64; 2]> {
        let v: &super::schema::SVec = required(ctx, v, span.clone(), key, kind)?;
        let x = ctx.vector(v, key)?;
        if x.len() != 2 {
            return Err(ScenarioError::Invalid {
                at: ctx.at(v.span()),
                reason: format!("`{key}` of a two_link_arm has two values, got {}", x.len()),
            });
        }
        Ok([x[0], x[1]])
    };
    let lengths = pair("lengths", &e.lengths)?;
    let masses = pair("masses", &e.masses)?;
    let inertias = pair("inertias", &e.inertias)?;
    let gravity = match &e.gravity {
        Some(g) => ctx.number(g, "gravity")?,
        None => 9.81,
    };
    TwoLinkArm::new(lengths, masses, inertias, gravity).map_err(|source| ScenarioError::Model {
        at: ctx.at(span),
        source,
    })
}

fn system(
    ctx: Ctx<'_>,
    e: &SystemEntry,
    span: std::ops::Range<usize>,
) -> Result<(DynamicalSystem, Option<TwoLinkArm>)> {
    match e.kind.get_ref().as_str() {
        "two_link_arm" => {
            let kind = "a two_link_arm system";
            refuse(ctx, &e.x0, "x0", kind, ARM_KEYS)?;
            refuse(ctx, &e.a, "A", kind, ARM_KEYS)?;
            refuse(ctx, &e.b, "b", kind, ARM_KEYS)?;
            refuse(ctx, &e.mass_diagonal, "mass_diagonal", kind, ARM_KEYS)?;
            refuse(ctx, &e.fext, "fext", kind, ARM_KEYS)?;
            for (m, key) in [
                (&e.mass, "mass"),
                (&e.stiffness, "stiffness"),
                (&e.damping, "damping"),
            ] {
                refuse(ctx, m, key, kind, ARM_KEYS)?;
            }
            let arm = arm_data(ctx, e, span.clone())?;
            let q0 = ctx.vector(required(ctx, &e.q0, span, "q0", kind)?, "q0")?;
            let v0 = match &e.v0 {
                Some(v) => ctx.vector(v, "v0")?,
                None => DVector::zeros(q0.len()),
            };
            Ok((arm.system(q0, v0).into(), Some(arm)))
        }
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear system";
            refuse_arm_keys(ctx, e, kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.x0, "x0", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.a, "A", kind, LAGRANGIAN_KEYS)?;
            refuse(ctx, &e.b, "b", kind, LAGRANGIAN_KEYS)?;
            let q0 = ctx.vector(required(ctx, &e.q0, span.clone(), "q0", kind)?, "q0")?;
            let v0 = match &e.v0 {
                Some(v) => ctx.vector(v, "v0")?,
                None => DVector::zeros(q0.len()),
            };
            let mass = match (&e.mass, &e.mass_diagonal) {
                (Some(m), None) => ctx.matrix(m, "mass")?,
                (None, Some(d)) => DMatrix::from_diagonal(&ctx.vector(d, "mass_diagonal")?),
                (Some(_), Some(d)) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(d.span()),
                        reason: "give either `mass` or `mass_diagonal`, not both".into(),
                    })
                }
                (None, None) => {
                    return Err(ScenarioError::Invalid {
                        at: ctx.at(span),
                        reason: format!("{kind} needs `mass` or `mass_diagonal`"),
                    })
                }
            };
            let mut ds = LagrangianLinearTi::new(q0, v0, mass);
            if let Some(k) = &e.stiffness {
                ds = ds.with_stiffness(ctx.matrix(k, "stiffness")?);
            }
            if let Some(c) = &e.damping {
                ds = ds.with_damping(ctx.matrix(c, "damping")?);
            }
            if let Some(f) = &e.fext {
                ds = ds.with_fext(ctx.time_vector(f, "fext")?);
            }
            Ok((ds.into(), None))
        }
        "first_order_linear" => {
            let kind = "a first_order_linear system";
            refuse_arm_keys(ctx, e, kind, FIRST_ORDER_KEYS)?;
            for (v, key) in [
                (&e.q0, "q0"),
                (&e.v0, "v0"),
                (&e.mass_diagonal, "mass_diagonal"),
                (&e.fext, "fext"),
            ] {
                refuse(ctx, v, key, kind, FIRST_ORDER_KEYS)?;
            }
            for (m, key) in [
                (&e.mass, "mass"),
                (&e.stiffness, "stiffness"),
                (&e.damping, "damping"),
            ] {
                refuse(ctx, m, key, kind, FIRST_ORDER_KEYS)?;
            }
            let x0 = ctx.vector(required(ctx, &e.x0, span.clone(), "x0", kind)?, "x0")?;
            let a = ctx.time_matrix(required(ctx, &e.a, span, "A", kind)?, "A")?;
            let mut ds = FirstOrderLinear::new(x0, DMatrix::zeros(0, 0)).with_a(a);
            if let Some(b) = &e.b {
                ds = ds.with_b(ctx.time_vector(b, "b")?);
            }
            Ok((ds.into(), None))
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(e.kind.span()),
            reason: format!(
                "unknown system type `{other}` \
                 (types: lagrangian_linear, first_order_linear, two_link_arm)"
            ),
        }),
    }
}

fn relation(
    ctx: Ctx<'_>,
    r: &toml::Spanned<RelationTable>,
    arm: Option<TwoLinkArm>,
) -> Result<Relation> {
    let span = r.span();
    let r = r.get_ref();
    let kind_name = r.kind.get_ref().as_str();
    if kind_name != "two_link_arm_height" {
        let kind = format!("a {kind_name} relation");
        refuse(ctx, &r.point, "point", &kind, "see docs/scenarios.md")?;
    }
    match kind_name {
        "two_link_arm_height" => {
            let kind = "a two_link_arm_height relation";
            let keys = "point";
            for (m, key) in [
                (&r.h, "H"),
                (&r.c, "C"),
                (&r.b_matrix, "B"),
                (&r.d, "D"),
                (&r.f, "F"),
            ] {
                refuse(ctx, m, key, kind, keys)?;
            }
            refuse(ctx, &r.b, "b", kind, keys)?;
            refuse(ctx, &r.e, "e", kind, keys)?;
            let Some(arm) = arm else {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(r.kind.span()),
                    reason: "a two_link_arm_height relation acts on one system of type \
                             two_link_arm"
                        .into(),
                });
            };
            let point = match &r.point {
                None => ArmPoint::Tip,
                Some(p) => match ctx.render(p, "point")?.as_str() {
                    "tip" => ArmPoint::Tip,
                    "elbow" => ArmPoint::Elbow,
                    other => {
                        return Err(ScenarioError::Invalid {
                            at: ctx.at(p.span()),
                            reason: format!("point `{other}`: expected `tip` or `elbow`"),
                        })
                    }
                },
            };
            Ok(arm.height_relation(point).into())
        }
        "lagrangian_linear" => {
            let kind = "a lagrangian_linear relation";
            let keys = "H, b";
            for (m, key) in [(&r.c, "C"), (&r.b_matrix, "B"), (&r.d, "D"), (&r.f, "F")] {
                refuse(ctx, m, key, kind, keys)?;
            }
            refuse(ctx, &r.e, "e", kind, keys)?;
            let h = ctx.matrix(required(ctx, &r.h, span, "H", kind)?, "H")?;
            let mut rel = LagrangianLinearTiR::new(h);
            if let Some(b) = &r.b {
                rel = rel.with_b(ctx.vector(b, "b")?);
            }
            Ok(rel.into())
        }
        "first_order_linear" => {
            let kind = "a first_order_linear relation";
            let keys = "C, B, D, F, e";
            refuse(ctx, &r.h, "H", kind, keys)?;
            refuse(ctx, &r.b, "b", kind, keys)?;
            let c = ctx.matrix(required(ctx, &r.c, span.clone(), "C", kind)?, "C")?;
            let b = ctx.matrix(required(ctx, &r.b_matrix, span, "B", kind)?, "B")?;
            let mut rel = FirstOrderLinearTi::new(c, b);
            if let Some(d) = &r.d {
                rel = rel.with_d(ctx.matrix(d, "D")?);
            }
            if let Some(f) = &r.f {
                rel = rel.with_f(ctx.matrix(f, "F")?);
            }
            if let Some(e) = &r.e {
                rel = rel.with_e(ctx.vector(e, "e")?);
            }
            Ok(rel.into())
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(r.kind.span()),
            reason: format!(
                "unknown relation type `{other}` \
                 (types: lagrangian_linear, first_order_linear, two_link_arm_height)"
            ),
        }),
    }
}

fn law(ctx: Ctx<'_>, l: &toml::Spanned<LawTable>, size: usize) -> Result<NonsmoothLaw> {
    let span = l.span();
    let l = l.get_ref();
    let kind_name = l.kind.get_ref().as_str();
    let kind = format!("a {kind_name} law");
    let none = |keys: &str| -> Result<()> {
        if keys != "restitution" {
            refuse(ctx, &l.restitution, "restitution", &kind, keys)?;
        }
        if keys != "lb, ub" {
            refuse(ctx, &l.lb, "lb", &kind, keys)?;
            refuse(ctx, &l.ub, "ub", &kind, keys)?;
        }
        if keys != "equalities" {
            refuse(ctx, &l.equalities, "equalities", &kind, keys)?;
        }
        Ok(())
    };
    match kind_name {
        "complementarity" => {
            none("none")?;
            Ok(NonsmoothLaw::Complementarity { size })
        }
        "equality" => {
            none("none")?;
            Ok(NonsmoothLaw::Equality { size })
        }
        "newton_impact" => {
            none("restitution")?;
            let e = required(ctx, &l.restitution, span, "restitution", &kind)?;
            Ok(NonsmoothLaw::NewtonImpact {
                size,
                restitution: ctx.number(e, "restitution")?,
            })
        }
        "relay" => {
            none("lb, ub")?;
            let lb = ctx.vector(required(ctx, &l.lb, span.clone(), "lb", &kind)?, "lb")?;
            let ub = ctx.vector(required(ctx, &l.ub, span, "ub", &kind)?, "ub")?;
            Ok(NonsmoothLaw::Relay {
                lb: lb.as_slice().to_vec(),
                ub: ub.as_slice().to_vec(),
            })
        }
        "mixed_complementarity" => {
            none("equalities")?;
            let q = required(ctx, &l.equalities, span, "equalities", &kind)?;
            let k = ctx.integer(q, "equalities")?;
            if k < 0 || k as usize > size {
                return Err(ScenarioError::Invalid {
                    at: ctx.at(q.span()),
                    reason: format!(
                        "equalities = {k} must lie in 0 ..= {size}, the size of the relation"
                    ),
                });
            }
            let k = k as usize;
            Ok(NonsmoothLaw::MixedComplementarity {
                equalities: k,
                inequalities: size - k,
            })
        }
        other => Err(ScenarioError::Invalid {
            at: ctx.at(l.kind.span()),
            reason: format!(
                "unknown law type `{other}` (types: complementarity, newton_impact, relay, \
                 equality, mixed_complementarity)"
            ),
        }),
    }
}

fn interaction(
    ctx: Ctx<'_>,
    b: &mut ModelBuilder,
    ids: &HashMap<String, SystemId>,
    arms: &HashMap<SystemId, TwoLinkArm>,
    e: &InteractionEntry,
    span: std::ops::Range<usize>,
) -> Result<()> {
    let name = ctx.render(&e.name, "the name")?;
    let list = e.systems.get_ref();
    if list.is_empty() || list.len() > 2 {
        return Err(ScenarioError::Invalid {
            at: ctx.at(e.systems.span()),
            reason: format!(
                "interaction `{name}`: systems lists {} names; it must list one or two",
                list.len()
            ),
        });
    }
    let mut systems = Vec::with_capacity(2);
    for s in list {
        let sys = ctx.render(s, "a system name")?;
        match ids.get(&sys) {
            Some(&id) => systems.push(id),
            None => {
                let mut known: Vec<&str> = ids.keys().map(|k| k.as_str()).collect();
                known.sort_unstable();
                return Err(ScenarioError::UnknownSystem {
                    at: ctx.at(s.span()),
                    interaction: name,
                    system: sys,
                    known: expr::list(&known),
                });
            }
        }
    }
    let arm = match systems.as_slice() {
        [one] => arms.get(one).copied(),
        _ => None,
    };
    let rel = relation(ctx, &e.relation, arm)?;
    let law = law(ctx, &e.law, rel.output_dim())?;
    b.add_interaction(&name, &systems, rel, law)
        .map_err(|source| model_error(ctx, span, source))?;
    Ok(())
}

fn model_error(ctx: Ctx<'_>, span: std::ops::Range<usize>, source: ModelError) -> ScenarioError {
    ScenarioError::Model {
        at: ctx.at(span),
        source,
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
) -> Result<BuiltScenario> {
    let (params, words) = parameters_and_words(src, file, overrides)?;
    let mut ctx = Ctx {
        src,
        scope: Scope::constant(&params),
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
    let all = settings(ctx, file.simulation.get_ref(), every, &mut places)?;
    ctx.t0 = all.time_stepping.t0;

    let mut builder = ModelBuilder::new();
    let mut ids: HashMap<String, SystemId> = HashMap::new();
    let mut arms: HashMap<SystemId, TwoLinkArm> = HashMap::new();
    for entry in &file.systems {
        let span = entry.span();
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = Ctx {
                scope: Scope {
                    index: var.as_deref().map(|v| (v, i)),
                    ..ctx.scope
                },
                ..ctx
            };
            let name = ctx.render(&e.name, "the name")?;
            let (ds, arm) = system(ctx, e, span.clone())?;
            let id = builder
                .add_system(&name, ds)
                .map_err(|source| model_error(ctx, span.clone(), source))?;
            if let Some(arm) = arm {
                arms.insert(id, arm);
            }
            places.systems.insert(name.clone(), ctx.at(span.clone()));
            ids.insert(name, id);
        }
    }
    for entry in &file.interactions {
        let span = entry.span();
        let e = entry.get_ref();
        let (var, values) = instances(ctx, &e.repeat)?;
        for i in values {
            let ctx = Ctx {
                scope: Scope {
                    index: var.as_deref().map(|v| (v, i)),
                    ..ctx.scope
                },
                ..ctx
            };
            interaction(ctx, &mut builder, &ids, &arms, e, span.clone())?;
        }
    }
    let model = Arc::new(builder.build());
    let control = control_plan::plan(ctx, file, &model, &words)?;
    let control_vars = if control.is_empty() {
        Vec::new()
    } else {
        // A first loop checks the laws against their loop and tells the
        // sizes of their signals.
        let probe = control_plan::instantiate(
            &control,
            &model,
            nonsmooth::simulation::Strategy::TimeStepping,
            &all.time_stepping,
            &all.event_driven,
            catalog.0.as_ref(),
            &places,
            &[],
        )?;
        control_variables(&probe, &control)
    };
    let model_ref: &nonsmooth::modelling::Model = &model;

    let mut columns: Vec<Column> = Vec::new();
    match file
        .output
        .as_ref()
        .and_then(|o| o.get_ref().record.as_ref())
    {
        Some(list) => {
            for s in list.get_ref() {
                let selector = ctx.render(s, "a record entry")?;
                record::select(
                    model_ref,
                    &control_vars,
                    &selector,
                    "record",
                    &ctx.at(s.span()),
                    &mut columns,
                )?;
            }
            record::dedup(&mut columns);
        }
        None => {
            columns = record::everything(model_ref, &control_vars);
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
        }
    }

    let mut plots = Vec::with_capacity(file.plots.len());
    for p in &file.plots {
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
            record::select(
                model_ref,
                &control_vars,
                &text,
                "plot column",
                &at,
                &mut sel,
            )?;
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
        plots.push(PlotSpec {
            title: pe.title.clone(),
            x: x.remove(0),
            y,
            output: PathBuf::from(output),
        });
    }

    let fmi = super::fmi::fmi_spec(ctx, file, model_ref, &control_vars, &columns, &params)?;
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
    })
}

/// The recordable variables of the control objects of a built loop.
fn control_variables(cl: &ControlLoop, plan: &ControlPlan) -> record::ControlVariables {
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
