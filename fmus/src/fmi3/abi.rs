//! The FMI 3.0 co-simulation entry points a host calls, with the C ABI.
//!
//! As for FMI 2.0 (`crate::fmi2`): each entry point checks its pointers (a
//! NULL instance, array or output pointer is an `fmi3Error`, logged through
//! the host's logger when there is an instance, on stderr when there is
//! none), converts the C arguments and calls [`Instance3`]; every call runs
//! under `catch_unwind`, so a panic never crosses the C boundary (it is
//! logged as an internal error and the instance moves to the error state).
//! `fmi3Boolean` arguments are read as bytes (any non-zero byte is true)
//! and written as 0 or 1.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::instance::Instance3;
use crate::component::{LogFn, Status};
use crate::config;
use crate::runner::{RunnerState, ScenarioRunner};

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

pub(super) const ERROR: fmi3Status = Status::Error as fmi3Status;

/// The host's logger.
struct HostLogger {
    logger: fmi3LogMessageCallback,
    env: fmi3InstanceEnvironment,
}

// The environment pointer is the host's; the FMU calls the logger from the
// thread that calls the FMU, as the standard allows.
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

/// One instance as handed to the host.
pub(super) struct Instance {
    pub(super) inst: Instance3<ScenarioRunner>,
}

pub(super) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Runs `f` on the instance behind `c`, catching panics.
///
/// # Safety
/// `c` must be NULL or an instance of this library not yet freed.
pub(super) unsafe fn with(
    c: fmi3Instance,
    func: &'static str,
    f: impl FnOnce(&mut Instance3<ScenarioRunner>) -> Status,
) -> fmi3Status {
    if c.is_null() {
        eprintln!("nonsmooth FMU: {func}: the instance is NULL");
        return ERROR;
    }
    let inst = c as *mut Instance;
    // SAFETY: a non-NULL instance is one fmi3InstantiateCoSimulation returned.
    match catch_unwind(AssertUnwindSafe(|| f(unsafe { &mut (*inst).inst }))) {
        Ok(s) => s as fmi3Status,
        Err(p) => {
            let msg = panic_text(p.as_ref());
            let _ = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: as above; the closure's borrow has ended.
                unsafe { &mut (*inst).inst }.fail(func, &format!("internal error: {msg}"))
            }));
            ERROR
        }
    }
}

/// A slice from a C array; NULL is accepted only for n = 0.
///
/// # Safety
/// `p` must hold `n` elements when not NULL.
pub(super) unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: the host promises n elements at p.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// # Safety
/// `p` must hold `n` elements when not NULL.
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        Some(&mut [])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: the host promises n elements at p.
        Some(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }
}

/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn text(p: fmi3String) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the host passes a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// "3.0".
#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
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
    // SAFETY: the host's arguments meet this entry point's `# Safety`
    // contract; panics are caught here.
    let r = catch_unwind(AssertUnwindSafe(|| unsafe {
        instantiate(
            instanceName,
            instantiationToken,
            resourcePath,
            loggingOn != 0,
            eventModeUsed != 0,
            earlyReturnAllowed != 0,
            instanceEnvironment,
            logMessage,
        )
    }));
    match r {
        Ok(Some(c)) => c,
        Ok(None) => std::ptr::null_mut(),
        Err(p) => {
            eprintln!(
                "nonsmooth FMU: fmi3InstantiateCoSimulation: internal error: {}",
                panic_text(p.as_ref())
            );
            std::ptr::null_mut()
        }
    }
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

