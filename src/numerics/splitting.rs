//! The projected Gauss–Seidel sweep shared by the LCP, MLCP and relay
//! splitting solvers. One sweep updates, for i = 1 … n in turn,
//!
//! xᵢ ← Pᵢ(xᵢ − ω (qᵢ + Σⱼ Mᵢⱼ xⱼ) / Mᵢᵢ),
//!
//! where Pᵢ is the family's projection (identity on equality rows, max(0, ·)
//! on complementarity rows, the box [lbᵢ, ubᵢ] for relays). After each sweep
//! w = M x + q and the problem's own normalised error are recomputed; the
//! loop stops on that error, never on the size of the increment.

use super::matrix::{Matrix, ProblemMatrix};
use super::report::{Measured, SolveStatus};

/// Runs sweeps from the (already projected) `x` until the error is ≤ `tol`
/// or `max_sweeps` is reached. Returns the status to report if the final
/// error misses the tolerance, and the number of sweeps. The caller checks
/// that the diagonal allows the update.
pub(crate) fn projected_sweeps<P: Measured>(
    problem: &P,
    (m, q): (&Matrix, &[f64]),
    x: &mut [f64],
    w: &mut [f64],
    (omega, tol, max_sweeps): (f64, f64, usize),
    project: impl Fn(usize, f64) -> f64,
) -> (SolveStatus, usize) {
    problem.compute_w(x, w);
    if problem.errors(x, w).0 <= tol {
        return (SolveStatus::IterationLimit, 0);
    }
    let mut sweeps = 0;
    while sweeps < max_sweeps {
        sweeps += 1;
        for i in 0..x.len() {
            let wi = q[i] + m.row_dot(i, x);
            x[i] = project(i, x[i] - omega * wi / m.diagonal(i));
        }
        problem.compute_w(x, w);
        let err = problem.errors(x, w).0;
        if !err.is_finite() {
            return (SolveStatus::NumericalTrouble, sweeps);
        }
        if err <= tol {
            break;
        }
    }
    (SolveStatus::IterationLimit, sweeps)
}
