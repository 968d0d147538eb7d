//! What the FMI 2.0 and 3.0 C layers share: running a call on an instance
//! behind a C pointer with panics caught, C arrays and strings as Rust
//! values, and instantiation from the FMU's resources/ folder. Each entry
//! point of `crate::fmi2` and `crate::fmi3::abi` is a few lines over these.
//!
//! What cannot be checked: a pointer that is not NULL but was not returned
//! by this library (or was already freed) as an instance. FMU-state
//! pointers, on the other hand, are looked up among the states the instance
//! handed out and never dereferenced (`crate::instance`).

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::config;
use crate::instance::{Call, Instance, LogFn, Standard, Status};
use crate::runner::ScenarioRunner;

/// The instance behind the C pointer of either standard.
pub type Fmu = Instance<ScenarioRunner>;

/// The status code of an error, as returned through the C ABI.
pub const ERROR: i32 = Status::Error as i32;

/// The text of a panic payload.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Runs `f` on the instance behind `c`, catching panics: a NULL instance is
/// an error (on stderr: there is no logger); a panic is logged as an
/// internal error and leaves the instance in its error phase.
///
/// # Safety
/// `c` must be NULL or an instance of this library not yet freed.
#[inline(always)]
pub unsafe fn with(c: *mut c_void, func: &'static str, f: impl FnOnce(&mut Fmu) -> Status) -> i32 {
    if c.is_null() {
        eprintln!("nonsmooth FMU: {func}: the instance is NULL");
        return ERROR;
    }
    let inst = c as *mut Fmu;
    // SAFETY: a non-NULL instance is one the instantiation returned (the
    // caller's contract), alive and used by one thread at a time.
    match catch_unwind(AssertUnwindSafe(|| f(unsafe { &mut *inst }))) {
        Ok(s) => s as i32,
        Err(p) => {
            let msg = panic_text(p.as_ref());
            let _ = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: as above; the closure's borrow has ended.
                unsafe { &mut *inst }.fail(func, &format!("internal error: {msg}"))
            }));
            ERROR
        }
    }
}

/// Moves a new instance behind a C pointer.
pub fn into_c(inst: Fmu) -> *mut c_void {
    Box::into_raw(Box::new(inst)) as *mut c_void
}

/// Frees the instance behind `c` (with the FMU states it still holds);
/// NULL is ignored.
///
/// # Safety
/// `c` must be NULL or an instance of this library not yet freed.
pub unsafe fn free(c: *mut c_void, call: Call) {
    if c.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: returned by `into_c`, freed once (the caller's contract).
        let inst = unsafe { Box::from_raw(c as *mut Fmu) };
        inst.call(|| inst.name(call).into());
    }));
}

/// A slice from a C array; NULL is accepted only for n = 0.
///
/// # Safety
/// `p` must hold `n` elements when not NULL.
pub unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: the host promises n elements at p.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// A mutable slice from a C array; NULL is accepted only for n = 0.
///
/// # Safety
/// `p` must hold `n` elements when not NULL.
pub unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        Some(&mut [])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: the host promises n elements at p.
        Some(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }
}

/// A C string; None for NULL.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub unsafe fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the host passes a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// Writes `v` where `p` points, when it is not NULL.
///
/// # Safety
/// `p` must be NULL or point to a `T`.
pub unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL, the host's variable.
        unsafe { *p = v };
    }
}

/// SetDebugLogging with C arguments: the categories array and its strings
/// are checked for NULL.
///
/// # Safety
/// `categories` must be NULL or hold `n` pointers, each NULL or a string.
pub unsafe fn set_debug_logging(
    inst: &mut Fmu,
    on: bool,
    n: usize,
    categories: *const *const c_char,
) -> Status {
    let f = inst.name(Call::SetDebugLogging);
    // SAFETY: the caller's contract.
    let Some(cats) = (unsafe { slice(categories, n) }) else {
        return inst.error(f, "categories is NULL");
    };
    let mut names = Vec::with_capacity(cats.len());
    for &p in cats {
        // SAFETY: the caller's contract.
        match unsafe { text(p) } {
            Some(s) => names.push(s),
            None => return inst.error(f, "a category is NULL"),
        }
    }
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    inst.set_debug_logging(on, &refs)
}

