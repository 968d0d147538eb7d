//! The two phases of an instant (`Simulation::reach`, `Simulation::process`;
//! `ControlLoop::reach`, `ControlLoop::process`): reaching an impact stops
//! at its left limit (analytic time and incoming velocity), processing
//! applies the impact law (v⁺ = −e v⁻); reaching a sampling instant leaves
//! the sensor and the controller as they were until processing. A state
//! saved between the phases is restored there (in memory and through
//! bytes) and the rest of the run repeats bit for bit; the oracle is the
//! analytic ball, the exact solution of a scalar loop, and the
//! uninterrupted run.

mod common;

mod gain_law;

use gain_law::Gain;
use nalgebra::{dmatrix, dvector};
use nonsmooth::control::*;
use nonsmooth::modelling::dynamical_system::FirstOrderLinear;
use nonsmooth::modelling::{InteractionId, ModelBuilder, SystemId};
use nonsmooth::simulation::{
    EventDriven, EventDrivenSettings, EventDrivenState, EventKind, SimulationError, StepOutcome,
    TransitionKind,
};

const G: f64 = 9.81;
const E: f64 = 0.9;

fn ball() -> (EventDriven, SystemId, InteractionId) {
    let (model, ball, floor) = common::bouncing_ball(1.0, E, 0.1);
    let sim = EventDriven::new(model, EventDrivenSettings::new(0.05, 3.0)).unwrap();
    (sim, ball, floor)
}

/// Steps (reach, process) until an instant with a nonsmooth event is
/// reached; returns with it pending.
fn reach_impact(sim: &mut EventDriven) -> f64 {
    loop {
        let StepOutcome::Advanced { t, .. } = sim.reach().unwrap() else {
            panic!("no impact before the end");
        };
        if sim
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::NonSmooth)
        {
            return t;
        }
        assert!(sim.process().unwrap(), "a reached instant is pending");
    }
}

/// q, v, y, ẏ, λ and the impulse at the current instant, as bits.
fn bits(sim: &EventDriven, s: SystemId, i: InteractionId) -> Vec<u64> {
    sim.q(s)
        .iter()
        .chain(sim.v(s))
        .chain(sim.y(i))
        .chain(sim.ydot(i))
        .chain(sim.lambda(i))
        .chain(sim.impulse(i))
        .map(|x| x.to_bits())
        .chain([sim.time().to_bits(), sim.last_transitions().len() as u64])
        .collect()
}

fn rest(sim: &mut EventDriven, s: SystemId, i: InteractionId) -> Vec<Vec<u64>> {
    let mut rows = Vec::new();
    while let StepOutcome::Advanced { .. } = sim.step().unwrap() {
        rows.push(bits(sim, s, i));
    }
    rows
}

#[test]
fn an_impact_is_reached_at_its_left_limit_and_applied_by_process() {
    let (mut sim, b, floor) = ball();
    let t = reach_impact(&mut sim);
    // The first impact: the centre falls 0.9 m, t₁ = √(2·0.9/g), v⁻ = −g t₁.
    let t1 = (2.0 * 0.9 / G).sqrt();
    assert!((t - t1).abs() <= 1e-12, "impact at {t}, analytic {t1}");
    assert!(sim.instant_pending());
    assert!(sim.last_transitions().is_empty(), "nothing applied yet");
    let v_minus = sim.v(b)[0];
    assert!((v_minus + G * t1).abs() <= 1e-12, "v- = {v_minus}");
    assert!(sim.y(floor)[0].abs() <= 1e-12);
    assert_eq!(sim.ydot(floor)[0], v_minus);
    assert_eq!(sim.lambda(floor)[0], 0.0);
    // Reaching again before processing is refused, and changes nothing.
    let left = bits(&sim, b, floor);
    assert!(matches!(
        sim.reach(),
        Err(SimulationError::InstantPending { .. })
    ));
    assert_eq!(bits(&sim, b, floor), left);
    let saved = sim.save_state();
    let bytes = saved.to_bytes();

    assert!(sim.process().unwrap());
    let v_plus = sim.v(b)[0];
    assert!(
        (v_plus + E * v_minus).abs() <= 1e-15 * v_minus.abs(),
        "v+ = {v_plus}, v- = {v_minus}"
    );
    let kinds: Vec<_> = sim.last_transitions().iter().map(|t| t.kind).collect();
    assert_eq!(kinds, [TransitionKind::Impact]);
    // The impulse m (1 + e) |v⁻| (m = 1).
    let p = sim.impulse(floor)[0];
    assert!(
        (p - (1.0 + E) * v_minus.abs()).abs() <= 1e-12,
        "impulse {p}"
    );
    assert!(!sim.instant_pending());
    // A second process finds nothing pending.
    let right = bits(&sim, b, floor);
    assert!(!sim.process().unwrap());
    assert_eq!(bits(&sim, b, floor), right);
    let after = rest(&mut sim, b, floor);
    assert!(after.len() > 10);

    // Back to the left limit, in memory and through bytes into a fresh
    // simulation: the same left limit, the same impact, the same rest.
    sim.restore_state(&saved).unwrap();
    let (mut fresh, _, _) = ball();
    fresh
        .restore_state(&EventDrivenState::from_bytes(&bytes).unwrap())
        .unwrap();
    for s in [&mut sim, &mut fresh] {
        assert!(s.instant_pending());
        assert_eq!(bits(s, b, floor), left);
        assert!(s.process().unwrap());
        assert_eq!(bits(s, b, floor), right);
        assert_eq!(rest(s, b, floor), after);
    }
}

