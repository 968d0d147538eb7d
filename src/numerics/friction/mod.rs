//! Frictional contact problems with Coulomb friction, in 2D and 3D.
//!
//! # Local problem (`fc2d`, `fc3d`)
//!
//! For `nc` contacts of dimension d ∈ {2, 3}, the unknowns are the contact
//! impulses r and velocities u, per contact ordered [N, T1(, T2)]:
//!
//! u = W r + q,   K*_μ ∋ û ⊥ r ∈ K_μ,   û = u + μ‖u_T‖ e_N,
//!
//! with the Coulomb cone K_μ = {r : ‖r_T‖ ≤ μ r_N} of each contact and its
//! dual K*_μ = {u : μ‖u_T‖ ≤ u_N}. Equivalently (Coulomb's law): either the
//! contact opens (r = 0, u_N ≥ 0), or it sticks (u = 0, r ∈ K_μ), or it slides
//! (u_N = 0, ‖r_T‖ = μ r_N, r_T = −α u_T with α ≥ 0).
//!
//! # Global problem (`gfc3d`)
//!
//! M v = H r + f,  u = Hᵀ v + w,  same cone condition on (r, u). With M
//! invertible it reduces to the local problem with W = Hᵀ M⁻¹ H and
//! q = Hᵀ M⁻¹ f + w, and v = M⁻¹ (H r + f) ([`GlobalFrictionProblem`]).
//!
//! # Error measures
//!
//! Every report carries, recomputed from the returned r (see
//! [`FrictionProblem::errors`]), the absolute natural-map norm
//! ‖F(r)‖₂ = ‖r − P_K(r − û)‖₂ (P_K the projection on the product of the cones),
//! and [`SolveReport::error`] its Siconos 4.4 normalisation
//! ‖F‖ / max(‖q‖, ‖r‖, ‖u‖) (not normalised when that maximum is below the
//! machine epsilon, as Siconos does), to which the tolerance applies. The ABH 2018
//! paper's ‖F‖ / ‖q‖ is in [`FrictionErrors::paper`].
//!
//! # Solvers
//!
//! [`Nsgs`] (Gauss–Seidel over contacts), [`NewtonAc`] (nonsmooth Newton on
//! the Alart–Curnier function), [`Prox`] (proximal point around Newton),
//! [`ExtraGradient`] (projection VI solver), [`Admm`], [`DefaultFriction`]
//! (picks and falls back), [`NsgsNewton`] (NSGS handing over to Newton when
//! it stalls). NSGS and the local solvers do not allocate once
//! sized; the others allocate their workspaces once per size.

mod admm;
mod block_lu;
pub(crate) mod cone;
mod contacts;
mod default;
mod global;
mod hybrid;
pub(crate) mod local;
mod newton;
mod nsgs;
mod prox;
mod sparse_jacobian;
mod vi;

pub use admm::Admm;
pub use default::DefaultFriction;
pub use global::{GlobalFrictionProblem, GlobalSolution};
pub use hybrid::NsgsNewton;
pub use newton::NewtonAc;
pub use nsgs::{LocalSolver, Nsgs};
pub use prox::Prox;
pub use vi::ExtraGradient;

use super::error::{check_finite, check_len, NumericsError, Result};
use super::matrix::{Matrix, ProblemMatrix};
use super::report::SolveReport;
use super::residual::norm2;
use super::settings::SolverSettings;

/// A local frictional contact problem: u = W r + q, K*_μ ∋ û ⊥ r ∈ K_μ.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionProblem {
    /// Dimension of a contact: 2 or 3.
    pub dim: usize,
    /// The Delassus matrix W, (d·nc) × (d·nc).
    pub w: Matrix,
    /// The free velocity q, length d·nc.
    pub q: Vec<f64>,
    /// The friction coefficient of each contact (≥ 0).
    pub mu: Vec<f64>,
}

/// The three error measures of a candidate r (with u = W r + q).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FrictionErrors {
    /// ‖r − P_K(r − û)‖₂.
    pub absolute: f64,
    /// absolute / max(‖q‖, ‖r‖, ‖u‖) (Siconos 4.4 `fc3d_compute_error`;
    /// absolute when that maximum is below the machine epsilon, as Siconos).
    pub siconos: f64,
    /// absolute / ‖q‖ (Acary, Brémond, Huber 2018; absolute when ‖q‖ is
    /// below the machine epsilon).
    pub paper: f64,
}

impl FrictionProblem {
    /// Builds and validates a problem.
    pub fn new(dim: usize, w: impl Into<Matrix>, q: Vec<f64>, mu: Vec<f64>) -> Result<Self> {
        let p = FrictionProblem {
            dim,
            w: w.into(),
            q,
            mu,
        };
        p.validate()?;
        Ok(p)
    }

    /// Number of contacts.
    pub fn contacts(&self) -> usize {
        self.mu.len()
    }

    /// Number of unknowns d·nc.
    pub fn size(&self) -> usize {
        self.q.len()
    }

    /// Checks d ∈ {2, 3}, the sizes, finiteness and μ ≥ 0.
    pub fn validate(&self) -> Result<()> {
        self.validate_with(true)
    }

