//! Why a simulation cannot start or go on: the one error type of both
//! strategies (time-stepping and event-driven) and of the driver
//! [`Simulation`](super::Simulation). Re-exported as
//! `simulation::SimulationError` and `simulation::time_stepping::SimulationError`.

use thiserror::Error;

use super::clock::ClockError;
use crate::numerics::NumericsError;

/// Why a simulation cannot start or go on. Errors during a run carry the
/// time and the step index.
#[derive(Debug, Error)]
pub enum SimulationError {
    /// A setting out of range.
    #[error("setting {what} = {value}: {reason}")]
    InvalidSetting {
        /// The setting.
        what: &'static str,
        /// Its value.
        value: f64,
        /// What is wrong.
        reason: &'static str,
    },
    /// Times that do not fit the exact clock.
    #[error(transparent)]
    Clock(#[from] ClockError),
    /// Bad input to the numerics layer (e.g. an unknown solver name).
    #[error(transparent)]
    Numerics(NumericsError),
    /// The one-step problem was not solved.
    #[error("t = {t} (step {step}): the one-step problem of size {size} was not solved by {solver}: {status}, error {error:.3e}")]
    SolverFailed {
        /// Time at the end of the failed step.
        t: f64,
        /// Step index.
        step: u64,
        /// Solver name.
        solver: &'static str,
        /// Its status.
        status: &'static str,
        /// Its error measure.
        error: f64,
        /// Problem size.
        size: usize,
    },
    /// W = M + hθC + h²θ²K or I − hθA is singular.
    #[error("system '{system}': the iteration matrix W is singular")]
    SingularIterationMatrix {
        /// The system.
        system: String,
    },
    /// The Newton loop did not converge.
    #[error("t = {t} (step {step}): Newton loop stopped after {iterations} iterations, last change {change:.3e}")]
    NewtonFailed {
        /// Time at the end of the step.
        t: f64,
        /// Step index.
        step: u64,
        /// Iterations done.
        iterations: usize,
        /// Last relative change.
        change: f64,
    },
    /// The state became NaN or infinite.
    #[error("t = {t} (step {step}): the state of '{object}' is not finite")]
    NonFinite {
        /// Time.
        t: f64,
        /// Step index.
        step: u64,
        /// The system.
        object: String,
    },
    /// A combination the simulator does not handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A handle or input of the wrong size.
    #[error("{0}")]
    BadArgument(String),
    /// Event-driven: the smooth integrator needed more than `max_steps`
    /// steps without reaching the next instant.
    #[error(
        "t = {t}: {steps} integration steps without reaching the next instant (setting max_steps)"
    )]
    TooManySteps {
        /// Time reached.
        t: f64,
        /// Steps taken since the last instant.
        steps: u64,
    },
    /// Event-driven: the error control asked for a step below the
    /// resolution of the time variable.
    #[error("t = {t}: the step size {h:.3e} s is below the resolution of t (tolerances too tight for the dynamics)")]
    StepSizeTooSmall {
        /// Time reached.
        t: f64,
        /// The step size asked for.
        h: f64,
    },
    /// Event-driven: events follow each other without time advancing.
    #[error("t = {t}: {events} nonsmooth events without time advancing ({what})")]
    EventStall {
        /// The instant.
        t: f64,
        /// Events at this instant.
        events: u64,
        /// The last event.
        what: String,
    },
    /// Event-driven: the multipliers of a mode are not determined by the
    /// state (a singular block of D or of the Delassus matrix H M⁻¹ Hᵀ).
    #[error("t = {t}: interaction '{interaction}': {reason}")]
    SingularMode {
        /// The instant.
        t: f64,
        /// The interaction.
        interaction: String,
        /// What is singular.
        reason: String,
    },
    /// An event instant that is not on the integration grid t₀ + k h.
    #[error("{what} = {value} s is not a whole number of integration steps (step {step} s); time-stepping runs events only at t0 + k·step")]
    OffGrid {
        /// Which quantity (e.g. "sensor 'sensor' delay").
        what: String,
        /// Its value, in seconds.
        value: f64,
        /// The integration step.
        step: f64,
    },
    /// [`Simulation::reach`](super::Simulation::reach) called while the
    /// instant reached before is not processed yet
    /// ([`Simulation::process`](super::Simulation::process) first).
    #[error("t = {t}: the instant reached is not processed yet (process it before reaching the next one)")]
    InstantPending {
        /// The instant waiting to be processed.
        t: f64,
    },
    /// An imported simulation (an FMU run by nonsmooth-cosim) failed; the
    /// source is that crate's error, naming the FMU and the time.
    #[error(transparent)]
    Imported(Box<dyn std::error::Error + Send + Sync>),
}
