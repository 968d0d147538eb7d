//! Time-stepping: Moreau–Jean for Lagrangian systems (or, for linear ones,
//! the Schatzman–Paoli and D1-minus-linear schemes of `schatzman_paoli`
//! and `d1_minus_linear`), Euler–Moreau or the exact zero-order hold for
//! first-order ones, with one nonsmooth problem per step (D1-minus-linear:
//! three), on the exact clock.
//!
//! One step from t_k to t_{k+1} = t_k + h (seed 004, (12a)–(12e) and (13)):
//!
//! 1. every system computes its free unknown (v_free or x_free) and the
//!    factored iteration matrix W (Moreau–Jean: W = M + hθC + h²θ²K for
//!    linear systems; Euler–Moreau: W = I − hθA);
//! 2. an interaction with Lagrangian unilateral rows is active when its
//!    predicted output ỹ = y_k + γ h ẏ_k is ≤ 0 in some row (γ =
//!    `activation_gamma`, 1 in (12e)), up to the rounding error of ỹ's own
//!    computation (4ε Σ|H_ij q_j| + 4ε|b_i| + γh·4ε Σ|H_ij v_j| for linear
//!    relations): a resting contact whose y is 1e-17 by rounding stays
//!    active; first-order and equality interactions are always active;
//! 3. the one-step problem over the active interactions is assembled
//!    ([`ProblemFamily`]) and solved; for an impact law its rows read
//!    0 ≤ ẏ_{k+1} + e ẏ_k ⊥ P_{k+1} ≥ 0, P the impulse of the step;
//! 4. the unknowns are updated: v_{k+1} = v_free + W⁻¹ Σ Hᵀ P,
//!    q_{k+1} = q_k + h((1−θ) v_k + θ v_{k+1}); x_{k+1} = x_free + h W⁻¹ Σ B λ;
//! 5. for nonlinear systems or relations, steps 1–4 repeat (Newton) until
//!    the unknowns change by less than `newton_tolerance`·(1 + ‖unknown‖∞);
//! 6. outputs y_{k+1} (and ẏ_{k+1}) are computed from the new state.
//!
//! The clock is exact: t_k is tick k·(h in ticks) of a rational time base,
//! never a running sum (see docs/how-a-step-proceeds.md).

mod d1_minus_linear;
mod friction_fresh;
mod friction_pattern;
mod friction_step;
mod interaction_work;
mod linear_output;
mod problem;
mod schatzman_paoli;
mod settings;
mod split;
mod state;
mod system_work;

use std::sync::Arc;

pub use super::error::SimulationError;
pub use problem::{Assembly, ProblemFamily};
pub use settings::{FirstOrderScheme, LagrangianScheme, SchatzmanPaoliStart, TimeSteppingSettings};
pub use state::{StateError, TimeSteppingState};

use self::interaction_work::InteractionWork;
use self::problem::OneStepProblem;
use self::system_work::{Scheme, SystemWork};
use super::clock::TimeBase;
use super::events::{Event, EventKind, EventManager, SourceId, TickGrid};
use crate::modelling::model::{InteractionId, Model, SystemId};
use crate::modelling::relation::Relation;

/// Checks a system input g given to a simulation of either strategy: the
/// system's dimension `n`, finite values.
pub(crate) fn check_system_input(system: &str, n: usize, g: &[f64]) -> Result<(), SimulationError> {
    if g.len() != n {
        return Err(SimulationError::BadArgument(format!(
            "system '{system}': input of size {} given, the system has dimension {n}",
            g.len()
        )));
    }
    if let Some(bad) = g.iter().find(|x| !x.is_finite()) {
        return Err(SimulationError::BadArgument(format!(
            "system '{system}': input value {bad} is not finite"
        )));
    }
    Ok(())
}

