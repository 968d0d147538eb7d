//! The closed loop: a plant simulation plus sensors, observers and
//! controllers (each with its actuator), all scheduled on the plant's exact
//! clock.
//!
//! At an instant t_k the events run in the documented order
//! (docs/how-a-step-proceeds.md): the plant's integration step ending at
//! t_k, then sensors (a capture reads x(t_k)⁺; a delayed delivery hands over
//! the measurement taken at t_k − d), observers, actuators (a controller
//! computes u_k; a delayed application applies the u computed at t_k − d),
//! outputs. An input applied at t_k is held by the plant (zero-order hold)
//! from t_k on, so the step that starts at t_k uses it. Inputs of several
//! actuators on one system add: g = Σ_a B_a u_a.

use std::sync::Arc;

use nalgebra::DMatrix;

mod state;

pub use state::ControlLoopState;

use super::delay_line::DelayLine;
use super::error::ControlError;
use super::law::{Controller, ControllerSetup, LinearPlant, Observer, ObserverSetup};
use super::timing::Timing;
use crate::modelling::dynamical_system::DynamicalSystem;
use crate::modelling::{InteractionId, Model, SystemId};
use crate::simulation::{
    EventDrivenSettings, EventKind, Simulation, SimulationError, SourceId, StepOutcome, Strategy,
    TimeStepping, TimeSteppingSettings,
};

/// A handle to a sensor of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SensorId(pub usize);
/// A handle to an observer of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObserverId(pub usize);
/// A handle to a controller (and its actuator) of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControllerId(pub usize);

/// A nonlinear input map g = G(t, q, v, u) (q = x, v empty for first-order
/// systems), evaluated when an input is applied and held with it.
pub type InputFn = Arc<dyn Fn(f64, &[f64], &[f64], &[f64], &mut [f64]) + Send + Sync>;

/// How an actuator's input u enters its system.
#[derive(Clone)]
pub enum InputMap {
    /// g = B u, B of size n × m (n the system's dimension: forces of a
    /// Lagrangian system, vector field of a first-order one).
    Matrix(DMatrix<f64>),
    /// g = G(t, q, v, u) with u of size `inputs`.
    Function {
        /// m, the size of u.
        inputs: usize,
        /// G.
        map: InputFn,
    },
}

impl std::fmt::Debug for InputMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputMap::Matrix(b) => f.debug_tuple("Matrix").field(b).finish(),
            InputMap::Function { inputs, .. } => {
                f.debug_struct("Function").field("inputs", inputs).finish()
            }
        }
    }
}

impl InputMap {
    fn inputs(&self) -> usize {
        match self {
            InputMap::Matrix(b) => b.ncols(),
            InputMap::Function { inputs, .. } => *inputs,
        }
    }
}

/// A linear sensor y = C x (+ D u of one controller), x the system's state
/// (x for first-order systems, (q, v) stacked for Lagrangian ones).
#[derive(Debug, Clone)]
pub struct SensorSpec {
    /// The measured system.
    pub system: SystemId,
    /// C, p × n_x.
    pub c: DMatrix<f64>,
    /// When it measures and how late its values arrive.
    pub timing: Timing,
}

/// Where a controller's measurement comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measurement {
    /// No measurement (open-loop laws).
    None,
    /// The latest value a sensor delivered.
    Sensor(SensorId),
    /// An observer's current estimate.
    Observer(ObserverId),
}

/// The actuator of a controller.
#[derive(Debug, Clone)]
pub struct ActuatorSpec {
    /// The actuated system.
    pub system: SystemId,
    /// How u enters it.
    pub input: InputMap,
    /// When the controller computes (period, offset) and how late its input
    /// reaches the plant (delay).
    pub timing: Timing,
    /// The input held before the first application (zeros when `None`).
    pub u0: Option<Vec<f64>>,
}

struct SensorRt {
    name: String,
    system: SystemId,
    c: DMatrix<f64>,
    feedthrough: Option<(DMatrix<f64>, usize)>,
    timing: Timing,
    state: Vec<f64>,
    captured: Vec<f64>,
    delivered: Vec<f64>,
    has_value: bool,
    line: Option<DelayLine>,
    /// For a sensor fed from outside the loop: the value held, which its
    /// captures read in place of C x.
    fed: Option<Vec<f64>>,
    /// Interactions whose λ follow C x in the measurement.
    contacts: Vec<InteractionId>,
}

impl SensorRt {
    /// The size of the measurement: the rows of C and the contacts' λ.
    fn dim(&self) -> usize {
        self.captured.len()
    }
}

struct ObserverRt {
    name: String,
    sensor: usize,
    law: Box<dyn Observer>,
    timing: Timing,
    /// M⁻¹ of a Lagrangian plant, to put the force g in state coordinates.
    mass_inverse: Option<DMatrix<f64>>,
    g_state: Vec<f64>,
    x0: Vec<f64>,
}

