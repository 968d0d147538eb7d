//! FMI 3.0 co-simulation import: the description read through the `fmi`
//! crate's FMI 3.0 schema (fmi-schema 0.7, feature `fmi3`), the binary
//! called through its generated FMI 3.0 bindings (`fmi::fmi3::binding`,
//! fmi-sys). The crate's own FMI 3.0 instance is not used: in fmi 0.7 it
//! has no FMU state calls (fmi3GetFMUState / SetFMUState / Serialize are
//! compiled out) and keeps its instance pointer private, so this module
//! is a thin loader of its own over the same bindings (docs/cosimulation.md,
//! "Limits of the `fmi` crate").
//!
//! Array variables are exposed element by element, named
//! `name[i]` (1-based; `name[i,j]` for two dimensions, row-major as FMI 3.0
//! stores them), each with the array's value reference and its place in
//! the array ([`super::Element`]). Dimensions given by structural
//! parameters take the parameters' start values (structural parameters
//! cannot be set).

use std::ffi::{CStr, CString};
use std::path::Path;

use fmi::fmi3::binding as b;
use fmi::fmi3::schema as s;
use fmi::schema::fmi3::{
    AbstractVariableTrait, ArrayableVariableTrait, InitializableVariableTrait,
};

use super::description::{
    Capabilities, Description, Element, Start, VarCausality, VarType, VarVariability, Variable,
};

/// The platform folder of this machine in an FMI 3.0 archive.
pub(crate) fn platform_folder() -> Option<&'static str> {
    fmi::fmi3::platform_folder(std::env::consts::OS, std::env::consts::ARCH).ok()
}

fn causality(c: &s::Causality) -> VarCausality {
    match c {
        s::Causality::Parameter => VarCausality::Parameter,
        // Structural parameters size arrays; they keep their start values.
        s::Causality::CalculatedParameter | s::Causality::StructuralParameter => {
            VarCausality::CalculatedParameter
        }
        s::Causality::Input => VarCausality::Input,
        s::Causality::Output => VarCausality::Output,
        s::Causality::Local | s::Causality::Dependent => VarCausality::Local,
        s::Causality::Independent => VarCausality::Independent,
    }
}

fn variability(v: &s::Variability) -> VarVariability {
    match v {
        s::Variability::Constant => VarVariability::Constant,
        s::Variability::Fixed => VarVariability::Fixed,
        s::Variability::Tunable => VarVariability::Tunable,
        s::Variability::Discrete => VarVariability::Discrete,
        s::Variability::Continuous => VarVariability::Continuous,
    }
}

/// The start value of a structural parameter of value reference `vr`
/// (an unsigned or signed integer).
fn structural_start(md: &s::Fmi3ModelDescription, vr: u32) -> Option<u64> {
    md.model_variables.variables.iter().find_map(|v| match v {
        s::Variable::UInt64(x) if x.value_reference() == vr => {
            x.start().and_then(|s| s.first().copied())
        }
        s::Variable::UInt32(x) if x.value_reference() == vr => {
            x.start().and_then(|s| s.first().map(|&y| u64::from(y)))
        }
        s::Variable::Int32(x) if x.value_reference() == vr => x
            .start()
            .and_then(|s| s.first().and_then(|&y| u64::try_from(y).ok())),
        s::Variable::Int64(x) if x.value_reference() == vr => x
            .start()
            .and_then(|s| s.first().and_then(|&y| u64::try_from(y).ok())),
        _ => None,
    })
}

/// The sizes of an array variable's dimensions.
fn dims(md: &s::Fmi3ModelDescription, d: &[s::Dimension], name: &str) -> Result<Vec<u64>, String> {
    d.iter()
        .map(|d| match d {
            s::Dimension::Fixed(n) => Ok(*n),
            s::Dimension::Variable(vr) => structural_start(md, *vr).ok_or_else(|| {
                format!(
                    "variable '{name}': its dimension is the structural parameter of value \
                     reference {vr}, which has no integer start value"
                )
            }),
        })
        .collect()
}

/// The element names of an array of dimensions `sizes`, row-major.
fn element_names(name: &str, sizes: &[u64]) -> Vec<String> {
    let total: u64 = sizes.iter().product();
    (0..total)
        .map(|mut flat| {
            let mut idx = vec![0u64; sizes.len()];
            for (k, n) in sizes.iter().enumerate().rev() {
                idx[k] = flat % n + 1;
                flat /= n;
            }
            let idx: Vec<String> = idx.iter().map(u64::to_string).collect();
            format!("{name}[{}]", idx.join(","))
        })
        .collect()
}

