//! The control loop's scheduling: delays of any length shift the response
//! exactly as a hand-written recursion of the delayed zero-order-hold loop
//! says; several actuators on one plant add; bad timings are refused.

mod gain_law;

use gain_law::Gain;
use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth::control::*;
use nonsmooth::modelling::dynamical_system::FirstOrderLinear;
use nonsmooth::modelling::{ModelBuilder, SystemId};
use nonsmooth::simulation::{
    EventKind, FirstOrderScheme, SimulationError, StepOutcome, TimeSteppingSettings,
};

/// u = constant, no measurement.
struct Constant(Vec<f64>);
impl Controller for Constant {
    fn law(&self) -> &'static str {
        "constant"
    }
    fn initialize(&mut self, s: &ControllerSetup) -> Result<(), ControlError> {
        assert_eq!(s.input_dim, self.0.len());
        Ok(())
    }
    fn compute(&mut self, _t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u.copy_from_slice(&self.0);
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

fn scalar_plant(a: f64, x0: f64) -> (nonsmooth::modelling::Model, SystemId) {
    let mut mb = ModelBuilder::new();
    let s = mb
        .add_system("plant", FirstOrderLinear::new(dvector![x0], dmatrix![a]))
        .unwrap();
    (mb.build(), s)
}

fn zoh_settings(h: f64, t_end: f64) -> TimeSteppingSettings {
    let mut s = TimeSteppingSettings::new(h, t_end);
    s.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
    s
}

struct Delays {
    period: f64,
    sensor_offset: f64,
    sensor_delay: f64,
    control_offset: f64,
    actuator_delay: f64,
}

/// Runs ẋ = a x + b u, u = −k y(sampled, delayed), and returns x at every
/// instant of the integration grid, t₀ included.
fn closed_loop(a: f64, b: f64, k: f64, h: f64, t_end: f64, d: &Delays) -> Vec<f64> {
    let (model, plant) = scalar_plant(a, 1.0);
    let mut lb = ControlLoopBuilder::new(model);
    let sensor = lb
        .add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing: Timing::periodic(d.period)
                    .with_offset(d.sensor_offset)
                    .with_delay(d.sensor_delay),
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
            timing: Timing::periodic(d.period)
                .with_offset(d.control_offset)
                .with_delay(d.actuator_delay),
            u0: None,
        },
    )
    .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(h, t_end)).unwrap();
    let mut xs = Vec::new();
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        xs.push(cl.plant().q(plant)[0]);
    }
    xs
}

