//! Per-interaction work: y, ẏ, λ and the matrices that link λ to the
//! unknowns of the systems involved.
//!
//! For each linked system i, `out[i]` maps the system's unknown to the
//! interaction's velocity or output (H_i, C_i, J_i(q)), `inp[i]` maps λ to
//! the system's input (H_iᵀ, B_i) and `resp[i]` = (scheme) · W_i⁻¹ · inp[i]
//! is the response of the unknown to λ: unknown_i = free_i + shift_i +
//! Σ resp[i] λ. `shift` is nonzero only for linearised nonlinear
//! first-order relations.

use nalgebra::DMatrix;

use super::linear_output::LinearOutput;
use super::system_work::SystemWork;
use crate::modelling::functions::fd_step;
use crate::modelling::law::NonsmoothLaw;
use crate::modelling::model::Interaction;
use crate::modelling::relation::Relation;

/// How a row of the one-step problem constrains (w, λ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RowKind {
    /// 0 ≤ w ⊥ λ ≥ 0.
    Complementarity,
    /// w = 0.
    Equality,
    /// −w ∈ N₍lb,ub₎(λ).
    Box(f64, f64),
    /// The normal row of a frictional contact (first of its d rows).
    FrictionNormal,
    /// A tangent row of a frictional contact (after its normal row).
    FrictionTangent,
}

/// The level at which the rows of a Lagrangian interaction are written in
/// the one-step problem (the quantity the free output stands for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LawLevel {
    /// Velocities (Moreau–Jean, the D1-minus-linear impact problem):
    /// q = H v_free + e ẏ⁻ with ẏ⁻ in `ydot_start`.
    Velocity,
    /// Positions (Schatzman–Paoli): q = H q_free + b + e y_{k−1}, with
    /// y_{k−1} in `ydot_start`.
    Position,
    /// Accelerations (D1-minus-linear force problems): q = H a_free.
    Acceleration,
}

/// The Coulomb data of a frictional contact (Newton impact–friction law).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FrictionData {
    /// Contact dimension d (2 or 3).
    pub dim: usize,
    /// Friction coefficient μ.
    pub mu: f64,
    /// Tangential restitution e_T.
    pub tangential_restitution: f64,
}

/// Contact status of a frictional interaction after a step: separated.
pub const STATUS_SEPARATED: f64 = 0.0;
/// Contact status: sticking (U_T = 0).
pub const STATUS_STICKING: f64 = 1.0;
/// Contact status: sliding (‖P_T‖ = μ P_N, U_T ≠ 0).
pub const STATUS_SLIDING: f64 = 2.0;

