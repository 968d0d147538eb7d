//! The one-step nonsmooth problem of a time step, assembled from the active
//! interactions and solved by the numerics layer.
//!
//! Rows of interaction α: w_α = q_α + Σ_β W_αβ λ_β with
//! W_αβ = Σ_{i shared by α and β} out_α,i · resp_β,i (+ D_α when β = α):
//! for Moreau–Jean W_αβ = H_α,i W_i⁻¹ H_β,iᵀ, for Euler–Moreau
//! C_α,i (h W_i⁻¹) B_β,i + D_α. Only blocks of interactions sharing a
//! system are nonzero, so the assembly costs O(Σ_i (interactions on i)²).
//!
//! The family follows the rows: all complementarity → LCP; complementarity
//! and equalities → MLCP (equality rows first); all relay → relay problem;
//! frictional contacts (Newton impact–friction laws) → the local
//! frictional contact problem of the numerics layer over the active
//! contacts, rows [N, T…] of each contact in turn, U = W P + q,
//! K*_μ ∋ Û ⊥ P ∈ K_μ, with q_N = H_N v_free + e_N ẏ_N,k and
//! q_T = H_T v_free + e_T ẏ_T,k; other unilateral rows and equalities of
//! the same model are folded in ([`super::friction_step`]).

use nalgebra::DMatrix;

use super::friction_step::FrictionStep;
use super::interaction_work::{InteractionWork, RowKind};
use super::system_work::SystemWork;
use crate::modelling::model::{Model, SystemId};
use crate::numerics::friction::friction_solver;
use crate::numerics::lcp::{lcp_solver, scalar_lcp, Lcp, LcpSolver};
use crate::numerics::matrix::Block;
use crate::numerics::mlcp::{mlcp_solver, Mlcp, MlcpSolver};
use crate::numerics::relay::{relay_solver, Relay, RelaySolver};
use crate::numerics::report::{SolveReport, SolveStatus};
use crate::numerics::{BlockSparseMatrix, Matrix, SolverSettings};
use crate::simulation::error::SimulationError;

/// The family of the one-step problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemFamily {
    /// Linear complementarity.
    Lcp,
    /// Mixed linear complementarity.
    Mlcp,
    /// Relay (box-constrained).
    Relay,
    /// Local frictional contact problem (2D or 3D contacts).
    Friction,
}

enum Slot {
    Lcp(Lcp, Box<dyn LcpSolver>),
    Mlcp(Mlcp, Box<dyn MlcpSolver>),
    Relay(Relay, Box<dyn RelaySolver>),
}

struct SizedSlot {
    slot: Slot,
    z: Vec<f64>,
    w: Vec<f64>,
    /// The active interactions whose W the matrix holds, when all of them
    /// have constant blocks (empty otherwise): the next problem over the
    /// same interactions reuses it.
    w_of: Vec<usize>,
    /// The matrix passed a solver's checks (square, finite) and has not
    /// been assembled again since: the next LCP solve need not check it.
    m_checked: bool,
}

pub(crate) struct OneStepProblem {
    pub family: ProblemFamily,
    solver: String,
    settings: SolverSettings,
    slots: Vec<Option<SizedSlot>>,
    /// Active interactions of this step, and the offset of each one's rows.
    pub active: Vec<usize>,
    offset: Vec<usize>,
    /// Problem position of each interaction row (in `offset` order).
    pos: Vec<usize>,
    /// Problem offset of each interaction (usize::MAX when inactive).
    slot_of: Vec<usize>,
    qbuf: Vec<f64>,
    /// The activity flags the layout was made for, and the layout's
    /// (n, number of equalities, rows in natural order).
    was_active: Vec<bool>,
    layout: Option<(usize, usize, bool)>,
    pub last_report: Option<SolveReport>,
    /// Solves and summed solver iterations.
    pub solves: u64,
    pub iterations: u64,
    /// Block-sparse assembly over all interactions (large LCPs).
    sparse: Option<SparseAssembly>,
    /// Sparse at every step ([`Assembly::Sparse`]).
    force_sparse: bool,
    /// Per interaction: its blocks of W (out, resp, D) never change.
    fixed: Vec<bool>,
    /// Every interaction's blocks are constant.
    all_fixed: bool,
    /// Problems of one row are solved in closed form (see
    /// [`scalar_lcp`]): the solver is Lemke, or the default chain, which
    /// starts with Lemke.
    scalar_lemke: bool,
    /// The problem of the `Friction` family.
    friction: Option<FrictionStep>,
}

