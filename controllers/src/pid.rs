//! Discrete PID control, MIMO, with the derivative on the measurement,
//! output limits and anti-windup.
//!
//! # Equations
//!
//! At the controller's instants t_k = t₀ + offset + k T (T = the period the
//! loop gives in [`ControllerSetup::period`]; the law has no period of its
//! own), with y_k the measurement (length p), r the constant reference
//! (length p, default 0) and u_k the input (length m):
//!
//! ```text
//! e_k   = r − y_k
//! ΔI_k  = T K_i e_k                                   (backward rectangle)
//! D_k   = −K_d (y_k − y_{k−1}) / T ,   D_0 = 0        (derivative on the measurement)
//! v_k   = K_p e_k + I_{k−1} + ΔI_k + D_k              (unsaturated output)
//! u_k   = min(max(v_k, u_min), u_max)                 (componentwise)
//! I_k   = I_{k−1} + ΔI_k                              (anti-windup `none`)
//! ```
//!
//! with I_{−1} = 0. The derivative acts on −y, not on e: there is no kick at
//! the first sample (no previous measurement, D_0 = 0) and a change of
//! reference would not produce one either. With a constant reference and
//! k ≥ 1 the law equals the textbook positional PID
//! u_k = K_p e_k + T K_i Σ_{j≤k} e_j + K_d (e_k − e_{k−1})/T.
//!
//! K_p, K_i, K_d are m × p matrices. A number k stands for k·I and a vector
//! for a diagonal (both need m = p).
//!
//! # Anti-windup
//!
//! Only meaningful with output limits (`u_min`, `u_max`); per component i of u:
//!
//! * `none`: I_k = I_{k−1} + ΔI_k.
//! * `conditional` (conditional integration, or clamping): the integral is
//!   frozen when the output is saturated and the increment would push it
//!   further: if (v_{k,i} > u_max,i and ΔI_{k,i} > 0) or (v_{k,i} < u_min,i and
//!   ΔI_{k,i} < 0) then I_{k,i} = I_{k−1,i} and v_{k,i} is recomputed without
//!   ΔI_{k,i} before saturation; otherwise I_{k,i} = I_{k−1,i} + ΔI_{k,i}.
//! * `back_calculation`: I_k = I_{k−1} + ΔI_k + T k_t (u_k − v_k), with the
//!   tracking gain k_t > 0 in 1/s (default 1/T: the integral is reset so that
//!   the unsaturated output of the instant equals the limit).
//!
//! # Signals
//!
//! `e`: the error e_k (length p).
//!
//! [`ControllerSetup::period`]: nonsmooth::control::ControllerSetup::period

use nalgebra::DMatrix;
use nonsmooth::control::{ControlError, Controller, ControllerSetup, LawParams, StateReader};

use crate::linalg::{check_finite, dim_err, invalid, per_channel, shape};

/// A gain: a number k (k·I), one number per channel (a diagonal) or a full
/// matrix (rows = inputs, columns = measurements).
#[derive(Debug, Clone, PartialEq)]
pub enum Gain {
    /// k·I (needs as many inputs as measurements).
    Scalar(f64),
    /// diag(k) (needs as many inputs as measurements, and as many entries).
    Diagonal(Vec<f64>),
    /// The full m × p matrix.
    Matrix(DMatrix<f64>),
}

impl Gain {
    /// The zero gain.
    pub fn zero() -> Self {
        Gain::Scalar(0.0)
    }

    /// From a parameter read as a matrix: 1 × 1 is a number; a row or column
    /// of m = p entries that is not already m × p is a diagonal.
    pub(crate) fn from_matrix(m: DMatrix<f64>) -> Self {
        if m.nrows() == 1 && m.ncols() == 1 {
            Gain::Scalar(m[(0, 0)])
        } else {
            Gain::Matrix(m)
        }
    }

