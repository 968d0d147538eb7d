//! The FMI 2.0 co-simulation entry points, exported with the C ABI under
//! their plain `fmi2*` names (the shared library of every exported FMU is
//! this one, copied as `binaries/linux64/<modelIdentifier>.so`).
//!
//! Each entry point converts its C arguments and makes one call of the
//! instance core ([`crate::instance::Instance`], the same for FMI 3.0)
//! through [`crate::ffi`]: a NULL component, array, callback or state is an
//! `fmi2Error`, logged through the host's logger when there is a component,
//! on stderr when there is none; every call runs under `catch_unwind`, so a
//! panic never crosses the C boundary (it is logged as an internal error
//! and the instance moves to the error state). Instances share nothing, so
//! several can live in one process (and run on different threads).

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::ffi::{self, panic_text, text, with, Instantiation};
use crate::instance::{Call, LogFn, Standard, Status};

/// fmi2Component.
pub type fmi2Component = *mut c_void;
/// fmi2ComponentEnvironment.
pub type fmi2ComponentEnvironment = *mut c_void;
/// fmi2FMUstate.
pub type fmi2FMUstate = *mut c_void;
/// fmi2ValueReference.
pub type fmi2ValueReference = c_uint;
/// fmi2Real.
pub type fmi2Real = f64;
/// fmi2Integer.
pub type fmi2Integer = c_int;
/// fmi2Boolean.
pub type fmi2Boolean = c_int;
/// fmi2String.
pub type fmi2String = *const c_char;
/// fmi2Byte.
pub type fmi2Byte = c_char;
/// fmi2Status as returned.
pub type fmi2Status = c_int;

/// The host's logger (a printf-style variadic function).
pub type fmi2CallbackLogger = unsafe extern "C" fn(
    fmi2ComponentEnvironment,
    fmi2String,
    fmi2Status,
    fmi2String,
    fmi2String,
    ...
);

/// fmi2CallbackFunctions.
#[repr(C)]
pub struct fmi2CallbackFunctions {
    /// Logger (required).
    pub logger: Option<fmi2CallbackLogger>,
    /// Memory allocation (not used: this FMU declares
    /// canNotUseMemoryManagementFunctions).
    pub allocateMemory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    /// Memory release (not used).
    pub freeMemory: Option<unsafe extern "C" fn(*mut c_void)>,
    /// Asynchronous step end (not used).
    pub stepFinished: Option<unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2Status)>,
    /// Passed back to the logger.
    pub componentEnvironment: fmi2ComponentEnvironment,
}

const CO_SIMULATION: c_int = 1;

/// The host's logger, with what it needs.
struct HostLogger {
    logger: fmi2CallbackLogger,
    env: fmi2ComponentEnvironment,
    name: CString,
}

// SAFETY: the environment pointer is the host's, passed back untouched; the
// FMI standard lets the FMU call the logger from the thread that calls the
// FMU, which is what happens.
unsafe impl Send for HostLogger {}

impl HostLogger {
    fn log(&self, status: Status, category: &str, message: &str) {
        // The message is a printf format: '%' is doubled; NULs are dropped.
        let text = message.replace('%', "%%").replace('\0', "");
        let cat = category.replace('\0', "");
        let (Ok(text), Ok(cat)) = (CString::new(text), CString::new(cat)) else {
            return;
        };
        // SAFETY: the logger is the host's function, called with valid
        // NUL-terminated strings and the environment it gave.
        unsafe {
            (self.logger)(
                self.env,
                self.name.as_ptr(),
                status as fmi2Status,
                cat.as_ptr(),
                text.as_ptr(),
            )
        };
    }
}

/// "default".
#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

