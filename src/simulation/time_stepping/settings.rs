//! The settings of a time-stepping simulation: the schemes for
//! first-order and Lagrangian systems, the step, the final time and the
//! one-step solver, with their validation.

use super::problem::Assembly;
use super::SimulationError;
use crate::numerics::SolverSettings;

/// The scheme used for first-order systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirstOrderScheme {
    /// Euler–Moreau θ-scheme: x_{k+1} = x_k + h(θ f_{k+1} + (1−θ) f_k) + h r_{k+1}.
    #[default]
    EulerMoreau,
    /// Exact for constant A with b, the input g and r held over the step:
    /// x_{k+1} = e^{Ah} x_k + ∫₀ʰ e^{As} ds (b(t_{k+1}) + g + r_{k+1})
    /// (exact when b is constant; first order in h for a time-varying b,
    /// held at the end of the step as Siconos' ZeroOrderHoldOSI does).
    ZeroOrderHold,
}

/// The scheme used for Lagrangian systems (docs/simulation.md, "One step").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LagrangianScheme {
    /// Moreau–Jean θ-scheme: velocity-level impact law at the end of the step.
    #[default]
    MoreauJean,
    /// Schatzman–Paoli two-step scheme: position-level impact law
    /// 0 ≤ y_{k+1} + e y_{k−1} ⊥ Λ_{k+1} ≥ 0 (module `schatzman_paoli`).
    SchatzmanPaoli,
    /// D1-minus-linear (time-discontinuous Galerkin): contact forces at
    /// acceleration level on the interval, impulses at its ends (module
    /// `d1_minus_linear`).
    D1MinusLinear,
}

/// How the two-step Schatzman–Paoli scheme gets q_{−1} at its first step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchatzmanPaoliStart {
    /// q_{−1} = q₀ − h v₀ + (h²/2) M⁻¹ F(t₀, q₀, v₀): the first step is the
    /// Taylor step q₁ = q₀ + h v₀ + (h²/2) a₀ (second order).
    #[default]
    Taylor,
    /// q_{−1} = q₀ − h v₀, as Siconos 4.4's SchatzmanPaoliOSI (first order:
    /// the free fall is off by g h t / 2).
    Siconos,
}

/// Settings of a time-stepping simulation. Times in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSteppingSettings {
    /// Initial time t₀.
    pub t0: f64,
    /// Final time: the run ends at the last step t₀ + k h ≤ t_end.
    pub t_end: f64,
    /// Time step h > 0.
    pub step: f64,
    /// θ ∈ [0, 1] of the Moreau–Jean and Euler–Moreau schemes (Schatzman–Paoli:
    /// the weight of K and F_ext at t_{k−1} and t_{k+1}).
    pub theta: f64,
    /// γ ≥ 0 of the activation test ỹ = y_k + γ h ẏ_k ≤ 0 (1 in seed 004 (12e);
    /// Siconos' MoreauJeanOSI uses 1/2 unless told otherwise).
    pub activation_gamma: f64,
    /// Scheme for first-order systems.
    pub first_order_scheme: FirstOrderScheme,
    /// Scheme for Lagrangian systems.
    pub lagrangian_scheme: LagrangianScheme,
    /// Start of the two-step Schatzman–Paoli scheme.
    pub schatzman_paoli_start: SchatzmanPaoliStart,
    /// D1-minus-linear: a closed contact (y ≤ its rounding bound) takes part
    /// in the acceleration-level force problems when |ẏ| ≤ this value (in
    /// the relation's velocity unit; Siconos 4.4 uses 1e-8).
    pub rest_velocity: f64,
    /// Name of the one-step solver of the problem family ("default", …).
    pub solver: String,
    /// Settings of that solver.
    pub solver_settings: SolverSettings,
    /// Newton loop: relative change of the unknowns that ends it.
    pub newton_tolerance: f64,
    /// Newton loop: iteration limit (an error when reached).
    pub newton_max_iterations: usize,
    /// An output event every `output_every` steps, from t₀ on (t₀ included).
    pub output_every: u64,
    /// Storage of the one-step problem (dense over the active interactions,
    /// or block-sparse over all).
    pub assembly: Assembly,
}

impl TimeSteppingSettings {
    /// Defaults: t₀ = 0, θ = 0.5, γ = 1, Euler–Moreau, default solver,
    /// Newton tolerance 1e-10 with at most 50 iterations.
    pub fn new(step: f64, t_end: f64) -> Self {
        TimeSteppingSettings {
            t0: 0.0,
            t_end,
            step,
            theta: 0.5,
            activation_gamma: 1.0,
            first_order_scheme: FirstOrderScheme::EulerMoreau,
            lagrangian_scheme: LagrangianScheme::MoreauJean,
            schatzman_paoli_start: SchatzmanPaoliStart::Taylor,
            rest_velocity: 1e-8,
            solver: "default".into(),
            solver_settings: SolverSettings::default(),
            newton_tolerance: 1e-10,
            newton_max_iterations: 50,
            output_every: 1,
            assembly: Assembly::Auto,
        }
    }

    /// Checks every value.
    pub fn validate(&self) -> Result<(), SimulationError> {
        let bad = |what: &'static str, value: f64, reason: &'static str| {
            Err(SimulationError::InvalidSetting {
                what,
                value,
                reason,
            })
        };
        if !self.t0.is_finite() {
            return bad("t0", self.t0, "must be finite");
        }
        if !(self.step.is_finite() && self.step > 0.0) {
            return bad(
                "step",
                self.step,
                "must be a finite positive number of seconds",
            );
        }
        if !(self.t_end.is_finite() && self.t_end >= self.t0) {
            return bad("t_end", self.t_end, "must be finite and not before t0");
        }
        if !(0.0..=1.0).contains(&self.theta) {
            return bad("theta", self.theta, "must be in [0, 1]");
        }
        if !(self.activation_gamma.is_finite() && self.activation_gamma >= 0.0) {
            return bad(
                "activation_gamma",
                self.activation_gamma,
                "must be finite and ≥ 0",
            );
        }
        if !(self.newton_tolerance.is_finite() && self.newton_tolerance > 0.0) {
            return bad(
                "newton_tolerance",
                self.newton_tolerance,
                "must be positive",
            );
        }
        if !(self.rest_velocity.is_finite() && self.rest_velocity >= 0.0) {
            return bad(
                "rest_velocity",
                self.rest_velocity,
                "must be finite and ≥ 0",
            );
        }
        if self.output_every == 0 {
            return bad("output_every", 0.0, "must be at least 1");
        }
        if self.newton_max_iterations == 0 {
            return bad("newton_max_iterations", 0.0, "must be at least 1");
        }
        self.solver_settings
            .validate()
            .map_err(SimulationError::Numerics)
    }
}
