//! Saving and restoring the complete state of an event-driven simulation:
//! a rolled-back run repeats itself bit for bit — impact times, states,
//! multipliers, transitions, counters — in memory and through bytes into a
//! fresh simulation, with either integration method, on impacts and
//! accumulation (the bouncing ball), complementarity mode switches (the
//! diode bridge), a relay reaching its sliding mode, and a mass matrix
//! that depends on q. The oracle is the uninterrupted run itself. States
//! that do not fit and damaged bytes are typed errors.

mod common;

use std::sync::Arc;

use nonsmooth::modelling::*;
use nonsmooth::simulation::{
    EventDriven, EventDrivenSettings, EventDrivenState, EventKind, OdeMethod, Simulation,
    SimulationState, StateError, StepOutcome, TimeStepping, TimeSteppingSettings, TransitionKind,
};

/// Every value a caller can read after one instant, as bits.
fn instant_bits(sim: &EventDriven, tick: i64, t: f64) -> Vec<u64> {
    let model = Arc::clone(sim.model());
    let mut out = vec![tick as u64, t.to_bits(), sim.is_output_instant() as u64];
    out.extend(
        sim.last_events()
            .iter()
            .map(|e| ((e.tick as u64) << 8) ^ (e.source.0 as u64) ^ ((e.kind as u64) << 4)),
    );
    for tr in sim.last_transitions() {
        out.extend([tr.kind as u64, tr.interaction.0 as u64, tr.row as u64]);
    }
    for k in 0..model.systems().len() {
        let s = SystemId(k);
        out.extend(sim.q(s).iter().chain(sim.v(s)).map(|x| x.to_bits()));
    }
    for k in 0..model.interactions().len() {
        let i = InteractionId(k);
        out.extend(
            sim.y(i)
                .iter()
                .chain(sim.ydot(i))
                .chain(sim.lambda(i))
                .chain(sim.impulse(i))
                .map(|x| x.to_bits()),
        );
        out.push(sim.is_active(i) as u64);
    }
    let st = sim.statistics();
    let ev = sim.event_statistics();
    out.extend([
        st.steps,
        st.solves,
        st.solver_iterations,
        st.newton_iterations,
        ev.integrator.rejected,
        ev.rhs_evaluations,
        ev.events,
        ev.impacts,
        ev.accumulations,
        ev.take_offs,
        ev.mode_switches,
        ev.root_iterations,
    ]);
    out
}

/// The instants to the end, each as bits.
fn run_to_end(sim: &mut EventDriven) -> Vec<Vec<u64>> {
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { tick, t } = sim.step().unwrap() {
        rows.push(instant_bits(sim, tick, t));
    }
    rows
}

/// For each save point k (a number of instants): runs k instants, saves,
/// and checks that the rest of the run equals the uninterrupted one bit for
/// bit — continued directly, after running to the end and restoring, and
/// from the state's bytes in a fresh simulation. Returns the number of
/// instants of the whole run.
fn check_rollback(make: impl Fn() -> EventDriven, save_points: &[usize]) -> usize {
    let full = run_to_end(&mut make());
    for &k in save_points {
        assert!(k < full.len(), "save point {k} of {}", full.len());
        let mut sim = make();
        for _ in 0..k {
            sim.step().unwrap();
        }
        let saved = sim.save_state();
        assert_eq!(run_to_end(&mut sim), full[k..], "continued from {k}");
        // The run went on to the end (another mode, another integrator
        // step): roll it back.
        sim.restore_state(&saved).unwrap();
        assert_eq!(sim.save_state(), saved, "restored state at {k}");
        assert_eq!(run_to_end(&mut sim), full[k..], "restored at {k}");
        // Through bytes, into a simulation that never ran.
        let bytes = saved.to_bytes();
        assert_eq!(&bytes[..4], b"NSED");
        let read = EventDrivenState::from_bytes(&bytes).unwrap();
        assert_eq!(read, saved);
        let mut fresh = make();
        fresh.restore_state(&read).unwrap();
        assert_eq!(run_to_end(&mut fresh), full[k..], "from bytes at {k}");
        // Through the driver trait and its byte dispatch.
        let mut boxed: Box<dyn Simulation> = Box::new(make());
        let any = SimulationState::from_bytes(&bytes).unwrap();
        boxed.restore_state(&any).unwrap();
        let mut n = 0;
        while let StepOutcome::Advanced { .. } = boxed.step().unwrap() {
            n += 1;
        }
        assert_eq!(n, full.len() - k);
    }
    full.len()
}

