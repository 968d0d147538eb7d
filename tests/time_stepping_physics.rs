//! Time-stepping against oracles independent of the code: analytic impact
//! times, energy balances, static impulses, the relay's sliding surface,
//! exact solutions of linear systems.

mod common;

use nalgebra::{dmatrix, dvector};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{FirstOrderScheme, TimeStepping, TimeSteppingSettings};

/// Analytic impact times of a ball dropped from rest at height y0 above the
/// floor: t₁ = √(2y₀/g), then flights of 2 eᵏ v₁ / g.
fn analytic_impacts(y0: f64, e: f64, g: f64, count: usize) -> Vec<f64> {
    let v1 = (2.0 * g * y0).sqrt();
    let mut t = v1 / g;
    let mut out = vec![t];
    let mut v = v1;
    for _ in 1..count {
        v *= e;
        t += 2.0 * v / g;
        out.push(t);
    }
    out
}

/// Times of the steps where an impulse starts (λ > 0 after a step without).
fn simulated_impacts(step: f64) -> Vec<f64> {
    let (model, _, floor) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(step, 3.0)).unwrap();
    let mut impacts = vec![];
    let mut was = false;
    sim.run(|s| {
        let now = s.lambda(floor)[0] > 0.0;
        if now && !was {
            impacts.push(s.time());
        }
        was = now;
    })
    .unwrap();
    impacts
}

#[test]
fn bouncing_ball_impact_times_converge_to_analytic_ones() {
    let exact = analytic_impacts(0.9, 0.9, 9.81, 3);
    let mut previous = f64::INFINITY;
    for step in [1e-2, 1e-3, 1e-4] {
        let sim = simulated_impacts(step);
        assert!(sim.len() >= 3, "h = {step}: impacts {sim:?}");
        let err = exact
            .iter()
            .zip(&sim)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        // The impact is captured within the step of the contact (first
        // order); errors accumulate over three flights.
        assert!(
            err <= 3.0 * step,
            "h = {step}: error {err:.3e}, sim {sim:?}, exact {exact:?}"
        );
        assert!(
            err < previous,
            "h = {step}: error {err:.3e} did not decrease from {previous:.3e}"
        );
        previous = err;
    }
}

#[test]
fn bouncing_ball_energy_changes_only_by_the_work_of_the_impulses() {
    // For θ = 1/2 and a constant force, Moreau–Jean's discrete energy
    // balance is exact: E_{k+1} − E_k = ½ P (U_{k+1} + U_k), and with
    // 0 ≤ U_{k+1} + e U_k ⊥ P ≥ 0 this equals ½ P (1 − e) U_k: never
    // positive while the contact approaches (U_k ≤ 0). It is positive only
    // on steps where the contact is active while separating (U_k > 0,
    // y_k + γ h U_k ≤ 0), which happens when bounces accumulate.
    let (model, ball, floor) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(0.005, 10.0)).unwrap();
    let energy = |q: &[f64], v: &[f64]| 0.5 * v[0] * v[0] + 9.81 * q[0];
    let e0 = energy(sim.q(ball), sim.v(ball));
    let (mut last, mut u_last) = (e0, 0.0);
    let mut first_separating_active = None;
    sim.run(|s| {
        let e = energy(s.q(ball), s.v(ball));
        let (p, u) = (s.lambda(floor)[0], s.v(ball)[0]);
        let work = 0.5 * p * (u + u_last);
        assert!(
            (e - last - work).abs() <= 1e-12 * e0,
            "t = {}: ΔE {} vs impulse work {work}",
            s.time(),
            e - last
        );
        if u_last <= 0.0 {
            assert!(
                e <= last + 1e-12 * e0,
                "t = {}: energy rose from {last} to {e}",
                s.time()
            );
        } else if p > 0.0 && first_separating_active.is_none() {
            first_separating_active = Some(s.time());
        }
        last = e;
        u_last = u;
    })
    .unwrap();
    assert!(
        last < 0.1 * e0,
        "restitution 0.9 dissipates: {last} vs {e0}"
    );
    // Only in the accumulation phase: the first eight bounces are clean.
    let impacts = analytic_impacts(0.9, 0.9, 9.81, 8);
    let t = first_separating_active.expect("the accumulation phase has such steps");
    assert!(
        t > impacts[7],
        "first separating-active step at {t}, before {}",
        impacts[7]
    );
}

