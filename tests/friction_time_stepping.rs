//! Moreau–Jean with Coulomb friction (Newton impact–friction law) against
//! analytic oracles: a block on an inclined plane (2D contact) and a puck
//! sliding on a horizontal plane (3D contact).
//!
//! Under Moreau–Jean with θ = 1/2 a sliding contact with a persistent
//! normal impulse receives P_N = h m g cos α per step (U_N = 0) and
//! P_T = μ P_N opposite to the sliding, so the discrete velocity changes by
//! exactly h·a per step, a = g(sin α − μ cos α), and the trapezoidal
//! position update is exact for a velocity linear in t: x(t) is the
//! analytic parabola to rounding.

use nalgebra::{dmatrix, dvector, DMatrix, DVector};
use nonsmooth::modelling::*;
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

const G: f64 = 9.81;

/// A point mass m on a plane inclined by α, in the plane's frame q = [x, z]
/// (x up the slope, z along the normal), resting on it (z = 0) with
/// velocity v0 along x; one 2D frictional contact with rows [z, x].
fn block(alpha: f64, mu: f64, v0: f64) -> (Model, SystemId, InteractionId) {
    let m = 2.0;
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "block",
            LagrangianLinearTi::new(
                dvector![0.0, 0.0],
                dvector![v0, 0.0],
                DMatrix::from_diagonal(&dvector![m, m]),
            )
            .with_fext(TimeVector::Constant(dvector![
                -m * G * alpha.sin(),
                -m * G * alpha.cos()
            ])),
        )
        .unwrap();
    let c = b
        .add_interaction(
            "contact",
            &[s],
            LagrangianLinearTiR::new(dmatrix![0.0, 1.0; 1.0, 0.0]),
            NonsmoothLaw::NewtonImpactFriction {
                dimension: 2,
                restitution: 0.0,
                tangential_restitution: 0.0,
                friction: mu,
            },
        )
        .unwrap();
    (b.build(), s, c)
}

fn slope_energy(alpha: f64, q: &[f64], v: &[f64]) -> f64 {
    2.0 * (0.5 * (v[0] * v[0] + v[1] * v[1]) + G * (q[0] * alpha.sin() + q[1] * alpha.cos()))
}

#[test]
fn block_at_rest_stays_at_rest_when_tan_alpha_at_most_mu() {
    let alpha = 30f64.to_radians();
    for mu in [alpha.tan(), 0.7, 1.5] {
        let (model, s, c) = block(alpha, mu, 0.0);
        let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(1e-3, 10.0)).unwrap();
        let mut worst: f64 = 0.0;
        sim.run(|sim| {
            worst = worst.max(sim.q(s)[0].abs()).max(sim.q(s)[1].abs());
            if sim.time() > 0.0 {
                assert_eq!(sim.contact_status(c), &[1.0], "t = {}", sim.time());
                // Static impulse balances gravity over the step.
                let l = sim.lambda(c);
                assert!((l[0] - 2.0 * G * alpha.cos() * 1e-3).abs() < 1e-12);
                assert!((l[1] - 2.0 * G * alpha.sin() * 1e-3).abs() < 1e-12);
            }
        })
        .unwrap();
        assert!(worst <= 1e-12, "μ = {mu}: drift {worst:e}");
    }
}

#[test]
fn sliding_block_follows_the_analytic_parabola() {
    let alpha = 30f64.to_radians();
    let (mu, v0, h) = (0.3, -0.5, 1e-3);
    let a = -G * (alpha.sin() - mu * alpha.cos());
    let (model, s, c) = block(alpha, mu, v0);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(h, 2.0)).unwrap();
    let mut e_prev = slope_energy(alpha, sim.q(s), sim.v(s));
    sim.run(|sim| {
        let t = sim.time();
        let (q, v) = (sim.q(s), sim.v(s));
        let x = v0 * t + 0.5 * a * t * t;
        assert!(
            (q[0] - x).abs() <= 1e-10 * (1.0 + x.abs()),
            "t = {t}: {} vs {x}",
            q[0]
        );
        assert!((v[0] - (v0 + a * t)).abs() <= 1e-10, "t = {t}");
        assert!(q[1].abs() <= 1e-12 && v[1].abs() <= 1e-12);
        if t > 0.0 {
            assert_eq!(sim.contact_status(c), &[2.0]);
            let l = sim.lambda(c);
            // Sliding down (v < 0): the friction impulse points up the slope.
            assert!((l[1] - mu * l[0]).abs() <= 1e-12 * l[0], "{l:?}");
        }
        let e = slope_energy(alpha, q, v);
        assert!(
            e <= e_prev + 1e-12 * e_prev.abs().max(1.0),
            "t = {t}: {e} > {e_prev}"
        );
        e_prev = e;
    })
    .unwrap();
}