/// Indices (instants counted from 1, so a save after k instants) of the
/// instants that hold a transition of the given kind, and of the instants
/// just before them.
fn around(make: impl Fn() -> EventDriven, kind: TransitionKind, max: usize) -> Vec<usize> {
    let mut sim = make();
    let mut k = 0;
    let mut out = Vec::new();
    while let StepOutcome::Advanced { .. } = sim.step().unwrap() {
        k += 1;
        if sim.last_transitions().iter().any(|tr| tr.kind == kind) {
            out.extend([k - 1, k]);
            if out.len() >= 2 * max {
                break;
            }
        }
    }
    out
}

fn ball(method: OdeMethod) -> EventDriven {
    let (model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut s = EventDrivenSettings::new(0.05, 12.0);
    s.method = method;
    EventDriven::new(model, s).unwrap()
}

#[test]
fn bouncing_ball_rolls_back_across_impacts_and_the_accumulation() {
    for method in [OdeMethod::DormandPrince, OdeMethod::TrBdf2] {
        let make = || ball(method);
        let mut points = around(make, TransitionKind::Impact, 4);
        // Before and at the accumulation into a persistent contact.
        points.extend(around(make, TransitionKind::Contact, 1));
        points.extend([1, 7, 100]);
        assert!(points.len() >= 13, "{points:?}");
        let n = check_rollback(make, &points);
        assert!(n > 240, "{n} instants");
    }
}

#[test]
fn diode_bridge_rolls_back_across_mode_switches() {
    let make = || {
        let (model, _, _) = common::diode_bridge();
        EventDriven::new(model, EventDrivenSettings::new(1e-4, 2e-3)).unwrap()
    };
    let mut points = around(make, TransitionKind::ModeSwitch, 3);
    points.push(3);
    assert!(points.len() >= 7, "{points:?}");
    check_rollback(make, &points);
}

#[test]
fn relay_rolls_back_before_and_in_its_sliding_mode() {
    let make = || {
        let (model, _, _) = common::relay(1.0, 1.0, [0.0, 2.21]);
        EventDriven::new(model, EventDrivenSettings::new(0.05, 4.0)).unwrap()
    };
    let mut points = around(make, TransitionKind::ModeSwitch, 1);
    points.extend([5, 60]);
    check_rollback(make, &points);
}

#[test]
fn varying_mass_rolls_back() {
    let make = || {
        let mut b = ModelBuilder::new();
        let mut ds = LagrangianNonlinear::new(
            nalgebra::dvector![1.0],
            nalgebra::dvector![0.0],
            Mass::Function(Arc::new(|q: &[f64], m: &mut nalgebra::DMatrix<f64>| {
                m[(0, 0)] = 1.0 + q[0] * q[0]
            })),
        );
        ds.fgyr = Some(Arc::new(
            |_t: f64, q: &[f64], v: &[f64], out: &mut [f64]| out[0] = q[0] * v[0] * v[0],
        ));
        ds.fext = Some(TimeVector::Constant(nalgebra::dvector![-9.81]));
        let body = b.add_system("body", ds).unwrap();
        b.add_interaction(
            "floor",
            &[body],
            LagrangianLinearTiR::new(nalgebra::dmatrix![1.0]),
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution: 0.5,
            },
        )
        .unwrap();
        EventDriven::new(b.build(), EventDrivenSettings::new(0.05, 3.0)).unwrap()
    };
    let mut points = around(make, TransitionKind::Impact, 2);
    points.push(10);
    check_rollback(make, &points);
}

