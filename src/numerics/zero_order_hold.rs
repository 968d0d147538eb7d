//! Zero-order-hold discretisation of a linear time-invariant system
//! ẋ = A x + u with u held constant over a period h:
//!
//! x(t + h) = Φ x(t) + Γ u,  Φ = e^{Ah},  Γ = ∫₀ʰ e^{As} ds.
//!
//! One function serves the plants (time-stepping's zero-order-hold scheme)
//! and the discrete-time control laws and observers (`nonsmooth-controllers`),
//! so that both discretise the same A with the same bits.

use nalgebra::DMatrix;

/// Φ = e^{Ah} and Γ = ∫₀ʰ e^{As} ds of a square A (both n × n).
#[derive(Debug, Clone, PartialEq)]
pub struct ZeroOrderHold {
    /// Φ = e^{Ah}.
    pub phi: DMatrix<f64>,
    /// Γ = ∫₀ʰ e^{As} ds.
    pub gamma: DMatrix<f64>,
}

/// Φ = e^{Ah} and Γ = ∫₀ʰ e^{As} ds from one matrix exponential of the
/// augmented matrix:
///
/// exp(h·[[A, I], [0, 0]]) = [[Φ, Γ], [0, I]],
///
/// the block h·[[A, I], [0, 0]] formed as (A·h, h·I) (the order of
/// operations is part of the result: trajectories are compared bit for bit).
/// `None` when an entry of Φ or Γ is not finite (e^{Ah} overflows for this
/// h, or A holds a NaN); A must be square.
pub fn zero_order_hold(a: &DMatrix<f64>, h: f64) -> Option<ZeroOrderHold> {
    let n = a.nrows();
    debug_assert_eq!(n, a.ncols(), "zero_order_hold: A must be square");
    let mut aug = DMatrix::zeros(2 * n, 2 * n);
    aug.view_mut((0, 0), (n, n)).copy_from(&(a * h));
    for i in 0..n {
        aug[(i, n + i)] = h;
    }
    let e = aug.exp();
    let phi = e.view((0, 0), (n, n)).into_owned();
    let gamma = e.view((0, n), (n, n)).into_owned();
    if phi.iter().chain(gamma.iter()).all(|x| x.is_finite()) {
        Some(ZeroOrderHold { phi, gamma })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::dmatrix;

    #[test]
    fn the_double_integrator_is_exact() {
        let z = zero_order_hold(&dmatrix![0.0, 1.0; 0.0, 0.0], 0.1).unwrap();
        assert!((z.phi - dmatrix![1.0, 0.1; 0.0, 1.0]).abs().max() < 1e-15);
        assert!((z.gamma - dmatrix![0.1, 0.005; 0.0, 0.1]).abs().max() < 1e-15);
    }

    #[test]
    fn overflow_is_refused() {
        assert!(zero_order_hold(&dmatrix![1000.0], 10.0).is_none());
    }
}
