//! Nonsmooth Newton on the Alart–Curnier function of the whole problem.
//!
//! Φ(r) stacks the one-contact functions of [`super::cone::alart_curnier`]
//! at (r_i, u_i), u = W r + q, with ρ_i = 1 / max_k (W_ii)_kk. An element of
//! the generalised Jacobian is J = D + E W (D, E block-diagonal). Each step
//! solves J Δ = −Φ (dense LU with partial pivoting) and takes the largest
//! t ∈ {1, ½, …, 2⁻²⁰} with ‖Φ(r + tΔ)‖² ≤ (1 − 2σt)‖Φ(r)‖², σ = 10⁻⁴
//! (Armijo on ψ = ½‖Φ‖², whose slope along Δ is −‖Φ‖²); when no such t
//! exists the full step is taken (at most 5 times in a row). A singular J is
//! regularised (J + δ I). From 200 unknowns with a block-sparse W (from 24
//! when at most a quarter of W's contact blocks are stored) the Jacobian is
//! assembled and factored sparse (faer). It stops when the
//! Siconos-normalised natural-map error meets the tolerance.

use nalgebra::DMatrix;

use super::cone::alart_curnier;
use super::local::rho_of;
use super::sparse_jacobian::SparseJacobian;
use super::{FrictionErrors, FrictionProblem, FrictionSolver};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::numerics::error::Result;
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// A d × d block, row-major in the top-left corner.
type Block3 = [[f64; 3]; 3];

/// Workspace of the Newton iteration, sized once per problem size.
#[derive(Debug, Clone, Default)]
pub(crate) struct NewtonWork {
    wd: DMatrix<f64>,
    jac: Vec<f64>,
    jac_copy: Vec<f64>,
    piv: Vec<usize>,
    phi: Vec<f64>,
    step: Vec<f64>,
    trial: Vec<f64>,
    ut: Vec<f64>,
    rho: Vec<f64>,
    dm: Vec<[[f64; 3]; 3]>,
    em: Vec<[[f64; 3]; 3]>,
    /// A constant added to the diagonal of W (the proximal term of PROX).
    pub shift: f64,
    /// Sparse Jacobians for large block-sparse W (then `wd` stays empty).
    sparse: Option<SparseJacobian>,
    /// The errors of the r and u = W r + q [`NewtonWork::run`] returned,
    /// when it computed them at that r (its last stopping test); `None`
    /// otherwise.
    pub last_errors: Option<FrictionErrors>,
}

/// u ← (W + shift·I) r + q, with the dense copy of W unless it is empty.
fn velocity(
    p: &FrictionProblem,
    wd: &DMatrix<f64>,
    shift: f64,
    q: &[f64],
    r: &[f64],
    u: &mut [f64],
) {
    u.copy_from_slice(q);
    if wd.is_empty() {
        p.w.gemv(1.0, r, 1.0, u);
    } else {
        wd.gemv(1.0, r, 1.0, u);
    }
    if shift != 0.0 {
        for (ui, ri) in u.iter_mut().zip(r) {
            *ui += shift * ri;
        }
    }
}

/// Φ(r) of all contacts into `phi`, with D and E when asked; returns ‖Φ‖².
fn ac_all(
    p: &FrictionProblem,
    rho: &[f64],
    r: &[f64],
    u: &[f64],
    phi: &mut [f64],
    mut jac: Option<(&mut [Block3], &mut [Block3])>,
) -> f64 {
    let d = p.dim;
    let mut s = 0.0;
    let mut ph = [0.0; 3];
    let (mut d0, mut e0) = ([[0.0; 3]; 3], [[0.0; 3]; 3]);
    for i in 0..p.contacts() {
        let b = i * d..i * d + d;
        let (dm, em) = match jac.as_mut() {
            Some((dm, em)) => (&mut dm[i], &mut em[i]),
            None => (&mut d0, &mut e0),
        };
        alart_curnier(
            &r[b.clone()],
            &u[b.clone()],
            p.mu[i],
            rho[i],
            &mut ph,
            dm,
            em,
        );
        phi[b].copy_from_slice(&ph[..d]);
        s += ph[..d].iter().map(|v| v * v).sum::<f64>();
    }
    s
}

