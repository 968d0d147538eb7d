//! The two-link arm under Moreau–Jean with Newton iterations: free flight,
//! the arm falling onto the ground with elbow stops (`examples/arm_fall.toml`),
//! and the scenario checks of its types.

use std::path::Path;

use nalgebra::dvector;
use nonsmooth::modelling::models::TwoLinkArm;
use nonsmooth::modelling::*;
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};
use nonsmooth_scenario::Scenario;

/// Largest |E(t) − E(0)| over [0, T] of the free arm swinging under gravity,
/// and the mean Newton iterations per step.
fn free_flight(h: f64, t_end: f64) -> (f64, f64) {
    let arm = TwoLinkArm::study();
    let mut b = ModelBuilder::new();
    let s = b
        .add_system("arm", arm.system(dvector![0.9, -1.6], dvector![0.5, 2.0]))
        .unwrap();
    let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, t_end)).unwrap();
    let e0 = arm.energy(sim.q(s), sim.v(s));
    let mut worst = 0.0f64;
    sim.run(|sim| worst = worst.max((arm.energy(sim.q(s), sim.v(s)) - e0).abs()))
        .unwrap();
    let st = sim.statistics();
    (worst, st.newton_iterations as f64 / st.steps as f64)
}

#[test]
fn free_flight_energy_error_is_second_order_and_newton_takes_few_iterations() {
    let (e1, n1) = free_flight(2e-3, 2.0);
    let (e2, n2) = free_flight(1e-3, 2.0);
    let (e3, n3) = free_flight(5e-4, 2.0);
    // θ = 1/2 with M at the midpoint: the energy error is O(h²).
    for ratio in [e1 / e2, e2 / e3] {
        assert!((3.7..4.3).contains(&ratio), "{e1:e} {e2:e} {e3:e}");
    }
    assert!(e2 < 2e-5, "{e2:e}");
    // Analytic Jacobians: Newton converges to 1e-10 in about 3 iterations.
    for n in [n1, n2, n3] {
        assert!((1.5..=4.0).contains(&n), "{n} Newton iterations per step");
    }
}

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

#[test]
fn falling_arm_hits_its_stop_then_the_ground_and_comes_to_rest() {
    let built = Scenario::from_file(example("arm_fall.toml"))
        .unwrap()
        .build()
        .unwrap();
    let mut sim = TimeStepping::new(built.model.clone(), built.settings.clone()).unwrap();
    let model = sim.model().clone();
    let arm_id = model.system_id("arm").unwrap();
    let names = ["tip", "elbow", "stop_low", "stop_high"];
    let ids: Vec<InteractionId> = names
        .iter()
        .map(|n| model.interaction_id(n).unwrap())
        .collect();
    let restitution = [0.9, 0.9, 0.0, 0.0];
    let arm = TwoLinkArm::new([0.5, 0.5], [1.0, 1.0], [0.25 / 12.0; 2], 9.81).unwrap();
    let mut first = [f64::NAN; 4];
    let mut ydot_before = [0.0; 4];
    let mut worst_law = 0.0f64;
    let mut lowest = 0.0f64;
    let mut contacts = 0;
    let e0 = arm.energy(sim.q(arm_id), sim.v(arm_id));
    while sim.time() < sim.settings().t_end - 1e-12 {
        for (k, id) in ids.iter().enumerate() {
            ydot_before[k] = sim.ydot(*id)[0];
        }
        sim.step().unwrap();
        for (k, id) in ids.iter().enumerate() {
            lowest = lowest.min(sim.y(*id)[0]);
            if sim.lambda(*id)[0] > 0.0 {
                contacts += 1;
                if first[k].is_nan() {
                    first[k] = sim.time();
                }
                // Newton's law at velocity level: ẏ_{k+1} = −e ẏ_k while the
                // impulse is positive.
                let res = sim.ydot(*id)[0] + restitution[k] * ydot_before[k];
                worst_law = worst_law.max(res.abs() / ydot_before[k].abs().max(1e-3));
            }
        }
    }
    eprintln!("first contacts {first:?}, law residual {worst_law:e}, lowest y {lowest:e}");
    // The narrative of the fall: the elbow stop, then the tip, then the elbow.
    assert!(first[2] < first[0] && first[0] < first[1], "{first:?}");
    assert!(first[3].is_nan() || first[3] > first[0]);
    assert!(contacts > 20);
    assert!(
        worst_law < 1e-6,
        "velocity-level law residual {worst_law:e}"
    );
    // Penetration stays at the O(h·v) of the velocity-level scheme.
    assert!(lowest > -2e-3, "lowest height {lowest:e}");
    // At rest on the ground: both links flat, the energy dissipated.
    let (q, v) = (sim.q(arm_id), sim.v(arm_id));
    assert!(q[0].abs() < 1e-3 && q[1].abs() < 2e-3, "{q:?}");
    // What is left (about 1e-4 J of 8.4 J) is the last micro-bounces of
    // the e = 0.9 contacts, resolved at the step's scale.
    let e1 = arm.energy(q, v);
    assert!(e1.abs() < 1e-3 * e0, "energy {e1} of {e0}");
}

#[test]
fn arm_types_are_checked_in_scenario_files() {
    let base = std::fs::read_to_string(example("arm_fall.toml")).unwrap();
    let bad = [
        (
            base.replace(
                "lengths = [\"length\", \"length\"]",
                "lengths = [\"length\", \"length\", 1]",
            ),
            "two values",
        ),
        (
            base.replace("gravity = \"gravity\"\n", "gravity = -1\n"),
            "gravity",
        ),
        (
            base.replace("masses = [\"mass\", \"mass\"]", "masses = [0, 1]"),
            "masses",
        ),
        (base.replace("point = \"tip\"", "point = \"hand\""), "hand"),
        (
            base.replace(
                "H = [[0, 1]], b = [\"stop\"]",
                "H = [[0, 1]], b = [\"stop\"], point = \"tip\"",
            ),
            "point",
        ),
        (
            base.replace("lengths = [\"length\", \"length\"]\n", ""),
            "lengths",
        ),
    ];
    for (text, needle) in bad {
        let msg = match Scenario::from_str(&text, "arm.toml") {
            Err(e) => e.to_string(),
            Ok(s) => match s.build() {
                Err(e) => e.to_string(),
                Ok(_) => panic!("accepted a scenario that should fail on {needle}"),
            },
        };
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    // A height relation on a system that is not an arm.
    let text = r#"
name = "x"
[simulation]
t_end = 1
step = 0.1
[[systems]]
name = "ball"
type = "lagrangian_linear"
q0 = [1]
mass = [[1]]
[[interactions]]
name = "h"
systems = ["ball"]
relation = { type = "two_link_arm_height" }
law = { type = "newton_impact", restitution = 0.5 }
"#;
    let msg = Scenario::from_str(text, "x.toml")
        .unwrap()
        .build()
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("two_link_arm"), "{msg}");
}
