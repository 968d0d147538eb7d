//! The one-step problem of a model with frictional contacts: the local
//! frictional contact problem of the numerics layer over the active
//! contacts, with the other unilateral rows and the equalities of the step
//! folded in.
//!
//! The rows of the active interactions, in their natural order, give
//! w = A z + b with A_αβ = Σ_i out_α,i · resp_β,i (= H_α,i W_i⁻¹ H_β,iᵀ) and
//! b_α = H_α v_free + (restitution) ẏ_k, as for the other families. Then:
//!
//! * a frictional contact (Newton impact–friction law) of dimension
//!   d_α ≤ d, d the largest contact dimension of the model, is one contact
//!   of the problem, its missing tangent rows padded;
//! * every complementarity or frictionless impact row is a contact of its
//!   own with μ = 0 and padded tangents: with μ = 0 the cone is P_T = 0 and
//!   the condition on P_N is 0 ≤ U_N ⊥ P_N ≥ 0, the complementarity row;
//! * a padded tangent row has W = 1 on its diagonal, no coupling and q = 0,
//!   so that its impulse is 0 (sticking: U = 0; sliding: P_T = −α U_T =
//!   −α P_T);
//! * equality rows (λ free, w = 0) are eliminated: with A = [[A_ee, A_ef],
//!   [A_fe, A_ff]], λ_e = −A_ee⁻¹(b_e + A_ef P), so the contacts see
//!   W = A_ff − A_fe A_ee⁻¹ A_ef and q = b_f − A_fe A_ee⁻¹ b_e (a Schur
//!   complement; A_ee must be invertible, i.e. the equalities independent).
//!
//! Without equalities W is assembled block-sparse (one d × d block per pair
//! of contacts whose interactions share a system: the cost follows the
//! couplings, not (n_c d)²). With constant blocks (linear relations,
//! constant iteration matrices) W over every contact of the model is
//! computed once and the problem's W is its principal submatrix over the
//! active contacts, cut again only when the active set changes; otherwise
//! its pattern is built when the set of active interactions changes and
//! kept, values written in place, while it does not. With equalities W is
//! dense and the elimination allocates its factorisation at each step.
//!
//! With the `default` solver the problem is first given to the
//! Alart–Curnier Newton method from the previous step's impulses (a few
//! steps), the contacts without one started from their own one-contact
//! problem (`friction_fresh.rs`); the default chain runs, from the
//! same start, only when that does not meet the tolerance.

use nalgebra::DMatrix;

use super::friction_fresh::start_fresh_contacts;
use super::friction_pattern::{
    block_pairs, build_pattern, fill_values, identity_inactive, select_blocks, Layout, Pattern,
};
use super::interaction_work::{contact_status, InteractionWork, RowKind, STATUS_SEPARATED};
use super::problem::Assembly;
use super::system_work::SystemWork;
use crate::modelling::model::{Model, SystemId};
use crate::numerics::friction::{friction_solver, FrictionProblem, FrictionSolver};
use crate::numerics::report::SolveReport;
use crate::numerics::{BlockSparseMatrix, Matrix, SolverSettings};
use crate::simulation::error::SimulationError;

/// A problem of one size: the contacts' problem and its unknowns.
struct Sized {
    problem: FrictionProblem,
    r: Vec<f64>,
    u: Vec<f64>,
    /// W's block pattern when W is block-sparse and assembled over it
    /// (None while dense or cut from W over every contact).
    pattern: Option<Pattern>,
    /// With constant blocks: the active interactions W was cut for from
    /// W over every contact ([`EveryContact`]).
    cut_for: Option<Vec<usize>>,
}

impl Sized {
    /// A problem of `mu.len()` contacts of dimension `dim` over `w`, with
    /// q, r and u zero.
    fn new(dim: usize, w: Matrix, mu: Vec<f64>, pattern: Option<Pattern>) -> Self {
        let size = mu.len() * dim;
        Sized {
            problem: FrictionProblem {
                dim,
                w,
                q: vec![0.0; size],
                mu,
            },
            r: vec![0.0; size],
            u: vec![0.0; size],
            pattern,
            cut_for: None,
        }
    }
}