/// A block thrown up the slope decelerates at g(sin α + μ cos α), stops at
/// t* = v0/a after v0²/(2a), then sticks (tan α ≤ μ) or slides back at
/// g(sin α − μ cos α).
#[test]
fn block_thrown_up_the_slope_stops_at_the_analytic_time_and_place() {
    let alpha = 20f64.to_radians();
    let (v0, h) = (2.0, 1e-3);
    for mu in [0.2, 0.6] {
        let up = G * (alpha.sin() + mu * alpha.cos());
        let (t_stop, x_stop) = (v0 / up, v0 * v0 / (2.0 * up));
        let sticks = alpha.tan() <= mu;
        let (model, s, c) = block(alpha, mu, v0);
        let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(h, 1.5)).unwrap();
        let mut stop: Option<(f64, f64)> = None;
        let mut last = (0.0, 0.0);
        sim.run(|sim| {
            let (t, x, v) = (sim.time(), sim.q(s)[0], sim.v(s)[0]);
            if stop.is_none() && v <= 1e-12 {
                stop = Some((t, x));
            }
            if let Some((ts, xs)) = stop {
                if sticks {
                    assert!((x - xs).abs() <= 1e-12, "μ = {mu}: moved after stopping");
                    assert_eq!(sim.contact_status(c), &[1.0]);
                } else if t > ts + h {
                    // Slides back from the stop with the downhill acceleration.
                    let down = G * (alpha.sin() - mu * alpha.cos());
                    let (ts, dt) = (t_stop, t - t_stop);
                    let expected = x_stop - 0.5 * down * dt * dt;
                    assert!(
                        (x - expected).abs() <= 2.0 * up * h * h + down * h * (dt + h),
                        "μ = {mu}, t = {t} (stop {ts}): x = {x}, expected {expected}"
                    );
                    assert_eq!(sim.contact_status(c), &[2.0]);
                }
            }
            last = (t, x);
        })
        .unwrap();
        let (ts, xs) = stop.expect("the block stops");
        assert!(
            ts >= t_stop && ts - t_stop <= h,
            "μ = {mu}: stopped at {ts}, analytic {t_stop}"
        );
        assert!(
            (xs - x_stop).abs() <= up * h * h,
            "μ = {mu}: stopped at x = {xs}, analytic {x_stop}"
        );
        assert!(last.0 > t_stop + 0.3);
    }
}

/// A puck of mass m on the horizontal plane z = 0, q = [x, y, z], one 3D
/// contact with rows [z, x, y].
fn puck(mu: f64, v0: f64, direction: f64) -> (Model, SystemId, InteractionId) {
    let m = 0.5;
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "puck",
            LagrangianLinearTi::new(
                DVector::zeros(3),
                dvector![v0 * direction.cos(), v0 * direction.sin(), 0.0],
                DMatrix::from_diagonal(&dvector![m, m, m]),
            )
            .with_fext(TimeVector::Constant(dvector![0.0, 0.0, -m * G])),
        )
        .unwrap();
    let c = b
        .add_interaction(
            "ice",
            &[s],
            LagrangianLinearTiR::new(dmatrix![0.0, 0.0, 1.0; 1.0, 0.0, 0.0; 0.0, 1.0, 0.0]),
            NonsmoothLaw::NewtonImpactFriction {
                dimension: 3,
                restitution: 0.0,
                tangential_restitution: 0.0,
                friction: mu,
            },
        )
        .unwrap();
    (b.build(), s, c)
}

