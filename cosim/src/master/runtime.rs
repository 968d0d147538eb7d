//! The running co-simulation: [`Simulation`] for [`CoSimulation`].

use std::sync::Arc;

use nonsmooth::modelling::{InteractionId, Model, SystemId};
use nonsmooth::simulation::Simulation;
use nonsmooth::simulation::{
    Event, EventKind, ImportedState, SimulationError, SimulationState, SourceId, StateError,
    Statistics, StepOutcome, Strategy, TickGrid, TimeBase,
};

use super::{CoSimState, CoSimulation, Coupling, EndWatch, Slave, Src, Termination};
use crate::error::CosimError;
use crate::import::StepResult;

fn imported(e: CosimError) -> SimulationError {
    SimulationError::Imported(Box::new(e))
}

/// fmi2DoStep from the slave's point over `h` seconds ending at `t_next`,
/// retrying a discarded step as two halves from the saved state when the
/// FMU allows it (depth ≤ 10). `Some(τ)` when the FMU ended the simulation
/// at τ (fmi2Terminated) instead of reaching `t_next`.
fn step_with_retry(
    s: &mut Slave,
    h: f64,
    t_next: f64,
    depth: u32,
) -> Result<Option<f64>, CosimError> {
    let t = s.inst.time();
    if let Some(mut saved) = s.retry.take() {
        let r = s.inst.update_state(&mut saved);
        s.retry = Some(saved);
        r?;
    }
    match s.inst.do_step(h, t_next)? {
        StepResult::Done => Ok(None),
        StepResult::Terminated { time } => Ok(Some(time)),
        StepResult::Discarded => {
            let Some(saved) = s.retry.take().filter(|_| depth < 10) else {
                return Err(CosimError::Discarded {
                    fmu: s.inst.name().to_string(),
                    time: t,
                });
            };
            let r = s.inst.set_state(&saved);
            s.retry = Some(saved);
            r?;
            let mid = t + 0.5 * h;
            if let Some(tau) = step_with_retry(s, 0.5 * h, mid, depth + 1)? {
                return Ok(Some(tau));
            }
            step_with_retry(s, t_next - mid, t_next, depth + 1)
        }
    }
}

impl CoSimulation {
    /// Starts the step of every FMU whose communication point is the
    /// current tick (its inputs taken as documented in the module).
    fn start_steps(&mut self) -> Result<(), CosimError> {
        let now = self.tick;
        for i in 0..self.slaves.len() {
            if self.slaves[i].point != now || self.slaves[i].stepped {
                continue;
            }
            // Connected inputs.
            for c in 0..self.slaves[i].connected.len() {
                let src = self.slaves[i].connected[c].1;
                let x = match src {
                    Src::Fmu(src, k) => {
                        let from = &self.slaves[src];
                        if self.coupling == Coupling::GaussSeidel && src < i && from.stepped {
                            from.pending[k]
                        } else {
                            from.values[k]
                        }
                    }
                    Src::Native(read) => match &self.native {
                        Some(n) => read.value(n.sim.as_ref()),
                        None => f64::NAN,
                    },
                };
                let Slave {
                    inst, connected, ..
                } = &mut self.slaves[i];
                inst.write(&connected[c].0, x)?;
            }
            let s = &mut self.slaves[i];
            for k in 0..s.inputs.len() {
                s.inst.write(&s.inputs[k], s.g[s.n_out + k])?;
            }
            let next = (now + s.step_ticks).min(self.end_tick);
            let t = self.base.seconds(now);
            let t_next = self.base.seconds(next);
            let ended = step_with_retry(s, t_next - t, t_next, 0)?;
            for k in 0..s.reads.len() {
                s.pending[k] = s.inst.get_as_real(&s.reads[k])?;
            }
            s.next = next;
            s.stepped = true;
            self.steps += 1;
            if let Some(tau) = ended {
                self.end_at(i, tau, now, next);
            }
        }
        Ok(())
    }

