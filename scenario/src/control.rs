//! The `[[sensors]]`, `[[observers]]` and `[[controllers]]` of a scenario:
//! evaluated into a [`ControlPlan`] when the scenario is built, and turned
//! into a [`ControlLoop`] with laws from a [`LawCatalog`] for each run.

use std::collections::BTreeMap;
use std::sync::Arc;

use nalgebra::DMatrix;

use super::error::{Place, Result, ScenarioError};
use super::expr::{self, Fault, VarExpr};
use super::schema::{ControllerEntry, LawParamTable, Quantity, SStr, ScenarioFile, SQ};
use super::values::{is_identifier, Ctx};
use super::Places;
use crate::build::circuits::Gates;
use crate::cosim_build::FmuInterface;
use crate::nominal::WithNominalPlant;
use crate::ports;
use crate::schema::{Inputs, NominalTable};
use nonsmooth::control::{
    ActuatorSpec, ControlError, ControlLoop, ControlLoopBuilder, ControllerId, InputFn, InputMap,
    LawCatalog, LawParams, LawValue, Measurement, ObserverId, SensorId, SensorSpec, Timing,
};
use nonsmooth::modelling::{InteractionId, Model, SystemId};
use nonsmooth::simulation::{EventDrivenSettings, Simulation, Strategy, TimeSteppingSettings};

#[derive(Debug, Clone)]
struct SensorPlan {
    name: String,
    system: SystemId,
    c: DMatrix<f64>,
    contacts: Vec<InteractionId>,
    /// y = C x + D u_c: D and the index of controller c.
    feedthrough: Option<(DMatrix<f64>, usize)>,
    timing: Timing,
    at: Place,
}

#[derive(Debug, Clone)]
struct ObserverPlan {
    name: String,
    law: String,
    sensor: usize,
    timing: Timing,
    x0: Option<Vec<f64>>,
    params: Vec<(String, LawValue)>,
    at: Place,
}

#[derive(Debug, Clone)]
struct ControllerPlan {
    name: String,
    law: String,
    input: Measurement,
    system: SystemId,
    input_map: PlanInput,
    /// A circuit's switches' relation driven by u: the interaction and P
    /// (u_r = P u).
    drive: Option<Drive>,
    timing: Timing,
    u0: Option<Vec<f64>>,
    /// A nominal plant (A, B) given to the law in place of the system's.
    nominal: Option<(DMatrix<f64>, DMatrix<f64>)>,
    params: Vec<(String, LawValue)>,
    at: Place,
}

/// A relation input driven by a controller: the interaction and P
/// (u_r = P u).
type Drive = (InteractionId, DMatrix<f64>);

/// How a controller's input enters its system.
#[derive(Debug, Clone)]
enum PlanInput {
    /// g = B u.
    Matrix(DMatrix<f64>),
    /// g_i = G_i(t, state, u), u of size `inputs`.
    Map {
        inputs: usize,
        g: Arc<Vec<MapComponent>>,
    },
}

/// One component of a nonlinear input map.
#[derive(Debug, Clone)]
enum MapComponent {
    Constant(f64),
    /// Of the variables t, the state (x_i, or q_i and v_i), u_i, in this
    /// order (see [`map_variables`]).
    Expr(VarExpr),
}

/// The variables of an input map's expressions, in slot order: `t`, then
/// `x0 … x{n−1}` (first-order) or `q0 …` and `v0 …` (Lagrangian), then
/// `u0 … u{m−1}`.
fn map_variables(n: usize, lagrangian: bool, m: usize) -> Vec<String> {
    let mut vars = vec!["t".to_string()];
    if lagrangian {
        vars.extend((0..n).map(|i| format!("q{i}")));
        vars.extend((0..n).map(|i| format!("v{i}")));
    } else {
        vars.extend((0..n).map(|i| format!("x{i}")));
    }
    vars.extend((0..m).map(|i| format!("u{i}")));
    vars
}

