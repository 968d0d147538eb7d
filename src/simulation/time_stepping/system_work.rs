//! Per-system work of one time step: the state, the iteration matrix W and
//! the free state (the state the step would reach without interaction
//! inputs). Everything is sized when the simulation is built.
//!
//! With W factored and `free` computed, a step's end state is
//! `free + W⁻¹·(input)`, scaled by the scheme (see [`SystemWork::input_scale`]).

use nalgebra::DMatrix;

use super::{small, SimulationError};
use crate::modelling::dynamical_system::{DynamicalSystem, Mass};
use crate::modelling::functions::fd_step;
use crate::numerics::dense_lu::{lu_factor, lu_solve};

/// The one-step scheme of a system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// Moreau–Jean θ-scheme on (q, v).
    MoreauJean,
    /// Euler–Moreau θ-scheme on x.
    EulerMoreau,
    /// Zero-order hold for ẋ = A x + b(t) + g + r with constant A: exact for
    /// the A part, with b(t_{k+1}), g and r held over the step.
    ZeroOrderHold,
}

pub(crate) struct SystemWork {
    pub name: String,
    pub n: usize,
    pub lagrangian: bool,
    pub scheme: Scheme,
    /// True when the free state is affine in the state and W is constant:
    /// one pass per step, no Newton loop.
    pub linear: bool,
    /// W is constant and already factored.
    w_fixed: bool,
    /// q (Lagrangian) or x (first order) at the end of the last step.
    pub q: Vec<f64>,
    /// v (Lagrangian; empty for first-order systems).
    pub v: Vec<f64>,
    /// q or x at the start of the step.
    pub q_start: Vec<f64>,
    /// v at the start of the step.
    pub v_start: Vec<f64>,
    /// The current Newton iterate of the unknown (v or x).
    pub iterate: Vec<f64>,
    /// Scratch for the updated unknown.
    pub unknown: Vec<f64>,
    /// Free unknown: iterate − W⁻¹ R(iterate) (input excluded). Unused by
    /// linear steps, which compute it in the state buffer itself (see
    /// [`Self::free_in_state`]).
    pub free: Vec<f64>,
    /// Linear models (one pass): the free unknown is computed into the
    /// state buffer (v, or x for first-order systems), read there by the
    /// one-step problem, and the interaction inputs are added to it in
    /// place — no buffer is copied.
    pub free_in_state: bool,
    /// W, column-major, LU-factored in place.
    pub w: Vec<f64>,
    pub piv: Vec<usize>,
    /// Zero-order hold: Φ = e^{Ah} and Γ = ∫₀ʰ e^{As} ds, column-major.
    zoh: Option<(Vec<f64>, Vec<f64>)>,
    /// Forces or vector field at the start of the step (F_k or f_k).
    f_start: Vec<f64>,
    /// Scratch vectors of length n.
    s1: Vec<f64>,
    s2: Vec<f64>,
    s3: Vec<f64>,
    /// Scratch n × n matrices (A(t), M(q), Jacobians).
    s4: Vec<f64>,
    s5: Vec<f64>,
    m1: DMatrix<f64>,
    m2: DMatrix<f64>,
    m3: DMatrix<f64>,
    /// M(q_k) of a nonlinear Lagrangian system.
    mass: DMatrix<f64>,
    /// Control input g held over the step (zero-order hold): added to the
    /// forces of a Lagrangian system, to the vector field of a first-order one.
    pub control: Vec<f64>,
    /// True when `control` is not all zeros (skips the work otherwise).
    pub has_control: bool,
    /// Moreau–Jean on a `LagrangianLinearTi` system without damping and
    /// stiffness, with constant (or no) external forces: the step's
    /// velocity increment without inputs,
    /// Δv = W⁻¹ h(θ F_ext + (1 − θ) F_ext), is the same at every step, so
    /// it is computed once and the free velocity is v_free = v_k + Δv (the
    /// same operations as the general formula, hence the same values).
    free_increment: Option<Vec<f64>>,
}

