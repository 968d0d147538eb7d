//! The complete state of an [`EventDriven`] simulation, to save and restore
//! it (roll back across an impact, branch a run) and to write it as bytes.
//!
//! An [`EventDrivenState`] holds everything a later step reads before it
//! writes it, so that restoring a state and stepping again gives
//! bit-identical results:
//!
//! * the clock: the current instant (its float time t, which for a located
//!   event lies between ticks, and the last tick at or before it), the two
//!   event schedules (sources the integrator must stop at, and output
//!   sources served from the dense output) with their pending queues, the
//!   map of their sources to the simulation's ids and the names, the events
//!   and transitions of the last instant, the impact pending at t₀, and
//!   whether the instant was reached and not yet processed (a state saved
//!   at the left limit of an impact, between `reach` and `process`, is
//!   restored there and the impact is applied by the next `process`);
//! * the state at the instant: x (q, v of each Lagrangian system, x of each
//!   first-order one), y, ẏ, λ, the impulses of the instant;
//! * the mode: the contacts in persistent contact (in their order, which
//!   fixes the Delassus factorisation), the active rows of first-order
//!   complementarity interactions, the relay rows' modes, λ and y of the
//!   last right-hand side evaluation (the guards read them); when a mass
//!   matrix depends on q, also the factored masses and M⁻¹Hᵀ, which are
//!   refreshed lazily;
//! * the held inputs: g of each system, u of each relation;
//! * the smooth integrator *inside* its current step: t, x, the start and
//!   size of the last accepted step, the proposed next step, and the
//!   method's data that outlives a step (Dormand–Prince: f at the step
//!   start and the dense-output coefficients; TR-BDF2: f at the step
//!   start, the Jacobian, the factored iteration matrix and its step, the
//!   Hermite data of the dense output);
//! * the guards: their values and slopes at the start of the integrator
//!   step, which are armed, the located root pending in the step;
//! * the counters (steps since the last instant, events at one float time,
//!   the event statistics, the integrator's and the event LCPs' totals).
//!
//! Everything else is constant for the run (the model's matrices, constant
//! factored masses and M⁻¹Hᵀ, the settings) or scratch written before it is
//! read (stage vectors, guard values at a step end, LCP buffers). The
//! factorisations of the mode (Delassus matrix over the persistent
//! contacts, D over the active rows, C B over the sliding rows) are
//! recomputed on restore by the same code from the same data, so they are
//! bit-identical too.
//!
//! A state restores only into a simulation of a model with the same
//! structure (state dimension, interaction rows, integration method, mass
//! kind) on the same time base; anything else is a [`StateError`] and the
//! simulation is left as it was.
//!
//! Bytes ([`EventDrivenState::to_bytes`]): a magic `NSED` and a format
//! version, then the fields in postcard's serde format (module
//! `simulation::state_bytes`); truncated or foreign bytes are an error,
//! never a panic.

use serde::{Deserialize, Serialize};

use super::dynamics::{Family, RelayMode};
use super::integrator::Method;
use super::{EventDriven, EventDrivenStatistics, Root, Transition, TransitionKind, Unprocessed};
use crate::modelling::model::InteractionId;
use crate::simulation::events::{Event, EventManager, EventSchedule};
use crate::simulation::state_bytes;
use crate::simulation::StateError;

/// The smooth integrator's method data that outlives a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum MethodState {
    /// Dormand–Prince: k₁ = f at the step start, the dense-output r₁…r₅.
    DormandPrince { k1: Vec<f64>, r: Vec<Vec<f64>> },
    /// TR-BDF2: f at the step start, J, W = I − d h J factored (with its
    /// pivots and h, `None` when not factored), the Hermite data x₀, f₀,
    /// x₁, f₁, h of the last step, the Newton iterations so far.
    TrBdf2 {
        f0: Vec<f64>,
        jac: Vec<f64>,
        jac_fresh: bool,
        w: Vec<f64>,
        piv: Vec<usize>,
        w_h: Option<f64>,
        dense: [Vec<f64>; 4],
        d_h: f64,
        newton_iterations: u64,
    },
}

