//! Sliding-mode control of a linear time-invariant plant on a linear
//! sliding variable σ = C_s x: implicit (chattering-free), explicit, the
//! one-step law of Su, Drakunov and Özgüner (OT2), and the implicit law with
//! perturbation prediction.
//!
//! # Setting
//!
//! The plant is ẋ = A x + B u + p(t), with (A, B) from
//! [`ControllerSetup::plant`] (required: the law needs a linear
//! time-invariant plant whose input enters through a matrix) and p an
//! unknown perturbation. The measurement is the whole state x (a sensor with
//! C = I, or an observer's estimate): the measurement size must equal the
//! state size n. C_s (parameter `csurface`) has one row per input (m × n), so
//! that C_s Γ is square.
//!
//! The input is held over each period T (the controller's period from
//! [`ControllerSetup::period`]), so the plant is exactly
//!
//! ```text
//! x_{k+1} = Φ x_k + Γ u_k + d_k,    Φ = e^{AT},  Γ = ∫₀ᵀ e^{As} ds B,
//! σ_{k+1} = C_s Φ x_k + C_s Γ u_k + C_s d_k,
//! ```
//!
//! d_k = ∫ e^{A(t_{k+1}−s)} p(s) ds the effect of the perturbation over the
//! period (unknown to the laws, estimated by OT2 and the improved law). C_s Γ
//! must be invertible (checked: condition number ≤ 10¹²).
//!
//! # Equivalent control (all laws)
//!
//! The discrete equivalent control keeps σ where it is in one step when
//! there is no perturbation (Acary, Brogliato, Orlov 2012):
//!
//! ```text
//! u_eq,k = −(C_s Γ)⁻¹ C_s (Φ − I) x_k,   so that   σ̃_{k+1} := C_s Φ x_k + C_s Γ u_eq,k = σ_k.
//! ```
//!
//! # Implicit law (`smc_implicit`, [`ImplicitSmc`])
//!
//! ```text
//! u_k = u_eq,k + u_s,k,
//! σ_{k+1} = σ̃_{k+1} + C_s Γ u_s,k,      u_s,k ∈ −α Sgn(σ_{k+1})
//! ```
//!
//! (α > 0 per input, Sgn the set-valued sign, componentwise.) With
//! z = u_s/α this is the relay problem w = M z + q, M = C_s Γ diag(α),
//! q = σ̃_{k+1} = σ_k, z ∈ \[−1, 1\]^m, −w ∈ N_{\[−1,1\]}(z), solved at each instant
//! by the core's relay solver ([`nonsmooth::numerics::relay::DefaultRelay`]).
//! C_s Γ must be a P-matrix (checked) so that the solution is unique. For one
//! input: u_s = −σ_k/(C_sΓ) when |σ_k| ≤ α C_sΓ (then σ_{k+1} = 0 exactly: the
//! discrete sliding mode, |u_s| < α, no chattering), u_s = −α sign(σ_k)
//! otherwise (reaching: σ moves by α C_sΓ per period).
//!
//! # Explicit law (`smc_explicit`, [`ExplicitSmc`])
//!
//! ```text
//! u_k = u_eq,k + u_s,k,   u_s,k = −α sign(σ_k)               (sign(0) = 0)
//!                   or    u_s,k = −α sat(σ_k / ε)             (boundary layer ε > 0)
//! ```
//!
//! sat(s) = max(−1, min(1, s)), so |u_s| ≤ α. Without a boundary layer the
//! unperturbed σ chatters in a band of width α C_sΓ = O(T):
//! σ_{k+1} = σ_k − α C_sΓ sign(σ_k). Inside the layer σ_{k+1} = (1 − α C_sΓ/ε) σ_k,
//! which converges when ε > α C_sΓ/2 (one input).
//!
//! # One-step law (`smc_ot2`, [`Ot2Smc`])
//!
//! Su, Drakunov and Özgüner's law puts the predicted σ_{k+1} at zero, with
//! the perturbation of the last period as the prediction of the next:
//!
//! ```text
//! x̂_k = Φ x_{k−1} + Γ u_{k−1}   (x̂_0 = x_0),     d̂_k = x_k − x̂_k  (= d_{k−1})
//! u_k = sat_ū( −(C_s Γ)⁻¹ C_s (Φ x_k + d̂_k) )
//! ```
//!
//! sat_ū clamps each input to [−ū_i, ū_i] (parameter `clamp`; no clamp when
//! absent). Unclamped, σ_{k+1} = C_s (d_k − d_{k−1}) = O(T²) for a smooth
//! perturbation. Signals: u_eq as above and u_s = u_k − u_eq,k.
//!
//! # Implicit law with perturbation prediction (`smc_improved`, [`ImprovedSmc`])
//!
//! The effect of the perturbation on σ over the last period is measured,
//! δ_{k−1} = σ_k − C_s (Φ x_{k−1} + Γ u_{k−1}) (= C_s d_{k−1}), and extrapolated
//! to the coming period with a polynomial of order q ∈ {0, 1, 2} (`order`):
//!
//! ```text
//! q = 0:  δ̂_k = δ_{k−1}
//! q = 1:  δ̂_k = 2 δ_{k−1} − δ_{k−2}
//! q = 2:  δ̂_k = 3 δ_{k−1} − 3 δ_{k−2} + δ_{k−3}
//! ```
//!
//! (δ̂_0 = 0; while fewer than q + 1 values are known the highest possible
//! order is used). It is compensated by u_p,k = −(C_sΓ)⁻¹ δ̂_k, scaled down to
//! ‖u_p‖₂ ≤ `perturbation_bound` when given, and the implicit relay acts on
//! what is left:
//!
//! ```text
//! u_k = u_eq,k + u_p,k + u_s,k,
//! σ_{k+1} = σ_k + δ̂_k + C_sΓ u_p,k + C_sΓ u_s,k,     u_s,k ∈ −α Sgn(σ_{k+1}).
//! ```
//!
//! In the sliding phase σ_{k+1} = C_s d_k − δ̂_k, i.e. O(T^{q+2}) for a smooth
//! matched perturbation (the implicit law alone: C_s d_k = O(T)). The
//! measurement of δ assumes the computed input is applied at once (no
//! actuation delay).
//!
//! # Signals
//!
//! `u_eq` (m), `u_s` (m), `sigma` (m: σ_k = C_s x_k); the improved law adds
//! `u_p` (m).
//!
//! [`ControllerSetup::plant`]: nonsmooth::control::ControllerSetup::plant
//! [`ControllerSetup::period`]: nonsmooth::control::ControllerSetup::period