/// Above this many active rows, a problem with block-sparse assembly is
/// solved sparse; at or below, dense over the active interactions.
const DENSE_ACTIVE_ROWS: usize = 48;

/// Above this many rows in all, [`Assembly::Auto`] assembles an LCP
/// block-sparse over all interactions (at steps with more than
/// [`DENSE_ACTIVE_ROWS`] active rows).
const SPARSE_FROM_ROWS: usize = 64;

/// How the one-step problem is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Assembly {
    /// For an LCP with more than 64 rows in all: block-sparse over all
    /// interactions at steps with more than 48 active rows, dense over the
    /// active ones at the others. A frictional problem: over the active
    /// contacts (as `Dense`). Dense over the active ones otherwise.
    #[default]
    Auto,
    /// Over the active interactions (dense; block-sparse for a frictional
    /// problem without equalities).
    Dense,
    /// Block-sparse over all interactions (LCP, or frictional without
    /// equalities): the pattern is fixed for the run; an inactive
    /// interaction's rows become z = 0 (LCP: identity diagonal block, zero
    /// coupling, q = 1; frictional contact: identity diagonal block, zero
    /// coupling, q = 0, hence P = 0).
    Sparse,
}

/// The fixed-pattern block-sparse LCP of all interactions.
struct SparseAssembly {
    lcp: Lcp,
    solver: Box<dyn LcpSolver>,
    z: Vec<f64>,
    w: Vec<f64>,
    /// Row offset of each interaction.
    offset: Vec<usize>,
    /// For interaction α, `couplings[coupling_start[α]..coupling_start[α + 1]]`:
    /// (system slot in α, β, system slot in β, block index of (α, β)) —
    /// one list for all interactions, not one allocation each.
    couplings: Vec<(usize, usize, usize, usize)>,
    coupling_start: Vec<usize>,
    /// Block index of (α, α).
    diagonal: Vec<usize>,
    /// (α, β) of each stored block, and the range of its values.
    block_pair: Vec<(usize, usize, std::ops::Range<usize>)>,
    /// When every block is constant: the values of all stored blocks as if
    /// every interaction were active, computed at the first solve. A step's
    /// matrix then takes each block from it (both interactions active),
    /// the identity (inactive diagonal block) or zero — the values the
    /// assembly would compute, without the products.
    full_blocks: Option<Vec<f64>>,
}

impl SparseAssembly {
    fn new(
        model: &Model,
        inters: &[InteractionWork],
        solver: &str,
        settings: SolverSettings,
    ) -> Result<Self, SimulationError> {
        let sizes: Vec<usize> = inters.iter().map(|w| w.m).collect();
        // The block columns of each row α: α itself and every β sharing a
        // system with it, sorted row by row (rows are few blocks long).
        let mut blocks = Vec::new();
        let mut row = Vec::new();
        for (a, wa) in inters.iter().enumerate() {
            row.clear();
            row.push(a);
            for &s in &wa.systems {
                row.extend(model.interactions_of(SystemId(s)).iter().map(|b| b.0));
            }
            row.sort_unstable();
            row.dedup();
            blocks.extend(row.iter().map(|&c| Block {
                row: a,
                col: c,
                values: vec![0.0; sizes[a] * sizes[c]],
            }));
        }
        let matrix =
            BlockSparseMatrix::new(&sizes, &sizes, blocks).map_err(SimulationError::Numerics)?;
        let mut couplings = Vec::new();
        let mut coupling_start = Vec::with_capacity(inters.len() + 1);
        let mut diagonal = vec![0; inters.len()];
        for (a, wa) in inters.iter().enumerate() {
            coupling_start.push(couplings.len());
            diagonal[a] = matrix.block_index(a, a).expect("diagonal block");
            for (ka, &s) in wa.systems.iter().enumerate() {
                for b in model.interactions_of(SystemId(s)) {
                    let kb = inters[b.0]
                        .systems
                        .iter()
                        .position(|&x| x == s)
                        .expect("linked system");
                    let k = matrix.block_index(a, b.0).expect("coupling block");
                    couplings.push((ka, b.0, kb, k));
                }
            }
        }
        coupling_start.push(couplings.len());
        let mut offset = Vec::with_capacity(inters.len());
        let mut n = 0;
        for w in inters {
            offset.push(n);
            n += w.m;
        }
        let block_pair = {
            let p = matrix.parts();
            (0..p.row_ptr.len() - 1)
                .flat_map(|r| (p.row_ptr[r]..p.row_ptr[r + 1]).map(move |k| (r, k)))
                .map(|(r, k)| (r, p.block_col[k], p.value_ptr[k]..p.value_ptr[k + 1]))
                .collect()
        };
        let solver = if solver == "default" {
            "sparse"
        } else {
            solver
        };
        Ok(SparseAssembly {
            lcp: Lcp {
                m: Matrix::BlockSparse(matrix),
                q: vec![0.0; n],
            },
            solver: lcp_solver(solver, settings).map_err(SimulationError::Numerics)?,
            z: vec![0.0; n],
            w: vec![0.0; n],
            offset,
            couplings,
            coupling_start,
            diagonal,
            block_pair,
            full_blocks: None,
        })
    }