/// Pushes the variables of one FMI 3.0 variable (one, or one per element
/// of an array).
fn push<V: ArrayableVariableTrait>(
    md: &s::Fmi3ModelDescription,
    out: &mut Vec<Variable>,
    v: &V,
    kind: VarType,
    starts: Vec<Start>,
    unit: Option<String>,
) -> Result<(), String> {
    let base = Variable {
        name: v.name().to_string(),
        value_reference: v.value_reference(),
        causality: causality(&v.causality()),
        variability: variability(&v.variability()),
        kind,
        start: starts.first().cloned(),
        description: v.description().map(str::to_string),
        unit,
        element: None,
    };
    if v.dimensions().is_empty() {
        out.push(base);
        return Ok(());
    }
    let sizes = dims(md, v.dimensions(), v.name())?;
    let names = element_names(v.name(), &sizes);
    let len = names.len() as u32;
    for (i, name) in names.into_iter().enumerate() {
        out.push(Variable {
            name,
            start: if starts.len() == len as usize {
                Some(starts[i].clone())
            } else {
                starts.first().cloned()
            },
            element: Some(Element {
                index: i as u32,
                len,
            }),
            ..base.clone()
        });
    }
    Ok(())
}

/// The description of an FMI 3.0 model description with a co-simulation
/// interface: Float64 (as reals), Int32 (integers), Boolean; other types
/// are listed as not exchanged.
pub(crate) fn description(
    md: &s::Fmi3ModelDescription,
    cs: &s::Fmi3CoSimulation,
) -> Result<Description, String> {
    let unit_of = |declared: Option<&str>| -> Option<String> {
        let name = declared?;
        md.type_definitions
            .as_ref()?
            .type_definitions
            .iter()
            .find_map(|t| match t {
                s::TypeDefinition::Float64(f) if f.name == name => f.unit.clone(),
                _ => None,
            })
    };
    let mut variables = Vec::new();
    for v in &md.model_variables.variables {
        match v {
            s::Variable::Float64(x) => {
                let starts = x
                    .start()
                    .map(|s| s.iter().map(|&y| Start::Real(y)).collect())
                    .unwrap_or_default();
                let unit = unit_of(x.declared_type.as_deref());
                push(md, &mut variables, x, VarType::Real, starts, unit)?;
            }
            s::Variable::Int32(x) => {
                let starts = x
                    .start()
                    .map(|s| s.iter().map(|&y| Start::Integer(y)).collect())
                    .unwrap_or_default();
                push(md, &mut variables, x, VarType::Integer, starts, None)?;
            }
            s::Variable::Boolean(x) => {
                let starts = x
                    .start()
                    .map(|s| s.iter().map(|&y| Start::Boolean(y)).collect())
                    .unwrap_or_default();
                push(md, &mut variables, x, VarType::Boolean, starts, None)?;
            }
            other => {
                let v: &dyn AbstractVariableTrait = match other {
                    s::Variable::Int8(x) => x,
                    s::Variable::UInt8(x) => x,
                    s::Variable::Int16(x) => x,
                    s::Variable::UInt16(x) => x,
                    s::Variable::UInt32(x) => x,
                    s::Variable::Int64(x) => x,
                    s::Variable::UInt64(x) => x,
                    s::Variable::Float32(x) => x,
                    s::Variable::String(x) => x,
                    s::Variable::Binary(x) => x,
                    s::Variable::Clock(x) => x,
                    _ => continue,
                };
                variables.push(Variable {
                    name: v.name().to_string(),
                    value_reference: v.value_reference(),
                    causality: causality(&v.causality()),
                    variability: variability(&v.variability()),
                    kind: VarType::String,
                    start: None,
                    description: v.description().map(str::to_string),
                    unit: None,
                    element: None,
                });
            }
        }
    }
    let flag = |f: Option<bool>| f.unwrap_or(false);
    let de = md.default_experiment.as_ref();
    Ok(Description {
        model_name: md.model_name.clone(),
        guid: md.instantiation_token.clone(),
        generation_tool: md.generation_tool.clone(),
        model_identifier: cs.model_identifier.clone(),
        capabilities: Capabilities {
            variable_step: flag(cs.can_handle_variable_communication_step_size),
            get_set_state: flag(cs.can_get_and_set_fmu_state),
            serialize_state: flag(cs.can_serialize_fmu_state),
            only_once_per_process: flag(cs.can_be_instantiated_only_once_per_process),
            interpolate_inputs: false,
        },
        default_start: de.and_then(|d| d.start_time),
        default_stop: de.and_then(|d| d.stop_time),
        default_step: de.and_then(|d| d.step_size),
        variables,
    })
}

