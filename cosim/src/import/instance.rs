//! A running instance of an FMU: parameters, initialisation, doStep,
//! reading and writing reals, integers and booleans, saving, restoring and
//! serialising its state.
//!
//! The FMI calls go through the `fmi` crate (rust-fmi), which holds the
//! C ABI; this module adds the checks the master needs (lengths, causality,
//! call order, capabilities) and turns the FMI statuses into
//! [`CosimError`]s that name the instance and the time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fmi::fmi2::instance::{CoSimulation, Common, FmuState, InstanceCS};
use fmi::fmi2::Fmi2Error;
use fmi::traits::{FmiInstance, FmiStatus};

use super::description::{Description, VarCausality, VarType, Variable};
use super::fmu::Fmu;
use crate::error::CosimError;

/// Where an instance is in the FMI 2.0 co-simulation state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Stepping,
    /// The FMU ended the simulation (fmi2Terminated): its values can be
    /// read, it cannot step.
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
    /// The FMU discarded the step and asks to end the simulation
    /// (fmi2Terminated): it stopped at `time` (fmi2LastSuccessfulTime).
    Terminated {
        /// fmi2LastSuccessfulTime.
        time: f64,
    },
}

/// A state of an instance saved inside the FMU (fmi2GetFMUstate), with the
/// instance's time.
pub struct SavedState {
    owner: u64,
    handle: FmuState,
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
    inner: InstanceCS,
    name: String,
    id: u64,
    phase: Phase,
    time: f64,
}

// SAFETY: an FMI 2.0 component may be called from any thread as long as
// calls on it are not concurrent (FMI 2.0 §2.1.5); `Instance` gives access
// to its component only through `&mut self` or `&self` methods that the
// borrow checker keeps from running at once on two threads, since
// `Instance` is not `Sync`.
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

fn status(e: &Fmi2Error) -> String {
    format!("{e:?}")
}

