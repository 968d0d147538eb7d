//! The co-simulation master: several FMU instances coupled by connections
//! and stepped on the exact clock of the core crate, behind the one driver
//! trait [`nonsmooth::simulation::Simulation`], so that a
//! [`nonsmooth::control::ControlLoop`] closes sensors, observers and
//! controllers around FMUs exactly as around a native model.
//!
//! **The FMUs as systems.** The master's [`Model`] holds, for each FMU
//! `name`, one first-order system named `name` of dimension
//! n = n_out + n_in (its exposed outputs, then its exposed inputs); the
//! system is only an interface description (ẋ = 0 x, never integrated):
//! `q(name)` is y = (outputs at the last communication point, inputs
//! held), and `set_system_input(name, g)` holds the FMU's inputs
//! u = g[n_out..] (g[..n_out] must be zero: an output cannot be driven).
//! A sensor with C = [I 0] therefore measures the outputs, and an actuator
//! with B = [0; I] acts on the inputs.
//!
//! **Timing** (docs/cosimulation.md, docs/how-a-step-proceeds.md). FMU i
//! has communication points t₀ + k·Tᵢ on the exact clock (its step Tᵢ a
//! whole number of ticks; the last step is shortened to t_end if needed).
//! At a point tₖ: the communication event publishes the outputs y(tₖ) the
//! FMU computed in its step ending at tₖ (before sensors); sensors,
//! observers and actuators of the loop act; when the master next advances,
//! every FMU whose point is tₖ takes its inputs — held inputs u(tₖ) and
//! connected inputs — and steps fmi2DoStep(tₖ, Tᵢ). Inputs are held
//! (zero-order hold) over the step.
//!
//! **Coupling.** Jacobi (default): every connected input at tₖ is the
//! source's output published at its last communication point ≤ tₖ, so a
//! chain of n feedthrough FMUs delays a signal by up to n steps, and a
//! loop FMU A → FMU B → FMU A sees each other's outputs one step late.
//! Gauss–Seidel: FMUs due at tₖ are stepped in declaration order, and a
//! connection from an FMU stepped earlier at tₖ delivers the output it
//! just computed at tₖ + T (all coupled FMUs must then have the same
//! step), removing the delay along the order.
//!
//! **Native model.** [`CoSimulation::with_native`] adds a native model
//! (its own time-stepping simulation, step h dividing every FMU step) on
//! the same clock: its systems come first in the model, the FMUs' follow;
//! connections join its recorded variables to FMU inputs and FMU outputs
//! to its held inputs (see `native.rs` for which value is held when).
//!
//! **Discard.** When an FMU discards a step, `retry_discards` is set and
//! the FMU can handle variable steps and save its state, the master restores the state saved before the step
//! and takes two half steps (recursively, down to 2⁻¹⁰ of the step);
//! otherwise the run stops with [`crate::CosimError::Discarded`] naming the FMU
//! and the time.
//!
//! **Termination.** When an FMU ends the simulation (fmi2Terminated after
//! a discarded step, stopped at its last successful time τ), the run ends
//! at the first point of the master's grid at or after τ: that instant is
//! the last one, with an output row holding the ending FMU's values at τ
//! (and the values other FMUs published there), and the master then
//! reports `Finished` ([`CoSimulation::ended`], [`EndWatch`]).

mod build;
mod end;
mod native;
mod runtime;
mod state;

use std::sync::Arc;

use nonsmooth::modelling::Model;
use nonsmooth::simulation::{Event, EventManager, TimeBase};

pub use build::{Connection, Coupling, FmuSpec, MasterSettings};
pub use end::{EndWatch, Termination};
pub use native::{NativeInput, NativeRead, NativeSpec};
/// Kept here for users of the master: the wrapper lives in the scenario
/// crate, which gives it to controllers with `nominal = { A, B }`.
pub use nonsmooth_scenario::WithNominalPlant;
pub use state::CoSimState;

use crate::import::{Instance, SavedState, Variable};

/// One FMU in the master.
struct Slave {
    inst: Instance,
    step_ticks: i64,
    /// The tick of the instance's current communication point (its time).
    point: i64,
    /// The tick its running step ends at (== point when none is running).
    next: i64,
    /// Variables read after every step: exposed outputs, then the sources
    /// of connections.
    reads: Vec<Variable>,
    n_out: usize,
    /// Exposed inputs (written from g).
    inputs: Vec<Variable>,
    /// Published values of `reads` (at `point`'s last communication event).
    values: Vec<f64>,
    /// Values of `reads` at the end of the running step.
    pending: Vec<f64>,
    /// q = (published outputs, held inputs).
    q: Vec<f64>,
    /// g as last set.
    g: Vec<f64>,
    /// Connected inputs: (variable, source).
    connected: Vec<(Variable, Src)>,
    /// A slot for the state before a step, when discards can be retried.
    retry: Option<SavedState>,
    /// The source id of its communication events.
    source: usize,
    /// Whether its step starting at `point` has been taken.
    stepped: bool,
}

/// The source of a connected FMU input.
#[derive(Debug, Clone, Copy)]
enum Src {
    /// An FMU's read: (slave, index in its `reads`).
    Fmu(usize, usize),
    /// A value of the native model.
    Native(NativeRead),
}

/// FMUs coupled on an exact clock: a [`nonsmooth::simulation::Simulation`].
pub struct CoSimulation {
    model: Arc<Model>,
    slaves: Vec<Slave>,
    coupling: Coupling,
    base: TimeBase,
    t0_tick: i64,
    grid_ticks: i64,
    end_tick: i64,
    tick: i64,
    events: EventManager,
    instant: Vec<Event>,
    names: Vec<String>,
    /// Slave index by source id (communication sources only).
    slave_of_source: Vec<Option<usize>>,
    output: bool,
    steps: u64,
    empty: Vec<f64>,
    /// The native model beside the FMUs, if any.
    native: Option<native::Native>,
    /// Its number of systems (the FMUs' systems follow them).
    n_native: usize,
    /// The final tick asked for (`end_tick` is earlier once an FMU ended
    /// the simulation).
    planned_end_tick: i64,
    /// The FMU that ended the simulation, if one did.
    ended: Option<Termination>,
    /// The same, shared with whoever built the run.
    watch: EndWatch,
}
