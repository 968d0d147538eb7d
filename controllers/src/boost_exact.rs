//! Implicit current-mode sliding-mode control of a boost converter with the
//! switching instant inside the integration step (law `current_smc_exact`):
//! σ_k = i_L(t_k) − i_ref is driven to zero at every sampling instant to
//! round-off, not to a modulator's resolution.
//!
//! # What the law predicts
//!
//! Once per switching period T_s (the controller's period) the law reads
//! x_k = (i_L, v) at t_k and chooses the duty d ∈ [0, 1]: the gate is
//! closed from t_k and opened at τ = t_k + d T_s, an instant that is in
//! general inside an integration step; the control loop applies the opening
//! at τ exactly by splitting that step ([`Controller::scheduled_change`],
//! docs/how-a-step-proceeds.md). The law predicts σ_{k+1}(d) through the
//! scheme the plant integrates with: N = T_s/h steps of the θ-scheme
//! (parameters `step` = h and `theta`, the simulation's), the step
//! containing τ split into h₁ = τ − t_n and h₂ = h − h₁, and in each
//! sub-step the switch and the diode as the plant's one-step problem solves
//! them in continuous conduction (CCM):
//!
//! ```text
//! closed (u = 1, diode blocking):   L (i₁ − i₀)/h′ = V_in
//!                                   C (v₁ − v₀)/h′ = −(θ v₁ + (1 − θ) v₀)/R
//! open (u = 0, diode conducting):   L (i₁ − i₀)/h′ = V_in − v₁
//!                                   C (v₁ − v₀)/h′ = i₁ − (θ v₁ + (1 − θ) v₀)/R
//! ```
//!
//! The switch's and the diode's voltages and currents are the one-step
//! problem's unknowns at the end of each (sub-)step, hence the implicit v₁
//! and i₁ where they enter through the switch node (the netlist's reduction
//! of the boost puts the switch S1 in voltage form and the diode D1 in
//! current form, docs/circuits.md); the resistor's current is part of A and
//! takes the θ-weights. The load R is a parameter: the prediction is exact
//! for the circuit V_in, L, S1, D1, C ∥ R and is off by the load's change
//! when the load changes.
//!
//! σ_{k+1}(d) = i_L(t_{k+1}; d) − i_ref increases with d (the closed switch
//! raises i_L at V_in/L, the open one at (V_in − v)/L, less for v > 0): the
//! law takes d = 0 when σ_{k+1}(0) ≥ 0, d = 1 when σ_{k+1}(1) ≤ 0 (the
//! reaching phase, clamped), and otherwise solves σ_{k+1}(d) = 0 by
//! bisection on d until the bracket is one ulp wide.
//!
//! # Continuous conduction
//!
//! The prediction assumes CCM: the diode conducts throughout the open part.
//! It fails when the predicted i_L reaches 0 while the switch is open (DCM:
//! the diode would block). The law checks the predicted current at τ and at
//! t_{k+1} (the open-switch current is monotone in between: a straight
//! line's θ-scheme image); if either is ≤ 0 it falls back to the clamped
//! duty of the frozen-v relay problem of `current_smc_implicit`
//! (d = clamp(−q/m), q = σ_k + T_s (V_in − v_k)/L, m = T_s v_k/L) and
//! records `ccm` = 0. i_ref must be positive (the law is for CCM).
//!
//! # Parameters and signals
//!
//! `i_ref` (A), `v_in` (V), `inductance` (H), `capacitance` (F),
//! `resistance` (Ω), `step` (s, the simulation's h; T_s/h whole), `theta`
//! (the simulation's θ). Measurement (i_L, v), one gate. Signals at each
//! t_k: `sigma` (σ_k, A), `duty` (d_k), `i_ref` (A), `predicted` (the
//! predicted σ_{k+1} of the chosen duty, A), `ccm` (1, or 0 on the
//! fallback).

use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

use crate::boost_implicit::relay_duty;

/// The boost in CCM and its θ-scheme (module documentation).
#[derive(Debug, Clone, Copy)]
struct Scheme {
    v_in: f64,
    l: f64,
    c: f64,
    r: f64,
    theta: f64,
}

impl Scheme {
    /// One step of length `h` with the switch closed.
    fn closed(&self, x: [f64; 2], h: f64) -> [f64; 2] {
        let rc = self.r * self.c;
        let i = x[0] + h * self.v_in / self.l;
        let v = x[1] * (1.0 - h * (1.0 - self.theta) / rc) / (1.0 + h * self.theta / rc);
        [i, v]
    }