/// The FMU's log messages of status Error or Fatal go to stderr (the
/// master's own error names the call and the time).
unsafe extern "C" fn log_message(
    _env: b::fmi3InstanceEnvironment,
    status: b::fmi3Status,
    _category: b::fmi3String,
    message: b::fmi3String,
) {
    if status >= b::fmi3Status_fmi3Error && !message.is_null() {
        // SAFETY: FMI 3.0 §2.3.1: `message` is a zero-terminated string
        // valid during the call.
        let text = unsafe { CStr::from_ptr(message) };
        eprintln!("FMU: {}", text.to_string_lossy());
    }
}

/// The outcome of one fmi3DoStep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Step3 {
    /// The step reached its end.
    Done,
    /// The FMU discarded it.
    Discarded,
    /// The FMU ended the simulation at this time.
    Terminated(f64),
    /// The call failed with this status (Error, Fatal or unknown).
    Failed(&'static str),
}

fn status_name(st: b::fmi3Status) -> &'static str {
    match st {
        b::fmi3Status_fmi3OK => "OK",
        b::fmi3Status_fmi3Warning => "Warning",
        b::fmi3Status_fmi3Discard => "Discard",
        b::fmi3Status_fmi3Error => "Error",
        b::fmi3Status_fmi3Fatal => "Fatal",
        _ => "not an FMI status",
    }
}

/// Ok for OK and Warning, the status name otherwise.
fn check(st: b::fmi3Status) -> Result<(), &'static str> {
    match st {
        b::fmi3Status_fmi3OK | b::fmi3Status_fmi3Warning => Ok(()),
        other => Err(status_name(other)),
    }
}

/// An FMI 3.0 co-simulation instance: the loaded binary and its instance
/// pointer. Every FMI call is here; each `unsafe` block calls one FMI 3.0
/// function of the loaded binary on the instance it created.
pub(crate) struct Instance3 {
    lib: b::Fmi3Binding,
    ptr: b::fmi3Instance,
    /// Scratch for array elements (one array at a time).
    reals: Vec<f64>,
    ints: Vec<i32>,
    bools: Vec<bool>,
}

/// A state inside an FMI 3.0 FMU (fmi3GetFMUState).
pub(crate) struct State3(b::fmi3FMUState);

impl Instance3 {
    /// fmi3InstantiateCoSimulation (no event mode, no early return: the
    /// FMU handles its events inside its steps).
    pub(crate) fn new(
        lib_path: &Path,
        name: &str,
        token: &str,
        resources: &Path,
    ) -> Result<Instance3, String> {
        // SAFETY: loading an FMU's shared library runs its initialisers;
        // the library is the binary the archive declares for this
        // platform, as for FMI 2.0.
        let lib = unsafe { b::Fmi3Binding::new(lib_path) }
            .map_err(|e| format!("cannot load {}: {e}", lib_path.display()))?;
        let c = |s: &str| CString::new(s).map_err(|_| format!("'{s}' holds a NUL byte"));
        let name_c = c(name)?;
        let token_c = c(token)?;
        let mut res = resources.display().to_string();
        if !res.ends_with('/') {
            res.push('/');
        }
        let res_c = c(&res)?;
        // SAFETY: every string outlives the call (the FMU copies what it
        // keeps); no intermediate variables (null, 0); a null instance
        // environment, which the logger ignores.
        let ptr = unsafe {
            lib.fmi3InstantiateCoSimulation(
                name_c.as_ptr(),
                token_c.as_ptr(),
                res_c.as_ptr(),
                false,
                false,
                false,
                false,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                Some(log_message),
                None,
            )
        };
        if ptr.is_null() {
            return Err("fmi3InstantiateCoSimulation returned NULL".into());
        }
        Ok(Instance3 {
            lib,
            ptr,
            reals: Vec::new(),
            ints: Vec::new(),
            bools: Vec::new(),
        })
    }

    /// fmi3EnterInitializationMode (start time, optional stop time),
    /// fmi3ExitInitializationMode.
    pub(crate) fn initialize(
        &mut self,
        t0: f64,
        stop: Option<f64>,
    ) -> Result<(), (&'static str, &'static str)> {
        // SAFETY: a live instance; scalars only.
        let st = unsafe {
            self.lib.fmi3EnterInitializationMode(
                self.ptr,
                false,
                0.0,
                t0,
                stop.is_some(),
                stop.unwrap_or(0.0),
            )
        };
        check(st).map_err(|e| ("fmi3EnterInitializationMode", e))?;
        // SAFETY: as above.
        let st = unsafe { self.lib.fmi3ExitInitializationMode(self.ptr) };
        check(st).map_err(|e| ("fmi3ExitInitializationMode", e))
    }

