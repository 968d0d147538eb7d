//! Simulation: the exact event clock, the event manager and time-stepping.

pub mod clock;
pub mod events;
pub mod time_stepping;

pub use clock::{ClockError, Rational, TimeBase};
pub use events::{Event, EventKind, EventManager, EventSchedule, SourceId};
pub use time_stepping::{
    Assembly, FirstOrderScheme, ProblemFamily, SimulationError, StateError, Statistics,
    StepOutcome, TimeStepping, TimeSteppingSettings, TimeSteppingState,
};
