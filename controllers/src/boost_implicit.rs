//! Implicit (chattering-free) sliding-mode control of a boost converter's
//! switch, turned into switching by a PWM modulator (laws
//! `current_smc_implicit` and `voltage_smc_implicit`).
//!
//! # Plant and units
//!
//! The boost converter (docs/circuits.md): input voltage V_in (V), inductor
//! L (H) carrying i_L (A), output voltage v (V). With the gate u = 1 (switch
//! closed) the inductor current rises at V_in/L; with u = 0 (open, diode
//! conducting) it falls at (v − V_in)/L. Over a switching period T_s with
//! the gate closed for a fraction d of it (the duty), the inductor current
//! moves by
//!
//! ```text
//! i_L(t_k + T_s) − i_L(t_k) ≈ (T_s/L) (V_in − (1 − d) v_k)        (v frozen at v_k)
//! ```
//!
//! The measurement is (i_L, v) (a sensor with C = I on the circuit's state
//! (i(L1), v(C1))).
//!
//! # Sliding variable
//!
//! * current mode (`current_smc_implicit`): σ_k = i_L,k − i_ref, i_ref a
//!   constant (A);
//! * voltage mode (`voltage_smc_implicit`): the issue's voltage surface with
//!   an integral term that removes the steady-state error for any load,
//!
//! ```text
//! σ_k = i_L,k − i_ref,k,   i_ref,k = i_ff − k (v_k − v_ref) − k_i ζ_k,
//! ζ_k = ζ_{k−1} + T_s (v_k − v_ref)      (ζ_0 = T_s (v_0 − v_ref))
//! ```
//!
//!   (k in A/V, k_i in A/(V·s), i_ff the feed-forward current in A). On
//!   σ = 0 the inductor current follows i_ref,k: an outer PI loop on v.
//!
//! # One-step relay problem (the implicit law)
//!
//! At the start t_k of each switching period the duty d_k ∈ [0, 1] solves
//!
//! ```text
//! σ̃_{k+1} = q_k + m_k d_k,    q_k = σ_k + (T_s/L)(V_in − v_k),   m_k = T_s v_k / L,
//! d_k ∈ ½ (1 − Sgn(σ̃_{k+1}))
//! ```
//!
//! (Sgn the set-valued sign: d = 1 while σ̃ < 0, d = 0 while σ̃ > 0, any d in
//! [0, 1] when σ̃ = 0). For m_k > 0 its unique solution is d_k = 1 when
//! q_k + m_k ≤ 0 (reaching from below), d_k = 0 when q_k ≥ 0 (reaching from
//! above), and d_k = −q_k/m_k otherwise: then σ̃_{k+1} = 0, the discrete
//! sliding mode, and d_k is the discrete equivalent control. For m_k ≤ 0
//! (v_k ≤ 0, before the output has charged) the gate does not act on the
//! prediction and the law is the sign law d_k = 1 if q_k < 0, else 0.
//!
//! # Modulation
//!
//! The gate itself is sampled at the controller's period T_c (the loop's
//! period), with T_s = N T_c (parameter `pwm_period`): over the switching
//! period starting at t_k the gate is 1 for the first n_k = round(d_k N)
//! samples and 0 for the others. The duty is thus applied to 1/N; the
//! rounding error moves σ_{k+1} by at most v T_c/(2L) and the next period's
//! relay problem corrects it. The gate switches at most twice per switching
//! period (once on, once off): a fixed switching frequency 1/T_s, where the
//! explicit sign law (`current_smc_explicit`) switches whenever the sign of
//! σ changes at a sample.
//!
//! # Signals
//!
//! `sigma` (σ_k, A), `duty` (d_k), `i_ref` (i_ref,k, A), updated at the start
//! of each switching period.

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

/// Which sliding variable the law drives to zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoostSurface {
    /// σ = i_L − i_ref.
    Current {
        /// i_ref (A).
        i_ref: f64,
    },
    /// σ = i_L − i_ff + k (v − v_ref) + k_i ∫(v − v_ref) dt.
    Voltage {
        /// v_ref (V).
        v_ref: f64,
        /// k (A/V).
        k: f64,
        /// k_i (A/(V·s)).
        ki: f64,
        /// i_ff (A).
        i_ff: f64,
    },
}

impl BoostSurface {
    /// i_ref,k from the measured v: the constant i_ref on the current
    /// surface; on the voltage surface i_ff − k e − k_i ζ_k with
    /// e = v − v_ref and ζ_k = ζ_{k−1} + T e (ζ at the first sample: T e),
    /// `integral` holding ζ and `started` whether a sample was taken.
    pub(crate) fn reference(
        &self,
        v: f64,
        period: f64,
        integral: &mut f64,
        started: &mut bool,
    ) -> f64 {
        match *self {
            BoostSurface::Current { i_ref } => i_ref,
            BoostSurface::Voltage { v_ref, k, ki, i_ff } => {
                let e = v - v_ref;
                *integral = if *started {
                    *integral + period * e
                } else {
                    period * e
                };
                *started = true;
                i_ff - k * e - ki * *integral
            }
        }
    }
}