struct ControllerRt {
    name: String,
    measurement: Measurement,
    law: Box<dyn Controller>,
    system: SystemId,
    input: InputMap,
    timing: Timing,
    computed: Vec<f64>,
    applied: Vec<f64>,
    contribution: Vec<f64>,
    line: Option<DelayLine>,
    signals: Vec<&'static str>,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    None,
    Capture(usize),
    Deliver(usize),
    Observe(usize),
    Compute(usize),
    Apply(usize),
}

/// Collects the objects of a control loop; [`ControlLoopBuilder::build`]
/// checks them and schedules their events.
pub struct ControlLoopBuilder {
    model: Arc<Model>,
    names: Vec<String>,
    sensors: Vec<SensorRt>,
    observers: Vec<ObserverRt>,
    controllers: Vec<ControllerRt>,
}

/// A sensor fed from outside captures the value set there, not C x + D u.
fn fed_with_feedthrough(name: &str) -> ControlError {
    ControlError::Unsupported {
        object: name.into(),
        reason: "a sensor fed from outside has no feedthrough D u (its value is the one set)"
            .into(),
    }
}

fn dim_err(object: &str, what: &'static str, got: String, expected: String) -> ControlError {
    ControlError::Dimension {
        object: object.to_string(),
        what,
        got,
        expected,
    }
}

/// The size of the state a sensor reads: n, or 2n for a Lagrangian system.
fn state_dim(model: &Model, s: SystemId) -> usize {
    let ds = &model.system(s).ds;
    if ds.is_lagrangian() {
        2 * ds.dim()
    } else {
        ds.dim()
    }
}

impl ControlLoopBuilder {
    /// A loop around the systems of `model`.
    pub fn new(model: impl Into<Arc<Model>>) -> Self {
        ControlLoopBuilder {
            model: model.into(),
            names: Vec::new(),
            sensors: Vec::new(),
            observers: Vec::new(),
            controllers: Vec::new(),
        }
    }