/// With constant blocks (linear relations, constant iteration matrices)
/// and no equalities: W over every contact of the model, computed once for
/// the run; the problem over the active contacts takes its principal
/// submatrix over them (the blocks of two active contacts, the same sums
/// in the same order as an assembly over the active set), cut again only
/// when the active set changes — no pattern built, no product computed.
struct EveryContact {
    layout: Layout,
    w: BlockSparseMatrix,
    /// Index of every contact of the model in the active problem
    /// (usize::MAX when its interaction is inactive).
    keep: Vec<usize>,
}

/// The problem over every contact of the model, whose pattern is built once
/// for the run: an inactive contact holds the identity diagonal block, no
/// coupling and q = 0 (so P = 0), and a change of the active set only
/// rewrites values.
struct AllContacts {
    layout: Layout,
    slot: Sized,
    /// Contacts (block row, block column) of every stored block.
    pairs: Vec<(usize, usize)>,
    /// With constant blocks: W as if every interaction were active.
    full: Option<Vec<f64>>,
    /// With constant blocks: the active flags W was last written for.
    held: Vec<bool>,
    held_valid: bool,
}

/// Newton steps tried from the warm start before the default chain.
const FIRST_NEWTON_STEPS: usize = 25;

pub(crate) struct FrictionStep {
    /// Contact dimension of the problem (largest of the model).
    dim: usize,
    solver: Box<dyn FrictionSolver>,
    /// With the `default` solver: the Alart–Curnier Newton method, at most
    /// [`FIRST_NEWTON_STEPS`] steps, tried first from the previous step's
    /// impulses (when the contact statuses do not change, the problem is
    /// linear on each status and Newton ends in one or two steps).
    first: Option<Box<dyn FrictionSolver>>,
    /// The warm start, kept for the chain when the first try fails.
    warm: Vec<f64>,
    /// Contacts of the problem whose warm start is zero (given a start of
    /// their own before the first Newton try, [`start_fresh_contacts`]).
    fresh: Vec<usize>,
    /// The solvers' tolerance (the fresh contacts' local solves use it).
    tolerance: f64,
    /// Problems by number of contacts.
    sized: Vec<Option<Sized>>,
    /// Full row matrix A and vector b of the active rows, by row count.
    full: Vec<Option<DMatrix<f64>>>,
    b: Vec<f64>,
    /// Per active row (natural order): its place in the contacts' problem
    /// (usize::MAX for an equality row) or, for equalities, its index
    /// among them.
    place: Vec<usize>,
    eq_index: Vec<usize>,
    /// Active interactions and the offset of each one's rows.
    active: Vec<usize>,
    offset: Vec<usize>,
    /// Row offset of each interaction among the active rows (usize::MAX when inactive).
    row_of: Vec<usize>,
    /// Contact of each problem position, and positions that are padding.
    mu: Vec<f64>,
    padded: Vec<usize>,
    /// Equality rows (natural indices) and contact rows (natural indices, by position).
    eq_rows: Vec<usize>,
    pos_row: Vec<usize>,
    /// How W is stored: over the active contacts (pattern rebuilt when the
    /// active set changes) or over all contacts (pattern built once).
    assembly: Assembly,
    /// Whether any row of the model is an equality.
    has_equalities: bool,
    /// The problem over all contacts, built on first use.
    all: Option<AllContacts>,
    /// With constant blocks: W over every contact, built on first use.
    every: Option<EveryContact>,
}

