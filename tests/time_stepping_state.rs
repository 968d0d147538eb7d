//! Saving and restoring the complete state of a time-stepping simulation:
//! a rolled-back run repeats itself bit for bit, in memory and through
//! bytes, on linear, MLCP, relay, sparse and nonlinear models; states that
//! do not fit and damaged bytes are typed errors.

mod common;

use nalgebra::{dmatrix, dvector};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{
    ProblemFamily, StateError, StepOutcome, TimeStepping, TimeSteppingSettings, TimeSteppingState,
};

/// Every value a caller can read, as bits, after each of `steps` steps.
fn trace(sim: &mut TimeStepping, steps: usize) -> Vec<u64> {
    let model = std::sync::Arc::clone(sim.model());
    let mut out = Vec::new();
    for _ in 0..steps {
        match sim.step().unwrap() {
            StepOutcome::Finished => break,
            StepOutcome::Advanced { tick, t } => {
                out.push(tick as u64);
                out.push(t.to_bits());
            }
        }
        out.push(sim.is_output_instant() as u64);
        for k in 0..model.systems().len() {
            let s = SystemId(k);
            for x in sim.q(s).iter().chain(sim.v(s)) {
                out.push(x.to_bits());
            }
        }
        for k in 0..model.interactions().len() {
            let i = InteractionId(k);
            for x in sim.y(i).iter().chain(sim.ydot(i)).chain(sim.lambda(i)) {
                out.push(x.to_bits());
            }
            out.push(sim.is_active(i) as u64);
            out.extend(sim.contact_status(i).iter().map(|x| x.to_bits()));
        }
        let st = sim.statistics();
        out.extend([
            st.steps,
            st.solves,
            st.solver_iterations,
            st.newton_iterations,
        ]);
    }
    out
}

/// Runs `before` steps, saves, runs `after` steps; restores (in memory, and
/// from bytes into a fresh simulation) and checks the same `after` steps.
fn check_rollback(make: impl Fn() -> TimeStepping, before: usize, after: usize) {
    let mut sim = make();
    trace(&mut sim, before);
    let saved = sim.save_state();
    let mut into = make().save_state();
    sim.save_state_into(&mut into);
    assert_eq!(into, saved, "saving into an existing state");
    let bytes = saved.to_bytes();
    let first = trace(&mut sim, after);
    assert!(!first.is_empty());
    sim.restore_state(&saved).unwrap();
    assert_eq!(
        sim.save_state(),
        saved,
        "restored state equals the saved one"
    );
    let again = trace(&mut sim, after);
    assert_eq!(first, again, "rolled back in memory");

    let read = TimeSteppingState::from_bytes(&bytes).unwrap();
    assert_eq!(read, saved, "bytes round trip");
    let mut fresh = make();
    fresh.restore_state(&read).unwrap();
    assert_eq!(fresh.time(), read.time());
    let from_bytes = trace(&mut fresh, after);
    assert_eq!(
        first, from_bytes,
        "restored from bytes into a new simulation"
    );
}

#[test]
fn bouncing_ball_rolls_back_bit_identically_across_impacts() {
    let make = || {
        let (model, ball, _) = common::bouncing_ball(1.0, 0.9, 0.1);
        let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(0.005, 10.0)).unwrap();
        sim.set_system_input(ball, &[0.5, 0.0, 0.0]).unwrap();
        sim
    };
    // Impacts happen around t = 0.4 s: roll back just before, and later.
    check_rollback(make, 80, 40);
    check_rollback(make, 500, 300);
}

#[test]
fn held_inputs_are_part_of_the_state() {
    let (model, ball, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(0.005, 10.0)).unwrap();
    sim.set_system_input(ball, &[2.0, 0.0, 0.0]).unwrap();
    let saved = sim.save_state();
    let first = trace(&mut sim, 50);
    sim.set_system_input(ball, &[-3.0, 0.0, 0.0]).unwrap();
    sim.restore_state(&saved).unwrap();
    assert_eq!(sim.system_input(ball), &[2.0, 0.0, 0.0]);
    assert_eq!(trace(&mut sim, 50), first);
}

#[test]
fn lcp_mlcp_and_relay_problems_roll_back() {
    // The diode bridge: an LCP per step.
    let bridge = || {
        let (model, _, _) = common::diode_bridge();
        let sim = TimeStepping::new(model, TimeSteppingSettings::new(1e-6, 5e-3)).unwrap();
        assert_eq!(sim.problem_family(), ProblemFamily::Lcp);
        sim
    };
    check_rollback(bridge, 700, 400);
    // Two masses joined by a bar (equality law) hitting the ground: an MLCP
    // per step, with the bar's equality row alone until the first impact
    // (t ≈ 0.213 s, step 213) and with the contacts' rows after. Saved
    // before the impact, the rolled-back steps cross it and the mixed steps
    // that follow (mass 1 hits at 0.213 s and 0.524 s).
    let bar = || {
        let (model, _, _, _) = common::two_masses_bar(0.5, 0.5);
        let sim = TimeStepping::new(model, TimeSteppingSettings::new(1e-3, 1.5)).unwrap();
        assert_eq!(sim.problem_family(), ProblemFamily::Mlcp);
        sim
    };
    check_rollback(bar, 200, 400);
    check_rollback(bar, 520, 300);
    let relay = || {
        let (model, _, _) = common::relay(1.0, 0.5, [1.0, -1.0]);
        let sim = TimeStepping::new(model, TimeSteppingSettings::new(1e-3, 5.0)).unwrap();
        assert_eq!(sim.problem_family(), ProblemFamily::Relay);
        sim
    };
    check_rollback(relay, 900, 600);
}

