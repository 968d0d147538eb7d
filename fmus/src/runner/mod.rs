//! The simulation behind an FMU instance, seen through a small trait
//! ([`Runner`]) so the FMI layer (`component`, `fmi2`) does not depend on
//! what runs. [`ScenarioRunner`] runs a scenario the way every run is
//! driven: its control loop ([`BuiltScenario::control_loop`]; the plant
//! alone when the scenario has no sensors, observers or controllers), on the
//! strategy the scenario names, for FMI 2.0 and 3.0 alike (`advance.rs`:
//! stepping an event-driven plant, early return at events, the next event
//! time).

use std::collections::BTreeMap;
use std::sync::Arc;

use nonsmooth::control::{ControlError, ControlLoop, ControlLoopState};
use nonsmooth::simulation::{Statistics, StepOutcome, Strategy, TimeBase};
use nonsmooth_scenario::{BuiltScenario, Quantity, Scenario, ScenarioError};
use thiserror::Error;

use crate::variables::{Interface, VarKind};

mod advance;

pub use advance::{DiscreteUpdate, Located, StepEnd};

/// Why a runner call failed. The message is written to the host's log.
#[derive(Debug, Error)]
pub enum RunnerError {
    /// A call the runner refuses in its current phase or with these values
    /// (fmi2Error, the instance stays usable).
    #[error("{0}")]
    Refused(String),
    /// Held input values the loop refuses (fmi2Error, the instance stays
    /// usable).
    #[error(transparent)]
    Input(ControlError),
    /// The step cannot be done because it goes past the stop time
    /// (fmi2Discard, nothing was computed).
    #[error("{0}")]
    PastStop(String),
    /// The scenario could not be built with the parameter values given.
    #[error(transparent)]
    Build(#[from] Box<ScenarioError>),
    /// With the parameter values given the scenario has another structure
    /// than the FMU declares.
    #[error("{0}")]
    Structure(String),
    /// The simulation failed during a step (fmi2Error; restore a saved
    /// state or reset).
    #[error("simulation failed in the step from t = {t}: {source}")]
    Simulation {
        /// The time the step started from.
        t: f64,
        /// What failed.
        source: ControlError,
    },
    /// A state that does not belong to this FMU or is damaged, or that the
    /// simulation cannot take.
    #[error("{0}")]
    State(String),
}

impl From<ScenarioError> for RunnerError {
    fn from(e: ScenarioError) -> Self {
        RunnerError::Build(Box::new(e))
    }
}

/// The version of the serialized state format (2: every FMU saves its
/// control loop's state, the plant's inside it; 3: with the time of the
/// last early return, and plants of either strategy).
const STATE_FORMAT: u32 = 3;

/// The experiment the host sets up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Experiment {
    /// Start time (the scenario's t0 unless given).
    pub start: Option<f64>,
    /// Stop time, when the host defines one.
    pub stop: Option<f64>,
}

/// What the FMI layer needs from a simulation.
///
/// Phases: after creation the runner is *set up* (parameters may be set;
/// [`Runner::setup_experiment`]); [`Runner::initialize`] builds the
/// simulation (called again when parameters changed during initialization);
/// [`Runner::start_stepping`] ends initialization; then
/// [`Runner::do_step`] advances and only tunable parameters and inputs may
/// be set.
pub trait Runner {
    /// A complete saved state.
    type State: Clone;

