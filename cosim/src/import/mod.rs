//! FMU import: the archive and its description ([`Fmu`]), running
//! instances ([`Instance`]).

mod description;
mod fmu;
mod instance;

pub use description::{
    Capabilities, Description, Start, VarCausality, VarType, VarVariability, Variable,
};
pub use fmu::Fmu;
pub use instance::{Instance, SavedState, StepResult};
