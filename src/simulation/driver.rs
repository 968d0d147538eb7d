//! One surface over a running simulation of either strategy: [`Simulation`].
//!
//! The model ([`Model`]) is immutable and shared; a [`Simulation`] owns the
//! state that evolves (the clock and its event schedule, q, v or x, the
//! interactions' y and λ, the held inputs) and advances it instant by
//! instant. Everything above this layer — the control loop, the scenario
//! layer, the command line, the FMU runtime — drives a simulation through
//! this trait only, so a new strategy (or an imported FMU) is one more
//! implementation, not one more code path.
//!
//! A step ([`Simulation::step`]) goes to the next instant of the exact
//! clock at which an event is due and processes the simulation's own events
//! there (docs/how-a-step-proceeds.md); [`Simulation::last_events`] lists
//! them in order, together with the events of the sources others registered
//! with [`Simulation::add_event_source`], which the registering layer then
//! processes.
//!
//! **Two phases.** A step is [`Simulation::reach`] followed by
//! [`Simulation::process`]. `reach` advances to the next instant and stops
//! at its left limit: the state is x(t)⁻, the events of the instant are
//! listed in [`Simulation::last_events`] but not applied, and
//! [`Simulation::instant_pending`] is true. `process` applies the
//! simulation's own events of the instant (the impact law, the new contact,
//! complementarity or relay mode) in the order of
//! docs/how-a-step-proceeds.md, after which the state is x(t)⁺ and
//! [`Simulation::transitions`] says what changed. A layer that processes
//! events of its own at the instant (the control loop: sensors, observers,
//! actuators) does so after `process`. Between the two phases the state
//! can be read, saved and restored (the saved state says the instant is
//! pending); reaching again before processing is
//! [`SimulationError::InstantPending`]. The FMI 3.0 export uses the split to
//! show a host the left limit of an event (`fmi3DoStep` returns there) and
//! apply it in `fmi3UpdateDiscreteStates`.
//!
//! Which part of an instant each strategy leaves to `process`:
//! event-driven: everything a located nonsmooth event does (a scheduled
//! instant leaves nothing; its pending flag is only cleared); time-stepping:
//! nothing — the instant is the end of an integration step, whose one-step
//! problem (the impact law of Moreau–Jean) is part of reaching it, so
//! `reach` is `step` and the default `process` does nothing. Imported FMUs
//! and rigid worlds use the same defaults.

use std::sync::Arc;

use super::clock::TimeBase;
use super::error::SimulationError;
use super::event_driven::{
    EventDriven, EventDrivenSettings, EventDrivenState, EventDrivenStatistics, Transition,
};
use super::events::{Event, EventKind, SourceId};
use super::imported_state::ImportedState;
use super::rigid_state::RigidState;
use super::strategy::Strategy;
use super::time_stepping::{
    StateError, Statistics, StepOutcome, TimeStepping, TimeSteppingSettings, TimeSteppingState,
};
use crate::modelling::{InteractionId, Model, SystemId};

/// The complete state of a [`Simulation`]: everything a later step reads
/// before writing it, including the event schedule.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// Both variants own their data on the heap; the enum itself (about 1 kB
// for the event-driven one) is held in a saved state and rarely moved, and
// a box would cost an allocation in every `save_state_into`.
#[allow(clippy::large_enum_variant)]
pub enum SimulationState {
    /// A time-stepping simulation's state (its clock, q, v, held inputs,
    /// the interactions' y, λ and warm starts, the counters).
    TimeStepping(TimeSteppingState),
    /// An event-driven simulation's state (its clock at a float instant,
    /// x, the mode, held inputs, the integrator inside its step, the
    /// guards, the counters).
    EventDriven(EventDrivenState),
    /// The state of a simulation implemented outside this crate (the
    /// co-simulation master), in memory only.
    Imported(ImportedState),
    /// A rigid-body run's state (its clock, the bodies, their held inputs,
    /// the warm start, the contact detector's records, the counters).
    Rigid(Box<RigidState>),
}

impl SimulationState {
    /// The instant of the state, in ticks.
    pub fn tick(&self) -> i64 {
        match self {
            SimulationState::TimeStepping(s) => s.tick(),
            SimulationState::EventDriven(s) => s.tick(),
            SimulationState::Imported(s) => s.tick(),
            SimulationState::Rigid(s) => s.tick(),
        }
    }

    /// The instant of the state, in seconds.
    pub fn time(&self) -> f64 {
        match self {
            SimulationState::TimeStepping(s) => s.time(),
            SimulationState::EventDriven(s) => s.time(),
            SimulationState::Imported(s) => s.time(),
            SimulationState::Rigid(s) => s.time(),
        }
    }

