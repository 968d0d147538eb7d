//! Event-driven integration against analytic solutions: the bouncing ball
//! (impact times, accumulation, rest with the contact force m g) and the
//! diode bridge (a damped LC oscillator behind the rectifier).

mod common;

use std::sync::Arc;

use nonsmooth::simulation::{
    EventDriven, EventDrivenSettings, EventKind, OdeMethod, StepOutcome, TimeStepping,
    TimeSteppingSettings, TransitionKind,
};

const G: f64 = 9.81;
const E: f64 = 0.9;

/// Analytic impact times of the ball (radius 0.1, dropped from height 1 at
/// rest, restitution e): first impact after the fall of 0.9, then flights
/// of 2 eᵏ v₁ / g.
fn impact_times(n: usize) -> Vec<f64> {
    let t1 = (2.0 * 0.9 / G).sqrt();
    let v1 = G * t1;
    (0..n)
        .map(|k| {
            // t_{k+1} = t₁ + (2 v₁/g) Σ_{j=1..k} eʲ = t₁ + (2 v₁/g) e (1 − eᵏ)/(1 − e).
            t1 + 2.0 * v1 / G * E * (1.0 - E.powi(k as i32)) / (1.0 - E)
        })
        .collect()
}

/// Analytic height of the ball's centre at t (before the accumulation point).
fn height(t: f64, times: &[f64]) -> f64 {
    let v1 = G * times[0];
    match times.iter().rposition(|&ti| ti <= t) {
        None => 1.0 - 0.5 * G * t * t,
        Some(k) => {
            let s = t - times[k];
            let v = E.powi(k as i32 + 1) * v1;
            0.1 + v * s - 0.5 * G * s * s
        }
    }
}

#[test]
fn bouncing_ball_impact_times_rest_and_final_time() {
    let (model, ball, floor) = common::bouncing_ball(1.0, E, 0.1);
    let mut sim = EventDriven::new(model, EventDrivenSettings::new(0.005, 10.0)).unwrap();
    let exact = impact_times(200);
    let mut impacts = Vec::new();
    let mut rest_at = None;
    let mut max_height_error: f64 = 0.0;
    let mut last_t = 0.0;
    while let StepOutcome::Advanced { t, .. } = sim.step().unwrap() {
        assert!(t >= last_t, "time goes back: {t} < {last_t}");
        last_t = t;
        assert_eq!(t, sim.time());
        for tr in sim.last_transitions() {
            assert_eq!(tr.interaction, floor);
            match tr.kind {
                TransitionKind::Impact => impacts.push(t),
                TransitionKind::Contact => rest_at = Some(t),
                k => panic!("unexpected {k:?} at {t}"),
            }
        }
        if sim.is_output_instant() && impacts.len() < 40 && t < exact[39] {
            let h = sim.q(ball)[0];
            max_height_error = max_height_error.max((h - height(t, &exact)).abs());
        }
        if rest_at.is_some() {
            // At rest: on the floor, still, and the contact force is m g.
            assert!(sim.y(floor)[0].abs() < 1e-12, "{}", sim.y(floor)[0]);
            assert!(sim.v(ball)[0].abs() < 1e-12);
            assert!(
                (sim.lambda(floor)[0] - G).abs() < 1e-12 * G,
                "{}",
                sim.lambda(floor)[0]
            );
        }
    }
    assert_eq!(last_t, 10.0, "the run reaches T");
    assert!(impacts.len() >= 40, "{} impacts", impacts.len());
    for (k, (t, te)) in impacts.iter().zip(&exact).take(40).enumerate() {
        assert!(
            (t - te).abs() <= 1e-12,
            "impact {}: {t} vs analytic {te} (error {:.2e})",
            k + 1,
            t - te
        );
    }
    assert!(
        max_height_error < 1e-12,
        "height error {max_height_error:.2e}"
    );
    // The accumulation point of the analytic bounces.
    let t1 = exact[0];
    let t_inf = t1 + 2.0 * G * t1 / G * E / (1.0 - E);
    let rest = rest_at.expect("the ball comes to rest");
    assert!(
        rest < 10.0 && (rest - t_inf).abs() < 1e-3,
        "rest at {rest}, accumulation point {t_inf}"
    );
    let st = sim.event_statistics();
    assert_eq!(st.accumulations, 1, "{st:?}");
    // After rest no more impacts are located.
    assert!(impacts.iter().all(|&t| t <= rest));
}

