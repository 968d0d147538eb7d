//! Actuations inside a plant step: a law may schedule, beside the input it
//! applies at its instant t_k, a change of that input at an instant τ of
//! its choosing in (t_k, t_{k+1}) ([`Controller::scheduled_change`]). The
//! loop applies it at τ exactly: when τ is inside an integration step
//! (t_n, t_{n+1}) it asks the plant for a split step
//! ([`Simulation::split_at`]: the sub-step (t_n, τ] with the old input, the
//! new input applied, then (τ, t_{n+1}] with it); when τ falls on a grid
//! instant it is applied there, before the step that starts at it. The
//! clock, the grid, the records and the events are those of the unsplit
//! run: τ is not an instant of the schedule (docs/how-a-step-proceeds.md,
//! "An actuation inside a step").
//!
//! Checked once per step by one comparison (`next_change`, +∞ when nothing
//! is scheduled); only laws whose [`Controller::schedules_changes`] is true
//! are asked for changes after they compute. Refused with a typed error: a change on an actuator with a
//! delay, a τ that is not after the computing instant, a plant without a
//! split step (event-driven), two changes inside one step.
//!
//! [`Controller::scheduled_change`]: crate::control::Controller::scheduled_change
//! [`Controller::schedules_changes`]: crate::control::Controller::schedules_changes
//! [`Simulation::split_at`]: crate::simulation::Simulation::split_at

use super::ControlLoop;
use crate::control::error::ControlError;

impl ControlLoop {
    /// Records the change controller `k`'s law scheduled at its instant `t`
    /// (or that it scheduled none), after checking it.
    pub(super) fn schedule_change(&mut self, k: usize, t: f64) -> Result<(), ControlError> {
        let has_grid = self.plant.grid().is_some();
        let c = &mut self.controllers[k];
        c.change_at = f64::INFINITY;
        if let Some((tau, u)) = c.law.scheduled_change() {
            let refuse = |reason: String| ControlError::Unsupported {
                object: c.name.clone(),
                reason,
            };
            if c.line.is_some() {
                return Err(refuse(
                    "an input change scheduled inside a period needs an actuator without delay"
                        .into(),
                ));
            }
            if !has_grid {
                return Err(refuse(format!(
                    "an input change at t = {tau} inside a step needs a time-stepping plant"
                )));
            }
            if !(tau > t && tau.is_finite()) {
                return Err(ControlError::LawFailed {
                    t,
                    object: c.name.clone(),
                    reason: format!("scheduled an input change at t = {tau}, not after t = {t}"),
                });
            }
            if u.len() != c.applied.len() || u.iter().any(|x| !x.is_finite()) {
                return Err(ControlError::LawFailed {
                    t,
                    object: c.name.clone(),
                    reason: format!(
                        "scheduled input of size {} (not finite, or the actuator takes {})",
                        u.len(),
                        c.applied.len()
                    ),
                });
            }
            c.change_at = tau;
        }
        self.rescan_next_change();
        Ok(())
    }

    /// The earliest pending change over the controllers.
    fn rescan_next_change(&mut self) {
        self.next_change = self
            .controllers
            .iter()
            .map(|c| c.change_at)
            .fold(f64::INFINITY, f64::min);
    }

    /// After a restore: a change scheduled by a law is pending when its
    /// instant is not before the restored time (a change is applied when the
    /// step that contains it, or starts at it, is taken).
    pub(super) fn rescan_changes(&mut self) {
        let now = self.plant.time();
        for c in &mut self.controllers {
            c.change_at = match c.law.scheduled_change().filter(|_| c.schedules) {
                Some((tau, _)) if tau >= now && c.line.is_none() => tau,
                _ => f64::INFINITY,
            };
        }
        self.rescan_next_change();
    }

    /// Before the plant's next step: applies the changes due at the current
    /// instant, and splits the step at the one inside it.
    ///
    /// Cold and out of line: most loops never schedule a change, and the
    /// hot `reach` stays small enough to inline.
    #[cold]
    #[inline(never)]
    pub(super) fn apply_changes_within_step(&mut self) -> Result<(), ControlError> {
        let now = self.plant.time();
        let (_, base) = self.plant.tick();
        let next = self.plant.next_event_tick().map(|n| base.seconds(n));
        let mut split: Option<usize> = None;
        for k in 0..self.controllers.len() {
            let tau = self.controllers[k].change_at;
            if tau <= now {
                self.apply_change(k)?;
            } else if next.is_some_and(|t1| tau < t1) {
                if let Some(j) = split {
                    if self.controllers[j].change_at != tau {
                        return Err(ControlError::Unsupported {
                            object: self.controllers[k].name.clone(),
                            reason: format!(
                                "input changes at t = {} and t = {tau} inside one step: one split per step is supported",
                                self.controllers[j].change_at
                            ),
                        });
                    }
                }
                split = Some(k);
            }
        }
        if let Some(j) = split {
            let tau = self.controllers[j].change_at;
            self.plant.split_at(tau)?;
            for k in 0..self.controllers.len() {
                if self.controllers[k].change_at == tau {
                    self.apply_change(k)?;
                }
            }
        }
        self.rescan_next_change();
        Ok(())
    }

    /// u ← u′ of controller `k`'s scheduled change, applied to its system.
    fn apply_change(&mut self, k: usize) -> Result<(), ControlError> {
        let c = &mut self.controllers[k];
        c.change_at = f64::INFINITY;
        if let Some((_, u)) = c.law.scheduled_change() {
            c.applied.copy_from_slice(u);
        }
        let s = c.system;
        self.refresh_input(s)
    }
}