    /// Adds the blocks of row α (couplings with the active β, then D_α) to
    /// the matrix, which holds zeros there.
    fn add_row_blocks(
        mat: &mut BlockSparseMatrix,
        couplings: &[(usize, usize, usize, usize)],
        diagonal: usize,
        inters: &[InteractionWork],
        a: usize,
        all: bool,
    ) {
        let wa = &inters[a];
        let m = wa.m;
        for &(ka, b, kb, k) in couplings {
            let wb = &inters[b];
            if !(all || wb.active) {
                continue;
            }
            let (out_a, resp_b) = (&wa.out[ka], &wb.resp[kb]);
            let block = mat.block_values_mut(k);
            for c in 0..wb.m {
                for r in 0..m {
                    let mut v = 0.0;
                    for i in 0..out_a.ncols() {
                        v += out_a[(r, i)] * resp_b[(i, c)];
                    }
                    block[c * m + r] += v;
                }
            }
        }
        if let Some(d) = &wa.d {
            let block = mat.block_values_mut(diagonal);
            for c in 0..m {
                for r in 0..m {
                    block[c * m + r] += d[(r, c)];
                }
            }
        }
    }

    /// Fills W and q over all interactions and solves. Returns false when no
    /// interaction is active.
    fn solve(
        &mut self,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        all_fixed: bool,
    ) -> Result<Option<SolveReport>, SimulationError> {
        if !inters.iter().any(|w| w.active) {
            inters
                .iter_mut()
                .for_each(|w| w.lambda.iter_mut().for_each(|x| *x = 0.0));
            return Ok(None);
        }
        let Matrix::BlockSparse(mat) = &mut self.lcp.m else {
            unreachable!("sparse assembly")
        };
        if all_fixed && self.full_blocks.is_none() {
            mat.values_mut().fill(0.0);
            for a in 0..inters.len() {
                let cs = &self.couplings[self.coupling_start[a]..self.coupling_start[a + 1]];
                Self::add_row_blocks(mat, cs, self.diagonal[a], inters, a, true);
            }
            self.full_blocks = Some(mat.values_mut().to_vec());
        }
        match &self.full_blocks {
            Some(full) if all_fixed => {
                for (k, (a, b, range)) in self.block_pair.iter().enumerate() {
                    let (ia, ib) = (&inters[*a], &inters[*b]);
                    let block = mat.block_values_mut(k);
                    if ia.active && ib.active {
                        block.copy_from_slice(&full[range.clone()]);
                    } else {
                        block.fill(0.0);
                        if a == b {
                            let m = ia.m;
                            for r in 0..m {
                                block[r * m + r] = 1.0;
                            }
                        }
                    }
                }
            }
            _ => {
                mat.values_mut().fill(0.0);
                for a in 0..inters.len() {
                    if inters[a].active {
                        Self::add_row_blocks(
                            mat,
                            &self.couplings[self.coupling_start[a]..self.coupling_start[a + 1]],
                            self.diagonal[a],
                            inters,
                            a,
                            false,
                        );
                    } else {
                        let m = inters[a].m;
                        let d = mat.block_values_mut(self.diagonal[a]);
                        for r in 0..m {
                            d[r * m + r] = 1.0;
                        }
                    }
                }
            }
        }
        for (a, wa) in inters.iter().enumerate() {
            let (o, m) = (self.offset[a], wa.m);
            if !wa.active {
                self.lcp.q[o..o + m].fill(1.0);
                self.z[o..o + m].fill(0.0);
                continue;
            }
            wa.free_output(sys, &mut self.lcp.q[o..o + m]);
            // Warm start: last step's multipliers; an interaction that just
            // entered the index set is guessed in contact (z > 0 puts it in
            // the pivoting solver's first active set).
            for r in 0..m {
                self.z[o + r] = if wa.lambda[r] > 0.0 {
                    wa.lambda[r]
                } else {
                    1.0
                };
            }
        }
        let report = self
            .solver
            .solve(&self.lcp, &mut self.z, &mut self.w)
            .map_err(SimulationError::Numerics)?;
        if report.status.is_solved() {
            for (a, w) in inters.iter_mut().enumerate() {
                let o = self.offset[a];
                if w.active {
                    w.lambda.copy_from_slice(&self.z[o..o + w.m]);
                } else {
                    w.lambda.iter_mut().for_each(|x| *x = 0.0);
                }
            }
        }
        Ok(Some(report))
    }
}

