//! The frictional-contact examples (`newton_impact_friction` law) against
//! their analytic motions, and the law's located errors.

use std::path::{Path, PathBuf};

use nonsmooth_scenario::{BuiltScenario, Scenario};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

/// The recorded rows of a run, read by column name.
struct Cols {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Cols {
    fn get(&self, name: &str) -> Vec<f64> {
        let k = self
            .header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header));
        self.rows.iter().map(|r| r[k]).collect()
    }
}

fn run(built: &BuiltScenario) -> Cols {
    let mut sim = built.control_loop().expect("the simulation starts");
    let mut rows = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    sim.run(|s| {
        if s.plant().is_output_instant() {
            built.row(s, &mut row);
            rows.push(row.clone());
        }
    })
    .expect("the run succeeds");
    Cols {
        header: built.header().iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn built(file: &str, overrides: &[(&str, f64)]) -> BuiltScenario {
    let mut s = Scenario::from_file(example(file)).unwrap_or_else(|e| panic!("{e}"));
    for (k, v) in overrides {
        s.set_parameter(k, *v).unwrap();
    }
    s.build().unwrap_or_else(|e| panic!("{e}"))
}

const G: f64 = 9.81;

#[test]
fn block_thrown_up_the_slope_stops_then_slides_back_and_loses_energy() {
    let b = built("block_on_slope.toml", &[]);
    let (alpha, mu, v0, h) = (0.3f64, 0.2, 1.0, 1e-3);
    let cols = run(&b);
    let col = |n: &str| cols.get(n);
    let (t, x, z, v, w) = (
        col("t"),
        col("block.q[0]"),
        col("block.q[1]"),
        col("block.v[0]"),
        col("block.v[1]"),
    );
    let status = col("contact.status[0]");
    let up = G * (alpha.sin() + mu * alpha.cos());
    let down = G * (alpha.sin() - mu * alpha.cos());
    let (t_stop, x_stop) = (v0 / up, v0 * v0 / (2.0 * up));
    let k = v.iter().position(|&v| v <= 1e-12).expect("the block stops");
    assert!(
        t[k] >= t_stop && t[k] - t_stop <= h,
        "stop {} vs {t_stop}",
        t[k]
    );
    // θ = 1: positions are first order (q_{k+1} = q_k + h v_{k+1}).
    assert!((x[k] - x_stop).abs() <= v0 * h, "x {} vs {x_stop}", x[k]);
    // tan α > μ: slides back down with the downhill acceleration.
    assert!(alpha.tan() > mu);
    let last = t.len() - 1;
    let dt = t[last] - t_stop;
    assert!(
        (v[last] + down * dt).abs() <= down * h + 1e-12,
        "{}",
        v[last]
    );
    assert!(status[1..k].iter().all(|&s| s == 2.0));
    assert!(status[k + 2..].iter().all(|&s| s == 2.0));
    // Energy never increases (θ = 1), and the block stays on the plane.
    let energy: Vec<f64> = (0..t.len())
        .map(|i| 0.5 * (v[i] * v[i] + w[i] * w[i]) + G * (x[i] * alpha.sin() + z[i] * alpha.cos()))
        .collect();
    assert!(energy.windows(2).all(|e| e[1] <= e[0] + 1e-12));
    assert!(z.iter().all(|z| z.abs() <= 1e-12));
}

#[test]
fn block_at_rest_on_a_slope_with_tan_alpha_below_mu_stays_at_rest() {
    let b = built(
        "block_on_slope.toml",
        &[
            ("v0", 0.0),
            ("friction", 0.5),
            ("t_end", 10.0),
            ("theta", 0.5),
        ],
    );
    let cols = run(&b);
    let col = |n: &str| cols.get(n);
    assert_eq!(col("t").len(), 10001);
    let worst = col("block.q[0]").iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(worst <= 1e-12, "drift {worst:e}");
    assert!(col("contact.status[0]")[1..].iter().all(|&s| s == 1.0));
}

#[test]
fn block_sliding_down_follows_the_analytic_parabola_with_theta_one_half() {
    let (alpha, mu, v0) = (0.3f64, 0.2, -0.4);
    let b = built("block_on_slope.toml", &[("v0", v0), ("theta", 0.5)]);
    let cols = run(&b);
    let col = |n: &str| cols.get(n);
    let a = -G * (alpha.sin() - mu * alpha.cos());
    for (t, x) in col("t").iter().zip(col("block.q[0]")) {
        let exact = v0 * t + 0.5 * a * t * t;
        assert!((x - exact).abs() <= 1e-10, "t = {t}: {x} vs {exact}");
    }
}

#[test]
fn puck_slides_along_its_direction_and_stops_after_the_analytic_distance() {
    let b = built("sliding_puck.toml", &[]);
    let (mu, v0, phi, h) = (0.3, 2.0, 0.6f64, 1e-3);
    let cols = run(&b);
    let col = |n: &str| cols.get(n);
    let (t, x, y) = (col("t"), col("puck.q[0]"), col("puck.q[1]"));
    let (vx, vy) = (col("puck.v[0]"), col("puck.v[1]"));
    let (ln, lx, ly) = (
        col("ice.lambda[0]"),
        col("ice.lambda[1]"),
        col("ice.lambda[2]"),
    );
    let status = col("ice.status[0]");
    let k = status
        .iter()
        .position(|&s| s == 1.0)
        .expect("the puck stops");
    let (t_stop, d_stop) = (v0 / (mu * G), v0 * v0 / (2.0 * mu * G));
    assert!(
        t[k] >= t_stop && t[k] - t_stop <= h,
        "stop {} vs {t_stop}",
        t[k]
    );
    let d = x[k].hypot(y[k]);
    assert!((d - d_stop).abs() <= mu * G * h * h, "{d} vs {d_stop}");
    for i in 1..k {
        assert!((y[i] * phi.cos() - x[i] * phi.sin()).abs() <= 1e-12);
        let lt = lx[i].hypot(ly[i]);
        assert!((lt - mu * ln[i]).abs() <= 1e-10 * ln[i]);
        let cos = (lx[i] * vx[i] + ly[i] * vy[i]) / (lt * vx[i].hypot(vy[i]));
        assert!(cos <= -1.0 + 1e-10);
        assert_eq!(status[i], 2.0);
    }
    assert!(vx[k..].iter().chain(&vy[k..]).all(|v| v.abs() <= 1e-12));
    let e: Vec<f64> = vx.iter().zip(&vy).map(|(a, b)| a * a + b * b).collect();
    assert!(e.windows(2).all(|e| e[1] <= e[0] * (1.0 + 1e-12) + 1e-24));
}

const FRICTION_CASE: &str = r#"
name = "case"
[simulation]
t_end = 0.1
step = 0.01
STRATEGY
[[systems]]
name = "p"
type = "lagrangian_linear"
q0 = [0, 0]
v0 = [1, 0]
mass_diagonal = [1, 1]
fext = [0, -9.81]
[[interactions]]
name = "c"
systems = ["p"]
relation = { type = "lagrangian_linear", H = [[0, 1], [1, 0]] }
law = { type = "newton_impact_friction", restitution = 0, friction = 0.1, dimension = DIM }
"#;

#[test]
fn friction_law_errors_name_the_line() {
    let case = |strategy: &str, dim: &str| {
        let text = FRICTION_CASE
            .replace("STRATEGY", strategy)
            .replace("DIM", dim);
        Scenario::from_str(&text, "case.toml")
            .unwrap()
            .build()
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(case("", "2"), None);
    let msg = case("strategy = \"event-driven\"", "2").expect("refused");
    assert!(msg.starts_with("case.toml:18:"), "{msg}");
    assert!(
        msg.contains("event-driven strategy does not handle frictional"),
        "{msg}"
    );
    let msg = case("", "3").expect("refused");
    assert!(
        msg.starts_with("case.toml:18:") && msg.contains("2 rows"),
        "{msg}"
    );
    let msg = case("", "4").expect("refused");
    assert!(msg.contains("dimension 2 or 3"), "{msg}");
}

/// The falling two-link arm with friction on its ground contacts
/// (`examples/arm_fall.toml`, `friction` = 0.5): every impulse of a ground
/// contact lies in the Coulomb cone, a sliding contact's friction impulse
/// is on the cone's boundary and opposes the tangential velocity after the
/// step, and most of the energy is dissipated.
#[test]
fn falling_arm_with_friction_obeys_coulomb_at_its_ground_contacts() {
    use nonsmooth::modelling::models::TwoLinkArm;
    let mu = 0.5;
    let b = built("arm_fall.toml", &[("friction", mu)]);
    let mut run = b.control_loop().unwrap();
    let model = b.model.clone();
    let arm_id = model.system_id("arm").unwrap();
    let ids = [
        model.interaction_id("tip").unwrap(),
        model.interaction_id("elbow").unwrap(),
    ];
    let arm = TwoLinkArm::new([0.5, 0.5], [1.0, 1.0], [0.25 / 12.0; 2], 9.81).unwrap();
    let e0 = arm.energy(run.plant().q(arm_id), run.plant().v(arm_id));
    let (mut sliding, mut sticking) = (0, 0);
    run.run(|cl| {
        let p = cl.plant();
        for &i in &ids {
            let (l, status) = (p.lambda(i), p.contact_status(i)[0]);
            assert!(l[1].abs() <= mu * l[0] * (1.0 + 1e-9) + 1e-14, "{l:?}");
            if status == 2.0 {
                sliding += 1;
                assert!((l[1].abs() - mu * l[0]).abs() <= 1e-6 * l[0], "{l:?}");
                assert!(l[1] * p.ydot(i)[1] <= 0.0, "{l:?} {:?}", p.ydot(i));
            } else if status == 1.0 {
                sticking += 1;
            }
        }
    })
    .unwrap();
    assert!(sliding > 0, "{sliding} sliding steps, {sticking} sticking");
    let e1 = arm.energy(run.plant().q(arm_id), run.plant().v(arm_id));
    // Most of the energy is dissipated by t_end (about 1 % is left, the arm
    // still rocking on the ground).
    assert!(e1.abs() < 0.05 * e0, "energy {e1} of {e0}");
}