    /// Appends the state as bytes to `out`: the strategy's own format
    /// (`NSTS…` for time-stepping, `NSED…` for event-driven, `NSRB…` for
    /// rigid bodies).
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        match self {
            SimulationState::TimeStepping(s) => s.write_bytes(out),
            SimulationState::EventDriven(s) => s.write_bytes(out),
            SimulationState::Imported(s) => s.write_bytes(out),
            SimulationState::Rigid(s) => s.write_bytes(out),
        }
    }

    /// The state as bytes (see [`SimulationState::write_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    /// Reads a state written by [`SimulationState::to_bytes`], of either
    /// strategy (told apart by the magic).
    pub fn from_bytes(bytes: &[u8]) -> Result<SimulationState, StateError> {
        match bytes.get(..4) {
            Some(b"NSED") => EventDrivenState::from_bytes(bytes).map(SimulationState::EventDriven),
            Some(b"NSRB") => {
                RigidState::from_bytes(bytes).map(|s| SimulationState::Rigid(Box::new(s)))
            }
            Some(b"NSIM") => Err(StateError::Unsupported(
                "the state of an imported simulation (a co-simulation of FMUs) lives in memory, \
                 inside its FMUs: it cannot be read from bytes"
                    .into(),
            )),
            _ => TimeSteppingState::from_bytes(bytes).map(SimulationState::TimeStepping),
        }
    }
}

/// A running simulation of a model: its state, advanced on an exact clock.
///
/// Inputs are held: a value set with [`Simulation::set_system_input`] or
/// [`Simulation::set_input`] acts from the current instant until changed.
pub trait Simulation: Send {
    /// The strategy that integrates the model.
    fn strategy(&self) -> Strategy;
    /// The model.
    fn model(&self) -> &Arc<Model>;

    /// Registers an event source (ticks of the time base of
    /// [`Simulation::tick`]; `period` `None` for a single event); see
    /// [`TimeStepping::add_event_source`].
    fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError>;
    /// Advances to the next instant and processes its integration events
    /// ([`Simulation::reach`] then [`Simulation::process`]).
    fn step(&mut self) -> Result<StepOutcome, SimulationError>;
    /// Advances to the next instant and stops at its left limit, its own
    /// events listed but not applied (see the module documentation). The
    /// default processes the instant as a whole ([`Simulation::step`]):
    /// strategies with nothing to apply after reaching an instant.
    fn reach(&mut self) -> Result<StepOutcome, SimulationError> {
        self.step()
    }
    /// Applies the events of the instant reached by [`Simulation::reach`];
    /// returns whether an instant was pending. Without one it does nothing
    /// (a documented no-op, so calling it twice is harmless).
    fn process(&mut self) -> Result<bool, SimulationError> {
        Ok(false)
    }
    /// True between [`Simulation::reach`] and [`Simulation::process`].
    fn instant_pending(&self) -> bool {
        false
    }
    /// Events of the last instant, in the documented order.
    fn last_events(&self) -> &[Event];
    /// The nonsmooth transitions (impacts, take-offs, mode switches) of the
    /// last instant (event-driven simulations; none for time-stepping,
    /// which resolves them inside its steps).
    fn transitions(&self) -> &[Transition] {
        &[]
    }
    /// The name of an event source.
    fn source_name(&self, id: SourceId) -> &str;
    /// True when the last instant had an output event.
    fn is_output_instant(&self) -> bool;
    /// The instant of the next pending event in ticks, when the strategy
    /// knows it in advance (time-stepping; `None` otherwise or when none is
    /// left).
    fn next_event_tick(&self) -> Option<i64> {
        None
    }
    /// The integration grid (step, t₀) in ticks, for strategies with one.
    fn grid(&self) -> Option<(i64, i64)> {
        None
    }
    /// Takes the first part (t_n, τ] of the coming integration step with the
    /// inputs held now; the next [`Simulation::reach`] integrates the rest
    /// (τ, t_{n+1}] with the inputs held then (a split step,
    /// docs/how-a-step-proceeds.md). Only time-stepping on first-order
    /// Euler–Moreau systems supports it
    /// ([`TimeStepping::split_at`](crate::simulation::TimeStepping::split_at));
    /// other strategies refuse it.
    fn split_at(&mut self, tau: f64) -> Result<(), SimulationError> {
        Err(SimulationError::Unsupported(format!(
            "an input change at t = {tau} inside a step needs a time-stepping plant ({:?} has no split step)",
            self.strategy()
        )))
    }
    /// The tick of the next occurrence of an event source registered with
    /// [`Simulation::add_event_source`] (`None` once it has none left, or
    /// for an unknown source).
    fn pending_tick(&self, id: SourceId) -> Option<i64> {
        let _ = id;
        None
    }

