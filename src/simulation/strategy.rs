//! The two simulation strategies behind one type: [`Simulator`] runs a
//! [`TimeStepping`] or an [`EventDriven`] simulation with the same calls, so
//! the scenario loader, `nonsmooth run` and output code are written once.

use std::fmt;
use std::str::FromStr;

use super::clock::TimeBase;
use super::event_driven::{EventDriven, Transition};
use super::events::{Event, EventKind, SourceId};
use super::time_stepping::{SimulationError, Statistics, StepOutcome, TimeStepping};
use crate::modelling::model::{InteractionId, Model, SystemId};

/// Which strategy simulates a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Moreau–Jean / Euler–Moreau time-stepping on a fixed step.
    #[default]
    TimeStepping,
    /// Smooth integration between located nonsmooth events.
    EventDriven,
}

impl Strategy {
    /// `time-stepping` or `event-driven`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::TimeStepping => "time-stepping",
            Strategy::EventDriven => "event-driven",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "time-stepping" | "time_stepping" => Ok(Strategy::TimeStepping),
            "event-driven" | "event_driven" => Ok(Strategy::EventDriven),
            _ => Err(format!(
                "unknown strategy `{s}` (strategies: time-stepping, event-driven)"
            )),
        }
    }
}

/// Read access to the state of a simulation at its current instant.
pub trait StateView {
    /// The current instant in seconds.
    fn time(&self) -> f64;
    /// q of a Lagrangian system, x of a first-order one.
    fn q(&self, s: SystemId) -> &[f64];
    /// v of a Lagrangian system (empty for first-order systems).
    fn v(&self, s: SystemId) -> &[f64];
    /// x of a first-order system.
    fn x(&self, s: SystemId) -> &[f64];
    /// y of an interaction.
    fn y(&self, i: InteractionId) -> &[f64];
    /// λ of an interaction (see each strategy for its meaning).
    fn lambda(&self, i: InteractionId) -> &[f64];
}

macro_rules! state_view {
    ($t:ty) => {
        impl StateView for $t {
            fn time(&self) -> f64 {
                <$t>::time(self)
            }
            fn q(&self, s: SystemId) -> &[f64] {
                <$t>::q(self, s)
            }
            fn v(&self, s: SystemId) -> &[f64] {
                <$t>::v(self, s)
            }
            fn x(&self, s: SystemId) -> &[f64] {
                <$t>::x(self, s)
            }
            fn y(&self, i: InteractionId) -> &[f64] {
                <$t>::y(self, i)
            }
            fn lambda(&self, i: InteractionId) -> &[f64] {
                <$t>::lambda(self, i)
            }
        }
    };
}
state_view!(TimeStepping);
state_view!(EventDriven);
state_view!(Simulator);

/// A simulation of either strategy.
// One per run: the size difference between the variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Simulator {
    /// Time-stepping.
    TimeStepping(TimeStepping),
    /// Event-driven.
    EventDriven(EventDriven),
}

macro_rules! both {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Simulator::TimeStepping($s) => $e,
            Simulator::EventDriven($s) => $e,
        }
    };
}

impl Simulator {
    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        match self {
            Simulator::TimeStepping(_) => Strategy::TimeStepping,
            Simulator::EventDriven(_) => Strategy::EventDriven,
        }
    }

    /// Advances to the next instant with events.
    pub fn step(&mut self) -> Result<StepOutcome, SimulationError> {
        both!(self, s => s.step())
    }

    /// The model.
    pub fn model(&self) -> &std::sync::Arc<Model> {
        both!(self, s => s.model())
    }

    /// The current instant in seconds.
    pub fn time(&self) -> f64 {
        both!(self, s => s.time())
    }

    /// The current tick (for event-driven: the last tick at or before the
    /// instant) and the time base.
    pub fn tick(&self) -> (i64, TimeBase) {
        both!(self, s => s.tick())
    }

    /// The final tick.
    pub fn end_tick(&self) -> i64 {
        both!(self, s => s.end_tick())
    }

    /// Events of the last instant, in order.
    pub fn last_events(&self) -> &[Event] {
        both!(self, s => s.last_events())
    }

    /// What the nonsmooth event of the last instant did (event-driven only).
    pub fn last_transitions(&self) -> &[Transition] {
        match self {
            Simulator::TimeStepping(_) => &[],
            Simulator::EventDriven(s) => s.last_transitions(),
        }
    }

    /// True when the last instant had an output event.
    pub fn is_output_instant(&self) -> bool {
        both!(self, s => s.is_output_instant())
    }

    /// Name of an event source.
    pub fn source_name(&self, id: SourceId) -> &str {
        both!(self, s => s.source_name(id))
    }

    /// Counters of the run.
    pub fn statistics(&self) -> Statistics {
        both!(self, s => s.statistics())
    }

    /// q of a Lagrangian system, x of a first-order one.
    pub fn q(&self, id: SystemId) -> &[f64] {
        both!(self, s => s.q(id))
    }

    /// v of a Lagrangian system.
    pub fn v(&self, id: SystemId) -> &[f64] {
        both!(self, s => s.v(id))
    }

    /// x of a first-order system.
    pub fn x(&self, id: SystemId) -> &[f64] {
        both!(self, s => s.x(id))
    }

    /// y of an interaction.
    pub fn y(&self, i: InteractionId) -> &[f64] {
        both!(self, s => s.y(i))
    }

    /// ẏ of an interaction.
    pub fn ydot(&self, i: InteractionId) -> &[f64] {
        both!(self, s => s.ydot(i))
    }

    /// λ of an interaction: the impulse of the step (time-stepping, impact
    /// laws) or the contact force / multiplier at the instant (event-driven).
    pub fn lambda(&self, i: InteractionId) -> &[f64] {
        both!(self, s => s.lambda(i))
    }

    /// Registers an event source (see each strategy's `add_event_source`).
    pub fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError> {
        both!(self, s => s.add_event_source(kind, offset, period, name))
    }

    /// Sets a system's control input g (held until changed).
    pub fn set_system_input(&mut self, id: SystemId, g: &[f64]) -> Result<(), SimulationError> {
        both!(self, s => s.set_system_input(id, g))
    }

    /// Sets a first-order relation's input u (held until changed).
    pub fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError> {
        both!(self, s => s.set_input(i, u))
    }
}
