//! A sampled sliding reduced-order observer with an implicit
//! (chattering-free) sliding injection.
//!
//! # Idea
//!
//! The measured part of the state needs no estimate: C x̂_k = y_k is imposed.
//! Only the unmeasured part, the component of x in ker C, is estimated. Its
//! correction comes from a sliding-mode output injection: the prediction of
//! the new measurement is driven onto the measurement by a relay of gain M,
//! and the relay's value — the equivalent injection, found exactly by the
//! implicit discretisation — carries the information on the unmeasured part.
//!
//! # Equations
//!
//! Plant ẋ = A x + g, sensor y = C x (A from [`ObserverSetup::a`], C from
//! [`ObserverSetup::c`], both required; C of full row rank p < n), T the
//! observer's period, Φ = e^{AT}, Γ = ∫₀ᵀ e^{As} ds,
//! C⁺ = Cᵀ (C Cᵀ)⁻¹ and P = I − C⁺ C (the projector onto ker C):
//!
//! ```text
//! x̂_0 = C⁺ y_0 + P x0                                       (x0 = ObserverSetup::x0)
//! x⁻_k = Φ x̂_{k−1} + Γ g_{k−1}                                (prediction)
//! s_k  = C x⁻_k − y_k                                         (sliding variable before injection)
//! v_k  = T M ν_k,   ν_k ∈ Sgn(s_k − T M ν_k)                   (implicit relay, per output)
//!      ⇔ ν_{k,i} = max(−1, min(1, s_{k,i} / (T M_i)))
//! x̂_k = C⁺ y_k + P (x⁻_k − L v_k)
//! ```
//!
//! M (parameter `M`, > 0 per output, in units of y per second) bounds the
//! injection rate; L (parameter `L`, n × p) is the reduced-order gain (only
//! P L matters). The relay is solved exactly: when |s_{k,i}| ≤ T M_i the
//! predicted output is put on the measurement in one step (s − T M ν = 0, the
//! discrete sliding mode) and v_k = s_k is the equivalent injection; otherwise
//! the injection saturates at ±T M_i (reaching phase). No sign is evaluated
//! on a sampled value, so the injection does not chatter.
//!
//! # Stability
//!
//! With e = x̂ − x (e_k ∈ ker C) and x_k = Φ x_{k−1} + Γ g_{k−1} exactly, in the
//! sliding phase (|(C Φ e_{k−1})_i| ≤ T M_i for every i) v_k = C Φ e_{k−1} and
//!
//! ```text
//! e_k = P (Φ − L C Φ) e_{k−1}.
//! ```
//!
//! The error decays when the spectral radius of P (Φ − L C Φ) P is < 1
//! (checked when the loop is built; it exists iff the pair (A, C) is
//! detectable, for a non-pathological T). Outside the sliding phase the
//! correction per period is limited to T M_i per output: choose M above the
//! expected |C Φ e|/T to have the linear decay from the start.
//!
//! [`ObserverSetup::a`]: nonsmooth::control::ObserverSetup::a
//! [`ObserverSetup::c`]: nonsmooth::control::ObserverSetup::c

use nalgebra::DMatrix;
use nonsmooth::control::{ControlError, LawParams, Observer, ObserverSetup, StateReader};

use crate::linalg::{
    check_finite, check_positive, dim_err, invalid, inverse, mul_add, mul_to, per_channel, shape,
    spectral_radius, unsupported, zoh,
};
use crate::luenberger::linear_setup;

/// The sliding reduced-order observer (see the module documentation).
#[derive(Debug, Clone)]
pub struct SlidingObserver {
    l: DMatrix<f64>,
    m_gain: Vec<f64>,
    rate: Vec<f64>,
    phi: DMatrix<f64>,
    gamma: DMatrix<f64>,
    c: DMatrix<f64>,
    c_pinv: DMatrix<f64>,
    proj: DMatrix<f64>,
    x0: Vec<f64>,
    xhat: Vec<f64>,
    pred: Vec<f64>,
    s: Vec<f64>,
    started: bool,
}

