//! Mixed problems inside time-stepping: two point masses joined by a rigid
//! bar (an `equality` law on the bar's length, linearised at every Newton
//! iterate of the step) falling onto the ground with Newton impacts, so that
//! the one-step problem is an MLCP (the bar's equality row, then the
//! contacts' complementarity rows). Oracles, all recomputed here from q, v
//! and the impulses: the free fall of the centre of mass, the bar's
//! constraint at velocity and position level, the MLCP's residual (the
//! dynamics M Δv = hF + Jᵀ P_bar + Hᵀ P and 0 ≤ U⁺ + e U ⊥ P ≥ 0) and the
//! discrete energy balance. And a first-order system with a
//! `mixed_complementarity` law (one equality row, one complementarity row)
//! against its closed form.

mod common;

use nonsmooth::modelling::{InteractionId, SystemId};
use nonsmooth::simulation::{ProblemFamily, StepOutcome, TimeStepping, TimeSteppingSettings};

const MASS: [f64; 2] = [1.0, 2.0];
const G: f64 = 9.81;
const LEN: f64 = 1.0;
const E: f64 = 0.5;
const Z1: f64 = 0.5;
const T_END: f64 = 1.5;
const EPS: f64 = f64::EPSILON;

/// The state after a step: q and v of both masses (x₁, z₁, x₂, z₂), the
/// bar's impulse, the contacts' impulses and activity.
#[derive(Clone, Copy, Debug)]
struct Snap {
    t: f64,
    q: [f64; 4],
    v: [f64; 4],
    p_bar: f64,
    p_ground: [f64; 2],
    active: [bool; 2],
}

fn snap(
    sim: &TimeStepping,
    masses: [SystemId; 2],
    bar: InteractionId,
    ground: [InteractionId; 2],
) -> Snap {
    let (q1, q2) = (sim.q(masses[0]), sim.q(masses[1]));
    let (v1, v2) = (sim.v(masses[0]), sim.v(masses[1]));
    Snap {
        t: sim.time(),
        q: [q1[0], q1[1], q2[0], q2[1]],
        v: [v1[0], v1[1], v2[0], v2[1]],
        p_bar: sim.lambda(bar)[0],
        p_ground: [sim.lambda(ground[0])[0], sim.lambda(ground[1])[0]],
        active: [sim.is_active(ground[0]), sim.is_active(ground[1])],
    }
}

/// Runs to T_END with step h under the default settings (θ = ½, Newton
/// tolerance 1e-10, solver tolerance 1e-10); returns the settings and the
/// state at t₀ and after every step. Every step's MLCP is reported solved:
/// an unsolved one makes `step` return `SolverFailed`.
fn run(h: f64) -> (TimeSteppingSettings, Vec<Snap>) {
    let (model, masses, bar, ground) = common::two_masses_bar(Z1, E);
    let settings = TimeSteppingSettings::new(h, T_END);
    let mut sim = TimeStepping::new(model, settings.clone()).unwrap();
    assert_eq!(sim.problem_family(), ProblemFamily::Mlcp);
    let mut out = vec![snap(&sim, masses, bar, ground)];
    while let StepOutcome::Advanced { .. } = sim.step().unwrap() {
        if sim.statistics().steps as usize == out.len() {
            out.push(snap(&sim, masses, bar, ground));
        }
    }
    assert_eq!(out.len() as f64, (T_END / h).round() + 1.0);
    (settings, out)
}

/// J(q) = ∂|p₁ − p₂|/∂q = (dᵀ, −dᵀ)/|d|, d = p₁ − p₂, written here apart
/// from the model's.
fn bar_jacobian(q: &[f64; 4]) -> [f64; 4] {
    let (dx, dz) = (q[0] - q[2], q[1] - q[3]);
    let n = (dx * dx + dz * dz).sqrt();
    [dx / n, dz / n, -dx / n, -dz / n]
}

fn bar_length(q: &[f64; 4]) -> f64 {
    (q[0] - q[2]).hypot(q[1] - q[3])
}

