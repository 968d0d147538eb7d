//! A damped oscillator M q̈ + C q̇ + K q = 0 (Lagrangian linear
//! time-invariant with stiffness K and damping C) against its closed-form
//! solution: Moreau–Jean with θ = ½ converges at order 2, with θ = 1 at
//! order 1.

use nalgebra::{dmatrix, dvector};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

const M: f64 = 2.0;
const C: f64 = 0.8;
const K: f64 = 50.0;
const Q0: f64 = 0.3;
const V0: f64 = -1.0;
const T_END: f64 = 2.0;

/// The underdamped solution q(t) = e^{−σt}(A cos ω_d t + B sin ω_d t),
/// σ = C/(2M), ω_d = √(K/M − σ²), A = q₀, B = (v₀ + σ q₀)/ω_d, and q̇(t).
fn exact(t: f64) -> (f64, f64) {
    let sigma = C / (2.0 * M);
    let wd = (K / M - sigma * sigma).sqrt();
    let (a, b) = (Q0, (V0 + sigma * Q0) / wd);
    let (s, c) = (wd * t).sin_cos();
    let decay = (-sigma * t).exp();
    let q = decay * (a * c + b * s);
    let v = decay * (-sigma * (a * c + b * s) + wd * (-a * s + b * c));
    (q, v)
}

/// Largest error in q and v over the grid t_k ≤ T_END, step h, scheme θ.
fn max_error(h: f64, theta: f64) -> f64 {
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "oscillator",
            LagrangianLinearTi::new(dvector![Q0], dvector![V0], dmatrix![M])
                .with_stiffness(dmatrix![K])
                .with_damping(dmatrix![C]),
        )
        .unwrap();
    let mut settings = TimeSteppingSettings::new(h, T_END);
    settings.theta = theta;
    let mut sim = TimeStepping::new(b.build(), settings).unwrap();
    let mut err: f64 = 0.0;
    sim.run(|sim| {
        let (q, v) = exact(sim.time());
        err = err
            .max((sim.q(s)[0] - q).abs())
            .max((sim.v(s)[0] - v).abs());
    })
    .unwrap();
    err
}

/// Error ratios when h halves (4e-3 → 2e-3 → 1e-3).
fn ratios(theta: f64) -> (Vec<f64>, Vec<f64>) {
    let errors: Vec<f64> = [4e-3, 2e-3, 1e-3]
        .iter()
        .map(|&h| max_error(h, theta))
        .collect();
    let ratios = errors.windows(2).map(|w| w[0] / w[1]).collect();
    (errors, ratios)
}

#[test]
fn moreau_jean_with_theta_one_half_converges_at_order_two() {
    // Order 2: the error ratio is 4 when h halves; the band [3.5, 4.5]
    // fails an order-1 scheme (ratio 2) and an order-3 one (ratio 8).
    // Measured: errors 3.64e-4, 9.10e-5, 2.27e-5 (ratios 4.000, 4.000).
    let (errors, r) = ratios(0.5);
    println!("θ = 1/2: errors {errors:?}, ratios {r:?}");
    for r in r {
        assert!((3.5..=4.5).contains(&r), "θ = 1/2: ratio {r}");
    }
}

#[test]
fn moreau_jean_with_theta_one_converges_at_order_one() {
    // The same band check is not passed by θ = 1 (backward Euler on the
    // smooth part): ratio 2, band [1.75, 2.25].
    // Measured: errors 1.07e-1, 5.50e-2, 2.78e-2 (ratios 1.954, 1.977).
    let (errors, r) = ratios(1.0);
    println!("θ = 1: errors {errors:?}, ratios {r:?}");
    for r in r {
        assert!((1.75..=2.25).contains(&r), "θ = 1: ratio {r}");
    }
}
