//! Nonsmooth Gauss–Seidel (NSGS) over contacts.
//!
//! A sweep visits the contacts in order; contact i solves its one-contact
//! problem u_i = W_ii r_i + q̃_i with q̃_i = q_i + Σ_{j≠i} W_ij r_j (the
//! other impulses at their latest values) by a local solver, then with
//! over-relaxation ω takes r_i ← P_K(ω r_i^new + (1 − ω) r_i^old). The
//! q̃_i of all contacts are kept up to date (`Contacts::scatter`: when r_i
//! changes by Δ, q̃_j += W_ji Δ over the stored blocks of block column i),
//! so a sweep costs O(stored blocks of the block columns whose r_i changed)
//! — a contact that stays separated or converged costs no product. The
//! Alart–Curnier local solver first tries
//! the closed forms of `local::closed_form` (separated: q̃_N ≥ 0 gives
//! r_i = 0; sticking: r_i = −W_ii⁻¹ q̃_i when it lies in the cone, with W_ii⁻¹
//! computed once per solve, at the contact's first visit that is not
//! separated) and runs the local Newton on the other (sliding)
//! contacts only, to a local tolerance that follows the sweeps: sweep k
//! solves to the relative accuracy max(10⁻³ tol, η ε_{k−1}), with ε_{k−1}
//! the previous sweep's relative change ‖Δr‖/‖r‖ (the first sweep exact;
//! [`Nsgs::with_local_forcing`]). The error (see [`FrictionProblem::errors`]) is checked
//! every 10 sweeps and whenever the relative change
//! ‖r^{k+1} − r^k‖ / ‖r^{k+1}‖ falls below the tolerance, first with
//! u_i = q̃_i + W_ii r_i from the kept q̃ (O(contacts)); only a check that
//! passes is confirmed with q̃ and u = W r + q recomputed from r over the
//! copied blocks (which also clears the rounding the updates gathered; so
//! does every 100th sweep). The reported error is recomputed from the
//! returned r. Once sized, a solve does not allocate.
//!
//! With [`Nsgs::with_shuffle`] each sweep visits the contacts in a fresh
//! random permutation (Fisher–Yates from a `SmallRng` seeded at the start of
//! every solve: the same seed gives the same orders, hence the same result).

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::cone::project_on_cone;
use super::contacts::Contacts;
use super::local;
use super::{FrictionProblem, FrictionSolver};
use crate::numerics::error::Result;
use crate::numerics::report::{finish, SolveReport, SolveStatus, Stop};
use crate::numerics::settings::SolverSettings;

/// η of [`Nsgs::with_local_forcing`] by default: on the shared fc3d
/// problems 10⁻² leaves the sweeps to convergence and the error after 200
/// sweeps as with exact local solves (docs/friction-benchmark.md).
const DEFAULT_FORCING: f64 = 1e-2;

/// The one-contact solver of NSGS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalSolver {
    /// Newton on the Alart–Curnier function, falling back to projection.
    NewtonAc,
    /// The projected fixed point r ← P_K(r − ρ û) (cheap, slow to converge).
    Projection,
}

/// NSGS with a local solver (see the module documentation).
#[derive(Debug, Clone)]
pub struct Nsgs {
    settings: SolverSettings,
    local: LocalSolver,
    omega: f64,
    contacts: Contacts,
    /// Relative tolerance of the local solves: 10⁻³ × the tolerance, at
    /// least 10⁻¹⁵ (relative to the contact's scale ‖q̃_i‖∞ + ‖r_i‖∞ max W_kk).
    local_rel: f64,
    /// η of the local tolerance that follows the sweeps' relative change
    /// (see [`Nsgs::with_local_forcing`]).
    forcing: f64,
    /// Seed of the shuffled contact order (None: contacts in index order).
    shuffle: Option<u64>,
    /// The contact order of the current sweep (shuffled only).
    order: Vec<usize>,
    rng: Option<SmallRng>,
}

impl Nsgs {
    /// NSGS with the Alart–Curnier Newton local solver, ω = 1, at most
    /// `settings.max_iterations` sweeps (10 000 by default).
    pub fn new(settings: SolverSettings) -> Self {
        Nsgs {
            settings,
            local: LocalSolver::NewtonAc,
            omega: 1.0,
            contacts: Contacts::default(),
            local_rel: 1e-15,
            forcing: DEFAULT_FORCING,
            shuffle: None,
            order: Vec::new(),
            rng: None,
        }
    }

    /// Chooses the local solver.
    pub fn with_local(mut self, local: LocalSolver) -> Self {
        self.local = local;
        self
    }