impl SystemWork {
    pub fn new(
        name: &str,
        ds: &DynamicalSystem,
        scheme: Scheme,
        h: f64,
        theta: f64,
    ) -> Result<Self, SimulationError> {
        let n = ds.dim();
        let lagrangian = ds.is_lagrangian();
        let (q0, v0) = match ds {
            DynamicalSystem::FirstOrderLinear(d) => (d.x0.as_slice().to_vec(), vec![]),
            DynamicalSystem::FirstOrderNonlinear(d) => (d.x0.as_slice().to_vec(), vec![]),
            DynamicalSystem::LagrangianLinearTi(d) => {
                (d.q0.as_slice().to_vec(), d.v0.as_slice().to_vec())
            }
            DynamicalSystem::LagrangianNonlinear(d) => {
                (d.q0.as_slice().to_vec(), d.v0.as_slice().to_vec())
            }
        };
        let linear = matches!(
            ds,
            DynamicalSystem::FirstOrderLinear(_) | DynamicalSystem::LagrangianLinearTi(_)
        );
        // Scratch matrices only where the scheme uses them (a small, dense
        // working set per system keeps large models in cache).
        let full = matches!(ds, DynamicalSystem::LagrangianNonlinear(_));
        let first_order_linear = matches!(ds, DynamicalSystem::FirstOrderLinear(_));
        let zoh_or_full = full || scheme == Scheme::ZeroOrderHold;
        let square = |k: usize| DMatrix::zeros(k, k);
        let mut work = SystemWork {
            name: name.to_string(),
            n,
            lagrangian,
            scheme,
            linear,
            w_fixed: false,
            q_start: q0.clone(),
            v_start: v0.clone(),
            iterate: vec![0.0; n],
            q: q0,
            v: v0,
            free: vec![0.0; n],
            free_in_state: false,
            unknown: vec![0.0; n],
            w: vec![0.0; n * n],
            piv: vec![0; n],
            zoh: None,
            f_start: vec![0.0; n],
            s1: vec![0.0; n],
            s2: vec![0.0; n],
            s3: vec![0.0; n],
            s4: vec![0.0; if full { n } else { 0 }],
            s5: vec![0.0; if zoh_or_full { n } else { 0 }],
            m1: square(if matches!(ds, DynamicalSystem::LagrangianLinearTi(_)) {
                0
            } else {
                n
            }),
            m2: square(if first_order_linear || full { n } else { 0 }),
            m3: square(if full { n } else { 0 }),
            mass: square(if full { n } else { 0 }),
            control: vec![0.0; n],
            has_control: false,
            free_increment: None,
        };
        match ds {
            DynamicalSystem::LagrangianLinearTi(d) => {
                // W = M + hθC + h²θ²K, constant.
                let mut w = d.mass.clone();
                if let Some(c) = &d.damping {
                    w += c * (h * theta);
                }
                if let Some(k) = &d.stiffness {
                    w += k * (h * h * theta * theta);
                }
                work.w.copy_from_slice(w.as_slice());
                work.factor_w()?;
                work.w_fixed = true;
                let constant_forces = d.fext.as_ref().is_none_or(|f| f.is_constant());
                if constant_forces && d.damping.is_none() && d.stiffness.is_none() {
                    // rhs = h(θ F_ext(t₁) + (1 − θ) F_ext(t₀)) with F_ext(t₁) = F_ext(t₀).
                    let mut rhs = vec![0.0; n];
                    if let Some(f) = &d.fext {
                        f.eval(0.0, &mut work.s2);
                        f.eval(0.0, &mut work.s3);
                        for i in 0..n {
                            rhs[i] = h * (theta * work.s2[i] + (1.0 - theta) * work.s3[i]);
                        }
                    }
                    lu_solve(&work.w, n, &work.piv, &mut rhs);
                    work.free_increment = Some(rhs);
                }
            }
            DynamicalSystem::FirstOrderLinear(d) => match scheme {
                Scheme::ZeroOrderHold => {
                    if !d.a.is_constant() {
                        return Err(SimulationError::Unsupported(format!(
                            "system '{name}': the zero-order-hold scheme needs a constant A"
                        )));
                    }
                    let mut a = DMatrix::zeros(n, n);
                    d.a.eval(0.0, &mut a);
                    // exp(h·[[A, I], [0, 0]]) = [[Φ, Γ], [0, I]].
                    let mut aug = DMatrix::zeros(2 * n, 2 * n);
                    aug.view_mut((0, 0), (n, n)).copy_from(&(a * h));
                    for i in 0..n {
                        aug[(i, n + i)] = h;
                    }
                    let e = aug.exp();
                    let phi = e.view((0, 0), (n, n)).into_owned();
                    let gamma = e.view((0, n), (n, n)).into_owned();
                    if !(phi.iter().chain(gamma.iter()).all(|x| x.is_finite())) {
                        return Err(SimulationError::Unsupported(format!(
                            "system '{name}': e^(Ah) overflows for this step"
                        )));
                    }
                    work.zoh = Some((phi.as_slice().to_vec(), gamma.as_slice().to_vec()));
                    work.w_fixed = true;
                }
                _ => {
                    if d.a.is_constant() {
                        let mut a = DMatrix::zeros(n, n);
                        d.a.eval(0.0, &mut a);
                        work.set_first_order_w(&a, h, theta);
                        work.factor_w()?;
                        work.w_fixed = true;
                    }
                }
            },
            DynamicalSystem::LagrangianNonlinear(d) => {
                if let Mass::Constant(m) = &d.mass {
                    work.mass.copy_from(m);
                }
            }
            DynamicalSystem::FirstOrderNonlinear(_) => {}
        }
        Ok(work)
    }