#[test]
fn puck_keeps_its_direction_and_stops_at_the_analytic_time_and_place() {
    let (mu, v0, phi, h) = (0.25, 3.0, 0.7, 1e-3);
    let (t_stop, d_stop) = (v0 / (mu * G), v0 * v0 / (2.0 * mu * G));
    let (model, s, c) = puck(mu, v0, phi);
    let mut sim = TimeStepping::new(model, TimeSteppingSettings::new(h, t_stop + 0.5)).unwrap();
    let mut stop: Option<(f64, f64)> = None;
    let mut e_prev = f64::INFINITY;
    sim.run(|sim| {
        let (t, q, v) = (sim.time(), sim.q(s), sim.v(s));
        let speed = v[0].hypot(v[1]);
        let dist = q[0].hypot(q[1]);
        // The displacement keeps the initial direction.
        assert!((q[1] * phi.cos() - q[0] * phi.sin()).abs() <= 1e-12 * (1.0 + dist));
        if stop.is_none() && t > 0.0 && sim.contact_status(c) == [1.0] {
            stop = Some((t, dist));
        }
        if t > 0.0 && stop.is_none() {
            assert_eq!(sim.contact_status(c), &[2.0], "t = {t}");
            let l = sim.lambda(c);
            let lt = l[1].hypot(l[2]);
            assert!((lt - mu * l[0]).abs() <= 1e-10 * l[0], "t = {t}: {l:?}");
            // Opposite to the sliding velocity.
            let cos = (l[1] * v[0] + l[2] * v[1]) / (lt * speed);
            assert!(cos <= -1.0 + 1e-10, "t = {t}: cos = {cos}");
        }
        if stop.is_some() {
            assert!(speed <= 1e-12, "t = {t}: speed {speed}");
        }
        let e = 0.25 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        assert!(e <= e_prev * (1.0 + 1e-12));
        e_prev = e;
    })
    .unwrap();
    let (ts, ds) = stop.expect("the puck stops");
    assert!(
        ts >= t_stop && ts - t_stop <= h,
        "stopped at {ts}, analytic {t_stop}"
    );
    assert!(
        (ds - d_stop).abs() <= mu * G * h * h,
        "stopped after {ds}, analytic {d_stop}"
    );
}

#[test]
fn a_falling_block_with_restitution_bounces_and_slides() {
    // Dropped with a tangential velocity on a frictionless-in-the-normal
    // sense Newton law: the first impact reverses the normal velocity by e
    // and the tangential impulse is μ P_N while the contact slides.
    let (mu, e, h) = (0.1, 0.5, 1e-4);
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "ball",
            LagrangianLinearTi::new(
                dvector![0.0, 0.2],
                dvector![3.0, 0.0],
                DMatrix::identity(2, 2),
            )
            .with_fext(TimeVector::Constant(dvector![0.0, -G])),
        )
        .unwrap();
    let c = b
        .add_interaction(
            "floor",
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
    let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, 0.25)).unwrap();
    let mut impact = None;
    sim.run(|sim| {
        if impact.is_none() && sim.lambda(c)[0] > 0.0 {
            impact = Some((sim.v(s)[0], sim.v(s)[1], sim.lambda(c)[0], sim.lambda(c)[1]));
        }
    })
    .unwrap();
    let (vx, vz, pn, pt) = impact.expect("an impact");
    let vz_in = (2.0 * G * 0.2).sqrt();
    // U_N⁺ = −e U_N⁻ (the impact step's incoming velocity is within h g of vz_in).
    assert!((vz - e * vz_in).abs() <= 2.0 * G * h, "vz = {vz}");
    assert!((pt + mu * pn).abs() <= 1e-10 * pn, "P_T = {pt}, P_N = {pn}");
    assert!((vx - (3.0 - mu * pn)).abs() <= 1e-12);
}

