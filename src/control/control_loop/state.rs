//! The complete state of a [`ControlLoop`], to roll a step back, branch a
//! run, or write it as bytes.
//!
//! A [`ControlLoopState`] holds everything a later instant reads before it
//! writes it, so that restoring a state and stepping again gives
//! bit-identical results:
//!
//! * the plant's state ([`SimulationState`]: for a time-stepping plant its
//!   clock — the event schedule of every sensor, observer and actuator
//!   included —, q, v, the held inputs g and u, the interactions' y, λ and
//!   warm starts, the counters; for an event-driven plant its clock at a
//!   float instant, x, the mode, the integrator inside its step, the
//!   guards, [`crate::simulation::EventDrivenState`]);
//! * per sensor: the latest delivered measurement and whether there is one,
//!   the measurements in transit on its delay line (oldest first), and for
//!   a sensor fed from outside the value it holds;
//! * per observer and per controller: the law's memory
//!   ([`Observer::save_state`], [`Controller::save_state`]: estimates,
//!   integrals, previous samples, predictions, relay warm starts, signals);
//! * per controller: the input computed last, the input its actuator
//!   applies, and the inputs in transit on its delay line;
//! * the external inputs (the part of each system's g set from outside the
//!   loop);
//! * whether the instant was reached ([`ControlLoop::reach`]) and its
//!   sensor, observer and actuator events are still to be processed (a
//!   state saved at the left limit of an instant is restored there).
//!
//! Everything else is constant for the run (matrices, timings, the laws'
//! discrete-time data) or rewritten before it is read (a capture's C x, an
//! observer's input in state coordinates, the sum of the actuators'
//! inputs, which the plant holds). Names and timings (period, offset,
//! delay) of every object are kept to check that a state fits the loop it
//! is restored into: a state restores only into a loop with the same
//! objects, timings and sizes, on a plant of the same structure and time
//! base.
//!
//! Bytes ([`ControlLoopState::to_bytes`]): a magic `NSCL` and a format
//! version, then in postcard's serde format the objects, the laws'
//! memories, the external inputs and last the plant's state as its own
//! bytes (`NSTS…` for time-stepping, `NSED…` for event-driven). Reading
//! checks every length and value: damaged or truncated bytes are a
//! [`ControlError::State`], never a panic.
//!
//! [`Observer::save_state`]: crate::control::Observer::save_state
//! [`Controller::save_state`]: crate::control::Controller::save_state

use super::{ControlLoop, Timing};
use crate::control::error::ControlError;
use serde::{Deserialize, Serialize};

use crate::simulation::state_bytes;
use crate::simulation::{SimulationState, StateError};

/// Per-sensor part of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SensorState {
    name: String,
    timing: Timing,
    delivered: Vec<f64>,
    has_value: bool,
    fed: Option<Vec<f64>>,
    in_transit: usize,
    line: Vec<f64>,
}

/// Per-observer part of a state (its law's memory is in `laws`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ObserverState {
    name: String,
    timing: Timing,
}

/// Per-controller part of a state (its law's memory is in `laws`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ControllerState {
    name: String,
    timing: Timing,
    computed: Vec<f64>,
    applied: Vec<f64>,
    in_transit: usize,
    line: Vec<f64>,
}

/// The complete state of a [`ControlLoop`] (see the module documentation).
/// Taken by [`ControlLoop::save_state`], put back by
/// [`ControlLoop::restore_state`].
#[derive(Debug, Clone, PartialEq)]
pub struct ControlLoopState {
    plant: SimulationState,
    sensors: Vec<SensorState>,
    observers: Vec<ObserverState>,
    controllers: Vec<ControllerState>,
    /// The laws' memories, observers first then controllers, concatenated.
    laws: Vec<f64>,
    /// The length of each law's memory in `laws`.
    law_lengths: Vec<usize>,
    external: Vec<Vec<f64>>,
    /// The loop's events of the instant reached are not yet processed.
    pending: bool,
}