    /// The current instant in ticks (for event-driven simulations: the last
    /// tick at or before it) and the time base.
    fn tick(&self) -> (i64, TimeBase);
    /// The current time in seconds.
    fn time(&self) -> f64;
    /// The last instant, in ticks.
    fn end_tick(&self) -> i64;
    /// The final time in seconds.
    fn t_end(&self) -> f64 {
        let (_, base) = self.tick();
        base.seconds(self.end_tick())
    }

    /// q of a Lagrangian system, x of a first-order one.
    fn q(&self, s: SystemId) -> &[f64];
    /// v of a Lagrangian system (empty for first-order systems).
    fn v(&self, s: SystemId) -> &[f64];
    /// Output y of an interaction.
    fn y(&self, i: InteractionId) -> &[f64];
    /// ẏ of an interaction.
    fn ydot(&self, i: InteractionId) -> &[f64];
    /// Multiplier λ of an interaction: the impulse of the step
    /// (time-stepping, impact laws) or the contact force / multiplier at the
    /// instant (event-driven).
    fn lambda(&self, i: InteractionId) -> &[f64];
    /// The status of a frictional contact after the last step, one value:
    /// 0 separated, 1 sticking, 2 sliding (empty for other interactions and
    /// strategies without frictional contacts).
    fn contact_status(&self, i: InteractionId) -> &[f64] {
        let _ = i;
        &[]
    }

    /// Sets the input g held on a system (M v̇ = F + g or ẋ = f + g).
    fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError>;
    /// The input g held on a system.
    fn system_input(&self, s: SystemId) -> &[f64];
    /// Sets the input u of a relation (held until changed).
    fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError>;
    /// The input u held on a relation.
    fn relation_input(&self, i: InteractionId) -> &[f64];

    /// Counters of the run so far.
    fn statistics(&self) -> Statistics;
    /// Counters of nonsmooth events (event-driven simulations).
    fn event_statistics(&self) -> Option<EventDrivenStatistics> {
        None
    }

    /// The complete state. A strategy that cannot save its state says so
    /// with [`StateError::Unsupported`].
    fn save_state(&self) -> Result<SimulationState, StateError>;
    /// As [`Simulation::save_state`], for simulations that need mutable
    /// access to save (an imported co-simulation asks its FMUs for their
    /// states); the same as `save_state` by default.
    fn save_state_mut(&mut self) -> Result<SimulationState, StateError> {
        self.save_state()
    }
    /// As [`Simulation::save_state`], into an existing state (reusing its
    /// storage when it was taken from this simulation).
    fn save_state_into(&self, into: &mut SimulationState) -> Result<(), StateError> {
        *into = self.save_state()?;
        Ok(())
    }
    /// Puts back a state taken from this simulation, or from one of the
    /// same model structure on the same time base; nothing is changed when
    /// it does not fit.
    fn restore_state(&mut self, state: &SimulationState) -> Result<(), StateError>;
}

