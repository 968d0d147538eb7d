//! A [`RigidWorld`] driven through the one driver surface: [`Simulation`].
//!
//! [`RigidSimulation`] advances a world on the exact clock of the core
//! (docs/architecture.md, "The one driver"): a time-discretisation event
//! every `step` from t₀, an output event every `output_every` steps (t₀
//! included), and the sources other layers register. Each
//! time-discretisation event is one world step (detection at the step's
//! start, then the Moreau–Jean contact step, docs/rigid-bodies.md).
//!
//! The values a run records are read through [`Simulation::q`] of a
//! stand-in [`Model`] built here: one first-order system per body, named
//! after it, whose "state" is the body's 13 numbers then its held input
//!
//! `[x, y, z, qw, qx, qy, qz, vx, vy, vz, Ωx, Ωy, Ωz, Fx, Fy, Fz, τx, τy, τz]`
//!
//! (centre of mass and velocity in the world frame, unit quaternion
//! body → world scalar first, angular velocity in the body frame; see
//! [`BODY_LAYOUT`]; the force F through the centre of mass in the world
//! frame and the torque τ in the body frame held on the body, see
//! [`BODY_INPUTS`]), and one system named [`WORLD_SYSTEM`] whose state is
//! [`WORLD_LAYOUT`]: kinetic energy, potential energy of gravity, detected
//! contacts, active contacts, solver iterations and solver error of the
//! last step, and the number of steps kept short of the solver's tolerance. The
//! stand-in systems are never integrated by the core; they only name the
//! values, and their A is a function of time so that no control law takes
//! them for a linear plant (a model-based law needs a `nominal` plant).
//!
//! **Inputs.** [`Simulation::set_system_input`] on a body's system takes
//! g of size 19 whose first 13 entries are zero (an actuator's B acts on
//! the input rows only) and holds g[13..16] as the force and g[16..19] as
//! the torque from the next step on, until changed (zero-order hold). They
//! enter the θ-scheme's free velocity as external loads
//! (`nonsmooth::rigid::HeldInput`).
//!
//! **State.** [`Simulation::save_state`] gives a
//! [`SimulationState::Rigid`] holding everything a later step reads (see
//! `nonsmooth::simulation::RigidState`); restoring it and stepping again
//! gives bit-identical values.
//!
//! A contact problem the solver does not solve to its tolerance stops the
//! run with [`SimulationError::SolverFailed`] (time, step, status, error),
//! unless the contact settings give an `accept_error` e_acc: a step whose
//! solver stopped at its iteration limit with a finite error ≤ e_acc is
//! then kept and counted in `unsolved_steps` (never silently: the count and
//! each step's error are recorded values).

use std::sync::Arc;

use nalgebra::{DMatrix, DVector, Vector3};
use nonsmooth::modelling::{
    FirstOrderLinear, InteractionId, Model, ModelBuilder, SystemId, TimeMatrix,
};
use nonsmooth::numerics::SolveStatus;
use nonsmooth::rigid::{BodyState, HeldInput};
use nonsmooth::simulation::Simulation;
use nonsmooth::simulation::{
    Event, EventKind, EventManager, SimulationError, SimulationState, SourceId, StateError,
    Statistics, StepOutcome, Strategy, TickGrid, TimeBase,
};

use crate::world::{RigidWorld, WorldError};

mod state;

/// The name of the stand-in system that carries the world's values.
pub const WORLD_SYSTEM: &str = "world";

/// The components of a body's stand-in state: (name, offset, size).
pub const BODY_LAYOUT: [(&str, usize, usize); 4] = [
    ("position", 0, 3),
    ("quaternion", 3, 4),
    ("velocity", 7, 3),
    ("omega", 10, 3),
];

/// The held inputs in a body's stand-in state: (name, offset, size); the
/// force through the centre of mass in the world frame (N), the torque
/// about it in the body frame (N·m).
pub const BODY_INPUTS: [(&str, usize, usize); 2] = [("force", 13, 3), ("torque", 16, 3)];

/// The components of the world's stand-in state: (name, offset, size).
pub const WORLD_LAYOUT: [(&str, usize, usize); 7] = [
    ("kinetic_energy", 0, 1),
    ("potential_energy", 1, 1),
    ("contacts", 2, 1),
    ("active_contacts", 3, 1),
    ("solver_iterations", 4, 1),
    ("solver_error", 5, 1),
    ("unsolved_steps", 6, 1),
];

/// The size of a body's stand-in state: 13 values, then 6 held inputs.
pub const BODY_DIM: usize = 19;
/// The number of a body's values before its held inputs.
const BODY_VALUES: usize = 13;
const WORLD_DIM: usize = 7;

