//! A world of rigid bodies with shapes: detection then the contact step.
//!
//! Each step [t_k, t_k + h]: the detector finds the contacts of the states
//! at t_k, then `nonsmooth::rigid::ContactStep` solves the Moreau–Jean
//! one-step problem and advances every body (docs/rigid-bodies.md).

use std::sync::Arc;

use nalgebra::Vector3;
use nonsmooth::rigid::{BodyState, Contact, ContactSettings, ContactStep, RigidBody, StepReport};

use crate::detector::ContactDetector;
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
        })
    }

    /// One step of length h.
    pub fn step(&mut self, h: f64) -> std::result::Result<StepReport, WorldError> {
        self.detector.detect(&self.states, &mut self.contacts)?;
        let report = self.stepper.step(
            &self.bodies,
            &mut self.states,
            &self.contacts,
            self.time,
            h,
            &self.gravity,
        )?;
        self.time += h;
        self.last = Some(report);
        Ok(report)
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
