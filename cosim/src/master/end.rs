//! A co-simulation ended by one of its FMUs (fmi2Terminated): who ended
//! it, when, and a handle that reports it to whoever built the run while
//! the control loop owns the master.

use std::sync::{Arc, Mutex};

/// An FMU asked to end the simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct Termination {
    /// The FMU instance that ended it.
    pub fmu: String,
    /// Its last successful time τ (fmi2LastSuccessfulTime).
    pub time: f64,
    /// The run's last instant: the first point of the master's grid at or
    /// after τ.
    pub end: f64,
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FMU '{}' ended the simulation at t = {}",
            self.fmu, self.time
        )?;
        if self.end != self.time {
            write!(f, " (the run's last instant is t = {})", self.end)?;
        }
        Ok(())
    }
}

/// A shared view of [`crate::CoSimulation::ended`]: clones see the
/// termination once the master records it (and its clearing when a state
/// from before it is restored). Read after the run, not per step.
#[derive(Debug, Clone, Default)]
pub struct EndWatch(Arc<Mutex<Option<Termination>>>);

impl EndWatch {
    /// The termination, if an FMU ended the run.
    pub fn get(&self) -> Option<Termination> {
        self.0
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    pub(super) fn set(&self, t: Option<Termination>) {
        match self.0.lock() {
            Ok(mut g) => *g = t,
            Err(p) => *p.into_inner() = t,
        }
    }
}