/// The diode bridge behind its rectifier is the damped LC oscillator
/// v̇_L = −i_L/C − v_L/(RC), i̇_L = v_L/L in both conduction modes (the
/// resistor current is |v_L|/R): x(t) = exp(A t) x₀ exactly.
fn bridge_exact(t: f64) -> [f64; 2] {
    let (l, c, r) = (1e-2, 1e-6, 1e3);
    let a = nalgebra::dmatrix![-1.0 / (r * c), -1.0 / c; 1.0 / l, 0.0];
    let x = (a * t).exp() * nalgebra::dvector![10.0, 0.0];
    [x[0], x[1]]
}

/// The analytic zero crossings of v_L in (0, T], where the diodes switch.
fn bridge_switch_times(t_end: f64) -> Vec<f64> {
    // v_L = e^{−αt}(V₀ cos ω t + B sin ω t), B = (v̇_L(0) + α V₀)/ω.
    let (l, c, r): (f64, f64, f64) = (1e-2, 1e-6, 1e3);
    let alpha = 1.0 / (2.0 * r * c);
    let omega = (1.0 / (l * c) - alpha * alpha).sqrt();
    let v0: f64 = 10.0;
    let b = (-v0 / (r * c) + alpha * v0) / omega;
    // V₀ cos ωt + B sin ωt = ρ cos(ωt − φ), φ = atan2(B, V₀): zeros at ωt − φ = π/2 + kπ.
    let phi = b.atan2(v0);
    (0..)
        .map(|k| (std::f64::consts::FRAC_PI_2 + k as f64 * std::f64::consts::PI + phi) / omega)
        .take_while(|&t| t <= t_end)
        .filter(|&t| t > 0.0)
        .collect()
}

fn run_bridge_event_driven(method: OdeMethod, tol: f64) -> (Vec<(f64, f64, f64)>, Vec<f64>) {
    let (model, circuit, diodes) = common::diode_bridge();
    let mut s = EventDrivenSettings::new(1e-5, 5e-3);
    s.method = method;
    s.rtol = tol;
    s.atol = tol;
    let mut sim = EventDriven::new(model, s).unwrap();
    let (mut rows, mut switches) = (Vec::new(), Vec::new());
    while let StepOutcome::Advanced { t, .. } = sim.step().unwrap() {
        if sim
            .last_events()
            .iter()
            .any(|e| e.kind == EventKind::NonSmooth)
        {
            assert!(sim
                .last_transitions()
                .iter()
                .all(|tr| tr.kind == TransitionKind::ModeSwitch && tr.interaction == diodes));
            if !sim.last_transitions().is_empty() {
                switches.push(t);
            }
        }
        if sim.is_output_instant() {
            let x = sim.x(circuit);
            rows.push((t, x[0], x[1]));
            // Complementarity holds at every output: 0 ≤ y ⊥ λ ≥ 0.
            for (y, l) in sim.y(diodes).iter().zip(sim.lambda(diodes)) {
                assert!(
                    *y >= -1e-9 && *l >= -1e-9 && (y * l).abs() <= 1e-9,
                    "{t}: y {y} λ {l}"
                );
            }
        }
    }
    (rows, switches)
}

#[test]
fn diode_bridge_event_driven_follows_the_analytic_solution() {
    let exact_switches = bridge_switch_times(5e-3);
    assert!(exact_switches.len() > 10);
    for (method, tol, state_tol, switch_tol) in [
        (OdeMethod::DormandPrince, 1e-10, 1e-7, 1e-11),
        (OdeMethod::TrBdf2, 1e-10, 2e-4, 1e-9),
    ] {
        let (rows, switches) = run_bridge_event_driven(method, tol);
        assert_eq!(rows.len(), 501, "{method:?}");
        let err = rows.iter().fold(0.0f64, |m, &(t, v, i)| {
            let e = bridge_exact(t);
            m.max((v - e[0]).abs()).max(1e3 * (i - e[1]).abs())
        });
        assert!(err < state_tol, "{method:?}: state error {err:.2e}");
        assert_eq!(
            switches.len(),
            exact_switches.len(),
            "{method:?}: {switches:?}"
        );
        for (t, te) in switches.iter().zip(&exact_switches) {
            assert!(
                (t - te).abs() < switch_tol,
                "{method:?}: switch at {t} vs {te}"
            );
        }
    }
}