    /// [`FrictionProblem::validate`] except the finiteness of W's entries
    /// (for a solver that checks them while reading W; it then calls
    /// `validate` to report the entry at fault).
    pub(crate) fn validate_but_w_values(&self) -> Result<()> {
        self.validate_with(false)
    }

    /// The checks of `validate`, W's entries included when `w_values`.
    fn validate_with(&self, w_values: bool) -> Result<()> {
        if self.dim != 2 && self.dim != 3 {
            return Err(NumericsError::InvalidSetting {
                name: "dim",
                reason: format!("a contact has dimension 2 or 3, got {}", self.dim),
            });
        }
        check_len("q", &self.q, self.dim * self.mu.len())?;
        if w_values {
            self.w.check_square("W", self.q.len())?;
        } else {
            self.w.check_square_shape("W", self.q.len())?;
        }
        check_finite("q", &self.q)?;
        check_finite("mu", &self.mu)?;
        if let Some(i) = self.mu.iter().position(|m| *m < 0.0) {
            return Err(NumericsError::InvalidSetting {
                name: "mu",
                reason: format!(
                    "friction coefficient {} of contact {i} is negative",
                    self.mu[i]
                ),
            });
        }
        Ok(())
    }

    /// Validates the problem and the caller's vectors before a solve.
    pub(crate) fn check_vectors(&self, r: &[f64], u: &[f64]) -> Result<()> {
        self.validate()?;
        self.check_own_vectors(r, u)
    }

    /// The caller's vectors alone: lengths, and r finite.
    pub(crate) fn check_own_vectors(&self, r: &[f64], u: &[f64]) -> Result<()> {
        check_len("r", r, self.size())?;
        check_len("u", u, self.size())?;
        check_finite("r (initial guess)", r)
    }

    /// u ← W r + q.
    pub fn compute_u(&self, r: &[f64], u: &mut [f64]) {
        u.copy_from_slice(&self.q);
        self.w.gemv(1.0, r, 1.0, u);
    }

    /// The error measures of r and u (u = W r + q already computed).
    pub fn errors(&self, r: &[f64], u: &[f64]) -> FrictionErrors {
        let absolute = cone::natural_map_norm(self.dim, r, u, &self.mu);
        let nq = norm2(&self.q);
        let scale = nq.max(norm2(r)).max(norm2(u));
        FrictionErrors {
            absolute,
            siconos: if scale > f64::EPSILON {
                absolute / scale
            } else {
                absolute
            },
            paper: if nq > f64::EPSILON {
                absolute / nq
            } else {
                absolute
            },
        }
    }
}

impl super::report::Measured for FrictionProblem {
    fn compute_w(&self, z: &[f64], w: &mut [f64]) {
        self.compute_u(z, w)
    }
    fn errors(&self, z: &[f64], w: &[f64]) -> (f64, f64) {
        let e = FrictionProblem::errors(self, z, w);
        (e.siconos, e.absolute)
    }
}

/// A solver of local frictional contact problems.
pub trait FrictionSolver: Send {
    /// Name used in reports and on the command line.
    fn name(&self) -> &'static str;
    /// Solves `problem`: `r` holds the initial guess and receives the
    /// solution, `u` receives W r + q. The report's status says whether they
    /// are a solution (Siconos-normalised error ≤ tolerance); errors are for
    /// bad input only.
    fn solve(
        &mut self,
        problem: &FrictionProblem,
        r: &mut [f64],
        u: &mut [f64],
    ) -> Result<SolveReport>;
}

/// Names of the frictional contact solvers, as accepted by [`friction_solver`].
/// [`friction_solver`] also accepts `nsgs-newton` ([`NsgsNewton`]), not
/// listed yet: the solver-suite tests that run every listed solver
/// (`tests/friction_problems.rs`, `tests/friction_allocation_free.rs`) have
/// not been run on it.
pub const FRICTION_SOLVERS: &str = "default, nsgs, nsgs-proj, newton-ac, prox, vi-eg, admm";

/// Builds a frictional contact solver by name (see [`FRICTION_SOLVERS`]).
pub fn friction_solver(name: &str, settings: SolverSettings) -> Result<Box<dyn FrictionSolver>> {
    settings.validate()?;
    Ok(match name {
        "default" => Box::new(DefaultFriction::new(settings)),
        "nsgs" => Box::new(Nsgs::new(settings)),
        "nsgs-proj" => Box::new(Nsgs::new(settings).with_local(LocalSolver::Projection)),
        "newton-ac" => Box::new(NewtonAc::new(settings)),
        "prox" => Box::new(Prox::new(settings)),
        "vi-eg" => Box::new(ExtraGradient::new(settings)),
        "admm" => Box::new(Admm::new(settings)),
        "nsgs-newton" => Box::new(NsgsNewton::new(settings)),
        _ => {
            return Err(NumericsError::UnknownSolver {
                name: name.to_string(),
                family: "frictional contact",
                known: FRICTION_SOLVERS,
            })
        }
    })
}
