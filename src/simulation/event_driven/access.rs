//! The public accessors and inputs of [`EventDriven`]: time and clock,
//! events, state, multipliers, event sources and control inputs.

use std::sync::Arc;

use super::{EventDriven, EventDrivenSettings, EventDrivenStatistics, Transition};
use crate::modelling::model::{InteractionId, Model, SystemId};
use crate::simulation::clock::TimeBase;
use crate::simulation::error::SimulationError;
use crate::simulation::events::{Event, EventKind, SourceId};
use crate::simulation::time_stepping::{check_system_input, Statistics};

impl EventDriven {
    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The settings.
    pub fn settings(&self) -> &EventDrivenSettings {
        &self.settings
    }

    /// The current instant in seconds: a tick of the clock, or the exact
    /// time of a located nonsmooth event.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The last tick at or before the current instant, and the time base.
    pub fn tick(&self) -> (i64, TimeBase) {
        (self.tick, self.base)
    }

    /// True when the current instant is a tick of the clock (not a located
    /// nonsmooth event between ticks).
    pub fn is_on_tick(&self) -> bool {
        self.base.seconds(self.tick) == self.t
    }

    /// The last instant the simulation reaches (t_end, in ticks).
    pub fn end_tick(&self) -> i64 {
        self.end_tick
    }

    /// Events processed at the last instant, in order. A nonsmooth event
    /// carries the last tick at or before it; its exact time is [`Self::time`].
    pub fn last_events(&self) -> &[Event] {
        &self.instant
    }

    /// What the nonsmooth event of the last instant did (empty when it had none).
    pub fn last_transitions(&self) -> &[Transition] {
        if self.instant.iter().any(|e| e.kind == EventKind::NonSmooth) {
            &self.transitions
        } else {
            &[]
        }
    }

    /// True when the last instant had an output event (record a row).
    pub fn is_output_instant(&self) -> bool {
        self.instant.iter().any(|e| e.kind == EventKind::Output)
    }

    /// The tick of the next occurrence of an event source (`None` once it
    /// has none left, or for an unknown source).
    pub fn pending_tick(&self, id: SourceId) -> Option<i64> {
        [(&self.hard, &self.hard_ids), (&self.soft, &self.soft_ids)]
            .into_iter()
            .find_map(|(manager, ids)| {
                let local = ids.iter().position(|&g| g == id.0)?;
                Some(manager.pending_tick(SourceId(local)))
            })
            .flatten()
    }

    /// Name of an event source: `output`, `nonsmooth`, `end`, or the name
    /// given to [`Self::add_event_source`].
    pub fn source_name(&self, id: SourceId) -> &str {
        self.source_names.get(id.0).map_or("?", |s| s.as_str())
    }

