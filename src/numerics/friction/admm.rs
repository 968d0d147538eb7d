//! ADMM on the cone-constrained quadratic form of the problem.
//!
//! For a fixed De Saxcé shift s = μ‖u_T‖ e_N the problem is the optimality
//! system of min ½ rᵀ W r + (q + s)ᵀ r over r ∈ K. Splitting r = z, z ∈ K,
//! with scaled multiplier ξ and penalty ρ:
//!
//! r⁺ = (W + ρ I)⁻¹ (ρ (z − ξ) − q − s),  z⁺ = P_K(r⁺ + ξ),  ξ⁺ = ξ + r⁺ − z⁺,
//!
//! and s is refreshed from u = W z⁺ + q after every iteration. ρ starts at
//! the mean of W's diagonal and is balanced (×2 or ÷2, ξ rescaled, W + ρ I
//! refactored) when the primal residual ‖r − z‖ and the dual residual
//! ρ‖z⁺ − z‖ differ by more than a factor 10. The returned r is z (in K).

use nalgebra::DMatrix;

use super::cone::{project_on_cone, tangent_norm};
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::error::Result;
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// ADMM (see the module documentation); at most `settings.max_iterations`
/// iterations (20 000 by default).
#[derive(Debug, Clone)]
pub struct Admm {
    settings: SolverSettings,
    wd: DMatrix<f64>,
    lu: Vec<f64>,
    piv: Vec<usize>,
    x: Vec<f64>,
    xi: Vec<f64>,
    z_old: Vec<f64>,
}

impl Admm {
    /// A solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Admm {
            settings,
            wd: DMatrix::zeros(0, 0),
            lu: Vec::new(),
            piv: Vec::new(),
            x: Vec::new(),
            xi: Vec::new(),
            z_old: Vec::new(),
        }
    }

    fn factor(&mut self, n: usize, rho: f64) -> bool {
        self.lu.copy_from_slice(self.wd.as_slice());
        for i in 0..n {
            self.lu[i * n + i] += rho;
        }
        lu_factor(&mut self.lu, n, &mut self.piv)
    }
}

impl FrictionSolver for Admm {
    fn name(&self) -> &'static str {
        "admm"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        let tol = self.settings.tolerance;
        let (n, d) = (p.size(), p.dim);
        if self.wd.shape() != (n, n) {
            self.wd = DMatrix::zeros(n, n);
        }
        p.w.write_dense(&mut self.wd);
        self.lu.resize(n * n, 0.0);
        self.piv.resize(n, 0);
        for v in [&mut self.x, &mut self.xi, &mut self.z_old] {
            v.resize(n, 0.0);
        }
        self.xi.iter_mut().for_each(|v| *v = 0.0);
        // z = r: start in the cone.
        for (i, &mu) in p.mu.iter().enumerate() {
            project_on_cone(&mut r[i * d..i * d + d], mu);
        }
        let mut rho = if n > 0 {
            (0..n).map(|i| self.wd[(i, i)].abs()).sum::<f64>() / n as f64
        } else {
            1.0
        };
        if !(rho > 0.0 && rho.is_finite()) {
            rho = 1.0;
        }
        let max = self.settings.iterations_or(20_000);
        let mut iterations = max;
        let mut otherwise = SolveStatus::IterationLimit;
        if !self.factor(n, rho) {
            otherwise = SolveStatus::NumericalTrouble;
            iterations = 0;
        } else {
            for it in 0..max {
                p.compute_u(r, u);
                if p.errors(r, u).siconos <= tol {
                    iterations = it;
                    break;
                }
                // x = (W + ρI)⁻¹ (ρ (z − ξ) − q − s)
                for k in 0..n {
                    self.x[k] = rho * (r[k] - self.xi[k]) - p.q[k];
                }
                for (i, &mu) in p.mu.iter().enumerate() {
                    self.x[i * d] -= mu * tangent_norm(&u[i * d..i * d + d]);
                }
                lu_solve(&self.lu, n, &self.piv, &mut self.x);
                self.z_old.copy_from_slice(r);
                for k in 0..n {
                    r[k] = self.x[k] + self.xi[k];
                }
                for (i, &mu) in p.mu.iter().enumerate() {
                    project_on_cone(&mut r[i * d..i * d + d], mu);
                }
                let (mut prim, mut dual) = (0.0, 0.0);
                for k in 0..n {
                    self.xi[k] += self.x[k] - r[k];
                    prim += (self.x[k] - r[k]).powi(2);
                    dual += (r[k] - self.z_old[k]).powi(2);
                }
                let (prim, dual) = (prim.sqrt(), rho * dual.sqrt());
                if !prim.is_finite() {
                    otherwise = SolveStatus::NumericalTrouble;
                    iterations = it + 1;
                    break;
                }
                let new_rho = if prim > 10.0 * dual {
                    rho * 2.0
                } else if dual > 10.0 * prim {
                    rho / 2.0
                } else {
                    rho
                };
                if it % 25 == 24 && new_rho != rho && new_rho > 1e-12 && new_rho < 1e12 {
                    let k = rho / new_rho;
                    self.xi.iter_mut().for_each(|v| *v *= k);
                    rho = new_rho;
                    if !self.factor(n, rho) {
                        otherwise = SolveStatus::NumericalTrouble;
                        iterations = it + 1;
                        break;
                    }
                }
            }
        }
        let stop = Stop {
            solver: "admm",
            iterations,
            otherwise,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
