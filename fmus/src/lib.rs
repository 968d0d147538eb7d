//! FMI 2.0 and FMI 3.0 co-simulation export of nonsmooth scenarios
//! (docs/fmi.md).
//!
//! * `variables`: the scenario → FMI variable mapping (value references,
//!   causality, variability, units), used by both the export and the
//!   runtime;
//! * `xml`: modelDescription.xml;
//! * `export`: the FMU archive (`nonsmooth fmu export`);
//! * `runner`: the simulation behind an instance, behind the [`Runner`]
//!   trait ([`ScenarioRunner`]: the scenario's control loop, the one driver
//!   of every run, on a time-stepping plant);
//! * `component`: one instance's state machine, checks and logging;
//! * `handles`: the FMU-state handles an instance gave its host;
//! * `instance_log`: an instance's log categories and messages, and what a
//!   runner error means for its state machine (FMI 2.0 and 3.0 alike);
//! * `fmi2`: the C entry points of the shared library (`fmi2Instantiate`,
//!   `fmi2DoStep`, …), exported when this crate is built as a cdylib;
//! * `fmi3`: the FMI 3.0 modelDescription, instance state machine and C
//!   entry points (`fmi3InstantiateCoSimulation`, `fmi3DoStep` with early
//!   return, `fmi3UpdateDiscreteStates`, …), in the same library.

pub mod component;
pub mod config;
pub mod export;
pub mod fmi2;
pub mod fmi3;
pub mod handles;
pub mod instance_log;
pub mod runner;
pub mod variables;
pub mod xml;

pub use export::{export, ExportError, ExportRequest, ExportSummary};
pub use runner::{Runner, RunnerError, RunnerState, ScenarioRunner};
pub use variables::{FmiVariable, Interface, VarKind};