/// The same loop written as a recursion on the integration grid, in integer
/// step counts: measurement i is x(s₀ + iT), available from s₀ + iT + d_s;
/// input k is computed at c₀ + kT from the latest available measurement (0
/// before the first) and applied from c₀ + kT + d_a; the plant is the exact
/// discretisation x_{j+1} = e^{ah} x_j + (e^{ah} − 1)/a · b u(jh).
fn recursion(a: f64, b: f64, k: f64, h: f64, steps: usize, d: &Delays) -> Vec<f64> {
    let n = |secs: f64| (secs / h).round() as i64;
    let (p, s0, ds, c0, da) = (
        n(d.period),
        n(d.sensor_offset),
        n(d.sensor_delay),
        n(d.control_offset),
        n(d.actuator_delay),
    );
    let phi = (a * h).exp();
    let gamma = (phi - 1.0) / a * b;
    let mut x = vec![1.0];
    let mut measurements: Vec<f64> = Vec::new();
    let mut inputs: Vec<f64> = Vec::new();
    let mut u_held = 0.0;
    for j in 0..=steps as i64 {
        // Events at step j (time jh), in order: sensor, actuator.
        if j >= s0 && (j - s0) % p == 0 {
            measurements.push(x[j as usize]);
        }
        if j >= c0 && (j - c0) % p == 0 {
            // Latest measurement i with s0 + i p + ds ≤ j.
            let avail = j - s0 - ds;
            let u = if avail >= 0 {
                -k * measurements[(avail / p) as usize]
            } else {
                inputs.last().copied().unwrap_or(0.0)
            };
            inputs.push(u);
        }
        if j >= c0 + da && (j - c0 - da) % p == 0 {
            u_held = inputs[((j - c0 - da) / p) as usize];
        }
        if (j as usize) < steps {
            x.push(phi * x[j as usize] + gamma * u_held);
        }
    }
    x
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn delays_shift_the_response_as_the_delayed_zoh_recursion_says() {
    let (a, b, k, h, t_end) = (0.5, 1.0, 3.0, 1e-3, 3.0);
    let steps = 3000;
    let cases = [
        (0.0, 0.0, 0.0, 0.0),
        (0.02, 0.0, 0.0, 0.0),    // sensor delay shorter than the period
        (0.0, 0.03, 0.0, 0.0),    // actuator delay
        (0.25, 0.0, 0.0, 0.0),    // sensor delay of 2.5 periods
        (0.0, 0.37, 0.0, 0.0),    // actuator delay of 3.7 periods
        (0.13, 0.21, 0.004, 0.0), // both, and a sensor offset
        (0.1, 0.1, 0.0, 0.05),    // delays equal to the period, controller offset
    ];
    let mut responses = Vec::new();
    for (sd, ad, so, co) in cases {
        let d = Delays {
            period: 0.1,
            sensor_offset: so,
            sensor_delay: sd,
            control_offset: co,
            actuator_delay: ad,
        };
        let sim = closed_loop(a, b, k, h, t_end, &d);
        let rec = recursion(a, b, k, h, steps, &d);
        let err = max_diff(&sim, &rec);
        assert!(
            err <= 1e-12 * (1.0 + rec.iter().fold(0.0f64, |m, x| m.max(x.abs()))),
            "delays (sensor {sd}, actuator {ad}, offsets {so}, {co}): max difference {err:.3e}"
        );
        responses.push(sim);
    }
    // The delays change the response: the test would not pass by accident.
    assert!(max_diff(&responses[0], &responses[3]) > 1e-2);
    assert!(max_diff(&responses[0], &responses[4]) > 1e-2);
}

#[test]
fn a_delay_of_whole_periods_is_a_shift_of_the_sampled_recursion() {
    // x_{k+1} = Φ x_k + Γ u_{k−m}, u_k = −K x_k, Φ = e^{aT}, Γ = (Φ − 1)/a b:
    // with the actuator delayed by m periods the loop is this recursion.
    let (a, b, k, t) = (-0.2, 2.0, 1.5, 0.05);
    let m = 3;
    let d = Delays {
        period: t,
        sensor_offset: 0.0,
        sensor_delay: 0.0,
        control_offset: 0.0,
        actuator_delay: m as f64 * t,
    };
    let h = 0.01;
    let sim = closed_loop(a, b, k, h, 4.0, &d);
    let phi = (a * t).exp();
    let gamma = (phi - 1.0) / a * b;
    let mut x = vec![1.0f64];
    let mut u = Vec::new();
    for kk in 0..80 {
        u.push(-k * x[kk]);
        let applied = if kk >= m { u[kk - m] } else { 0.0 };
        x.push(phi * x[kk] + gamma * applied);
    }
    for (kk, xk) in x.iter().enumerate().skip(1) {
        let j = kk * 5; // instant index of t = kT (index 0 is t₀)
        assert!(
            (sim[j] - xk).abs() <= 1e-12,
            "sample {kk}: {} vs {xk}",
            sim[j]
        );
    }
}

#[test]
fn inputs_of_two_actuators_on_one_plant_add() {
    // ẋ = B₁u₁ + B₂u₂ with constant inputs: x(t) = x₀ + t (B₁u₁ + B₂u₂),
    // whatever the periods and offsets, once both act.
    let mut mb = ModelBuilder::new();
    let plant = mb
        .add_system(
            "plant",
            FirstOrderLinear::new(dvector![1.0, -1.0], DMatrix::zeros(2, 2)),
        )
        .unwrap();
    let mut lb = ControlLoopBuilder::new(mb.build());
    let b1 = dmatrix![1.0; 0.5];
    let b2 = dmatrix![0.0, 1.0; 2.0, 0.0];
    for (name, b, u, period, offset) in [
        ("first", b1.clone(), vec![2.0], 0.1, 0.0),
        ("second", b2.clone(), vec![-1.0, 0.25], 0.07, 0.0),
    ] {
        lb.add_controller(
            name,
            Measurement::None,
            Box::new(Constant(u)),
            ActuatorSpec {
                system: plant,
                input: InputMap::Matrix(b),
                timing: Timing::periodic(period).with_offset(offset),
                u0: None,
            },
        )
        .unwrap();
    }
    let mut cl = lb.build_time_stepping(zoh_settings(0.01, 2.0)).unwrap();
    cl.run(|_| {}).unwrap();
    let g = &b1 * dvector![2.0] + &b2 * dvector![-1.0, 0.25];
    let x = cl.plant().q(plant);
    for i in 0..2 {
        let expect = [1.0, -1.0][i] + 2.0 * g[i];
        assert!(
            (x[i] - expect).abs() < 1e-12,
            "x[{i}] = {} vs {expect}",
            x[i]
        );
    }
    assert_eq!(cl.plant().system_input(plant), g.as_slice());
}

#[test]
fn events_of_one_instant_run_in_the_documented_order() {
    let (model, plant) = scalar_plant(0.0, 1.0);
    let mut lb = ControlLoopBuilder::new(model);
    let sensor = lb
        .add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing: Timing::periodic(0.1).with_delay(0.2),
            },
        )
        .unwrap();
    lb.add_controller(
        "controller",
        Measurement::Sensor(sensor),
        Box::new(Gain(1.0)),
        ActuatorSpec {
            system: plant,
            input: InputMap::Matrix(dmatrix![1.0]),
            timing: Timing::periodic(0.1).with_delay(0.1),
            u0: None,
        },
    )
    .unwrap();
    let mut cl = lb.build_time_stepping(zoh_settings(0.05, 1.0)).unwrap();
    let mut seen = Vec::new();
    while let StepOutcome::Advanced { t, .. } = cl.step().unwrap() {
        if (t - 0.3).abs() < 1e-12 {
            let events: Vec<(EventKind, String)> = cl
                .plant()
                .last_events()
                .iter()
                .map(|e| (e.kind, cl.source_name(e.source).to_string()))
                .collect();
            seen = events;
        }
    }
    let kinds: Vec<EventKind> = seen.iter().map(|e| e.0).collect();
    let names: Vec<&str> = seen.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(
        kinds,
        [
            EventKind::TimeDiscretisation,
            EventKind::Sensor,
            EventKind::Sensor,
            EventKind::Actuator,
            EventKind::Actuator,
            EventKind::Output
        ]
    );
    assert_eq!(
        names,
        [
            "step",
            "sensor",
            "sensor.delivery",
            "controller",
            "controller.apply",
            "output"
        ]
    );
}

