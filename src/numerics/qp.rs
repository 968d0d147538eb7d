//! Convex quadratic programs, solved by the Clarabel interior-point solver:
//!
//! minimise ½ xᵀ P x + cᵀ x   subject to   A x = b,   G x ≤ h,
//!
//! with P symmetric positive semidefinite. The report's error is recomputed
//! here from the KKT conditions
//!
//! P x + c + Aᵀ y + Gᵀ μ = 0,  A x = b,  0 ≤ μ ⊥ h − G x ≥ 0,
//!
//! as the norm of (stationarity, A x − b, min(μ, h − G x)), independently of
//! Clarabel's own residuals. Clarabel allocates during setup: this solver is
//! for problems solved now and then, not for every time step.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus as ClarabelStatus, SupportedConeT,
};
use nalgebra::DMatrix;

use super::error::{check_finite, check_len, NumericsError, Result};
use super::report::{SolveReport, SolveStatus};
use super::residual::norm2;
use super::settings::SolverSettings;

/// A convex QP (P, c, A, b, G, h).
#[derive(Debug, Clone, PartialEq)]
pub struct Qp {
    /// Symmetric positive semidefinite n × n Hessian.
    pub p: DMatrix<f64>,
    /// Linear cost (n).
    pub c: Vec<f64>,
    /// Equality constraint matrix (k × n; k may be 0).
    pub a: DMatrix<f64>,
    /// Equality right-hand side (k).
    pub b: Vec<f64>,
    /// Inequality constraint matrix (l × n; l may be 0).
    pub g: DMatrix<f64>,
    /// Inequality right-hand side (l).
    pub h: Vec<f64>,
}

/// A QP's primal and dual solution with its report.
#[derive(Debug, Clone, PartialEq)]
pub struct QpSolution {
    /// Primal solution x.
    pub x: Vec<f64>,
    /// Multipliers y of the equalities.
    pub y: Vec<f64>,
    /// Multipliers μ ≥ 0 of the inequalities.
    pub mu: Vec<f64>,
    /// Status, iterations (interior-point steps), KKT error, time.
    pub report: SolveReport,
}

fn dense_matrix_check(
    what: &'static str,
    m: &DMatrix<f64>,
    rows: usize,
    cols: usize,
) -> Result<()> {
    if m.nrows() != rows || m.ncols() != cols {
        return Err(NumericsError::DimensionMismatch {
            what,
            expected: rows * cols,
            found: m.nrows() * m.ncols(),
        });
    }
    check_finite(what, m.as_slice())
}

impl Qp {
    /// Builds and validates a QP.
    pub fn new(
        p: DMatrix<f64>,
        c: Vec<f64>,
        a: DMatrix<f64>,
        b: Vec<f64>,
        g: DMatrix<f64>,
        h: Vec<f64>,
    ) -> Result<Self> {
        let qp = Qp { p, c, a, b, g, h };
        qp.validate()?;
        Ok(qp)
    }

    /// Checks shapes, finiteness and the symmetry of P.
    pub fn validate(&self) -> Result<()> {
        let n = self.c.len();
        if self.p.nrows() != self.p.ncols() {
            return Err(NumericsError::NotSquare {
                what: "P",
                rows: self.p.nrows(),
                cols: self.p.ncols(),
            });
        }
        dense_matrix_check("P", &self.p, n, n)?;
        check_finite("c", &self.c)?;
        dense_matrix_check("A", &self.a, self.b.len(), n)?;
        check_finite("b", &self.b)?;
        dense_matrix_check("G", &self.g, self.h.len(), n)?;
        check_finite("h", &self.h)?;
        let scale = self.p.amax().max(1.0);
        for j in 0..n {
            for i in 0..j {
                if (self.p[(i, j)] - self.p[(j, i)]).abs() > 1e-12 * scale {
                    return Err(NumericsError::InvalidSetting {
                        name: "P",
                        reason: format!(
                            "not symmetric at ({i}, {j}): {} vs {}",
                            self.p[(i, j)],
                            self.p[(j, i)]
                        ),
                    });
                }
            }
        }
        check_len("c", &self.c, n)
    }

    /// The KKT residual norm of (x, y, μ).
    pub fn kkt_error(&self, x: &[f64], y: &[f64], mu: &[f64]) -> f64 {
        let n = x.len();
        let mut s = 0.0;
        for j in 0..n {
            let mut r = self.c[j];
            for k in 0..n {
                r += self.p[(j, k)] * x[k];
            }
            for (i, yi) in y.iter().enumerate() {
                r += self.a[(i, j)] * yi;
            }
            for (i, mi) in mu.iter().enumerate() {
                r += self.g[(i, j)] * mi;
            }
            s += r * r;
        }
        for i in 0..self.b.len() {
            let r: f64 = (0..n).map(|j| self.a[(i, j)] * x[j]).sum::<f64>() - self.b[i];
            s += r * r;
        }
        for i in 0..self.h.len() {
            let slack = self.h[i] - (0..n).map(|j| self.g[(i, j)] * x[j]).sum::<f64>();
            let r = mu[i].min(slack);
            s += r * r;
        }
        s.sqrt()
    }
}