/// The implicit sliding-mode law of a boost converter's gate with PWM
/// modulation (module documentation).
#[derive(Debug, Clone)]
pub struct ImplicitBoostSmc {
    surface: BoostSurface,
    v_in: f64,
    inductance: f64,
    pwm_period: f64,
    /// Samples per switching period, N.
    samples: usize,
    /// Sample index within the switching period of the next computation.
    k: usize,
    /// Samples with the gate closed in the current switching period.
    on: usize,
    /// ζ, the integral of v − v_ref (V·s; voltage mode).
    integral: f64,
    /// Whether ζ has been started.
    started: bool,
    sigma: [f64; 1],
    duty: [f64; 1],
    i_ref: [f64; 1],
}

/// The solution d of the one-step relay problem σ̃ = q + m d,
/// d ∈ ½(1 − Sgn(σ̃)) (module documentation).
pub fn relay_duty(q: f64, m: f64) -> f64 {
    if m <= 0.0 {
        return if q < 0.0 { 1.0 } else { 0.0 };
    }
    if q >= 0.0 {
        0.0
    } else if q + m <= 0.0 {
        1.0
    } else {
        -q / m
    }
}

impl ImplicitBoostSmc {
    /// The law for `surface` on a boost of input voltage `v_in` (V) and
    /// inductance `inductance` (H), switching period `pwm_period` (s).
    pub fn new(surface: BoostSurface, v_in: f64, inductance: f64, pwm_period: f64) -> Self {
        ImplicitBoostSmc {
            surface,
            v_in,
            inductance,
            pwm_period,
            samples: 0,
            k: 0,
            on: 0,
            integral: 0.0,
            started: false,
            sigma: [0.0],
            duty: [0.0],
            i_ref: [0.0],
        }
    }

    /// From the parameters: `v_in`, `inductance`, `pwm_period`, and
    /// `i_ref` (current mode) or `v_ref`, `k`, optional `ki` (default 0) and
    /// `i_ref` (the feed-forward i_ff, default 0) (voltage mode).
    pub fn from_params(voltage: bool, p: &LawParams) -> Result<Self, ControlError> {
        let surface = if voltage {
            BoostSurface::Voltage {
                v_ref: p.require_scalar("v_ref", "the output voltage reference (V)")?,
                k: p.require_scalar("k", "the voltage gain of the surface (A/V)")?,
                ki: p.scalar("ki")?.unwrap_or(0.0),
                i_ff: p.scalar("i_ref")?.unwrap_or(0.0),
            }
        } else {
            BoostSurface::Current {
                i_ref: p.require_scalar("i_ref", "the reference inductor current (A)")?,
            }
        };
        Ok(ImplicitBoostSmc::new(
            surface,
            p.require_scalar("v_in", "the converter's input voltage (V)")?,
            p.require_scalar("inductance", "the converter's inductance (H)")?,
            p.require_scalar(
                "pwm_period",
                "the switching period, a multiple of the control period (s)",
            )?,
        ))
    }

    /// σ_k and i_ref,k from the measurement (i_L, v), updating ζ.
    fn surface(&mut self, i: f64, v: f64) -> (f64, f64) {
        let i_ref =
            self.surface
                .reference(v, self.pwm_period, &mut self.integral, &mut self.started);
        (i - i_ref, i_ref)
    }
}

