//! One FMU instance, FMI 2.0 and 3.0 alike: the co-simulation state
//! machine, argument checks, variable values, FMU states and logging over a
//! [`Runner`], in safe Rust. The C layers (`crate::fmi2`, `crate::fmi3`)
//! turn each C call into one call of these methods (and catch panics);
//! everything a host can get wrong is answered here with a status and a log
//! message. What the standards name differently is in `names`.
//!
//! Phases and the calls they accept (others return `Error`, log why, and
//! leave the instance as it was):
//!
//! | phase (FMI 2.0 / 3.0 name) | accepts |
//! |---|---|
//! | instantiated | SetupExperiment (2.0), EnterInitializationMode, get/set values |
//! | initialization mode | ExitInitializationMode, get/set values, get/set FMU state |
//! | event mode (3.0, when the host uses it) | UpdateDiscreteStates, EnterStepMode, get/set values, get/set FMU state, Terminate |
//! | step complete / step mode | DoStep, EnterEventMode (3.0, event mode used), get/set values (inputs, tunable parameters), get/set FMU state, Terminate, statuses (2.0) |
//! | step failed / step discarded | get values, get/set FMU state, Terminate, statuses (2.0) |
//! | terminated | get values, get/set FMU state |
//! | error | get values, SetFMUState (back to stepping), Reset |
//!
//! A failed simulation step moves to *error*; a step past the stop time is
//! *discarded* (nothing computed; FMI 2.0's `fmi2Terminated` status and FMI
//! 3.0's `terminateSimulation` become true).
//!
//! **Events (FMI 3.0).** `fmi3ExitInitializationMode` enters event mode when
//! the host asked for it (`eventModeUsed`), else step mode; event-mode calls
//! of a host that did not ask for it are errors. With event mode, fmi3DoStep
//! stops at the left limit of the event where it ends (early return, or an
//! event at t + h) and leaves it pending; fmi3UpdateDiscreteStates processes
//! it. While an event is pending, fmi3DoStep and fmi3EnterStepMode are
//! refused; fmi3UpdateDiscreteStates with nothing pending reports no change.
//! Restoring a state keeps event mode when called in it and returns to step
//! mode from the other phases.
//!
//! **Transitions inside a step.** Every nonsmooth transition an
//! event-driven plant locates and processes during a step or an event update
//! is logged in `logEvents` as ``impact of `floor` at t = 0.4515…`` (the
//! time in full precision): FMI 2.0 hosts, whose doStep cannot return at an
//! event, see when the impacts happened.

mod names;
mod states;

pub use names::{Call, Standard};
pub use states::StateHandles;

use crate::instance_log::{Consequence, InstanceLog};
use crate::runner::{Experiment, Runner, RunnerError, StepEnd};

/// fmi2Status / fmi3Status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    /// OK.
    Ok = 0,
    /// Warning.
    Warning = 1,
    /// Discard.
    Discard = 2,
    /// Error.
    Error = 3,
    /// Fatal.
    Fatal = 4,
    /// Pending (FMI 2.0).
    Pending = 5,
}

/// Where an instance is in the co-simulation state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// After instantiation or Reset.
    Instantiated,
    /// Between EnterInitializationMode and ExitInitializationMode.
    Initialization,
    /// Event mode (FMI 3.0 hosts that use it).
    EventMode,
    /// Ready for DoStep (FMI 2.0: step complete).
    StepMode,
    /// A step was discarded (FMI 2.0: step failed).
    StepDiscarded,
    /// After Terminate.
    Terminated,
    /// After an error: only restoring a state, resetting or freeing help.
    Error,
}

/// The phases a state can be restored in; all but the last (error) are
/// those a state can be saved in.
const RESTORE: [Phase; 6] = [
    Phase::Initialization,
    Phase::EventMode,
    Phase::StepMode,
    Phase::StepDiscarded,
    Phase::Terminated,
    Phase::Error,
];