fn dot(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Numbers in scientific notation, for messages.
fn sci(v: &[f64]) -> String {
    let s: Vec<String> = v.iter().map(|x| format!("{x:.3e}")).collect();
    s.join(", ")
}

fn norm_inf(a: &[f64; 4]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

const M: [f64; 4] = [MASS[0], MASS[0], MASS[1], MASS[1]];
const F: [f64; 4] = [0.0, -MASS[0] * G, 0.0, -MASS[1] * G];

/// E = ½ Σ mᵢ|vᵢ|² + Σ mᵢ g zᵢ.
fn energy(s: &Snap) -> f64 {
    let kinetic: f64 = (0..4).map(|k| 0.5 * M[k] * s.v[k] * s.v[k]).sum();
    kinetic + G * (MASS[0] * s.q[1] + MASS[1] * s.q[3])
}

/// Index of the first state reached with a contact impulse.
fn first_impact(snaps: &[Snap]) -> usize {
    snaps
        .iter()
        .position(|s| s.p_ground.iter().any(|&p| p > 0.0))
        .expect("the bar reaches the ground")
}

/// Bound on |J(q_{k+1}) − J_step|, J_step the Jacobian of the step's last
/// problem, taken at the Newton iterate before q_{k+1}: the loop stops when
/// the velocity changes by at most tol·(1 + ‖v‖∞), so q moves by at most
/// hθ·tol·(1 + ‖v‖∞) afterwards, and each entry of J has a gradient of
/// 1-norm at most 2/|d| = 2/L.
fn jacobian_shift(s: &TimeSteppingSettings, v: &[f64; 4]) -> f64 {
    let dq = s.step * s.theta * s.newton_tolerance * (1.0 + norm_inf(v));
    2.0 * 4.0 * dq / LEN
}

#[test]
fn every_step_is_a_solved_mlcp_whose_residual_is_recomputed() {
    let (settings, snaps) = run(1e-3);
    let h = settings.step;
    let (mut mixed, mut worst_jv, mut worst_dyn, mut worst_comp) = (0, 0.0f64, 0.0f64, 0.0f64);
    for w in snaps.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let j = bar_jacobian(&b.q);
        // The equality row: J v_{k+1} = 0 (bound of the issue).
        let jv = dot(&j, &b.v).abs();
        assert!(jv <= 1e-12, "t = {}: J v = {jv:.3e}", b.t);
        worst_jv = worst_jv.max(jv);
        // The dynamics that tie λ to v: M (v_{k+1} − v_k) = hF + Jᵀ P_bar + Hᵀ P,
        // up to the Newton bound on J and the rounding of each term.
        let hp = [0.0, b.p_ground[0], 0.0, b.p_ground[1]];
        let shift = jacobian_shift(&settings, &b.v);
        for c in 0..4 {
            let terms = [
                M[c] * b.v[c],
                -M[c] * a.v[c],
                -h * F[c],
                -j[c] * b.p_bar,
                -hp[c],
            ];
            let res = terms.iter().sum::<f64>().abs();
            let bound =
                shift * b.p_bar.abs() + 8.0 * EPS * terms.iter().map(|x| x.abs()).sum::<f64>();
            assert!(
                res <= bound,
                "t = {}: dynamics row {c}: {res:.3e} > {bound:.3e}",
                b.t
            );
            worst_dyn = worst_dyn.max(res);
        }
        // The complementarity rows: 0 ≤ U_{k+1} + e U_k ⊥ P ≥ 0 on active
        // contacts (to the solver's tolerance), P = 0 on the others.
        for c in 0..2 {
            let (uk, u1, p) = (a.v[2 * c + 1], b.v[2 * c + 1], b.p_ground[c]);
            if !b.active[c] {
                assert_eq!(p, 0.0, "t = {}: inactive contact {c} has an impulse", b.t);
                continue;
            }
            let wv = u1 + E * uk;
            let tol = settings.solver_settings.tolerance * (1.0 + u1.abs() + p.abs());
            let res = (-wv).max(0.0).max(-p).max((wv * p).abs());
            assert!(
                res <= tol,
                "t = {}: contact {c}: w = {wv:.3e}, P = {p:.3e}",
                b.t
            );
            worst_comp = worst_comp.max(res);
            if p > 0.0 {
                mixed += 1;
            }
        }
    }
    println!(
        "h = {h}: {mixed} steps with the bar's equality and a contact impulse; worst |J v| {worst_jv:.3e}, dynamics {worst_dyn:.3e}, complementarity {worst_comp:.3e}"
    );
    // Measured: 547 mixed steps; |J v| ≤ 9.5e-14, dynamics 5.7e-13,
    // complementarity 1.7e-14.
    assert!(mixed >= 10, "too few genuinely mixed steps: {mixed}");
}

#[test]
fn centre_of_mass_falls_freely_until_the_first_impact() {
    // The bar's impulse Jᵀ P_bar sums to zero over the two masses, so the
    // scheme moves the centre of mass by v_c ← v_c − g h and
    // z_c ← z_c + h (v_c + v_c⁺)/2, exact for a constant acceleration: the
    // analytic free fall z_c(t) = z_c(0) − g t²/2 (it starts at rest)
    // holds to rounding until a contact impulse.
    let (settings, snaps) = run(1e-3);
    let n = first_impact(&snaps);
    let centre = |s: &Snap, k: usize| (MASS[0] * s.q[k] + MASS[1] * s.q[k + 2]) / 3.0;
    let velocity = |s: &Snap, k: usize| (MASS[0] * s.v[k] + MASS[1] * s.v[k + 2]) / 3.0;
    let (x0, z0) = (centre(&snaps[0], 0), centre(&snaps[0], 1));
    let mut worst: f64 = 0.0;
    for (k, s) in snaps[..n].iter().enumerate() {
        let t = s.t;
        let errs = [
            centre(s, 0) - x0,
            centre(s, 1) - (z0 - 0.5 * G * t * t),
            velocity(s, 0),
            velocity(s, 1) + G * t,
        ];
        // Rounding: a few ε of the largest magnitude per step, accumulated.
        let bound = 8.0 * EPS * (k as f64 + 1.0) * (1.0 + z0.abs() + G * t);
        for e in errs {
            assert!(e.abs() <= bound, "t = {t}: {errs:?} > {bound:.3e}");
            worst = worst.max(e.abs());
        }
    }
    // Measured: first impact at t = 0.213 s, worst error 4.7e-15.
    println!(
        "h = {}: first impact at t = {}, worst centre-of-mass error {worst:.3e}",
        settings.step, snaps[n].t
    );
    assert!(n > 100, "the free fall lasts ~0.21 s: {n} steps");
}

#[test]
fn the_bar_length_drifts_at_order_two_in_h() {
    // J v_{k+1} = 0 at each step keeps the length only to O(h³) per step;
    // before the impacts (a free rotation) the drift is even O(h³) per unit
    // time, the impacts (O(1) jumps of the relative velocity) make it O(h²).
    // Halving h must divide the worst drift over the run by 4 (order 2:
    // band [3.5, 4.5], which an O(h) or O(h³) drift fails) and the drift
    // before the first impact by at least 3.5 (no worse than order 2).
    let mut worst = vec![];
    let mut before = vec![];
    for h in [1e-3, 5e-4, 2.5e-4] {
        let (_, snaps) = run(h);
        let drift = |s: &[Snap]| {
            s.iter()
                .fold(0.0f64, |m, x| m.max((bar_length(&x.q) - LEN).abs()))
        };
        worst.push(drift(&snaps));
        before.push(drift(&snaps[..first_impact(&snaps)]));
    }
    let ratio = |v: &[f64]| v.windows(2).map(|w| w[0] / w[1]).collect::<Vec<_>>();
    let (r_all, r_before) = (ratio(&worst), ratio(&before));
    // Measured: worst 1.55e-6, 3.76e-7, 9.39e-8 (ratios 4.12, 4.01);
    // before the impact 2.14e-9, 2.69e-10, 3.36e-11 (ratios 7.97, 8.00).
    println!(
        "drift {} ratios {r_all:?}; before the impact {} ratios {r_before:?}",
        sci(&worst),
        sci(&before)
    );
    for r in r_all {
        assert!(
            (3.5..=4.5).contains(&r),
            "drift ratio {r} (order 2 expected)"
        );
    }
    for r in r_before {
        assert!(
            r >= 3.5,
            "drift ratio before the impact {r} (order ≥ 2 expected)"
        );
    }
    // O(h²) per unit time: the worst drift at h = 1e-3 over 1.5 s.
    assert!(worst[0] <= 1e-5, "drift {:.3e}", worst[0]);
}

#[test]
fn impacts_dissipate_and_the_energy_balance_is_exact() {
    // θ = ½ and constant forces: M Δv = hF + Jᵀ P_bar + Hᵀ P and
    // Δq = h (v_k + v_{k+1})/2 give E_{k+1} − E_k = ½ P_bar J (v_k + v_{k+1})
    // + ½ Σ P (U_k + U_{k+1}) exactly. With U_{k+1} = −e U_k the contact
    // term is ½ P (1 − e) U_k < 0 at an impact (U_k < 0). The bar's term is
    // not zero (J of the step is not J of q_k): a linearised constraint does
    // work O(h²) per step, and a contact active while separating (U_k > 0)
    // too (docs/simulation.md, "Energy"): after the first impact the energy
    // gains, summed, are O(h) and halve with h.
    let mut gains = vec![];
    for h in [1e-3, 5e-4, 2.5e-4] {
        let (settings, snaps) = run(h);
        let n = first_impact(&snaps);
        let (mut gain, mut impacts, mut worst_identity) = (0.0, 0, 0.0f64);
        for (k, w) in snaps.windows(2).enumerate() {
            let (a, b) = (&w[0], &w[1]);
            let j = bar_jacobian(&b.q);
            let vsum: [f64; 4] = std::array::from_fn(|c| a.v[c] + b.v[c]);
            let w_bar = 0.5 * b.p_bar * dot(&j, &vsum);
            let w_contact: f64 = (0..2)
                .map(|c| 0.5 * b.p_ground[c] * (a.v[2 * c + 1] + b.v[2 * c + 1]))
                .sum();
            let (ea, eb) = (energy(a), energy(b));
            let de = eb - ea;
            // The Jacobian's Newton bound times the velocities, and rounding of E.
            let bound = jacobian_shift(&settings, &b.v)
                * b.p_bar.abs()
                * vsum.iter().map(|x| x.abs()).sum::<f64>()
                + 64.0 * EPS * (ea.abs() + eb.abs() + w_contact.abs());
            assert!(
                (de - w_bar - w_contact).abs() <= bound,
                "h = {h}, t = {}: ΔE {de:.6e} ≠ {w_bar:.6e} + {w_contact:.6e}",
                b.t
            );
            worst_identity = worst_identity.max((de - w_bar - w_contact).abs());
            // An impact: a contact approaching faster than a resting one can
            // (|U| ≤ g h) gets an impulse. It dissipates.
            for c in 0..2 {
                if b.p_ground[c] > 0.0 && a.v[2 * c + 1] < -G * h {
                    impacts += 1;
                    assert!(
                        w_contact < 0.0 && de < 0.0,
                        "h = {h}, t = {}: impact of mass {c}: ΔE {de:.3e}",
                        b.t
                    );
                }
            }
            if k + 1 >= n {
                gain += de.max(0.0);
            }
        }
        // Measured (h = 1e-3): 13 impacts, identity to 6.4e-13.
        println!("h = {h}: {impacts} impacts, energy identity to {worst_identity:.3e}, gains after the first impact {gain:.3e}");
        assert!(
            impacts >= 4,
            "both masses hit the ground, mass 1 several times: {impacts}"
        );
        gains.push(gain);
    }
    // Measured: gains 2.91e-5, 1.44e-5, 6.83e-6 (ratios 2.02, 2.10), against
    // 7 J lost at the first impact alone.
    for w in gains.windows(2) {
        let r = w[0] / w[1];
        assert!(
            (1.75..=2.25).contains(&r),
            "energy gains {}: ratio {r} (order 1 expected)",
            sci(&gains)
        );
    }
    assert!(
        gains[0] <= 1e-4,
        "energy gained after the impact {:.3e}",
        gains[0]
    );
}

#[test]
fn mixed_complementarity_law_links_two_states_onto_a_floor() {
    // ẋ₁ = −a₁ + r₁, ẋ₂ = −a₂ + r₂ with one `mixed_complementarity`
    // interaction: row 1 (equality) y₁ = x₁ − x₂ = 0, row 2 (complementarity)
    // 0 ≤ y₂ = x₁ + x₂ ⊥ λ₂ ≥ 0, and r = Cᵀ λ. Closed form from
    // x₁ = x₂ = x₀: both fall at (a₁ + a₂)/2 with λ₁ = (a₁ − a₂)/2 until
    // t* = 2x₀/(a₁ + a₂), then rest at 0 with λ₂ = (a₁ + a₂)/2. The
    // solution is piecewise linear in t, which Euler–Moreau integrates
    // exactly, and the step that crosses t* ends at 0: the run equals the
    // closed form at every step to rounding (a few ε of the values).
    use nalgebra::{dmatrix, dvector, DMatrix};
    use nonsmooth::modelling::*;
    let (a1, a2, x0) = (3.0, 1.0, 0.5);
    let mut b = ModelBuilder::new();
    let s = b
        .add_system(
            "pair",
            FirstOrderLinear::new(dvector![x0, x0], DMatrix::zeros(2, 2))
                .with_b(TimeVector::Constant(dvector![-a1, -a2])),
        )
        .unwrap();
    let c = dmatrix![1.0, -1.0; 1.0, 1.0];
    let link = b
        .add_interaction(
            "link",
            &[s],
            FirstOrderLinearTi::new(c.clone(), c.transpose()),
            NonsmoothLaw::MixedComplementarity {
                equalities: 1,
                inequalities: 1,
            },
        )
        .unwrap();
    let h = 1e-2;
    let mut sim = TimeStepping::new(b.build(), TimeSteppingSettings::new(h, 1.0)).unwrap();
    assert_eq!(sim.problem_family(), ProblemFamily::Mlcp);
    let (speed, t_star) = ((a1 + a2) / 2.0, 2.0 * x0 / (a1 + a2));
    let mut resting = 0;
    while let StepOutcome::Advanced { t, .. } = sim.step().unwrap() {
        let (x, l) = (sim.x(s), sim.lambda(link));
        let exact = (x0 - speed * t).max(0.0);
        let tol = 16.0 * EPS * (x0 + speed * t);
        assert!(
            (x[0] - exact).abs() <= tol && (x[1] - exact).abs() <= tol,
            "t = {t}: x = {x:?}, exact {exact}"
        );
        if t == 0.0 {
            continue; // t₀: the first output, no step yet.
        }
        if t < t_star - h / 2.0 {
            assert!(
                (l[0] - (a1 - a2) / 2.0).abs() <= 16.0 * EPS * a1 && l[1] == 0.0,
                "t = {t}: λ = {l:?}"
            );
        } else if t > t_star + h / 2.0 {
            assert!(
                (l[0] - (a1 - a2) / 2.0).abs() <= 16.0 * EPS * a1
                    && (l[1] - speed).abs() <= 16.0 * EPS * a1,
                "t = {t}: λ = {l:?}"
            );
            resting += 1;
        }
    }
    // t* = 0.25: 75 steps at rest.
    assert_eq!(resting, 75);
}
