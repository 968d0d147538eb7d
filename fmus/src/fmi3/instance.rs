//! One FMI 3.0 co-simulation instance: the state machine, argument checks
//! and logging over a [`Runner`], in safe Rust (`abi.rs` turns the C calls
//! into calls of these methods and catches panics).
//!
//! | phase | accepts |
//! |---|---|
//! | instantiated | EnterInitializationMode, Get/SetFloat64 |
//! | initialization | ExitInitializationMode, Get/SetFloat64, Get/SetFMUState |
//! | event mode (event mode used) | UpdateDiscreteStates, EnterStepMode, Get/SetFloat64, Get/SetFMUState, Terminate |
//! | step mode | DoStep, EnterEventMode (event mode used), Get/SetFloat64, Get/SetFMUState, Terminate |
//! | step discarded | GetFloat64, Get/SetFMUState, Terminate |
//! | terminated | GetFloat64, Get/SetFMUState |
//! | error | GetFloat64, SetFMUState (back to step mode), Reset |
//!
//! `fmi3ExitInitializationMode` enters event mode when the host asked for
//! it (`eventModeUsed`), else step mode. Event-mode calls on an instance
//! whose host did not ask for event mode are errors.
//!
//! **Two phases.** With event mode, fmi3DoStep stops at the left limit of
//! the event where it ends (early return, or an event at t + h) and leaves
//! it pending; fmi3UpdateDiscreteStates processes it (impact law, new
//! mode, sensors, observers, controllers and actuators). While an event is
//! pending, fmi3DoStep and fmi3EnterStepMode are refused (`fmi3Error`, the
//! instance unchanged); fmi3UpdateDiscreteStates with nothing pending is a
//! no-op that reports no change. fmi3SetFMUState keeps event mode when
//! called in it (a state saved at a left limit is updated there again),
//! and returns to step mode from the other phases.

use crate::component::{LogFn, MakeRunner, Status};
use crate::handles::StateHandles;
use crate::instance_log::{Consequence, InstanceLog};
use crate::runner::{Experiment, Runner, RunnerError, StepEnd};

/// Where the instance is in the FMI 3.0 co-simulation state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// After instantiation or fmi3Reset.
    Instantiated,
    /// Between fmi3EnterInitializationMode and fmi3ExitInitializationMode.
    Initialization,
    /// Event mode (only for hosts that use it).
    EventMode,
    /// Ready for fmi3DoStep.
    StepMode,
    /// A step was discarded (past the stop time).
    StepDiscarded,
    /// After fmi3Terminate.
    Terminated,
    /// After an error: only restoring a state, resetting or freeing help.
    Error,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Instantiated => "instantiated",
            Phase::Initialization => "initialization mode",
            Phase::EventMode => "event mode",
            Phase::StepMode => "step mode",
            Phase::StepDiscarded => "step discarded",
            Phase::Terminated => "terminated",
            Phase::Error => "error",
        }
    }
}

/// What fmi3DoStep reports besides its status.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DoStepOut {
    /// eventHandlingNeeded.
    pub event_handling_needed: bool,
    /// terminateSimulation.
    pub terminate: bool,
    /// earlyReturn.
    pub early_return: bool,
    /// lastSuccessfulTime.
    pub last_successful_time: f64,
}

/// What fmi3UpdateDiscreteStates reports besides its status.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiscreteStatesOut {
    /// discreteStatesNeedUpdate.
    pub need_update: bool,
    /// terminateSimulation.
    pub terminate: bool,
    /// nominalsOfContinuousStatesChanged.
    pub nominals_changed: bool,
    /// valuesOfContinuousStatesChanged.
    pub values_changed: bool,
    /// nextEventTime, when defined.
    pub next_event_time: Option<f64>,
}

/// One FMI 3.0 instance.
pub struct Instance3<R: Runner> {
    log: InstanceLog,
    phase: Phase,
    runner: R,
    make_runner: MakeRunner<R>,
    event_mode_used: bool,
    early_return_allowed: bool,
    /// The value reference of `time`.
    time_vr: u32,
    /// A step was refused because it goes past the stop time.
    past_stop: bool,
    /// FMU states handed out and not freed (their addresses).
    states: StateHandles,
}

