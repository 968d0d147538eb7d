//! Simulation: the exact event clock, the event manager, time-stepping and
//! event-driven integration.

pub mod clock;
pub mod driver;
pub mod error;
pub mod event_driven;
pub mod events;
mod imported_state;
pub mod rigid_state;
pub(crate) mod state_bytes;
pub mod strategy;
pub mod time_stepping;

pub use clock::{ClockError, Rational, TimeBase};
pub use driver::{simulate, Simulation, SimulationState};
pub use error::SimulationError;
pub use event_driven::{
    EventDriven, EventDrivenSettings, EventDrivenState, EventDrivenStatistics, OdeMethod,
    Transition, TransitionKind,
};
pub use events::{Event, EventKind, EventManager, EventSchedule, SourceId, TickGrid};
pub use imported_state::ImportedState;
pub use rigid_state::RigidState;
pub use strategy::Strategy;
pub use time_stepping::{
    Assembly, FirstOrderScheme, LagrangianScheme, ProblemFamily, SchatzmanPaoliStart, StateError,
    Statistics, StepOutcome, TimeStepping, TimeSteppingSettings, TimeSteppingState,
};