/// "2.0".
#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// Creates an instance; NULL (with a log message when a logger is given)
/// on any error.
///
/// # Safety
/// Pointers must be NULL or valid as the FMI 2.0 standard describes.
#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instanceName: fmi2String,
    fmuType: c_int,
    fmuGUID: fmi2String,
    fmuResourceLocation: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    loggingOn: fmi2Boolean,
) -> fmi2Component {
    let f = "fmi2Instantiate";
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: NULL or the host's callback structure (the contract above).
        let Some(fns) = (unsafe { functions.as_ref() }) else {
            eprintln!("nonsmooth FMU: {f}: the callback functions are NULL");
            return std::ptr::null_mut();
        };
        let Some(logger) = fns.logger else {
            eprintln!("nonsmooth FMU: {f}: the logger callback is NULL");
            return std::ptr::null_mut();
        };
        // SAFETY: NULL or NUL-terminated strings (the contract above).
        let (name, guid, uri) =
            unsafe { (text(instanceName), text(fmuGUID), text(fmuResourceLocation)) };
        let host = HostLogger {
            logger,
            env: fns.componentEnvironment,
            name: CString::new(name.clone().unwrap_or_default().replace('\0', ""))
                .unwrap_or_default(),
        };
        if fmuType != CO_SIMULATION {
            let m = format!("{f}: fmuType {fmuType}: this FMU supports co-simulation (fmi2CoSimulation = 1) only");
            host.log(Status::Error, "logStatusError", &m);
            return std::ptr::null_mut();
        }
        let request = Instantiation {
            standard: Standard::Fmi2,
            name,
            token: guid,
            resources: uri.map(|u| crate::config::resource_dir(&u)),
            logging_on: loggingOn != 0,
            event_mode_used: false,
            early_return_allowed: false,
        };
        let log_fn: LogFn = {
            let host = HostLogger {
                name: host.name.clone(),
                ..host
            };
            Box::new(move |status, cat, msg| host.log(status, cat, msg))
        };
        match ffi::instantiate(request, log_fn) {
            Ok(inst) => ffi::into_c(inst),
            Err(m) => {
                host.log(Status::Error, "logStatusError", &format!("{f}: {m}"));
                std::ptr::null_mut()
            }
        }
    }));
    r.unwrap_or_else(|p| {
        eprintln!(
            "nonsmooth FMU: {f}: internal error: {}",
            panic_text(p.as_ref())
        );
        std::ptr::null_mut()
    })
}

/// Frees an instance and the FMU states it handed out. NULL is ignored.
///
/// # Safety
/// `c` must be NULL or an instance not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    // SAFETY: the contract above.
    unsafe { ffi::free(c, Call::FreeInstance) }
}

/// # Safety
/// `c` must be an instance; `categories` must hold `nCategories` strings.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: fmi2Component,
    loggingOn: fmi2Boolean,
    nCategories: usize,
    categories: *const fmi2String,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses a NULL instance and
    // catches panics, the array is checked for NULL.
    unsafe {
        with(c, "fmi2SetDebugLogging", |i| {
            ffi::set_debug_logging(i, loggingOn != 0, nCategories, categories)
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: fmi2Component,
    _toleranceDefined: fmi2Boolean,
    _tolerance: fmi2Real,
    startTime: fmi2Real,
    stopTimeDefined: fmi2Boolean,
    stopTime: fmi2Real,
) -> fmi2Status {
    let stop = (stopTimeDefined != 0).then_some(stopTime);
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, "fmi2SetupExperiment", |i| {
            i.setup_experiment(startTime, stop)
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, "fmi2EnterInitializationMode", |i| {
            i.enter_initialization_mode()
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, "fmi2ExitInitializationMode", |i| {
            i.exit_initialization_mode()
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi2Terminate", |i| i.terminate()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi2Reset", |i| i.reset()) }
}

/// # Safety
/// `vr` and `value` must hold `nvr` elements.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetReal(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *mut fmi2Real,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the arrays are checked for NULL.
    unsafe { with(c, "fmi2GetReal", |i| ffi::get_real(i, vr, nvr, value, nvr)) }
}

/// # Safety
/// `vr` and `value` must hold `nvr` elements.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetReal(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    nvr: usize,
    value: *const fmi2Real,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the arrays are checked for NULL.
    unsafe { with(c, "fmi2SetReal", |i| ffi::set_real(i, vr, nvr, value, nvr)) }
}

macro_rules! no_such_type {
    ($name:ident, $t:ty) => {
        /// This FMU has no variables of this type: any value reference is
        /// unknown (`nvr` = 0 is accepted).
        ///
        /// # Safety
        /// `vr` must hold `nvr` elements.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            nvr: usize,
            _value: $t,
        ) -> fmi2Status {
            let f = stringify!($name);
            // SAFETY: the contract above; `with` refuses NULL and catches
            // panics, the array is checked for NULL.
            unsafe { with(c, f, |i| ffi::no_such_type(i, f, vr, nvr)) }
        }
    };
}

no_such_type!(fmi2GetInteger, *mut fmi2Integer);
no_such_type!(fmi2GetBoolean, *mut fmi2Boolean);
no_such_type!(fmi2GetString, *mut fmi2String);
no_such_type!(fmi2SetInteger, *const fmi2Integer);
no_such_type!(fmi2SetBoolean, *const fmi2Boolean);
no_such_type!(fmi2SetString, *const fmi2String);

