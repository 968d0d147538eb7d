//! Scenario files: the bundled examples run, a scenario reproduces the model
//! built with the Rust API bit for bit, repeated entries and time-dependent
//! expressions work, and every kind of error names the right line.

use std::path::{Path, PathBuf};

use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};
use nonsmooth_scenario::{BuiltScenario, Scenario, ScenarioError, Variable};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
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

fn column(built: &BuiltScenario, rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let k = built
        .header()
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", built.header()));
    rows.iter().map(|r| r[k]).collect()
}

#[test]
fn bundled_examples_load_build_and_run() {
    for (file, rows, columns) in [
        ("bouncing_ball.toml", 2001, 9),
        ("diode_bridge.toml", 5001, 11),
        ("relay.toml", 1001, 5),
        ("beads_column.toml", 1001, 5),
    ] {
        let scenario = Scenario::from_file(example(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(format!("{}.toml", scenario.name()), file);
        assert!(scenario.description().is_some());
        let built = scenario.build().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(built.header().len(), columns, "{file}");
        assert!(!built.plots.is_empty(), "{file}");
        let out = run(&built);
        assert_eq!(out.len(), rows, "{file}");
        assert!(out.iter().flatten().all(|x| x.is_finite()), "{file}");
    }
}

#[test]
fn bundled_examples_behave_as_described() {
    // Relay: the sliding variable c1 x0 + x1 reaches 0 and stays there.
    let built = Scenario::from_file(example("relay.toml"))
        .unwrap()
        .build()
        .unwrap();
    let rows = run(&built);
    let y = column(&built, &rows, "relay.y[0]");
    assert!(y[0] > 2.0);
    assert!(y[300..].iter().all(|v| v.abs() < 1e-9), "sliding after 3 s");
    let x0 = column(&built, &rows, "plant.x[0]");
    assert!(x0.last().unwrap().abs() < 1e-3, "slides to the origin");

    // Diode bridge: the capacitor voltage oscillates and decays.
    let built = Scenario::from_file(example("diode_bridge.toml"))
        .unwrap()
        .build()
        .unwrap();
    let rows = run(&built);
    let v = column(&built, &rows, "circuit.x[0]");
    assert_eq!(v[0], 10.0);
    assert!(v.iter().any(|&x| x < -5.0));
    assert!(v.iter().all(|&x| x.abs() <= 10.0 + 1e-9));

    // Bouncing ball: it never sinks more than a few millimetres into the floor.
    let built = Scenario::from_file(example("bouncing_ball.toml"))
        .unwrap()
        .build()
        .unwrap();
    let rows = run(&built);
    let gap = column(&built, &rows, "floor.y[0]");
    assert!(gap.iter().all(|&y| y > -0.01));
    assert!(column(&built, &rows, "floor.lambda[0]")
        .iter()
        .any(|&l| l > 0.0));
}

#[test]
fn large_bead_column_records_few_columns() {
    let mut scenario = Scenario::from_file(example("beads_column.toml")).unwrap();
    scenario.set_parameter("beads", 1000.0).unwrap();
    scenario.set_parameter("t_end", "10*step").unwrap();
    let built = scenario.build().unwrap();
    assert_eq!(built.model.systems().len(), 1000);
    assert_eq!(built.model.interactions().len(), 1000);
    assert_eq!(
        built.header(),
        [
            "t",
            "bead0.q[0]",
            "bead999.q[0]",
            "ground.lambda[0]",
            "contact1.lambda[0]"
        ]
    );
    assert_eq!(run(&built).len(), 11);
}

#[test]
fn bouncing_ball_scenario_reproduces_the_api_model_bit_for_bit() {
    let built = Scenario::from_file(example("bouncing_ball.toml"))
        .unwrap()
        .build()
        .unwrap();

    let (r, m, g, e) = (0.1, 1.0, 9.81, 0.9);
    let mut b = ModelBuilder::new();
    let ball = b
        .add_system(
            "ball",
            LagrangianLinearTi::new(
                dvector![1.0, 0.0, 0.0],
                dvector![0.0, 0.0, 0.0],
                DMatrix::from_diagonal(&dvector![m, m, 0.4 * m * r * r]),
            )
            .with_fext(TimeVector::Constant(dvector![-m * g, 0.0, 0.0])),
        )
        .unwrap();
    let floor = b
        .add_interaction(
            "floor",
            &[ball],
            LagrangianLinearTiR::new(dmatrix![1.0, 0.0, 0.0]).with_b(dvector![-r]),
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution: e,
            },
        )
        .unwrap();
    let settings = TimeSteppingSettings::new(0.005, 10.0);
    assert_eq!(built.settings, settings);
    let mut sim = TimeStepping::new(b.build(), settings).unwrap();
    let mut expected = Vec::new();
    sim.run(|s| {
        let mut row = vec![s.time()];
        row.extend_from_slice(s.q(ball));
        row.extend_from_slice(s.v(ball));
        row.extend_from_slice(s.y(floor));
        row.extend_from_slice(s.lambda(floor));
        expected.push(row);
    })
    .unwrap();

    let got = run(&built);
    assert_eq!(got.len(), 2001);
    assert_eq!(got.len(), expected.len());
    for (k, (a, b)) in got.iter().zip(&expected).enumerate() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(a), bits(b), "row {k}: {a:?} vs {b:?}");
    }
    // The ball does bounce.
    assert!(got.iter().any(|r| r[8] > 0.0));
}