/// The smooth integrator's part of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct IntegratorState {
    t: f64,
    x: Vec<f64>,
    t_prev: f64,
    h_last: f64,
    h_next: f64,
    /// Accepted, rejected, Newton iterations.
    stats: [u64; 3],
    method: MethodState,
}

/// M(q)-dependent data kept when some mass matrix varies: per system the
/// factored M and its pivots, per interaction M⁻¹Hᵀ (column-major).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct VaryingMass {
    masses: Vec<(Vec<f64>, Vec<usize>)>,
    resp: Vec<Vec<Vec<f64>>>,
}

/// The mode, inputs and last multipliers of the smooth dynamics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct DynamicsState {
    contacts: Vec<usize>,
    active: Vec<bool>,
    /// Relay modes of each relay row (0 lower, 1 upper, 2 sliding), per
    /// interaction (empty for the others).
    relay_modes: Vec<Vec<u8>>,
    lam: Vec<f64>,
    y_lcs: Vec<f64>,
    /// g and whether it is non-zero, per system.
    controls: Vec<(Vec<f64>, bool)>,
    /// u per interaction.
    inputs: Vec<Vec<f64>>,
    varying_mass: Option<VaryingMass>,
    evaluations: u64,
}

/// The complete state of an [`EventDriven`] simulation (see the module
/// documentation for what it contains). Taken by
/// [`EventDriven::save_state`], put back by [`EventDriven::restore_state`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventDrivenState {
    ticks_per_second: i64,
    tick: i64,
    t: f64,
    hard: EventSchedule,
    soft: EventSchedule,
    hard_ids: Vec<usize>,
    soft_ids: Vec<usize>,
    source_names: Vec<String>,
    instant: Vec<Event>,
    /// (kind 0 impact, 1 contact, 2 take-off, 3 mode switch; interaction; row).
    transitions: Vec<(u8, usize, usize)>,
    initial_transitions: bool,
    /// The instant reached and not processed: 0 none, 1 a scheduled
    /// instant, 2 a located nonsmooth event (the state is its left limit).
    unprocessed: u8,
    xc: Vec<f64>,
    y: Vec<f64>,
    ydot: Vec<f64>,
    lam: Vec<f64>,
    impulse: Vec<f64>,
    g_start: Vec<f64>,
    gd_start: Vec<f64>,
    armed: Vec<bool>,
    pending: Option<f64>,
    steps_since_instant: u64,
    last_event_t: f64,
    same_time_events: u64,
    /// Events, impacts, accumulations, take-offs, mode switches, root
    /// iterations.
    ev_stats: [u64; 6],
    /// Event LCP solves, their iterations, events processed.
    problems: [u64; 3],
    dynamics: DynamicsState,
    integrator: IntegratorState,
}

impl EventDrivenState {
    /// The instant of the state, in seconds (a located event's float time).
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The last tick at or before the instant of the state.
    pub fn tick(&self) -> i64 {
        self.tick
    }
}

fn kind_code(k: TransitionKind) -> u8 {
    match k {
        TransitionKind::Impact => 0,
        TransitionKind::Contact => 1,
        TransitionKind::TakeOff => 2,
        TransitionKind::ModeSwitch => 3,
    }
}

fn kind_of(code: u8) -> Option<TransitionKind> {
    Some(match code {
        0 => TransitionKind::Impact,
        1 => TransitionKind::Contact,
        2 => TransitionKind::TakeOff,
        3 => TransitionKind::ModeSwitch,
        _ => return None,
    })
}

fn relay_code(m: RelayMode) -> u8 {
    match m {
        RelayMode::Lower => 0,
        RelayMode::Upper => 1,
        RelayMode::Sliding => 2,
    }
}

fn relay_of(code: u8) -> Option<RelayMode> {
    Some(match code {
        0 => RelayMode::Lower,
        1 => RelayMode::Upper,
        2 => RelayMode::Sliding,
        _ => return None,
    })
}

