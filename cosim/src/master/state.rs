//! Saving and restoring a whole co-simulation: every FMU's state (inside
//! the FMU, fmi2GetFMUstate) with the master's (clock, event schedule,
//! published and pending values, held inputs).

use nonsmooth::simulation::{EventManager, EventSchedule, SimulationState, StateError};

use super::CoSimulation;
use crate::error::CosimError;
use crate::import::SavedState;

struct SlaveState {
    fmu: SavedState,
    point: i64,
    next: i64,
    values: Vec<f64>,
    pending: Vec<f64>,
    q: Vec<f64>,
    g: Vec<f64>,
    stepped: bool,
}

/// The native part's state: its simulation's and the inputs the loop
/// holds on it.
struct NativeState {
    sim: SimulationState,
    g_loop: Vec<Vec<f64>>,
    u_loop: Vec<Vec<f64>>,
}

/// A saved co-simulation (valid for the [`CoSimulation`] it was taken
/// from).
pub struct CoSimState {
    native: Option<NativeState>,
    tick: i64,
    schedule: EventSchedule,
    instant: Vec<nonsmooth::simulation::Event>,
    output: bool,
    steps: u64,
    slaves: Vec<SlaveState>,
    end_tick: i64,
    ended: Option<super::Termination>,
}

impl std::fmt::Debug for CoSimState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoSimState")
            .field("tick", &self.tick)
            .field("fmus", &self.slaves.len())
            .finish()
    }
}

impl CoSimulation {
    /// Saves the whole co-simulation (each FMU must declare
    /// canGetAndSetFMUstate).
    pub fn save(&mut self) -> Result<CoSimState, CosimError> {
        let mut slaves = Vec::with_capacity(self.slaves.len());
        for s in &mut self.slaves {
            slaves.push(SlaveState {
                fmu: s.inst.get_state()?,
                point: s.point,
                next: s.next,
                values: s.values.clone(),
                pending: s.pending.clone(),
                q: s.q.clone(),
                g: s.g.clone(),
                stepped: s.stepped,
            });
        }
        let native = match &self.native {
            Some(n) => Some(NativeState {
                sim: n.sim.save_state().map_err(native_error)?,
                g_loop: n.g_loop.clone(),
                u_loop: n.u_loop.clone(),
            }),
            None => None,
        };
        Ok(CoSimState {
            native,
            tick: self.tick,
            schedule: self.events.schedule(),
            instant: self.instant.clone(),
            output: self.output,
            steps: self.steps,
            slaves,
            end_tick: self.end_tick,
            ended: self.ended.clone(),
        })
    }

    /// As [`CoSimulation::save`], into a state taken earlier from this
    /// co-simulation (the FMUs reuse their state slots).
    pub fn save_into(&mut self, into: &mut CoSimState) -> Result<(), CosimError> {
        for (s, t) in self.slaves.iter_mut().zip(&mut into.slaves) {
            s.inst.update_state(&mut t.fmu)?;
            t.point = s.point;
            t.next = s.next;
            t.values.clone_from(&s.values);
            t.pending.clone_from(&s.pending);
            t.q.clone_from(&s.q);
            t.g.clone_from(&s.g);
            t.stepped = s.stepped;
        }
        match (&self.native, &mut into.native) {
            (Some(n), Some(t)) => {
                n.sim.save_state_into(&mut t.sim).map_err(native_error)?;
                t.g_loop.clone_from(&n.g_loop);
                t.u_loop.clone_from(&n.u_loop);
            }
            (None, None) => {}
            _ => return Err(other()),
        }
        into.tick = self.tick;
        into.schedule = self.events.schedule();
        into.instant.clone_from(&self.instant);
        into.output = self.output;
        into.steps = self.steps;
        into.end_tick = self.end_tick;
        into.ended.clone_from(&self.ended);
        Ok(())
    }

    /// Puts a saved state back: every FMU (fmi2SetFMUstate) and the master.
    pub fn restore(&mut self, state: &CoSimState) -> Result<(), CosimError> {
        let events =
            EventManager::from_schedule(&state.schedule).map_err(|reason| CosimError::Order {
                fmu: "(master)".into(),
                reason,
            })?;
        if state.slaves.len() != self.slaves.len()
            || state.native.is_some() != self.native.is_some()
        {
            return Err(other());
        }
        if let (Some(n), Some(t)) = (&mut self.native, &state.native) {
            n.sim.restore_state(&t.sim).map_err(native_error)?;
            n.g_loop.clone_from(&t.g_loop);
            n.u_loop.clone_from(&t.u_loop);
        }
        for (s, t) in self.slaves.iter_mut().zip(&state.slaves) {
            s.inst.set_state(&t.fmu)?;
            s.point = t.point;
            s.next = t.next;
            s.values.clone_from(&t.values);
            s.pending.clone_from(&t.pending);
            s.q.clone_from(&t.q);
            s.g.clone_from(&t.g);
            s.stepped = t.stepped;
        }
        self.events = events;
        self.tick = state.tick;
        self.instant.clone_from(&state.instant);
        self.output = state.output;
        self.steps = state.steps;
        self.end_tick = state.end_tick.min(self.planned_end_tick);
        self.ended.clone_from(&state.ended);
        self.watch.set(state.ended.clone());
        Ok(())
    }
}

fn other() -> CosimError {
    CosimError::Order {
        fmu: "(master)".into(),
        reason: "a state of another co-simulation".into(),
    }
}

fn native_error(e: StateError) -> CosimError {
    CosimError::Order {
        fmu: "(native model)".into(),
        reason: e.to_string(),
    }
}