#[test]
fn timings_off_the_integration_grid_and_bad_values_are_refused() {
    let build = |timing: Timing| {
        let (model, plant) = scalar_plant(0.0, 1.0);
        let mut lb = ControlLoopBuilder::new(model);
        lb.add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing,
            },
        )
        .and_then(|_| lb.build_time_stepping(zoh_settings(0.01, 1.0)))
    };
    match build(Timing::periodic(0.1).with_delay(0.015)) {
        Err(ControlError::Simulation(SimulationError::OffGrid { what, .. })) => {
            assert!(what.contains("sensor.delivery"), "{what}")
        }
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("accepted a delay off the grid"),
    }
    assert!(matches!(
        build(Timing::periodic(-0.1)),
        Err(ControlError::InvalidValue { .. })
    ));
    assert!(matches!(
        build(Timing::periodic(0.1).with_delay(f64::NAN)),
        Err(ControlError::InvalidValue { .. })
    ));
    let (model, plant) = scalar_plant(0.0, 1.0);
    let mut lb = ControlLoopBuilder::new(model);
    let err = lb
        .add_sensor(
            "sensor",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0, 2.0],
                timing: Timing::periodic(0.1),
            },
        )
        .unwrap_err();
    assert!(matches!(err, ControlError::Dimension { .. }), "{err}");
    let err = lb
        .add_sensor(
            "plant",
            SensorSpec {
                system: plant,
                c: dmatrix![1.0],
                timing: Timing::periodic(0.1),
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("used twice"), "{err}");
}

#[test]
fn a_lagrangian_plant_takes_actuator_forces() {
    // m v̇ = u with u = F constant: v(t) = F t / m, q(t) = q₀ + F t² / (2m)
    // (Moreau–Jean with θ = 1/2 is exact for constant forces).
    use nonsmooth::modelling::dynamical_system::LagrangianLinearTi;
    let mut mb = ModelBuilder::new();
    let s = mb
        .add_system(
            "body",
            LagrangianLinearTi::new(dvector![0.0], dvector![0.0], dmatrix![2.0]),
        )
        .unwrap();
    let mut lb = ControlLoopBuilder::new(mb.build());
    lb.add_controller(
        "push",
        Measurement::None,
        Box::new(Constant(vec![3.0])),
        ActuatorSpec {
            system: s,
            input: InputMap::Matrix(dmatrix![1.0]),
            timing: Timing::periodic(0.1),
            u0: None,
        },
    )
    .unwrap();
    let mut cl = lb
        .build_time_stepping(TimeSteppingSettings::new(0.01, 1.0))
        .unwrap();
    cl.run(|_| {}).unwrap();
    let (q, v) = (cl.plant().q(s)[0], cl.plant().v(s)[0]);
    assert!((v - 1.5).abs() < 1e-12, "v = {v}");
    assert!((q - 0.75).abs() < 1e-12, "q = {q}");
}

