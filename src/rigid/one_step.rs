//! The Moreau–Jean one-step problem of rigid bodies in contact.
//!
//! For the contacts of a step (from a detector), with the free velocities
//! v_free of the θ-scheme (`scheme`) and the Jacobian blocks J_{i,b} of
//! contact i on body b (`contact`):
//!
//! * **activation** (seed 004 (12e)/(13), Siconos' γ-rule): contact i is
//!   active when g_i + γ h u_N,i(t_k) ≤ ε (|g_i| + γ h s_i), with
//!   s_i = Σ_b (|v_G,b| + |Ω_b| |p_b − x_G,b|) the size of the terms of
//!   u_i (γ = ½ by default; ε = 10⁻¹² allows for round-off, so that a
//!   closed contact, g = 0, of a rolling ball, whose u_N is round-off of
//!   v_G + ω × r, stays active);
//! * the active contacts form the local frictional problem of dimension 3
//!   u = W r + q,  K*_μ ∋ û ⊥ r ∈ K_μ, with
//!   W_ij = Σ_b J_{i,b} M_b⁻¹ J_{j,b}ᵀ (b over the free bodies the two
//!   contacts share; M_b⁻¹ = diag(I₃/m_b, I_b⁻¹)), block-sparse, and
//!   q_i = Σ_b J_{i,b} v_b,free + e_i u_N,i(t_k) e_N: the Newton impact law
//!   u_N(t_{k+1}) + e u_N(t_k) ≥ 0 ⊥ r_N ≥ 0 written on the shifted
//!   velocity, with Coulomb's cone on the tangential impulse (μ = 0:
//!   frictionless);
//! * the problem is block-diagonal over the islands of the contact graph
//!   (`islands`: connected components over the free bodies); with
//!   `ContactSettings::islands` each island is solved on its own, its
//!   contacts in the order `ContactSettings::order` (top-down along −g
//!   hands a pile's weight to the floor in one Gauss–Seidel sweep);
//! * each problem is solved by NSGS (`numerics::friction::Nsgs`; or another
//!   frictional solver named in the settings) warm-started with the
//!   impulses of the contacts of the previous step that carry the same id,
//!   then, when it stops short of the tolerance and a fallback is named,
//!   by the fallback from NSGS's point (the better of the two is kept);
//! * the step's report is that of the whole problem: the natural map
//!   ‖F‖ = (Σ_k ‖F_k‖²)^½ over the islands k, normalised by
//!   max(‖q‖, ‖r‖, ‖u‖) of the whole. With several islands each is solved to
//!   tol/√3, which bounds the whole: Σ_k ‖F_k‖² ≤ (tol²/3) Σ_k
//!   max(‖q_k‖, ‖r_k‖, ‖u_k‖)² ≤ (tol²/3)(‖q‖² + ‖r‖² + ‖u‖²) ≤ tol² max(‖q‖, ‖r‖, ‖u‖)²;
//! * v_b(t_{k+1}) = v_b,free + M_b⁻¹ Σ_i J_{i,b}ᵀ r_i, then the
//!   configuration update of the θ-scheme.
//!
//! This assembly lives with the bodies until the kernel's frictional
//! Moreau–Jean (issue 17) can take Newton–Euler systems; it uses only the
//! numerics layer.

use nalgebra::{Matrix3, Vector3, Vector6};

use super::body::{BodyState, HeldInput, RigidBody};
use super::contact::{Contact, ContactJacobian};
use super::error::{Result, RigidError};
use super::islands::{across, layered_key, ContactOrder, Islands};
use super::scheme::{FreeVelocity, NewtonEulerScheme};
use crate::numerics::friction::{
    friction_solver, FrictionProblem, FrictionSolver, Nsgs, NsgsNewton,
};
use crate::numerics::matrix::Block;
use crate::numerics::{BlockSparseMatrix, SolveReport, SolveStatus, SolverSettings};

/// Relative round-off allowance ε of the activation test.
const ACTIVATION_EPS: f64 = 1e-12;

