//! A co-simulation that one of its FMUs ends (the Reference FMU Stair,
//! fmi2Terminated when its counter reaches 10, at t = 9) run in memory:
//! the recording says so (`Recording::ended_early`) and holds the rows of
//! FMPy's `simulate_fmu` of the same FMU with the same step, up to t = 9.

#[path = "../../cosim/tests/common/mod.rs"]
mod common;

use nonsmooth_runs::{run, EndedEarly, RunOptions};
use nonsmooth_scenario::Scenario;

#[test]
fn a_run_ended_by_its_fmu_says_so() {
    let stair = common::reference_fmus().join("Stair.fmu");
    let text = format!(
        "name = \"stair\"\n\
         [simulation]\n\
         t_end = 10\n\
         step = 0.2\n\
         [[fmus]]\n\
         name = \"stair\"\n\
         path = \"{}\"\n\
         step = 0.2\n\
         [output]\n\
         record = [\"stair.counter\"]\n",
        stair.display()
    );
    let scenario = Scenario::from_str(&text, "stair.toml").unwrap();
    let rec = run(&scenario, &RunOptions::default()).unwrap();
    assert_eq!(
        rec.ended_early,
        Some(EndedEarly {
            fmu: "stair".into(),
            time: 9.0,
            end: 9.0
        })
    );
    let fmpy = common::fmpy_simulate(&stair, 0.2, 10.0, &["counter"]);
    assert_eq!(rec.rows(), 46);
    assert_eq!(rec.rows(), fmpy.len());
    for (k, f) in fmpy.iter().enumerate() {
        let r = rec.row(k);
        assert!(
            (r[0] - f[0]).abs() < 1e-12,
            "row {k}: t {} vs {}",
            r[0],
            f[0]
        );
        assert_eq!(r[1], f[1], "row {k}: counter");
    }
    // A run to t = 5 ends before the FMU would: not early.
    let short = RunOptions {
        t_end: Some(5.0),
        ..RunOptions::default()
    };
    let rec = run(&scenario, &short).unwrap();
    assert_eq!(rec.ended_early, None);
    assert_eq!(rec.rows(), 26);
}