fn csc(m: &DMatrix<f64>, upper_only: bool) -> CscMatrix<f64> {
    let (rows, cols) = m.shape();
    let mut colptr = Vec::with_capacity(cols + 1);
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    colptr.push(0);
    for j in 0..cols {
        let last = if upper_only { (j + 1).min(rows) } else { rows };
        for i in 0..last {
            let v = m[(i, j)];
            if v != 0.0 {
                rowval.push(i);
                nzval.push(v);
            }
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows, cols, colptr, rowval, nzval)
}

/// Solves a QP with Clarabel; `settings.tolerance` applies to the KKT error
/// normalised by 1 + max(‖c‖, ‖b‖, ‖h‖), and `max_iterations` (default 200)
/// bounds the interior-point steps.
pub fn solve_qp(qp: &Qp, settings: &SolverSettings) -> Result<QpSolution> {
    settings.validate()?;
    qp.validate()?;
    let n = qp.c.len();
    let (k, l) = (qp.b.len(), qp.h.len());
    let mut stacked = DMatrix::zeros(k + l, n);
    stacked.view_mut((0, 0), (k, n)).copy_from(&qp.a);
    stacked.view_mut((k, 0), (l, n)).copy_from(&qp.g);
    let mut rhs = qp.b.clone();
    rhs.extend_from_slice(&qp.h);
    let mut cones = Vec::new();
    if k > 0 {
        cones.push(SupportedConeT::ZeroConeT(k));
    }
    if l > 0 {
        cones.push(SupportedConeT::NonnegativeConeT(l));
    }
    let eps = settings.tolerance.max(1e-14);
    let max_iter = settings.iterations_or(200);
    let csettings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(u32::try_from(max_iter).unwrap_or(u32::MAX))
        .tol_gap_abs(eps)
        .tol_gap_rel(eps)
        .tol_feas(eps)
        .build()
        .map_err(|e| NumericsError::InvalidSetting {
            name: "qp settings",
            reason: e.to_string(),
        })?;
    let mut solver = DefaultSolver::new(
        &csc(&qp.p, true),
        &qp.c,
        &csc(&stacked, false),
        &rhs,
        &cones,
        csettings,
    )
    .map_err(|e| NumericsError::InvalidSetting {
        name: "qp data",
        reason: e.to_string(),
    })?;
    solver.solve();
    let sol = &solver.solution;
    let x = sol.x.clone();
    let y = sol.z[..k].to_vec();
    let mu = sol.z[k..].to_vec();
    let error_abs = qp.kkt_error(&x, &y, &mu);
    let scale = 1.0 + norm2(&qp.c).max(norm2(&qp.b)).max(norm2(&qp.h));
    let error = error_abs / scale;
    let finite = x.iter().chain(&y).chain(&mu).all(|v| v.is_finite());
    let status = match sol.status {
        ClarabelStatus::PrimalInfeasible | ClarabelStatus::DualInfeasible => {
            SolveStatus::NoSolution
        }
        _ if finite && error <= settings.tolerance => SolveStatus::Solved,
        ClarabelStatus::MaxIterations | ClarabelStatus::MaxTime => SolveStatus::IterationLimit,
        _ => SolveStatus::NumericalTrouble,
    };
    Ok(QpSolution {
        x,
        y,
        mu,
        report: SolveReport {
            status,
            solver: "clarabel",
            iterations: sol.iterations as usize,
            error,
            error_abs,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// min ½(x₁² + x₂²) − x₁ − x₂ s.t. x₁ + x₂ = 1, x₁ ≤ 0.25:
    /// the solution is x = (0.25, 0.75), y = 0.25, μ = 0.5.
    #[test]
    fn small_qp_matches_the_hand_solution() {
        let qp = Qp::new(
            DMatrix::identity(2, 2),
            vec![-1.0, -1.0],
            DMatrix::from_row_slice(1, 2, &[1.0, 1.0]),
            vec![1.0],
            DMatrix::from_row_slice(1, 2, &[1.0, 0.0]),
            vec![0.25],
        )
        .unwrap();
        let s = solve_qp(
            &qp,
            &SolverSettings {
                tolerance: 1e-9,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(s.report.status, SolveStatus::Solved, "{:?}", s.report);
        assert!(
            (s.x[0] - 0.25).abs() < 1e-7 && (s.x[1] - 0.75).abs() < 1e-7,
            "{:?}",
            s.x
        );
        assert!((s.y[0] - 0.25).abs() < 1e-6, "{:?}", s.y);
        assert!((s.mu[0] - 0.5).abs() < 1e-6, "{:?}", s.mu);
    }

    #[test]
    fn infeasible_qp_is_reported() {
        let qp = Qp::new(
            DMatrix::identity(1, 1),
            vec![0.0],
            DMatrix::zeros(0, 1),
            vec![],
            DMatrix::from_row_slice(2, 1, &[1.0, -1.0]),
            vec![-1.0, -1.0], // x ≤ −1 and x ≥ 1
        )
        .unwrap();
        let s = solve_qp(&qp, &SolverSettings::default()).unwrap();
        assert_eq!(s.report.status, SolveStatus::NoSolution);
    }

    #[test]
    fn asymmetric_hessian_is_refused() {
        let r = Qp::new(
            DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 0.0, 1.0]),
            vec![0.0; 2],
            DMatrix::zeros(0, 2),
            vec![],
            DMatrix::zeros(0, 2),
            vec![],
        );
        assert!(matches!(
            r,
            Err(NumericsError::InvalidSetting { name: "P", .. })
        ));
    }
}
