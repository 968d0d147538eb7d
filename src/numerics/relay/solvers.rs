//! Relay solvers.
//!
//! Lemke and Newton work on the LCP reformulation of size 2n: with
//! ζ = z − lb ≥ 0 and μ = w⁻ ≥ 0 (the negative part of w),
//!
//! [w⁺; ub − z] = [M  I; −I  0] [ζ; μ] + [q + M lb; ub − lb],
//! 0 ≤ (ζ, μ) ⊥ (w⁺, ub − z) ≥ 0,
//!
//! whose solutions give z = lb + ζ and w = w⁺ − μ = M z + q. Gauss–Seidel
//! works directly on the box: zᵢ ← P₍lbᵢ,ubᵢ₎(zᵢ − wᵢ/Mᵢᵢ).

use nalgebra::DMatrix;

use super::Relay;
use crate::numerics::error::{NumericsError, Result};
use crate::numerics::fb_newton::FbNewton;
use crate::numerics::lcp::{Lcp, LcpSolver, Lemke};
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::residual::norm2;
use crate::numerics::settings::SolverSettings;
use crate::numerics::splitting::projected_sweeps;

/// A solver of relay problems: `z` holds the initial guess and receives the
/// solution, `w` receives M z + q.
pub trait RelaySolver: Send {
    /// Name used in reports and on the command line.
    fn name(&self) -> &'static str;
    /// Solves `problem`; see [`crate::numerics::lcp::LcpSolver::solve`].
    fn solve(&mut self, problem: &Relay, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport>;
}

/// Names of the relay solvers, as accepted by [`super::relay_solver`].
pub const RELAY_SOLVERS: &str = "default, lemke, newton-fb, pgs";

/// The 2n LCP reformulation, rebuilt in place at each solve.
#[derive(Debug, Clone)]
struct Reformulation {
    lcp: Lcp,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Reformulation {
    fn new() -> Self {
        Reformulation {
            lcp: Lcp {
                m: Matrix::Dense(DMatrix::zeros(0, 0)),
                q: Vec::new(),
            },
            x: Vec::new(),
            y: Vec::new(),
        }
    }

    /// Fills the LCP from `problem`, and x from the guess z (ζ = z − lb
    /// clamped, μ = 0).
    fn build(&mut self, problem: &Relay, z: &[f64]) {
        let n = problem.size();
        if self.lcp.q.len() != 2 * n {
            self.lcp.m = Matrix::Dense(DMatrix::zeros(2 * n, 2 * n));
            self.lcp.q = vec![0.0; 2 * n];
            self.x = vec![0.0; 2 * n];
            self.y = vec![0.0; 2 * n];
        }
        let Matrix::Dense(big) = &mut self.lcp.m else {
            unreachable!("the reformulated matrix is stored dense")
        };
        big.fill(0.0);
        {
            let mut top = big.view_mut((0, 0), (n, n));
            for j in 0..n {
                for i in 0..n {
                    top[(i, j)] = problem.m.get(i, j);
                }
            }
        }
        for i in 0..n {
            big[(i, n + i)] = 1.0;
            big[(n + i, i)] = -1.0;
        }
        // q' = (q + M lb, ub − lb)
        self.lcp.q[..n].copy_from_slice(&problem.q);
        problem.m.gemv(1.0, &problem.lb, 1.0, &mut self.lcp.q[..n]);
        for i in 0..n {
            self.lcp.q[n + i] = problem.ub[i] - problem.lb[i];
            self.x[i] = (z[i] - problem.lb[i]).clamp(0.0, problem.ub[i] - problem.lb[i]);
            self.x[n + i] = 0.0;
        }
    }

    /// z = lb + ζ.
    fn extract(&self, problem: &Relay, z: &mut [f64]) {
        for (i, zi) in z.iter_mut().enumerate() {
            *zi = (problem.lb[i] + self.x[i]).clamp(problem.lb[i], problem.ub[i]);
        }
    }
}

/// Lemke's method on the 2n LCP reformulation.
#[derive(Debug, Clone)]
pub struct RelayLemke {
    settings: SolverSettings,
    lemke: Lemke,
    re: Reformulation,
}

impl RelayLemke {
    /// A relay Lemke solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        RelayLemke {
            settings,
            lemke: Lemke::new(settings),
            re: Reformulation::new(),
        }
    }
}

impl RelaySolver for RelayLemke {
    fn name(&self) -> &'static str {
        "lemke"
    }

    fn solve(&mut self, problem: &Relay, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        self.re.build(problem, z);
        let re = &mut self.re;
        let r = self.lemke.solve(&re.lcp, &mut re.x, &mut re.y)?;
        re.extract(problem, z);
        Ok(finish(
            problem,
            z,
            w,
            Stop {
                solver: "lemke",
                iterations: r.iterations,
                otherwise: r.status,
            },
            self.settings.tolerance,
        ))
    }
}

/// Semismooth Newton (Fischer–Burmeister) on the 2n LCP reformulation,
/// stopping on the relay's own error measure.
#[derive(Debug, Clone)]
pub struct RelayNewtonFb {
    settings: SolverSettings,
    kernel: FbNewton,
    re: Reformulation,
}

impl RelayNewtonFb {
    /// A relay Newton solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        RelayNewtonFb {
            settings,
            kernel: FbNewton::default(),
            re: Reformulation::new(),
        }
    }
}

