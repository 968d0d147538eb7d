//! The errors of FMU import and co-simulation.

use std::path::PathBuf;

use thiserror::Error;

/// What went wrong while loading, instantiating or stepping an FMU, or
/// while coupling several.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CosimError {
    /// The FMU file does not exist or cannot be read.
    #[error("{path}: cannot read the FMU: {reason}")]
    Missing {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The file is not an FMU: not a zip archive, or no readable
    /// modelDescription.xml.
    #[error("{path}: not a valid FMU: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The FMU follows another FMI version than 2.0 and 3.0.
    #[error("{path}: FMI version {version} is not supported (FMI 2.0 and 3.0 co-simulation only)")]
    Version {
        /// The file.
        path: PathBuf,
        /// The fmiVersion attribute.
        version: String,
    },
    /// The FMU has no co-simulation interface (Model Exchange only).
    #[error("{path}: the FMU is Model Exchange only; a co-simulation FMU is needed")]
    ModelExchangeOnly {
        /// The file.
        path: PathBuf,
    },
    /// The FMU has no binary for this platform.
    #[error("{path}: no binary for this platform ({platform}): {expected} is not in the archive")]
    NoBinary {
        /// The file.
        path: PathBuf,
        /// `os/arch` of this machine.
        platform: String,
        /// The path inside the archive that would hold it.
        expected: String,
    },
    /// The binary could not be loaded or instantiated.
    #[error("FMU '{fmu}': cannot instantiate: {reason}")]
    Instantiate {
        /// The instance name.
        fmu: String,
        /// Why.
        reason: String,
    },
    /// A variable name the FMU does not declare.
    #[error("FMU '{fmu}': no variable named '{variable}'")]
    UnknownVariable {
        /// The instance name.
        fmu: String,
        /// The name asked for.
        variable: String,
    },
    /// A variable used against its causality or type (e.g. writing an
    /// output, reading a string as a real).
    #[error("FMU '{fmu}': variable '{variable}' {reason}")]
    Misuse {
        /// The instance name.
        fmu: String,
        /// The variable.
        variable: String,
        /// What is wrong.
        reason: String,
    },
    /// An FMI call returned an error status.
    #[error("FMU '{fmu}': {call} failed with status {status} at t = {time}")]
    Call {
        /// The instance name.
        fmu: String,
        /// The FMI function.
        call: &'static str,
        /// Discard, Error or Fatal.
        status: String,
        /// The instance's time.
        time: f64,
    },
    /// The FMU rejected a step (discard) and cannot take a smaller one.
    #[error("FMU '{fmu}': step from t = {time} discarded and the FMU cannot take a smaller step")]
    Discarded {
        /// The instance name.
        fmu: String,
        /// The communication point the step started from.
        time: f64,
    },
    /// The FMU does not have a capability the call needs.
    #[error("FMU '{fmu}': cannot {what} (capability flag {flag} is false)")]
    Capability {
        /// The instance name.
        fmu: String,
        /// What was asked.
        what: &'static str,
        /// The modelDescription flag.
        flag: &'static str,
    },
    /// A call made in the wrong order (e.g. stepping before initialising).
    #[error("FMU '{fmu}': {reason}")]
    Order {
        /// The instance name.
        fmu: String,
        /// What is wrong.
        reason: String,
    },
}
