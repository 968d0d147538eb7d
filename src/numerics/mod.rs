//! Numerics: one-step nonsmooth problems and their solvers. This layer knows
//! nothing about models.
//!
//! * [`lcp`]: linear complementarity problems;
//! * [`mlcp`]: mixed linear complementarity problems;
//! * [`relay`]: relay (box-constrained) problems;
//! * [`qp`]: convex quadratic programs (interior point, through Clarabel);
//! * [`zero_order_hold`]: Φ = e^{Ah}, Γ = ∫₀ʰ e^{As} ds of a linear system;
//!
//! Every solve returns a [`SolveReport`] — a status, the iterations, the
//! absolute natural-map error and its normalised form, the time — or a
//! [`NumericsError`] for bad input. Once sized, the complementarity solvers
//! solve further problems of the same size without allocating.

pub mod dense_lu;
pub mod error;
pub(crate) mod fb_newton;
pub mod friction;
pub mod lcp;
pub mod matrix;
pub mod mlcp;
pub mod qp;
pub mod relay;
pub mod report;
pub mod residual;
pub mod settings;
pub(crate) mod splitting;
pub mod zero_order_hold;

pub use error::{NumericsError, Result};
pub use matrix::{BlockSparseMatrix, Matrix, ProblemMatrix};
pub use report::{SolveReport, SolveStatus};
pub use settings::SolverSettings;
