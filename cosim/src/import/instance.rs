//! A running instance of an FMU: parameters, initialisation, doStep,
//! reading and writing reals, integers and booleans (and elements of FMI
//! 3.0 arrays), saving, restoring and serialising its state.
//!
//! FMI 2.0 calls go through the `fmi` crate (rust-fmi), which holds the
//! C ABI; FMI 3.0 calls through this crate's thin loader over the same
//! crate's FMI 3.0 bindings (`super::fmi3`). This module adds the checks
//! the master needs (lengths, causality, call order, capabilities) and
//! turns the FMI statuses into [`CosimError`]s that name the instance and
//! the time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fmi::fmi2::instance::{CoSimulation, Common, FmuState, InstanceCS};
use fmi::fmi2::Fmi2Error;
use fmi::traits::{FmiInstance, FmiStatus};

use super::description::{Description, VarCausality, VarType, Variable};
use super::fmi3::{Instance3, State3, Step3};
use super::fmu::{Fmu, Kind};
use crate::error::CosimError;

/// Where an instance is in the co-simulation state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Stepping,
    /// The FMU ended the simulation (fmi2Terminated, FMI 3.0
    /// terminateSimulation): its values can be read, it cannot step.
    Ended,
    Failed,
}

/// The outcome of [`Instance::do_step`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepResult {
    /// The step was taken: the instance is at t + h.
    Done,
    /// The FMU discarded the step (fmi2Discard): it stays where it
    /// stopped (see fmi2LastSuccessfulTime); the master may retry a smaller
    /// step from a saved state.
    Discarded,
    /// The FMU asks to end the simulation (fmi2Terminated, or FMI 3.0's
    /// terminateSimulation): it stopped at `time` (its last successful
    /// time).
    Terminated {
        /// The last successful time.
        time: f64,
    },
}

/// The FMI binary behind an instance.
enum Inner {
    V2(Box<InstanceCS>),
    V3(Box<Instance3>),
}

/// A state inside the FMU.
enum Handle {
    V2(FmuState),
    /// An index into the instance's FMI 3.0 states (freed with it).
    V3(usize),
}

/// A state of an instance saved inside the FMU (fmi2GetFMUstate,
/// fmi3GetFMUState), with the instance's time.
pub struct SavedState {
    owner: u64,
    handle: Handle,
    time: f64,
}

impl std::fmt::Debug for SavedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedState")
            .field("owner", &self.owner)
            .field("time", &self.time)
            .finish()
    }
}

impl SavedState {
    /// The time of the state.
    pub fn time(&self) -> f64 {
        self.time
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A co-simulation instance of an [`Fmu`].
pub struct Instance {
    fmu: Arc<Fmu>,
    inner: Inner,
    /// FMI 3.0 states, freed before the instance.
    states3: Vec<State3>,
    name: String,
    id: u64,
    phase: Phase,
    time: f64,
}

// SAFETY: an FMI 2.0 component (and an FMI 3.0 instance) may be called
// from any thread as long as calls on it are not concurrent (FMI 2.0
// §2.1.5, FMI 3.0 §2.2.2); `Instance` gives access to its component only
// through `&mut self` or `&self` methods that the borrow checker keeps
// from running at once on two threads, since `Instance` is not `Sync`.
unsafe impl Send for Instance {}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("name", &self.name)
            .field("model", &self.fmu.description.model_name)
            .field("time", &self.time)
            .finish()
    }
}

/// A failed FMI call: the function and the status.
struct Fail {
    call: &'static str,
    status: String,
    discard: bool,
}

fn fail2(call: &'static str, e: Fmi2Error) -> Fail {
    Fail {
        call,
        discard: matches!(e, Fmi2Error::Discard),
        status: format!("{e:?}"),
    }
}

fn fail3(call: &'static str, status: &'static str) -> Fail {
    Fail {
        call,
        discard: status == "Discard",
        status: status.to_string(),
    }
}