#[test]
fn registered_sources_and_held_inputs_are_part_of_the_state() {
    // A sampling source the integrator stops at, and an input changed at
    // each of its instants (as a controller does): the schedule and the
    // held input must come back with the state.
    let make = || {
        let (model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
        let mut sim = EventDriven::with_times(
            model,
            EventDrivenSettings::new(0.05, 6.0),
            &[("period", 0.03)],
        )
        .unwrap();
        let (_, base) = sim.tick();
        let p = base.ticks("period", 0.03).unwrap();
        sim.add_event_source(EventKind::Actuator, 0, Some(p), "push")
            .unwrap();
        sim
    };
    let drive = |sim: &mut EventDriven| -> Vec<Vec<u64>> {
        let mut rows = Vec::new();
        while let StepOutcome::Advanced { tick, t } = sim.step().unwrap() {
            if sim
                .last_events()
                .iter()
                .any(|e| e.kind == EventKind::Actuator)
            {
                // A force that depends on the state: 2 sin(10 t) − v.
                let g = 2.0 * (10.0 * t).sin() - sim.v(SystemId(0))[0];
                sim.set_system_input(SystemId(0), &[g, 0.0, 0.0]).unwrap();
            }
            rows.push(instant_bits(sim, tick, t));
        }
        rows
    };
    let full = drive(&mut make());
    for k in [1, 33, 120, 250] {
        let mut sim = make();
        assert_eq!(drive_n(&mut sim, k), k);
        let saved = sim.save_state();
        assert_eq!(drive(&mut sim), full[k..]);
        sim.restore_state(&saved).unwrap();
        assert_eq!(drive(&mut sim), full[k..], "restored at {k}");
        let mut fresh = make();
        fresh
            .restore_state(&EventDrivenState::from_bytes(&saved.to_bytes()).unwrap())
            .unwrap();
        assert_eq!(drive(&mut fresh), full[k..], "from bytes at {k}");
    }

    fn drive_n(sim: &mut EventDriven, k: usize) -> usize {
        let mut n = 0;
        while n < k {
            let StepOutcome::Advanced { t, .. } = sim.step().unwrap() else {
                break;
            };
            if sim
                .last_events()
                .iter()
                .any(|e| e.kind == EventKind::Actuator)
            {
                let g = 2.0 * (10.0 * t).sin() - sim.v(SystemId(0))[0];
                sim.set_system_input(SystemId(0), &[g, 0.0, 0.0]).unwrap();
            }
            n += 1;
        }
        n
    }
}

#[test]
fn states_that_do_not_fit_and_damaged_bytes_are_errors() {
    let mut sim = ball(OdeMethod::DormandPrince);
    for _ in 0..30 {
        sim.step().unwrap();
    }
    let saved = sim.save_state();
    let t_before = sim.time();

    // Another method, another model, another strategy: mismatches, and the
    // simulation is unchanged.
    let mut other = ball(OdeMethod::TrBdf2);
    let before = other.save_state();
    assert!(matches!(
        other.restore_state(&saved),
        Err(StateError::Mismatch(_))
    ));
    assert_eq!(other.save_state(), before);
    let (bridge, _, _) = common::diode_bridge();
    let mut bridge = EventDriven::new(bridge, EventDrivenSettings::new(1e-4, 1e-3)).unwrap();
    assert!(matches!(
        bridge.restore_state(&saved),
        Err(StateError::Mismatch(_))
    ));
    let (model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut ts: Box<dyn Simulation> =
        Box::new(TimeStepping::new(model, TimeSteppingSettings::new(0.05, 1.0)).unwrap());
    assert!(matches!(
        ts.restore_state(&SimulationState::EventDriven(saved.clone())),
        Err(StateError::Mismatch(_))
    ));

    // Truncated, extended or flipped bytes: an error or a state, never a
    // panic; truncations and extensions always an error.
    let bytes = saved.to_bytes();
    for n in 0..bytes.len() {
        assert!(EventDrivenState::from_bytes(&bytes[..n]).is_err(), "{n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(EventDrivenState::from_bytes(&longer).is_err());
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        if let Ok(s) = EventDrivenState::from_bytes(&b) {
            // A state that reads may still not fit; restoring must not panic.
            let mut sim = ball(OdeMethod::DormandPrince);
            let _ = sim.restore_state(&s);
        }
    }
    assert!(matches!(
        EventDrivenState::from_bytes(b"NSTS\x02\0\0\0"),
        Err(StateError::Corrupt(_))
    ));
    assert_eq!(sim.time(), t_before);
}