    /// One step of length `h` with the switch open, the diode conducting:
    /// i₁ + (h/L) v₁ = i₀ + h V_in/L, −(h/C) i₁ + (1 + hθ/(RC)) v₁ = v₀ (1 − h(1 − θ)/(RC)).
    fn open(&self, x: [f64; 2], h: f64) -> [f64; 2] {
        let rc = self.r * self.c;
        let (a12, a21, a22) = (h / self.l, -h / self.c, 1.0 + h * self.theta / rc);
        let b1 = x[0] + h * self.v_in / self.l;
        let b2 = x[1] * (1.0 - h * (1.0 - self.theta) / rc);
        let det = a22 - a12 * a21;
        [(b1 * a22 - a12 * b2) / det, (b2 - a21 * b1) / det]
    }
}

/// The law `current_smc_exact` (module documentation).
#[derive(Debug, Clone)]
pub struct ExactCurrentSmc {
    i_ref: f64,
    scheme: Scheme,
    h: f64,
    /// Steps per switching period, N.
    steps: usize,
    /// The closed-switch states x(t_k + m h), m = 0..=N, of this period.
    closed: Vec<[f64; 2]>,
    /// The open-switch grid step as an affine map x ↦ P x + c, and its
    /// powers: `open_map[r]` = (P^r, c_r) with x(t + r h) = P^r x + c_r.
    open_map: Vec<([f64; 4], [f64; 2])>,
    /// The scheduled opening (τ, 0) of this period, when 0 < d < 1.
    change: Option<f64>,
    gate_open: [f64; 1],
    sigma: [f64; 1],
    duty: [f64; 1],
    i_ref_signal: [f64; 1],
    predicted: [f64; 1],
    ccm: [f64; 1],
}

impl ExactCurrentSmc {
    /// From the parameters `i_ref`, `v_in`, `inductance`, `capacitance`,
    /// `resistance`, `step`, `theta`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(ExactCurrentSmc {
            i_ref: p.require_scalar("i_ref", "the reference inductor current (A)")?,
            scheme: Scheme {
                v_in: p.require_scalar("v_in", "the converter's input voltage (V)")?,
                l: p.require_scalar("inductance", "the converter's inductance (H)")?,
                c: p.require_scalar("capacitance", "the output capacitance (F)")?,
                r: p.require_scalar("resistance", "the load resistance (Ω)")?,
                theta: p.require_scalar("theta", "the simulation's θ")?,
            },
            h: p.require_scalar("step", "the simulation's step h (s)")?,
            steps: 0,
            closed: Vec::new(),
            open_map: Vec::new(),
            change: None,
            gate_open: [0.0],
            sigma: [0.0],
            duty: [0.0],
            i_ref_signal: [0.0],
            predicted: [0.0],
            ccm: [1.0],
        })
    }

    /// x(t_{k+1}) when the switch opens at s steps (s ∈ [0, N]) into the
    /// period, and the state just after the opening's step (for the CCM
    /// check). `self.closed` holds this period's closed-switch states.
    fn end_state(&self, s: f64) -> ([f64; 2], [f64; 2]) {
        let n = self.steps;
        let m = (s.floor() as usize).min(n);
        let frac = s - m as f64;
        let (x, r) = if m == n || frac == 0.0 {
            (self.closed[m], n - m)
        } else {
            let a = self.scheme.closed(self.closed[m], frac * self.h);
            let b = self.scheme.open(a, self.h - frac * self.h);
            (b, n - m - 1)
        };
        let (p, c) = &self.open_map[r];
        let end = [
            p[0] * x[0] + p[1] * x[1] + c[0],
            p[2] * x[0] + p[3] * x[1] + c[1],
        ];
        (end, x)
    }
}

