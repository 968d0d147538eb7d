//! The smooth dynamics of the current mode, as one ODE ẋ = f(t, x) on the
//! concatenated state (q, v of each Lagrangian system, x of each
//! first-order one, in model order), and the guard functions of the mode.
//!
//! **Lagrangian systems.** With I₂ the index set of contacts in persistent
//! contact (y = 0, ẏ = 0), the multipliers λ_{I₂} keep ÿ_{I₂} = 0:
//!
//! M v̇ = F(t, q, v) + g + Σ_{α∈I₂} Hₐᵀ λₐ,  q̇ = v,
//! Σ_{β∈I₂} (H M⁻¹ Hᵀ)_{αβ} λ_β = −(H M⁻¹ (F + g))_α,  α ∈ I₂,
//!
//! (the Delassus matrix H M⁻¹ Hᵀ over I₂ is factored once per mode when M
//! is constant); λ = 0 outside I₂.
//!
//! **First-order complementarity systems** y = C x + F u + D λ + e,
//! r = B λ, 0 ≤ y ⊥ λ ≥ 0: in the mode with active set A,
//! y_A = 0 gives D_AA λ_A = −(C x + F u + e)_A, λ = 0 outside A, and
//! ẋ = f(t, x) + g + B λ.
//!
//! **Guards** (positive while the mode holds; an event when one reaches 0):
//! the gap y of a free unilateral contact, the contact force λ of a
//! persistent one (take-off), and for a complementarity row y when
//! inactive, λ when active.

use nalgebra::DMatrix;

use super::integrator::OdeRhs;
use crate::modelling::dynamical_system::{DynamicalSystem, Mass};
use crate::modelling::law::NonsmoothLaw;
use crate::modelling::model::Model;
use crate::modelling::relation::Relation;
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::simulation::error::SimulationError;

/// The role of an interaction in the event-driven dynamics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Family {
    /// Lagrangian unilateral contact (Newton impact, or complementarity as
    /// an impact with e = 0).
    Contact { restitution: f64 },
    /// First-order linear complementarity rows.
    Lcs,
    /// First-order relay rows (D = 0): λ = lb where y > 0, ub where y < 0,
    /// sliding on y = 0 with λ from ẏ = 0.
    Relay,
}

/// The mode of a relay row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RelayMode {
    /// y > 0, λ = lb.
    Lower,
    /// y < 0, λ = ub.
    Upper,
    /// y = 0, lb ≤ λ ≤ ub from ẏ = 0.
    Sliding,
}

pub(crate) struct SysBlock {
    pub name: String,
    pub off: usize,
    pub n: usize,
    pub lagrangian: bool,
    /// M constant (factored once in `mass`).
    pub mass_const: bool,
    /// LU of M (Lagrangian).
    pub(super) mass: Vec<f64>,
    /// 1/Mᵢᵢ when M is constant and diagonal (then no LU solve).
    inv_diag: Option<Vec<f64>>,
    pub(super) piv: Vec<usize>,
    /// F + g, then M⁻¹(F + g) + contact accelerations (Lagrangian).
    pub force: Vec<f64>,
    pub acc: Vec<f64>,
    pub control: Vec<f64>,
    pub has_control: bool,
    s1: Vec<f64>,
    mat: DMatrix<f64>,
}

impl SysBlock {
    /// v ← M⁻¹ v.
    fn solve_mass(&self, v: &mut [f64]) {
        match &self.inv_diag {
            Some(d) => v.iter_mut().zip(d).for_each(|(x, d)| *x *= d),
            None => lu_solve(&self.mass, self.n, &self.piv, v),
        }
    }
}

pub(crate) struct InterBlock {
    pub name: String,
    pub systems: Vec<usize>,
    pub m: usize,
    /// First global row.
    pub row0: usize,
    pub family: Family,
    /// H_i or C_i (m × n_i) and their transpose or B_i (n_i × m).
    pub out: Vec<DMatrix<f64>>,
    pub inp: Vec<DMatrix<f64>>,
    /// M_i⁻¹ H_iᵀ (Lagrangian), at the current q when M varies.
    pub resp: Vec<DMatrix<f64>>,
    /// b (Lagrangian) or e (first order).
    pub e: Vec<f64>,
    pub d: Option<DMatrix<f64>>,
    pub f: Option<DMatrix<f64>>,
    pub u: Vec<f64>,
    /// First-order mode: local active rows, LU of D_AA.
    pub(super) lcs_rows: Vec<usize>,
    lcs_lu: Vec<f64>,
    lcs_piv: Vec<usize>,
    c_buf: Vec<f64>,
    /// Relay rows: bounds, modes, C B (m × m) and the LU of its sliding block.
    pub lb: Vec<f64>,
    pub ub: Vec<f64>,
    pub relay_mode: Vec<RelayMode>,
    pub cb: DMatrix<f64>,
    relay_rows: Vec<usize>,
    s_buf: Vec<f64>,
    relay_lu: Vec<f64>,
    relay_piv: Vec<usize>,
}