impl EventDriven {
    /// The complete state (see [`EventDrivenState`]).
    pub fn save_state(&self) -> EventDrivenState {
        let ig = &self.ig;
        let method = match &ig.method {
            Method::Dopri(m) => MethodState::DormandPrince {
                k1: m.k[0].clone(),
                r: m.r.to_vec(),
            },
            Method::TrBdf2(m) => MethodState::TrBdf2 {
                f0: m.f0.clone(),
                jac: m.jac.clone(),
                jac_fresh: m.jac_fresh,
                w: m.w.clone(),
                piv: m.piv.clone(),
                w_h: (!m.w_h.is_nan()).then_some(m.w_h),
                dense: [
                    m.d_x0.clone(),
                    m.d_f0.clone(),
                    m.d_x1.clone(),
                    m.d_f1.clone(),
                ],
                d_h: m.d_h,
                newton_iterations: m.newton_iterations,
            },
        };
        let s = &self.ev_stats;
        EventDrivenState {
            ticks_per_second: self.base.ticks_per_second(),
            tick: self.tick,
            t: self.t,
            hard: self.hard.schedule(),
            soft: self.soft.schedule(),
            hard_ids: self.hard_ids.clone(),
            soft_ids: self.soft_ids.clone(),
            source_names: self.source_names.clone(),
            instant: self.instant.clone(),
            transitions: self
                .transitions
                .iter()
                .map(|tr| (kind_code(tr.kind), tr.interaction.0, tr.row))
                .collect(),
            initial_transitions: self.initial_transitions,
            unprocessed: match self.unprocessed {
                None => 0,
                Some(Unprocessed::Scheduled) => 1,
                Some(Unprocessed::NonSmooth) => 2,
            },
            xc: self.xc.clone(),
            y: self.y.clone(),
            ydot: self.ydot.clone(),
            lam: self.lam.clone(),
            impulse: self.impulse.clone(),
            g_start: self.g_start.clone(),
            gd_start: self.gd_start.clone(),
            armed: self.armed.clone(),
            pending: self.pending.map(|r| r.t),
            steps_since_instant: self.steps_since_instant,
            last_event_t: self.last_event_t,
            same_time_events: self.same_time_events,
            ev_stats: [
                s.events,
                s.impacts,
                s.accumulations,
                s.take_offs,
                s.mode_switches,
                s.root_iterations,
            ],
            problems: [
                self.problems.solves,
                self.problems.iterations,
                self.problems.event_count,
            ],
            dynamics: self.dynamics_state(),
            integrator: IntegratorState {
                t: ig.t,
                x: ig.x.clone(),
                t_prev: ig.t_prev,
                h_last: ig.h_last,
                h_next: ig.h_next,
                stats: [
                    ig.stats.accepted,
                    ig.stats.rejected,
                    ig.stats.newton_iterations,
                ],
                method,
            },
        }
    }