impl SlidingObserver {
    /// The gain L (n × p) and the injection bound M > 0 (one number, or one
    /// per output; units of y per second).
    pub fn new(l: DMatrix<f64>, m: Vec<f64>) -> Self {
        SlidingObserver {
            l,
            m_gain: m,
            rate: Vec::new(),
            phi: DMatrix::zeros(0, 0),
            gamma: DMatrix::zeros(0, 0),
            c: DMatrix::zeros(0, 0),
            c_pinv: DMatrix::zeros(0, 0),
            proj: DMatrix::zeros(0, 0),
            x0: Vec::new(),
            xhat: Vec::new(),
            pred: Vec::new(),
            s: Vec::new(),
            started: false,
        }
    }

    /// From the catalog parameters `L` and `M`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(Self::new(
            p.require_matrix("L", "the reduced-order gain, n × p")?,
            p.require_vector(
                "M",
                "the sliding injection bound M > 0 (units of y per second)",
            )?,
        ))
    }
}

impl Observer for SlidingObserver {
    fn law(&self) -> &'static str {
        "sliding_observer"
    }

    fn initialize(&mut self, setup: &ObserverSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        let (a, c) = linear_setup(setup)?;
        let (n, p) = (setup.state_dim, setup.measurement_dim);
        if p >= n {
            return Err(unsupported(
                name,
                format!("the sensor measures {p} values of a state of {n}: nothing is left to estimate (use luenberger)"),
            ));
        }
        if self.l.shape() != (n, p) {
            return Err(dim_err(name, "L", shape(&self.l), format!("{n}×{p}")));
        }
        check_finite(name, "L", self.l.as_slice())?;
        let m = per_channel(name, "M", &self.m_gain, p)?;
        check_positive(name, "M", &m)?;
        let cct_inv = inverse(
            name,
            "C Cᵀ (C must have full row rank)",
            &(&c * c.transpose()),
        )?;
        let c_pinv = c.transpose() * cct_inv;
        let proj = DMatrix::identity(n, n) - &c_pinv * &c;
        let (phi, gamma) = zoh(name, &a, setup.period)?;
        let err = &proj * (&phi - &self.l * &c * &phi) * &proj;
        let rho = spectral_radius(&err);
        if rho >= 1.0 {
            return Err(invalid(
                name,
                "L",
                rho,
                "the spectral radius of P (Φ − L C Φ) P must be < 1 for the estimation error to decay",
            ));
        }
        self.rate = m.iter().map(|mi| setup.period * mi).collect();
        self.phi = phi;
        self.gamma = gamma;
        self.c = c;
        self.c_pinv = c_pinv;
        self.proj = proj;
        self.x0 = setup.x0.clone();
        // Until the first measurement the estimate is x0.
        self.xhat = setup.x0.clone();
        self.pred = vec![0.0; n];
        self.s = vec![0.0; p];
        self.started = false;
        Ok(())
    }

    fn update(&mut self, _t: f64, y: &[f64], g: &[f64]) -> Result<(), ControlError> {
        if self.started {
            // x⁻ = Φ x̂ + Γ g;  s = C x⁻ − y.
            mul_to(&self.phi, &self.xhat, &mut self.pred);
            mul_add(&self.gamma, g, &mut self.pred);
            mul_to(&self.c, &self.pred, &mut self.s);
            for (i, si) in self.s.iter_mut().enumerate() {
                let nu = ((*si - y[i]) / self.rate[i]).clamp(-1.0, 1.0);
                // The injection v = T M ν, stored in s.
                *si = self.rate[i] * nu;
            }
            // pred ← x⁻ − L v.
            for (j, pj) in self.pred.iter_mut().enumerate() {
                let mut acc = 0.0;
                for (i, vi) in self.s.iter().enumerate() {
                    acc += self.l[(j, i)] * vi;
                }
                *pj -= acc;
            }
        } else {
            self.pred.copy_from_slice(&self.x0);
            self.started = true;
        }
        // x̂ = C⁺ y + P pred.
        mul_to(&self.c_pinv, y, &mut self.xhat);
        mul_add(&self.proj, &self.pred, &mut self.xhat);
        Ok(())
    }

    fn estimate(&self) -> &[f64] {
        &self.xhat
    }

    /// The estimate and whether the first measurement was seen.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.xhat);
        out.push(f64::from(u8::from(self.started)));
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let xhat = r.take(self.xhat.len())?;
        let started = r.flag()?;
        self.xhat.copy_from_slice(xhat);
        self.started = started;
        Ok(r.consumed())
    }
}
