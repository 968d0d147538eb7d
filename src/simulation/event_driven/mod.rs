//! Event-driven simulation: the smooth dynamics of the current mode are
//! integrated with error control and dense output, guard functions are
//! watched at every step, and the nonsmooth events they reveal (impacts,
//! take-offs, mode switches) are located to the last bit, processed by the
//! impact law or a mode LCP, and the integration restarts. See
//! docs/event-driven.md for the equations.
//!
//! Why the integrators are written here rather than taken from a crate:
//! the strategy needs (1) to stop exactly at arbitrary instants of the
//! exact clock (sensors, actuators) and interpolate others (outputs),
//! (2) guard roots located to adjacent floating-point numbers on the dense
//! output (the bouncing-ball test asks 40 impact times to 1e-12, and an
//! error in one impact time is amplified about twentyfold in the later
//! ones), (3) a restart after every event that allocates nothing, with a
//! state whose algebraic part (the multipliers) changes with the mode.
//! diffsol, the best-kept Rust ODE crate with root finding, brings its own
//! nalgebra and faer versions (different from ours, so both would be
//! compiled twice), builds its problems around its own closures and
//! matrices, and reports roots to its step tolerance; adapting it costs more
//! than the two methods here (about 800 lines with their tests).
//!
//! The API mirrors [`crate::simulation::TimeStepping`]: `with_times`,
//! `add_event_source`, `step`, `last_events`, the state accessors and the
//! inputs, so that a controller can drive either strategy.

mod access;
mod dopri;
mod dynamics;
mod guards;
mod impact;
mod integrator;
mod roots;
mod settings;
mod state;
mod transitions;
mod trbdf2;

use std::sync::Arc;

pub use integrator::IntegratorStatistics;
pub use settings::{EventDrivenSettings, OdeMethod};
pub use state::EventDrivenState;

use self::dynamics::{Dynamics, Family};
use self::impact::EventProblems;
use self::integrator::{Integrator, OdeRhs};
use super::clock::{run_clock, TimeBase};
use super::error::SimulationError;
use super::events::{Event, EventKind, EventManager, SourceId};
use super::time_stepping::StepOutcome;
use crate::modelling::model::{InteractionId, Model};

/// What happened to one interaction at a nonsmooth event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionKind {
    /// An impact: the impact law gave an impulse P > 0.
    Impact,
    /// The contact became persistent (y = 0, ẏ = 0, λ ≥ 0): after a plastic
    /// impact, the accumulation rule, or from rest.
    Contact,
    /// The contact force reached zero and the contact opens.
    TakeOff,
    /// A first-order complementarity interaction changed its active set,
    /// or a relay interaction its modes (bound or sliding).
    ModeSwitch,
}

impl TransitionKind {
    /// Lowercase name, as written in event logs.
    pub fn as_str(self) -> &'static str {
        match self {
            TransitionKind::Impact => "impact",
            TransitionKind::Contact => "contact",
            TransitionKind::TakeOff => "take_off",
            TransitionKind::ModeSwitch => "mode_switch",
        }
    }
}

/// One transition of a nonsmooth event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// What happened.
    pub kind: TransitionKind,
    /// To which interaction.
    pub interaction: InteractionId,
    /// Which of its rows (0 for a mode switch, which concerns the whole
    /// interaction).
    pub row: usize,
}

/// Counters of an event-driven run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventDrivenStatistics {
    /// The smooth integrator's counters.
    pub integrator: IntegratorStatistics,
    /// Right-hand side evaluations (steps, dense-output guards, outputs).
    pub rhs_evaluations: u64,
    /// Nonsmooth events processed.
    pub events: u64,
    /// Impacts (one per impacted contact).
    pub impacts: u64,
    /// Impacts made plastic by the accumulation rule.
    pub accumulations: u64,
    /// Take-offs.
    pub take_offs: u64,
    /// First-order mode switches (complementarity and relay).
    pub mode_switches: u64,
    /// Guard evaluations while locating roots.
    pub root_iterations: u64,
}

/// A located root pending in the current integrator step.
#[derive(Debug, Clone, Copy)]
struct Root {
    t: f64,
}

