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
use crate::numerics::zero_order_hold::zero_order_hold;
use crate::simulation::error::SimulationError;
use crate::simulation::time_stepping::small;

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

impl SystemWork {
    /// free = Φ x_k + Γ (b(t_{k+1}) + g).
    #[inline(always)]
    pub(super) fn free_zero_order_hold(&mut self, d: &FirstOrderLinear, free: &mut [f64], t1: f64) {
        let z = self.zoh.as_mut().expect("zero-order hold data");
        small::matvec(&z.phi, &self.q_start, free);
        let b = d.b.as_ref();
        if b.is_some() || self.has_control {
            match b {
                Some(b) => b.eval(t1, &mut z.held),
                None => z.held.iter_mut().for_each(|x| *x = 0.0),
            }
            if self.has_control {
                for (s, g) in z.held.iter_mut().zip(&self.control) {
                    *s += g;
                }
            }
            small::matvec_add(&z.gamma, &z.held, free);
        }
    }

    /// input ← Γ input: how the interaction input r enters x_{k+1}.
    pub(super) fn zero_order_hold_response(&mut self, input: &mut [f64]) {
        let z = self.zoh.as_mut().expect("zero-order hold data");
        z.input.copy_from_slice(input);
        small::matvec(&z.gamma, &z.input, input);
    }
}