    /// True when W is constant (factored once).
    pub fn w_is_fixed(&self) -> bool {
        self.w_fixed
    }

    /// W = I − hθA.
    fn set_first_order_w(&mut self, a: &DMatrix<f64>, h: f64, theta: f64) {
        let n = self.n;
        for j in 0..n {
            for i in 0..n {
                self.w[j * n + i] = if i == j { 1.0 } else { 0.0 } - h * theta * a[(i, j)];
            }
        }
    }

    fn factor_w(&mut self) -> Result<(), SimulationError> {
        if lu_factor(&mut self.w, self.n, &mut self.piv) {
            Ok(())
        } else {
            Err(SimulationError::SingularIterationMatrix {
                system: self.name.clone(),
            })
        }
    }

    /// out ← W⁻¹ out.
    pub fn solve_w(&self, out: &mut [f64]) {
        lu_solve(&self.w, self.n, &self.piv, out);
    }

    /// How an interaction input enters the unknown: the unknown is
    /// `free + scale · W⁻¹ (input)` (Moreau–Jean: p, scale 1; Euler–Moreau:
    /// r, scale h), or `free + Γ r` for the zero-order hold.
    pub fn input_response(&mut self, h: f64, input: &mut [f64]) {
        match self.scheme {
            Scheme::MoreauJean => self.solve_w(input),
            Scheme::EulerMoreau => {
                self.solve_w(input);
                input.iter_mut().for_each(|x| *x *= h);
            }
            Scheme::ZeroOrderHold => {
                let (_, gamma) = self.zoh.as_ref().expect("zero-order hold data");
                self.s5.copy_from_slice(input);
                small::matvec(gamma, &self.s5, input);
            }
        }
    }

