//! Twisting control of a sliding variable of relative degree 2: implicit,
//! regular (the classic law, discretised implicitly) and explicit.
//!
//! # Setting
//!
//! The measurement is y = (σ, σ̇) (two values: a sensor with
//! C = [C_s; C_s A] on a linear plant, or any sensor that delivers σ and its
//! derivative), the input u is scalar and acts on σ̈ through the input gain
//! κ > 0 (`input_gain`, default 1):
//!
//! ```text
//! σ̈ = κ u + φ(t),      φ an unknown bounded perturbation.
//! ```
//!
//! The laws compute the commanded acceleration w (in the units of σ̈) and
//! apply u = w/κ. The continuous twisting law is
//! w ∈ −a Sgn(σ) − b Sgn(σ̇) with a > b > 0 (checked); it brings (σ, σ̇) to 0
//! in finite time when the gains dominate the perturbation:
//! a − b > sup|φ| and b > sup|φ|.
//!
//! With T the controller's period and w held over the period, the model of
//! the discrete laws is the exact zero-order-hold double integrator
//!
//! ```text
//! σ_{k+1} = σ_k + T σ̇_k + (T²/2) w_k,     σ̇_{k+1} = σ̇_k + T w_k.
//! ```
//!
//! # Explicit (`twisting_explicit`)
//!
//! ```text
//! w_k = −a sign(σ_k) − b sign(σ̇_k)          (sign(0) = 0)
//! ```
//!
//! σ converges to a band |σ| = O(T²) (|σ̇| = O(T)) in which w switches
//! between ±(a ± b) at the sampling rate.
//!
//! # Regular (`twisting_regular`)
//!
//! The classic multivalued law evaluated at the predicted state:
//!
//! ```text
//! w_k ∈ −a Sgn(σ_{k+1}) − b Sgn(σ̇_{k+1}),   (σ_{k+1}, σ̇_{k+1}) from the model above.
//! ```
//!
//! Without perturbation σ reaches 0 in finite time, but on σ = 0 the law
//! maps σ̇ to −σ̇ (w = −2σ̇/T puts σ_{k+1} at 0 with σ̇_{k+1} = −σ̇_k): a
//! neutral 2-cycle whose size is the σ̇ left when σ first hits 0 (3e-12 and
//! 6e-11 in the tests). With a perturbation σ stays in an O(T²) band but w
//! keeps switching (σ_{k+1} and σ̇_{k+1} cannot both be zeroed by one scalar
//! input). It is kept as the straightforward implicit form; prefer the
//! implicit law below.
//!
//! # Implicit (`twisting_implicit`)
//!
//! The law acts on ρ = σ + (T/2) σ̇ in place of σ:
//!
//! ```text
//! w_k ∈ −a Sgn(ρ_{k+1}) − b Sgn(σ̇_{k+1}),
//! ρ_{k+1} = σ_{k+1} + (T/2) σ̇_{k+1} = σ_k + (3T/2) σ̇_k + T² w_k.
//! ```
//!
//! Since ρ_{k+1} = ρ_k + T σ̇_{k+1} exactly under the zero-order hold, the
//! closed loop in (ρ, σ̇) is the implicit Euler discretisation of the twisting
//! inclusion: without perturbation (ρ, σ̇), hence σ, reach 0 in finite time
//! and stay there; with a smooth perturbation w follows −φ without switching
//! (no numerical chattering) and |σ| = O(T²).
//!
//! # The one-step problem
//!
//! Both multivalued laws are a scalar generalized equation
//!
//! ```text
//! 0 ∈ w + a Sgn(q₁ + d₁ w) + b Sgn(q₂ + d₂ w),     d₁, d₂ > 0
//! ```
//!
//! (regular: q₁ = σ_k + T σ̇_k, d₁ = T²/2; implicit: q₁ = σ_k + (3T/2) σ̇_k,
//! d₁ = T²; both: q₂ = σ̇_k, d₂ = T). Its right-hand side is strictly
//! increasing in w (slope 1 plus two upward jumps, at β_i = −q_i/d_i), so it has
//! exactly one solution, found exactly by walking the pieces in increasing
//! order: with c₁ ≤ c₂ the sorted breakpoints and g₁, g₂ their gains (a or b),
//!
//! ```text
//! w = a + b                 if a + b < c₁           (both signs −1)
//! w = c₁                    if c₁ + g₁ − g₂ ≥ 0      (c₁ < c₂; + g₂ if c₁ = c₂)
//! w = g₂ − g₁               if c₂ + g₁ − g₂ > 0      (the middle piece)
//! w = c₂                    if c₂ + g₁ + g₂ ≥ 0
//! w = −(a + b)              otherwise               (both signs +1)
//! ```
//!
//! — the four sign cells of (Sgn, Sgn) ∈ {±1}² and the two switching lines,
//! enumerated without any external solver. At a breakpoint the predicted
//! variable is exactly zero.
//!
//! # Signals
//!
//! `sigma` (2): (σ_k, σ̇_k) as measured.

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

use crate::linalg::{check_positive, dim_err, invalid, sign0};

/// Which twisting discretisation (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwistingVariant {
    /// On ρ = σ + (T/2) σ̇ and σ̇ at the next instant (chattering-free).
    Implicit,
    /// On σ and σ̇ at the next instant.
    Regular,
    /// On σ and σ̇ at the current instant.
    Explicit,
}