impl FrictionStep {
    pub fn new(
        inters: &[InteractionWork],
        name: &str,
        settings: SolverSettings,
        assembly: Assembly,
    ) -> Result<Self, SimulationError> {
        let dim = inters
            .iter()
            .filter_map(|w| w.friction.map(|f| f.dim))
            .max()
            .unwrap_or(2);
        let solver = friction_solver(name, settings).map_err(SimulationError::Numerics)?;
        let total: usize = inters.iter().map(|w| w.m).sum();
        let first = if name == "default" {
            let newton = SolverSettings {
                max_iterations: Some(FIRST_NEWTON_STEPS),
                ..settings
            };
            Some(friction_solver("newton-ac", newton).map_err(SimulationError::Numerics)?)
        } else {
            None
        };
        Ok(FrictionStep {
            dim,
            solver,
            first,
            warm: Vec::with_capacity(total * dim),
            fresh: Vec::with_capacity(total),
            tolerance: settings.tolerance,
            sized: (0..=total).map(|_| None).collect(),
            full: (0..=total).map(|_| None).collect(),
            b: vec![0.0; total],
            place: vec![0; total],
            eq_index: vec![0; total],
            active: Vec::with_capacity(inters.len()),
            offset: Vec::with_capacity(inters.len()),
            row_of: vec![usize::MAX; inters.len()],
            mu: Vec::with_capacity(total),
            padded: Vec::with_capacity(total * dim),
            eq_rows: Vec::with_capacity(total),
            pos_row: Vec::with_capacity(total * dim),
            assembly,
            has_equalities: inters.iter().any(|w| w.rows.contains(&RowKind::Equality)),
            all: None,
            every: None,
        })
    }

