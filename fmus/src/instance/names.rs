//! What differs between the two standards in what an instance says: the
//! names of the functions it logs under and of its phases. Everything else
//! an instance does is the same for FMI 2.0 and 3.0 (`super`).

use super::Phase;

/// The standard an instance answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standard {
    /// FMI 2.0 co-simulation (`fmi2*`).
    Fmi2,
    /// FMI 3.0 co-simulation (`fmi3*`).
    Fmi3,
}

macro_rules! calls {
    ($($call:ident: $fmi2:literal, $fmi3:literal;)*) => {
        /// The calls an instance handles, named as each standard names them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Call {
            $(
                #[doc = concat!("`", $fmi2, "` / `", $fmi3, "`.")]
                $call,
            )*
        }

        impl Call {
            /// The function's name in `standard`.
            pub fn name(self, standard: Standard) -> &'static str {
                match (self, standard) {
                    $(
                        (Call::$call, Standard::Fmi2) => $fmi2,
                        (Call::$call, Standard::Fmi3) => $fmi3,
                    )*
                }
            }
        }
    };
}

calls! {
    SetDebugLogging: "fmi2SetDebugLogging", "fmi3SetDebugLogging";
    SetupExperiment: "fmi2SetupExperiment", "fmi3EnterInitializationMode";
    EnterInitializationMode: "fmi2EnterInitializationMode", "fmi3EnterInitializationMode";
    ExitInitializationMode: "fmi2ExitInitializationMode", "fmi3ExitInitializationMode";
    EnterEventMode: "fmi2EnterEventMode", "fmi3EnterEventMode";
    UpdateDiscreteStates: "fmi2UpdateDiscreteStates", "fmi3UpdateDiscreteStates";
    EnterStepMode: "fmi2EnterStepMode", "fmi3EnterStepMode";
    DoStep: "fmi2DoStep", "fmi3DoStep";
    Terminate: "fmi2Terminate", "fmi3Terminate";
    Reset: "fmi2Reset", "fmi3Reset";
    FreeInstance: "fmi2FreeInstance", "fmi3FreeInstance";
    GetReal: "fmi2GetReal", "fmi3GetFloat64";
    SetReal: "fmi2SetReal", "fmi3SetFloat64";
    GetFmuState: "fmi2GetFMUstate", "fmi3GetFMUState";
    SetFmuState: "fmi2SetFMUstate", "fmi3SetFMUState";
    FreeFmuState: "fmi2FreeFMUstate", "fmi3FreeFMUState";
    SerializedSize: "fmi2SerializedFMUstateSize", "fmi3SerializedFMUStateSize";
    Serialize: "fmi2SerializeFMUstate", "fmi3SerializeFMUState";
    Deserialize: "fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState";
}

impl Standard {
    /// The name of `phase` in this standard's state machine.
    pub fn phase_name(self, phase: Phase) -> &'static str {
        match (phase, self) {
            (Phase::Instantiated, _) => "instantiated",
            (Phase::Initialization, _) => "initialization mode",
            (Phase::EventMode, _) => "event mode",
            (Phase::StepMode, Standard::Fmi2) => "step complete",
            (Phase::StepMode, Standard::Fmi3) => "step mode",
            (Phase::StepDiscarded, Standard::Fmi2) => "step failed",
            (Phase::StepDiscarded, Standard::Fmi3) => "step discarded",
            (Phase::Terminated, _) => "terminated",
            (Phase::Error, _) => "error",
        }
    }

    /// The name of the one variable type of these FMUs.
    pub fn real(self) -> &'static str {
        match self {
            Standard::Fmi2 => "Real",
            Standard::Fmi3 => "Float64",
        }
    }
}
