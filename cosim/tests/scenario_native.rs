//! Co-simulation scenario files run through `nonsmooth_cosim::scenario::build`
//! on Reference FMUs, against hand-written recursions:
//!
//! * a native first-order system ẋ = −2x + g beside Feedthrough (output =
//!   input), coupled both ways by `[[connections]]`: with communication
//!   step T and the native step h = T/4 (zero-order hold, exact for a held
//!   input), the loop is x_{k+1} = e^{−2T} x_k + (1 − e^{−2T})/2 · y_k,
//!   y_{k+1} = x_k (the FMU reads x(t_k) and publishes it at t_{k+1}; the
//!   native input holds y_k over (t_k, t_{k+1}]);
//! * `[cosimulation] coupling`: Dahlquist (x_n = 0.9ⁿ) into Feedthrough
//!   gives y_n = x_{n−1} under Jacobi and y_n = x_n under Gauss–Seidel;
//! * the errors of bad native connections and couplings, located.

// The build error is the scenario crate's located error, unboxed as in
// nonsmooth_cosim::scenario.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::Arc;

use nonsmooth::control::{ControlLoop, NoLaws};
use nonsmooth::simulation::StepOutcome;
use nonsmooth_cosim::scenario::{build, BuildError};
use nonsmooth_scenario::{BuiltScenario, Scenario};

/// A scenario text with `{ft}` and `{dq}` replaced by the Reference FMUs.
fn text(body: &str) -> String {
    let dir = common::reference_fmus();
    body.replace("{ft}", &dir.join("Feedthrough.fmu").display().to_string())
        .replace("{dq}", &dir.join("Dahlquist.fmu").display().to_string())
}

fn built(body: &str) -> Result<(BuiltScenario, ControlLoop), BuildError> {
    let s = Scenario::from_str(&text(body), "native.toml").expect("the file parses");
    build(&s, Arc::new(NoLaws))
}

/// The rows of a run (t, then the recorded columns).
fn rows(built: &BuiltScenario, run: &mut ControlLoop) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    let mut row = vec![0.0; built.header().len()];
    while let StepOutcome::Advanced { .. } = run.step().expect("the run steps") {
        if run.plant().is_output_instant() {
            built.row(run, &mut row);
            out.push(row.clone());
        }
    }
    out
}

const NATIVE: &str = r#"
name = "native_loop"
[simulation]
t_end = 2
step = 0.025
first_order_scheme = "zero_order_hold"
[[systems]]
name = "s"
type = "first_order_linear"
x0 = [1]
A = [[-2]]
[[fmus]]
name = "ft"
path = "{ft}"
step = 0.1
[[connections]]
from = "s.x[0]"
to = "ft.Float64_continuous_input"
[[connections]]
from = "ft.Float64_continuous_output"
to = "s.g[0]"
[output]
every = 4
record = ["s.x[0]", "ft.Float64_continuous_output"]
"#;

#[test]
fn a_native_model_and_an_fmu_follow_the_sampled_recursion() {
    let (b, mut run) = built(NATIVE).unwrap();
    assert_eq!(b.header(), ["t", "s.x[0]", "ft.Float64_continuous_output"]);
    let rows = rows(&b, &mut run);
    assert_eq!(rows.len(), 21, "t0 and every communication point");
    let t: f64 = 0.1;
    let a = (-2.0 * t).exp();
    let g = (1.0 - a) / 2.0;
    // y_0: Feedthrough's output at initialisation is its input's start, 0.
    let (mut x, mut y) = (1.0, 0.0);
    for (k, r) in rows.iter().enumerate() {
        assert!((r[0] - t * k as f64).abs() < 1e-12, "row {k}: t = {}", r[0]);
        assert!((r[1] - x).abs() <= 1e-12, "t_{k}: x = {} vs {x}", r[1]);
        assert!((r[2] - y).abs() <= 1e-12, "t_{k}: y = {} vs {y}", r[2]);
        (x, y) = (a * x + g * y, x);
    }
    // The loop feeds back: x differs from the open-loop decay e^{-2t}.
    assert!((rows[20][1] - (-4.0f64).exp()).abs() > 1e-2);
}

const PAIR: &str = r#"
name = "pair"
[simulation]
t_end = 2
step = 0.1
[[fmus]]
name = "dq"
path = "{dq}"
step = 0.1
parameters = { k = 1 }
[[fmus]]
name = "ft"
path = "{ft}"
step = 0.1
[[connections]]
from = "dq.x"
to = "ft.Float64_continuous_input"
[output]
record = ["dq.x", "ft.Float64_continuous_output"]
"#;