impl ControlLoopState {
    /// The instant of the state, in seconds.
    pub fn time(&self) -> f64 {
        self.plant.time()
    }

    /// The plant's part.
    pub fn plant(&self) -> &SimulationState {
        &self.plant
    }
}

fn state_err(object: &str, reason: String) -> ControlError {
    ControlError::State {
        object: object.to_string(),
        reason,
    }
}

fn timing_text(t: &Timing) -> String {
    format!(
        "period {} s, offset {} s, delay {} s",
        t.period, t.offset, t.delay
    )
}

impl ControlLoop {
    /// The complete state (see [`ControlLoopState`]). Fails only when the
    /// plant cannot save its state (an imported FMU that cannot).
    pub fn save_state(&self) -> Result<ControlLoopState, ControlError> {
        let plant = self.plant.save_state().map_err(plant_error)?;
        Ok(self.state_with(plant))
    }

    /// As [`ControlLoop::save_state`], for a plant that needs mutable
    /// access to save its state ([`crate::simulation::Simulation::save_state_mut`]: an
    /// imported co-simulation of FMUs, whose state is then
    /// [`SimulationState::Imported`], in memory only).
    pub fn save_state_mut(&mut self) -> Result<ControlLoopState, ControlError> {
        let plant = self.plant.save_state_mut().map_err(plant_error)?;
        Ok(self.state_with(plant))
    }

    /// The loop's state around the plant's `plant`.
    fn state_with(&self, plant: SimulationState) -> ControlLoopState {
        let mut laws = Vec::new();
        let mut law_lengths = Vec::with_capacity(self.observers.len() + self.controllers.len());
        for o in &self.observers {
            let at = laws.len();
            o.law.save_state(&mut laws);
            law_lengths.push(laws.len() - at);
        }
        for c in &self.controllers {
            let at = laws.len();
            c.law.save_state(&mut laws);
            law_lengths.push(laws.len() - at);
        }
        ControlLoopState {
            plant,
            sensors: self
                .sensors
                .iter()
                .map(|s| {
                    let mut line = Vec::new();
                    if let Some(l) = &s.line {
                        l.save_into(&mut line);
                    }
                    SensorState {
                        name: s.name.clone(),
                        timing: s.timing,
                        delivered: s.delivered.clone(),
                        has_value: s.has_value,
                        fed: s.fed.clone(),
                        in_transit: s.line.as_ref().map_or(0, |l| l.len()),
                        line,
                    }
                })
                .collect(),
            observers: self
                .observers
                .iter()
                .map(|o| ObserverState {
                    name: o.name.clone(),
                    timing: o.timing,
                })
                .collect(),
            controllers: self
                .controllers
                .iter()
                .map(|c| {
                    let mut line = Vec::new();
                    if let Some(l) = &c.line {
                        l.save_into(&mut line);
                    }
                    ControllerState {
                        name: c.name.clone(),
                        timing: c.timing,
                        computed: c.computed.clone(),
                        applied: c.applied.clone(),
                        in_transit: c.line.as_ref().map_or(0, |l| l.len()),
                        line,
                    }
                })
                .collect(),
            laws,
            law_lengths,
            external: self.external.clone(),
            pending: self.actions_pending,
        }
    }

