//! Per-system work of one time step: the state, the iteration matrix W and
//! the free state (the state the step would reach without interaction
//! inputs). Everything is sized when the simulation is built.
//!
//! With W factored and `free` computed, a step's end state is
//! `free + W⁻¹·(input)`, scaled by the scheme (see
//! [`SystemWork::input_response`]).
//!
//! This module holds the state and W common to every scheme; each scheme's
//! equations are in its own module: [`moreau_jean`] (Lagrangian systems,
//! linear time-invariant and nonlinear), [`euler_moreau`] (first-order
//! systems) and [`zero_order_hold`] (first-order linear systems with
//! constant A).

mod euler_moreau;
mod moreau_jean;
mod zero_order_hold;

use nalgebra::DMatrix;

use self::zero_order_hold::ZohWork;
use crate::modelling::dynamical_system::{DynamicalSystem, Mass};
use crate::numerics::dense_lu::{lu_factor, lu_solve};
use crate::simulation::error::SimulationError;

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
    /// Schatzman–Paoli two-step scheme on q (`LagrangianLinearTi` only):
    /// W = M + (h/2) C + h²θ K, the unknown is q_{k+1}.
    SchatzmanPaoli,
    /// D1-minus-linear (`LagrangianLinearTi` only): W = M, the unknowns are
    /// accelerations (force problems) and v_{k+1} (impact problem).
    D1MinusLinear,
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
    /// Schatzman–Paoli: q_{k−1}, the position one step before the current
    /// one (part of the state; empty for other schemes).
    pub q_prev: Vec<f64>,
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
    /// Zero-order hold: Φ, Γ and their operands.
    zoh: Option<ZohWork>,
    /// Forces or vector field at the start of the step (F_k or f_k).
    f_start: Vec<f64>,
    /// The right-hand side solved with W: the Newton residual, or the
    /// load of a linear step (length n).
    rhs: Vec<f64>,
    /// Forces, external forces or b at t_{k+1} (length n).
    at_end: Vec<f64>,
    /// External forces or b at t_k (length n).
    at_start: Vec<f64>,
    /// Nonlinear Lagrangian: q(v) = q_k + h((1−θ)v_k + θv) at the iterate v.
    q_iterate: Vec<f64>,
    /// Nonlinear Lagrangian with M(q): q_θ = q_k + θ(q(v) − q_k), where M
    /// is evaluated.
    q_theta: Vec<f64>,
    /// Nonlinear Lagrangian: one part of the forces (F_int or F_gyr).
    force_part: Vec<f64>,
    /// Nonlinear systems, finite differences: the shifted argument and the
    /// function's value there.
    fd_point: Vec<f64>,
    fd_value: Vec<f64>,
    /// First-order linear, Euler–Moreau: A(t_k) and A(t_{k+1}).
    a_start: DMatrix<f64>,
    a_end: DMatrix<f64>,
    /// Nonlinear systems: ∂f/∂x (first order) or ∂F/∂q (Lagrangian).
    jacobian: DMatrix<f64>,
    /// Nonlinear Lagrangian: ∂F/∂v.
    jacobian_v: DMatrix<f64>,
    /// Nonlinear Lagrangian: one user Jacobian term (of F_int or F_gyr).
    jacobian_term: DMatrix<f64>,
    /// Nonlinear Lagrangian: M, constant or M(q_θ) at the iterate.
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
        // Scratch only where the scheme uses it (a small, dense working set
        // per system keeps large models in cache).
        let lagrangian_nonlinear = matches!(ds, DynamicalSystem::LagrangianNonlinear(_));
        let nonlinear =
            lagrangian_nonlinear || matches!(ds, DynamicalSystem::FirstOrderNonlinear(_));
        let euler_moreau_linear =
            matches!(ds, DynamicalSystem::FirstOrderLinear(_)) && scheme != Scheme::ZeroOrderHold;
        let vector = |used: bool| vec![0.0; if used { n } else { 0 }];
        let square = |used: bool| {
            let k = if used { n } else { 0 };
            DMatrix::zeros(k, k)
        };
        let mut work = SystemWork {
            name: name.to_string(),
            n,
            lagrangian,
            scheme,
            linear,
            w_fixed: false,
            q_start: q0.clone(),
            q_prev: if scheme == Scheme::SchatzmanPaoli {
                q0.clone()
            } else {
                vec![]
            },
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
            rhs: vec![0.0; n],
            at_end: vec![0.0; n],
            at_start: vec![0.0; n],
            q_iterate: vector(lagrangian_nonlinear),
            q_theta: vector(lagrangian_nonlinear),
            force_part: vector(lagrangian_nonlinear),
            fd_point: vector(nonlinear),
            fd_value: vector(nonlinear),
            a_start: square(euler_moreau_linear),
            a_end: square(euler_moreau_linear),
            jacobian: square(nonlinear),
            jacobian_v: square(lagrangian_nonlinear),
            jacobian_term: square(lagrangian_nonlinear),
            mass: square(lagrangian_nonlinear),
            control: vec![0.0; n],
            has_control: false,
            free_increment: None,
        };
        match ds {
            DynamicalSystem::LagrangianLinearTi(d) if scheme == Scheme::SchatzmanPaoli => {
                // W = M + (h/2) C + h²θ K.
                let mut w = d.mass.clone();
                if let Some(c) = &d.damping {
                    w += c * (0.5 * h);
                }
                if let Some(k) = &d.stiffness {
                    w += k * (h * h * theta);
                }
                work.set_fixed_w(&w)?;
            }
            DynamicalSystem::LagrangianLinearTi(d) if scheme == Scheme::D1MinusLinear => {
                work.set_fixed_w(&d.mass)?;
            }
            DynamicalSystem::LagrangianLinearTi(d) => {
                work.setup_lagrangian_linear_ti(d, h, theta)?
            }
            DynamicalSystem::FirstOrderLinear(d) => match scheme {
                Scheme::ZeroOrderHold => {
                    work.zoh = Some(ZohWork::new(name, n, d, h)?);
                    work.w_fixed = true;
                }
                _ => work.setup_first_order_linear(d, h, theta)?,
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

    pub(super) fn factor_w(&mut self) -> Result<(), SimulationError> {
        if lu_factor(&mut self.w, self.n, &mut self.piv) {
            Ok(())
        } else {
            Err(SimulationError::SingularIterationMatrix {
                system: self.name.clone(),
            })
        }
    }

    /// W ← `w`, factored once for the run.
    fn set_fixed_w(&mut self, w: &DMatrix<f64>) -> Result<(), SimulationError> {
        self.w.copy_from_slice(w.as_slice());
        self.factor_w()?;
        self.w_fixed = true;
        Ok(())
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
            Scheme::MoreauJean | Scheme::SchatzmanPaoli | Scheme::D1MinusLinear => {
                self.solve_w(input)
            }
            Scheme::EulerMoreau => {
                self.solve_w(input);
                input.iter_mut().for_each(|x| *x *= h);
            }
            Scheme::ZeroOrderHold => self.zero_order_hold_response(input),
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
                    self.refactor_first_order_w(d, t1, h, theta)?;
                }
            }
            DynamicalSystem::FirstOrderNonlinear(d) => {
                (d.f)(t0, &self.q_start, &mut self.f_start);
            }
            DynamicalSystem::LagrangianNonlinear(d) => self.begin_lagrangian_nonlinear(d, t0),
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
        if self.free_in_state {
            // The two linear schemes whose free unknown is computed straight
            // into the state buffer, from the start state (the operations of
            // the general code, without its dispatch).
            if let (Some(z), DynamicalSystem::FirstOrderLinear(d)) = (&mut self.zoh, ds) {
                // x_free = Φ x_k + Γ (b(t_{k+1}) + g) (zero-order hold).
                let g = self.has_control.then_some(self.control.as_slice());
                z.free(&self.q_start, d.b.as_ref(), g, t1, &mut self.q);
                return Ok(());
            }
            if let (Some(dv), false) = (&self.free_increment, self.has_control) {
                // v_free = v_k + Δv (undamped LTI Lagrangian without input).
                for ((v, &v0), &d) in self.v.iter_mut().zip(&self.v_start).zip(dv) {
                    *v = v0 + d;
                }
                return Ok(());
            }
        }
        self.compute_free_general(ds, t0, t1, h, theta)
    }

    /// [`Self::compute_free`] for every other case: kept out of line so
    /// that the linear routes above stay small where they are inlined.
    #[inline(never)]
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
        match ds {
            DynamicalSystem::LagrangianLinearTi(d) => {
                self.free_lagrangian_linear_ti(d, free, t0, t1, h, theta)
            }
            DynamicalSystem::FirstOrderLinear(d) => match self.scheme {
                Scheme::ZeroOrderHold => self.free_zero_order_hold(d, free, t1),
                _ => self.free_first_order_linear(d, free, t0, t1, h, theta),
            },
            DynamicalSystem::FirstOrderNonlinear(d) => {
                self.free_first_order_nonlinear(d, free, t1, h, theta)?
            }
            DynamicalSystem::LagrangianNonlinear(d) => {
                self.free_lagrangian_nonlinear(d, free, t1, h, theta)?
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
            self.refactor_first_order_w(d, t1, h, theta)?;
        }
        Ok(())
    }

    /// A linear step starts from the state the last one ended with: it
    /// becomes the start state (copied), and the state buffers are written
    /// by the step.
    #[inline(always)]
    pub fn swap_start(&mut self) {
        self.q_start.copy_from_slice(&self.q);
        self.v_start.copy_from_slice(&self.v);
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
            for (((q, &q0), &v0), &v) in self
                .q
                .iter_mut()
                .zip(&self.q_start)
                .zip(&self.v_start)
                .zip(&self.v)
            {
                *q = q0 + h * (a * v0 + theta * v);
                finite &= v.is_finite() & q.is_finite();
            }
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
