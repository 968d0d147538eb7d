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
}
