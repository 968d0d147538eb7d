//! FMI 2.0 and FMI 3.0 co-simulation export of nonsmooth scenarios
//! (docs/fmi.md).
//!
//! * `variables`: the scenario → FMI variable mapping (value references,
//!   causality, variability, units), used by both the export and the
//!   runtime;
//! * `model_description`: modelDescription.xml of either version, through
//!   one serializer;
//! * `export`: the FMU archive (`nonsmooth fmu export`);
//! * `runner`: the simulation behind an instance, behind the [`Runner`]
//!   trait ([`ScenarioRunner`]: the scenario's control loop, the one driver
//!   of every run, on the strategy the scenario names);
//! * `instance`: one instance of either version — state machine, argument
//!   checks, values, FMU states — over a runner;
//! * `instance_log`: an instance's log categories and messages, and what a
//!   runner error means for its state machine;
//! * `ffi`: what the two C layers share (panics caught, C arrays and
//!   strings, instantiation from resources/);
//! * `fmi2`, `fmi3`: the C entry points (`fmi2Instantiate`, `fmi2DoStep`,
//!   …; `fmi3InstantiateCoSimulation`, `fmi3DoStep` with early return,
//!   `fmi3UpdateDiscreteStates`, …), one thin function per standard name,
//!   exported when this crate is built as a cdylib.

pub mod config;
pub mod export;
pub mod ffi;
pub mod fmi2;
pub mod fmi3;
pub mod instance;
pub mod instance_log;
pub mod model_description;
pub mod runner;
pub mod variables;

pub use export::{export, ExportError, ExportRequest, ExportSummary};
pub use instance::{Instance, Phase, Status};
pub use runner::{Runner, RunnerError, RunnerState, ScenarioRunner};
pub use variables::{FmiVariable, Interface, VarKind};
