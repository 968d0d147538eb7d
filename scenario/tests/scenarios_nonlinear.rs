//! Nonlinear systems and relations written in scenario files, and the
//! bundled examples that use them: `cubic_floor.toml` (a first-order
//! nonlinear system and relation), `mixed_floor.toml` (an MLCP every step)
//! and `two_masses_bar.toml` (a Lagrangian scleronomous bar beside two
//! contacts). Each scenario equals the model built with the Rust API in the
//! core's tests (tests/common/mod.rs, tests/first_order_nonlinear.rs,
//! tests/mixed_problems.rs) bit for bit, and each error names its line.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{dvector, DMatrix};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{ProblemFamily, TimeStepping, TimeSteppingSettings};
use nonsmooth_scenario::{BuiltScenario, Scenario, ScenarioError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn built(name: &str) -> BuiltScenario {
    Scenario::from_file(example(name))
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every recorded row of a run.
fn run(built: &BuiltScenario) -> Vec<Vec<f64>> {
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
    rows
}

/// The rows of a run of `model` in the scenario's column order: t, then
/// each system's q and v (or x), then each interaction's y and λ.
fn api_rows(model: Model, settings: TimeSteppingSettings) -> Vec<Vec<f64>> {
    let systems = model.systems().len();
    let interactions = model.interactions().len();
    let mut sim = TimeStepping::new(model, settings).unwrap();
    let mut rows = Vec::new();
    sim.run(|s| {
        let mut row = vec![s.time()];
        for k in 0..systems {
            let id = SystemId(k);
            if s.model().system(id).ds.is_lagrangian() {
                row.extend_from_slice(s.q(id));
                row.extend_from_slice(s.v(id));
            } else {
                row.extend_from_slice(s.x(id));
            }
        }
        for k in 0..interactions {
            row.extend_from_slice(s.y(InteractionId(k)));
            row.extend_from_slice(s.lambda(InteractionId(k)));
        }
        rows.push(row);
    })
    .unwrap();
    rows
}

#[track_caller]
fn assert_bits(got: &[Vec<f64>], expected: &[Vec<f64>]) {
    assert_eq!(got.len(), expected.len());
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    for (k, (a, b)) in got.iter().zip(expected).enumerate() {
        assert_eq!(bits(a), bits(b), "row {k}: {a:?} vs {b:?}");
    }
}

#[test]
fn nonlinear_examples_load_build_and_run() {
    for (file, rows, columns) in [
        ("cubic_floor.toml", 101, 4),
        ("mixed_floor.toml", 101, 7),
        ("two_masses_bar.toml", 1501, 15),
    ] {
        let b = built(file);
        assert!(b.description.is_some(), "{file}");
        assert_eq!(b.header().len(), columns, "{file}");
        assert!(!b.plots.is_empty(), "{file}");
        let out = run(&b);
        assert_eq!(out.len(), rows, "{file}");
        assert!(out.iter().flatten().all(|x| x.is_finite()), "{file}");
    }
}

/// ẋ = −x³ + r, y = x − c, r = λ (tests/first_order_nonlinear.rs), the
/// relation's Jacobians by forward differences.
fn cubic_api(x0: f64, c: f64) -> Model {
    let mut b = ModelBuilder::new();
    let ds = FirstOrderNonlinear {
        x0: dvector![x0],
        f: Arc::new(|_t: f64, x: &[f64], out: &mut [f64]| out[0] = -x[0].powi(3)),
        jacobian: Some(Arc::new(|_t: f64, x: &[f64], j: &mut DMatrix<f64>| {
            j[(0, 0)] = -3.0 * x[0] * x[0]
        })),
    };
    let s = b.add_system("x", ds).unwrap();
    let rel = FirstOrderNonlinearR {
        output_dim: 1,
        h: Arc::new(move |_t: f64, x: &[f64], _l: &[f64], y: &mut [f64]| y[0] = x[0] - c),
        g: Arc::new(|_t: f64, _x: &[f64], l: &[f64], r: &mut [f64]| r[0] = l[0]),
        jacobian_h_x: None,
        jacobian_h_lambda: None,
        jacobian_g_lambda: None,
        jacobian_g_x: None,
    };
    b.add_interaction(
        "floor",
        &[s],
        rel,
        NonsmoothLaw::Complementarity { size: 1 },
    )
    .unwrap();
    b.build()
}

#[test]
fn cubic_floor_scenario_reproduces_the_api_model_bit_for_bit_and_the_closed_form() {
    for theta in [0.5, 1.0] {
        let mut scenario = Scenario::from_file(example("cubic_floor.toml")).unwrap();
        scenario.set_parameter("theta", theta).unwrap();
        let b = scenario.build().unwrap();
        let mut settings = TimeSteppingSettings::new(0.01, 1.0);
        settings.theta = theta;
        assert_eq!(b.settings, settings);
        let got = run(&b);
        assert_bits(&got, &api_rows(cubic_api(2.0, 1.0), settings));
        // The closed form (tests/first_order_nonlinear.rs): x(t) =
        // (x₀⁻² + 2t)^(−1/2) until t* = 3/8, then 1 with r = 1; the error
        // of the θ-scheme at h = 0.01 stays below 1e-3 for θ = ½ (order 2),
        // 2e-2 for θ = 1 (order 1).
        let t_star = 0.375;
        for r in &got {
            let (t, x, lambda) = (r[0], r[1], r[3]);
            let exact = if t < t_star {
                (0.25 + 2.0 * t).powf(-0.5)
            } else {
                1.0
            };
            let tol = if theta == 0.5 { 1e-3 } else { 2e-2 };
            assert!((x - exact).abs() < tol, "θ = {theta}, t = {t}: x = {x}");
            if t > t_star + 0.02 {
                assert!((lambda - 1.0).abs() < 1e-9, "t = {t}: r = {lambda}");
            }
        }
    }
}

#[test]
fn mixed_floor_is_an_mlcp_and_follows_its_closed_form() {
    // tests/mixed_problems.rs: x₁ = x₂ = max(x₀ − (a₁ + a₂)/2 t, 0),
    // λ₁ = (a₁ − a₂)/2, λ₂ = (a₁ + a₂)/2 once at rest, to a few ε.
    let b = built("mixed_floor.toml");
    let sim = TimeStepping::new((*b.model).clone(), b.settings.clone()).unwrap();
    assert_eq!(sim.problem_family(), ProblemFamily::Mlcp);
    let (a1, a2, x0, eps) = (3.0, 1.0, 0.5, f64::EPSILON);
    let (speed, t_star) = ((a1 + a2) / 2.0, 2.0 * x0 / (a1 + a2));
    let rows = run(&b);
    let mut resting = 0;
    for r in &rows[1..] {
        let (t, x, l) = (r[0], [r[1], r[2]], [r[5], r[6]]);
        let exact = (x0 - speed * t).max(0.0);
        let tol = 16.0 * eps * (x0 + speed * t);
        assert!((x[0] - exact).abs() <= tol && (x[1] - exact).abs() <= tol);
        assert!((l[0] - (a1 - a2) / 2.0).abs() <= 16.0 * eps * a1, "t = {t}");
        if t > t_star + 0.005 {
            assert!(
                (l[1] - speed).abs() <= 16.0 * eps * a1,
                "t = {t}: λ = {l:?}"
            );
            resting += 1;
        } else if t < t_star - 0.005 {
            assert_eq!(l[1], 0.0);
        }
    }
    assert_eq!(resting, 75);
}

#[test]
fn two_masses_bar_scenario_reproduces_the_api_model_bit_for_bit() {
    let b = built("two_masses_bar.toml");
    let settings = TimeSteppingSettings::new(1e-3, 1.5);
    assert_eq!(b.settings, settings);
    let (model, ..) = common::two_masses_bar(0.5, 0.5);
    let got = run(&b);
    assert_bits(&got, &api_rows(model, settings));
    // Both masses touch the ground: a mixed problem on those steps.
    assert!(got.iter().any(|r| r[12] > 0.0) && got.iter().any(|r| r[14] > 0.0));
}

#[test]
fn two_masses_bar_without_its_jacobian_uses_finite_differences() {
    let text = std::fs::read_to_string(example("two_masses_bar.toml")).unwrap();
    let start = text.find("jacobian = [[").unwrap();
    let end = start + text[start..].find("]]\n").unwrap() + 3;
    let without = format!("{}{}", &text[..start], &text[end..]).replace(
        "step = \"step\"\n",
        "step = \"step\"\nnewton_tolerance = 1e-6\n",
    );
    let fd = Scenario::from_str(&without, "two_masses_bar.toml")
        .unwrap()
        .build()
        .unwrap();
    let (a, b) = (run(&fd), run(&built("two_masses_bar.toml")));
    assert_eq!(a.len(), b.len());
    // Forward differences with steps √ε: the Jacobian to ~1e-8, the bar's
    // length kept by the same Newton loop: the trajectories agree to 1e-5.
    let most = a
        .iter()
        .zip(&b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f64::max);
    assert!(most < 1e-5, "largest difference {most:e}");
}

// --- Located errors ------------------------------------------------------

const BASE: &str = r#"name = "case"

[simulation]
t_end = 1
step = 0.01

[[systems]]
name = "x"
type = "first_order_nonlinear"
x0 = [2, 1]
f = ["-(x0^3) + sin(t)", "x0 - x1"]
jacobian = [["-3*x0^2", 0], [1, -1]]

[[interactions]]
name = "floor"
systems = ["x"]
relation = { type = "first_order_nonlinear", h = ["x0 - 1"], g = ["lambda0", 0] }
law = { type = "complementarity" }

[[systems]]
name = "m1"
type = "lagrangian_linear"
q0 = [0, 1]
mass_diagonal = [1, 1]

[[systems]]
name = "m2"
type = "lagrangian_linear"
q0 = [1, 1]
mass_diagonal = [1, 1]

[[interactions]]
name = "bar"
systems = ["m1", "m2"]
relation = { type = "lagrangian_scleronomous", h = ["hypot(q0 - q2, q1 - q3) - 1"] }
law = { type = "equality" }
"#;

fn error_of(text: &str) -> ScenarioError {
    match Scenario::from_str(text, "case.toml") {
        Err(e) => e,
        Ok(s) => match s.build() {
            Err(e) => e,
            Ok(b) => match b.control_loop() {
                Err(e) => e,
                Ok(_) => panic!("no error in:\n{text}"),
            },
        },
    }
}

fn with_line(line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

#[track_caller]
fn assert_error(text: &str, line: usize, needle: &str) {
    let msg = error_of(text).to_string();
    assert!(
        msg.starts_with(&format!("case.toml:{line}:")),
        "expected line {line}: {msg}"
    );
    assert!(msg.contains(needle), "expected `{needle}` in: {msg}");
}

#[test]
fn the_base_case_is_valid() {
    let b = Scenario::from_str(BASE, "case.toml")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(run(&b).len(), 101);
}

#[test]
fn nonlinear_systems_errors_are_located() {
    // Unknown names: in f, and u0 (a controller's input) is not in scope.
    assert_error(
        &with_line(11, r#"f = ["-(x0^3) + k", "x0 - x1"]"#),
        11,
        "unknown name `k`",
    );
    assert_error(
        &with_line(11, r#"f = ["-x2", "x0 - x1"]"#),
        11,
        "the variables here: t, x0, x1",
    );
    // Sizes.
    assert_error(
        &with_line(11, r#"f = ["-(x0^3)"]"#),
        11,
        "the length of x0 is 2",
    );
    assert_error(
        &with_line(12, r#"jacobian = [["-3*x0^2", 0, 1], [1, -1, 0]]"#),
        12,
        "expected 2 × 2",
    );
    assert_error(
        &with_line(12, r#"jacobian = [[1], [1, 2]]"#),
        12,
        "row 2 has 2",
    );
    // Keys: f required, A refused, f on a linear system refused.
    assert_error(&with_line(11, ""), 7, "needs `f`");
    assert_error(
        &with_line(12, "A = [[0, 0], [0, 0]]"),
        12,
        "`A` does not apply",
    );
    assert_error(
        &with_line(
            24,
            r#"mass_diagonal = [1, 1]
f = ["0", "0"]"#,
        ),
        25,
        "`f` does not apply to a lagrangian_linear system",
    );
    // A syntax error in an expression.
    assert_error(
        &with_line(11, r#"f = ["-(x0^3) +", "x0"]"#),
        11,
        "the last element cannot be an operator",
    );
}

#[test]
fn nonlinear_relations_errors_are_located() {
    let rel = |r: &str| {
        with_line(
            17,
            &format!("relation = {{ type = \"first_order_nonlinear\", {r} }}"),
        )
    };
    assert_error(&rel(r#"h = ["x0 - 1"]"#), 17, "needs `g`");
    assert_error(&rel(r#"g = ["lambda0", 0]"#), 17, "needs `h`");
    assert_error(
        &rel(r#"h = ["x0 - lambda1"], g = ["lambda0", 0]"#),
        17,
        "unknown name `lambda1`",
    );
    assert_error(
        &rel(r#"h = ["x0"], g = ["lambda0"]"#),
        17,
        "the dimension of the linked systems is 2",
    );
    assert_error(
        &rel(r#"h = ["x0"], g = ["lambda0", 0], C = [[1, 0]], D = [[0, 0]]"#),
        17,
        "expected 1 × 1",
    );
    assert_error(
        &rel(r#"h = ["x0"], g = ["lambda0", 0], H = [[1, 0]]"#),
        17,
        "`H` does not apply to a first_order_nonlinear relation",
    );
    let bar = |r: &str| {
        with_line(
            35,
            &format!("relation = {{ type = \"lagrangian_scleronomous\", {r} }}"),
        )
    };
    assert_error(&bar(r#"jacobian = [[1, 0, -1, 0]]"#), 35, "needs `h`");
    assert_error(
        &bar(r#"h = ["q4"]"#),
        35,
        "the variables here: q0, q1, q2, q3",
    );
    assert_error(&bar(r#"h = ["q0 - t"]"#), 35, "unknown name `t`");
    assert_error(
        &bar(r#"h = ["q0"], jacobian = [[1, 0, 0]]"#),
        35,
        "expected 1 × 4",
    );
    assert_error(&bar(r#"h = ["q0"], g = ["q0"]"#), 35, "`g` does not apply");
    // The nonlinear keys on a linear relation.
    assert_error(
        &with_line(
            35,
            r#"relation = { type = "lagrangian_linear", H = [[0, 1, 0, 0]], h = ["q0"] }"#,
        ),
        35,
        "`h` does not apply to a lagrangian_linear relation",
    );
}
