//! Errors of scenario files: every one names the file and, where the fault is
//! in the file, the line and column of the offending value, entry or key.

use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use thiserror::Error;

use nonsmooth::io::Location;
use nonsmooth::modelling::ModelError;
use nonsmooth::simulation::SimulationError;

/// Where a faulty value comes from: a place in the scenario file, or a value
/// given from outside it ([`super::Scenario::set_parameter`], `--set`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A line and column of the file.
    File(Location),
    /// The value given for a parameter from outside the file.
    Override {
        /// The scenario file.
        path: PathBuf,
        /// The parameter.
        parameter: String,
    },
}

impl Place {
    /// The line in the file, when the place is in the file.
    pub fn line(&self) -> Option<usize> {
        match self {
            Place::File(l) => Some(l.line),
            Place::Override { .. } => None,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::File(l) => write!(f, "{l}"),
            Place::Override { path, parameter } => write!(
                f,
                "{}: value set for parameter `{parameter}`",
                path.display()
            ),
        }
    }
}

/// Why a scenario could not be read or built. Every variant but
/// [`ScenarioError::Io`] carries the [`Place`] of the fault, and its message
/// starts with `path:line:column:`.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: cannot read the file: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// TOML syntax, or a value of the wrong type (a string where a table is
    /// expected, …), as reported by the TOML reader.
    #[error("{at}: {message}")]
    Toml {
        /// Where.
        at: Place,
        /// The reader's message.
        message: String,
    },
    /// A key that the schema does not have (a typo, or a key of another kind
    /// of system, relation or law).
    #[error("{at}: {message}")]
    UnknownKey {
        /// Where.
        at: Place,
        /// What the key is and which ones are accepted.
        message: String,
    },
    /// An expression that cannot be parsed or evaluated.
    #[error("{at}: in `{expression}`: {reason}")]
    Expression {
        /// Where.
        at: Place,
        /// The expression.
        expression: String,
        /// What is wrong.
        reason: String,
    },
    /// A name in an expression that is no parameter (nor `t` where time is
    /// allowed, nor the index of a repeated entry).
    #[error("{at}: unknown parameter `{name}` in `{expression}` (known: {known})")]
    UnknownParameter {
        /// Where.
        at: Place,
        /// The unknown name.
        name: String,
        /// The expression.
        expression: String,
        /// The names that are known there.
        known: String,
    },
    /// A parameter name that the scenario does not define, given from outside.
    #[error("{}: no parameter `{name}` to set (parameters: {known})", path.display())]
    NoSuchParameter {
        /// The scenario file.
        path: PathBuf,
        /// The name given.
        name: String,
        /// The parameters of the scenario.
        known: String,
    },
    /// A NaN or infinite number.
    #[error("{at}: {what} is {value}; every number must be finite")]
    NonFinite {
        /// Where.
        at: Place,
        /// The quantity.
        what: String,
        /// Its value.
        value: f64,
    },
    /// A vector or matrix of the wrong shape.
    #[error("{at}: {what}: {reason}")]
    Shape {
        /// Where.
        at: Place,
        /// The quantity.
        what: String,
        /// What is wrong with its shape.
        reason: String,
    },
    /// An interaction that names a system the scenario does not define.
    #[error("{at}: interaction `{interaction}`: unknown system `{system}` (systems: {known})")]
    UnknownSystem {
        /// Where.
        at: Place,
        /// The interaction.
        interaction: String,
        /// The system name as given (after template expansion).
        system: String,
        /// Some of the systems defined.
        known: String,
    },
    /// The model builder refused a system or interaction.
    #[error("{at}: {source}")]
    Model {
        /// The `[[systems]]` or `[[interactions]]` entry.
        at: Place,
        /// The builder's reason.
        source: ModelError,
    },
    /// A netlist that cannot be reduced (topology, values, names).
    #[error("{at}: circuit `{circuit}`: {source}")]
    Circuit {
        /// The element at fault, or the `[[circuits]]` entry.
        at: Place,
        /// The circuit's name.
        circuit: String,
        /// What is wrong.
        source: Box<nonsmooth::circuits::CircuitError>,
    },
    /// A simulation setting out of range.
    #[error("{at}: {what}: {reason}")]
    Setting {
        /// Where.
        at: Place,
        /// The setting.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// The simulation refused the model or settings when it was set up.
    #[error("{at}: {source}")]
    Simulation {
        /// The entry or table at fault.
        at: Place,
        /// The simulation's reason.
        source: SimulationError,
    },
    /// Any other invalid value: names, repetitions, output selections, plots.
    #[error("{at}: {reason}")]
    Invalid {
        /// Where.
        at: Place,
        /// What is wrong.
        reason: String,
    },
}

impl ScenarioError {
    /// The place of the fault (`None` for errors without one: reading the
    /// file, or setting an unknown parameter).
    pub fn place(&self) -> Option<&Place> {
        match self {
            ScenarioError::Io { .. } | ScenarioError::NoSuchParameter { .. } => None,
            ScenarioError::Toml { at, .. }
            | ScenarioError::UnknownKey { at, .. }
            | ScenarioError::Expression { at, .. }
            | ScenarioError::UnknownParameter { at, .. }
            | ScenarioError::NonFinite { at, .. }
            | ScenarioError::Shape { at, .. }
            | ScenarioError::UnknownSystem { at, .. }
            | ScenarioError::Model { at, .. }
            | ScenarioError::Circuit { at, .. }
            | ScenarioError::Setting { at, .. }
            | ScenarioError::Simulation { at, .. }
            | ScenarioError::Invalid { at, .. } => Some(at),
        }
    }

    /// The line of the fault in the file, when there is one.
    pub fn line(&self) -> Option<usize> {
        self.place().and_then(Place::line)
    }
}

/// Result type of scenario reading and building.
pub type Result<T> = std::result::Result<T, ScenarioError>;

/// Byte offsets to 1-based lines and columns (columns count characters).
#[derive(Debug, Clone)]
pub(crate) struct Source {
    path: PathBuf,
    text: String,
    line_starts: Vec<usize>,
}

impl Source {
    pub(crate) fn new(text: &str, path: &Path) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            path: path.to_path_buf(),
            text: text.to_string(),
            line_starts,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The place of a byte offset.
    pub(crate) fn at(&self, offset: usize) -> Place {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let column = 1 + self
            .text
            .get(start..offset)
            .map_or(0, |s: &str| s.chars().count());
        Place::File(Location {
            path: self.path.clone(),
            line,
            column,
        })
    }

    /// The place of the start of a span.
    pub(crate) fn span(&self, span: Range<usize>) -> Place {
        self.at(span.start)
    }

    /// The place of a value given from outside the file.
    pub(crate) fn override_of(&self, parameter: &str) -> Place {
        Place::Override {
            path: self.path.clone(),
            parameter: parameter.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_columns() {
        let s = Source::new("a = 1\nbé = 2\n\nc", Path::new("f.toml"));
        let lc = |o| match s.at(o) {
            Place::File(l) => (l.line, l.column),
            Place::Override { .. } => unreachable!(),
        };
        assert_eq!(lc(0), (1, 1));
        assert_eq!(lc(4), (1, 5));
        assert_eq!(lc(6), (2, 1));
        // 'é' is two bytes: the '=' after it is the fourth character.
        assert_eq!(lc(10), (2, 4));
        assert_eq!(lc(14), (3, 1));
        assert_eq!(lc(15), (4, 1));
        assert_eq!(s.at(15).to_string(), "f.toml:4:1");
    }
}
