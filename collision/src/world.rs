//! A world of rigid bodies with shapes: detection then the contact step.
//!
//! Each step [t_k, t_k + h]: the detector finds the contacts of the states
//! at t_k, then `nonsmooth::rigid::ContactStep` solves the Moreau–Jean
//! one-step problem and advances every body (docs/rigid-bodies.md).

use std::sync::Arc;

use nalgebra::Vector3;
use nonsmooth::rigid::{
    BodyState, Contact, ContactSettings, ContactStep, HeldInput, RigidBody, StepReport,
};

use crate::detector::{ContactDetector, DetectorState};
use crate::error::CollisionError;

/// Errors of a world step: detection or the contact step.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// Contact detection failed.
    #[error(transparent)]
    Collision(#[from] CollisionError),
    /// The rigid-body step failed.
    #[error(transparent)]
    Rigid(#[from] nonsmooth::rigid::RigidError),
}

/// Bodies (immutable, shared), their states, the detector and the step.
#[derive(Debug)]
pub struct RigidWorld {
    bodies: Arc<[RigidBody]>,
    states: Vec<BodyState>,
    detector: ContactDetector,
    stepper: ContactStep,
    contacts: Vec<Contact>,
    gravity: Vector3<f64>,
    time: f64,
    last: Option<StepReport>,
    /// The input held on each body (empty until one is set).
    held: Vec<HeldInput>,
}

impl RigidWorld {
    /// A world at time `t0`.
    pub fn new(
        bodies: Arc<[RigidBody]>,
        states: Vec<BodyState>,
        detector: ContactDetector,
        settings: ContactSettings,
        gravity: Vector3<f64>,
        t0: f64,
    ) -> std::result::Result<Self, WorldError> {
        if bodies.len() != states.len() {
            return Err(CollisionError::SizeMismatch {
                colliders: bodies.len(),
                states: states.len(),
            }
            .into());
        }
        for (i, (b, s)) in bodies.iter().zip(&states).enumerate() {
            b.validate(i)?;
            s.validate(i)?;
        }
        Ok(RigidWorld {
            bodies,
            states,
            detector,
            stepper: ContactStep::new(settings)?,
            contacts: Vec::new(),
            gravity,
            time: t0,
            last: None,
            held: Vec::new(),
        })
    }

    /// One step of length h.
    pub fn step(&mut self, h: f64) -> std::result::Result<StepReport, WorldError> {
        self.detector.detect(&self.states, &mut self.contacts)?;
        let report = self.stepper.step_held(
            &self.bodies,
            &mut self.states,
            &self.held,
            &self.contacts,
            self.time,
            h,
            &self.gravity,
        )?;
        self.time += h;
        self.last = Some(report);
        Ok(report)
    }

    /// Holds `input` on body `body` from the next step on (zero-order
    /// hold: until changed). A fixed body takes none.
    pub fn set_held_input(
        &mut self,
        body: usize,
        input: HeldInput,
    ) -> std::result::Result<(), WorldError> {
        let bad = |reason: String| nonsmooth::rigid::RigidError::InvalidBody { body, reason };
        let Some(b) = self.bodies.get(body) else {
            return Err(bad(format!("no such body ({} bodies)", self.bodies.len())).into());
        };
        let finite = input
            .force
            .iter()
            .chain(input.torque.iter())
            .all(|x| x.is_finite());
        if !finite {
            return Err(bad("a held force or torque is not finite".into()).into());
        }
        if b.fixed && input != HeldInput::default() {
            return Err(bad("a fixed body takes no force or torque".into()).into());
        }
        if self.held.is_empty() {
            self.held = vec![HeldInput::default(); self.bodies.len()];
        }
        self.held[body] = input;
        Ok(())
    }

    /// The inputs held on the bodies (empty when none was ever set).
    pub fn held_inputs(&self) -> &[HeldInput] {
        &self.held
    }

    /// The contact step's warm start (impulses by contact id).
    pub fn warm_start(&self) -> &[(u64, [f64; 3])] {
        self.stepper.warm_start()
    }

    /// The detector's state (see [`DetectorState`]).
    pub fn detector_state(&self) -> DetectorState {
        self.detector.save_state()
    }

    /// Puts back what a later step reads: the time, the states, the held
    /// inputs (empty: none), the warm start and the detector's records.
    /// The contacts and report of the last step are cleared (they are
    /// outputs of the step, not read by the next). Nothing is changed
    /// when a part does not fit.
    pub fn restore(
        &mut self,
        time: f64,
        states: &[BodyState],
        held: &[HeldInput],
        warm_start: &[(u64, [f64; 3])],
        detector: &DetectorState,
    ) -> std::result::Result<(), WorldError> {
        let n = self.bodies.len();
        if states.len() != n || !(held.is_empty() || held.len() == n) {
            return Err(CollisionError::SizeMismatch {
                colliders: n,
                states: states.len(),
            }
            .into());
        }
        for (i, s) in states.iter().enumerate() {
            s.validate(i)?;
        }
        let old = self.stepper.warm_start().to_vec();
        self.stepper.set_warm_start(warm_start)?;
        if let Err(e) = self.detector.restore_state(detector) {
            self.stepper.set_warm_start(&old)?;
            return Err(e.into());
        }
        self.time = time;
        self.states.copy_from_slice(states);
        self.held.clear();
        self.held.extend_from_slice(held);
        self.contacts.clear();
        self.last = None;
        Ok(())
    }

    /// The settings of the contact step.
    pub fn contact_settings(&self) -> &ContactSettings {
        self.stepper.settings()
    }

    /// The world's time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The bodies.
    pub fn bodies(&self) -> &[RigidBody] {
        &self.bodies
    }

    /// The states.
    pub fn states(&self) -> &[BodyState] {
        &self.states
    }

    /// The states, to change them between steps.
    pub fn states_mut(&mut self) -> &mut [BodyState] {
        &mut self.states
    }

    /// The contacts of the last step (detected at its start).
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    /// The impulses of the last step's contacts (same order).
    pub fn impulses(&self) -> &[[f64; 3]] {
        self.stepper.impulses()
    }

    /// The report of the last step.
    pub fn last_report(&self) -> Option<StepReport> {
        self.last
    }

    /// The detector.
    pub fn detector(&self) -> &ContactDetector {
        &self.detector
    }

    /// Kinetic energy of all bodies.
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies
            .iter()
            .zip(&self.states)
            .map(|(b, s)| s.kinetic_energy(b))
            .sum()
    }

    /// Potential energy of gravity, −Σ m g·x_G over the free bodies.
    pub fn potential_energy(&self) -> f64 {
        self.bodies
            .iter()
            .zip(&self.states)
            .filter(|(b, _)| !b.fixed)
            .map(|(b, s)| -b.mass * self.gravity.dot(&s.position))
            .sum()
    }
}
