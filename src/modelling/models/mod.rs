//! Ready-made models with analytic derivatives, for scenario files (as
//! system and relation types) and for controllers that need the plant's
//! dynamics.

pub mod two_link_arm;

pub use two_link_arm::{ArmPoint, TwoLinkArm};