/// Creates a simulation of `model` with the given strategy, its clock
/// fitted to the extra instants `times` (seconds: periods, offsets and
/// delays of the objects that will register event sources; see
/// [`TimeStepping::with_times`]).
pub fn simulate(
    strategy: Strategy,
    model: Arc<Model>,
    time_stepping: &TimeSteppingSettings,
    event_driven: &EventDrivenSettings,
    times: &[(&'static str, f64)],
) -> Result<Box<dyn Simulation>, SimulationError> {
    Ok(match strategy {
        Strategy::TimeStepping => Box::new(TimeStepping::with_times(
            model,
            time_stepping.clone(),
            times,
        )?),
        Strategy::EventDriven => {
            Box::new(EventDriven::with_times(model, event_driven.clone(), times)?)
        }
    })
}

/// The methods both strategies provide under the same names.
macro_rules! delegate {
    ($t:ident) => {
        fn model(&self) -> &Arc<Model> {
            $t::model(self)
        }
        fn add_event_source(
            &mut self,
            kind: EventKind,
            offset: i64,
            period: Option<i64>,
            name: &str,
        ) -> Result<SourceId, SimulationError> {
            $t::add_event_source(self, kind, offset, period, name)
        }
        fn step(&mut self) -> Result<StepOutcome, SimulationError> {
            $t::step(self)
        }
        fn last_events(&self) -> &[Event] {
            $t::last_events(self)
        }
        fn source_name(&self, id: SourceId) -> &str {
            $t::source_name(self, id)
        }
        fn is_output_instant(&self) -> bool {
            $t::is_output_instant(self)
        }
        fn tick(&self) -> (i64, TimeBase) {
            $t::tick(self)
        }
        fn time(&self) -> f64 {
            $t::time(self)
        }
        fn end_tick(&self) -> i64 {
            $t::end_tick(self)
        }
        fn q(&self, s: SystemId) -> &[f64] {
            $t::q(self, s)
        }
        fn v(&self, s: SystemId) -> &[f64] {
            $t::v(self, s)
        }
        fn y(&self, i: InteractionId) -> &[f64] {
            $t::y(self, i)
        }
        fn ydot(&self, i: InteractionId) -> &[f64] {
            $t::ydot(self, i)
        }
        fn lambda(&self, i: InteractionId) -> &[f64] {
            $t::lambda(self, i)
        }
        fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError> {
            $t::set_system_input(self, s, g)
        }
        fn system_input(&self, s: SystemId) -> &[f64] {
            $t::system_input(self, s)
        }
        fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError> {
            $t::set_input(self, i, u)
        }
        fn relation_input(&self, i: InteractionId) -> &[f64] {
            $t::relation_input(self, i)
        }
        fn statistics(&self) -> Statistics {
            $t::statistics(self)
        }
    };
}

impl Simulation for TimeStepping {
    delegate!(TimeStepping);
    fn contact_status(&self, i: InteractionId) -> &[f64] {
        TimeStepping::contact_status(self, i)
    }
    fn strategy(&self) -> Strategy {
        Strategy::TimeStepping
    }
    fn next_event_tick(&self) -> Option<i64> {
        TimeStepping::next_event_tick(self)
    }
    fn grid(&self) -> Option<(i64, i64)> {
        Some(self.step_ticks())
    }
    fn split_at(&mut self, tau: f64) -> Result<(), SimulationError> {
        TimeStepping::split_at(self, tau)
    }
    fn pending_tick(&self, id: SourceId) -> Option<i64> {
        TimeStepping::pending_tick(self, id)
    }
    fn t_end(&self) -> f64 {
        self.settings().t_end
    }
    fn save_state(&self) -> Result<SimulationState, StateError> {
        refuse_inside_split(self)?;
        Ok(SimulationState::TimeStepping(TimeStepping::save_state(
            self,
        )))
    }
    fn save_state_into(&self, into: &mut SimulationState) -> Result<(), StateError> {
        refuse_inside_split(self)?;
        match into {
            SimulationState::TimeStepping(s) => TimeStepping::save_state_into(self, s),
            other => *other = Simulation::save_state(self)?,
        }
        Ok(())
    }
    fn restore_state(&mut self, state: &SimulationState) -> Result<(), StateError> {
        match state {
            SimulationState::TimeStepping(s) => TimeStepping::restore_state(self, s),
            SimulationState::EventDriven(_) => Err(other_strategy("time-stepping", "event-driven")),
            SimulationState::Imported(_) => Err(other_strategy("time-stepping", "imported")),
            SimulationState::Rigid(_) => Err(other_strategy("time-stepping", "rigid-body")),
        }
    }
}

/// A state is taken at an instant of the grid, not inside a split step
/// (between [`TimeStepping::split_at`] and the step that ends it).
fn refuse_inside_split(sim: &TimeStepping) -> Result<(), StateError> {
    if sim.split_pending() {
        return Err(StateError::Unsupported(
            "the simulation is inside a split step: save its state at an instant of the grid"
                .into(),
        ));
    }
    Ok(())
}

fn other_strategy(this: &str, state: &str) -> StateError {
    StateError::Mismatch(format!(
        "a state of an {state} simulation cannot be restored into a {this} one"
    ))
}

impl Simulation for EventDriven {
    delegate!(EventDriven);
    fn reach(&mut self) -> Result<StepOutcome, SimulationError> {
        EventDriven::reach(self)
    }
    fn process(&mut self) -> Result<bool, SimulationError> {
        EventDriven::process(self)
    }
    fn instant_pending(&self) -> bool {
        EventDriven::instant_pending(self)
    }
    fn strategy(&self) -> Strategy {
        Strategy::EventDriven
    }
    fn transitions(&self) -> &[Transition] {
        EventDriven::last_transitions(self)
    }
    fn pending_tick(&self, id: SourceId) -> Option<i64> {
        EventDriven::pending_tick(self, id)
    }
    fn t_end(&self) -> f64 {
        self.settings().t_end
    }
    fn event_statistics(&self) -> Option<EventDrivenStatistics> {
        Some(EventDriven::event_statistics(self))
    }
    fn save_state(&self) -> Result<SimulationState, StateError> {
        Ok(SimulationState::EventDriven(EventDriven::save_state(self)))
    }
    fn restore_state(&mut self, state: &SimulationState) -> Result<(), StateError> {
        match state {
            SimulationState::EventDriven(s) => EventDriven::restore_state(self, s),
            SimulationState::TimeStepping(_) => {
                Err(other_strategy("event-driven", "time-stepping"))
            }
            SimulationState::Imported(_) => Err(other_strategy("event-driven", "imported")),
            SimulationState::Rigid(_) => Err(other_strategy("event-driven", "rigid-body")),
        }
    }
}