    /// Over-relaxation ω ∈ (0, 2) (values outside are clamped to [0.1, 1.9]).
    pub fn with_relaxation(mut self, omega: f64) -> Self {
        self.omega = if omega.is_finite() {
            omega.clamp(0.1, 1.9)
        } else {
            1.0
        };
        self
    }

    /// The forcing η of the local solves' tolerance: sweep k solves each
    /// contact to the relative accuracy max(10⁻³ tol, η ε_{k−1}), where
    /// ε_{k−1} = ‖r^{k−1} − r^{k−2}‖ / ‖r^{k−1}‖ is the previous sweep's
    /// relative change (ε_0 = 0: the first sweep is exact). While the sweeps still move r, a local
    /// solve closer than that is wasted (the next visit changes q̃_i by about
    /// as much); as r converges the local tolerance tightens to 10⁻³ tol.
    /// η = 0 solves every visit to 10⁻³ tol; the default is
    /// 10⁻² (negative or non-finite values give 0).
    pub fn with_local_forcing(mut self, eta: f64) -> Self {
        self.forcing = if eta.is_finite() { eta.max(0.0) } else { 0.0 };
        self
    }

    /// Contact shuffling: each sweep visits the contacts in a random order
    /// drawn from a generator seeded with `seed` at the start of each solve
    /// (deterministic: the same seed gives the same orders).
    pub fn with_shuffle(mut self, seed: u64) -> Self {
        self.shuffle = Some(seed);
        self
    }

    /// One sweep; returns (‖Δr‖², ‖r‖²). The kept q̃ must be those of `r`
    /// (`Nsgs::run` sets them up).
    pub(crate) fn sweep(&mut self, p: &FrictionProblem, r: &mut [f64]) -> (f64, f64) {
        // The contact dimension as a constant: the per-contact loops unroll.
        if p.dim == 3 {
            self.sweep_d::<3>(p, r)
        } else {
            self.sweep_d::<2>(p, r)
        }
    }

    fn sweep_d<const D: usize>(&mut self, p: &FrictionProblem, r: &mut [f64]) -> (f64, f64) {
        // The storage of the blocks is chosen once per sweep.
        if self.contacts.is_copied() {
            self.sweep_s::<D, true>(p, r)
        } else {
            self.sweep_s::<D, false>(p, r)
        }
    }

    fn sweep_s<const D: usize, const COPIED: bool>(
        &mut self,
        p: &FrictionProblem,
        r: &mut [f64],
    ) -> (f64, f64) {
        let nc = p.contacts();
        if let Some(rng) = self.rng.as_mut() {
            self.order.shuffle(rng);
        }
        let (mut dr2, mut r2) = (0.0, 0.0);
        if self.rng.is_some() {
            for k in 0..nc {
                let i = self.order[k];
                self.visit::<D, COPIED>(p, i, r, &mut dr2, &mut r2);
            }
        } else {
            for i in 0..nc {
                self.visit::<D, COPIED>(p, i, r, &mut dr2, &mut r2);
            }
        }
        (dr2, r2)
    }

    /// Solves contact i's local problem with the others frozen; adds its
    /// ‖Δr_i‖² and ‖r_i‖² to `dr2` and `r2`. `D` is the contact dimension
    /// (2 or 3, `p.dim`), `COPIED` whether W's blocks are copied (q̃_i kept
    /// and Δ scattered; otherwise q̃_i from W's own rows).
    #[inline(always)]
    fn visit<const D: usize, const COPIED: bool>(
        &mut self,
        p: &FrictionProblem,
        i: usize,
        r: &mut [f64],
        dr2: &mut f64,
        r2: &mut f64,
    ) {
        let mut ql = [0.0; 3];
        if COPIED {
            ql = self.contacts.free(i);
        } else {
            self.contacts.row_free(p, i, r, &mut ql);
        }
        let w = &self.contacts.diag[i];
        let mu = p.mu[i];
        let ri: &mut [f64; D] = match (&mut r[i * D..i * D + D]).try_into() {
            Ok(ri) => ri,
            Err(_) => return,
        };
        let old = *ri;
        let local_tol = |ri: &[f64; D]| {
            let scale = ql[..D].iter().fold(0.0f64, |m, v| m.max(v.abs()))
                + ri.iter().fold(0.0f64, |m, v| m.max(v.abs()))
                    * (0..D).fold(0.0f64, |m, k| m.max(w[k][k].abs()));
            self.local_rel * scale + f64::MIN_POSITIVE
        };
        match self.local {
            LocalSolver::NewtonAc => {
                // Separated (q̃_N ≥ 0) costs one comparison; sticking one
                // product with the stored W_ii⁻¹; only a sliding contact
                // iterates, from its previous r_i moved along its ray to
                // u_N = 0 (`local::newton_start`).
                if q_separated(&ql) {
                    *ri = [0.0; D];
                } else {
                    let tol = local_tol(ri);
                    // W_ii and the lazily computed W_ii⁻¹ are disjoint fields.
                    let inv = self.contacts.inv[i].get(D, w);
                    if local::closed_form(D, w, inv, &ql, mu, ri, tol).is_none() {
                        local::newton_start(D, w, &ql, mu, ri);
                        let rho = self.contacts.rho[i];
                        // Literal sizes let the inlined local solver unroll.
                        if !local::newton_ac(D, w, rho, &ql, mu, ri, tol, 10) {
                            local::projection(D, w, &ql, mu, ri, tol, 20);
                        }
                    }
                }
            }
            LocalSolver::Projection => {
                let tol = local_tol(ri);
                local::projection(D, w, &ql, mu, ri, tol, 1);
            }
        }
        if self.omega != 1.0 {
            for k in 0..D {
                ri[k] = self.omega * ri[k] + (1.0 - self.omega) * old[k];
            }
            project_on_cone(ri, mu);
        }
        let mut delta = [0.0; D];
        for k in 0..D {
            delta[k] = ri[k] - old[k];
            *dr2 += delta[k] * delta[k];
            *r2 += ri[k] * ri[k];
        }
        if COPIED && delta != [0.0; D] {
            self.contacts.scatter::<D>(i, &delta);
        }
    }