impl Controller for ImplicitBoostSmc {
    fn law(&self) -> &'static str {
        match self.surface {
            BoostSurface::Current { .. } => "current_smc_implicit",
            BoostSurface::Voltage { .. } => "voltage_smc_implicit",
        }
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let bad = |what: &str, value: f64, reason: &str| ControlError::InvalidValue {
            object: setup.name.clone(),
            what: what.into(),
            value,
            reason: reason.into(),
        };
        for (what, value) in [("v_in", self.v_in), ("inductance", self.inductance)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(bad(what, value, "must be positive and finite"));
            }
        }
        let mut finite = vec![];
        match self.surface {
            BoostSurface::Current { i_ref } => finite.push(("i_ref", i_ref)),
            BoostSurface::Voltage { v_ref, k, ki, i_ff } => {
                finite.extend([("v_ref", v_ref), ("k", k), ("ki", ki), ("i_ref", i_ff)])
            }
        }
        if let Some((what, value)) = finite.into_iter().find(|(_, v)| !v.is_finite()) {
            return Err(bad(what, value, "must be finite"));
        }
        let n = self.pwm_period / setup.period;
        if !(n.is_finite() && n >= 1.0 && (n - n.round()).abs() <= 1e-9 * n) {
            return Err(bad(
                "pwm_period",
                self.pwm_period,
                &format!(
                    "must be a whole multiple of the control period {}",
                    setup.period
                ),
            ));
        }
        for (what, got, expected) in [
            ("measurement", setup.measurement_dim, "2 (i_L, v)"),
            ("u", setup.input_dim, "1 (one gate)"),
        ] {
            let want = if what == "u" { 1 } else { 2 };
            if got != want {
                return Err(ControlError::Dimension {
                    object: setup.name.clone(),
                    what: if what == "u" { "u" } else { "measurement" },
                    got: got.to_string(),
                    expected: expected.into(),
                });
            }
        }
        self.samples = n.round() as usize;
        self.k = 0;
        self.on = 0;
        self.integral = 0.0;
        self.started = false;
        self.sigma = [0.0];
        self.duty = [0.0];
        self.i_ref = [0.0];
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        if self.k == 0 {
            let (i, v) = (y[0], y[1]);
            let (sigma, i_ref) = self.surface(i, v);
            let scale = self.pwm_period / self.inductance;
            let d = relay_duty(sigma + scale * (self.v_in - v), scale * v);
            self.sigma = [sigma];
            self.i_ref = [i_ref];
            self.duty = [d];
            self.on = (d * self.samples as f64).round() as usize;
        }
        u[0] = if self.k < self.on { 1.0 } else { 0.0 };
        self.k = (self.k + 1) % self.samples;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma", "duty", "i_ref"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "sigma" => Some(&self.sigma[..]),
            "duty" => Some(&self.duty[..]),
            "i_ref" => Some(&self.i_ref[..]),
            _ => None,
        }
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend([
            self.k as f64,
            self.on as f64,
            self.integral,
            if self.started { 1.0 } else { 0.0 },
            self.sigma[0],
            self.duty[0],
            self.i_ref[0],
        ]);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let k = r.count(self.samples.saturating_sub(1))?;
        let on = r.count(self.samples)?;
        let integral = r.take(1)?[0];
        let started = r.flag()?;
        let v = r.take(3)?;
        self.k = k;
        self.on = on;
        self.integral = integral;
        self.started = started;
        self.sigma = [v[0]];
        self.duty = [v[1]];
        self.i_ref = [v[2]];
        Ok(r.consumed())
    }
}

#[cfg(test)]
mod tests {
    use super::{relay_duty, BoostSurface, ImplicitBoostSmc};
    use nonsmooth::control::{Controller, ControllerSetup};

    /// Saving, going on, restoring and going on again gives the same gates
    /// and signals (voltage mode: the integral and the modulator's phase).
    #[test]
    fn save_and_restore_reproduce_the_gates() {
        let surface = BoostSurface::Voltage {
            v_ref: 20.0,
            k: 0.2,
            ki: 400.0,
            i_ff: 2.0,
        };
        let mut law = ImplicitBoostSmc::new(surface, 10.0, 1e-3, 1e-5);
        let setup = ControllerSetup {
            name: "gate".into(),
            period: 1e-6,
            measurement_dim: 2,
            input_dim: 1,
            state_dim: 2,
            plant: None,
            measurement_map: None,
        };
        law.initialize(&setup).unwrap();
        let y = |k: usize| [2.0 + 0.01 * (k as f64 * 0.7).sin(), 19.9 + 0.003 * k as f64];
        let mut u = [0.0];
        for k in 0..37 {
            law.compute(k as f64 * 1e-6, &y(k), &mut u).unwrap();
        }
        let mut saved = Vec::new();
        law.save_state(&mut saved);
        let go_on = |law: &mut ImplicitBoostSmc| {
            (37..80)
                .map(|k| {
                    let mut u = [0.0];
                    law.compute(k as f64 * 1e-6, &y(k), &mut u).unwrap();
                    (
                        u[0],
                        law.signal("duty").unwrap()[0],
                        law.signal("i_ref").unwrap()[0],
                    )
                })
                .collect::<Vec<_>>()
        };
        let first = go_on(&mut law);
        assert_eq!(law.restore_state(&saved).unwrap(), saved.len());
        assert_eq!(go_on(&mut law), first);
        assert!(first.iter().any(|s| s.0 == 1.0) && first.iter().any(|s| s.0 == 0.0));
        // A counter out of range is refused.
        let mut bad = saved.clone();
        bad[0] = 10.0;
        assert!(law.restore_state(&bad).is_err());
    }

    /// The relay problem's three cases, checked against its definition:
    /// σ̃ = q + m d ≤ 0 when d = 1, ≥ 0 when d = 0, = 0 when 0 < d < 1.
    #[test]
    fn relay_duty_solves_the_one_step_problem() {
        for (q, m) in [
            (-3.0, 2.0),
            (1.0, 2.0),
            (-0.5, 2.0),
            (0.0, 2.0),
            (-2.0, 2.0),
        ] {
            let d = relay_duty(q, m);
            let s = q + m * d;
            assert!((0.0..=1.0).contains(&d));
            if d == 1.0 {
                assert!(s <= 0.0);
            } else if d == 0.0 {
                assert!(s >= 0.0);
            } else {
                assert!(s.abs() < 1e-15);
            }
        }
        assert_eq!(relay_duty(-0.5, 2.0), 0.25);
        assert_eq!(relay_duty(-1.0, 0.0), 1.0);
        assert_eq!(relay_duty(1.0, 0.0), 0.0);
    }
}
