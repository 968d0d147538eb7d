//! The extragradient method for the variational inequality form of the
//! problem: find r ∈ K with ⟨F(r), s − r⟩ ≥ 0 for all s ∈ K, where
//! F(r) = û = W r + q + μ‖u_T‖ e_N per contact (De Saxcé's modified velocity).
//!
//! One iteration: r̄ = P_K(r − ρ F(r)), r⁺ = P_K(r − ρ F(r̄)). The step ρ
//! is adapted (Khobotov): while ρ‖F(r) − F(r̄)‖ > 0.9‖r − r̄‖ it is
//! multiplied by 2/3 (and r̄ recomputed); after a step where
//! ρ‖F(r) − F(r̄)‖ < 0.3‖r − r̄‖ it is multiplied by 3/2.

use super::cone::{project_on_cone, tangent_norm};
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::error::Result;
use crate::numerics::matrix::ProblemMatrix;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// The extragradient VI solver; at most `settings.max_iterations`
/// iterations (20 000 by default).
#[derive(Debug, Clone)]
pub struct ExtraGradient {
    settings: SolverSettings,
    f: Vec<f64>,
    rbar: Vec<f64>,
    fbar: Vec<f64>,
}

/// F(r) = û of every contact, from u = W r + q (u is written too).
fn vi_map(p: &FrictionProblem, r: &[f64], u: &mut [f64], f: &mut [f64]) {
    p.compute_u(r, u);
    let d = p.dim;
    f.copy_from_slice(u);
    for (i, &mu) in p.mu.iter().enumerate() {
        f[i * d] += mu * tangent_norm(&u[i * d..i * d + d]);
    }
}

/// x ← P_K(r − ρ g), contact by contact.
fn project_step(p: &FrictionProblem, r: &[f64], rho: f64, g: &[f64], x: &mut [f64]) {
    let d = p.dim;
    for k in 0..r.len() {
        x[k] = r[k] - rho * g[k];
    }
    for (i, &mu) in p.mu.iter().enumerate() {
        project_on_cone(&mut x[i * d..i * d + d], mu);
    }
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

impl ExtraGradient {
    /// A solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        ExtraGradient {
            settings,
            f: Vec::new(),
            rbar: Vec::new(),
            fbar: Vec::new(),
        }
    }
}

impl FrictionSolver for ExtraGradient {
    fn name(&self) -> &'static str {
        "vi-eg"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        let tol = self.settings.tolerance;
        let n = p.size();
        for v in [&mut self.f, &mut self.rbar, &mut self.fbar] {
            v.resize(n, 0.0);
        }
        let dmax = (0..n).fold(0.0f64, |m, i| m.max(p.w.diagonal(i)));
        let mut rho = if dmax > 0.0 { 1.0 / dmax } else { 1.0 };
        let max = self.settings.iterations_or(20_000);
        let mut iterations = max;
        let mut otherwise = SolveStatus::IterationLimit;
        for it in 0..max {
            vi_map(p, r, u, &mut self.f);
            if p.errors(r, u).siconos <= tol {
                iterations = it;
                break;
            }
            let mut ratio = 0.0;
            for _ in 0..60 {
                project_step(p, r, rho, &self.f, &mut self.rbar);
                vi_map(p, &self.rbar, u, &mut self.fbar);
                let dr = dist(r, &self.rbar);
                let df = dist(&self.f, &self.fbar);
                if dr == 0.0 {
                    ratio = 0.0;
                    break;
                }
                ratio = rho * df / dr;
                if ratio <= 0.9 {
                    break;
                }
                rho *= 2.0 / 3.0;
            }
            for (rk, fk) in r.iter_mut().zip(&self.fbar) {
                *rk -= rho * fk;
            }
            let d = p.dim;
            for (i, &mu) in p.mu.iter().enumerate() {
                project_on_cone(&mut r[i * d..i * d + d], mu);
            }
            if !r.iter().all(|v| v.is_finite()) {
                otherwise = SolveStatus::NumericalTrouble;
                iterations = it + 1;
                break;
            }
            if ratio < 0.3 {
                rho *= 1.5;
            }
        }
        let stop = Stop {
            solver: "vi-eg",
            iterations,
            otherwise,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