impl OneStepProblem {
    pub fn new(
        model: &Model,
        inters: &[InteractionWork],
        solver: &str,
        settings: SolverSettings,
        assembly: Assembly,
    ) -> Result<Self, SimulationError> {
        let mut has = [false; 3];
        let friction_dim = inters
            .iter()
            .filter_map(|w| w.friction.map(|f| f.dim))
            .max()
            .unwrap_or(0);
        for w in inters {
            for r in &w.rows {
                match r {
                    RowKind::Complementarity => has[0] = true,
                    RowKind::Equality => has[1] = true,
                    RowKind::Box(..) => has[2] = true,
                    RowKind::FrictionNormal | RowKind::FrictionTangent => {}
                }
            }
        }
        if friction_dim != 0 && has[2] {
            return Err(SimulationError::Unsupported(
                "frictional contacts together with relay laws in one model".into(),
            ));
        }
        let family = match has {
            _ if friction_dim != 0 => ProblemFamily::Friction,
            [_, _, true] if has[0] || has[1] => {
                return Err(SimulationError::Unsupported(
                    "relay laws together with complementarity or equality laws in one model".into(),
                ))
            }
            [_, _, true] => ProblemFamily::Relay,
            [_, true, _] => ProblemFamily::Mlcp,
            _ => ProblemFamily::Lcp,
        };
        // Check the solver name once, so a typo fails before the first step.
        match family {
            ProblemFamily::Lcp => lcp_solver(solver, settings).map(|_| ()),
            ProblemFamily::Mlcp => mlcp_solver(solver, settings).map(|_| ()),
            ProblemFamily::Relay => relay_solver(solver, settings).map(|_| ()),
            ProblemFamily::Friction => friction_solver(solver, settings).map(|_| ()),
        }
        .map_err(SimulationError::Numerics)?;
        let total: usize = inters.iter().map(|w| w.m).sum();
        let sparse = match (assembly, family) {
            (Assembly::Sparse, ProblemFamily::Lcp) => true,
            // Frictional problems have their own assembly over all contacts.
            (Assembly::Sparse, ProblemFamily::Friction) if !has[1] => false,
            (Assembly::Sparse, _) => {
                return Err(SimulationError::Unsupported(
                    "sparse assembly is available for LCP and frictional (without equalities) one-step problems only".into(),
                ))
            }
            (Assembly::Auto, ProblemFamily::Lcp) => total > SPARSE_FROM_ROWS,
            _ => false,
        };
        let sparse = if sparse {
            Some(SparseAssembly::new(model, inters, solver, settings)?)
        } else {
            None
        };
        Ok(OneStepProblem {
            family,
            solver: solver.to_string(),
            settings,
            slots: (0..=total).map(|_| None).collect(),
            active: Vec::with_capacity(inters.len()),
            offset: Vec::with_capacity(inters.len()),
            pos: vec![0; total],
            slot_of: vec![usize::MAX; inters.len()],
            qbuf: vec![0.0; total],
            was_active: Vec::with_capacity(inters.len()),
            layout: None,
            last_report: None,
            solves: 0,
            iterations: 0,
            sparse,
            force_sparse: assembly == Assembly::Sparse,
            fixed: vec![false; inters.len()],
            all_fixed: false,
            friction: if family == ProblemFamily::Friction {
                Some(FrictionStep::new(inters, solver, settings, assembly)?)
            } else {
                None
            },
            scalar_lemke: family == ProblemFamily::Lcp
                && (solver == "lemke" || (solver == "default" && settings.pivoting_max_size >= 1)),
        })
    }

