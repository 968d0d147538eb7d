//! Control: sensors, observers and controllers with their actuators, sampled
//! on the plant's exact clock with delays of any length (seed 004 §4).
//!
//! A [`ControlLoop`] drives a plant simulation (any
//! [`Simulation`](crate::simulation::Simulation)) and runs, at each instant, the events of its objects in the
//! order time-discretisation → nonsmooth → sensor → observer → actuator →
//! output (docs/how-a-step-proceeds.md). Control laws implement
//! [`Controller`], observers [`Observer`]; the laws themselves live in the
//! `nonsmooth-controllers` crate. [`ControlLoop::save_state`] and
//! [`ControlLoop::restore_state`] roll a loop back bit-identically (the
//! plant, the laws' memories, the delay lines: [`ControlLoopState`]).
//!
//! ```
//! use nalgebra::{dmatrix, dvector};
//! use nonsmooth::control::*;
//! use nonsmooth::modelling::{dynamical_system::FirstOrderLinear, ModelBuilder};
//! use nonsmooth::simulation::TimeSteppingSettings;
//!
//! /// u = −k y.
//! struct Gain(f64);
//! impl Controller for Gain {
//!     fn law(&self) -> &'static str { "gain" }
//!     fn initialize(&mut self, _: &ControllerSetup) -> Result<(), ControlError> { Ok(()) }
//!     fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
//!         u[0] = -self.0 * y[0];
//!         Ok(())
//!     }
//!     // No memory: nothing to save.
//!     fn save_state(&self, _: &mut Vec<f64>) {}
//!     fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> { Ok(0) }
//! }
//!
//! let mut mb = ModelBuilder::new();
//! let plant = mb.add_system("plant", FirstOrderLinear::new(dvector![1.0], dmatrix![0.0])).unwrap();
//! let mut lb = ControlLoopBuilder::new(mb.build());
//! let sensor = lb.add_sensor("sensor", SensorSpec {
//!     system: plant, c: dmatrix![1.0], timing: Timing::periodic(0.1),
//! }).unwrap();
//! let actuator = ActuatorSpec {
//!     system: plant, input: InputMap::Matrix(dmatrix![1.0]),
//!     timing: Timing::periodic(0.1), u0: None,
//! };
//! lb.add_controller("controller", Measurement::Sensor(sensor), Box::new(Gain(2.0)), actuator).unwrap();
//! let mut cl = lb.build_time_stepping(TimeSteppingSettings::new(0.01, 1.0)).unwrap();
//! cl.run(|_| {}).unwrap();
//! let x = cl.plant().q(plant)[0];
//! assert!(x.abs() < 0.2);
//! ```

mod catalog;
mod control_loop;
mod delay_line;
mod error;
mod law;
mod timing;

pub use catalog::{LawCatalog, LawParams, LawValue, NoLaws};
pub use control_loop::{
    ActuatorSpec, ControlLoop, ControlLoopBuilder, ControlLoopState, ControllerId, InputFn,
    InputMap, Measurement, ObserverId, SensorId, SensorSpec,
};
pub use error::ControlError;
pub use law::{Controller, ControllerSetup, LinearPlant, Observer, ObserverSetup, StateReader};
pub use timing::Timing;