#[test]
fn repeated_entries_are_instantiated_with_their_index() {
    let text = r#"
name = "chain"
[parameters]
n = 4
spacing = 0.5
[simulation]
t_end = 0.01
step = 0.001
[[systems]]
repeat = { k = "0 .. n" }
name = "mass{k}"
type = "lagrangian_linear"
q0 = ["k*spacing"]
mass = [["1 + k"]]
[[interactions]]
repeat = { j = "1 .. n" }
name = "link{j}_{j-1}"
systems = ["mass{j-1}", "mass{j}"]
relation = { type = "lagrangian_linear", H = [[-1, 1]], b = ["-spacing*j/j"] }
law = { type = "newton_impact", restitution = 0 }
[[interactions]]
repeat = { j = "n .. n" }
name = "never{j}"
systems = ["mass0"]
relation = { type = "lagrangian_linear", H = [[1]] }
law = { type = "newton_impact", restitution = 0 }
[output]
record = ["mass{n-1}.q", "link{n-1}_{n-2}.*"]
"#;
    let built = Scenario::from_str(text, "chain.toml")
        .unwrap()
        .build()
        .unwrap();
    let model = &built.model;
    let names: Vec<&str> = model.systems().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mass0", "mass1", "mass2", "mass3"]);
    for (k, s) in model.systems().iter().enumerate() {
        let DynamicalSystem::LagrangianLinearTi(d) = &s.ds else {
            panic!("Lagrangian")
        };
        assert_eq!(d.q0[0], k as f64 * 0.5);
        assert_eq!(d.mass[(0, 0)], 1.0 + k as f64);
    }
    let links: Vec<(&str, Vec<usize>)> = model
        .interactions()
        .iter()
        .map(|i| (i.name.as_str(), i.systems.iter().map(|s| s.0).collect()))
        .collect();
    assert_eq!(
        links,
        [
            ("link1_0", vec![0, 1]),
            ("link2_1", vec![1, 2]),
            ("link3_2", vec![2, 3])
        ]
    );
    assert_eq!(
        built.header(),
        ["t", "mass3.q[0]", "link3_2.y[0]", "link3_2.lambda[0]"]
    );
    assert!(matches!(
        built.columns[1].variable,
        Variable::Y(InteractionId(2))
    ));
    assert_eq!(run(&built).len(), 11);
}