/// Two point masses on the floor joined by a rigid horizontal bar
/// (`Equality` law, x₂ − x₁ = L), sliding with friction μ₁ and μ₂: the pair
/// decelerates at g(μ₁ + μ₂)/2 and stops at t = v0/a; while both slide the
/// bar carries the impulse m h g (μ₁ − μ₂)/2 per step. A mixed problem:
/// the equality is eliminated onto the two frictional contacts.
#[test]
fn two_masses_joined_by_a_bar_slide_with_the_mean_friction() {
    let (m, l, v0, h) = (1.0, 0.5, 2.0, 1e-3);
    let (mu1, mu2) = (0.1, 0.4);
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "pair",
            LagrangianLinearTi::new(
                dvector![0.0, 0.0, l, 0.0],
                dvector![v0, 0.0, v0, 0.0],
                DMatrix::identity(4, 4) * m,
            )
            .with_fext(TimeVector::Constant(dvector![0.0, -m * G, 0.0, -m * G])),
        )
        .unwrap();
    let mut contacts = vec![];
    for (k, mu) in [mu1, mu2].into_iter().enumerate() {
        let mut hm = DMatrix::zeros(2, 4);
        hm[(0, 2 * k + 1)] = 1.0;
        hm[(1, 2 * k)] = 1.0;
        contacts.push(
            b.add_interaction(
                &format!("floor{k}"),
                &[s],
                LagrangianLinearTiR::new(hm),
                NonsmoothLaw::NewtonImpactFriction {
                    dimension: 2,
                    restitution: 0.0,
                    tangential_restitution: 0.0,
                    friction: mu,
                },
            )
            .unwrap(),
        );
    }
    let bar = b
        .add_interaction(
            "bar",
            &[s],
            LagrangianLinearTiR::new(dmatrix![-1.0, 0.0, 1.0, 0.0]).with_b(dvector![-l]),
            NonsmoothLaw::Equality { size: 1 },
        )
        .unwrap();
    let a = G * (mu1 + mu2) / 2.0;
    let t_stop = v0 / a;
    let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, t_stop + 0.3)).unwrap();
    let mut stopped = None;
    sim.run(|sim| {
        let (t, q, v) = (sim.time(), sim.q(s), sim.v(s));
        assert!((q[2] - q[0] - l).abs() <= 1e-12, "t = {t}: bar length");
        assert!(q[1].abs() <= 1e-12 && q[3].abs() <= 1e-12);
        if stopped.is_none() && v[0] <= 1e-12 {
            stopped = Some(t);
        }
        if t > 0.0 && stopped.is_none() {
            assert!(
                (v[0] - (v0 - a * t)).abs() <= 1e-10,
                "t = {t}: {} vs {}",
                v[0],
                v0 - a * t
            );
            assert!((v[2] - v[0]).abs() <= 1e-12);
            let p = sim.lambda(bar)[0];
            assert!(
                (p.abs() - m * h * G * (mu2 - mu1) / 2.0).abs() <= 1e-10,
                "t = {t}: {p}"
            );
            for &c in &contacts {
                assert_eq!(sim.contact_status(c), &[2.0]);
            }
        }
        if stopped.is_some() {
            assert!(v[0].abs() <= 1e-12 && v[2].abs() <= 1e-12, "t = {t}");
        }
    })
    .unwrap();
    let ts = stopped.expect("the pair stops");
    assert!(
        ts >= t_stop && ts - t_stop <= h,
        "stopped at {ts}, analytic {t_stop}"
    );
}

/// Frictionless impact rows and contacts of another dimension beside
/// frictional ones: a ball bouncing on a frictionless floor (`NewtonImpact`)
/// and a 2D block sliding on a slope in a model that also holds a 3D puck
/// contact. Each motion is the one it has alone (impact times to 1e-12,
/// the sliding parabola to 1e-10).
#[test]
fn frictionless_and_two_and_three_dimensional_contacts_share_one_problem() {
    let alpha = 30f64.to_radians();
    let mut b = ModelBuilder::new();
    let ball = b
        .add_system(
            "ball",
            LagrangianLinearTi::new(dvector![1.0], dvector![0.0], DMatrix::identity(1, 1))
                .with_fext(TimeVector::Constant(dvector![-G])),
        )
        .unwrap();
    b.add_interaction(
        "floor",
        &[ball],
        LagrangianLinearTiR::new(dmatrix![1.0]),
        NonsmoothLaw::NewtonImpact {
            size: 1,
            restitution: 0.8,
        },
    )
    .unwrap();
    let (slope_model, _, _) = block(alpha, 0.3, -0.5);
    let (puck_model, _, _) = puck(0.25, 3.0, 0.7);
    let s = b
        .add_system("block", slope_model.systems()[0].ds.clone())
        .unwrap();
    b.add_interaction(
        "contact",
        &[s],
        LagrangianLinearTiR::new(dmatrix![0.0, 1.0; 1.0, 0.0]),
        slope_model.interactions()[0].law.clone(),
    )
    .unwrap();
    let p = b
        .add_system("puck", puck_model.systems()[0].ds.clone())
        .unwrap();
    b.add_interaction(
        "ice",
        &[p],
        LagrangianLinearTiR::new(dmatrix![0.0, 0.0, 1.0; 1.0, 0.0, 0.0; 0.0, 1.0, 0.0]),
        puck_model.interactions()[0].law.clone(),
    )
    .unwrap();
    let h = 1e-3;
    let mut mixed = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, 2.0)).unwrap();
    let mut alone = {
        let mut b = ModelBuilder::new();
        let ball = b
            .add_system(
                "ball",
                LagrangianLinearTi::new(dvector![1.0], dvector![0.0], DMatrix::identity(1, 1))
                    .with_fext(TimeVector::Constant(dvector![-G])),
            )
            .unwrap();
        b.add_interaction(
            "floor",
            &[ball],
            LagrangianLinearTiR::new(dmatrix![1.0]),
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution: 0.8,
            },
        )
        .unwrap();
        TimeStepping::new(b.build(), TimeSteppingSettings::new(h, 2.0)).unwrap()
    };
    let a = -G * (alpha.sin() - 0.3 * alpha.cos());
    let mut impacts = 0;
    while let nonsmooth::simulation::StepOutcome::Advanced { t, .. } = mixed.step().unwrap() {
        alone.step().unwrap();
        let (qa, qb) = (mixed.q(SystemId(0))[0], alone.q(SystemId(0))[0]);
        assert!((qa - qb).abs() <= 1e-12, "t = {t}: ball {qa} vs {qb}");
        if mixed.lambda(InteractionId(0))[0] > 0.0 {
            impacts += 1;
        }
        let x = mixed.q(s)[0];
        let exact = -0.5 * t + 0.5 * a * t * t;
        assert!((x - exact).abs() <= 1e-10, "t = {t}: block {x} vs {exact}");
        assert!(mixed.q(p)[2].abs() <= 1e-12);
    }
    assert!(impacts > 0);
}