/// Time-stepping (Euler–Moreau, θ = 1/2) converges to the event-driven
/// trajectory as h → 0: the largest difference of v_L at the common output
/// instants falls by about 10 for each tenfold smaller step. (First order:
/// the scheme takes the input r = Bλ at the end of the step, and here r
/// carries the resistor current.)
#[test]
fn diode_bridge_time_stepping_converges_to_event_driven() {
    let (ed, _) = run_bridge_event_driven(OdeMethod::DormandPrince, 1e-11);
    let mut errors = Vec::new();
    for h in [1e-5, 1e-6, 1e-7] {
        let (model, circuit, _) = common::diode_bridge();
        let mut ts =
            TimeStepping::new(Arc::new(model), TimeSteppingSettings::new(h, 5e-3)).unwrap();
        let mut err: f64 = 0.0;
        let mut k = 0;
        while let StepOutcome::Advanced { t, .. } = ts.step().unwrap() {
            // Compare on the event-driven output grid (every 1e-5 s).
            while k < ed.len() && ed[k].0 < t - 1e-12 {
                k += 1;
            }
            if k < ed.len() && (ed[k].0 - t).abs() < 1e-12 {
                err = err.max((ts.x(circuit)[0] - ed[k].1).abs());
            }
        }
        errors.push(err);
    }
    eprintln!("time-stepping vs event-driven, max |Δv_L| for h = 1e-5, 1e-6, 1e-7: {errors:?}");
    assert!(
        errors[0] / errors[1] > 7.0 && errors[1] / errors[2] > 7.0,
        "{errors:?}"
    );
    assert!(errors[2] < 3e-3, "{errors:?}");
}

/// Two beads resting on each other fall onto the ground: the impact LCP
/// over the ground and the closed contact between them gives both the
/// velocity e V (they bounce as one body, impulses 2m(1+e)V and m(1+e)V);
/// they come to rest with contact forces 2 m g and m g.
#[test]
fn stacked_beads_bounce_as_one_body_and_rest() {
    let (gap, e, r) = (0.05, 0.5, 0.1);
    // The pair, the lowest bead `gap` above the ground.
    let mut b = nonsmooth::modelling::ModelBuilder::new();
    let ids: Vec<_> = (0..2)
        .map(|i| {
            b.add_system(
                &format!("bead{i}"),
                nonsmooth::modelling::LagrangianLinearTi::new(
                    nalgebra::dvector![r + gap + 2.0 * r * i as f64],
                    nalgebra::dvector![0.0],
                    nalgebra::dmatrix![1.0],
                )
                .with_fext(nonsmooth::modelling::TimeVector::Constant(
                    nalgebra::dvector![-G],
                )),
            )
            .unwrap()
        })
        .collect();
    let law = nonsmooth::modelling::NonsmoothLaw::NewtonImpact {
        size: 1,
        restitution: e,
    };
    let ground = b
        .add_interaction(
            "ground",
            &[ids[0]],
            nonsmooth::modelling::LagrangianLinearTiR::new(nalgebra::dmatrix![1.0])
                .with_b(nalgebra::dvector![-r]),
            law.clone(),
        )
        .unwrap();
    let contact = b
        .add_interaction(
            "contact1",
            &[ids[0], ids[1]],
            nonsmooth::modelling::LagrangianLinearTiR::new(nalgebra::dmatrix![-1.0, 1.0])
                .with_b(nalgebra::dvector![-2.0 * r]),
            law,
        )
        .unwrap();
    let mut sim = EventDriven::new(b.build(), EventDrivenSettings::new(0.01, 2.0)).unwrap();
    // Touching in free fall, the pair exchanges no force: not in I₂.
    assert!(!sim.is_active(contact) && sim.y(contact)[0].abs() < 1e-15);
    let t1 = (2.0 * gap / G).sqrt();
    let v = G * t1;
    let mut first = true;
    while let StepOutcome::Advanced { t, .. } = sim.step().unwrap() {
        let impacted = sim
            .last_transitions()
            .iter()
            .any(|tr| tr.kind == TransitionKind::Impact);
        if impacted && first {
            first = false;
            assert!((t - t1).abs() < 1e-13, "{t} vs {t1}");
            for s in &ids {
                assert!((sim.v(*s)[0] - e * v).abs() < 1e-12, "{:?}", sim.v(*s));
            }
            assert!((sim.impulse(ground)[0] - 2.0 * (1.0 + e) * v).abs() < 1e-12);
            assert!((sim.impulse(contact)[0] - (1.0 + e) * v).abs() < 1e-12);
        }
    }
    assert!(!first);
    assert_eq!(sim.time(), 2.0);
    assert!(sim.is_active(ground) && sim.is_active(contact));
    assert!((sim.lambda(ground)[0] - 2.0 * G).abs() < 1e-10);
    assert!((sim.lambda(contact)[0] - G).abs() < 1e-10);
}

