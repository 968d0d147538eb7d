//! A scenario's `[[fmus]]` and `[[connections]]` checked against Reference
//! FMUs: unknown variables and mismatched causalities are located errors.

mod common;

use nonsmooth_cosim::scenario::open_plan;
use nonsmooth_scenario::Scenario;

/// Dahlquist (output `x`, parameter `k`) and Feedthrough, with `rest`
/// appended; the error's line is checked against the line of `needle`.
fn check(rest: &str, needle: Option<&str>) -> Option<String> {
    let dir = common::reference_fmus();
    let text = format!(
        "name = \"pair\"\n[simulation]\nt_end = 1\nstep = 0.1\n\
         [[fmus]]\nname = \"dq\"\npath = \"{}\"\nstep = 0.1\n{rest}\
         [[fmus]]\nname = \"ft\"\npath = \"{}\"\nstep = 0.1\n",
        dir.join("Dahlquist.fmu").display(),
        dir.join("Feedthrough.fmu").display(),
    );
    let s = Scenario::from_str(&text, "pair.toml").unwrap();
    let plan = s.cosim_plan().unwrap().unwrap();
    match open_plan(&plan) {
        Ok(fmus) => {
            assert_eq!(fmus.len(), 2);
            assert!(needle.is_none());
            None
        }
        Err(e) => {
            let needle = needle.expect("no error expected");
            let line = text[..text.find(needle).unwrap()].matches('\n').count() + 1;
            assert_eq!(e.line(), Some(line), "{e}");
            assert!(e.to_string().starts_with("pair.toml:"), "{e}");
            Some(e.to_string())
        }
    }
}

const GOOD: &str = "[[connections]]\nfrom = \"dq.x\"\nto = \"ft.Float64_continuous_input\"\n";

#[test]
fn a_consistent_plan_opens() {
    assert_eq!(
        check(&format!("parameters = {{ k = 2 }}\n{GOOD}"), None),
        None
    );
}

#[test]
fn unknown_variables_are_located() {
    let e = check(
        &format!("parameters = {{ kk = 2 }}\n{GOOD}"),
        Some("kk = 2"),
    )
    .unwrap();
    assert!(e.contains("no variable `kk`"), "{e}");
    let e = check(
        "[[connections]]\nfrom = \"dq.y\"\nto = \"ft.Float64_continuous_input\"\n",
        Some("from = "),
    )
    .unwrap();
    assert!(e.contains("no variable `y`"), "{e}");
}

#[test]
fn mismatched_causalities_are_located() {
    let e = check(
        "[[connections]]\nfrom = \"dq.x\"\nto = \"ft.Float64_continuous_output\"\n",
        Some("to = "),
    )
    .unwrap();
    assert!(e.contains("causality Output; Input expected"), "{e}");
    let e = check("parameters = { x = 1 }\n", Some("x = 1")).unwrap();
    assert!(e.contains("Parameter expected"), "{e}");
}
