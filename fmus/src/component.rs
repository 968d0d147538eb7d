//! One FMU instance: the FMI 2.0 co-simulation state machine, argument
//! checks and logging over a [`Runner`], in safe Rust. `fmi2` turns the C
//! calls into calls of these methods (and catches panics); everything the
//! host can get wrong is answered here with a status and a log message.
//!
//! Phases and the calls they accept (others return `Error`, log why, and
//! leave the instance as it was):
//!
//! | phase | accepts |
//! |---|---|
//! | instantiated | SetupExperiment, EnterInitializationMode, Set/GetReal |
//! | initialization | ExitInitializationMode, Set/GetReal, Get/SetFMUstate |
//! | step complete | DoStep, Set/GetReal (inputs, tunable parameters), Get/SetFMUstate, Terminate, statuses |
//! | step failed | GetReal, Get/SetFMUstate, Terminate, statuses |
//! | terminated | GetReal, Get/SetFMUstate |
//! | error | GetReal, SetFMUstate (back to step complete), Reset |
//!
//! Reset, SetDebugLogging, FreeInstance, the FMU-state handling calls and
//! the serialization calls are accepted in every phase where they make
//! sense. A failed simulation step moves to *error*; a step past the stop
//! time is *discarded* (nothing computed, the `fmi2Terminated` status
//! becomes true).

use crate::handles::StateHandles;
use crate::instance_log::{Consequence, InstanceLog};
use crate::runner::{Experiment, Runner, RunnerError};

/// fmi2Status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    /// fmi2OK.
    Ok = 0,
    /// fmi2Warning.
    Warning = 1,
    /// fmi2Discard.
    Discard = 2,
    /// fmi2Error.
    Error = 3,
    /// fmi2Fatal.
    Fatal = 4,
    /// fmi2Pending.
    Pending = 5,
}

/// Where the instance is in the FMI 2.0 co-simulation state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// After fmi2Instantiate or fmi2Reset.
    Instantiated,
    /// Between fmi2EnterInitializationMode and fmi2ExitInitializationMode.
    Initialization,
    /// Ready for fmi2DoStep.
    StepComplete,
    /// A step was discarded.
    StepFailed,
    /// After fmi2Terminate.
    Terminated,
    /// After an error: only restoring a state, resetting or freeing help.
    Error,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Instantiated => "instantiated",
            Phase::Initialization => "initialization mode",
            Phase::StepComplete => "step complete",
            Phase::StepFailed => "step failed",
            Phase::Terminated => "terminated",
            Phase::Error => "error",
        }
    }
}

/// Receives log messages: (status, category, message).
pub type LogFn = Box<dyn Fn(Status, &str, &str) + Send>;

/// Builds a fresh runner (at instantiation and on reset).
pub type MakeRunner<R> = Box<dyn Fn() -> Result<R, RunnerError> + Send>;

/// One FMU instance.
pub struct Component<R: Runner> {
    log: InstanceLog,
    phase: Phase,
    runner: R,
    make_runner: MakeRunner<R>,
    /// A step was refused because it goes past the stop time.
    past_stop: bool,
    /// FMU states handed out and not freed (their addresses).
    states: StateHandles,
}