#[allow(clippy::too_many_arguments)]
unsafe fn instantiate(
    instance_name: fmi3String,
    token: fmi3String,
    resources: fmi3String,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    env: fmi3InstanceEnvironment,
    logger: Option<fmi3LogMessageCallback>,
) -> Option<fmi3Instance> {
    let f = "fmi3InstantiateCoSimulation";
    let host = logger.map(|logger| HostLogger { logger, env });
    let fail = |m: &str| {
        match &host {
            Some(h) => h.log(Status::Error, "logStatusError", &format!("{f}: {m}")),
            None => eprintln!("nonsmooth FMU: {f}: {m}"),
        }
        None
    };
    // SAFETY: the host passes NULL or NUL-terminated strings (`text` checks NULL).
    let (name, token, resources) = unsafe { (text(instance_name), text(token), text(resources)) };
    let Some(name) = name else {
        return fail("instanceName is NULL");
    };
    if name.is_empty() {
        return fail("instanceName is empty");
    }
    let Some(token) = token else {
        return fail("instantiationToken is NULL");
    };
    let Some(path) = resources else {
        return fail("resourcePath is NULL");
    };
    let dir = match resource_dir(&path) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let (cfg, scenario_text, scenario_path) = match config::load(&dir) {
        Ok(x) => x,
        Err(e) => return fail(&e),
    };
    if cfg.guid != token {
        return fail(&format!(
            "instantiationToken {token} is not this FMU's token {} (modelDescription.xml and resources/ do not match)",
            cfg.guid
        ));
    }
    if cfg.fmi_version != 3 {
        return fail("this FMU was exported for FMI 2.0 (use the fmi2 entry points)");
    }
    let make = {
        let cfg = cfg.clone();
        Box::new(move || config::make_runner(&cfg, &scenario_text, &scenario_path))
    };
    let log_fn: LogFn = match host {
        Some(h) => Box::new(move |status, cat, msg| h.log(status, cat, msg)),
        None => Box::new(|status, cat, msg| {
            if status != Status::Ok {
                eprintln!("nonsmooth FMU [{cat}]: {msg}");
            }
        }),
    };
    match Instance3::new(
        make,
        log_fn,
        logging_on,
        event_mode_used,
        early_return_allowed,
    ) {
        Ok(inst) => Some(Box::into_raw(Box::new(Instance { inst })) as fmi3Instance),
        Err(e) => {
            eprintln!("nonsmooth FMU: {f}: {e}");
            None
        }
    }
}

/// Frees an instance and the FMU states it handed out. NULL is ignored.
///
/// # Safety
/// `c` must be NULL or an instance not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(c: fmi3Instance) {
    if c.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: returned by fmi3InstantiateCoSimulation, freed once.
        let mut inst = unsafe { Box::from_raw(c as *mut Instance) };
        inst.inst.call(|| "fmi3FreeInstance".into());
        for s in inst.inst.handles_mut().take_all() {
            // SAFETY: the states this instance handed out and still owns.
            drop(unsafe { Box::from_raw(s as *mut RunnerState) });
        }
    }));
}