/// The model's dynamics in the current mode (index sets), with every
/// buffer the right-hand side needs.
pub(crate) struct Dynamics {
    pub sys: Vec<SysBlock>,
    pub inters: Vec<InterBlock>,
    /// Size of the state vector.
    pub dim: usize,
    /// Total rows of all interactions.
    pub rows: usize,
    /// Interaction of each global row.
    pub row_inter: Vec<usize>,
    /// Mode: row in I₂ (contact) or in the active set (first order).
    pub active: Vec<bool>,
    /// λ of each row at the last evaluation of the right-hand side.
    pub lam: Vec<f64>,
    /// y of first-order rows at the last evaluation.
    pub y_lcs: Vec<f64>,
    /// Contact rows in I₂, and the factored Delassus matrix over them.
    pub contacts: Vec<usize>,
    pub(super) del: Vec<f64>,
    pub(super) del_piv: Vec<usize>,
    pub(super) del_ok: bool,
    a_buf: Vec<f64>,
    /// All contact masses constant.
    pub mass_const: bool,
    /// Some interaction has first-order complementarity rows.
    pub has_lcs: bool,
    /// Right-hand side evaluations.
    pub evaluations: u64,
    fbuf: Vec<f64>,
    model: std::sync::Arc<Model>,
}

impl Dynamics {
    pub fn new(model: std::sync::Arc<Model>) -> Result<Self, SimulationError> {
        let mut sys = Vec::with_capacity(model.systems().len());
        let mut off = 0;
        for s in model.systems() {
            let n = s.ds.dim();
            let lagrangian = s.ds.is_lagrangian();
            let mut blk = SysBlock {
                name: s.name.clone(),
                off,
                n,
                lagrangian,
                mass_const: false,
                mass: vec![0.0; if lagrangian { n * n } else { 0 }],
                inv_diag: None,
                piv: vec![0; n],
                force: vec![0.0; n],
                acc: vec![0.0; n],
                control: vec![0.0; n],
                has_control: false,
                s1: vec![0.0; n],
                mat: DMatrix::zeros(n, n),
            };
            let m = match &s.ds {
                DynamicalSystem::LagrangianLinearTi(d) => Some(&d.mass),
                DynamicalSystem::LagrangianNonlinear(d) => match &d.mass {
                    Mass::Constant(m) => Some(m),
                    Mass::Function(_) => None,
                },
                _ => None,
            };
            if let Some(m) = m {
                let diagonal = (0..n).all(|j| (0..n).all(|i| i == j || m[(i, j)] == 0.0));
                if diagonal {
                    blk.inv_diag = Some((0..n).map(|i| 1.0 / m[(i, i)]).collect());
                }
                blk.mass.copy_from_slice(m.as_slice());
                if !lu_factor(&mut blk.mass, n, &mut blk.piv) {
                    return Err(SimulationError::SingularIterationMatrix {
                        system: s.name.clone(),
                    });
                }
                blk.mass_const = true;
            }
            off += if lagrangian { 2 * n } else { n };
            sys.push(blk);
        }
        let mut inters = Vec::with_capacity(model.interactions().len());
        let mut row_inter = Vec::new();
        let mut row0 = 0;
        for (k, inter) in model.interactions().iter().enumerate() {
            let m = inter.dim();
            let unsupported = |what: String| {
                Err(SimulationError::Unsupported(format!(
                    "event-driven: interaction '{}': {what}",
                    inter.name
                )))
            };
            let family = match (&inter.law, inter.relation.is_lagrangian()) {
                (NonsmoothLaw::NewtonImpact { restitution, .. }, true) => Family::Contact {
                    restitution: *restitution,
                },
                (NonsmoothLaw::Complementarity { .. }, true) => {
                    Family::Contact { restitution: 0.0 }
                }
                (NonsmoothLaw::Complementarity { .. }, false) => Family::Lcs,
                (NonsmoothLaw::Relay { .. }, false) => {
                    let d_zero = match &inter.relation {
                        Relation::FirstOrderLinearTi(r) => {
                            r.d.as_ref().is_none_or(|d| d.iter().all(|&v| v == 0.0))
                        }
                        _ => false,
                    };
                    if !d_zero {
                        return unsupported(
                            "relay laws are handled by the event-driven strategy with linear relations and D = 0 (sliding at the level of ẏ)".into(),
                        );
                    }
                    Family::Relay
                }
                (law, _) => {
                    return unsupported(format!(
                        "{} laws are not handled by the event-driven strategy (impact and complementarity laws are)",
                        law.kind_name()
                    ))
                }
            };
            let systems: Vec<usize> = inter.systems.iter().map(|s| s.0).collect();
            let dims: Vec<usize> = systems.iter().map(|&s| sys[s].n).collect();
            let mut blk = InterBlock {
                name: inter.name.clone(),
                m,
                row0,
                family,
                out: dims.iter().map(|&n| DMatrix::zeros(m, n)).collect(),
                inp: dims.iter().map(|&n| DMatrix::zeros(n, m)).collect(),
                resp: dims.iter().map(|&n| DMatrix::zeros(n, m)).collect(),
                e: vec![0.0; m],
                d: None,
                f: None,
                u: vec![0.0; inter.relation.input_dim()],
                lcs_rows: Vec::with_capacity(m),
                lcs_lu: vec![0.0; m * m],
                lcs_piv: vec![0; m],
                c_buf: vec![0.0; m],
                lb: match &inter.law {
                    NonsmoothLaw::Relay { lb, .. } => lb.clone(),
                    _ => Vec::new(),
                },
                ub: match &inter.law {
                    NonsmoothLaw::Relay { ub, .. } => ub.clone(),
                    _ => Vec::new(),
                },
                relay_mode: vec![RelayMode::Lower; m],
                cb: DMatrix::zeros(m, m),
                relay_rows: Vec::with_capacity(m),
                s_buf: vec![0.0; m],
                relay_lu: vec![0.0; m * m],
                relay_piv: vec![0; m],
                systems,
            };
            let split = |full: &DMatrix<f64>, out: &mut Vec<DMatrix<f64>>, by_cols: bool| {
                let mut o = 0;
                for blk in out.iter_mut() {
                    if by_cols {
                        let n = blk.ncols();
                        blk.copy_from(&full.view((0, o), (m, n)));
                        o += n;
                    } else {
                        let n = blk.nrows();
                        blk.copy_from(&full.view((o, 0), (n, m)));
                        o += n;
                    }
                }
            };
            match &inter.relation {
                Relation::LagrangianLinearTi(r) => {
                    split(&r.h, &mut blk.out, true);
                    split(&r.h.transpose(), &mut blk.inp, false);
                    if let Some(b) = &r.b {
                        blk.e.copy_from_slice(b.as_slice());
                    }
                }
                Relation::FirstOrderLinearTi(r) => {
                    split(&r.c, &mut blk.out, true);
                    split(&r.b, &mut blk.inp, false);
                    blk.d = r.d.clone();
                    blk.f = r.f.clone();
                    if let Some(e) = &r.e {
                        blk.e.copy_from_slice(e.as_slice());
                    }
                }
                _ => {
                    return unsupported(
                        "nonlinear relations are not handled by the event-driven strategy (linear ones are)"
                            .into(),
                    )
                }
            }
            if family == Family::Relay {
                for (o, i) in blk.out.iter().zip(&blk.inp) {
                    blk.cb += o * i;
                }
            }
            row_inter.extend(std::iter::repeat_n(k, m));
            row0 += m;
            inters.push(blk);
        }
        let dim = off;
        let mass_const = inters.iter().all(|w| {
            !matches!(w.family, Family::Contact { .. })
                || w.systems.iter().all(|&s| sys[s].mass_const)
        });
        let has_lcs = inters
            .iter()
            .any(|w| matches!(w.family, Family::Lcs | Family::Relay));
        let mut dynamics = Dynamics {
            has_lcs,
            sys,
            inters,
            dim,
            rows: row0,
            row_inter,
            active: vec![false; row0],
            lam: vec![0.0; row0],
            y_lcs: vec![0.0; row0],
            contacts: Vec::new(),
            del: Vec::new(),
            del_piv: Vec::new(),
            del_ok: false,
            a_buf: Vec::new(),
            mass_const,
            evaluations: 0,
            fbuf: vec![0.0; dim],
            model,
        };
        if mass_const {
            for k in 0..dynamics.inters.len() {
                dynamics.compute_resp(k);
            }
        }
        Ok(dynamics)
    }

