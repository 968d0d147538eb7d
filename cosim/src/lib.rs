//! Co-simulation: FMI 2.0 co-simulation FMUs exported by other tools,
//! loaded ([`Fmu`]), instantiated and stepped ([`Instance`]), and coupled
//! on the exact clock of the core crate by the master ([`CoSimulation`]),
//! one more implementation of the driver trait
//! [`nonsmooth::simulation::Simulation`].
//!
//! The FMI C ABI is reached through the `fmi` crate (rust-fmi 0.7); the
//! only `unsafe` of this crate is the `Send` promise of [`Instance`]
//! (see its SAFETY comment).

#![deny(missing_docs)]

pub mod error;
pub mod import;
pub mod master;
pub mod scenario;

pub use error::CosimError;
pub use import::{
    Capabilities, Description, Fmu, Instance, SavedState, Start, StepResult, VarCausality, VarType,
    VarVariability, Variable,
};
pub use master::{
    CoSimState, CoSimulation, Connection, Coupling, EndWatch, FmuSpec, MasterSettings, Termination,
    WithNominalPlant,
};
