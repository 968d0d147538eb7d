//! The FMI 2.0 co-simulation entry points, exported with the C ABI under
//! their plain `fmi2*` names (the shared library of every exported FMU is
//! this one, copied as `binaries/linux64/<modelIdentifier>.so`).
//!
//! Each entry point checks its pointers (a NULL component, array, callback
//! or state is an `fmi2Error`, logged through the host's logger when there
//! is a component, on stderr when there is none), converts the C arguments
//! and calls [`Component`]. Every call runs under `catch_unwind`: a panic
//! never crosses the C boundary; it is logged as an internal error and the
//! instance moves to the error state. Instances share nothing, so several
//! can live in one process (and run on different threads).
//!
//! What cannot be checked: a pointer that is not NULL but was not returned
//! by this library (or was already freed) as a component. FMU-state
//! pointers, on the other hand, are checked against the states the
//! instance handed out.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::component::{Component, LogFn, Status};
use crate::config;
use crate::runner::{Runner, RunnerState, ScenarioRunner};

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
const ERROR: fmi2Status = Status::Error as fmi2Status;

/// The host's logger, with what it needs.
struct HostLogger {
    logger: fmi2CallbackLogger,
    env: fmi2ComponentEnvironment,
    name: CString,
}

// The environment pointer is the host's; the FMI standard lets the FMU call
// the logger from the thread that calls the FMU, which is what happens.
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

/// One instance as handed to the host.
struct Instance {
    comp: Component<ScenarioRunner>,
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Runs `f` on the instance behind `c`, catching panics.
unsafe fn with(
    c: fmi2Component,
    func: &'static str,
    f: impl FnOnce(&mut Component<ScenarioRunner>) -> Status,
) -> fmi2Status {
    if c.is_null() {
        eprintln!("nonsmooth FMU: {func}: the component is NULL");
        return ERROR;
    }
    let inst = c as *mut Instance;
    // SAFETY: a non-NULL component is one fmi2Instantiate returned.
    match catch_unwind(AssertUnwindSafe(|| f(unsafe { &mut (*inst).comp }))) {
        Ok(s) => s as fmi2Status,
        Err(p) => {
            let msg = panic_text(p.as_ref());
            let _ = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: as above; the closure's borrow has ended.
                unsafe { &mut (*inst).comp }.fail(func, &format!("internal error: {msg}"))
            }));
            ERROR
        }
    }
}

/// A slice from a C array; NULL is accepted only for n = 0.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: the host promises n elements at p.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

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

unsafe fn text(p: fmi2String) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the host passes a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
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
    // SAFETY: the host's arguments meet this entry point's `# Safety` contract; panics are caught here.
    let r = catch_unwind(AssertUnwindSafe(|| unsafe {
        instantiate(
            instanceName,
            fmuType,
            fmuGUID,
            fmuResourceLocation,
            functions,
            loggingOn,
        )
    }));
    match r {
        Ok(Some(c)) => c,
        Ok(None) => std::ptr::null_mut(),
        Err(p) => {
            eprintln!(
                "nonsmooth FMU: fmi2Instantiate: internal error: {}",
                panic_text(p.as_ref())
            );
            std::ptr::null_mut()
        }
    }
}