use nalgebra::DMatrix;
use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};
use nonsmooth::numerics::relay::{DefaultRelay, Relay, RelaySolver};
use nonsmooth::numerics::{Matrix, SolverSettings};

use crate::linalg::{
    check_finite, check_positive, dim_err, invalid, inverse, is_p_matrix, mul_add, mul_to,
    per_channel, shape, sign0, unsupported, zoh,
};

/// The signals every sliding-mode law records.
const SMC_SIGNALS: &[&str] = &["u_eq", "u_s", "sigma"];

/// The signal named `name` among (u_eq, u_s, σ).
fn smc_signal<'a>(
    name: &str,
    u_eq: &'a [f64],
    u_s: &'a [f64],
    sigma: &'a [f64],
) -> Option<&'a [f64]> {
    match name {
        "u_eq" => Some(u_eq),
        "u_s" => Some(u_s),
        "sigma" => Some(sigma),
        _ => None,
    }
}

/// Appends the signals (u_eq, u_s, σ).
fn save_signals(out: &mut Vec<f64>, u_eq: &[f64], u_s: &[f64], sigma: &[f64]) {
    out.extend_from_slice(u_eq);
    out.extend_from_slice(u_s);
    out.extend_from_slice(sigma);
}

/// Reads the signals (u_eq, u_s, σ) saved by [`save_signals`], each of
/// length m.
fn take_signals<'a>(r: &mut StateReader<'a>, m: usize) -> Result<[&'a [f64]; 3], ControlError> {
    Ok([r.take(m)?, r.take(m)?, r.take(m)?])
}

/// Copies values read by [`take_signals`] into (u_eq, u_s, σ).
fn put_signals(read: [&[f64]; 3], u_eq: &mut [f64], u_s: &mut [f64], sigma: &mut [f64]) {
    u_eq.copy_from_slice(read[0]);
    u_s.copy_from_slice(read[1]);
    sigma.copy_from_slice(read[2]);
}