#[test]
fn bad_friction_law_values_are_refused() {
    for (dimension, e, mu) in [
        (4, 0.0, 0.1),
        (2, 1.5, 0.1),
        (3, 0.0, -0.1),
        (2, 0.0, f64::NAN),
    ] {
        let mut b = ModelBuilder::new();
        let s = b
            .add_system(
                "p",
                LagrangianLinearTi::new(
                    DVector::zeros(4),
                    DVector::zeros(4),
                    DMatrix::identity(4, 4),
                ),
            )
            .unwrap();
        let r = b.add_interaction(
            "a",
            &[s],
            LagrangianLinearTiR::new(DMatrix::identity(dimension, 4)),
            NonsmoothLaw::NewtonImpactFriction {
                dimension,
                restitution: e,
                tangential_restitution: 0.0,
                friction: mu,
            },
        );
        assert!(r.is_err(), "{dimension} {e} {mu}");
    }
}

/// With θ = 1 the discrete energy balance of a step is
/// E_{k+1} − E_k = P·U_{k+1} − ½ m ‖v_{k+1} − v_k‖² for a constant force,
/// and Coulomb's law with e = 0 gives P·U_{k+1} = 0 (separated, sticking) or
/// P_T·U_T = −μ P_N ‖U_T‖ ≤ 0 (sliding): the energy never increases, through
/// every transition. (With θ = 1/2 the balance is ½ P·(U_k + U_{k+1}), which
/// a step that ends sticking can make positive by O(h²).)
#[test]
fn energy_never_increases_with_theta_one() {
    let alpha = 20f64.to_radians();
    let cases: Vec<(Model, SystemId, f64)> = vec![
        (block(alpha, 0.2, 2.0).0, SystemId(0), alpha),
        (block(alpha, 0.6, 2.0).0, SystemId(0), alpha),
        (block(alpha, 0.3, -1.0).0, SystemId(0), alpha),
    ];
    for (k, (model, s, alpha)) in cases.into_iter().enumerate() {
        let mut settings = TimeSteppingSettings::new(1e-3, 2.0);
        settings.theta = 1.0;
        let mut sim = TimeStepping::new(model, settings).unwrap();
        let mut e_prev = slope_energy(alpha, sim.q(s), sim.v(s));
        sim.run(|sim| {
            let e = slope_energy(alpha, sim.q(s), sim.v(s));
            assert!(
                e <= e_prev + 1e-12 * e_prev.abs().max(1.0),
                "case {k}, t = {}",
                sim.time()
            );
            e_prev = e;
        })
        .unwrap();
    }
    let (model, s, _) = puck(0.25, 3.0, 0.7);
    let mut settings = TimeSteppingSettings::new(1e-3, 2.0);
    settings.theta = 1.0;
    let mut sim = TimeStepping::new(model, settings).unwrap();
    let mut e_prev = f64::INFINITY;
    sim.run(|sim| {
        let (q, v) = (sim.q(s), sim.v(s));
        let e = 0.25 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * G * q[2];
        assert!(e <= e_prev + 1e-12, "puck, t = {}", sim.time());
        e_prev = e;
    })
    .unwrap();
}