/// A sensor at an instant off any output grid and an actuator that holds
/// the ball against gravity from t = 0.2: the simulation stops at both
/// exactly, and the ball then falls at constant speed to the analytic
/// impact time.
#[test]
fn sources_land_exactly_and_inputs_act_from_their_instant() {
    let (model, ball, _floor) = common::bouncing_ball(1.0, E, 0.1);
    let settings = EventDrivenSettings::new(0.05, 1.0);
    let mut sim =
        EventDriven::with_times(model, settings, &[("sensor", 0.0123), ("actuator", 0.2)]).unwrap();
    let (_, base) = sim.tick();
    let sensor = sim
        .add_event_source(
            EventKind::Sensor,
            base.ticks("sensor", 0.0123).unwrap(),
            Some(base.period("sensor", 0.0123).unwrap()),
            "sensor",
        )
        .unwrap();
    let actuator = sim
        .add_event_source(
            EventKind::Actuator,
            base.ticks("actuator", 0.2).unwrap(),
            None,
            "hold",
        )
        .unwrap();
    assert_eq!(sim.source_name(sensor), "sensor");
    let mut seen = 0;
    let mut impact = None;
    while let StepOutcome::Advanced { tick, t } = sim.step().unwrap() {
        for ev in sim.last_events().to_vec() {
            if ev.source == sensor {
                seen += 1;
                assert_eq!(t, base.seconds(tick));
                assert_eq!(tick % base.period("sensor", 0.0123).unwrap(), 0);
                if t <= 0.2 {
                    // Free fall, read at the exact instant.
                    assert!((sim.q(ball)[0] - (1.0 - 0.5 * G * t * t)).abs() < 1e-14);
                }
            }
            if ev.source == actuator {
                assert_eq!(t, 0.2);
                sim.set_system_input(ball, &[G, 0.0, 0.0]).unwrap();
            }
        }
        if sim
            .last_transitions()
            .iter()
            .any(|tr| tr.kind == TransitionKind::Impact)
            && impact.is_none()
        {
            impact = Some(t);
        }
    }
    // First at 0.0123 s, then every 0.0123 s up to 1.
    assert_eq!(seen, (1.0f64 / 0.0123).floor() as usize);
    // From 0.2 on the ball moves at −0.2 g: 0.9 − g·0.02 − 0.2 g (t − 0.2) = 0.
    let expected = 0.2 + (0.9 - G * 0.02) / (0.2 * G);
    let t = impact.expect("an impact");
    assert!((t - expected).abs() < 1e-13, "{t} vs {expected}");
}