    /// Puts back a state taken by [`EventDriven::save_state`] from this
    /// simulation, or from one of a model of the same structure on the same
    /// time base. Nothing is changed when the state does not fit.
    pub fn restore_state(&mut self, s: &EventDrivenState) -> Result<(), StateError> {
        self.check_fits(s)?;
        let hard = EventManager::from_schedule(&s.hard).map_err(StateError::Corrupt)?;
        let soft = EventManager::from_schedule(&s.soft).map_err(StateError::Corrupt)?;
        let unprocessed = match s.unprocessed {
            0 => None,
            1 => Some(Unprocessed::Scheduled),
            2 => Some(Unprocessed::NonSmooth),
            k => return Err(StateError::Corrupt(format!("unprocessed instant kind {k}"))),
        };
        let transitions = s
            .transitions
            .iter()
            .map(|&(k, i, row)| {
                Ok(Transition {
                    kind: kind_of(k)
                        .ok_or_else(|| StateError::Corrupt(format!("transition kind {k}")))?,
                    interaction: InteractionId(i),
                    row,
                })
            })
            .collect::<Result<Vec<_>, StateError>>()?;
        let relay_modes = s
            .dynamics
            .relay_modes
            .iter()
            .map(|m| {
                m.iter()
                    .map(|&c| {
                        relay_of(c).ok_or_else(|| StateError::Corrupt(format!("relay mode {c}")))
                    })
                    .collect::<Result<Vec<_>, StateError>>()
            })
            .collect::<Result<Vec<_>, StateError>>()?;

        // The mode first: its factorisations can fail only for a state of
        // another model; then the mode of before is put back and nothing
        // else has been touched.
        let before = self.dynamics_state();
        if let Err(e) = self.restore_mode(&s.dynamics, s.t, &relay_modes) {
            let modes = self.relay_modes();
            let _ = self.restore_mode(&before, self.t, &modes);
            return Err(e);
        }

        self.hard = hard;
        self.soft = soft;
        self.hard_ids.clone_from(&s.hard_ids);
        self.soft_ids.clone_from(&s.soft_ids);
        self.source_names.clone_from(&s.source_names);
        self.tick = s.tick;
        self.t = s.t;
        self.instant.clone_from(&s.instant);
        self.transitions = transitions;
        self.initial_transitions = s.initial_transitions;
        self.unprocessed = unprocessed;
        self.xc.copy_from_slice(&s.xc);
        self.y.copy_from_slice(&s.y);
        self.ydot.copy_from_slice(&s.ydot);
        self.lam.copy_from_slice(&s.lam);
        self.impulse.copy_from_slice(&s.impulse);
        self.g_start.copy_from_slice(&s.g_start);
        self.gd_start.copy_from_slice(&s.gd_start);
        self.armed.copy_from_slice(&s.armed);
        self.pending = s.pending.map(|t| Root { t });
        self.steps_since_instant = s.steps_since_instant;
        self.last_event_t = s.last_event_t;
        self.same_time_events = s.same_time_events;
        let [events, impacts, accumulations, take_offs, mode_switches, root_iterations] =
            s.ev_stats;
        self.ev_stats = EventDrivenStatistics {
            events,
            impacts,
            accumulations,
            take_offs,
            mode_switches,
            root_iterations,
            ..self.ev_stats
        };
        let [solves, iterations, event_count] = s.problems;
        self.problems.solves = solves;
        self.problems.iterations = iterations;
        self.problems.event_count = event_count;
        self.dynamics.evaluations = s.dynamics.evaluations;

        let (ig, st) = (&mut self.ig, &s.integrator);
        ig.t = st.t;
        ig.x.copy_from_slice(&st.x);
        ig.t_prev = st.t_prev;
        ig.h_last = st.h_last;
        ig.h_next = st.h_next;
        ig.stats.accepted = st.stats[0];
        ig.stats.rejected = st.stats[1];
        ig.stats.newton_iterations = st.stats[2];
        match (&mut ig.method, &st.method) {
            (Method::Dopri(m), MethodState::DormandPrince { k1, r }) => {
                m.k[0].copy_from_slice(k1);
                for (dst, src) in m.r.iter_mut().zip(r) {
                    dst.copy_from_slice(src);
                }
            }
            (
                Method::TrBdf2(m),
                MethodState::TrBdf2 {
                    f0,
                    jac,
                    jac_fresh,
                    w,
                    piv,
                    w_h,
                    dense,
                    d_h,
                    newton_iterations,
                },
            ) => {
                m.f0.copy_from_slice(f0);
                m.jac.copy_from_slice(jac);
                m.jac_fresh = *jac_fresh;
                m.w.copy_from_slice(w);
                m.piv.copy_from_slice(piv);
                m.w_h = w_h.unwrap_or(f64::NAN);
                m.d_x0.copy_from_slice(&dense[0]);
                m.d_f0.copy_from_slice(&dense[1]);
                m.d_x1.copy_from_slice(&dense[2]);
                m.d_f1.copy_from_slice(&dense[3]);
                m.d_h = *d_h;
                m.newton_iterations = *newton_iterations;
            }
            // Excluded by check_fits.
            _ => unreachable!("integration method checked"),
        }
        Ok(())
    }

    /// The mode, inputs and last multipliers of the dynamics.
    fn dynamics_state(&self) -> DynamicsState {
        let d = &self.dynamics;
        DynamicsState {
            contacts: d.contacts.clone(),
            active: d.active.clone(),
            relay_modes: self
                .relay_modes()
                .iter()
                .map(|m| m.iter().map(|&m| relay_code(m)).collect())
                .collect(),
            lam: d.lam.clone(),
            y_lcs: d.y_lcs.clone(),
            controls: d
                .sys
                .iter()
                .map(|b| (b.control.clone(), b.has_control))
                .collect(),
            inputs: d.inters.iter().map(|w| w.u.clone()).collect(),
            varying_mass: (!d.mass_const).then(|| VaryingMass {
                masses: d
                    .sys
                    .iter()
                    .map(|b| (b.mass.clone(), b.piv.clone()))
                    .collect(),
                resp: d
                    .inters
                    .iter()
                    .map(|w| w.resp.iter().map(|m| m.as_slice().to_vec()).collect())
                    .collect(),
            }),
            evaluations: d.evaluations,
        }
    }