/// What [`TimeStepping::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepOutcome {
    /// The simulation advanced to this instant (events in [`TimeStepping::last_events`]).
    Advanced {
        /// The instant, in ticks.
        tick: i64,
        /// The instant, in seconds.
        t: f64,
    },
    /// The final time is reached; nothing was done.
    Finished,
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statistics {
    /// Time steps done.
    pub steps: u64,
    /// One-step problems solved.
    pub solves: u64,
    /// Solver iterations, summed.
    pub solver_iterations: u64,
    /// Newton iterations, summed over steps (1 per step for linear models).
    pub newton_iterations: u64,
}

/// A time-stepping simulation of a [`Model`]: holds the state; the model
/// is shared and never changed.
pub struct TimeStepping {
    model: Arc<Model>,
    settings: TimeSteppingSettings,
    base: TimeBase,
    t0_tick: i64,
    step_ticks: i64,
    tick: i64,
    /// (tick, its time in seconds) of the last instant reached.
    seconds: (i64, f64),
    end_tick: i64,
    events: EventManager,
    instant: Vec<Event>,
    sys: Vec<SystemWork>,
    inters: Vec<InteractionWork>,
    /// The response matrices never change (linear relations on systems with constant W).
    resp_fixed: Vec<bool>,
    /// Per system: an active interaction acts on it in this step.
    coupled: Vec<bool>,
    osnsp: OneStepProblem,
    all_linear: bool,
    stats: Statistics,
    source_names: Vec<String>,
    /// The work of the Schatzman–Paoli or D1-minus-linear scheme.
    schemes: SchemeWork,
    /// The instant τ of a split step whose first part is done
    /// ([`TimeStepping::split_at`]); the next step integrates from τ.
    split: Option<f64>,
}

/// The per-scheme work of the Lagrangian schemes other than Moreau–Jean.
enum SchemeWork {
    None,
    SchatzmanPaoli(schatzman_paoli::SpWork),
    D1MinusLinear(Box<d1_minus_linear::D1Work>),
}

impl TimeStepping {
    /// Prepares a simulation: checks the settings, builds the clock,
    /// factors constant iteration matrices and evaluates the initial outputs.
    pub fn new(
        model: impl Into<Arc<Model>>,
        settings: TimeSteppingSettings,
    ) -> Result<Self, SimulationError> {
        Self::with_times(model, settings, &[])
    }