/// The discrete data every law of the family needs.
#[derive(Debug, Clone)]
struct Discrete {
    cs: DMatrix<f64>,
    phi: DMatrix<f64>,
    gamma_b: DMatrix<f64>,
    cs_phi: DMatrix<f64>,
    cs_gamma: DMatrix<f64>,
    cs_gamma_inv: DMatrix<f64>,
    /// −(C_sΓ)⁻¹ C_s (Φ − I).
    k_eq: DMatrix<f64>,
}

fn discretise(setup: &ControllerSetup, cs: &DMatrix<f64>) -> Result<Discrete, ControlError> {
    let name = setup.name.as_str();
    let plant = setup.plant.as_ref().ok_or_else(|| {
        unsupported(
            name,
            "the law needs a linear time-invariant plant whose input enters through a matrix B"
                .into(),
        )
    })?;
    let (n, m) = (setup.state_dim, setup.input_dim);
    if setup.measurement_dim != n {
        return Err(dim_err(
            name,
            "measurement",
            setup.measurement_dim.to_string(),
            format!("{n}, the state (a sensor with C = I, or an observer)"),
        ));
    }
    if let Some(c) = &setup.measurement_map {
        if *c != DMatrix::identity(n, n) {
            return Err(unsupported(
                name,
                format!(
                    "the law reads the state x: its measurement must be y = x (a sensor with C = I, or an observer), not y = C x with C = {}",
                    crate::linalg::show(c)
                ),
            ));
        }
    }
    if plant.a.shape() != (n, n) {
        return Err(dim_err(name, "A", shape(&plant.a), format!("{n}×{n}")));
    }
    if plant.b.shape() != (n, m) {
        return Err(dim_err(name, "B", shape(&plant.b), format!("{n}×{m}")));
    }
    if cs.shape() != (m, n) {
        return Err(dim_err(
            name,
            "csurface",
            shape(cs),
            format!("{m}×{n} (one row per input, one column per state)"),
        ));
    }
    check_finite(name, "csurface", cs.as_slice())?;
    let (phi, gamma) = zoh(name, &plant.a, setup.period)?;
    let gamma_b = gamma * &plant.b;
    let cs_gamma = cs * &gamma_b;
    let cs_gamma_inv = inverse(name, "C_s Γ", &cs_gamma)?;
    let cs_phi = cs * &phi;
    let k_eq = -(&cs_gamma_inv * (&cs_phi - cs));
    Ok(Discrete {
        cs: cs.clone(),
        phi,
        gamma_b,
        cs_phi,
        cs_gamma,
        cs_gamma_inv,
        k_eq,
    })
}

fn alpha_of(setup: &ControllerSetup, alpha: &[f64]) -> Result<Vec<f64>, ControlError> {
    let a = per_channel(&setup.name, "alpha", alpha, setup.input_dim)?;
    check_positive(&setup.name, "alpha", &a)?;
    Ok(a)
}

fn not_ready(t: f64, object: &str) -> ControlError {
    ControlError::LawFailed {
        t,
        object: object.to_string(),
        reason: "the law was not initialised".into(),
    }
}

/// The implicit relay u_s ∈ −α Sgn(q + C_sΓ u_s), solved by the core's
/// relay solver on z = u_s/α; sized once, then allocation-free.
#[derive(Debug)]
struct ImplicitRelay {
    problem: Relay,
    solver: DefaultRelay,
    z: Vec<f64>,
    w: Vec<f64>,
}

impl ImplicitRelay {
    fn new(name: &str, cs_gamma: &DMatrix<f64>, alpha: &[f64]) -> Result<Self, ControlError> {
        if !is_p_matrix(cs_gamma) {
            return Err(unsupported(
                name,
                format!(
                    "C_s Γ = {:?} is not a P-matrix (some principal minor ≤ 0): the implicit \
                     relay u_s ∈ −α Sgn(σ_(k+1)) may have no solution or several; orient the \
                     rows of C_s so that C_s B has positive principal minors",
                    cs_gamma.as_slice()
                ),
            ));
        }
        let m = alpha.len();
        let mut mat = cs_gamma.clone();
        for (j, a) in alpha.iter().enumerate() {
            mat.column_mut(j).scale_mut(*a);
        }
        let problem = Relay::new(
            Matrix::Dense(mat),
            vec![1.0; m],
            vec![-1.0; m],
            vec![1.0; m],
        )
        .map_err(|e| unsupported(name, format!("relay problem: {e}")))?;
        let solver = DefaultRelay::new(SolverSettings::default());
        let mut r = ImplicitRelay {
            problem,
            solver,
            z: vec![0.0; m],
            w: vec![0.0; m],
        };
        // Size the solver's work space now (a problem with a nonzero solution).
        r.solve(0.0, name)?;
        r.z.iter_mut().for_each(|z| *z = 0.0);
        Ok(r)
    }

