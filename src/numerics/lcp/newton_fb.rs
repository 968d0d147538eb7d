//! Semismooth Newton on the Fischer–Burmeister function of the LCP:
//! Φᵢ(z) = φ(zᵢ, (M z + q)ᵢ), with an Armijo line search on ½‖Φ‖²
//! (see [`crate::numerics::fb_newton`]). Stops on the LCP error of
//! [`Lcp::errors`]. Converges locally quadratically at nondegenerate
//! solutions; for P-matrices every stationary point of ½‖Φ‖² is a solution.

use nalgebra::DMatrix;

use super::{Lcp, LcpSolver};
use crate::numerics::error::Result;
use crate::numerics::fb_newton::FbNewton;
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::SolveReport;
use crate::numerics::report::{finish, Stop};
use crate::numerics::residual::lcp_natural_norm;
use crate::numerics::settings::SolverSettings;

/// Fischer–Burmeister semismooth Newton for LCPs.
#[derive(Debug, Clone)]
pub struct NewtonFb {
    settings: SolverSettings,
    m: DMatrix<f64>,
    kernel: FbNewton,
}

impl NewtonFb {
    /// A Newton solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        NewtonFb {
            settings,
            m: DMatrix::zeros(0, 0),
            kernel: FbNewton::default(),
        }
    }
}

impl LcpSolver for NewtonFb {
    fn name(&self) -> &'static str {
        "newton-fb"
    }

    fn solve(&mut self, problem: &Lcp, z: &mut [f64], w: &mut [f64]) -> Result<SolveReport> {
        self.settings.validate()?;
        problem.check_vectors(z, w)?;
        let n = problem.size();
        if self.m.nrows() != n {
            self.m = DMatrix::zeros(n, n);
        }
        problem.m.write_dense(&mut self.m);
        let nq = crate::numerics::residual::norm2(&problem.q);
        let scale = if nq > 0.0 { nq } else { 1.0 };
        let tol = self.settings.tolerance;
        let (status, iters) = self.kernel.run(
            &self.m,
            &problem.q,
            0,
            z,
            (tol, self.settings.iterations_or(100)),
            |x, f| lcp_natural_norm(x, f) / scale,
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
