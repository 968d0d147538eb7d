//! The sampled Luenberger observer, in predictor form.
//!
//! # Equations
//!
//! For a linear time-invariant plant ẋ = A x + g with a linear sensor
//! y = C x (A from [`ObserverSetup::a`], C from [`ObserverSetup::c`]; both
//! required), g the input the loop hands over (held over each period, in
//! state coordinates) and T the observer's period:
//!
//! ```text
//! x̂_0 = x0                                                     (ObserverSetup::x0)
//! x̂_k = Φ x̂_{k−1} + Γ g_{k−1} + L (y_{k−1} − C x̂_{k−1}),        k ≥ 1
//! Φ = e^{AT},   Γ = ∫₀ᵀ e^{As} ds   (n × n)
//! ```
//!
//! L (n × p, parameter `L`) is a discrete-time gain. Since the plant is
//! exactly x_k = Φ x_{k−1} + Γ g_{k−1} under the zero-order hold, the error
//! e_k = x̂_k − x_k follows
//!
//! ```text
//! e_k = (Φ − L C) e_{k−1} = (Φ − L C)^k e_0,
//! ```
//!
//! so L must make Φ − L C Schur stable: its spectral radius must be < 1
//! (checked when the loop is built). The estimate at t_k uses the
//! measurement of t_{k−1} (predictor form): a controller reading it at t_k
//! gets a one-period prediction, computed without the current measurement.
//! At its first instant the observer only records y_0.
//!
//! The observer's period should be its sensor's (the latest delivered y is
//! used), and g is assumed constant over each of its periods (controllers
//! acting at the observer's instants or on a multiple of its period).
//!
//! [`ObserverSetup::a`]: nonsmooth::control::ObserverSetup::a
//! [`ObserverSetup::c`]: nonsmooth::control::ObserverSetup::c

use nalgebra::DMatrix;
use nonsmooth::control::{ControlError, LawParams, Observer, ObserverSetup, StateReader};

use crate::linalg::{
    check_finite, dim_err, invalid, mul_add, mul_to, shape, spectral_radius, unsupported, zoh,
};

/// The Luenberger observer (see the module documentation).
#[derive(Debug, Clone)]
pub struct Luenberger {
    l: DMatrix<f64>,
    phi: DMatrix<f64>,
    gamma: DMatrix<f64>,
    c: DMatrix<f64>,
    xhat: Vec<f64>,
    next: Vec<f64>,
    y_prev: Vec<f64>,
    innovation: Vec<f64>,
    has_prev: bool,
}

/// A, C and the checked sizes of an observer's setup.
pub(crate) fn linear_setup(
    setup: &ObserverSetup,
) -> Result<(DMatrix<f64>, DMatrix<f64>), ControlError> {
    let name = setup.name.as_str();
    let a = setup.a.clone().ok_or_else(|| {
        unsupported(
            name,
            "the observer needs a linear time-invariant plant (its A)".into(),
        )
    })?;
    let c = setup.c.clone().ok_or_else(|| {
        unsupported(
            name,
            "the observer needs a linear sensor y = C x without feedthrough".into(),
        )
    })?;
    let (n, p) = (setup.state_dim, setup.measurement_dim);
    if a.shape() != (n, n) {
        return Err(dim_err(name, "A", shape(&a), format!("{n}×{n}")));
    }
    if c.shape() != (p, n) {
        return Err(dim_err(name, "C", shape(&c), format!("{p}×{n}")));
    }
    if setup.x0.len() != n {
        return Err(dim_err(
            name,
            "x0",
            setup.x0.len().to_string(),
            n.to_string(),
        ));
    }
    Ok((a, c))
}

impl Luenberger {
    /// The gain L (n × p).
    pub fn new(l: DMatrix<f64>) -> Self {
        Luenberger {
            l,
            phi: DMatrix::zeros(0, 0),
            gamma: DMatrix::zeros(0, 0),
            c: DMatrix::zeros(0, 0),
            xhat: Vec::new(),
            next: Vec::new(),
            y_prev: Vec::new(),
            innovation: Vec::new(),
            has_prev: false,
        }
    }

    /// From the catalog parameter `L`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(Self::new(p.require_matrix(
            "L",
            "the discrete observer gain, n × p",
        )?))
    }
}

impl Observer for Luenberger {
    fn law(&self) -> &'static str {
        "luenberger"
    }

    fn initialize(&mut self, setup: &ObserverSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        let (a, c) = linear_setup(setup)?;
        let (n, p) = (setup.state_dim, setup.measurement_dim);
        if self.l.shape() != (n, p) {
            return Err(dim_err(name, "L", shape(&self.l), format!("{n}×{p}")));
        }
        check_finite(name, "L", self.l.as_slice())?;
        let (phi, gamma) = zoh(name, &a, setup.period)?;
        let rho = spectral_radius(&(&phi - &self.l * &c));
        if rho >= 1.0 {
            return Err(invalid(
                name,
                "L",
                rho,
                "the spectral radius of Φ − L C must be < 1 for the estimation error to decay",
            ));
        }
        self.phi = phi;
        self.gamma = gamma;
        self.c = c;
        self.xhat = setup.x0.clone();
        self.next = vec![0.0; n];
        self.y_prev = vec![0.0; p];
        self.innovation = vec![0.0; p];
        self.has_prev = false;
        Ok(())
    }

    fn update(&mut self, _t: f64, y: &[f64], g: &[f64]) -> Result<(), ControlError> {
        if self.has_prev {
            // innovation = y_{k−1} − C x̂_{k−1}
            mul_to(&self.c, &self.xhat, &mut self.innovation);
            for (i, v) in self.innovation.iter_mut().enumerate() {
                *v = self.y_prev[i] - *v;
            }
            mul_to(&self.phi, &self.xhat, &mut self.next);
            mul_add(&self.gamma, g, &mut self.next);
            mul_add(&self.l, &self.innovation, &mut self.next);
            std::mem::swap(&mut self.xhat, &mut self.next);
        }
        self.y_prev.copy_from_slice(y);
        self.has_prev = true;
        Ok(())
    }

    fn estimate(&self) -> &[f64] {
        &self.xhat
    }

    /// The estimate, the previous measurement and whether there is one.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.xhat);
        out.extend_from_slice(&self.y_prev);
        out.push(f64::from(u8::from(self.has_prev)));
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let xhat = r.take(self.xhat.len())?;
        let y_prev = r.take(self.y_prev.len())?;
        let has_prev = r.flag()?;
        self.xhat.copy_from_slice(xhat);
        self.y_prev.copy_from_slice(y_prev);
        self.has_prev = has_prev;
        Ok(r.consumed())
    }
}