    /// Appends the warm start of the next solve (z, and w = M z + q).
    fn save(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.z);
        out.extend_from_slice(&self.w);
    }

    /// Reads what [`ImplicitRelay::save`] wrote (two slices of length m).
    fn take<'a>(&self, r: &mut StateReader<'a>) -> Result<[&'a [f64]; 2], ControlError> {
        Ok([r.take(self.z.len())?, r.take(self.w.len())?])
    }

    /// Copies values read by [`ImplicitRelay::take`].
    fn put(&mut self, read: [&[f64]; 2]) {
        self.z.copy_from_slice(read[0]);
        self.w.copy_from_slice(read[1]);
    }

    /// Sets q = σ̃_{k+1}, solves, leaves z = u_s/α in `self.z`.
    fn solve(&mut self, t: f64, name: &str) -> Result<(), ControlError> {
        let report = self
            .solver
            .solve(&self.problem, &mut self.z, &mut self.w)
            .map_err(|e| ControlError::LawFailed {
                t,
                object: name.to_string(),
                reason: format!("relay problem: {e}"),
            })?;
        if !report.status.is_solved() {
            return Err(ControlError::LawFailed {
                t,
                object: name.to_string(),
                reason: format!(
                    "the relay problem was not solved ({:?}, error {:e})",
                    report.status, report.error
                ),
            });
        }
        Ok(())
    }
}

/// The implicit linear sliding-mode controller (see the module documentation).
#[derive(Debug)]
pub struct ImplicitSmc {
    csurface: DMatrix<f64>,
    alpha: Vec<f64>,
    name: String,
    d: Option<Discrete>,
    relay: Option<ImplicitRelay>,
    alpha_m: Vec<f64>,
    sigma: Vec<f64>,
    u_eq: Vec<f64>,
    u_s: Vec<f64>,
}

impl ImplicitSmc {
    /// σ = C_s x (`csurface`, m × n) and the relay gain α (> 0; one number,
    /// or one per input).
    pub fn new(csurface: DMatrix<f64>, alpha: Vec<f64>) -> Self {
        ImplicitSmc {
            csurface,
            alpha,
            name: String::new(),
            d: None,
            relay: None,
            alpha_m: Vec::new(),
            sigma: Vec::new(),
            u_eq: Vec::new(),
            u_s: Vec::new(),
        }
    }

    /// From catalog parameters `csurface`, `alpha`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        Ok(Self::new(
            p.require_matrix("csurface", "the sliding surface C_s, one row per input")?,
            p.require_vector("alpha", "the relay gain α > 0")?,
        ))
    }
}

