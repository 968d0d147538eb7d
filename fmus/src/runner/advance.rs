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

use nonsmooth::simulation::{StepOutcome, Strategy};

use super::{same_time, Runner, RunnerError, ScenarioRunner};

/// Where a communication step ended.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// or the mode changed).
    pub impact: bool,
}

impl ScenarioRunner {
    /// Advances from `t` by `h`, on either strategy; with `early_return`,
    /// stops at the first event strictly inside (t, t + h).
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
    ) -> Result<StepEnd, RunnerError> {
        if self.strategy == Strategy::TimeStepping && !early_return {
            self.do_step(t, h)?;
            return Ok(StepEnd {
                time: self.t_comm,
                early: false,
                event: self.last_instant_event(self.t_comm).0,
                impact: false,
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
            match r.sim.step() {
                Ok(StepOutcome::Advanced { .. }) => {}
                Ok(StepOutcome::Finished) => break,
                Err(source) => return Err(RunnerError::Simulation { t: t_from, source }),
            }
            let now = r.sim.time();
            let impact = !r.sim.plant().transitions().is_empty();
            let event = impact || r.sim.acted();
            let inside = now < limit_t && !same_time(now, target);
            let repeated = last_early.is_some_and(|e| e == now);
            if early_return && event && inside && !repeated {
                self.t_comm = now;
                self.last_early = Some(now);
                return Ok(StepEnd {
                    time: now,
                    early: true,
                    event: true,
                    impact,
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
