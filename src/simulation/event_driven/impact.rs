//! The problems solved at an event, each an LCP of the numerics layer:
//!
//! * **impact** (velocity level) over the closed contacts I₁ (y ≤ 0 up to
//!   rounding): ẏ⁺ = ẏ⁻ + W P, 0 ≤ ẏ⁺ + e ẏ⁻ ⊥ P ≥ 0, W = H M⁻¹ Hᵀ,
//!   i.e. LCP(W, (1 + e) ẏ⁻); then v⁺ = v⁻ + M⁻¹ Hᵀ P. Simultaneous
//!   impacts are solved together; resting contacts in I₁ transmit them.
//! * **accumulation rule**: a contact whose post-impact velocity is below
//!   `accumulation_velocity` and whose free flight 2ẏ⁺/(−ÿ_free) is shorter
//!   than `accumulation_time` is given e = 0 and the impact is solved again:
//!   the contact becomes persistent instead of bouncing ever faster.
//! * **contact forces** (acceleration level) over the contacts with y = 0
//!   and ẏ = 0: ÿ = W λ + ÿ_free, 0 ≤ ÿ ⊥ λ ≥ 0; the contacts with λ > 0
//!   form I₂, the others leave.
//! * **first-order mode**: LCP(D, C x + F u + e) at the event state; the
//!   rows with λ > w are active. Rows where both vanish (the state is on
//!   a mode boundary) are decided by the same LCP a little further along
//!   the flow, at x + δ ẋ with δ = 10⁻⁶ of the last step.

use nalgebra::DMatrix;

use super::dynamics::Dynamics;
use crate::numerics::lcp::{lcp_solver, Lcp, LcpSolver};
use crate::numerics::relay::{relay_solver, Relay, RelaySolver};
use crate::numerics::{Matrix, SolverSettings};
use crate::simulation::error::SimulationError;

/// Solver and buffers of the event problems.
pub(crate) struct EventProblems {
    solver: Box<dyn LcpSolver>,
    relay: Box<dyn RelaySolver>,
    lcp: Lcp,
    z: Vec<f64>,
    w: Vec<f64>,
    /// Solves and summed iterations.
    pub solves: u64,
    pub iterations: u64,
    pub event_count: u64,
}

/// What an impact did.
pub(crate) struct ImpactOutcome {
    /// Impulse of each closed row (same order as the rows given).
    pub impulse: Vec<f64>,
    /// Rows given e = 0 by the accumulation rule.
    pub plastic: Vec<bool>,
    /// ẏ⁺ of each row.
    pub ydot_after: Vec<f64>,
}

impl EventProblems {
    pub fn new(solver: &str, settings: SolverSettings) -> Result<Self, SimulationError> {
        Ok(EventProblems {
            solver: lcp_solver(solver, settings).map_err(SimulationError::Numerics)?,
            relay: relay_solver("default", settings).map_err(SimulationError::Numerics)?,
            lcp: Lcp {
                m: Matrix::Dense(DMatrix::zeros(0, 0)),
                q: Vec::new(),
            },
            z: Vec::new(),
            w: Vec::new(),
            solves: 0,
            iterations: 0,
            event_count: 0,
        })
    }

    /// Solves the LCP held in `lcp` (size n); z, w receive the solution.
    fn solve(&mut self, t: f64) -> Result<(), SimulationError> {
        let n = self.lcp.q.len();
        self.z.clear();
        self.z.resize(n, 0.0);
        self.w.clear();
        self.w.resize(n, 0.0);
        if n == 0 {
            return Ok(());
        }
        let report = self
            .solver
            .solve(&self.lcp, &mut self.z, &mut self.w)
            .map_err(SimulationError::Numerics)?;
        self.solves += 1;
        self.iterations += report.iterations as u64;
        if !report.status.is_solved() {
            return Err(SimulationError::SolverFailed {
                t,
                step: self.event_count,
                solver: report.solver,
                status: report.status.as_str(),
                error: report.error,
                size: n,
            });
        }
        Ok(())
    }

    fn matrix(&mut self) -> &mut DMatrix<f64> {
        match &mut self.lcp.m {
            Matrix::Dense(m) => m,
            Matrix::BlockSparse(_) => unreachable!("dense event problems"),
        }
    }

