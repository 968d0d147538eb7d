//! Rolling back runs with frictional contacts (`newton_impact_friction`):
//! a state saved mid-run, restored after the run went on, gives the same
//! steps bit for bit — every recorded column (q, v, impulses, contact
//! statuses) — through sticking, sliding, jams and impacts, in the same
//! loop and, from its bytes, in another one. The FMU side of it is in
//! `cli/tests/cli_fmu_friction.rs`.

use std::path::Path;

use nonsmooth::control::{ControlLoop, ControlLoopState};
use nonsmooth::simulation::StepOutcome;
use nonsmooth_scenario::{BuiltScenario, Scenario};

fn built(file: &str, overrides: &[(&str, f64)]) -> BuiltScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(file);
    let mut s = Scenario::from_file(path).unwrap_or_else(|e| panic!("{e}"));
    for (k, v) in overrides {
        s.set_parameter(k, *v).unwrap();
    }
    s.build().unwrap_or_else(|e| panic!("{e}"))
}

/// The bits of every recorded column after each of `n` steps.
fn steps(b: &BuiltScenario, cl: &mut ControlLoop, n: usize) -> Vec<Vec<u64>> {
    let mut row = vec![0.0; b.header().len()];
    (0..n)
        .map(|k| {
            let out = cl.step().unwrap_or_else(|e| panic!("step {k}: {e}"));
            assert!(
                matches!(out, StepOutcome::Advanced { .. }),
                "the run ended at step {k} of {n}"
            );
            b.row(cl, &mut row);
            row.iter().map(|x| x.to_bits()).collect()
        })
        .collect()
}

/// The statuses recorded in `rows` (columns named `*.status[0]`).
fn statuses(b: &BuiltScenario, rows: &[Vec<u64>]) -> Vec<u64> {
    let cols: Vec<usize> = b
        .header()
        .iter()
        .enumerate()
        .filter(|(_, h)| h.ends_with(".status[0]"))
        .map(|(i, _)| i)
        .collect();
    assert!(!cols.is_empty());
    let mut seen: Vec<u64> = rows
        .iter()
        .flat_map(|r| cols.iter().map(|&c| f64::from_bits(r[c]) as u64))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// Runs `before` steps, saves, runs `after` steps, restores, runs them
/// again; then a new loop restored from the state's bytes runs them too.
/// Returns the statuses met after the save.
fn check_rollback(b: &BuiltScenario, before: usize, after: usize) -> Vec<u64> {
    let mut cl = b.control_loop().unwrap();
    steps(b, &mut cl, before);
    let saved = cl.save_state().unwrap();
    let first = steps(b, &mut cl, after);
    assert!(
        first.windows(2).any(|w| w[0][1..] != w[1][1..]),
        "the run moves"
    );
    cl.restore_state(&saved).unwrap();
    let again = steps(b, &mut cl, after);
    let diverge = first.iter().zip(&again).position(|(a, b)| a != b);
    assert_eq!(
        diverge, None,
        "rolled-back run differs from step {diverge:?} on"
    );

    let bytes = saved.to_bytes();
    let mut other = b.control_loop().unwrap();
    other
        .restore_state(&ControlLoopState::from_bytes(&bytes).unwrap())
        .unwrap();
    let third = steps(b, &mut other, after);
    let diverge = first.iter().zip(&third).position(|(a, b)| a != b);
    assert_eq!(
        diverge, None,
        "restored from bytes, differs from step {diverge:?} on"
    );
    statuses(b, &first)
}

#[test]
fn woodpecker_rolls_back_bit_identically_through_jams_slips_and_beak_impacts() {
    let b = built("woodpecker.toml", &[("t_end", 0.3)]);
    // Saved while the sleeve slips (step 500), while it is jammed and the
    // bird swings (step 3000), one step before the beak strikes (4051,
    // Siconos' impact step is 4052): each time over the next cycle.
    for before in [500, 3000, 4051] {
        let seen = check_rollback(&b, before, 7500);
        assert_eq!(
            seen,
            [0, 1, 2],
            "separated, sticking and sliding after step {before}"
        );
    }
}

#[test]
fn sliding_puck_rolls_back_bit_identically_through_sliding_and_stopping() {
    // v0 = 2 m/s, μ = 0.3: slides until t = v0/(μ g) = 0.68 s, then sticks.
    let b = built("sliding_puck.toml", &[]);
    let seen = check_rollback(&b, 300, 700);
    assert_eq!(seen, [1, 2], "sliding then sticking");
}
