//! The `[[fmus]]` and `[[connections]]` of a scenario file
//! ([`nonsmooth_scenario::CosimPlan`]) checked against the FMUs themselves:
//! each FMU opened, each parameter a variable of causality `parameter`,
//! each connection from an `output` to an `input`. Errors are the scenario
//! crate's located [`ScenarioError::Invalid`] (file, line, column).
//! [`build`] then builds the whole run: the scenario's sensors, observers
//! and controllers around a [`CoSimulation`] of its FMUs.

// The errors are the scenario crate's own type, unboxed as everywhere it
// is returned; a check runs once per file, not per step.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use nonsmooth::control::{ControlLoop, LawCatalog};
use nonsmooth::simulation::{simulate, Strategy};
use nonsmooth_scenario::{
    BuildCache, BuiltScenario, CosimBuild, CosimPlan, CouplingChoice, Endpoint, FmuCausality,
    FmuVariables, NativePart, Place, Scenario, ScenarioError, Variable,
};
use thiserror::Error;

use crate::error::CosimError;
use crate::import::{Fmu, VarCausality, VarType};
use crate::master::{
    CoSimulation, Connection, Coupling, EndWatch, FmuSpec, MasterSettings, NativeRead, NativeSpec,
};

/// Why a co-simulation scenario could not be set up.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The scenario is wrong (a located error: file, line, column): bad
    /// syntax or values, a missing or unusable FMU file, an unknown
    /// variable, a variable of the wrong causality.
    #[error(transparent)]
    Input(#[from] ScenarioError),
    /// An FMU failed while it was instantiated or initialised (its
    /// binary refused, or an FMI call returned an error).
    #[error("{file}: at set-up (t = {time}): {source}")]
    Fmu {
        /// The scenario file.
        file: PathBuf,
        /// The start time t₀ the FMUs were being set up for.
        time: f64,
        /// The FMU's error (names the FMU and the time).
        source: CosimError,
    },
    /// The scenario has no `[[fmus]]`.
    #[error("{0}: the scenario has no [[fmus]]: it is not a co-simulation")]
    NotCosim(PathBuf),
    /// The final time asked for ([`build_until`]) is not after t₀.
    #[error("{file}: t_end = {t_end} must be a finite time after t0 = {t0}")]
    EndTime {
        /// The scenario file.
        file: PathBuf,
        /// The final time asked for.
        t_end: f64,
        /// The scenario's start time.
        t0: f64,
    },
}

/// Builds a co-simulation scenario (a file with `[[fmus]]`): opens and
/// checks the FMUs ([`open_plan`]), builds the scenario around their
/// interface systems ([`Scenario::build_cosim_with`]), instantiates and
/// initialises the FMUs in a [`CoSimulation`] (Jacobi coupling, discarded
/// steps retried where the FMU allows it, one output row every
/// `[simulation] step` × `[output] every`) and closes the scenario's
/// sensors, observers and controllers around it.
pub fn build(
    scenario: &Scenario,
    catalog: Arc<dyn LawCatalog>,
) -> Result<(BuiltScenario, ControlLoop), BuildError> {
    build_until(scenario, catalog, None)
}

/// As [`build`], with the final time `t_end` instead of the scenario's
/// when given (as `nonsmooth sweep --t-end` and the Python package's
/// `t_end=` ask): the master's clock, the FMUs' stop time and the built
/// settings take it. A final time not after t₀ is
/// [`BuildError::EndTime`].
pub fn build_until(
    scenario: &Scenario,
    catalog: Arc<dyn LawCatalog>,
    t_end: Option<f64>,
) -> Result<(BuiltScenario, ControlLoop), BuildError> {
    build_batched(scenario, catalog, t_end, &mut OpenFmus::default(), None)
        .map(|(built, run, _)| (built, run))
}

/// FMUs kept open across the builds of a batch (a sweep's points: the
/// same scenario, other parameter values), by file: an FMU is unpacked and
/// its description read once per batch, and each point instantiates it
/// afresh (FMI 2.0 instances of one FMU are independent), so a point's
/// run is the run a freshly opened FMU gives. A file is read once per
/// batch: changing it during the batch is not seen.
#[derive(Debug, Default)]
pub struct OpenFmus {
    fmus: HashMap<PathBuf, Arc<Fmu>>,
}

impl OpenFmus {
    /// How many FMU files are open.
    pub fn len(&self) -> usize {
        self.fmus.len()
    }

    /// True when no FMU is open.
    pub fn is_empty(&self) -> bool {
        self.fmus.is_empty()
    }

    /// The FMU of `path`, loaded on first use.
    fn load(&mut self, path: &std::path::Path) -> Result<Arc<Fmu>, CosimError> {
        if let Some(f) = self.fmus.get(path) {
            return Ok(Arc::clone(f));
        }
        let f = Fmu::load(path)?;
        self.fmus.insert(path.to_path_buf(), Arc::clone(&f));
        Ok(f)
    }
}

