//! The FMI 3.0 functions this FMU has nothing behind: getters and setters
//! of types other than Float64 (there are no such variables: an empty call
//! is fine, any value reference is unknown), model exchange and scheduled
//! execution (instantiation returns NULL), clocks, configuration mode,
//! derivatives and dependencies (`fmi3Error` with a message). Every one is
//! exported, since hosts bind them all when they load the library.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::c_void;

use super::abi::{
    fmi3Boolean, fmi3Float64, fmi3Instance, fmi3InstanceEnvironment, fmi3Status, fmi3String,
    fmi3ValueReference,
};
use crate::ffi::{self, with};

/// Getters and setters of a type this FMU has no variables of.
macro_rules! no_variables_of_type {
    ($($name:ident),* $(,)?) => {$(
        /// No variable of this type: `nValueReferences` = 0 is OK, any value
        /// reference an error.
        ///
        /// # Safety
        /// `vr` must hold `nvr` value references.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            c: fmi3Instance,
            vr: *const fmi3ValueReference,
            nvr: usize,
            _values: *mut c_void,
            _nValues: usize,
        ) -> fmi3Status {
            let f = stringify!($name);
            // SAFETY: the contract above; `with` refuses NULL and catches
            // panics, the array is checked for NULL.
            unsafe { with(c, f, |i| ffi::no_such_type(i, f, vr, nvr)) }
        }
    )*};
}

no_variables_of_type!(
    fmi3GetFloat32,
    fmi3GetInt8,
    fmi3GetUInt8,
    fmi3GetInt16,
    fmi3GetUInt16,
    fmi3GetInt32,
    fmi3GetUInt32,
    fmi3GetInt64,
    fmi3GetUInt64,
    fmi3GetBoolean,
    fmi3GetString,
    fmi3SetFloat32,
    fmi3SetInt8,
    fmi3SetUInt8,
    fmi3SetInt16,
    fmi3SetUInt16,
    fmi3SetInt32,
    fmi3SetUInt32,
    fmi3SetInt64,
    fmi3SetUInt64,
    fmi3SetBoolean,
    fmi3SetString,
);

/// Binary getters and setters (valueSizes before the values).
macro_rules! no_binary {
    ($($name:ident),*) => {$(
        /// No Binary variable: an empty call is OK, any value reference an
        /// error.
        ///
        /// # Safety
        /// `vr` must hold `nvr` value references.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            c: fmi3Instance,
            vr: *const fmi3ValueReference,
            nvr: usize,
            _sizes: *mut usize,
            _values: *mut c_void,
            _nValues: usize,
        ) -> fmi3Status {
            let f = stringify!($name);
            // SAFETY: the contract above; `with` refuses NULL and catches
            // panics, the array is checked for NULL.
            unsafe { with(c, f, |i| ffi::no_such_type(i, f, vr, nvr)) }
        }
    )*};
}

no_binary!(fmi3GetBinary, fmi3SetBinary);

/// Functions answered with `fmi3Error` and a reason; the arguments after
/// the instance are not read.
macro_rules! refused {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $why:expr;)*) => {$(
        /// Not provided by this FMU: `fmi3Error`.
        ///
        /// # Safety
        /// `c` must be NULL or an instance.
        #[no_mangle]
        pub unsafe extern "C" fn $name(c: fmi3Instance $(, $arg: $ty)*) -> fmi3Status {
            $(let _ = $arg;)*
            // SAFETY: the contract above; `with` refuses NULL and catches panics.
            unsafe { with(c, stringify!($name), |inst| inst.error(stringify!($name), $why)) }
        }
    )*};
}

const NO_CLOCKS: &str = "this FMU has no clocks";
const NO_ME: &str = "this FMU is for co-simulation only (no model exchange)";

