//! The interfaces a control law and an observer implement, and what the
//! control loop tells them when it is built.
//!
//! A [`Controller`] is sampled: at each of its instants t_k = offset + k·T
//! it receives one measurement vector (a sensor's latest delivered value, or
//! an observer's estimate) and writes its input u_k, which its actuator
//! applies at t_k + d and holds until the next application. A law that is
//! not based on a linear state (a switching law for a robot arm) uses the
//! same interface: the measurement is whatever its sensor reads.

use nalgebra::DMatrix;

use super::error::ControlError;

/// A linear time-invariant description of the plant, ẋ = A x + B u (+ b(t)),
/// in the coordinates of the plant's state: x for a first-order system,
/// x = (q, v) for a Lagrangian one (A = (0, I; −M⁻¹K, −M⁻¹C),
/// B = (0; M⁻¹B_a)). B is the input matrix of the law's own actuator.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearPlant {
    /// A, n × n.
    pub a: DMatrix<f64>,
    /// B, n × m.
    pub b: DMatrix<f64>,
}

/// What a controller learns when the loop is built.
#[derive(Debug, Clone)]
pub struct ControllerSetup {
    /// The controller's name (for messages).
    pub name: String,
    /// Its sampling period T in seconds: the time between two of its
    /// instants, exactly as scheduled.
    pub period: f64,
    /// The size of the measurement it receives.
    pub measurement_dim: usize,
    /// The size of the input it writes (the actuator's m).
    pub input_dim: usize,
    /// The dimension n of the plant's state.
    pub state_dim: usize,
    /// The plant, when it is linear time-invariant and the actuator is a
    /// matrix.
    pub plant: Option<LinearPlant>,
    /// C when the measurement is y = C x of the actuated system's state
    /// (x, or (q, v) stacked): the sensor's C, or the identity for an
    /// observer's estimate of that system. `None` when it is not known to
    /// be such a map: no measurement, contacts' λ or a feedthrough D u in
    /// it, or another system measured.
    pub measurement_map: Option<DMatrix<f64>>,
}

/// A sampled control law.
pub trait Controller: Send {
    /// The law's name, e.g. `"pid"` (for messages and logs).
    fn law(&self) -> &'static str;

    /// Checks the law against the loop it is placed in and prepares its
    /// discrete-time data (e.g. Φ = e^{AT}). Called once, before t₀.
    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError>;

    /// Computes u_k at time `t` from the measurement `y` (length
    /// `measurement_dim`) into `u` (length `input_dim`).
    fn compute(&mut self, t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError>;

    /// A change of the output that the last [`Controller::compute`]
    /// scheduled inside the coming period: at τ (seconds, after the
    /// computing instant t and before its next instant) the actuator's input
    /// becomes u′ (length `input_dim`). The loop applies it at τ exactly,
    /// splitting the plant's integration step that contains τ when τ is not
    /// on the grid (docs/how-a-step-proceeds.md, "An actuation inside a
    /// step"). The default schedules nothing. A law that schedules keeps
    /// (τ, u′) in its saved state and says so with
    /// [`Controller::schedules_changes`].
    fn scheduled_change(&self) -> Option<(f64, &[f64])> {
        None
    }

    /// True when [`Controller::scheduled_change`] may return a change (asked
    /// once, after [`Controller::initialize`]; the loop asks for changes
    /// only from such laws, so that the others cost nothing per instant).
    fn schedules_changes(&self) -> bool {
        false
    }

    /// Names of the extra signals the law records besides u, e.g.
    /// `["u_eq", "u_s", "sigma"]`.
    fn signal_names(&self) -> &[&'static str] {
        &[]
    }

    /// The current value of a signal named by [`Controller::signal_names`]
    /// (its length is fixed after [`Controller::initialize`]).
    fn signal(&self, _name: &str) -> Option<&[f64]> {
        None
    }

    /// Appends the law's memory to `out`: every value a later
    /// [`Controller::compute`] reads before writing it (integrals, previous
    /// measurements, predictions, the warm start of a one-step problem) and
    /// the current values of its signals, so that restoring it and
    /// computing again gives bit-identical inputs and signals. Flags and
    /// counters are written as numbers. The length is fixed after
    /// [`Controller::initialize`] (called only after it).
    ///
    /// There is no default implementation: a law without memory (u a
    /// function of the current measurement only, no signals) says so by
    /// writing nothing and reading nothing (`Ok(0)`).
    fn save_state(&self, out: &mut Vec<f64>);

    /// Reads back what [`Controller::save_state`] wrote, from the start of
    /// `data` (which may go on with other objects' states), and returns how
    /// many values it read. Too few values, or a flag or counter out of its
    /// range, is a [`ControlError::State`] and changes nothing
    /// ([`StateReader`] checks and reads them).
    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError>;
}

/// What an observer learns when the loop is built.
#[derive(Debug, Clone)]
pub struct ObserverSetup {
    /// The observer's name (for messages).
    pub name: String,
    /// Its period T in seconds.
    pub period: f64,
    /// The size of the measurement it receives.
    pub measurement_dim: usize,
    /// The dimension n of the plant's state (and of the estimate).
    pub state_dim: usize,
    /// The plant's A (n × n), when linear time-invariant.
    pub a: Option<DMatrix<f64>>,
    /// The initial estimate x̂₀ (length n; zeros unless given).
    pub x0: Vec<f64>,
    /// The measurement matrix C of its sensor (p × n), when the sensor is
    /// linear without feedthrough.
    pub c: Option<DMatrix<f64>>,
}

/// A state observer, sampled like a controller.
///
/// At its instant t_k it receives the latest measurement y_k and the plant
/// input g_{k−1} = Σ B_a u_a held over the interval that just ended (the
/// value in force at t_k before the actuators of t_k act), and updates its
/// estimate x̂_k, which controllers reading it use at t_k.
pub trait Observer: Send {
    /// The observer's name, e.g. `"luenberger"`.
    fn law(&self) -> &'static str;

