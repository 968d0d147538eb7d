//! The complete state of a [`TimeStepping`], to save and restore it (roll a
//! step back, branch a run) and to write it as bytes.
//!
//! A [`TimeSteppingState`] holds everything a later step reads before it
//! writes it, so that restoring a state and stepping again gives
//! bit-identical results:
//!
//! * the clock: the current tick and the event manager's schedule (every
//!   source's offset, period and count, the pending queue), the events of
//!   the last instant, the event-source names;
//! * per system: q (or x), v, and the held input g; q_{k−1} under the
//!   two-step Schatzman–Paoli scheme;
//! * per interaction: y, ẏ, λ (which is also the warm start of the next
//!   one-step solve), the contact forces of the D1-minus-linear scheme (the
//!   warm start of its force problems), ẏ at the start of the step, the rounding bounds of y
//!   and ẏ, the activity flag, the held relation input u; for nonlinear
//!   relations also the linearisation (output and input matrices, responses,
//!   shifts, D and the affine part), which the next Newton iteration
//!   recomputes but which is kept so that nothing depends on that order;
//! * the counters ([`super::Statistics`] and the solver's totals).
//!
//! Everything else in the simulation is either constant for the run
//! (factored constant iteration matrices, constant responses, the one-step
//! problem's storage) or rewritten at the start of each step before it is
//! read (start values, free state, iteration matrices of time-varying or
//! nonlinear systems, the problem's vectors; the solvers' own buffers are
//! scratch, filled from λ at each solve).
//!
//! A state can be restored only into a simulation of a model with the same
//! structure (systems, interactions and their sizes) on the same time base
//! (ticks per second, t₀ and step in ticks); anything else is a
//! [`StateError`].
//!
//! Bytes ([`TimeSteppingState::to_bytes`]): a magic `NSTS` and a format
//! version, then the fields above in postcard's serde format (module
//! `simulation::state_bytes`); reading checks every length and
//! value, so truncated or foreign bytes are an error, never a panic.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{Statistics, TimeStepping};
use crate::modelling::model::InteractionId;
use crate::simulation::events::{Event, EventManager, EventSchedule, SourceId};
use crate::simulation::state_bytes;

/// Why a state cannot be restored or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StateError {
    /// The state was taken from a simulation of another model or time base.
    #[error("the state does not fit this simulation: {0}")]
    Mismatch(String),
    /// The bytes are not a state written by [`TimeSteppingState::to_bytes`].
    #[error("not a valid simulation state: {0}")]
    Corrupt(String),
    /// The simulation cannot save or restore its state.
    #[error("{0}")]
    Unsupported(String),
}

/// Per-system part of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SystemState {
    q: Vec<f64>,
    /// Schatzman–Paoli: q_{k−1} (empty for other schemes).
    q_prev: Vec<f64>,
    v: Vec<f64>,
    control: Vec<f64>,
    has_control: bool,
}

/// Linearisation of a nonlinear relation (kept with the state, see the
/// module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Linearisation {
    out: Vec<Vec<f64>>,
    inp: Vec<Vec<f64>>,
    resp: Vec<Vec<f64>>,
    shift: Vec<Vec<f64>>,
    d: Option<Vec<f64>>,
    e: Vec<f64>,
}

/// Per-interaction part of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct InteractionState {
    y: Vec<f64>,
    ydot: Vec<f64>,
    lambda: Vec<f64>,
    /// D1-minus-linear: the last contact forces (empty for other schemes).
    lambda_force: Vec<f64>,
    ydot_start: Vec<f64>,
    y_noise: Vec<f64>,
    ydot_noise: Vec<f64>,
    u: Vec<f64>,
    active: bool,
    /// Contact status of a frictional contact.
    status: f64,
    linearisation: Option<Linearisation>,
}

/// The complete state of a [`TimeStepping`] (see the module documentation
/// for what it contains). Taken by [`TimeStepping::save_state`], put back by
/// [`TimeStepping::restore_state`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeSteppingState {
    ticks_per_second: i64,
    t0_tick: i64,
    step_ticks: i64,
    tick: i64,
    schedule: EventSchedule,
    instant: Vec<Event>,
    source_names: Vec<String>,
    systems: Vec<SystemState>,
    interactions: Vec<InteractionState>,
    #[serde(with = "stats_bytes")]
    stats: Statistics,
    solves: u64,
    solver_iterations: u64,
}