refused! {
    fmi3GetClock(_vr: *const fmi3ValueReference, _n: usize, _v: *mut fmi3Boolean) => NO_CLOCKS;
    fmi3SetClock(_vr: *const fmi3ValueReference, _n: usize, _v: *const fmi3Boolean) => NO_CLOCKS;
    fmi3GetIntervalDecimal(_vr: *const fmi3ValueReference, _n: usize, _i: *mut f64, _q: *mut i32) => NO_CLOCKS;
    fmi3GetIntervalFraction(_vr: *const fmi3ValueReference, _n: usize, _counters: *mut u64, _r: *mut u64, _q: *mut i32) => NO_CLOCKS;
    fmi3GetShiftDecimal(_vr: *const fmi3ValueReference, _n: usize, _s: *mut f64) => NO_CLOCKS;
    fmi3GetShiftFraction(_vr: *const fmi3ValueReference, _n: usize, _counters: *mut u64, _r: *mut u64) => NO_CLOCKS;
    fmi3SetIntervalDecimal(_vr: *const fmi3ValueReference, _n: usize, _i: *const f64) => NO_CLOCKS;
    fmi3SetIntervalFraction(_vr: *const fmi3ValueReference, _n: usize, _counters: *const u64, _r: *const u64) => NO_CLOCKS;
    fmi3SetShiftDecimal(_vr: *const fmi3ValueReference, _n: usize, _s: *const f64) => NO_CLOCKS;
    fmi3SetShiftFraction(_vr: *const fmi3ValueReference, _n: usize, _counters: *const u64, _r: *const u64) => NO_CLOCKS;
    fmi3ActivateModelPartition(_clock: fmi3ValueReference, _t: fmi3Float64) => "this FMU has no model partitions (no scheduled execution)";
    fmi3EnterConfigurationMode() => "this FMU has no structural parameters (no configuration mode)";
    fmi3ExitConfigurationMode() => "this FMU has no structural parameters (no configuration mode)";
    fmi3GetNumberOfVariableDependencies(_vr: fmi3ValueReference, _n: *mut usize) => "dependencies are in modelDescription.xml only (providesPerElementDependencies = false)";
    fmi3GetVariableDependencies(_vr: fmi3ValueReference, _e: *mut usize, _i: *mut fmi3ValueReference, _ei: *mut usize, _k: *mut i32, _n: usize) => "dependencies are in modelDescription.xml only (providesPerElementDependencies = false)";
    fmi3GetDirectionalDerivative(_u: *const fmi3ValueReference, _nu: usize, _k: *const fmi3ValueReference, _nk: usize, _s: *const f64, _ns: usize, _o: *mut f64, _no: usize) => "not provided (providesDirectionalDerivatives = false)";
    fmi3GetAdjointDerivative(_u: *const fmi3ValueReference, _nu: usize, _k: *const fmi3ValueReference, _nk: usize, _s: *const f64, _ns: usize, _o: *mut f64, _no: usize) => "not provided (providesAdjointDerivatives = false)";
    fmi3GetOutputDerivatives(_vr: *const fmi3ValueReference, _n: usize, _o: *const i32, _v: *mut f64, _nv: usize) => "output derivatives are not provided (maxOutputDerivativeOrder = 0)";
    fmi3EvaluateDiscreteStates() => "not provided (providesEvaluateDiscreteStates = false)";
    fmi3EnterContinuousTimeMode() => NO_ME;
    fmi3CompletedIntegratorStep(_no: fmi3Boolean, _e: *mut fmi3Boolean, _t: *mut fmi3Boolean) => NO_ME;
    fmi3SetTime(_t: fmi3Float64) => NO_ME;
    fmi3SetContinuousStates(_x: *const f64, _n: usize) => NO_ME;
    fmi3GetContinuousStateDerivatives(_x: *mut f64, _n: usize) => NO_ME;
    fmi3GetEventIndicators(_x: *mut f64, _n: usize) => NO_ME;
    fmi3GetContinuousStates(_x: *mut f64, _n: usize) => NO_ME;
    fmi3GetNominalsOfContinuousStates(_x: *mut f64, _n: usize) => NO_ME;
    fmi3GetNumberOfEventIndicators(_n: *mut usize) => NO_ME;
    fmi3GetNumberOfContinuousStates(_n: *mut usize) => NO_ME;
}

/// Model exchange is not provided: NULL (message on stderr; the logger is
/// not called, the instance does not exist).
///
/// # Safety
/// Any arguments; none is read.
#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _instanceName: fmi3String,
    _instantiationToken: fmi3String,
    _resourcePath: fmi3String,
    _visible: fmi3Boolean,
    _loggingOn: fmi3Boolean,
    _instanceEnvironment: fmi3InstanceEnvironment,
    _logMessage: *const c_void,
) -> fmi3Instance {
    eprintln!("nonsmooth FMU: fmi3InstantiateModelExchange: {NO_ME}");
    std::ptr::null_mut()
}

/// Scheduled execution is not provided: NULL (message on stderr).
///
/// # Safety
/// Any arguments; none is read.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _instanceName: fmi3String,
    _instantiationToken: fmi3String,
    _resourcePath: fmi3String,
    _visible: fmi3Boolean,
    _loggingOn: fmi3Boolean,
    _instanceEnvironment: fmi3InstanceEnvironment,
    _logMessage: *const c_void,
    _clockUpdate: *const c_void,
    _lockPreemption: *const c_void,
    _unlockPreemption: *const c_void,
) -> fmi3Instance {
    eprintln!(
        "nonsmooth FMU: fmi3InstantiateScheduledExecution: this FMU is for co-simulation only"
    );
    std::ptr::null_mut()
}
