//! The closed loop: a plant simulation plus sensors, observers and
//! controllers (each with its actuator), all scheduled on the plant's exact
//! clock.
//!
//! At an instant t_k the events run in the documented order
//! (docs/how-a-step-proceeds.md): the plant's integration step ending at
//! t_k, then sensors (a capture reads x(t_k)⁺; a delayed delivery hands over
//! the measurement taken at t_k − d), observers, actuators (a controller
//! computes u_k; a delayed application applies the u computed at t_k − d),
//! outputs. An input applied at t_k is held by the plant (zero-order hold)
//! from t_k on, so the step that starts at t_k uses it. Inputs of several
//! actuators on one system add: g = Σ_a B_a u_a.
//!
//! This module holds the loop's types; [`ControlLoopBuilder`]'s construction
//! and validation, and the registering of the loop's event sources, are in
//! `builder.rs`; the running loop (step, event processing, inputs and
//! readings) in `runtime.rs`; saved states in `state.rs`.

use std::sync::Arc;

use nalgebra::DMatrix;

mod builder;
mod runtime;
mod state;
mod within_step;

pub use state::ControlLoopState;

use super::delay_line::DelayLine;
use super::error::ControlError;
use super::law::{Controller, Observer};
use super::timing::Timing;
use crate::modelling::{InteractionId, Model, SystemId};
use crate::simulation::Simulation;

/// A handle to a sensor of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SensorId(pub usize);
/// A handle to an observer of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObserverId(pub usize);
/// A handle to a controller (and its actuator) of a [`ControlLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControllerId(pub usize);

/// A nonlinear input map g = G(t, q, v, u) (q = x, v empty for first-order
/// systems), evaluated when an input is applied and held with it.
pub type InputFn = Arc<dyn Fn(f64, &[f64], &[f64], &[f64], &mut [f64]) + Send + Sync>;

/// How an actuator's input u enters its system.
#[derive(Clone)]
pub enum InputMap {
    /// g = B u, B of size n × m (n the system's dimension: forces of a
    /// Lagrangian system, vector field of a first-order one).
    Matrix(DMatrix<f64>),
    /// g = G(t, q, v, u) with u of size `inputs`.
    Function {
        /// m, the size of u.
        inputs: usize,
        /// G.
        map: InputFn,
    },
}

impl std::fmt::Debug for InputMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputMap::Matrix(b) => f.debug_tuple("Matrix").field(b).finish(),
            InputMap::Function { inputs, .. } => {
                f.debug_struct("Function").field("inputs", inputs).finish()
            }
        }
    }
}

impl InputMap {
    fn inputs(&self) -> usize {
        match self {
            InputMap::Matrix(b) => b.ncols(),
            InputMap::Function { inputs, .. } => *inputs,
        }
    }
}

/// A linear sensor y = C x (+ D u of one controller), x the system's state
/// (x for first-order systems, (q, v) stacked for Lagrangian ones).
#[derive(Debug, Clone)]
pub struct SensorSpec {
    /// The measured system.
    pub system: SystemId,
    /// C, p × n_x.
    pub c: DMatrix<f64>,
    /// When it measures and how late its values arrive.
    pub timing: Timing,
}

/// Where a controller's measurement comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measurement {
    /// No measurement (open-loop laws).
    None,
    /// The latest value a sensor delivered.
    Sensor(SensorId),
    /// An observer's current estimate.
    Observer(ObserverId),
}

/// The actuator of a controller.
#[derive(Debug, Clone)]
pub struct ActuatorSpec {
    /// The actuated system.
    pub system: SystemId,
    /// How u enters it.
    pub input: InputMap,
    /// When the controller computes (period, offset) and how late its input
    /// reaches the plant (delay).
    pub timing: Timing,
    /// The input held before the first application (zeros when `None`).
    pub u0: Option<Vec<f64>>,
}

