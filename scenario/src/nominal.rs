//! Model-based laws with a nominal plant: an FMU does not reveal its
//! equations, so a law that needs the plant's linear model (sliding mode,
//! observers' gains) is given a nominal one by the user (a controller's
//! `nominal = { A = …, B = … }` in a scenario file, or this wrapper in
//! Rust). Also usable around a native system, to design a law on a model
//! other than the simulated one.

use nalgebra::DMatrix;
use nonsmooth::control::{ControlError, Controller, ControllerSetup, LinearPlant};

/// A controller whose law is initialised with a nominal plant
/// ẋ = A x + B u (n states, m inputs) in place of the FMU's interface
/// system, and with a measurement y = x: the sensor must deliver the n
/// states of the nominal model (e.g. the FMU's outputs x₁ … xₙ through
/// C = [I 0]). Everything else is the inner law's.
pub struct WithNominalPlant {
    inner: Box<dyn Controller>,
    plant: LinearPlant,
}

impl WithNominalPlant {
    /// Wraps a law with the nominal model (A, B).
    pub fn new(inner: Box<dyn Controller>, a: DMatrix<f64>, b: DMatrix<f64>) -> Self {
        WithNominalPlant {
            inner,
            plant: LinearPlant { a, b },
        }
    }
}

impl Controller for WithNominalPlant {
    fn law(&self) -> &'static str {
        self.inner.law()
    }

    fn initialize(&mut self, setup: &ControllerSetup) -> Result<(), ControlError> {
        let n = self.plant.a.nrows();
        if setup.measurement_dim != n || self.plant.b.ncols() != setup.input_dim {
            return Err(ControlError::Dimension {
                object: setup.name.clone(),
                what: "nominal plant",
                got: format!(
                    "A {}×{}, B {}×{}",
                    self.plant.a.nrows(),
                    self.plant.a.ncols(),
                    self.plant.b.nrows(),
                    self.plant.b.ncols()
                ),
                expected: format!(
                    "{} states (the measurement's size) and {} inputs",
                    setup.measurement_dim, setup.input_dim
                ),
            });
        }
        let mut s = setup.clone();
        s.state_dim = n;
        s.plant = Some(self.plant.clone());
        s.measurement_map = Some(DMatrix::identity(n, n));
        self.inner.initialize(&s)
    }

    fn compute(&mut self, t: f64, y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        self.inner.compute(t, y, u)
    }

    fn signal_names(&self) -> &[&'static str] {
        self.inner.signal_names()
    }

    fn signal(&self, name: &str) -> Option<&[f64]> {
        self.inner.signal(name)
    }

    fn save_state(&self, out: &mut Vec<f64>) {
        self.inner.save_state(out)
    }

    fn restore_state(&mut self, data: &[f64]) -> Result<usize, ControlError> {
        self.inner.restore_state(data)
    }
}