/// Saves the complete state into a new handle (`*state` NULL), or into
/// `*state` when it is a handle of this instance.
///
/// # Safety
/// `state` must point to an `fmi2FMUstate`.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetFMUstate(c: fmi2Component, state: *mut fmi2FMUstate) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // `state` is checked for NULL and its handle looked up.
    unsafe { with(c, "fmi2GetFMUstate", |i| ffi::get_fmu_state(i, state)) }
}

/// Restores a state saved by this instance.
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, state: fmi2FMUstate) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the handle is looked up, never dereferenced.
    unsafe { with(c, "fmi2SetFMUstate", |i| ffi::set_fmu_state(i, state)) }
}

/// Frees a state and sets `*state` to NULL; NULL is ignored.
///
/// # Safety
/// `state` must point to an `fmi2FMUstate`.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeFMUstate(
    c: fmi2Component,
    state: *mut fmi2FMUstate,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // `state` is checked for NULL and its handle looked up.
    unsafe { with(c, "fmi2FreeFMUstate", |i| ffi::free_fmu_state(i, state)) }
}

/// # Safety
/// `size` must point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: fmi2Component,
    state: fmi2FMUstate,
    size: *mut usize,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL, the handle looked up.
    unsafe {
        with(c, "fmi2SerializedFMUstateSize", |i| {
            ffi::serialized_size(i, state, size)
        })
    }
}

/// # Safety
/// `bytes` must hold `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: fmi2Component,
    state: fmi2FMUstate,
    bytes: *mut fmi2Byte,
    size: usize,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL, the handle looked up.
    unsafe {
        with(c, "fmi2SerializeFMUstate", |i| {
            ffi::serialize(i, state, bytes as *mut u8, size)
        })
    }
}

/// # Safety
/// `bytes` must hold `size` bytes; `state` must point to an `fmi2FMUstate`.
#[no_mangle]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: fmi2Component,
    bytes: *const fmi2Byte,
    size: usize,
    state: *mut fmi2FMUstate,
) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL.
    unsafe {
        with(c, "fmi2DeSerializeFMUstate", |i| {
            ffi::deserialize(i, bytes as *const u8, size, state)
        })
    }
}

/// Answers `fmi2Error` with `message`: a function this FMU does not provide.
///
/// # Safety
/// `c` must be NULL or an instance.
unsafe fn not_provided(c: fmi2Component, func: &'static str, message: &'static str) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, func, |i| i.error(func, message)) }
}

/// Not provided (providesDirectionalDerivative = false).
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: fmi2Component,
    _vUnknown: *const fmi2ValueReference,
    _nUnknown: usize,
    _vKnown: *const fmi2ValueReference,
    _nKnown: usize,
    _dvKnown: *const fmi2Real,
    _dvUnknown: *mut fmi2Real,
) -> fmi2Status {
    let m = "not provided by this FMU (providesDirectionalDerivative = false)";
    // SAFETY: the contract above.
    unsafe { not_provided(c, "fmi2GetDirectionalDerivative", m) }
}

/// Not provided (canInterpolateInputs = false).
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _nvr: usize,
    _order: *const fmi2Integer,
    _value: *const fmi2Real,
) -> fmi2Status {
    let m = "inputs are held constant over a step (canInterpolateInputs = false)";
    // SAFETY: the contract above.
    unsafe { not_provided(c, "fmi2SetRealInputDerivatives", m) }
}

/// Not provided (maxOutputDerivativeOrder = 0).
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _nvr: usize,
    _order: *const fmi2Integer,
    _value: *mut fmi2Real,
) -> fmi2Status {
    let m = "output derivatives are not provided (maxOutputDerivativeOrder = 0)";
    // SAFETY: the contract above.
    unsafe { not_provided(c, "fmi2GetRealOutputDerivatives", m) }
}

/// Advances from `currentCommunicationPoint` by `communicationStepSize`
/// (on the strategy the scenario names: an event-driven plant locates its
/// events inside the step and logs them in logEvents).
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(
    c: fmi2Component,
    currentCommunicationPoint: fmi2Real,
    communicationStepSize: fmi2Real,
    _noSetFMUStatePriorToCurrentPoint: fmi2Boolean,
) -> fmi2Status {
    let (t, h) = (currentCommunicationPoint, communicationStepSize);
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi2DoStep", |i| i.do_step(t, h)) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi2CancelStep", |i| i.cancel_step()) }
}

