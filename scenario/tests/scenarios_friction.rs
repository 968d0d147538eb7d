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

/// Kane's double-pendulum paradox, which explains why `arm_fall.toml` with
/// restitution 0.9 and friction keeps bouncing (about 1 % of the energy is
/// left at t = 4 s with μ = 0.5, against 10⁻⁵ frictionless; with μ = 2 the
/// energy rises above its initial value): Newton's kinematic restitution
/// together with Coulomb's law, U = ẏ⁺ + e_N ẏ_N⁻ in the cone
/// complementarity, is not dissipative for a linkage whose contact point's
/// normal and tangential velocities are coupled through the inertia.
///
/// One step of h = 10⁻⁷ s without gravity from the tip on the ground
/// (θ₁ = 0.25, θ₂ = −0.5: tip height sin θ₁ + sin(θ₁ + θ₂) = 0) with the
/// arm moving down is the impact alone. The oracle solves the same
/// one-contact law by hand: the mass matrix of two uniform links written
/// here, the tip Jacobian H = [∂y/∂θ; ∂x/∂θ], W = H M⁻¹ Hᵀ,
/// q = [(1 + e)(Hv⁻)_N, (Hv⁻)_T], and the case of the law (stick:
/// P = −W⁻¹q inside the cone; slide: U_N = 0, P_T = ∓μP_N) found by
/// enumeration; v⁺ = v⁻ + M⁻¹HᵀP. The kernel's v⁺ matches it, and the
/// kinetic energy grows by 8.6 % with e = 0.9 (μ = 0.5, the contact
/// sticks); with e = 0 the same impact loses energy (P·U = 0 and
/// ΔT = −½PᵀWP).
#[test]
fn newton_restitution_with_coulomb_friction_can_gain_energy_on_the_arm_kane_paradox() {
    use nonsmooth::simulation::TimeStepping;
    let (th1, th2) = (0.25f64, -0.5f64);
    let ang = 4.974188368183839f64; // 19/24 of a turn
    let v0 = [3.0 * ang.cos(), 3.0 * ang.sin()];
    let (l, m, mu) = (0.5f64, 1.0f64, 0.5f64);
    // Hand-written oracle.
    let inertia = m * l * l / 12.0;
    let lc = l / 2.0;
    let c2 = th2.cos();
    let mm = [
        [
            2.0 * inertia + m * lc * lc + m * (l * l + lc * lc + 2.0 * l * lc * c2),
            inertia + m * (lc * lc + l * lc * c2),
        ],
        [inertia + m * (lc * lc + l * lc * c2), inertia + m * lc * lc],
    ];
    let det = mm[0][0] * mm[1][1] - mm[0][1] * mm[1][0];
    let minv = [
        [mm[1][1] / det, -mm[0][1] / det],
        [-mm[1][0] / det, mm[0][0] / det],
    ];
    let (s1, c1) = th1.sin_cos();
    let (s12, c12) = (th1 + th2).sin_cos();
    let h = [
        [l * c1 + l * c12, l * c12],   // ∂y/∂θ (normal)
        [-l * s1 - l * s12, -l * s12], // ∂x/∂θ (tangent)
    ];
    let mul = |a: [[f64; 2]; 2], x: [f64; 2]| {
        [
            a[0][0] * x[0] + a[0][1] * x[1],
            a[1][0] * x[0] + a[1][1] * x[1],
        ]
    };
    let ht = [[h[0][0], h[1][0]], [h[0][1], h[1][1]]];
    let mut w = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            w[i][j] = (0..2)
                .map(|a| (0..2).map(|b| h[i][a] * minv[a][b] * h[j][b]).sum::<f64>())
                .sum();
        }
    }
    let kinetic = |v: [f64; 2]| 0.5 * (v[0] * mul(mm, v)[0] + v[1] * mul(mm, v)[1]);
    let oracle = |e: f64| -> [f64; 2] {
        let hv = mul(h, v0);
        assert!(hv[0] < 0.0, "the tip approaches the ground");
        let q = [(1.0 + e) * hv[0], hv[1]];
        let wdet = w[0][0] * w[1][1] - w[0][1] * w[1][0];
        let stick = [
            -(w[1][1] * q[0] - w[0][1] * q[1]) / wdet,
            -(-w[1][0] * q[0] + w[0][0] * q[1]) / wdet,
        ];
        let mut p = None;
        if stick[0] >= 0.0 && stick[1].abs() <= mu * stick[0] {
            p = Some(stick);
        }
        for s in [1.0, -1.0] {
            let pn = -q[0] / (w[0][0] - mu * s * w[0][1]);
            let pt = -mu * s * pn;
            let ut = w[1][0] * pn + w[1][1] * pt + q[1];
            if pn >= 0.0 && ut * s > 0.0 {
                assert!(p.is_none(), "one case of the law");
                p = Some([pn, pt]);
            }
        }
        let p = p.expect("a case of the law");
        let dv = mul(minv, mul(ht, p));
        [v0[0] + dv[0], v0[1] + dv[1]]
    };
    let text = std::fs::read_to_string(example("arm_fall.toml")).unwrap();
    let text = text.replace("v0 = [0, 0]", &format!("v0 = [{:?}, {:?}]", v0[0], v0[1]));
    assert!(text.contains(&format!("{:?}", v0[0])));
    for e in [0.9, 0.0] {
        let mut s = Scenario::from_str(&text, "arm_fall.toml").unwrap();
        for (k, v) in [
            ("theta1", th1),
            ("theta2", th2),
            ("gravity", 0.0),
            ("step", 1e-7),
            ("t_end", 1e-6),
            ("friction", mu),
            ("restitution", e),
        ] {
            s.set_parameter(k, v).unwrap();
        }
        let b = s.build().unwrap();
        let arm = b.model.system_id("arm").unwrap();
        let mut sim = TimeStepping::new(b.model.clone(), b.settings.clone()).unwrap();
        // The first call settles the initial instant; the next is the step.
        while sim.time() == 0.0 {
            sim.step().unwrap();
        }
        assert_eq!(sim.statistics().steps, 1);
        let v = sim.v(arm);
        let expected = oracle(e);
        for k in 0..2 {
            assert!(
                (v[k] - expected[k]).abs() < 1e-5 * (1.0 + expected[k].abs()),
                "e = {e}: v⁺ {v:?}, hand-solved {expected:?}"
            );
        }
        let gain = kinetic([v[0], v[1]]) / kinetic(v0) - 1.0;
        if e > 0.0 {
            assert!((gain - 0.0856).abs() < 1e-3, "e = {e}: energy gain {gain}");
        } else {
            assert!(gain < 0.0, "e = 0 dissipates: {gain}");
        }
    }
}
