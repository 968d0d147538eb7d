//! A column of beads falling onto each other, every contact frictional:
//! contacts close one after another, bounce open and close again, and
//! neighbours slide, so the set of pushing contacts changes over the run.
//! Shared by the frictional time-stepping tests.
#![allow(dead_code)]

use nonsmooth::simulation::{Assembly, TimeStepping};
use nonsmooth_scenario::Scenario;

/// The friction coefficient of every contact.
pub const MU: f64 = 0.3;

/// How the contacts between beads are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contacts {
    /// A linear relation y = H q + b (W's blocks computed once).
    Linear,
    /// The same rows as h(q) and its Jacobian (W assembled at every step).
    Scleronomous,
}

/// A column of `beads` beads (radius 0.1 m) with gaps of 1 cm, horizontal
/// velocities 0.5·sin(i), every contact frictional (μ = [`MU`], restitution
/// 0.5, dimension 2), stepped at h = 1e-3 up to 1 s. `solver` names the
/// one-step solver (`[simulation] solver`; the scenario default when
/// `None`), `assembly` the storage of the one-step problem.
pub fn falling_column(
    beads: usize,
    solver: Option<&str>,
    assembly: Assembly,
    contacts: Contacts,
) -> TimeStepping {
    let linear = r#"relation = { type = "lagrangian_linear", H = [[-1, 0, 1, 0], [0, -1, 0, 1]], b = ["-2*radius", 0] }"#;
    let scleronomous = r#"relation = { type = "lagrangian_scleronomous", h = ["q2 - q0 - 2*radius", "q3 - q1"], jacobian = [[-1, 0, 1, 0], [0, -1, 0, 1]] }"#;
    let text = r#"
name = "falling_column"

[parameters]
beads = 10
radius = 0.1
gap = 0.01

[simulation]
t_end = 1
step = 1e-3
SOLVER

[[systems]]
repeat = { i = "0 .. beads" }
name = "bead{i}"
type = "lagrangian_linear"
q0 = ["radius + gap + i*(2*radius + gap)", 0]
v0 = [0, "0.5*sin(i)"]
mass_diagonal = [1, 1]
fext = [-9.81, 0]

[[interactions]]
name = "ground"
systems = ["bead0"]
relation = { type = "lagrangian_linear", H = [[1, 0], [0, 1]], b = ["-radius", 0] }
law = { type = "newton_impact_friction", restitution = 0.5, friction = 0.3, dimension = 2 }

[[interactions]]
repeat = { i = "1 .. beads" }
name = "contact{i}"
systems = ["bead{i-1}", "bead{i}"]
RELATION
law = { type = "newton_impact_friction", restitution = 0.5, friction = 0.3, dimension = 2 }

[output]
record = ["bead0.q"]
"#
    .replace(
        "SOLVER",
        &solver.map_or(String::new(), |s| format!("solver = \"{s}\"")),
    )
    .replace(
        "RELATION",
        match contacts {
            Contacts::Linear => linear,
            Contacts::Scleronomous => scleronomous,
        },
    );
    let mut scenario = Scenario::from_str(&text, "falling_column.toml").unwrap();
    scenario.set_parameter("beads", beads as f64).unwrap();
    let built = scenario.build().unwrap();
    let mut settings = built.settings.clone();
    settings.assembly = assembly;
    TimeStepping::new(built.model.clone(), settings).unwrap()
}