    /// Starts a step from t_k: saves the start state, evaluates the data at
    /// t_k (and at t_{k+1} where W depends on it) and sets the iterate to the
    /// start value.
    pub fn begin_step(
        &mut self,
        ds: &DynamicalSystem,
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        self.q_start.copy_from_slice(&self.q);
        self.v_start.copy_from_slice(&self.v);
        if self.lagrangian {
            self.iterate.copy_from_slice(&self.v);
        } else {
            self.iterate.copy_from_slice(&self.q);
        }
        match ds {
            DynamicalSystem::FirstOrderLinear(d) => {
                if !self.w_fixed {
                    // A(t) varies: W = I − hθA(t_{k+1}).
                    d.a.eval(t1, &mut self.m1);
                    let a = std::mem::replace(&mut self.m1, DMatrix::zeros(0, 0));
                    self.set_first_order_w(&a, h, theta);
                    self.m1 = a;
                    self.factor_w()?;
                }
            }
            DynamicalSystem::FirstOrderNonlinear(d) => {
                (d.f)(t0, &self.q_start, &mut self.f_start);
            }
            DynamicalSystem::LagrangianNonlinear(d) => {
                lagrangian_forces(
                    d,
                    t0,
                    &self.q_start,
                    &self.v_start,
                    &mut self.f_start,
                    &mut self.s1,
                );
            }
            DynamicalSystem::LagrangianLinearTi(_) => {}
        }
        Ok(())
    }

    /// Computes `free` (and, for nonlinear systems, W at the iterate) from
    /// the current iterate. Returns an error if W is singular.
    #[inline]
    pub fn compute_free(
        &mut self,
        ds: &DynamicalSystem,
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        if self.free_in_state && self.free_increment.is_some() && !self.has_control {
            // v_free = v_k + Δv (undamped LTI Lagrangian without input).
            let dv = self.free_increment.as_deref().unwrap_or_default();
            small::sum_into(&mut self.v, &self.v_start, dv);
            return Ok(());
        }
        self.compute_free_general(ds, t0, t1, h, theta)
    }