    /// fmi3DoStep(t, h).
    pub(crate) fn do_step(&mut self, t: f64, h: f64) -> Step3 {
        let mut event = false;
        let mut terminate = false;
        let mut early = false;
        let mut last = t;
        // SAFETY: a live instance; the out-pointers are locals.
        let st = unsafe {
            self.lib.fmi3DoStep(
                self.ptr,
                t,
                h,
                false,
                &mut event,
                &mut terminate,
                &mut early,
                &mut last,
            )
        };
        match st {
            b::fmi3Status_fmi3OK | b::fmi3Status_fmi3Warning if terminate => {
                Step3::Terminated(last)
            }
            b::fmi3Status_fmi3OK | b::fmi3Status_fmi3Warning => Step3::Done,
            b::fmi3Status_fmi3Discard if terminate => Step3::Terminated(last),
            b::fmi3Status_fmi3Discard => Step3::Discarded,
            other => Step3::Failed(status_name(other)),
        }
    }

    /// The values of a variable (one, or an array's element) as a real.
    pub(crate) fn get(&mut self, v: &Variable) -> Result<f64, (&'static str, &'static str)> {
        let vr = [v.value_reference];
        let (i, n) = v
            .element
            .map_or((0, 1), |e| (e.index as usize, e.len as usize));
        match v.kind {
            VarType::Real => {
                self.reals.resize(n, 0.0);
                // SAFETY: a live instance; `reals` holds the n values of
                // the variable.
                let st = unsafe {
                    self.lib
                        .fmi3GetFloat64(self.ptr, vr.as_ptr(), 1, self.reals.as_mut_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3GetFloat64", e))?;
                Ok(self.reals[i])
            }
            VarType::Integer | VarType::Enumeration => {
                self.ints.resize(n, 0);
                // SAFETY: as above, `ints` holds n values.
                let st = unsafe {
                    self.lib
                        .fmi3GetInt32(self.ptr, vr.as_ptr(), 1, self.ints.as_mut_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3GetInt32", e))?;
                Ok(f64::from(self.ints[i]))
            }
            VarType::Boolean => {
                self.bools.resize(n, false);
                // SAFETY: as above, `bools` holds n values (fmi3Boolean is
                // a C bool).
                let st = unsafe {
                    self.lib
                        .fmi3GetBoolean(self.ptr, vr.as_ptr(), 1, self.bools.as_mut_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3GetBoolean", e))?;
                Ok(f64::from(u8::from(self.bools[i])))
            }
            VarType::String => Err(("fmi3Get", "a type that is not exchanged")),
        }
    }

    /// Sets a variable (one, or an array's element: the array is read,
    /// the element replaced, the array written back) from a real
    /// (integers rounded to nearest, booleans nonzero = true).
    pub(crate) fn set(&mut self, v: &Variable, x: f64) -> Result<(), (&'static str, &'static str)> {
        let vr = [v.value_reference];
        let (i, n) = v
            .element
            .map_or((0, 1), |e| (e.index as usize, e.len as usize));
        if n > 1 {
            self.get(v)?;
        }
        match v.kind {
            VarType::Real => {
                self.reals.resize(n, 0.0);
                self.reals[i] = x;
                // SAFETY: a live instance; `reals` holds the n values.
                let st = unsafe {
                    self.lib
                        .fmi3SetFloat64(self.ptr, vr.as_ptr(), 1, self.reals.as_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3SetFloat64", e))
            }
            VarType::Integer | VarType::Enumeration => {
                self.ints.resize(n, 0);
                self.ints[i] = x.round() as i32;
                // SAFETY: as above.
                let st = unsafe {
                    self.lib
                        .fmi3SetInt32(self.ptr, vr.as_ptr(), 1, self.ints.as_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3SetInt32", e))
            }
            VarType::Boolean => {
                self.bools.resize(n, false);
                self.bools[i] = x != 0.0;
                // SAFETY: as above.
                let st = unsafe {
                    self.lib
                        .fmi3SetBoolean(self.ptr, vr.as_ptr(), 1, self.bools.as_ptr(), n)
                };
                check(st).map_err(|e| ("fmi3SetBoolean", e))
            }
            VarType::String => Err(("fmi3Set", "a type that is not exchanged")),
        }
    }

    /// fmi3GetFMUState into a new slot, or into `into`'s slot.
    pub(crate) fn get_state(
        &mut self,
        into: Option<&mut State3>,
    ) -> Result<Option<State3>, &'static str> {
        match into {
            Some(slot) => {
                // SAFETY: a live instance; the slot was allocated by this
                // instance and is updated in place.
                let st = unsafe { self.lib.fmi3GetFMUState(self.ptr, &mut slot.0) };
                check(st).map(|_| None)
            }
            None => {
                let mut state: b::fmi3FMUState = std::ptr::null_mut();
                // SAFETY: a null slot asks the FMU for a new one.
                let st = unsafe { self.lib.fmi3GetFMUState(self.ptr, &mut state) };
                check(st).map(|_| Some(State3(state)))
            }
        }
    }

    /// fmi3SetFMUState.
    pub(crate) fn set_state(&mut self, s: &State3) -> Result<(), &'static str> {
        // SAFETY: a live instance and a state it allocated.
        check(unsafe { self.lib.fmi3SetFMUState(self.ptr, s.0) })
    }

    /// fmi3FreeFMUState.
    pub(crate) fn free_state(&mut self, s: &mut State3) {
        if !s.0.is_null() {
            // SAFETY: a state this instance allocated, freed once (the
            // pointer is nulled by the FMU).
            let _ = unsafe { self.lib.fmi3FreeFMUState(self.ptr, &mut s.0) };
        }
    }

    /// fmi3SerializedFMUStateSize and fmi3SerializeFMUState.
    pub(crate) fn serialize(
        &mut self,
        s: &State3,
    ) -> Result<Vec<u8>, (&'static str, &'static str)> {
        let mut size = 0usize;
        // SAFETY: a live instance and one of its states.
        let st = unsafe {
            self.lib
                .fmi3SerializedFMUStateSize(self.ptr, s.0, &mut size)
        };
        check(st).map_err(|e| ("fmi3SerializedFMUStateSize", e))?;
        let mut bytes = vec![0u8; size];
        // SAFETY: `bytes` holds `size` bytes.
        let st = unsafe {
            self.lib
                .fmi3SerializeFMUState(self.ptr, s.0, bytes.as_mut_ptr(), size)
        };
        check(st).map_err(|e| ("fmi3SerializeFMUState", e))?;
        Ok(bytes)
    }

    /// fmi3DeserializeFMUState into a new state.
    pub(crate) fn deserialize(&mut self, bytes: &[u8]) -> Result<State3, &'static str> {
        let mut state: b::fmi3FMUState = std::ptr::null_mut();
        // SAFETY: `bytes` is read during the call only.
        let st = unsafe {
            self.lib
                .fmi3DeserializeFMUState(self.ptr, bytes.as_ptr(), bytes.len(), &mut state)
        };
        check(st).map(|_| State3(state))
    }

    /// fmi3Terminate (its status is of no use when the instance goes).
    pub(crate) fn terminate(&mut self) {
        // SAFETY: a live instance.
        let _ = unsafe { self.lib.fmi3Terminate(self.ptr) };
    }
}

macro_rules! raw_access {
    ($get:ident, $set:ident, $ty:ty, $fget:ident, $fset:ident) => {
        /// The FMI 3.0 getter on scalar value references (one value each).
        pub(crate) fn $get(&mut self, vrs: &[u32], out: &mut [$ty]) -> Result<(), &'static str> {
            // SAFETY: a live instance; `out` holds one value per scalar
            // value reference, the caller checked the lengths.
            check(unsafe {
                self.lib.$fget(
                    self.ptr,
                    vrs.as_ptr(),
                    vrs.len(),
                    out.as_mut_ptr(),
                    out.len(),
                )
            })
        }

        /// The FMI 3.0 setter on scalar value references (one value each).
        pub(crate) fn $set(&mut self, vrs: &[u32], values: &[$ty]) -> Result<(), &'static str> {
            // SAFETY: as for the getter; the values are read during the
            // call only.
            check(unsafe {
                self.lib.$fset(
                    self.ptr,
                    vrs.as_ptr(),
                    vrs.len(),
                    values.as_ptr(),
                    values.len(),
                )
            })
        }
    };
}

impl Instance3 {
    raw_access!(get_f64, set_f64, f64, fmi3GetFloat64, fmi3SetFloat64);
    raw_access!(get_i32, set_i32, i32, fmi3GetInt32, fmi3SetInt32);
    raw_access!(get_bool, set_bool, bool, fmi3GetBoolean, fmi3SetBoolean);
}

impl Drop for Instance3 {
    fn drop(&mut self) {
        // SAFETY: the instance this struct created, freed once; its saved
        // states were freed with their owners before (see `Instance`).
        unsafe { self.lib.fmi3FreeInstance(self.ptr) };
    }
}