impl Controller for ImplicitSmc {
    fn law(&self) -> &'static str {
        "smc_implicit"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let d = discretise(setup, &self.csurface)?;
        self.alpha_m = alpha_of(setup, &self.alpha)?;
        self.relay = Some(ImplicitRelay::new(&setup.name, &d.cs_gamma, &self.alpha_m)?);
        let m = setup.input_dim;
        self.sigma = vec![0.0; m];
        self.u_eq = vec![0.0; m];
        self.u_s = vec![0.0; m];
        self.name = setup.name.clone();
        self.d = Some(d);
        Ok(())
    }

    fn compute(&mut self, t: f64, x: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let (Some(d), Some(relay)) = (&self.d, &mut self.relay) else {
            return Err(not_ready(t, &self.name));
        };
        mul_to(&d.cs, x, &mut self.sigma);
        mul_to(&d.k_eq, x, &mut self.u_eq);
        // σ̃_{k+1} = σ_k.
        relay.problem.q.copy_from_slice(&self.sigma);
        relay.solve(t, &self.name)?;
        for (i, ui) in u.iter_mut().enumerate() {
            self.u_s[i] = self.alpha_m[i] * relay.z[i];
            *ui = self.u_eq[i] + self.u_s[i];
        }
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        SMC_SIGNALS
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        smc_signal(name, &self.u_eq, &self.u_s, &self.sigma)
    }

    /// The signals and the relay's warm start (z = u_s/α of the last
    /// instant, and w).
    fn save_state(&self, out: &mut Vec<f64>) {
        save_signals(out, &self.u_eq, &self.u_s, &self.sigma);
        if let Some(relay) = &self.relay {
            relay.save(out);
        }
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let signals = take_signals(&mut r, self.sigma.len())?;
        let warm = match &self.relay {
            Some(relay) => Some(relay.take(&mut r)?),
            None => None,
        };
        put_signals(signals, &mut self.u_eq, &mut self.u_s, &mut self.sigma);
        if let (Some(relay), Some(warm)) = (&mut self.relay, warm) {
            relay.put(warm);
        }
        Ok(r.consumed())
    }
}

/// The explicit linear sliding-mode controller, optionally with a boundary
/// layer (see the module documentation).
#[derive(Debug, Clone)]
pub struct ExplicitSmc {
    csurface: DMatrix<f64>,
    alpha: Vec<f64>,
    boundary_layer: Option<Vec<f64>>,
    d: Option<Discrete>,
    name: String,
    alpha_m: Vec<f64>,
    eps: Vec<f64>,
    sigma: Vec<f64>,
    u_eq: Vec<f64>,
    u_s: Vec<f64>,
}

impl ExplicitSmc {
    /// σ = C_s x and the gain α > 0 (one number, or one per input).
    pub fn new(csurface: DMatrix<f64>, alpha: Vec<f64>) -> Self {
        ExplicitSmc {
            csurface,
            alpha,
            boundary_layer: None,
            d: None,
            name: String::new(),
            alpha_m: Vec::new(),
            eps: Vec::new(),
            sigma: Vec::new(),
            u_eq: Vec::new(),
            u_s: Vec::new(),
        }
    }

    /// u_s = −α sat(σ/ε) with the boundary layer ε > 0 (one number, or one
    /// per input), in the units of σ.
    pub fn with_boundary_layer(mut self, eps: Vec<f64>) -> Self {
        self.boundary_layer = Some(eps);
        self
    }

    /// From catalog parameters `csurface`, `alpha`, `boundary_layer`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let mut s = Self::new(
            p.require_matrix("csurface", "the sliding surface C_s, one row per input")?,
            p.require_vector("alpha", "the gain α > 0")?,
        );
        s.boundary_layer = p.vector("boundary_layer")?;
        Ok(s)
    }
}

impl Controller for ExplicitSmc {
    fn law(&self) -> &'static str {
        "smc_explicit"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let d = discretise(setup, &self.csurface)?;
        self.alpha_m = alpha_of(setup, &self.alpha)?;
        let m = setup.input_dim;
        self.eps = match &self.boundary_layer {
            Some(e) => {
                let e = per_channel(&setup.name, "boundary_layer", e, m)?;
                check_positive(&setup.name, "boundary_layer", &e)?;
                e
            }
            None => Vec::new(),
        };
        self.sigma = vec![0.0; m];
        self.u_eq = vec![0.0; m];
        self.u_s = vec![0.0; m];
        self.name = setup.name.clone();
        self.d = Some(d);
        Ok(())
    }

    fn compute(&mut self, t: f64, x: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let Some(d) = &self.d else {
            return Err(not_ready(t, &self.name));
        };
        mul_to(&d.cs, x, &mut self.sigma);
        mul_to(&d.k_eq, x, &mut self.u_eq);
        for (i, ui) in u.iter_mut().enumerate() {
            let s = self.sigma[i];
            let dir = match self.eps.get(i) {
                Some(eps) => (s / eps).clamp(-1.0, 1.0),
                None => sign0(s),
            };
            self.u_s[i] = -self.alpha_m[i] * dir;
            *ui = self.u_eq[i] + self.u_s[i];
        }
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        SMC_SIGNALS
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        smc_signal(name, &self.u_eq, &self.u_s, &self.sigma)
    }

    /// The signals: the law itself has no memory.
    fn save_state(&self, out: &mut Vec<f64>) {
        save_signals(out, &self.u_eq, &self.u_s, &self.sigma);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let signals = take_signals(&mut r, self.sigma.len())?;
        put_signals(signals, &mut self.u_eq, &mut self.u_s, &mut self.sigma);
        Ok(r.consumed())
    }
}