impl Controller for ExactCurrentSmc {
    fn law(&self) -> &'static str {
        "current_smc_exact"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let bad = |what: &str, value: f64, reason: &str| ControlError::InvalidValue {
            object: setup.name.clone(),
            what: what.into(),
            value,
            reason: reason.into(),
        };
        let s = self.scheme;
        for (what, value) in [
            ("i_ref", self.i_ref),
            ("v_in", s.v_in),
            ("inductance", s.l),
            ("capacitance", s.c),
            ("resistance", s.r),
            ("step", self.h),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(bad(what, value, "must be positive and finite"));
            }
        }
        if !(s.theta.is_finite() && (0.0..=1.0).contains(&s.theta)) {
            return Err(bad("theta", s.theta, "must be in [0, 1]"));
        }
        let n = setup.period / self.h;
        if !(n.is_finite() && n >= 1.0 && (n - n.round()).abs() <= 1e-9 * n) {
            return Err(bad(
                "step",
                self.h,
                &format!(
                    "the controller's period {} must be a whole number of steps",
                    setup.period
                ),
            ));
        }
        if setup.measurement_dim != 2 || setup.input_dim != 1 {
            return Err(ControlError::Dimension {
                object: setup.name.clone(),
                what: if setup.input_dim != 1 {
                    "u"
                } else {
                    "measurement"
                },
                got: format!("{} → {}", setup.measurement_dim, setup.input_dim),
                expected: "(i_L, v) → one gate".into(),
            });
        }
        self.steps = n.round() as usize;
        self.closed = vec![[0.0; 2]; self.steps + 1];
        // The open-switch step is affine: its columns and offset from three
        // evaluations, then P^{r+1} = P P^r, c_{r+1} = P c_r + c.
        let c0 = s.open([0.0, 0.0], self.h);
        let e1 = s.open([1.0, 0.0], self.h);
        let e2 = s.open([0.0, 1.0], self.h);
        let p = [e1[0] - c0[0], e2[0] - c0[0], e1[1] - c0[1], e2[1] - c0[1]];
        self.open_map = Vec::with_capacity(self.steps + 1);
        let (mut pr, mut cr) = ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0]);
        for _ in 0..=self.steps {
            self.open_map.push((pr, cr));
            pr = [
                p[0] * pr[0] + p[1] * pr[2],
                p[0] * pr[1] + p[1] * pr[3],
                p[2] * pr[0] + p[3] * pr[2],
                p[2] * pr[1] + p[3] * pr[3],
            ];
            cr = [
                p[0] * cr[0] + p[1] * cr[1] + c0[0],
                p[2] * cr[0] + p[3] * cr[1] + c0[1],
            ];
        }
        self.change = None;
        Ok(())
    }

    fn compute(&mut self, t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let x = [y[0], y[1]];
        let n = self.steps;
        self.closed[0] = x;
        for m in 0..n {
            self.closed[m + 1] = self.scheme.closed(self.closed[m], self.h);
        }
        let sigma = |law: &Self, s: f64| law.end_state(s).0[0] - law.i_ref;
        let (lo_sigma, hi_sigma) = (sigma(self, 0.0), sigma(self, n as f64));
        let s = if lo_sigma >= 0.0 {
            0.0
        } else if hi_sigma <= 0.0 {
            n as f64
        } else {
            // σ(lo) < 0 < σ(hi): bisection to adjacent floats.
            let (mut lo, mut hi) = (0.0f64, n as f64);
            loop {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if sigma(self, mid) < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if sigma(self, lo).abs() <= sigma(self, hi).abs() {
                lo
            } else {
                hi
            }
        };
        let (end, after) = self.end_state(s);
        let ccm = s >= n as f64 || (end[0] > 0.0 && after[0] > 0.0);
        let (s, end) = if ccm {
            (s, end)
        } else {
            // DCM: the prediction does not hold; the frozen-v relay duty.
            let scale = n as f64 * self.h / self.scheme.l;
            let d = relay_duty(
                x[0] - self.i_ref + scale * (self.scheme.v_in - x[1]),
                scale * x[1],
            );
            (d * n as f64, [f64::NAN, f64::NAN])
        };
        let d = s / n as f64;
        self.sigma = [x[0] - self.i_ref];
        self.duty = [d];
        self.i_ref_signal = [self.i_ref];
        self.predicted = [end[0] - self.i_ref];
        self.ccm = [if ccm { 1.0 } else { 0.0 }];
        u[0] = if s > 0.0 { 1.0 } else { 0.0 };
        self.change = (s > 0.0 && s < n as f64).then_some(t + s * self.h);
        Ok(())
    }

    fn scheduled_change(&self) -> Option<(f64, &[f64])> {
        self.change.map(|tau| (tau, &self.gate_open[..]))
    }

    fn schedules_changes(&self) -> bool {
        true
    }

    fn signal_names(&self) -> &[&'static str] {
        &["sigma", "duty", "i_ref", "predicted", "ccm"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "sigma" => Some(&self.sigma[..]),
            "duty" => Some(&self.duty[..]),
            "i_ref" => Some(&self.i_ref_signal[..]),
            "predicted" => Some(&self.predicted[..]),
            "ccm" => Some(&self.ccm[..]),
            _ => None,
        }
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend([
            if self.change.is_some() { 1.0 } else { 0.0 },
            self.change.unwrap_or(0.0),
            self.sigma[0],
            self.duty[0],
            self.i_ref_signal[0],
            self.predicted[0],
            self.ccm[0],
        ]);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let has = r.flag()?;
        let v = r.take(6)?;
        self.change = has.then_some(v[0]);
        self.sigma = [v[1]];
        self.duty = [v[2]];
        self.i_ref_signal = [v[3]];
        self.predicted = [v[4]];
        self.ccm = [v[5]];
        Ok(r.consumed())
    }
}