    fn claim(&mut self, name: &str) -> Result<(), ControlError> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
        if !valid {
            return Err(ControlError::BadReference(format!(
                "`{name}` is not a valid name (letters, digits, `_`, `-`)"
            )));
        }
        let taken = self.names.iter().any(|n| n == name)
            || self.model.system_id(name).is_some()
            || self.model.interaction_id(name).is_some();
        if taken {
            return Err(ControlError::BadReference(format!(
                "the name `{name}` is used twice"
            )));
        }
        self.names.push(name.to_string());
        Ok(())
    }

    fn check_system(&self, name: &str, s: SystemId) -> Result<(), ControlError> {
        if s.0 >= self.model.systems().len() {
            return Err(ControlError::BadReference(format!(
                "{name}: the model has no system {}",
                s.0
            )));
        }
        Ok(())
    }

    /// Adds a linear sensor y = C x.
    pub fn add_sensor(&mut self, name: &str, spec: SensorSpec) -> Result<SensorId, ControlError> {
        self.check_system(name, spec.system)?;
        spec.timing.validate(name)?;
        let nx = state_dim(&self.model, spec.system);
        if spec.c.ncols() != nx || spec.c.nrows() == 0 {
            return Err(dim_err(
                name,
                "C",
                format!("{}×{}", spec.c.nrows(), spec.c.ncols()),
                format!(
                    "p×{nx} with p ≥ 1 (the state of system '{}')",
                    self.model.system(spec.system).name
                ),
            ));
        }
        if let Some(v) = spec.c.iter().find(|v| !v.is_finite()) {
            return Err(ControlError::InvalidValue {
                object: name.into(),
                what: "C".into(),
                value: *v,
                reason: "must be finite".into(),
            });
        }
        self.claim(name)?;
        let p = spec.c.nrows();
        self.sensors.push(SensorRt {
            name: name.to_string(),
            system: spec.system,
            c: spec.c,
            feedthrough: None,
            timing: spec.timing,
            state: vec![0.0; nx],
            captured: vec![0.0; p],
            delivered: vec![0.0; p],
            has_value: false,
            line: None,
            fed: None,
            contacts: Vec::new(),
        });
        Ok(SensorId(self.sensors.len() - 1))
    }

    /// Appends the multipliers λ of `interactions` to a sensor's measurement:
    /// y = (C x; λ₁; …; λ_k), each λᵢ as the plant reports it at the capture
    /// (for an impact law under time-stepping, the impulse of the step just
    /// done, N·s). A switching law learns from them when its contact opens
    /// and closes. Observers cannot read such a sensor.
    pub fn set_sensor_contacts(
        &mut self,
        sensor: SensorId,
        interactions: &[InteractionId],
    ) -> Result<(), ControlError> {
        let model = self.model.clone();
        let s = self
            .sensors
            .get_mut(sensor.0)
            .ok_or_else(|| ControlError::BadReference(format!("no sensor {}", sensor.0)))?;
        let mut extra = 0;
        for &i in interactions {
            if i.0 >= model.interactions().len() {
                return Err(ControlError::BadReference(format!(
                    "{}: no interaction {}",
                    s.name, i.0
                )));
            }
            extra += model.interaction(i).relation.output_dim();
        }
        let p = s.c.nrows() + extra;
        s.contacts = interactions.to_vec();
        s.captured = vec![0.0; p];
        s.delivered = vec![0.0; p];
        if s.fed.is_some() {
            s.fed = Some(vec![0.0; p]);
        }
        Ok(())
    }

    /// Makes a sensor read a value set from outside the loop
    /// ([`ControlLoop::set_sensor_input`], e.g. an FMI input) in place of
    /// C x: at each of its instants it captures the value held then (zeros
    /// until set), and delivers it after its delay as usual. C still gives
    /// the measurement's size and, to observers, its meaning.
    pub fn feed_sensor_from_input(&mut self, sensor: SensorId) -> Result<(), ControlError> {
        let s = self
            .sensors
            .get_mut(sensor.0)
            .ok_or_else(|| ControlError::BadReference(format!("no sensor {}", sensor.0)))?;
        if s.feedthrough.is_some() {
            return Err(fed_with_feedthrough(&s.name));
        }
        s.fed = Some(vec![0.0; s.dim()]);
        Ok(())
    }

    /// Adds the feedthrough D u_c of controller `c`'s applied input to a
    /// sensor: y = C x + D u_c, D of size p × m_c.
    pub fn set_sensor_feedthrough(
        &mut self,
        sensor: SensorId,
        controller: ControllerId,
        d: DMatrix<f64>,
    ) -> Result<(), ControlError> {
        let c = self
            .controllers
            .get(controller.0)
            .ok_or_else(|| ControlError::BadReference(format!("no controller {}", controller.0)))?;
        let m = c.input.inputs();
        let s = self
            .sensors
            .get_mut(sensor.0)
            .ok_or_else(|| ControlError::BadReference(format!("no sensor {}", sensor.0)))?;
        if s.fed.is_some() {
            return Err(fed_with_feedthrough(&s.name));
        }
        if d.nrows() != s.c.nrows() || d.ncols() != m {
            return Err(dim_err(
                &s.name,
                "D",
                format!("{}×{}", d.nrows(), d.ncols()),
                format!("{}×{m}", s.c.nrows()),
            ));
        }
        s.feedthrough = Some((d, controller.0));
        Ok(())
    }

    /// Adds an observer fed by `sensor`, acting every `timing.period`
    /// (offset as given; its delay must be 0: delay the sensor instead).
    /// `x0` is its initial estimate (zeros when `None`).
    pub fn add_observer(
        &mut self,
        name: &str,
        sensor: SensorId,
        law: Box<dyn Observer>,
        timing: Timing,
        x0: Option<Vec<f64>>,
    ) -> Result<ObserverId, ControlError> {
        timing.validate(name)?;
        if timing.delay != 0.0 {
            return Err(ControlError::InvalidValue {
                object: name.into(),
                what: "delay".into(),
                value: timing.delay,
                reason: "an observer has no delay of its own; delay its sensor".into(),
            });
        }
        let s = self
            .sensors
            .get(sensor.0)
            .ok_or_else(|| ControlError::BadReference(format!("{name}: no sensor {}", sensor.0)))?;
        let nx = state_dim(&self.model, s.system);
        if let Some(x0) = &x0 {
            if x0.len() != nx {
                return Err(dim_err(name, "x0", x0.len().to_string(), nx.to_string()));
            }
        }
        let mass_inverse = match &self.model.system(s.system).ds {
            DynamicalSystem::LagrangianLinearTi(d) => Some(
                d.mass
                    .clone()
                    .try_inverse()
                    .ok_or_else(|| ControlError::Unsupported {
                        object: name.into(),
                        reason: "the plant's mass matrix is singular".into(),
                    })?,
            ),
            _ => None,
        };
        self.claim(name)?;
        self.observers.push(ObserverRt {
            name: name.to_string(),
            sensor: sensor.0,
            law,
            timing,
            mass_inverse,
            g_state: vec![0.0; nx],
            x0: x0.unwrap_or_else(|| vec![0.0; nx]),
        });
        Ok(ObserverId(self.observers.len() - 1))
    }

    /// Adds a controller and its actuator.
    pub fn add_controller(
        &mut self,
        name: &str,
        measurement: Measurement,
        law: Box<dyn Controller>,
        actuator: ActuatorSpec,
    ) -> Result<ControllerId, ControlError> {
        self.check_system(name, actuator.system)?;
        actuator.timing.validate(name)?;
        match measurement {
            Measurement::Sensor(s) if s.0 >= self.sensors.len() => {
                return Err(ControlError::BadReference(format!(
                    "{name}: no sensor {}",
                    s.0
                )))
            }
            Measurement::Observer(o) if o.0 >= self.observers.len() => {
                return Err(ControlError::BadReference(format!(
                    "{name}: no observer {}",
                    o.0
                )))
            }
            _ => {}
        }
        let n = self.model.system(actuator.system).ds.dim();
        let m = actuator.input.inputs();
        if let InputMap::Matrix(b) = &actuator.input {
            if b.nrows() != n || b.ncols() == 0 {
                return Err(dim_err(
                    name,
                    "B",
                    format!("{}×{}", b.nrows(), b.ncols()),
                    format!("{n}×m with m ≥ 1"),
                ));
            }
            if let Some(v) = b.iter().find(|v| !v.is_finite()) {
                return Err(ControlError::InvalidValue {
                    object: name.into(),
                    what: "B".into(),
                    value: *v,
                    reason: "must be finite".into(),
                });
            }
        }
        let u0 = match actuator.u0 {
            Some(u0) => {
                if u0.len() != m {
                    return Err(dim_err(name, "u0", u0.len().to_string(), m.to_string()));
                }
                if let Some(v) = u0.iter().find(|v| !v.is_finite()) {
                    return Err(ControlError::InvalidValue {
                        object: name.into(),
                        what: "u0".into(),
                        value: *v,
                        reason: "must be finite".into(),
                    });
                }
                u0
            }
            None => vec![0.0; m],
        };
        self.claim(name)?;
        self.controllers.push(ControllerRt {
            name: name.to_string(),
            measurement,
            law,
            system: actuator.system,
            input: actuator.input,
            timing: actuator.timing,
            computed: u0.clone(),
            applied: u0,
            contribution: vec![0.0; n],
            line: None,
            signals: Vec::new(),
        });
        Ok(ControllerId(self.controllers.len() - 1))
    }

    /// Every period, offset and delay, for the plant's time base (give them
    /// to the plant's `with_times` before [`ControlLoopBuilder::build`]).
    pub fn times(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        let timings = self
            .sensors
            .iter()
            .map(|s| s.timing)
            .chain(self.observers.iter().map(|o| o.timing))
            .chain(self.controllers.iter().map(|c| c.timing));
        for t in timings {
            out.push(("period", t.period));
            out.push(("offset", t.offset));
            out.push(("delay", t.delay));
        }
        out
    }

    /// Builds the loop on a time-stepping simulation of the model.
    pub fn build_time_stepping(
        self,
        settings: TimeSteppingSettings,
    ) -> Result<ControlLoop, ControlError> {
        let times = self.times();
        let plant = TimeStepping::with_times(Arc::clone(&self.model), settings, &times)?;
        self.build(Box::new(plant))
    }

    /// Builds the loop on an event-driven simulation of the model: every
    /// instant of the loop is met exactly (no grid).
    pub fn build_event_driven(
        self,
        settings: EventDrivenSettings,
    ) -> Result<ControlLoop, ControlError> {
        let times = self.times();
        let plant =
            crate::simulation::EventDriven::with_times(Arc::clone(&self.model), settings, &times)?;
        self.build(Box::new(plant))
    }

    /// Builds the loop on a simulation of the model with the given
    /// strategy (and the settings of each).
    pub fn build_with(
        self,
        strategy: Strategy,
        time_stepping: &TimeSteppingSettings,
        event_driven: &EventDrivenSettings,
    ) -> Result<ControlLoop, ControlError> {
        let times = self.times();
        let plant = crate::simulation::simulate(
            strategy,
            Arc::clone(&self.model),
            time_stepping,
            event_driven,
            &times,
        )?;
        self.build(plant)
    }

    /// Builds the loop on a plant simulation created with the periods,
    /// offsets and delays of every object in its time base (see
    /// [`TimeStepping::with_times`]) and not yet advanced.
    pub fn build(self, mut plant: Box<dyn Simulation>) -> Result<ControlLoop, ControlError> {
        let model = Arc::clone(&self.model);
        let (t0_tick, base) = plant.tick();
        let ticks = |object: &str, what: &'static str, secs: f64| {
            base.ticks(what, secs)
                .map_err(|source| ControlError::Clock {
                    object: object.to_string(),
                    source,
                })
        };
        let mut actions = vec![Action::None; 0];
        let register = |plant: &mut Box<dyn Simulation>,
                        actions: &mut Vec<Action>,
                        kind: EventKind,
                        offset: i64,
                        period: i64,
                        name: &str,
                        action: Action|
         -> Result<SourceId, ControlError> {
            let id = plant.add_event_source(kind, offset, Some(period), name)?;
            if actions.len() <= id.0 {
                actions.resize(id.0 + 1, Action::None);
            }
            actions[id.0] = action;
            Ok(id)
        };
        let mut sensors = self.sensors;
        let mut observers = self.observers;
        let mut controllers = self.controllers;
        // Sensors.
        for (k, s) in sensors.iter_mut().enumerate() {
            let period = ticks(&s.name, "period", s.timing.period)?;
            let offset = t0_tick + ticks(&s.name, "offset", s.timing.offset)?;
            let delay = ticks(&s.name, "delay", s.timing.delay)?;
            register(
                &mut plant,
                &mut actions,
                EventKind::Sensor,
                offset,
                period,
                &s.name,
                Action::Capture(k),
            )?;
            if delay > 0 {
                let capacity = (delay / period + 2) as usize;
                s.line = Some(DelayLine::new(s.dim(), capacity));
                let name = format!("{}.delivery", s.name);
                register(
                    &mut plant,
                    &mut actions,
                    EventKind::Sensor,
                    offset + delay,
                    period,
                    &name,
                    Action::Deliver(k),
                )?;
            }
        }
        // Observers.
        for (k, o) in observers.iter_mut().enumerate() {
            let s = &sensors[o.sensor];
            if !s.contacts.is_empty() {
                return Err(ControlError::Unsupported {
                    object: o.name.clone(),
                    reason: format!(
                        "sensor `{}` also measures contact multipliers; an observer reads C x only",
                        s.name
                    ),
                });
            }
            let nx = state_dim(&model, s.system);
            let a = linear_state_matrix(&model, s.system);
            let setup = ObserverSetup {
                name: o.name.clone(),
                period: o.timing.period,
                measurement_dim: s.c.nrows(),
                state_dim: nx,
                a,
                x0: o.x0.clone(),
                c: if s.feedthrough.is_none() {
                    Some(s.c.clone())
                } else {
                    None
                },
            };
            o.law.initialize(&setup)?;
            if o.law.estimate().len() != nx {
                return Err(dim_err(
                    &o.name,
                    "estimate",
                    o.law.estimate().len().to_string(),
                    nx.to_string(),
                ));
            }
            let period = ticks(&o.name, "period", o.timing.period)?;
            let offset = t0_tick + ticks(&o.name, "offset", o.timing.offset)?;
            register(
                &mut plant,
                &mut actions,
                EventKind::Observer,
                offset,
                period,
                &o.name,
                Action::Observe(k),
            )?;
        }
        // Controllers and their actuators.
        for (k, c) in controllers.iter_mut().enumerate() {
            let measurement_dim = match c.measurement {
                Measurement::None => 0,
                Measurement::Sensor(s) => sensors[s.0].dim(),
                Measurement::Observer(o) => observers[o.0].law.estimate().len(),
            };
            let plant_lin = match &c.input {
                InputMap::Matrix(b) => linear_plant(&model, c.system, b),
                InputMap::Function { .. } => None,
            };
            let measurement_map = match c.measurement {
                Measurement::Sensor(s) => {
                    let s = &sensors[s.0];
                    (s.system == c.system && s.contacts.is_empty() && s.feedthrough.is_none())
                        .then(|| s.c.clone())
                }
                Measurement::Observer(o) => {
                    let system = sensors[observers[o.0].sensor].system;
                    let n = state_dim(&model, system);
                    (system == c.system).then(|| DMatrix::identity(n, n))
                }
                Measurement::None => None,
            };
            let setup = ControllerSetup {
                name: c.name.clone(),
                period: c.timing.period,
                measurement_dim,
                input_dim: c.input.inputs(),
                state_dim: state_dim(&model, c.system),
                plant: plant_lin,
                measurement_map,
            };
            c.law.initialize(&setup)?;
            c.signals = c.law.signal_names().to_vec();
            for name in &c.signals {
                if c.law.signal(name).is_none() {
                    return Err(ControlError::Unsupported {
                        object: c.name.clone(),
                        reason: format!("the law lists a signal `{name}` it does not provide"),
                    });
                }
            }
            let period = ticks(&c.name, "period", c.timing.period)?;
            let offset = t0_tick + ticks(&c.name, "offset", c.timing.offset)?;
            let delay = ticks(&c.name, "delay", c.timing.delay)?;
            register(
                &mut plant,
                &mut actions,
                EventKind::Actuator,
                offset,
                period,
                &c.name,
                Action::Compute(k),
            )?;
            if delay > 0 {
                let capacity = (delay / period + 2) as usize;
                c.line = Some(DelayLine::new(c.applied.len(), capacity));
                let name = format!("{}.apply", c.name);
                register(
                    &mut plant,
                    &mut actions,
                    EventKind::Actuator,
                    offset + delay,
                    period,
                    &name,
                    Action::Apply(k),
                )?;
            }
        }
        let mut inputs: Vec<Vec<f64>> = model
            .systems()
            .iter()
            .map(|s| vec![0.0; s.ds.dim()])
            .collect();
        let external = inputs.clone();
        let mut lp = ControlLoop {
            plant,
            sensors,
            observers,
            controllers,
            actions,
            inputs: std::mem::take(&mut inputs),
            external,
            undo: Vec::new(),
        };
        // u0 is held from t₀ on.
        let systems: Vec<SystemId> = lp.controllers.iter().map(|c| c.system).collect();
        for s in systems {
            lp.refresh_input(s)?;
        }
        Ok(lp)
    }
}