    /// The m × p matrix, checked.
    pub(crate) fn resolve(
        &self,
        object: &str,
        what: &'static str,
        m: usize,
        p: usize,
    ) -> Result<DMatrix<f64>, ControlError> {
        let out = match self {
            Gain::Scalar(k) => {
                if m != p {
                    return Err(dim_err(
                        object,
                        what,
                        "a number".into(),
                        format!(
                            "an {m}×{p} matrix (a number needs as many inputs as measurements)"
                        ),
                    ));
                }
                DMatrix::from_diagonal_element(m, p, *k)
            }
            Gain::Diagonal(d) => {
                if m != p || d.len() != m {
                    return Err(dim_err(
                        object,
                        what,
                        format!("a vector of {}", d.len()),
                        format!("an {m}×{p} matrix (a vector is a diagonal, of {m} = {p} entries)"),
                    ));
                }
                DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(d))
            }
            Gain::Matrix(k) => {
                if k.nrows() == m && k.ncols() == p {
                    k.clone()
                } else if m == p && k.len() == m && (k.nrows() == 1 || k.ncols() == 1) {
                    DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(m, k.iter().copied()))
                } else {
                    return Err(dim_err(object, what, shape(k), format!("{m}×{p}")));
                }
            }
        };
        check_finite(object, what, out.as_slice())?;
        let diagonal_form = match self {
            Gain::Matrix(k) => !(k.nrows() == m && k.ncols() == p),
            _ => true,
        };
        if diagonal_form {
            if let Some(k) = out.iter().find(|k| **k < 0.0) {
                return Err(invalid(
                    object,
                    what,
                    *k,
                    "must be ≥ 0 (for a reverse-acting loop give the full matrix gain)",
                ));
            }
        }
        Ok(out)
    }
}

/// How the integral is kept from winding up while the output is saturated
/// (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AntiWindup {
    /// No protection.
    None,
    /// Conditional integration (clamping).
    Conditional,
    /// Back-calculation with tracking gain k_t in 1/s (`None`: 1/T).
    BackCalculation {
        /// k_t > 0, 1/s.
        tracking_gain: Option<f64>,
    },
}

/// A discrete PID controller (see the module documentation).
#[derive(Debug, Clone)]
pub struct Pid {
    kp: Gain,
    ki: Gain,
    kd: Gain,
    reference: Vec<f64>,
    u_min: Option<Vec<f64>>,
    u_max: Option<Vec<f64>>,
    anti_windup: AntiWindup,
    // Set by initialize.
    period: f64,
    kp_m: DMatrix<f64>,
    ki_m: DMatrix<f64>,
    kd_m: DMatrix<f64>,
    r: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    tracking: f64,
    integral: Vec<f64>,
    y_prev: Vec<f64>,
    has_prev: bool,
    e: Vec<f64>,
    dy: Vec<f64>,
}

impl Pid {
    /// A PID with gains K_p, K_i (1/s), K_d (s), reference 0, no limits.
    pub fn new(kp: Gain, ki: Gain, kd: Gain) -> Self {
        Pid {
            kp,
            ki,
            kd,
            reference: vec![0.0],
            u_min: None,
            u_max: None,
            anti_windup: AntiWindup::None,
            period: 0.0,
            kp_m: DMatrix::zeros(0, 0),
            ki_m: DMatrix::zeros(0, 0),
            kd_m: DMatrix::zeros(0, 0),
            r: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
            tracking: 0.0,
            integral: Vec::new(),
            y_prev: Vec::new(),
            has_prev: false,
            e: Vec::new(),
            dy: Vec::new(),
        }
    }

    /// The constant reference r (one number for every measurement, or one
    /// per measurement).
    pub fn with_reference(mut self, r: Vec<f64>) -> Self {
        self.reference = r;
        self
    }

    /// Output limits (one number for every input, or one per input);
    /// `None` leaves a side free.
    pub fn with_output_limits(mut self, u_min: Option<Vec<f64>>, u_max: Option<Vec<f64>>) -> Self {
        self.u_min = u_min;
        self.u_max = u_max;
        self
    }

    /// The anti-windup scheme.
    pub fn with_anti_windup(mut self, a: AntiWindup) -> Self {
        self.anti_windup = a;
        self
    }

    /// From catalog parameters: `kp`, `ki`, `kd`, `reference`, `u_min`,
    /// `u_max`, `anti_windup`, `tracking_gain` (docs/control.md).
    pub fn from_params(p: &LawParams) -> Result<Self, ControlError> {
        let gain = |key: &str| -> Result<Gain, ControlError> {
            Ok(p.matrix(key)?
                .map(Gain::from_matrix)
                .unwrap_or(Gain::zero()))
        };
        let (kp, ki, kd) = (gain("kp")?, gain("ki")?, gain("kd")?);
        let mut pid = Pid::new(kp, ki, kd);
        if let Some(r) = p.vector("reference")? {
            pid.reference = r;
        }
        pid.u_min = p.vector("u_min")?;
        pid.u_max = p.vector("u_max")?;
        let tracking = p.scalar("tracking_gain")?;
        pid.anti_windup = match p.text("anti_windup")? {
            None | Some("none") => AntiWindup::None,
            Some("conditional") => AntiWindup::Conditional,
            Some("back_calculation") => AntiWindup::BackCalculation {
                tracking_gain: tracking,
            },
            Some(other) => {
                return Err(ControlError::BadReference(format!(
                "{}: `anti_windup` must be none, conditional or back_calculation, got `{other}`",
                p.object()
            )))
            }
        };
        if tracking.is_some() && !matches!(pid.anti_windup, AntiWindup::BackCalculation { .. }) {
            return Err(ControlError::BadReference(format!(
                "{}: `tracking_gain` applies to anti_windup = back_calculation only",
                p.object()
            )));
        }
        Ok(pid)
    }
}

