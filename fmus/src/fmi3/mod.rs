//! FMI 3.0 co-simulation: the C entry points under their plain `fmi3*`
//! names (`abi`: what a co-simulation host calls, each a thin call of the
//! instance core `crate::instance`; `unsupported`: the functions of model
//! exchange, scheduled execution, clocks and derivatives, which answer
//! `fmi3Error`). The FMI 2.0 entry points (`crate::fmi2`) live in the same
//! library; an FMU's modelDescription.xml says which set a host uses.

pub mod abi;
pub mod unsupported;
