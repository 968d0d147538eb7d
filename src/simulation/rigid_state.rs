//! The complete state of a run of rigid bodies (`RigidSimulation` of the
//! `nonsmooth-collision` crate), as plain data: [`RigidState`].
//!
//! It holds everything a later step reads before writing it, so that
//! restoring a state and stepping again gives bit-identical results:
//!
//! * the clock: the tick, the event schedule, the events of the last
//!   instant and whether it was an output instant, the event-source names;
//! * per body: x_G, Q (scalar first), v_G, Ω (13 numbers, every bit kept)
//!   and the held input (force, world frame; torque, body frame);
//! * the contact step's warm start: the impulses of the last step's
//!   contacts by persistent contact id;
//! * the contact detector's state (its pair records, with the contact
//!   manifolds and workspaces that make contact ids persist, and its
//!   record pool), in the detector's own serde format: the core knows
//!   contacts as plain data only, whatever detector made them;
//! * the world's recorded values and the counters.
//!
//! Bytes ([`RigidState::to_bytes`]): the magic `NSRB` and a format version,
//! then the fields in postcard's serde format (`simulation::state_bytes`).

use serde::{Deserialize, Serialize};

use super::events::{Event, EventSchedule};
use super::state_bytes;
use super::time_stepping::{StateError, Statistics};

const MAGIC: &[u8; 4] = b"NSRB";
const VERSION: u32 = 1;

/// The complete state of a rigid run (see the module documentation).
/// Taken and put back by the rigid simulation, which checks that it fits
/// (same bodies, same time base).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RigidState {
    /// Ticks per second of the time base.
    pub ticks_per_second: i64,
    /// t₀ in ticks.
    pub t0_tick: i64,
    /// The step h in ticks.
    pub step_ticks: i64,
    /// The instant, in ticks.
    pub tick: i64,
    /// The event schedule.
    pub schedule: EventSchedule,
    /// The events of the last instant.
    pub instant: Vec<Event>,
    /// Whether the last instant was an output instant.
    pub output: bool,
    /// The names of the event sources.
    pub source_names: Vec<String>,
    /// The world's own time (seconds, advanced by h each step).
    pub world_time: f64,
    /// Per body: x_G (3), Q = (w, x, y, z) (4), v_G (3), Ω (3).
    pub bodies: Vec<[f64; 13]>,
    /// Per body: the held force (world frame, 3) then torque (body frame,
    /// 3); empty when no input was ever set.
    pub inputs: Vec<[f64; 6]>,
    /// The warm start of the next contact step: (contact id, impulse),
    /// sorted by id.
    pub warm_start: Vec<(u64, [f64; 3])>,
    /// The detector's state, in its own format.
    pub detector: Vec<u8>,
    /// The world's recorded values of the last step.
    pub world_values: Vec<f64>,
    /// Steps, solves, solver iterations, Newton iterations.
    pub statistics: [u64; 4],
    /// Steps kept short of the solver's tolerance.
    pub unsolved: u64,
}

impl RigidState {
    /// The instant, in ticks.
    pub fn tick(&self) -> i64 {
        self.tick
    }

    /// The instant, in seconds.
    pub fn time(&self) -> f64 {
        self.tick as f64 / self.ticks_per_second as f64
    }

    /// The counters as [`Statistics`].
    pub fn stats(&self) -> Statistics {
        let [steps, solves, solver_iterations, newton_iterations] = self.statistics;
        Statistics {
            steps,
            solves,
            solver_iterations,
            newton_iterations,
        }
    }

    /// Appends `NSRB`, the version and the fields to `out`.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        state_bytes::write(MAGIC, VERSION, self, out);
    }

    /// The state as bytes (see [`RigidState::write_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    /// Reads what [`RigidState::to_bytes`] wrote; truncated or foreign
    /// bytes are a [`StateError::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<RigidState, StateError> {
        state_bytes::read(MAGIC, VERSION, "rigid state", bytes)
    }
}