unsafe fn instantiate(
    instance_name: fmi2String,
    fmu_type: c_int,
    guid: fmi2String,
    resources: fmi2String,
    functions: *const fmi2CallbackFunctions,
    logging_on: fmi2Boolean,
) -> Option<fmi2Component> {
    if functions.is_null() {
        eprintln!("nonsmooth FMU: fmi2Instantiate: the callback functions are NULL");
        return None;
    }
    // SAFETY: non-NULL, points to the host's callback structure.
    let fns = unsafe { &*functions };
    let Some(logger) = fns.logger else {
        eprintln!("nonsmooth FMU: fmi2Instantiate: the logger callback is NULL");
        return None;
    };
    // SAFETY: the host passes NULL or a NUL-terminated string (`text` checks NULL).
    let name = unsafe { text(instance_name) };
    let host = HostLogger {
        logger,
        env: fns.componentEnvironment,
        name: CString::new(name.clone().unwrap_or_default().replace('\0', "")).unwrap_or_default(),
    };
    let fail = |m: &str| {
        host.log(
            Status::Error,
            "logStatusError",
            &format!("fmi2Instantiate: {m}"),
        );
        None
    };
    let Some(name) = name else {
        return fail("instanceName is NULL");
    };
    if name.is_empty() {
        return fail("instanceName is empty");
    }
    if fmu_type != CO_SIMULATION {
        return fail(&format!(
            "fmuType {fmu_type}: this FMU supports co-simulation (fmi2CoSimulation = 1) only"
        ));
    }
    // SAFETY: the host passes NULL or a NUL-terminated string (`text` checks NULL).
    let Some(guid) = (unsafe { text(guid) }) else {
        return fail("fmuGUID is NULL");
    };
    // SAFETY: the host passes NULL or a NUL-terminated string (`text` checks NULL).
    let Some(uri) = (unsafe { text(resources) }) else {
        return fail("fmuResourceLocation is NULL");
    };
    let dir = match config::resource_dir(&uri) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let (cfg, scenario_text, scenario_path) = match config::load(&dir) {
        Ok(x) => x,
        Err(e) => return fail(&e),
    };
    if cfg.guid != guid {
        return fail(&format!(
            "fmuGUID {guid} is not this FMU's GUID {} (modelDescription.xml and resources/ do not match)",
            cfg.guid
        ));
    }
    let make = {
        let cfg = cfg.clone();
        Box::new(move || config::make_runner(&cfg, &scenario_text, &scenario_path))
    };
    let log_fn: LogFn = {
        let host = HostLogger {
            logger: host.logger,
            env: host.env,
            name: host.name.clone(),
        };
        Box::new(move |status, cat, msg| host.log(status, cat, msg))
    };
    match Component::new(make, log_fn, logging_on != 0) {
        Ok(comp) => Some(Box::into_raw(Box::new(Instance { comp })) as fmi2Component),
        Err(e) => fail(&e.to_string()),
    }
}

/// Frees an instance and the FMU states it handed out. NULL is ignored.
///
/// # Safety
/// `c` must be NULL or an instance not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    if c.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: returned by fmi2Instantiate, freed once.
        let mut inst = unsafe { Box::from_raw(c as *mut Instance) };
        inst.comp.call(|| "fmi2FreeInstance".into());
        for s in inst.comp.handles_mut().take_all() {
            // SAFETY: the states this instance handed out and still owns.
            drop(unsafe { Box::from_raw(s as *mut RunnerState) });
        }
    }));
}

/// # Safety
/// `categories` must hold `nCategories` strings.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: fmi2Component,
    loggingOn: fmi2Boolean,
    nCategories: usize,
    categories: *const fmi2String,
) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SetDebugLogging", |comp| {
            let Some(cats) = slice(categories, nCategories) else {
                return comp.error("fmi2SetDebugLogging", "categories is NULL");
            };
            let mut names = Vec::with_capacity(cats.len());
            for &p in cats {
                match text(p) {
                    Some(s) => names.push(s),
                    None => return comp.error("fmi2SetDebugLogging", "a category is NULL"),
                }
            }
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            comp.set_debug_logging(loggingOn != 0, &refs)
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SetupExperiment", |comp| {
            comp.setup_experiment(startTime, (stopTimeDefined != 0).then_some(stopTime))
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2EnterInitializationMode", |comp| {
            comp.enter_initialization_mode()
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2ExitInitializationMode", |comp| {
            comp.exit_initialization_mode()
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe { with(c, "fmi2Terminate", |comp| comp.terminate()) }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe { with(c, "fmi2Reset", |comp| comp.reset()) }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetReal", |comp| {
            match (slice(vr, nvr), slice_mut(value, nvr)) {
                (Some(vr), Some(out)) => comp.get_real(vr, out),
                _ => comp.error("fmi2GetReal", "vr or value is NULL"),
            }
        })
    }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SetReal", |comp| {
            match (slice(vr, nvr), slice(value, nvr)) {
                (Some(vr), Some(v)) => comp.set_real(vr, v),
                _ => comp.error("fmi2SetReal", "vr or value is NULL"),
            }
        })
    }
}

macro_rules! no_such_type {
    ($name:ident, $label:literal, $t:ty) => {
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
            // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
            unsafe {
                with(c, $label, |comp| match slice(vr, nvr) {
                    Some(vr) => comp.no_such_type($label, vr),
                    None => comp.error($label, "vr is NULL"),
                })
            }
        }
    };
}

