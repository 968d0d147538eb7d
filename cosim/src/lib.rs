//! Co-simulation: FMI 2.0 and 3.0 co-simulation FMUs exported by other tools,
//! loaded ([`Fmu`]), instantiated and stepped ([`Instance`]), and coupled
//! on the exact clock of the core crate by the master ([`CoSimulation`]),
//! one more implementation of the driver trait
//! [`nonsmooth::simulation::Simulation`].
//!
//! The FMI C ABI is reached through the `fmi` crate (rust-fmi 0.7): FMI
//! 2.0 through its instances, FMI 3.0 through its generated bindings,
//! called by this crate's thin loader (`import/fmi3.rs`, each `unsafe`
//! block one FMI call with its SAFETY comment); the other `unsafe` of
//! this crate is the `Send` promise of [`Instance`].

#![deny(missing_docs)]

pub mod error;
pub mod import;
pub mod master;
pub mod scenario;

pub use error::CosimError;
pub use import::{
    Capabilities, Description, Element, Fmu, Instance, SavedState, Start, StepResult, VarCausality,
    VarType, VarVariability, Variable,
};
pub use master::{
    CoSimState, CoSimulation, Connection, Coupling, EndWatch, FmuSpec, MasterSettings, Termination,
    WithNominalPlant,
};