impl TimeSteppingState {
    /// The instant of the state, in seconds.
    pub fn time(&self) -> f64 {
        self.tick as f64 / self.ticks_per_second as f64
    }

    /// The instant of the state, in ticks.
    pub fn tick(&self) -> i64 {
        self.tick
    }
}

impl TimeStepping {
    /// The complete state (see [`TimeSteppingState`]).
    pub fn save_state(&self) -> TimeSteppingState {
        TimeSteppingState {
            ticks_per_second: self.base.ticks_per_second(),
            t0_tick: self.t0_tick,
            step_ticks: self.step_ticks,
            tick: self.tick,
            schedule: self.events.schedule(),
            instant: self.instant.clone(),
            source_names: self.source_names.clone(),
            systems: self
                .sys
                .iter()
                .map(|w| SystemState {
                    q: w.q.clone(),
                    q_prev: w.q_prev.clone(),
                    v: w.v.clone(),
                    control: w.control.clone(),
                    has_control: w.has_control,
                })
                .collect(),
            interactions: self
                .inters
                .iter()
                .map(|w| InteractionState {
                    y: w.y.clone(),
                    ydot: w.ydot.clone(),
                    lambda: w.lambda.clone(),
                    lambda_force: w.lambda_force.clone(),
                    ydot_start: w.ydot_start.clone(),
                    y_noise: w.y_noise.clone(),
                    ydot_noise: w.ydot_noise.clone(),
                    u: w.u.clone(),
                    active: w.active,
                    status: w.status[0],
                    linearisation: (!w.linear).then(|| Linearisation {
                        out: w.out.iter().map(|m| m.as_slice().to_vec()).collect(),
                        inp: w.inp.iter().map(|m| m.as_slice().to_vec()).collect(),
                        resp: w.resp.iter().map(|m| m.as_slice().to_vec()).collect(),
                        shift: w.shift.clone(),
                        d: w.d.as_ref().map(|m| m.as_slice().to_vec()),
                        e: w.e.clone(),
                    }),
                })
                .collect(),
            stats: self.stats,
            solves: self.osnsp.solves,
            solver_iterations: self.osnsp.iterations,
        }
    }

    /// As [`TimeStepping::save_state`], into an existing state, reusing its
    /// storage (no allocation when it was taken from this simulation).
    pub fn save_state_into(&self, s: &mut TimeSteppingState) {
        let fits = s.systems.len() == self.sys.len()
            && s.interactions.len() == self.inters.len()
            && s.interactions
                .iter()
                .zip(&self.inters)
                .all(|(st, w)| st.linearisation.is_none() == w.linear);
        if !fits {
            *s = self.save_state();
            return;
        }
        s.ticks_per_second = self.base.ticks_per_second();
        s.t0_tick = self.t0_tick;
        s.step_ticks = self.step_ticks;
        s.tick = self.tick;
        let schedule = self.events.schedule();
        s.schedule.sources.clone_from(&schedule.sources);
        s.schedule.queue.clone_from(&schedule.queue);
        s.instant.clone_from(&self.instant);
        s.source_names.clone_from(&self.source_names);
        for (st, w) in s.systems.iter_mut().zip(&self.sys) {
            st.q.clone_from(&w.q);
            st.q_prev.clone_from(&w.q_prev);
            st.v.clone_from(&w.v);
            st.control.clone_from(&w.control);
            st.has_control = w.has_control;
        }
        for (st, w) in s.interactions.iter_mut().zip(&self.inters) {
            st.y.clone_from(&w.y);
            st.ydot.clone_from(&w.ydot);
            st.lambda.clone_from(&w.lambda);
            st.lambda_force.clone_from(&w.lambda_force);
            st.ydot_start.clone_from(&w.ydot_start);
            st.y_noise.clone_from(&w.y_noise);
            st.ydot_noise.clone_from(&w.ydot_noise);
            st.u.clone_from(&w.u);
            st.active = w.active;
            st.status = w.status[0];
            if let Some(l) = &mut st.linearisation {
                let copy = |dst: &mut Vec<Vec<f64>>, src: &[nalgebra::DMatrix<f64>]| {
                    dst.resize_with(src.len(), Vec::new);
                    for (d, m) in dst.iter_mut().zip(src) {
                        d.clear();
                        d.extend_from_slice(m.as_slice());
                    }
                };
                copy(&mut l.out, &w.out);
                copy(&mut l.inp, &w.inp);
                copy(&mut l.resp, &w.resp);
                l.shift.clone_from(&w.shift);
                l.d = w.d.as_ref().map(|m| m.as_slice().to_vec());
                l.e.clone_from(&w.e);
            }
        }
        s.stats = self.stats;
        s.solves = self.osnsp.solves;
        s.solver_iterations = self.osnsp.iterations;
    }