#[test]
fn resting_column_impulses_equal_the_weight_above_each_contact() {
    let n = 10;
    let h = 1e-3;
    // Radius 0.1: rounding leaves initial gaps of ±4e-17, which the
    // activation test treats as contact.
    let (model, _, inters) = common::beads_column(n, 0.1, 0.0, 0.5);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(h, 0.05)).unwrap();
    let mut steps = 0;
    sim.run(|s| {
        if s.time() == 0.0 {
            return;
        }
        steps += 1;
        for (i, &c) in inters.iter().enumerate() {
            let expected = (n - i) as f64 * 1.0 * 9.81 * h;
            let got = s.lambda(c)[0];
            assert!(
                (got - expected).abs() <= 1e-12 * expected,
                "t = {}: contact {i}: {got} vs {expected}",
                s.time()
            );
        }
    })
    .unwrap();
    assert_eq!(steps, 50);
}

#[test]
fn diode_bridge_stored_energy_decays() {
    let energy = |x: &[f64]| 0.5 * 1e-6 * x[0] * x[0] + 0.5 * 1e-2 * x[1] * x[1];
    // θ = 1 (implicit Euler): E_{k+1} − E_k = h v_{k+1}(λ₃ − λ₂) − ½‖Δx‖²_P
    // and complementarity gives v_{k+1}(λ₃ − λ₂) = −λ₃λ₁ − λ₂λ₀ ≤ 0: the
    // stored energy decreases at every step.
    // θ = 1/2 (the bundled trapezoidal rule): the diodes switch at t_{k+1},
    // not at the midpoint, so single steps may gain O(h²); over every tenth
    // of a millisecond the energy decreases.
    for theta in [1.0, 0.5] {
        let (model, circuit, _) = common::diode_bridge();
        let mut settings = TimeSteppingSettings::new(1e-6, 5e-3);
        settings.theta = theta;
        let mut sim = TimeStepping::new(model, settings).unwrap();
        let e0 = energy(sim.x(circuit));
        let (mut last, mut window_start, mut k) = (e0, e0, 0u64);
        sim.run(|s| {
            let e = energy(s.x(circuit));
            if theta == 1.0 {
                assert!(
                    e <= last * (1.0 + 1e-14),
                    "t = {}: energy rose from {last} to {e}",
                    s.time()
                );
            }
            k += 1;
            if k % 100 == 0 {
                assert!(
                    e < window_start,
                    "θ = {theta}, t = {}: {e} ≥ {window_start}",
                    s.time()
                );
                window_start = e;
            }
            last = e;
        })
        .unwrap();
        assert!(last < 0.5 * e0, "θ = {theta}: {last} vs {e0}");
    }
}

#[test]
fn relay_reaches_the_sliding_surface_and_stays_on_it_without_chattering() {
    let (c1, alpha, h) = (1.0, 1.0, 0.01);
    let (model, plant, relay) = common::relay(c1, alpha, [0.0, 2.21]);
    let mut settings = TimeSteppingSettings::new(h, 10.0);
    settings.theta = 1.0;
    let mut sim = TimeStepping::new(model, settings).unwrap();
    // σ = c1 x0 + x1 obeys σ̇ = −α sgn σ exactly (C A = 0), so it reaches 0
    // at t* = σ(0)/α = 2.21 s and the implicit scheme keeps it there.
    let mut reached = None;
    let mut previous = 2.21f64;
    sim.run(|s| {
        let x = s.x(plant);
        let sigma = c1 * x[0] + x[1];
        if s.time() == 0.0 {
            return;
        }
        match reached {
            None if sigma.abs() <= 1e-14 => reached = Some(s.time()),
            None => {
                assert!(
                    (previous - sigma - alpha * h).abs() < 1e-12,
                    "t = {}: σ {sigma} after {previous}",
                    s.time()
                );
                assert_eq!(s.lambda(relay)[0], -1.0);
            }
            Some(_) => {
                assert!(
                    sigma.abs() <= 1e-14,
                    "t = {}: left the surface, σ = {sigma:e}",
                    s.time()
                );
                let l = s.lambda(relay)[0];
                assert!(
                    l > -1.0 && l < 1.0,
                    "t = {}: λ = {l} saturates (chattering)",
                    s.time()
                );
            }
        }
        previous = sigma;
    })
    .unwrap();
    let t = reached.expect("the surface is reached");
    assert!((t - 2.21).abs() <= h + 1e-9, "reached at {t}");
}