/// A of the plant in state coordinates when it is linear time-invariant.
fn linear_state_matrix(model: &Model, s: SystemId) -> Option<DMatrix<f64>> {
    match &model.system(s).ds {
        DynamicalSystem::FirstOrderLinear(d) if d.a.is_constant() => {
            let n = d.x0.len();
            let mut a = DMatrix::zeros(n, n);
            d.a.eval(0.0, &mut a);
            Some(a)
        }
        DynamicalSystem::LagrangianLinearTi(d) => {
            let n = d.q0.len();
            let minv = d.mass.clone().try_inverse()?;
            let mut a = DMatrix::zeros(2 * n, 2 * n);
            for i in 0..n {
                a[(i, n + i)] = 1.0;
            }
            if let Some(k) = &d.stiffness {
                a.view_mut((n, 0), (n, n)).copy_from(&(-&minv * k));
            }
            if let Some(c) = &d.damping {
                a.view_mut((n, n), (n, n)).copy_from(&(-&minv * c));
            }
            Some(a)
        }
        _ => None,
    }
}

/// (A, B) of the plant in state coordinates, B = the actuator's matrix
/// (first order) or (0; M⁻¹B) (Lagrangian).
fn linear_plant(model: &Model, s: SystemId, b: &DMatrix<f64>) -> Option<LinearPlant> {
    let a = linear_state_matrix(model, s)?;
    let b = match &model.system(s).ds {
        DynamicalSystem::LagrangianLinearTi(d) => {
            let n = d.q0.len();
            let minv = d.mass.clone().try_inverse()?;
            let mut full = DMatrix::zeros(2 * n, b.ncols());
            full.view_mut((n, 0), (n, b.ncols())).copy_from(&(minv * b));
            full
        }
        _ => b.clone(),
    };
    Some(LinearPlant { a, b })
}