impl Controller for Pid {
    fn law(&self) -> &'static str {
        "pid"
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let name = setup.name.as_str();
        let (p, m) = (setup.measurement_dim, setup.input_dim);
        if p == 0 {
            return Err(dim_err(name, "measurement", "0".into(), "≥ 1".into()));
        }
        self.period = setup.period;
        self.kp_m = self.kp.resolve(name, "kp", m, p)?;
        self.ki_m = self.ki.resolve(name, "ki", m, p)?;
        self.kd_m = self.kd.resolve(name, "kd", m, p)?;
        check_finite(name, "reference", &self.reference)?;
        self.r = per_channel(name, "reference", &self.reference, p)?;
        self.lo = match &self.u_min {
            Some(v) => {
                check_finite(name, "u_min", v)?;
                per_channel(name, "u_min", v, m)?
            }
            None => vec![f64::NEG_INFINITY; m],
        };
        self.hi = match &self.u_max {
            Some(v) => {
                check_finite(name, "u_max", v)?;
                per_channel(name, "u_max", v, m)?
            }
            None => vec![f64::INFINITY; m],
        };
        if let Some(i) = (0..m).find(|&i| self.lo[i] > self.hi[i]) {
            return Err(invalid(
                name,
                "u_min",
                self.lo[i],
                &format!("must be ≤ u_max = {}", self.hi[i]),
            ));
        }
        self.tracking = match self.anti_windup {
            AntiWindup::BackCalculation {
                tracking_gain: Some(k),
            } => {
                if !(k.is_finite() && k > 0.0) {
                    return Err(invalid(name, "tracking_gain", k, "must be > 0 (1/s)"));
                }
                k
            }
            _ => 1.0 / self.period,
        };
        self.integral = vec![0.0; m];
        self.y_prev = vec![0.0; p];
        self.has_prev = false;
        self.e = vec![0.0; p];
        self.dy = vec![0.0; p];
        Ok(())
    }

    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let t = self.period;
        for (j, yj) in y.iter().enumerate() {
            self.e[j] = self.r[j] - yj;
            self.dy[j] = if self.has_prev {
                (yj - self.y_prev[j]) / t
            } else {
                0.0
            };
        }
        for (i, ui) in u.iter_mut().enumerate() {
            let (mut prop, mut inc, mut der) = (0.0, 0.0, 0.0);
            for j in 0..y.len() {
                prop += self.kp_m[(i, j)] * self.e[j];
                inc += self.ki_m[(i, j)] * self.e[j];
                der -= self.kd_m[(i, j)] * self.dy[j];
            }
            inc *= t;
            let (lo, hi) = (self.lo[i], self.hi[i]);
            let mut v = prop + self.integral[i] + inc + der;
            let mut out = v.max(lo).min(hi);
            match self.anti_windup {
                AntiWindup::None => self.integral[i] += inc,
                AntiWindup::Conditional => {
                    if (v > hi && inc > 0.0) || (v < lo && inc < 0.0) {
                        v -= inc;
                        out = v.max(lo).min(hi);
                    } else {
                        self.integral[i] += inc;
                    }
                }
                AntiWindup::BackCalculation { .. } => {
                    self.integral[i] += inc + t * self.tracking * (out - v);
                }
            }
            *ui = out;
        }
        self.y_prev.copy_from_slice(y);
        self.has_prev = true;
        Ok(())
    }

    fn signal_names(&self) -> &[&'static str] {
        &["e"]
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        (name == "e").then_some(self.e.as_slice())
    }

    /// The integral I, the previous measurement and whether there is one,
    /// and the error signal e.
    fn save_state(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(&self.integral);
        out.extend_from_slice(&self.y_prev);
        out.push(f64::from(u8::from(self.has_prev)));
        out.extend_from_slice(&self.e);
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        let mut r = StateReader::new(self.law(), data);
        let integral = r.take(self.integral.len())?;
        let y_prev = r.take(self.y_prev.len())?;
        let has_prev = r.flag()?;
        let e = r.take(self.e.len())?;
        self.integral.copy_from_slice(integral);
        self.y_prev.copy_from_slice(y_prev);
        self.has_prev = has_prev;
        self.e.copy_from_slice(e);
        Ok(r.consumed())
    }
}