/// # Safety
/// `categories` must hold `nCategories` strings.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    c: fmi3Instance,
    loggingOn: fmi3Boolean,
    nCategories: usize,
    categories: *const fmi3String,
) -> fmi3Status {
    // SAFETY: the host meets this entry point's `# Safety` contract; `with`
    // refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi3SetDebugLogging", |inst| {
            let Some(cats) = slice(categories, nCategories) else {
                return inst.error("fmi3SetDebugLogging", "categories is NULL");
            };
            let mut names = Vec::with_capacity(cats.len());
            for &p in cats {
                match text(p) {
                    Some(s) => names.push(s),
                    None => return inst.error("fmi3SetDebugLogging", "a category is NULL"),
                }
            }
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            inst.set_debug_logging(loggingOn != 0, &refs)
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
    // SAFETY: see `with`.
    unsafe {
        with(c, "fmi3EnterInitializationMode", |inst| {
            inst.enter_initialization_mode(startTime, (stopTimeDefined != 0).then_some(stopTime))
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: fmi3Instance) -> fmi3Status {
    // SAFETY: see `with`.
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
    // SAFETY: see `with`.
    unsafe { with(c, "fmi3EnterEventMode", |i| i.enter_event_mode()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3EnterStepMode(c: fmi3Instance) -> fmi3Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi3EnterStepMode", |i| i.enter_step_mode()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(c: fmi3Instance) -> fmi3Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi3Terminate", |i| i.terminate()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(c: fmi3Instance) -> fmi3Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi3Reset", |i| i.reset()) }
}

/// Writes a boolean output when its pointer is not NULL.
///
/// # Safety
/// `p` must be NULL or point to an fmi3Boolean.
unsafe fn put_bool(p: *mut fmi3Boolean, v: bool) {
    if !p.is_null() {
        // SAFETY: non-NULL, the host's variable.
        unsafe { *p = v as u8 };
    }
}

/// # Safety
/// `p` must be NULL or point to an fmi3Float64.
unsafe fn put_f64(p: *mut fmi3Float64, v: f64) {
    if !p.is_null() {
        // SAFETY: non-NULL, the host's variable.
        unsafe { *p = v };
    }
}

/// Events are processed when a step reaches them; reports the next
/// scheduled event (sampling instant).
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
    // SAFETY: see `with`; the output pointers are checked for NULL.
    unsafe {
        with(c, "fmi3UpdateDiscreteStates", |inst| {
            let outs = [
                discreteStatesNeedUpdate,
                terminateSimulation,
                nominalsOfContinuousStatesChanged,
                valuesOfContinuousStatesChanged,
                nextEventTimeDefined,
            ];
            if outs.iter().any(|p| p.is_null()) || nextEventTime.is_null() {
                return inst.error("fmi3UpdateDiscreteStates", "an output argument is NULL");
            }
            match inst.update_discrete_states() {
                Ok(o) => {
                    put_bool(discreteStatesNeedUpdate, o.need_update);
                    put_bool(terminateSimulation, o.terminate);
                    put_bool(nominalsOfContinuousStatesChanged, o.nominals_changed);
                    put_bool(valuesOfContinuousStatesChanged, o.values_changed);
                    put_bool(nextEventTimeDefined, o.next_event_time.is_some());
                    put_f64(nextEventTime, o.next_event_time.unwrap_or(0.0));
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
    // SAFETY: see `with`; the output pointers are checked for NULL.
    unsafe {
        with(c, "fmi3DoStep", |inst| {
            if eventHandlingNeeded.is_null()
                || terminateSimulation.is_null()
                || earlyReturn.is_null()
                || lastSuccessfulTime.is_null()
            {
                return inst.error("fmi3DoStep", "an output argument is NULL");
            }
            let (s, o) = inst.do_step(currentCommunicationPoint, communicationStepSize);
            put_bool(eventHandlingNeeded, o.event_handling_needed);
            put_bool(terminateSimulation, o.terminate);
            put_bool(earlyReturn, o.early_return);
            put_f64(lastSuccessfulTime, o.last_successful_time);
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
    // SAFETY: see `with`; arrays of the stated lengths, NULL refused.
    unsafe {
        with(c, "fmi3GetFloat64", |inst| {
            match (slice(vr, nvr), slice_mut(value, nValues)) {
                (Some(vr), Some(out)) => inst.get_float64(vr, out),
                _ => inst.error("fmi3GetFloat64", "valueReferences or values is NULL"),
            }
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
    // SAFETY: see `with`; arrays of the stated lengths, NULL refused.
    unsafe {
        with(c, "fmi3SetFloat64", |inst| {
            match (slice(vr, nvr), slice(value, nValues)) {
                (Some(vr), Some(v)) => inst.set_float64(vr, v),
                _ => inst.error("fmi3SetFloat64", "valueReferences or values is NULL"),
            }
        })
    }
}

/// Saves the complete state into a new handle, or into `*state` when it is
/// a handle of this instance.
///
/// # Safety
/// `state` must point to an `fmi3FMUState`.
#[no_mangle]
pub unsafe extern "C" fn fmi3GetFMUState(c: fmi3Instance, state: *mut fmi3FMUState) -> fmi3Status {
    // SAFETY: see `with`; `state` is checked for NULL, handles against this
    // instance's.
    unsafe {
        with(c, "fmi3GetFMUState", |inst| {
            if state.is_null() {
                return inst.error("fmi3GetFMUState", "FMUState is NULL");
            }
            let current = *state;
            if !current.is_null() && inst.handles().owns(current as usize) {
                let slot = &mut *(current as *mut RunnerState);
                return match inst.get_state(Some(slot)) {
                    Ok(_) => Status::Ok,
                    Err(s) => s,
                };
            }
            match inst.get_state(None) {
                Ok(Some(s)) => {
                    let p = Box::into_raw(Box::new(s));
                    inst.handles_mut().register(p as usize);
                    *state = p as fmi3FMUState;
                    Status::Ok
                }
                Ok(None) => inst.error("fmi3GetFMUState", "no state was produced"),
                Err(s) => s,
            }
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi3SetFMUState(c: fmi3Instance, state: fmi3FMUState) -> fmi3Status {
    // SAFETY: see `with`; the handle is checked against this instance's.
    unsafe {
        with(c, "fmi3SetFMUState", |inst| {
            if state.is_null() {
                return inst.error("fmi3SetFMUState", "FMUState is NULL");
            }
            if !inst.handles().owns(state as usize) {
                return inst.error(
                    "fmi3SetFMUState",
                    "FMUState is not a state of this instance (freed, or from another one)",
                );
            }
            // SAFETY: a live state of this instance.
            let s = &*(state as *const RunnerState);
            inst.set_state(s)
        })
    }
}

/// Frees a state and sets `*state` to NULL; NULL is ignored.
///
/// # Safety
/// `state` must point to an `fmi3FMUState`.
#[no_mangle]
pub unsafe extern "C" fn fmi3FreeFMUState(c: fmi3Instance, state: *mut fmi3FMUState) -> fmi3Status {
    // SAFETY: see `with`; the handle is checked against this instance's.
    unsafe {
        with(c, "fmi3FreeFMUState", |inst| {
            if state.is_null() || (*state).is_null() {
                return Status::Ok;
            }
            let p = *state;
            if !inst.handles_mut().unregister(p as usize) {
                return inst.error(
                    "fmi3FreeFMUState",
                    "FMUState is not a state of this instance (freed already, or from another one)",
                );
            }
            // SAFETY: registered, so created by Box::into_raw here.
            drop(Box::from_raw(p as *mut RunnerState));
            *state = std::ptr::null_mut();
            Status::Ok
        })
    }
}

/// # Safety
/// `size` must point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    c: fmi3Instance,
    state: fmi3FMUState,
    size: *mut usize,
) -> fmi3Status {
    // SAFETY: see `with`; pointers checked, the handle against this instance's.
    unsafe {
        with(c, "fmi3SerializedFMUStateSize", |inst| {
            let f = "fmi3SerializedFMUStateSize";
            if size.is_null() || state.is_null() {
                return inst.error(f, "FMUState or size is NULL");
            }
            if !inst.handles().owns(state as usize) {
                return inst.error(f, "FMUState is not a state of this instance");
            }
            let s = &*(state as *const RunnerState);
            *size = crate::runner::Runner::serialize_state(inst.runner(), s).len();
            Status::Ok
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
    // SAFETY: see `with`; pointers checked, the handle against this instance's.
    unsafe {
        with(c, "fmi3SerializeFMUState", |inst| {
            let f = "fmi3SerializeFMUState";
            if bytes.is_null() || state.is_null() {
                return inst.error(f, "FMUState or serializedState is NULL");
            }
            if !inst.handles().owns(state as usize) {
                return inst.error(f, "FMUState is not a state of this instance");
            }
            let s = &*(state as *const RunnerState);
            let data = crate::runner::Runner::serialize_state(inst.runner(), s);
            if data.len() > size {
                return inst.error(
                    f,
                    &format!(
                        "size {size} is too small: the state takes {} bytes (fmi3SerializedFMUStateSize)",
                        data.len()
                    ),
                );
            }
            std::ptr::copy_nonoverlapping(data.as_ptr(), bytes, data.len());
            Status::Ok
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
    // SAFETY: see `with`; pointers checked, the handle against this instance's.
    unsafe {
        with(c, "fmi3DeserializeFMUState", |inst| {
            let f = "fmi3DeserializeFMUState";
            if state.is_null() {
                return inst.error(f, "FMUState is NULL");
            }
            let Some(data) = slice(bytes, size) else {
                return inst.error(f, "serializedState is NULL");
            };
            let s = match crate::runner::Runner::deserialize_state(inst.runner(), data) {
                Ok(s) => s,
                Err(e) => return inst.error(f, &e.to_string()),
            };
            let current = *state;
            if !current.is_null() && inst.handles().owns(current as usize) {
                *(current as *mut RunnerState) = s;
            } else {
                let p = Box::into_raw(Box::new(s));
                inst.handles_mut().register(p as usize);
                *state = p as fmi3FMUState;
            }
            Status::Ok
        })
    }
}