    /// The relay rows' modes per interaction (empty for the others).
    fn relay_modes(&self) -> Vec<Vec<RelayMode>> {
        self.dynamics
            .inters
            .iter()
            .map(|w| match w.family {
                Family::Relay => w.relay_mode.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Sets the mode, inputs and multipliers of the dynamics from a state
    /// (sizes already checked), refactoring what the mode factors.
    fn restore_mode(
        &mut self,
        ds: &DynamicsState,
        t: f64,
        relay_modes: &[Vec<RelayMode>],
    ) -> Result<(), StateError> {
        let d = &mut self.dynamics;
        let bad = |e: crate::simulation::SimulationError| {
            StateError::Mismatch(format!("the mode of the state cannot be set here: {e}"))
        };
        for (b, (g, has)) in d.sys.iter_mut().zip(&ds.controls) {
            b.control.copy_from_slice(g);
            b.has_control = *has;
        }
        for (w, u) in d.inters.iter_mut().zip(&ds.inputs) {
            w.u.copy_from_slice(u);
        }
        if let Some(vm) = &ds.varying_mass {
            for (b, (m, p)) in d.sys.iter_mut().zip(&vm.masses) {
                b.mass.copy_from_slice(m);
                b.piv.copy_from_slice(p);
            }
            for (w, resp) in d.inters.iter_mut().zip(&vm.resp) {
                for (m, v) in w.resp.iter_mut().zip(resp) {
                    m.as_mut_slice().copy_from_slice(v);
                }
            }
        }
        d.set_contacts(&ds.contacts, t).map_err(bad)?;
        for k in 0..d.inters.len() {
            let (row0, m, family) = (d.inters[k].row0, d.inters[k].m, d.inters[k].family);
            match family {
                Family::Lcs => {
                    let active = ds.active[row0..row0 + m].to_vec();
                    d.set_lcs_mode(k, &active, t).map_err(bad)?;
                }
                Family::Relay => d.set_relay_mode(k, &relay_modes[k], t).map_err(bad)?,
                Family::Contact { .. } => {}
            }
        }
        d.active.copy_from_slice(&ds.active);
        d.lam.copy_from_slice(&ds.lam);
        d.y_lcs.copy_from_slice(&ds.y_lcs);
        Ok(())
    }

    fn check_fits(&self, s: &EventDrivenState) -> Result<(), StateError> {
        let bad = |m: String| Err(StateError::Mismatch(m));
        let corrupt = |m: String| Err(StateError::Corrupt(m));
        if s.ticks_per_second != self.base.ticks_per_second() {
            return bad(format!(
                "time base {} ticks/s; this simulation has {}",
                s.ticks_per_second,
                self.base.ticks_per_second()
            ));
        }
        let d = &self.dynamics;
        let (n, rows) = (d.dim, d.rows);
        let st = &s.integrator;
        let vec_sizes = [
            (s.xc.len(), n),
            (st.x.len(), n),
            (s.y.len(), rows),
            (s.ydot.len(), rows),
            (s.lam.len(), rows),
            (s.impulse.len(), rows),
            (s.g_start.len(), rows),
            (s.gd_start.len(), rows),
            (s.armed.len(), rows),
            (s.dynamics.active.len(), rows),
            (s.dynamics.lam.len(), rows),
            (s.dynamics.y_lcs.len(), rows),
        ];
        if vec_sizes.iter().any(|(a, b)| a != b) {
            return bad(format!(
                "another state size or number of interaction rows; this simulation has {n} and {rows}"
            ));
        }
        let ds = &s.dynamics;
        if ds.controls.len() != d.sys.len()
            || ds
                .controls
                .iter()
                .zip(&d.sys)
                .any(|((g, _), b)| g.len() != b.control.len())
        {
            return bad("another number or size of systems".into());
        }
        if ds.inputs.len() != d.inters.len()
            || ds.relay_modes.len() != d.inters.len()
            || d.inters.iter().enumerate().any(|(k, w)| {
                ds.inputs[k].len() != w.u.len()
                    || ds.relay_modes[k].len() != if w.family == Family::Relay { w.m } else { 0 }
            })
        {
            return bad("another number or kind of interactions".into());
        }
        if let Some(&r) = ds
            .contacts
            .iter()
            .find(|&&r| r >= rows || !d.is_contact_row(r))
        {
            return bad(format!(
                "row {r} in persistent contact is not a contact row here"
            ));
        }
        match (&ds.varying_mass, d.mass_const) {
            (None, true) => {}
            (Some(vm), false) => {
                let ok = vm.masses.len() == d.sys.len()
                    && vm
                        .masses
                        .iter()
                        .zip(&d.sys)
                        .all(|((m, p), b)| m.len() == b.mass.len() && p.len() == b.piv.len())
                    && vm.resp.len() == d.inters.len()
                    && vm.resp.iter().zip(&d.inters).all(|(r, w)| {
                        r.len() == w.resp.len()
                            && r.iter().zip(&w.resp).all(|(v, m)| v.len() == m.len())
                    });
                if !ok {
                    return bad("other mass matrix sizes".into());
                }
            }
            _ => return bad("another kind of mass matrix (constant or varying)".into()),
        }
        match (&self.ig.method, &st.method) {
            (Method::Dopri(_), MethodState::DormandPrince { k1, r }) => {
                if k1.len() != n || r.len() != 5 || r.iter().any(|v| v.len() != n) {
                    return bad("other Dormand–Prince data sizes".into());
                }
            }
            (
                Method::TrBdf2(_),
                MethodState::TrBdf2 {
                    f0,
                    jac,
                    w,
                    piv,
                    dense,
                    ..
                },
            ) => {
                if f0.len() != n
                    || jac.len() != n * n
                    || w.len() != n * n
                    || piv.len() != n
                    || dense.iter().any(|v| v.len() != n)
                {
                    return bad("other TR-BDF2 data sizes".into());
                }
            }
            _ => return bad("another integration method".into()),
        }
        let n_names = s.source_names.len();
        if s.hard_ids.len() != s.hard.sources.len()
            || s.soft_ids.len() != s.soft.sources.len()
            || s.hard_ids.iter().chain(&s.soft_ids).any(|&i| i >= n_names)
        {
            return corrupt(format!(
                "{} + {} event sources for {n_names} names",
                s.hard_ids.len(),
                s.soft_ids.len()
            ));
        }
        if let Some(&(_, i, row)) = s
            .transitions
            .iter()
            .find(|&&(_, i, row)| i >= d.inters.len() || row >= d.inters[i].m)
        {
            return bad(format!("a transition of interaction {i}, row {row}"));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------

const MAGIC: &[u8; 4] = b"NSED";
/// Version 2: with the instant reached and not processed.
const VERSION: u32 = 2;

impl EventDrivenState {
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

    /// Reads a state written by [`EventDrivenState::to_bytes`]. Whether it
    /// fits a given simulation is checked by [`EventDriven::restore_state`].
    pub fn from_bytes(bytes: &[u8]) -> Result<EventDrivenState, StateError> {
        let state: EventDrivenState =
            state_bytes::read(MAGIC, VERSION, "event-driven state", bytes)?;
        if state.ticks_per_second <= 0 {
            return Err(StateError::Corrupt("a non-positive time base".into()));
        }
        EventManager::from_schedule(&state.hard).map_err(StateError::Corrupt)?;
        EventManager::from_schedule(&state.soft).map_err(StateError::Corrupt)?;
        if state.unprocessed > 2 {
            return Err(StateError::Corrupt(
                "an unknown unprocessed instant kind".into(),
            ));
        }
        if state.transitions.iter().any(|t| kind_of(t.0).is_none())
            || state
                .dynamics
                .relay_modes
                .iter()
                .flatten()
                .any(|&c| relay_of(c).is_none())
        {
            return Err(StateError::Corrupt(
                "an unknown transition kind or relay mode".into(),
            ));
        }
        Ok(state)
    }
}
