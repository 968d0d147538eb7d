//! A split step (docs/how-a-step-proceeds.md, "An actuation inside a
//! step"): a linear ODE whose input is switched at an instant τ that is not
//! on the integration grid follows the θ-scheme recursion written out here
//! with the two sub-steps τ − t_n and t_{n+1} − τ (to 1e-14), and a change
//! scheduled on a grid instant gives the unsplit run to the last bit.
//! Unsupported cases are typed errors.

use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth::control::*;
use nonsmooth::modelling::dynamical_system::{FirstOrderLinear, LagrangianLinearTi};
use nonsmooth::modelling::{Model, ModelBuilder, SystemId};
use nonsmooth::simulation::{
    EventDrivenSettings, FirstOrderScheme, Simulation, SimulationError, StepOutcome, TimeStepping,
    TimeSteppingSettings,
};

const A: [[f64; 2]; 2] = [[-1.0, 2.0], [-3.0, -0.5]];
const THETA: f64 = 0.5;

fn plant() -> (Model, SystemId) {
    let mut mb = ModelBuilder::new();
    let a = DMatrix::from_fn(2, 2, |i, j| A[i][j]);
    let s = mb
        .add_system("plant", FirstOrderLinear::new(dvector![1.0, -0.5], a))
        .unwrap();
    (mb.build(), s)
}

fn settings(h: f64, t_end: f64) -> TimeSteppingSettings {
    let mut s = TimeSteppingSettings::new(h, t_end);
    s.theta = THETA;
    s
}

/// One θ-step of length `h` of ẋ = A x + g, written out:
/// (I − hθA) x₁ = x₀ + h(1 − θ) A x₀ + h g, solved by Cramer's rule.
fn theta_step(x: [f64; 2], g: [f64; 2], h: f64) -> [f64; 2] {
    let r = [
        x[0] + h * (1.0 - THETA) * (A[0][0] * x[0] + A[0][1] * x[1]) + h * g[0],
        x[1] + h * (1.0 - THETA) * (A[1][0] * x[0] + A[1][1] * x[1]) + h * g[1],
    ];
    let w = [
        [1.0 - h * THETA * A[0][0], -h * THETA * A[0][1]],
        [-h * THETA * A[1][0], 1.0 - h * THETA * A[1][1]],
    ];
    let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
    [
        (r[0] * w[1][1] - w[0][1] * r[1]) / det,
        (w[0][0] * r[1] - w[1][0] * r[0]) / det,
    ]
}

#[test]
fn split_step_equals_the_two_sub_step_recursion() {
    let (model, s) = plant();
    let h = 0.01;
    let mut sim = TimeStepping::new(model, settings(h, 0.1)).unwrap();
    let (g1, g2) = ([0.7, -0.2], [-1.5, 0.4]);
    sim.step().unwrap(); // t₀
    sim.set_system_input(s, &g1).unwrap();
    let mut x = [1.0, -0.5];
    for _ in 0..3 {
        sim.step().unwrap();
        x = theta_step(x, g1, h);
    }
    let t3 = sim.time();
    let tau = t3 + 0.37 * h;
    sim.split_at(tau).unwrap();
    assert!(sim.split_pending());
    assert_eq!(sim.time(), t3, "the clock stays at t_n inside a split step");
    x = theta_step(x, g1, tau - t3);
    let q = sim.q(s);
    let close = |a: &[f64], b: &[f64; 2]| (a[0] - b[0]).abs().max((a[1] - b[1]).abs());
    assert!(close(q, &x) <= 1e-14, "x(τ) {q:?} against {x:?}");
    sim.set_system_input(s, &g2).unwrap();
    let outcome = sim.step().unwrap();
    let t4 = match outcome {
        StepOutcome::Advanced { t, .. } => t,
        StepOutcome::Finished => panic!("finished"),
    };
    assert!(!sim.split_pending());
    x = theta_step(x, g2, t4 - tau);
    assert!(close(sim.q(s), &x) <= 1e-14, "{:?} against {x:?}", sim.q(s));
    assert_eq!(
        sim.statistics().steps,
        4,
        "the split step counts as one grid step"
    );
    // The grid steps after the split use W of h again.
    for _ in 0..5 {
        sim.step().unwrap();
        x = theta_step(x, g2, h);
        assert!(close(sim.q(s), &x) <= 1e-14, "{:?} against {x:?}", sim.q(s));
    }
}