    /// As [`ControlLoop::save_state`], into an existing state, reusing its
    /// storage (no allocation when it was taken from this loop and its
    /// delay lines hold no more values than then).
    pub fn save_state_into(&self, s: &mut ControlLoopState) -> Result<(), ControlError> {
        let fits = s.sensors.len() == self.sensors.len()
            && s.observers.len() == self.observers.len()
            && s.controllers.len() == self.controllers.len()
            && s.external.len() == self.external.len();
        if !fits {
            *s = self.save_state()?;
            return Ok(());
        }
        self.plant
            .save_state_into(&mut s.plant)
            .map_err(plant_error)?;
        for (st, x) in s.sensors.iter_mut().zip(&self.sensors) {
            st.name.clone_from(&x.name);
            st.timing = x.timing;
            st.delivered.clone_from(&x.delivered);
            st.has_value = x.has_value;
            st.fed.clone_from(&x.fed);
            st.in_transit = x.line.as_ref().map_or(0, |l| l.len());
            match &x.line {
                Some(l) => l.save_into(&mut st.line),
                None => st.line.clear(),
            }
        }
        for (st, x) in s.observers.iter_mut().zip(&self.observers) {
            st.name.clone_from(&x.name);
            st.timing = x.timing;
        }
        for (st, x) in s.controllers.iter_mut().zip(&self.controllers) {
            st.name.clone_from(&x.name);
            st.timing = x.timing;
            st.computed.clone_from(&x.computed);
            st.applied.clone_from(&x.applied);
            st.in_transit = x.line.as_ref().map_or(0, |l| l.len());
            match &x.line {
                Some(l) => l.save_into(&mut st.line),
                None => st.line.clear(),
            }
        }
        s.laws.clear();
        s.law_lengths.clear();
        for o in &self.observers {
            let at = s.laws.len();
            o.law.save_state(&mut s.laws);
            s.law_lengths.push(s.laws.len() - at);
        }
        for c in &self.controllers {
            let at = s.laws.len();
            c.law.save_state(&mut s.laws);
            s.law_lengths.push(s.laws.len() - at);
        }
        for (st, x) in s.external.iter_mut().zip(&self.external) {
            st.clone_from(x);
        }
        s.pending = self.actions_pending;
        Ok(())
    }

    /// Puts back a state taken by [`ControlLoop::save_state`] from this
    /// loop or from a loop with the same objects (names, timings, sizes) on
    /// a plant of the same structure and time base. When the state does not
    /// fit, nothing is changed ([`ControlError::State`] says what differs).
    pub fn restore_state(&mut self, s: &ControlLoopState) -> Result<(), ControlError> {
        self.check_fits(s)?;
        // The plant's schedule may go back: look for the loop's events at
        // every instant until they are found again.
        // The laws first, with their current memories kept to undo.
        let mut undo = std::mem::take(&mut self.undo);
        undo.clear();
        for o in &self.observers {
            o.law.save_state(&mut undo);
        }
        for c in &self.controllers {
            c.law.save_state(&mut undo);
        }
        let result = self.restore_laws(&s.laws, &s.law_lengths);
        let result = result.and_then(|()| self.plant.restore_state(&s.plant).map_err(plant_error));
        if let Err(e) = result {
            // Back to the memories of before (they fit: taken just now).
            let _ = self.restore_laws_unchecked(&undo);
            self.undo = undo;
            return Err(e);
        }
        self.undo = undo;
        for (x, st) in self.sensors.iter_mut().zip(&s.sensors) {
            x.delivered.copy_from_slice(&st.delivered);
            x.has_value = st.has_value;
            if let (Some(fed), Some(v)) = (&mut x.fed, &st.fed) {
                fed.copy_from_slice(v);
            }
            if let Some(l) = &mut x.line {
                l.restore(st.in_transit, &st.line);
            }
        }
        for (x, st) in self.controllers.iter_mut().zip(&s.controllers) {
            x.computed.copy_from_slice(&st.computed);
            x.applied.copy_from_slice(&st.applied);
            if let Some(l) = &mut x.line {
                l.restore(st.in_transit, &st.line);
            }
        }
        for (x, st) in self.external.iter_mut().zip(&s.external) {
            x.copy_from_slice(st);
        }
        self.actions_pending = s.pending;
        self.rescan_changes();
        Ok(())
    }