/// The input of a controller driving a circuit's gated switches
/// (`inputs = ["S1", …]`): u_k is the gate of the k-th switch named, so
/// g = G P u (B = the columns of G of those switches) and the switches'
/// relation input is P u, P the q × m selection of the named switches
/// among the circuit's q.
fn gate_input(
    ctx: Ctx<'_>,
    e: &ControllerEntry,
    model: &Model,
    gates: &Gates,
    system: SystemId,
    inputs: &toml::Spanned<Inputs>,
) -> Result<(PlanInput, Option<Drive>)> {
    let at = ctx.at(inputs.span());
    let Inputs::Gates(names) = inputs.get_ref() else {
        unreachable!("called for a list of switch names")
    };
    if e.b.is_some() || e.g.is_some() {
        return Err(invalid(
            at,
            "a list of switches as `inputs` defines the input map itself: give no `B` or `g`"
                .into(),
        ));
    }
    let sys = &model.system(system).name;
    let Some(c) = gates.get(&system) else {
        return Err(invalid(
            at,
            format!(
                "`inputs` names switches, but the system `{sys}` is not a circuit with                  switches (`S<name> a b <blocking voltage>` lines)"
            ),
        ));
    };
    if names.is_empty() {
        return Err(invalid(at, "`inputs` names no switch".into()));
    }
    let q = c.names.len();
    let mut p = DMatrix::zeros(q, names.len());
    for (j, n) in names.iter().enumerate() {
        let Some(k) = c.names.iter().position(|s| s == n) else {
            return Err(invalid(
                at,
                format!(
                    "the circuit `{sys}` has no switch `{n}` (its switches: {})",
                    c.names.join(", ")
                ),
            ));
        };
        if p.row(k).iter().any(|&x| x != 0.0) {
            return Err(invalid(at, format!("the switch `{n}` is named twice")));
        }
        p[(k, j)] = 1.0;
    }
    Ok((PlanInput::Matrix(&c.g * &p), Some((c.interaction, p))))
}

/// The input map of a controller entry: `B`, or `g` with `inputs`.
fn plan_input(
    ctx: Ctx<'_>,
    e: &ControllerEntry,
    model: &Model,
    system: SystemId,
    at: &Place,
) -> Result<PlanInput> {
    match (&e.b, &e.g, &e.inputs) {
        (Some(b), None, None) => Ok(PlanInput::Matrix(ctx.matrix(b, "B")?)),
        (Some(_), None, Some(inputs)) => Err(invalid(
            ctx.at(inputs.span()),
            "`inputs` goes with `g` (its size) or alone (switch names), not with `B`".into(),
        )),
        (None, Some(g), Some(inputs)) => {
            let Inputs::Size(q) = inputs.get_ref() else {
                unreachable!("switch names are read by gate_input")
            };
            let inputs = &toml::Spanned::new(inputs.span(), q.clone());
            let m = ctx.integer(inputs, "inputs")?;
            if !(1..=64).contains(&m) {
                return Err(invalid(
                    ctx.at(inputs.span()),
                    format!("inputs: the size of u is 1 to 64, got {m}"),
                ));
            }
            let m = m as usize;
            let ds = &model.system(system).ds;
            let n = ds.dim();
            if g.get_ref().len() != n {
                return Err(invalid(
                    ctx.at(g.span()),
                    format!(
                        "g has {} components, the system `{}` has dimension {n}",
                        g.get_ref().len(),
                        e.system.get_ref()
                    ),
                ));
            }
            let vars = map_variables(n, ds.is_lagrangian(), m);
            let mut out = Vec::with_capacity(n);
            for (i, q) in g.get_ref().iter().enumerate() {
                let what = format!("g[{i}]");
                let at = ctx.at(q.span());
                out.push(match q.get_ref() {
                    Quantity::Number(x) if x.is_finite() => MapComponent::Constant(*x),
                    Quantity::Number(x) => {
                        return Err(ScenarioError::NonFinite {
                            at,
                            what,
                            value: *x,
                        })
                    }
                    Quantity::Expression(text) => {
                        let ex = ctx.scope.compile_vars(text, &vars).map_err(|f| match f {
                            Fault::UnknownName(name) => invalid(
                                at.clone(),
                                format!(
                                    "{what} = `{text}`: unknown name `{name}` (the map's variables: {}; parameters: {})",
                                    expr::list(&vars.iter().map(String::as_str).collect::<Vec<_>>()),
                                    ctx.scope.known()
                                ),
                            ),
                            f => ctx.fault(at.clone(), text, &what, f),
                        })?;
                        MapComponent::Expr(ex)
                    }
                });
            }
            Ok(PlanInput::Map {
                inputs: m,
                g: Arc::new(out),
            })
        }
        (None, Some(_), None) => Err(invalid(
            at.clone(),
            "`g` needs `inputs`, the size of u".into(),
        )),
        (None, None, _) => Err(invalid(
            at.clone(),
            "the input enters through `B` (g = B u) or `g` (g = G(t, state, u)): give one".into(),
        )),
        _ => Err(invalid(
            at.clone(),
            "give either `B`, or `g` with `inputs`, not both".into(),
        )),
    }
}

