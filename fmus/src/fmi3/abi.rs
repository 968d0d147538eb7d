//! The FMI 3.0 co-simulation entry points a host calls, with the C ABI.
//!
//! As for FMI 2.0 (`crate::fmi2`): each entry point converts its C
//! arguments and makes one call of the instance core
//! ([`crate::instance::Instance`]) through [`crate::ffi`], which refuses
//! NULL pointers (logged through the host's logger when there is an
//! instance, on stderr when there is none) and catches panics.
//! `fmi3Boolean` arguments are read as bytes (any non-zero byte is true)
//! and written as 0 or 1.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::config;
use crate::ffi::{self, panic_text, put, text, with, Instantiation};
use crate::instance::{Call, LogFn, Standard, Status};

/// fmi3Instance.
pub type fmi3Instance = *mut c_void;
/// fmi3InstanceEnvironment.
pub type fmi3InstanceEnvironment = *mut c_void;
/// fmi3FMUState.
pub type fmi3FMUState = *mut c_void;
/// fmi3ValueReference.
pub type fmi3ValueReference = u32;
/// fmi3Float64.
pub type fmi3Float64 = f64;
/// fmi3Boolean (C `bool`), read as a byte.
pub type fmi3Boolean = u8;
/// fmi3String.
pub type fmi3String = *const c_char;
/// fmi3Byte.
pub type fmi3Byte = u8;
/// fmi3Status as returned.
pub type fmi3Status = i32;

/// fmi3LogMessageCallback.
pub type fmi3LogMessageCallback =
    unsafe extern "C" fn(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);

/// fmi3IntermediateUpdateCallback (never called: providesIntermediateUpdate
/// is false).
pub type fmi3IntermediateUpdateCallback = Option<
    unsafe extern "C" fn(
        fmi3InstanceEnvironment,
        fmi3Float64,
        fmi3Boolean,
        fmi3Boolean,
        fmi3Boolean,
        fmi3Boolean,
        *mut fmi3Boolean,
        *mut fmi3Float64,
    ),
>;

/// The host's logger.
struct HostLogger {
    logger: fmi3LogMessageCallback,
    env: fmi3InstanceEnvironment,
}

// SAFETY: the environment pointer is the host's, passed back untouched; the
// FMU calls the logger from the thread that calls the FMU, as the standard
// allows.
unsafe impl Send for HostLogger {}

impl HostLogger {
    fn log(&self, status: Status, category: &str, message: &str) {
        let (Ok(text), Ok(cat)) = (
            CString::new(message.replace('\0', "")),
            CString::new(category.replace('\0', "")),
        ) else {
            return;
        };
        // SAFETY: the logger is the host's function, called with valid
        // NUL-terminated strings and the environment it gave.
        unsafe { (self.logger)(self.env, status as fmi3Status, cat.as_ptr(), text.as_ptr()) };
    }
}

/// "3.0".
#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

/// The resources folder from fmi3's `resourcePath` (a native path, with or
/// without the trailing separator; a `file:` URI is accepted too).
fn resource_dir(path: &str) -> Result<std::path::PathBuf, String> {
    if path.starts_with("file:") {
        return config::resource_dir(path);
    }
    if path.is_empty() {
        return Err("resourcePath is empty".into());
    }
    Ok(std::path::PathBuf::from(path))
}