/// Settings of the contact step. The default θ is 1: then a step's
/// energy balance is ΔE = Σ_i r_i·u_i(t_{k+1}) − ½ |v_{k+1} − v_k|²_M
/// (gravity included, gyroscopic work aside), and r·u ≤ 0 for every
/// frictional contact without restitution (Coulomb's law), so contacts
/// never add energy; θ = ½ keeps the free motion's energy but its impulse
/// work r·(u_k + u_{k+1})/2 has no sign under friction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactSettings {
    /// The θ-scheme of the smooth part.
    pub scheme: NewtonEulerScheme,
    /// γ of the activation test g + γ h u_N ≤ 0.
    pub gamma: f64,
    /// Settings of the frictional solve.
    pub solver: SolverSettings,
    /// The frictional solver, by name (`numerics::friction::FRICTION_SOLVERS`):
    /// `nsgs` by default; `default` (NSGS, then nonsmooth Newton and PROX
    /// from the best point) when NSGS stalls, as on stacks.
    pub solver_name: &'static str,
    /// The largest error of a step kept when the solver stops at its
    /// iteration limit short of `solver.tolerance` (the solver's own error
    /// measure). `None`: such a step is an error. A run that uses it reports
    /// the steps kept (the caller counts them: see the collision crate's
    /// `RigidSimulation`).
    pub accept_error: Option<f64>,
    /// Solve each island of the contact graph on its own (module
    /// documentation); `false` (the default): one problem for all the
    /// active contacts.
    pub islands: bool,
    /// The order of the contacts in each problem.
    pub order: ContactOrder,
    /// A solver (by name, as `solver_name`) run from the primary solver's
    /// point on an island the primary leaves short of the tolerance.
    pub fallback: Option<&'static str>,
    /// Over-relaxation ω ∈ (0, 2) of NSGS (`solver_name` `nsgs` or
    /// `nsgs-newton` only; 1: plain Gauss–Seidel).
    pub relaxation: f64,
}

impl Default for ContactSettings {
    fn default() -> Self {
        ContactSettings {
            scheme: NewtonEulerScheme {
                theta: 1.0,
                ..NewtonEulerScheme::default()
            },
            gamma: 0.5,
            solver: SolverSettings {
                tolerance: 1e-10,
                max_iterations: Some(2000),
                ..SolverSettings::default()
            },
            solver_name: "nsgs",
            accept_error: None,
            islands: false,
            order: ContactOrder::Detection,
            fallback: None,
            relaxation: 1.0,
        }
    }
}

impl ContactSettings {
    /// Settings for piles, stacks and granular matter
    /// (docs/rigid-bodies.md, "Settled piles"): `nsgs-newton` (NSGS handing
    /// over to the nonsmooth Newton method when it stalls) to 10⁻⁶ in at
    /// most 2000 iterations, then the `default` chain as fallback from its
    /// point; the rest default.
    pub fn pile() -> Self {
        let mut s = ContactSettings {
            solver_name: "nsgs-newton",
            fallback: Some("default"),
            ..ContactSettings::default()
        };
        s.solver.tolerance = 1e-6;
        s.solver.max_iterations = Some(2000);
        s
    }
}

/// What a step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// Contacts given by the detector.
    pub contacts: usize,
    /// Contacts active in the one-step problem.
    pub active: usize,
    /// The frictional solve's report (None when no contact was active).
    pub solve: Option<SolveReport>,
    /// Newton iterations of the gyroscopic solves, summed over the bodies.
    pub newton_iterations: usize,
    /// Problems solved: the islands with an active contact (1 when
    /// `ContactSettings::islands` is off and a contact is active).
    pub islands: usize,
}