impl PlanInput {
    /// The actuator's input map.
    fn input_map(&self) -> InputMap {
        match self {
            PlanInput::Matrix(b) => InputMap::Matrix(b.clone()),
            PlanInput::Map { inputs, g } => {
                let g = Arc::clone(g);
                let map: InputFn = Arc::new(move |t, q, v, u, out: &mut [f64]| {
                    // Slots: t, then q (x), then v, then u.
                    let value = |k: usize| {
                        if k == 0 {
                            t
                        } else if k <= q.len() {
                            q[k - 1]
                        } else if k <= q.len() + v.len() {
                            v[k - 1 - q.len()]
                        } else {
                            u[k - 1 - q.len() - v.len()]
                        }
                    };
                    for (o, c) in out.iter_mut().zip(g.iter()) {
                        *o = match c {
                            MapComponent::Constant(x) => *x,
                            MapComponent::Expr(ex) => ex.eval(value),
                        };
                    }
                });
                InputMap::Function {
                    inputs: *inputs,
                    map,
                }
            }
        }
    }
}

/// The control objects of a scenario, evaluated (numbers, matrices, law
/// parameters) but without law instances: each run creates fresh ones.
#[derive(Debug, Clone, Default)]
pub struct ControlPlan {
    sensors: Vec<SensorPlan>,
    observers: Vec<ObserverPlan>,
    controllers: Vec<ControllerPlan>,
}

impl ControlPlan {
    /// True when the scenario has no sensor, observer or controller.
    pub fn is_empty(&self) -> bool {
        self.sensors.is_empty() && self.observers.is_empty() && self.controllers.is_empty()
    }

    /// Sensor names, in file order (their [`SensorId`]s).
    pub fn sensor_names(&self) -> impl Iterator<Item = &str> {
        self.sensors.iter().map(|s| s.name.as_str())
    }

    /// Observer names, in file order.
    pub fn observer_names(&self) -> impl Iterator<Item = &str> {
        self.observers.iter().map(|s| s.name.as_str())
    }

    /// Controller names, in file order.
    pub fn controller_names(&self) -> impl Iterator<Item = &str> {
        self.controllers.iter().map(|s| s.name.as_str())
    }