    /// The variable layout.
    fn interface(&self) -> &Interface;
    /// Sets the experiment (start and stop time), before initialization.
    fn setup_experiment(&mut self, experiment: Experiment) -> Result<(), RunnerError>;
    /// Enters initialization: builds the simulation with the current
    /// parameter values and computes the instant t₀ with the current input
    /// values.
    fn initialize(&mut self) -> Result<(), RunnerError>;
    /// Ends initialization: the simulation is at its start time.
    fn start_stepping(&mut self) -> Result<(), RunnerError>;
    /// The communication time reached.
    fn time(&self) -> f64;
    /// Reads a variable.
    fn get_real(&mut self, vr: u32) -> Result<f64, RunnerError>;
    /// Writes a variable (parameter or input).
    fn set_real(&mut self, vr: u32, value: f64) -> Result<(), RunnerError>;
    /// Advances from `t` (the current communication time) by `h` > 0.
    fn do_step(&mut self, t: f64, h: f64) -> Result<(), RunnerError>;
    /// As [`Runner::do_step`], stopping at the first event inside the step
    /// when `early_return` is true; says where it stopped and whether the
    /// instant reached holds an event. With `defer` (event mode) an event
    /// where the step ends is left pending at its left limit, for
    /// [`Runner::update_discrete_states`]. Refused while one is pending.
    fn advance(
        &mut self,
        t: f64,
        h: f64,
        early_return: bool,
        defer: bool,
    ) -> Result<StepEnd, RunnerError> {
        let _ = (early_return, defer);
        self.do_step(t, h)?;
        Ok(StepEnd {
            time: self.time(),
            early: false,
            event: false,
            impact: false,
            pending: false,
        })
    }
    /// True while an instant reached by [`Runner::advance`] waits for
    /// [`Runner::update_discrete_states`].
    fn event_pending(&self) -> bool {
        false
    }
    /// Processes the pending instant, if any (else does nothing).
    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, RunnerError> {
        Ok(DiscreteUpdate::default())
    }
    /// The time of the next scheduled event (a sampling instant of the
    /// control loop), when there is one.
    fn next_event_time(&self) -> Option<f64> {
        None
    }
    /// The nonsmooth transitions located during the last step or event
    /// update (event-driven plants).
    fn located(&self) -> &[Located] {
        &[]
    }
    /// The complete state.
    fn save_state(&self) -> Result<Self::State, RunnerError>;
    /// The complete state, into an existing one (reusing its storage).
    fn save_state_into(&self, into: &mut Self::State) -> Result<(), RunnerError> {
        *into = self.save_state()?;
        Ok(())
    }
    /// Puts a saved state back.
    fn restore_state(&mut self, state: &Self::State) -> Result<(), RunnerError>;
    /// The state as bytes.
    fn serialize_state(&self, state: &Self::State) -> Vec<u8>;
    /// A state from bytes (checked to belong to this FMU).
    fn deserialize_state(&self, bytes: &[u8]) -> Result<Self::State, RunnerError>;
}

/// A `--set` or host value: a number when it parses as one, else an
/// expression.
pub fn quantity(value: &str) -> Quantity {
    match value.trim().parse::<f64>() {
        Ok(x) => x.into(),
        Err(_) => value.trim().into(),
    }
}

/// The catalog of control laws FMUs are built with (every law of
/// `nonsmooth-controllers`).
pub fn laws() -> Arc<dyn nonsmooth::control::LawCatalog> {
    Arc::new(nonsmooth_controllers::Catalog)
}

/// The simulation and its scenario.
struct Running {
    built: BuiltScenario,
    sim: ControlLoop,
    /// The grid communication points are mapped onto (step, t₀ in ticks):
    /// the integration grid (time-stepping) or the output grid
    /// (event-driven).
    grid: (i64, i64),
    /// The input values the instant t₀ was computed with.
    started_with: Vec<f64>,
}

/// Runs a scenario for an FMU instance: its control loop (laws from
/// `nonsmooth_controllers::Catalog`) on a time-stepping plant; the state
/// holds the plant's with the laws' memories, the sensors' latest values
/// and the delay lines ([`ControlLoopState`]).
///
/// Initialization: the simulation is built and its instant t₀ computed
/// (the plant's first output, and for a control loop the captures and
/// computations scheduled at t₀) when initialization mode is entered, with
/// the input values held then (their start values unless set before), and
/// again when a parameter changes during initialization. Outputs during
/// initialization are the values at t₀ after its events (the row at t₀ of
/// `nonsmooth run`). Inputs set during initialization mode are held over
/// the first communication step.
pub struct ScenarioRunner {
    scenario: Scenario,
    /// Identifies the FMU (its GUID); written into serialized states.
    guid: String,
    iface: Interface,
    /// Parameter values set by the host (on top of the export's `--set`).
    host_params: BTreeMap<String, f64>,
    /// Parameter values of the last build (or as set since).
    param_values: Vec<f64>,
    inputs: Vec<f64>,
    /// The inputs held when initialization mode was entered (the instant t₀
    /// is computed with them).
    t0_inputs: Option<Vec<f64>>,
    experiment: Experiment,
    running: Option<Running>,
    /// Parameters changed since the last build.
    dirty: bool,
    stepping: bool,
    /// The communication time reached (as the host counts it).
    t_comm: f64,
    /// The strategy of the plant: the one the scenario names.
    strategy: Strategy,
    /// The time of the last early return (the chattering guard never
    /// returns twice at one time).
    last_early: Option<f64>,
    /// The transitions located during the last step or event update.
    located: Vec<Located>,
}

