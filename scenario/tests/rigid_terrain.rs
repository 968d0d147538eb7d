//! Triangle-mesh terrain in scenario files (`type = "mesh"`, from an OBJ
//! or STL file or from a height function over a grid) and the rover
//! example driving over it. Oracles apart from the code: a ball rolling
//! without slipping down a slope (a = 5/7 g sin α), the discrete energy
//! balance of the θ = 1 step with motor torques, the distance from each
//! wheel to the terrain surface (parry3d's point projection), the cage
//! geometry of the wheels; bad mesh input names its line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{Point3, Vector3};
use nonsmooth::simulation::StepOutcome;
use nonsmooth_collision::parry3d_f64::query;
use nonsmooth_collision::{ContactDetector, RigidWorld};
use nonsmooth_scenario::{BuiltScenario, Scenario, ScenarioError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonsmooth-terrain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The ball's centre at each output instant.
fn ball_path(built: &BuiltScenario) -> Vec<(f64, Vector3<f64>, f64)> {
    let mut cl = built.control_loop().expect("the run starts");
    let ball = built.model.system_id("ball").unwrap();
    let world = built.model.system_id("world").unwrap();
    let mut out = Vec::new();
    loop {
        let v = cl.plant().q(ball);
        out.push((
            cl.time(),
            Vector3::new(v[0], v[1], v[2]),
            cl.plant().q(world)[3],
        ));
        match cl.step().expect("the step succeeds") {
            StepOutcome::Advanced { .. } => {}
            StepOutcome::Finished => break,
        }
    }
    out
}

/// z = s·x as a grid mesh of 8 × 8 cells and as an OBJ file of two
/// triangles (read relative to the scenario file): a solid ball rolling
/// without slipping goes down at a = 5/7 g sin α, α = atan s, to 1 %.
#[test]
fn a_ball_rolls_down_a_mesh_slope() {
    let dir = temp_dir();
    std::fs::write(
        dir.join("slope.obj"),
        "v -4 -4 -0.4\nv 4 -4 0.4\nv 4 4 0.4\nv -4 4 -0.4\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    for ground in [
        r#"{ type = "mesh", height = "s*x", size = [8, 8], samples = [9, 9] }"#,
        r#"{ type = "mesh", file = "slope.obj" }"#,
    ] {
        let text = format!(
            r#"
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
shapes = [{ground}]
[[bodies]]
name = "ball"
density = 1000
shapes = [{{ type = "sphere", radius = "r" }}]
position = ["-r*sin(atan(s))", 0, "r*cos(atan(s))"]
[output]
frames = 0
"#
        );
        let built = Scenario::from_str(&text, dir.join("slope.toml"))
            .unwrap()
            .build()
            .unwrap();
        let path = ball_path(&built);
        let alpha = 0.1f64.atan();
        let a = 5.0 / 7.0 * 9.81 * alpha.sin();
        let (t, end, _) = *path.last().unwrap();
        let travelled = (end - path[0].1).norm();
        let expected = 0.5 * a * t * t;
        assert!(end.x < path[0].1.x, "{ground}: it rolls down, toward −x");
        assert!(
            path.iter().skip(50).all(|p| p.2 >= 1.0),
            "{ground}: the ball stays on the slope"
        );
        assert!(
            (travelled - expected).abs() <= 0.01 * expected,
            "{ground}: travelled {travelled}, rolling gives {expected}"
        );
    }
}

fn error(text: &str, path: &Path) -> (ScenarioError, Option<usize>) {
    let e = match Scenario::from_str(text, path) {
        Err(e) => e,
        Ok(s) => s.build().expect_err("the scenario is refused"),
    };
    let line = e.line();
    (e, line)
}

#[test]
fn bad_mesh_input_names_the_line() {
    let dir = temp_dir();
    std::fs::write(dir.join("broken.obj"), "v 0 0 0\nv 1 0 0\nf 1 2 9\n").unwrap();
    let head = "name = \"bad\"\n[simulation]\nt_end = 1\nstep = 1e-3\n[[bodies]]\nname = \"g\"\nfixed = true\n";
    let cases: [(&str, usize, &str); 5] = [
        (
            "shapes = [{ type = \"mesh\",\n  file = \"missing.obj\" }]\n",
            9,
            "missing.obj: cannot open",
        ),
        (
            "shapes = [{ type = \"mesh\",\n  file = \"broken.obj\" }]\n",
            9,
            "broken.obj",
        ),
        ("shapes = [{ type = \"mesh\" }]\n", 8, "needs `file`"),
        (
            "shapes = [{ type = \"mesh\", file = \"a.obj\",\n  height = \"x\" }]\n",
            9,
            "`height` does not apply to a mesh shape",
        ),
        (
            "shapes = [{ type = \"mesh\", height = \"x\", size = [1, 1],\n  samples = [1, 4] }]\n",
            9,
            "samples must be [nx, ny]",
        ),
    ];
    for (body, line, message) in cases {
        let (e, at) = error(&format!("{head}{body}"), &dir.join("bad.toml"));
        let text = e.to_string();
        assert!(text.contains(message), "{text}");
        assert!(text.contains("bad.toml"), "{text}");
        assert_eq!(at, Some(line), "{text}");
    }
}

/// The rover of examples/rover.toml driven for its 4 s over the grid-mesh
/// terrain, stepped here on a `RigidWorld` built from the scenario so that
/// every step can be checked:
///
/// * energy balance of the θ = 1 step: with M(v_{k+1} − v_k) = h f +
///   Hᵀ r and x_{k+1} = x_k + h v_{k+1}, the kinetic plus gravity energy
///   changes by ΔE = W_k + Σ r·u_{k+1} − ½ |Δv|²_M, W_k = h Σ_b
///   (R_kᵀ τ_b(t_{k+1}))·Ω_{b,k+1} the motor work (the gyroscopic term does
///   none: Ω·(Ω × I Ω) = 0); frictional contacts without restitution give
///   r·u ≤ 0, so ΔE ≤ W_k each step, up to the solver's tolerance;
/// * each wheel's centre is at least R − δ from the terrain surface (δ
///   the margin), and no chassis shape ever touches the terrain;
/// * each wheel stays in its cage: its centre in the chassis frame within
///   the clearance of its place (±wx, ±wy, wz), horizontally and upward;
/// * it advances: the chassis moves more than 4 m along +x, and at the
///   end the wheels roll without slipping (v_x = R ω_y within 2 %).
#[test]
fn the_rover_drives_over_the_mesh_terrain() {
    let built = Scenario::from_file(example("rover.toml"))
        .unwrap()
        .build()
        .unwrap();
    let scene = built.rigid.as_ref().expect("a rigid scenario");
    assert_eq!(scene.contact.scheme.theta, 1.0);
    let (h, t_end, r, cl) = (2e-3, 4.0, 0.15, 0.003);
    let (wx, wy, wz) = (0.35, 0.4, -0.12);
    let mut world = RigidWorld::new(
        Arc::clone(&scene.bodies),
        scene.states.clone(),
        ContactDetector::new(scene.colliders.clone(), scene.margin).unwrap(),
        scene.contact,
        scene.gravity,
        0.0,
    )
    .unwrap();
    let names = &scene.names;
    let idx = |n: &str| names.iter().position(|m| m == n).unwrap();
    let (terrain, chassis) = (idx("terrain"), idx("chassis"));
    let wheels: Vec<usize> = (0..4).map(|i| idx(&format!("wheel{i}"))).collect();
    let ground = scene
        .colliders
        .iter()
        .find(|c| c.body == terrain)
        .unwrap()
        .clone();
    let ground_pose = ground.world_pose(&world.states()[terrain]);
    let x0 = world.states()[chassis].position;
    let energy = |w: &RigidWorld| w.kinetic_energy() + w.potential_energy();
    let (mut worst_balance, mut closest, mut cage) = (f64::NEG_INFINITY, f64::INFINITY, 0.0f64);
    let mut steps = 0;
    while world.time() < t_end - 0.5 * h {
        let before = world.states().to_vec();
        let e0 = energy(&world);
        let rep = world.step(h).unwrap();
        if let Some(sol) = rep.solve {
            assert!(sol.status.is_solved(), "t = {}: {sol:?}", world.time());
        }
        steps += 1;
        let t = world.time();
        let after = world.states();
        let work: f64 = (0..after.len())
            .filter(|&b| !scene.bodies[b].fixed)
            .map(|b| {
                let tau = scene.bodies[b].torque.at(t);
                h * (before[b].orientation.inverse() * tau).dot(&after[b].omega)
            })
            .sum();
        let balance = energy(&world) - e0 - work;
        worst_balance = worst_balance.max(balance);
        for (i, &w) in wheels.iter().enumerate() {
            let c = Point3::from(after[w].position);
            let proj = ground.shape().project_point(&ground_pose, &c, false);
            closest = closest.min((c - proj.point).norm() - r);
            let place = Vector3::new(
                if i % 2 == 0 { wx } else { -wx },
                if i < 2 { wy } else { -wy },
                wz,
            );
            let ch = &after[chassis];
            let d = ch.orientation.inverse() * (after[w].position - ch.position) - place;
            cage = cage.max(d.x.abs()).max(d.y.abs()).max(d.z);
        }
        if steps % 10 == 0 {
            for c in scene.colliders.iter().filter(|c| c.body == chassis) {
                let dist = query::distance(
                    &c.world_pose(&after[chassis]),
                    c.shape().as_ref(),
                    &ground_pose,
                    ground.shape().as_ref(),
                )
                .unwrap();
                assert!(dist > 0.0, "t = {t}: the chassis touches the terrain");
            }
        }
    }
    assert_eq!(steps, 2000);
    // Energy: kinetic ~ 10² J, potential ~ 10² J; the solver's tolerance
    // 1e-7 bounds the error of r·u.
    assert!(
        worst_balance < 1e-6,
        "a step gains {worst_balance:e} J beyond the motor work"
    );
    assert!(closest > -scene.margin, "a wheel sinks {:e} m", -closest);
    assert!(
        cage < cl + scene.margin,
        "a wheel leaves its cage by {cage:e} m"
    );
    let end = world.states();
    let advanced = end[chassis].position.x - x0.x;
    assert!(advanced > 4.0, "the rover advanced {advanced} m");
    for &w in &wheels {
        let v = end[w].velocity.x;
        let roll = r * end[w].omega_world().y;
        assert!((v - roll).abs() < 0.02 * v, "slip: v = {v}, R ω = {roll}");
    }
    eprintln!(
        "rover: advanced {advanced:.3} m, worst energy excess {worst_balance:e} J, \
         closest wheel-terrain gap {closest:e} m, cage excursion {cage:e} m"
    );
}