#[test]
fn zero_order_hold_is_exact_for_a_harmonic_oscillator() {
    // ẋ = [[0, 1], [−ω², 0]] x + (0, 1): x(t) = (1/ω²)(1 − cos ωt) + cos ωt, …
    let w = 3.0;
    let mut b = ModelBuilder::new();
    let osc = b
        .add_system(
            "osc",
            FirstOrderLinear::new(dvector![1.0, 0.0], dmatrix![0.0, 1.0; -w * w, 0.0])
                .with_b(TimeVector::Constant(dvector![0.0, 1.0])),
        )
        .unwrap();
    let mut settings = TimeSteppingSettings::new(0.1, 20.0);
    settings.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
    let mut sim = TimeStepping::new(b.build(), settings).unwrap();
    let c = 1.0 / (w * w);
    sim.run(|s| {
        let t = s.time();
        let exact0 = c + (1.0 - c) * (w * t).cos();
        let exact1 = -(1.0 - c) * w * (w * t).sin();
        let x = s.x(osc);
        assert!(
            (x[0] - exact0).abs() < 1e-12 && (x[1] - exact1).abs() < 1e-11,
            "t = {t}: {x:?}"
        );
    })
    .unwrap();
}

#[test]
fn euler_moreau_trapezoidal_rule_converges_at_second_order() {
    let w = 3.0;
    let error = |h: f64| {
        let mut b = ModelBuilder::new();
        let osc = b
            .add_system(
                "osc",
                FirstOrderLinear::new(dvector![1.0, 0.0], dmatrix![0.0, 1.0; -w * w, 0.0]),
            )
            .unwrap();
        let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, 2.0)).unwrap();
        sim.run(|_| {}).unwrap();
        (sim.x(osc)[0] - (w * 2.0).cos()).abs()
    };
    let (e1, e2) = (error(1e-2), error(5e-3));
    let order = (e1 / e2).log2();
    assert!(
        (order - 2.0).abs() < 0.05,
        "observed order {order} ({e1:e}, {e2:e})"
    );
}

#[test]
fn nonlinear_relation_reproduces_the_linear_one() {
    // The bouncing ball with y = h(q) = q0 − R given as a scleronomous
    // relation (finite-difference Jacobian) follows the linear run.
    let (linear, ball_l, floor_l) = common::bouncing_ball(1.0, 0.9, 0.1);
    let mut b = ModelBuilder::new();
    let sys = linear.system(ball_l).ds.clone();
    let ball = b.add_system("ball", sys).unwrap();
    let floor = b
        .add_interaction(
            "floor",
            &[ball],
            LagrangianScleronomous {
                output_dim: 1,
                h: std::sync::Arc::new(|q: &[f64], y: &mut [f64]| y[0] = q[0] - 0.1),
                jacobian: None,
            },
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution: 0.9,
            },
        )
        .unwrap();
    let settings = TimeSteppingSettings::new(0.005, 3.0);
    let mut a = TimeStepping::new(linear, settings.clone()).unwrap();
    let mut n = TimeStepping::new(b.build(), settings).unwrap();
    loop {
        let (ra, rn) = (a.step().unwrap(), n.step().unwrap());
        assert_eq!(ra, rn);
        if ra == nonsmooth::simulation::StepOutcome::Finished {
            break;
        }
        let (qa, qn) = (a.q(ball_l)[0], n.q(ball)[0]);
        assert!((qa - qn).abs() < 1e-9, "t = {}: {qa} vs {qn}", a.time());
        assert!((a.lambda(floor_l)[0] - n.lambda(floor)[0]).abs() < 1e-9);
    }
}