    /// Declares which interactions have constant blocks of W (linear
    /// relations on systems with a constant iteration matrix): the matrix of
    /// a problem over the same active interactions as the last one of its
    /// size is then reused instead of assembled again.
    pub fn set_fixed_blocks(&mut self, fixed: &[bool]) {
        self.fixed.copy_from_slice(fixed);
        self.all_fixed = fixed.iter().all(|&f| f);
    }

    /// Forgets every assembled matrix kept for reuse (the responses changed:
    /// a split step's sub-steps have their own length).
    pub fn forget_assembled(&mut self) {
        for slot in self.slots.iter_mut().flatten() {
            slot.w_of.clear();
        }
        if let Some(sp) = &mut self.sparse {
            sp.full_blocks = None;
        }
    }

    /// Assembles and solves the problem over the active interactions and
    /// writes λ of every interaction (zero when inactive). Returns false
    /// when no interaction is active.
    pub fn solve(
        &mut self,
        model: &Model,
        sys: &[SystemWork],
        inters: &mut [InteractionWork],
        t: f64,
        step: u64,
    ) -> Result<bool, SimulationError> {
        // Few active rows: the dense problem over them is cheaper than the
        // sparse one over all interactions (whose inactive rows still cost
        // a factorisation column each).
        let active_rows: usize = inters.iter().filter(|w| w.active).map(|w| w.m).sum();
        if active_rows == 0 {
            for w in inters.iter_mut() {
                w.lambda.fill(0.0);
                w.status[0] = 0.0;
            }
            return Ok(false);
        }
        if let Some(fs) = &mut self.friction {
            return Ok(
                match fs.solve(model, sys, inters, self.all_fixed, t, step)? {
                    Some(report) => {
                        self.record(report);
                        true
                    }
                    None => false,
                },
            );
        }
        let use_sparse =
            self.sparse.is_some() && (self.force_sparse || active_rows > DENSE_ACTIVE_ROWS);
        if let (true, Some(sp)) = (use_sparse, &mut self.sparse) {
            let Some(report) = sp.solve(sys, inters, self.all_fixed)? else {
                return Ok(false);
            };
            if !report.status.is_solved() {
                return Err(failure(&report, t, step, sp.z.len()));
            }
            self.record(report);
            return Ok(true);
        }
        // The layout (active interactions, offsets, row positions) depends
        // on the activity flags only: kept while they do not change.
        let same_layout = self.layout.is_some()
            && self.was_active.len() == inters.len()
            && inters
                .iter()
                .zip(&self.was_active)
                .all(|(w, &was)| w.active == was);
        for w in inters.iter_mut().filter(|w| !w.active) {
            w.lambda.iter_mut().for_each(|x| *x = 0.0);
            w.status[0] = 0.0;
        }
        let (n, n_eq, natural) = match self.layout {
            Some(layout) if same_layout => layout,
            _ => self.set_layout(inters),
        };
        let slot = sized_slot(
            &mut self.slots,
            self.family,
            &self.solver,
            self.settings,
            n,
            n_eq,
        )?;
        let (mat, q, mut bounds) = match &mut slot.slot {
            Slot::Lcp(p, _) => (&mut p.m, &mut p.q, None),
            Slot::Mlcp(p, _) => (&mut p.m, &mut p.q, None),
            Slot::Relay(p, _) => (&mut p.m, &mut p.q, Some((&mut p.lb, &mut p.ub))),
        };
        let Matrix::Dense(mat) = mat else {
            unreachable!("one-step problems are assembled dense")
        };
        for (k, &a) in self.active.iter().enumerate() {
            let wa = &inters[a];
            let oa = self.offset[k];
            if natural && bounds.is_none() {
                // Rows in interaction order: q straight into place.
                wa.free_output(sys, &mut q[oa..oa + wa.m]);
                continue;
            }
            wa.free_output(sys, &mut self.qbuf[..wa.m]);
            for r in 0..wa.m {
                let pr = self.pos[oa + r];
                q[pr] = self.qbuf[r];
                if let (Some((lb, ub)), RowKind::Box(l, u)) = (&mut bounds, wa.rows[r]) {
                    lb[pr] = l;
                    ub[pr] = u;
                }
            }
        }
        let reuse = slot.w_of == self.active && !slot.w_of.is_empty();
        if !reuse {
            slot.m_checked = false;
            mat.fill(0.0);
            for (k, &a) in self.active.iter().enumerate() {
                let wa = &inters[a];
                let oa = self.offset[k];
                // W_αβ = Σ_i out_α,i · resp_β,i over the systems i of α.
                for (ka, &s) in wa.systems.iter().enumerate() {
                    let out_a = &wa.out[ka];
                    for b_id in model.interactions_of(SystemId(s)) {
                        let b = b_id.0;
                        let ob = self.slot_of[b];
                        if ob == usize::MAX {
                            continue;
                        }
                        let wb = &inters[b];
                        let kb = wb
                            .systems
                            .iter()
                            .position(|&x| x == s)
                            .expect("linked system");
                        let resp_b = &wb.resp[kb];
                        for c in 0..wb.m {
                            let pc = self.pos[ob + c];
                            for r in 0..wa.m {
                                let mut v = 0.0;
                                for i in 0..out_a.ncols() {
                                    v += out_a[(r, i)] * resp_b[(i, c)];
                                }
                                mat[(self.pos[oa + r], pc)] += v;
                            }
                        }
                    }
                }
                if let Some(d) = &wa.d {
                    for c in 0..wa.m {
                        for r in 0..wa.m {
                            mat[(self.pos[oa + r], self.pos[oa + c])] += d[(r, c)];
                        }
                    }
                }
            }
            slot.w_of.clear();
            if self.active.iter().all(|&a| self.fixed[a]) {
                slot.w_of.extend_from_slice(&self.active);
            }
        }
        if n == 1 && self.scalar_lemke {
            if let Some((z, iterations, error, error_abs)) =
                scalar_lcp(mat[(0, 0)], q[0], &self.settings)
            {
                slot.z[0] = z;
                inters[self.active[0]].lambda[0] = z;
                self.record(SolveReport {
                    status: SolveStatus::Solved,
                    solver: "lemke",
                    iterations,
                    error,
                    error_abs,
                });
                return Ok(true);
            }
        }
        // Warm start from the previous multipliers.
        for (k, &a) in self.active.iter().enumerate() {
            let o = self.offset[k];
            let lambda = &inters[a].lambda;
            if natural {
                slot.z[o..o + lambda.len()].copy_from_slice(lambda);
                continue;
            }
            for (r, &l) in lambda.iter().enumerate() {
                slot.z[self.pos[o + r]] = l;
            }
        }
        let m_checked = slot.m_checked;
        let report = match &mut slot.slot {
            Slot::Lcp(p, s) if m_checked => s.solve_same_matrix(p, &mut slot.z, &mut slot.w),
            Slot::Lcp(p, s) => s.solve(p, &mut slot.z, &mut slot.w),
            Slot::Mlcp(p, s) => s.solve(p, &mut slot.z, &mut slot.w),
            Slot::Relay(p, s) => s.solve(p, &mut slot.z, &mut slot.w),
        }
        .map_err(SimulationError::Numerics)?;
        // Checked by this solve (or unchanged since one that was).
        slot.m_checked = true;
        if !report.status.is_solved() {
            return Err(failure(&report, t, step, n));
        }

        for (k, &a) in self.active.iter().enumerate() {
            let o = self.offset[k];
            let w = &mut inters[a];
            if natural {
                w.lambda.copy_from_slice(&slot.z[o..o + w.m]);
                continue;
            }
            for r in 0..w.m {
                w.lambda[r] = slot.z[self.pos[o + r]];
            }
        }
        self.record(report);
        Ok(true)
    }