    /// Assembles and solves the problem over the active interactions and
    /// writes λ (and the contact status) of every interaction. Returns
    /// `None` when no interaction is active.
    pub fn solve(
        &mut self,
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        fixed: bool,
        t: f64,
        step: u64,
    ) -> Result<Option<SolveReport>, SimulationError> {
        let d = self.dim;
        self.active.clear();
        self.offset.clear();
        self.mu.clear();
        self.padded.clear();
        self.eq_rows.clear();
        self.pos_row.clear();
        let mut n = 0;
        for (a, w) in inters.iter_mut().enumerate() {
            self.row_of[a] = usize::MAX;
            if !w.active {
                w.lambda.fill(0.0);
                w.status[0] = STATUS_SEPARATED;
                continue;
            }
            self.row_of[a] = n;
            self.active.push(a);
            self.offset.push(n);
            // Places of the rows in the contacts' problem.
            for (r, kind) in w.rows.iter().enumerate() {
                let row = n + r;
                match kind {
                    RowKind::Equality => {
                        self.place[row] = usize::MAX;
                        self.eq_index[row] = self.eq_rows.len();
                        self.eq_rows.push(row);
                    }
                    RowKind::FrictionNormal => {
                        let f = w.friction.expect("frictional contact");
                        let c = self.mu.len();
                        self.mu.push(f.mu);
                        for j in 0..d {
                            let p = c * d + j;
                            if j < f.dim {
                                self.place[row + j] = p;
                                self.pos_row.push(row + j);
                            } else {
                                self.padded.push(p);
                                self.pos_row.push(usize::MAX);
                            }
                        }
                    }
                    RowKind::FrictionTangent => {}
                    RowKind::Complementarity => {
                        let c = self.mu.len();
                        self.mu.push(0.0);
                        self.place[row] = c * d;
                        self.pos_row.push(row);
                        for j in 1..d {
                            self.padded.push(c * d + j);
                            self.pos_row.push(usize::MAX);
                        }
                    }
                    RowKind::Box(..) => unreachable!("relay rows are refused beside friction"),
                }
            }
            n += w.m;
        }
        if n == 0 {
            return Ok(None);
        }
        if !self.has_equalities {
            // Over all contacts on request only: with the Newton Jacobian
            // factored by faer's sparse LU over every unknown, inactive
            // contacts cost as much as active ones, which outweighs the
            // pattern kept (docs/simulation-benchmark.md).
            if self.assembly == Assembly::Sparse {
                return self.solve_all(model, sys, inters, fixed, t, step);
            }
        }
        if self.eq_rows.is_empty() {
            return self.solve_sparse(model, sys, inters, fixed, t, step);
        }
        // A and b over the active rows, in natural order.
        let a_full = self.full[n].get_or_insert_with(|| DMatrix::zeros(n, n));
        a_full.fill(0.0);
        for (k, &a) in self.active.iter().enumerate() {
            let wa = &inters[a];
            let oa = self.offset[k];
            wa.free_output(sys, &mut self.b[oa..oa + wa.m]);
            for (ka, &s) in wa.systems.iter().enumerate() {
                let out_a = &wa.out[ka];
                for b_id in model.interactions_of(SystemId(s)) {
                    let ob = self.row_of[b_id.0];
                    if ob == usize::MAX {
                        continue;
                    }
                    let wb = &inters[b_id.0];
                    let kb = wb
                        .systems
                        .iter()
                        .position(|&x| x == s)
                        .expect("linked system");
                    let resp_b = &wb.resp[kb];
                    for c in 0..wb.m {
                        for r in 0..wa.m {
                            let mut v = 0.0;
                            for i in 0..out_a.ncols() {
                                v += out_a[(r, i)] * resp_b[(i, c)];
                            }
                            a_full[(oa + r, ob + c)] += v;
                        }
                    }
                }
            }
        }
        let nc = self.mu.len();
        let size = nc * d;
        let slot = self.sized[nc].get_or_insert_with(|| {
            Sized::new(
                d,
                Matrix::Dense(DMatrix::zeros(size, size)),
                vec![0.0; nc],
                None,
            )
        });
        if !matches!(slot.problem.w, Matrix::Dense(_)) {
            slot.problem.w = Matrix::Dense(DMatrix::zeros(size, size));
            slot.pattern = None;
        }
        let Matrix::Dense(wm) = &mut slot.problem.w else {
            unreachable!("dense contacts' problem")
        };
        wm.fill(0.0);
        slot.problem.q.fill(0.0);
        slot.problem.mu.copy_from_slice(&self.mu);
        for (p, &row) in self.pos_row.iter().enumerate() {
            if row == usize::MAX {
                wm[(p, p)] = 1.0;
                continue;
            }
            slot.problem.q[p] = self.b[row];
            for (pc, &col) in self.pos_row.iter().enumerate() {
                if col != usize::MAX {
                    wm[(p, pc)] = a_full[(row, col)];
                }
            }
        }
        // Equalities: the Schur complement onto the contacts.
        let ne = self.eq_rows.len();
        let mut elimination = None;
        if ne > 0 {
            let aee = DMatrix::from_fn(ne, ne, |i, j| a_full[(self.eq_rows[i], self.eq_rows[j])]);
            // Right-hand sides: the columns of A_ef (by contact position), then b_e.
            let mut rhs = DMatrix::from_fn(ne, size + 1, |i, p| {
                let row = self.eq_rows[i];
                if p == size {
                    self.b[row]
                } else {
                    match self.pos_row[p] {
                        usize::MAX => 0.0,
                        col => a_full[(row, col)],
                    }
                }
            });
            if !aee.lu().solve_mut(&mut rhs) {
                return Err(SimulationError::SolverFailed {
                    t,
                    step,
                    solver: "equality elimination",
                    status: "singular equality block",
                    error: f64::INFINITY,
                    size: n,
                });
            }
            // W −= A_fe X, q −= A_fe x_b (X = A_ee⁻¹ A_ef, x_b = A_ee⁻¹ b_e).
            for (p, &row) in self.pos_row.iter().enumerate() {
                if row == usize::MAX {
                    continue;
                }
                for (i, &er) in self.eq_rows.iter().enumerate() {
                    let afe = a_full[(row, er)];
                    if afe == 0.0 {
                        continue;
                    }
                    for pc in 0..size {
                        wm[(p, pc)] -= afe * rhs[(i, pc)];
                    }
                    slot.problem.q[p] -= afe * rhs[(i, size)];
                }
            }
            elimination = Some(rhs);
        }
        self.finish(inters, elimination, false, t, step, size)
    }

