//! Stepping with events (FMI 3.0): a communication step that may stop at
//! the first event inside it (early return), on a time-stepping or an
//! event-driven plant, and the time of the next scheduled event.
//!
//! An *event* is an instant of the run at which
//!
//! * the plant made a nonsmooth transition (an impact, a contact, a
//!   take-off, a mode switch; event-driven plants only, located exactly:
//!   `time()` is its float time), or
//! * a sensor, observer or controller of the control loop acted (a
//!   capture, a delivery, an estimate, a computation, an application; on
//!   the exact clock, so exact for both strategies).
//!
//! A time-stepping plant resolves impacts and mode switches inside its
//! steps: they are not located and are not events here. This is the first
//! half of the chattering guard: a sliding mode in a time-stepping plant
//! (the relay multiplier switching at every step) never makes a step
//! return early. The second half: an event-driven plant never returns
//! early twice at the same time (simultaneous transitions processed as
//! separate instants at one float time give one early return); repeated
//! transitions at distinct times are ended by the accumulation rule of the
//! event-driven strategy (docs/event-driven.md), which turns a Zeno
//! sequence into a persistent contact, and a sliding mode there is a mode
//! (one switch into it, one out), not a sequence of crossings.
//!
//! **Two phases (event mode).** With `defer` (the host uses event mode), an
//! event at the instant where the step ends — the early return, or an
//! event at t + h — is only *reached* (`ControlLoop::reach`): the outputs
//! are its left limit (the ball's velocity before the impact, the
//! controller's output before its update), and the instant's processing
//! (impact law, new mode, sensor captures, observers, controller
//! computations and actuations, in the order of docs/how-a-step-proceeds.md)
//! waits for [`ScenarioRunner::process_pending`], which
//! fmi3UpdateDiscreteStates calls. Events strictly inside a step that does
//! not return early are processed inside it, as without event mode.

use nonsmooth::control::ControlLoop;
use nonsmooth::simulation::{EventKind, StepOutcome, Strategy};

use super::{same_time, Runner, RunnerError, ScenarioRunner};

/// A nonsmooth transition an event-driven plant located and processed
/// during the last communication step (or event update): what happened to
/// which interaction, at which time. FMI 2.0 hosts see them in the
/// `logEvents` category, since doStep cannot return at them.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The time of the instant.
    pub t: f64,
    /// `impact`, `contact`, `take_off` or `mode_switch`.
    pub kind: &'static str,
    /// The interaction's name.
    pub interaction: String,
}

/// Appends the transitions of the instant `sim` just processed.
fn record(sim: &ControlLoop, out: &mut Vec<Located>) {
    let plant = sim.plant();
    for tr in plant.transitions() {
        out.push(Located {
            t: sim.time(),
            kind: tr.kind.as_str(),
            interaction: plant.model().interaction(tr.interaction).name.clone(),
        });
    }
}

/// Where a communication step ended.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepEnd {
    /// The communication time reached (the event's time after an early
    /// return, else the end of the step).
    pub time: f64,
    /// The step stopped at an event before its end.
    pub early: bool,
    /// The instant reached holds an event (an early return, or an event at
    /// the end of the step).
    pub event: bool,
    /// The instant reached holds a nonsmooth transition (the state jumped
    /// or the mode changed); false while the instant is pending.
    pub impact: bool,
    /// The instant reached is left unprocessed (event mode: its left
    /// limit); [`crate::Runner::update_discrete_states`] processes it.
    pub pending: bool,
}

/// What processing a pending instant did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiscreteUpdate {
    /// An instant was pending and has been processed (false: nothing was
    /// pending, nothing done).
    pub processed: bool,
    /// Its processing made a nonsmooth transition: the continuous state
    /// jumped (an impact) or the mode changed.
    pub jumped: bool,
}