    /// Checks the observer against its loop; prepares its discrete data.
    fn initialize(&mut self, setup: &ObserverSetup) -> Result<(), ControlError>;

    /// Updates the estimate at time `t` from the measurement `y` and the
    /// input `g` held over the last interval (length n, in the plant's state
    /// equation ẋ = A x + g).
    fn update(&mut self, t: f64, y: &[f64], g: &[f64]) -> Result<(), ControlError>;

    /// The current estimate x̂ (length n).
    fn estimate(&self) -> &[f64];

    /// Appends the observer's memory to `out`: the estimate and every value
    /// a later [`Observer::update`] reads before writing it (previous
    /// measurements, start flags), so that restoring it and updating again
    /// gives a bit-identical estimate. No default implementation (see
    /// [`Controller::save_state`]).
    fn save_state(&self, out: &mut Vec<f64>);

    /// Reads back what [`Observer::save_state`] wrote from the start of
    /// `data`; returns how many values it read. Errors change nothing.
    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError>;
}

/// Reads a law's saved state ([`Controller::restore_state`],
/// [`Observer::restore_state`]) with checks: a law takes every part first,
/// then copies, so that an error leaves it unchanged.
///
/// ```
/// use nonsmooth::control::StateReader;
///
/// let data = [0.5, -1.0, 1.0, 2.0, 9.0];
/// let mut r = StateReader::new("pid", &data);
/// let integral = r.take(2).unwrap();
/// let has_prev = r.flag().unwrap();
/// let known = r.count(3).unwrap();
/// assert_eq!((integral, has_prev, known, r.consumed()), (&data[..2], true, 2, 4));
/// assert!(r.take(2).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct StateReader<'a> {
    law: &'a str,
    data: &'a [f64],
    at: usize,
}

impl<'a> StateReader<'a> {
    /// Reads `data` for the law `law` (named in errors).
    pub fn new(law: &'a str, data: &'a [f64]) -> Self {
        StateReader { law, data, at: 0 }
    }

    fn error(&self, reason: String) -> ControlError {
        ControlError::State {
            object: self.law.to_string(),
            reason,
        }
    }

    /// The next `n` values.
    pub fn take(&mut self, n: usize) -> Result<&'a [f64], ControlError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                self.error(format!(
                    "the saved state is too short: {n} more values needed after {}, {} given",
                    self.at,
                    self.data.len()
                ))
            })?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// A flag written as 0 or 1.
    pub fn flag(&mut self) -> Result<bool, ControlError> {
        let x = self.take(1)?[0];
        if x == 0.0 || x == 1.0 {
            Ok(x == 1.0)
        } else {
            Err(self.error(format!("a flag of the saved state is {x}, not 0 or 1")))
        }
    }

    /// A whole number in 0..=max.
    pub fn count(&mut self, max: usize) -> Result<usize, ControlError> {
        let x = self.take(1)?[0];
        if x >= 0.0 && x <= max as f64 && x.fract() == 0.0 {
            Ok(x as usize)
        } else {
            Err(self.error(format!(
                "a counter of the saved state is {x}, not a whole number in 0..={max}"
            )))
        }
    }

    /// The number of values read so far.
    pub fn consumed(&self) -> usize {
        self.at
    }
}