    /// Without equalities: W assembled block-sparse, one d × d block per
    /// pair of contacts whose interactions share a system,
    /// W_cc' = Σ_s H_c,s M_s⁻¹ H_c',sᵀ (the rows of the two contacts), and
    /// the identity on padded tangents; the cost is that of the couplings,
    /// not of (n_c d)².
    ///
    /// The pattern (which blocks are stored, and which products land in
    /// which block) depends only on the set of active interactions: it is
    /// built when that set changes and kept otherwise, the values being
    /// written in place — a step over the same active set as the previous
    /// problem of its size allocates nothing.
    fn solve_sparse(
        &mut self,
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        fixed: bool,
        t: f64,
        step: u64,
    ) -> Result<Option<SolveReport>, SimulationError> {
        let d = self.dim;
        let nc = self.mu.len();
        let size = nc * d;
        for (k, &a) in self.active.iter().enumerate() {
            let wa = &inters[a];
            let oa = self.offset[k];
            wa.free_output(sys, &mut self.b[oa..oa + wa.m]);
        }
        if fixed {
            self.cut_from_every(model, inters)?;
        } else {
            self.assemble_active(model, inters)?;
        }
        let slot = self.sized[nc].as_mut().expect("problem of this size");
        slot.problem.q.fill(0.0);
        slot.problem.mu.copy_from_slice(&self.mu);
        for (p, &row) in self.pos_row.iter().enumerate() {
            if row != usize::MAX {
                slot.problem.q[p] = self.b[row];
            }
        }
        self.finish(inters, None, false, t, step, size)
    }

    /// With constant blocks: W of the active contacts cut from W over every
    /// contact (computed on first use), when the active set is not the one
    /// the problem of this size was last cut for.
    fn cut_from_every(
        &mut self,
        model: &Model,
        inters: &[InteractionWork],
    ) -> Result<(), SimulationError> {
        let d = self.dim;
        let nc = self.mu.len();
        if self.every.is_none() {
            let layout = Layout::new(inters, d);
            let all_nc = layout.mu.len();
            let all: Vec<usize> = (0..inters.len()).collect();
            let (mut w, pattern) = build_pattern(
                model,
                inters,
                &all,
                &layout.first_row,
                &layout.place,
                &layout.padded,
                d,
                all_nc,
            )?;
            fill_values(
                &mut w,
                &pattern,
                inters,
                &layout.first_row,
                &layout.place,
                d,
                false,
            );
            self.every = Some(EveryContact {
                layout,
                w,
                keep: vec![usize::MAX; all_nc],
            });
        }
        let every = self.every.as_mut().expect("W over every contact");
        let slot = self.sized[nc].get_or_insert_with(|| {
            Sized::new(d, Matrix::Dense(DMatrix::zeros(0, 0)), vec![0.0; nc], None)
        });
        let same = slot.cut_for.as_deref() == Some(&self.active[..])
            && matches!(slot.problem.w, Matrix::BlockSparse(_));
        if same {
            return Ok(());
        }
        let mut next = 0;
        for (k, &a) in every.keep.iter_mut().zip(&every.layout.contact_of) {
            *k = if inters[a].active {
                next += 1;
                next - 1
            } else {
                usize::MAX
            };
        }
        debug_assert_eq!(next, nc, "active contacts");
        if !matches!(slot.problem.w, Matrix::BlockSparse(_)) {
            slot.problem.w = Matrix::BlockSparse(
                BlockSparseMatrix::new(&[], &[], Vec::new()).map_err(SimulationError::Numerics)?,
            );
        }
        let Matrix::BlockSparse(w) = &mut slot.problem.w else {
            unreachable!("block-sparse contacts' problem")
        };
        every.w.principal_submatrix_into(&every.keep, w);
        slot.pattern = None;
        let cut = slot.cut_for.get_or_insert_with(Vec::new);
        cut.clear();
        cut.extend_from_slice(&self.active);
        Ok(())
    }