    /// Lays out the problem over the active interactions: their list, the
    /// offset of each one's rows, each interaction's offset (`slot_of`) and
    /// each row's position (equalities first for an MLCP, else natural
    /// order). Returns and keeps (n, number of equalities, whether every
    /// row sits at its natural position).
    fn set_layout(&mut self, inters: &[InteractionWork]) -> (usize, usize, bool) {
        self.active.clear();
        self.offset.clear();
        self.was_active.clear();
        let mut n = 0;
        let mut n_eq = 0;
        for (a, w) in inters.iter().enumerate() {
            self.was_active.push(w.active);
            self.slot_of[a] = usize::MAX;
            if w.active {
                self.slot_of[a] = n;
                self.active.push(a);
                self.offset.push(n);
                n += w.m;
                n_eq += w.rows.iter().filter(|r| **r == RowKind::Equality).count();
            }
        }
        let (mut next_eq, mut next_other) = (0, n_eq);
        let mut natural = true;
        for (k, &a) in self.active.iter().enumerate() {
            for (r, kind) in inters[a].rows.iter().enumerate() {
                let p = if *kind == RowKind::Equality {
                    next_eq += 1;
                    next_eq - 1
                } else {
                    next_other += 1;
                    next_other - 1
                };
                self.pos[self.offset[k] + r] = p;
                natural &= p == self.offset[k] + r;
            }
        }
        self.layout = Some((n, n_eq, natural));
        (n, n_eq, natural)
    }