/// The one-step law of Su, Drakunov and Özgüner (see the module
/// documentation).
#[derive(Debug, Clone)]
pub struct Ot2Smc {
    csurface: DMatrix<f64>,
    clamp: Option<Vec<f64>>,
    d: Option<Discrete>,
    name: String,
    bound: Vec<f64>,
    xhat: Vec<f64>,
    has_prev: bool,
    tmp: Vec<f64>,
    cs_tmp: Vec<f64>,
    sigma: Vec<f64>,
    u_eq: Vec<f64>,
    u_s: Vec<f64>,
}

impl Ot2Smc {
    /// σ = C_s x, no clamp.
    pub fn new(csurface: DMatrix<f64>) -> Self {
        Ot2Smc {
            csurface,
            clamp: None,
            d: None,
            name: String::new(),
            bound: Vec::new(),
            xhat: Vec::new(),
            has_prev: false,
            tmp: Vec::new(),
            cs_tmp: Vec::new(),
            sigma: Vec::new(),
            u_eq: Vec::new(),
            u_s: Vec::new(),
        }
    }

    /// Clamps each input to [−ū_i, ū_i], ū > 0 (one number, or one per input).
    pub fn with_clamp(mut self, clamp: Vec<f64>) -> Self {
        self.clamp = Some(clamp);
        self
    }

    /// From catalog parameters `csurface`, `clamp` (or, when `clamp` is
    /// absent, `alpha` as the clamp: ū = α, so one parameter set serves
    /// every sliding-mode law).
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let mut s =
            Self::new(p.require_matrix("csurface", "the sliding surface C_s, one row per input")?);
        s.clamp = match p.vector("clamp")? {
            Some(c) => Some(c),
            None => p.vector("alpha")?,
        };
        Ok(s)
    }
}

impl Controller for Ot2Smc {
    fn law(&self) -> &'static str {
        "smc_ot2"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let d = discretise(setup, &self.csurface)?;
        let (n, m) = (setup.state_dim, setup.input_dim);
        self.bound = match &self.clamp {
            Some(c) => {
                let c = per_channel(&setup.name, "clamp", c, m)?;
                check_positive(&setup.name, "clamp", &c)?;
                c
            }
            None => vec![f64::INFINITY; m],
        };
        self.xhat = vec![0.0; n];
        self.has_prev = false;
        self.tmp = vec![0.0; n];
        self.cs_tmp = vec![0.0; m];
        self.sigma = vec![0.0; m];
        self.u_eq = vec![0.0; m];
        self.u_s = vec![0.0; m];
        self.name = setup.name.clone();
        self.d = Some(d);
        Ok(())
    }

    fn compute(&mut self, t: f64, x: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let Some(d) = &self.d else {
            return Err(not_ready(t, &self.name));
        };
        mul_to(&d.cs, x, &mut self.sigma);
        mul_to(&d.k_eq, x, &mut self.u_eq);
        // tmp = Φ x_k + d̂_k, d̂_k = x_k − x̂_k (0 at the first instant).
        mul_to(&d.phi, x, &mut self.tmp);
        if self.has_prev {
            for (i, xi) in x.iter().enumerate() {
                self.tmp[i] += xi - self.xhat[i];
            }
        }
        mul_to(&d.cs, &self.tmp, &mut self.cs_tmp);
        mul_to(&d.cs_gamma_inv, &self.cs_tmp, u);
        for (i, ui) in u.iter_mut().enumerate() {
            *ui = (-*ui).max(-self.bound[i]).min(self.bound[i]);
            self.u_s[i] = *ui - self.u_eq[i];
        }
        // x̂_{k+1} = Φ x_k + Γ u_k.
        mul_to(&d.phi, x, &mut self.xhat);
        mul_add(&d.gamma_b, u, &mut self.xhat);
        self.has_prev = true;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        SMC_SIGNALS
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        smc_signal(name, &self.u_eq, &self.u_s, &self.sigma)
    }

    /// The prediction x̂_{k+1} = Φ x_k + Γ u_k and whether there is one,
    /// and the signals.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.xhat);
        out.push(f64::from(u8::from(self.has_prev)));
        save_signals(out, &self.u_eq, &self.u_s, &self.sigma);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let xhat = r.take(self.xhat.len())?;
        let has_prev = r.flag()?;
        let signals = take_signals(&mut r, self.sigma.len())?;
        self.xhat.copy_from_slice(xhat);
        self.has_prev = has_prev;
        put_signals(signals, &mut self.u_eq, &mut self.u_s, &mut self.sigma);
        Ok(r.consumed())
    }
}