    /// W of the active contacts assembled over its pattern (built when the
    /// active set is not the one of the last problem of this size).
    fn assemble_active(
        &mut self,
        model: &Model,
        inters: &[InteractionWork],
    ) -> Result<(), SimulationError> {
        let d = self.dim;
        let nc = self.mu.len();
        let slot = self.sized[nc].get_or_insert_with(|| {
            Sized::new(d, Matrix::Dense(DMatrix::zeros(0, 0)), vec![0.0; nc], None)
        });
        slot.cut_for = None;
        let same = slot
            .pattern
            .as_ref()
            .is_some_and(|pat| pat.active == self.active)
            && matches!(slot.problem.w, Matrix::BlockSparse(_));
        if !same {
            let (w, pat) = build_pattern(
                model,
                inters,
                &self.active,
                &self.row_of,
                &self.place,
                &self.padded,
                d,
                nc,
            )?;
            slot.problem.w = Matrix::BlockSparse(w);
            slot.pattern = Some(pat);
        }
        let (Matrix::BlockSparse(w), Some(pat)) = (&mut slot.problem.w, &slot.pattern) else {
            unreachable!("block-sparse contacts' problem with its pattern")
        };
        fill_values(w, pat, inters, &self.row_of, &self.place, d, false);
        Ok(())
    }

    /// Over all contacts of the model (no equalities): W's pattern, and
    /// the sparse Newton Jacobian's analysis with it, are built once for
    /// the run. Each step writes the values of the active set — the
    /// products of active pairs and the identity on inactive contacts, or,
    /// with constant blocks, a selection of the blocks computed once (not
    /// even that when the active set is the last one) — and q, zero on
    /// inactive contacts.
    fn solve_all(
        &mut self,
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        fixed: bool,
        t: f64,
        step: u64,
    ) -> Result<Option<SolveReport>, SimulationError> {
        let d = self.dim;
        if self.all.is_none() {
            let layout = Layout::new(inters, d);
            let nc = layout.mu.len();
            let every: Vec<usize> = (0..inters.len()).collect();
            let (w, pattern) = build_pattern(
                model,
                inters,
                &every,
                &layout.first_row,
                &layout.place,
                &layout.padded,
                d,
                nc,
            )?;
            let pairs = block_pairs(&w);
            self.all = Some(AllContacts {
                slot: Sized::new(d, Matrix::BlockSparse(w), layout.mu.clone(), Some(pattern)),
                layout,
                pairs,
                full: None,
                held: vec![false; inters.len()],
                held_valid: false,
            });
        }
        let all = self.all.as_mut().expect("problem over all contacts");
        let lay = &all.layout;
        // b of the active rows, and their (fixed) positions.
        for (k, &a) in self.active.iter().enumerate() {
            let wa = &inters[a];
            let oa = self.offset[k];
            wa.free_output(sys, &mut self.b[oa..oa + wa.m]);
            let first = lay.first_row[a];
            self.place[oa..oa + wa.m].copy_from_slice(&lay.place[first..first + wa.m]);
        }
        let (Matrix::BlockSparse(w), Some(pat)) = (&mut all.slot.problem.w, &all.slot.pattern)
        else {
            unreachable!("block-sparse problem over all contacts")
        };
        if fixed {
            if all.full.is_none() {
                fill_values(w, pat, inters, &lay.first_row, &lay.place, d, false);
                all.full = Some(w.values_mut().to_vec());
                all.held_valid = false;
            }
            let same = all.held_valid
                && all
                    .held
                    .iter()
                    .zip(inters.iter())
                    .all(|(h, w)| *h == w.active);
            if !same {
                let full = all.full.as_ref().expect("constant blocks");
                select_blocks(w, full, &all.pairs, lay, inters, d);
                for (h, w) in all.held.iter_mut().zip(inters.iter()) {
                    *h = w.active;
                }
                all.held_valid = true;
            }
        } else {
            fill_values(w, pat, inters, &lay.first_row, &lay.place, d, true);
            identity_inactive(w, lay, inters, d);
            all.held_valid = false;
        }
        let q = &mut all.slot.problem.q;
        q.fill(0.0);
        for (k, &a) in self.active.iter().enumerate() {
            let oa = self.offset[k];
            for r in 0..inters[a].m {
                let p = self.place[oa + r];
                if p != usize::MAX {
                    q[p] = self.b[oa + r];
                }
            }
        }
        let size = lay.mu.len() * d;
        self.finish(inters, None, true, t, step, size)
    }

