//! `[simulation]` and `[output] every`: the strategy and its settings
//! (time-stepping, event-driven), checked when the scenario is built, and
//! the location of set-up errors.

use super::error::{Result, ScenarioError};
use super::schema::{SimulationTable, SQ};
use super::values::Ctx;
use super::Places;
use nonsmooth::numerics::lcp::{lcp_solver, LCP_SOLVERS};
use nonsmooth::numerics::mlcp::{mlcp_solver, MLCP_SOLVERS};
use nonsmooth::numerics::relay::{relay_solver, RELAY_SOLVERS};
use nonsmooth::numerics::{NumericsError, SolverSettings};
use nonsmooth::simulation::clock::run_clock;
use nonsmooth::simulation::{
    ClockError, EventDrivenSettings, FirstOrderScheme, LagrangianScheme, OdeMethod,
    SchatzmanPaoliStart, SimulationError, Strategy, TimeSteppingSettings,
};
use std::collections::BTreeMap;

/// The settings of both strategies and the scenario's choice.
pub(super) struct AllSettings {
    pub strategy: Strategy,
    pub time_stepping: TimeSteppingSettings,
    pub event_driven: EventDrivenSettings,
}

/// The settings of `[simulation]` (and `every` of `[output]`), checked as
/// the simulation will check them; records where each key is in `places`.
pub(super) fn settings(
    ctx: Ctx<'_>,
    sim: &SimulationTable,
    every: Option<&SQ>,
    words: &BTreeMap<String, String>,
    places: &mut Places,
) -> Result<AllSettings> {
    let src = ctx.src;
    let mut key = |name: &'static str, span: std::ops::Range<usize>| {
        places.settings.insert(name, src.span(span));
    };
    key("t_end", sim.t_end.span());
    key("step", sim.step.span());
    let mut s = TimeSteppingSettings::new(
        ctx.number(&sim.step, "step")?,
        ctx.number(&sim.t_end, "t_end")?,
    );
    fn opt<'q>(q: &'q Option<SQ>, name: &'static str) -> Option<(&'q SQ, &'static str)> {
        q.as_ref().map(|q| (q, name))
    }
    for (q, name) in [
        opt(&sim.theta, "theta"),
        opt(&sim.t0, "t0"),
        opt(&sim.activation_gamma, "activation_gamma"),
        opt(&sim.tolerance, "tolerance"),
        opt(&sim.newton_tolerance, "newton_tolerance"),
        opt(&sim.rest_velocity, "rest_velocity"),
    ]
    .into_iter()
    .flatten()
    {
        key(name, q.span());
        let v = ctx.number(q, name)?;
        match name {
            "theta" => s.theta = v,
            "t0" => s.t0 = v,
            "activation_gamma" => s.activation_gamma = v,
            "tolerance" => s.solver_settings.tolerance = v,
            "rest_velocity" => s.rest_velocity = v,
            _ => s.newton_tolerance = v,
        }
    }
    let count = |q: &SQ, name: &str| -> Result<u64> {
        let n = ctx.integer(q, name)?;
        u64::try_from(n)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ScenarioError::Setting {
                at: ctx.at(q.span()),
                what: name.to_string(),
                reason: format!("must be at least 1, got {n}"),
            })
    };
    if let Some(q) = &sim.max_iterations {
        key("max_iterations", q.span());
        s.solver_settings.max_iterations = Some(count(q, "max_iterations")? as usize);
    }
    if let Some(q) = &sim.newton_max_iterations {
        key("newton_max_iterations", q.span());
        s.newton_max_iterations = count(q, "newton_max_iterations")? as usize;
    }
    if let Some(q) = every {
        key("output_every", q.span());
        s.output_every = count(q, "every")?;
    }
    if let Some(scheme) = &sim.first_order_scheme {
        s.first_order_scheme = match scheme.get_ref().as_str() {
            "euler_moreau" => FirstOrderScheme::EulerMoreau,
            "zero_order_hold" => FirstOrderScheme::ZeroOrderHold,
            other => {
                return Err(ScenarioError::Setting {
                    at: ctx.at(scheme.span()),
                    what: "first_order_scheme".into(),
                    reason: format!(
                        "unknown scheme `{other}` (schemes: euler_moreau, zero_order_hold)"
                    ),
                })
            }
        };
    }
    if let Some(scheme) = &sim.scheme {
        key("scheme", scheme.span());
        let text = scheme.get_ref().trim();
        let name = words.get(text).map_or(text, |w| w.as_str());
        s.lagrangian_scheme = match name {
            "moreau_jean" => LagrangianScheme::MoreauJean,
            "schatzman_paoli" => LagrangianScheme::SchatzmanPaoli,
            "d1_minus_linear" => LagrangianScheme::D1MinusLinear,
            other => {
                return Err(ScenarioError::Setting {
                    at: ctx.at(scheme.span()),
                    what: "scheme".into(),
                    reason: format!(
                        "unknown scheme `{other}` (schemes: moreau_jean, schatzman_paoli, d1_minus_linear)"
                    ),
                })
            }
        };
    }
    if let Some(start) = &sim.schatzman_paoli_start {
        key("schatzman_paoli_start", start.span());
        s.schatzman_paoli_start = match start.get_ref().trim() {
            "taylor" => SchatzmanPaoliStart::Taylor,
            "siconos" => SchatzmanPaoliStart::Siconos,
            other => {
                return Err(ScenarioError::Setting {
                    at: ctx.at(start.span()),
                    what: "schatzman_paoli_start".into(),
                    reason: format!("unknown start `{other}` (starts: taylor, siconos)"),
                })
            }
        };
    }
    if let Some(solver) = &sim.solver {
        key("solver", solver.span());
        let name = solver.get_ref().as_str();
        let st = SolverSettings::default();
        let known = lcp_solver(name, st).is_ok()
            || mlcp_solver(name, st).is_ok()
            || relay_solver(name, st).is_ok()
            || nonsmooth::numerics::friction::friction_solver(name, st).is_ok();
        if !known {
            return Err(ScenarioError::Setting {
                at: ctx.at(solver.span()),
                what: "solver".into(),
                reason: format!(
                    "unknown solver `{name}` (LCP: {LCP_SOLVERS}; MLCP: {MLCP_SOLVERS}; relay: {RELAY_SOLVERS}; frictional contact: {})",
                    nonsmooth::numerics::friction::FRICTION_SOLVERS
                ),
            });
        }
        s.solver = name.to_string();
    }
    check_clock(&s).map_err(|e| places.simulation_error(e))?;
    let strategy = match &sim.strategy {
        None => Strategy::TimeStepping,
        Some(q) => {
            places.settings.insert("strategy", src.span(q.span()));
            q.get_ref()
                .parse::<Strategy>()
                .map_err(|reason| ScenarioError::Setting {
                    at: ctx.at(q.span()),
                    what: "strategy".into(),
                    reason,
                })?
        }
    };
    // Event-driven: outputs on the time-stepping output grid, step × every.
    let mut ed = EventDrivenSettings::new(s.step * s.output_every as f64, s.t_end);
    ed.t0 = s.t0;
    ed.solver = s.solver.clone();
    ed.solver_settings = s.solver_settings;
    places
        .settings
        .insert("output_step", places.settings["step"].clone());
    for (q, name) in [
        opt(&sim.rtol, "rtol"),
        opt(&sim.atol, "atol"),
        opt(&sim.max_step, "max_step"),
        opt(&sim.event_tolerance, "event_tolerance"),
        opt(&sim.accumulation_velocity, "accumulation_velocity"),
        opt(&sim.accumulation_time, "accumulation_time"),
    ]
    .into_iter()
    .flatten()
    {
        places.settings.insert(name, src.span(q.span()));
        let v = ctx.number(q, name)?;
        match name {
            "rtol" => ed.rtol = v,
            "atol" => ed.atol = v,
            "max_step" => ed.max_step = v,
            "event_tolerance" => ed.event_tolerance = v,
            "accumulation_velocity" => ed.accumulation_velocity = v,
            _ => ed.accumulation_time = v,
        }
    }
    if let Some(q) = &sim.max_steps {
        places.settings.insert("max_steps", src.span(q.span()));
        ed.max_steps = count(q, "max_steps")?;
    }
    if let Some(b) = &sim.output_at_events {
        ed.output_at_events = *b.get_ref();
    }
    if let Some(m) = &sim.method {
        ed.method = match m.get_ref().as_str() {
            "dormand_prince" => OdeMethod::DormandPrince,
            "tr_bdf2" => OdeMethod::TrBdf2,
            other => {
                return Err(ScenarioError::Setting {
                    at: ctx.at(m.span()),
                    what: "method".into(),
                    reason: format!("unknown method `{other}` (methods: dormand_prince, tr_bdf2)"),
                })
            }
        };
    }
    check_event_driven_clock(&ed).map_err(|e| places.simulation_error(e))?;
    if strategy == Strategy::EventDriven && s.lagrangian_scheme != LagrangianScheme::MoreauJean {
        let q = sim
            .scheme
            .as_ref()
            .expect("a scheme other than the default was given");
        return Err(ScenarioError::Setting {
            at: ctx.at(q.span()),
            what: "scheme".into(),
            reason: "the Schatzman–Paoli and D1-minus-linear schemes are time-stepping schemes; \
                     the event-driven strategy locates impacts instead (remove `scheme` or use \
                     strategy = \"time-stepping\")"
                .into(),
        });
    }
    Ok(AllSettings {
        strategy,
        time_stepping: s,
        event_driven: ed,
    })
}