/// A saved [`ScenarioRunner`] state.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerState {
    t_comm: f64,
    /// The time of the last early return (the chattering guard reads it).
    last_early: Option<f64>,
    inputs: Vec<f64>,
    host_params: BTreeMap<String, f64>,
    sim: ControlLoopState,
}

/// The scenario's run as an FMU runs it, on the given strategy (the
/// scenario's own), the `[fmi]` inputs held at their start values.
fn fmu_loop(built: &BuiltScenario, strategy: Strategy) -> Result<ControlLoop, RunnerError> {
    Ok(built.control_loop_with(strategy)?)
}

/// The grid communication points map onto (step, t₀) in ticks: the
/// integration grid of a time-stepping plant, the output grid t₀ + k·
/// `output_step` of an event-driven one.
fn grid(built: &BuiltScenario, sim: &ControlLoop) -> Result<(i64, i64), RunnerError> {
    if let Some(g) = sim.plant().grid() {
        return Ok(g);
    }
    let (_, base) = sim.plant().tick();
    let ed = &built.event_driven;
    let ticks = |what, t| {
        base.ticks(what, t).map_err(|e| {
            RunnerError::Refused(format!("the plant's output grid is not on its clock: {e}"))
        })
    };
    Ok((ticks("output_step", ed.output_step)?, ticks("t0", ed.t0)?))
}

impl ScenarioRunner {
    /// A runner of `scenario` (overrides of the export already applied) on
    /// the strategy it names, built once with the default parameter values
    /// to check it and lay out its variables.
    pub fn new(scenario: Scenario, guid: &str) -> Result<Self, RunnerError> {
        let built = scenario.build_with(laws())?;
        Self::from_built(scenario, &built, guid)
    }

    /// The strategy of the plant.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// As [`ScenarioRunner::new`], for `built`, the scenario built with
    /// its default parameter values.
    pub fn from_built(
        scenario: Scenario,
        built: &BuiltScenario,
        guid: &str,
    ) -> Result<Self, RunnerError> {
        // The same checks a build for a run makes.
        fmu_loop(built, built.strategy)?;
        let iface = Interface::new(built);
        let param_values = built.parameters.values().copied().collect();
        let inputs = built.fmi.input_starts();
        Ok(ScenarioRunner {
            scenario,
            guid: guid.to_string(),
            param_values,
            inputs,
            t0_inputs: None,
            experiment: Experiment {
                start: None,
                stop: None,
            },
            running: None,
            dirty: true,
            stepping: false,
            t_comm: iface.default_experiment.0,
            strategy: built.strategy,
            last_early: None,
            located: Vec::new(),
            iface,
            host_params: BTreeMap::new(),
        })
    }

    /// Statistics of the simulation (steps, solves), when built.
    pub fn statistics(&self) -> Option<Statistics> {
        self.running.as_ref().map(|r| r.sim.plant().statistics())
    }