    /// The initial state vector.
    pub fn initial_state(&self, x: &mut [f64]) {
        for (b, s) in self.sys.iter().zip(self.model.systems()) {
            let o = b.off;
            match &s.ds {
                DynamicalSystem::FirstOrderLinear(d) => {
                    x[o..o + b.n].copy_from_slice(d.x0.as_slice())
                }
                DynamicalSystem::FirstOrderNonlinear(d) => {
                    x[o..o + b.n].copy_from_slice(d.x0.as_slice())
                }
                DynamicalSystem::LagrangianLinearTi(d) => {
                    x[o..o + b.n].copy_from_slice(d.q0.as_slice());
                    x[o + b.n..o + 2 * b.n].copy_from_slice(d.v0.as_slice());
                }
                DynamicalSystem::LagrangianNonlinear(d) => {
                    x[o..o + b.n].copy_from_slice(d.q0.as_slice());
                    x[o + b.n..o + 2 * b.n].copy_from_slice(d.v0.as_slice());
                }
            }
        }
    }

    /// resp_i ← M_i⁻¹ H_iᵀ for a Lagrangian interaction (M factored).
    fn compute_resp(&mut self, k: usize) {
        let w = &mut self.inters[k];
        if !matches!(w.family, Family::Contact { .. }) {
            return;
        }
        for (j, &s) in w.systems.iter().enumerate() {
            let b = &self.sys[s];
            let n = b.n;
            w.resp[j].copy_from(&w.inp[j]);
            for col in w.resp[j].as_mut_slice().chunks_exact_mut(n) {
                b.solve_mass(col);
            }
        }
    }