/// The relay loop ẋ₀ = x₁, ẋ₁ = −x₁ − sgn(σ), σ = x₀ + x₁, from (0, 2.21):
/// while σ > 0, x₁ = −1 + 3.21 e^{−t} and σ = 2.21 − t, so the relay
/// switches to sliding at t = 2.21 exactly; on σ = 0 the equivalent
/// control is λ = 0 and x₁ decays as e^{−(t − 2.21)}.
#[test]
fn relay_reaches_the_sliding_surface_at_the_analytic_time() {
    let (model, plant, relay) = common::relay(1.0, 1.0, [0.0, 2.21]);
    let mut sim = EventDriven::new(model, EventDrivenSettings::new(0.01, 10.0)).unwrap();
    let mut switches = Vec::new();
    let ts = 2.21;
    let x1_at = |t: f64| {
        if t <= ts {
            -1.0 + 3.21 * (-t).exp()
        } else {
            (-1.0 + 3.21 * (-ts).exp()) * (-(t - ts)).exp()
        }
    };
    let mut err: f64 = 0.0;
    while let StepOutcome::Advanced { t, .. } = sim.step().unwrap() {
        if !sim.last_transitions().is_empty() {
            switches.push(t);
        }
        if sim.is_output_instant() {
            let x = sim.x(plant);
            err = err.max((x[1] - x1_at(t)).abs());
            if t > ts + 1e-9 {
                // On the surface: σ = 0 and λ = 0 (inside the bounds).
                assert!((x[0] + x[1]).abs() < 1e-9, "{t}: σ = {}", x[0] + x[1]);
                assert!(sim.lambda(relay)[0].abs() < 1e-9);
                assert!(sim.is_active(relay));
            } else if t < ts - 1e-9 {
                assert_eq!(sim.lambda(relay)[0], -1.0);
            }
        }
    }
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert!((switches[0] - ts).abs() < 1e-9, "{}", switches[0]);
    assert!(err < 1e-8, "{err:.2e}");
    assert_eq!(sim.time(), 10.0);
}

/// A nonlinear Lagrangian system, M(q) = 1 + q², gyroscopic force
/// F_gyr = ½ M'(q) v² = q v², under gravity above a floor at q = 0: with
/// e = 1 the energy ½ M(q) v² + g q is invariant through the flights and
/// the impacts; with e = 0 the body rests on the floor with λ = g.
#[test]
fn nonlinear_mass_conserves_energy_and_rests_with_the_weight() {
    use nonsmooth::modelling::*;
    use std::sync::Arc as A;
    let build = |e: f64| {
        let mut b = ModelBuilder::new();
        let mut ds = LagrangianNonlinear::new(
            nalgebra::dvector![1.0],
            nalgebra::dvector![0.0],
            Mass::Function(A::new(|q: &[f64], m: &mut nalgebra::DMatrix<f64>| {
                m[(0, 0)] = 1.0 + q[0] * q[0]
            })),
        );
        ds.fgyr = Some(A::new(|_t: f64, q: &[f64], v: &[f64], out: &mut [f64]| {
            out[0] = q[0] * v[0] * v[0]
        }));
        ds.fext = Some(TimeVector::Constant(nalgebra::dvector![-G]));
        let body = b.add_system("body", ds).unwrap();
        let floor = b
            .add_interaction(
                "floor",
                &[body],
                LagrangianLinearTiR::new(nalgebra::dmatrix![1.0]),
                NonsmoothLaw::NewtonImpact {
                    size: 1,
                    restitution: e,
                },
            )
            .unwrap();
        (b.build(), body, floor)
    };
    let energy = |q: f64, v: f64| 0.5 * (1.0 + q * q) * v * v + G * q;
    let (model, body, _) = build(1.0);
    let mut s = EventDrivenSettings::new(0.01, 5.0);
    s.rtol = 1e-12;
    s.atol = 1e-12;
    let mut sim = EventDriven::new(model, s).unwrap();
    let e0 = energy(1.0, 0.0);
    let (mut impacts, mut drift) = (0, 0.0f64);
    while let StepOutcome::Advanced { .. } = sim.step().unwrap() {
        impacts += sim
            .last_transitions()
            .iter()
            .filter(|tr| tr.kind == TransitionKind::Impact)
            .count();
        drift = drift.max((energy(sim.q(body)[0], sim.v(body)[0]) - e0).abs());
    }
    assert!(impacts >= 3, "{impacts}");
    assert!(drift < 1e-9, "energy drift {drift:.2e}");

    let (model, body, floor) = build(0.0);
    let mut sim = EventDriven::new(model, EventDrivenSettings::new(0.01, 2.0)).unwrap();
    while let StepOutcome::Advanced { .. } = sim.step().unwrap() {}
    assert!(sim.is_active(floor));
    assert!(sim.q(body)[0].abs() < 1e-12 && sim.v(body)[0].abs() < 1e-12);
    assert!(
        (sim.lambda(floor)[0] - G).abs() < 1e-10,
        "{}",
        sim.lambda(floor)[0]
    );
}
