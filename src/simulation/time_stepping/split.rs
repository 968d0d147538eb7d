//! A split step: the integration step (t_n, t_{n+1}] taken as two sub-steps
//! h₁ = τ − t_n and h₂ = t_{n+1} − τ, so that an input can change at an
//! instant τ that is not on the integration grid (an actuation inside a
//! plant step, docs/how-a-step-proceeds.md "A split step").
//!
//! Each sub-step is the scheme's ordinary step with its own length h′: the
//! Euler–Moreau θ-scheme
//!
//! ```text
//! x(τ)       = x_n     + h₁ (θ f(τ, x(τ))       + (1 − θ) f(t_n, x_n) + g)  + h₁ r(τ)
//! x_{n+1}    = x(τ)    + h₂ (θ f(t_{n+1}, x_{n+1}) + (1 − θ) f(τ, x(τ)) + g′) + h₂ r_{n+1}
//! ```
//!
//! with W = I − h′θA factored for each sub-step and the one-step problem
//! (every interaction's complementarity) solved at τ and at t_{n+1}; g and
//! the relation inputs are those held before τ in the first sub-step and
//! those set between the two calls (g′) in the second. The clock and the
//! grid are untouched: [`TimeStepping::split_at`] does the first sub-step
//! without any event, and the next [`TimeStepping::step`] does the second
//! and processes the instant t_{n+1} as usual (records, events and the
//! statistics' step count are those of the unsplit grid; the solves count
//! both sub-steps). W and the interactions' responses of the grid step h are
//! computed again after the split (the same operations, hence the same
//! values), so a run's other steps are unchanged to the last bit.
//!
//! Supported: models whose systems are first-order and integrated by the
//! Euler–Moreau θ-scheme (linear or not), with the default Lagrangian
//! scheme setting. Refused with a typed error: Lagrangian systems, the
//! zero-order hold, τ outside the open interval (t_n, t_{n+1}), no step
//! left, a split already pending.

use super::system_work::Scheme;
use super::{SimulationError, TimeStepping};
use crate::modelling::dynamical_system::DynamicalSystem;

impl TimeStepping {
    /// Takes the first part (t_n, τ] of the coming integration step with
    /// the inputs held now, leaving the simulation inside the step at τ
    /// (its time and tick still t_n); the next [`TimeStepping::step`]
    /// integrates (τ, t_{n+1}] with the inputs held then and reaches t_{n+1}.
    /// Between the two calls the caller changes inputs
    /// ([`TimeStepping::set_system_input`], [`TimeStepping::set_input`]);
    /// the state read there is x(τ).
    pub fn split_at(&mut self, tau: f64) -> Result<(), SimulationError> {
        if self.split.is_some() {
            return Err(SimulationError::Unsupported(
                "a split step is already pending: step to the next instant first".into(),
            ));
        }
        self.check_split_supported()?;
        let next = match self.events.next_tick() {
            Some(n) if n <= self.end_tick && n > self.tick => n,
            _ => {
                return Err(SimulationError::BadArgument(format!(
                    "split at t = {tau}: no integration step follows t = {} (the run is over, or t0 is not reached yet)",
                    self.now()
                )))
            }
        };
        let (t0, t1) = (self.now(), self.base.seconds(next));
        if !(tau > t0 && tau < t1) {
            return Err(SimulationError::BadArgument(format!(
                "split at t = {tau}: the instant must lie strictly inside the coming step ({t0}, {t1})"
            )));
        }
        self.sub_step(t0, tau, false)?;
        self.split = Some(tau);
        Ok(())
    }

    /// True between [`TimeStepping::split_at`] and the step that ends the
    /// split.
    pub fn split_pending(&self) -> bool {
        self.split.is_some()
    }

    /// The second sub-step (τ, t_{n+1}], counted as the grid step.
    #[cold]
    #[inline(never)]
    pub(super) fn integrate_split_rest(
        &mut self,
        tau: f64,
        t1: f64,
    ) -> Result<(), SimulationError> {
        self.sub_step(tau, t1, true)
    }

    fn check_split_supported(&self) -> Result<(), SimulationError> {
        if self.settings.lagrangian_scheme != super::LagrangianScheme::MoreauJean {
            return Err(SimulationError::Unsupported(
                "a split step needs the Moreau–Jean setting (two-step Lagrangian schemes keep the step length)".into(),
            ));
        }
        if let Some(w) = self.sys.iter().find(|w| w.scheme != Scheme::EulerMoreau) {
            return Err(SimulationError::Unsupported(format!(
                "a split step is supported for first-order systems under the Euler–Moreau θ-scheme; system '{}' is not",
                w.name
            )));
        }
        Ok(())
    }

    /// One sub-step of length t1 − t0 by the ordinary step of the model's
    /// kind, with W and the responses set for that length and put back to
    /// the grid step's after it (also when it fails).
    fn sub_step(&mut self, t0: f64, t1: f64, counts: bool) -> Result<(), SimulationError> {
        let h = self.settings.step;
        let hs = t1 - t0;
        self.set_step_length(hs)?;
        self.settings.step = hs;
        let step = self.stats.steps + 1;
        let result = if self.all_linear {
            self.integrate_linear(t0, t1, step)
        } else {
            self.integrate_nonlinear(t0, t1, step)
        };
        self.settings.step = h;
        self.set_step_length(h)?;
        if result.is_ok() && !counts {
            self.stats.steps -= 1;
        }
        result
    }

    /// W = I − h′θA of the systems whose W is factored once, and the
    /// responses of the interactions that keep them, for a step of length
    /// `h`; the assembled one-step matrices are forgotten (they hold the
    /// responses of the other length). With `h` the grid step the blocks
    /// are declared constant again.
    fn set_step_length(&mut self, h: f64) -> Result<(), SimulationError> {
        let theta = self.settings.theta;
        for (w, s) in self.sys.iter_mut().zip(self.model.systems()) {
            if let (true, DynamicalSystem::FirstOrderLinear(d)) = (w.w_is_fixed(), &s.ds) {
                w.refactor_constant_first_order_w(d, h, theta)?;
            }
        }
        for (w, &fixed) in self.inters.iter_mut().zip(&self.resp_fixed) {
            if fixed {
                w.compute_response(&mut self.sys, h, false);
            }
        }
        self.osnsp.forget_assembled();
        if h == self.settings.step {
            self.osnsp.set_fixed_blocks(&self.resp_fixed);
        } else {
            let none = vec![false; self.resp_fixed.len()];
            self.osnsp.set_fixed_blocks(&none);
        }
        Ok(())
    }
}
