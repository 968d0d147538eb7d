//! `[simulation] scheme`: the Lagrangian scheme chosen in a scenario file or
//! by a word parameter (`--set scheme=…`) is the one the run uses, and
//! what the schemes refuse is an error at the line of `scheme`.

use std::path::{Path, PathBuf};

use nonsmooth::simulation::{LagrangianScheme, Strategy, TimeStepping};
use nonsmooth_scenario::{BuiltScenario, Scenario, ScenarioError};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn rows(built: &BuiltScenario) -> Vec<Vec<f64>> {
    let mut sim = built.control_loop().expect("the simulation starts");
    let mut out = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    sim.run(|s| {
        if s.plant().is_output_instant() {
            built.row(s, &mut row);
            out.push(row.clone());
        }
    })
    .expect("the run succeeds");
    out
}

#[test]
fn the_scheme_parameter_selects_the_scheme_of_the_run() {
    let base = rows(
        &Scenario::from_file(example("bouncing_ball.toml"))
            .unwrap()
            .build()
            .unwrap(),
    );
    for (word, scheme) in [
        ("schatzman_paoli", LagrangianScheme::SchatzmanPaoli),
        ("d1_minus_linear", LagrangianScheme::D1MinusLinear),
    ] {
        let mut s = Scenario::from_file(example("bouncing_ball.toml")).unwrap();
        s.set_parameter("scheme", word).unwrap();
        let built = s.build().unwrap();
        assert_eq!(built.settings.lagrangian_scheme, scheme);
        let from_file = rows(&built);
        // The same run through the library: TimeStepping with that scheme.
        let mut sim = TimeStepping::new(built.model.clone(), built.settings.clone()).unwrap();
        let ball = built.model.system_id("ball").unwrap();
        let mut direct = vec![];
        sim.run(|s| direct.push(s.q(ball)[0])).unwrap();
        let q_col = built
            .header()
            .iter()
            .position(|h| *h == "ball.q[0]")
            .unwrap();
        let q: Vec<f64> = from_file.iter().map(|r| r[q_col]).collect();
        assert_eq!(q.len(), direct.len(), "{word}");
        if let Some(k) = q.iter().zip(&direct).position(|(a, b)| a != b) {
            panic!(
                "{word}: row {k}: {:?} vs {:?}",
                &q[k.saturating_sub(1)..k + 2],
                &direct[k.saturating_sub(1)..k + 2]
            );
        }
        assert_ne!(from_file, base, "{word}: same rows as Moreau–Jean");
    }
    // The beads column runs under both.
    for word in ["schatzman_paoli", "d1_minus_linear"] {
        let mut s = Scenario::from_file(example("beads_column.toml")).unwrap();
        s.set_parameter("scheme", word).unwrap();
        assert_eq!(rows(&s.build().unwrap()).len(), 1001);
    }
}

const BASE: &str = r#"name = "e"
[parameters]
mass = 1
[simulation]
t_end = 1
step = 0.01
scheme = "schatzman_paoli"
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

fn with_line(line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

fn error_of(text: &str, strategy: Option<Strategy>) -> String {
    let e: ScenarioError = match Scenario::from_str(text, "case.toml") {
        Err(e) => e,
        Ok(s) => match s.build() {
            Err(e) => e,
            Ok(b) => match b.control_loop_with(strategy.unwrap_or(b.strategy)) {
                Err(e) => e,
                Ok(_) => panic!("no error in:\n{text}"),
            },
        },
    };
    e.to_string()
}

#[test]
fn scheme_errors_name_the_line() {
    assert!(Scenario::from_str(BASE, "case.toml")
        .unwrap()
        .build()
        .is_ok());
    let e = error_of(&with_line(7, r#"scheme = "newmark""#), None);
    assert!(
        e.starts_with("case.toml:7:") && e.contains("unknown scheme `newmark`"),
        "{e}"
    );
    let e = error_of(
        &with_line(
            7,
            "scheme = \"d1_minus_linear\"\nstrategy = \"event-driven\"",
        ),
        None,
    );
    assert!(
        e.starts_with("case.toml:7:") && e.contains("time-stepping schemes"),
        "{e}"
    );
    // `nonsmooth run --strategy event-driven` on a file that asks for a scheme.
    let e = error_of(BASE, Some(Strategy::EventDriven));
    assert!(
        e.starts_with("case.toml:7:") && e.contains("event-driven"),
        "{e}"
    );
    let e = error_of(
        &with_line(17, r#"law = { type = "newton_impact_friction", dimension = 2, restitution = 0.5, friction = 0.3 }"#)
            .replace("H = [[1]]", "H = [[1], [0]]"),
        None,
    );
    assert!(e.contains("friction") && e.contains("'floor'"), "{e}");
}