#[test]
fn split_step_refuses_what_it_does_not_support() {
    let (model, _) = plant();
    let h = 0.01;
    let mut sim = TimeStepping::new(model.clone(), settings(h, 0.1)).unwrap();
    // Before t₀ is processed there is no step to split.
    assert!(matches!(
        sim.split_at(0.005),
        Err(SimulationError::BadArgument(_))
    ));
    sim.step().unwrap();
    for tau in [0.0, 0.01, 0.015, -1.0, f64::NAN] {
        let e = sim.split_at(tau).unwrap_err();
        assert!(matches!(e, SimulationError::BadArgument(_)), "{tau}: {e}");
    }
    sim.split_at(0.004).unwrap();
    assert!(matches!(
        sim.split_at(0.006),
        Err(SimulationError::Unsupported(_))
    ));
    // Inside a split step there is no grid state to save.
    assert!(Simulation::save_state(&sim).is_err());
    sim.step().unwrap();
    assert!(Simulation::save_state(&sim).is_ok());
    // The zero-order hold and Lagrangian systems keep their step length.
    let mut zoh = settings(h, 0.1);
    zoh.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
    let mut sim = TimeStepping::new(model, zoh).unwrap();
    sim.step().unwrap();
    assert!(matches!(
        sim.split_at(0.005),
        Err(SimulationError::Unsupported(_))
    ));
    let mut mb = ModelBuilder::new();
    mb.add_system(
        "ball",
        LagrangianLinearTi::new(dvector![1.0], dvector![0.0], dmatrix![1.0]),
    )
    .unwrap();
    let mut sim = TimeStepping::new(mb.build(), settings(h, 0.1)).unwrap();
    sim.step().unwrap();
    assert!(matches!(
        sim.split_at(0.005),
        Err(SimulationError::Unsupported(_))
    ));
}

/// Every `period`: u = u_on, and a change to u_off scheduled at
/// t + frac · period.
struct Pulse {
    frac: f64,
    period: f64,
    change: Option<(f64, [f64; 1])>,
}
impl Controller for Pulse {
    fn law(&self) -> &'static str {
        "pulse"
    }
    fn initialize(&mut self, s: &ControllerSetup) -> Result<(), ControlError> {
        self.period = s.period;
        Ok(())
    }
    fn compute(&mut self, t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = 1.0;
        self.change = Some((t + self.frac * self.period, [-2.0]));
        Ok(())
    }
    fn scheduled_change(&self) -> Option<(f64, &[f64])> {
        self.change.as_ref().map(|(t, u)| (*t, u.as_slice()))
    }
    fn schedules_changes(&self) -> bool {
        true
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

/// The same input sampled every step: u = 1 over the first `on` steps of
/// each period of `n` steps, −2 after (counted from the step's index).
struct Sampled {
    n: usize,
    on: usize,
    k: usize,
}
impl Controller for Sampled {
    fn law(&self) -> &'static str {
        "sampled"
    }
    fn initialize(&mut self, _: &ControllerSetup) -> Result<(), ControlError> {
        Ok(())
    }
    fn compute(&mut self, _t: f64, _y: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        u[0] = if self.k % self.n < self.on { 1.0 } else { -2.0 };
        self.k += 1;
        Ok(())
    }
    fn save_state(&self, _: &mut Vec<f64>) {}
    fn restore_state(&mut self, _: &[f64]) -> Result<usize, ControlError> {
        Ok(0)
    }
}

fn pulse_loop(law: Box<dyn Controller>, period: f64, h: f64, t_end: f64) -> ControlLoop {
    let (model, s) = plant();
    let mut lb = ControlLoopBuilder::new(model);
    lb.add_controller(
        "pulse",
        Measurement::None,
        law,
        ActuatorSpec {
            system: s,
            input: InputMap::Matrix(dmatrix![1.0; 0.5]),
            timing: Timing::periodic(period),
            u0: None,
        },
    )
    .unwrap();
    lb.build_time_stepping(settings(h, t_end)).unwrap()
}

