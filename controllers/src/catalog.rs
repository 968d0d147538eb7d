//! The laws of this crate by name, for scenario files and other front ends.

use nonsmooth::control::{ControlError, Controller, LawCatalog, LawParams, Observer};

use crate::boost_exact::ExactCurrentSmc;
use crate::boost_implicit::ImplicitBoostSmc;
use crate::boost_law::BoostSmc;
use crate::converter::{CurrentSmc, Pwm};
use crate::luenberger::Luenberger;
use crate::manipulator::ManipulatorSwitching;
use crate::pid::Pid;
use crate::sliding_observer::SlidingObserver;
use crate::smc::{ExplicitSmc, ImplicitSmc, ImprovedSmc, Ot2Smc};
use crate::super_twisting::SuperTwisting;
use crate::twisting::{Twisting, TwistingVariant};

/// Names of the controller laws, as [`Catalog`] knows them.
pub const CONTROLLER_LAWS: [&str; 17] = [
    "pid",
    "smc_implicit",
    "smc_explicit",
    "smc_ot2",
    "smc_improved",
    "twisting_implicit",
    "twisting_regular",
    "twisting_explicit",
    "super_twisting_explicit",
    "super_twisting_implicit",
    "manipulator_switching",
    "pwm",
    "current_smc_explicit",
    "current_smc_implicit",
    "voltage_smc_implicit",
    "boost_smc",
    "current_smc_exact",
];

/// Names of the observer laws, as [`Catalog`] knows them.
pub const OBSERVER_LAWS: [&str; 2] = ["luenberger", "sliding_observer"];

/// Every law of this crate, created by name from [`LawParams`]. The
/// parameter keys of each law, with units and defaults, are listed in
/// docs/control.md and in the documentation of each law's module.
///
/// ```
/// use nonsmooth::control::{LawCatalog, LawParams, LawValue};
/// use nonsmooth_controllers::Catalog;
///
/// let params = LawParams::new("ctl", vec![
///     ("kp".into(), LawValue::Scalar(0.25)),
///     ("ki".into(), LawValue::Scalar(0.125)),
///     ("kd".into(), LawValue::Scalar(2.0)),
/// ]);
/// let pid = Catalog.controller("pid", &params).unwrap();
/// assert_eq!(pid.law(), "pid");
/// assert!(params.unused().is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Catalog;

impl LawCatalog for Catalog {
    fn controller_laws(&self) -> Vec<&'static str> {
        CONTROLLER_LAWS.to_vec()
    }

    fn observer_laws(&self) -> Vec<&'static str> {
        OBSERVER_LAWS.to_vec()
    }

    fn controller(&self, law: &str, p: &LawParams) -> Result<Box<dyn Controller>, ControlError> {
        Ok(match law {
            "pid" => Box::new(Pid::from_params(p)?),
            "smc_implicit" => Box::new(ImplicitSmc::from_params(p)?),
            "smc_explicit" => Box::new(ExplicitSmc::from_params(p)?),
            "smc_ot2" => Box::new(Ot2Smc::from_params(p)?),
            "smc_improved" => Box::new(ImprovedSmc::from_params(p)?),
            "twisting_implicit" => Box::new(Twisting::from_params(TwistingVariant::Implicit, p)?),
            "twisting_regular" => Box::new(Twisting::from_params(TwistingVariant::Regular, p)?),
            "twisting_explicit" => Box::new(Twisting::from_params(TwistingVariant::Explicit, p)?),
            "super_twisting_explicit" => Box::new(SuperTwisting::from_params(false, p)?),
            "super_twisting_implicit" => Box::new(SuperTwisting::from_params(true, p)?),
            "manipulator_switching" => Box::new(ManipulatorSwitching::from_params(p)?),
            "pwm" => Box::new(Pwm::from_params(p)?),
            "current_smc_explicit" => Box::new(CurrentSmc::from_params(p)?),
            "current_smc_implicit" => Box::new(ImplicitBoostSmc::from_params(false, p)?),
            "voltage_smc_implicit" => Box::new(ImplicitBoostSmc::from_params(true, p)?),
            "boost_smc" => Box::new(BoostSmc::from_params(p)?),
            "current_smc_exact" => Box::new(ExactCurrentSmc::from_params(p)?),
            _ => {
                return Err(ControlError::BadReference(format!(
                    "{}: unknown controller law `{law}` (known: {})",
                    p.object(),
                    CONTROLLER_LAWS.join(", ")
                )))
            }
        })
    }

    fn observer(&self, law: &str, p: &LawParams) -> Result<Box<dyn Observer>, ControlError> {
        Ok(match law {
            "luenberger" => Box::new(Luenberger::from_params(p)?),
            "sliding_observer" => Box::new(SlidingObserver::from_params(p)?),
            _ => {
                return Err(ControlError::BadReference(format!(
                    "{}: unknown observer law `{law}` (known: {})",
                    p.object(),
                    OBSERVER_LAWS.join(", ")
                )))
            }
        })
    }
}
