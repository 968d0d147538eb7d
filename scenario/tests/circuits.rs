//! `[[circuits]]` entries: errors located at the element's line, naming
//! the circuit and the element; state names in records; sources as
//! expressions of t.

use nonsmooth_scenario::Scenario;

fn scenario(elements: &str) -> String {
    format!(
        r#"name = "c"
[parameters]
r = 10
c = 1e-3

[simulation]
t_end = 1e-2
step = 1e-4

[[circuits]]
name = "rc"
elements = [
{elements}
]

[output]
record = ["rc.v(C1)"]
"#
    )
}

/// The error message of a scenario whose build fails, and its line.
fn error(elements: &str) -> (String, Option<usize>) {
    let text = scenario(elements);
    let scenario = Scenario::from_str(&text, "c.toml").unwrap();
    let err = match scenario.build() {
        Err(e) => e,
        Ok(_) => panic!("built: {elements}"),
    };
    (err.to_string(), err.line())
}

// The element lines start at line 13.
#[test]
fn topological_errors_point_at_the_element_line() {
    let (msg, line) = error("  \"V1 in 0 5\",\n  \"C1 in 0 c\",\n  \"R1 in 0 r\",");
    assert_eq!(line, Some(14), "{msg}");
    assert!(msg.contains("C1") && msg.contains("loop"), "{msg}");

    let (msg, line) =
        error("  \"I1 0 in 1\",\n  \"L1 in out c\",\n  \"R1 out 0 r\",\n  \"C1 out 0 c\",");
    assert!(
        msg.contains("cut set") && msg.contains("node `in`"),
        "{msg}"
    );
    assert!(matches!(line, Some(13) | Some(14)), "{msg}");

    let (msg, line) = error("  \"R1 in 0 r\",\n  \"C1 in 0 c\",\n  \"R2 in oops r\",");
    assert_eq!(line, Some(15), "{msg}");
    assert!(msg.contains("R2") && msg.contains("oops"), "{msg}");

    let (msg, line) = error("  \"R1 in 0 r\",\n  \"C1 in 0 c\",\n  \"R2 x y r\",\n  \"C2 x y c\",");
    assert_eq!(line, Some(15), "{msg}");
    assert!(msg.contains("floats"), "{msg}");
}

#[test]
fn element_lines_are_checked() {
    let (msg, line) = error("  \"R1 in 0 r\",\n  \"C1 in 0 nope\",");
    assert_eq!(line, Some(14), "{msg}");
    assert!(msg.contains("nope"), "{msg}");
    let (msg, _) = error("  \"X1 in 0 r\",\n  \"C1 in 0 c\",");
    assert!(msg.contains("unknown element `X1`"), "{msg}");
    let (msg, _) = error("  \"R1 in 0 -r\",\n  \"C1 in 0 c\",");
    assert!(msg.contains("positive"), "{msg}");
    let (msg, _) = error("  \"D1 in 0 3\",\n  \"C1 in 0 c\",");
    assert!(msg.contains("takes no value"), "{msg}");
    let (msg, _) = error("  \"R1 in 0 r ic=1\",\n  \"C1 in 0 c\",");
    assert!(msg.contains("ic="), "{msg}");
    let (msg, _) = error("  \"R1 in 0 r\",\n  \"R1 in 0 c\",\n  \"C1 in 0 c\",");
    assert!(msg.contains("already used"), "{msg}");
}

/// An RC circuit driven by V(t) = sin(100 t), integrated with θ = 1/2:
/// the recorded `rc.v(C1)` follows the trapezoidal recursion written out
/// by hand, v_{k+1} = v_k + h/2 (f(t_k, v_k) + f(t_{k+1}, v_{k+1})),
/// f = (V(t) − v)/(r c) (the source enters b(t) of the system).
#[test]
fn time_varying_source_and_state_names() {
    let text = scenario("  \"V1 in 0 sin(100*t)\",\n  \"R1 in out r\",\n  \"C1 out 0 c ic=0.5\",")
        .replace("step = 1e-4", "step = 1e-4\ntheta = 0.5");
    let built = Scenario::from_str(&text, "c.toml")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(built.header(), ["t", "rc.v(C1)"]);
    let mut sim = built.control_loop().unwrap();
    let mut row = [0.0; 2];
    let mut got = Vec::new();
    sim.run(|s| {
        built.row(s, &mut row);
        got.push(row);
    })
    .unwrap();
    let (rc, h) = (10.0 * 1e-3, 1e-4);
    let mut v = 0.5;
    let mut worst = 0.0f64;
    for w in got.windows(2) {
        let (t0, t1) = (w[0][0], w[1][0]);
        let f0 = ((100.0 * t0).sin() - v) / rc;
        // (1 + h/(2rc)) v1 = v + h/2 f0 + h/(2rc) V(t1)
        v = (v + h / 2.0 * f0 + h / (2.0 * rc) * (100.0 * t1).sin()) / (1.0 + h / (2.0 * rc));
        worst = worst.max((w[1][1] - v).abs());
    }
    assert_eq!(got.len(), 101);
    assert!(worst < 1e-13, "{worst:e}");
}