#[test]
fn expressions_of_time_are_evaluated_at_the_right_instants() {
    // ẋ = sin(ω t), x(0) = 0: x(t) = (1 − cos ω t)/ω. With θ = 1/2 the scheme
    // is the trapezoidal rule on b, whose sum is computed here independently.
    let text = r#"
name = "drift"
[parameters]
omega = 50
h = 1e-3
[simulation]
t_end = 1
step = "h"
[[systems]]
name = "s"
type = "first_order_linear"
x0 = [0, 1]
A = [[0, 0], [0, "-t"]]
b = ["sin(omega*t)", 0]
"#;
    let built = Scenario::from_str(text, "drift.toml")
        .unwrap()
        .build()
        .unwrap();
    let DynamicalSystem::FirstOrderLinear(ds) = &built.model.systems()[0].ds else {
        panic!("first order")
    };
    assert!(!ds.b.as_ref().unwrap().is_constant());
    assert!(!ds.a.is_constant());
    let rows = run(&built);
    let (h, w) = (1e-3, 50.0f64);
    let mut trapezoid = 0.0;
    for (k, row) in rows.iter().enumerate() {
        let t = row[0];
        assert_eq!(t, k as f64 / 1000.0, "exact clock");
        if k > 0 {
            let t0 = (k - 1) as f64 / 1000.0;
            trapezoid += h / 2.0 * ((w * t0).sin() + (w * t).sin());
        }
        assert!(
            (row[1] - trapezoid).abs() <= 1e-12,
            "t = {t}: {} vs {trapezoid}",
            row[1]
        );
        // Trapezoidal rule: |error| ≤ T h² max|b''| / 12.
        let exact = (1.0 - (w * t).cos()) / w;
        assert!((row[1] - exact).abs() <= h * h * w * w / 12.0, "t = {t}");
        // ẋ₂ = −t x₂: x₂ = exp(−t²/2), second order in h as well.
        assert!((row[2] - (-t * t / 2.0).exp()).abs() <= 1e-6, "t = {t}");
    }
}

