//! Lemke's complementary pivoting method with a lexicographic ratio test.
//!
//! With the covering vector d = (1, …, 1) and the artificial variable z₀ the
//! method follows the path of almost-complementary basic solutions of
//!
//! w − M z − d z₀ = q,   w, z, z₀ ≥ 0,   wᵢ zᵢ = 0,
//!
//! from z₀ = −min qᵢ until z₀ leaves the basis (a solution) or the entering
//! column has no positive entry (a secondary ray). The basis inverse B⁻¹ is
//! kept explicitly and updated by each pivot (O(n²) per pivot). Ties in the
//! ratio test are broken lexicographically on the rows of [x_B, B⁻¹], which
//! keeps every basis lexico-feasible and so prevents cycling on degenerate
//! problems.

use nalgebra::DMatrix;

use super::{Lcp, LcpSolver};
use crate::numerics::error::Result;
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::{finish, Stop};
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::settings::SolverSettings;

/// Lemke's method. Finite on every LCP; on a copositive-plus M a ray
/// termination proves that no solution exists.
#[derive(Debug, Clone)]
pub struct Lemke {
    settings: SolverSettings,
    ws: Workspace,
}

#[derive(Debug, Clone, Default)]
struct Workspace {
    n: usize,
    /// Dense copy of M.
    m: DMatrix<f64>,
    /// B⁻¹, row-major n × n.
    binv: Vec<f64>,
    /// Values of the basic variables.
    xb: Vec<f64>,
    /// Basic variable of each row: 0..n are w, n..2n are z, 2n is z₀.
    basis: Vec<usize>,
    /// Entering column expressed in the basis (B⁻¹ a).
    col: Vec<f64>,
    /// Candidate rows of the ratio test.
    cand: Vec<usize>,
}

impl Workspace {
    fn resize(&mut self, n: usize) {
        if self.n != n || self.m.nrows() != n {
            self.n = n;
            self.m = DMatrix::zeros(n, n);
            self.binv = vec![0.0; n * n];
            self.xb = vec![0.0; n];
            self.basis = vec![0; n];
            self.col = vec![0.0; n];
            self.cand = Vec::with_capacity(n);
        }
    }
}

impl Lemke {
    /// A Lemke solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Lemke {
            settings,
            ws: Workspace::default(),
        }
    }
}

/// Lexicographic minimum-ratio row among rows with col[i] > pivot tolerance.
/// Returns `None` when the column has no positive entry (a ray).
fn ratio_test(ws: &mut Workspace) -> Option<usize> {
    let n = ws.n;
    let cmax = ws.col.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let piv_tol = 1e-12 * cmax.max(1.0);
    ws.cand.clear();
    let mut best = f64::INFINITY;
    for i in 0..n {
        if ws.col[i] > piv_tol {
            let r = ws.xb[i] / ws.col[i];
            if r < best {
                best = r;
            }
        }
    }
    if !best.is_finite() {
        return None;
    }
    let tie = 1e-11 * best.abs().max(1.0);
    for i in 0..n {
        if ws.col[i] > piv_tol && ws.xb[i] / ws.col[i] <= best + tie {
            ws.cand.push(i);
        }
    }
    // Break ties on successive columns of B⁻¹. Values closer than a tolerance
    // relative to the magnitude of the candidates' whole rows of B⁻¹/colᵢ are
    // equal: where a column is exactly zero in exact arithmetic its floating
    // values are rounding noise, which must tie rather than decide the pivot,
    // or the rule loses its anti-cycling property.
    if ws.cand.len() > 1 {
        let mut scale = 0.0f64;
        for &i in &ws.cand {
            for k in 0..n {
                scale = scale.max((ws.binv[i * n + k] / ws.col[i]).abs());
            }
        }
        let tie = 1e-10 * scale;
        let mut k = 0;
        while ws.cand.len() > 1 && k < n {
            let mut best = f64::INFINITY;
            for &i in &ws.cand {
                best = best.min(ws.binv[i * n + k] / ws.col[i]);
            }
            let (binv, col) = (&ws.binv, &ws.col);
            ws.cand.retain(|&i| binv[i * n + k] / col[i] <= best + tie);
            k += 1;
        }
    }
    ws.cand.first().copied()
}