#[cfg(test)]
mod tests {
    use super::ExactCurrentSmc;
    use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, LawValue};

    fn law(i_ref: f64, step: f64) -> ExactCurrentSmc {
        let p = LawParams::new(
            "gate",
            [
                ("i_ref", i_ref),
                ("v_in", 10.0),
                ("inductance", 1e-3),
                ("capacitance", 1e-4),
                ("resistance", 20.0),
                ("step", step),
                ("theta", 0.5),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), LawValue::Scalar(*v)))
            .collect(),
        );
        ExactCurrentSmc::from_params(&p).unwrap()
    }

    fn setup(period: f64) -> ControllerSetup {
        ControllerSetup {
            name: "gate".into(),
            period,
            measurement_dim: 2,
            input_dim: 1,
            state_dim: 2,
            plant: None,
            measurement_map: None,
        }
    }

    /// The predicted σ_{k+1} of the chosen duty is zero to round-off inside
    /// (0, 1), and the opening is scheduled at t + d T_s; the reaching
    /// phase clamps to 1 (below the surface) or 0 (above) with no change.
    #[test]
    fn the_duty_zeroes_the_prediction_or_clamps() {
        let mut c = law(3.125, 1e-7);
        c.initialize(&setup(1e-5)).unwrap();
        let mut u = [0.0];
        c.compute(1e-3, &[3.125, 25.0], &mut u).unwrap();
        let d = c.signal("duty").unwrap()[0];
        let predicted = c.signal("predicted").unwrap()[0];
        assert!(d > 0.55 && d < 0.65, "{d}");
        assert!(predicted.abs() <= 1e-12, "{predicted}");
        assert_eq!(u, [1.0]);
        let (tau, u_after) = c.scheduled_change().unwrap();
        assert!((tau - (1e-3 + d * 1e-5)).abs() <= 1e-18);
        assert_eq!(u_after, &[0.0]);
        // Far below: d = 1, no opening in the period.
        c.compute(0.0, &[0.0, 5.0], &mut u).unwrap();
        assert_eq!((u[0], c.signal("duty").unwrap()[0]), (1.0, 1.0));
        assert!(c.scheduled_change().is_none());
        // Far above: d = 0, the switch stays open.
        c.compute(0.0, &[6.0, 25.0], &mut u).unwrap();
        assert_eq!((u[0], c.signal("duty").unwrap()[0]), (0.0, 0.0));
        assert!(c.scheduled_change().is_none());
        assert_eq!(c.signal("ccm").unwrap(), &[1.0]);
    }

    /// With no inductor current and the capacitor empty, the open switch
    /// alone would bring i_L above a small i_ref: d = 0, but the diode
    /// starts at zero current (the CCM prediction does not hold there), so
    /// the law falls back to the frozen-v relay duty and says so.
    #[test]
    fn a_start_at_zero_current_falls_back_and_says_so() {
        let mut c = law(0.05, 1e-7);
        c.initialize(&setup(1e-5)).unwrap();
        let mut u = [1.0];
        c.compute(0.0, &[0.0, 0.0], &mut u).unwrap();
        assert_eq!(c.signal("ccm").unwrap(), &[0.0]);
        assert_eq!(u, [0.0]);
        assert!(c.signal("predicted").unwrap()[0].is_nan());
    }

    #[test]
    fn save_and_restore_keep_the_scheduled_opening() {
        let mut c = law(3.125, 1e-7);
        c.initialize(&setup(1e-5)).unwrap();
        let mut u = [0.0];
        c.compute(2e-3, &[3.1, 24.0], &mut u).unwrap();
        let mut saved = vec![];
        c.save_state(&mut saved);
        let before = (
            c.scheduled_change().map(|(t, _)| t),
            c.signal("duty").unwrap()[0],
        );
        c.compute(0.0, &[0.0, 5.0], &mut u).unwrap();
        assert_eq!(c.restore_state(&saved).unwrap(), saved.len());
        let after = (
            c.scheduled_change().map(|(t, _)| t),
            c.signal("duty").unwrap()[0],
        );
        assert_eq!(before, after);
        assert!(before.0.is_some());
        assert!(matches!(
            c.restore_state(&saved[..3]),
            Err(ControlError::State { .. })
        ));
    }

    #[test]
    fn a_period_that_is_not_whole_steps_and_bad_values_are_refused() {
        let mut c = law(3.125, 3e-7);
        assert!(matches!(
            c.initialize(&setup(1e-6)),
            Err(ControlError::InvalidValue { .. })
        ));
        let mut c = law(-1.0, 1e-7);
        assert!(matches!(
            c.initialize(&setup(1e-5)),
            Err(ControlError::InvalidValue { .. })
        ));
        let mut c = law(1.0, 1e-7);
        let wrong = ControllerSetup {
            measurement_dim: 1,
            ..setup(1e-5)
        };
        assert!(matches!(
            c.initialize(&wrong),
            Err(ControlError::Dimension { .. })
        ));
    }
}