/// Creates a co-simulation instance; NULL (with a message to the logger
/// when there is one, else on stderr) on any error.
///
/// # Safety
/// Pointers must be NULL or valid as the FMI 3.0 standard describes.
#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instanceName: fmi3String,
    instantiationToken: fmi3String,
    resourcePath: fmi3String,
    _visible: fmi3Boolean,
    loggingOn: fmi3Boolean,
    eventModeUsed: fmi3Boolean,
    earlyReturnAllowed: fmi3Boolean,
    _requiredIntermediateVariables: *const fmi3ValueReference,
    _nRequiredIntermediateVariables: usize,
    instanceEnvironment: fmi3InstanceEnvironment,
    logMessage: Option<fmi3LogMessageCallback>,
    _intermediateUpdate: fmi3IntermediateUpdateCallback,
) -> fmi3Instance {
    let f = "fmi3InstantiateCoSimulation";
    let r = catch_unwind(AssertUnwindSafe(|| {
        let host = logMessage.map(|logger| HostLogger {
            logger,
            env: instanceEnvironment,
        });
        // SAFETY: NULL or NUL-terminated strings (the contract above).
        let (name, token, path) = unsafe {
            (
                text(instanceName),
                text(instantiationToken),
                text(resourcePath),
            )
        };
        let request = Instantiation {
            standard: Standard::Fmi3,
            name,
            token,
            resources: path.map(|p| resource_dir(&p)),
            logging_on: loggingOn != 0,
            event_mode_used: eventModeUsed != 0,
            early_return_allowed: earlyReturnAllowed != 0,
        };
        let log_fn: LogFn = match &host {
            Some(h) => {
                let h = HostLogger { ..*h };
                Box::new(move |status, cat, msg| h.log(status, cat, msg))
            }
            None => Box::new(|status, cat, msg| {
                if status != Status::Ok {
                    eprintln!("nonsmooth FMU [{cat}]: {msg}");
                }
            }),
        };
        match ffi::instantiate(request, log_fn) {
            Ok(inst) => ffi::into_c(inst),
            Err(m) => {
                match &host {
                    Some(h) => h.log(Status::Error, "logStatusError", &format!("{f}: {m}")),
                    None => eprintln!("nonsmooth FMU: {f}: {m}"),
                }
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
pub unsafe extern "C" fn fmi3FreeInstance(c: fmi3Instance) {
    // SAFETY: the contract above.
    unsafe { ffi::free(c, Call::FreeInstance) }
}

/// # Safety
/// `c` must be an instance; `categories` must hold `nCategories` strings.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    c: fmi3Instance,
    loggingOn: fmi3Boolean,
    nCategories: usize,
    categories: *const fmi3String,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses a NULL instance and
    // catches panics, the array is checked for NULL.
    unsafe {
        with(c, "fmi3SetDebugLogging", |i| {
            ffi::set_debug_logging(i, loggingOn != 0, nCategories, categories)
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    c: fmi3Instance,
    _toleranceDefined: fmi3Boolean,
    _tolerance: fmi3Float64,
    startTime: fmi3Float64,
    stopTimeDefined: fmi3Boolean,
    stopTime: fmi3Float64,
) -> fmi3Status {
    let stop = (stopTimeDefined != 0).then_some(stopTime);
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, "fmi3EnterInitializationMode", |i| {
            i.enter_initialization_mode_at(startTime, stop)
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: fmi3Instance) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe {
        with(c, "fmi3ExitInitializationMode", |i| {
            i.exit_initialization_mode()
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(c: fmi3Instance) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi3EnterEventMode", |i| i.enter_event_mode()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterStepMode(c: fmi3Instance) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi3EnterStepMode", |i| i.enter_step_mode()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(c: fmi3Instance) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi3Terminate", |i| i.terminate()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(c: fmi3Instance) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics.
    unsafe { with(c, "fmi3Reset", |i| i.reset()) }
}

/// Processes the event the last step stopped at; reports whether the
/// state jumped and the next scheduled event (a sampling instant).
///
/// # Safety
/// The output pointers must point to their types.
#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    c: fmi3Instance,
    discreteStatesNeedUpdate: *mut fmi3Boolean,
    terminateSimulation: *mut fmi3Boolean,
    nominalsOfContinuousStatesChanged: *mut fmi3Boolean,
    valuesOfContinuousStatesChanged: *mut fmi3Boolean,
    nextEventTimeDefined: *mut fmi3Boolean,
    nextEventTime: *mut fmi3Float64,
) -> fmi3Status {
    let flags = [
        discreteStatesNeedUpdate,
        terminateSimulation,
        nominalsOfContinuousStatesChanged,
        valuesOfContinuousStatesChanged,
        nextEventTimeDefined,
    ];
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the output pointers are checked for NULL.
    unsafe {
        with(c, "fmi3UpdateDiscreteStates", |i| {
            if flags.iter().any(|p| p.is_null()) || nextEventTime.is_null() {
                return i.error("fmi3UpdateDiscreteStates", "an output argument is NULL");
            }
            match i.update_discrete_states() {
                Ok(o) => {
                    let values = [
                        o.need_update,
                        o.terminate,
                        o.nominals_changed,
                        o.values_changed,
                        o.next_event_time.is_some(),
                    ];
                    for (p, v) in flags.into_iter().zip(values) {
                        put(p, v as u8);
                    }
                    put(nextEventTime, o.next_event_time.unwrap_or(0.0));
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}

/// Advances from `currentCommunicationPoint` by `communicationStepSize`,
/// returning early at the first event inside when the host allowed it.
///
/// # Safety
/// The output pointers must point to their types.
#[no_mangle]
pub unsafe extern "C" fn fmi3DoStep(
    c: fmi3Instance,
    currentCommunicationPoint: fmi3Float64,
    communicationStepSize: fmi3Float64,
    _noSetFMUStatePriorToCurrentPoint: fmi3Boolean,
    eventHandlingNeeded: *mut fmi3Boolean,
    terminateSimulation: *mut fmi3Boolean,
    earlyReturn: *mut fmi3Boolean,
    lastSuccessfulTime: *mut fmi3Float64,
) -> fmi3Status {
    let flags = [eventHandlingNeeded, terminateSimulation, earlyReturn];
    let (t, h) = (currentCommunicationPoint, communicationStepSize);
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the output pointers are checked for NULL.
    unsafe {
        with(c, "fmi3DoStep", |i| {
            if flags.iter().any(|p| p.is_null()) || lastSuccessfulTime.is_null() {
                return i.error("fmi3DoStep", "an output argument is NULL");
            }
            let (s, o) = i.step(t, h);
            let values = [o.event_handling_needed, o.terminate, o.early_return];
            for (p, v) in flags.into_iter().zip(values) {
                put(p, v as u8);
            }
            put(lastSuccessfulTime, o.last_successful_time);
            s
        })
    }
}

/// # Safety
/// `vr` must hold `nvr` elements, `value` `nValues`.
#[no_mangle]
pub unsafe extern "C" fn fmi3GetFloat64(
    c: fmi3Instance,
    vr: *const fmi3ValueReference,
    nvr: usize,
    value: *mut fmi3Float64,
    nValues: usize,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the arrays are checked for NULL.
    unsafe {
        with(c, "fmi3GetFloat64", |i| {
            ffi::get_real(i, vr, nvr, value, nValues)
        })
    }
}

/// # Safety
/// `vr` must hold `nvr` elements, `value` `nValues`.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(
    c: fmi3Instance,
    vr: *const fmi3ValueReference,
    nvr: usize,
    value: *const fmi3Float64,
    nValues: usize,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the arrays are checked for NULL.
    unsafe {
        with(c, "fmi3SetFloat64", |i| {
            ffi::set_real(i, vr, nvr, value, nValues)
        })
    }
}

/// Saves the complete state into a new handle (`*state` NULL), or into
/// `*state` when it is a handle of this instance.
///
/// # Safety
/// `state` must point to an `fmi3FMUState`.
#[no_mangle]
pub unsafe extern "C" fn fmi3GetFMUState(c: fmi3Instance, state: *mut fmi3FMUState) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // `state` is checked for NULL and its handle looked up.
    unsafe { with(c, "fmi3GetFMUState", |i| ffi::get_fmu_state(i, state)) }
}

/// Restores a state saved by this instance.
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetFMUState(c: fmi3Instance, state: fmi3FMUState) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the handle is looked up, never dereferenced.
    unsafe { with(c, "fmi3SetFMUState", |i| ffi::set_fmu_state(i, state)) }
}

/// Frees a state and sets `*state` to NULL; NULL is ignored.
///
/// # Safety
/// `state` must point to an `fmi3FMUState`.
#[no_mangle]
pub unsafe extern "C" fn fmi3FreeFMUState(c: fmi3Instance, state: *mut fmi3FMUState) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // `state` is checked for NULL and its handle looked up.
    unsafe { with(c, "fmi3FreeFMUState", |i| ffi::free_fmu_state(i, state)) }
}

/// # Safety
/// `size` must point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    c: fmi3Instance,
    state: fmi3FMUState,
    size: *mut usize,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL, the handle looked up.
    unsafe {
        with(c, "fmi3SerializedFMUStateSize", |i| {
            ffi::serialized_size(i, state, size)
        })
    }
}

/// # Safety
/// `bytes` must hold `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    c: fmi3Instance,
    state: fmi3FMUState,
    bytes: *mut fmi3Byte,
    size: usize,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL, the handle looked up.
    unsafe {
        with(c, "fmi3SerializeFMUState", |i| {
            ffi::serialize(i, state, bytes, size)
        })
    }
}

/// # Safety
/// `bytes` must hold `size` bytes; `state` must point to an `fmi3FMUState`.
#[no_mangle]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    c: fmi3Instance,
    bytes: *const fmi3Byte,
    size: usize,
    state: *mut fmi3FMUState,
) -> fmi3Status {
    // SAFETY: the contract above; `with` refuses NULL and catches panics,
    // the pointers are checked for NULL.
    unsafe {
        with(c, "fmi3DeserializeFMUState", |i| {
            ffi::deserialize(i, bytes, size, state)
        })
    }
}
