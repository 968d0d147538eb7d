//! Controllers driving a circuit's gated switch from a scenario file
//! (`inputs = ["S1"]`): the gate reaches both G u in ẋ and H u in the
//! switches' relation.

use std::sync::Arc;

use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

/// The boost converter of tests/circuits_boost.rs (V_in = 10 V, L = 1 mH,
/// C = 100 µF, R = 20 Ω, V_b = 100 V), its gate driven by the controller
/// `[[controllers]]` text `controller`, step h, run until `t_end`.
fn boost(controller: &str, h: f64, t_end: f64, extra: &str) -> String {
    format!(
        r#"name = "boost"
[parameters]
v_in = 10
inductance = 1e-3
capacitance = 1e-4
resistance = 20

[simulation]
t_end = {t_end}
step = {h}

[[circuits]]
name = "boost"
elements = [
  "V1 in 0 v_in",
  "L1 in sw inductance",
  "S1 sw 0 10*v_in",
  "D1 sw out",
  "C1 out 0 capacitance",
  "R1 out 0 resistance",
]
{extra}
[[controllers]]
{controller}

[output]
record = ["boost.i(L1)", "boost.v(C1)"]
"#
    )
}

/// Rows (t, i_L, v_C) of a run.
fn run(text: &str) -> Vec<[f64; 3]> {
    let built = Scenario::from_str(text, "boost.toml")
        .unwrap()
        .build_with(Arc::new(Catalog))
        .unwrap();
    assert_eq!(built.header(), ["t", "boost.i(L1)", "boost.v(C1)"]);
    let mut sim = built.control_loop().unwrap();
    let mut row = [0.0; 3];
    let mut got = Vec::new();
    sim.run(|s| {
        built.row(s, &mut row);
        got.push(row);
    })
    .unwrap();
    got
}

fn stats(v: impl Iterator<Item = f64> + Clone) -> (f64, f64, f64) {
    let n = v.clone().count() as f64;
    let mean = v.clone().sum::<f64>() / n;
    let max = v.clone().fold(f64::NEG_INFINITY, f64::max);
    let min = v.fold(f64::INFINITY, f64::min);
    (mean, min, max)
}

/// Open loop at D = 0.5, PWM period T = 100 µs sampled every h = 1 µs, for
/// 600 periods: over the last period the inductor current rises by
/// V_in D T/L = 0.5 A (exactly: di/dt = V_in/L while the switch is closed)
/// and the output averages V_in/(1 − D) = 20 V up to its ripple, the
/// figures of the Rust-API open loop (tests/circuits_boost.rs).
#[test]
fn pwm_gate_from_a_scenario_matches_the_open_loop() {
    let text = boost(
        r#"name = "gate"
law = "pwm"
system = "boost"
inputs = ["S1"]
period = 1e-6
[controllers.params]
duty = 0.5
pwm_period = 1e-4"#,
        1e-6,
        0.06,
        "",
    );
    let rows = run(&text);
    assert_eq!(rows.len(), 60_001);
    let last = &rows[rows.len() - 100..];
    let (_, i_min, i_max) = stats(last.iter().map(|r| r[1]));
    let (v_mean, v_min, v_max) = stats(last.iter().map(|r| r[2]));
    let ripple = 10.0 * 0.5 * 1e-4 / 1e-3;
    assert!(
        ((i_max - i_min) - ripple).abs() < 1e-6,
        "i_L ripple {}",
        i_max - i_min
    );
    assert!((v_mean - 20.0).abs() < v_max - v_min, "mean v {v_mean}");
    assert!(v_max - v_min < 0.6, "v ripple {}", v_max - v_min);
    println!(
        "pwm: i_L ripple {:.8} A, mean v {v_mean:.4} V, v ripple {:.4} V",
        i_max - i_min,
        v_max - v_min
    );
}

/// `inputs` naming switches is checked against the circuit.
#[test]
fn gate_inputs_are_checked() {
    let ctl = |inputs: &str, system: &str| {
        format!(
            "name = \"gate\"\nlaw = \"pwm\"\nsystem = \"{system}\"\ninputs = {inputs}\n\
             period = 1e-6\n[controllers.params]\nduty = 0.5\npwm_period = 1e-4"
        )
    };
    let err = |text: String| {
        let s = Scenario::from_str(&text, "boost.toml").unwrap();
        match s.build_with(Arc::new(Catalog)) {
            Err(e) => (e.to_string(), e.line()),
            Ok(_) => panic!("built"),
        }
    };
    let (msg, line) = err(boost(&ctl("[\"S2\"]", "boost"), 1e-6, 1e-4, ""));
    assert!(
        msg.contains("no switch `S2`") && msg.contains("S1"),
        "{msg}"
    );
    assert_eq!(line, Some(27), "{msg}");
    let extra = "[[systems]]\nname = \"p\"\ntype = \"first_order_linear\"\nA = [[0]]\nx0 = [0]\n";
    let (msg, _) = err(boost(&ctl("[\"S1\"]", "p"), 1e-6, 1e-4, extra));
    assert!(msg.contains("not a circuit with"), "{msg}");
}
