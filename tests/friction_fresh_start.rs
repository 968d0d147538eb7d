//! The start the default frictional solver gives to contacts without an
//! impulse from the previous step (their own one-contact problem with the
//! other impulses held, `friction_fresh.rs`) against Newton started from
//! zero for them (`solver = "newton-ac"`, the previous impulses as they
//! are), on a column of beads falling onto each other: contacts close one
//! after another, bounce open and close again, so that many steps have
//! contacts that push without having pushed at the step before.

use nonsmooth::modelling::{InteractionId, SystemId};
use nonsmooth::simulation::{Assembly, TimeStepping};
use nonsmooth_scenario::Scenario;

const MU: f64 = 0.3;

/// A column of `beads` beads with gaps of 1 cm, horizontal velocities
/// 0.5·sin(i), every contact frictional (μ = 0.3, restitution 0.5), solved
/// by `solver` over the active contacts.
fn falling_column(beads: usize, solver: &str) -> TimeStepping {
    let text = r#"
name = "falling_column"

[parameters]
beads = 10
radius = 0.1
gap = 0.01

[simulation]
t_end = 1
step = 1e-3
solver = "SOLVER"

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
relation = { type = "lagrangian_linear", H = [[-1, 0, 1, 0], [0, -1, 0, 1]], b = ["-2*radius", 0] }
law = { type = "newton_impact_friction", restitution = 0.5, friction = 0.3, dimension = 2 }

[output]
record = ["bead0.q"]
"#
    .replace("SOLVER", solver);
    let mut scenario = Scenario::from_str(&text, "falling_column.toml").unwrap();
    scenario.set_parameter("beads", beads as f64).unwrap();
    let built = scenario.build().unwrap();
    let mut settings = built.settings.clone();
    settings.assembly = Assembly::Dense;
    TimeStepping::new(built.model.clone(), settings).unwrap()
}

/// Both runs agree within the solvers' tolerance (1e-9 on every impulse and
/// position) over 700 steps, through more than a hundred steps where a
/// contact starts pushing with no impulse at the step before (each one
/// started by its own problem in the default run); the default run's
/// impulses satisfy Coulomb's law.
#[test]
fn the_fresh_contacts_start_gives_the_run_of_newton_from_zero() {
    let beads = 30;
    let mut fresh = falling_column(beads, "default");
    let mut zero = falling_column(beads, "newton-ac");
    let mut previous = vec![0.0; beads];
    let mut started = 0;
    let mut worst: f64 = 0.0;
    for step in 0..700 {
        fresh.step().unwrap();
        zero.step().unwrap();
        for (k, before) in previous.iter_mut().enumerate() {
            let (pf, pz) = (
                fresh.lambda(InteractionId(k)),
                zero.lambda(InteractionId(k)),
            );
            assert!(pf[0] >= 0.0, "step {step}, contact {k}: P_N = {}", pf[0]);
            assert!(
                pf[1].abs() <= MU * pf[0] * (1.0 + 1e-9) + 1e-15,
                "step {step}, contact {k}: P = {pf:?} outside the cone"
            );
            for (x, y) in pf.iter().zip(pz) {
                worst = worst.max((x - y).abs());
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, contact {k}: P {pf:?} (fresh start) against {pz:?} (from zero)"
                );
            }
            if *before == 0.0 && pf[0] > 0.0 {
                started += 1;
            }
            *before = pf[0];
            let (qf, qz) = (fresh.q(SystemId(k)), zero.q(SystemId(k)));
            for (x, y) in qf.iter().zip(qz) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, bead {k}: q {qf:?} (fresh start) against {qz:?} (from zero)"
                );
            }
        }
    }
    assert!(
        started >= 100,
        "only {started} contacts started pushing from no impulse"
    );
    eprintln!("largest impulse difference {worst:e}, {started} fresh contacts pushing");
}