    /// Restores every law from `laws`, each reading exactly its length.
    fn restore_laws(&mut self, laws: &[f64], lengths: &[usize]) -> Result<(), ControlError> {
        let mut at = 0;
        let mut k = 0;
        let n_obs = self.observers.len();
        for o in &mut self.observers {
            let len = lengths[k];
            let data = &laws[at..at + len];
            let read = o.law.restore_state(data).map_err(|e| rename(e, &o.name))?;
            if read != len {
                return Err(state_err(
                    &o.name,
                    format!("the law's saved state has {len} values, it reads {read}"),
                ));
            }
            at += len;
            k += 1;
        }
        debug_assert_eq!(k, n_obs);
        for c in &mut self.controllers {
            let len = lengths[k];
            let data = &laws[at..at + len];
            let read = c.law.restore_state(data).map_err(|e| rename(e, &c.name))?;
            if read != len {
                return Err(state_err(
                    &c.name,
                    format!("the law's saved state has {len} values, it reads {read}"),
                ));
            }
            at += len;
            k += 1;
        }
        Ok(())
    }

    /// Restores every law from memories saved by this loop just before,
    /// one after the other (each law reads its own length).
    fn restore_laws_unchecked(&mut self, laws: &[f64]) -> Result<(), ControlError> {
        let mut at = 0;
        for o in &mut self.observers {
            at += o.law.restore_state(&laws[at..])?;
        }
        for c in &mut self.controllers {
            at += c.law.restore_state(&laws[at..])?;
        }
        Ok(())
    }

    fn check_fits(&self, s: &ControlLoopState) -> Result<(), ControlError> {
        let lp = "control loop";
        let counts = (
            s.sensors.len(),
            s.observers.len(),
            s.controllers.len(),
            s.external.len(),
        );
        let here = (
            self.sensors.len(),
            self.observers.len(),
            self.controllers.len(),
            self.external.len(),
        );
        if counts != here {
            return Err(state_err(
                lp,
                format!(
                    "the state has {} sensors, {} observers, {} controllers and {} systems; \
                     this loop has {}, {}, {} and {}",
                    counts.0, counts.1, counts.2, counts.3, here.0, here.1, here.2, here.3
                ),
            ));
        }
        let same_object = |kind: &str, name: &str, timing: &Timing, x_name: &str, x: &Timing| {
            if name != x_name {
                return Err(state_err(
                    lp,
                    format!("the state's {kind} `{name}` is `{x_name}` in this loop"),
                ));
            }
            if timing != x {
                return Err(state_err(
                    name,
                    format!(
                        "the state was taken with {}; this loop has {}",
                        timing_text(timing),
                        timing_text(x)
                    ),
                ));
            }
            Ok(())
        };
        for (x, st) in self.sensors.iter().zip(&s.sensors) {
            same_object("sensor", &st.name, &st.timing, &x.name, &x.timing)?;
            let p = x.delivered.len();
            let line_ok = match &x.line {
                None => st.in_transit == 0 && st.line.is_empty(),
                Some(l) => {
                    st.in_transit <= l.max_len() && st.line.len() == st.in_transit * l.width()
                }
            };
            let fed_ok = match (&x.fed, &st.fed) {
                (None, None) => true,
                (Some(a), Some(b)) => a.len() == b.len(),
                _ => false,
            };
            if st.delivered.len() != p || !line_ok || !fed_ok {
                return Err(state_err(
                    &x.name,
                    "the saved measurement, delay line or input has another size".into(),
                ));
            }
        }
        for (x, st) in self.observers.iter().zip(&s.observers) {
            same_object("observer", &st.name, &st.timing, &x.name, &x.timing)?;
        }
        for (x, st) in self.controllers.iter().zip(&s.controllers) {
            same_object("controller", &st.name, &st.timing, &x.name, &x.timing)?;
            let m = x.applied.len();
            let line_ok = match &x.line {
                None => st.in_transit == 0 && st.line.is_empty(),
                Some(l) => {
                    st.in_transit <= l.max_len() && st.line.len() == st.in_transit * l.width()
                }
            };
            if st.computed.len() != m || st.applied.len() != m || !line_ok {
                return Err(state_err(
                    &x.name,
                    "the saved input or delay line has another size".into(),
                ));
            }
        }
        for (k, (x, st)) in self.external.iter().zip(&s.external).enumerate() {
            if x.len() != st.len() {
                return Err(state_err(
                    lp,
                    format!("the external input of system {k} has another size"),
                ));
            }
        }
        let n_laws = self.observers.len() + self.controllers.len();
        if s.law_lengths.len() != n_laws || s.law_lengths.iter().sum::<usize>() != s.laws.len() {
            return Err(state_err(
                lp,
                "the laws' saved memories do not add up".into(),
            ));
        }
        Ok(())
    }
}