no_such_type!(fmi2GetInteger, "fmi2GetInteger", *mut fmi2Integer);
no_such_type!(fmi2GetBoolean, "fmi2GetBoolean", *mut fmi2Boolean);
no_such_type!(fmi2GetString, "fmi2GetString", *mut fmi2String);
no_such_type!(fmi2SetInteger, "fmi2SetInteger", *const fmi2Integer);
no_such_type!(fmi2SetBoolean, "fmi2SetBoolean", *const fmi2Boolean);
no_such_type!(fmi2SetString, "fmi2SetString", *const fmi2String);

/// Saves the complete state into a new handle, or into `*state` when it
/// is a handle of this instance.
///
/// # Safety
/// `state` must point to an `fmi2FMUstate`.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetFMUstate(c: fmi2Component, state: *mut fmi2FMUstate) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetFMUstate", |comp| {
            if state.is_null() {
                return comp.error("fmi2GetFMUstate", "FMUstate is NULL");
            }
            let current = *state;
            if current.is_null() {
                match comp.get_state(None) {
                    Ok(Some(s)) => {
                        let p = Box::into_raw(Box::new(s));
                        comp.handles_mut().register(p as usize);
                        *state = p as fmi2FMUstate;
                        Status::Ok
                    }
                    Ok(None) => Status::Ok,
                    Err(st) => st,
                }
            } else if comp.handles().owns(current as usize) {
                // SAFETY: a live state of this instance.
                let slot = &mut *(current as *mut RunnerState);
                match comp.get_state(Some(slot)) {
                    Ok(_) => Status::Ok,
                    Err(st) => st,
                }
            } else {
                comp.error(
                    "fmi2GetFMUstate",
                    "*FMUstate is neither NULL nor a state of this instance",
                )
            }
        })
    }
}

/// Restores a state saved by this instance.
///
/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, state: fmi2FMUstate) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SetFMUstate", |comp| {
            if state.is_null() {
                return comp.error("fmi2SetFMUstate", "FMUstate is NULL");
            }
            if !comp.handles().owns(state as usize) {
                return comp.error(
                    "fmi2SetFMUstate",
                    "FMUstate is not a state of this instance (freed, or from another one)",
                );
            }
            // SAFETY: a live state of this instance.
            let s = &*(state as *const RunnerState);
            comp.set_state(s)
        })
    }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2FreeFMUstate", |comp| {
            if state.is_null() || (*state).is_null() {
                return Status::Ok;
            }
            let p = *state;
            if !comp.handles_mut().unregister(p as usize) {
                return comp.error(
                    "fmi2FreeFMUstate",
                    "FMUstate is not a state of this instance (freed already, or from another one)",
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
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: fmi2Component,
    state: fmi2FMUstate,
    size: *mut usize,
) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SerializedFMUstateSize", |comp| {
            let f = "fmi2SerializedFMUstateSize";
            if size.is_null() || state.is_null() {
                return comp.error(f, "FMUstate or size is NULL");
            }
            if !comp.handles().owns(state as usize) {
                return comp.error(f, "FMUstate is not a state of this instance");
            }
            let s = &*(state as *const RunnerState);
            *size = comp.runner().serialize_state(s).len();
            Status::Ok
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SerializeFMUstate", |comp| {
            let f = "fmi2SerializeFMUstate";
            if bytes.is_null() || state.is_null() {
                return comp.error(f, "FMUstate or serializedState is NULL");
            }
            if !comp.handles().owns(state as usize) {
                return comp.error(f, "FMUstate is not a state of this instance");
            }
            let s = &*(state as *const RunnerState);
            let data = comp.runner().serialize_state(s);
            if data.len() > size {
                return comp.error(
                    f,
                    &format!(
                        "size {size} is too small: the state takes {} bytes (fmi2SerializedFMUstateSize)",
                        data.len()
                    ),
                );
            }
            std::ptr::copy_nonoverlapping(data.as_ptr(), bytes as *mut u8, data.len());
            Status::Ok
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2DeSerializeFMUstate", |comp| {
            let f = "fmi2DeSerializeFMUstate";
            if state.is_null() {
                return comp.error(f, "FMUstate is NULL");
            }
            let Some(data) = slice(bytes as *const u8, size) else {
                return comp.error(f, "serializedState is NULL");
            };
            let s = match comp.runner().deserialize_state(data) {
                Ok(s) => s,
                Err(e) => return comp.error(f, &e.to_string()),
            };
            let current = *state;
            if !current.is_null() && comp.handles().owns(current as usize) {
                *(current as *mut RunnerState) = s;
            } else {
                let p = Box::into_raw(Box::new(s));
                comp.handles_mut().register(p as usize);
                *state = p as fmi2FMUstate;
            }
            Status::Ok
        })
    }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetDirectionalDerivative", |comp| {
            comp.error(
                "fmi2GetDirectionalDerivative",
                "not provided by this FMU (providesDirectionalDerivative = false)",
            )
        })
    }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2SetRealInputDerivatives", |comp| {
            comp.error(
                "fmi2SetRealInputDerivatives",
                "inputs are held constant over a step (canInterpolateInputs = false)",
            )
        })
    }
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetRealOutputDerivatives", |comp| {
            comp.error(
                "fmi2GetRealOutputDerivatives",
                "output derivatives are not provided (maxOutputDerivativeOrder = 0)",
            )
        })
    }
}