    /// Counters in the form time-stepping reports them: `steps` are the
    /// integrator's accepted steps, `solves` the event LCPs.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            steps: self.ig.stats.accepted,
            solves: self.problems.solves,
            solver_iterations: self.problems.iterations,
            newton_iterations: self.ig.stats.newton_iterations,
        }
    }

    /// Counters of the event-driven run.
    pub fn event_statistics(&self) -> EventDrivenStatistics {
        EventDrivenStatistics {
            integrator: self.ig.stats,
            rhs_evaluations: self.dynamics.evaluations,
            ..self.ev_stats
        }
    }

    fn system_block(&self, s: SystemId) -> (usize, usize, bool) {
        let b = &self.dynamics.sys[s.0];
        (b.off, b.n, b.lagrangian)
    }

    /// Position q of a Lagrangian system, or state x of a first-order one.
    pub fn q(&self, s: SystemId) -> &[f64] {
        let (o, n, _) = self.system_block(s);
        &self.xc[o..o + n]
    }

    /// State x of a first-order system (same as [`Self::q`]).
    pub fn x(&self, s: SystemId) -> &[f64] {
        self.q(s)
    }

    /// Velocity v of a Lagrangian system (empty for first-order systems).
    pub fn v(&self, s: SystemId) -> &[f64] {
        let (o, n, lag) = self.system_block(s);
        if lag {
            &self.xc[o + n..o + 2 * n]
        } else {
            &[]
        }
    }

    fn rows_of(&self, i: InteractionId) -> std::ops::Range<usize> {
        let w = &self.dynamics.inters[i.0];
        w.row0..w.row0 + w.m
    }

    /// Output y of an interaction at the current instant.
    pub fn y(&self, i: InteractionId) -> &[f64] {
        &self.y[self.rows_of(i)]
    }

    /// ẏ of a Lagrangian interaction (zero for first-order ones).
    pub fn ydot(&self, i: InteractionId) -> &[f64] {
        &self.ydot[self.rows_of(i)]
    }

    /// λ of an interaction at the current instant: the contact force of a
    /// persistent contact (zero for an open one), the multiplier of a
    /// first-order complementarity row. Impulses are [`Self::impulse`].
    pub fn lambda(&self, i: InteractionId) -> &[f64] {
        &self.lam[self.rows_of(i)]
    }

    /// Impulse P of the impact at the current instant (zero elsewhere).
    pub fn impulse(&self, i: InteractionId) -> &[f64] {
        &self.impulse[self.rows_of(i)]
    }

    /// True when the interaction is in persistent contact (Lagrangian) or
    /// has active rows (first order).
    pub fn is_active(&self, i: InteractionId) -> bool {
        self.dynamics.active[self.rows_of(i)].iter().any(|&a| a)
    }

    /// Registers an event source on the simulation's clock: occurrences at
    /// ticks `offset + k·period` (k ≥ 0; once when `period` is `None`). Any
    /// tick is allowed: the integrator stops exactly at every instant of a
    /// sensor, observer or actuator source (output sources are served from
    /// the dense output). Instants must not be before the current one.
    pub fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError> {
        if offset < self.tick || self.base.seconds(offset) < self.t {
            return Err(SimulationError::BadArgument(format!(
                "event '{name}': first instant {} s is before the current time {} s",
                self.base.seconds(offset),
                self.t
            )));
        }
        let global = self.source_names.len();
        let (manager, ids) = if kind == EventKind::Output {
            (&mut self.soft, &mut self.soft_ids)
        } else {
            (&mut self.hard, &mut self.hard_ids)
        };
        let local = match period {
            Some(p) => manager.add_periodic(kind, offset, p)?,
            None => manager.add_once(kind, offset),
        };
        debug_assert_eq!(local.0, ids.len());
        ids.push(global);
        self.source_names.push(name.to_string());
        // The integrator may have stepped past the new instant.
        if kind != EventKind::Output && self.ig.t > self.base.seconds(offset) {
            self.restart()?;
        }
        Ok(SourceId(global))
    }

    /// Sets the control input g of a system, held from now until changed:
    /// a Lagrangian system gets M v̇ = F + g + Hᵀλ, a first-order one
    /// ẋ = f + g + r. g has the system's dimension.
    pub fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError> {
        let b = self
            .dynamics
            .sys
            .get_mut(s.0)
            .ok_or_else(|| SimulationError::BadArgument(format!("no system {}", s.0)))?;
        check_system_input(&b.name, b.control.len(), g)?;
        if b.control == g {
            return Ok(());
        }
        b.control.copy_from_slice(g);
        b.has_control = g.iter().any(|&x| x != 0.0);
        self.input_changed()
    }

    /// The control input g of a system currently held.
    pub fn system_input(&self, s: SystemId) -> &[f64] {
        &self.dynamics.sys[s.0].control
    }

    /// The control input u of a relation currently held.
    pub fn relation_input(&self, i: InteractionId) -> &[f64] {
        &self.dynamics.inters[i.0].u
    }

    /// Sets the control input u of a first-order linear relation (held
    /// until changed).
    pub fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError> {
        let w = self
            .dynamics
            .inters
            .get_mut(i.0)
            .ok_or_else(|| SimulationError::BadArgument(format!("no interaction {}", i.0)))?;
        if w.u.len() != u.len() {
            return Err(SimulationError::BadArgument(format!(
                "interaction '{}': input of size {} given, its relation takes {}",
                w.name,
                u.len(),
                w.u.len()
            )));
        }
        if w.u == u {
            return Ok(());
        }
        w.u.copy_from_slice(u);
        self.input_changed()
    }
}
