//! Shared pieces of the controller tests: plants, an open-loop input, runs
//! recorded at a controller's instants.
#![allow(dead_code)]

use nalgebra::{dmatrix, DMatrix, DVector};
use nonsmooth::control::{
    ActuatorSpec, ControlError, ControlLoop, Controller, ControllerId, ControllerSetup, InputMap,
    Measurement, SensorSpec, Timing,
};
use nonsmooth::modelling::dynamical_system::FirstOrderLinear;
use nonsmooth::modelling::{Model, ModelBuilder, SystemId};
use nonsmooth::simulation::{FirstOrderScheme, TimeSteppingSettings};

/// An open-loop input u(t) = f(t) (no measurement): perturbations and
/// excitations of the test plants.
pub struct OpenLoop<F>(pub F);

impl<F: Fn(f64) -> f64 + Send> Controller for OpenLoop<F> {
    fn law(&self) -> &'static str {
        "open_loop"
    }
    fn initialize(&mut self, _: &ControllerSetup) -> Result<(), ControlError> {
        Ok(())
    }
    fn compute(&mut self, t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = (self.0)(t);
        Ok(())
    }
    // u a function of t only: no memory.
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

/// ẋ = A x (+ inputs), one first-order system named "plant".
pub fn linear_plant(x0: &[f64], a: DMatrix<f64>) -> (Model, SystemId) {
    let mut mb = ModelBuilder::new();
    let s = mb
        .add_system(
            "plant",
            FirstOrderLinear::new(DVector::from_column_slice(x0), a),
        )
        .unwrap();
    (mb.build(), s)
}

/// The double integrator ẋ₁ = x₂, ẋ₂ = inputs.
pub fn double_integrator(x0: [f64; 2]) -> (Model, SystemId) {
    linear_plant(&x0, dmatrix![0.0, 1.0; 0.0, 0.0])
}

/// Time stepping with the exact zero-order-hold scheme.
pub fn zoh_settings(step: f64, t_end: f64) -> TimeSteppingSettings {
    let mut s = TimeSteppingSettings::new(step, t_end);
    s.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
    s
}

/// A sensor spec with period T, no delay.
pub fn sensor(system: SystemId, c: DMatrix<f64>, period: f64) -> SensorSpec {
    SensorSpec {
        system,
        c,
        timing: Timing::periodic(period),
    }
}

/// An actuator u ↦ B u with period T, no delay.
pub fn actuator(system: SystemId, b: DMatrix<f64>, period: f64) -> ActuatorSpec {
    ActuatorSpec {
        system,
        input: InputMap::Matrix(b),
        timing: Timing::periodic(period),
        u0: None,
    }
}

/// Adds an open-loop input f(t) through the column b, held over each step
/// `period` (a perturbation acting on the plant).
pub fn add_open_loop(
    lb: &mut nonsmooth::control::ControlLoopBuilder,
    name: &str,
    system: SystemId,
    b: DMatrix<f64>,
    period: f64,
    f: impl Fn(f64) -> f64 + Send + 'static,
) -> ControllerId {
    lb.add_controller(
        name,
        Measurement::None,
        Box::new(OpenLoop(f)),
        actuator(system, b, period),
    )
    .unwrap()
}

/// True when the controller `name` computed at the instant just processed.
pub fn fired(cl: &ControlLoop, name: &str) -> bool {
    cl.plant()
        .last_events()
        .iter()
        .any(|e| cl.source_name(e.source) == name)
}

/// What a run recorded at one of a controller's instants.
#[derive(Debug, Clone)]
pub struct Sample {
    /// t_k.
    pub t: f64,
    /// The plant state x(t_k) (what a C = I sensor reads).
    pub x: Vec<f64>,
    /// The input computed at t_k.
    pub u: Vec<f64>,
    /// The requested signals, in the order asked.
    pub signals: Vec<Vec<f64>>,
}

/// Runs the loop to its end; records a [`Sample`] at every instant of the
/// controller `ctl` (named "ctl"), and calls `each` after every instant.
pub fn run_recording(
    cl: &mut ControlLoop,
    system: SystemId,
    ctl: ControllerId,
    signals: &[&str],
    mut each: impl FnMut(&ControlLoop),
) -> Vec<Sample> {
    let name = "ctl";
    assert_eq!(
        cl.controller_id(name),
        Some(ctl),
        "the controller under test is named ctl"
    );
    let mut out = Vec::new();
    cl.run(|cl| {
        if fired(cl, name) {
            out.push(Sample {
                t: cl.time(),
                x: cl.plant().q(system).to_vec(),
                u: cl.controller_computed(ctl).to_vec(),
                signals: signals
                    .iter()
                    .map(|s| cl.controller_signal(ctl, s).unwrap().to_vec())
                    .collect(),
            });
        }
        each(cl);
    })
    .unwrap();
    out
}

/// max |v| over a slice of samples' values.
pub fn max_abs(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(0.0, |m, x| m.max(x.abs()))
}
