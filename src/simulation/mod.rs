//! Simulation: the exact event clock and the event manager. One-step
//! integrators and time-stepping build on them.

pub mod clock;
pub mod events;

pub use clock::{ClockError, Rational, TimeBase};
pub use events::{Event, EventKind, EventManager, SourceId};