#[test]
fn nonlinear_pendulum_conserves_energy_with_the_midpoint_rule() {
    // m l² θ̈ + m g l sin θ = 0 as a nonlinear Lagrangian system with
    // F_int = m g l sin q (Jacobian by finite differences).
    let (m, g, l) = (1.0, 9.81, 1.0);
    let mut b = ModelBuilder::new();
    let mut ds = LagrangianNonlinear::new(
        dvector![1.0],
        dvector![0.0],
        Mass::Constant(dmatrix![m * l * l]),
    );
    ds.fint = Some(std::sync::Arc::new(
        move |_t: f64, q: &[f64], _v: &[f64], out: &mut [f64]| out[0] = m * g * l * q[0].sin(),
    ));
    let p = b.add_system("pendulum", ds).unwrap();
    let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(1e-3, 5.0)).unwrap();
    let energy = |q: f64, v: f64| 0.5 * m * l * l * v * v + m * g * l * (1.0 - q.cos());
    let e0 = energy(1.0, 0.0);
    let mut worst = 0.0f64;
    sim.run(|s| worst = worst.max((energy(s.q(p)[0], s.v(p)[0]) - e0).abs() / e0))
        .unwrap();
    // θ = 1/2 is second order: the energy error stays O(h²).
    assert!(worst < 1e-5, "relative energy drift {worst:e}");
    assert!(
        sim.statistics().newton_iterations > sim.statistics().steps,
        "Newton iterated"
    );
}