    /// Builds the scenario with `params` on top of the export's overrides
    /// and sets up its simulation for the experiment (not yet at t₀).
    fn build(&self, params: &BTreeMap<String, f64>) -> Result<Running, RunnerError> {
        let mut scenario = Scenario::from_str(self.scenario.text(), self.scenario.path())?;
        for (name, value) in self.scenario.overrides() {
            scenario.set_parameter(name, value.clone())?;
        }
        for (name, &value) in params {
            scenario.set_parameter(name, value)?;
        }
        let mut built = scenario.build_with(laws())?;
        let iface = Interface::new(&built);
        if !iface.same_layout(&self.iface) {
            return Err(RunnerError::Structure(
                "with these parameter values the scenario has other variables than the FMU declares \
                 (a parameter that changes the number of systems, interactions or outputs cannot be set)"
                    .into(),
            ));
        }
        let s = &mut built.settings;
        if let Some(t0) = self.experiment.start {
            s.t0 = t0;
        }
        s.t_end = match self.experiment.stop {
            Some(stop) => stop,
            None => open_end(s.t0, s.step).unwrap_or(s.t_end.max(s.t0)),
        };
        built.event_driven.t0 = s.t0;
        built.event_driven.t_end = s.t_end;
        let sim = fmu_loop(&built, self.strategy)?;
        let grid = grid(&built, &sim)?;
        Ok(Running {
            built,
            sim,
            grid,
            started_with: Vec::new(),
        })
    }

    /// Builds with the host's parameters and computes the instant t₀ with
    /// the inputs of initialization, unless that is done already.
    fn ensure_at_t0(&mut self) -> Result<(), RunnerError> {
        let inputs = self.t0_inputs.as_ref().unwrap_or(&self.inputs);
        if let Some(r) = &self.running {
            if !self.dirty && r.started_with == *inputs {
                return Ok(());
            }
        }
        let inputs = inputs.clone();
        let mut r = self.build(&self.host_params)?;
        r.built
            .fmi
            .apply_inputs(&mut r.sim, &inputs)
            .map_err(RunnerError::Input)?;
        // The instant t0: the plant's first output, and the captures and
        // computations scheduled then.
        let t0_tick = r.grid.1;
        if self.strategy == Strategy::TimeStepping {
            while r.sim.next_event_tick().is_some_and(|t| t <= t0_tick) {
                let t = r.sim.time();
                r.sim
                    .step()
                    .map_err(|source| RunnerError::Simulation { t, source })?;
            }
        } else {
            // An event-driven plant's first instant is t0 (its first output).
            let t = r.sim.time();
            r.sim
                .step()
                .map_err(|source| RunnerError::Simulation { t, source })?;
        }
        self.last_early = None;
        r.started_with = inputs;
        self.param_values = r.built.parameters.values().copied().collect();
        self.t_comm = r.built.settings.t0;
        self.running = Some(r);
        self.dirty = false;
        Ok(())
    }

    fn running(&self) -> Result<&Running, RunnerError> {
        self.running
            .as_ref()
            .ok_or_else(|| RunnerError::Refused("the model is not initialized".into()))
    }

    /// Rebuilds with the host's current parameters and moves the running
    /// simulation's state into the new one (a tunable parameter changed).
    fn retune(&mut self) -> Result<(), RunnerError> {
        let running = self.running()?;
        let old = running.sim.save_state().map_err(state_error)?;
        let started_with = running.started_with.clone();
        let mut new = self.build(&self.host_params)?;
        new.sim.restore_state(&old).map_err(|e| {
            RunnerError::Structure(format!(
                "the new parameter values change the model's structure or time base: {e}"
            ))
        })?;
        new.started_with = started_with;
        self.param_values = new.built.parameters.values().copied().collect();
        self.running = Some(new);
        self.dirty = false;
        Ok(())
    }

    fn apply_inputs(&mut self) -> Result<(), RunnerError> {
        let inputs = &self.inputs;
        let r = self
            .running
            .as_mut()
            .ok_or_else(|| RunnerError::Refused("the model is not initialized".into()))?;
        r.built
            .fmi
            .apply_inputs(&mut r.sim, inputs)
            .map_err(RunnerError::Input)
    }

