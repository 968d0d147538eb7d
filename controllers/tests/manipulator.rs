//! The switching tracking control of the two-link arm
//! (`examples/manipulator.toml`, law `manipulator_switching`): the phase
//! sequence of every cycle, the constraint in the constrained phase, the
//! tracking in free motion, and the Newton loop of the nonlinear plant.

use std::path::Path;
use std::sync::Arc;

use nonsmooth::modelling::models::TwoLinkArm;
use nonsmooth::simulation::StepOutcome;
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::{BuiltScenario, Scenario};

fn built(sets: &[(&str, f64)]) -> BuiltScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/manipulator.toml");
    let mut s = Scenario::from_file(path).unwrap();
    for (k, v) in sets {
        s.set_parameter(k, *v).unwrap();
    }
    s.build_with(Arc::new(Catalog)).unwrap()
}

/// Per step: (t, phase, tip (x, y), ẏ of the tip, impulse, reference).
struct Trace {
    t: Vec<f64>,
    phase: Vec<u8>,
    tip: Vec<[f64; 2]>,
    ydot: Vec<f64>,
    impulse: Vec<f64>,
    reference: Vec<[f64; 2]>,
    newton_per_step: f64,
}

fn trace(sets: &[(&str, f64)]) -> Trace {
    let built = built(sets);
    let mut cl = built.control_loop().unwrap();
    let model = cl.plant().model().clone();
    let arm_id = model.system_id("arm").unwrap();
    let ground = model.interaction_id("ground").unwrap();
    let ctl = cl.controller_id("controller").unwrap();
    let arm = TwoLinkArm::study();
    let mut tr = Trace {
        t: vec![],
        phase: vec![],
        tip: vec![],
        ydot: vec![],
        impulse: vec![],
        reference: vec![],
        newton_per_step: 0.0,
    };
    loop {
        match cl.step().unwrap() {
            StepOutcome::Finished => break,
            StepOutcome::Advanced { .. } => {}
        }
        let p = cl.plant();
        let (q, v) = (p.q(arm_id), p.v(arm_id));
        let j = arm.tip_jacobian(q);
        tr.t.push(cl.time());
        tr.phase
            .push(cl.controller_signal(ctl, "phase").unwrap()[0] as u8);
        tr.tip.push(arm.tip(q));
        tr.ydot.push(j[1][0] * v[0] + j[1][1] * v[1]);
        tr.impulse.push(p.lambda(ground)[0]);
        let r = cl.controller_signal(ctl, "reference").unwrap();
        tr.reference.push([r[0], r[1]]);
    }
    let st = cl.plant().statistics();
    tr.newton_per_step = st.newton_iterations as f64 / st.steps as f64;
    tr
}

#[test]
fn every_cycle_goes_free_transition_constrained_free() {
    let tr = trace(&[("cycles", 3.0)]);
    // Runs of equal phase, with their start times.
    let mut runs: Vec<(u8, f64)> = vec![];
    for (k, &ph) in tr.phase.iter().enumerate() {
        if runs.last().map(|r| r.0) != Some(ph) {
            runs.push((ph, tr.t[k]));
        }
    }
    let phases: Vec<u8> = runs.iter().map(|r| r.0).collect();
    assert_eq!(phases, [0, 1, 2, 0, 1, 2, 0, 1, 2, 0], "{runs:?}");
    for c in 0..3 {
        let start = 5.0 * c as f64;
        let (tr_start, con_start, free_again) =
            (runs[3 * c + 1].1, runs[3 * c + 2].1, runs[3 * c + 3].1);
        // The transition starts `lead` = 0.1 s before the circle leaves the
        // domain, ends within the cycle, and the arm lifts off at its end.
        assert!((tr_start - (start + 2.4)).abs() < 1e-9, "{runs:?}");
        assert!(
            con_start > tr_start + 0.1 && con_start < start + 4.0,
            "{runs:?}"
        );
        assert!((free_again - (start + 5.0)).abs() < 1e-9, "{runs:?}");
    }
    // Newton on the arm's nonlinear dynamics: a few iterations per step.
    assert!(
        (1.0..=4.0).contains(&tr.newton_per_step),
        "{} Newton iterations per step",
        tr.newton_per_step
    );
}

#[test]
fn the_constrained_phase_holds_the_tip_on_the_ground_at_velocity_level() {
    let h = 1e-4;
    let tr = trace(&[("cycles", 1.2), ("step", h)]);
    let start = tr.phase.iter().position(|&p| p == 2).unwrap();
    let end = start + tr.phase[start..].iter().position(|&p| p != 2).unwrap();
    let mut worst_ydot = 0.0f64;
    let mut worst_gap = 0.0f64;
    let mut worst_force = 0.0f64;
    let mut worst_track = 0.0f64;
    // Skip the first 10 ms: the last micro-impacts of the accumulation die out.
    for k in start + 100..end {
        worst_ydot = worst_ydot.max(tr.ydot[k].abs());
        worst_gap = worst_gap.max(tr.tip[k][1].abs());
        // The impulse over a step is the pressing force 5 N times h.
        worst_force = worst_force.max((tr.impulse[k] / h - 5.0).abs());
        worst_track = worst_track.max((tr.tip[k][0] - tr.reference[k][0]).abs());
    }
    assert!(worst_ydot < 1e-9, "ẏ up to {worst_ydot:e} m/s");
    assert!(worst_gap < 1e-7, "|y| up to {worst_gap:e} m");
    assert!(worst_force < 0.05, "contact force off by {worst_force} N");
    assert!(worst_track < 2e-3, "x tracking error {worst_track:e} m");
    // After lift-off the contact is open.
    assert!(tr.impulse[end + 100..end + 1000].iter().all(|&p| p == 0.0));
}

#[test]
fn free_motion_tracks_the_circle() {
    let tr = trace(&[("cycles", 2.0), ("step", 1e-3)]);
    // Second cycle, t ∈ [6, 7.3]: well after lift-off, before the transition.
    let mut worst = 0.0f64;
    for k in 0..tr.t.len() {
        if tr.t[k] >= 6.0 && tr.t[k] <= 7.3 {
            assert_eq!(tr.phase[k], 0);
            let e = ((tr.tip[k][0] - tr.reference[k][0]).powi(2)
                + (tr.tip[k][1] - tr.reference[k][1]).powi(2))
            .sqrt();
            worst = worst.max(e);
        }
    }
    assert!(worst < 1e-4, "tracking error {worst:e} m");
}
