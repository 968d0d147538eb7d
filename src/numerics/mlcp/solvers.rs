//! MLCP solvers: semismooth Newton (Fischer–Burmeister), enumeration,
//! projected Gauss–Seidel, and a default chain that adds a reduction to an
//! LCP by the Schur complement of A, solved by Lemke.

use nalgebra::DMatrix;

use super::{mlcp_natural_norm, Mlcp};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::fb_newton::FbNewton;
use crate::numerics::lcp::{ActiveSetSearch, Lcp, LcpSolver, Lemke};
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::residual::norm2;
use crate::numerics::settings::SolverSettings;
use crate::numerics::splitting::projected_sweeps;

/// A solver of MLCPs. `z` = (u, v) holds the initial guess and receives the
/// solution; `w` receives M z + q (its first n components are the equality
/// residuals).
pub trait MlcpSolver: Send {
    /// Name used in reports and on the command line.
    fn name(&self) -> &'static str;
    /// Solves `problem`; see [`crate::numerics::lcp::LcpSolver::solve`].
    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport>;
}

/// Names of the MLCP solvers, as accepted by [`super::mlcp_solver`].
pub const MLCP_SOLVERS: &str = "default, lemke, newton-fb, enum, pgs";

/// Semismooth Newton on Φ = (A u + C v + a, φ(v, D u + B v + b)).
#[derive(Debug, Clone)]
pub struct MlcpNewtonFb {
    settings: SolverSettings,
    m: DMatrix<f64>,
    kernel: FbNewton,
}

impl MlcpNewtonFb {
    /// A Newton solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        MlcpNewtonFb {
            settings,
            m: DMatrix::zeros(0, 0),
            kernel: FbNewton::default(),
        }
    }
}

impl MlcpSolver for MlcpNewtonFb {
    fn name(&self) -> &'static str {
        "newton-fb"
    }

    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        if self.m.nrows() != n {
            self.m = DMatrix::zeros(n, n);
        }
        problem.m.write_dense(&mut self.m);
        let scale = 1.0 + norm2(&problem.q);
        let n_eq = problem.n_eq;
        let tol = self.settings.tolerance;
        let (status, iters) = self.kernel.run(
            &self.m,
            &problem.q,
            n_eq,
            z,
            (tol, self.settings.iterations_or(100)),
            |x, f| mlcp_natural_norm(n_eq, x, f) / scale,
        );
        Ok(finish(
            problem,
            z,
            w,
            Stop {
                solver: self.name(),
                iterations: iters,
                otherwise: status,
            },
            tol,
        ))
    }
}

/// Enumeration over the complementarity active sets α ⊆ {1 … m}: solves
/// [A C_α; D_α B_αα] (u, v_α) = −(a, b_α) with v_ᾱ = 0 and accepts the first
/// candidate within tolerance (the search shared with the LCP enumeration).
/// Refuses m above `enumeration_max_size`. `NoSolution` is returned only when
/// every system was nonsingular.
#[derive(Debug, Clone)]
pub struct MlcpEnumeration {
    settings: SolverSettings,
    search: ActiveSetSearch,
}

impl MlcpEnumeration {
    /// An enumeration solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        MlcpEnumeration {
            settings,
            search: ActiveSetSearch::default(),
        }
    }
}

impl MlcpSolver for MlcpEnumeration {
    fn name(&self) -> &'static str {
        "enum"
    }

    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let mc = problem.n_comp();
        let limit = self.settings.enumeration_max_size;
        if mc > limit {
            return Err(NumericsError::TooLarge {
                solver: "enum",
                size: mc,
                limit,
            });
        }
        let tol = self.settings.tolerance;
        let data = (&problem.m, problem.q.as_slice(), problem.n_eq);
        let (status, iterations) = self.search.run(data, problem, tol, z, w);
        let stop = Stop {
            solver: "enum",
            iterations,
            otherwise: status,
        };
        Ok(finish(problem, z, w, stop, tol))
    }
}

/// Projected Gauss–Seidel: for each row i in turn,
/// xᵢ ← xᵢ − Fᵢ(x)/Mᵢᵢ for equality rows and xᵢ ← max(0, xᵢ − Fᵢ(x)/Mᵢᵢ) for
/// complementarity rows; stops on the natural-map error. Needs Mᵢᵢ ≠ 0 on
/// equality rows and Mᵢᵢ > 0 on complementarity rows.
#[derive(Debug, Clone)]
pub struct MlcpPgs {
    settings: SolverSettings,
}

impl MlcpPgs {
    /// A PGS solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        MlcpPgs { settings }
    }
}

