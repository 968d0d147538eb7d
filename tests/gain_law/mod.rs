//! A stateless proportional law u = −k y (scalar), shared by the control
//! loop tests.

use nonsmooth::control::{ControlError, Controller, ControllerSetup};

/// u = −k y (scalar).
pub struct Gain(pub f64);

impl Controller for Gain {
    fn law(&self) -> &'static str {
        "gain"
    }
    fn initialize(&mut self, _: &ControllerSetup) -> Result<(), ControlError> {
        Ok(())
    }
    fn compute(&mut self, _t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = -self.0 * y[0];
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}