/// The checks [`nonsmooth::simulation::EventDriven::new`] makes of the settings
/// and clock.
fn check_event_driven_clock(s: &EventDrivenSettings) -> std::result::Result<(), SimulationError> {
    s.validate()?;
    run_clock(s.t0, s.t_end, ("output_step", s.output_step), &[])?;
    Ok(())
}

/// The checks [`nonsmooth::simulation::TimeStepping::new`] makes of the settings
/// and clock, so they fail when the scenario is built.
fn check_clock(s: &TimeSteppingSettings) -> std::result::Result<(), SimulationError> {
    s.validate()?;
    run_clock(s.t0, s.t_end, ("step", s.step), &[])?;
    Ok(())
}

impl Places {
    /// Locates an error of the simulation set-up in the file.
    pub(super) fn simulation_error(&self, e: SimulationError) -> ScenarioError {
        let setting = |name: &str| {
            self.settings
                .get(name)
                .cloned()
                .unwrap_or_else(|| self.simulation.clone())
        };
        match e {
            SimulationError::InvalidSetting {
                what,
                value,
                reason,
            } => ScenarioError::Setting {
                at: setting(what),
                what: if what == "output_every" {
                    "every"
                } else {
                    what
                }
                .to_string(),
                reason: format!("{value}: {reason}"),
            },
            SimulationError::Numerics(NumericsError::InvalidSetting { name, reason }) => {
                ScenarioError::Setting {
                    at: setting(name),
                    what: name.to_string(),
                    reason,
                }
            }
            SimulationError::Numerics(e) => ScenarioError::Setting {
                at: setting("solver"),
                what: "solver".into(),
                reason: e.to_string(),
            },
            SimulationError::Clock(
                ClockError::OutOfRange { what, .. } | ClockError::NotRational { what, .. },
            ) => ScenarioError::Simulation {
                at: setting(what),
                source: e,
            },
            SimulationError::SingularIterationMatrix { ref system } => ScenarioError::Simulation {
                at: self
                    .systems
                    .get(system)
                    .cloned()
                    .unwrap_or_else(|| self.simulation.clone()),
                source: e,
            },
            e => ScenarioError::Simulation {
                at: self.simulation.clone(),
                source: e,
            },
        }
    }
}