/// What a host gives at instantiation, besides its logger.
pub struct Instantiation {
    /// The standard of the entry point called.
    pub standard: Standard,
    /// The instance name (checked: not NULL, not empty).
    pub name: Option<String>,
    /// The GUID (FMI 2.0) or instantiation token (FMI 3.0).
    pub token: Option<String>,
    /// The resources folder, or why it cannot be found.
    pub resources: Option<Result<PathBuf, String>>,
    /// loggingOn.
    pub logging_on: bool,
    /// FMI 3.0: eventModeUsed.
    pub event_mode_used: bool,
    /// FMI 3.0: earlyReturnAllowed.
    pub early_return_allowed: bool,
}

/// Builds the instance the host asks for from the FMU's resources/ folder:
/// the token must be the export's, and the entry points those of the FMI
/// version exported. The error says what is wrong.
pub fn instantiate(host: Instantiation, log_fn: LogFn) -> Result<Fmu, String> {
    let (guid, version) = match host.standard {
        Standard::Fmi2 => ("fmuGUID", 2),
        Standard::Fmi3 => ("instantiationToken", 3),
    };
    match host.name.as_deref() {
        None => return Err("instanceName is NULL".into()),
        Some("") => return Err("instanceName is empty".into()),
        Some(_) => {}
    }
    let token = host.token.ok_or_else(|| format!("{guid} is NULL"))?;
    let dir = host
        .resources
        .ok_or_else(|| "the resource location is NULL".to_string())??;
    let (cfg, scenario_text, scenario_path) = config::load(&dir)?;
    if cfg.guid != token {
        return Err(format!(
            "{guid} {token} is not this FMU's {} (modelDescription.xml and resources/ do not match)",
            cfg.guid
        ));
    }
    if cfg.fmi_version != version {
        return Err(format!(
            "this FMU was exported for FMI {}.0: use its fmi{} entry points",
            cfg.fmi_version, cfg.fmi_version
        ));
    }
    let make = Box::new(move || config::make_runner(&cfg, &scenario_text, &scenario_path));
    let made = match host.standard {
        Standard::Fmi2 => Instance::fmi2(make, log_fn, host.logging_on),
        Standard::Fmi3 => Instance::fmi3(
            make,
            log_fn,
            host.logging_on,
            host.event_mode_used,
            host.early_return_allowed,
        ),
    };
    made.map_err(|e| e.to_string())
}

/// GetFMUState: `*state` NULL saves into a new state, a state of this
/// instance is overwritten; the handle is written back.
///
/// # Safety
/// `state` must be NULL or point to a state pointer.
pub unsafe fn get_fmu_state(inst: &mut Fmu, state: *mut *mut c_void) -> Status {
    if state.is_null() {
        return inst.error(inst.name(Call::GetFmuState), "FMUstate is NULL");
    }
    // SAFETY: non-NULL, the host's variable.
    let slot = unsafe { *state } as usize;
    match inst.get_fmu_state(slot) {
        Ok(handle) => {
            // SAFETY: as above.
            unsafe { *state = handle as *mut c_void };
            Status::Ok
        }
        Err(s) => s,
    }
}

/// SetFMUState of a handle (looked up, never dereferenced).
pub fn set_fmu_state(inst: &mut Fmu, state: *mut c_void) -> Status {
    if state.is_null() {
        return inst.error(inst.name(Call::SetFmuState), "FMUstate is NULL");
    }
    inst.set_fmu_state(state as usize)
}

/// FreeFMUState: frees the state and sets `*state` to NULL; NULL is
/// ignored.
///
/// # Safety
/// `state` must be NULL or point to a state pointer.
pub unsafe fn free_fmu_state(inst: &mut Fmu, state: *mut *mut c_void) -> Status {
    if state.is_null() {
        return Status::Ok;
    }
    // SAFETY: non-NULL, the host's variable.
    let handle = unsafe { *state } as usize;
    let s = inst.free_fmu_state(handle);
    if s == Status::Ok {
        // SAFETY: as above.
        unsafe { *state = std::ptr::null_mut() };
    }
    s
}