/// A closed loop: the plant simulation and the sampled objects acting on
/// it. See the module documentation for the order of events.
pub struct ControlLoop {
    plant: Box<dyn Simulation>,
    sensors: Vec<SensorRt>,
    observers: Vec<ObserverRt>,
    controllers: Vec<ControllerRt>,
    actions: Vec<Action>,
    inputs: Vec<Vec<f64>>,
    /// Inputs set from outside the loop (e.g. an FMI input), per system.
    external: Vec<Vec<f64>>,
    /// The laws' states before a restore, to undo a restore that fails.
    undo: Vec<f64>,
}

impl ControlLoop {
    /// Advances to the next instant of the schedule and processes all its
    /// events in the documented order.
    pub fn step(&mut self) -> Result<StepOutcome, ControlError> {
        let outcome = self.plant.step()?;
        let StepOutcome::Advanced { t, .. } = outcome else {
            return Ok(outcome);
        };
        // Most instants hold only the plant's own events (its integration
        // step, its outputs): find the first event with something to do.
        let actions = &self.actions;
        let events = self.plant.last_events();
        let n = events.len();
        let Some(first) = events
            .iter()
            .position(|ev| !matches!(actions.get(ev.source.0), None | Some(Action::None)))
        else {
            return Ok(outcome);
        };
        for k in first..n {
            let ev = self.plant.last_events()[k];
            let action = self
                .actions
                .get(ev.source.0)
                .copied()
                .unwrap_or(Action::None);
            match action {
                Action::None => {}
                Action::Capture(s) => self.capture(s)?,
                Action::Deliver(s) => {
                    let s = &mut self.sensors[s];
                    if let Some(line) = &mut s.line {
                        if line.pop_into(&mut s.delivered) {
                            s.has_value = true;
                        }
                    }
                }
                Action::Observe(o) => self.observe(o, t)?,
                Action::Compute(c) => self.compute(c, t)?,
                Action::Apply(c) => {
                    let ctl = &mut self.controllers[c];
                    if let Some(line) = &mut ctl.line {
                        if line.pop_into(&mut ctl.applied) {
                            let s = ctl.system;
                            self.refresh_input(s)?;
                        }
                    }
                }
            }
        }
        Ok(outcome)
    }