    /// Checks a doStep request — initialised, h finite and > 0, t the
    /// FMU's time, t + h within the stop time or the last time the plant
    /// reaches — and returns (t + h, its tick, the plant's last tick).
    fn check_step(&self, t: f64, h: f64) -> Result<(f64, i64, i64), RunnerError> {
        if !self.stepping {
            return Err(RunnerError::Refused("the model is not initialized".into()));
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(RunnerError::Refused(format!(
                "the communication step size must be a finite number > 0, got {h}"
            )));
        }
        if !t.is_finite() || !same_time(t, self.t_comm) {
            return Err(RunnerError::Refused(format!(
                "currentCommunicationPoint = {t} is not the FMU's time {}",
                self.t_comm
            )));
        }
        let target = t + h;
        let r = self.running()?;
        let end = r.sim.plant().end_tick();
        let target_tick = Self::grid_tick(r, target)?;
        if let Some(stop) = self.experiment.stop {
            if target > stop && !same_time(target, stop) {
                return Err(RunnerError::PastStop(format!(
                    "the step to t = {target} goes past the stop time {stop}"
                )));
            }
        } else if target_tick > end {
            return Err(RunnerError::PastStop(format!(
                "the step to t = {target} goes past the last time this FMU can reach ({})",
                r.sim.plant().t_end()
            )));
        }
        Ok((target, target_tick, end))
    }

    /// The grid tick at or before time `t` (within rounding of a tick).
    fn grid_tick(running: &Running, t: f64) -> Result<i64, RunnerError> {
        let sim = &running.sim;
        let (_, base): (i64, TimeBase) = sim.plant().tick();
        let tps = base.ticks_per_second() as f64;
        let x = t * tps;
        if !x.is_finite() || x.abs() > 4.0e18 {
            return Err(RunnerError::Refused(format!(
                "time {t} s is out of the clock's range"
            )));
        }
        let r = x.round();
        let tick = if (x - r).abs() <= 1e-6_f64.max(64.0 * f64::EPSILON * x.abs()) {
            r as i64
        } else {
            x.floor() as i64
        };
        let (step, t0) = running.grid;
        Ok(t0 + (tick - t0).div_euclid(step) * step)
    }
}

/// A final time far away (about 10⁹ steps) that the exact clock can
/// represent, for an experiment without a stop time.
fn open_end(t0: f64, step: f64) -> Option<f64> {
    [1e9, 1e7, 1e5].into_iter().find_map(|n| {
        let t_end = t0 + n * step;
        let base = TimeBase::for_times(&[("t0", t0), ("t_end", t_end), ("step", step)]).ok()?;
        base.ticks("t_end", t_end).ok()?;
        base.ticks("t0", t0).ok()?;
        Some(t_end)
    })
}

/// Times equal up to rounding (relative 1e-9 of the larger, or 1e-12 s).
fn same_time(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12_f64.max(1e-9 * a.abs().max(b.abs()))
}

/// A state error of the loop, for the host's log.
fn state_error(e: ControlError) -> RunnerError {
    RunnerError::State(e.to_string())
}

impl Runner for ScenarioRunner {
    type State = RunnerState;

    fn interface(&self) -> &Interface {
        &self.iface
    }

    fn setup_experiment(&mut self, experiment: Experiment) -> Result<(), RunnerError> {
        for t in [experiment.start, experiment.stop].into_iter().flatten() {
            if !t.is_finite() {
                return Err(RunnerError::Refused(format!(
                    "start and stop times must be finite, got {t}"
                )));
            }
        }
        let start = experiment.start.unwrap_or(self.iface.default_experiment.0);
        if let Some(stop) = experiment.stop {
            if stop < start {
                return Err(RunnerError::Refused(format!(
                    "the stop time {stop} is before the start time {start}"
                )));
            }
        }
        self.experiment = experiment;
        self.t_comm = start;
        self.dirty = true;
        Ok(())
    }

    fn initialize(&mut self) -> Result<(), RunnerError> {
        self.t0_inputs = Some(self.inputs.clone());
        self.ensure_at_t0()
    }

    fn start_stepping(&mut self) -> Result<(), RunnerError> {
        self.ensure_at_t0()?;
        self.stepping = true;
        Ok(())
    }

    fn time(&self) -> f64 {
        self.t_comm
    }