    /// As [`TimeStepping::new`], on a time base in which the `extra` times
    /// (periods, offsets and delays of the event sources that will be added
    /// with [`TimeStepping::add_event_source`], in seconds) are whole numbers
    /// of ticks.
    pub fn with_times(
        model: impl Into<Arc<Model>>,
        settings: TimeSteppingSettings,
        extra: &[(&'static str, f64)],
    ) -> Result<Self, SimulationError> {
        let model = model.into();
        settings.validate()?;
        if model.systems().is_empty() {
            return Err(SimulationError::BadArgument(
                "the model has no dynamical system".into(),
            ));
        }
        let super::clock::SteppingClock {
            base,
            t0_tick,
            step_ticks,
            end_tick,
            events,
        } = super::clock::stepping_clock(
            settings.t0,
            settings.t_end,
            settings.step,
            settings.output_every,
            extra,
        )?;
        let source_names = vec!["step".to_string(), "output".to_string()];
        let (h, theta) = (settings.step, settings.theta);
        let lagrangian_scheme = settings.lagrangian_scheme;
        match lagrangian_scheme {
            LagrangianScheme::MoreauJean => {}
            LagrangianScheme::SchatzmanPaoli => schatzman_paoli::check_model(&model)?,
            LagrangianScheme::D1MinusLinear => d1_minus_linear::check_model(&model)?,
        }
        let mut sys = Vec::with_capacity(model.systems().len());
        for s in model.systems() {
            let scheme = if s.ds.is_lagrangian() {
                match lagrangian_scheme {
                    LagrangianScheme::MoreauJean => Scheme::MoreauJean,
                    LagrangianScheme::SchatzmanPaoli => Scheme::SchatzmanPaoli,
                    LagrangianScheme::D1MinusLinear => Scheme::D1MinusLinear,
                }
            } else if settings.first_order_scheme == FirstOrderScheme::ZeroOrderHold {
                Scheme::ZeroOrderHold
            } else {
                Scheme::EulerMoreau
            };
            sys.push(SystemWork::new(&s.name, &s.ds, scheme, h, theta)?);
        }
        let mut inters: Vec<InteractionWork> = model
            .interactions()
            .iter()
            .map(|i| InteractionWork::new(i, &sys))
            .collect();
        let osnsp = OneStepProblem::new(
            &model,
            &inters,
            &settings.solver,
            settings.solver_settings,
            settings.assembly,
        )?;
        let all_linear = sys.iter().all(|s| s.linear) && inters.iter().all(|i| i.linear);
        let two_scheme_work = lagrangian_scheme != LagrangianScheme::MoreauJean;
        for w in &mut sys {
            w.free_in_state = all_linear && !two_scheme_work;
        }
        let resp_fixed: Vec<bool> = inters
            .iter()
            .map(|i| i.linear && i.systems.iter().all(|&s| sys[s].w_is_fixed()))
            .collect();
        let mut osnsp = osnsp;
        osnsp.set_fixed_blocks(&resp_fixed);
        let t0 = settings.t0;
        for (k, (w, inter)) in inters.iter_mut().zip(model.interactions()).enumerate() {
            w.linearise(&inter.relation, &sys, t0);
            if resp_fixed[k] {
                w.compute_response(&mut sys, h, false);
            }
            w.update_output(&inter.relation, &sys, t0);
        }
        let coupled = vec![false; sys.len()];
        let schemes = match lagrangian_scheme {
            LagrangianScheme::MoreauJean => SchemeWork::None,
            LagrangianScheme::SchatzmanPaoli => {
                SchemeWork::SchatzmanPaoli(schatzman_paoli::SpWork::new(&sys, &mut inters))
            }
            LagrangianScheme::D1MinusLinear => SchemeWork::D1MinusLinear(Box::new(
                d1_minus_linear::D1Work::new(&model, &sys, &mut inters, &settings, &resp_fixed)?,
            )),
        };
        Ok(TimeStepping {
            model,
            settings,
            base,
            t0_tick,
            step_ticks,
            tick: t0_tick,
            seconds: (t0_tick, base.seconds(t0_tick)),
            end_tick,
            events,
            instant: Vec::with_capacity(8),
            sys,
            inters,
            resp_fixed,
            coupled,
            osnsp,
            all_linear,
            stats: Statistics::default(),
            source_names,
            schemes,
            split: None,
        })
    }

    /// Advances to the next instant of the event schedule and processes its
    /// events in the documented order (an integration step for a
    /// time-discretisation event). Nothing is taken when the next instant
    /// is past the final time.
    pub fn step(&mut self) -> Result<StepOutcome, SimulationError> {
        match self.events.next_tick() {
            Some(next) if next <= self.end_tick => {}
            _ => return Ok(StepOutcome::Finished),
        }
        let Some(tick) = self.events.pop_instant(&mut self.instant) else {
            return Ok(StepOutcome::Finished);
        };
        let steps = self
            .instant
            .iter()
            .filter(|ev| ev.kind == EventKind::TimeDiscretisation)
            .count();
        let t = self.base.seconds(tick);
        // One integration step per time-discretisation event of the instant.
        for _ in 0..steps {
            self.integrate(tick, t)?;
        }
        self.tick = tick;
        self.seconds = (tick, t);
        Ok(StepOutcome::Advanced { tick, t })
    }

    /// The current time in seconds: k / ticks_per_second for the current
    /// tick k, kept from the step that reached it (a division costs as much
    /// as a small step).
    fn now(&self) -> f64 {
        match self.seconds {
            (tick, t) if tick == self.tick => t,
            _ => self.base.seconds(self.tick),
        }
    }

    /// Runs to the final time, calling `each` after every instant (including
    /// t₀, whose only event is the first output).
    pub fn run(&mut self, mut each: impl FnMut(&TimeStepping)) -> Result<(), SimulationError> {
        while let StepOutcome::Advanced { .. } = self.step()? {
            each(self);
        }
        Ok(())
    }

    #[inline]
    fn integrate(&mut self, tick1: i64, t1: f64) -> Result<(), SimulationError> {
        debug_assert_eq!(t1, self.base.seconds(tick1));
        if let Some(tau) = self.split.take() {
            return self.integrate_split_rest(tau, t1);
        }
        let t0 = self.now();
        let step = self.stats.steps + 1;
        match self.settings.lagrangian_scheme {
            LagrangianScheme::MoreauJean => {}
            LagrangianScheme::SchatzmanPaoli => {
                return self.integrate_schatzman_paoli(t0, t1, step)
            }
            LagrangianScheme::D1MinusLinear => return self.integrate_d1_minus_linear(t0, t1, step),
        }
        if self.all_linear {
            return self.integrate_linear(t0, t1, step);
        }
        self.integrate_nonlinear(t0, t1, step)
    }

    /// One step of a model with a nonlinear system or relation: Newton
    /// iterations over the free state, the one-step problem and the update.
    #[inline(never)]
    fn integrate_nonlinear(&mut self, t0: f64, t1: f64, step: u64) -> Result<(), SimulationError> {
        let (h, theta, gamma) = (
            self.settings.step,
            self.settings.theta,
            self.settings.activation_gamma,
        );
        let model = Arc::clone(&self.model);
        // One pass: start values, then the first free state.
        for (w, s) in self.sys.iter_mut().zip(model.systems()) {
            w.begin_step(&s.ds, t0, t1, h, theta)?;
            w.compute_free(&s.ds, t0, t1, h, theta)?;
        }
        for w in &mut self.inters {
            w.ydot_start.copy_from_slice(&w.ydot);
            if w.unilateral {
                let rows = if w.friction.is_some() { 1 } else { w.m };
                w.active = (0..rows).any(|r| {
                    w.y[r] + gamma * h * w.ydot[r] <= w.y_noise[r] + gamma * h * w.ydot_noise[r]
                });
            }
        }
        let max_it = if self.all_linear {
            1
        } else {
            self.settings.newton_max_iterations
        };
        let mut change = f64::INFINITY;
        for it in 0..max_it {
            self.stats.newton_iterations += 1;
            if it > 0 {
                for (w, s) in self.sys.iter_mut().zip(model.systems()) {
                    w.compute_free(&s.ds, t0, t1, h, theta)?;
                }
            }
            for (k, (w, inter)) in self.inters.iter_mut().zip(model.interactions()).enumerate() {
                if self.resp_fixed[k] {
                    continue;
                }
                w.linearise(&inter.relation, &self.sys, t1);
                let nonlinear_first_order =
                    matches!(inter.relation, Relation::FirstOrderNonlinear(_));
                w.compute_response(&mut self.sys, h, nonlinear_first_order);
            }
            self.osnsp
                .solve(&model, &self.sys, &mut self.inters, t1, step)?;
            change = 0.0;
            // unknown_i = free_i + Σ_α (shift_α,i + resp_α,i λ_α), scattered
            // from the interactions' side (sequential over both arrays).
            for w in &mut self.sys {
                w.unknown.copy_from_slice(&w.free);
            }
            for w in &self.inters {
                if !w.active {
                    continue;
                }
                for (k, &s) in w.systems.iter().enumerate() {
                    let unknown = &mut self.sys[s].unknown;
                    if !w.lagrangian {
                        unknown
                            .iter_mut()
                            .zip(&w.shift[k])
                            .for_each(|(u, d)| *u += d);
                    }
                    let n = unknown.len();
                    for (c, col) in w.resp[k].as_slice().chunks_exact(n).enumerate() {
                        let l = w.lambda[c];
                        if l != 0.0 {
                            unknown.iter_mut().zip(col).for_each(|(u, r)| *u += r * l);
                        }
                    }
                }
            }
            for w in &mut self.sys {
                let c = w.take_unknown(h, theta);
                if !c.is_finite() {
                    return Err(SimulationError::NonFinite {
                        t: t1,
                        step,
                        object: w.name.clone(),
                    });
                }
                change = change.max(c);
            }
            if self.all_linear || (it > 0 && change <= self.settings.newton_tolerance) {
                break;
            }
            if it + 1 == max_it {
                return Err(SimulationError::NewtonFailed {
                    t: t1,
                    step,
                    iterations: max_it,
                    change,
                });
            }
        }
        let _ = change;
        for (w, inter) in self.inters.iter_mut().zip(model.interactions()) {
            w.update_output(&inter.relation, &self.sys, t1);
        }
        self.stats.steps += 1;
        self.stats.solves = self.osnsp.solves;
        self.stats.solver_iterations = self.osnsp.iterations;
        Ok(())
    }

    /// One step of a model whose systems and relations are all linear: one
    /// pass, no Newton iterate, and the state buffers are swapped rather
    /// than copied. The start state is the last end state (a swap), the
    /// free unknown is computed from it, and the new unknown is the free one
    /// plus the responses to the multipliers,
    /// v_{k+1} = v_free + Σ_α W⁻¹ H_αᵀ P_α (Moreau–Jean) or
    /// x_{k+1} = x_free + Σ_α (shift_α + h W⁻¹ B_α λ_α) (Euler–Moreau; Γ B_α λ_α
    /// for the zero-order hold), assembled in place. The same operations as
    /// the general path, in the same order. A step that fails leaves the
    /// state of its start.
    #[inline(never)]
    fn integrate_linear(&mut self, t0: f64, t1: f64, step: u64) -> Result<(), SimulationError> {
        let (h, theta, gamma) = (
            self.settings.step,
            self.settings.theta,
            self.settings.activation_gamma,
        );
        let TimeStepping {
            model,
            sys,
            inters,
            resp_fixed,
            osnsp,
            stats,
            coupled,
            ..
        } = self;
        let model: &Model = model;
        stats.newton_iterations += 1;
        // W(t_{k+1}) first: the only step that can fail before the state moves.
        for (w, s) in sys.iter_mut().zip(model.systems()) {
            w.prepare_linear_step(&s.ds, t1, h, theta)?;
        }
        // The interactions at t_k: ẏ_k kept for the impact law, and the
        // activation test; the systems an active interaction links.
        let any_active = activate(inters, h, gamma);
        if any_active {
            coupled.fill(false);
            for w in inters.iter().filter(|w| w.active) {
                for &s in &w.systems {
                    coupled[s] = true;
                }
            }
        }
        // Free unknowns; a system no active interaction acts on ends its
        // step here (its unknown is the free one).
        for k in 0..sys.len() {
            let (w, ds) = (&mut sys[k], &model.systems()[k].ds);
            w.swap_start();
            w.compute_free(ds, t0, t1, h, theta)?;
            let alone = !(any_active && coupled[k]);
            if alone && !w.finish_linear_step(h, theta) {
                let object = w.name.clone();
                sys[..=k].iter_mut().for_each(SystemWork::restore_start);
                return Err(SimulationError::NonFinite {
                    t: t1,
                    step,
                    object,
                });
            }
        }
        if any_active {
            for (w, &fixed) in inters.iter_mut().zip(resp_fixed.iter()) {
                if !fixed {
                    w.compute_response(sys, h, false);
                }
            }
            if let Err(e) = osnsp.solve(model, sys, inters, t1, step) {
                sys.iter_mut().for_each(SystemWork::restore_start);
                return Err(e);
            }
            // unknown_i = free_i + Σ_α (shift_α,i + resp_α,i λ_α), scattered
            // from the interactions' side into the free unknown, in place.
            for w in inters.iter() {
                if !w.active {
                    continue;
                }
                for (k, &s) in w.systems.iter().enumerate() {
                    let unknown = sys[s].unknown_mut();
                    if !w.lagrangian {
                        unknown
                            .iter_mut()
                            .zip(&w.shift[k])
                            .for_each(|(u, d)| *u += d);
                    }
                    let n = unknown.len();
                    for (c, col) in w.resp[k].as_slice().chunks_exact(n).enumerate() {
                        let l = w.lambda[c];
                        if l != 0.0 {
                            unknown.iter_mut().zip(col).for_each(|(u, r)| *u += r * l);
                        }
                    }
                }
            }
            for k in 0..sys.len() {
                if coupled[k] && !sys[k].finish_linear_step(h, theta) {
                    let object = sys[k].name.clone();
                    sys.iter_mut().for_each(SystemWork::restore_start);
                    return Err(SimulationError::NonFinite {
                        t: t1,
                        step,
                        object,
                    });
                }
            }
        } else {
            // No problem: every multiplier is zero.
            for w in inters.iter_mut() {
                w.lambda.fill(0.0);
            }
        }
        for (w, inter) in inters.iter_mut().zip(model.interactions()) {
            w.update_output(&inter.relation, sys, t1);
        }
        stats.steps += 1;
        stats.solves = osnsp.solves;
        stats.solver_iterations = osnsp.iterations;
        Ok(())
    }

    /// The model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The settings.
    pub fn settings(&self) -> &TimeSteppingSettings {
        &self.settings
    }

    /// The family of the one-step problems.
    pub fn problem_family(&self) -> ProblemFamily {
        self.osnsp.family
    }

    /// Current time in seconds (exact tick converted once).
    pub fn time(&self) -> f64 {
        self.now()
    }

    /// Current instant in ticks, and the time base.
    pub fn tick(&self) -> (i64, TimeBase) {
        (self.tick, self.base)
    }

    /// Events processed at the last instant, in order.
    pub fn last_events(&self) -> &[Event] {
        &self.instant
    }

    /// True when the last instant had an output event (record a row).
    pub fn is_output_instant(&self) -> bool {
        self.instant.iter().any(|e| e.kind == EventKind::Output)
    }

    /// Name of an event source, for event logs: `step` (time discretisation),
    /// `output`.
    pub fn source_name(&self, id: SourceId) -> &str {
        self.source_names.get(id.0).map_or("?", |s| s.as_str())
    }

    /// Counters of the run so far.
    pub fn statistics(&self) -> Statistics {
        self.stats
    }

    /// Position q of a Lagrangian system, or state x of a first-order one.
    pub fn q(&self, s: SystemId) -> &[f64] {
        &self.sys[s.0].q
    }

    /// State x of a first-order system (same as [`TimeStepping::q`]).
    pub fn x(&self, s: SystemId) -> &[f64] {
        &self.sys[s.0].q
    }

    /// Velocity v of a Lagrangian system (empty for first-order systems).
    pub fn v(&self, s: SystemId) -> &[f64] {
        &self.sys[s.0].v
    }

    /// Output y of an interaction at the current time.
    pub fn y(&self, i: InteractionId) -> &[f64] {
        &self.inters[i.0].y
    }

    /// ẏ of a Lagrangian interaction at the current time.
    pub fn ydot(&self, i: InteractionId) -> &[f64] {
        &self.inters[i.0].ydot
    }

    /// λ of an interaction: for impact laws the impulse P of the last step,
    /// for first-order laws the multiplier λ_{k+1}.
    pub fn lambda(&self, i: InteractionId) -> &[f64] {
        &self.inters[i.0].lambda
    }

    /// The status of a frictional contact after the last step, one value:
    /// 0 separated, 1 sticking, 2 sliding (empty for other interactions).
    pub fn contact_status(&self, i: InteractionId) -> &[f64] {
        let w = &self.inters[i.0];
        if w.friction.is_some() {
            &w.status
        } else {
            &[]
        }
    }

    /// True when the interaction took part in the last step's problem.
    pub fn is_active(&self, i: InteractionId) -> bool {
        self.inters[i.0].active
    }

    /// Registers an event source on the simulation's clock: occurrences at
    /// ticks `offset + k·period` (k ≥ 0; once when `period` is `None`). Its
    /// events are returned by [`TimeStepping::last_events`] at their
    /// instants, in the documented order, for the caller to process; the
    /// simulation itself acts only on time-discretisation events. Instants
    /// must be on the integration grid t₀ + k h and not before the current
    /// instant; `name` appears in event logs.
    pub fn add_event_source(
        &mut self,
        kind: EventKind,
        offset: i64,
        period: Option<i64>,
        name: &str,
    ) -> Result<SourceId, SimulationError> {
        let grid = TickGrid {
            base: self.base,
            t0_tick: self.t0_tick,
            step_ticks: self.step_ticks,
            step: self.settings.step,
        };
        let id = self
            .events
            .add_on_grid(&grid, self.tick, kind, offset, period, name)?;
        debug_assert_eq!(id.0, self.source_names.len());
        self.source_names.push(name.to_string());
        Ok(id)
    }

    /// The last instant the simulation reaches (t_end, in ticks).
    pub fn end_tick(&self) -> i64 {
        self.end_tick
    }

    /// Sets the control input g of a system, held from now until changed
    /// (zero-order hold): a Lagrangian system gets M v̇ = F + g (+ Hᵀλ), a
    /// first-order one ẋ = f + g (+ r). g has the system's dimension.
    pub fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError> {
        let w = self
            .sys
            .get_mut(s.0)
            .ok_or_else(|| SimulationError::BadArgument(format!("no system {}", s.0)))?;
        check_system_input(&w.name, w.control.len(), g)?;
        w.control.copy_from_slice(g);
        w.has_control = g.iter().any(|&x| x != 0.0);
        Ok(())
    }

    /// The control input g of a system currently held.
    pub fn system_input(&self, s: SystemId) -> &[f64] {
        &self.sys[s.0].control
    }

    /// Sets the control input u of a first-order linear relation (held
    /// until changed).
    pub fn set_input(&mut self, i: InteractionId, u: &[f64]) -> Result<(), SimulationError> {
        let w = &mut self.inters[i.0];
        if w.u.len() != u.len() {
            return Err(SimulationError::BadArgument(format!(
                "interaction '{}': input of size {} given, its relation takes {}",
                w.name,
                u.len(),
                w.u.len()
            )));
        }
        w.u.copy_from_slice(u);
        Ok(())
    }
}

/// The interactions at the start of a step: ẏ_k is kept for the impact law
/// and unilateral interactions are activated (ỹ = y_k + γ h ẏ_k ≤ its
/// rounding bound; the normal row alone for a frictional contact). Returns
/// true when some interaction is active.
fn activate(inters: &mut [InteractionWork], h: f64, gamma: f64) -> bool {
    let mut any = false;
    for w in inters.iter_mut() {
        w.ydot_start.copy_from_slice(&w.ydot);
        if w.unilateral {
            // A frictional contact is tested on its normal row only.
            let rows = if w.friction.is_some() { 1 } else { w.m };
            w.active = (0..rows).any(|r| {
                w.y[r] + gamma * h * w.ydot[r] <= w.y_noise[r] + gamma * h * w.ydot_noise[r]
            });
        }
        any |= w.active;
    }
    any
}