/// An instant reached by [`EventDriven::reach`] and not yet processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unprocessed {
    /// An instant of the schedule: nothing of the plant's to apply.
    Scheduled,
    /// A located nonsmooth event: the impact law and the new mode are
    /// still to be applied (the state is its left limit x(t*)⁻).
    NonSmooth,
}

/// An event-driven simulation of a [`Model`]; the model is shared and
/// never changed, the simulation owns the state.
pub struct EventDriven {
    model: Arc<Model>,
    settings: EventDrivenSettings,
    base: TimeBase,
    end_tick: i64,
    /// The last tick at or before the current instant.
    tick: i64,
    /// The current instant, in seconds (a tick's time, or a located event).
    t: f64,
    hard: EventManager,
    soft: EventManager,
    hard_ids: Vec<usize>,
    soft_ids: Vec<usize>,
    source_names: Vec<String>,
    nonsmooth_source: SourceId,
    instant: Vec<Event>,
    scratch_events: Vec<Event>,
    transitions: Vec<Transition>,
    initial_transitions: bool,
    dynamics: Dynamics,
    ig: Integrator,
    problems: EventProblems,
    /// State at the current instant.
    xc: Vec<f64>,
    y: Vec<f64>,
    ydot: Vec<f64>,
    lam: Vec<f64>,
    impulse: Vec<f64>,
    /// Guards: the rows watched, their values at the start of the current
    /// integrator step, and whether each has been seen positive since the
    /// last event (only those can trigger one).
    is_guard: Vec<bool>,
    g_start: Vec<f64>,
    gd_start: Vec<f64>,
    g_end: Vec<f64>,
    gd_end: Vec<f64>,
    armed: Vec<bool>,
    pending: Option<Root>,
    /// The instant reached and not yet processed (between `reach` and
    /// `process`).
    unprocessed: Option<Unprocessed>,
    fbuf: Vec<f64>,
    xbuf: Vec<f64>,
    gx: Vec<f64>,
    steps_since_instant: u64,
    last_event_t: f64,
    same_time_events: u64,
    ev_stats: EventDrivenStatistics,
}

impl EventDriven {
    /// Prepares a simulation: checks the settings, builds the clock, finds
    /// the initial mode (and applies an impact at t₀ when a closed contact
    /// approaches).
    pub fn new(
        model: impl Into<Arc<Model>>,
        settings: EventDrivenSettings,
    ) -> Result<Self, SimulationError> {
        Self::with_times(model, settings, &[])
    }