/// A twisting controller (see the module documentation).
#[derive(Debug, Clone)]
pub struct Twisting {
    variant: TwistingVariant,
    a: f64,
    b: f64,
    input_gain: f64,
    period: f64,
    sigma: [f64; 2],
}

/// The unique solution w of 0 ∈ w + a Sgn(q₁ + d₁ w) + b Sgn(q₂ + d₂ w)
/// (a, b ≥ 0; d₁, d₂ > 0), see the module documentation.
pub fn twisting_step(q1: f64, d1: f64, q2: f64, d2: f64, a: f64, b: f64) -> f64 {
    let (beta1, beta2) = (-q1 / d1, -q2 / d2);
    let ((c1, g1), (c2, g2)) = if beta1 <= beta2 {
        ((beta1, a), (beta2, b))
    } else {
        ((beta2, b), (beta1, a))
    };
    if a + b < c1 {
        return a + b;
    }
    let other = if c2 > c1 { -g2 } else { g2 };
    if c1 + g1 + other >= 0.0 {
        return c1;
    }
    if c2 + g1 - g2 > 0.0 {
        return g2 - g1;
    }
    if c2 + g1 + g2 >= 0.0 {
        return c2;
    }
    -(a + b)
}

impl Twisting {
    /// Gains a > b > 0 in the units of σ̈; input gain κ = 1.
    pub fn new(variant: TwistingVariant, a: f64, b: f64) -> Self {
        Twisting {
            variant,
            a,
            b,
            input_gain: 1.0,
            period: 0.0,
            sigma: [0.0; 2],
        }
    }

    /// The input gain κ > 0 (σ̈ = κ u + φ).
    pub fn with_input_gain(mut self, k: f64) -> Self {
        self.input_gain = k;
        self
    }

    /// From catalog parameters `a`, `b`, `input_gain`.
    pub fn from_params(variant: TwistingVariant, p: &LawParams) -> Result<Self, ControlError> {
        let mut t = Self::new(
            variant,
            p.require_scalar("a", "the gain of Sgn(σ), a > b")?,
            p.require_scalar("b", "the gain of Sgn(σ̇), 0 < b < a")?,
        );
        if let Some(k) = p.scalar("input_gain")? {
            t.input_gain = k;
        }
        Ok(t)
    }
}

impl Controller for Twisting {
    fn law(&self) -> &'static str {
        match self.variant {
            TwistingVariant::Implicit => "twisting_implicit",
            TwistingVariant::Regular => "twisting_regular",
            TwistingVariant::Explicit => "twisting_explicit",
        }
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        if setup.measurement_dim != 2 {
            return Err(dim_err(
                name,
                "measurement",
                setup.measurement_dim.to_string(),
                "2, (σ, σ̇)".into(),
            ));
        }
        if setup.input_dim != 1 {
            return Err(dim_err(
                name,
                "input",
                setup.input_dim.to_string(),
                "1".into(),
            ));
        }
        check_positive(name, "b", &[self.b])?;
        check_positive(name, "a", &[self.a])?;
        if self.a <= self.b {
            return Err(invalid(
                name,
                "a",
                self.a,
                &format!("must be > b = {} for the twisting law", self.b),
            ));
        }
        check_positive(name, "input_gain", &[self.input_gain])?;
        self.period = setup.period;
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let (s, ds) = (y[0], y[1]);
        self.sigma = [s, ds];
        let t = self.period;
        let (a, b) = (self.a, self.b);
        let w = match self.variant {
            TwistingVariant::Explicit => -a * sign0(s) - b * sign0(ds),
            TwistingVariant::Regular => twisting_step(s + t * ds, 0.5 * t * t, ds, t, a, b),
            TwistingVariant::Implicit => twisting_step(s + 1.5 * t * ds, t * t, ds, t, a, b),
        };
        u[0] = w / self.input_gain;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        (name == "sigma").then_some(&self.sigma[..])
    }

    /// The signal (σ_k, σ̇_k): the law itself has no memory.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.sigma);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let sigma = r.take(2)?;
        self.sigma.copy_from_slice(sigma);
        Ok(r.consumed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 ∈ F(w) checked with the set-valued signs of the solution.
    fn solves(q1: f64, d1: f64, q2: f64, d2: f64, a: f64, b: f64, w: f64) -> bool {
        let sgn = |x: f64| -> (f64, f64) {
            if x > 1e-12 {
                (1.0, 1.0)
            } else if x < -1e-12 {
                (-1.0, -1.0)
            } else {
                (-1.0, 1.0)
            }
        };
        let (l1, h1) = sgn(q1 + d1 * w);
        let (l2, h2) = sgn(q2 + d2 * w);
        w + a * l1 + b * l2 <= 1e-12 && w + a * h1 + b * h2 >= -1e-12
    }

    #[test]
    fn the_step_solves_its_generalized_equation_in_every_cell() {
        let (a, b) = (3.0, 1.5);
        let mut k = 0;
        for i in -40..=40 {
            for j in -40..=40 {
                let (q1, q2) = (i as f64 * 0.013, j as f64 * 0.07);
                let w = twisting_step(q1, 0.01, q2, 0.1, a, b);
                assert!(
                    solves(q1, 0.01, q2, 0.1, a, b, w),
                    "q = ({q1}, {q2}): w = {w}"
                );
                k += 1;
            }
        }
        // Both breakpoints equal: w = c when |c| ≤ a + b.
        let w = twisting_step(0.2, 1.0, 0.2, 1.0, a, b);
        assert!((w + 0.2).abs() < 1e-15);
        assert_eq!(k, 81 * 81);
    }
}