    /// Runs to the final time, calling `each` after every instant.
    pub fn run(&mut self, mut each: impl FnMut(&ControlLoop)) -> Result<(), ControlError> {
        while let StepOutcome::Advanced { .. } = self.step()? {
            each(self);
        }
        Ok(())
    }

    fn capture(&mut self, k: usize) -> Result<(), ControlError> {
        let s = &mut self.sensors[k];
        if let Some(fed) = &s.fed {
            s.captured.copy_from_slice(fed);
            return self.deliver_capture(k);
        }
        let q = self.plant.q(s.system);
        let v = self.plant.v(s.system);
        s.state[..q.len()].copy_from_slice(q);
        s.state[q.len()..].copy_from_slice(v);
        // y = C x (+ D u), then the contacts' λ.
        let p = s.c.nrows();
        let mut at = p;
        for &i in &s.contacts {
            let l = self.plant.lambda(i);
            s.captured[at..at + l.len()].copy_from_slice(l);
            at += l.len();
        }
        for (i, y) in s.captured[..p].iter_mut().enumerate() {
            let mut acc = 0.0;
            for (j, x) in s.state.iter().enumerate() {
                acc += s.c[(i, j)] * x;
            }
            *y = acc;
        }
        if let Some((d, c)) = &s.feedthrough {
            let u = &self.controllers[*c].applied;
            for (i, y) in s.captured[..p].iter_mut().enumerate() {
                for (j, uj) in u.iter().enumerate() {
                    *y += d[(i, j)] * uj;
                }
            }
        }
        self.deliver_capture(k)
    }

