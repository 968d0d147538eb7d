//! Control laws and observers for the control loop of the `nonsmooth` core
//! ([`nonsmooth::control`]): they implement its [`Controller`] and
//! [`Observer`] interfaces, and [`Catalog`] creates them by name.
//!
//! | family | laws | module |
//! |---|---|---|
//! | PID | `pid` | [`pid`] |
//! | sliding mode on σ = C_s x | `smc_implicit`, `smc_explicit`, `smc_ot2`, `smc_improved` | [`smc`] |
//! | twisting (σ of relative degree 2) | `twisting_implicit`, `twisting_regular`, `twisting_explicit` | [`twisting`] |
//! | super-twisting (relative degree 1) | `super_twisting_explicit`, `super_twisting_implicit` | [`super_twisting`] |
//! | switching tracking of a two-link arm with impacts | `manipulator_switching` | [`manipulator`] |
//! | switch gates of power converters | `pwm`, `current_smc_explicit` | [`converter`] |
//! | implicit sliding mode of a boost converter, PWM modulated | `current_smc_implicit`, `voltage_smc_implicit` | [`boost_implicit`] |
//! | every boost gate law above by two words (`law`, `surface`), for scenario parameters | `boost_smc` | [`boost_law`] |
//! | implicit current-mode sliding mode of a boost converter, switching inside the step (σ_k = 0 to round-off) | `current_smc_exact` | [`boost_exact`] |
//! | observers | `luenberger`, `sliding_observer` | [`luenberger`], [`sliding_observer`] |
//!
//! Each module documents the discrete-time equations of its laws. T is
//! always the period the loop gives the law ([`ControllerSetup::period`],
//! [`ObserverSetup::period`]). The laws check their parameters and the loop
//! they are placed in when the loop is built and report typed
//! [`ControlError`]s; once initialised, computing an input or updating an
//! estimate does not allocate. docs/control.md lists the catalog's parameter
//! keys with their units and defaults.
//!
//! [`Controller`]: nonsmooth::control::Controller
//! [`Observer`]: nonsmooth::control::Observer
//! [`ControllerSetup::period`]: nonsmooth::control::ControllerSetup::period
//! [`ObserverSetup::period`]: nonsmooth::control::ObserverSetup::period
//! [`ControlError`]: nonsmooth::control::ControlError

pub mod boost_exact;
pub mod boost_implicit;
pub mod boost_law;
mod catalog;
pub mod converter;
mod linalg;
pub mod luenberger;
pub mod manipulator;
pub mod pid;
pub mod sliding_observer;
pub mod smc;
pub mod super_twisting;
pub mod twisting;

pub use boost_implicit::{BoostSurface, ImplicitBoostSmc};
pub use boost_law::{BoostSmc, ExplicitBoostSmc};
pub use catalog::{Catalog, CONTROLLER_LAWS, OBSERVER_LAWS};
pub use converter::{CurrentSmc, Pwm};
pub use luenberger::Luenberger;
pub use manipulator::ManipulatorSwitching;
pub use pid::{AntiWindup, Gain, Pid};
pub use sliding_observer::SlidingObserver;
pub use smc::{ExplicitSmc, ImplicitSmc, ImprovedSmc, Ot2Smc};
pub use super_twisting::SuperTwisting;
pub use twisting::{twisting_step, Twisting, TwistingVariant};
