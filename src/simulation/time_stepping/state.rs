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
//! * per system: q (or x), v, and the held input g;
//! * per interaction: y, ẏ, λ (which is also the warm start of the next
//!   one-step solve), ẏ at the start of the step, the rounding bounds of y
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
//! Bytes ([`TimeSteppingState::to_bytes`]): little-endian, a magic `NSTS`
//! and a format version, then the fields above with their lengths; reading
//! checks every length and value, so truncated or foreign bytes are an
//! error, never a panic.

use thiserror::Error;

use super::{Statistics, TimeStepping};
use crate::modelling::model::InteractionId;
use crate::simulation::events::{Event, EventKind, EventManager, EventSchedule, SourceId};

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
#[derive(Debug, Clone, PartialEq)]
struct SystemState {
    q: Vec<f64>,
    v: Vec<f64>,
    control: Vec<f64>,
    has_control: bool,
}

/// Linearisation of a nonlinear relation (kept with the state, see the
/// module documentation).
#[derive(Debug, Clone, PartialEq)]
struct Linearisation {
    out: Vec<Vec<f64>>,
    inp: Vec<Vec<f64>>,
    resp: Vec<Vec<f64>>,
    shift: Vec<Vec<f64>>,
    d: Option<Vec<f64>>,
    e: Vec<f64>,
}

/// Per-interaction part of a state.
#[derive(Debug, Clone, PartialEq)]
struct InteractionState {
    y: Vec<f64>,
    ydot: Vec<f64>,
    lambda: Vec<f64>,
    ydot_start: Vec<f64>,
    y_noise: Vec<f64>,
    ydot_noise: Vec<f64>,
    u: Vec<f64>,
    active: bool,
    linearisation: Option<Linearisation>,
}

/// The complete state of a [`TimeStepping`] (see the module documentation
/// for what it contains). Taken by [`TimeStepping::save_state`], put back by
/// [`TimeStepping::restore_state`].
#[derive(Debug, Clone, PartialEq)]
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
                    ydot_start: w.ydot_start.clone(),
                    y_noise: w.y_noise.clone(),
                    ydot_noise: w.ydot_noise.clone(),
                    u: w.u.clone(),
                    active: w.active,
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
            st.v.clone_from(&w.v);
            st.control.clone_from(&w.control);
            st.has_control = w.has_control;
        }
        for (st, w) in s.interactions.iter_mut().zip(&self.inters) {
            st.y.clone_from(&w.y);
            st.ydot.clone_from(&w.ydot);
            st.lambda.clone_from(&w.lambda);
            st.ydot_start.clone_from(&w.ydot_start);
            st.y_noise.clone_from(&w.y_noise);
            st.ydot_noise.clone_from(&w.ydot_noise);
            st.u.clone_from(&w.u);
            st.active = w.active;
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
        self.events.set_frequent(SourceId(0), SourceId(1));
        self.tick = s.tick;
        self.instant.clear();
        self.instant.extend_from_slice(&s.instant);
        self.source_names.clone_from(&s.source_names);
        for (w, st) in self.sys.iter_mut().zip(&s.systems) {
            w.q.copy_from_slice(&st.q);
            w.v.copy_from_slice(&st.v);
            w.control.copy_from_slice(&st.control);
            w.has_control = st.has_control;
        }
        for (w, st) in self.inters.iter_mut().zip(&s.interactions) {
            w.y.copy_from_slice(&st.y);
            w.ydot.copy_from_slice(&st.ydot);
            w.lambda.copy_from_slice(&st.lambda);
            w.ydot_start.copy_from_slice(&st.ydot_start);
            w.y_noise.copy_from_slice(&st.y_noise);
            w.ydot_noise.copy_from_slice(&st.ydot_noise);
            w.u.copy_from_slice(&st.u);
            w.active = st.active;
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
        }
        for (w, st) in self.inters.iter().zip(&s.interactions) {
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
const VERSION: u32 = 1;

fn kind_code(k: EventKind) -> u8 {
    match k {
        EventKind::TimeDiscretisation => 0,
        EventKind::NonSmooth => 1,
        EventKind::Sensor => 2,
        EventKind::Observer => 3,
        EventKind::Actuator => 4,
        EventKind::Output => 5,
    }
}

fn kind_of(c: u8) -> Result<EventKind, StateError> {
    Ok(match c {
        0 => EventKind::TimeDiscretisation,
        1 => EventKind::NonSmooth,
        2 => EventKind::Sensor,
        3 => EventKind::Observer,
        4 => EventKind::Actuator,
        5 => EventKind::Output,
        _ => return Err(StateError::Corrupt(format!("unknown event kind {c}"))),
    })
}

/// Appends little-endian values to a byte vector.
pub(crate) struct Writer<'a>(pub(crate) &'a mut Vec<u8>);

impl Writer<'_> {
    pub(crate) fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    pub(crate) fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn i64(&mut self, x: i64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub(crate) fn f64s(&mut self, v: &[f64]) {
        self.len(v.len());
        for x in v {
            self.0.extend_from_slice(&x.to_bits().to_le_bytes());
        }
    }
    pub(crate) fn f64s_list(&mut self, v: &[Vec<f64>]) {
        self.len(v.len());
        for x in v {
            self.f64s(x);
        }
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// Reads what [`Writer`] wrote, checking every length.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], StateError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                StateError::Corrupt(format!(
                    "truncated: {n} more bytes needed at byte {} of {}",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, StateError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn bool(&mut self) -> Result<bool, StateError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(StateError::Corrupt(format!("flag {b} is neither 0 nor 1"))),
        }
    }
    pub(crate) fn u64(&mut self) -> Result<u64, StateError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, StateError> {
        Ok(self.u64()? as i64)
    }
    /// A length of items of `item` bytes each, checked against what is left.
    pub(crate) fn len(&mut self, item: usize) -> Result<usize, StateError> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n.saturating_mul(item.max(1) as u64) > left {
            return Err(StateError::Corrupt(format!(
                "a length of {n} exceeds the {left} bytes left"
            )));
        }
        Ok(n as usize)
    }
    pub(crate) fn f64s(&mut self) -> Result<Vec<f64>, StateError> {
        let n = self.len(8)?;
        (0..n)
            .map(|_| Ok(f64::from_bits(self.u64()?)))
            .collect::<Result<Vec<f64>, StateError>>()
    }
    pub(crate) fn f64s_list(&mut self) -> Result<Vec<Vec<f64>>, StateError> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64s()).collect()
    }
    pub(crate) fn str(&mut self) -> Result<String, StateError> {
        let n = self.len(1)?;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| StateError::Corrupt("a name is not UTF-8".into()))
    }
}