    /// Counts a solved problem and keeps its report.
    fn record(&mut self, report: SolveReport) {
        self.solves += 1;
        self.iterations += report.iterations as u64;
        self.last_report = Some(report);
    }
}

/// The error of a one-step problem that was not solved.
fn failure(report: &SolveReport, t: f64, step: u64, size: usize) -> SimulationError {
    SimulationError::SolverFailed {
        t,
        step,
        solver: report.solver,
        status: report.status.as_str(),
        error: report.error,
        size,
    }
}

/// The problem and solver of size n, built on first use.
fn sized_slot<'a>(
    slots: &'a mut [Option<SizedSlot>],
    family: ProblemFamily,
    solver: &str,
    settings: SolverSettings,
    n: usize,
    n_eq: usize,
) -> Result<&'a mut SizedSlot, SimulationError> {
    let rebuild = match &slots[n] {
        None => true,
        Some(s) => matches!(&s.slot, Slot::Mlcp(p, _) if p.n_eq != n_eq),
    };
    if rebuild {
        let m = Matrix::Dense(DMatrix::zeros(n, n));
        let q = vec![0.0; n];
        let e = SimulationError::Numerics;
        let slot = match family {
            ProblemFamily::Lcp => {
                let s = lcp_solver(solver, settings).map_err(e)?;
                Slot::Lcp(Lcp { m, q }, s)
            }
            ProblemFamily::Mlcp => {
                let s = mlcp_solver(solver, settings).map_err(e)?;
                Slot::Mlcp(Mlcp { m, q, n_eq }, s)
            }
            ProblemFamily::Relay => {
                let s = relay_solver(solver, settings).map_err(e)?;
                Slot::Relay(
                    Relay {
                        m,
                        q,
                        lb: vec![0.0; n],
                        ub: vec![0.0; n],
                    },
                    s,
                )
            }
            ProblemFamily::Friction => unreachable!("frictional problems have their own path"),
        };
        slots[n] = Some(SizedSlot {
            slot,
            z: vec![0.0; n],
            w: vec![0.0; n],
            w_of: Vec::with_capacity(n),
            m_checked: false,
        });
    }
    Ok(slots[n].as_mut().expect("slot just built"))
}