/// Whether PGS applies: Mᵢᵢ ≠ 0 on equality rows, > 0 on complementarity rows.
fn pgs_applicable(problem: &Mlcp) -> std::result::Result<(), String> {
    for i in 0..problem.size() {
        let d = problem.m.diagonal(i);
        let ok = if i < problem.n_eq { d != 0.0 } else { d > 0.0 };
        if !ok {
            return Err(format!(
                "diagonal entry M[{i},{i}] = {d} does not allow a Gauss–Seidel update"
            ));
        }
    }
    Ok(())
}

impl MlcpSolver for MlcpPgs {
    fn name(&self) -> &'static str {
        "pgs"
    }

    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        if let Err(reason) = pgs_applicable(problem) {
            return Err(NumericsError::NotApplicable {
                solver: "pgs",
                reason,
            });
        }
        let tol = self.settings.tolerance;
        let max_sweeps = self.settings.iterations_or(10_000);
        let n_eq = problem.n_eq;
        for v in z.iter_mut().skip(n_eq) {
            *v = v.max(0.0);
        }
        let (status, iterations) = projected_sweeps(
            problem,
            (&problem.m, &problem.q),
            z,
            w,
            (1.0, tol, max_sweeps),
            |i, x| if i < n_eq { x } else { x.max(0.0) },
        );
        let stop = Stop {
            solver: "pgs",
            iterations,
            otherwise: status,
        };
        Ok(finish(problem, z, w, stop, tol))
    }
}

/// Reduction of an MLCP with nonsingular A to the LCP in v
///
/// w = (B − D A⁻¹ C) v + (b − D A⁻¹ a),   u = −A⁻¹ (C v + a),
///
/// solved by Lemke. Workspaces are kept between solves.
#[derive(Debug, Clone)]
struct SchurLemke {
    lemke: Lemke,
    a_lu: Vec<f64>,
    piv: Vec<usize>,
    ainv_c: DMatrix<f64>,
    ainv_a: Vec<f64>,
    full: DMatrix<f64>,
    lcp: Option<Lcp>,
    v: Vec<f64>,
    wv: Vec<f64>,
}

impl SchurLemke {
    fn new(settings: SolverSettings) -> Self {
        SchurLemke {
            lemke: Lemke::new(settings),
            a_lu: Vec::new(),
            piv: Vec::new(),
            ainv_c: DMatrix::zeros(0, 0),
            ainv_a: Vec::new(),
            full: DMatrix::zeros(0, 0),
            lcp: None,
            v: Vec::new(),
            wv: Vec::new(),
        }
    }

    /// Returns `None` when A is singular (the reduction does not apply).
    fn solve(&mut self, problem: &Mlcp, z: &mut [f64]) -> Result<Option<(SolveStatus, usize)>> {
        let (n, mc) = (problem.n_eq, problem.n_comp());
        let size = n + mc;
        if self.full.nrows() != size {
            self.full = DMatrix::zeros(size, size);
            self.a_lu = vec![0.0; n * n];
            self.piv = vec![0; n];
            self.ainv_c = DMatrix::zeros(n, mc);
            self.ainv_a = vec![0.0; n];
            self.v = vec![0.0; mc];
            self.wv = vec![0.0; mc];
            self.lcp = Some(Lcp {
                m: Matrix::Dense(DMatrix::zeros(mc, mc)),
                q: vec![0.0; mc],
            });
        }
        problem.m.write_dense(&mut self.full);
        let full = &self.full;
        for j in 0..n {
            for i in 0..n {
                self.a_lu[j * n + i] = full[(i, j)];
            }
        }
        if !lu_factor(&mut self.a_lu, n, &mut self.piv) {
            return Ok(None);
        }
        for j in 0..mc {
            let mut col = self.ainv_c.column_mut(j);
            for i in 0..n {
                col[i] = full[(i, n + j)];
            }
            lu_solve(&self.a_lu, n, &self.piv, col.as_mut_slice());
        }
        self.ainv_a.copy_from_slice(&problem.q[..n]);
        lu_solve(&self.a_lu, n, &self.piv, &mut self.ainv_a);
        let lcp = self.lcp.as_mut().expect("sized above");
        let Matrix::Dense(s) = &mut lcp.m else {
            unreachable!("the reduced matrix is stored dense")
        };
        for j in 0..mc {
            for i in 0..mc {
                let mut v = full[(n + i, n + j)];
                for k in 0..n {
                    v -= full[(n + i, k)] * self.ainv_c[(k, j)];
                }
                s[(i, j)] = v;
            }
        }
        for i in 0..mc {
            let mut v = problem.q[n + i];
            for k in 0..n {
                v -= full[(n + i, k)] * self.ainv_a[k];
            }
            lcp.q[i] = v;
        }
        let report = self.lemke.solve(lcp, &mut self.v, &mut self.wv)?;
        // u = −A⁻¹(C v + a) = −(A⁻¹C) v − A⁻¹a.
        for k in 0..n {
            let mut u = -self.ainv_a[k];
            for j in 0..mc {
                u -= self.ainv_c[(k, j)] * self.v[j];
            }
            z[k] = u;
        }
        z[n..].copy_from_slice(&self.v);
        Ok(Some((report.status, report.iterations)))
    }
}

