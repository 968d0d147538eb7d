//! Building a [`ControlLoop`]: sensors, observers and controllers checked
//! against the model as they are added (names, systems, dimensions, times),
//! then registered as event sources on the plant's clock by
//! [`ControlLoopBuilder::build`].

use std::sync::Arc;

use nalgebra::DMatrix;

use super::{
    dim_err, fed_with_feedthrough, state_dim, Action, ActuatorSpec, ControlLoop,
    ControlLoopBuilder, ControllerId, ControllerRt, InputMap, Measurement, ObserverId, ObserverRt,
    SensorId, SensorRt, SensorSpec,
};
use crate::control::delay_line::DelayLine;
use crate::control::error::ControlError;
use crate::control::law::{Controller, ControllerSetup, LinearPlant, Observer, ObserverSetup};
use crate::control::timing::Timing;
use crate::modelling::dynamical_system::DynamicalSystem;
use crate::modelling::{InteractionId, Model, SystemId};
use crate::simulation::{
    EventDrivenSettings, EventKind, Simulation, SourceId, Strategy, TimeStepping,
    TimeSteppingSettings,
};

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
            relation: None,
            change_at: f64::INFINITY,
            schedules: false,
        });
        Ok(ControllerId(self.controllers.len() - 1))
    }

    /// Lets a controller's actuator also drive the input u_r of an
    /// interaction's relation: with every actuator so attached to
    /// `interaction`,
    ///
    /// ```text
    /// g_s = Σ_a B_a u_a   (as without it),    u_r = Σ_a P_a u_a
    /// ```
    ///
    /// held together with g from each application on
    /// (`Simulation::set_input`). A gated circuit switch needs both: its gate
    /// enters ẋ as G u (B = G) and the switches' relation as H u (the
    /// relation's input matrix is H, P picks the gates from u).
    /// P is r × m, r the relation's input size (checked when the loop is
    /// built), m the controller's.
    pub fn drive_relation_input(
        &mut self,
        controller: ControllerId,
        interaction: InteractionId,
        p: DMatrix<f64>,
    ) -> Result<(), ControlError> {
        let Some(c) = self.controllers.get_mut(controller.0) else {
            return Err(ControlError::BadReference(format!(
                "no controller {}",
                controller.0
            )));
        };
        if interaction.0 >= self.model.interactions().len() {
            return Err(ControlError::BadReference(format!(
                "{}: the model has no interaction {}",
                c.name, interaction.0
            )));
        }
        if p.ncols() != c.applied.len() || p.nrows() == 0 {
            return Err(dim_err(
                &c.name,
                "P",
                format!("{}×{}", p.nrows(), p.ncols()),
                format!("r×{} with r ≥ 1", c.applied.len()),
            ));
        }
        if let Some(v) = p.iter().find(|v| !v.is_finite()) {
            return Err(ControlError::InvalidValue {
                object: c.name.clone(),
                what: "P".into(),
                value: *v,
                reason: "must be finite".into(),
            });
        }
        c.relation = Some((interaction, p));
        Ok(())
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
        // Per event source: the loop's action (none for the plant's own
        // sources).
        let mut actions: Vec<Action> = Vec::new();
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
            c.schedules = c.law.schedules_changes();
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
            actions_pending: false,
            relation_u: Vec::new(),
            next_change: f64::INFINITY,
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