impl NewtonWork {
    /// Copies W (dense) and the ρ_i; resets the shift to 0.
    pub fn prepare(&mut self, p: &FrictionProblem) {
        let (n, d) = (p.size(), p.dim);
        if SparseJacobian::applies(p) {
            self.wd = DMatrix::zeros(0, 0);
            self.sparse
                .get_or_insert_with(SparseJacobian::default)
                .reset();
        } else {
            self.sparse = None;
            if self.wd.shape() != (n, n) {
                self.wd = DMatrix::zeros(n, n);
            }
            p.w.write_dense(&mut self.wd);
        }
        for v in [&mut self.phi, &mut self.step, &mut self.trial, &mut self.ut] {
            v.resize(n, 0.0);
        }
        self.jac
            .resize(if self.sparse.is_some() { 0 } else { n * n }, 0.0);
        self.piv.resize(n, 0);
        self.rho.resize(p.contacts(), 1.0);
        self.dm.resize(p.contacts(), [[0.0; 3]; 3]);
        self.em.resize(p.contacts(), [[0.0; 3]; 3]);
        match &p.w {
            Matrix::BlockSparse(w) if self.sparse.is_some() => {
                // Uniform d × d blocks: the diagonal of the first stored
                // block (i, i) of each block row (the entries `get` reads).
                let parts = w.parts();
                for i in 0..p.contacts() {
                    let mut blk = [[0.0; 3]; 3];
                    let ks = parts.row_ptr[i]..parts.row_ptr[i + 1];
                    if let Some(k) = ks.clone().find(|&k| parts.block_col[k] == i) {
                        let vals = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
                        for (a, row) in blk.iter_mut().enumerate().take(d) {
                            row[a] = vals[a * d + a];
                        }
                    }
                    self.rho[i] = rho_of(d, &blk);
                }
            }
            _ => {
                for i in 0..p.contacts() {
                    // ρ_i reads the diagonal of W_ii only.
                    let mut blk = [[0.0; 3]; 3];
                    for (a, row) in blk.iter_mut().enumerate().take(d) {
                        row[a] = p.w.get(i * d + a, i * d + a);
                    }
                    self.rho[i] = rho_of(d, &blk);
                }
            }
        }
        self.shift = 0.0;
    }

    /// Assembles the dense J = D + E (W + shift I), column-major, in `jac`.
    fn dense_step(&mut self, p: &FrictionProblem) {
        let (n, d) = (p.size(), p.dim);
        // J = D + E (W + shift I), column-major.
        for j in 0..n {
            let col = &self.wd.as_slice()[j * n..(j + 1) * n];
            let jc = &mut self.jac[j * n..(j + 1) * n];
            for i in 0..p.contacts() {
                let e = &self.em[i];
                let wc = &col[i * d..i * d + d];
                for a in 0..d {
                    jc[i * d + a] = (0..d).map(|k| e[a][k] * wc[k]).sum();
                }
            }
            let (ci, cb) = (j / d, j % d);
            for a in 0..d {
                jc[ci * d + a] += self.dm[ci][a][cb] + self.em[ci][a][cb] * self.shift;
            }
        }
    }

    /// Solves J Δ = −Φ (`step` holds −Φ and receives Δ) densely. A singular J
    /// (W rank-deficient, e.g. more contact constraints than degrees of
    /// freedom) is regularised: J + δ I with δ = 10⁻¹² · max|J|, then ×100
    /// until the factorisation succeeds (at most δ = 10⁻² · max|J|).
    fn dense_solve(&mut self, p: &FrictionProblem) -> bool {
        let n = p.size();
        self.dense_step(p);
        if self.jac_copy.len() != n * n {
            self.jac_copy.resize(n * n, 0.0);
        }
        self.jac_copy.copy_from_slice(&self.jac);
        let scale = self.jac.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut delta = 0.0;
        loop {
            if lu_factor(&mut self.jac, n, &mut self.piv) {
                lu_solve(&self.jac, n, &self.piv, &mut self.step);
                return self.step.iter().all(|v| v.is_finite());
            }
            delta = if delta == 0.0 {
                1e-12 * scale
            } else {
                delta * 100.0
            };
            if delta.is_nan() || delta <= 0.0 || delta > 1e-2 * scale {
                return false;
            }
            self.jac.copy_from_slice(&self.jac_copy);
            for i in 0..n {
                self.jac[i * n + i] += delta;
            }
        }
    }

