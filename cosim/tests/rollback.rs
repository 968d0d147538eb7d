//! Rollback of a whole co-simulation loop: a native double integrator
//! under a PID law (sensor with a delay, so values are in transit), beside
//! two Reference FMUs — Feedthrough, connected both ways with the native
//! plant, and Dahlquist — run to T1, saved (`ControlLoop::save_state_mut`:
//! every FMU's state inside the FMU, the native simulation's, the
//! master's, the loop's), run to T2, restored, and run to T2 again: the
//! rows of both runs from T1 on are identical bit for bit.

// The build error is the scenario crate's located error, unboxed as in
// nonsmooth_cosim::scenario.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::Arc;

use nonsmooth::control::{ControlLoop, ControlLoopState};
use nonsmooth::simulation::StepOutcome;
use nonsmooth_controllers::Catalog;
use nonsmooth_cosim::scenario::build;
use nonsmooth_scenario::{BuiltScenario, Scenario};

const LOOP: &str = r#"
name = "rollback"
[simulation]
t_end = 1.5
step = 0.01
first_order_scheme = "zero_order_hold"
[[systems]]
name = "plant"
type = "first_order_linear"
x0 = [1, 0]
A = [[0, 1], [0, 0]]
[[sensors]]
name = "sensor"
system = "plant"
C = [[1, 0]]
period = 0.05
delay = 0.07
[[controllers]]
name = "controller"
law = "pid"
input = "sensor"
system = "plant"
B = [[0], [1]]
period = 0.05
[controllers.params]
kp = 2
ki = 0.5
kd = 1
[[fmus]]
name = "ft"
path = "{ft}"
step = 0.1
[[fmus]]
name = "dq"
path = "{dq}"
step = 0.05
parameters = { k = 3 }
[[connections]]
from = "plant.x[1]"
to = "ft.Float64_continuous_input"
[[connections]]
from = "ft.Float64_continuous_output"
to = "plant.g[0]"
[output]
record = ["plant.x", "controller.u", "sensor.y", "ft.Float64_continuous_output", "dq.x"]
"#;

fn loop_() -> (BuiltScenario, ControlLoop) {
    let dir = common::reference_fmus();
    let text = LOOP
        .replace("{ft}", &dir.join("Feedthrough.fmu").display().to_string())
        .replace("{dq}", &dir.join("Dahlquist.fmu").display().to_string());
    let s = Scenario::from_str(&text, "rollback.toml").unwrap();
    build(&s, Arc::new(Catalog)).unwrap()
}

/// Steps to the end, the bits of every row.
fn rest(b: &BuiltScenario, run: &mut ControlLoop) -> Vec<Vec<u64>> {
    let mut row = vec![0.0; b.header().len()];
    let mut out = Vec::new();
    while let StepOutcome::Advanced { .. } = run.step().unwrap() {
        b.row(run, &mut row);
        out.push(row.iter().map(|x| x.to_bits()).collect());
    }
    out
}

#[test]
fn the_whole_cosimulation_rolls_back_bit_identically() {
    let (b, mut run) = loop_();
    while run.time() < 0.73 {
        run.step().unwrap();
    }
    let t1 = run.time();
    // The immutable save cannot reach the FMUs' states: a typed error.
    let e = run.save_state().unwrap_err();
    assert!(e.to_string().contains("save_state_mut"), "{e}");
    let saved: ControlLoopState = run.save_state_mut().unwrap();
    assert_eq!(saved.time(), t1);
    let first = rest(&b, &mut run);
    assert!((run.time() - 1.5).abs() < 1e-12);
    run.restore_state(&saved).unwrap();
    assert_eq!(run.time(), t1);
    let second = rest(&b, &mut run);
    assert_eq!(first.len(), second.len());
    assert!(first.len() > 70, "{} rows after T1", first.len());
    for (k, (a, c)) in first.iter().zip(&second).enumerate() {
        assert_eq!(a, c, "row {k} after T1 differs: {:?}", b.header());
    }
    // The run after T1 moves (the rollback is not of a still state):
    // x, u and dq.x change between T1 and T2.
    let (a, z) = (&first[0], first.last().unwrap());
    for name in ["plant.x[0]", "controller.u[0]", "dq.x"] {
        let j = b.header().iter().position(|h| *h == name).unwrap();
        assert_ne!(a[j], z[j], "{name} did not move");
    }
    // The state has no byte form: reading it back is refused.
    let e = ControlLoopState::from_bytes(&saved.to_bytes()).unwrap_err();
    assert!(e.to_string().contains("in memory"), "{e}");
}