struct SensorRt {
    name: String,
    system: SystemId,
    c: DMatrix<f64>,
    feedthrough: Option<(DMatrix<f64>, usize)>,
    timing: Timing,
    state: Vec<f64>,
    captured: Vec<f64>,
    delivered: Vec<f64>,
    has_value: bool,
    line: Option<DelayLine>,
    /// For a sensor fed from outside the loop: the value held, which its
    /// captures read in place of C x.
    fed: Option<Vec<f64>>,
    /// Interactions whose λ follow C x in the measurement.
    contacts: Vec<InteractionId>,
}

impl SensorRt {
    /// The size of the measurement: the rows of C and the contacts' λ.
    fn dim(&self) -> usize {
        self.captured.len()
    }
}

struct ObserverRt {
    name: String,
    sensor: usize,
    law: Box<dyn Observer>,
    timing: Timing,
    /// M⁻¹ of a Lagrangian plant, to put the force g in state coordinates.
    mass_inverse: Option<DMatrix<f64>>,
    g_state: Vec<f64>,
    x0: Vec<f64>,
}

struct ControllerRt {
    name: String,
    measurement: Measurement,
    law: Box<dyn Controller>,
    system: SystemId,
    input: InputMap,
    timing: Timing,
    computed: Vec<f64>,
    applied: Vec<f64>,
    contribution: Vec<f64>,
    line: Option<DelayLine>,
    signals: Vec<&'static str>,
    /// The interaction whose relation input this actuator also drives, and
    /// the matrix P of its share P u ([`ControlLoopBuilder::drive_relation_input`]).
    relation: Option<(InteractionId, DMatrix<f64>)>,
    /// The instant τ of a change of u its law scheduled and the loop has
    /// not applied yet ([`Controller::scheduled_change`]); +∞ when none.
    change_at: f64,
    /// The law may schedule changes ([`Controller::schedules_changes`]).
    schedules: bool,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    None,
    Capture(usize),
    Deliver(usize),
    Observe(usize),
    Compute(usize),
    Apply(usize),
}

/// Collects the objects of a control loop; [`ControlLoopBuilder::build`]
/// checks them and schedules their events.
pub struct ControlLoopBuilder {
    model: Arc<Model>,
    names: Vec<String>,
    sensors: Vec<SensorRt>,
    observers: Vec<ObserverRt>,
    controllers: Vec<ControllerRt>,
}

/// A sensor fed from outside captures the value set there, not C x + D u.
fn fed_with_feedthrough(name: &str) -> ControlError {
    ControlError::Unsupported {
        object: name.into(),
        reason: "a sensor fed from outside has no feedthrough D u (its value is the one set)"
            .into(),
    }
}

fn dim_err(object: &str, what: &'static str, got: String, expected: String) -> ControlError {
    ControlError::Dimension {
        object: object.to_string(),
        what,
        got,
        expected,
    }
}

/// The size of the state a sensor reads: n, or 2n for a Lagrangian system.
fn state_dim(model: &Model, s: SystemId) -> usize {
    let ds = &model.system(s).ds;
    if ds.is_lagrangian() {
        2 * ds.dim()
    } else {
        ds.dim()
    }
}

/// A closed loop: the plant simulation and the sampled objects acting on
/// it. See the module documentation for the order of events.
pub struct ControlLoop {
    plant: Box<dyn Simulation>,
    sensors: Vec<SensorRt>,
    observers: Vec<ObserverRt>,
    controllers: Vec<ControllerRt>,
    actions: Vec<Action>,
    inputs: Vec<Vec<f64>>,
    /// Inputs set from outside the loop (e.g. an FMI input), per system.
    external: Vec<Vec<f64>>,
    /// The laws' states before a restore, to undo a restore that fails.
    undo: Vec<f64>,
    /// The instant reached by `reach` and not yet processed by `process`
    /// (the loop's events of it are still to do).
    actions_pending: bool,
    /// Scratch for a relation input u_r = Σ_a P_a u_a, kept between
    /// applications so that applying an input allocates nothing.
    relation_u: Vec<f64>,
    /// The earliest pending scheduled change over the controllers (+∞ when
    /// none): the one comparison a step makes for actuations inside steps.
    next_change: f64,
}