    /// FMU `i`, stepping from tick `now` towards `next`, ended the
    /// simulation at τ: the run ends at the first grid point at or after
    /// τ (τ within 1e-9 relative of a point is on it), where the FMU's
    /// values at τ are published. The earliest of several terminations
    /// wins.
    fn end_at(&mut self, i: usize, tau: f64, now: i64, next: i64) {
        let tps = self.base.ticks_per_second() as f64;
        let from_t0 = tau * tps - self.t0_tick as f64;
        let g = self.grid_ticks as f64;
        let points = from_t0 / g;
        let k = if (points - points.round()).abs() <= 1e-9 * points.abs().max(1.0) {
            points.round()
        } else {
            points.ceil()
        };
        let tick = (self.t0_tick + (k as i64) * self.grid_ticks).clamp(now, next);
        self.slaves[i].next = tick;
        if tick < self.end_tick {
            self.end_tick = tick;
            let t = Termination {
                fmu: self.slaves[i].inst.name().to_string(),
                time: tau,
                end: self.base.seconds(tick),
            };
            self.watch.set(Some(t.clone()));
            self.ended = Some(t);
        }
    }

    /// The FMU that ended the simulation before its final time, if one
    /// did (fmi2Terminated).
    pub fn ended(&self) -> Option<&Termination> {
        self.ended.as_ref()
    }

    /// A handle on [`CoSimulation::ended`] that stays readable after the
    /// master is handed to a control loop.
    pub fn end_watch(&self) -> EndWatch {
        self.watch.clone()
    }

    fn publish(&mut self, i: usize) {
        let s = &mut self.slaves[i];
        std::mem::swap(&mut s.values, &mut s.pending);
        s.pending.copy_from_slice(&s.values);
        s.q[..s.n_out].copy_from_slice(&s.values[..s.n_out]);
        s.point = s.next;
        s.stepped = false;
    }

    /// Holds the native inputs driven by connections (from the FMUs'
    /// published outputs, added to what the loop holds).
    pub(super) fn hold_native_inputs(&mut self) -> Result<(), SimulationError> {
        let slaves = &self.slaves;
        match &mut self.native {
            Some(n) if !n.targets.is_empty() => {
                n.push_connected(&|s: usize, k: usize| slaves[s].values[k])
            }
            _ => Ok(()),
        }
    }

    /// The FMU slave of a system of the model (none for a native system).
    fn slave_of(&self, s: SystemId) -> Option<usize> {
        s.0.checked_sub(self.n_native)
            .filter(|&i| i < self.slaves.len())
    }

    /// The ticks of the master's grid (the gcd of the FMU steps; the
    /// native step h when there is a native model).
    pub fn grid_ticks(&self) -> i64 {
        self.grid_ticks
    }

    /// The published value of a variable read from an FMU (an exposed
    /// output or the source of a connection), by FMU and variable name.
    pub fn value(&self, fmu: &str, variable: &str) -> Option<f64> {
        let s = self.slaves.iter().find(|s| s.inst.name() == fmu)?;
        let k = s.reads.iter().position(|v| v.name == variable)?;
        Some(s.values[k])
    }
}

impl Simulation for CoSimulation {
    fn strategy(&self) -> Strategy {
        // The FMUs integrate themselves; the master steps on its grid of
        // communication points, as a time-stepping simulation does.
        Strategy::TimeStepping
    }

    fn model(&self) -> &Arc<Model> {
        &self.model
    }

    fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError> {
        let grid = TickGrid {
            base: self.base,
            t0_tick: self.t0_tick,
            step_ticks: self.grid_ticks,
            step: self.base.seconds(self.grid_ticks) - self.base.seconds(0),
        };
        let id = self
            .events
            .add_on_grid(&grid, self.tick, kind, offset, period, name)?;
        self.names.push(name.to_string());
        self.slave_of_source.push(None);
        Ok(id)
    }

