//! Settings of an event-driven simulation, checked before a run.

use crate::numerics::SolverSettings;
use crate::simulation::error::SimulationError;

/// The smooth integrator used between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OdeMethod {
    /// Explicit Dormand–Prince 5(4) with its fourth-order dense output
    /// (non-stiff systems).
    #[default]
    DormandPrince,
    /// TR-BDF2: trapezoidal stage then BDF2, L-stable, second order, with an
    /// embedded third-order error estimate and cubic Hermite dense output
    /// (stiff systems).
    TrBdf2,
}

impl OdeMethod {
    /// Name used in scenario files: `dormand_prince` or `tr_bdf2`.
    pub fn as_str(self) -> &'static str {
        match self {
            OdeMethod::DormandPrince => "dormand_prince",
            OdeMethod::TrBdf2 => "tr_bdf2",
        }
    }
}

/// Settings of an [`super::EventDriven`] simulation. Times in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDrivenSettings {
    /// Initial time t₀.
    pub t0: f64,
    /// Final time; the run reaches it exactly.
    pub t_end: f64,
    /// Output instants t₀ + k·`output_step` (on the exact clock), and t_end.
    pub output_step: f64,
    /// Also an output at every nonsmooth event (the state after it).
    pub output_at_events: bool,
    /// Smooth integrator.
    pub method: OdeMethod,
    /// Relative tolerance of the local error control.
    pub rtol: f64,
    /// Absolute tolerance of the local error control.
    pub atol: f64,
    /// Largest step of the smooth integrator (infinite: no limit).
    pub max_step: f64,
    /// Most integrator steps between two instants (an error beyond).
    pub max_steps: u64,
    /// Event location: the root of a guard is bracketed to this width in
    /// seconds; 0 brackets it to adjacent floating-point numbers.
    pub event_tolerance: f64,
    /// Accumulation rule: an impact whose outgoing normal velocity is below
    /// this (in the units of ẏ) …
    pub accumulation_velocity: f64,
    /// … and whose free flight 2ẏ⁺/|ÿ_free| is shorter than this (s) is
    /// treated as plastic: the contact becomes persistent.
    pub accumulation_time: f64,
    /// Solver of the impact, contact-force and mode problems (an LCP solver
    /// name, "default", …).
    pub solver: String,
    /// Settings of that solver.
    pub solver_settings: SolverSettings,
}

impl EventDrivenSettings {
    /// Defaults: t₀ = 0, Dormand–Prince, rtol = atol = 1e-10, events
    /// located to adjacent floats, accumulation thresholds 1e-4 (velocity)
    /// and 1e-4 s (free flight), at most 100 000 steps between instants.
    pub fn new(output_step: f64, t_end: f64) -> Self {
        EventDrivenSettings {
            t0: 0.0,
            t_end,
            output_step,
            output_at_events: false,
            method: OdeMethod::DormandPrince,
            rtol: 1e-10,
            atol: 1e-10,
            max_step: f64::INFINITY,
            max_steps: 100_000,
            event_tolerance: 0.0,
            accumulation_velocity: 1e-4,
            accumulation_time: 1e-4,
            solver: "default".into(),
            solver_settings: SolverSettings::default(),
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
        if !(self.t_end.is_finite() && self.t_end >= self.t0) {
            return bad("t_end", self.t_end, "must be finite and not before t0");
        }
        if !(self.output_step.is_finite() && self.output_step > 0.0) {
            return bad(
                "output_step",
                self.output_step,
                "must be a finite positive number of seconds",
            );
        }
        if !(self.rtol.is_finite() && self.rtol > 0.0 && self.rtol < 1.0) {
            return bad("rtol", self.rtol, "must be in (0, 1)");
        }
        if !(self.atol.is_finite() && self.atol > 0.0) {
            return bad("atol", self.atol, "must be finite and > 0");
        }
        if self.max_step.is_nan() || self.max_step <= 0.0 {
            return bad(
                "max_step",
                self.max_step,
                "must be > 0 (infinite: no limit)",
            );
        }
        if self.max_steps == 0 {
            return bad("max_steps", 0.0, "must be at least 1");
        }
        if !(self.event_tolerance.is_finite() && self.event_tolerance >= 0.0) {
            return bad(
                "event_tolerance",
                self.event_tolerance,
                "must be finite and ≥ 0",
            );
        }
        if !(self.accumulation_velocity.is_finite() && self.accumulation_velocity >= 0.0) {
            return bad(
                "accumulation_velocity",
                self.accumulation_velocity,
                "must be finite and ≥ 0",
            );
        }
        if !(self.accumulation_time.is_finite() && self.accumulation_time >= 0.0) {
            return bad(
                "accumulation_time",
                self.accumulation_time,
                "must be finite and ≥ 0",
            );
        }
        self.solver_settings
            .validate()
            .map_err(SimulationError::Numerics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_refused() {
        let ok = EventDrivenSettings::new(0.01, 1.0);
        assert!(ok.validate().is_ok());
        type Change = Box<dyn Fn(&mut EventDrivenSettings)>;
        let cases: Vec<(&str, Change)> = vec![
            ("t_end", Box::new(|s| s.t_end = -1.0)),
            ("output_step", Box::new(|s| s.output_step = 0.0)),
            ("rtol", Box::new(|s| s.rtol = 0.0)),
            ("atol", Box::new(|s| s.atol = f64::NAN)),
            ("max_step", Box::new(|s| s.max_step = 0.0)),
            ("event_tolerance", Box::new(|s| s.event_tolerance = -1.0)),
            (
                "accumulation_velocity",
                Box::new(|s| s.accumulation_velocity = -1.0),
            ),
            (
                "accumulation_time",
                Box::new(|s| s.accumulation_time = f64::INFINITY),
            ),
        ];
        for (name, change) in cases {
            let mut s = ok.clone();
            change(&mut s);
            match s.validate() {
                Err(SimulationError::InvalidSetting { what, .. }) => assert_eq!(what, name),
                other => panic!("{name}: {other:?}"),
            }
        }
        let mut s = ok.clone();
        s.max_steps = 0;
        assert!(s.validate().is_err());
    }
}
