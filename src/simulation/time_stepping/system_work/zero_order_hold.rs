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
use crate::modelling::dynamical_system::{DynamicalSystem, FirstOrderLinear};
use crate::modelling::functions::TimeVector;
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
        small::matvec(&self.phi, x, free);
        if b.is_some() || g.is_some() {
            match b {
                Some(b) => b.eval(t1, &mut self.held),
                None => small::zero(&mut self.held),
            }
            if let Some(g) = g {
                for (s, g) in self.held.iter_mut().zip(g) {
                    *s += g;
                }
            }
            small::matvec_add(&self.gamma, &self.held, free);
        }
    }

    /// The whole step of a system no interaction acts on:
    /// x_k ← x (the start state kept for a roll-back), then
    /// x ← Φ x_k + Γ (b(t_{k+1}) + g). Returns whether the new state is
    /// finite. The operations of [`ZohWork::free`], in the same order, on
    /// fixed-size arrays for the sizes 1 to 4 (one size dispatch per step
    /// rather than one per kernel).
    #[inline(always)]
    pub(super) fn step_alone(
        &mut self,
        x: &mut Vec<f64>,
        x_start: &mut Vec<f64>,
        b: Option<&TimeVector>,
        g: Option<&[f64]>,
        t1: f64,
    ) -> bool {
        match x.len() {
            1 => self.step_alone_n::<1>(x, x_start, b, g, t1),
            2 => self.step_alone_n::<2>(x, x_start, b, g, t1),
            3 => self.step_alone_n::<3>(x, x_start, b, g, t1),
            4 => self.step_alone_n::<4>(x, x_start, b, g, t1),
            _ => {
                // Large states: the buffers are swapped, not copied.
                std::mem::swap(x, x_start);
                self.free(x_start, b, g, t1, x);
                x.iter().all(|v| v.is_finite())
            }
        }
    }

    #[inline(always)]
    fn step_alone_n<const N: usize>(
        &mut self,
        x: &mut [f64],
        x_start: &mut [f64],
        b: Option<&TimeVector>,
        g: Option<&[f64]>,
        t1: f64,
    ) -> bool {
        let (Ok(x), Ok(x_start)) = (
            <&mut [f64; N]>::try_from(x),
            <&mut [f64; N]>::try_from(x_start),
        ) else {
            return false;
        };
        *x_start = *x;
        let phi = &self.phi[..N * N];
        // s_i = Σ_j Φ_ij x_j, j ascending from 0 (as small::matvec).
        let mut s = [0.0; N];
        for j in 0..N {
            for i in 0..N {
                s[i] += phi[j * N + i] * x_start[j];
            }
        }
        if b.is_some() || g.is_some() {
            let held = &mut self.held[..N];
            match b {
                Some(b) => b.eval(t1, held),
                None => small::zero(held),
            }
            if let Some(g) = g {
                for (h, g) in held.iter_mut().zip(g) {
                    *h += g;
                }
            }
            // s_i + Σ_j Γ_ij held_j (as small::matvec_add).
            let gamma = &self.gamma[..N * N];
            let mut p = [0.0; N];
            for j in 0..N {
                for i in 0..N {
                    p[i] += gamma[j * N + i] * held[j];
                }
            }
            for i in 0..N {
                s[i] += p[i];
            }
        }
        *x = s;
        s.iter().fold(true, |f, v| f & v.is_finite())
    }
}

impl SystemWork {
    /// The whole step of a zero-order-hold system no interaction acts on
    /// (see [`ZohWork::step_alone`]); `None` for other systems.
    #[inline(always)]
    pub(super) fn zero_order_hold_alone(&mut self, ds: &DynamicalSystem, t1: f64) -> Option<bool> {
        let (Some(z), DynamicalSystem::FirstOrderLinear(d)) = (&mut self.zoh, ds) else {
            return None;
        };
        let g = self.has_control.then_some(self.control.as_slice());
        Some(z.step_alone(&mut self.q, &mut self.q_start, d.b.as_ref(), g, t1))
    }

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
        small::matvec(&z.gamma, &z.input, input);
    }
}