const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

/// A status query `func` of kind `kind`: `value` NULL and a phase without
/// statuses are errors; `read` answers the kind.
fn status<T>(
    i: &mut ffi::Fmu,
    func: &str,
    value: *mut T,
    read: impl FnOnce(&ffi::Fmu) -> Result<T, String>,
) -> Status {
    if value.is_null() {
        return i.error(func, "value is NULL");
    }
    let st = i.status_query(func);
    if st != Status::Ok {
        return st;
    }
    match read(i) {
        // SAFETY: non-NULL, the host's variable (the entry point's contract).
        Ok(v) => unsafe {
            *value = v;
            Status::Ok
        },
        Err(m) => i.error(func, &m),
    }
}

/// fmi2DoStepStatus and fmi2PendingStatus: steps are never asynchronous.
///
/// # Safety
/// `value` must point to an fmi2Status.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(
    c: fmi2Component,
    kind: c_int,
    value: *mut fmi2Status,
) -> fmi2Status {
    let f = "fmi2GetStatus";
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, f, |i| {
            status(i, f, value, |_| {
                Err(format!(
                    "status kind {kind}: steps are never asynchronous, there is no step status"
                ))
            })
        })
    }
}

/// fmi2LastSuccessfulTime: the communication time reached.
///
/// # Safety
/// `value` must point to an fmi2Real.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(
    c: fmi2Component,
    kind: c_int,
    value: *mut fmi2Real,
) -> fmi2Status {
    let f = "fmi2GetRealStatus";
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, f, |i| {
            status(i, f, value, |i| match kind {
                LAST_SUCCESSFUL_TIME => Ok(i.last_successful_time()),
                _ => Err(format!(
                    "status kind {kind}: only fmi2LastSuccessfulTime (2) is a Real status"
                )),
            })
        })
    }
}

/// No Integer status exists.
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: fmi2Component,
    kind: c_int,
    _value: *mut fmi2Integer,
) -> fmi2Status {
    let f = "fmi2GetIntegerStatus";
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, f, |i| {
            i.error(
                f,
                &format!("status kind {kind}: there is no Integer status"),
            )
        })
    }
}

/// fmi2Terminated: true after a step past the stop time was refused.
///
/// # Safety
/// `value` must point to an fmi2Boolean.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: fmi2Component,
    kind: c_int,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    let f = "fmi2GetBooleanStatus";
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, f, |i| {
            status(i, f, value, |i| match kind {
                TERMINATED => Ok(i.terminated() as fmi2Boolean),
                _ => Err(format!(
                    "status kind {kind}: only fmi2Terminated (3) is a Boolean status"
                )),
            })
        })
    }
}

/// No String status is provided (steps are never pending).
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: fmi2Component,
    kind: c_int,
    _value: *mut fmi2String,
) -> fmi2Status {
    let f = "fmi2GetStringStatus";
    let m = format!("status kind {kind}: no step is ever pending, there is no String status");
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, f, |i| i.error(f, &m)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{make_runner, FmuConfig};
    use crate::ffi::ERROR;
    use crate::instance::{Instance, Phase};
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_panic_is_caught_logged_and_leaves_the_instance_in_the_error_state() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/bouncing_ball.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let cfg = FmuConfig {
            format: 1,
            guid: "{t}".into(),
            model_identifier: "t".into(),
            scenario: "scenario.toml".into(),
            overrides: vec![],
            fmi_version: 2,
        };
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = Arc::clone(&log);
        let inst = Instance::fmi2(
            Box::new(move || make_runner(&cfg, &text, &path)),
            Box::new(move |_, _, m| sink.lock().unwrap().push(m.to_string())),
            false,
        )
        .unwrap();
        let c = ffi::into_c(inst);
        let status = unsafe { with(c, "fmi2DoStep", |_| panic!("boom")) };
        assert_eq!(status, ERROR);
        let msgs = log.lock().unwrap().clone();
        assert!(
            msgs.iter()
                .any(|m| m.contains("fmi2DoStep: internal error: boom")),
            "{msgs:?}"
        );
        let inst = unsafe { &*(c as *const ffi::Fmu) };
        assert_eq!(inst.phase(), Phase::Error);
        unsafe { fmi2FreeInstance(c) };
        // A NULL component is an error, not a crash.
        assert_eq!(
            unsafe { fmi2DoStep(std::ptr::null_mut(), 0.0, 1.0, 0) },
            ERROR
        );
    }
}
