//! The `[[fmus]]` and `[[connections]]` sections: evaluation and located
//! errors (the checks against the FMUs' own variables are nonsmooth-cosim's).

use nonsmooth_scenario::{Scenario, ScenarioError};

/// A scenario in a fresh directory holding an (empty) `plant.fmu` file: the
/// scenario crate checks only that the file is there.
fn scenario(body: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plant.fmu"), b"").unwrap();
    let path = dir.path().join("loop.toml");
    let text = format!(
        "name = \"loop\"\n[parameters]\nh = 0.01\n[simulation]\nt_end = 1\nstep = \"h\"\n{body}"
    );
    std::fs::write(&path, &text).unwrap();
    (dir, path, text)
}

/// The 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].lines().count() + 1
}

#[test]
fn sections_are_evaluated_with_parameters_and_paths_relative_to_the_file() {
    let (dir, path, _) = scenario(
        "[[fmus]]\nname = \"plant\"\npath = \"plant.fmu\"\nstep = \"2*h\"\nparameters = { k = \"3*h\", m = 2 }\n\
         [[fmus]]\nname = \"other\"\npath = \"plant.fmu\"\nstep = 0.05\n\
         [[connections]]\nfrom = \"plant.body.x\"\nto = \"other.u\"\n",
    );
    let mut s = Scenario::from_file(&path).unwrap();
    s.set_parameter("h", 0.02).unwrap();
    let plan = s.cosim_plan().unwrap().unwrap();
    assert_eq!(plan.fmus.len(), 2);
    let plant = plan.fmu("plant").unwrap();
    assert_eq!(plant.path, dir.path().join("plant.fmu"));
    assert_eq!(plant.step, 2.0 * 0.02);
    let values: Vec<(&str, f64)> = plant
        .parameters
        .iter()
        .map(|(n, v, _)| (n.as_str(), *v))
        .collect();
    assert_eq!(values, [("k", 3.0 * 0.02), ("m", 2.0)]);
    assert_eq!(plan.fmu("other").unwrap().step, 0.05);
    let c = &plan.connections[0];
    assert_eq!(
        (c.from.fmu.as_str(), c.from.variable.as_str()),
        ("plant", "body.x")
    );
    assert_eq!((c.to.fmu.as_str(), c.to.variable.as_str()), ("other", "u"));
}

#[test]
fn a_scenario_without_fmus_has_no_plan() {
    let s = Scenario::from_str(
        "name = \"x\"\n[simulation]\nt_end = 1\nstep = 0.1\n",
        "x.toml",
    )
    .unwrap();
    assert_eq!(s.cosim_plan().unwrap(), None);
}

/// The error of `body`, its line, and the line expected.
fn fault(body: &str, needle: &str) -> (ScenarioError, usize) {
    let (_dir, path, text) = scenario(body);
    let err = Scenario::from_file(&path)
        .unwrap()
        .cosim_plan()
        .expect_err("the plan must be refused");
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );
    assert_eq!(err.line(), Some(line_of(&text, needle)), "{err}");
    (err, line_of(&text, needle))
}

#[test]
fn a_missing_fmu_file_is_located() {
    let (err, _) = fault(
        "[[fmus]]\nname = \"plant\"\npath = \"nowhere/plant.fmu\"\nstep = 0.1\n",
        "path = ",
    );
    assert!(err.to_string().contains("no FMU file"), "{err}");
    assert!(err.to_string().contains("nowhere/plant.fmu"), "{err}");
}

#[test]
fn an_unknown_fmu_name_in_a_connection_is_located() {
    let (err, _) = fault(
        "[[fmus]]\nname = \"plant\"\npath = \"plant.fmu\"\nstep = 0.1\n\
         [[connections]]\nfrom = \"plant.y\"\nto = \"ctrl.u\"\n",
        "to = ",
    );
    assert!(err.to_string().contains("no FMU named `ctrl`"), "{err}");
}

#[test]
fn malformed_ends_duplicate_names_and_bad_steps_are_located() {
    let base = "[[fmus]]\nname = \"plant\"\npath = \"plant.fmu\"\n";
    let (err, _) = fault(
        &format!("{base}step = 0.1\n[[connections]]\nfrom = \"plant\"\nto = \"plant.u\"\n"),
        "from = ",
    );
    assert!(err.to_string().contains("<fmu>.<variable>"), "{err}");
    let (err, _) = fault(
        &format!(
            "{base}step = 0.1\n[[fmus]]\nname = \"plant\"\npath = \"./plant.fmu\"\nstep = 0.1\n"
        ),
        "name = \"plant\"\npath = \"./",
    );
    assert!(err.to_string().contains("second FMU"), "{err}");
    let (err, _) = fault(&format!("{base}step = \"-h\"\n"), "step = \"-h\"");
    assert!(err.to_string().contains("must be > 0"), "{err}");
    let (err, _) = fault(&format!("{base}step = \"hh\"\n"), "step = \"hh\"");
    assert!(
        matches!(err, ScenarioError::UnknownParameter { .. }),
        "{err}"
    );
}

#[test]
fn connections_without_fmus_and_native_builds_of_cosimulations_are_refused() {
    let (err, _) = fault(
        "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
        "[[connections]]",
    );
    assert!(err.to_string().contains("no [[fmus]]"), "{err}");
    let (err, _) = fault("[cosimulation]\ncoupling = \"jacobi\"\n", "[cosimulation]");
    assert!(
        err.to_string().contains("[cosimulation] needs FMUs"),
        "{err}"
    );
    let (_dir, path, text) =
        scenario("[[fmus]]\nname = \"plant\"\npath = \"plant.fmu\"\nstep = 0.1\n");
    let err = Scenario::from_file(&path).unwrap().build().unwrap_err();
    assert_eq!(err.line(), Some(line_of(&text, "[[fmus]]")), "{err}");
    assert!(err.to_string().contains("co-simulation"), "{err}");
}