/// Receives log messages: (status, category, message).
pub type LogFn = Box<dyn Fn(Status, &str, &str) + Send>;

/// Builds a fresh runner (at instantiation and on reset).
pub type MakeRunner<R> = Box<dyn Fn() -> Result<R, RunnerError> + Send>;

/// What a DoStep reports besides its status (FMI 3.0's output arguments;
/// FMI 2.0 reads the last successful time and the terminated flag as
/// statuses).
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

/// One FMU instance.
pub struct Instance<R: Runner> {
    standard: Standard,
    log: InstanceLog,
    phase: Phase,
    runner: R,
    make_runner: MakeRunner<R>,
    /// FMI 3.0: the host uses event mode.
    event_mode_used: bool,
    /// FMI 3.0: the host lets DoStep return early.
    early_return_allowed: bool,
    /// FMI 3.0: the value reference of `time`.
    time_vr: Option<u32>,
    /// A step was refused because it goes past the stop time.
    past_stop: bool,
    /// The FMU states handed to the host and not freed.
    states: StateHandles<R::State>,
}

impl<R: Runner> Instance<R> {
    fn new(
        standard: Standard,
        make_runner: MakeRunner<R>,
        log_fn: LogFn,
        logging_on: bool,
    ) -> Result<Self, RunnerError> {
        let runner = make_runner()?;
        let time_vr = (standard == Standard::Fmi3).then(|| runner.interface().time_reference());
        Ok(Instance {
            standard,
            log: InstanceLog::new(log_fn, logging_on),
            phase: Phase::Instantiated,
            runner,
            make_runner,
            event_mode_used: false,
            early_return_allowed: false,
            time_vr,
            past_stop: false,
            states: StateHandles::default(),
        })
    }

    /// An FMI 2.0 instance. The status categories start enabled, so every
    /// non-OK status comes with its message; `logging_on` enables the
    /// others.
    pub fn fmi2(
        make_runner: MakeRunner<R>,
        log_fn: LogFn,
        logging_on: bool,
    ) -> Result<Self, RunnerError> {
        Self::new(Standard::Fmi2, make_runner, log_fn, logging_on)
    }