/// As [`build_until`], one point of a batch: the FMUs from `open` (opened
/// there on first use), the expressions parsed through `cache` when given
/// ([`Scenario::build_cosim_cached`]). The [`EndWatch`] tells, after the
/// run, whether an FMU ended it early (fmi2Terminated) and when.
pub fn build_batched(
    scenario: &Scenario,
    catalog: Arc<dyn LawCatalog>,
    t_end: Option<f64>,
    open: &mut OpenFmus,
    cache: Option<&BuildCache>,
) -> Result<(BuiltScenario, ControlLoop, EndWatch), BuildError> {
    let Some(plan) = scenario.cosim_plan()? else {
        return Err(BuildError::NotCosim(scenario.path().to_path_buf()));
    };
    let fmus = open_plan_in(&plan, open)?;
    let vars: Vec<FmuVariables> = plan
        .fmus
        .iter()
        .zip(&fmus)
        .map(|(f, fmu)| FmuVariables {
            fmu: f.name.clone(),
            variables: fmu
                .description()
                .variables
                .iter()
                .map(|v| {
                    let c = match (v.causality, v.kind) {
                        (_, VarType::String) => FmuCausality::Other,
                        (VarCausality::Output, _) => FmuCausality::Output,
                        (VarCausality::Input, _) => FmuCausality::Input,
                        (VarCausality::Independent, _) => FmuCausality::Other,
                        _ => FmuCausality::Readable,
                    };
                    (v.name.clone(), c)
                })
                .collect(),
        })
        .collect();
    let CosimBuild {
        mut built,
        interfaces: ifaces,
        native,
    } = scenario.build_cosim_cached(catalog, &plan, &vars, cache)?;
    if let Some(t_end) = t_end {
        if !(t_end.is_finite() && t_end > built.settings.t0) {
            return Err(BuildError::EndTime {
                file: scenario.path().to_path_buf(),
                t_end,
                t0: built.settings.t0,
            });
        }
        built.settings.t_end = t_end;
        built.event_driven.t_end = t_end;
    }
    let specs: Vec<FmuSpec> = plan
        .fmus
        .iter()
        .zip(&fmus)
        .zip(&ifaces)
        .map(|((f, fmu), iface)| FmuSpec {
            name: f.name.clone(),
            fmu: fmu.clone(),
            step: f.step,
            parameters: f
                .parameters
                .iter()
                .map(|(n, x, _)| (n.clone(), *x))
                .collect(),
            outputs: iface.outputs.clone(),
            inputs: iface.inputs.clone(),
        })
        .collect();
    let connections: Vec<Connection> = plan
        .connections
        .iter()
        .filter(|c| !c.from.native && !c.to.native)
        .map(|c| Connection {
            from: (c.from.fmu.clone(), c.from.variable.clone()),
            to: (c.to.fmu.clone(), c.to.variable.clone()),
        })
        .collect();
    let s = &built.settings;
    let settings = MasterSettings {
        t0: s.t0,
        t_end: s.t_end,
        coupling: match plan.coupling {
            CouplingChoice::Jacobi => Coupling::Jacobi,
            CouplingChoice::GaussSeidel => Coupling::GaussSeidel,
        },
        output_period: Some(s.step * s.output_every as f64),
        retry_discards: true,
    };
    let extra = built.control.times();
    let cosim = match native {
        None => CoSimulation::new(specs, &connections, &settings, &extra),
        Some(part) => {
            let spec = native_spec(&plan, &built, &specs, &settings, &extra, part)?;
            CoSimulation::with_native(specs, &connections, &settings, &extra, spec)
        }
    }
    .map_err(|e| located(scenario, &plan, settings.t0, e))?;
    let watch = cosim.end_watch();
    let run = built.control_loop_on(Box::new(cosim))?;
    Ok((built, run, watch))
}