    /// Hands the captured value to the readers, or to the delay line.
    fn deliver_capture(&mut self, k: usize) -> Result<(), ControlError> {
        let s = &mut self.sensors[k];
        match &mut s.line {
            None => {
                s.delivered.copy_from_slice(&s.captured);
                s.has_value = true;
            }
            Some(line) => {
                if !line.push(&s.captured) {
                    return Err(ControlError::Unsupported {
                        object: s.name.clone(),
                        reason: "more measurements in transit than the delay allows".into(),
                    });
                }
            }
        }
        Ok(())
    }

    fn observe(&mut self, k: usize, t: f64) -> Result<(), ControlError> {
        let o = &mut self.observers[k];
        let s = &self.sensors[o.sensor];
        if !s.has_value {
            return Ok(());
        }
        let g = self.plant.system_input(s.system);
        match &o.mass_inverse {
            None => o.g_state.copy_from_slice(g),
            Some(minv) => {
                let n = g.len();
                o.g_state[..n].iter_mut().for_each(|x| *x = 0.0);
                for i in 0..n {
                    let mut acc = 0.0;
                    for j in 0..n {
                        acc += minv[(i, j)] * g[j];
                    }
                    o.g_state[n + i] = acc;
                }
            }
        }
        o.law.update(t, &s.delivered, &o.g_state)?;
        if let Some(bad) = o.law.estimate().iter().find(|x| !x.is_finite()) {
            return Err(ControlError::LawFailed {
                t,
                object: o.name.clone(),
                reason: format!("the estimate is not finite ({bad})"),
            });
        }
        Ok(())
    }