    /// Puts back a state taken by [`TimeStepping::save_state`] from this
    /// simulation or from one of a model of the same structure on the same
    /// time base. Nothing is changed when the state does not fit.
    pub fn restore_state(&mut self, s: &TimeSteppingState) -> Result<(), StateError> {
        self.check_fits(s)?;
        let events = EventManager::from_schedule(&s.schedule).map_err(StateError::Corrupt)?;
        self.events = events;
        self.tick = s.tick;
        self.split = None;
        self.instant.clear();
        self.instant.extend_from_slice(&s.instant);
        self.source_names.clone_from(&s.source_names);
        for (w, st) in self.sys.iter_mut().zip(&s.systems) {
            w.q.copy_from_slice(&st.q);
            w.q_prev.copy_from_slice(&st.q_prev);
            w.v.copy_from_slice(&st.v);
            w.control.copy_from_slice(&st.control);
            w.has_control = st.has_control;
        }
        for (w, st) in self.inters.iter_mut().zip(&s.interactions) {
            w.y.copy_from_slice(&st.y);
            w.ydot.copy_from_slice(&st.ydot);
            w.lambda.copy_from_slice(&st.lambda);
            w.lambda_force.copy_from_slice(&st.lambda_force);
            w.ydot_start.copy_from_slice(&st.ydot_start);
            w.y_noise.copy_from_slice(&st.y_noise);
            w.ydot_noise.copy_from_slice(&st.ydot_noise);
            w.u.copy_from_slice(&st.u);
            w.active = st.active;
            w.status[0] = st.status;
            if let Some(l) = &st.linearisation {
                for (m, v) in w.out.iter_mut().zip(&l.out) {
                    m.as_mut_slice().copy_from_slice(v);
                }
                for (m, v) in w.inp.iter_mut().zip(&l.inp) {
                    m.as_mut_slice().copy_from_slice(v);
                }
                for (m, v) in w.resp.iter_mut().zip(&l.resp) {
                    m.as_mut_slice().copy_from_slice(v);
                }
                for (m, v) in w.shift.iter_mut().zip(&l.shift) {
                    m.copy_from_slice(v);
                }
                if let (Some(m), Some(v)) = (w.d.as_mut(), l.d.as_ref()) {
                    m.as_mut_slice().copy_from_slice(v);
                } else if let Some(v) = &l.d {
                    w.d = Some(nalgebra::DMatrix::from_column_slice(w.m, w.m, v));
                }
                w.e.copy_from_slice(&l.e);
            }
        }
        self.stats = s.stats;
        self.osnsp.solves = s.solves;
        self.osnsp.iterations = s.solver_iterations;
        Ok(())
    }

    /// The instant of the next pending event, in ticks (`None` when no
    /// event is left); the simulation is finished when it is past
    /// [`TimeStepping::end_tick`].
    pub fn next_event_tick(&self) -> Option<i64> {
        self.events.next_tick()
    }

    /// The tick of the next occurrence of an event source (`None` once it
    /// has none left, or for an unknown source).
    pub fn pending_tick(&self, id: SourceId) -> Option<i64> {
        self.events.pending_tick(id)
    }

    /// The input u of a relation currently held (empty when the relation
    /// takes none).
    pub fn relation_input(&self, i: InteractionId) -> &[f64] {
        &self.inters[i.0].u
    }

    /// The integration step in ticks, and t₀ in ticks.
    pub fn step_ticks(&self) -> (i64, i64) {
        (self.step_ticks, self.t0_tick)
    }