/// Lemke on the Schur-complement LCP (the reduction of the private `SchurLemke` helper). Refuses an MLCP
/// whose A block is singular.
#[derive(Debug, Clone)]
pub struct MlcpLemke {
    settings: SolverSettings,
    schur: SchurLemke,
}

impl MlcpLemke {
    /// A Schur-complement Lemke solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        MlcpLemke {
            settings,
            schur: SchurLemke::new(settings),
        }
    }
}

impl MlcpSolver for MlcpLemke {
    fn name(&self) -> &'static str {
        "lemke"
    }

    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        match self.schur.solve(problem, z)? {
            Some((status, iterations)) => Ok(finish(
                problem,
                z,
                w,
                Stop {
                    solver: "lemke",
                    iterations,
                    otherwise: status,
                },
                self.settings.tolerance,
            )),
            None => Err(NumericsError::NotApplicable {
                solver: "lemke",
                reason: "the equality block A is singular, so v cannot be eliminated".into(),
            }),
        }
    }
}

/// The default MLCP solver: the Schur complement reduction solved by Lemke
/// (when A is nonsingular and n + m ≤ `pivoting_max_size`: exact and finite);
/// then Newton–FB from the best point so far; then PGS (when the diagonal allows it); then
/// enumeration (m ≤ `enumeration_max_size`). Returns the first solution
/// within tolerance, otherwise the most informative status with the iterate of
/// smallest error.
#[derive(Debug, Clone)]
pub struct DefaultMlcp {
    settings: SolverSettings,
    newton: MlcpNewtonFb,
    schur: SchurLemke,
    pgs: MlcpPgs,
    enumeration: MlcpEnumeration,
    guess: Vec<f64>,
    best: Vec<f64>,
}

impl DefaultMlcp {
    /// The default chain with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        DefaultMlcp {
            settings,
            newton: MlcpNewtonFb::new(settings),
            schur: SchurLemke::new(settings),
            pgs: MlcpPgs::new(settings),
            enumeration: MlcpEnumeration::new(settings),
            guess: Vec::new(),
            best: Vec::new(),
        }
    }
}

impl MlcpSolver for DefaultMlcp {
    fn name(&self) -> &'static str {
        "default"
    }

    fn solve(&mut self, problem: &Mlcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let tol = self.settings.tolerance;
        self.guess.clear();
        self.guess.extend_from_slice(z);
        self.best.clear();
        self.best.extend_from_slice(z);
        let mut best_err = f64::INFINITY;
        let mut best_solver = "default";
        let mut iterations = 0;
        let mut verdict = SolveStatus::IterationLimit;
        for stage in 0..4 {
            z.copy_from_slice(&self.guess);
            let (status, iters, solver) = match stage {
                0 if problem.size() <= self.settings.pivoting_max_size => {
                    match self.schur.solve(problem, z)? {
                        Some((s, it)) => (s, it, "lemke"),
                        None => continue,
                    }
                }
                1 => {
                    // Newton starts from the best point so far.
                    z.copy_from_slice(&self.best);
                    let r = self.newton.solve(problem, z, w)?;
                    (r.status, r.iterations, "newton-fb")
                }
                2 if pgs_applicable(problem).is_ok() => {
                    let r = self.pgs.solve(problem, z, w)?;
                    (r.status, r.iterations, "pgs")
                }
                3 if problem.n_comp() <= self.settings.enumeration_max_size => {
                    let r = self.enumeration.solve(problem, z, w)?;
                    (r.status, r.iterations, "enum")
                }
                _ => continue,
            };
            iterations += iters;
            problem.compute_w(z, w);
            let err = problem.errors(z, w).0;
            if err <= tol && z.iter().all(|v| v.is_finite()) {
                return Ok(finish(
                    problem,
                    z,
                    w,
                    Stop {
                        solver,
                        iterations,
                        otherwise: SolveStatus::Solved,
                    },
                    tol,
                ));
            }
            if status.rank() < verdict.rank() && status != SolveStatus::Solved {
                verdict = status;
            }
            if err < best_err {
                best_err = err;
                best_solver = solver;
                self.best.copy_from_slice(z);
            }
        }
        z.copy_from_slice(&self.best);
        Ok(finish(
            problem,
            z,
            w,
            Stop {
                solver: best_solver,
                iterations,
                otherwise: verdict,
            },
            tol,
        ))
    }
}