/// The clock of a rigid run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidClock {
    /// Initial time (s).
    pub t0: f64,
    /// Final time (s).
    pub t_end: f64,
    /// Time step h (s).
    pub step: f64,
    /// An output every this many steps (≥ 1).
    pub output_every: u64,
}

/// Writes a body's 13 numbers (see [`BODY_LAYOUT`]).
pub fn body_values(s: &BodyState, out: &mut [f64]) {
    let q = s.orientation.quaternion();
    out[..3].copy_from_slice(s.position.as_slice());
    out[3..7].copy_from_slice(&[q.w, q.i, q.j, q.k]);
    out[7..10].copy_from_slice(s.velocity.as_slice());
    out[10..13].copy_from_slice(s.omega.as_slice());
}

/// The stand-in model that names a rigid run's values: one first-order
/// system of dimension 13 per body (named `names[b]`, see [`BODY_LAYOUT`]),
/// then the system [`WORLD_SYSTEM`] ([`WORLD_LAYOUT`]). Names must be
/// distinct and none may be [`WORLD_SYSTEM`].
pub fn stand_in_model(names: &[String]) -> Result<Model, SimulationError> {
    let mut builder = ModelBuilder::new();
    // A as a function of time: the stand-in is no linear plant.
    let stand_in = |dim: usize| {
        FirstOrderLinear::new(DVector::zeros(dim), DMatrix::zeros(dim, dim)).with_a(
            TimeMatrix::Function {
                rows: dim,
                cols: dim,
                f: Arc::new(|_, a: &mut DMatrix<f64>| a.fill(0.0)),
            },
        )
    };
    for name in names {
        if name == WORLD_SYSTEM {
            return Err(SimulationError::BadArgument(format!(
                "a body may not be named `{WORLD_SYSTEM}` (the name of the world's values)"
            )));
        }
        builder
            .add_system(name, stand_in(BODY_DIM))
            .map_err(|e| SimulationError::BadArgument(e.to_string()))?;
    }
    builder
        .add_system(WORLD_SYSTEM, stand_in(WORLD_DIM))
        .map_err(|e| SimulationError::BadArgument(e.to_string()))?;
    Ok(builder.build())
}

/// A rigid world as a [`Simulation`].
pub struct RigidSimulation {
    model: Arc<Model>,
    world: RigidWorld,
    base: TimeBase,
    h: f64,
    t0_tick: i64,
    step_ticks: i64,
    tick: i64,
    end_tick: i64,
    events: EventManager,
    instant: Vec<Event>,
    names: Vec<String>,
    output: bool,
    /// Stand-in state of each body, then of the world.
    values: Vec<Vec<f64>>,
    stats: Statistics,
    /// Steps kept with the solver short of its tolerance (`accept_error`).
    unsolved: u64,
    /// The held input g of each body (19 entries: zeros, then force and
    /// torque), then of the world (7 zeros).
    g: Vec<f64>,
    empty: Vec<f64>,
}

impl std::fmt::Debug for RigidSimulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigidSimulation")
            .field("bodies", &self.world.bodies().len())
            .field("tick", &self.tick)
            .field("stats", &self.stats)
            .finish()
    }
}

