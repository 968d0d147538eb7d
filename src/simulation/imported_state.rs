//! The saved state of a simulation implemented outside this crate (the
//! co-simulation master of `nonsmooth-cosim`, whose FMUs keep their states
//! inside themselves): [`ImportedState`], opaque here.

use std::any::Any;
use std::sync::Arc;

/// The state of a [`super::Simulation`] implemented outside this crate,
/// kept in memory: its instant and a payload only that simulation reads
/// (e.g. FMU state handles, valid for the FMU instances they were taken
/// from). Taken by [`super::Simulation::save_state_mut`]; it has no byte
/// form ([`super::SimulationState::to_bytes`] writes only the magic
/// `NSIM` and the instant, which `from_bytes` refuses).
#[derive(Clone)]
pub struct ImportedState {
    tick: i64,
    time: f64,
    payload: Arc<dyn Any + Send + Sync>,
}

impl ImportedState {
    /// A state at `tick` (`time` seconds) holding `payload`.
    pub fn new(tick: i64, time: f64, payload: Arc<dyn Any + Send + Sync>) -> ImportedState {
        ImportedState {
            tick,
            time,
            payload,
        }
    }

    /// The instant, in ticks.
    pub fn tick(&self) -> i64 {
        self.tick
    }

    /// The instant, in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The payload, for the simulation that wrote it to downcast.
    pub fn payload(&self) -> &(dyn Any + Send + Sync) {
        self.payload.as_ref()
    }

    /// `NSIM`, the tick and the time (little-endian): a marker, not a
    /// state that can be read back.
    pub(super) fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"NSIM");
        out.extend_from_slice(&self.tick.to_le_bytes());
        out.extend_from_slice(&self.time.to_le_bytes());
    }
}

/// Two imported states are equal when they share their payload.
impl PartialEq for ImportedState {
    fn eq(&self, other: &Self) -> bool {
        self.tick == other.tick && Arc::ptr_eq(&self.payload, &other.payload)
    }
}

impl std::fmt::Debug for ImportedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedState")
            .field("tick", &self.tick)
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}
