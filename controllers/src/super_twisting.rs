//! Super-twisting control of a sliding variable of relative degree 1:
//! explicit (Euler) and implicit (one scalar generalized equation solved
//! exactly per period).
//!
//! # Setting
//!
//! The measurement is σ (one value), the input u is scalar and acts on σ̇
//! through the input gain κ > 0 (`input_gain`, default 1):
//!
//! ```text
//! σ̇ = κ u + φ(t),     φ an unknown perturbation with |φ̇| ≤ L.
//! ```
//!
//! The laws compute the commanded rate w (units of σ̇) and apply u = w/κ. The
//! continuous super-twisting law is
//!
//! ```text
//! w = −λ |σ|^{1/2} sign(σ) + v,     v̇ = −W sign(σ),
//! ```
//!
//! λ > 0, W > 0 (checked); it brings σ and σ̇ to 0 in finite time for W > L
//! and λ large enough (a common choice: W = 1.1 L, λ = 1.5 √L). v starts at 0.
//! T is the controller's period; w is held over it.
//!
//! # Explicit (`super_twisting_explicit`)
//!
//! Euler's method on the continuous law:
//!
//! ```text
//! w_k = −λ |σ_k|^{1/2} sign(σ_k) + v_k,     v_{k+1} = v_k − T W sign(σ_k)      (sign(0) = 0).
//! ```
//!
//! σ converges to a band |σ| = O(T²), where w oscillates at the sampling
//! rate.
//!
//! # Implicit (`super_twisting_implicit`)
//!
//! The implicit Euler discretisation (Brogliato, Polyakov, Efimov): with the
//! model σ_{k+1} = σ_k + T w_k,
//!
//! ```text
//! σ_{k+1} = σ_k + T (−λ |σ_{k+1}|^{1/2} sign(σ_{k+1}) + v_{k+1}),
//! v_{k+1} = v_k − T W ν_k,     ν_k ∈ Sgn(σ_{k+1}),
//! w_k = −λ |σ_{k+1}|^{1/2} sign(σ_{k+1}) + v_{k+1}     (so that σ_k + T w_k = σ_{k+1}).
//! ```
//!
//! Eliminating v_{k+1}, the predicted z = σ_{k+1} solves the scalar
//! generalized equation 0 ∈ z − p + T λ |z|^{1/2} sign(z) + T² W Sgn(z) with
//! p = σ_k + T v_k, whose right-hand side is strictly increasing; its unique
//! solution is
//!
//! ```text
//! |p| ≤ T² W:   z = 0,             ν = p / (T² W)
//! |p| > T² W:   z = sign(p) r²,    ν = sign(p),    r = 2c / (T λ + (T² λ² + 4c)^{1/2}),  c = |p| − T² W
//! ```
//!
//! (r ≥ 0 is the root of r² + T λ r − c = 0, written without cancellation).
//! Without perturbation σ reaches 0 exactly in finite time and stays there;
//! w is continuous in the data (no numerical chattering). With a
//! perturbation the law keeps w smooth, but the accuracy is |σ| = O(T)
//! (σ_{k+1} is the unpredicted effect of φ over one period, about T|φ|), not
//! the O(T²) of the explicit law.
//!
//! # Signals
//!
//! `sigma` (1): σ_k; `v` (1): the integral state v after the instant.

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

use crate::linalg::{check_positive, dim_err, sign0};

/// A super-twisting controller (see the module documentation).
#[derive(Debug, Clone)]
pub struct SuperTwisting {
    implicit: bool,
    lambda: f64,
    w_gain: f64,
    input_gain: f64,
    period: f64,
    sigma: [f64; 1],
    v: [f64; 1],
}

impl SuperTwisting {
    /// Gains λ > 0 (units of σ^{1/2}/s) and W > 0 (units of σ/s²); κ = 1.
    pub fn new(implicit: bool, lambda: f64, w: f64) -> Self {
        SuperTwisting {
            implicit,
            lambda,
            w_gain: w,
            input_gain: 1.0,
            period: 0.0,
            sigma: [0.0],
            v: [0.0],
        }
    }