fn trajectory(mut cl: ControlLoop) -> Vec<[f64; 2]> {
    let mut xs = Vec::new();
    while let StepOutcome::Advanced { .. } = cl.step().unwrap() {
        let q = cl.plant().q(SystemId(0));
        xs.push([q[0], q[1]]);
    }
    xs
}

#[test]
fn a_change_on_the_grid_is_the_unsplit_run_to_the_last_bit() {
    // Dyadic h and period: t + 0.75·period is exactly the grid instant.
    let (h, period, t_end) = (0.125, 1.0, 6.0);
    let scheduled = pulse_loop(
        Box::new(Pulse {
            frac: 0.75,
            period: 0.0,
            change: None,
        }),
        period,
        h,
        t_end,
    );
    let sampled = pulse_loop(Box::new(Sampled { n: 8, on: 6, k: 0 }), h, h, t_end);
    let (a, b) = (trajectory(scheduled), trajectory(sampled));
    assert_eq!(a.len(), 49);
    assert_eq!(a, b);
}

#[test]
fn a_change_inside_a_step_follows_the_recursion() {
    let (h, period, t_end, frac) = (0.125, 1.0, 4.0, 0.6);
    let xs = trajectory(pulse_loop(
        Box::new(Pulse {
            frac,
            period: 0.0,
            change: None,
        }),
        period,
        h,
        t_end,
    ));
    // The recursion: g = B u, u = 1 from each t_k = k·period to
    // τ = t_k + 0.6 (inside the step (t_k + 0.5, t_k + 0.625)), −2 after.
    let g = |u: f64| [u, 0.5 * u];
    let mut x = [1.0, -0.5];
    let mut expected = vec![x];
    for k in 0..4 {
        let tk = k as f64 * period;
        let tau = tk + frac * period;
        for j in 0..8 {
            let (t0, t1) = (tk + j as f64 * h, tk + (j + 1) as f64 * h);
            if t1 <= tau {
                x = theta_step(x, g(1.0), h);
            } else if t0 < tau {
                x = theta_step(x, g(1.0), tau - t0);
                x = theta_step(x, g(-2.0), t1 - tau);
            } else {
                x = theta_step(x, g(-2.0), h);
            }
            expected.push(x);
        }
    }
    assert_eq!(xs.len(), expected.len());
    for (k, (a, b)) in xs.iter().zip(&expected).enumerate() {
        let err = (a[0] - b[0]).abs().max((a[1] - b[1]).abs());
        assert!(err <= 1e-14, "step {k}: {a:?} against {b:?} ({err:e})");
    }
}

#[test]
fn a_change_inside_a_step_is_refused_by_an_event_driven_plant() {
    let (model, s) = plant();
    let mut lb = ControlLoopBuilder::new(model);
    lb.add_controller(
        "pulse",
        Measurement::None,
        Box::new(Pulse {
            frac: 0.6,
            period: 0.0,
            change: None,
        }),
        ActuatorSpec {
            system: s,
            input: InputMap::Matrix(dmatrix![1.0; 0.5]),
            timing: Timing::periodic(1.0),
            u0: None,
        },
    )
    .unwrap();
    let mut cl = lb
        .build_event_driven(EventDrivenSettings::new(0.125, 4.0))
        .unwrap();
    let err = loop {
        match cl.step() {
            Ok(StepOutcome::Advanced { .. }) => continue,
            Ok(StepOutcome::Finished) => panic!("the change was not refused"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, ControlError::Unsupported { .. }), "{err}");
}

#[test]
fn a_change_with_an_actuation_delay_is_refused() {
    let (model, s) = plant();
    let mut lb = ControlLoopBuilder::new(model);
    lb.add_controller(
        "pulse",
        Measurement::None,
        Box::new(Pulse {
            frac: 0.6,
            period: 0.0,
            change: None,
        }),
        ActuatorSpec {
            system: s,
            input: InputMap::Matrix(dmatrix![1.0; 0.5]),
            timing: Timing::periodic(1.0).with_delay(0.125),
            u0: None,
        },
    )
    .unwrap();
    let mut cl = lb.build_time_stepping(settings(0.125, 4.0)).unwrap();
    let err = cl.run(|_| {}).unwrap_err();
    assert!(matches!(err, ControlError::Unsupported { .. }), "{err}");
    let _ = Simulation::time(cl.plant());
}
