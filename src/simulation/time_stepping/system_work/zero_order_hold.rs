//! The zero-order-hold scheme of a first-order linear system
//! ẋ = A x + b(t) + g + r with constant A:
//!
//! x_{k+1} = Φ x_k + Γ (b(t_{k+1}) + g + r_{k+1}),  Φ = e^{Ah},  Γ = ∫₀ʰ e^{As} ds,
//!
//! exact for the A part, with b(t_{k+1}), the input g and r held over the
//! step. Φ and Γ come from the core's one discretisation,
//! [`zero_order_hold`](crate::numerics::zero_order_hold::zero_order_hold).

use nalgebra::DMatrix;

use super::SystemWork;
use crate::modelling::dynamical_system::FirstOrderLinear;
use crate::modelling::functions::TimeVector;
use crate::numerics::zero_order_hold::zero_order_hold;
use crate::simulation::error::SimulationError;

/// Φ and Γ of the step, column-major, and the vectors they multiply.
pub(super) struct ZohWork {
    /// Φ = e^{Ah}.
    phi: Vec<f64>,
    /// Γ = ∫₀ʰ e^{As} ds.
    gamma: Vec<f64>,
    /// The input held over the step: b(t_{k+1}) + g.
    held: Vec<f64>,
    /// A copy of the interaction input r that Γ multiplies.
    input: Vec<f64>,
}

impl ZohWork {
    /// Φ and Γ of the system's constant A for the step h.
    pub(super) fn new(
        name: &str,
        n: usize,
        d: &FirstOrderLinear,
        h: f64,
    ) -> Result<Self, SimulationError> {
        if !d.a.is_constant() {
            return Err(SimulationError::Unsupported(format!(
                "system '{name}': the zero-order-hold scheme needs a constant A"
            )));
        }
        let mut a = DMatrix::zeros(n, n);
        d.a.eval(0.0, &mut a);
        let Some(z) = zero_order_hold(&a, h) else {
            return Err(SimulationError::Unsupported(format!(
                "system '{name}': e^(Ah) overflows for this step"
            )));
        };
        Ok(ZohWork {
            phi: z.phi.as_slice().to_vec(),
            gamma: z.gamma.as_slice().to_vec(),
            held: vec![0.0; n],
            input: vec![0.0; n],
        })
    }
}

impl ZohWork {
    /// free = Φ x_k + Γ (b(t_{k+1}) + g), with `g` the held control input
    /// when there is one. Reads nothing but its arguments, so that a step
    /// can write the state buffer while reading the start state.
    #[inline(always)]
    pub(super) fn free(
        &mut self,
        x: &[f64],
        b: Option<&TimeVector>,
        g: Option<&[f64]>,
        t1: f64,
        free: &mut [f64],
    ) {
        matvec(&self.phi, x, free);
        if b.is_some() || g.is_some() {
            match b {
                Some(b) => b.eval(t1, &mut self.held),
                None => self.held.fill(0.0),
            }
            if let Some(g) = g {
                for (s, g) in self.held.iter_mut().zip(g) {
                    *s += g;
                }
            }
            matvec_add(&self.gamma, &self.held, free);
        }
    }
}

impl SystemWork {
    /// free = Φ x_k + Γ (b(t_{k+1}) + g).
    #[inline(always)]
    pub(super) fn free_zero_order_hold(&mut self, d: &FirstOrderLinear, free: &mut [f64], t1: f64) {
        let z = self.zoh.as_mut().expect("zero-order hold data");
        let g = self.has_control.then_some(self.control.as_slice());
        z.free(&self.q_start, d.b.as_ref(), g, t1, free);
    }

    /// input ← Γ input: how the interaction input r enters x_{k+1}.
    pub(super) fn zero_order_hold_response(&mut self, input: &mut [f64]) {
        let z = self.zoh.as_mut().expect("zero-order hold data");
        z.input.copy_from_slice(input);
        matvec(&z.gamma, &z.input, input);
    }
}

/// y ← A x for A n × n column-major, n = x.len(): y_i = Σ_j a_ij x_j, summed
/// over j ascending from 0.
fn matvec(a: &[f64], x: &[f64], y: &mut [f64]) {
    let n = x.len();
    let y = &mut y[..n];
    y.fill(0.0);
    for (col, &xj) in a[..n * n].chunks_exact(n).zip(x) {
        for (yi, &aij) in y.iter_mut().zip(col) {
            *yi += aij * xj;
        }
    }
}

/// y ← y + A x (A as in [`matvec`]): each y_i plus the whole sum Σ_j a_ij x_j.
fn matvec_add(a: &[f64], x: &[f64], y: &mut [f64]) {
    let n = x.len();
    for (i, yi) in y[..n].iter_mut().enumerate() {
        let mut s = 0.0;
        for j in 0..n {
            s += a[j * n + i] * x[j];
        }
        *yi += s;
    }
}