impl<R: Runner> Component<R> {
    /// A new instance. The status categories (logStatusError,
    /// logStatusWarning, logStatusDiscard) start enabled, so every non-OK
    /// status comes with its message; `logging_on` enables the others.
    pub fn new(
        make_runner: MakeRunner<R>,
        log_fn: LogFn,
        logging_on: bool,
    ) -> Result<Self, RunnerError> {
        let runner = make_runner()?;
        Ok(Component {
            log: InstanceLog::new(log_fn, logging_on),
            phase: Phase::Instantiated,
            runner,
            make_runner,
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

    /// Maps a runner error to a status: a step past the stop time fails
    /// the step, a failure of the simulation moves to the error phase.
    fn runner_error(&mut self, func: &str, e: RunnerError) -> Status {
        let (status, consequence) = self.log.runner_error(func, e);
        match consequence {
            Consequence::Refused => {}
            Consequence::PastStop => {
                self.past_stop = true;
                self.phase = Phase::StepFailed;
            }
            Consequence::Failed => self.phase = Phase::Error,
        }
        status
    }

    /// fmi2SetDebugLogging: `categories` empty applies `on` to all.
    pub fn set_debug_logging(&mut self, on: bool, categories: &[&str]) -> Status {
        self.log
            .set_debug_logging("fmi2SetDebugLogging", on, categories)
    }

    /// fmi2SetupExperiment.
    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> Status {
        let f = "fmi2SetupExperiment";
        self.call(|| format!("{f}(startTime = {start}, stopTime = {stop:?})"));
        if self.phase != Phase::Instantiated {
            return self.refuse_phase(f, "after fmi2Instantiate or fmi2Reset");
        }
        match self.runner.setup_experiment(Experiment {
            start: Some(start),
            stop,
        }) {
            Ok(()) => Status::Ok,
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi2EnterInitializationMode.
    pub fn enter_initialization_mode(&mut self) -> Status {
        let f = "fmi2EnterInitializationMode";
        self.call(|| f.to_string());
        if self.phase != Phase::Instantiated {
            return self.refuse_phase(f, "after fmi2Instantiate or fmi2Reset");
        }
        match self.runner.initialize() {
            Ok(()) => {
                self.phase = Phase::Initialization;
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi2ExitInitializationMode.
    pub fn exit_initialization_mode(&mut self) -> Status {
        let f = "fmi2ExitInitializationMode";
        self.call(|| f.to_string());
        if self.phase != Phase::Initialization {
            return self.refuse_phase(f, "after fmi2EnterInitializationMode");
        }
        match self.runner.start_stepping() {
            Ok(()) => {
                self.phase = Phase::StepComplete;
                self.event(|| format!("initialized at t = {}", self.runner.time()));
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi2Terminate.
    pub fn terminate(&mut self) -> Status {
        let f = "fmi2Terminate";
        self.call(|| f.to_string());
        match self.phase {
            Phase::StepComplete | Phase::StepFailed => {
                self.phase = Phase::Terminated;
                Status::Ok
            }
            _ => self.refuse_phase(f, "step complete, step failed"),
        }
    }

    /// fmi2Reset: back to the instantiated state with the default parameter
    /// values. Saved FMU states stay valid for this instance.
    pub fn reset(&mut self) -> Status {
        let f = "fmi2Reset";
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

    /// fmi2GetReal.
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Status {
        let f = "fmi2GetReal";
        self.call(|| format!("{f}(vr = {vrs:?})"));
        for (vr, o) in vrs.iter().zip(out.iter_mut()) {
            match self.runner.get_real(*vr) {
                Ok(x) => *o = x,
                Err(e) => return self.runner_error(f, e),
            }
        }
        Status::Ok
    }

    /// fmi2SetReal: the value references are checked before any value is
    /// set; values are then set in order, up to the first refused one.
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Status {
        let f = "fmi2SetReal";
        self.call(|| format!("{f}(vr = {vrs:?}, value = {values:?})"));
        match self.phase {
            Phase::Instantiated | Phase::Initialization | Phase::StepComplete => {}
            _ => return self.refuse_phase(f, "instantiated, initialization mode, step complete"),
        }
        for vr in vrs {
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

    /// fmi2GetInteger/Boolean/String and the setters: this FMU has only
    /// Real variables, so any value reference is unknown.
    pub fn no_such_type(&self, func: &str, vrs: &[u32]) -> Status {
        self.call(|| format!("{func}(vr = {vrs:?})"));
        match vrs.first() {
            None => Status::Ok,
            Some(vr) => self.error(
                func,
                &format!("unknown value reference {vr}: this FMU has Real variables only"),
            ),
        }
    }

    /// fmi2DoStep.
    pub fn do_step(&mut self, t: f64, h: f64) -> Status {
        let f = "fmi2DoStep";
        self.call(|| format!("{f}(currentCommunicationPoint = {t}, communicationStepSize = {h})"));
        if self.phase != Phase::StepComplete {
            return self.refuse_phase(f, "step complete (after fmi2ExitInitializationMode)");
        }
        match self.runner.do_step(t, h) {
            Ok(()) => {
                self.event(|| format!("step to t = {}", self.runner.time()));
                Status::Ok
            }
            Err(e) => self.runner_error(f, e),
        }
    }

    /// fmi2CancelStep: steps are never asynchronous.
    pub fn cancel_step(&mut self) -> Status {
        self.error(
            "fmi2CancelStep",
            "this FMU never runs fmi2DoStep asynchronously; there is nothing to cancel",
        )
    }

    /// fmi2GetRealStatus(fmi2LastSuccessfulTime).
    pub fn last_successful_time(&self) -> f64 {
        self.runner.time()
    }

    /// fmi2GetBooleanStatus(fmi2Terminated): a step past the stop time was
    /// refused.
    pub fn terminated(&self) -> bool {
        self.past_stop
    }

    /// Checks that a status query is allowed.
    pub fn status_query(&self, func: &str) -> Status {
        match self.phase {
            Phase::StepComplete | Phase::StepFailed | Phase::Terminated => Status::Ok,
            _ => self.refuse_phase(func, "step complete, step failed, terminated"),
        }
    }

    /// fmi2GetFMUstate: a new state, or `into` overwritten.
    pub fn get_state(&mut self, into: Option<&mut R::State>) -> Result<Option<R::State>, Status> {
        let f = "fmi2GetFMUstate";
        self.call(|| f.to_string());
        match self.phase {
            Phase::Instantiated | Phase::Error => {
                return Err(self.refuse_phase(
                    f,
                    "initialization mode, step complete, step failed, terminated",
                ))
            }
            _ => {}
        }
        let result = match into {
            Some(slot) => self.runner.save_state_into(slot).map(|()| None),
            None => self.runner.save_state().map(Some),
        };
        let s = result.map_err(|e| self.runner_error(f, e))?;
        self.event(|| format!("state saved at t = {}", self.runner.time()));
        Ok(s)
    }

    /// fmi2SetFMUstate.
    pub fn set_state(&mut self, state: &R::State) -> Status {
        let f = "fmi2SetFMUstate";
        self.call(|| f.to_string());
        if self.phase == Phase::Instantiated {
            return self.refuse_phase(f, "after fmi2EnterInitializationMode");
        }
        match self.runner.restore_state(state) {
            Ok(()) => {
                self.phase = Phase::StepComplete;
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
