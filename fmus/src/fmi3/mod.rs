//! FMI 3.0 co-simulation: the modelDescription writer (`xml`), the state
//! machine of an instance (`instance`), and the C entry points under their
//! plain `fmi3*` names (`abi`: what a co-simulation host calls; `unsupported`:
//! the functions of model exchange, scheduled execution, clocks and
//! derivatives, which answer `fmi3Error`). The FMI 2.0 entry points
//! (`crate::fmi2`) live in the same library; an FMU's modelDescription.xml
//! says which set a host uses.

pub mod abi;
pub mod instance;
pub mod unsupported;
pub mod xml;