impl Instance {
    /// Instantiates the FMU for co-simulation under a name (the name used
    /// in errors and records).
    pub fn new(fmu: &Arc<Fmu>, name: &str) -> Result<Instance, CosimError> {
        let inner = match &fmu.kind {
            Kind::V2(import) => Inner::V2(Box::new(
                import
                    .instantiate_cs(name, false, false)
                    .map_err(|e| CosimError::Instantiate {
                        fmu: name.to_string(),
                        reason: e.to_string(),
                    })?,
            )),
            Kind::V3(a) => Inner::V3(Box::new(
                Instance3::new(&a.lib, name, &fmu.description.guid, &a.resources).map_err(
                    |reason| CosimError::Instantiate {
                        fmu: name.to_string(),
                        reason,
                    },
                )?,
            )),
        };
        Ok(Instance {
            fmu: fmu.clone(),
            inner,
            states3: Vec::new(),
            name: name.to_string(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            phase: Phase::Instantiated,
            time: 0.0,
        })
    }

    /// The instance name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The FMU's description.
    pub fn description(&self) -> &Description {
        &self.fmu.description
    }

    /// The FMU.
    pub fn fmu(&self) -> &Arc<Fmu> {
        &self.fmu
    }

    /// The current communication point.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The variable of a name, or [`CosimError::UnknownVariable`].
    pub fn variable(&self, name: &str) -> Result<&Variable, CosimError> {
        self.fmu
            .description
            .variable(name)
            .ok_or_else(|| CosimError::UnknownVariable {
                fmu: self.name.clone(),
                variable: name.to_string(),
            })
    }

    fn fail(&mut self, f: Fail) -> CosimError {
        if !f.discard {
            self.phase = Phase::Failed;
        }
        CosimError::Call {
            fmu: self.name.clone(),
            call: f.call,
            status: f.status,
            time: self.time,
        }
    }

    fn usable(&self) -> Result<(), CosimError> {
        if self.phase == Phase::Failed {
            return Err(CosimError::Order {
                fmu: self.name.clone(),
                reason: "the instance failed earlier and cannot be used".into(),
            });
        }
        Ok(())
    }

    /// Sets a parameter (or an input or start value) by name before
    /// initialisation: reals, integers (the value must be whole) and
    /// booleans (0 false, anything else true).
    pub fn set_start(&mut self, name: &str, value: f64) -> Result<(), CosimError> {
        let v = self.variable(name)?.clone();
        let misuse = |reason: &str| CosimError::Misuse {
            fmu: self.name.clone(),
            variable: name.to_string(),
            reason: reason.to_string(),
        };
        match v.causality {
            VarCausality::Parameter | VarCausality::Input => {}
            _ => {
                return Err(misuse(
                    "cannot be set: it is neither a parameter nor an input",
                ))
            }
        }
        if self.phase != Phase::Instantiated
            && v.variability != super::VarVariability::Tunable
            && v.causality == VarCausality::Parameter
        {
            return Err(misuse(
                "is a fixed parameter: it can only be set before initialisation",
            ));
        }
        match v.kind {
            VarType::Integer | VarType::Enumeration
                if value.fract() != 0.0 || value.abs() > i32::MAX as f64 =>
            {
                Err(misuse("is an integer: the value must be a whole number"))
            }
            VarType::String => Err(misuse(
                "is a string (or a type that is not exchanged): it cannot be set",
            )),
            _ => self.write(&v, value),
        }
    }

    /// Enters and leaves initialisation mode (FMI 2.0: fmi2SetupExperiment
    /// with start time t0 and optional stop time,
    /// fmi2EnterInitializationMode, fmi2ExitInitializationMode; FMI 3.0:
    /// fmi3EnterInitializationMode, fmi3ExitInitializationMode):
    /// afterwards the instance is at t0 and can step.
    pub fn initialize(&mut self, t0: f64, stop: Option<f64>) -> Result<(), CosimError> {
        self.usable()?;
        if self.phase != Phase::Instantiated {
            return Err(CosimError::Order {
                fmu: self.name.clone(),
                reason: "initialised twice".into(),
            });
        }
        self.time = t0;
        let r = match &mut self.inner {
            Inner::V2(i) => FmiInstance::enter_initialization_mode(i.as_mut(), None, t0, stop)
                .map_err(|e| fail2("fmi2EnterInitializationMode", e))
                .and_then(|_| {
                    FmiInstance::exit_initialization_mode(i.as_mut())
                        .map_err(|e| fail2("fmi2ExitInitializationMode", e))
                })
                .map(|_| ()),
            Inner::V3(i) => i.initialize(t0, stop).map_err(|(c, s)| fail3(c, s)),
        };
        r.map_err(|f| self.fail(f))?;
        self.phase = Phase::Stepping;
        Ok(())
    }

    /// One communication step doStep(t, h) from the current communication
    /// point t. On success the instance is at t + h (the time given by the
    /// caller, `t_next`, so that it stays on the master's exact clock).
    pub fn do_step(&mut self, h: f64, t_next: f64) -> Result<StepResult, CosimError> {
        self.usable()?;
        match self.phase {
            Phase::Stepping => {}
            Phase::Ended => {
                return Err(CosimError::Order {
                    fmu: self.name.clone(),
                    reason: format!("stepped after it ended the simulation at t = {}", self.time),
                })
            }
            _ => {
                return Err(CosimError::Order {
                    fmu: self.name.clone(),
                    reason: "stepped before initialisation".into(),
                })
            }
        }
        let t = self.time;
        let outcome = match &mut self.inner {
            Inner::V2(i) => step2(i, t, h),
            Inner::V3(i) => match i.do_step(t, h) {
                Step3::Done => Ok(StepResult::Done),
                Step3::Discarded => Ok(StepResult::Discarded),
                Step3::Terminated(time) => Ok(StepResult::Terminated { time }),
                Step3::Failed(status) => Err(fail3("fmi3DoStep", status)),
            },
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(f) => return Err(self.fail(f)),
        };
        match outcome {
            StepResult::Done => self.time = t_next,
            StepResult::Terminated { time } => {
                self.time = time;
                self.phase = Phase::Ended;
            }
            StepResult::Discarded => {}
        }
        Ok(outcome)
    }

    fn check_len(&self, what: &str, vrs: usize, values: usize) -> Result<(), CosimError> {
        if vrs != values {
            return Err(CosimError::Misuse {
                fmu: self.name.clone(),
                variable: what.to_string(),
                reason: format!("{vrs} value references but {values} values"),
            });
        }
        Ok(())
    }

    /// Reals by scalar value references (fmi2GetReal, fmi3GetFloat64).
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(reals)", vrs.len(), out.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .get_real(vrs, out)
                .map(|_| ())
                .map_err(|e| fail2("fmi2GetReal", e)),
            Inner::V3(i) => i.get_f64(vrs, out).map_err(|s| fail3("fmi3GetFloat64", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Sets reals by scalar value references (fmi2SetReal,
    /// fmi3SetFloat64).
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(reals)", vrs.len(), values.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .set_real(vrs, values)
                .map(|_| ())
                .map_err(|e| fail2("fmi2SetReal", e)),
            Inner::V3(i) => i
                .set_f64(vrs, values)
                .map_err(|s| fail3("fmi3SetFloat64", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Integers by scalar value references (fmi2GetInteger,
    /// fmi3GetInt32).
    pub fn get_integer(&mut self, vrs: &[u32], out: &mut [i32]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(integers)", vrs.len(), out.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .get_integer(vrs, out)
                .map(|_| ())
                .map_err(|e| fail2("fmi2GetInteger", e)),
            Inner::V3(i) => i.get_i32(vrs, out).map_err(|s| fail3("fmi3GetInt32", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Sets integers by scalar value references (fmi2SetInteger,
    /// fmi3SetInt32).
    pub fn set_integer(&mut self, vrs: &[u32], values: &[i32]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(integers)", vrs.len(), values.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .set_integer(vrs, values)
                .map(|_| ())
                .map_err(|e| fail2("fmi2SetInteger", e)),
            Inner::V3(i) => i.set_i32(vrs, values).map_err(|s| fail3("fmi3SetInt32", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Booleans by scalar value references (fmi2GetBoolean,
    /// fmi3GetBoolean).
    pub fn get_boolean(&mut self, vrs: &[u32], out: &mut [bool]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(booleans)", vrs.len(), out.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => get_boolean2(i, vrs, out),
            Inner::V3(i) => i.get_bool(vrs, out).map_err(|s| fail3("fmi3GetBoolean", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Sets booleans by scalar value references (fmi2SetBoolean,
    /// fmi3SetBoolean).
    pub fn set_boolean(&mut self, vrs: &[u32], values: &[bool]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(booleans)", vrs.len(), values.len())?;
        let r = match &mut self.inner {
            Inner::V2(i) => set_boolean2(i, vrs, values),
            Inner::V3(i) => i
                .set_bool(vrs, values)
                .map_err(|s| fail3("fmi3SetBoolean", s)),
        };
        r.map_err(|f| self.fail(f))
    }

    /// Reads one variable of any exchanged type as a real (integers and
    /// enumerations converted, booleans 0 or 1; an element of an FMI 3.0
    /// array picked from the array).
    pub fn get_as_real(&mut self, v: &Variable) -> Result<f64, CosimError> {
        self.usable()?;
        if v.kind == VarType::String {
            return Err(CosimError::Misuse {
                fmu: self.name.clone(),
                variable: v.name.clone(),
                reason: "is a string (or a type that is not exchanged): it cannot be read".into(),
            });
        }
        if let Inner::V3(i) = &mut self.inner {
            let r = i.get(v).map_err(|(c, s)| fail3(c, s));
            return r.map_err(|f| self.fail(f));
        }
        let vr = [v.value_reference];
        Ok(match v.kind {
            VarType::Real => {
                let mut x = [0.0];
                self.get_real(&vr, &mut x)?;
                x[0]
            }
            VarType::Integer | VarType::Enumeration => {
                let mut x = [0];
                self.get_integer(&vr, &mut x)?;
                f64::from(x[0])
            }
            _ => {
                let mut x = [false];
                self.get_boolean(&vr, &mut x)?;
                f64::from(u8::from(x[0]))
            }
        })
    }

    /// Writes one variable of any exchanged type from a real (integers
    /// rounded to nearest, booleans nonzero = true; an element of an FMI
    /// 3.0 array written into the array). Strings are left alone.
    pub fn write(&mut self, v: &Variable, x: f64) -> Result<(), CosimError> {
        self.usable()?;
        if let Inner::V3(i) = &mut self.inner {
            if v.kind == VarType::String {
                return Ok(());
            }
            let r = i.set(v, x).map_err(|(c, s)| fail3(c, s));
            return r.map_err(|f| self.fail(f));
        }
        let vr = [v.value_reference];
        match v.kind {
            VarType::Real => self.set_real(&vr, &[x]),
            VarType::Integer | VarType::Enumeration => self.set_integer(&vr, &[x.round() as i32]),
            VarType::Boolean => self.set_boolean(&vr, &[x != 0.0]),
            VarType::String => Ok(()),
        }
    }

    fn capability(
        &self,
        ok: bool,
        what: &'static str,
        flag: &'static str,
    ) -> Result<(), CosimError> {
        if ok {
            Ok(())
        } else {
            Err(CosimError::Capability {
                fmu: self.name.clone(),
                what,
                flag,
            })
        }
    }

    /// Saves the instance's state in a new slot (fmi2GetFMUstate,
    /// fmi3GetFMUState).
    pub fn get_state(&mut self) -> Result<SavedState, CosimError> {
        self.usable()?;
        let caps = self.fmu.description.capabilities;
        self.capability(caps.get_set_state, "save its state", "canGetAndSetFMUstate")?;
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .get_fmu_state()
                .map(Handle::V2)
                .map_err(|e| fail2("fmi2GetFMUstate", e)),
            Inner::V3(i) => match i.get_state(None) {
                Ok(Some(s)) => {
                    self.states3.push(s);
                    Ok(Handle::V3(self.states3.len() - 1))
                }
                Ok(None) => Err(fail3("fmi3GetFMUState", "no state")),
                Err(s) => Err(fail3("fmi3GetFMUState", s)),
            },
        };
        let handle = r.map_err(|f| self.fail(f))?;
        Ok(SavedState {
            owner: self.id,
            handle,
            time: self.time,
        })
    }

    fn own(&self, s: &SavedState) -> Result<(), CosimError> {
        if s.owner != self.id {
            return Err(CosimError::Order {
                fmu: self.name.clone(),
                reason: "a state saved from another instance".into(),
            });
        }
        Ok(())
    }

    /// Saves the instance's state into an existing slot (no new
    /// allocation in the FMU).
    pub fn update_state(&mut self, s: &mut SavedState) -> Result<(), CosimError> {
        self.usable()?;
        self.own(s)?;
        let r = match (&mut self.inner, &s.handle) {
            (Inner::V2(i), Handle::V2(h)) => i
                .update_fmu_state(h)
                .ok()
                .map(|_| ())
                .map_err(|e| fail2("fmi2GetFMUstate", e)),
            (Inner::V3(i), Handle::V3(k)) => i
                .get_state(Some(&mut self.states3[*k]))
                .map(|_| ())
                .map_err(|s| fail3("fmi3GetFMUState", s)),
            _ => Err(fail3("GetFMUState", "a state of another FMI version")),
        };
        r.map_err(|f| self.fail(f))?;
        s.time = self.time;
        Ok(())
    }

    /// Puts a saved state back (fmi2SetFMUstate, fmi3SetFMUState).
    pub fn set_state(&mut self, s: &SavedState) -> Result<(), CosimError> {
        self.own(s)?;
        if matches!(self.phase, Phase::Failed | Phase::Ended) {
            // A failed or ended instance may be restarted from a saved
            // state.
            self.phase = Phase::Stepping;
        }
        let r = match (&mut self.inner, &s.handle) {
            (Inner::V2(i), Handle::V2(h)) => i
                .set_fmu_state(h)
                .ok()
                .map(|_| ())
                .map_err(|e| fail2("fmi2SetFMUstate", e)),
            (Inner::V3(i), Handle::V3(k)) => i
                .set_state(&self.states3[*k])
                .map_err(|s| fail3("fmi3SetFMUState", s)),
            _ => Err(fail3("SetFMUState", "a state of another FMI version")),
        };
        r.map_err(|f| self.fail(f))?;
        self.time = s.time;
        Ok(())
    }

    /// The bytes of a saved state (fmi2SerializeFMUstate,
    /// fmi3SerializeFMUState), preceded by its time (8 bytes,
    /// little-endian).
    pub fn serialize_state(&mut self, s: &SavedState) -> Result<Vec<u8>, CosimError> {
        self.own(s)?;
        let caps = self.fmu.description.capabilities;
        self.capability(
            caps.serialize_state,
            "serialise its state",
            "canSerializeFMUstate",
        )?;
        let r = match (&mut self.inner, &s.handle) {
            (Inner::V2(i), Handle::V2(h)) => i
                .serialize_fmu_state(h)
                .map_err(|e| fail2("fmi2SerializeFMUstate", e)),
            (Inner::V3(i), Handle::V3(k)) => {
                i.serialize(&self.states3[*k]).map_err(|(c, s)| fail3(c, s))
            }
            _ => Err(fail3("SerializeFMUState", "a state of another FMI version")),
        };
        let body = r.map_err(|f| self.fail(f))?;
        let mut out = s.time.to_le_bytes().to_vec();
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// A saved state from the bytes of [`Instance::serialize_state`]
    /// (fmi2DeSerializeFMUstate, fmi3DeserializeFMUState).
    pub fn deserialize_state(&mut self, bytes: &[u8]) -> Result<SavedState, CosimError> {
        let caps = self.fmu.description.capabilities;
        self.capability(
            caps.serialize_state,
            "deserialise a state",
            "canSerializeFMUstate",
        )?;
        if bytes.len() < 8 {
            return Err(CosimError::Order {
                fmu: self.name.clone(),
                reason: "a serialised state shorter than its time stamp".into(),
            });
        }
        let mut t = [0u8; 8];
        t.copy_from_slice(&bytes[..8]);
        let r = match &mut self.inner {
            Inner::V2(i) => i
                .deserialize_fmu_state(&bytes[8..])
                .map(Handle::V2)
                .map_err(|e| fail2("fmi2DeSerializeFMUstate", e)),
            Inner::V3(i) => match i.deserialize(&bytes[8..]) {
                Ok(s) => {
                    self.states3.push(s);
                    Ok(Handle::V3(self.states3.len() - 1))
                }
                Err(s) => Err(fail3("fmi3DeserializeFMUState", s)),
            },
        };
        let handle = r.map_err(|f| self.fail(f))?;
        Ok(SavedState {
            owner: self.id,
            handle,
            time: f64::from_le_bytes(t),
        })
    }
}

/// fmi2DoStep(t, h, newStep = true); a discard asks fmi2Terminated and
/// fmi2LastSuccessfulTime.
fn step2(i: &mut InstanceCS, t: f64, h: f64) -> Result<StepResult, Fail> {
    // fmi2DoStep may return fmi2Pending (an asynchronous step, which the
    // master does not request: canRunAsynchronuously is not used); the
    // `fmi` crate 0.7 panics on that status instead of returning it. The
    // panic is caught here and becomes a typed error, the instance
    // unusable afterwards.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| i.do_step(t, h, true)));
    let Ok(result) = result else {
        return Err(Fail {
            call: "fmi2DoStep",
            status: "Pending or not an FMI status (asynchronous steps are not supported)".into(),
            discard: false,
        });
    };
    match result {
        Ok(_) => Ok(StepResult::Done),
        Err(Fmi2Error::Discard) => {
            // fmi2GetBooleanStatus(fmi2Terminated); an FMU that cannot
            // answer it has not asked to terminate.
            if i.terminated().unwrap_or(false) {
                let time = i.last_successful_time().unwrap_or(t);
                Ok(StepResult::Terminated { time })
            } else {
                Ok(StepResult::Discarded)
            }
        }
        Err(e) => Err(fail2("fmi2DoStep", e)),
    }
}

/// fmi2GetBoolean: fmi2Boolean is an int, converted in chunks on the
/// stack.
fn get_boolean2(i: &mut InstanceCS, vrs: &[u32], out: &mut [bool]) -> Result<(), Fail> {
    let mut raw = [0; 16];
    for (vrs, out) in vrs.chunks(16).zip(out.chunks_mut(16)) {
        let raw = &mut raw[..vrs.len()];
        i.get_boolean(vrs, raw)
            .map_err(|e| fail2("fmi2GetBoolean", e))?;
        for (o, r) in out.iter_mut().zip(raw.iter()) {
            *o = *r != 0;
        }
    }
    Ok(())
}

/// fmi2SetBoolean, converted in chunks on the stack.
fn set_boolean2(i: &mut InstanceCS, vrs: &[u32], values: &[bool]) -> Result<(), Fail> {
    let mut raw = [0; 16];
    for (vrs, values) in vrs.chunks(16).zip(values.chunks(16)) {
        let raw = &mut raw[..vrs.len()];
        for (r, &b) in raw.iter_mut().zip(values) {
            *r = i32::from(b);
        }
        i.set_boolean(vrs, raw)
            .map_err(|e| fail2("fmi2SetBoolean", e))?;
    }
    Ok(())
}

impl Drop for Instance {
    fn drop(&mut self) {
        let stepping = matches!(self.phase, Phase::Stepping | Phase::Ended);
        match &mut self.inner {
            Inner::V2(i) => {
                if stepping {
                    // fmi2Terminate before fmi2FreeInstance (the `fmi`
                    // crate frees the instance and its saved states when
                    // `inner` drops); its status is of no use here.
                    let _ = FmiInstance::terminate(i.as_mut());
                }
            }
            Inner::V3(i) => {
                for s in &mut self.states3 {
                    i.free_state(s);
                }
                if stepping {
                    i.terminate();
                }
            }
        }
    }
}