/// Pivots on row r with the entering column in `ws.col`.
fn pivot(ws: &mut Workspace, r: usize, entering: usize) {
    let n = ws.n;
    let p = ws.col[r];
    ws.xb[r] /= p;
    for k in 0..n {
        ws.binv[r * n + k] /= p;
    }
    for i in 0..n {
        if i == r {
            continue;
        }
        let f = ws.col[i];
        if f != 0.0 {
            ws.xb[i] -= f * ws.xb[r];
            for k in 0..n {
                ws.binv[i * n + k] -= f * ws.binv[r * n + k];
            }
        }
    }
    ws.basis[r] = entering;
}

/// ws.col ← B⁻¹ · (column of variable `var` in [I, −M, −d]).
fn load_column(ws: &mut Workspace, var: usize) {
    let n = ws.n;
    for i in 0..n {
        let row = &ws.binv[i * n..(i + 1) * n];
        ws.col[i] = if var < n {
            row[var]
        } else if var < 2 * n {
            let j = var - n;
            // Column j of M, read from its column-major storage.
            let mj = &ws.m.as_slice()[j * n..(j + 1) * n];
            -row.iter().zip(mj).map(|(b, m)| b * m).sum::<f64>()
        } else {
            -row.iter().sum::<f64>()
        };
    }
}

/// Lemke's method on an LCP of size 1, w = m z + q, in closed form: the
/// same operations as [`Lemke`] followed by the measures of its report, so
/// the same z to the last bit. For q ≥ 0, z = 0 (no pivot); otherwise z₀
/// enters at −q, z enters at the pivot m and z = (−q)/m (two pivots).
/// Returns (z, pivots, error, absolute error) when Lemke solves the problem
/// to the tolerance, and `None` when it would not (m not above the pivot
/// tolerance, non-finite data, an iteration limit below two pivots, an
/// error above the tolerance): the caller then runs the solver, which
/// reports the failure in full.
pub(crate) fn scalar_lcp(
    m: f64,
    q: f64,
    settings: &SolverSettings,
) -> Option<(f64, usize, f64, f64)> {
    if !(m.is_finite() && q.is_finite()) {
        return None;
    }
    if q >= 0.0 {
        // z = 0, w = q: error 0.
        return Some((0.0, 0, 0.0, 0.0));
    }
    // Lemke's ratio test takes the pivot m only above its tolerance.
    let pivot_ok = m > 1e-12 * m.abs().max(1.0);
    if settings.iterations_or(10 + 100) < 2 || !pivot_ok {
        return None;
    }
    let z = ((-q) / m).max(0.0);
    let w = q + m * z;
    let r = z.min(w);
    let abs = (r * r).sqrt();
    let nq = (q * q).sqrt();
    let rel = if nq > 0.0 { abs / nq } else { abs };
    (rel <= settings.tolerance && z.is_finite()).then_some((z, 2, rel, abs))
}

impl LcpSolver for Lemke {
    fn name(&self) -> &'static str {
        "lemke"
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        Ok(self.solve_validated(problem, z, w))
    }
}