    /// As [`EventDriven::new`], on a time base in which the `extra` times
    /// (periods, offsets and delays of the event sources that will be added,
    /// in seconds) are whole numbers of ticks.
    pub fn with_times(
        model: impl Into<Arc<Model>>,
        settings: EventDrivenSettings,
        extra: &[(&'static str, f64)],
    ) -> Result<Self, SimulationError> {
        let model = model.into();
        settings.validate()?;
        if model.systems().is_empty() {
            return Err(SimulationError::BadArgument(
                "the model has no dynamical system".into(),
            ));
        }
        let (base, t0_tick, out_ticks, end_tick) = run_clock(
            settings.t0,
            settings.t_end,
            ("output_step", settings.output_step),
            extra,
        )?;
        let hard = EventManager::new();
        let mut soft = EventManager::new();
        soft.add_periodic(EventKind::Output, t0_tick, out_ticks)?;
        let mut soft_ids = vec![0];
        let mut source_names = vec!["output".to_string(), "nonsmooth".to_string()];
        if (end_tick - t0_tick) % out_ticks != 0 {
            soft.add_once(EventKind::Output, end_tick);
            soft_ids.push(2);
            source_names.push("end".into());
        }
        let dynamics = Dynamics::new(Arc::clone(&model))?;
        let n = dynamics.dim;
        let rows = dynamics.rows;
        let ig = Integrator::new(
            settings.method,
            n,
            settings.rtol,
            settings.atol,
            settings.max_step,
        );
        let problems = EventProblems::new(&settings.solver, settings.solver_settings)?;
        let is_guard = (0..rows)
            .map(|r| {
                matches!(
                    dynamics.inters[dynamics.row_inter[r]].family,
                    Family::Contact { .. } | Family::Lcs | Family::Relay
                )
            })
            .collect();
        let t0 = settings.t0;
        let mut sim = EventDriven {
            model,
            settings,
            base,
            end_tick,
            tick: t0_tick,
            t: t0,
            hard,
            soft,
            hard_ids: Vec::new(),
            soft_ids,
            source_names,
            nonsmooth_source: SourceId(1),
            instant: Vec::with_capacity(8),
            scratch_events: Vec::with_capacity(8),
            transitions: Vec::new(),
            initial_transitions: false,
            dynamics,
            ig,
            problems,
            xc: vec![0.0; n],
            y: vec![0.0; rows],
            ydot: vec![0.0; rows],
            lam: vec![0.0; rows],
            impulse: vec![0.0; rows],
            is_guard,
            g_start: vec![0.0; rows],
            gd_start: vec![0.0; rows],
            g_end: vec![0.0; rows],
            gd_end: vec![0.0; rows],
            armed: vec![false; rows],
            pending: None,
            unprocessed: None,
            fbuf: vec![0.0; n],
            xbuf: vec![0.0; n],
            gx: vec![0.0; n],
            steps_since_instant: 0,
            last_event_t: f64::NEG_INFINITY,
            same_time_events: 0,
            ev_stats: EventDrivenStatistics::default(),
        };
        let mut x0 = vec![0.0; n];
        sim.dynamics.initial_state(&mut x0);
        sim.xc = x0;
        if let Some(bad) = sim.xc.iter().position(|v| !v.is_finite()) {
            return Err(SimulationError::NonFinite {
                t: t0,
                step: 0,
                object: format!("state component {bad}"),
            });
        }
        sim.process_event(t0, true)?;
        // The initial mode is not an event; an impact at t₀ is.
        sim.transitions
            .retain(|tr| tr.kind == TransitionKind::Impact);
        sim.ev_stats.mode_switches = 0;
        sim.ev_stats.take_offs = 0;
        sim.initial_transitions = !sim.transitions.is_empty();
        sim.restart()?;
        Ok(sim)
    }

    /// Advances to the next instant with events — an output or registered
    /// source on the exact clock, or a nonsmooth event located between —
    /// and processes it ([`EventDriven::reach`], then
    /// [`EventDriven::process`]). Returns [`StepOutcome::Finished`] after
    /// t_end.
    pub fn step(&mut self) -> Result<StepOutcome, SimulationError> {
        let outcome = self.reach()?;
        if let StepOutcome::Advanced { .. } = outcome {
            self.process()?;
        }
        Ok(outcome)
    }

    /// Advances to the next instant with events and stops at its left
    /// limit. At a located nonsmooth event t* the state is x(t*)⁻ from the
    /// dense output, y, ẏ and λ are those of the mode before the event
    /// (an approaching contact: its gap ≈ 0, ẏ < 0, λ = 0), the instant's
    /// events are listed in [`EventDriven::last_events`] and
    /// [`EventDriven::last_transitions`] is empty: the impact law and the
    /// new mode wait for [`EventDriven::process`]. At an instant of the
    /// schedule nothing of the plant's waits. Reaching again before
    /// processing is [`SimulationError::InstantPending`].
    pub fn reach(&mut self) -> Result<StepOutcome, SimulationError> {
        if self.unprocessed.is_some() {
            return Err(SimulationError::InstantPending { t: self.t });
        }
        loop {
            let next = [self.hard.next_tick(), self.soft.next_tick()]
                .into_iter()
                .flatten()
                .filter(|&k| k <= self.end_tick)
                .min();
            let Some(next_tick) = next else {
                return Ok(StepOutcome::Finished);
            };
            let t_next = self.base.seconds(next_tick);
            if let Some(root) = self.pending {
                if root.t <= t_next {
                    return self.reach_nonsmooth(root.t, next_tick, t_next);
                }
            }
            if self.ig.t >= t_next {
                return self.scheduled_instant(next_tick, t_next);
            }
            // Integrate on, never past an instant where the inputs may change.
            let t_stop = self
                .hard
                .next_tick()
                .filter(|&k| k <= self.end_tick)
                .map_or(self.settings.t_end, |k| self.base.seconds(k));
            self.steps_since_instant += 1;
            if self.steps_since_instant > self.settings.max_steps {
                return Err(SimulationError::TooManySteps {
                    t: self.ig.t,
                    steps: self.steps_since_instant - 1,
                });
            }
            self.ig.step(&mut self.dynamics, t_stop)?;
            self.watch_guards()?;
        }
    }

    /// Applies the events of the instant reached by [`EventDriven::reach`]:
    /// at a located nonsmooth event the impact LCP with the accumulation
    /// rule, the contact forces, the first-order and relay modes
    /// (docs/event-driven.md, "At an event"), then the integrator restarts
    /// from x(t*)⁺; [`EventDriven::last_transitions`] says what changed.
    /// Returns whether an instant was pending (false: nothing done).
    pub fn process(&mut self) -> Result<bool, SimulationError> {
        match self.unprocessed.take() {
            None => Ok(false),
            Some(Unprocessed::Scheduled) => Ok(true),
            Some(Unprocessed::NonSmooth) => {
                self.process_event(self.t, false)?;
                self.restart()?;
                self.update_outputs()?;
                Ok(true)
            }
        }
    }

    /// True between [`EventDriven::reach`] and [`EventDriven::process`].
    pub fn instant_pending(&self) -> bool {
        self.unprocessed.is_some()
    }

    /// Runs to the final time, calling `each` after every instant.
    pub fn run(&mut self, mut each: impl FnMut(&EventDriven)) -> Result<(), SimulationError> {
        while let StepOutcome::Advanced { .. } = self.step()? {
            each(self);
        }
        Ok(())
    }

    /// The instant `next_tick` of the schedule, reached by the integrator.
    fn scheduled_instant(
        &mut self,
        next_tick: i64,
        t_next: f64,
    ) -> Result<StepOutcome, SimulationError> {
        self.ig.dense(t_next, &mut self.xc);
        self.t = t_next;
        self.tick = next_tick;
        let mut instant = std::mem::take(&mut self.instant);
        instant.clear();
        if self.initial_transitions {
            self.initial_transitions = false;
            instant.push(Event {
                tick: next_tick,
                kind: EventKind::NonSmooth,
                source: self.nonsmooth_source,
            });
        } else {
            self.transitions.clear();
            self.impulse.iter_mut().for_each(|p| *p = 0.0);
        }
        self.pop_scheduled(next_tick, &mut instant);
        self.instant = instant;
        self.update_outputs()?;
        self.steps_since_instant = 0;
        self.unprocessed = Some(Unprocessed::Scheduled);
        Ok(StepOutcome::Advanced {
            tick: next_tick,
            t: t_next,
        })
    }

    fn pop_scheduled(&mut self, tick: i64, instant: &mut Vec<Event>) {
        for (manager, ids) in [
            (&mut self.hard, &self.hard_ids),
            (&mut self.soft, &self.soft_ids),
        ] {
            if manager.next_tick() == Some(tick) {
                manager.pop_instant(&mut self.scratch_events);
                instant.extend(self.scratch_events.iter().map(|e| Event {
                    source: SourceId(ids[e.source.0]),
                    ..*e
                }));
            }
        }
    }

    /// Reaches a located nonsmooth event at t_r (≤ the next scheduled
    /// instant): its left limit, the event left to [`EventDriven::process`].
    fn reach_nonsmooth(
        &mut self,
        t_r: f64,
        next_tick: i64,
        t_next: f64,
    ) -> Result<StepOutcome, SimulationError> {
        self.pending = None;
        self.ig.dense(t_r, &mut self.xc);
        if t_r - self.last_event_t <= 4.0 * f64::EPSILON * t_r.abs().max(1.0) {
            self.same_time_events += 1;
            if self.same_time_events > 100 {
                return Err(SimulationError::EventStall {
                    t: t_r,
                    events: self.same_time_events,
                    what: self.describe_transitions(),
                });
            }
        } else {
            self.same_time_events = 0;
        }
        self.last_event_t = t_r;
        self.t = t_r;
        let tick = if t_r >= t_next {
            next_tick
        } else {
            let tps = self.base.ticks_per_second() as f64;
            ((t_r * tps).floor() as i64).clamp(self.tick, next_tick)
        };
        self.tick = tick;
        self.transitions.clear();
        self.impulse.iter_mut().for_each(|p| *p = 0.0);
        let mut instant = std::mem::take(&mut self.instant);
        instant.clear();
        instant.push(Event {
            tick,
            kind: EventKind::NonSmooth,
            source: self.nonsmooth_source,
        });
        if t_r >= t_next {
            self.pop_scheduled(next_tick, &mut instant);
        } else if self.settings.output_at_events {
            instant.push(Event {
                tick,
                kind: EventKind::Output,
                source: SourceId(0),
            });
        }
        self.instant = instant;
        self.update_outputs()?;
        self.steps_since_instant = 0;
        self.unprocessed = Some(Unprocessed::NonSmooth);
        Ok(StepOutcome::Advanced { tick, t: t_r })
    }

    fn describe_transitions(&self) -> String {
        self.transitions
            .iter()
            .map(|tr| {
                format!(
                    "{} of '{}'",
                    tr.kind.as_str(),
                    self.model.interaction(tr.interaction).name
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Restarts the integrator from the current instant and state, in the
    /// current mode; resets the guards.
    fn restart(&mut self) -> Result<(), SimulationError> {
        self.pending = None;
        self.ig.restart(&mut self.dynamics, self.t, &self.xc)?;
        // λ and y of first-order rows at (t, x).
        let mut f = std::mem::take(&mut self.fbuf);
        let res = self.dynamics.rhs(self.t, &self.xc, &mut f);
        self.fbuf = f;
        res?;
        let mut g = std::mem::take(&mut self.g_start);
        let mut gd = std::mem::take(&mut self.gd_start);
        self.guard_values(&self.xc, &mut g, &mut gd);
        for r in 0..g.len() {
            self.armed[r] = self.is_guard[r] && g[r] > 0.0;
        }
        self.g_start = g;
        self.gd_start = gd;
        Ok(())
    }

    /// y, ẏ and λ at the current instant and state.
    fn update_outputs(&mut self) -> Result<(), SimulationError> {
        // λ and y of first-order rows come from the right-hand side; with
        // neither persistent contacts nor first-order rows they are not needed.
        if !self.dynamics.contacts.is_empty() || self.dynamics.has_lcs {
            let mut f = std::mem::take(&mut self.fbuf);
            let res = self.dynamics.rhs(self.t, &self.xc, &mut f);
            self.fbuf = f;
            res?;
        }
        let d = &self.dynamics;
        for r in 0..d.rows {
            if d.is_contact_row(r) {
                let (y, yd) = d.gap(r, &self.xc);
                self.y[r] = y;
                self.ydot[r] = yd;
            } else {
                self.y[r] = d.y_lcs[r];
                self.ydot[r] = 0.0;
            }
            self.lam[r] = if d.active[r] || d.relay_guard(r).is_some() {
                d.lam[r]
            } else {
                0.0
            };
        }
        Ok(())
    }

    /// Re-enters the current instant after an input change: the
    /// integrator restarts here, and the mode is checked again.
    ///
    /// At the left limit of a nonsmooth event not yet processed, only the
    /// input is held: [`EventDriven::process`] applies the event with it
    /// and restarts (processing it here too would apply the event twice).
    fn input_changed(&mut self) -> Result<(), SimulationError> {
        if self.unprocessed == Some(Unprocessed::NonSmooth) {
            return Ok(());
        }
        let keep = self.transitions.clone();
        let impulse = self.impulse.clone();
        self.process_event(self.t, true)?;
        self.transitions.splice(0..0, keep);
        for (p, q) in self.impulse.iter_mut().zip(impulse) {
            *p += q;
        }
        self.restart()?;
        self.update_outputs()
    }
}
