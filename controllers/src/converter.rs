//! Laws for switched power converters whose input is a switch gate
//! u ∈ {0, 1} (a circuit's gated switch, docs/circuits.md).
//!
//! * [`Pwm`] — open loop at a fixed duty D: over each PWM period T_pwm,
//!   sampled every controller period T_c (T_pwm = N T_c), the gate is 1 for
//!   the first round(D N) samples and 0 for the others.
//! * [`CurrentSmc`] — current-mode sliding-mode control, explicit sign law
//!   on σ = i_L − i_ref, sampled:
//!
//! ```text
//! u_k = 1 if σ(t_k) < 0,   u_k = 0 if σ(t_k) ≥ 0
//! ```
//!
//!   For the boost converter L di_L/dt = V_in − (1 − u) v, i_L rises at
//!   V_in/L while u = 1 and falls at (v − V_in)/L while u = 0, so after
//!   reaching σ stays in a band whose width is proportional to T_c (at most
//!   T_c · max(V_in, v − V_in)/L, chattering of one sample).

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

/// Open-loop PWM gate at a fixed duty (law `pwm`).
#[derive(Debug, Clone)]
pub struct Pwm {
    duty: f64,
    pwm_period: f64,
    /// Samples per PWM period, N.
    samples: usize,
    /// Samples with the gate closed, round(D N).
    on: usize,
    /// The sample index k mod N of the next computation.
    k: usize,
}

impl Pwm {
    /// A PWM gate of duty `duty` ∈ [0, 1] and period `pwm_period` > 0.
    pub fn new(duty: f64, pwm_period: f64) -> Self {
        Pwm {
            duty,
            pwm_period,
            samples: 0,
            on: 0,
            k: 0,
        }
    }

    /// From the parameters `duty` and `pwm_period`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(Pwm::new(
            p.require_scalar("duty", "the duty D in [0, 1]")?,
            p.require_scalar(
                "pwm_period",
                "the PWM period, a multiple of the control period",
            )?,
        ))
    }
}

impl Controller for Pwm {
    fn law(&self) -> &'static str {
        "pwm"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let bad = |what: &str, value: f64, reason: &str| ControlError::InvalidValue {
            object: setup.name.clone(),
            what: what.into(),
            value,
            reason: reason.into(),
        };
        if !(0.0..=1.0).contains(&self.duty) {
            return Err(bad("duty", self.duty, "must be in [0, 1]"));
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
        if setup.input_dim != 1 {
            return Err(ControlError::Dimension {
                object: setup.name.clone(),
                what: "u",
                got: setup.input_dim.to_string(),
                expected: "1 (one gate)".into(),
            });
        }
        self.samples = n.round() as usize;
        self.on = (self.duty * self.samples as f64).round() as usize;
        self.k = 0;
        Ok(())
    }

    fn compute(&mut self, _t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = if self.k < self.on { 1.0 } else { 0.0 };
        self.k = (self.k + 1) % self.samples;
        Ok(())
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        out.push(self.k as f64);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        self.k = r.count(self.samples.saturating_sub(1))?;
        Ok(r.consumed())
    }
}

/// Current-mode sliding-mode control of a converter's gate, explicit sign
/// law on σ = i_L − i_ref (law `current_smc_explicit`; the measurement is
/// i_L).
#[derive(Debug, Clone)]
pub struct CurrentSmc {
    i_ref: f64,
    sigma: [f64; 1],
}

impl CurrentSmc {
    /// The law for the reference current `i_ref`.
    pub fn new(i_ref: f64) -> Self {
        CurrentSmc {
            i_ref,
            sigma: [0.0],
        }
    }

    /// From the parameter `i_ref`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(CurrentSmc::new(p.require_scalar(
            "i_ref",
            "the reference inductor current",
        )?))
    }
}

impl Controller for CurrentSmc {
    fn law(&self) -> &'static str {
        "current_smc_explicit"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        for (what, got) in [
            ("measurement", setup.measurement_dim),
            ("u", setup.input_dim),
        ] {
            if got != 1 {
                return Err(ControlError::Dimension {
                    object: setup.name.clone(),
                    what: if what == "u" { "u" } else { "measurement" },
                    got: got.to_string(),
                    expected: "1 (i_L; one gate)".into(),
                });
            }
        }
        self.sigma = [0.0];
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        self.sigma[0] = y[0] - self.i_ref;
        u[0] = if self.sigma[0] < 0.0 { 1.0 } else { 0.0 };
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        (name == "sigma").then_some(&self.sigma[..])
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        out.push(self.sigma[0]);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        self.sigma[0] = r.take(1)?[0];
        Ok(r.consumed())
    }
}