#[test]
fn a_sensor_feedthrough_is_checked_and_excludes_a_value_fed_from_outside() {
    let (model, plant) = scalar_plant(0.0, 1.0);
    let mut lb = ControlLoopBuilder::new(model);
    let spec = SensorSpec {
        system: plant,
        c: dmatrix![1.0],
        timing: Timing::periodic(0.1),
    };
    let s = lb.add_sensor("sensor", spec.clone()).unwrap();
    let fed = lb.add_sensor("fed", spec).unwrap();
    let c = lb
        .add_controller(
            "controller",
            Measurement::Sensor(s),
            Box::new(Gain(2.0)),
            ActuatorSpec {
                system: plant,
                input: InputMap::Matrix(dmatrix![1.0]),
                timing: Timing::periodic(0.1),
                u0: None,
            },
        )
        .unwrap();
    let err = lb
        .set_sensor_feedthrough(s, c, dmatrix![1.0, 2.0])
        .unwrap_err();
    assert!(
        matches!(err, ControlError::Dimension { what: "D", .. }),
        "{err}"
    );
    assert!(lb
        .set_sensor_feedthrough(SensorId(7), c, dmatrix![1.0])
        .is_err());
    lb.feed_sensor_from_input(fed).unwrap();
    let err = lb
        .set_sensor_feedthrough(fed, c, dmatrix![1.0])
        .unwrap_err();
    assert!(err.to_string().contains("no feedthrough"), "{err}");
    lb.set_sensor_feedthrough(s, c, dmatrix![0.5]).unwrap();
    // The other order is refused too.
    assert!(lb.feed_sensor_from_input(s).is_err());
}

/// Keeps the measurement map its setup gives.
struct Probe(std::sync::Arc<std::sync::Mutex<Vec<Option<DMatrix<f64>>>>>);
impl Controller for Probe {
    fn law(&self) -> &'static str {
        "probe"
    }
    fn initialize(&mut self, s: &ControllerSetup) -> Result<(), ControlError> {
        self.0.lock().unwrap().push(s.measurement_map.clone());
        Ok(())
    }
    fn compute(&mut self, _t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u.fill(0.0);
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

#[test]
fn a_controller_learns_whether_its_measurement_is_a_map_of_its_plants_state() {
    let mut mb = ModelBuilder::new();
    let plant = mb
        .add_system(
            "plant",
            FirstOrderLinear::new(dvector![1.0, 0.0], DMatrix::zeros(2, 2)),
        )
        .unwrap();
    let other = mb
        .add_system("other", FirstOrderLinear::new(dvector![1.0], dmatrix![0.0]))
        .unwrap();
    let mut lb = ControlLoopBuilder::new(mb.build());
    let sensor = |system, c| SensorSpec {
        system,
        c,
        timing: Timing::periodic(0.1),
    };
    let c = dmatrix![1.0, 2.0];
    let plain = lb.add_sensor("plain", sensor(plant, c.clone())).unwrap();
    let with_d = lb.add_sensor("with_d", sensor(plant, c.clone())).unwrap();
    let elsewhere = lb
        .add_sensor("elsewhere", sensor(other, dmatrix![1.0]))
        .unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut ids = Vec::new();
    for (name, m) in [
        ("a", Measurement::Sensor(plain)),
        ("b", Measurement::Sensor(with_d)),
        ("c", Measurement::Sensor(elsewhere)),
        ("d", Measurement::None),
    ] {
        let id = lb
            .add_controller(
                name,
                m,
                Box::new(Probe(seen.clone())),
                ActuatorSpec {
                    system: plant,
                    input: InputMap::Matrix(dmatrix![0.0; 1.0]),
                    timing: Timing::periodic(0.1),
                    u0: None,
                },
            )
            .unwrap();
        ids.push(id);
    }
    lb.set_sensor_feedthrough(with_d, ids[0], dmatrix![1.0])
        .unwrap();
    lb.build_time_stepping(zoh_settings(0.01, 1.0)).unwrap();
    assert_eq!(*seen.lock().unwrap(), [Some(c), None, None, None]);
}