/// The native part of the master: the native model's time-stepping
/// simulation on the master's clock, and its connections.
fn native_spec(
    plan: &CosimPlan,
    built: &BuiltScenario,
    specs: &[FmuSpec],
    settings: &MasterSettings,
    extra: &[(&'static str, f64)],
    part: NativePart,
) -> Result<NativeSpec, BuildError> {
    let times = CoSimulation::clock_times(specs, settings, extra);
    let sim = simulate(
        Strategy::TimeStepping,
        Arc::clone(&part.model),
        &built.settings,
        &built.event_driven,
        &times,
    )
    .map_err(|e| {
        BuildError::Input(ScenarioError::Invalid {
            at: plan.fmus[0].name_place.clone(),
            reason: format!("the native model cannot be simulated: {e}"),
        })
    })?;
    let end = |e: &Endpoint| (e.fmu.clone(), e.variable.clone());
    let mut to_fmus = Vec::new();
    for s in &part.sources {
        let c = &plan.connections[s.connection];
        let read = match s.variable {
            Variable::Q(id) | Variable::X(id) => NativeRead::Q(id, s.index),
            Variable::V(id) => NativeRead::V(id, s.index),
            Variable::Y(id) => NativeRead::Y(id, s.index),
            Variable::Lambda(id) => NativeRead::Lambda(id, s.index),
            _ => {
                return Err(BuildError::Input(invalid(
                    &c.from.place,
                    format!(
                        "connection source `{}.{}`: only x, q, v, y and lambda of the native model feed an FMU",
                        c.from.fmu, c.from.variable
                    ),
                )))
            }
        };
        to_fmus.push((read, end(&c.to)));
    }
    let from_fmus = part
        .targets
        .iter()
        .map(|t| (end(&plan.connections[t.connection].from), t.input))
        .collect();
    Ok(NativeSpec {
        sim,
        step: built.settings.step,
        model: Arc::clone(&built.model),
        to_fmus,
        from_fmus,
    })
}

/// A master's set-up error: a misuse (an input driven by a controller
/// and a connection) or a clock problem is bad input, located at the
/// connection or FMU it concerns; an FMU failing is a failure.
fn located(scenario: &Scenario, plan: &CosimPlan, t0: f64, e: CosimError) -> BuildError {
    let fmu_place = |name: &str| {
        plan.fmu(name)
            .map(|f| f.name_place.clone())
            .or_else(|| plan.fmus.first().map(|f| f.name_place.clone()))
    };
    let at = match &e {
        CosimError::Misuse { fmu, variable, .. } => plan
            .connections
            .iter()
            .find(|c| !c.to.native && c.to.fmu == *fmu && c.to.variable == *variable)
            .map(|c| c.to.place.clone())
            .or_else(|| fmu_place(fmu)),
        CosimError::UnknownVariable { fmu, .. } => fmu_place(fmu),
        CosimError::Order { fmu, .. } => fmu_place(fmu),
        _ => None,
    };
    match at {
        Some(at) => BuildError::Input(ScenarioError::Invalid {
            at,
            reason: e.to_string(),
        }),
        None => BuildError::Fmu {
            file: scenario.path().to_path_buf(),
            time: t0,
            source: e,
        },
    }
}

/// Opens the plan's FMUs, in plan order, and checks every name the plan
/// gives against their model descriptions.
pub fn open_plan(plan: &CosimPlan) -> Result<Vec<Arc<Fmu>>, ScenarioError> {
    open_plan_in(plan, &mut OpenFmus::default())
}

/// As [`open_plan`], taking the FMUs already open in `open`.
pub fn open_plan_in(plan: &CosimPlan, open: &mut OpenFmus) -> Result<Vec<Arc<Fmu>>, ScenarioError> {
    let mut fmus = Vec::with_capacity(plan.fmus.len());
    for f in &plan.fmus {
        let fmu = open
            .load(&f.path)
            .map_err(|e| invalid(&f.name_place, format!("FMU `{}`: {e}", f.name)))?;
        for (variable, _, place) in &f.parameters {
            expect(&fmu, &f.name, variable, place, VarCausality::Parameter)?;
        }
        fmus.push(fmu);
    }
    for c in &plan.connections {
        let end = |e: &Endpoint, causality| {
            if e.native {
                // Resolved against the native model when it is built.
                return Ok(());
            }
            let i = plan
                .fmus
                .iter()
                .position(|f| f.name == e.fmu)
                .ok_or_else(|| invalid(&e.place, format!("no FMU named `{}`", e.fmu)))?;
            expect(&fmus[i], &e.fmu, &e.variable, &e.place, causality)
        };
        end(&c.from, VarCausality::Output)?;
        end(&c.to, VarCausality::Input)?;
    }
    Ok(fmus)
}

fn invalid(at: &Place, reason: String) -> ScenarioError {
    ScenarioError::Invalid {
        at: at.clone(),
        reason,
    }
}

/// `variable` exists in `fmu` with the causality `want`.
fn expect(
    fmu: &Fmu,
    name: &str,
    variable: &str,
    at: &Place,
    want: VarCausality,
) -> Result<(), ScenarioError> {
    let d = fmu.description();
    match d.variable(variable) {
        None => {
            let names: Vec<&str> = d.with_causality(want).map(|v| v.name.as_str()).collect();
            Err(invalid(
                at,
                format!(
                    "FMU `{name}` has no variable `{variable}` ({want:?} variables: {})",
                    names.join(", ")
                ),
            ))
        }
        Some(v) if v.causality != want => Err(invalid(
            at,
            format!(
                "`{name}.{variable}` has causality {:?}; {want:?} expected here",
                v.causality
            ),
        )),
        Some(_) => Ok(()),
    }
}
