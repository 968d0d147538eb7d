//! The simulation behind an FMU instance, seen through a small trait
//! ([`Runner`]) so the FMI layer (`component`, `fmi2`) does not depend on
//! which simulation runs: [`ScenarioRunner`] runs a scenario's
//! time-stepping simulation; a control simulation will implement the same
//! trait.

use std::collections::BTreeMap;

use nonsmooth::io::scenario::{BuiltScenario, Quantity, Scenario};
use nonsmooth::simulation::{StateError, StepOutcome, TimeBase, TimeStepping, TimeSteppingState};
use thiserror::Error;

use crate::variables::{Interface, VarKind};

/// Why a runner call failed. The message is written to the host's log.
#[derive(Debug, Error)]
pub enum RunnerError {
    /// A call the runner refuses in its current phase or with these values
    /// (fmi2Error, the instance stays usable).
    #[error("{0}")]
    Refused(String),
    /// The step cannot be done because it goes past the stop time
    /// (fmi2Discard, nothing was computed).
    #[error("{0}")]
    PastStop(String),
    /// The scenario could not be built with the parameter values given.
    #[error("{0}")]
    Build(String),
    /// The simulation failed during a step (fmi2Error; restore a saved
    /// state or reset).
    #[error("{0}")]
    Simulation(String),
    /// A state that does not belong to this FMU or is damaged.
    #[error("{0}")]
    State(String),
}

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
    /// Builds the simulation with the current parameter values.
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

/// The simulation and its scenario.
struct Running {
    built: BuiltScenario,
    sim: TimeStepping,
}

/// Runs a scenario's time-stepping simulation for an FMU instance.
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
    experiment: Experiment,
    running: Option<Running>,
    /// Parameters changed since the last build.
    dirty: bool,
    stepping: bool,
    /// The communication time reached (as the host counts it).
    t_comm: f64,
}

/// A saved [`ScenarioRunner`] state.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerState {
    t_comm: f64,
    inputs: Vec<f64>,
    host_params: BTreeMap<String, f64>,
    sim: TimeSteppingState,
}

impl ScenarioRunner {
    /// A runner of `scenario` (overrides of the export already applied),
    /// built once with the default parameter values to check it and lay out
    /// its variables.
    pub fn new(scenario: Scenario, guid: &str) -> Result<ScenarioRunner, RunnerError> {
        let built = scenario
            .build()
            .map_err(|e| RunnerError::Build(e.to_string()))?;
        let iface = Interface::new(&built);
        let param_values = built.parameters.values().copied().collect();
        let inputs = built.fmi.input_starts();
        Ok(ScenarioRunner {
            scenario,
            guid: guid.to_string(),
            param_values,
            inputs,
            experiment: Experiment {
                start: None,
                stop: None,
            },
            running: None,
            dirty: true,
            stepping: false,
            t_comm: iface.default_experiment.0,
            iface,
            host_params: BTreeMap::new(),
        })
    }

    /// Statistics of the simulation (steps, solves), when built.
    pub fn statistics(&self) -> Option<nonsmooth::simulation::Statistics> {
        self.running.as_ref().map(|r| r.sim.statistics())
    }