    fn get_real(&mut self, vr: u32) -> Result<f64, RunnerError> {
        let var = self
            .iface
            .variable(vr)
            .ok_or_else(|| RunnerError::Refused(format!("unknown value reference {vr}")))?;
        match var.kind {
            VarKind::Parameter { .. } => Ok(self.param_values[vr as usize]),
            VarKind::Input(k) => Ok(self.inputs[k]),
            VarKind::Output(k) => {
                if !self.stepping {
                    self.ensure_at_t0()?;
                }
                let r = self.running()?;
                Ok(self.iface.output_columns[k].value(&r.sim))
            }
        }
    }

    fn set_real(&mut self, vr: u32, value: f64) -> Result<(), RunnerError> {
        let var = self
            .iface
            .variable(vr)
            .ok_or_else(|| RunnerError::Refused(format!("unknown value reference {vr}")))?;
        if !value.is_finite() {
            return Err(RunnerError::Refused(format!(
                "`{}`: the value {value} is not finite",
                var.name
            )));
        }
        match &var.kind {
            VarKind::Output(_) => Err(RunnerError::Refused(format!(
                "`{}` is an output and cannot be set",
                var.name
            ))),
            VarKind::Input(k) => {
                self.inputs[*k] = value;
                Ok(())
            }
            VarKind::Parameter { name, tunable } => {
                if self.stepping && !tunable {
                    return Err(RunnerError::Refused(format!(
                        "parameter `{name}` is fixed: it can be set only before fmi2ExitInitializationMode \
                         (list it in [fmi] tunable to change it between steps)"
                    )));
                }
                let name = name.clone();
                let previous = self.host_params.insert(name.clone(), value);
                let old_value = self.param_values[vr as usize];
                self.param_values[vr as usize] = value;
                self.dirty = true;
                if self.stepping {
                    if let Err(e) = self.retune() {
                        match previous {
                            Some(p) => self.host_params.insert(name, p),
                            None => self.host_params.remove(&name),
                        };
                        self.param_values[vr as usize] = old_value;
                        self.dirty = false;
                        return Err(e);
                    }
                }
                Ok(())
            }
        }
    }

    fn do_step(&mut self, t: f64, h: f64) -> Result<(), RunnerError> {
        if self.strategy != Strategy::TimeStepping {
            return self.advance_to(t, h, false, false).map(|_| ());
        }
        let (target, target_tick, end) = self.check_step(t, h)?;
        self.apply_inputs()?;
        let r = self.running.as_mut().expect("running");
        while r
            .sim
            .next_event_tick()
            .is_some_and(|k| k <= target_tick.min(end))
        {
            let t = r.sim.time();
            match r.sim.step() {
                Ok(StepOutcome::Advanced { .. }) => {}
                Ok(StepOutcome::Finished) => break,
                Err(source) => return Err(RunnerError::Simulation { t, source }),
            }
        }
        self.t_comm = target;
        Ok(())
    }

    fn advance(
        &mut self,
        t: f64,
        h: f64,
        early_return: bool,
        defer: bool,
    ) -> Result<StepEnd, RunnerError> {
        self.advance_to(t, h, early_return, defer)
    }

    fn event_pending(&self) -> bool {
        self.pending()
    }

    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, RunnerError> {
        self.process_pending()
    }

    fn next_event_time(&self) -> Option<f64> {
        self.next_action_time()
    }

    fn located(&self) -> &[Located] {
        &self.located
    }

    fn save_state(&self) -> Result<Self::State, RunnerError> {
        let r = self.running()?;
        Ok(RunnerState {
            t_comm: self.t_comm,
            last_early: self.last_early,
            inputs: self.inputs.clone(),
            host_params: self.host_params.clone(),
            sim: r.sim.save_state().map_err(state_error)?,
        })
    }

    fn save_state_into(&self, into: &mut Self::State) -> Result<(), RunnerError> {
        let r = self.running()?;
        r.sim.save_state_into(&mut into.sim).map_err(state_error)?;
        into.t_comm = self.t_comm;
        into.last_early = self.last_early;
        into.inputs.clone_from(&self.inputs);
        into.host_params.clone_from(&self.host_params);
        Ok(())
    }