impl ScenarioRunner {
    /// Advances from `t` by `h`, on either strategy; with `early_return`,
    /// stops at the first event strictly inside (t, t + h); with `defer`,
    /// an event where the step ends is left pending at its left limit.
    ///
    /// Time-stepping: every integration step whose end lies in (t, t + h]
    /// (as `do_step`). Event-driven: every instant up to the output-grid
    /// tick at or before t + h (the instants are the outputs on the grid
    /// t₀ + k·`output_step`, the loop's instants and the located
    /// transitions).
    pub(super) fn advance_to(
        &mut self,
        t: f64,
        h: f64,
        early_return: bool,
        defer: bool,
    ) -> Result<StepEnd, RunnerError> {
        self.refuse_pending()?;
        self.located.clear();
        if self.strategy == Strategy::TimeStepping && !early_return && !defer {
            self.do_step(t, h)?;
            return Ok(StepEnd {
                time: self.t_comm,
                early: false,
                event: self.last_instant_event(self.t_comm).0,
                impact: false,
                pending: false,
            });
        }
        let (target, target_tick, end) = self.check_step(t, h)?;
        self.apply_inputs()?;
        let ts = self.strategy == Strategy::TimeStepping;
        let last_early = self.last_early;
        let r = self.running.as_mut().expect("running");
        let limit = target_tick.min(end);
        let (_, base) = r.sim.plant().tick();
        let limit_t = base.seconds(limit);
        loop {
            let more = if ts {
                r.sim.next_event_tick().is_some_and(|k| k <= limit)
            } else {
                r.sim.time() < limit_t
            };
            if !more {
                break;
            }
            let t_from = r.sim.time();
            match r.sim.reach() {
                Ok(StepOutcome::Advanced { .. }) => {}
                Ok(StepOutcome::Finished) => break,
                Err(source) => return Err(RunnerError::Simulation { t: t_from, source }),
            }
            let now = r.sim.time();
            // At the left limit: a located nonsmooth event or an action of
            // the loop is due here.
            let nonsmooth = r
                .sim
                .plant()
                .last_events()
                .iter()
                .any(|e| e.kind == EventKind::NonSmooth);
            let event = nonsmooth || r.sim.acted();
            let inside = now < limit_t && !same_time(now, target);
            let repeated = last_early.is_some_and(|e| e == now);
            let early = early_return && event && inside && !repeated;
            if event && defer && (early || !inside) {
                // Left pending: fmi3UpdateDiscreteStates processes it.
                self.t_comm = if early { now } else { target };
                if early {
                    self.last_early = Some(now);
                }
                return Ok(StepEnd {
                    time: self.t_comm,
                    early,
                    event: true,
                    impact: false,
                    pending: true,
                });
            }
            r.sim
                .process()
                .map_err(|source| RunnerError::Simulation { t: now, source })?;
            if nonsmooth {
                record(&r.sim, &mut self.located);
            }
            if early {
                self.t_comm = now;
                self.last_early = Some(now);
                return Ok(StepEnd {
                    time: now,
                    early: true,
                    event: true,
                    impact: !r.sim.plant().transitions().is_empty(),
                    pending: false,
                });
            }
        }
        self.t_comm = target;
        let (event, impact) = self.last_instant_event(limit_t);
        Ok(StepEnd {
            time: target,
            early: false,
            event,
            impact,
            pending: false,
        })
    }

    /// Refuses to step while an instant waits for its processing.
    fn refuse_pending(&self) -> Result<(), RunnerError> {
        match self.running.as_ref() {
            Some(r) if r.sim.instant_pending() => Err(RunnerError::Refused(format!(
                "the event at t = {} is not handled yet: enter event mode and call \
                 fmi3UpdateDiscreteStates before the next step",
                r.sim.time()
            ))),
            _ => Ok(()),
        }
    }

    /// True when an instant was reached and waits for its processing.
    pub(super) fn pending(&self) -> bool {
        self.running
            .as_ref()
            .is_some_and(|r| r.sim.instant_pending())
    }

    /// Processes the instant left pending by a step with `defer` (its
    /// impact law, new mode, the loop's sensors, observers and actuators);
    /// without one, does nothing.
    pub(super) fn process_pending(&mut self) -> Result<DiscreteUpdate, RunnerError> {
        self.located.clear();
        let Some(r) = self.running.as_mut() else {
            return Ok(DiscreteUpdate::default());
        };
        if !r.sim.instant_pending() {
            return Ok(DiscreteUpdate::default());
        }
        let t = r.sim.time();
        let nonsmooth = r
            .sim
            .plant()
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::NonSmooth);
        r.sim
            .process()
            .map_err(|source| RunnerError::Simulation { t, source })?;
        if nonsmooth {
            record(&r.sim, &mut self.located);
        }
        Ok(DiscreteUpdate {
            processed: true,
            jumped: !r.sim.plant().transitions().is_empty(),
        })
    }

    /// Whether the last instant, when it is at time `at`, holds an event
    /// (and a transition).
    fn last_instant_event(&self, at: f64) -> (bool, bool) {
        let Some(r) = self.running.as_ref() else {
            return (false, false);
        };
        if r.sim.time() != at && !same_time(r.sim.time(), at) {
            return (false, false);
        }
        let impact = !r.sim.plant().transitions().is_empty();
        (impact || r.sim.acted(), impact)
    }

    /// The time of the next instant at which a sensor, observer or
    /// controller acts (a sampling instant), within the run.
    pub(super) fn next_action_time(&self) -> Option<f64> {
        let r = self.running.as_ref()?;
        let plant = r.sim.plant();
        let k = r
            .sim
            .next_action_tick()
            .filter(|&k| k <= plant.end_tick())?;
        Some(plant.tick().1.seconds(k))
    }
}