    fn compute(&mut self, k: usize, t: f64) -> Result<(), ControlError> {
        let c = &mut self.controllers[k];
        let y: Option<&[f64]> = match c.measurement {
            Measurement::None => Some(&[]),
            Measurement::Sensor(s) => {
                let s = &self.sensors[s.0];
                s.has_value.then_some(s.delivered.as_slice())
            }
            Measurement::Observer(o) => Some(self.observers[o.0].law.estimate()),
        };
        // Before its first measurement arrives, a controller keeps its input.
        if let Some(y) = y {
            c.law.compute(t, y, &mut c.computed)?;
            if let Some(bad) = c.computed.iter().find(|x| !x.is_finite()) {
                return Err(ControlError::LawFailed {
                    t,
                    object: c.name.clone(),
                    reason: format!("the law returned a non-finite input ({bad})"),
                });
            }
        }
        match &mut c.line {
            None => {
                c.applied.copy_from_slice(&c.computed);
                let s = c.system;
                self.refresh_input(s)?;
            }
            Some(line) => {
                if !line.push(&c.computed) {
                    return Err(ControlError::Unsupported {
                        object: c.name.clone(),
                        reason: "more inputs in transit than the delay allows".into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// g_s = external_s + Σ over the controllers acting on s of B u (or
    /// G(t, q, v, u)), handed to the plant.
    fn refresh_input(&mut self, s: SystemId) -> Result<(), ControlError> {
        let t = self.plant.time();
        let g = &mut self.inputs[s.0];
        g.copy_from_slice(&self.external[s.0]);
        for c in self.controllers.iter_mut().filter(|c| c.system == s) {
            match &c.input {
                InputMap::Matrix(b) => {
                    for (i, gi) in g.iter_mut().enumerate() {
                        let mut acc = 0.0;
                        for (j, u) in c.applied.iter().enumerate() {
                            acc += b[(i, j)] * u;
                        }
                        *gi += acc;
                    }
                }
                InputMap::Function { map, .. } => {
                    map(
                        t,
                        self.plant.q(s),
                        self.plant.v(s),
                        &c.applied,
                        &mut c.contribution,
                    );
                    g.iter_mut()
                        .zip(&c.contribution)
                        .for_each(|(gi, ci)| *gi += ci);
                }
            }
        }
        self.plant
            .set_system_input(s, &self.inputs[s.0])
            .map_err(|e| match e {
                SimulationError::BadArgument(reason) => ControlError::LawFailed {
                    t,
                    object: self.plant.model().system(s).name.clone(),
                    reason,
                },
                e => e.into(),
            })
    }

    /// Sets the part of a system's input g that comes from outside the loop
    /// (a disturbance, an FMI input): it is added to the actuators' inputs
    /// and held until changed.
    pub fn set_external_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), ControlError> {
        let name = || self.plant.model().system(s).name.clone();
        let ext = self
            .external
            .get(s.0)
            .ok_or_else(|| ControlError::BadReference(format!("no system {}", s.0)))?;
        if ext.len() != g.len() {
            return Err(dim_err(
                &name(),
                "external input",
                g.len().to_string(),
                ext.len().to_string(),
            ));
        }
        if let Some(bad) = g.iter().find(|x| !x.is_finite()) {
            return Err(ControlError::InvalidValue {
                object: name(),
                what: "external input".into(),
                value: *bad,
                reason: "must be finite".into(),
            });
        }
        self.external[s.0].copy_from_slice(g);
        self.refresh_input(s)
    }

    /// The external part of a system's input (zeros unless set).
    pub fn external_input(&self, s: SystemId) -> &[f64] {
        &self.external[s.0]
    }

    /// Sets the value held by a sensor fed from outside the loop
    /// ([`ControlLoopBuilder::feed_sensor_from_input`]); its next captures
    /// read it.
    pub fn set_sensor_input(&mut self, s: SensorId, y: &[f64]) -> Result<(), ControlError> {
        let sensor = self
            .sensors
            .get_mut(s.0)
            .ok_or_else(|| ControlError::BadReference(format!("no sensor {}", s.0)))?;
        let Some(fed) = &mut sensor.fed else {
            return Err(ControlError::BadReference(format!(
                "sensor `{}` measures its system; it is not fed from outside",
                sensor.name
            )));
        };
        if fed.len() != y.len() {
            return Err(dim_err(
                &sensor.name,
                "input",
                y.len().to_string(),
                fed.len().to_string(),
            ));
        }
        if let Some(bad) = y.iter().find(|x| !x.is_finite()) {
            return Err(ControlError::InvalidValue {
                object: sensor.name.clone(),
                what: "input".into(),
                value: *bad,
                reason: "must be finite".into(),
            });
        }
        fed.copy_from_slice(y);
        Ok(())
    }

    /// The value held by a sensor fed from outside the loop (empty for a
    /// sensor that measures its system).
    pub fn sensor_input(&self, s: SensorId) -> &[f64] {
        self.sensors
            .get(s.0)
            .and_then(|s| s.fed.as_deref())
            .unwrap_or(&[])
    }

    /// The instant of the next pending event in ticks, when the plant's
    /// strategy knows it in advance (time-stepping; `None` otherwise, or
    /// when none is left).
    pub fn next_event_tick(&self) -> Option<i64> {
        self.plant.next_event_tick()
    }

    /// Sets the input u of a relation (held until changed).
    pub fn set_relation_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), ControlError> {
        Ok(self.plant.set_input(i, u)?)
    }

    /// The plant simulation.
    pub fn plant(&self) -> &dyn Simulation {
        self.plant.as_ref()
    }

    /// The current time in seconds.
    pub fn time(&self) -> f64 {
        self.plant.time()
    }

    /// The name of an event source (plant, sensor, observer, controller;
    /// delayed deliveries are `<sensor>.delivery`, delayed applications
    /// `<controller>.apply`).
    pub fn source_name(&self, id: SourceId) -> &str {
        self.plant.source_name(id)
    }

    /// The latest measurement a sensor delivered (zeros before the first).
    pub fn sensor_output(&self, s: SensorId) -> &[f64] {
        &self.sensors[s.0].delivered
    }

    /// An observer's estimate x̂.
    pub fn observer_estimate(&self, o: ObserverId) -> &[f64] {
        self.observers[o.0].law.estimate()
    }

    /// The input u a controller's actuator currently applies.
    pub fn controller_input(&self, c: ControllerId) -> &[f64] {
        &self.controllers[c.0].applied
    }

    /// The input u a controller computed last (equal to the applied one
    /// without actuation delay).
    pub fn controller_computed(&self, c: ControllerId) -> &[f64] {
        &self.controllers[c.0].computed
    }

    /// A signal a controller's law records (`u_eq`, `u_s`, `sigma`, …).
    pub fn controller_signal(&self, c: ControllerId, name: &str) -> Option<&[f64]> {
        self.controllers[c.0].law.signal(name)
    }

    /// Names of the signals a controller records besides u.
    pub fn controller_signal_names(&self, c: ControllerId) -> &[&'static str] {
        &self.controllers[c.0].signals
    }

    /// Looks a sensor up by name.
    pub fn sensor_id(&self, name: &str) -> Option<SensorId> {
        self.sensors
            .iter()
            .position(|s| s.name == name)
            .map(SensorId)
    }

    /// Looks an observer up by name.
    pub fn observer_id(&self, name: &str) -> Option<ObserverId> {
        self.observers
            .iter()
            .position(|s| s.name == name)
            .map(ObserverId)
    }

    /// Looks a controller up by name.
    pub fn controller_id(&self, name: &str) -> Option<ControllerId> {
        self.controllers
            .iter()
            .position(|s| s.name == name)
            .map(ControllerId)
    }
}