/// SerializedFMUStateSize into `*size`.
///
/// # Safety
/// `size` must be NULL or point to a `size_t`.
pub unsafe fn serialized_size(inst: &mut Fmu, state: *mut c_void, size: *mut usize) -> Status {
    if size.is_null() || state.is_null() {
        return inst.error(inst.name(Call::SerializedSize), "FMUstate or size is NULL");
    }
    match inst.serialized_state_size(state as usize) {
        Ok(n) => {
            // SAFETY: non-NULL, the host's variable.
            unsafe { *size = n };
            Status::Ok
        }
        Err(s) => s,
    }
}

/// SerializeFMUState into the host's `size` bytes.
///
/// # Safety
/// `bytes` must be NULL or hold `size` bytes.
pub unsafe fn serialize(inst: &mut Fmu, state: *mut c_void, bytes: *mut u8, size: usize) -> Status {
    let f = inst.name(Call::Serialize);
    if bytes.is_null() || state.is_null() {
        return inst.error(f, "FMUstate or serializedState is NULL");
    }
    // SAFETY: non-NULL, `size` bytes (the caller's contract).
    let out = unsafe { std::slice::from_raw_parts_mut(bytes, size) };
    inst.serialize_fmu_state(state as usize, out)
}

/// DeserializeFMUState: into `*state` when it is a state of this instance,
/// else into a new one whose handle is written back.
///
/// # Safety
/// `bytes` must be NULL or hold `size` bytes; `state` NULL or point to a
/// state pointer.
pub unsafe fn deserialize(
    inst: &mut Fmu,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    let f = inst.name(Call::Deserialize);
    if state.is_null() {
        return inst.error(f, "FMUstate is NULL");
    }
    // SAFETY: the caller's contract.
    let Some(data) = (unsafe { slice(bytes, size) }) else {
        return inst.error(f, "serializedState is NULL");
    };
    // SAFETY: non-NULL, the host's variable.
    let slot = unsafe { *state } as usize;
    match inst.deserialize_fmu_state(data, slot) {
        Ok(handle) => {
            // SAFETY: as above.
            unsafe { *state = handle as *mut c_void };
            Status::Ok
        }
        Err(s) => s,
    }
}

/// GetReal / GetFloat64 with C arrays (NULL refused unless empty).
///
/// # Safety
/// `vr` must hold `nvr` elements and `values` `nvalues`, when not NULL.
pub unsafe fn get_real(
    inst: &mut Fmu,
    vr: *const u32,
    nvr: usize,
    values: *mut f64,
    nvalues: usize,
) -> Status {
    // SAFETY: the caller's contract.
    match unsafe { (slice(vr, nvr), slice_mut(values, nvalues)) } {
        (Some(vr), Some(out)) => inst.get_real(vr, out),
        _ => inst.error(inst.name(Call::GetReal), "vr or value is NULL"),
    }
}

/// SetReal / SetFloat64 with C arrays (NULL refused unless empty).
///
/// # Safety
/// `vr` must hold `nvr` elements and `values` `nvalues`, when not NULL.
pub unsafe fn set_real(
    inst: &mut Fmu,
    vr: *const u32,
    nvr: usize,
    values: *const f64,
    nvalues: usize,
) -> Status {
    // SAFETY: the caller's contract.
    match unsafe { (slice(vr, nvr), slice(values, nvalues)) } {
        (Some(vr), Some(v)) => inst.set_real(vr, v),
        _ => inst.error(inst.name(Call::SetReal), "vr or value is NULL"),
    }
}

/// A getter or setter of a type these FMUs have no variables of (`func`).
///
/// # Safety
/// `vr` must hold `nvr` elements when not NULL.
pub unsafe fn no_such_type(inst: &mut Fmu, func: &str, vr: *const u32, nvr: usize) -> Status {
    // SAFETY: the caller's contract.
    match unsafe { slice(vr, nvr) } {
        Some(vrs) => inst.no_such_type(func, vrs),
        None => inst.error(func, "vr is NULL"),
    }
}
