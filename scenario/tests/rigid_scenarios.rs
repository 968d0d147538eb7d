//! Rigid bodies in scenario files: the bundled examples run through the one
//! driver (the control loop around `RigidSimulation`) and obey their
//! physics, checked against oracles apart from the code: the geometry of a
//! cube at rest on a face, the energy balance of the Moreau–Jean step
//! (θ = 1, e = 0: the energy never increases), the walls of the box, a
//! stack that must not move, the rolling of a ball down a slope
//! (a = 5/7 g sin α), and textbook masses and inertias; bad input names its
//! line.

use std::path::{Path, PathBuf};

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use nonsmooth::simulation::StepOutcome;
use nonsmooth_scenario::{BuiltScenario, Scenario, ScenarioError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn system(built: &BuiltScenario, name: &str) -> nonsmooth::modelling::SystemId {
    built
        .model
        .system_id(name)
        .unwrap_or_else(|| panic!("no body {name}"))
}

/// Runs to the end, calling `each` with the body values (13 per body, in
/// body order) and the world's values after every instant.
fn run_each(built: &BuiltScenario, mut each: impl FnMut(f64, &[&[f64]], &[f64])) {
    let mut cl = built.control_loop().expect("the run starts");
    let scene = built.rigid.as_ref().expect("a rigid scenario");
    let n = scene.names.len();
    let world = system(built, "world");
    loop {
        let bodies: Vec<&[f64]> = (0..n)
            .map(|b| cl.plant().q(nonsmooth::modelling::SystemId(b)))
            .collect();
        each(cl.time(), &bodies, cl.plant().q(world));
        match cl.step().expect("the step succeeds") {
            StepOutcome::Advanced { .. } => {}
            StepOutcome::Finished => break,
        }
    }
}

fn pose(v: &[f64]) -> (Vector3<f64>, UnitQuaternion<f64>) {
    (
        Vector3::new(v[0], v[1], v[2]),
        UnitQuaternion::new_normalize(nalgebra::Quaternion::new(v[3], v[4], v[5], v[6])),
    )
}

#[test]
fn cube_comes_to_rest_on_a_face() {
    let built = Scenario::from_file(example("cube_on_plane.toml"))
        .unwrap()
        .build()
        .unwrap();
    let scene = built.rigid.as_ref().unwrap();
    let half = built.parameters["half"];
    let margin = scene.margin;
    let cube = 1;
    let mut last = Vec::new();
    let mut max_height = 0.0f64;
    let mut first_speed = 0.0;
    run_each(&built, |t, bodies, _| {
        last = bodies[cube].to_vec();
        max_height = max_height.max(bodies[cube][2]);
        if t == 0.0 {
            first_speed = Vector3::new(bodies[cube][7], bodies[cube][8], bodies[cube][9]).norm();
        }
    });
    assert!(first_speed > 0.4, "the cube starts moving");
    let (x, q) = pose(&last);
    let v = Vector3::new(last[7], last[8], last[9]);
    let w = Vector3::new(last[10], last[11], last[12]);
    assert!(v.norm() <= 1e-6, "speed {:e}", v.norm());
    assert!(w.norm() <= 1e-6, "angular speed {:e}", w.norm());
    // On a face: the four lowest corners touch the plane (gaps within the
    // margin), the four others are a side higher.
    let mut corners: Vec<f64> = (0..8)
        .map(|s| {
            let c = Vector3::new(
                if s & 1 == 0 { -half } else { half },
                if s & 2 == 0 { -half } else { half },
                if s & 4 == 0 { -half } else { half },
            );
            (x + q * c).z
        })
        .collect();
    corners.sort_by(f64::total_cmp);
    for z in &corners[..4] {
        assert!(z.abs() <= margin, "corner heights {corners:?}");
    }
    for z in &corners[4..] {
        assert!(
            (z - 2.0 * half).abs() <= margin,
            "corner heights {corners:?}"
        );
    }
    assert!((x.z - half).abs() <= margin, "centre at z = {}", x.z);
    assert!(max_height <= built.parameters["height"] + 1e-12);
}

#[test]
fn spheres_in_the_box_lose_energy_and_stay_inside() {
    let mut s = Scenario::from_file(example("spheres_in_box.toml")).unwrap();
    s.set_parameter("spheres", 60.0).unwrap();
    s.set_parameter("t_end", 1.0).unwrap();
    let built = s.build().unwrap();
    let scene = built.rigid.as_ref().unwrap();
    assert_eq!(scene.names.len(), 61, "the box and 60 spheres");
    let (w, r, margin) = (
        built.parameters["width"],
        built.parameters["radius"],
        scene.margin,
    );
    let mut previous: Option<f64> = None;
    let mut rises = 0.0f64;
    let mut max_contacts = 0.0f64;
    let mut final_energy = 0.0;
    let mut initial_energy = 0.0;
    run_each(&built, |t, bodies, world| {
        let energy = world[0] + world[1];
        if t == 0.0 {
            initial_energy = energy;
        }
        if let Some(e) = previous {
            rises = rises.max(energy - e);
        }
        previous = Some(energy);
        final_energy = energy;
        max_contacts = max_contacts.max(world[3]);
        for b in &bodies[1..] {
            let inside = b[0].abs() <= 0.5 * w - r + margin
                && b[1].abs() <= 0.5 * w - r + margin
                && b[2] >= r - margin;
            assert!(inside, "t = {t}: a sphere left the box at {:?}", &b[..3]);
        }
    });
    // The energy balance of the step (θ = 1, e = 0, no gyroscopic term for
    // balls): ΔE = Σ r·u − ½|Δv|²_M ≤ 0, up to round-off.
    assert!(
        rises <= 1e-9 * initial_energy.abs(),
        "the energy rose by {rises:e} in one step (E0 = {initial_energy})"
    );
    assert!(max_contacts >= 60.0, "the spheres reach the floor");
    assert!(final_energy < initial_energy);
}

#[test]
fn a_stack_of_boxes_stays_still_for_ten_seconds() {
    let mut s = Scenario::from_file(example("box_stack.toml")).unwrap();
    // Half a second to settle (the boxes start exactly touching: the first
    // step is a free fall before the contacts close), then ten seconds.
    s.set_parameter("t_end", 10.5).unwrap();
    let built = s.build().unwrap();
    let boxes = built.parameters["boxes"] as usize;
    let mut at_settle: Option<Vec<Vec<f64>>> = None;
    let mut drift = 0.0f64;
    let mut end = 0.0;
    run_each(&built, |t, bodies, _| {
        end = t;
        if t >= 0.5 - 1e-12 {
            let now: Vec<Vec<f64>> = bodies[1..].iter().map(|b| b[..3].to_vec()).collect();
            match &at_settle {
                None => at_settle = Some(now),
                Some(first) => {
                    for (a, b) in first.iter().zip(&now) {
                        for k in 0..3 {
                            drift = drift.max((a[k] - b[k]).abs());
                        }
                    }
                }
            }
        }
    });
    assert!((end - 10.5).abs() < 1e-9);
    assert!(drift <= 1e-6, "the stack moved by {drift:e} m");
    // And it settled where it started, within the margin per box.
    let first = at_settle.unwrap();
    let half = built.parameters["half"];
    for (k, p) in first.iter().enumerate().take(boxes) {
        assert!(
            (p[2] - half * (2 * k + 1) as f64).abs() <= 1e-4,
            "box {k} at {p:?}"
        );
    }
}

/// The box stack solved by NSGS alone (which stalls at a few 10⁻⁷ on it,
/// docs/rigid-scenarios.md) over `t_end`, with `rigid_extra` appended to
/// `[rigid]`.
#[allow(clippy::result_large_err)]
fn nsgs_stack(t_end: f64, rigid_extra: &str) -> Result<BuiltScenario, ScenarioError> {
    let text = std::fs::read_to_string(example("box_stack.toml")).unwrap();
    let text = text
        .replace("solver = \"default\"", "solver = \"nsgs\"")
        .replace("[rigid]\n", &format!("[rigid]\n{rigid_extra}\n"));
    let mut s = Scenario::from_str(&text, "stack.toml")?;
    s.set_parameter("t_end", t_end)?;
    s.build()
}

#[test]
fn a_step_short_of_the_tolerance_stops_the_run_unless_accepted() {
    // Without accept_error the first step NSGS leaves above 1e-10 stops the
    // run with the solver's status and error.
    let built = nsgs_stack(0.2, "").unwrap();
    let mut cl = built.control_loop().unwrap();
    let failure = loop {
        match cl.step() {
            Ok(StepOutcome::Advanced { .. }) => {}
            Ok(StepOutcome::Finished) => panic!("NSGS solved every step of the stack to 1e-10"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(failure.contains("iteration_limit"), "{failure}");

    // With accept_error = 1e-4 the run goes to its end; the steps kept are
    // counted and every recorded error is within the bound.
    let built = nsgs_stack(0.2, "accept_error = 1e-4").unwrap();
    let mut kept = 0.0f64;
    let mut worst = 0.0f64;
    let mut end = 0.0;
    run_each(&built, |t, _, world| {
        assert!(world[6] >= kept, "the count of kept steps never decreases");
        kept = world[6];
        worst = worst.max(world[5]);
        end = t;
    });
    assert!((end - 0.2).abs() < 1e-12);
    eprintln!("{kept} steps kept short of 1e-10, worst error {worst:e}");
    assert!(kept >= 1.0, "no step was kept short of the tolerance");
    assert!(
        worst <= 1e-4,
        "a recorded step error {worst:e} exceeds accept_error"
    );

    // accept_error below the tolerance is refused at its line.
    let e = nsgs_stack(0.2, "accept_error = 1e-12").unwrap_err();
    assert!(
        e.to_string()
            .contains("accept_error must be finite and at least the tolerance"),
        "{e}"
    );
    assert_eq!(e.line(), Some(21), "{e}");
}

#[test]
fn a_ball_rolls_down_a_height_field_slope() {
    // z = s·x: a slope of angle α = atan(s) going down toward −x. A solid
    // ball rolling without slipping accelerates along it at 5/7 g sin α.
    let text = r#"
name = "slope"
[parameters]
s = 0.1
r = 0.1
[simulation]
t_end = 1
step = 1e-3
[rigid]
friction = 0.8
margin = 1e-3
[[bodies]]
name = "terrain"
fixed = true
shapes = [{ type = "height_field", height = "s*x", size = [8, 8], samples = [9, 9] }]
[[bodies]]
name = "ball"
density = 1000
shapes = [{ type = "sphere", radius = "r" }]
position = ["-r*sin(atan(s))", 0, "r*cos(atan(s))"]
[output]
frames = 0
"#;
    let built = Scenario::from_str(text, "slope.toml")
        .unwrap()
        .build()
        .unwrap();
    let slope: f64 = 0.1;
    let alpha = slope.atan();
    let a = 5.0 / 7.0 * 9.81 * alpha.sin();
    let mut start = None;
    let mut end = (0.0, Vector3::zeros());
    let mut contacts_min = f64::INFINITY;
    run_each(&built, |t, bodies, world| {
        let p = Vector3::new(bodies[1][0], bodies[1][1], bodies[1][2]);
        if start.is_none() {
            start = Some(p);
        }
        if t > 0.05 {
            contacts_min = contacts_min.min(world[3]);
        }
        end = (t, p);
    });
    let travelled = (end.1 - start.unwrap()).norm();
    let expected = 0.5 * a * end.0 * end.0;
    assert!(contacts_min >= 1.0, "the ball stays on the slope");
    assert!(end.1.x < start.unwrap().x, "it rolls down, toward −x");
    assert!(
        (travelled - expected).abs() <= 0.01 * expected,
        "travelled {travelled}, rolling gives {expected}"
    );
}

#[test]
fn masses_and_inertias_come_from_shapes_and_density() {
    let text = r#"
name = "mass"
[simulation]
t_end = 0
step = 1e-3
[[bodies]]
name = "brick"
density = 2
shapes = [{ type = "box", half_extents = [1, 2, 3] }]
[[bodies]]
name = "dumbbell"
density = 3
shapes = [{ type = "sphere", radius = 0.5, position = [1, 0, 0] },
          { type = "sphere", radius = 0.5, position = [3, 0, 0] }]
position = [5, 0, 0]
[[bodies]]
name = "rod"
mass = 6
shapes = [{ type = "cylinder", radius = 0.1, half_height = 1 }]
[[bodies]]
name = "given"
mass = 2
inertia_diagonal = [1, 2, 3]
shapes = [{ type = "sphere", radius = 1 }]
"#;
    let built = Scenario::from_str(text, "mass.toml")
        .unwrap()
        .build()
        .unwrap();
    let scene = built.rigid.as_ref().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    // Box of sides 2a, 2b, 2c: m = 8ρabc, I_x = m (b² + c²)/3.
    let brick = &scene.bodies[0];
    let m = 2.0 * 8.0 * 6.0;
    assert!(close(brick.mass, m));
    let expect = Matrix3::from_diagonal(&Vector3::new(
        m * (4.0 + 9.0) / 3.0,
        m * (1.0 + 9.0) / 3.0,
        m * (1.0 + 4.0) / 3.0,
    ));
    assert!((brick.inertia - expect).abs().max() <= 1e-9 * m);
    // Two balls: each m₁ = ρ 4/3 π r³, I₁ = 2/5 m₁ r², centres ±1 from the
    // common centre (x = 2 in the body frame, shifted to the origin).
    let m1 = 3.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.125;
    let i1 = 0.4 * m1 * 0.25;
    let d = &scene.bodies[1];
    assert!(close(d.mass, 2.0 * m1));
    assert!(close(d.inertia[(0, 0)], 2.0 * i1));
    assert!(close(d.inertia[(1, 1)], 2.0 * i1 + 2.0 * m1));
    assert!(close(d.inertia[(2, 2)], 2.0 * i1 + 2.0 * m1));
    let centres: Vec<f64> = scene
        .colliders
        .iter()
        .filter(|c| c.body == 1)
        .map(|c| c.local_pose.translation.vector.x)
        .collect();
    assert!(
        close(centres[0], -1.0) && close(centres[1], 1.0),
        "{centres:?}"
    );
    // A cylinder along z of mass m: I_z = m r²/2, I_x = m (3r² + 4h²)/12.
    let rod = &scene.bodies[2];
    assert!(close(rod.inertia[(2, 2)], 6.0 * 0.01 / 2.0));
    assert!(close(rod.inertia[(0, 0)], 6.0 * (0.03 + 4.0) / 12.0));
    // Given inertia is kept.
    assert_eq!(
        scene.bodies[3].inertia,
        Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0))
    );
}

#[test]
fn generators_place_spheres_reproducibly_without_overlap() {
    let text = r#"
name = "pile"
[parameters]
seed = 7
[simulation]
t_end = 0
step = 1e-3
[[generators]]
name = "grain"
type = "random_pile"
count = 200
radius = 0.05
density = 1000
min = [0, 0, 0]
max = [1, 1, 1]
seed = "seed"
[[generators]]
name = "cell"
type = "lattice"
count = 7
radius = 0.5
density = 1
origin = [0, 0, 1]
spacing = 0.5
per_row = [2, 2]
[output]
record = ["world.contacts"]
"#;
    let scene_of = |seed: f64| {
        let mut s = Scenario::from_str(text, "pile.toml").unwrap();
        s.set_parameter("seed", seed).unwrap();
        s.build().unwrap().rigid.unwrap()
    };
    let (a, b, c) = (scene_of(7.0), scene_of(7.0), scene_of(8.0));
    assert_eq!(a.states, b.states, "the same seed gives the same pile");
    assert_ne!(a.states[..200], c.states[..200]);
    for i in 0..200 {
        let p = a.states[i].position;
        assert!(p.iter().all(|&v| (0.05..=0.95).contains(&v)), "{p:?}");
        for j in 0..i {
            assert!((p - a.states[j].position).norm() >= 0.1);
        }
    }
    assert_eq!(a.names[0], "grain0");
    assert_eq!(a.names[200], "cell0");
    // Pitch 2r + spacing = 1.5: 2 × 2 per layer.
    let at = |k: usize| a.states[200 + k].position;
    assert_eq!(at(0), Vector3::new(0.0, 0.0, 1.0));
    assert_eq!(at(1), Vector3::new(1.5, 0.0, 1.0));
    assert_eq!(at(3), Vector3::new(1.5, 1.5, 1.0));
    assert_eq!(at(6), Vector3::new(0.0, 1.5, 2.5));
}

/// The error of a scenario text, with the line it names.
fn error(text: &str) -> (ScenarioError, Option<usize>) {
    let e = match Scenario::from_str(text, "bad.toml") {
        Err(e) => e,
        Ok(s) => s.build().expect_err("the scenario is refused"),
    };
    let line = e.line();
    (e, line)
}

#[test]
fn bad_rigid_input_names_the_line() {
    let head = "name = \"bad\"\n[simulation]\nt_end = 1\nstep = 1e-3\n";
    let cases: [(&str, usize, &str); 11] = [
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"cone\", radius = 1 }]\n",
            8,
            "unknown shape type `cone`",
        ),
        (
            "[[bodies]]\nname = \"b\"\nshapes = [{ type = \"sphere\", radius = 1 }]\n",
            5,
            "needs `mass` or `density`",
        ),
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", radius = -1 }]\n",
            8,
            "radius must be > 0",
        ),
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nmaterial = \"steel\"\nshapes = [{ type = \"sphere\", radius = 1 }]\n",
            8,
            "no material named `steel`",
        ),
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", half_extents = [1, 1, 1] }]\n",
            8,
            "`half_extents` does not apply to a sphere shape",
        ),
        (
            "[[bodies]]\nname = \"b\"\nfixed = true\nmass = 3\nshapes = [{ type = \"plane\", normal = [0, 0, 1] }]\n",
            8,
            "`mass` does not apply to a fixed body",
        ),
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"plane\", normal = [0, 0, 1] }]\n",
            5,
            "a free body needs a solid shape",
        ),
        (
            "[[systems]]\nname = \"s\"\ntype = \"first_order_linear\"\nx0 = [1]\nA = [[0]]\n[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", radius = 1 }]\n",
            5,
            "cannot be combined with rigid bodies",
        ),
        (
            "[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", radius = 1 }]\n[output]\nrecord = [\"b.spin\"]\n",
            10,
            "`b` has no variable `spin`",
        ),
        (
            "[rigid]\norder = \"sideways\"\n[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", radius = 1 }]\n",
            6,
            "unknown contact order `sideways`",
        ),
        (
            "[rigid]\nfallback = \"lemke\"\n[[bodies]]\nname = \"b\"\ndensity = 1\nshapes = [{ type = \"sphere\", radius = 1 }]\n",
            6,
            "rigid bodies take a frictional contact solver, not `lemke`",
        ),
    ];
    for (body, line, message) in cases {
        let (e, at) = error(&format!("{head}{body}"));
        let text = e.to_string();
        assert!(text.contains(message), "{text}");
        assert!(text.starts_with("bad.toml:"), "{text}");
        assert_eq!(at, Some(line), "{text}");
    }
}