    fn compute_free_general(
        &mut self,
        ds: &DynamicalSystem,
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        if self.free_in_state {
            // Two linear schemes straight into the state buffer: v_free =
            // v_k + Δv (undamped LTI Lagrangian without input), x_free =
            // Φ x_k + Γ (b(t_{k+1}) + g) (zero-order hold); the operations
            // of the general code below.
            match ds {
                DynamicalSystem::LagrangianLinearTi(_) if !self.has_control => {
                    if let Some(dv) = &self.free_increment {
                        for ((v, &v0), &d) in self.v.iter_mut().zip(&self.v_start).zip(dv) {
                            *v = v0 + d;
                        }
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        // The free unknown goes to `free`, or to the state buffer.
        let mut free = std::mem::take(match (self.free_in_state, self.lagrangian) {
            (false, _) => &mut self.free,
            (true, true) => &mut self.v,
            (true, false) => &mut self.q,
        });
        let result = self.compute_free_into(&mut free, ds, t0, t1, h, theta);
        *match (self.free_in_state, self.lagrangian) {
            (false, _) => &mut self.free,
            (true, true) => &mut self.v,
            (true, false) => &mut self.q,
        } = free;
        result
    }

    /// [`Self::compute_free`] into `free`.
    #[inline(always)]
    fn compute_free_into(
        &mut self,
        free: &mut [f64],
        ds: &DynamicalSystem,
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        let n = self.n;
        match ds {
            DynamicalSystem::LagrangianLinearTi(_)
                if self.free_increment.is_some() && !self.has_control =>
            {
                let dv = self.free_increment.as_deref().unwrap_or_default();
                for ((f, &v), &d) in free.iter_mut().zip(&self.v_start).zip(dv) {
                    *f = v + d;
                }
            }
            DynamicalSystem::LagrangianLinearTi(d) => {
                // rhs = h(θF_ext(t₁) + (1−θ)F_ext(t₀) + g) − hC v_k − hK(q_k + hθ v_k);
                // free = v_k + W⁻¹ rhs.
                let rhs = &mut self.s1;
                rhs.iter_mut().for_each(|x| *x = 0.0);
                if let Some(f) = &d.fext {
                    f.eval(t1, &mut self.s2);
                    f.eval(t0, &mut self.s3);
                    for i in 0..n {
                        rhs[i] = h * (theta * self.s2[i] + (1.0 - theta) * self.s3[i]);
                    }
                }
                if self.has_control {
                    for i in 0..n {
                        rhs[i] += h * self.control[i];
                    }
                }
                if let Some(c) = &d.damping {
                    for j in 0..n {
                        let vj = self.v_start[j];
                        for i in 0..n {
                            rhs[i] -= h * c[(i, j)] * vj;
                        }
                    }
                }
                if let Some(k) = &d.stiffness {
                    for j in 0..n {
                        let qj = self.q_start[j] + h * theta * self.v_start[j];
                        for i in 0..n {
                            rhs[i] -= h * k[(i, j)] * qj;
                        }
                    }
                }
                lu_solve(&self.w, n, &self.piv, rhs);
                for i in 0..n {
                    free[i] = self.v_start[i] + rhs[i];
                }
            }
            DynamicalSystem::FirstOrderLinear(d) => match self.scheme {
                Scheme::ZeroOrderHold => {
                    // free = Φ x_k + Γ (b(t_{k+1}) + g).
                    let (phi, gamma) = self.zoh.as_ref().expect("zero-order hold data");
                    small::matvec(phi, &self.q_start, free);
                    let b = d.b.as_ref();
                    if b.is_some() || self.has_control {
                        match b {
                            Some(b) => b.eval(t1, &mut self.s1),
                            None => self.s1.iter_mut().for_each(|x| *x = 0.0),
                        }
                        if self.has_control {
                            for (s, g) in self.s1.iter_mut().zip(&self.control) {
                                *s += g;
                            }
                        }
                        small::matvec_add(gamma, &self.s1, free);
                    }
                }
                _ => {
                    // free = W⁻¹ [x_k + h(1−θ)(A(t₀) x_k + b(t₀)) + hθ b(t₁) + h g].
                    d.a.eval(t0, &mut self.m2);
                    let rhs = &mut self.s1;
                    for i in 0..n {
                        let mut ax = 0.0;
                        for j in 0..n {
                            ax += self.m2[(i, j)] * self.q_start[j];
                        }
                        rhs[i] = self.q_start[i] + h * (1.0 - theta) * ax;
                    }
                    if let Some(b) = &d.b {
                        b.eval(t0, &mut self.s2);
                        b.eval(t1, &mut self.s3);
                        for i in 0..n {
                            rhs[i] += h * ((1.0 - theta) * self.s2[i] + theta * self.s3[i]);
                        }
                    }
                    if self.has_control {
                        for i in 0..n {
                            rhs[i] += h * self.control[i];
                        }
                    }
                    lu_solve(&self.w, n, &self.piv, rhs);
                    free.copy_from_slice(rhs);
                }
            },
            DynamicalSystem::FirstOrderNonlinear(d) => {
                // R(x) = x − x_k − h[θ f(t₁, x) + (1−θ) f_k + g];  W = I − hθ ∂f/∂x(t₁, x).
                let x = &self.iterate;
                (d.f)(t1, x, &mut self.s2);
                match &d.jacobian {
                    Some(j) => j(t1, x, &mut self.m1),
                    None => fd_jacobian(
                        |xx, out| (d.f)(t1, xx, out),
                        x,
                        &self.s2,
                        &mut self.s3,
                        &mut self.s1,
                        &mut self.m1,
                    ),
                }
                for j in 0..n {
                    for i in 0..n {
                        self.w[j * n + i] =
                            if i == j { 1.0 } else { 0.0 } - h * theta * self.m1[(i, j)];
                    }
                }
                self.factor_w()?;
                for i in 0..n {
                    self.s1[i] = self.iterate[i]
                        - self.q_start[i]
                        - h * (theta * self.s2[i]
                            + (1.0 - theta) * self.f_start[i]
                            + self.control[i]);
                }
                lu_solve(&self.w, n, &self.piv, &mut self.s1);
                for i in 0..n {
                    free[i] = self.iterate[i] - self.s1[i];
                }
            }
            DynamicalSystem::LagrangianNonlinear(d) => {
                // q(v) = q_k + h((1−θ)v_k + θv);
                // R(v) = M(q_θ)(v − v_k) − h[θF(t₁, q(v), v) + (1−θ)F_k + g];
                // W = M(q_θ) − hθ(∂F/∂v + hθ ∂F/∂q), with M(q) taken at
                // q_θ = q_k + θ(q(v) − q_k), the θ-point of the step (at q_k
                // the scheme would be first order only); the derivative of
                // M(q_θ) with respect to v is left out of W.
                for i in 0..n {
                    self.s4[i] = self.q_start[i]
                        + h * ((1.0 - theta) * self.v_start[i] + theta * self.iterate[i]);
                }
                if let Mass::Function(mf) = &d.mass {
                    for i in 0..n {
                        self.s3[i] = self.q_start[i] + theta * (self.s4[i] - self.q_start[i]);
                    }
                    mf(&self.s3, &mut self.mass);
                }
                lagrangian_forces(d, t1, &self.s4, &self.iterate, &mut self.s2, &mut self.s1);
                // m2 ← ∂F/∂v + hθ ∂F/∂q.
                force_jacobian(
                    d,
                    t1,
                    &self.s4,
                    &self.iterate,
                    false,
                    &self.s2,
                    &mut self.m1,
                    &mut self.m3,
                    &mut self.s1,
                    &mut self.s3,
                    &mut self.s5,
                );
                self.m2.copy_from(&self.m1);
                force_jacobian(
                    d,
                    t1,
                    &self.s4,
                    &self.iterate,
                    true,
                    &self.s2,
                    &mut self.m1,
                    &mut self.m3,
                    &mut self.s1,
                    &mut self.s3,
                    &mut self.s5,
                );
                for j in 0..n {
                    for i in 0..n {
                        let dfdx = self.m2[(i, j)] + h * theta * self.m1[(i, j)];
                        self.w[j * n + i] = self.mass[(i, j)] - h * theta * dfdx;
                    }
                }
                self.factor_w()?;
                for i in 0..n {
                    let mut mv = 0.0;
                    for j in 0..n {
                        mv += self.mass[(i, j)] * (self.iterate[j] - self.v_start[j]);
                    }
                    self.s1[i] = mv
                        - h * (theta * self.s2[i]
                            + (1.0 - theta) * self.f_start[i]
                            + self.control[i]);
                }
                lu_solve(&self.w, n, &self.piv, &mut self.s1);
                for i in 0..n {
                    free[i] = self.iterate[i] - self.s1[i];
                }
            }
        }
        Ok(())
    }

    /// Prepares a step of a linear system from t_k to t_{k+1}: refactors
    /// W = I − hθA(t_{k+1}) when A varies (the only part that can fail, so it
    /// comes before any state buffer changes).
    #[inline]
    pub fn prepare_linear_step(
        &mut self,
        ds: &DynamicalSystem,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        if self.w_fixed {
            return Ok(());
        }
        self.refactor_w(ds, t1, h, theta)
    }

    fn refactor_w(
        &mut self,
        ds: &DynamicalSystem,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<(), SimulationError> {
        if let DynamicalSystem::FirstOrderLinear(d) = ds {
            d.a.eval(t1, &mut self.m1);
            let a = std::mem::replace(&mut self.m1, DMatrix::zeros(0, 0));
            self.set_first_order_w(&a, h, theta);
            self.m1 = a;
            self.factor_w()?;
        }
        Ok(())
    }

    /// A linear step starts from the state the last one ended with: it
    /// becomes the start state (copied for small systems, whose vectors are
    /// a few numbers; swapped otherwise), and the state buffers, now free,
    /// are written by the step.
    #[inline(always)]
    pub fn swap_start(&mut self) {
        if self.n <= small::MAX {
            small::copy(&mut self.q_start, &self.q);
            small::copy(&mut self.v_start, &self.v);
        } else {
            std::mem::swap(&mut self.q, &mut self.q_start);
            std::mem::swap(&mut self.v, &mut self.v_start);
        }
    }

    /// The whole linear step of a system no active interaction acts on:
    /// start state, free unknown (the new unknown), q. False when the new
    /// state is not finite.
    #[inline(always)]
    pub fn linear_step_alone(
        &mut self,
        ds: &DynamicalSystem,
        t0: f64,
        t1: f64,
        h: f64,
        theta: f64,
    ) -> Result<bool, SimulationError> {
        self.swap_start();
        self.compute_free(ds, t0, t1, h, theta)?;
        Ok(self.finish_linear_step(h, theta))
    }

    /// Puts back the state of the start of a linear step that failed.
    pub fn restore_start(&mut self) {
        self.q.copy_from_slice(&self.q_start);
        self.v.copy_from_slice(&self.v_start);
    }

    /// The free unknown (v_free or x_free) of the step.
    #[inline]
    pub fn free_values(&self) -> &[f64] {
        match (self.free_in_state, self.lagrangian) {
            (false, _) => &self.free,
            (true, true) => &self.v,
            (true, false) => &self.q,
        }
    }

    /// The unknown being assembled by a linear step.
    pub fn unknown_mut(&mut self) -> &mut [f64] {
        if self.lagrangian {
            &mut self.v
        } else {
            &mut self.q
        }
    }

    /// Ends a linear step once the unknown is complete: for Lagrangian
    /// systems q_{k+1} = q_k + h((1−θ)v_k + θ v_{k+1}). Returns false when
    /// the new state is not finite.
    #[inline(always)]
    pub fn finish_linear_step(&mut self, h: f64, theta: f64) -> bool {
        let mut finite = true;
        if self.lagrangian {
            let a = 1.0 - theta;
            finite = small::position_update(
                &mut self.q,
                &self.q_start,
                &self.v_start,
                &self.v,
                h,
                a,
                theta,
            );
        } else {
            for &x in &self.q {
                finite &= x.is_finite();
            }
        }
        finite
    }

    /// [`Self::set_unknown`] from the `unknown` buffer, returning the change
    /// relative to 1 + ‖unknown‖∞ (NaN when not finite).
    pub fn take_unknown(&mut self, h: f64, theta: f64) -> f64 {
        let unknown = std::mem::take(&mut self.unknown);
        let scale = 1.0 + unknown.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let c = self.set_unknown(&unknown, h, theta) / scale;
        self.unknown = unknown;
        c
    }

    /// Sets the unknown to `unknown` (v or x) and updates q for Lagrangian
    /// systems: q_{k+1} = q_k + h((1−θ)v_k + θ v_{k+1}). Returns the change
    /// of the unknown from the previous iterate (max norm), NaN when the new
    /// state is not finite.
    pub fn set_unknown(&mut self, unknown: &[f64], h: f64, theta: f64) -> f64 {
        let mut change = 0.0f64;
        let mut finite = true;
        for i in 0..self.n {
            change = change.max((unknown[i] - self.iterate[i]).abs());
            finite &= unknown[i].is_finite();
        }
        self.iterate.copy_from_slice(unknown);
        if self.lagrangian {
            self.v.copy_from_slice(unknown);
            for i in 0..self.n {
                self.q[i] =
                    self.q_start[i] + h * ((1.0 - theta) * self.v_start[i] + theta * self.v[i]);
                finite &= self.q[i].is_finite();
            }
        } else {
            self.q.copy_from_slice(unknown);
        }
        // NaN when the new state is not finite (`max` would skip a NaN).
        if finite {
            change
        } else {
            f64::NAN
        }
    }
}

/// out ← F(t, q, v) = F_ext(t) − F_int(t, q, v) − F_gyr(q, v).
fn lagrangian_forces(
    d: &crate::modelling::dynamical_system::LagrangianNonlinear,
    t: f64,
    q: &[f64],
    v: &[f64],
    out: &mut [f64],
    scratch: &mut [f64],
) {
    match &d.fext {
        Some(f) => f.eval(t, out),
        None => out.iter_mut().for_each(|x| *x = 0.0),
    }
    if let Some(fi) = &d.fint {
        fi(t, q, v, scratch);
        out.iter_mut()
            .zip(scratch.iter())
            .for_each(|(o, s)| *o -= s);
    }
    if let Some(fg) = &d.fgyr {
        fg(t, q, v, scratch);
        out.iter_mut()
            .zip(scratch.iter())
            .for_each(|(o, s)| *o -= s);
    }
}

/// out ← ∂F/∂q (`wrt_q`) or ∂F/∂v of F = F_ext − F_int − F_gyr, from the
/// user's Jacobians when all needed ones are given, else by forward
/// differences around `f` = F(t, q, v).
#[allow(clippy::too_many_arguments)]
fn force_jacobian(
    d: &crate::modelling::dynamical_system::LagrangianNonlinear,
    t: f64,
    q: &[f64],
    v: &[f64],
    wrt_q: bool,
    f: &[f64],
    out: &mut DMatrix<f64>,
    tmp: &mut DMatrix<f64>,
    scratch: &mut [f64],
    shifted: &mut [f64],
    fplus: &mut [f64],
) {
    let (ji, jg) = if wrt_q {
        (&d.fint_jacobian_q, &d.fgyr_jacobian_q)
    } else {
        (&d.fint_jacobian_v, &d.fgyr_jacobian_v)
    };
    let int_ok = d.fint.is_none() || ji.is_some();
    let gyr_ok = d.fgyr.is_none() || jg.is_some();
    out.fill(0.0);
    if int_ok && gyr_ok {
        // ∂F/∂x = −∂F_int/∂x − ∂F_gyr/∂x.
        let given = [(d.fint.is_some(), ji), (d.fgyr.is_some(), jg)];
        for (present, j) in given {
            if let (true, Some(j)) = (present, j) {
                j(t, q, v, tmp);
                *out -= &*tmp;
            }
        }
        return;
    }
    let n = q.len();
    shifted.copy_from_slice(if wrt_q { q } else { v });
    for c in 0..n {
        let x0 = shifted[c];
        let dx = fd_step(x0);
        shifted[c] = x0 + dx;
        if wrt_q {
            lagrangian_forces(d, t, shifted, v, fplus, scratch);
        } else {
            lagrangian_forces(d, t, q, shifted, fplus, scratch);
        }
        shifted[c] = x0;
        for r in 0..n {
            out[(r, c)] = (fplus[r] - f[r]) / dx;
        }
    }
}

/// out ← ∂f/∂x by forward differences around `fx` = f(x).
fn fd_jacobian(
    f: impl Fn(&[f64], &mut [f64]),
    x: &[f64],
    fx: &[f64],
    shifted: &mut [f64],
    fplus: &mut [f64],
    out: &mut DMatrix<f64>,
) {
    let n = x.len();
    shifted.copy_from_slice(x);
    for c in 0..n {
        let x0 = shifted[c];
        let dx = fd_step(x0);
        shifted[c] = x0 + dx;
        f(shifted, fplus);
        shifted[c] = x0;
        for r in 0..fx.len() {
            out[(r, c)] = (fplus[r] - fx[r]) / dx;
        }
    }
}
