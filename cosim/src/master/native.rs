//! A native model co-simulated with the FMUs: its own simulation
//! (time-stepping) advanced by the master on the same exact clock, and
//! the connections between its variables and the FMUs' (see the module
//! documentation of [`super`]).
//!
//! **Timing.** The native step h divides every FMU step, so every
//! communication point is an instant of the native grid; the master's grid
//! is h. At an instant tₖ the native simulation first completes its step
//! (tₖ − h, tₖ] with the input held over it; then the FMUs due at tₖ
//! publish their outputs, and every native input driven by a connection is
//! held from tₖ on at g = g_loop + Σ_c e_{i_c} y_c, y_c the source's output
//! published at its last point ≤ tₖ (zero-order hold between points), and
//! g_loop what the loop's actuators hold on it. An FMU input fed from a
//! native variable takes that variable's value at its point tₖ (after the
//! native step ending at tₖ) and holds it over its step (tₖ, tₖ + T].

use std::sync::Arc;

use nonsmooth::modelling::{InteractionId, Model, SystemId};
use nonsmooth::simulation::{Simulation, SimulationError};

pub use nonsmooth_scenario::NativeInput;

/// A native value an FMU input reads (one component).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeRead {
    /// q (Lagrangian) or x (first-order) of a system, component `.1`.
    Q(SystemId, usize),
    /// v of a Lagrangian system.
    V(SystemId, usize),
    /// y of an interaction.
    Y(InteractionId, usize),
    /// λ of an interaction.
    Lambda(InteractionId, usize),
}

impl NativeRead {
    /// The value in `sim` (NaN for a component out of range).
    pub(super) fn value(self, sim: &dyn Simulation) -> f64 {
        let (slice, k) = match self {
            NativeRead::Q(s, k) => (sim.q(s), k),
            NativeRead::V(s, k) => (sim.v(s), k),
            NativeRead::Y(i, k) => (sim.y(i), k),
            NativeRead::Lambda(i, k) => (sim.lambda(i), k),
        };
        slice.get(k).copied().unwrap_or(f64::NAN)
    }
}

/// The native part of a co-simulation, as the caller gives it.
pub struct NativeSpec {
    /// The native model's simulation (time-stepping, step `step`, its
    /// clock built from the same times as the master's: t0, t_end, h, the
    /// FMU steps, the output period and the loop's times).
    pub sim: Box<dyn Simulation>,
    /// The native step h in seconds.
    pub step: f64,
    /// The model the loop sees: the native systems (ids 0..n as in
    /// `sim`'s model), then one interface system per FMU, in order, each
    /// named after its FMU and of dimension n_out + n_in; the native
    /// interactions.
    pub model: Arc<Model>,
    /// Connections native value → FMU input (FMU name, input variable).
    pub to_fmus: Vec<(NativeRead, (String, String))>,
    /// Connections FMU output (FMU name, output variable) → native input.
    pub from_fmus: Vec<((String, String), NativeInput)>,
}

/// The native part inside the master.
pub(super) struct Native {
    pub(super) sim: Box<dyn Simulation>,
    /// Number of native systems (their ids come first in the model).
    pub(super) n_systems: usize,
    /// What the loop holds on each native system's g.
    pub(super) g_loop: Vec<Vec<f64>>,
    /// What the loop holds on each native relation's u.
    pub(super) u_loop: Vec<Vec<f64>>,
    /// Connections into the native model: (source slave, index in its
    /// reads, input).
    pub(super) targets: Vec<(usize, usize, NativeInput)>,
    /// Work space for the combined input (no allocation per step).
    buf: Vec<f64>,
}

impl Native {
    pub(super) fn new(sim: Box<dyn Simulation>) -> Native {
        let model = Arc::clone(sim.model());
        let g_loop: Vec<Vec<f64>> = model
            .systems()
            .iter()
            .map(|s| vec![0.0; s.ds.dim()])
            .collect();
        let u_loop: Vec<Vec<f64>> = model
            .interactions()
            .iter()
            .map(|i| vec![0.0; i.relation.input_dim()])
            .collect();
        let width = g_loop
            .iter()
            .chain(&u_loop)
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        Native {
            n_systems: g_loop.len(),
            sim,
            g_loop,
            u_loop,
            targets: Vec::new(),
            buf: vec![0.0; width],
        }
    }

    /// Advances the native simulation to `tick` (an instant of its grid).
    pub(super) fn advance_to(&mut self, tick: i64) -> Result<(), SimulationError> {
        while self.sim.tick().0 < tick {
            if let nonsmooth::simulation::StepOutcome::Finished = self.sim.step()? {
                return Err(SimulationError::BadArgument(format!(
                    "the native model finished at t = {} before the master's instant",
                    self.sim.time()
                )));
            }
        }
        Ok(())
    }

    /// Holds g = g_loop + connections on system `s` (`published(slave,
    /// k)` gives a source's published value).
    pub(super) fn push_system(
        &mut self,
        s: SystemId,
        published: &dyn Fn(usize, usize) -> f64,
    ) -> Result<(), SimulationError> {
        let n = self.g_loop[s.0].len();
        self.buf[..n].copy_from_slice(&self.g_loop[s.0]);
        for &(slave, k, input) in &self.targets {
            if let NativeInput::System { system, index } = input {
                if system == s {
                    self.buf[index] += published(slave, k);
                }
            }
        }
        self.sim.set_system_input(s, &self.buf[..n])
    }

    /// Holds u = u_loop + connections on relation `i`.
    pub(super) fn push_relation(
        &mut self,
        i: InteractionId,
        published: &dyn Fn(usize, usize) -> f64,
    ) -> Result<(), SimulationError> {
        let n = self.u_loop[i.0].len();
        self.buf[..n].copy_from_slice(&self.u_loop[i.0]);
        for &(slave, k, input) in &self.targets {
            if let NativeInput::Relation { interaction, index } = input {
                if interaction == i {
                    self.buf[index] += published(slave, k);
                }
            }
        }
        self.sim.set_input(i, &self.buf[..n])
    }

    /// Holds every input a connection drives (after a publication).
    pub(super) fn push_connected(
        &mut self,
        published: &dyn Fn(usize, usize) -> f64,
    ) -> Result<(), SimulationError> {
        for t in 0..self.targets.len() {
            // Each input once: at its first connection.
            let input = self.targets[t].2;
            let first = self.targets[..t].iter().all(|o| !same_object(o.2, input));
            if !first {
                continue;
            }
            match input {
                NativeInput::System { system, .. } => self.push_system(system, published)?,
                NativeInput::Relation { interaction, .. } => {
                    self.push_relation(interaction, published)?
                }
            }
        }
        Ok(())
    }
}

fn same_object(a: NativeInput, b: NativeInput) -> bool {
    match (a, b) {
        (NativeInput::System { system: x, .. }, NativeInput::System { system: y, .. }) => x == y,
        (
            NativeInput::Relation { interaction: x, .. },
            NativeInput::Relation { interaction: y, .. },
        ) => x == y,
        _ => false,
    }
}