fn pair(coupling: Option<&str>) -> Vec<Vec<f64>> {
    let body = match coupling {
        Some(c) => format!("{PAIR}[cosimulation]\ncoupling = \"{c}\"\n"),
        None => PAIR.to_string(),
    };
    let (b, mut run) = built(&body).unwrap();
    rows(&b, &mut run)
}

#[test]
fn the_coupling_is_chosen_in_the_file_with_its_delay() {
    let jacobi = pair(None);
    assert_eq!(jacobi, pair(Some("jacobi")), "Jacobi is the default");
    let gs = pair(Some("gauss-seidel"));
    assert_eq!(jacobi.len(), 21);
    assert_eq!(gs.len(), 21);
    for n in 1..=20 {
        let x = 0.9f64.powi(n as i32);
        assert!((jacobi[n][1] - x).abs() < 1e-12);
        assert!((gs[n][1] - x).abs() < 1e-12);
        // Jacobi: the input over (t_{n-1}, t_n] is x published at t_{n-1}.
        let prev = 0.9f64.powi(n as i32 - 1);
        assert!((jacobi[n][2] - prev).abs() < 1e-12, "Jacobi y_{n}");
        // Gauss–Seidel: dq (declared first) stepped first, its new x fed.
        assert!((gs[n][2] - x).abs() < 1e-12, "Gauss–Seidel y_{n}");
    }
}

/// The error of `body`, located at the line holding `needle`.
fn refused(body: &str, needle: &str, says: &str) {
    let t = text(body);
    let line = t[..t.find(needle).expect("needle in text")]
        .matches('\n')
        .count()
        + 1;
    let e = match built(body) {
        Err(BuildError::Input(e)) => e,
        Err(e) => panic!("not an input error: {e}"),
        Ok(_) => panic!("accepted: {needle}"),
    };
    assert_eq!(e.line(), Some(line), "{e}");
    assert!(e.to_string().contains(says), "`{says}` not in: {e}");
}

#[test]
fn bad_native_connections_and_couplings_are_located() {
    // An unknown native object, an unknown variable, an index out of range.
    refused(
        &NATIVE.replace("from = \"s.x[0]\"", "from = \"z.x[0]\""),
        "from = \"z.x[0]\"",
        "no FMU, system or interaction is named `z`",
    );
    refused(
        &NATIVE.replace("from = \"s.x[0]\"", "from = \"s.p[0]\""),
        "from = \"s.p[0]\"",
        "has no variable `p`",
    );
    refused(
        &NATIVE.replace("to = \"s.g[0]\"", "to = \"s.g[3]\""),
        "to = \"s.g[3]\"",
        "index 3 is out of range",
    );
    // Mismatched causality: a held input as a source, a state as a target,
    // an FMU output as a target, an FMU input as a source.
    refused(
        &NATIVE.replace("from = \"s.x[0]\"", "from = \"s.g[0]\""),
        "from = \"s.g[0]\"",
        "is a held input of the model",
    );
    refused(
        &NATIVE.replace("to = \"s.g[0]\"", "to = \"s.x[0]\""),
        "to = \"s.x[0]\"",
        "is not an input of the model",
    );
    refused(
        &NATIVE.replace(
            "to = \"ft.Float64_continuous_input\"",
            "to = \"ft.Float64_continuous_output\"",
        ),
        "to = \"ft.Float64_continuous_output\"",
        "causality Output; Input expected",
    );
    refused(
        &NATIVE.replace(
            "from = \"ft.Float64_continuous_output\"",
            "from = \"ft.Float64_continuous_input\"",
        ),
        "from = \"ft.Float64_continuous_input\"",
        "causality Input; Output expected",
    );
    // Two connections on one native input.
    refused(
        &NATIVE.replace(
            "[output]",
            "[[connections]]\nfrom = \"ft.Float64_continuous_output\"\nto  =  \"s.g[0]\"\n[output]",
        ),
        "to  =  ",
        "is driven by two connections",
    );
    // An FMU step that is not a whole number of native steps.
    refused(
        &NATIVE.replace("step = 0.025", "step = 0.03"),
        "name = \"ft\"",
        "not a whole number of native steps",
    );
    // A coupling that does not exist.
    refused(
        &format!("{PAIR}[cosimulation]\ncoupling = \"gauss\"\n"),
        "coupling = ",
        "unknown coupling `gauss`",
    );
}