#[test]
fn sparse_column_of_beads_rolls_back() {
    check_rollback(
        || {
            let (model, _, _) = common::beads_column(100, 0.1, 0.0, 0.5);
            TimeStepping::new(model, TimeSteppingSettings::new(1e-3, 2.0)).unwrap()
        },
        200,
        100,
    );
}

#[test]
fn nonlinear_models_roll_back() {
    let pendulum = || {
        let mut b = ModelBuilder::new();
        let mut ds =
            LagrangianNonlinear::new(dvector![1.0], dvector![0.0], Mass::Constant(dmatrix![1.0]));
        ds.fint = Some(std::sync::Arc::new(
            |_t: f64, q: &[f64], _v: &[f64], out: &mut [f64]| out[0] = 9.81 * q[0].sin(),
        ));
        let p = b.add_system("pendulum", ds).unwrap();
        b.add_interaction(
            "stop",
            &[p],
            LagrangianScleronomous {
                output_dim: 1,
                h: std::sync::Arc::new(|q: &[f64], y: &mut [f64]| y[0] = q[0] + 0.5),
                jacobian: None,
            },
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution: 0.5,
            },
        )
        .unwrap();
        TimeStepping::new(b.build(), TimeSteppingSettings::new(1e-3, 5.0)).unwrap()
    };
    check_rollback(pendulum, 600, 500);
}

#[test]
fn states_that_do_not_fit_are_refused_and_leave_the_simulation_unchanged() {
    let (ball_model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut ball = TimeStepping::new(ball_model, TimeSteppingSettings::new(0.005, 1.0)).unwrap();
    let (bridge_model, _, _) = common::diode_bridge();
    let bridge = TimeStepping::new(bridge_model, TimeSteppingSettings::new(0.005, 1.0)).unwrap();
    let before = ball.save_state();
    let err = ball.restore_state(&bridge.save_state()).unwrap_err();
    assert!(matches!(err, StateError::Mismatch(_)), "{err}");
    assert_eq!(ball.save_state(), before);

    // Another step: another time base.
    let (m2, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let other = TimeStepping::new(m2, TimeSteppingSettings::new(0.001, 1.0)).unwrap();
    let err = ball.restore_state(&other.save_state()).unwrap_err();
    assert!(err.to_string().contains("time base"), "{err}");
}

#[test]
fn damaged_bytes_are_errors_not_panics() {
    let (model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(0.005, 1.0)).unwrap();
    trace(&mut sim, 100);
    let bytes = sim.save_state().to_bytes();
    for n in 0..bytes.len() {
        assert!(TimeSteppingState::from_bytes(&bytes[..n]).is_err(), "{n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(TimeSteppingState::from_bytes(&longer).is_err());
    // Flipping any byte either fails or gives a state (never a panic).
    for k in 0..bytes.len() {
        let mut b = bytes.clone();
        b[k] ^= 0xA5;
        if let Ok(s) = TimeSteppingState::from_bytes(&b) {
            let _ = sim.restore_state(&s);
        }
    }
    assert!(matches!(
        TimeSteppingState::from_bytes(b"NSTX"),
        Err(StateError::Corrupt(_))
    ));
}

#[test]
fn frictional_contacts_roll_back_bit_identically_through_stick_and_slip() {
    // A block thrown up a slope (μ > tan α: it stops and sticks) and a ball
    // dropped with a tangential velocity onto a rough floor (bounces, slides,
    // then rolls without bouncing): 2D frictional contacts.
    let make = || {
        let alpha = 0.3f64;
        let mut b = ModelBuilder::new();
        let block = b
            .add_system(
                "block",
                LagrangianLinearTi::new(
                    dvector![0.0, 0.0],
                    dvector![1.0, 0.0],
                    nalgebra::DMatrix::identity(2, 2),
                )
                .with_fext(TimeVector::Constant(dvector![
                    -9.81 * alpha.sin(),
                    -9.81 * alpha.cos()
                ])),
            )
            .unwrap();
        let ball = b
            .add_system(
                "ball",
                LagrangianLinearTi::new(
                    dvector![0.0, 0.1],
                    dvector![2.0, 0.0],
                    nalgebra::DMatrix::identity(2, 2),
                )
                .with_fext(TimeVector::Constant(dvector![0.0, -9.81])),
            )
            .unwrap();
        for (name, s, e, mu) in [("slope", block, 0.0, 0.5), ("floor", ball, 0.6, 0.2)] {
            b.add_interaction(
                name,
                &[s],
                LagrangianLinearTiR::new(dmatrix![0.0, 1.0; 1.0, 0.0]),
                NonsmoothLaw::NewtonImpactFriction {
                    dimension: 2,
                    restitution: e,
                    tangential_restitution: 0.0,
                    friction: mu,
                },
            )
            .unwrap();
        }
        TimeStepping::new(b.build(), TimeSteppingSettings::new(1e-3, 3.0)).unwrap()
    };
    check_rollback(make, 100, 300);
    check_rollback(make, 140, 1000);
}