/// The implicit law with perturbation prediction (see the module
/// documentation).
#[derive(Debug)]
pub struct ImprovedSmc {
    csurface: DMatrix<f64>,
    alpha: Vec<f64>,
    order: usize,
    perturbation_bound: Option<f64>,
    d: Option<Discrete>,
    relay: Option<ImplicitRelay>,
    name: String,
    alpha_m: Vec<f64>,
    /// δ_{k−1}, δ_{k−2}, δ_{k−3}, stacked (3 m).
    history: Vec<f64>,
    known: usize,
    sigma_pred: Vec<f64>,
    has_prev: bool,
    dhat: Vec<f64>,
    sigma: Vec<f64>,
    u_eq: Vec<f64>,
    u_s: Vec<f64>,
    u_p: Vec<f64>,
}

impl ImprovedSmc {
    /// σ = C_s x, relay gain α > 0, prediction order 0, 1 or 2 (checked by
    /// `initialize`).
    pub fn new(csurface: DMatrix<f64>, alpha: Vec<f64>, order: usize) -> Self {
        ImprovedSmc {
            csurface,
            alpha,
            order,
            perturbation_bound: None,
            d: None,
            relay: None,
            name: String::new(),
            alpha_m: Vec::new(),
            history: Vec::new(),
            known: 0,
            sigma_pred: Vec::new(),
            has_prev: false,
            dhat: Vec::new(),
            sigma: Vec::new(),
            u_eq: Vec::new(),
            u_s: Vec::new(),
            u_p: Vec::new(),
        }
    }

    /// Bounds the compensation: ‖u_p‖₂ ≤ `bound` (> 0).
    pub fn with_perturbation_bound(mut self, bound: f64) -> Self {
        self.perturbation_bound = Some(bound);
        self
    }

    /// From catalog parameters `csurface`, `alpha`, `order`,
    /// `perturbation_bound`.
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let order = match p.scalar("order")? {
            None => 0,
            Some(q) if q == 0.0 || q == 1.0 || q == 2.0 => q as usize,
            Some(q) => {
                return Err(invalid(
                    p.object(),
                    "order",
                    q,
                    "the prediction order must be 0, 1 or 2",
                ))
            }
        };
        let mut s = Self::new(
            p.require_matrix("csurface", "the sliding surface C_s, one row per input")?,
            p.require_vector("alpha", "the relay gain α > 0")?,
            order,
        );
        s.perturbation_bound = p.scalar("perturbation_bound")?;
        Ok(s)
    }
}