/// The contact step and its reused workspace.
pub struct ContactStep {
    settings: ContactSettings,
    /// The solver to the tolerance (one island) and to tolerance/√3 (several).
    solver: Box<dyn FrictionSolver>,
    island_solver: Box<dyn FrictionSolver>,
    /// The fallbacks, to the same two tolerances.
    fallback: Option<(Box<dyn FrictionSolver>, Box<dyn FrictionSolver>)>,
    islands: Islands,
    /// Per active contact: (island representative, layer, row, position,
    /// index); layer and row are 0 but in the layered order, position is
    /// the height along −g (top-down and bottom-up) or along the row.
    keys: Vec<(usize, i64, i64, f64, usize)>,
    sorted: Vec<(usize, ContactJacobian, ContactJacobian)>,
    /// Start of each island in the sorted active contacts, then their count.
    starts: Vec<usize>,
    r_save: Vec<f64>,
    free: Vec<FreeVelocity>,
    /// Per body: (1/m, I⁻¹) of this step (zero for fixed bodies).
    inverse: Vec<(f64, Matrix3<f64>)>,
    /// Per active contact: (contact index, J₁, J₂).
    active: Vec<(usize, ContactJacobian, ContactJacobian)>,
    /// Per body: active contacts touching it (index into `active`, side).
    by_body: Vec<Vec<(usize, bool)>>,
    /// One row's W contributions (column, block) before merging.
    row: Vec<(usize, Matrix3<f64>)>,
    q: Vec<f64>,
    mu: Vec<f64>,
    r: Vec<f64>,
    u: Vec<f64>,
    /// Impulses of the previous step by contact id (sorted by id).
    previous: Vec<(u64, [f64; 3])>,
    next_previous: Vec<(u64, [f64; 3])>,
    /// Impulse of each input contact of the last step (zero if inactive).
    impulses: Vec<[f64; 3]>,
    /// Generalised impulse Σ_i J_{i,b}ᵀ r_i of each body.
    dv: Vec<Vector6<f64>>,
}

impl std::fmt::Debug for ContactStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactStep")
            .field("settings", &self.settings)
            .field("solver", &self.solver.name())
            .finish()
    }
}