    /// An FMI 3.0 co-simulation instance, with the host's choices of event
    /// mode and early return.
    pub fn fmi3(
        make_runner: MakeRunner<R>,
        log_fn: LogFn,
        logging_on: bool,
        event_mode_used: bool,
        early_return_allowed: bool,
    ) -> Result<Self, RunnerError> {
        let mut i = Self::new(Standard::Fmi3, make_runner, log_fn, logging_on)?;
        i.event_mode_used = event_mode_used;
        i.early_return_allowed = early_return_allowed;
        Ok(i)
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The runner.
    pub fn runner(&self) -> &R {
        &self.runner
    }

    /// The standard's name of `call`.
    pub fn name(&self, call: Call) -> &'static str {
        call.name(self.standard)
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

    /// Refuses `call` in the current phase; `allowed` lists where it is.
    fn refuse(&self, call: Call, allowed: &[Phase]) -> Status {
        self.refuse_as(self.name(call), allowed)
    }

    /// Refuses the function `func` in the current phase.
    fn refuse_as(&self, func: &str, allowed: &[Phase]) -> Status {
        let names: Vec<&str> = allowed
            .iter()
            .filter(|p| self.standard == Standard::Fmi3 || **p != Phase::EventMode)
            .map(|p| self.standard.phase_name(*p))
            .collect();
        let phase = self.standard.phase_name(self.phase);
        self.log.refuse_phase(func, phase, &names.join(", "))
    }

    /// Logs `call` (logCalls) and refuses it unless the phase is one of
    /// `allowed`.
    fn enter(&self, call: Call, allowed: &[Phase]) -> Result<(), Status> {
        self.call(|| self.name(call).to_string());
        if allowed.contains(&self.phase) {
            Ok(())
        } else {
            Err(self.refuse(call, allowed))
        }
    }

    /// Maps a runner error of `call` to a status: a step past the stop time
    /// is discarded, a failure of the simulation moves to the error phase.
    fn runner_error(&mut self, call: Call, e: RunnerError) -> Status {
        let (status, consequence) = self.log.runner_error(self.name(call), e);
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

    /// Logs the transitions the last step or event update located.
    fn log_located(&self) {
        for l in self.runner.located() {
            self.event(|| format!("{} of `{}` at t = {:?}", l.kind, l.interaction, l.t));
        }
    }

    /// SetDebugLogging: `categories` empty applies `on` to all.
    pub fn set_debug_logging(&mut self, on: bool, categories: &[&str]) -> Status {
        let f = self.name(Call::SetDebugLogging);
        self.log.set_debug_logging(f, on, categories)
    }

    /// fmi2SetupExperiment (and the experiment of fmi3EnterInitializationMode).
    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> Status {
        let c = Call::SetupExperiment;
        self.call(|| format!("{}(startTime = {start}, stopTime = {stop:?})", self.name(c)));
        if self.phase != Phase::Instantiated {
            return self.refuse(c, &[Phase::Instantiated]);
        }
        let experiment = Experiment {
            start: Some(start),
            stop,
        };
        match self.runner.setup_experiment(experiment) {
            Ok(()) => Status::Ok,
            Err(e) => self.runner_error(c, e),
        }
    }

    /// fmi2EnterInitializationMode: builds the simulation and computes t₀.
    pub fn enter_initialization_mode(&mut self) -> Status {
        match self.enter(Call::EnterInitializationMode, &[Phase::Instantiated]) {
            Ok(()) => self.initialize(),
            Err(s) => s,
        }
    }

    /// fmi3EnterInitializationMode: the experiment, then initialization.
    pub fn enter_initialization_mode_at(&mut self, start: f64, stop: Option<f64>) -> Status {
        match self.setup_experiment(start, stop) {
            Status::Ok => self.initialize(),
            s => s,
        }
    }

    fn initialize(&mut self) -> Status {
        match self.runner.initialize() {
            Ok(()) => {
                self.phase = Phase::Initialization;
                Status::Ok
            }
            Err(e) => self.runner_error(Call::EnterInitializationMode, e),
        }
    }

    /// ExitInitializationMode: to event mode when the host uses it, else to
    /// stepping.
    pub fn exit_initialization_mode(&mut self) -> Status {
        let c = Call::ExitInitializationMode;
        if let Err(s) = self.enter(c, &[Phase::Initialization]) {
            return s;
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
            Err(e) => self.runner_error(c, e),
        }
    }

    /// Refuses an event-mode call of a host that did not ask for event mode.
    fn event_mode_call(&self, call: Call, allowed: Phase) -> Result<(), Status> {
        if !self.event_mode_used {
            self.call(|| self.name(call).to_string());
            return Err(self.error(
                self.name(call),
                "the host did not ask for event mode (eventModeUsed = false at fmi3InstantiateCoSimulation)",
            ));
        }
        self.enter(call, &[allowed])
    }

    /// fmi3EnterEventMode (step mode → event mode).
    pub fn enter_event_mode(&mut self) -> Status {
        match self.event_mode_call(Call::EnterEventMode, Phase::StepMode) {
            Ok(()) => {
                self.phase = Phase::EventMode;
                Status::Ok
            }
            Err(s) => s,
        }
    }

    /// fmi3UpdateDiscreteStates: processes the event the last step stopped
    /// at (impact law, transitions, sensor captures, controller
    /// computations and applications); reports whether the state jumped and
    /// the next scheduled event (a sampling instant). The processing is
    /// complete in one call; a second call finds nothing pending.
    pub fn update_discrete_states(&mut self) -> Result<DiscreteStatesOut, Status> {
        let c = Call::UpdateDiscreteStates;
        self.event_mode_call(c, Phase::EventMode)?;
        let update = self
            .runner
            .update_discrete_states()
            .map_err(|e| self.runner_error(c, e))?;
        let out = DiscreteStatesOut {
            values_changed: update.jumped,
            next_event_time: self.runner.next_event_time(),
            ..DiscreteStatesOut::default()
        };
        self.log_located();
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

    /// fmi3EnterStepMode (event mode → step mode), once the event is handled.
    pub fn enter_step_mode(&mut self) -> Status {
        let c = Call::EnterStepMode;
        if let Err(s) = self.event_mode_call(c, Phase::EventMode) {
            return s;
        }
        if self.runner.event_pending() {
            return self.error(
                self.name(c),
                &format!(
                    "the event at t = {} is not handled yet: call fmi3UpdateDiscreteStates first",
                    self.runner.time()
                ),
            );
        }
        self.phase = Phase::StepMode;
        Status::Ok
    }

    /// DoStep from `t` by `h`: with early return (FMI 3.0 hosts that allow
    /// it) stops at the first event inside; with event mode leaves the event
    /// where it ends pending.
    pub fn step(&mut self, t: f64, h: f64) -> (Status, DoStepOut) {
        let c = Call::DoStep;
        self.call(|| {
            format!(
                "{}(currentCommunicationPoint = {t}, communicationStepSize = {h})",
                self.name(c)
            )
        });
        let mut out = DoStepOut {
            last_successful_time: self.runner.time(),
            ..DoStepOut::default()
        };
        if self.phase != Phase::StepMode {
            return (self.refuse(c, &[Phase::StepMode]), out);
        }
        let result = if self.early_return_allowed || self.event_mode_used {
            let (early, defer) = (self.early_return_allowed, self.event_mode_used);
            self.runner.advance(t, h, early, defer)
        } else {
            self.runner.do_step(t, h).map(|()| StepEnd {
                time: self.runner.time(),
                ..StepEnd::default()
            })
        };
        match result {
            Ok(end) => {
                out.early_return = end.early;
                out.last_successful_time = end.time;
                out.event_handling_needed = self.event_mode_used && end.event;
                self.log_located();
                self.event(|| {
                    let early = if end.early {
                        " (early return at an event)"
                    } else {
                        ""
                    };
                    format!("step to t = {}{early}", end.time)
                });
                (Status::Ok, out)
            }
            Err(e) => {
                let s = self.runner_error(c, e);
                out.terminate = self.past_stop;
                out.last_successful_time = self.runner.time();
                (s, out)
            }
        }
    }

    /// fmi2DoStep: [`Instance::step`]'s status.
    pub fn do_step(&mut self, t: f64, h: f64) -> Status {
        self.step(t, h).0
    }

    /// Terminate.
    pub fn terminate(&mut self) -> Status {
        let allowed = [Phase::StepMode, Phase::EventMode, Phase::StepDiscarded];
        match self.enter(Call::Terminate, &allowed) {
            Ok(()) => {
                self.phase = Phase::Terminated;
                Status::Ok
            }
            Err(s) => s,
        }
    }

    /// Reset: back to the instantiated state with the default parameter
    /// values. Saved FMU states stay valid for this instance.
    pub fn reset(&mut self) -> Status {
        let c = Call::Reset;
        self.call(|| self.name(c).to_string());
        match (self.make_runner)() {
            Ok(r) => {
                self.runner = r;
                self.phase = Phase::Instantiated;
                self.past_stop = false;
                Status::Ok
            }
            Err(e) => self.runner_error(c, e),
        }
    }

    /// Checks that there are as many values as value references.
    fn same_count(&self, call: Call, vrs: usize, values: usize) -> Result<(), Status> {
        if vrs == values {
            return Ok(());
        }
        Err(self.error(
            self.name(call),
            &format!(
                "nValues = {values} is not the number of scalar values of the {vrs} variables (all are scalars)"
            ),
        ))
    }

    /// fmi2GetReal / fmi3GetFloat64 (FMI 3.0: `time` too).
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Status {
        let c = Call::GetReal;
        self.call(|| format!("{}(vr = {vrs:?})", self.name(c)));
        if let Err(s) = self.same_count(c, vrs.len(), out.len()) {
            return s;
        }
        for (vr, o) in vrs.iter().zip(out.iter_mut()) {
            if Some(*vr) == self.time_vr {
                *o = self.runner.time();
                continue;
            }
            match self.runner.get_real(*vr) {
                Ok(x) => *o = x,
                Err(e) => return self.runner_error(c, e),
            }
        }
        Status::Ok
    }

    /// fmi2SetReal / fmi3SetFloat64: every value reference is checked before
    /// any value is set; values are then set in order, up to the first
    /// refused one.
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Status {
        let c = Call::SetReal;
        self.call(|| format!("{}(vr = {vrs:?}, value = {values:?})", self.name(c)));
        let allowed = [
            Phase::Instantiated,
            Phase::Initialization,
            Phase::EventMode,
            Phase::StepMode,
        ];
        if !allowed.contains(&self.phase) {
            return self.refuse(c, &allowed);
        }
        if let Err(s) = self.same_count(c, vrs.len(), values.len()) {
            return s;
        }
        let f = self.name(c);
        for vr in vrs {
            if Some(*vr) == self.time_vr {
                return self.error(f, "`time` is the independent variable and cannot be set");
            }
            if self.runner.interface().variable(*vr).is_none() {
                return self.error(f, &format!("unknown value reference {vr}"));
            }
        }
        for (vr, x) in vrs.iter().zip(values) {
            if let Err(e) = self.runner.set_real(*vr, *x) {
                return self.runner_error(c, e);
            }
        }
        Status::Ok
    }

    /// The getters and setters of other types (`func`): these FMUs have
    /// Real (Float64) variables only, so any value reference is unknown.
    pub fn no_such_type(&self, func: &str, vrs: &[u32]) -> Status {
        self.call(|| format!("{func}(vr = {vrs:?})"));
        match vrs.first() {
            None => Status::Ok,
            Some(vr) => self.error(
                func,
                &format!(
                    "unknown value reference {vr}: this FMU has {} variables only",
                    self.standard.real()
                ),
            ),
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

    /// Checks that a status query (`func`) is allowed.
    pub fn status_query(&self, func: &str) -> Status {
        let allowed = [Phase::StepMode, Phase::StepDiscarded, Phase::Terminated];
        if allowed.contains(&self.phase) {
            return Status::Ok;
        }
        self.refuse_as(func, &allowed)
    }

    /// GetFMUState: a new state, or `into` overwritten.
    pub fn get_state(&mut self, into: Option<&mut R::State>) -> Result<Option<R::State>, Status> {
        let c = Call::GetFmuState;
        self.call(|| self.name(c).to_string());
        if !RESTORE[..5].contains(&self.phase) {
            return Err(self.refuse(c, &RESTORE[..5]));
        }
        let result = match into {
            Some(slot) => self.runner.save_state_into(slot).map(|()| None),
            None => self.runner.save_state().map(Some),
        };
        let s = result.map_err(|e| self.runner_error(c, e))?;
        self.event(|| format!("state saved at t = {}", self.runner.time()));
        Ok(s)
    }

    /// SetFMUState: back to stepping (event mode stays event mode: a state
    /// saved at the left limit of an event is updated there).
    pub fn set_state(&mut self, state: &R::State) -> Status {
        let c = Call::SetFmuState;
        self.call(|| self.name(c).to_string());
        if !RESTORE.contains(&self.phase) {
            return self.refuse(c, &RESTORE);
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
            Err(e) => self.runner_error(c, e),
        }
    }
}