/// The status of a contact from its impulse P and its velocity U = W P + q
/// of the one-step problem: separated when P_N = 0; sliding when P is on
/// the cone's boundary (‖P_T‖ ≥ (1 − 10⁻⁶) μ P_N) and the tangential
/// velocity is not zero (‖U_T‖ > 10⁻⁹ (1 + ‖U‖)); sticking otherwise.
pub(crate) fn contact_status(p: &[f64], u: &[f64], mu: f64) -> f64 {
    if p[0] <= 0.0 {
        return STATUS_SEPARATED;
    }
    let pt = p[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
    let ut = u[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
    let un = u.iter().map(|x| x * x).sum::<f64>().sqrt();
    if pt >= (1.0 - 1e-6) * mu * p[0] && ut > 1e-9 * (1.0 + un) {
        STATUS_SLIDING
    } else {
        STATUS_STICKING
    }
}

pub(crate) struct InteractionWork {
    pub name: String,
    pub m: usize,
    pub systems: Vec<usize>,
    pub lagrangian: bool,
    pub linear: bool,
    /// Lagrangian unilateral rows exist: the activation test applies.
    pub unilateral: bool,
    pub restitution: f64,
    /// Coulomb data of a frictional contact (Newton impact–friction law).
    pub friction: Option<FrictionData>,
    /// Contact status after the last step (frictional contacts; see
    /// [`contact_status`]), one value.
    pub status: [f64; 1],
    pub rows: Vec<RowKind>,
    pub out: Vec<DMatrix<f64>>,
    pub inp: Vec<DMatrix<f64>>,
    pub resp: Vec<DMatrix<f64>>,
    pub shift: Vec<Vec<f64>>,
    pub d: Option<DMatrix<f64>>,
    /// Affine part of the output: b (Lagrangian) or F u + e (first order).
    pub e: Vec<f64>,
    pub f: Option<DMatrix<f64>>,
    /// Control input u of the relation (zero until set).
    pub u: Vec<f64>,
    pub y: Vec<f64>,
    pub ydot: Vec<f64>,
    pub lambda: Vec<f64>,
    /// The earlier value the law reads: ẏ at the start of the step (U_k of
    /// the impact law) at velocity level, y_{k−1} at position level.
    pub ydot_start: Vec<f64>,
    /// The level of the rows in the next problem.
    pub level: LawLevel,
    /// D1-minus-linear: the contact forces λ of the last acceleration-level
    /// problem (the warm start of the next one; empty for other schemes).
    pub lambda_force: Vec<f64>,
    /// Bounds on the rounding errors of y and ẏ (linear Lagrangian relations).
    pub y_noise: Vec<f64>,
    pub ydot_noise: Vec<f64>,
    pub active: bool,
    /// Scratch: concatenated state of the linked systems and λ-sized vectors.
    xcat: Vec<f64>,
    xcat2: Vec<f64>,
    sm: Vec<f64>,
    sm2: Vec<f64>,
    /// Full Jacobians over the concatenated state (nonlinear relations).
    jx: DMatrix<f64>,
    jl: DMatrix<f64>,
    jb: DMatrix<f64>,
    /// g^α − B λ^α over the concatenated state (nonlinear first-order relations).
    g_aff: Vec<f64>,
    /// The nonzero entries of C, D and F (linear first-order relations):
    /// y and the free output without the structurally zero products.
    sparse_output: Option<LinearOutput>,
}

impl InteractionWork {
    pub fn new(inter: &Interaction, sys: &[SystemWork]) -> Self {
        let m = inter.dim();
        let systems: Vec<usize> = inter.systems.iter().map(|s| s.0).collect();
        let dims: Vec<usize> = systems.iter().map(|&s| sys[s].n).collect();
        let ntot: usize = dims.iter().sum();
        let lagrangian = inter.relation.is_lagrangian();
        let mut friction = None;
        let (rows, restitution): (Vec<RowKind>, f64) = match &inter.law {
            NonsmoothLaw::NewtonImpactFriction {
                dimension,
                restitution,
                tangential_restitution,
                friction: mu,
            } => {
                friction = Some(FrictionData {
                    dim: *dimension,
                    mu: *mu,
                    tangential_restitution: *tangential_restitution,
                });
                let mut r = vec![RowKind::FrictionNormal];
                r.extend(std::iter::repeat_n(RowKind::FrictionTangent, dimension - 1));
                (r, *restitution)
            }
            NonsmoothLaw::Complementarity { size } => (vec![RowKind::Complementarity; *size], 0.0),
            NonsmoothLaw::NewtonImpact { size, restitution } => {
                (vec![RowKind::Complementarity; *size], *restitution)
            }
            NonsmoothLaw::Relay { lb, ub } => (
                lb.iter()
                    .zip(ub)
                    .map(|(&l, &u)| RowKind::Box(l, u))
                    .collect(),
                0.0,
            ),
            NonsmoothLaw::Equality { size } => (vec![RowKind::Equality; *size], 0.0),
            NonsmoothLaw::MixedComplementarity {
                equalities,
                inequalities,
            } => {
                let mut r = vec![RowKind::Equality; *equalities];
                r.extend(std::iter::repeat_n(RowKind::Complementarity, *inequalities));
                (r, 0.0)
            }
        };
        let unilateral = lagrangian
            && (rows.contains(&RowKind::Complementarity)
                || rows.contains(&RowKind::FrictionNormal));
        let nonlinear = !inter.relation.is_linear();
        let mut w = InteractionWork {
            name: inter.name.clone(),
            m,
            lagrangian,
            linear: inter.relation.is_linear(),
            unilateral,
            restitution,
            friction,
            status: [STATUS_SEPARATED],
            rows,
            out: dims.iter().map(|&n| DMatrix::zeros(m, n)).collect(),
            inp: dims.iter().map(|&n| DMatrix::zeros(n, m)).collect(),
            resp: dims.iter().map(|&n| DMatrix::zeros(n, m)).collect(),
            shift: dims.iter().map(|&n| vec![0.0; n]).collect(),
            d: None,
            e: vec![0.0; m],
            f: None,
            u: vec![0.0; inter.relation.input_dim()],
            y: vec![0.0; m],
            ydot: vec![0.0; m],
            lambda: vec![0.0; m],
            ydot_start: vec![0.0; m],
            level: LawLevel::Velocity,
            lambda_force: vec![],
            y_noise: vec![0.0; m],
            ydot_noise: vec![0.0; m],
            active: !unilateral,
            xcat: vec![0.0; ntot],
            // Linearisation scratch, for nonlinear relations only.
            xcat2: vec![0.0; if nonlinear { ntot } else { 0 }],
            sm: vec![0.0; if nonlinear { m.max(ntot) } else { 0 }],
            sm2: vec![0.0; if nonlinear { m.max(ntot) } else { 0 }],
            jx: DMatrix::zeros(m, if nonlinear { ntot } else { 0 }),
            jl: DMatrix::zeros(if nonlinear { m } else { 0 }, if nonlinear { m } else { 0 }),
            jb: DMatrix::zeros(if nonlinear { ntot } else { 0 }, m),
            g_aff: vec![0.0; if nonlinear { ntot } else { 0 }],
            sparse_output: None,
            systems,
        };
        match &inter.relation {
            Relation::LagrangianLinearTi(r) => {
                w.split_out(&r.h);
                w.inp_from_out_transpose();
                if let Some(b) = &r.b {
                    w.e.copy_from_slice(b.as_slice());
                }
            }
            Relation::FirstOrderLinearTi(r) => {
                w.split_out(&r.c);
                w.split_inp(&r.b);
                w.d = r.d.clone();
                w.f = r.f.clone();
                if let Some(e) = &r.e {
                    w.e.copy_from_slice(e.as_slice());
                }
                w.sparse_output = Some(LinearOutput::new(&w.out, w.d.as_ref(), w.f.as_ref()));
            }
            _ => {}
        }
        w
    }

    fn split_out(&mut self, full: &DMatrix<f64>) {
        let mut c0 = 0;
        for o in &mut self.out {
            let n = o.ncols();
            o.copy_from(&full.view((0, c0), (self.m, n)));
            c0 += n;
        }
    }

    fn split_inp(&mut self, full: &DMatrix<f64>) {
        let mut r0 = 0;
        for i in &mut self.inp {
            let n = i.nrows();
            i.copy_from(&full.view((r0, 0), (n, self.m)));
            r0 += n;
        }
    }

    fn inp_from_out_transpose(&mut self) {
        for (i, o) in self.inp.iter_mut().zip(&self.out) {
            o.transpose_to(i);
        }
    }

    fn gather(&mut self, sys: &[SystemWork], positions: bool) {
        let mut k = 0;
        for &s in &self.systems {
            let src = if positions || !sys[s].lagrangian {
                &sys[s].q
            } else {
                &sys[s].v
            };
            self.xcat[k..k + src.len()].copy_from_slice(src);
            k += src.len();
        }
    }

    /// Re-evaluates the Jacobians of a nonlinear relation at the systems'
    /// current iterate and λ (no-op for linear relations).
    pub fn linearise(&mut self, rel: &Relation, sys: &[SystemWork], t: f64) {
        match rel {
            Relation::LagrangianScleronomous(r) => {
                self.gather(sys, true);
                let InteractionWork {
                    xcat,
                    sm,
                    sm2,
                    jx,
                    m,
                    ..
                } = self;
                match &r.jacobian {
                    Some(j) => j(xcat, jx),
                    None => {
                        (r.h)(xcat, &mut sm[..*m]);
                        fd_columns(|x, out| (r.h)(x, out), xcat, &sm[..*m], &mut sm2[..*m], jx);
                    }
                }
                let jx = std::mem::replace(&mut self.jx, DMatrix::zeros(0, 0));
                self.split_out(&jx);
                self.jx = jx;
                self.inp_from_out_transpose();
            }
            Relation::FirstOrderNonlinear(r) => {
                self.gather(sys, true);
                let InteractionWork {
                    xcat,
                    xcat2,
                    sm,
                    sm2,
                    jx,
                    jl,
                    jb,
                    lambda,
                    e,
                    m,
                    g_aff,
                    ..
                } = self;
                let m = *m;
                let ntot = xcat.len();
                // h^α = h(t, x^α, λ^α) in sm, g^α in g_aff.
                (r.h)(t, xcat, lambda, &mut sm[..m]);
                (r.g)(t, xcat, lambda, g_aff);
                match &r.jacobian_h_x {
                    Some(j) => j(t, xcat, lambda, jx),
                    None => fd_columns(
                        |x, out| (r.h)(t, x, lambda, out),
                        xcat,
                        &sm[..m],
                        &mut sm2[..m],
                        jx,
                    ),
                }
                match &r.jacobian_h_lambda {
                    Some(j) => j(t, xcat, lambda, jl),
                    None => fd_columns_lambda(
                        |l, out| (r.h)(t, xcat, l, out),
                        lambda,
                        &sm[..m],
                        &mut sm2[..m],
                        jl,
                    ),
                }
                match &r.jacobian_g_lambda {
                    Some(j) => j(t, xcat, lambda, jb),
                    None => fd_columns_lambda(
                        |l, out| (r.g)(t, xcat, l, out),
                        lambda,
                        g_aff,
                        &mut xcat2[..ntot],
                        jb,
                    ),
                }
                // Affine parts: e = h^α − C x^α − D λ^α; g_aff = g^α − B λ^α.
                for row in 0..m {
                    let mut v = sm[row];
                    for c in 0..ntot {
                        v -= jx[(row, c)] * xcat[c];
                    }
                    for c in 0..m {
                        v -= jl[(row, c)] * lambda[c];
                    }
                    e[row] = v;
                }
                for row in 0..ntot {
                    for c in 0..m {
                        g_aff[row] -= jb[(row, c)] * lambda[c];
                    }
                }
                let jx = std::mem::replace(&mut self.jx, DMatrix::zeros(0, 0));
                self.split_out(&jx);
                self.jx = jx;
                let jb = std::mem::replace(&mut self.jb, DMatrix::zeros(0, 0));
                self.split_inp(&jb);
                self.jb = jb;
                match &mut self.d {
                    Some(d) => d.copy_from(&self.jl),
                    None => self.d = Some(self.jl.clone()),
                }
            }
            _ => {}
        }
    }

    /// resp[i] ← scheme response of system i to inp[i]; shift[i] ← response
    /// to the affine input g^α − Bλ^α (nonlinear first-order relations).
    pub fn compute_response(
        &mut self,
        sys: &mut [SystemWork],
        h: f64,
        nonlinear_first_order: bool,
    ) {
        let mut r0 = 0;
        for (k, &s) in self.systems.iter().enumerate() {
            let n = sys[s].n;
            let resp = &mut self.resp[k];
            resp.copy_from(&self.inp[k]);
            for c in 0..self.m {
                sys[s].input_response(h, &mut resp.as_mut_slice()[c * n..(c + 1) * n]);
            }
            if nonlinear_first_order {
                let shift = &mut self.shift[k];
                shift.copy_from_slice(&self.g_aff[r0..r0 + n]);
                sys[s].input_response(h, shift);
            }
            r0 += n;
        }
    }

    /// The free output: the problem's q for this interaction's rows.
    /// Lagrangian: Σ out_i free_i (+ e ẏ_k on unilateral rows and the
    /// normal row of a frictional contact, + e_T ẏ_k on its tangent rows). First
    /// order: Σ out_i (free_i + shift_i) + F u + e.
    pub fn free_output(&self, sys: &[SystemWork], q: &mut [f64]) {
        if let Some(lin) = &self.sparse_output {
            // Linear first order (shift = 0): Σ C_i free_i + e + F u.
            let systems = &self.systems;
            lin.apply(|i| sys[systems[i]].free_values(), &self.e, None, &self.u, q);
            return;
        }
        let m = self.m;
        if m == 1 && self.lagrangian {
            // One row: the sums below, in the same order, in a register.
            let mut acc = 0.0;
            for (o, &s) in self.out.iter().zip(&self.systems) {
                for (&h, &f) in o.as_slice().iter().zip(sys[s].free_values()) {
                    acc += h * f;
                }
            }
            if self.rows[0] == RowKind::Complementarity {
                match self.level {
                    LawLevel::Velocity => acc += self.restitution * self.ydot_start[0],
                    LawLevel::Position => {
                        acc += self.e[0];
                        acc += self.restitution * self.ydot_start[0];
                    }
                    LawLevel::Acceleration => {}
                }
            }
            q[0] = acc;
            return;
        }
        if self.lagrangian && self.level == LawLevel::Velocity {
            match m {
                2 => return self.free_velocity_rows::<2>(sys, q),
                3 => return self.free_velocity_rows::<3>(sys, q),
                _ => {}
            }
        }
        q.iter_mut().for_each(|x| *x = 0.0);
        for (k, &s) in self.systems.iter().enumerate() {
            let o = self.out[k].as_slice();
            let free = sys[s].free_values();
            let shift = &self.shift[k];
            for (c, col) in o.chunks_exact(m).enumerate() {
                let fc = if self.lagrangian {
                    free[c]
                } else {
                    free[c] + shift[c]
                };
                for (qr, &orc) in q.iter_mut().zip(col) {
                    *qr += orc * fc;
                }
            }
        }
        if self.lagrangian && self.level != LawLevel::Velocity {
            // Only complementarity rows reach the other levels (the schemes
            // refuse the other laws when the simulation is built).
            for r in 0..self.m {
                if self.level == LawLevel::Position {
                    q[r] += self.e[r];
                    q[r] += self.restitution * self.ydot_start[r];
                }
            }
        } else if self.lagrangian {
            for r in 0..self.m {
                match self.rows[r] {
                    RowKind::Complementarity | RowKind::FrictionNormal => {
                        q[r] += self.restitution * self.ydot_start[r];
                    }
                    RowKind::FrictionTangent => {
                        let e_t = self.friction.map_or(0.0, |f| f.tangential_restitution);
                        q[r] += e_t * self.ydot_start[r];
                    }
                    _ => {}
                }
            }
        } else {
            for r in 0..self.m {
                q[r] += self.e[r];
            }
            if let Some(f) = &self.f {
                add_product(f, &self.u, q);
            }
        }
    }

    /// [`Self::free_output`] of a Lagrangian interaction of `M` = 2 or 3
    /// rows at velocity level (a frictional contact): q = Σ_i H_i v_free,i
    /// plus e ẏ_k on normal and complementarity rows and e_T ẏ_k on tangent
    /// rows, the sums of the general case in the same order, kept in
    /// registers.
    #[inline(always)]
    fn free_velocity_rows<const M: usize>(&self, sys: &[SystemWork], q: &mut [f64]) {
        let mut acc = [0.0; M];
        for (o, &s) in self.out.iter().zip(&self.systems) {
            for (col, &fc) in o.as_slice().chunks_exact(M).zip(sys[s].free_values()) {
                for (a, &h) in acc.iter_mut().zip(col) {
                    *a += h * fc;
                }
            }
        }
        let e_t = self.friction.map_or(0.0, |f| f.tangential_restitution);
        for (r, a) in acc.iter_mut().enumerate() {
            match self.rows[r] {
                RowKind::Complementarity | RowKind::FrictionNormal => {
                    *a += self.restitution * self.ydot_start[r];
                }
                RowKind::FrictionTangent => *a += e_t * self.ydot_start[r],
                _ => {}
            }
        }
        q[..M].copy_from_slice(&acc);
    }

    /// out ← Σ_i out_i x_i + (b when `affine`), with x_i the vector `pick`
    /// takes from linked system i (linear Lagrangian relations: H x (+ b)).
    pub fn linear_output(
        &self,
        sys: &[SystemWork],
        pick: impl Fn(&SystemWork) -> &[f64],
        affine: bool,
        out: &mut [f64],
    ) {
        let m = self.m;
        for (r, o) in out.iter_mut().enumerate() {
            *o = if affine { self.e[r] } else { 0.0 };
        }
        for (o, &s) in self.out.iter().zip(&self.systems) {
            let x = pick(&sys[s]);
            for (col, &xc) in o.as_slice().chunks_exact(m).zip(x) {
                for (r, &h) in out.iter_mut().zip(col) {
                    *r += h * xc;
                }
            }
        }
    }

    /// As [`Self::linear_output`] with x_i = `vectors[i]` (one vector per
    /// system of the model).
    pub fn linear_output_of(&self, vectors: &[Vec<f64>], affine: bool, out: &mut [f64]) {
        let m = self.m;
        for (r, o) in out.iter_mut().enumerate() {
            *o = if affine { self.e[r] } else { 0.0 };
        }
        for (o, &s) in self.out.iter().zip(&self.systems) {
            for (col, &xc) in o.as_slice().chunks_exact(m).zip(&vectors[s]) {
                for (r, &h) in out.iter_mut().zip(col) {
                    *r += h * xc;
                }
            }
        }
    }

    /// y (and ẏ) after the step, from the systems' new state and λ.
    #[inline(always)]
    pub fn update_output(&mut self, rel: &Relation, sys: &[SystemWork], t: f64) {
        if matches!(rel, Relation::LagrangianLinearTi(_)) {
            match self.m {
                1 => return self.update_scalar_lagrangian(sys),
                2 => return self.update_small_lagrangian::<2>(sys),
                3 => return self.update_small_lagrangian::<3>(sys),
                _ => {}
            }
        }
        if let Some(lin) = &self.sparse_output {
            // y = C x + e + D λ + F u over the nonzero entries.
            let systems = &self.systems;
            lin.apply(
                |i| sys[systems[i]].q.as_slice(),
                &self.e,
                Some(&self.lambda),
                &self.u,
                &mut self.y,
            );
            return;
        }
        self.update_output_general(rel, sys, t);
    }

    /// [`Self::update_output`] of a linear Lagrangian relation of `M` = 2
    /// or 3 rows (a frictional contact): y = H q + b, ẏ = H v and their
    /// rounding bounds, the sums of the general case in the same order,
    /// kept in registers.
    #[inline(always)]
    fn update_small_lagrangian<const M: usize>(&mut self, sys: &[SystemWork]) {
        let mut y: [f64; M] = std::array::from_fn(|r| self.e[r]);
        let mut y_noise: [f64; M] = std::array::from_fn(|r| self.e[r].abs());
        let (mut ydot, mut ydot_noise) = ([0.0; M], [0.0; M]);
        for (o, &s) in self.out.iter().zip(&self.systems) {
            let (q, v) = (&sys[s].q, &sys[s].v);
            for ((col, &qc), &vc) in o.as_slice().chunks_exact(M).zip(q).zip(v) {
                for r in 0..M {
                    let (hq, hv) = (col[r] * qc, col[r] * vc);
                    y[r] += hq;
                    y_noise[r] += hq.abs();
                    ydot[r] += hv;
                    ydot_noise[r] += hv.abs();
                }
            }
        }
        for r in 0..M {
            self.y[r] = y[r];
            self.y_noise[r] = y_noise[r] * (4.0 * f64::EPSILON);
            self.ydot[r] = ydot[r];
            self.ydot_noise[r] = ydot_noise[r] * (4.0 * f64::EPSILON);
        }
    }

    /// [`Self::update_output`] of a one-row linear Lagrangian relation (most
    /// contacts): the sums of the general case, in the same order, kept in
    /// registers.
    #[inline(always)]
    fn update_scalar_lagrangian(&mut self, sys: &[SystemWork]) {
        let e = self.e[0];
        let (mut y, mut y_noise, mut ydot, mut ydot_noise) = (e, e.abs(), 0.0, 0.0);
        for (o, &s) in self.out.iter().zip(&self.systems) {
            let (q, v) = (&sys[s].q, &sys[s].v);
            for ((&h, &qc), &vc) in o.as_slice().iter().zip(q).zip(v) {
                let (hq, hv) = (h * qc, h * vc);
                y += hq;
                y_noise += hq.abs();
                ydot += hv;
                ydot_noise += hv.abs();
            }
        }
        self.y[0] = y;
        self.y_noise[0] = y_noise * (4.0 * f64::EPSILON);
        self.ydot[0] = ydot;
        self.ydot_noise[0] = ydot_noise * (4.0 * f64::EPSILON);
    }

    fn update_output_general(&mut self, rel: &Relation, sys: &[SystemWork], t: f64) {
        match rel {
            Relation::LagrangianLinearTi(_) => {
                // y = H q + b, ẏ = H v and the rounding bounds of both, in
                // one pass over H.
                let m = self.m;
                for r in 0..m {
                    self.y[r] = self.e[r];
                    self.y_noise[r] = self.e[r].abs();
                    self.ydot[r] = 0.0;
                    self.ydot_noise[r] = 0.0;
                }
                for (k, &s) in self.systems.iter().enumerate() {
                    let (q, v) = (&sys[s].q, &sys[s].v);
                    for (c, col) in self.out[k].as_slice().chunks_exact(m).enumerate() {
                        let (qc, vc) = (q[c], v[c]);
                        for r in 0..m {
                            let (hq, hv) = (col[r] * qc, col[r] * vc);
                            self.y[r] += hq;
                            self.y_noise[r] += hq.abs();
                            self.ydot[r] += hv;
                            self.ydot_noise[r] += hv.abs();
                        }
                    }
                }
                for r in 0..m {
                    self.y_noise[r] *= 4.0 * f64::EPSILON;
                    self.ydot_noise[r] *= 4.0 * f64::EPSILON;
                }
            }
            Relation::LagrangianScleronomous(r) => {
                self.gather(sys, true);
                (r.h)(&self.xcat, &mut self.y);
                self.gather(sys, false);
                let mut yd = std::mem::take(&mut self.ydot);
                self.apply_out(&mut yd);
                self.ydot = yd;
            }
            Relation::FirstOrderLinearTi(_) => {
                self.gather(sys, true);
                let mut y = std::mem::take(&mut self.y);
                self.apply_out(&mut y);
                for r in 0..self.m {
                    y[r] += self.e[r];
                }
                if let Some(d) = &self.d {
                    add_product(d, &self.lambda, &mut y);
                }
                if let Some(f) = &self.f {
                    add_product(f, &self.u, &mut y);
                }
                self.y = y;
            }
            Relation::FirstOrderNonlinear(r) => {
                self.gather(sys, true);
                (r.h)(t, &self.xcat, &self.lambda, &mut self.y);
            }
        }
    }

    /// out ← Σ_i out_i · xcat_i (xcat gathered beforehand).
    fn apply_out(&self, out: &mut [f64]) {
        let m = self.m;
        out.iter_mut().for_each(|x| *x = 0.0);
        let mut c0 = 0;
        for o in &self.out {
            let n = o.ncols();
            for (col, &xc) in o.as_slice().chunks_exact(m).zip(&self.xcat[c0..c0 + n]) {
                for (r, &orc) in out.iter_mut().zip(col) {
                    *r += orc * xc;
                }
            }
            c0 += n;
        }
    }
}

/// out ← out + A x, column by column: for each column c, out_r += A_rc x_c
/// for every row r (the order of the element-wise loops it replaces, read
/// from A's column-major storage without per-element index checks). A has
/// `out.len()` rows and `x.len()` columns.
#[inline]
fn add_product(a: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    debug_assert_eq!((a.nrows(), a.ncols()), (out.len(), x.len()));
    if out.is_empty() {
        return;
    }
    for (col, &xc) in a.as_slice().chunks_exact(out.len()).zip(x) {
        for (o, &arc) in out.iter_mut().zip(col) {
            *o += arc * xc;
        }
    }
}

/// out[:, c] ← (f(x + δe_c) − fx)/δ, forward differences over x.
fn fd_columns(
    f: impl Fn(&[f64], &mut [f64]),
    x: &mut [f64],
    fx: &[f64],
    fplus: &mut [f64],
    out: &mut DMatrix<f64>,
) {
    for c in 0..x.len() {
        let x0 = x[c];
        let dx = fd_step(x0);
        x[c] = x0 + dx;
        f(x, fplus);
        x[c] = x0;
        for r in 0..fx.len() {
            out[(r, c)] = (fplus[r] - fx[r]) / dx;
        }
    }
}

/// As [`fd_columns`], for the λ argument.
fn fd_columns_lambda(
    f: impl Fn(&[f64], &mut [f64]),
    lambda: &mut [f64],
    fx: &[f64],
    fplus: &mut [f64],
    out: &mut DMatrix<f64>,
) {
    fd_columns(f, lambda, fx, fplus, out)
}