impl Controller for ImprovedSmc {
    fn law(&self) -> &'static str {
        "smc_improved"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        if self.order > 2 {
            return Err(invalid(
                name,
                "order",
                self.order as f64,
                "the prediction order must be 0, 1 or 2",
            ));
        }
        if let Some(b) = self.perturbation_bound {
            check_positive(name, "perturbation_bound", &[b])?;
        }
        let d = discretise(setup, &self.csurface)?;
        self.alpha_m = alpha_of(setup, &self.alpha)?;
        self.relay = Some(ImplicitRelay::new(name, &d.cs_gamma, &self.alpha_m)?);
        let m = setup.input_dim;
        self.history = vec![0.0; 3 * m];
        self.known = 0;
        self.sigma_pred = vec![0.0; m];
        self.has_prev = false;
        self.dhat = vec![0.0; m];
        self.sigma = vec![0.0; m];
        self.u_eq = vec![0.0; m];
        self.u_s = vec![0.0; m];
        self.u_p = vec![0.0; m];
        self.name = name.to_string();
        self.d = Some(d);
        Ok(())
    }

    fn compute(&mut self, t: f64, x: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let (Some(d), Some(relay)) = (&self.d, &mut self.relay) else {
            return Err(not_ready(t, &self.name));
        };
        let m = u.len();
        mul_to(&d.cs, x, &mut self.sigma);
        mul_to(&d.k_eq, x, &mut self.u_eq);
        // Measured effect of the perturbation over the last period.
        if self.has_prev {
            self.history.copy_within(0..2 * m, m);
            for i in 0..m {
                self.history[i] = self.sigma[i] - self.sigma_pred[i];
            }
            self.known = (self.known + 1).min(3);
        }
        let (h0, rest) = self.history.split_at(m);
        let (h1, h2) = rest.split_at(m);
        let order = if self.known == 0 {
            None
        } else {
            Some(self.order.min(self.known - 1))
        };
        for i in 0..m {
            self.dhat[i] = match order {
                None => 0.0,
                Some(0) => h0[i],
                Some(1) => 2.0 * h0[i] - h1[i],
                Some(_) => 3.0 * h0[i] - 3.0 * h1[i] + h2[i],
            };
        }
        // u_p = −(C_sΓ)⁻¹ δ̂, bounded.
        mul_to(&d.cs_gamma_inv, &self.dhat, &mut self.u_p);
        self.u_p.iter_mut().for_each(|v| *v = -*v);
        if let Some(bound) = self.perturbation_bound {
            let norm = self.u_p.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > bound {
                let s = bound / norm;
                self.u_p.iter_mut().for_each(|v| *v *= s);
            }
        }
        // σ̃_{k+1} = σ_k + δ̂_k + C_sΓ u_p.
        for i in 0..m {
            relay.problem.q[i] = self.sigma[i] + self.dhat[i];
        }
        mul_add(&d.cs_gamma, &self.u_p, &mut relay.problem.q);
        relay.solve(t, &self.name)?;
        for (i, ui) in u.iter_mut().enumerate() {
            self.u_s[i] = self.alpha_m[i] * relay.z[i];
            *ui = self.u_eq[i] + self.u_p[i] + self.u_s[i];
        }
        // σ predicted at the next instant without perturbation.
        mul_to(&d.cs_phi, x, &mut self.sigma_pred);
        mul_add(&d.cs_gamma, u, &mut self.sigma_pred);
        self.has_prev = true;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["u_eq", "u_s", "sigma", "u_p"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        match name {
            "u_eq" => Some(&self.u_eq),
            "u_s" => Some(&self.u_s),
            "sigma" => Some(&self.sigma),
            "u_p" => Some(&self.u_p),
            _ => None,
        }
    }

    /// The measured perturbation effects δ_{k−1}, δ_{k−2}, δ_{k−3} and how
    /// many are known, the prediction σ̂_{k+1} and whether there is one, the
    /// signals (u_eq, u_s, σ, u_p) and the relay's warm start.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.history);
        out.push(self.known as f64);
        out.extend_from_slice(&self.sigma_pred);
        out.push(f64::from(u8::from(self.has_prev)));
        save_signals(out, &self.u_eq, &self.u_s, &self.sigma);
        out.extend_from_slice(&self.u_p);
        if let Some(relay) = &self.relay {
            relay.save(out);
        }
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let m = self.sigma.len();
        let history = r.take(self.history.len())?;
        let known = r.count(3)?;
        let sigma_pred = r.take(m)?;
        let has_prev = r.flag()?;
        let signals = take_signals(&mut r, m)?;
        let u_p = r.take(m)?;
        let warm = match &self.relay {
            Some(relay) => Some(relay.take(&mut r)?),
            None => None,
        };
        self.history.copy_from_slice(history);
        self.known = known;
        self.sigma_pred.copy_from_slice(sigma_pred);
        self.has_prev = has_prev;
        put_signals(signals, &mut self.u_eq, &mut self.u_s, &mut self.sigma);
        self.u_p.copy_from_slice(u_p);
        if let (Some(relay), Some(warm)) = (&mut self.relay, warm) {
            relay.put(warm);
        }
        Ok(r.consumed())
    }
}