    /// Refuses a feedthrough on a sensor fed from outside (its value is the
    /// one set there, not C x + D u).
    pub(super) fn check_fed(&self, fed: &[SensorId]) -> Result<()> {
        for s in fed.iter().filter_map(|k| self.sensors.get(k.0)) {
            if s.feedthrough.is_some() {
                return Err(invalid(
                    s.at.clone(),
                    format!(
                        "sensor `{}` is fed from outside ([fmi] inputs) and has no feedthrough D u: its value is the one set",
                        s.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The systems the controllers act on, in controller order.
    pub fn actuated_systems(&self) -> impl Iterator<Item = SystemId> + '_ {
        self.controllers.iter().map(|c| c.system)
    }

    /// Periods, offsets and delays of every object, for the time base.
    pub fn times(&self) -> Vec<(&'static str, f64)> {
        let timings = self
            .sensors
            .iter()
            .map(|s| s.timing)
            .chain(self.observers.iter().map(|o| o.timing))
            .chain(self.controllers.iter().map(|c| c.timing));
        timings
            .flat_map(|t| {
                [
                    ("period", t.period),
                    ("offset", t.offset),
                    ("delay", t.delay),
                ]
            })
            .collect()
    }
}

fn timing(ctx: Ctx<'_>, period: &SQ, offset: &Option<SQ>, delay: &Option<SQ>) -> Result<Timing> {
    let mut t = Timing::periodic(ctx.number(period, "period")?);
    if let Some(o) = offset {
        t.offset = ctx.number(o, "offset")?;
    }
    if let Some(d) = delay {
        t.delay = ctx.number(d, "delay")?;
    }
    Ok(t)
}

fn invalid(at: Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid { at, reason }
}

fn system_ref(ctx: Ctx<'_>, model: &Model, s: &SStr) -> Result<SystemId> {
    model.system_id(s.get_ref()).ok_or_else(|| {
        let known: Vec<&str> = model.systems().iter().map(|s| s.name.as_str()).collect();
        invalid(
            ctx.at(s.span()),
            format!(
                "no system is named `{}` (systems: {})",
                s.get_ref(),
                known.join(", ")
            ),
        )
    })
}

/// A word slot (a law name): a word parameter's value, or the text itself.
fn word(s: &SStr, words: &BTreeMap<String, String>) -> String {
    let text = s.get_ref().trim();
    words.get(text).cloned().unwrap_or_else(|| text.to_string())
}

/// One number of a law parameter: a TOML number, or an expression string.
fn law_number(ctx: Ctx<'_>, v: &toml::Value, at: &Place, what: &str) -> Result<f64> {
    let x = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(x) => *x,
        toml::Value::Boolean(b) => f64::from(u8::from(*b)),
        toml::Value::String(text) => ctx
            .scope
            .constant_value(text)
            .map_err(|f| ctx.fault(at.clone(), text, what, f))?,
        other => {
            return Err(invalid(
                at.clone(),
                format!(
                    "{what}: expected a number or an expression, got {}",
                    other.type_str()
                ),
            ))
        }
    };
    if !x.is_finite() {
        return Err(ScenarioError::NonFinite {
            at: at.clone(),
            what: what.to_string(),
            value: x,
        });
    }
    Ok(x)
}

fn law_params(
    ctx: Ctx<'_>,
    table: &Option<LawParamTable>,
    words: &BTreeMap<String, String>,
) -> Result<Vec<(String, LawValue)>> {
    let Some(table) = table else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, value) in table.get_ref() {
        let at = ctx.at(value.span());
        let v = match value.get_ref() {
            toml::Value::String(text) => {
                let t = text.trim();
                if let Some(w) = words.get(t) {
                    LawValue::Text(w.clone())
                } else if is_identifier(t)
                    && !expr::is_reserved(t)
                    && !ctx.scope.params.contains_key(t)
                {
                    LawValue::Text(t.to_string())
                } else {
                    LawValue::Scalar(law_number(ctx, value.get_ref(), &at, key)?)
                }
            }
            toml::Value::Array(items)
                if items.iter().all(|i| i.is_array()) && !items.is_empty() =>
            {
                let rows: Vec<&Vec<toml::Value>> =
                    items.iter().filter_map(|i| i.as_array()).collect();
                let cols = rows[0].len();
                if cols == 0 || rows.iter().any(|r| r.len() != cols) {
                    return Err(invalid(
                        at,
                        format!("`{key}`: a matrix is a list of non-empty rows of equal length"),
                    ));
                }
                let mut data = Vec::with_capacity(rows.len() * cols);
                for (i, r) in rows.iter().enumerate() {
                    for (j, x) in r.iter().enumerate() {
                        data.push(law_number(ctx, x, &at, &format!("{key}[{i}][{j}]"))?);
                    }
                }
                LawValue::Matrix(DMatrix::from_row_slice(rows.len(), cols, &data))
            }
            toml::Value::Array(items) => {
                let mut data = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    data.push(law_number(ctx, x, &at, &format!("{key}[{i}]"))?);
                }
                LawValue::Vector(data)
            }
            other => LawValue::Scalar(law_number(ctx, other, &at, key)?),
        };
        out.push((key.clone(), v));
    }
    Ok(out)
}

/// Evaluates the control sections of the file.
pub(super) fn plan(
    ctx: Ctx<'_>,
    file: &ScenarioFile,
    model: &Model,
    gates: &Gates,
    words: &BTreeMap<String, String>,
    fmus: &[FmuInterface],
    bodies: &[String],
) -> Result<ControlPlan> {
    let mut plan = ControlPlan::default();
    for entry in &file.sensors {
        let e = entry.get_ref();
        let system = system_ref(ctx, model, &e.system)?;
        let mut contacts = Vec::new();
        for n in e.contacts.iter().flat_map(|l| l.get_ref()) {
            let id = model.interaction_id(n.get_ref()).ok_or_else(|| {
                let known: Vec<&str> = model
                    .interactions()
                    .iter()
                    .map(|i| i.name.as_str())
                    .collect();
                invalid(
                    ctx.at(n.span()),
                    format!(
                        "no interaction is named `{}` (interactions: {})",
                        n.get_ref(),
                        known.join(", ")
                    ),
                )
            })?;
            contacts.push(id);
        }
        let fmu = fmus.iter().find(|f| f.name == *e.system.get_ref());
        let at = ctx.at(entry.span());
        let c = match ports::rigid_ports(bodies, e.system.get_ref()) {
            Some(p) => ports::rigid_sensor_c(ctx, e, p, &at)?,
            None => ports::sensor_c(ctx, e, fmu, &at)?,
        };
        plan.sensors.push(SensorPlan {
            name: e.name.get_ref().clone(),
            system,
            c,
            contacts,
            feedthrough: None,
            timing: timing(ctx, &e.period, &e.offset, &e.delay)?,
            at: ctx.at(entry.span()),
        });
    }
    for entry in &file.observers {
        let e = entry.get_ref();
        let sensor = plan
            .sensors
            .iter()
            .position(|s| s.name == *e.sensor.get_ref())
            .ok_or_else(|| {
                invalid(
                    ctx.at(e.sensor.span()),
                    format!("no sensor is named `{}`", e.sensor.get_ref()),
                )
            })?;
        let x0 = match &e.x0 {
            Some(v) => Some(ctx.vector(v, "x0")?.as_slice().to_vec()),
            None => None,
        };
        plan.observers.push(ObserverPlan {
            name: e.name.get_ref().clone(),
            law: word(&e.law, words),
            sensor,
            timing: timing(ctx, &e.period, &e.offset, &None)?,
            x0,
            params: law_params(ctx, &e.params, words)?,
            at: ctx.at(entry.span()),
        });
    }
    for entry in &file.controllers {
        let e = entry.get_ref();
        let input = match &e.input {
            None => Measurement::None,
            Some(name) => {
                let n = name.get_ref();
                if let Some(k) = plan.sensors.iter().position(|s| s.name == *n) {
                    Measurement::Sensor(SensorId(k))
                } else if let Some(k) = plan.observers.iter().position(|o| o.name == *n) {
                    Measurement::Observer(ObserverId(k))
                } else {
                    return Err(invalid(
                        ctx.at(name.span()),
                        format!("no sensor or observer is named `{n}`"),
                    ));
                }
            }
        };
        let u0 = match &e.u0 {
            Some(v) => Some(ctx.vector(v, "u0")?.as_slice().to_vec()),
            None => None,
        };
        let system = system_ref(ctx, model, &e.system)?;
        let fmu = fmus.iter().find(|f| f.name == *e.system.get_ref());
        let nominal = match &e.nominal {
            Some(n) => Some(nominal_plant(ctx, n.get_ref())?),
            None => None,
        };
        let at = ctx.at(entry.span());
        let rigid = ports::rigid_ports(bodies, e.system.get_ref());
        let (input_map, drive) = match (&e.inputs, fmu, rigid) {
            (_, _, Some(p)) => (PlanInput::Matrix(ports::rigid_input(ctx, e, p, &at)?), None),
            (_, Some(f), None) => (PlanInput::Matrix(ports::fmu_input(ctx, e, f, &at)?), None),
            (Some(i), None, None) if matches!(i.get_ref(), Inputs::Gates(_)) => {
                gate_input(ctx, e, model, gates, system, i)?
            }
            _ => (
                plan_input(ctx, e, model, system, &ctx.at(entry.span()))?,
                None,
            ),
        };
        plan.controllers.push(ControllerPlan {
            name: e.name.get_ref().clone(),
            law: word(&e.law, words),
            input,
            system,
            input_map,
            drive,
            timing: timing(ctx, &e.period, &e.offset, &e.delay)?,
            u0,
            nominal,
            params: law_params(ctx, &e.params, words)?,
            at: ctx.at(entry.span()),
        });
    }
    // Feedthrough: the controller is named after the sensors are read.
    for (k, entry) in file.sensors.iter().enumerate() {
        let e = entry.get_ref();
        let (d, from) = match (&e.d, &e.feedthrough) {
            (None, None) => continue,
            (Some(d), Some(from)) => (d, from),
            _ => {
                return Err(invalid(
                    ctx.at(entry.span()),
                    "`D` and `feedthrough` go together: D multiplies the applied input of \
                     the controller `feedthrough` names"
                        .into(),
                ))
            }
        };
        let c = plan
            .controllers
            .iter()
            .position(|c| c.name == *from.get_ref())
            .ok_or_else(|| {
                let known: Vec<&str> = plan.controllers.iter().map(|c| c.name.as_str()).collect();
                invalid(
                    ctx.at(from.span()),
                    format!(
                        "no controller is named `{}` (controllers: {})",
                        from.get_ref(),
                        expr::list(&known)
                    ),
                )
            })?;
        plan.sensors[k].feedthrough = Some((ctx.matrix(d, "D")?, c));
    }
    Ok(plan)
}

/// `nominal = { A, B }`: A square, B with as many rows.
fn nominal_plant(ctx: Ctx<'_>, n: &NominalTable) -> Result<(DMatrix<f64>, DMatrix<f64>)> {
    let a = ctx.matrix(&n.a, "nominal A")?;
    let b = ctx.matrix(&n.b, "nominal B")?;
    if a.nrows() != a.ncols() {
        return Err(invalid(
            ctx.at(n.a.span()),
            format!(
                "nominal A is {}×{}; it must be square",
                a.nrows(),
                a.ncols()
            ),
        ));
    }
    if b.nrows() != a.nrows() {
        return Err(invalid(
            ctx.at(n.b.span()),
            format!("nominal B has {} rows; A has {}", b.nrows(), a.nrows()),
        ));
    }
    Ok((a, b))
}

fn located(at: &Place, e: ControlError, places: &Places) -> ScenarioError {
    match e {
        ControlError::Simulation(e @ nonsmooth::simulation::SimulationError::OffGrid { .. }) => {
            invalid(at.clone(), e.to_string())
        }
        ControlError::Simulation(e) => places.simulation_error(e),
        e => invalid(at.clone(), e.to_string()),
    }
}

fn check_law(at: &Place, kind: &str, law: &str, known: &[&str]) -> Result<()> {
    if known.contains(&law) {
        return Ok(());
    }
    Err(invalid(
        at.clone(),
        if known.is_empty() {
            format!("{kind} law `{law}`: this build has no control laws (they come from the nonsmooth-controllers crate)")
        } else {
            format!("unknown {kind} law `{law}` (known: {})", known.join(", "))
        },
    ))
}

fn unused(at: &Place, p: &LawParams) -> Result<()> {
    let keys = p.unused();
    if keys.is_empty() {
        return Ok(());
    }
    Err(invalid(
        at.clone(),
        format!(
            "{}: the law does not use {} (see docs/control.md)",
            p.object(),
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// Builds a fresh loop (new law instances) on a plant simulation of the
/// given strategy, or on `plant` when given (created with the plan's
/// [`ControlPlan::times`] in its time base); the sensors in `fed` read a
/// value set from outside.
#[allow(clippy::too_many_arguments)]
pub(super) fn instantiate(
    plan: &ControlPlan,
    model: &Arc<Model>,
    strategy: Strategy,
    settings: &TimeSteppingSettings,
    ed_settings: &EventDrivenSettings,
    catalog: &dyn LawCatalog,
    places: &Places,
    fed: &[SensorId],
    plant: Option<Box<dyn Simulation>>,
) -> Result<ControlLoop> {
    let mut lb = ControlLoopBuilder::new(Arc::clone(model));
    for s in &plan.sensors {
        let id = lb
            .add_sensor(
                &s.name,
                SensorSpec {
                    system: s.system,
                    c: s.c.clone(),
                    timing: s.timing,
                },
            )
            .map_err(|e| located(&s.at, e, places))?;
        if !s.contacts.is_empty() {
            lb.set_sensor_contacts(id, &s.contacts)
                .map_err(|e| located(&s.at, e, places))?;
        }
    }
    for &s in fed {
        lb.feed_sensor_from_input(s)
            .map_err(|e| located(&places.simulation, e, places))?;
    }
    let observer_laws = catalog.observer_laws();
    for o in &plan.observers {
        check_law(&o.at, "observer", &o.law, &observer_laws)?;
        let params = LawParams::new(&o.name, o.params.clone());
        let law = catalog
            .observer(&o.law, &params)
            .map_err(|e| located(&o.at, e, places))?;
        unused(&o.at, &params)?;
        lb.add_observer(&o.name, SensorId(o.sensor), law, o.timing, o.x0.clone())
            .map_err(|e| located(&o.at, e, places))?;
    }
    let controller_laws = catalog.controller_laws();
    for c in &plan.controllers {
        check_law(&c.at, "controller", &c.law, &controller_laws)?;
        let params = LawParams::new(&c.name, c.params.clone());
        let mut law = catalog
            .controller(&c.law, &params)
            .map_err(|e| located(&c.at, e, places))?;
        unused(&c.at, &params)?;
        if let Some((a, b)) = &c.nominal {
            law = Box::new(WithNominalPlant::new(law, a.clone(), b.clone()));
        }
        lb.add_controller(
            &c.name,
            c.input,
            law,
            ActuatorSpec {
                system: c.system,
                input: c.input_map.input_map(),
                timing: c.timing,
                u0: c.u0.clone(),
            },
        )
        .map_err(|e| located(&c.at, e, places))
        .and_then(|id| match &c.drive {
            Some((i, p)) => lb
                .drive_relation_input(id, *i, p.clone())
                .map_err(|e| located(&c.at, e, places)),
            None => Ok(()),
        })?;
    }
    for (k, s) in plan.sensors.iter().enumerate() {
        if let Some((d, c)) = &s.feedthrough {
            lb.set_sensor_feedthrough(SensorId(k), ControllerId(*c), d.clone())
                .map_err(|e| located(&s.at, e, places))?;
        }
    }
    // Errors of the loop as a whole (initialisation of laws, the clock) are
    // located at the object they name, or at [simulation].
    let built = match plant {
        Some(p) => lb.build(p),
        None => lb.build_with(strategy, settings, ed_settings),
    };
    built.map_err(|e| {
        let name = e
            .object()
            .map(|o| o.split('.').next().unwrap_or(o).to_string());
        let at = name
            .and_then(|n| {
                let s = plan.sensors.iter().find(|s| s.name == n).map(|s| &s.at);
                let o = plan.observers.iter().find(|o| o.name == n).map(|o| &o.at);
                let c = plan.controllers.iter().find(|c| c.name == n).map(|c| &c.at);
                s.or(o).or(c).cloned()
            })
            .unwrap_or_else(|| places.simulation.clone());
        located(&at, e, places)
    })
}