/// A law's state error, named after the object that holds the law.
fn rename(e: ControlError, object: &str) -> ControlError {
    match e {
        ControlError::State { reason, .. } => state_err(object, reason),
        e => e,
    }
}

// ---------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------

const MAGIC: &[u8; 4] = b"NSCL";
/// Version 3: with the pending flag (version 2 without; version 1 was a
/// hand-written format).
const VERSION: u32 = 3;

/// The objects' parts of a state as read: sensors, observers,
/// controllers, the laws' memories and their lengths, the external inputs,
/// whether the loop's events of the instant are pending, then the plant's
/// state as its own bytes (`NSTS…` for time-stepping,
/// `NSED…` for event-driven).
/// [`ControlLoopState::write_bytes`] writes the same tuple, borrowed.
type Parts = (
    Vec<SensorState>,
    Vec<ObserverState>,
    Vec<ControllerState>,
    Vec<f64>,
    Vec<usize>,
    Vec<Vec<f64>>,
    bool,
    Vec<u8>,
);

fn corrupt(e: StateError) -> ControlError {
    state_err("control loop", e.to_string())
}

impl ControlLoopState {
    /// Appends the state as bytes to `out` (format in the module
    /// documentation).
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        let plant = self.plant.to_bytes();
        let parts = (
            &self.sensors,
            &self.observers,
            &self.controllers,
            &self.laws,
            &self.law_lengths,
            &self.external,
            self.pending,
            &plant[..],
        );
        state_bytes::write(MAGIC, VERSION, &parts, out);
    }

    /// The state as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    /// Reads a state written by [`ControlLoopState::to_bytes`]. Whether it
    /// fits a given loop is checked by [`ControlLoop::restore_state`].
    pub fn from_bytes(bytes: &[u8]) -> Result<ControlLoopState, ControlError> {
        Self::read(bytes).map_err(corrupt)
    }

    fn read(bytes: &[u8]) -> Result<ControlLoopState, StateError> {
        let bad = |m: String| StateError::Corrupt(m);
        let (sensors, observers, controllers, laws, law_lengths, external, pending, plant): Parts =
            state_bytes::read(MAGIC, VERSION, "control loop state", bytes)?;
        for s in &sensors {
            if s.in_transit.checked_mul(s.delivered.len()) != Some(s.line.len()) {
                return Err(bad(format!(
                    "sensor `{}`: {} values in transit of {} in {} numbers",
                    s.name,
                    s.in_transit,
                    s.delivered.len(),
                    s.line.len()
                )));
            }
        }
        for c in &controllers {
            if c.computed.len() != c.applied.len()
                || c.in_transit.checked_mul(c.applied.len()).is_none()
            {
                return Err(bad(format!("controller `{}`: inconsistent sizes", c.name)));
            }
        }
        if law_lengths
            .iter()
            .try_fold(0usize, |a, &b| a.checked_add(b))
            != Some(laws.len())
        {
            return Err(bad("the laws' memories do not add up".into()));
        }
        let plant = SimulationState::from_bytes(&plant)?;
        Ok(ControlLoopState {
            plant,
            sensors,
            observers,
            controllers,
            laws,
            law_lengths,
            external,
            pending,
        })
    }
}

/// The error of the plant's part of a state, named after the plant.
fn plant_error(e: StateError) -> ControlError {
    match e {
        StateError::Unsupported(reason) => ControlError::Unsupported {
            object: "plant".into(),
            reason,
        },
        e => ControlError::State {
            object: "plant".into(),
            reason: e.to_string(),
        },
    }
}