    fn step(&mut self) -> Result<StepOutcome, SimulationError> {
        if self.tick >= self.end_tick {
            return Ok(StepOutcome::Finished);
        }
        // Events still due at the current instant (those at t0 on the first
        // call) come first: the FMUs step only once the loop has acted at
        // their communication point.
        if self.events.next_tick().is_some_and(|t| t > self.tick) {
            self.start_steps().map_err(imported)?;
        }
        let mut instant = std::mem::take(&mut self.instant);
        let t = if self.ended.is_some() && self.events.next_tick().is_none_or(|n| n > self.end_tick)
        {
            // An FMU ended the run between two instants: its last instant
            // carries no event of the schedule.
            instant.clear();
            Some(self.end_tick).filter(|&e| e > self.tick)
        } else {
            self.events.pop_instant(&mut instant)
        };
        let Some(t) = t.filter(|&t| t <= self.end_tick) else {
            self.instant = instant;
            return Ok(StepOutcome::Finished);
        };
        self.tick = t;
        self.output = false;
        // The native step ending at t, with the input held before t.
        if let Some(n) = &mut self.native {
            if let Err(e) = n.advance_to(t) {
                self.instant = instant;
                return Err(e);
            }
        }
        let mut published = false;
        for ev in &instant {
            match ev.kind {
                EventKind::Communication => {
                    if let Some(Some(i)) = self.slave_of_source.get(ev.source.0) {
                        let i = *i;
                        self.publish(i);
                        published = true;
                    }
                }
                EventKind::Output => self.output = true,
                _ => {}
            }
        }
        // The shortened last step of an FMU whose step does not divide the
        // run ends at t_end: publish it there.
        if t == self.end_tick {
            for i in 0..self.slaves.len() {
                if self.slaves[i].stepped && self.slaves[i].next == t {
                    self.publish(i);
                    published = true;
                }
            }
            self.output = true;
        }
        self.instant = instant;
        if published {
            self.hold_native_inputs()?;
        }
        Ok(StepOutcome::Advanced {
            tick: t,
            t: self.base.seconds(t),
        })
    }

    fn last_events(&self) -> &[Event] {
        &self.instant
    }

    fn source_name(&self, id: SourceId) -> &str {
        self.names.get(id.0).map(String::as_str).unwrap_or("?")
    }

    fn is_output_instant(&self) -> bool {
        self.output
    }

    fn grid(&self) -> Option<(i64, i64)> {
        Some((self.grid_ticks, self.t0_tick))
    }

    fn tick(&self) -> (i64, TimeBase) {
        (self.tick, self.base)
    }

    fn time(&self) -> f64 {
        self.base.seconds(self.tick)
    }

    fn end_tick(&self) -> i64 {
        self.end_tick
    }

    fn q(&self, s: SystemId) -> &[f64] {
        match (self.slave_of(s), &self.native) {
            (Some(i), _) => &self.slaves[i].q,
            (None, Some(n)) => n.sim.q(s),
            (None, None) => &self.empty,
        }
    }

    fn v(&self, s: SystemId) -> &[f64] {
        match (self.slave_of(s), &self.native) {
            (None, Some(n)) => n.sim.v(s),
            _ => &self.empty,
        }
    }

    fn y(&self, i: InteractionId) -> &[f64] {
        self.native.as_ref().map_or(&self.empty, |n| n.sim.y(i))
    }

    fn ydot(&self, i: InteractionId) -> &[f64] {
        self.native.as_ref().map_or(&self.empty, |n| n.sim.ydot(i))
    }

    fn lambda(&self, i: InteractionId) -> &[f64] {
        self.native
            .as_ref()
            .map_or(&self.empty, |n| n.sim.lambda(i))
    }

    fn contact_status(&self, i: InteractionId) -> &[f64] {
        self.native
            .as_ref()
            .map_or(&self.empty, |n| n.sim.contact_status(i))
    }

    fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError> {
        if self.slave_of(s).is_none() {
            let slaves = &self.slaves;
            let Some(n) = self.native.as_mut().filter(|n| s.0 < n.n_systems) else {
                return Err(SimulationError::BadArgument(format!("no system {}", s.0)));
            };
            if g.len() != n.g_loop[s.0].len() {
                return Err(SimulationError::BadArgument(format!(
                    "input of size {} for native system {} of size {}",
                    g.len(),
                    s.0,
                    n.g_loop[s.0].len()
                )));
            }
            n.g_loop[s.0].copy_from_slice(g);
            return n.push_system(s, &|i: usize, k: usize| slaves[i].values[k]);
        }
        let i = s.0 - self.n_native;
        let sl = &mut self.slaves[i];
        if g.len() != sl.g.len() {
            return Err(SimulationError::BadArgument(format!(
                "FMU '{}': input of size {} for a system of size {}",
                sl.inst.name(),
                g.len(),
                sl.g.len()
            )));
        }
        if g[..sl.n_out].iter().any(|&x| x != 0.0) {
            return Err(SimulationError::BadArgument(format!(
                "FMU '{}': an input acts on an output entry (rows 0..{} of B must be zero)",
                sl.inst.name(),
                sl.n_out
            )));
        }
        sl.g.copy_from_slice(g);
        let n_out = sl.n_out;
        sl.q[n_out..].copy_from_slice(&g[n_out..]);
        Ok(())
    }

    fn system_input(&self, s: SystemId) -> &[f64] {
        match (self.slave_of(s), &self.native) {
            (Some(i), _) => &self.slaves[i].g,
            (None, Some(n)) => n.sim.system_input(s),
            (None, None) => &self.empty,
        }
    }

    fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError> {
        let slaves = &self.slaves;
        let Some(n) = self.native.as_mut().filter(|n| i.0 < n.u_loop.len()) else {
            return Err(SimulationError::Unsupported(
                "the co-simulation has no such interaction (FMUs have none)".into(),
            ));
        };
        if u.len() != n.u_loop[i.0].len() {
            return Err(SimulationError::BadArgument(format!(
                "input of size {} for a relation taking {}",
                u.len(),
                n.u_loop[i.0].len()
            )));
        }
        n.u_loop[i.0].copy_from_slice(u);
        n.push_relation(i, &|s: usize, k: usize| slaves[s].values[k])
    }

    fn relation_input(&self, i: InteractionId) -> &[f64] {
        self.native
            .as_ref()
            .map_or(&self.empty, |n| n.sim.relation_input(i))
    }

    fn statistics(&self) -> Statistics {
        Statistics {
            steps: self.steps,
            ..Statistics::default()
        }
    }

    fn save_state(&self) -> Result<SimulationState, StateError> {
        Err(StateError::Unsupported(
            "a co-simulation asks its FMUs for their states: save it with save_state_mut \
             (ControlLoop::save_state_mut) or CoSimulation::save"
                .into(),
        ))
    }

    /// The whole co-simulation ([`CoSimulation::save`]: every FMU's state
    /// inside the FMU, the native model's, the master's) as an
    /// [`ImportedState`], in memory only.
    fn save_state_mut(&mut self) -> Result<SimulationState, StateError> {
        let saved = self
            .save()
            .map_err(|e| StateError::Unsupported(e.to_string()))?;
        Ok(SimulationState::Imported(ImportedState::new(
            self.tick,
            self.base.seconds(self.tick),
            Arc::new(saved),
        )))
    }

    /// Puts back a state taken by `save_state_mut` from this
    /// co-simulation ([`CoSimulation::restore`]).
    fn restore_state(&mut self, state: &SimulationState) -> Result<(), StateError> {
        let SimulationState::Imported(s) = state else {
            return Err(StateError::Mismatch(
                "a native simulation's state cannot be restored into a co-simulation".into(),
            ));
        };
        let Some(saved) = s.payload().downcast_ref::<CoSimState>() else {
            return Err(StateError::Mismatch(
                "the state of another kind of imported simulation".into(),
            ));
        };
        self.restore(saved)
            .map_err(|e| StateError::Mismatch(e.to_string()))
    }
}
