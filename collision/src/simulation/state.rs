//! Save and restore of a rigid run: [`RigidSimulation`] to and from the
//! core's [`RigidState`] (what it holds and why: its documentation).

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, HeldInput};
use nonsmooth::simulation::{EventManager, RigidState, StateError};

use super::{body_values, RigidSimulation, BODY_DIM, BODY_VALUES, WORLD_DIM};
use crate::detector::DetectorState;

impl RigidSimulation {
    /// The complete state of the run (see [`RigidState`]).
    pub fn rigid_state(&self) -> RigidState {
        let world = &self.world;
        let bodies = world
            .states()
            .iter()
            .map(|s| {
                let mut v = [0.0; BODY_VALUES];
                body_values(s, &mut v);
                v
            })
            .collect();
        let inputs = world
            .held_inputs()
            .iter()
            .map(|u| {
                [
                    u.force.x, u.force.y, u.force.z, u.torque.x, u.torque.y, u.torque.z,
                ]
            })
            .collect();
        let n = world.bodies().len();
        RigidState {
            ticks_per_second: self.base.ticks_per_second(),
            t0_tick: self.t0_tick,
            step_ticks: self.step_ticks,
            tick: self.tick,
            schedule: self.events.schedule(),
            instant: self.instant.clone(),
            output: self.output,
            source_names: self.names.clone(),
            world_time: world.time(),
            bodies,
            inputs,
            warm_start: world.warm_start().to_vec(),
            detector: world.detector_state().to_bytes(),
            world_values: self.values[n].clone(),
            statistics: [
                self.stats.steps,
                self.stats.solves,
                self.stats.solver_iterations,
                self.stats.newton_iterations,
            ],
            unsolved: self.unsolved,
        }
    }

    /// Puts back a state taken from this run or from one of the same
    /// bodies and colliders on the same time base; nothing is changed when
    /// it does not fit.
    pub fn put_state(&mut self, s: &RigidState) -> Result<(), StateError> {
        let n = self.world.bodies().len();
        let mismatch = |what: String| Err(StateError::Mismatch(what));
        if (s.ticks_per_second, s.t0_tick, s.step_ticks)
            != (self.base.ticks_per_second(), self.t0_tick, self.step_ticks)
        {
            return mismatch(format!(
                "time base {} ticks/s, t0 at tick {}, step {} ticks; this run: {}, {}, {}",
                s.ticks_per_second,
                s.t0_tick,
                s.step_ticks,
                self.base.ticks_per_second(),
                self.t0_tick,
                self.step_ticks
            ));
        }
        if s.bodies.len() != n || !(s.inputs.is_empty() || s.inputs.len() == n) {
            return mismatch(format!(
                "{} bodies and {} held inputs; this run has {n} bodies",
                s.bodies.len(),
                s.inputs.len()
            ));
        }
        if s.world_values.len() != WORLD_DIM || s.source_names.len() != s.schedule.sources.len() {
            return Err(StateError::Corrupt(
                "the world's values or the event sources have the wrong size".into(),
            ));
        }
        let events = EventManager::from_schedule(&s.schedule).map_err(StateError::Corrupt)?;
        let detector = DetectorState::from_bytes(&s.detector)
            .map_err(|e| StateError::Corrupt(e.to_string()))?;
        let states: Vec<BodyState> = s
            .bodies
            .iter()
            .map(|v| BodyState {
                position: Vector3::new(v[0], v[1], v[2]),
                orientation: UnitQuaternion::new_unchecked(Quaternion::new(v[3], v[4], v[5], v[6])),
                velocity: Vector3::new(v[7], v[8], v[9]),
                omega: Vector3::new(v[10], v[11], v[12]),
            })
            .collect();
        let held: Vec<HeldInput> = s
            .inputs
            .iter()
            .map(|u| HeldInput {
                force: Vector3::new(u[0], u[1], u[2]),
                torque: Vector3::new(u[3], u[4], u[5]),
            })
            .collect();
        self.world
            .restore(s.world_time, &states, &held, &s.warm_start, &detector)
            .map_err(|e| StateError::Mismatch(e.to_string()))?;
        self.events = events;
        self.tick = s.tick;
        self.instant.clone_from(&s.instant);
        self.output = s.output;
        self.names.clone_from(&s.source_names);
        self.stats = s.stats();
        self.unsolved = s.unsolved;
        self.g.iter_mut().for_each(|x| *x = 0.0);
        for (b, u) in s.inputs.iter().enumerate() {
            self.g[b * BODY_DIM + BODY_VALUES..(b + 1) * BODY_DIM].copy_from_slice(u);
        }
        for (b, v) in s.bodies.iter().enumerate() {
            self.values[b][..BODY_VALUES].copy_from_slice(v);
            self.values[b][BODY_VALUES..]
                .copy_from_slice(&self.g[b * BODY_DIM + BODY_VALUES..(b + 1) * BODY_DIM]);
        }
        self.values[n].copy_from_slice(&s.world_values);
        Ok(())
    }
}