impl<R: Runner> Instance3<R> {
    /// A new instance (the status categories start enabled; `logging_on`
    /// enables the others).
    pub fn new(
        make_runner: MakeRunner<R>,
        log_fn: LogFn,
        logging_on: bool,
        event_mode_used: bool,
        early_return_allowed: bool,
    ) -> Result<Self, RunnerError> {
        let runner = make_runner()?;
        let time_vr = runner.interface().variables.len() as u32;
        Ok(Instance3 {
            log: InstanceLog::new(log_fn, logging_on),
            phase: Phase::Instantiated,
            runner,
            make_runner,
            event_mode_used,
            early_return_allowed,
            time_vr,
            past_stop: false,
            states: StateHandles::default(),
        })
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The runner.
    pub fn runner(&self) -> &R {
        &self.runner
    }

    /// Logs an error of `func` and returns `Error`.
    pub fn error(&self, func: &str, message: &str) -> Status {
        self.log.error(func, message)
    }

    /// Logs an FMI call (category logCalls).
    pub fn call(&self, text: impl FnOnce() -> String) {
        self.log.call(text)
    }

    fn event(&self, text: impl FnOnce() -> String) {
        self.log.event(text)
    }

    /// Moves to the error phase after a panic or a failure, and logs it.
    pub fn fail(&mut self, func: &str, message: &str) -> Status {
        self.phase = Phase::Error;
        self.error(func, message)
    }

    fn refuse_phase(&self, func: &str, allowed: &str) -> Status {
        self.log.refuse_phase(func, self.phase.name(), allowed)
    }

    fn no_event_mode(&self, func: &str) -> Status {
        self.error(
            func,
            "the host did not ask for event mode (eventModeUsed = false at fmi3InstantiateCoSimulation)",
        )
    }

    /// Maps a runner error to a status: a step past the stop time is
    /// discarded, a failure of the simulation moves to the error phase.
    fn runner_error(&mut self, func: &str, e: RunnerError) -> Status {
        let (status, consequence) = self.log.runner_error(func, e);
        match consequence {
            Consequence::Refused => {}
            Consequence::PastStop => {
                self.past_stop = true;
                self.phase = Phase::StepDiscarded;
            }
            Consequence::Failed => self.phase = Phase::Error,
        }
        status
    }

    /// fmi3SetDebugLogging: `categories` empty applies `on` to all.
    pub fn set_debug_logging(&mut self, on: bool, categories: &[&str]) -> Status {
        self.log
            .set_debug_logging("fmi3SetDebugLogging", on, categories)
    }

    /// fmi3EnterInitializationMode: the experiment, then initialization.
    pub fn enter_initialization_mode(&mut self, start: f64, stop: Option<f64>) -> Status {
        let f = "fmi3EnterInitializationMode";
        self.call(|| format!("{f}(startTime = {start}, stopTime = {stop:?})"));
        if self.phase != Phase::Instantiated {
            return self.refuse_phase(f, "after instantiation or fmi3Reset");
        }
        if let Err(e) = self.runner.setup_experiment(Experiment {
            start: Some(start),
            stop,
        }) {
            return self.runner_error(f, e);
        }
        match self.runner.initialize() {
            Ok(()) => {
                self.phase = Phase::Initialization;
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi3ExitInitializationMode: to event mode when the host uses it,
    /// else to step mode.
    pub fn exit_initialization_mode(&mut self) -> Status {
        let f = "fmi3ExitInitializationMode";
        self.call(|| f.to_string());
        if self.phase != Phase::Initialization {
            return self.refuse_phase(f, "initialization mode");
        }
        match self.runner.start_stepping() {
            Ok(()) => {
                self.phase = if self.event_mode_used {
                    Phase::EventMode
                } else {
                    Phase::StepMode
                };
                self.event(|| format!("initialized at t = {}", self.runner.time()));
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi3EnterEventMode (step mode → event mode).
    pub fn enter_event_mode(&mut self) -> Status {
        let f = "fmi3EnterEventMode";
        self.call(|| f.to_string());
        if !self.event_mode_used {
            return self.no_event_mode(f);
        }
        if self.phase != Phase::StepMode {
            return self.refuse_phase(f, "step mode");
        }
        self.phase = Phase::EventMode;
        Status::Ok
    }

    /// fmi3UpdateDiscreteStates: processes the event the last step stopped
    /// at (impact law, transitions, sensor captures, controller
    /// computations and applications); reports whether the state jumped
    /// (`valuesOfContinuousStatesChanged`) and the next scheduled event
    /// (sampling instant). The processing is complete in one call
    /// (`discreteStatesNeedUpdate` false); a second call finds nothing
    /// pending and changes nothing.
    pub fn update_discrete_states(&mut self) -> Result<DiscreteStatesOut, Status> {
        let f = "fmi3UpdateDiscreteStates";
        self.call(|| f.to_string());
        if !self.event_mode_used {
            return Err(self.no_event_mode(f));
        }
        if self.phase != Phase::EventMode {
            return Err(self.refuse_phase(f, "event mode"));
        }
        let update = self
            .runner
            .update_discrete_states()
            .map_err(|e| self.runner_error(f, e))?;
        let out = DiscreteStatesOut {
            need_update: false,
            terminate: false,
            nominals_changed: false,
            values_changed: update.jumped,
            next_event_time: self.runner.next_event_time(),
        };
        self.event(|| {
            format!(
                "{} at t = {}; next event time {:?}",
                if update.processed {
                    "event handled"
                } else {
                    "no event pending"
                },
                self.runner.time(),
                out.next_event_time
            )
        });
        Ok(out)
    }

    /// fmi3EnterStepMode (event mode → step mode).
    pub fn enter_step_mode(&mut self) -> Status {
        let f = "fmi3EnterStepMode";
        self.call(|| f.to_string());
        if !self.event_mode_used {
            return self.no_event_mode(f);
        }
        if self.phase != Phase::EventMode {
            return self.refuse_phase(f, "event mode");
        }
        if self.runner.event_pending() {
            return self.error(
                f,
                &format!(
                    "the event at t = {} is not handled yet: call fmi3UpdateDiscreteStates first",
                    self.runner.time()
                ),
            );
        }
        self.phase = Phase::StepMode;
        Status::Ok
    }

    /// fmi3DoStep.
    pub fn do_step(&mut self, t: f64, h: f64) -> (Status, DoStepOut) {
        let f = "fmi3DoStep";
        self.call(|| format!("{f}(currentCommunicationPoint = {t}, communicationStepSize = {h})"));
        let mut out = DoStepOut {
            last_successful_time: self.runner.time(),
            ..DoStepOut::default()
        };
        if self.phase != Phase::StepMode {
            return (self.refuse_phase(f, "step mode"), out);
        }
        let defer = self.event_mode_used;
        match self.runner.advance(t, h, self.early_return_allowed, defer) {
            Ok(StepEnd {
                time, early, event, ..
            }) => {
                out.early_return = early;
                out.last_successful_time = time;
                out.event_handling_needed = self.event_mode_used && event;
                self.event(|| {
                    format!(
                        "step to t = {time}{}",
                        if early {
                            " (early return at an event)"
                        } else {
                            ""
                        }
                    )
                });
                (Status::Ok, out)
            }
            Err(e) => {
                let s = self.runner_error(f, e);
                out.terminate = self.past_stop;
                out.last_successful_time = self.runner.time();
                (s, out)
            }
        }
    }

    /// fmi3Terminate.
    pub fn terminate(&mut self) -> Status {
        let f = "fmi3Terminate";
        self.call(|| f.to_string());
        match self.phase {
            Phase::StepMode | Phase::EventMode | Phase::StepDiscarded => {
                self.phase = Phase::Terminated;
                Status::Ok
            }
            _ => self.refuse_phase(f, "step mode, event mode, step discarded"),
        }
    }

    /// fmi3Reset: back to the instantiated state with the default values.
    pub fn reset(&mut self) -> Status {
        let f = "fmi3Reset";
        self.call(|| f.to_string());
        match (self.make_runner)() {
            Ok(r) => {
                self.runner = r;
                self.phase = Phase::Instantiated;
                self.past_stop = false;
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi3GetFloat64 (the variables and `time`).
    pub fn get_float64(&mut self, vrs: &[u32], out: &mut [f64]) -> Status {
        let f = "fmi3GetFloat64";
        self.call(|| format!("{f}(vr = {vrs:?})"));
        if vrs.len() != out.len() {
            return self.error(
                f,
                &format!(
                    "nValues = {} is not the number of scalar values of the {} variables (all are scalars)",
                    out.len(),
                    vrs.len()
                ),
            );
        }
        for (vr, o) in vrs.iter().zip(out.iter_mut()) {
            if *vr == self.time_vr {
                *o = self.runner.time();
                continue;
            }
            match self.runner.get_real(*vr) {
                Ok(x) => *o = x,
                Err(e) => return self.runner_error(f, e),
            }
        }
        Status::Ok
    }

    /// fmi3SetFloat64: value references checked before any value is set.
    pub fn set_float64(&mut self, vrs: &[u32], values: &[f64]) -> Status {
        let f = "fmi3SetFloat64";
        self.call(|| format!("{f}(vr = {vrs:?}, value = {values:?})"));
        match self.phase {
            Phase::Instantiated | Phase::Initialization | Phase::StepMode | Phase::EventMode => {}
            _ => {
                return self.refuse_phase(
                    f,
                    "instantiated, initialization mode, event mode, step mode",
                )
            }
        }
        if vrs.len() != values.len() {
            return self.error(
                f,
                &format!(
                    "nValues = {} is not the number of scalar values of the {} variables",
                    values.len(),
                    vrs.len()
                ),
            );
        }
        for vr in vrs {
            if *vr == self.time_vr {
                return self.error(f, "`time` is the independent variable and cannot be set");
            }
            if self.runner.interface().variable(*vr).is_none() {
                return self.error(f, &format!("unknown value reference {vr}"));
            }
        }
        for (vr, x) in vrs.iter().zip(values) {
            if let Err(e) = self.runner.set_real(*vr, *x) {
                return self.runner_error(f, e);
            }
        }
        Status::Ok
    }

    /// Getters and setters of other types: this FMU has Float64 variables
    /// only, so any value reference is unknown (none is fine).
    pub fn no_such_type(&self, func: &str, vrs: &[u32]) -> Status {
        self.call(|| format!("{func}(vr = {vrs:?})"));
        match vrs.first() {
            None => Status::Ok,
            Some(vr) => self.error(
                func,
                &format!("unknown value reference {vr} for this type: this FMU has Float64 variables only"),
            ),
        }
    }

    /// fmi3GetFMUState: a new state, or `into` overwritten.
    pub fn get_state(&mut self, into: Option<&mut R::State>) -> Result<Option<R::State>, Status> {
        let f = "fmi3GetFMUState";
        self.call(|| f.to_string());
        if matches!(self.phase, Phase::Instantiated | Phase::Error) {
            return Err(self.refuse_phase(
                f,
                "initialization mode, event mode, step mode, step discarded, terminated",
            ));
        }
        let result = match into {
            Some(slot) => self.runner.save_state_into(slot).map(|()| None),
            None => self.runner.save_state().map(Some),
        };
        let s = result.map_err(|e| self.runner_error(f, e))?;
        self.event(|| format!("state saved at t = {}", self.runner.time()));
        Ok(s)
    }

    /// fmi3SetFMUState: event mode stays event mode (a state saved at the
    /// left limit of an event is updated there); other phases go back to
    /// step mode.
    pub fn set_state(&mut self, state: &R::State) -> Status {
        let f = "fmi3SetFMUState";
        self.call(|| f.to_string());
        if self.phase == Phase::Instantiated {
            return self.refuse_phase(f, "after fmi3EnterInitializationMode");
        }
        match self.runner.restore_state(state) {
            Ok(()) => {
                if self.phase != Phase::EventMode {
                    self.phase = Phase::StepMode;
                }
                self.past_stop = false;
                self.event(|| format!("state restored at t = {}", self.runner.time()));
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// The state handles handed to the host.
    pub fn handles(&self) -> &StateHandles {
        &self.states
    }

    /// The state handles, to register or forget one.
    pub fn handles_mut(&mut self) -> &mut StateHandles {
        &mut self.states
    }
}