    /// Sizes the workspace for `p`.
    pub(crate) fn prepare(&mut self, p: &FrictionProblem) {
        self.contacts.prepare(p);
        self.rng = self.shuffle.map(SmallRng::seed_from_u64);
        if self.rng.is_some() {
            self.order.clear();
            self.order.extend(0..p.contacts());
        }
    }

    /// Runs at most `max_sweeps` sweeps from `r`, stopping at the tolerance;
    /// returns the sweeps done (u receives W r + q, recomputed from r).
    pub(crate) fn run(
        &mut self,
        p: &FrictionProblem,
        r: &mut [f64],
        u: &mut [f64],
        max_sweeps: usize,
        tol: f64,
    ) -> usize {
        let base = (1e-3 * tol).max(1e-15);
        // The first sweep is exact: a warm start's change is not known.
        let mut change = 0.0;
        let copied = self.contacts.is_copied();
        if copied {
            self.contacts.reset_free(p, r);
        }
        for k in 1..=max_sweeps {
            self.local_rel = base.max(self.forcing * change);
            let (dr2, r2) = self.sweep(p, r);
            change = if r2 > 0.0 { (dr2 / r2).sqrt() } else { 1.0 };
            if !dr2.is_finite() {
                return k;
            }
            if k % 10 == 0 || dr2 <= tol * tol * r2 || k == max_sweeps {
                if copied && k < max_sweeps {
                    // u from the kept q̃ (O(contacts)); a full product only
                    // to confirm a pass, and every 100 sweeps to clear the
                    // rounding of the updates.
                    self.contacts.velocity_from_free(p, r, u);
                    if p.errors(r, u).siconos > tol {
                        if k % 100 == 0 {
                            self.contacts.reset_free(p, r);
                        }
                        continue;
                    }
                }
                self.contacts.velocity(p, r, u);
                if p.errors(r, u).siconos <= tol {
                    return k;
                }
            }
        }
        max_sweeps
    }
}

/// The separated case of a contact: q̃_N ≥ 0, whose solution is r = 0
/// (see `local::closed_form`).
#[inline(always)]
fn q_separated(ql: &[f64; 3]) -> bool {
    ql[0] >= 0.0
}

impl FrictionSolver for Nsgs {
    fn name(&self) -> &'static str {
        match self.local {
            LocalSolver::NewtonAc => "nsgs",
            LocalSolver::Projection => "nsgs-proj",
        }
    }

    fn solve(&mut self, p: &FrictionProblem, r: &mut [f64], u: &mut [f64]) -> Result<SolveReport> {
        // A dense W's entries are checked finite by the set-up's one pass
        // over W; any other W (or a non-finite entry, to name it) by
        // `validate`.
        p.validate_but_w_values()?;
        p.check_own_vectors(r, u)?;
        self.prepare(p);
        if self.contacts.w_finite() != Some(true) {
            p.validate()?;
        }
        let tol = self.settings.tolerance;
        let iterations = self.run(p, r, u, self.settings.iterations_or(10_000), tol);
        let otherwise = if r.iter().all(|v| v.is_finite()) {
            SolveStatus::IterationLimit
        } else {
            SolveStatus::NumericalTrouble
        };
        let stop = Stop {
            solver: self.name(),
            iterations,
            otherwise,
        };
        Ok(finish(p, r, u, stop, tol))
    }
}