impl Lemke {
    /// [`LcpSolver::solve`] on a problem, vectors and settings already
    /// validated (`SolverSettings::validate`, `Lcp::check_vectors`): the
    /// default chain checks them once for all its stages.
    pub(super) fn solve_validated(
        &mut self,
        problem: &Lcp,
        z: &mut [f64],
        w: &mut [f64],
    ) -> SolveReport {
        let n = problem.size();
        let tol = self.settings.tolerance;
        let max_pivots = self.settings.iterations_or(10 * n + 100);
        z.iter_mut().for_each(|v| *v = 0.0);
        // Size the workspace on every path, so that the first solve of size n
        // (even a trivial one) is the last to allocate.
        self.ws.resize(n);
        // q ≥ 0: z = 0 solves it.
        if problem.q.iter().all(|&qi| qi >= 0.0) {
            return finish(
                problem,
                z,
                w,
                Stop {
                    solver: self.name(),
                    iterations: 0,
                    otherwise: SolveStatus::NumericalTrouble,
                },
                tol,
            );
        }
        let ws = &mut self.ws;
        problem.m.write_dense(&mut ws.m);
        ws.binv.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..n {
            ws.binv[i * n + i] = 1.0;
            ws.basis[i] = i;
        }
        ws.xb.copy_from_slice(&problem.q);

        // First pivot: z₀ enters; the leaving row is the lexicographic
        // minimum of (qᵢ, eᵢ), i.e. the most negative qᵢ, ties to the last index.
        let mut r = 0;
        for i in 1..n {
            if ws.xb[i] <= ws.xb[r] {
                r = i;
            }
        }
        let z0 = 2 * n;
        ws.col.iter_mut().for_each(|v| *v = -1.0);
        let mut leaving = ws.basis[r];
        pivot(ws, r, z0);
        let mut pivots = 1;
        let mut status = SolveStatus::IterationLimit;
        while pivots < max_pivots {
            let entering = if leaving < n {
                leaving + n
            } else {
                leaving - n
            };
            load_column(ws, entering);
            let Some(r) = ratio_test(ws) else {
                status = SolveStatus::RayTermination;
                break;
            };
            leaving = ws.basis[r];
            pivot(ws, r, entering);
            pivots += 1;
            if leaving == z0 {
                status = SolveStatus::NumericalTrouble; // replaced by Solved if the error is small
                break;
            }
        }
        for i in 0..n {
            let v = ws.basis[i];
            if (n..2 * n).contains(&v) {
                z[v - n] = ws.xb[i].max(0.0);
            }
        }
        finish(
            problem,
            z,
            w,
            Stop {
                solver: self.name(),
                iterations: pivots,
                otherwise: status,
            },
            tol,
        )
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;
    use crate::numerics::lcp::DefaultLcp;

    /// The closed form of a one-row LCP gives Lemke's (and the default
    /// chain's) z, pivots and error to the last bit, and declines where
    /// Lemke does not solve.
    #[test]
    fn scalar_lcp_is_lemke_to_the_bit() {
        let s = SolverSettings::default();
        let ms = [1.0, 2.5, 1e-3, 7.3e5, 0.3333, 1e-13, 0.0, -1.0];
        let qs = [-1.0, -0.1, -9.81e-3, 0.0, -0.0, 2.0, -1e-300, -3.7e12];
        for &m in &ms {
            for &q in &qs {
                let lcp = Lcp::new(DMatrix::from_element(1, 1, m), vec![q]).unwrap();
                let fast = scalar_lcp(m, q, &s);
                for mut solver in [
                    Box::new(Lemke::new(s)) as Box<dyn LcpSolver>,
                    Box::new(DefaultLcp::new(s)),
                ] {
                    let (mut z, mut w) = ([0.5], [0.0]);
                    let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
                    match fast {
                        Some((zf, it, err, abs)) => {
                            assert!(r.status.is_solved(), "m {m} q {q}");
                            assert_eq!(zf.to_bits(), z[0].to_bits(), "m {m} q {q}");
                            assert_eq!((it, err, abs), (r.iterations, r.error, r.error_abs));
                        }
                        // The solver runs instead: nothing to compare. On
                        // well-posed data the closed form applies.
                        None => assert!(
                            !(m >= 1e-3 && (q >= 0.0 || q.abs() > 1e-200)),
                            "m {m} q {q}: no closed form"
                        ),
                    }
                }
            }
        }
    }
}