impl Instance {
    /// Instantiates the FMU for co-simulation under a name (the name used
    /// in errors and records).
    pub fn new(fmu: &Arc<Fmu>, name: &str) -> Result<Instance, CosimError> {
        let inner =
            fmu.import
                .instantiate_cs(name, false, false)
                .map_err(|e| CosimError::Instantiate {
                    fmu: name.to_string(),
                    reason: e.to_string(),
                })?;
        Ok(Instance {
            fmu: fmu.clone(),
            inner,
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

    fn call_err(&mut self, call: &'static str, e: Fmi2Error) -> CosimError {
        if !matches!(e, Fmi2Error::Discard) {
            self.phase = Phase::Failed;
        }
        CosimError::Call {
            fmu: self.name.clone(),
            call,
            status: status(&e),
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
        let vr = [v.value_reference];
        match v.kind {
            VarType::Real => self.set_real(&vr, &[value]),
            VarType::Integer | VarType::Enumeration => {
                if value.fract() != 0.0 || value.abs() > i32::MAX as f64 {
                    return Err(misuse("is an integer: the value must be a whole number"));
                }
                self.set_integer(&vr, &[value as i32])
            }
            VarType::Boolean => self.set_boolean(&vr, &[value != 0.0]),
            VarType::String => Err(misuse("is a string: strings are not exchanged")),
        }
    }

    /// Enters and leaves initialisation mode (fmi2SetupExperiment with
    /// start time t0 and optional stop time, fmi2EnterInitializationMode,
    /// fmi2ExitInitializationMode): afterwards the instance is at t0 and can
    /// step.
    pub fn initialize(&mut self, t0: f64, stop: Option<f64>) -> Result<(), CosimError> {
        self.usable()?;
        if self.phase != Phase::Instantiated {
            return Err(CosimError::Order {
                fmu: self.name.clone(),
                reason: "initialised twice".into(),
            });
        }
        self.time = t0;
        if let Err(e) = FmiInstance::enter_initialization_mode(&mut self.inner, None, t0, stop) {
            return Err(self.call_err("fmi2EnterInitializationMode", e));
        }
        if let Err(e) = FmiInstance::exit_initialization_mode(&mut self.inner) {
            return Err(self.call_err("fmi2ExitInitializationMode", e));
        }
        self.phase = Phase::Stepping;
        Ok(())
    }

    /// One communication step fmi2DoStep(t, h, newStep = true) from the
    /// current communication point t. On success the instance is at t + h
    /// (the time given by the caller, `t_next`, so that it stays on the
    /// master's exact clock).
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
        // fmi2DoStep may return fmi2Pending (an asynchronous step, which
        // the master does not request: canRunAsynchronuously is not used);
        // the `fmi` crate 0.7 panics on that status instead of returning
        // it. The panic is caught here and becomes a typed error, the
        // instance unusable afterwards.
        let t = self.time;
        let inner = &mut self.inner;
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.do_step(t, h, true)));
        let Ok(result) = result else {
            self.phase = Phase::Failed;
            return Err(CosimError::Call {
                fmu: self.name.clone(),
                call: "fmi2DoStep",
                status: "Pending or not an FMI status (asynchronous steps are not supported)"
                    .into(),
                time: t,
            });
        };
        match result {
            Ok(_) => {
                self.time = t_next;
                Ok(StepResult::Done)
            }
            Err(Fmi2Error::Discard) => {
                // fmi2GetBooleanStatus(fmi2Terminated); an FMU that cannot
                // answer it has not asked to terminate.
                if self.inner.terminated().unwrap_or(false) {
                    let time = self.inner.last_successful_time().unwrap_or(self.time);
                    self.time = time;
                    self.phase = Phase::Ended;
                    Ok(StepResult::Terminated { time })
                } else {
                    Ok(StepResult::Discarded)
                }
            }
            Err(e) => Err(self.call_err("fmi2DoStep", e)),
        }
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

    /// fmi2GetReal.
    pub fn get_real(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(reals)", vrs.len(), out.len())?;
        self.inner
            .get_real(vrs, out)
            .map(|_| ())
            .map_err(|e| self.call_err("fmi2GetReal", e))
    }

    /// fmi2SetReal.
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(reals)", vrs.len(), values.len())?;
        self.inner
            .set_real(vrs, values)
            .map(|_| ())
            .map_err(|e| self.call_err("fmi2SetReal", e))
    }

    /// fmi2GetInteger.
    pub fn get_integer(&mut self, vrs: &[u32], out: &mut [i32]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(integers)", vrs.len(), out.len())?;
        self.inner
            .get_integer(vrs, out)
            .map(|_| ())
            .map_err(|e| self.call_err("fmi2GetInteger", e))
    }

    /// fmi2SetInteger.
    pub fn set_integer(&mut self, vrs: &[u32], values: &[i32]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(integers)", vrs.len(), values.len())?;
        self.inner
            .set_integer(vrs, values)
            .map(|_| ())
            .map_err(|e| self.call_err("fmi2SetInteger", e))
    }

    /// fmi2GetBoolean.
    pub fn get_boolean(&mut self, vrs: &[u32], out: &mut [bool]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(booleans)", vrs.len(), out.len())?;
        // fmi2Boolean is an int: converted in chunks on the stack.
        let mut raw = [0; 16];
        for (vrs, out) in vrs.chunks(16).zip(out.chunks_mut(16)) {
            let raw = &mut raw[..vrs.len()];
            self.inner
                .get_boolean(vrs, raw)
                .map_err(|e| self.call_err("fmi2GetBoolean", e))?;
            for (o, r) in out.iter_mut().zip(raw.iter()) {
                *o = *r != 0;
            }
        }
        Ok(())
    }

    /// fmi2SetBoolean.
    pub fn set_boolean(&mut self, vrs: &[u32], values: &[bool]) -> Result<(), CosimError> {
        self.usable()?;
        self.check_len("(booleans)", vrs.len(), values.len())?;
        let mut raw = [0; 16];
        for (vrs, values) in vrs.chunks(16).zip(values.chunks(16)) {
            let raw = &mut raw[..vrs.len()];
            for (r, &b) in raw.iter_mut().zip(values) {
                *r = i32::from(b);
            }
            self.inner
                .set_boolean(vrs, raw)
                .map_err(|e| self.call_err("fmi2SetBoolean", e))?;
        }
        Ok(())
    }

    /// Reads one variable of any exchanged type as a real (integers and
    /// enumerations converted, booleans 0 or 1).
    pub fn get_as_real(&mut self, v: &Variable) -> Result<f64, CosimError> {
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
                x[0] as f64
            }
            VarType::Boolean => {
                let mut x = [false];
                self.get_boolean(&vr, &mut x)?;
                if x[0] {
                    1.0
                } else {
                    0.0
                }
            }
            VarType::String => {
                return Err(CosimError::Misuse {
                    fmu: self.name.clone(),
                    variable: v.name.clone(),
                    reason: "is a string: strings are not exchanged".into(),
                })
            }
        })
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

    /// Saves the instance's state in a new slot (fmi2GetFMUstate).
    pub fn get_state(&mut self) -> Result<SavedState, CosimError> {
        self.usable()?;
        let caps = self.fmu.description.capabilities;
        self.capability(caps.get_set_state, "save its state", "canGetAndSetFMUstate")?;
        let handle = self
            .inner
            .get_fmu_state()
            .map_err(|e| self.call_err("fmi2GetFMUstate", e))?;
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

    /// Saves the instance's state into an existing slot (fmi2GetFMUstate
    /// on a state already allocated: no new allocation in the FMU).
    pub fn update_state(&mut self, s: &mut SavedState) -> Result<(), CosimError> {
        self.usable()?;
        self.own(s)?;
        self.inner
            .update_fmu_state(&s.handle)
            .ok()
            .map_err(|e| self.call_err("fmi2GetFMUstate", e))?;
        s.time = self.time;
        Ok(())
    }

    /// Puts a saved state back (fmi2SetFMUstate).
    pub fn set_state(&mut self, s: &SavedState) -> Result<(), CosimError> {
        self.own(s)?;
        if matches!(self.phase, Phase::Failed | Phase::Ended) {
            // A failed or ended instance may be restarted from a saved
            // state.
            self.phase = Phase::Stepping;
        }
        self.inner
            .set_fmu_state(&s.handle)
            .ok()
            .map_err(|e| self.call_err("fmi2SetFMUstate", e))?;
        self.time = s.time;
        Ok(())
    }

    /// The bytes of a saved state (fmi2SerializeFMUstate), preceded by its
    /// time (8 bytes, little-endian).
    pub fn serialize_state(&mut self, s: &SavedState) -> Result<Vec<u8>, CosimError> {
        self.own(s)?;
        let caps = self.fmu.description.capabilities;
        self.capability(
            caps.serialize_state,
            "serialise its state",
            "canSerializeFMUstate",
        )?;
        let body = self
            .inner
            .serialize_fmu_state(&s.handle)
            .map_err(|e| self.call_err("fmi2SerializeFMUstate", e))?;
        let mut out = s.time.to_le_bytes().to_vec();
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// A saved state from the bytes of [`Instance::serialize_state`]
    /// (fmi2DeSerializeFMUstate).
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
        let handle = self
            .inner
            .deserialize_fmu_state(&bytes[8..])
            .map_err(|e| self.call_err("fmi2DeSerializeFMUstate", e))?;
        Ok(SavedState {
            owner: self.id,
            handle,
            time: f64::from_le_bytes(t),
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if matches!(self.phase, Phase::Stepping | Phase::Ended) {
            // fmi2Terminate before fmi2FreeInstance (the `fmi` crate frees
            // the instance and its saved states when `inner` drops); its
            // status is of no use at this point.
            let _ = FmiInstance::terminate(&mut self.inner);
        }
    }
}
