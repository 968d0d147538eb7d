//! File formats: one-step problems (Siconos text, FCLIB HDF5).
//!
//! [`siconos_text`] reads and writes the Siconos text problem formats (LCP,
//! MLCP, relay), the format of the reference test data: see that module for
//! the layout and for how the odd files are handled. This module adds the
//! problem-family glue: [`Problem`], [`ProblemKind`] (with inference from a
//! file's path) and [`read_problem`] / [`write_problem`].
//!
//! Scenario files are the application layer's (crate `nonsmooth-scenario`),
//! plots are drawn by crate `nonsmooth-plot`, CSV output is written by the
//! command-line tool (crate `nonsmooth-cli`, through the `csv` crate).

pub mod fclib;
pub mod friction_text;
pub mod siconos_text;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::numerics::lcp::Lcp;
use crate::numerics::mlcp::Mlcp;
use crate::numerics::relay::Relay;

pub use siconos_text::{
    parse_lcp, parse_mlcp, parse_relay, read_lcp, read_mlcp, read_mlcp_file, read_relay, write_lcp,
    write_lcp_to, write_mlcp, write_mlcp_to, write_relay, write_relay_to, Location, MlcpFile,
    ReadError,
};

/// The problem families a file can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// Linear complementarity problem.
    Lcp,
    /// Mixed linear complementarity problem.
    Mlcp,
    /// Relay (box-constrained) problem.
    Relay,
}

impl ProblemKind {
    /// Every kind, in the order used by help texts.
    pub const ALL: [ProblemKind; 3] = [ProblemKind::Lcp, ProblemKind::Mlcp, ProblemKind::Relay];

    /// Lowercase name (`lcp`, `mlcp`, `relay`), as accepted by [`FromStr`].
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Lcp => "lcp",
            ProblemKind::Mlcp => "mlcp",
            ProblemKind::Relay => "relay",
        }
    }

    /// Guesses the kind from a path, the way the reference data is laid out.
    ///
    /// The file name is looked at first, then the directories from the
    /// innermost outwards; the first component that decides wins. Within a
    /// component (compared case-insensitively), `mlcp` → MLCP, else `relay` →
    /// relay, else `lcp` → LCP. So `mlcp/relay2_mlcp.dat` is an MLCP,
    /// `relay/step_1x1.dat` a relay problem (decided by its directory) and
    /// `lcp/lcp_ortiz.dat` an LCP. Returns `None` when no component decides.
    pub fn infer(path: impl AsRef<Path>) -> Option<ProblemKind> {
        let path = path.as_ref();
        let from_component = |c: &str| {
            let c = c.to_ascii_lowercase();
            if c.contains("mlcp") {
                Some(ProblemKind::Mlcp)
            } else if c.contains("relay") {
                Some(ProblemKind::Relay)
            } else if c.contains("lcp") {
                Some(ProblemKind::Lcp)
            } else {
                None
            }
        };
        path.components()
            .rev()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy()),
                _ => None,
            })
            .find_map(|c| from_component(&c))
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProblemKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "lcp" => Ok(ProblemKind::Lcp),
            "mlcp" => Ok(ProblemKind::Mlcp),
            "relay" => Ok(ProblemKind::Relay),
            _ => Err(format!(
                "unknown problem kind `{s}` (expected lcp, mlcp or relay)"
            )),
        }
    }
}

/// A problem of any supported family, as read from a file.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// An LCP.
    Lcp(Lcp),
    /// An MLCP.
    Mlcp(Mlcp),
    /// A relay problem.
    Relay(Relay),
}

impl Problem {
    /// The family of the problem.
    pub fn kind(&self) -> ProblemKind {
        match self {
            Problem::Lcp(_) => ProblemKind::Lcp,
            Problem::Mlcp(_) => ProblemKind::Mlcp,
            Problem::Relay(_) => ProblemKind::Relay,
        }
    }

    /// Number of unknowns (n for LCP and relay, n + m for an MLCP).
    pub fn size(&self) -> usize {
        match self {
            Problem::Lcp(p) => p.size(),
            Problem::Mlcp(p) => p.size(),
            Problem::Relay(p) => p.size(),
        }
    }
}

/// Reads a problem of the given family from a Siconos text file.
pub fn read_problem(path: impl AsRef<Path>, kind: ProblemKind) -> Result<Problem, ReadError> {
    read_problem_with_notes(path, kind).map(|(p, _)| p)
}

/// Like [`read_problem`], also returning the reader's notes: remarks on a
/// file that was read but not taken literally (for instance an MLCP whose
/// storages were reconciled, see [`MlcpFile::notes`]). Empty for most files.
pub fn read_problem_with_notes(
    path: impl AsRef<Path>,
    kind: ProblemKind,
) -> Result<(Problem, Vec<String>), ReadError> {
    let path = path.as_ref();
    Ok(match kind {
        ProblemKind::Lcp => (Problem::Lcp(read_lcp(path)?), Vec::new()),
        ProblemKind::Relay => (Problem::Relay(read_relay(path)?), Vec::new()),
        ProblemKind::Mlcp => {
            let f = read_mlcp_file(path)?;
            (Problem::Mlcp(f.problem), f.notes)
        }
    })
}

/// Writes a problem in the Siconos text format of its family.
pub fn write_problem(path: impl AsRef<Path>, problem: &Problem) -> std::io::Result<()> {
    match problem {
        Problem::Lcp(p) => write_lcp(path, p),
        Problem::Mlcp(p) => write_mlcp(path, p),
        Problem::Relay(p) => write_relay(path, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infer_from_paths() {
        let k = |p: &str| ProblemKind::infer(p);
        assert_eq!(k("data/mlcp/relay2_mlcp.dat"), Some(ProblemKind::Mlcp));
        assert_eq!(k("data/relay/step_1x1.dat"), Some(ProblemKind::Relay));
        assert_eq!(k("data/relay/relay_2x2.dat"), Some(ProblemKind::Relay));
        assert_eq!(k("data/lcp/lcp_ortiz.dat"), Some(ProblemKind::Lcp));
        assert_eq!(k("/x/lcp/foo.dat"), Some(ProblemKind::Lcp));
        // The innermost deciding component wins.
        assert_eq!(k("/mlcp-work/lcp/x.dat"), Some(ProblemKind::Lcp));
        assert_eq!(k("/tmp/problem.dat"), None);
        assert_eq!(k("BuckConverter_MLCP.dat"), Some(ProblemKind::Mlcp));
    }

    #[test]
    fn kind_names_round_trip() {
        for k in ProblemKind::ALL {
            assert_eq!(k.name().parse::<ProblemKind>(), Ok(k));
        }
        assert!("fc3d".parse::<ProblemKind>().is_err());
    }
}