/// Advances from `currentCommunicationPoint` by `communicationStepSize`.
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2DoStep", |comp| {
            comp.do_step(currentCommunicationPoint, communicationStepSize)
        })
    }
}

/// # Safety
/// `c` must be an instance.
#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe { with(c, "fmi2CancelStep", |comp| comp.cancel_step()) }
}

const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetStatus", |comp| {
            if value.is_null() {
                return comp.error("fmi2GetStatus", "value is NULL");
            }
            let st = comp.status_query("fmi2GetStatus");
            if st != Status::Ok {
                return st;
            }
            comp.error(
                "fmi2GetStatus",
                &format!(
                    "status kind {kind}: steps are never asynchronous, there is no step status"
                ),
            )
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetRealStatus", |comp| {
            if value.is_null() {
                return comp.error("fmi2GetRealStatus", "value is NULL");
            }
            let st = comp.status_query("fmi2GetRealStatus");
            if st != Status::Ok {
                return st;
            }
            if kind != LAST_SUCCESSFUL_TIME {
                return comp.error(
                    "fmi2GetRealStatus",
                    &format!(
                        "status kind {kind}: only fmi2LastSuccessfulTime (2) is a Real status"
                    ),
                );
            }
            *value = comp.last_successful_time();
            Status::Ok
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetIntegerStatus", |comp| {
            comp.error(
                "fmi2GetIntegerStatus",
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetBooleanStatus", |comp| {
            if value.is_null() {
                return comp.error("fmi2GetBooleanStatus", "value is NULL");
            }
            let st = comp.status_query("fmi2GetBooleanStatus");
            if st != Status::Ok {
                return st;
            }
            if kind != TERMINATED {
                return comp.error(
                    "fmi2GetBooleanStatus",
                    &format!("status kind {kind}: only fmi2Terminated (3) is a Boolean status"),
                );
            }
            *value = comp.terminated() as fmi2Boolean;
            Status::Ok
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
    // SAFETY: the host meets this entry point's `# Safety` contract (an instance from fmi2Instantiate, arrays of the stated lengths); `with` refuses a NULL instance and catches panics.
    unsafe {
        with(c, "fmi2GetStringStatus", |comp| {
            comp.error(
                "fmi2GetStringStatus",
                &format!("status kind {kind}: no step is ever pending, there is no String status"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::Phase;
    use crate::config::{make_runner, FmuConfig};
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
        let comp = Component::new(
            Box::new(move || make_runner(&cfg, &text, &path)),
            Box::new(move |_, _, m| sink.lock().unwrap().push(m.to_string())),
            false,
        )
        .unwrap();
        let c = Box::into_raw(Box::new(Instance { comp })) as fmi2Component;
        let status = unsafe { with(c, "fmi2DoStep", |_| panic!("boom")) };
        assert_eq!(status, ERROR);
        let msgs = log.lock().unwrap().clone();
        assert!(
            msgs.iter()
                .any(|m| m.contains("fmi2DoStep: internal error: boom")),
            "{msgs:?}"
        );
        let inst = unsafe { &*(c as *const Instance) };
        assert_eq!(inst.comp.phase(), Phase::Error);
        unsafe { fmi2FreeInstance(c) };
        // A NULL component is an error, not a crash.
        assert_eq!(
            unsafe { fmi2DoStep(std::ptr::null_mut(), 0.0, 1.0, 0) },
            ERROR
        );
    }
}