    /// Factors M(q) of every system whose mass varies, from the state x.
    fn factor_masses(&mut self, x: &[f64]) -> Result<(), SimulationError> {
        for (b, s) in self.sys.iter_mut().zip(self.model.systems()) {
            if !b.lagrangian || b.mass_const {
                continue;
            }
            if let DynamicalSystem::LagrangianNonlinear(d) = &s.ds {
                if let Mass::Function(mf) = &d.mass {
                    mf(&x[b.off..b.off + b.n], &mut b.mat);
                    b.mass.copy_from_slice(b.mat.as_slice());
                    if !lu_factor(&mut b.mass, b.n, &mut b.piv) {
                        return Err(SimulationError::SingularIterationMatrix {
                            system: b.name.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// y and ẏ of a Lagrangian row, from the state x.
    pub fn gap(&self, row: usize, x: &[f64]) -> (f64, f64) {
        let k = self.row_inter[row];
        let w = &self.inters[k];
        let r = row - w.row0;
        let (mut y, mut yd) = (w.e[r], 0.0);
        for (j, &s) in w.systems.iter().enumerate() {
            let b = &self.sys[s];
            let h = &w.out[j];
            for c in 0..b.n {
                y += h[(r, c)] * x[b.off + c];
                yd += h[(r, c)] * x[b.off + b.n + c];
            }
        }
        (y, yd)
    }

    /// Rounding bound of y of a Lagrangian row at x: 4ε(Σ|H_rc q_c| + |b_r|).
    pub fn gap_noise(&self, row: usize, x: &[f64]) -> f64 {
        let k = self.row_inter[row];
        let w = &self.inters[k];
        let r = row - w.row0;
        let mut s = w.e[r].abs();
        for (j, &sy) in w.systems.iter().enumerate() {
            let b = &self.sys[sy];
            for c in 0..b.n {
                s += (w.out[j][(r, c)] * x[b.off + c]).abs();
            }
        }
        4.0 * f64::EPSILON * s
    }

    /// True for rows of unilateral Lagrangian contacts.
    pub fn is_contact_row(&self, row: usize) -> bool {
        matches!(
            self.inters[self.row_inter[row]].family,
            Family::Contact { .. }
        )
    }

    /// Restitution of a contact row.
    pub fn restitution(&self, row: usize) -> f64 {
        match self.inters[self.row_inter[row]].family {
            Family::Contact { restitution } => restitution,
            Family::Lcs | Family::Relay => 0.0,
        }
    }

    /// Dense Delassus matrix W_{kl} = Σ_i H_{α_k,i} M_i⁻¹ H_{α_l,i}ᵀ over
    /// the contact rows `rows` (resp up to date).
    pub fn delassus(&self, rows: &[usize], out: &mut DMatrix<f64>) {
        let k = rows.len();
        out.resize_mut(k, k, 0.0);
        out.fill(0.0);
        for (a, &ra) in rows.iter().enumerate() {
            let wa = &self.inters[self.row_inter[ra]];
            let r = ra - wa.row0;
            for (b, &rb) in rows.iter().enumerate() {
                let wb = &self.inters[self.row_inter[rb]];
                let c = rb - wb.row0;
                let mut v = 0.0;
                for (ja, &sa) in wa.systems.iter().enumerate() {
                    if let Some(jb) = wb.systems.iter().position(|&s| s == sa) {
                        let (h, resp) = (&wa.out[ja], &wb.resp[jb]);
                        for i in 0..h.ncols() {
                            v += h[(r, i)] * resp[(i, c)];
                        }
                    }
                }
                out[(a, b)] = v;
            }
        }
    }

    /// Brings M(q)-dependent data (M factors, M⁻¹Hᵀ) to the state x.
    pub fn prepare(&mut self, x: &[f64]) -> Result<(), SimulationError> {
        if !self.mass_const {
            self.factor_masses(x)?;
            for k in 0..self.inters.len() {
                self.compute_resp(k);
            }
        }
        Ok(())
    }

    /// Applies a velocity jump v_i += M_i⁻¹ H_iᵀ P over contact rows.
    pub fn apply_impulse(&self, rows: &[usize], p: &[f64], x: &mut [f64]) {
        for (&row, &pk) in rows.iter().zip(p) {
            if pk == 0.0 {
                continue;
            }
            let w = &self.inters[self.row_inter[row]];
            let c = row - w.row0;
            for (j, &s) in w.systems.iter().enumerate() {
                let b = &self.sys[s];
                for i in 0..b.n {
                    x[b.off + b.n + i] += w.resp[j][(i, c)] * pk;
                }
            }
        }
    }

    /// Sets the contact rows of I₂ (the new mode) and factors their
    /// Delassus matrix when M is constant.
    pub fn set_contacts(&mut self, rows: &[usize], t: f64) -> Result<(), SimulationError> {
        for r in 0..self.rows {
            if self.is_contact_row(r) {
                self.active[r] = false;
                self.lam[r] = 0.0;
            }
        }
        self.contacts.clear();
        self.contacts.extend_from_slice(rows);
        for &r in rows {
            self.active[r] = true;
        }
        let k = rows.len();
        self.del.resize(k * k, 0.0);
        self.del_piv.resize(k, 0);
        self.a_buf.resize(k, 0.0);
        self.del_ok = false;
        if self.mass_const && k > 0 {
            self.factor_delassus(t)?;
        }
        Ok(())
    }

    fn factor_delassus(&mut self, t: f64) -> Result<(), SimulationError> {
        let k = self.contacts.len();
        let mut w = DMatrix::zeros(k, k);
        self.delassus(&self.contacts, &mut w);
        self.del.copy_from_slice(w.as_slice());
        if !lu_factor(&mut self.del, k, &mut self.del_piv) {
            let name = self.inters[self.row_inter[self.contacts[0]]].name.clone();
            return Err(SimulationError::SingularMode {
                t,
                interaction: name,
                reason: "the Delassus matrix H M⁻¹ Hᵀ of the contacts in persistent contact is singular (redundant contacts)".into(),
            });
        }
        self.del_ok = true;
        Ok(())
    }

    /// Sets the active rows of a first-order interaction and factors D_AA.
    pub fn set_lcs_mode(
        &mut self,
        k: usize,
        active: &[bool],
        t: f64,
    ) -> Result<(), SimulationError> {
        let w = &mut self.inters[k];
        w.lcs_rows.clear();
        for r in 0..w.m {
            self.active[w.row0 + r] = active[r];
            if active[r] {
                w.lcs_rows.push(r);
            }
        }
        let na = w.lcs_rows.len();
        if na == 0 {
            return Ok(());
        }
        let d = w.d.as_ref();
        for (ci, &c) in w.lcs_rows.iter().enumerate() {
            for (ri, &r) in w.lcs_rows.iter().enumerate() {
                w.lcs_lu[ci * na + ri] = d.map_or(0.0, |d| d[(r, c)]);
            }
        }
        if !lu_factor(&mut w.lcs_lu[..na * na], na, &mut w.lcs_piv) {
            return Err(SimulationError::SingularMode {
                t,
                interaction: w.name.clone(),
                reason: format!(
                    "D restricted to the active rows {:?} is singular: the multipliers of this mode are not determined at the level of y (relative degree > 0 is not handled)",
                    w.lcs_rows
                ),
            });
        }
        Ok(())
    }

    /// Sets the modes of a relay interaction's rows and factors (C B) over
    /// its sliding rows.
    pub fn set_relay_mode(
        &mut self,
        k: usize,
        modes: &[RelayMode],
        t: f64,
    ) -> Result<(), SimulationError> {
        let w = &mut self.inters[k];
        w.relay_mode.copy_from_slice(modes);
        w.relay_rows.clear();
        for r in 0..w.m {
            let sliding = modes[r] == RelayMode::Sliding;
            self.active[w.row0 + r] = sliding;
            if sliding {
                w.relay_rows.push(r);
            }
        }
        let ns = w.relay_rows.len();
        for (ci, &c) in w.relay_rows.iter().enumerate() {
            for (ri, &r) in w.relay_rows.iter().enumerate() {
                w.relay_lu[ci * ns + ri] = w.cb[(r, c)];
            }
        }
        if ns > 0 && !lu_factor(&mut w.relay_lu[..ns * ns], ns, &mut w.relay_piv) {
            return Err(SimulationError::SingularMode {
                t,
                interaction: w.name.clone(),
                reason: format!(
                    "C B restricted to the sliding rows {:?} is singular: the equivalent control is not determined",
                    w.relay_rows
                ),
            });
        }
        Ok(())
    }

    /// The guard of a relay row from the last evaluation: y (λ = lb),
    /// −y (λ = ub), or the distance of λ to its nearer bound (sliding).
    pub fn relay_guard(&self, row: usize) -> Option<f64> {
        let w = &self.inters[self.row_inter[row]];
        if w.family != Family::Relay {
            return None;
        }
        let r = row - w.row0;
        Some(match w.relay_mode[r] {
            RelayMode::Lower => self.y_lcs[row],
            RelayMode::Upper => -self.y_lcs[row],
            RelayMode::Sliding => (self.lam[row] - w.lb[r]).min(w.ub[r] - self.lam[row]),
        })
    }

    /// c = C x + F u + e of a first-order interaction, from the state x.
    pub fn lcs_free_output(&self, k: usize, x: &[f64], c: &mut [f64]) {
        let w = &self.inters[k];
        c.copy_from_slice(&w.e);
        for (j, &s) in w.systems.iter().enumerate() {
            let b = &self.sys[s];
            for col in 0..b.n {
                let xc = x[b.off + col];
                if xc != 0.0 {
                    for r in 0..w.m {
                        c[r] += w.out[j][(r, col)] * xc;
                    }
                }
            }
        }
        if let Some(f) = &w.f {
            for col in 0..f.ncols() {
                for r in 0..w.m {
                    c[r] += f[(r, col)] * w.u[col];
                }
            }
        }
    }

    /// Adds B λ of a first-order interaction to out (the ẋ of its systems).
    pub fn add_lcs_input(&self, k: usize, lam: &[f64], out: &mut [f64]) {
        let w = &self.inters[k];
        for (j, &s) in w.systems.iter().enumerate() {
            let b = &self.sys[s];
            for col in 0..w.m {
                let l = lam[col];
                if l != 0.0 {
                    for i in 0..b.n {
                        out[b.off + i] += w.inp[j][(i, col)] * l;
                    }
                }
            }
        }
    }

    /// Smooth vector field without any interaction input: q̇ = v, and the
    /// free acceleration M⁻¹(F + g) in `acc`; ẋ = f + g for first order.
    fn free_field(&mut self, t: f64, x: &[f64], out: &mut [f64]) {
        for (b, s) in self.sys.iter_mut().zip(self.model.systems()) {
            let (o, n) = (b.off, b.n);
            match &s.ds {
                DynamicalSystem::LagrangianLinearTi(d) => {
                    let (q, v) = (&x[o..o + n], &x[o + n..o + 2 * n]);
                    out[o..o + n].copy_from_slice(v);
                    match &d.fext {
                        Some(f) => f.eval(t, &mut b.force),
                        None => b.force.iter_mut().for_each(|f| *f = 0.0),
                    }
                    if let Some(c) = &d.damping {
                        for j in 0..n {
                            for i in 0..n {
                                b.force[i] -= c[(i, j)] * v[j];
                            }
                        }
                    }
                    if let Some(k) = &d.stiffness {
                        for j in 0..n {
                            for i in 0..n {
                                b.force[i] -= k[(i, j)] * q[j];
                            }
                        }
                    }
                }
                DynamicalSystem::LagrangianNonlinear(d) => {
                    let (q, v) = (&x[o..o + n], &x[o + n..o + 2 * n]);
                    out[o..o + n].copy_from_slice(v);
                    match &d.fext {
                        Some(f) => f.eval(t, &mut b.force),
                        None => b.force.iter_mut().for_each(|f| *f = 0.0),
                    }
                    for f in [&d.fint, &d.fgyr].into_iter().flatten() {
                        f(t, q, v, &mut b.s1);
                        for i in 0..n {
                            b.force[i] -= b.s1[i];
                        }
                    }
                }
                DynamicalSystem::FirstOrderLinear(d) => {
                    d.a.eval(t, &mut b.mat);
                    let xs = &x[o..o + n];
                    let dst = &mut out[o..o + n];
                    match &d.b {
                        Some(bb) => bb.eval(t, dst),
                        None => dst.iter_mut().for_each(|v| *v = 0.0),
                    }
                    for j in 0..n {
                        let xj = xs[j];
                        if xj != 0.0 {
                            for i in 0..n {
                                dst[i] += b.mat[(i, j)] * xj;
                            }
                        }
                    }
                }
                DynamicalSystem::FirstOrderNonlinear(d) => {
                    (d.f)(t, &x[o..o + n], &mut out[o..o + n]);
                }
            }
            if b.has_control {
                if b.lagrangian {
                    for i in 0..n {
                        b.force[i] += b.control[i];
                    }
                } else {
                    for i in 0..n {
                        out[o + i] += b.control[i];
                    }
                }
            }
            if b.lagrangian {
                for i in 0..n {
                    b.acc[i] = b.force[i];
                }
                let mut acc = std::mem::take(&mut b.acc);
                b.solve_mass(&mut acc);
                b.acc = acc;
            }
        }
    }

    /// ÿ of contact rows without contact forces: (H M⁻¹ (F + g))_α, into out
    /// (one entry per row of `rows`), from `acc` of the last free field.
    pub fn free_output_acceleration(&self, rows: &[usize], out: &mut [f64]) {
        for (o, &row) in out.iter_mut().zip(rows) {
            let w = &self.inters[self.row_inter[row]];
            let r = row - w.row0;
            let mut a = 0.0;
            for (j, &s) in w.systems.iter().enumerate() {
                let b = &self.sys[s];
                for c in 0..b.n {
                    a += w.out[j][(r, c)] * b.acc[c];
                }
            }
            *o = a;
        }
    }

    /// The field without interaction inputs at (t, x): ẋ = f + g of the
    /// first-order systems in `out` (free accelerations in `acc`).
    pub fn first_order_field(
        &mut self,
        t: f64,
        x: &[f64],
        out: &mut [f64],
    ) -> Result<(), SimulationError> {
        self.prepare(x)?;
        self.free_field(t, x, out);
        Ok(())
    }

    /// Evaluates the free field at (t, x) (M(q) factored, free accelerations
    /// M⁻¹(F + g) in `acc`), for the event problems.
    pub fn free_accelerations(&mut self, t: f64, x: &[f64]) -> Result<(), SimulationError> {
        self.prepare(x)?;
        let mut out = std::mem::take(&mut self.fbuf);
        self.free_field(t, x, &mut out);
        self.fbuf = out;
        Ok(())
    }
}

impl OdeRhs for Dynamics {
    fn rhs(&mut self, t: f64, x: &[f64], out: &mut [f64]) -> Result<(), SimulationError> {
        self.evaluations += 1;
        if !self.mass_const {
            self.factor_masses(x)?;
        }
        self.free_field(t, x, out);
        // Contact forces of I₂.
        let k = self.contacts.len();
        if k > 0 {
            if !self.del_ok {
                for i in 0..self.inters.len() {
                    if !self.mass_const {
                        self.compute_resp(i);
                    }
                }
                self.factor_delassus(t)?;
                if !self.mass_const {
                    self.del_ok = false;
                }
            }
            let mut a = std::mem::take(&mut self.a_buf);
            self.free_output_acceleration(&self.contacts, &mut a);
            for v in a.iter_mut() {
                *v = -*v;
            }
            lu_solve(&self.del, k, &self.del_piv, &mut a);
            for (&row, &l) in self.contacts.iter().zip(&a) {
                self.lam[row] = l;
                let w = &self.inters[self.row_inter[row]];
                let c = row - w.row0;
                for (j, &s) in w.systems.iter().enumerate() {
                    let b = &mut self.sys[s];
                    for i in 0..b.n {
                        b.acc[i] += w.resp[j][(i, c)] * l;
                    }
                }
            }
            self.a_buf = a;
        }
        for b in &self.sys {
            if b.lagrangian {
                out[b.off + b.n..b.off + 2 * b.n].copy_from_slice(&b.acc);
            }
        }
        // First-order complementarity rows.
        for kk in 0..self.inters.len() {
            if self.inters[kk].family != Family::Lcs {
                continue;
            }
            let mut c = std::mem::take(&mut self.inters[kk].c_buf);
            self.lcs_free_output(kk, x, &mut c);
            let w = &mut self.inters[kk];
            let (row0, m) = (w.row0, w.m);
            let lam = &mut self.lam[row0..row0 + m];
            lam.iter_mut().for_each(|l| *l = 0.0);
            let na = w.lcs_rows.len();
            if na > 0 {
                let mut la = [0.0; 16];
                let mut big;
                let rhs: &mut [f64] = if na <= 16 {
                    &mut la[..na]
                } else {
                    big = vec![0.0; na];
                    &mut big
                };
                for (i, &r) in w.lcs_rows.iter().enumerate() {
                    rhs[i] = -c[r];
                }
                lu_solve(&w.lcs_lu[..na * na], na, &w.lcs_piv, rhs);
                for (i, &r) in w.lcs_rows.iter().enumerate() {
                    lam[r] = rhs[i];
                }
            }
            // y = c + D λ.
            let y = &mut self.y_lcs[row0..row0 + m];
            y.copy_from_slice(&c);
            if let Some(d) = &w.d {
                for col in 0..m {
                    let l = lam[col];
                    if l != 0.0 {
                        for r in 0..m {
                            y[r] += d[(r, col)] * l;
                        }
                    }
                }
            }
            self.inters[kk].c_buf = c;
            let lam_copy: &[f64] = &self.lam[row0..row0 + m];
            let w = &self.inters[kk];
            for (j, &s) in w.systems.iter().enumerate() {
                let b = &self.sys[s];
                for col in 0..m {
                    let l = lam_copy[col];
                    if l != 0.0 {
                        for i in 0..b.n {
                            out[b.off + i] += w.inp[j][(i, col)] * l;
                        }
                    }
                }
            }
        }
        // Relay rows: λ at its bound, or the equivalent control that keeps
        // ẏ = C (ẋ) = 0 on the sliding rows: (C B)_SS λ_S = −C_S (f + B λ_fixed).
        for kk in 0..self.inters.len() {
            if self.inters[kk].family != Family::Relay {
                continue;
            }
            let mut c = std::mem::take(&mut self.inters[kk].c_buf);
            self.lcs_free_output(kk, x, &mut c);
            let w = &self.inters[kk];
            let (row0, m) = (w.row0, w.m);
            self.y_lcs[row0..row0 + m].copy_from_slice(&c);
            for r in 0..m {
                self.lam[row0 + r] = match w.relay_mode[r] {
                    RelayMode::Lower => w.lb[r],
                    RelayMode::Upper => w.ub[r],
                    RelayMode::Sliding => 0.0,
                };
            }
            let ns = w.relay_rows.len();
            self.add_lcs_input(kk, &self.lam[row0..row0 + m], out);
            if ns > 0 {
                // c ← C ẋ with the fixed multipliers (the sliding ones are 0 here).
                let w = &self.inters[kk];
                c.iter_mut().for_each(|v| *v = 0.0);
                for (j, &sy) in w.systems.iter().enumerate() {
                    let b = &self.sys[sy];
                    for col in 0..b.n {
                        let v = out[b.off + col];
                        for r in 0..m {
                            c[r] += w.out[j][(r, col)] * v;
                        }
                    }
                }
                let mut sl = std::mem::take(&mut self.inters[kk].s_buf);
                sl.iter_mut().for_each(|v| *v = 0.0);
                let w = &self.inters[kk];
                for (i, &r) in w.relay_rows.iter().enumerate() {
                    sl[i] = -c[r];
                }
                lu_solve(&w.relay_lu[..ns * ns], ns, &w.relay_piv, &mut sl[..ns]);
                // Scatter to row positions (c is free again).
                c[..ns].copy_from_slice(&sl[..ns]);
                sl.iter_mut().for_each(|v| *v = 0.0);
                for (i, &r) in w.relay_rows.iter().enumerate() {
                    sl[r] = c[i];
                    self.lam[row0 + r] = c[i];
                }
                self.add_lcs_input(kk, &sl, out);
                self.inters[kk].s_buf = sl;
            }
            self.inters[kk].c_buf = c;
        }
        if out.iter().any(|v| !v.is_finite()) {
            let name = self
                .sys
                .iter()
                .find(|b| {
                    out[b.off..b.off + if b.lagrangian { 2 * b.n } else { b.n }]
                        .iter()
                        .any(|v| !v.is_finite())
                })
                .map_or_else(String::new, |b| b.name.clone());
            return Err(SimulationError::NonFinite {
                t,
                step: 0,
                object: name,
            });
        }
        Ok(())
    }
}
