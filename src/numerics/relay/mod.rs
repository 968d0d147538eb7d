//! Relay (box-constrained linear complementarity) problems: find z with
//!
//! w = M z + q,   z ∈ [lb, ub],   −w ∈ N₍lb,ub₎(z),
//!
//! i.e. for each i: lbᵢ < zᵢ < ubᵢ ⇒ wᵢ = 0, zᵢ = lbᵢ ⇒ wᵢ ≥ 0, zᵢ = ubᵢ ⇒ wᵢ ≤ 0.
//! With lb = −1, ub = 1 this is the implicit relay −w ∈ Sgn(z)⁻¹ of
//! sliding-mode control.

mod solvers;

pub use solvers::{DefaultRelay, RelayLemke, RelayNewtonFb, RelayPgs, RelaySolver, RELAY_SOLVERS};

use super::error::{check_finite, check_len, NumericsError, Result};
use super::matrix::{Matrix, ProblemMatrix};
use super::residual::{box_natural_norm, norm2};
use super::settings::SolverSettings;

/// A relay problem (M, q, lb, ub).
#[derive(Debug, Clone, PartialEq)]
pub struct Relay {
    /// The n × n matrix M.
    pub m: Matrix,
    /// q (n).
    pub q: Vec<f64>,
    /// Lower bounds (n), finite.
    pub lb: Vec<f64>,
    /// Upper bounds (n), finite, ≥ lb.
    pub ub: Vec<f64>,
}

impl Relay {
    /// Builds and validates a relay problem.
    pub fn new(m: impl Into<Matrix>, q: Vec<f64>, lb: Vec<f64>, ub: Vec<f64>) -> Result<Self> {
        let p = Relay {
            m: m.into(),
            q,
            lb,
            ub,
        };
        p.validate()?;
        Ok(p)
    }

    /// n.
    pub fn size(&self) -> usize {
        self.q.len()
    }

    /// Checks shapes, finiteness and lb ≤ ub.
    pub fn validate(&self) -> Result<()> {
        let n = self.q.len();
        self.m.check_square("M", n)?;
        check_finite("q", &self.q)?;
        check_len("lb", &self.lb, n)?;
        check_len("ub", &self.ub, n)?;
        check_finite("lb", &self.lb)?;
        check_finite("ub", &self.ub)?;
        if let Some(index) = (0..n).find(|&i| self.lb[i] > self.ub[i]) {
            return Err(NumericsError::InvertedBounds {
                index,
                lb: self.lb[index],
                ub: self.ub[index],
            });
        }
        Ok(())
    }

    pub(crate) fn check_vectors(&self, z: &[f64], w: &[f64]) -> Result<()> {
        self.validate()?;
        check_len("z", z, self.size())?;
        check_len("w", w, self.size())?;
        check_finite("z (initial guess)", z)
    }

    /// w ← M z + q.
    pub fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        w.copy_from_slice(&self.q);
        self.m.gemv(1.0, z, 1.0, w);
    }

    /// Error measures `(normalised, absolute)`: absolute = ‖z − P₍lb,ub₎(z − w)‖₂,
    /// normalised = absolute / (1 + ‖q‖₂) (Siconos' `relay_compute_error`).
    pub fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        let abs = box_natural_norm(z, w, &self.lb, &self.ub);
        (abs / (1.0 + norm2(&self.q)), abs)
    }
}

/// Builds a relay solver by name (see [`RELAY_SOLVERS`]).
pub fn relay_solver(name: &str, settings: SolverSettings) -> Result<Box<dyn RelaySolver>> {
    settings.validate()?;
    Ok(match name {
        "default" => Box::new(DefaultRelay::new(settings)),
        "lemke" => Box::new(RelayLemke::new(settings)),
        "pgs" => Box::new(RelayPgs::new(settings)),
        "newton-fb" => Box::new(RelayNewtonFb::new(settings)),
        _ => {
            return Err(NumericsError::UnknownSolver {
                name: name.to_string(),
                family: "relay",
                known: RELAY_SOLVERS,
            })
        }
    })
}

impl super::report::Measured for Relay {
    fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        Relay::compute_w(self, z, w)
    }
    fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        Relay::errors(self, z, w)
    }
}