#[test]
fn parameters_may_refer_to_each_other_in_any_order_and_be_overridden() {
    let text = r#"
name = "p"
[parameters]
area = "radius^2*pi"
radius = "2*base"
base = 0.5
[simulation]
t_end = 1
step = 0.1
[[systems]]
name = "s"
type = "first_order_linear"
x0 = ["area"]
A = [[0]]
"#;
    let mut s = Scenario::from_str(text, "p.toml").unwrap();
    let p = s.parameters().unwrap();
    assert_eq!(p["area"], std::f64::consts::PI);
    s.set_parameter("base", "3/2").unwrap();
    let built = s.build().unwrap();
    assert_eq!(built.parameters["radius"], 3.0);
    let DynamicalSystem::FirstOrderLinear(ds) = &built.model.systems()[0].ds else {
        panic!()
    };
    assert_eq!(ds.x0[0], 9.0 * std::f64::consts::PI);
    match s.set_parameter("radious", 1.0) {
        Err(e @ ScenarioError::NoSuchParameter { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("`radious`") && m.contains("area, base, radius"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Errors: each names the file and the line
// ---------------------------------------------------------------------------

const BASE: &str = r#"name = "e"
[parameters]
mass = 1
[simulation]
t_end = 1
step = 0.01
[[systems]]
name = "ball"
type = "lagrangian_linear"
q0 = [1]
mass = [["mass"]]
[[interactions]]
name = "floor"
systems = ["ball"]
relation = { type = "lagrangian_linear", H = [[1]] }
law = { type = "newton_impact", restitution = 0.5 }
"#;

/// The error of a scenario text: from reading, or else from building.
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

/// Replaces one line of BASE (1-based) by `new`.
fn with_line(line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

#[track_caller]
fn assert_error(text: &str, line: usize, needle: &str) -> ScenarioError {
    let e = error_of(text);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("case.toml:{line}:")),
        "expected line {line}: {msg}"
    );
    assert!(msg.contains(needle), "expected `{needle}` in: {msg}");
    e
}

#[test]
fn the_base_case_is_valid() {
    let built = Scenario::from_str(BASE, "case.toml")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(run(&built).len(), 101);
}

#[test]
fn toml_syntax_errors_give_line_and_column() {
    let e = assert_error(&with_line(10, "q0 = [1,, 2]"), 10, "");
    assert!(matches!(e, ScenarioError::Toml { .. }), "{e:?}");
    let e = assert_error(&with_line(3, "mass = "), 3, "");
    assert!(matches!(e, ScenarioError::Toml { .. }), "{e:?}");
    // A value of the wrong type.
    let e = assert_error(
        &with_line(10, "q0 = [true]"),
        10,
        "a number or an expression",
    );
    assert!(matches!(e, ScenarioError::Toml { .. }), "{e:?}");
    assert_eq!(e.line(), Some(10));
}

#[test]
fn unknown_keys_are_refused() {
    let e = assert_error(&with_line(11, "mas = [[1]]"), 11, "unknown field `mas`");
    assert!(matches!(e, ScenarioError::UnknownKey { .. }), "{e:?}");
    assert_error(&with_line(5, "t_ned = 1"), 5, "t_ned");
    // A key of another kind of system.
    let e = assert_error(
        &with_line(11, "mass = [[1]]\nx0 = [1]"),
        12,
        "does not apply",
    );
    assert!(matches!(e, ScenarioError::UnknownKey { .. }), "{e:?}");
    // A law key of another law.
    assert_error(
        &with_line(
            16,
            "law = { type = \"complementarity\", restitution = 0.5 }",
        ),
        16,
        "`restitution` does not apply to a complementarity law",
    );
}

#[test]
fn unknown_parameters_in_expressions() {
    let e = assert_error(
        &with_line(11, "mass = [[\"masss\"]]"),
        11,
        "unknown parameter `masss`",
    );
    assert!(e.to_string().contains("known:") && e.to_string().contains("mass"));
    assert!(matches!(e, ScenarioError::UnknownParameter { .. }));
    // In a parameter.
    assert_error(
        &with_line(3, "mass = \"2*weight\""),
        3,
        "unknown parameter `weight`",
    );
    // In the simulation settings.
    assert_error(&with_line(6, "step = \"h\""), 6, "unknown parameter `h`");
    // t where constants are needed.
    assert_error(
        &with_line(11, "mass = [[\"1 + t\"]]"),
        11,
        "must be constant",
    );
    // A cycle.
    assert_error(&with_line(3, "mass = \"2*mass\""), 3, "depends on itself");
    // Syntax and unknown functions.
    assert_error(&with_line(10, "q0 = [\"2*\"]"), 10, "in `2*`");
    assert_error(
        &with_line(10, "q0 = [\"sine(1)\"]"),
        10,
        "unknown function `sine`",
    );
}

#[test]
fn non_finite_numbers_are_refused() {
    let e = assert_error(&with_line(10, "q0 = [\"0/0\"]"), 10, "NaN");
    assert!(matches!(e, ScenarioError::NonFinite { .. }), "{e:?}");
    assert_error(&with_line(3, "mass = nan"), 3, "NaN");
    assert_error(&with_line(3, "mass = \"1/0\""), 3, "inf");
    assert_error(&with_line(10, "q0 = [inf]"), 10, "inf");
    // A function of time is checked at t0.
    let timed = with_line(11, "mass = [[\"mass\"]]\nfext = [\"1/t\"]");
    assert_error(&timed, 12, "at t0 = 0");
    assert!(Scenario::from_str(
        &timed.replace("t_end = 1", "t_end = 1\nt0 = 0.5"),
        "case.toml"
    )
    .unwrap()
    .build()
    .is_ok());
    // Through an override.
    let mut s = Scenario::from_str(BASE, "case.toml").unwrap();
    s.set_parameter("mass", "-1/0").unwrap();
    let m = s.build().unwrap_err().to_string();
    assert!(m.contains("parameter `mass`") && m.contains("-inf"), "{m}");
}

#[test]
fn wrong_matrix_shapes() {
    let e = assert_error(
        &with_line(11, "mass = [[1, 0], [0]]"),
        11,
        "row 2 has 1 entries",
    );
    assert!(matches!(e, ScenarioError::Shape { .. }), "{e:?}");
    assert_error(&with_line(11, "mass = []"), 11, "non-empty");
    // A shape the builder refuses: reported on the entry's line.
    let e = assert_error(&with_line(11, "mass = [[1, 0], [0, 1]]"), 7, "mass matrix");
    assert!(matches!(e, ScenarioError::Model { .. }), "{e:?}");
    let e = assert_error(
        &with_line(
            15,
            "relation = { type = \"lagrangian_linear\", H = [[1, 0]] }",
        ),
        12,
        "columns of H",
    );
    assert!(matches!(e, ScenarioError::Model { .. }), "{e:?}");
}

#[test]
fn model_errors_name_the_entry() {
    // Mass not positive definite.
    let e = assert_error(
        &with_line(3, "mass = -1"),
        7,
        "not symmetric positive definite",
    );
    assert!(matches!(e, ScenarioError::Model { .. }), "{e:?}");
    // Restitution out of range.
    assert_error(
        &with_line(16, "law = { type = \"newton_impact\", restitution = 1.5 }"),
        12,
        "restitution",
    );
    // Two systems with one name.
    let text = format!(
        "{BASE}[[systems]]\nname = \"ball\"\ntype = \"first_order_linear\"\nx0 = [0]\nA = [[0]]\n"
    );
    assert_error(&text, 17, "used twice");
}

#[test]
fn unknown_systems_in_interactions() {
    let e = assert_error(
        &with_line(14, "systems = [\"ball\", \"wall\"]"),
        14,
        "unknown system `wall`",
    );
    assert!(matches!(e, ScenarioError::UnknownSystem { .. }), "{e:?}");
    assert!(e.to_string().contains("systems: ball"));
    assert_error(&with_line(14, "systems = []"), 14, "one or two");
}

#[test]
fn bad_simulation_settings() {
    let e = assert_error(&with_line(6, "step = -1"), 6, "step");
    assert!(matches!(e, ScenarioError::Setting { .. }), "{e:?}");
    assert_error(&with_line(5, "t_end = 1\ntheta = 2"), 6, "theta");
    assert_error(&with_line(5, "t_end = -1"), 5, "t_end");
    assert_error(&with_line(6, "step = 1e-12"), 6, "step");
    assert_error(
        &with_line(5, "t_end = 1\nsolver = \"magic\""),
        6,
        "unknown solver `magic`",
    );
    assert_error(
        &with_line(5, "t_end = 1\nmax_iterations = 0"),
        6,
        "at least 1",
    );
    assert_error(
        &with_line(5, "t_end = 1\nmax_iterations = 2.5"),
        6,
        "integer",
    );
    assert_error(&with_line(5, "t_end = 1\ntolerance = 0"), 6, "tolerance");
    assert_error(
        &with_line(5, "t_end = 1\nfirst_order_scheme = \"rk4\""),
        6,
        "unknown scheme",
    );
    // A solver of another family: found when the simulation is set up.
    let relay = r#"name = "r"
[simulation]
t_end = 1
step = 0.01
solver = "psor"
[[systems]]
name = "p"
type = "first_order_linear"
x0 = [0, 1]
A = [[0, 1], [0, 0]]
[[interactions]]
name = "relay"
systems = ["p"]
relation = { type = "first_order_linear", C = [[1, 1]], B = [[0], [1]] }
law = { type = "relay", lb = [-1], ub = [1] }
"#;
    assert_error(relay, 5, "psor");
    assert!(
        Scenario::from_str(&relay.replace("psor", "pgs"), "case.toml")
            .unwrap()
            .build()
            .unwrap()
            .control_loop()
            .is_ok()
    );
    let text = format!("{BASE}[output]\nevery = 0\n");
    assert_error(&text, 18, "every");
}

#[test]
fn output_selection_errors_and_limits() {
    let with_record = |r: &str| format!("{BASE}[output]\nrecord = [{r}]\n");
    assert_error(&with_record("\"ball.x\""), 18, "no variable `x`");
    assert_error(&with_record("\"ball.q[3]\""), 18, "out of range");
    assert_error(
        &with_record("\"wall.q\""),
        18,
        "no system, interaction, sensor, observer or controller",
    );
    assert_error(&with_record("\"ball\""), 18, "expected");
    let built = Scenario::from_str(
        &with_record("\"ball.*\", \"floor.lambda[0]\", \"ball.q\""),
        "case.toml",
    )
    .unwrap()
    .build()
    .unwrap();
    assert_eq!(
        built.header(),
        ["t", "ball.q[0]", "ball.v[0]", "floor.lambda[0]"]
    );
    // More than 1000 columns by default: `record` is required.
    let many = BASE.replace(
        "name = \"ball\"\n",
        "name = \"ball{i}\"\nrepeat = { i = \"0 .. 501\" }\n",
    );
    let many = many.replace("systems = [\"ball\"]", "systems = [\"ball0\"]");
    assert_error(&many, 1, "record");
    let plot = format!("{BASE}[output]\nrecord = [\"ball.q\"]\n[[plots]]\noutput = \"p.svg\"\ny = [\"ball.v[0]\"]\n");
    assert_error(&plot, 21, "not recorded");
}

#[test]
fn repeat_errors() {
    let text = with_line(8, "name = \"b{i}\"\nrepeat = { i = \"0 - 3\" }");
    assert_error(&text, 9, "start .. end");
    let text = with_line(8, "name = \"b{i}\"\nrepeat = { mass = \"0 .. 3\" }");
    assert_error(&text, 9, "cannot be a repeat index");
    let text = with_line(8, "name = \"b{i/2}\"\nrepeat = { i = \"0 .. 3\" }");
    assert_error(&text, 8, "integer");
    let text = with_line(8, "name = \"b{j}\"\nrepeat = { i = \"0 .. 3\" }");
    assert_error(&text, 8, "unknown parameter `j`");
}

#[test]
fn reading_a_missing_file_is_an_io_error() {
    let e = Scenario::from_file("/nonexistent/scenario.toml").unwrap_err();
    assert!(matches!(e, ScenarioError::Io { .. }));
    assert!(e
        .to_string()
        .starts_with("/nonexistent/scenario.toml: cannot read"));
}

#[test]
fn fmi_table_is_checked_and_located() {
    // BASE has 16 lines; the [fmi] table starts on line 17.
    let fmi = |table: &str| format!("{BASE}[fmi]\n{table}\n");
    assert_error(
        &fmi("inputs = [{ target = \"ball.g[1]\" }]"),
        18,
        "out of range",
    );
    assert_error(
        &fmi("inputs = [{ target = \"bal.g[0]\" }]"),
        18,
        "no system is named `bal`",
    );
    assert_error(
        &fmi("inputs = [{ target = \"floor.u[0]\" }]"),
        18,
        "takes 0 inputs",
    );
    assert_error(
        &fmi("inputs = [{ target = \"ball.q[0]\" }]"),
        18,
        "`q` is not an input",
    );
    assert_error(
        &fmi("inputs = [{ target = \"ball.g\" }]"),
        18,
        "expected `<system>.g[i]`",
    );
    assert_error(
        &fmi("inputs = [{ target = \"ball.g[0]\" }, { target = \"ball.g[0]\", name = \"f\" }]"),
        18,
        "given twice",
    );
    assert_error(
        &fmi("inputs = [{ target = \"ball.g[0]\", name = \"mass\" }]"),
        18,
        "already the name",
    );
    assert_error(&fmi("tunable = [\"mas\"]"), 18, "not a parameter");
    assert_error(&fmi("model_identifier = \"1abc\""), 18, "model_identifier");
    assert_error(&fmi("outputs = [\"ball.w\"]"), 18, "no variable `w`");
    assert_error(
        &fmi("units = { speed = \"m/s\" }"),
        18,
        "no parameter, input or output",
    );
    assert_error(&fmi("colour = 1"), 18, "unknown field");

    let built = Scenario::from_str(
        &fmi(
            "model_identifier = \"ball_fmu\"\noutputs = [\"ball.q\", \"floor.lambda\"]\n\
             tunable = [\"mass\"]\n\
             inputs = [{ target = \"ball.g[0]\", start = \"2*mass\", name = \"force\" }]\n\
             units = { mass = \"kg\", force = \"N\", \"ball.q\" = \"m\" }",
        ),
        "case.toml",
    )
    .unwrap()
    .build()
    .unwrap();
    let f = &built.fmi;
    assert_eq!(f.model_identifier, "ball_fmu");
    let names: Vec<&str> = f.outputs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ball.q[0]", "floor.lambda[0]"]);
    assert_eq!(f.output_units, [Some("m".to_string()), None]);
    assert_eq!(f.inputs[0].name, "force");
    assert_eq!(f.inputs[0].start, 2.0);
    assert_eq!(f.inputs[0].unit.as_deref(), Some("N"));
    assert_eq!(f.parameter_units["mass"], "kg");
    assert_eq!(f.tunable, ["mass"]);
    // The start value of an input is held in a plain run too.
    let sim = built.control_loop().unwrap();
    assert_eq!(sim.plant().system_input(SystemId(0)), &[2.0]);

    // Without [fmi]: the recorded columns, an identifier from the name.
    let built = Scenario::from_str(&BASE.replace("name = \"e\"", "name = \"9-e\""), "c.toml")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(built.fmi.model_identifier, "_9_e");
    assert_eq!(built.fmi.outputs, built.columns);
}

#[test]
fn strategy_key_selects_event_driven_with_its_settings() {
    use nonsmooth::simulation::{OdeMethod, Strategy};
    let text = r#"
name = "fall"
[simulation]
t_end = 1
step = 0.01
strategy = "event-driven"
method = "tr_bdf2"
rtol = 1e-8
atol = 1e-9
accumulation_velocity = 1e-3
accumulation_time = 1e-3
event_tolerance = 1e-14
output_at_events = true
[[systems]]
name = "ball"
type = "lagrangian_linear"
q0 = [1]
mass = [[1]]
fext = [-9.81]
[[interactions]]
name = "floor"
systems = ["ball"]
relation = { type = "lagrangian_linear", H = [[1]], b = [0] }
law = { type = "newton_impact", restitution = 0.5 }
[output]
every = 2
"#;
    let built = Scenario::from_str(text, "fall.toml")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(built.strategy, Strategy::EventDriven);
    let ed = &built.event_driven;
    assert_eq!(ed.method, OdeMethod::TrBdf2);
    assert_eq!((ed.rtol, ed.atol), (1e-8, 1e-9));
    assert_eq!(ed.output_step, 0.02);
    assert!(ed.output_at_events);
    let mut sim = built.control_loop().unwrap();
    assert_eq!(sim.plant().strategy(), Strategy::EventDriven);
    let mut rows = 0;
    let mut row = vec![0.0; built.header().len()];
    while let nonsmooth::simulation::StepOutcome::Advanced { .. } = sim.step().unwrap() {
        if sim.plant().is_output_instant() {
            built.row(&sim, &mut row);
            rows += 1;
        }
    }
    // 51 grid rows and one per impact before the accumulation point.
    assert!(rows > 51, "{rows}");
    // The same file runs time-stepping too.
    assert_eq!(
        built
            .control_loop_with(Strategy::TimeStepping)
            .unwrap()
            .plant()
            .strategy(),
        Strategy::TimeStepping
    );

    for (bad, key) in [
        ("strategy = \"leapfrog\"", "strategy"),
        ("method = \"euler\"", "method"),
        ("rtol = 2", "rtol"),
        ("accumulation_time = -1", "accumulation_time"),
    ] {
        let text = format!(
            "name = \"x\"\n[simulation]\nt_end = 1\nstep = 0.01\n{bad}\n[[systems]]\nname = \"b\"\ntype = \"lagrangian_linear\"\nq0 = [1]\nmass = [[1]]\n"
        );
        let err = Scenario::from_str(&text, "x.toml")
            .unwrap()
            .build()
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("x.toml:5:") && msg.contains(key),
            "{bad}: {msg}"
        );
    }
}

/// Every bundled example also runs event-driven, on the same output
/// instants, and ends at the same state as time-stepping within the
/// accuracy of the time step (the column of beads is left out: its
/// time-stepped impacts are not located, so the two differ by more).
#[test]
fn bundled_examples_run_event_driven_on_the_same_instants() {
    use nonsmooth::simulation::{StepOutcome, Strategy};
    for (file, state_tol) in [
        ("bouncing_ball.toml", None),
        ("diode_bridge.toml", Some(0.05)),
        ("relay.toml", Some(0.05)),
        ("beads_column.toml", None),
    ] {
        let built = Scenario::from_file(example(file)).unwrap().build().unwrap();
        let mut rows = Vec::new();
        for strategy in [Strategy::TimeStepping, Strategy::EventDriven] {
            let mut sim = built
                .control_loop_with(strategy)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut out = Vec::new();
            let mut row = vec![0.0; built.header().len()];
            while let StepOutcome::Advanced { .. } =
                sim.step().unwrap_or_else(|e| panic!("{file}: {e}"))
            {
                if sim.plant().is_output_instant() {
                    built.row(&sim, &mut row);
                    out.push(row.clone());
                }
            }
            rows.push(out);
        }
        assert_eq!(rows[0].len(), rows[1].len(), "{file}");
        for (a, b) in rows[0].iter().zip(&rows[1]) {
            assert_eq!(a[0], b[0], "{file}: the same instants");
            assert!(b.iter().all(|x| x.is_finite()), "{file}");
        }
        if let Some(tol) = state_tol {
            // Final states (the first recorded columns are the system's).
            let (a, b) = (rows[0].last().unwrap(), rows[1].last().unwrap());
            let scale = a[1].abs().max(1.0);
            assert!(
                (a[1] - b[1]).abs() <= tol * scale,
                "{file}: {} vs {}",
                a[1],
                b[1]
            );
        }
    }
}
