//! The control loop skips the instants before the next pending tick of its
//! sensors and controllers (`ControlLoop::process` looks at an instant's
//! events only from that tick on). These tests check that no event of the
//! loop is missed that way: the instants at which the loop acts are those
//! its schedule gives (captures, deliveries, computations, applications,
//! counted in whole steps), a run whose every instant is looked at (a save
//! and restore after each step makes the loop look at the next instant's
//! events) gives the same trajectory to the bit, and a restore back in time
//! finds the loop's events of the replayed instants again.

mod gain_law;

use gain_law::Gain;
use nalgebra::{dmatrix, dvector};
use nonsmooth::control::*;
use nonsmooth::modelling::dynamical_system::FirstOrderLinear;
use nonsmooth::modelling::ModelBuilder;
use nonsmooth::simulation::{FirstOrderScheme, StepOutcome, TimeSteppingSettings};

const H: f64 = 1e-3;
const STEPS: i64 = 2000;
/// In steps of H: period 70, sensor offset 3 and delay 25, controller
/// offset 11 and delay 130 (longer than the period).
const PERIOD: i64 = 70;
const SENSOR: (i64, i64) = (3, 25);
const CONTROL: (i64, i64) = (11, 130);

/// ẋ = 0.5 x + u under a delayed sampled gain, on a zero-order-hold plant.
fn build() -> ControlLoop {
    let mut mb = ModelBuilder::new();
    let plant = mb
        .add_system("plant", FirstOrderLinear::new(dvector![1.0], dmatrix![0.5]))
        .unwrap();
    let mut lb = ControlLoopBuilder::new(mb.build());
    let secs = |steps: i64| steps as f64 * H;
    let sensor = lb
        .add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing: Timing::periodic(secs(PERIOD))
                    .with_offset(secs(SENSOR.0))
                    .with_delay(secs(SENSOR.1)),
            },
        )
        .unwrap();
    lb.add_controller(
        "controller",
        Measurement::Sensor(sensor),
        Box::new(Gain(3.0)),
        ActuatorSpec {
            system: plant,
            input: InputMap::Matrix(dmatrix![1.0]),
            timing: Timing::periodic(secs(PERIOD))
                .with_offset(secs(CONTROL.0))
                .with_delay(secs(CONTROL.1)),
            u0: None,
        },
    )
    .unwrap();
    let mut settings = TimeSteppingSettings::new(H, secs(STEPS));
    settings.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
    lb.build_time_stepping(settings).unwrap()
}

/// The instants (in steps) at which the schedule has an event of the loop:
/// a capture at s₀ + iT, its delivery d_s later, a computation at c₀ + kT,
/// its application d_a later.
fn scheduled(j: i64) -> bool {
    let on = |first: i64| j >= first && (j - first) % PERIOD == 0;
    on(SENSOR.0) || on(SENSOR.0 + SENSOR.1) || on(CONTROL.0) || on(CONTROL.0 + CONTROL.1)
}

/// Runs the loop, restoring a state just saved after every instant when
/// `look_everywhere`; returns x at every instant and the instants at which
/// the loop acted.
fn run(look_everywhere: bool) -> (Vec<u64>, Vec<i64>) {
    let mut cl = build();
    let plant = cl.plant().model().system_id("plant").unwrap();
    let (mut xs, mut acted) = (Vec::new(), Vec::new());
    let mut j = 0;
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        xs.push(cl.plant().q(plant)[0].to_bits());
        if cl.acted() {
            acted.push(j);
        }
        if look_everywhere {
            let state = cl.save_state().unwrap();
            cl.restore_state(&state).unwrap();
        }
        j += 1;
    }
    (xs, acted)
}

#[test]
fn the_loop_acts_at_the_instants_of_its_schedule() {
    let expected: Vec<i64> = (0..=STEPS).filter(|&j| scheduled(j)).collect();
    let (xs, acted) = run(false);
    assert_eq!(xs.len() as i64, STEPS + 1);
    assert_eq!(acted, expected);
    // The controller acted: the input it applies from its second
    // application on (the first computation, at step 11, came before any
    // delivered measurement and kept u = 0) is not zero.
    let cl = {
        let mut cl = build();
        for _ in 0..=CONTROL.0 + PERIOD + CONTROL.1 {
            cl.step().unwrap();
        }
        cl
    };
    let ctl = cl.controller_id("controller").unwrap();
    assert_ne!(cl.controller_input(ctl)[0], 0.0);
}

#[test]
fn looking_at_every_instant_changes_no_bit() {
    let (skipping, acted_skipping) = run(false);
    let (everywhere, acted_everywhere) = run(true);
    assert_eq!(acted_skipping, acted_everywhere);
    assert_eq!(skipping, everywhere);
}

#[test]
fn a_restore_back_in_time_finds_the_loop_events_again() {
    let (reference, _) = run(false);
    let mut cl = build();
    let plant = cl.plant().model().system_id("plant").unwrap();
    // Save at instant 100, run on to 900 (past many of the loop's
    // instants), go back to 100 and run to the end.
    for _ in 0..=100 {
        cl.step().unwrap();
    }
    let state = cl.save_state().unwrap();
    for _ in 0..800 {
        cl.step().unwrap();
    }
    cl.restore_state(&state).unwrap();
    let mut xs: Vec<u64> = reference[..=100].to_vec();
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        xs.push(cl.plant().q(plant)[0].to_bits());
    }
    assert_eq!(xs, reference);
}