impl RigidSimulation {
    /// A run of `world` (at its time t₀) whose values are named by `model`
    /// (from [`stand_in_model`] with one name per body), on a clock in which
    /// `clock`'s times and the `extra` times (periods, offsets and delays
    /// of the objects that will register event sources) are whole numbers
    /// of ticks.
    pub fn new(
        world: RigidWorld,
        model: Arc<Model>,
        clock: RigidClock,
        extra: &[(&'static str, f64)],
    ) -> Result<RigidSimulation, SimulationError> {
        let n = world.bodies().len();
        let fits = model.systems().len() == n + 1
            && model.systems()[..n].iter().all(|s| s.ds.dim() == BODY_DIM)
            && model.systems()[n].ds.dim() == WORLD_DIM
            && model.systems()[n].name == WORLD_SYSTEM;
        if !fits {
            return Err(SimulationError::BadArgument(format!(
                "the model does not name the values of {n} bodies (build it with stand_in_model)"
            )));
        }
        if !(clock.step.is_finite() && clock.step > 0.0) {
            return Err(SimulationError::InvalidSetting {
                what: "step",
                value: clock.step,
                reason: "must be finite and > 0",
            });
        }
        if clock.t_end.is_nan() || clock.t_end < clock.t0 {
            return Err(SimulationError::InvalidSetting {
                what: "t_end",
                value: clock.t_end,
                reason: "must not be before t0",
            });
        }
        if clock.output_every == 0 {
            return Err(SimulationError::InvalidSetting {
                what: "output_every",
                value: 0.0,
                reason: "must be at least 1",
            });
        }
        let nonsmooth::simulation::clock::SteppingClock {
            base,
            t0_tick,
            step_ticks,
            end_tick,
            events,
        } = nonsmooth::simulation::clock::stepping_clock(
            clock.t0,
            clock.t_end,
            clock.step,
            clock.output_every,
            extra,
        )?;
        let mut sim = RigidSimulation {
            model,
            world,
            base,
            h: clock.step,
            t0_tick,
            step_ticks,
            tick: t0_tick,
            end_tick,
            events,
            instant: Vec::new(),
            names: vec!["step".into(), "output".into()],
            output: false,
            values: (0..n)
                .map(|_| vec![0.0; BODY_DIM])
                .chain(std::iter::once(vec![0.0; WORLD_DIM]))
                .collect(),
            stats: Statistics::default(),
            unsolved: 0,
            g: vec![0.0; n * BODY_DIM + WORLD_DIM],
            empty: Vec::new(),
        };
        sim.publish(0, 0, 0, 0.0);
        Ok(sim)
    }

    /// The world.
    pub fn world(&self) -> &RigidWorld {
        &self.world
    }

    /// Steps kept so far with the solver short of its tolerance.
    pub fn unsolved_steps(&self) -> u64 {
        self.unsolved
    }

    fn publish(&mut self, contacts: usize, active: usize, iterations: usize, error: f64) {
        let n = self.world.bodies().len();
        for (b, s) in self.world.states().iter().enumerate() {
            body_values(s, &mut self.values[b]);
            self.values[b][BODY_VALUES..]
                .copy_from_slice(&self.g[b * BODY_DIM + BODY_VALUES..(b + 1) * BODY_DIM]);
        }
        let w = &mut self.values[n];
        w[0] = self.world.kinetic_energy();
        w[1] = self.world.potential_energy();
        w[2] = contacts as f64;
        w[3] = active as f64;
        w[4] = iterations as f64;
        w[5] = error;
        w[6] = self.unsolved as f64;
    }

    fn integrate(&mut self, t1: f64) -> Result<(), SimulationError> {
        let step = self.stats.steps + 1;
        let report = self.world.step(self.h).map_err(|e| match e {
            WorldError::Rigid(nonsmooth::rigid::RigidError::Numerics(e)) => {
                SimulationError::Numerics(e)
            }
            e => SimulationError::Imported(Box::new(e)),
        })?;
        self.stats.steps = step;
        let mut iterations = 0;
        let mut error = 0.0;
        if let Some(r) = report.solve {
            self.stats.solves += 1;
            self.stats.solver_iterations += r.iterations as u64;
            iterations = r.iterations;
            error = r.error;
            let accepted = |e_acc: f64| {
                r.status == SolveStatus::IterationLimit && r.error.is_finite() && r.error <= e_acc
            };
            let keep = self
                .world
                .contact_settings()
                .accept_error
                .is_some_and(accepted);
            if !r.status.is_solved() && keep {
                self.unsolved += 1;
            } else if !r.status.is_solved() {
                return Err(SimulationError::SolverFailed {
                    t: t1,
                    step,
                    solver: r.solver,
                    status: r.status.as_str(),
                    error: r.error,
                    size: 3 * report.active,
                });
            }
        }
        self.stats.newton_iterations += report.newton_iterations as u64;
        for (b, s) in self.world.states().iter().enumerate() {
            let finite = s.position.iter().all(|v| v.is_finite())
                && s.velocity.iter().all(|v| v.is_finite())
                && s.omega.iter().all(|v| v.is_finite());
            if !finite {
                return Err(SimulationError::NonFinite {
                    t: t1,
                    step,
                    object: self.model.system(SystemId(b)).name.clone(),
                });
            }
        }
        self.publish(report.contacts, report.active, iterations, error);
        Ok(())
    }
}

impl Simulation for RigidSimulation {
    fn strategy(&self) -> Strategy {
        Strategy::TimeStepping
    }

    fn model(&self) -> &Arc<Model> {
        &self.model
    }

    fn add_event_source(
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
            step: self.h,
        };
        let id = self
            .events
            .add_on_grid(&grid, self.tick, kind, offset, period, name)?;
        self.names.push(name.to_string());
        Ok(id)
    }

    fn step(&mut self) -> Result<StepOutcome, SimulationError> {
        match self.events.next_tick() {
            Some(next) if next <= self.end_tick => {}
            _ => return Ok(StepOutcome::Finished),
        }
        let mut instant = std::mem::take(&mut self.instant);
        let tick = self
            .events
            .pop_instant(&mut instant)
            .expect("an event is pending");
        let t = self.base.seconds(tick);
        let steps = instant
            .iter()
            .filter(|e| e.kind == EventKind::TimeDiscretisation)
            .count();
        self.output = instant.iter().any(|e| e.kind == EventKind::Output);
        self.instant = instant;
        for _ in 0..steps {
            self.integrate(t)?;
        }
        self.tick = tick;
        Ok(StepOutcome::Advanced { tick, t })
    }

    fn last_events(&self) -> &[Event] {
        &self.instant
    }

    fn source_name(&self, id: SourceId) -> &str {
        self.names.get(id.0).map(String::as_str).unwrap_or("?")
    }

    fn is_output_instant(&self) -> bool {
        self.output
    }

    fn next_event_tick(&self) -> Option<i64> {
        self.events.next_tick().filter(|&t| t <= self.end_tick)
    }

    fn grid(&self) -> Option<(i64, i64)> {
        Some((self.step_ticks, self.t0_tick))
    }

    fn pending_tick(&self, id: SourceId) -> Option<i64> {
        self.events.pending_tick(id)
    }

    fn tick(&self) -> (i64, TimeBase) {
        (self.tick, self.base)
    }

    fn time(&self) -> f64 {
        self.base.seconds(self.tick)
    }

    fn end_tick(&self) -> i64 {
        self.end_tick
    }

    fn q(&self, s: SystemId) -> &[f64] {
        self.values.get(s.0).map_or(&self.empty, Vec::as_slice)
    }

    fn v(&self, _: SystemId) -> &[f64] {
        &self.empty
    }

    fn y(&self, _: InteractionId) -> &[f64] {
        &self.empty
    }

    fn ydot(&self, _: InteractionId) -> &[f64] {
        &self.empty
    }

    fn lambda(&self, _: InteractionId) -> &[f64] {
        &self.empty
    }

    fn set_system_input(&mut self, s: SystemId, g: &[f64]) -> Result<(), SimulationError> {
        let n = self.world.bodies().len();
        let name = |s: SystemId| self.model.system(s).name.clone();
        if s.0 >= n {
            return Err(SimulationError::BadArgument(if s.0 == n {
                format!("`{WORLD_SYSTEM}` takes no input (forces and torques act on bodies)")
            } else {
                format!("no system {} ({} bodies)", s.0, n)
            }));
        }
        if g.len() != BODY_DIM {
            return Err(SimulationError::BadArgument(format!(
                "body `{}`: an input of size {} for a system of size {BODY_DIM}",
                name(s),
                g.len()
            )));
        }
        if g[..BODY_VALUES].iter().any(|&x| x != 0.0) {
            return Err(SimulationError::BadArgument(format!(
                "body `{}`: an input acts on a value entry (rows 0..{BODY_VALUES} of B must be zero; \
                 the inputs are rows {BODY_VALUES}..{BODY_DIM}: force, then torque)",
                name(s)
            )));
        }
        let v = |i: usize| Vector3::new(g[i], g[i + 1], g[i + 2]);
        let input = HeldInput {
            force: v(BODY_VALUES),
            torque: v(BODY_VALUES + 3),
        };
        self.world
            .set_held_input(s.0, input)
            .map_err(|e| SimulationError::BadArgument(format!("body `{}`: {e}", name(s))))?;
        self.g[s.0 * BODY_DIM..(s.0 + 1) * BODY_DIM].copy_from_slice(g);
        self.values[s.0][BODY_VALUES..].copy_from_slice(&g[BODY_VALUES..]);
        Ok(())
    }

    fn system_input(&self, s: SystemId) -> &[f64] {
        let n = self.world.bodies().len();
        match s.0 {
            b if b < n => &self.g[b * BODY_DIM..(b + 1) * BODY_DIM],
            b if b == n => &self.g[n * BODY_DIM..],
            _ => &self.empty,
        }
    }

    fn set_input(&mut self, _: InteractionId, _: &[f64]) -> Result<(), SimulationError> {
        Err(SimulationError::Unsupported(
            "a rigid world has no relation inputs".into(),
        ))
    }

    fn relation_input(&self, _: InteractionId) -> &[f64] {
        &self.empty
    }

    fn statistics(&self) -> Statistics {
        self.stats
    }

    fn save_state(&self) -> Result<SimulationState, StateError> {
        Ok(SimulationState::Rigid(Box::new(self.rigid_state())))
    }

    fn restore_state(&mut self, state: &SimulationState) -> Result<(), StateError> {
        match state {
            SimulationState::Rigid(s) => self.put_state(s),
            _ => Err(StateError::Mismatch(
                "the state of another strategy cannot be restored into a rigid-body run".into(),
            )),
        }
    }
}