impl TimeSteppingState {
    /// Appends the state as bytes to `out` (format in the module
    /// documentation).
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        let mut w = Writer(out);
        w.0.extend_from_slice(MAGIC);
        w.0.extend_from_slice(&VERSION.to_le_bytes());
        w.i64(self.ticks_per_second);
        w.i64(self.t0_tick);
        w.i64(self.step_ticks);
        w.i64(self.tick);
        w.len(self.schedule.sources.len());
        for &(offset, period, count) in &self.schedule.sources {
            w.i64(offset);
            w.i64(period.unwrap_or(0));
            w.i64(count);
        }
        w.len(self.schedule.queue.len());
        for &(tick, kind, id) in &self.schedule.queue {
            w.i64(tick);
            w.u8(kind_code(kind));
            w.len(id);
        }
        w.len(self.instant.len());
        for e in &self.instant {
            w.i64(e.tick);
            w.u8(kind_code(e.kind));
            w.len(e.source.0);
        }
        w.len(self.source_names.len());
        for n in &self.source_names {
            w.str(n);
        }
        w.len(self.systems.len());
        for s in &self.systems {
            w.f64s(&s.q);
            w.f64s(&s.v);
            w.f64s(&s.control);
            w.u8(s.has_control as u8);
        }
        w.len(self.interactions.len());
        for i in &self.interactions {
            for v in [
                &i.y,
                &i.ydot,
                &i.lambda,
                &i.ydot_start,
                &i.y_noise,
                &i.ydot_noise,
                &i.u,
            ] {
                w.f64s(v);
            }
            w.u8(i.active as u8);
            match &i.linearisation {
                None => w.u8(0),
                Some(l) => {
                    w.u8(1);
                    w.f64s_list(&l.out);
                    w.f64s_list(&l.inp);
                    w.f64s_list(&l.resp);
                    w.f64s_list(&l.shift);
                    match &l.d {
                        None => w.u8(0),
                        Some(d) => {
                            w.u8(1);
                            w.f64s(d);
                        }
                    }
                    w.f64s(&l.e);
                }
            }
        }
        for x in [
            self.stats.steps,
            self.stats.solves,
            self.stats.solver_iterations,
            self.stats.newton_iterations,
            self.solves,
            self.solver_iterations,
        ] {
            w.u64(x);
        }
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
        let mut r = Reader { bytes, at: 0 };
        if r.take(4)? != MAGIC {
            return Err(StateError::Corrupt("no NSTS header".into()));
        }
        let version = u32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(StateError::Corrupt(format!(
                "format version {version}, this program reads {VERSION}"
            )));
        }
        let ticks_per_second = r.i64()?;
        let t0_tick = r.i64()?;
        let step_ticks = r.i64()?;
        let tick = r.i64()?;
        if ticks_per_second <= 0 || step_ticks <= 0 {
            return Err(StateError::Corrupt(
                "a non-positive time base or step".into(),
            ));
        }
        let n = r.len(24)?;
        let mut sources = Vec::with_capacity(n);
        for _ in 0..n {
            let offset = r.i64()?;
            let period = r.i64()?;
            let count = r.i64()?;
            sources.push((offset, (period != 0).then_some(period), count));
        }
        let n = r.len(17)?;
        let mut queue = Vec::with_capacity(n);
        for _ in 0..n {
            let tick = r.i64()?;
            let kind = kind_of(r.u8()?)?;
            queue.push((tick, kind, r.u64()? as usize));
        }
        let n = r.len(17)?;
        let mut instant = Vec::with_capacity(n);
        for _ in 0..n {
            let tick = r.i64()?;
            let kind = kind_of(r.u8()?)?;
            instant.push(Event {
                tick,
                kind,
                source: SourceId(r.u64()? as usize),
            });
        }
        let n = r.len(8)?;
        let source_names = (0..n).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
        let n = r.len(25)?;
        let mut systems = Vec::with_capacity(n);
        for _ in 0..n {
            systems.push(SystemState {
                q: r.f64s()?,
                v: r.f64s()?,
                control: r.f64s()?,
                has_control: r.bool()?,
            });
        }
        let n = r.len(58)?;
        let mut interactions = Vec::with_capacity(n);
        for _ in 0..n {
            let y = r.f64s()?;
            let ydot = r.f64s()?;
            let lambda = r.f64s()?;
            let ydot_start = r.f64s()?;
            let y_noise = r.f64s()?;
            let ydot_noise = r.f64s()?;
            let u = r.f64s()?;
            let active = r.bool()?;
            let linearisation = if r.bool()? {
                let out = r.f64s_list()?;
                let inp = r.f64s_list()?;
                let resp = r.f64s_list()?;
                let shift = r.f64s_list()?;
                let d = if r.bool()? { Some(r.f64s()?) } else { None };
                let e = r.f64s()?;
                Some(Linearisation {
                    out,
                    inp,
                    resp,
                    shift,
                    d,
                    e,
                })
            } else {
                None
            };
            interactions.push(InteractionState {
                y,
                ydot,
                lambda,
                ydot_start,
                y_noise,
                ydot_noise,
                u,
                active,
                linearisation,
            });
        }
        let stats = Statistics {
            steps: r.u64()?,
            solves: r.u64()?,
            solver_iterations: r.u64()?,
            newton_iterations: r.u64()?,
        };
        let solves = r.u64()?;
        let solver_iterations = r.u64()?;
        if r.at != bytes.len() {
            return Err(StateError::Corrupt(format!(
                "{} bytes after the end of the state",
                bytes.len() - r.at
            )));
        }
        let state = TimeSteppingState {
            ticks_per_second,
            t0_tick,
            step_ticks,
            tick,
            schedule: EventSchedule { sources, queue },
            instant,
            source_names,
            systems,
            interactions,
            stats,
            solves,
            solver_iterations,
        };
        EventManager::from_schedule(&state.schedule).map_err(StateError::Corrupt)?;
        Ok(state)
    }
}