    /// Runs Newton steps on the problem (W + shift I, `q`) from r, until the
    /// error of `p` itself (the unshifted problem) meets `tol` or, when
    /// `inner_tol` = κ is set, ‖Φ‖ ≤ κ ‖Φ(r₀)‖ after at least one step. Returns (steps, status): `Solved`
    /// when a stopping test held. u receives W r + q of `p`.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        p: &FrictionProblem,
        q: &[f64],
        r: &mut [f64],
        u: &mut [f64],
        max_iter: usize,
        tol: f64,
        inner_tol: Option<f64>,
    ) -> (usize, SolveStatus) {
        let n = p.size();
        let mut phi0 = 0.0;
        let mut failures = 0;
        // Without shift, on p's own q and W (no dense copy), the velocity of
        // the Alart–Curnier function is u = W r + q, computed by the same
        // product: it is copied, and an accepted trial's velocity is the
        // next iterate's u.
        let same_u = self.shift == 0.0 && std::ptr::eq(q, p.q.as_slice()) && self.wd.is_empty();
        let mut u_known = false;
        // Φ, D and E at r known from the accepted line-search trial (the
        // same figures as computed again at r).
        let mut phi_known = None;
        self.last_errors = None;
        for it in 0..max_iter {
            if !u_known {
                p.compute_u(r, u);
            }
            let errors = p.errors(r, u);
            if errors.siconos <= tol {
                self.last_errors = Some(errors);
                return (it, SolveStatus::Solved);
            }
            let psi = match phi_known.take() {
                Some(psi) => psi,
                None => {
                    if same_u {
                        self.ut.copy_from_slice(u);
                    } else {
                        velocity(p, &self.wd, self.shift, q, r, &mut self.ut);
                    }
                    ac_all(
                        p,
                        &self.rho,
                        r,
                        &self.ut,
                        &mut self.phi,
                        Some((&mut self.dm, &mut self.em)),
                    )
                }
            };
            if !psi.is_finite() {
                return (it, SolveStatus::NumericalTrouble);
            }
            if it == 0 {
                phi0 = psi.sqrt();
            } else if inner_tol.is_some_and(|t| psi.sqrt() <= t * phi0) {
                return (it, SolveStatus::Solved);
            }
            for (s, f) in self.step.iter_mut().zip(&self.phi) {
                *s = -f;
            }
            if let Some(sp) = self.sparse.as_mut() {
                if !sp.solve(p, &self.dm, &self.em, self.shift, &mut self.step) {
                    return (it + 1, SolveStatus::NumericalTrouble);
                }
            } else {
                if !self.dense_solve(p) {
                    return (it + 1, SolveStatus::NumericalTrouble);
                }
            }
            let mut t = 1.0;
            let mut accepted = false;
            for _ in 0..21 {
                for k in 0..n {
                    self.trial[k] = r[k] + t * self.step[k];
                }
                velocity(p, &self.wd, self.shift, q, &self.trial, &mut self.ut);
                // `phi`, D and E are free now (the direction is in `step`):
                // they receive the trial's, which are the next iteration's
                // when the trial is accepted.
                let pt = ac_all(
                    p,
                    &self.rho,
                    &self.trial,
                    &self.ut,
                    &mut self.phi,
                    Some((&mut self.dm, &mut self.em)),
                );
                if pt <= (1.0 - 2e-4 * t) * psi {
                    accepted = true;
                    phi_known = Some(pt);
                    break;
                }
                t *= 0.5;
            }
            u_known = accepted && same_u;
            if accepted {
                failures = 0;
            } else {
                // No decrease along Δ (Φ is only semismooth): take the full
                // Newton step anyway, at most 5 times in a row.
                failures += 1;
                if failures > 5 {
                    p.compute_u(r, u);
                    return (it + 1, SolveStatus::NumericalTrouble);
                }
                for k in 0..n {
                    self.trial[k] = r[k] + self.step[k];
                }
            }
            if !self.trial.iter().all(|v| v.is_finite()) {
                p.compute_u(r, u);
                return (it + 1, SolveStatus::NumericalTrouble);
            }
            r.copy_from_slice(&self.trial);
            if u_known {
                u.copy_from_slice(&self.ut);
            }
        }
        p.compute_u(r, u);
        let errors = p.errors(r, u);
        self.last_errors = Some(errors);
        let status = if errors.siconos <= tol {
            SolveStatus::Solved
        } else {
            SolveStatus::IterationLimit
        };
        (max_iter, status)
    }
}

/// Nonsmooth Newton on the Alart–Curnier function (see the module
/// documentation); at most `settings.max_iterations` steps (100 by default).
#[derive(Debug, Clone)]
pub struct NewtonAc {
    settings: SolverSettings,
    work: NewtonWork,
}

impl NewtonAc {
    /// A solver with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        NewtonAc {
            settings,
            work: NewtonWork::default(),
        }
    }
}

impl FrictionSolver for NewtonAc {
    fn name(&self) -> &'static str {
        "newton-ac"
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        p.check_vectors(r, u)?;
        self.work.prepare(p);
        let tol = self.settings.tolerance;
        let max = self.settings.iterations_or(100);
        let (iterations, status) = self.work.run(p, &p.q, r, u, max, tol, None);
        let otherwise = match status {
            SolveStatus::Solved => SolveStatus::IterationLimit,
            s => s,
        };
        // When the last stopping test computed u = W r + q and the errors
        // at the returned r, they are the report's: not computed twice.
        if let Some(e) = self.work.last_errors {
            let status = if e.siconos <= tol && r.iter().all(|v| v.is_finite()) {
                SolveStatus::Solved
            } else {
                otherwise
            };
            return Ok(SolveReport {
                status,
                solver: "newton-ac",
                iterations,
                error: e.siconos,
                error_abs: e.absolute,
            });
        }
        let stop = Stop {
            solver: "newton-ac",
            iterations,
            otherwise,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
