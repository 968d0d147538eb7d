//! The running [`ControlLoop`]: one instant of the schedule after another,
//! its events processed in the documented order (sensor captures and
//! deliveries, observers, controllers and their actuators), the inputs held
//! by the plant, and the readings of every object.

use super::{
    dim_err, Action, ControlLoop, ControllerId, InputMap, Measurement, ObserverId, SensorId,
};
use crate::control::error::ControlError;
use crate::modelling::{InteractionId, SystemId};
use crate::simulation::{Simulation, SimulationError, SourceId, StepOutcome};

impl ControlLoop {
    /// Advances to the next instant of the schedule and processes all its
    /// events in the documented order ([`ControlLoop::reach`], then
    /// [`ControlLoop::process`]).
    pub fn step(&mut self) -> Result<StepOutcome, ControlError> {
        let outcome = self.reach()?;
        if let StepOutcome::Advanced { .. } = outcome {
            self.process()?;
        }
        Ok(outcome)
    }

    /// Advances to the next instant of the schedule and stops at its left
    /// limit ([`Simulation::reach`]): the plant's nonsmooth event (if any)
    /// is not applied, no sensor has captured, no controller has computed
    /// or applied; the readings are those of just before the instant (the
    /// held inputs, the last measurements). Reaching again before
    /// [`ControlLoop::process`] is [`SimulationError::InstantPending`].
    #[inline]
    pub fn reach(&mut self) -> Result<StepOutcome, ControlError> {
        if self.actions_pending || self.plant.instant_pending() {
            return Err(SimulationError::InstantPending {
                t: self.plant.time(),
            }
            .into());
        }
        if self.next_change < f64::INFINITY {
            self.apply_changes_within_step()?;
        }
        let outcome = self.plant.reach()?;
        if let StepOutcome::Advanced { .. } = outcome {
            self.actions_pending = true;
        }
        Ok(outcome)
    }

    /// Processes the instant reached by [`ControlLoop::reach`] in the order
    /// of docs/how-a-step-proceeds.md: the plant's own events first
    /// ([`Simulation::process`]: impact law, new mode), then the sensors'
    /// captures and deliveries, the observers, the controllers and their
    /// actuators. Returns whether an instant was pending; without one it
    /// does nothing.
    #[inline]
    pub fn process(&mut self) -> Result<bool, ControlError> {
        let plant = self.plant.process()?;
        if !self.actions_pending {
            return Ok(plant);
        }
        self.actions_pending = false;
        self.process_actions()?;
        Ok(true)
    }

    /// The sensor, observer and controller events of the instant, in
    /// order (the plant's own events have no action here).
    fn process_actions(&mut self) -> Result<(), ControlError> {
        for k in 0..self.plant.last_events().len() {
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
                Action::Observe(o) => {
                    let t = self.plant.time();
                    self.observe(o, t)?
                }
                Action::Compute(c) => {
                    let t = self.plant.time();
                    self.compute(c, t)?
                }
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
        Ok(())
    }

    /// True between [`ControlLoop::reach`] and [`ControlLoop::process`].
    pub fn instant_pending(&self) -> bool {
        self.actions_pending || self.plant.instant_pending()
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
        let computed = y.is_some();
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
        // A change the law scheduled inside the coming period (laws that
        // never schedule pay one test).
        if computed && c.schedules {
            self.schedule_change(k, t)?;
        }
        let c = &mut self.controllers[k];
        match &mut c.line {
            None => {
                // The plant holds g = external + Σ B u since the last
                // refresh: an input equal to the held one, bit for bit,
                // changes nothing (a sampled law that holds its gate between
                // switchings), unless a map G(t, q, v, u) acts on the system.
                let same = c
                    .applied
                    .iter()
                    .zip(&c.computed)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                let s = c.system;
                if same && self.matrix_inputs_only(s) {
                    return Ok(());
                }
                let c = &mut self.controllers[k];
                c.applied.copy_from_slice(&c.computed);
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

    /// Whether every controller acting on `s` maps its input through a
    /// matrix B (none through G(t, q, v, u), which changes with the state).
    fn matrix_inputs_only(&self, s: SystemId) -> bool {
        self.controllers
            .iter()
            .all(|c| c.system != s || matches!(c.input, InputMap::Matrix(_)))
    }

    /// g_s = external_s + Σ over the controllers acting on s of B u (or
    /// G(t, q, v, u)), handed to the plant.
    pub(super) fn refresh_input(&mut self, s: SystemId) -> Result<(), ControlError> {
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
            })?;
        // Relation inputs u_r = Σ_a P_a u_a of the interactions driven by an
        // actuator on s (none unless `drive_relation_input` was called).
        for k in 0..self.controllers.len() {
            let Some((i, _)) = &self.controllers[k].relation else {
                continue;
            };
            let i = *i;
            let first = self.controllers[..k]
                .iter()
                .any(|c| c.system == s && matches!(&c.relation, Some((j, _)) if *j == i));
            if self.controllers[k].system != s || first {
                continue;
            }
            let u = &mut self.relation_u;
            u.clear();
            for c in &self.controllers {
                let Some((j, p)) = &c.relation else { continue };
                if *j != i {
                    continue;
                }
                u.resize(p.nrows(), 0.0);
                for (r, ur) in u.iter_mut().enumerate() {
                    *ur += (0..p.ncols())
                        .map(|j| p[(r, j)] * c.applied[j])
                        .sum::<f64>();
                }
            }
            self.plant
                .set_input(i, &self.relation_u)
                .map_err(|e| match e {
                    SimulationError::BadArgument(reason) => ControlError::LawFailed {
                        t,
                        object: self.controllers[k].name.clone(),
                        reason,
                    },
                    e => e.into(),
                })?;
        }
        Ok(())
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
    ///
    /// [`ControlLoopBuilder::feed_sensor_from_input`]:
    ///     super::ControlLoopBuilder::feed_sensor_from_input
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

    /// The tick of the next instant at which a sensor, observer or
    /// controller of the loop acts (a capture, a delivery, an estimate, a
    /// computation, an application), when any is left.
    pub fn next_action_tick(&self) -> Option<i64> {
        self.actions
            .iter()
            .enumerate()
            .filter(|(_, a)| !matches!(a, Action::None))
            .filter_map(|(id, _)| self.plant.pending_tick(SourceId(id)))
            .min()
    }

    /// True when a sensor, observer or controller of the loop acted at the
    /// last instant.
    pub fn acted(&self) -> bool {
        self.plant
            .last_events()
            .iter()
            .any(|ev| !matches!(self.actions.get(ev.source.0), None | Some(Action::None)))
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