    /// The impact law over the closed contact rows `rows` at the state x
    /// (velocities updated in place). `ydot` holds ẏ⁻ of each row and
    /// `yddot_free` the free ÿ (for the accumulation rule).
    #[allow(clippy::too_many_arguments)]
    pub fn impact(
        &mut self,
        dynamics: &Dynamics,
        rows: &[usize],
        ydot: &[f64],
        yddot_free: &[f64],
        accumulation: (f64, f64),
        t: f64,
        x: &mut [f64],
    ) -> Result<ImpactOutcome, SimulationError> {
        let k = rows.len();
        let mut w = std::mem::take(self.matrix());
        dynamics.delassus(rows, &mut w);
        *self.matrix() = w;
        let mut plastic = vec![false; k];
        let mut restitution: Vec<f64> = rows.iter().map(|&r| dynamics.restitution(r)).collect();
        loop {
            self.lcp.q.clear();
            self.lcp
                .q
                .extend(ydot.iter().zip(&restitution).map(|(v, e)| (1.0 + e) * v));
            self.solve(t)?;
            // ẏ⁺ = w − e ẏ⁻.
            let after: Vec<f64> = (0..k)
                .map(|i| self.w[i] - restitution[i] * ydot[i])
                .collect();
            let mut changed = false;
            for i in 0..k {
                if plastic[i] || restitution[i] == 0.0 || self.z[i] <= 0.0 {
                    continue;
                }
                let flight = if yddot_free[i] < 0.0 {
                    2.0 * after[i] / -yddot_free[i]
                } else {
                    f64::INFINITY
                };
                if after[i] < accumulation.0 && flight < accumulation.1 {
                    plastic[i] = true;
                    restitution[i] = 0.0;
                    changed = true;
                }
            }
            if !changed {
                let impulse = self.z.clone();
                dynamics.apply_impulse(rows, &impulse, x);
                return Ok(ImpactOutcome {
                    impulse,
                    plastic,
                    ydot_after: after,
                });
            }
        }
    }

    /// The contact-force LCP over the rows `rows` (y = 0, ẏ = 0), with
    /// `yddot_free` the free ÿ; returns λ of each row.
    pub fn contact_forces(
        &mut self,
        dynamics: &Dynamics,
        rows: &[usize],
        yddot_free: &[f64],
        t: f64,
    ) -> Result<Vec<f64>, SimulationError> {
        let mut w = std::mem::take(self.matrix());
        dynamics.delassus(rows, &mut w);
        *self.matrix() = w;
        self.lcp.q.clear();
        self.lcp.q.extend_from_slice(yddot_free);
        self.solve(t)?;
        Ok(self.z.clone())
    }

    /// The relay problem w = M λ + q, −w ∈ N₍lb,ub₎(λ); returns (λ, w).
    pub fn relay(
        &mut self,
        m: DMatrix<f64>,
        q: Vec<f64>,
        lb: Vec<f64>,
        ub: Vec<f64>,
        t: f64,
    ) -> Result<(Vec<f64>, Vec<f64>), SimulationError> {
        let n = q.len();
        let problem = Relay {
            m: Matrix::Dense(m),
            q,
            lb,
            ub,
        };
        let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
        let report = self
            .relay
            .solve(&problem, &mut z, &mut w)
            .map_err(SimulationError::Numerics)?;
        self.solves += 1;
        self.iterations += report.iterations as u64;
        if !report.status.is_solved() {
            return Err(SimulationError::SolverFailed {
                t,
                step: self.event_count,
                solver: report.solver,
                status: report.status.as_str(),
                error: report.error,
                size: n,
            });
        }
        Ok((z, w))
    }

    /// LCP(D, c): returns (λ, y) of a first-order interaction's rows.
    pub fn lcs(
        &mut self,
        d: Option<&DMatrix<f64>>,
        c: &[f64],
        t: f64,
    ) -> Result<(Vec<f64>, Vec<f64>), SimulationError> {
        let m = c.len();
        {
            let mat = self.matrix();
            mat.resize_mut(m, m, 0.0);
            match d {
                Some(d) => mat.copy_from(d),
                None => mat.fill(0.0),
            }
        }
        self.lcp.q.clear();
        self.lcp.q.extend_from_slice(c);
        self.solve(t)?;
        Ok((self.z.clone(), self.w.clone()))
    }
}