    fn check_fits(&self, s: &TimeSteppingState) -> Result<(), StateError> {
        let bad = |m: String| Err(StateError::Mismatch(m));
        if s.ticks_per_second != self.base.ticks_per_second()
            || s.t0_tick != self.t0_tick
            || s.step_ticks != self.step_ticks
        {
            return bad(format!(
                "time base {} ticks/s, t0 tick {}, step {} ticks; this simulation has {}, {}, {}",
                s.ticks_per_second,
                s.t0_tick,
                s.step_ticks,
                self.base.ticks_per_second(),
                self.t0_tick,
                self.step_ticks
            ));
        }
        if s.systems.len() != self.sys.len() || s.interactions.len() != self.inters.len() {
            return bad(format!(
                "{} systems and {} interactions; this simulation has {} and {}",
                s.systems.len(),
                s.interactions.len(),
                self.sys.len(),
                self.inters.len()
            ));
        }
        for (w, st) in self.sys.iter().zip(&s.systems) {
            if st.q.len() != w.q.len() || st.v.len() != w.v.len() || st.control.len() != w.n {
                return bad(format!("system '{}' has another dimension", w.name));
            }
            if st.q_prev.len() != w.q_prev.len() {
                return bad(format!(
                    "system '{}': the state was saved under another Lagrangian scheme \
                     (q_(k-1) of the Schatzman–Paoli scheme)",
                    w.name
                ));
            }
        }
        for (w, st) in self.inters.iter().zip(&s.interactions) {
            if st.lambda_force.len() != w.lambda_force.len() {
                return bad(format!(
                    "interaction '{}': the state was saved under another Lagrangian scheme \
                     (contact forces of the D1-minus-linear scheme)",
                    w.name
                ));
            }
            let m = w.m;
            let sizes_ok = [
                &st.y,
                &st.ydot,
                &st.lambda,
                &st.ydot_start,
                &st.y_noise,
                &st.ydot_noise,
            ]
            .iter()
            .all(|v| v.len() == m)
                && st.u.len() == w.u.len();
            if !sizes_ok {
                return bad(format!("interaction '{}' has another size", w.name));
            }
            match (&st.linearisation, w.linear) {
                (None, true) => {}
                (Some(l), false) => {
                    let mats_ok = |ms: &[nalgebra::DMatrix<f64>], vs: &[Vec<f64>]| {
                        ms.len() == vs.len() && ms.iter().zip(vs).all(|(m, v)| m.len() == v.len())
                    };
                    let ok = mats_ok(&w.out, &l.out)
                        && mats_ok(&w.inp, &l.inp)
                        && mats_ok(&w.resp, &l.resp)
                        && w.shift.len() == l.shift.len()
                        && w.shift
                            .iter()
                            .zip(&l.shift)
                            .all(|(a, b)| a.len() == b.len())
                        && l.d.as_ref().is_none_or(|d| d.len() == m * m)
                        && l.e.len() == w.e.len();
                    if !ok {
                        return bad(format!(
                            "interaction '{}' has another linearisation size",
                            w.name
                        ));
                    }
                }
                _ => {
                    return bad(format!(
                        "interaction '{}' has another kind of relation",
                        w.name
                    ))
                }
            }
        }
        if s.source_names.len() != s.schedule.sources.len() {
            return Err(StateError::Corrupt(format!(
                "{} event sources but {} names",
                s.schedule.sources.len(),
                s.source_names.len()
            )));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------

const MAGIC: &[u8; 4] = b"NSTS";
/// Version 2: postcard's format (version 1 was a hand-written one).
const VERSION: u32 = 3;

/// [`Statistics`] as plain numbers in the bytes (steps, solves, solver
/// iterations, Newton iterations).
mod stats_bytes {
    use super::Statistics;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(s: &Statistics, ser: S) -> Result<S::Ok, S::Error> {
        [s.steps, s.solves, s.solver_iterations, s.newton_iterations].serialize(ser)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Statistics, D::Error> {
        let [steps, solves, solver_iterations, newton_iterations] = <[u64; 4]>::deserialize(de)?;
        Ok(Statistics {
            steps,
            solves,
            solver_iterations,
            newton_iterations,
        })
    }
}

impl TimeSteppingState {
    /// Appends the state as bytes to `out` (format in the module
    /// documentation).
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        state_bytes::write(MAGIC, VERSION, self, out);
    }

    /// The state as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    /// Reads a state written by [`TimeSteppingState::to_bytes`]. Whether it
    /// fits a given simulation is checked by [`TimeStepping::restore_state`].
    pub fn from_bytes(bytes: &[u8]) -> Result<TimeSteppingState, StateError> {
        let state: TimeSteppingState =
            state_bytes::read(MAGIC, VERSION, "time-stepping state", bytes)?;
        if state.ticks_per_second <= 0 || state.step_ticks <= 0 {
            return Err(StateError::Corrupt(
                "a non-positive time base or step".into(),
            ));
        }
        EventManager::from_schedule(&state.schedule).map_err(StateError::Corrupt)?;
        Ok(state)
    }
}