/// ẋ = a x + b u, x₀ = 1, u = −k x sampled every T, event-driven.
fn sampled_loop(a: f64, b: f64, k: f64, period: f64) -> (ControlLoop, SystemId) {
    let mut mb = ModelBuilder::new();
    let plant = mb
        .add_system("plant", FirstOrderLinear::new(dvector![1.0], dmatrix![a]))
        .unwrap();
    let mut lb = ControlLoopBuilder::new(mb.build());
    let sensor = lb
        .add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing: Timing::periodic(period),
            },
        )
        .unwrap();
    lb.add_controller(
        "controller",
        Measurement::Sensor(sensor),
        Box::new(Gain(k)),
        ActuatorSpec {
            system: plant,
            input: InputMap::Matrix(dmatrix![b]),
            timing: Timing::periodic(period),
            u0: None,
        },
    )
    .unwrap();
    let mut s = EventDrivenSettings::new(0.05, 1.0);
    s.rtol = 1e-12;
    s.atol = 1e-14;
    (lb.build_event_driven(s).unwrap(), plant)
}

#[test]
fn a_sampling_instant_is_reached_before_the_loop_acts() {
    let (a, b, k, period) = (-1.0, 2.0, 1.5, 0.1);
    let (mut cl, plant) = sampled_loop(a, b, k, period);
    let sensor = cl.sensor_id("sensor").unwrap();
    let ctl = cl.controller_id("controller").unwrap();
    // t₀: the capture x₀ = 1 and u₀ = −k.
    cl.step().unwrap();
    assert_eq!(cl.controller_input(ctl), [-k]);
    // To the first sampling instant, left limit first.
    loop {
        let StepOutcome::Advanced { t, .. } = cl.reach().unwrap() else {
            panic!("ended");
        };
        if cl.acted() {
            assert!((t - period).abs() < 1e-15);
            break;
        }
        cl.process().unwrap();
    }
    assert!(cl.instant_pending());
    // The plant is at x(T) = e^{aT} + (e^{aT} − 1)/a · b u₀; the sensor
    // and the controller hold their values of t₀.
    let x_t = (a * period).exp() + ((a * period).exp() - 1.0) / a * b * (-k);
    let x = cl.plant().q(plant)[0];
    assert!((x - x_t).abs() <= 1e-10, "x(T) = {x}, exact {x_t}");
    assert_eq!(cl.sensor_output(sensor), [1.0]);
    assert_eq!(cl.controller_input(ctl), [-k]);
    assert_eq!(cl.plant().system_input(plant), [-k * b]);
    assert!(matches!(
        cl.reach(),
        Err(ControlError::Simulation(
            SimulationError::InstantPending { .. }
        ))
    ));
    let saved = cl.save_state().unwrap();
    let bytes = saved.to_bytes();

    assert!(cl.process().unwrap());
    assert_eq!(cl.sensor_output(sensor), [x]);
    assert_eq!(cl.controller_input(ctl), [-k * x]);
    assert!(!cl.process().unwrap(), "nothing left to process");
    let mut after = Vec::new();
    cl.run(|c| after.push(c.plant().q(plant)[0].to_bits()))
        .unwrap();

    // Restored at the left limit through bytes into a fresh loop: the same
    // values before and after processing, the same rest of the run.
    let (mut fresh, _) = sampled_loop(a, b, k, period);
    fresh
        .restore_state(&ControlLoopState::from_bytes(&bytes).unwrap())
        .unwrap();
    assert!(fresh.instant_pending());
    assert_eq!(fresh.controller_input(ctl), [-k]);
    assert_eq!(fresh.plant().q(plant)[0].to_bits(), x.to_bits());
    fresh.process().unwrap();
    assert_eq!(fresh.controller_input(ctl)[0].to_bits(), (-k * x).to_bits());
    let mut again = Vec::new();
    fresh
        .run(|c| again.push(c.plant().q(plant)[0].to_bits()))
        .unwrap();
    assert_eq!(again, after);
}