    /// The input gain κ > 0 (σ̇ = κ u + φ).
    pub fn with_input_gain(mut self, k: f64) -> Self {
        self.input_gain = k;
        self
    }

    /// From catalog parameters `lambda`, `w`, `input_gain`.
    pub fn from_params(implicit: bool, p: &LawParams) -> Result<Self, ControlError> {
        let mut s = Self::new(
            implicit,
            p.require_scalar("lambda", "the gain λ > 0 of |σ|^(1/2) sign(σ)")?,
            p.require_scalar("w", "the integral gain W > 0")?,
        );
        if let Some(k) = p.scalar("input_gain")? {
            s.input_gain = k;
        }
        Ok(s)
    }
}

impl Controller for SuperTwisting {
    fn law(&self) -> &'static str {
        if self.implicit {
            "super_twisting_implicit"
        } else {
            "super_twisting_explicit"
        }
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        if setup.measurement_dim != 1 {
            return Err(dim_err(
                name,
                "measurement",
                setup.measurement_dim.to_string(),
                "1, σ".into(),
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
        check_positive(name, "lambda", &[self.lambda])?;
        check_positive(name, "w", &[self.w_gain])?;
        check_positive(name, "input_gain", &[self.input_gain])?;
        self.period = setup.period;
        self.v = [0.0];
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let s = y[0];
        self.sigma = [s];
        let (t, lambda, wg) = (self.period, self.lambda, self.w_gain);
        let v = self.v[0];
        let w = if self.implicit {
            let p = s + t * v;
            let edge = t * t * wg;
            let (z, nu) = if p.abs() <= edge {
                (0.0, p / edge)
            } else {
                let c = p.abs() - edge;
                let r = 2.0 * c / (t * lambda + (t * t * lambda * lambda + 4.0 * c).sqrt());
                (p.signum() * r * r, p.signum())
            };
            let v_next = v - t * wg * nu;
            self.v = [v_next];
            -lambda * z.abs().sqrt() * sign0(z) + v_next
        } else {
            self.v = [v - t * wg * sign0(s)];
            -lambda * s.abs().sqrt() * sign0(s) + v
        };
        u[0] = w / self.input_gain;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma", "v"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "sigma" => Some(&self.sigma),
            "v" => Some(&self.v),
            _ => None,
        }
    }

    /// The integral state v and the signal σ_k.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.sigma);
        out.extend_from_slice(&self.v);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let sigma = r.take(1)?;
        let v = r.take(1)?;
        self.sigma.copy_from_slice(sigma);
        self.v.copy_from_slice(v);
        Ok(r.consumed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_implicit_step_satisfies_its_equation() {
        let t = 0.01;
        let (lambda, wg) = (2.0, 3.0);
        for k in -200..=200 {
            let mut st = SuperTwisting::new(true, lambda, wg);
            st.period = t;
            st.v = [0.3];
            let s = k as f64 * 1e-4;
            // Away from the switching point |σ + T v| = T² W, where the
            // recomputed z = σ + T u is rounding noise under a square root.
            if ((s + t * 0.3).abs() - t * t * wg).abs() < 1e-9 {
                continue;
            }
            let mut u = [0.0];
            st.compute(0.0, &[s], &mut u).unwrap();
            let z = s + t * u[0];
            // z = σ_k + T(−λ|z|^½ sign z + v_{k+1}), v_{k+1} = v_k − T W ν, ν ∈ Sgn(z).
            let nu = (0.3 - st.v[0]) / (t * wg);
            if nu.abs() < 1.0 - 1e-12 {
                // Inside the relay's range: the predicted σ is zero.
                assert!(z.abs() < 1e-15, "σ = {s}: z = {z}");
            } else {
                assert!((nu.abs() - 1.0).abs() < 1e-12);
                let rhs = s + t * (-lambda * z.abs().sqrt() * nu.signum() + st.v[0]);
                assert!((z - rhs).abs() < 1e-15, "σ = {s}: {z} vs {rhs}");
                assert!(z == 0.0 || z.signum() == nu.signum());
            }
        }
    }
}
