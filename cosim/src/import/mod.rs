//! FMU import: the archive and its description ([`Fmu`]), running
//! instances ([`Instance`]).

mod description;
mod fmi3;
mod fmu;
mod instance;
mod xml_check;

pub use description::{
    Capabilities, Description, Element, Start, VarCausality, VarType, VarVariability, Variable,
};
pub use fmu::Fmu;
pub use instance::{Instance, SavedState, StepResult};