#[test]
fn bad_settings_and_models_are_typed_errors() {
    let (model, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let model = std::sync::Arc::new(model);
    for (what, settings) in [
        ("step", TimeSteppingSettings::new(-1e-3, 1.0)),
        ("step", TimeSteppingSettings::new(f64::NAN, 1.0)),
        ("t_end", TimeSteppingSettings::new(1e-3, -1.0)),
        (
            "theta",
            TimeSteppingSettings {
                theta: 1.5,
                ..TimeSteppingSettings::new(1e-3, 1.0)
            },
        ),
    ] {
        let err = TimeStepping::new(model.clone(), settings)
            .err()
            .expect("rejected");
        assert!(err.to_string().contains(what), "{err}");
    }
    let mut b = ModelBuilder::new();
    let singular = LagrangianLinearTi::new(
        dvector![0.0, 0.0],
        dvector![0.0, 0.0],
        dmatrix![1.0, 0.0; 0.0, 0.0],
    );
    assert!(matches!(
        b.add_system("s", singular),
        Err(ModelError::SingularMass { .. })
    ));
    let not_square = FirstOrderLinear::new(dvector![0.0, 0.0], nalgebra::DMatrix::zeros(2, 3));
    assert!(matches!(
        b.add_system("a", not_square),
        Err(ModelError::NotSquare { .. })
    ));
    let nan = FirstOrderLinear::new(dvector![f64::NAN], dmatrix![0.0]);
    assert!(matches!(
        b.add_system("n", nan),
        Err(ModelError::NonFinite { .. })
    ));
    let ok = b
        .add_system("x", FirstOrderLinear::new(dvector![0.0], dmatrix![0.0]))
        .unwrap();
    let wrong = b.add_interaction(
        "r",
        &[ok],
        FirstOrderLinearTi::new(dmatrix![1.0, 1.0], dmatrix![1.0]),
        NonsmoothLaw::Complementarity { size: 1 },
    );
    assert!(
        matches!(wrong, Err(ModelError::DimensionMismatch { .. })),
        "{wrong:?}"
    );
    let impact_on_first_order = b.add_interaction(
        "r",
        &[ok],
        FirstOrderLinearTi::new(dmatrix![1.0], dmatrix![1.0]),
        NonsmoothLaw::NewtonImpact {
            size: 1,
            restitution: 0.5,
        },
    );
    assert!(matches!(
        impact_on_first_order,
        Err(ModelError::Incompatible { .. })
    ));
    assert!(matches!(
        b.add_system("x", FirstOrderLinear::new(dvector![0.0], dmatrix![0.0])),
        Err(ModelError::DuplicateName(_))
    ));
}

#[test]
fn sparse_and_dense_assembly_give_the_same_column() {
    use nonsmooth::simulation::Assembly;
    let run = |assembly: Assembly, solver: &str| {
        let (model, beads, inters) = common::beads_column(10, 0.1, 0.01, 0.5);
        let mut settings = TimeSteppingSettings::new(1e-3, 1.0);
        settings.assembly = assembly;
        settings.solver = solver.into();
        let mut sim = TimeStepping::new(model, settings).unwrap();
        let mut rows = vec![];
        sim.run(|s| {
            let mut row: Vec<f64> = beads.iter().map(|&b| s.q(b)[0]).collect();
            row.extend(inters.iter().map(|&i| s.lambda(i)[0]));
            rows.push(row);
        })
        .unwrap();
        rows
    };
    let dense = run(Assembly::Dense, "default");
    let sparse = run(Assembly::Sparse, "lemke");
    assert_eq!(dense.len(), sparse.len());
    let mut worst = 0.0f64;
    for (a, b) in dense.iter().zip(&sparse) {
        for (x, y) in a.iter().zip(b) {
            worst = worst.max((x - y).abs());
        }
    }
    // The impulses of the falling column reach about 1e-1; solves agree to
    // the solver tolerance.
    assert!(worst < 1e-12, "dense and sparse runs differ by {worst:e}");
    // The column did collide: some contact carried an impulse.
    assert!(dense.iter().any(|r| r[10..].iter().any(|&l| l > 0.0)));
}

/// A model of uncoupled zero-order-hold systems alone is linear: its
/// steps compute the free state in the state buffer in one pass. With one
/// more system and a nonlinear interaction on it (a bouncing ball), every
/// system takes the Newton pass: the zero-order-hold systems must follow
/// the same run to the bit, for sizes 1 to 6 (unrolled and plain kernels),
/// with a time-varying b, a held input g, and two systems.
#[test]
fn zero_order_hold_linear_pass_equals_the_newton_pass_to_the_bit() {
    use std::sync::Arc;
    for n in 1..=6usize {
        for with_input in [false, true] {
            let build = |with_ball: bool| {
                let mut b = ModelBuilder::new();
                let mut ids = Vec::new();
                if with_ball {
                    let (bb, ball, _) = common::bouncing_ball(1.0, 0.9, 0.1);
                    let ball = b.add_system("ball", bb.system(ball).ds.clone()).unwrap();
                    b.add_interaction(
                        "floor",
                        &[ball],
                        LagrangianScleronomous {
                            output_dim: 1,
                            h: Arc::new(|q: &[f64], y: &mut [f64]| y[0] = q[0] - 0.1),
                            jacobian: None,
                        },
                        NonsmoothLaw::NewtonImpact {
                            size: 1,
                            restitution: 0.9,
                        },
                    )
                    .unwrap();
                }
                for s in 0..2 {
                    let a = nalgebra::DMatrix::from_fn(n, n, |i, j| {
                        (((i * 7 + j * 3 + s) % 5) as f64 - 2.0) * 0.37
                            - if i == j { 1.0 } else { 0.0 }
                    });
                    let x0 = nalgebra::DVector::from_fn(n, |i, _| 1.0 - 0.3 * i as f64);
                    let f = move |t: f64, out: &mut [f64]| {
                        for (i, o) in out.iter_mut().enumerate() {
                            *o = (7.0 * t + i as f64).sin() * (1.0 + s as f64);
                        }
                    };
                    let ds = FirstOrderLinear::new(x0, a).with_b(TimeVector::Function {
                        dim: n,
                        f: Arc::new(f),
                    });
                    ids.push(b.add_system(&format!("s{s}"), ds).unwrap());
                }
                let mut settings = TimeSteppingSettings::new(1e-2, 3.0);
                settings.first_order_scheme = FirstOrderScheme::ZeroOrderHold;
                let mut sim = TimeStepping::new(b.build(), settings).unwrap();
                if with_input {
                    let g: Vec<f64> = (0..n).map(|i| 0.5 - 0.2 * i as f64).collect();
                    sim.set_system_input(*ids.last().unwrap(), &g).unwrap();
                }
                (sim, ids)
            };
            let (mut fast, ids) = build(false);
            let (mut general, gids) = build(true);
            let mut steps = 0;
            loop {
                let (a, b) = (fast.step().unwrap(), general.step().unwrap());
                assert_eq!(a, b);
                if a == nonsmooth::simulation::StepOutcome::Finished {
                    break;
                }
                for (&s, &g) in ids.iter().zip(&gids) {
                    assert_eq!(fast.x(s), general.x(g), "n = {n}, t = {}", fast.time());
                }
                assert_eq!(fast.last_events(), general.last_events());
                assert_eq!(fast.statistics().steps, general.statistics().steps);
                steps += 1;
            }
            assert_eq!(steps, 301, "n = {n}");
        }
    }
}
