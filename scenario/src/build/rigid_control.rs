//! Sensors and controllers on rigid bodies: the loop around a rigid world
//! and the recordable variables of a rigid scenario.
//!
//! A body's stand-in system (`nonsmooth_collision::RigidSimulation`) holds
//! its 13 values, then its held force and torque; sensors and controllers
//! name them (`crate::ports`). The loop steps the world as any plant: a
//! controller's input is held from its application instant over the
//! following steps (zero-order hold) and enters the θ-scheme's free
//! velocity as an external load.

use std::sync::Arc;

use nonsmooth::control::{ControlLoop, LawCatalog};
use nonsmooth::modelling::{Model, SystemId};
use nonsmooth::simulation::{EventDrivenSettings, Strategy, TimeSteppingSettings};
use nonsmooth_collision::{BODY_INPUTS, BODY_LAYOUT, WORLD_LAYOUT, WORLD_SYSTEM};

use super::bodies::RigidScene;
use super::output;
use crate::control::{self, ControlPlan};
use crate::error::{Result, ScenarioError};
use crate::record::{ControlVariables, Variable};
use crate::Places;

/// A fresh loop of `plan`'s sensors and controllers around a run of
/// `scene` (time-stepping, the clock of `settings` fitted to the objects'
/// periods, offsets and delays).
pub(crate) fn rigid_loop(
    scene: &RigidScene,
    model: &Arc<Model>,
    plan: &ControlPlan,
    settings: &TimeSteppingSettings,
    event_driven: &EventDrivenSettings,
    catalog: &dyn LawCatalog,
    places: &Places,
) -> Result<ControlLoop> {
    let s = settings;
    let sim = scene
        .simulation(
            Arc::clone(model),
            s.t0,
            s.t_end,
            s.step,
            s.output_every,
            &plan.times(),
        )
        .map_err(|source| ScenarioError::Simulation {
            at: places.simulation.clone(),
            source,
        })?;
    control::instantiate(
        plan,
        model,
        Strategy::TimeStepping,
        settings,
        event_driven,
        catalog,
        places,
        &[],
        Some(Box::new(sim)),
    )
}

/// The recordable variables: each body's values (`position`,
/// `quaternion`, `velocity`, `omega`, and `force`, `torque` on the bodies
/// a controller drives), the world's, then those of the control objects
/// (from a probe loop, which also checks the laws against their loop).
pub(super) fn variables(
    scene: &RigidScene,
    model: &Arc<Model>,
    plan: &ControlPlan,
    settings: &TimeSteppingSettings,
    event_driven: &EventDrivenSettings,
    catalog: &dyn LawCatalog,
    places: &Places,
) -> Result<ControlVariables> {
    let actuated: Vec<SystemId> = plan.actuated_systems().collect();
    let mut out: ControlVariables = scene
        .names
        .iter()
        .enumerate()
        .map(|(b, name)| {
            let inputs = if actuated.contains(&SystemId(b)) {
                &BODY_INPUTS[..]
            } else {
                &[]
            };
            let vars = BODY_LAYOUT
                .iter()
                .chain(inputs)
                .map(|&(v, off, n)| (v, Variable::Part(SystemId(b), off), n))
                .collect();
            (name.clone(), vars)
        })
        .collect();
    let w = SystemId(scene.names.len());
    out.push((
        WORLD_SYSTEM.to_string(),
        WORLD_LAYOUT
            .iter()
            .map(|&(v, off, n)| (v, Variable::Part(w, off), n))
            .collect(),
    ));
    if !plan.is_empty() {
        let probe = rigid_loop(scene, model, plan, settings, event_driven, catalog, places)?;
        out.extend(output::control_variables(&probe, plan));
    }
    Ok(out)
}