    /// Warm start, solve, and write λ and the status back.
    /// `over_all`: the problem is the one over all contacts (its inactive
    /// contacts start from P = 0).
    fn finish(
        &mut self,
        inters: &mut [InteractionWork],
        elimination: Option<DMatrix<f64>>,
        over_all: bool,
        t: f64,
        step: u64,
        size: usize,
    ) -> Result<Option<SolveReport>, SimulationError> {
        let nc = self.mu.len();
        let slot = if over_all {
            let slot = &mut self.all.as_mut().expect("problem over all contacts").slot;
            slot.r.fill(0.0);
            slot
        } else {
            self.sized[nc].as_mut().expect("problem of this size")
        };
        // Warm start from the previous impulses.
        for (k, &a) in self.active.iter().enumerate() {
            let (oa, w) = (self.offset[k], &inters[a]);
            for r in 0..w.m {
                let p = self.place[oa + r];
                if p != usize::MAX {
                    slot.r[p] = w.lambda[r];
                }
            }
        }
        if !over_all {
            for &p in &self.padded {
                slot.r[p] = 0.0;
            }
        }
        let report = match &mut self.first {
            // Newton from the previous step's impulses, the contacts
            // without one started by their own problem; the chain from the
            // same start when it does not converge.
            Some(first) => {
                if !over_all {
                    let d = self.dim;
                    self.fresh.clear();
                    self.fresh.extend(
                        (0..nc).filter(|&c| slot.r[c * d..c * d + d].iter().all(|&v| v == 0.0)),
                    );
                    if !self.fresh.is_empty() {
                        start_fresh_contacts(
                            &slot.problem,
                            &self.fresh,
                            &mut slot.r,
                            self.tolerance,
                        );
                    }
                }
                self.warm.clear();
                self.warm.extend_from_slice(&slot.r);
                let tried = first
                    .solve(&slot.problem, &mut slot.r, &mut slot.u)
                    .map_err(SimulationError::Numerics)?;
                if tried.status.is_solved() {
                    tried
                } else {
                    slot.r.copy_from_slice(&self.warm);
                    let mut report = self
                        .solver
                        .solve(&slot.problem, &mut slot.r, &mut slot.u)
                        .map_err(SimulationError::Numerics)?;
                    report.iterations += tried.iterations;
                    report
                }
            }
            None => self
                .solver
                .solve(&slot.problem, &mut slot.r, &mut slot.u)
                .map_err(SimulationError::Numerics)?,
        };
        if !report.status.is_solved() {
            return Err(SimulationError::SolverFailed {
                t,
                step,
                solver: report.solver,
                status: report.status.as_str(),
                error: report.error,
                size,
            });
        }
        for (k, &a) in self.active.iter().enumerate() {
            let (oa, w) = (self.offset[k], &mut inters[a]);
            for r in 0..w.m {
                let row = oa + r;
                w.lambda[r] = match self.place[row] {
                    usize::MAX => {
                        // λ_e = −(x_b + X P).
                        let x = elimination.as_ref().expect("equalities eliminated");
                        let i = self.eq_index[row];
                        let mut v = x[(i, size)];
                        for (p, &rp) in slot.r.iter().enumerate() {
                            v += x[(i, p)] * rp;
                        }
                        -v
                    }
                    p => slot.r[p],
                };
            }
            if let Some(f) = w.friction {
                let p = self.place[oa];
                w.status[0] = contact_status(&slot.r[p..p + f.dim], &slot.u[p..p + f.dim], f.mu);
            }
        }
        Ok(Some(report))
    }
}