    fn restore_state(&mut self, state: &Self::State) -> Result<(), RunnerError> {
        if state.inputs.len() != self.inputs.len() {
            return Err(RunnerError::State(
                "the state has another number of inputs".into(),
            ));
        }
        match self.running.as_mut() {
            Some(r) if state.host_params == self.host_params && !self.dirty => {
                r.sim.restore_state(&state.sim).map_err(state_error)?;
            }
            _ => {
                // Other parameter values: the model of the state is rebuilt.
                let mut new = self.build(&state.host_params)?;
                new.sim.restore_state(&state.sim).map_err(state_error)?;
                new.started_with.clone_from(&state.inputs);
                self.param_values = new.built.parameters.values().copied().collect();
                self.host_params = state.host_params.clone();
                self.running = Some(new);
                self.dirty = false;
            }
        }
        self.inputs.clone_from(&state.inputs);
        self.t_comm = state.t_comm;
        self.last_early = state.last_early;
        self.stepping = true;
        Ok(())
    }

    fn serialize_state(&self, state: &Self::State) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"NSFM");
        out.extend_from_slice(&STATE_FORMAT.to_le_bytes());
        let put_str = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        put_str(&mut out, &self.guid);
        out.extend_from_slice(&state.t_comm.to_bits().to_le_bytes());
        // The last early return: NaN when there was none.
        let early = state.last_early.unwrap_or(f64::NAN);
        out.extend_from_slice(&early.to_bits().to_le_bytes());
        out.extend_from_slice(&(state.inputs.len() as u64).to_le_bytes());
        for x in &state.inputs {
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        out.extend_from_slice(&(state.host_params.len() as u64).to_le_bytes());
        for (name, x) in &state.host_params {
            put_str(&mut out, name);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        state.sim.write_bytes(&mut out);
        out
    }

    fn deserialize_state(&self, bytes: &[u8]) -> Result<Self::State, RunnerError> {
        let bad = |m: &str| RunnerError::State(format!("not a state of this FMU: {m}"));
        let mut c = Cursor { bytes, at: 0 };
        if c.take(4).ok_or_else(|| bad("truncated"))? != b"NSFM" {
            return Err(bad("no NSFM header"));
        }
        if c.take(4).ok_or_else(|| bad("truncated"))? != STATE_FORMAT.to_le_bytes() {
            return Err(bad("unknown format version"));
        }
        let guid = c.string(4096).ok_or_else(|| bad("truncated GUID"))?;
        if guid != self.guid {
            return Err(bad("it was saved by another FMU (other GUID)"));
        }
        let t_comm = c.f64().ok_or_else(|| bad("truncated"))?;
        let last_early = Some(c.f64().ok_or_else(|| bad("truncated"))?).filter(|t| !t.is_nan());
        let n = c.u64().ok_or_else(|| bad("truncated"))?;
        if n != self.inputs.len() as u64 {
            return Err(bad("another number of inputs"));
        }
        let inputs = (0..n)
            .map(|_| c.f64())
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| bad("truncated inputs"))?;
        let n = c.u64().ok_or_else(|| bad("truncated"))?;
        if n > self.iface.parameters as u64 {
            return Err(bad("too many parameters"));
        }
        let mut host_params = BTreeMap::new();
        for _ in 0..n {
            let name = c.string(4096).ok_or_else(|| bad("truncated parameter"))?;
            let x = c.f64().ok_or_else(|| bad("truncated parameter"))?;
            host_params.insert(name, x);
        }
        let at = c.at;
        let sim = ControlLoopState::from_bytes(&bytes[at..]).map_err(state_error)?;
        Ok(RunnerState {
            t_comm,
            last_early,
            inputs,
            host_params,
            sim,
        })
    }
}

/// Reads the header of a serialized runner state.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len())?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    fn string(&mut self, max: u64) -> Option<String> {
        let n = self.u64().filter(|&n| n <= max)?;
        String::from_utf8(self.take(n as usize)?.to_vec()).ok()
    }
}