    /// Builds the scenario with `params` on top of the export's overrides
    /// and sets up its simulation for the experiment.
    fn build(&self, params: &BTreeMap<String, f64>) -> Result<Running, RunnerError> {
        let mut scenario = Scenario::from_str(self.scenario.text(), self.scenario.path())
            .map_err(|e| RunnerError::Build(e.to_string()))?;
        for (name, value) in self.scenario.overrides() {
            scenario
                .set_parameter(name, value.clone())
                .map_err(|e| RunnerError::Build(e.to_string()))?;
        }
        for (name, &value) in params {
            scenario
                .set_parameter(name, value)
                .map_err(|e| RunnerError::Build(e.to_string()))?;
        }
        let mut built = scenario
            .build()
            .map_err(|e| RunnerError::Build(e.to_string()))?;
        let iface = Interface::new(&built);
        if !iface.same_layout(&self.iface) {
            return Err(RunnerError::Build(
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
        let sim = built
            .simulation()
            .map_err(|e| RunnerError::Build(e.to_string()))?;
        Ok(Running { built, sim })
    }

    fn running(&self) -> Result<&Running, RunnerError> {
        self.running
            .as_ref()
            .ok_or_else(|| RunnerError::Refused("the model is not initialized".into()))
    }

    /// Rebuilds with the host's current parameters and moves the running
    /// simulation's state into the new one (a tunable parameter changed).
    fn retune(&mut self) -> Result<(), RunnerError> {
        let old = self.running()?.sim.save_state();
        let mut new = self.build(&self.host_params)?;
        new.sim.restore_state(&old).map_err(|e| {
            RunnerError::Build(format!(
                "the new parameter values change the model's structure or time base: {e}"
            ))
        })?;
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
            .map_err(|e| RunnerError::Refused(e.to_string()))
    }

    /// The grid tick at or before time `t` (within rounding of a tick).
    fn grid_tick(sim: &TimeStepping, t: f64) -> Result<i64, RunnerError> {
        let (_, base): (i64, TimeBase) = sim.tick();
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
        let (step, t0) = sim.step_ticks();
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
        if self.running.is_some() && !self.dirty {
            return Ok(());
        }
        let mut r = self.build(&self.host_params)?;
        self.param_values = r.built.parameters.values().copied().collect();
        r.built
            .fmi
            .apply_inputs(&mut r.sim, &self.inputs)
            .map_err(|e| RunnerError::Refused(e.to_string()))?;
        self.t_comm = r.built.settings.t0;
        self.running = Some(r);
        self.dirty = false;
        Ok(())
    }

    fn start_stepping(&mut self) -> Result<(), RunnerError> {
        self.initialize()?;
        let r = self.running.as_mut().expect("built");
        // The instant t0 carries only the first output event.
        let t0_tick = r.sim.step_ticks().1;
        while r.sim.next_event_tick().is_some_and(|t| t <= t0_tick) {
            if let Err(e) = r.sim.step() {
                return Err(RunnerError::Simulation(e.to_string()));
            }
        }
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
                if self.running.is_none() || (self.dirty && !self.stepping) {
                    self.initialize()?;
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
        let end = r.sim.end_tick();
        let target_tick = Self::grid_tick(&r.sim, target)?;
        if let Some(stop) = self.experiment.stop {
            if target > stop && !same_time(target, stop) {
                return Err(RunnerError::PastStop(format!(
                    "the step to t = {target} goes past the stop time {stop}"
                )));
            }
        } else if target_tick > end {
            return Err(RunnerError::PastStop(format!(
                "the step to t = {target} goes past the last time this FMU can reach ({})",
                r.sim.settings().t_end
            )));
        }
        self.apply_inputs()?;
        let r = self.running.as_mut().expect("running");
        while r
            .sim
            .next_event_tick()
            .is_some_and(|k| k <= target_tick.min(end))
        {
            match r.sim.step() {
                Ok(StepOutcome::Advanced { .. }) => {}
                Ok(StepOutcome::Finished) => break,
                Err(e) => {
                    return Err(RunnerError::Simulation(format!(
                        "simulation failed in the step from t = {}: {e}",
                        r.sim.time()
                    )))
                }
            }
        }
        self.t_comm = target;
        Ok(())
    }

    fn save_state(&self) -> Result<RunnerState, RunnerError> {
        let r = self.running()?;
        Ok(RunnerState {
            t_comm: self.t_comm,
            inputs: self.inputs.clone(),
            host_params: self.host_params.clone(),
            sim: r.sim.save_state(),
        })
    }

    fn save_state_into(&self, into: &mut RunnerState) -> Result<(), RunnerError> {
        let r = self.running()?;
        into.t_comm = self.t_comm;
        into.inputs.clone_from(&self.inputs);
        into.host_params.clone_from(&self.host_params);
        r.sim.save_state_into(&mut into.sim);
        Ok(())
    }

    fn restore_state(&mut self, state: &RunnerState) -> Result<(), RunnerError> {
        if state.inputs.len() != self.inputs.len() {
            return Err(RunnerError::State(
                "the state has another number of inputs".into(),
            ));
        }
        match self.running.as_mut() {
            Some(r) if state.host_params == self.host_params && !self.dirty => {
                r.sim
                    .restore_state(&state.sim)
                    .map_err(|e| RunnerError::State(e.to_string()))?;
            }
            _ => {
                // Other parameter values: the model of the state is rebuilt.
                let mut new = self.build(&state.host_params)?;
                new.sim
                    .restore_state(&state.sim)
                    .map_err(|e| RunnerError::State(e.to_string()))?;
                self.param_values = new.built.parameters.values().copied().collect();
                self.host_params = state.host_params.clone();
                self.running = Some(new);
                self.dirty = false;
            }
        }
        self.inputs.clone_from(&state.inputs);
        self.t_comm = state.t_comm;
        self.stepping = true;
        Ok(())
    }

    fn serialize_state(&self, state: &RunnerState) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"NSFM");
        out.extend_from_slice(&1u32.to_le_bytes());
        let put_str = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        put_str(&mut out, &self.guid);
        out.extend_from_slice(&state.t_comm.to_bits().to_le_bytes());
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

    fn deserialize_state(&self, bytes: &[u8]) -> Result<RunnerState, RunnerError> {
        let bad = |m: &str| RunnerError::State(format!("not a state of this FMU: {m}"));
        let mut c = Cursor { bytes, at: 0 };
        if c.take(4).ok_or_else(|| bad("truncated"))? != b"NSFM" {
            return Err(bad("no NSFM header"));
        }
        if c.take(4).ok_or_else(|| bad("truncated"))? != 1u32.to_le_bytes() {
            return Err(bad("unknown format version"));
        }
        let guid = c.string(4096).ok_or_else(|| bad("truncated GUID"))?;
        if guid != self.guid {
            return Err(bad("it was saved by another FMU (other GUID)"));
        }
        let t_comm = c.f64().ok_or_else(|| bad("truncated"))?;
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
        let sim = TimeSteppingState::from_bytes(&bytes[at..])
            .map_err(|e: StateError| RunnerError::State(e.to_string()))?;
        Ok(RunnerState {
            t_comm,
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
