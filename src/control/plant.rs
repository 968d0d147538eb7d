//! What the control layer needs from the simulation of the plant: the same
//! surface for every integration strategy.

use std::sync::Arc;

use super::error::ControlError;
use crate::modelling::{InteractionId, Model, SystemId};
use crate::simulation::{
    Event, EventDriven, EventKind, SimulationError, SourceId, Statistics, StepOutcome, TimeBase,
    TimeStepping, TimeSteppingState, Transition,
};

/// The complete state of a plant simulation ([`Plant::save_state`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PlantState {
    /// A time-stepping simulation's state (its clock, q, v, held inputs,
    /// the interactions' y, λ and warm starts, the counters).
    TimeStepping(TimeSteppingState),
}

impl PlantState {
    /// The instant of the state, in ticks.
    pub fn tick(&self) -> i64 {
        match self {
            PlantState::TimeStepping(s) => s.tick(),
        }
    }

    /// The instant of the state, in seconds.
    pub fn time(&self) -> f64 {
        match self {
            PlantState::TimeStepping(s) => s.time(),
        }
    }
}

fn no_state(what: &str) -> ControlError {
    ControlError::Unsupported {
        object: "plant".into(),
        reason: format!(
            "an event-driven plant cannot {what} its state (run the loop on a time-stepping plant)"
        ),
    }
}

/// A plant simulation driven by a control loop: it owns the plant's state,
/// schedules event sources on its exact clock and reports the events of each
/// instant; the loop reads the state and sets held inputs.
pub trait Plant: Send {
    /// Registers an event source (ticks of the time base of [`Plant::tick`]); see
    /// [`TimeStepping::add_event_source`].
    fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError>;
    /// Advances to the next instant and processes its integration events.
    fn step(&mut self) -> Result<StepOutcome, SimulationError>;
    /// Events of the last instant, in the documented order.
    fn last_events(&self) -> &[Event];
    /// The name of an event source.
    fn source_name(&self, id: SourceId) -> &str;
    /// The current instant in ticks and the time base.
    fn tick(&self) -> (i64, TimeBase);
    /// The current time in seconds.
    fn time(&self) -> f64;
    /// The last instant, in ticks.
    fn end_tick(&self) -> i64;
    /// The model.
    fn model(&self) -> &Arc<Model>;
    /// q of a Lagrangian system, x of a first-order one.
    fn q(&self, s: SystemId) -> &[f64];
    /// v of a Lagrangian system (empty for first-order systems).
    fn v(&self, s: SystemId) -> &[f64];
    /// Sets the input g held on a system (M v̇ = F + g or ẋ = f + g).
    fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError>;
    /// The input g held on a system.
    fn system_input(&self, s: SystemId) -> &[f64];
    /// Sets the input u of a relation (held until changed).
    fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError>;
    /// The input u held on a relation.
    fn relation_input(&self, i: InteractionId) -> &[f64];
    /// Output y of an interaction.
    fn y(&self, i: InteractionId) -> &[f64];
    /// Multiplier λ of an interaction (the impulse for impact laws).
    fn lambda(&self, i: InteractionId) -> &[f64];
    /// True when the last instant had an output event.
    fn is_output_instant(&self) -> bool;
    /// Counters of the run so far.
    fn statistics(&self) -> Statistics;
    /// The nonsmooth transitions (impacts, take-offs, mode switches) of the
    /// last instant (event-driven plants; none for time-stepping).
    fn transitions(&self) -> &[Transition] {
        &[]
    }
    /// The time-stepping simulation, when the plant is one (for records of
    /// interactions and statistics).
    fn as_time_stepping(&self) -> Option<&TimeStepping> {
        None
    }
    /// The time-stepping simulation, mutable, when the plant is one (for
    /// [`TimeStepping::step_quiet`]).
    fn as_time_stepping_mut(&mut self) -> Option<&mut TimeStepping> {
        None
    }
    /// The event-driven simulation, when the plant is one.
    fn as_event_driven(&self) -> Option<&EventDriven> {
        None
    }
    /// The complete state: everything a later step reads before writing
    /// it, including the event schedule (see [`TimeSteppingState`]).
    /// Plants that cannot save their state (event-driven ones) say so with
    /// [`ControlError::Unsupported`].
    fn save_state(&self) -> Result<PlantState, ControlError>;
    /// As [`Plant::save_state`], into an existing state (reusing its
    /// storage when it was taken from this plant).
    fn save_state_into(&self, into: &mut PlantState) -> Result<(), ControlError> {
        *into = self.save_state()?;
        Ok(())
    }
    /// Puts back a state taken from this plant, or from a plant of the same
    /// model structure on the same time base; nothing is changed when it
    /// does not fit ([`ControlError::State`]).
    fn restore_state(&mut self, state: &PlantState) -> Result<(), ControlError>;
}

/// The methods both strategies provide under the same names: `Plant`'s
/// delegate to them.
macro_rules! delegate_plant {
    ($t:ident) => {
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
        fn tick(&self) -> (i64, TimeBase) {
            $t::tick(self)
        }
        fn time(&self) -> f64 {
            $t::time(self)
        }
        fn end_tick(&self) -> i64 {
            $t::end_tick(self)
        }
        fn model(&self) -> &Arc<Model> {
            $t::model(self)
        }
        fn q(&self, s: SystemId) -> &[f64] {
            $t::q(self, s)
        }
        fn v(&self, s: SystemId) -> &[f64] {
            $t::v(self, s)
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
        fn y(&self, i: InteractionId) -> &[f64] {
            $t::y(self, i)
        }
        fn lambda(&self, i: InteractionId) -> &[f64] {
            $t::lambda(self, i)
        }
        fn is_output_instant(&self) -> bool {
            $t::is_output_instant(self)
        }
        fn statistics(&self) -> Statistics {
            $t::statistics(self)
        }
    };
}

impl Plant for TimeStepping {
    delegate_plant!(TimeStepping);
    fn as_time_stepping(&self) -> Option<&TimeStepping> {
        Some(self)
    }
    fn as_time_stepping_mut(&mut self) -> Option<&mut TimeStepping> {
        Some(self)
    }
    fn save_state(&self) -> Result<PlantState, ControlError> {
        Ok(PlantState::TimeStepping(TimeStepping::save_state(self)))
    }
    fn save_state_into(&self, into: &mut PlantState) -> Result<(), ControlError> {
        match into {
            PlantState::TimeStepping(s) => TimeStepping::save_state_into(self, s),
        }
        Ok(())
    }
    fn restore_state(&mut self, state: &PlantState) -> Result<(), ControlError> {
        match state {
            PlantState::TimeStepping(s) => {
                TimeStepping::restore_state(self, s).map_err(|e| ControlError::State {
                    object: "plant".into(),
                    reason: e.to_string(),
                })
            }
        }
    }
}

impl Plant for EventDriven {
    delegate_plant!(EventDriven);
    fn transitions(&self) -> &[Transition] {
        EventDriven::last_transitions(self)
    }
    fn as_event_driven(&self) -> Option<&EventDriven> {
        Some(self)
    }
    fn save_state(&self) -> Result<PlantState, ControlError> {
        Err(no_state("save"))
    }
    fn restore_state(&mut self, _: &PlantState) -> Result<(), ControlError> {
        Err(no_state("restore"))
    }
}