impl ContactStep {
    /// A contact step with the given settings.
    pub fn new(settings: ContactSettings) -> Result<Self> {
        settings.scheme.validate()?;
        settings.solver.validate()?;
        if !(settings.gamma.is_finite() && (0.0..=1.0).contains(&settings.gamma)) {
            return Err(RigidError::InvalidSetting {
                name: "gamma",
                reason: format!("must lie in [0, 1], got {}", settings.gamma),
            });
        }
        if let Some(a) = settings.accept_error {
            if !(a.is_finite() && a >= settings.solver.tolerance) {
                return Err(RigidError::InvalidSetting {
                    name: "accept_error",
                    reason: format!(
                        "must be finite and at least the solver's tolerance {}, got {a}",
                        settings.solver.tolerance
                    ),
                });
            }
        }
        if !(settings.relaxation > 0.0 && settings.relaxation < 2.0) {
            return Err(RigidError::InvalidSetting {
                name: "relaxation",
                reason: format!("must lie in (0, 2), got {}", settings.relaxation),
            });
        }
        let build = |name: &'static str, tolerance: f64| -> Result<Box<dyn FrictionSolver>> {
            let s = SolverSettings {
                tolerance,
                ..settings.solver
            };
            let solver: Box<dyn FrictionSolver> = if name == "nsgs" && settings.relaxation != 1.0 {
                Box::new(Nsgs::new(s).with_relaxation(settings.relaxation))
            } else if name == "nsgs-newton" && settings.relaxation != 1.0 {
                Box::new(NsgsNewton::new(s).with_relaxation(settings.relaxation))
            } else {
                friction_solver(name, s)?
            };
            Ok(solver)
        };
        let tol = settings.solver.tolerance;
        let island_tol = tol / 3f64.sqrt();
        let fallback = match settings.fallback {
            Some(name) => Some((build(name, tol)?, build(name, island_tol)?)),
            None => None,
        };
        Ok(ContactStep {
            settings,
            solver: build(settings.solver_name, tol)?,
            island_solver: build(settings.solver_name, island_tol)?,
            fallback,
            islands: Islands::default(),
            keys: Vec::new(),
            sorted: Vec::new(),
            starts: Vec::new(),
            r_save: Vec::new(),
            free: Vec::new(),
            inverse: Vec::new(),
            active: Vec::new(),
            by_body: Vec::new(),
            row: Vec::new(),
            q: Vec::new(),
            mu: Vec::new(),
            r: Vec::new(),
            u: Vec::new(),
            previous: Vec::new(),
            next_previous: Vec::new(),
            impulses: Vec::new(),
            dv: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &ContactSettings {
        &self.settings
    }

    /// The impulse (r_N, r_T1, r_T2) of each contact of the last step, in
    /// the order they were given (zero for inactive ones).
    pub fn impulses(&self) -> &[[f64; 3]] {
        &self.impulses
    }

    /// The warm start the next step reads: the impulses of the last
    /// step's active contacts by contact id, sorted by id.
    pub fn warm_start(&self) -> &[(u64, [f64; 3])] {
        &self.previous
    }

    /// Replaces the warm start (a saved run's, see
    /// [`ContactStep::warm_start`]); the ids must be strictly increasing and
    /// the impulses finite.
    pub fn set_warm_start(&mut self, warm: &[(u64, [f64; 3])]) -> Result<()> {
        let sorted = warm.windows(2).all(|w| w[0].0 < w[1].0);
        let finite = warm.iter().all(|(_, r)| r.iter().all(|x| x.is_finite()));
        if !(sorted && finite) {
            return Err(RigidError::InvalidSetting {
                name: "warm_start",
                reason: "contact ids must be strictly increasing and impulses finite".into(),
            });
        }
        self.previous.clear();
        self.previous.extend_from_slice(warm);
        Ok(())
    }

    /// One step [t, t + h] of `bodies` from `states` with the detector's
    /// `contacts` (computed at the step's start).
    pub fn step(
        &mut self,
        bodies: &[RigidBody],
        states: &mut [BodyState],
        contacts: &[Contact],
        t: f64,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepReport> {
        self.step_held(bodies, states, &[], contacts, t, h, gravity)
    }

    /// As [`ContactStep::step`], with an input held on each body over the
    /// step (`held[b]` on body b; empty: none, exactly `step`).
    #[allow(clippy::too_many_arguments)]
    pub fn step_held(
        &mut self,
        bodies: &[RigidBody],
        states: &mut [BodyState],
        held: &[HeldInput],
        contacts: &[Contact],
        t: f64,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepReport> {
        let scheme = self.settings.scheme;
        let n = bodies.len();
        if !held.is_empty() && held.len() != n {
            return Err(RigidError::InvalidSetting {
                name: "held inputs",
                reason: format!("{} inputs for {n} bodies", held.len()),
            });
        }
        self.free.clear();
        let mut newton_iterations = 0;
        for (b, (body, state)) in bodies.iter().zip(states.iter()).enumerate() {
            let f = scheme.free_velocity_held(b, body, state, t, h, gravity, held.get(b))?;
            newton_iterations += f.iterations;
            self.free.push(f);
        }
        self.inverse.clear();
        self.inverse.extend(
            bodies
                .iter()
                .map(|b| (b.inverse_mass(), b.inverse_inertia())),
        );
        // Activation and Jacobians.
        self.active.clear();
        self.impulses.clear();
        self.impulses.resize(contacts.len(), [0.0; 3]);
        for (i, c) in contacts.iter().enumerate() {
            for body in [c.body1, c.body2] {
                if body >= n {
                    return Err(RigidError::UnknownBody {
                        contact: i,
                        body,
                        bodies: n,
                    });
                }
            }
            let (s1, s2) = (&states[c.body1], &states[c.body2]);
            let un = c.relative_velocity(s1, s2).x;
            let gh = self.settings.gamma * h;
            // Round-off allowance: a closed contact (g = 0) whose normal
            // velocity is round-off of the bodies' velocities stays active.
            let scale = s1.velocity.norm()
                + s1.omega.norm() * (c.point1 - s1.position).norm()
                + s2.velocity.norm()
                + s2.omega.norm() * (c.point2 - s2.position).norm();
            if c.gap + gh * un <= ACTIVATION_EPS * (c.gap.abs() + gh * scale) {
                let (j1, j2) = c.jacobians(s1, s2);
                self.active.push((i, j1, j2));
            }
        }
        let na = self.active.len();
        if na == 0 {
            for (b, state) in states.iter_mut().enumerate() {
                if !bodies[b].fixed {
                    scheme.advance(state, self.free[b].velocity, self.free[b].omega, h);
                }
            }
            self.previous.clear();
            return Ok(StepReport {
                contacts: contacts.len(),
                active: 0,
                solve: None,
                newton_iterations,
                islands: 0,
            });
        }
        self.sort_into_islands(bodies, states, contacts, gravity);
        // Contacts by body.
        if self.by_body.len() < n {
            self.by_body.resize_with(n, Vec::new);
        }
        for list in &mut self.by_body {
            list.clear();
        }
        for (a, (i, _, _)) in self.active.iter().enumerate() {
            let c = &contacts[*i];
            if !bodies[c.body1].fixed {
                self.by_body[c.body1].push((a, false));
            }
            if !bodies[c.body2].fixed {
                self.by_body[c.body2].push((a, true));
            }
        }
        // q and μ.
        self.q.clear();
        self.mu.clear();
        for (i, j1, j2) in &self.active {
            let c = &contacts[*i];
            let v1 = free_vector(&self.free[c.body1]);
            let v2 = free_vector(&self.free[c.body2]);
            let mut q = j1 * v1 + j2 * v2;
            let un = c.relative_velocity(&states[c.body1], &states[c.body2]).x;
            q.x += c.restitution * un;
            self.q.extend_from_slice(q.as_slice());
            self.mu.push(c.friction);
        }
        // Warm start.
        self.r.clear();
        self.r.resize(3 * na, 0.0);
        self.u.clear();
        self.u.resize(3 * na, 0.0);
        for (a, (i, _, _)) in self.active.iter().enumerate() {
            if let Ok(p) = self
                .previous
                .binary_search_by_key(&contacts[*i].id, |e| e.0)
            {
                self.r[3 * a..3 * a + 3].copy_from_slice(&self.previous[p].1);
            }
        }
        let report = self.solve_islands(bodies, contacts)?;
        // Velocities after the impulses.
        let dv = &mut self.dv;
        dv.clear();
        dv.resize(n, Vector6::zeros());
        self.next_previous.clear();
        for (a, (i, j1, j2)) in self.active.iter().enumerate() {
            let c = &contacts[*i];
            let r = Vector3::new(self.r[3 * a], self.r[3 * a + 1], self.r[3 * a + 2]);
            self.impulses[*i] = [r.x, r.y, r.z];
            self.next_previous.push((c.id, [r.x, r.y, r.z]));
            dv[c.body1] += j1.transpose() * r;
            dv[c.body2] += j2.transpose() * r;
        }
        self.next_previous.sort_unstable_by_key(|e| e.0);
        std::mem::swap(&mut self.previous, &mut self.next_previous);
        for (b, state) in states.iter_mut().enumerate() {
            let body = &bodies[b];
            if body.fixed {
                continue;
            }
            let f = &self.free[b];
            let (minv_t, minv_r) = &self.inverse[b];
            let v = f.velocity + *minv_t * dv[b].fixed_rows::<3>(0);
            let w = f.omega + minv_r * dv[b].fixed_rows::<3>(3);
            scheme.advance(state, v, w, h);
        }
        Ok(StepReport {
            contacts: contacts.len(),
            active: na,
            solve: Some(report),
            newton_iterations,
            islands: self.starts.len() - 1,
        })
    }

    /// Sorts the active contacts by island, then in the settings' order
    /// within each island; fills `starts`.
    fn sort_into_islands(
        &mut self,
        bodies: &[RigidBody],
        states: &[BodyState],
        contacts: &[Contact],
        gravity: &Vector3<f64>,
    ) {
        let n = bodies.len();
        let up = if gravity.norm() > 0.0 {
            -gravity / gravity.norm()
        } else {
            Vector3::zeros()
        };
        self.islands.reset(n);
        if self.settings.islands {
            for (i, _, _) in &self.active {
                let c = &contacts[*i];
                if !bodies[c.body1].fixed && !bodies[c.body2].fixed {
                    self.islands.union(c.body1, c.body2);
                }
            }
        }
        // The layered order's thickness: twice the mean lever arm.
        let layered = self.settings.order == ContactOrder::Layers && up != Vector3::zeros();
        let (mut arm, mut arms) = (0.0, 0usize);
        if layered {
            for (i, _, _) in &self.active {
                let c = &contacts[*i];
                for (b, p) in [(c.body1, &c.point1), (c.body2, &c.point2)] {
                    if !bodies[b].fixed {
                        arm += (p - states[b].position).norm();
                        arms += 1;
                    }
                }
            }
        }
        let thickness = if arms > 0 {
            2.0 * arm / arms as f64
        } else {
            0.0
        };
        let layered = layered && thickness.is_finite() && thickness > 0.0;
        let axes = across(&if layered { up } else { Vector3::z() });
        self.keys.clear();
        for (a, (i, _, _)) in self.active.iter().enumerate() {
            let c = &contacts[*i];
            let island = if !self.settings.islands {
                0
            } else if !bodies[c.body1].fixed {
                self.islands.find(c.body1)
            } else if !bodies[c.body2].fixed {
                self.islands.find(c.body2)
            } else {
                // Two fixed bodies: W = 0, an island of its own.
                n + a
            };
            let mid = 0.5 * (c.point1 + c.point2);
            let (layer, row, position) = match self.settings.order {
                ContactOrder::Detection => (0, 0, 0.0),
                ContactOrder::TopDown => (0, 0, -up.dot(&mid)),
                ContactOrder::BottomUp => (0, 0, up.dot(&mid)),
                ContactOrder::Layers if layered => layered_key(&mid, &up, &axes, thickness),
                ContactOrder::Layers => (0, 0, 0.0),
            };
            self.keys.push((island, layer, row, position, a));
        }
        // Stable: equal keys keep the detector's order.
        self.keys.sort_by(|x, y| {
            x.0.cmp(&y.0)
                .then(x.1.cmp(&y.1))
                .then(x.2.cmp(&y.2))
                .then(x.3.total_cmp(&y.3))
        });
        self.sorted.clear();
        self.sorted
            .extend(self.keys.iter().map(|k| self.active[k.4]));
        std::mem::swap(&mut self.active, &mut self.sorted);
        self.starts.clear();
        for (a, k) in self.keys.iter().enumerate() {
            if a == 0 || k.0 != self.keys[a - 1].0 {
                self.starts.push(a);
            }
        }
        self.starts.push(self.keys.len());
    }

    /// Solves each island's problem (q, μ, r in the sorted contact order,
    /// W assembled island by island); returns the report of the whole.
    fn solve_islands(&mut self, bodies: &[RigidBody], contacts: &[Contact]) -> Result<SolveReport> {
        let tol = self.settings.solver.tolerance;
        let several = self.starts.len() > 2;
        let (mut f2, mut q2, mut r2, mut u2) = (0.0, 0.0, 0.0, 0.0);
        let mut iterations = 0;
        let mut status = SolveStatus::Solved;
        let mut name = self.solver.name();
        for k in 0..self.starts.len() - 1 {
            let (a0, a1) = (self.starts[k], self.starts[k + 1]);
            let blocks = island_blocks(
                bodies,
                &self.inverse,
                contacts,
                &self.active,
                &self.by_body,
                a0..a1,
                &mut self.row,
            );
            let sizes = vec![3usize; a1 - a0];
            let w = BlockSparseMatrix::new(&sizes, &sizes, blocks)?;
            let (s0, s1) = (3 * a0, 3 * a1);
            let problem =
                FrictionProblem::new(3, w, self.q[s0..s1].to_vec(), self.mu[a0..a1].to_vec())?;
            let (r, u) = (&mut self.r[s0..s1], &mut self.u[s0..s1]);
            let solver = if several {
                &mut self.island_solver
            } else {
                &mut self.solver
            };
            let mut report = solver.solve(&problem, r, u)?;
            if !report.status.is_solved() {
                if let Some((one, many)) = self.fallback.as_mut() {
                    let fallback = if several { many } else { one };
                    self.r_save.clear();
                    self.r_save.extend_from_slice(r);
                    let second = fallback.solve(&problem, r, u)?;
                    iterations += report.iterations;
                    if second.error_abs.is_finite() && second.error_abs <= report.error_abs {
                        report = second;
                        name = report.solver;
                    } else {
                        r.copy_from_slice(&self.r_save);
                        problem.compute_u(r, u);
                        iterations += second.iterations;
                    }
                }
            }
            iterations = iterations.max(report.iterations);
            if !report.status.is_solved() && status.is_solved() {
                status = report.status;
            }
            f2 += report.error_abs * report.error_abs;
            q2 += problem.q.iter().map(|v| v * v).sum::<f64>();
            r2 += r.iter().map(|v| v * v).sum::<f64>();
            u2 += u.iter().map(|v| v * v).sum::<f64>();
        }
        let absolute = f2.sqrt();
        let scale = q2.max(r2).max(u2).sqrt();
        let error = if scale > f64::EPSILON {
            absolute / scale
        } else {
            absolute
        };
        let finite = self.r.iter().all(|v| v.is_finite());
        let status = if error <= tol && finite {
            SolveStatus::Solved
        } else if status.is_solved() || !finite {
            if finite {
                SolveStatus::IterationLimit
            } else {
                SolveStatus::NumericalTrouble
            }
        } else {
            status
        };
        Ok(SolveReport {
            status,
            solver: name,
            iterations,
            error,
            error_abs: absolute,
        })
    }
}

/// The blocks of rows `rows` (one island, whose contacts are contiguous)
/// of W: W_ij = Σ_b J_{i,b} M_b⁻¹ J_{j,b}ᵀ over the free bodies b of
/// contact i, j running over the active contacts on b (`by_body`); block
/// indices relative to the island's first contact, rows in order and
/// columns sorted within each row. Built row by row in O(Σ_i (n_i log n_i))
/// with n_i the blocks of row i (a few tens at most), without sorting the
/// whole matrix.
fn island_blocks(
    bodies: &[RigidBody],
    inverse: &[(f64, Matrix3<f64>)],
    contacts: &[Contact],
    active: &[(usize, ContactJacobian, ContactJacobian)],
    by_body: &[Vec<(usize, bool)>],
    rows: std::ops::Range<usize>,
    row: &mut Vec<(usize, Matrix3<f64>)>,
) -> Vec<Block> {
    let a0 = rows.start;
    let mut blocks = Vec::new();
    for a in rows {
        row.clear();
        let (i, j1, j2) = &active[a];
        let c = &contacts[*i];
        for (b, ji) in [(c.body1, j1), (c.body2, j2)] {
            if bodies[b].fixed {
                continue;
            }
            let (minv_t, minv_r) = &inverse[b];
            // J_i M⁻¹ (3 × 6).
            let mut jm = ContactJacobian::zeros();
            jm.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(ji.fixed_view::<3, 3>(0, 0) * *minv_t));
            jm.fixed_view_mut::<3, 3>(0, 3)
                .copy_from(&(ji.fixed_view::<3, 3>(0, 3) * minv_r));
            for &(aj, sj) in &by_body[b] {
                row.push((aj, jm * side(&active[aj], sj).transpose()));
            }
        }
        row.sort_unstable_by_key(|e| e.0);
        let mut k = 0;
        while k < row.len() {
            let (col, mut m) = row[k];
            k += 1;
            // Two contacts sharing both bodies (and the diagonal).
            while k < row.len() && row[k].0 == col {
                m += row[k].1;
                k += 1;
            }
            blocks.push(Block {
                row: a - a0,
                col: col - a0,
                values: m.as_slice().to_vec(),
            });
        }
    }
    blocks
}

fn free_vector(f: &FreeVelocity) -> Vector6<f64> {
    Vector6::new(
        f.velocity.x,
        f.velocity.y,
        f.velocity.z,
        f.omega.x,
        f.omega.y,
        f.omega.z,
    )
}

fn side(a: &(usize, ContactJacobian, ContactJacobian), second: bool) -> &ContactJacobian {
    if second {
        &a.2
    } else {
        &a.1
    }
}