impl RelaySolver for RelayNewtonFb {
    fn name(&self) -> &'static str {
        "newton-fb"
    }

    fn solve(&mut self, problem: &Relay, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        self.re.build(problem, z);
        let n = problem.size();
        let scale = 1.0 + norm2(&problem.q);
        let (lb, ub) = (&problem.lb, &problem.ub);
        let tol = self.settings.tolerance;
        let re = &mut self.re;
        let Matrix::Dense(big) = &re.lcp.m else {
            unreachable!("the reformulated matrix is stored dense")
        };
        let (status, iters) = self.kernel.run(
            big,
            &re.lcp.q,
            0,
            &mut re.x,
            (tol, self.settings.iterations_or(100)),
            |x, f| {
                // z = lb + ζ, w = w⁺ − μ = f_top − μ.
                let mut s = 0.0;
                for i in 0..n {
                    let zi = lb[i] + x[i];
                    let wi = f[i] - x[n + i];
                    let r = zi - (zi - wi).clamp(lb[i], ub[i]);
                    s += r * r;
                }
                s.sqrt() / scale
            },
        );
        re.extract(problem, z);
        Ok(finish(
            problem,
            z,
            w,
            Stop {
                solver: "newton-fb",
                iterations: iters,
                otherwise: status,
            },
            tol,
        ))
    }
}

/// Projected Gauss–Seidel on the box: zᵢ ← P₍lbᵢ,ubᵢ₎(zᵢ − wᵢ/Mᵢᵢ), stopping on
/// the natural-map error. Needs Mᵢᵢ > 0.
#[derive(Debug, Clone)]
pub struct RelayPgs {
    settings: SolverSettings,
}

impl RelayPgs {
    /// A relay PGS solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        RelayPgs { settings }
    }
}

impl RelaySolver for RelayPgs {
    fn name(&self) -> &'static str {
        "pgs"
    }

    fn solve(&mut self, problem: &Relay, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        if let Some(i) = (0..n).find(|&i| problem.m.diagonal(i) <= 0.0) {
            return Err(NumericsError::NotApplicable {
                solver: "pgs",
                reason: format!(
                    "diagonal entry M[{i},{i}] = {} is not positive",
                    problem.m.diagonal(i)
                ),
            });
        }
        let tol = self.settings.tolerance;
        let max_sweeps = self.settings.iterations_or(10_000);
        for i in 0..n {
            z[i] = z[i].clamp(problem.lb[i], problem.ub[i]);
        }
        let (lb, ub) = (&problem.lb, &problem.ub);
        let (status, iterations) = projected_sweeps(
            problem,
            (&problem.m, &problem.q),
            z,
            w,
            (1.0, tol, max_sweeps),
            |i, x| x.clamp(lb[i], ub[i]),
        );
        let stop = Stop {
            solver: "pgs",
            iterations,
            otherwise: status,
        };
        Ok(finish(problem, z, w, stop, tol))
    }
}

/// The default relay solver: the closed form for one unknown with M > 0,
/// otherwise Lemke on the reformulation (2n ≤ `pivoting_max_size`), then
/// Newton–FB, then PGS (Mᵢᵢ > 0), returning the first solution within
/// tolerance or the most informative failure.
#[derive(Debug, Clone)]
pub struct DefaultRelay {
    settings: SolverSettings,
    lemke: RelayLemke,
    newton: RelayNewtonFb,
    pgs: RelayPgs,
    guess: Vec<f64>,
    best: Vec<f64>,
}

impl DefaultRelay {
    /// The default chain with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        DefaultRelay {
            settings,
            lemke: RelayLemke::new(settings),
            newton: RelayNewtonFb::new(settings),
            pgs: RelayPgs::new(settings),
            guess: Vec::new(),
            best: Vec::new(),
        }
    }
}

impl RelaySolver for DefaultRelay {
    fn name(&self) -> &'static str {
        "default"
    }

    fn solve(&mut self, problem: &Relay, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        // One unknown with M > 0: the solution is unique and in closed
        // form, z = Π_[lb, ub](−q/M) (w = 0 inside the box, w ≥ 0 at lb,
        // w ≤ 0 at ub); measured like any other solve.
        if n == 1 && problem.m.diagonal(0) > 0.0 {
            z[0] = (-problem.q[0] / problem.m.diagonal(0)).clamp(problem.lb[0], problem.ub[0]);
            let stop = Stop {
                solver: "closed form",
                iterations: 1,
                otherwise: SolveStatus::NumericalTrouble,
            };
            let r = finish(problem, z, w, stop, self.settings.tolerance);
            if r.status.is_solved() {
                return Ok(r);
            }
        }
        self.guess.clear();
        self.guess.extend_from_slice(z);
        self.best.clear();
        self.best.extend_from_slice(z);
        let mut best: Option<SolveReport> = None;
        let mut iterations = 0;
        let mut verdict = SolveStatus::IterationLimit;
        for stage in 0..3 {
            z.copy_from_slice(&self.guess);
            let r = match stage {
                0 if 2 * n <= self.settings.pivoting_max_size => self.lemke.solve(problem, z, w)?,
                1 => self.newton.solve(problem, z, w)?,
                2 if (0..n).all(|i| problem.m.diagonal(i) > 0.0) => {
                    self.pgs.solve(problem, z, w)?
                }
                _ => continue,
            };
            iterations += r.iterations;
            if r.status.is_solved() {
                return Ok(SolveReport { iterations, ..r });
            }
            if r.status == SolveStatus::RayTermination
                || (verdict == SolveStatus::IterationLimit
                    && r.status == SolveStatus::NumericalTrouble
                    && best.is_none())
            {
                verdict = r.status;
            }
            if best.is_none_or(|b| r.error < b.error) {
                self.best.copy_from_slice(z);
                best = Some(r);
            }
        }
        z.copy_from_slice(&self.best);
        problem.compute_w(z, w);
        let r = best.expect("the Newton stage always runs");
        Ok(SolveReport {
            status: verdict,
            iterations,
            ..r
        })
    }
}
