//! The numerical study of the switching control of the two-link arm
//! (examples/manipulator.toml), beside the published tables of the Siconos
//! control-toolbox paper: the length λ(I₁) of the first transition phase and
//! the number n_i of its impacts against the step h and the restitution e_N,
//! the effect of γ₂ (n_i, the height H of the first jump, λ(I₁)) with
//! γ₁ = 25, and of γ₁ with γ₁γ₂ = 800 (tracking error), and the CPU time of
//! one 5 s cycle.
//!
//! Run: `cargo run --release -p nonsmooth-controllers --example manipulator_study`
//! (add `--full` for h = 1e-6 in the e_N table as well).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use nonsmooth::modelling::models::TwoLinkArm;
use nonsmooth::simulation::StepOutcome;
use nonsmooth_controllers::Catalog;
use nonsmooth_scenario::Scenario;

/// What one run measures of the first transition (t ∈ [τ₀, t_c]).
struct Run {
    /// λ(I₁) = t_c − τ₀ (s).
    length: f64,
    /// Impacts of the transition.
    impacts: f64,
    /// Time of the first impact (s).
    first_impact: f64,
    /// The highest tip between the first and the second impact (m).
    first_jump: f64,
    /// Largest tip tracking error in free motion after the first lift-off,
    /// t ∈ [5.5, 7.4] (m), when the run goes that far.
    tracking: f64,
    /// Wall time of the whole run (s) and simulated time (s).
    cpu: f64,
    simulated: f64,
    newton_per_step: f64,
}

fn run(sets: &[(&str, f64)]) -> Run {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/manipulator.toml");
    let mut s = Scenario::from_file(path).expect("the example reads");
    for (k, v) in sets {
        s.set_parameter(k, *v).expect("a parameter of the example");
    }
    let built = s.build_with(Arc::new(Catalog)).expect("the example builds");
    let start = Instant::now();
    let mut cl = built.control_loop().expect("the loop builds");
    let model = cl.plant().model().clone();
    let arm_id = model.system_id("arm").unwrap();
    let ground = model.interaction_id("ground").unwrap();
    let ctl = cl.controller_id("controller").unwrap();
    let arm = TwoLinkArm::study();
    let (mut length, mut impacts, mut first_impact) = (f64::NAN, 0.0, f64::NAN);
    let mut first_jump = 0.0f64;
    let mut tracking = 0.0f64;
    while let StepOutcome::Advanced { t, .. } = cl.step().expect("the run succeeds") {
        let sig = |n: &str| cl.controller_signal(ctl, n).unwrap();
        let tr = sig("transition");
        if length.is_nan() && tr[1].is_finite() {
            length = tr[1] - tr[0];
            impacts = sig("impacts")[0];
        }
        if length.is_nan() {
            let count = sig("impacts")[0];
            if count >= 1.0 {
                first_impact = sig("first_impact")[0];
            }
            // Between the first and the second impact: the first jump.
            if count == 1.0 && cl.plant().lambda(ground)[0] == 0.0 {
                first_jump = first_jump.max(arm.tip(cl.plant().q(arm_id))[1]);
            }
        }
        if (5.5..=7.4).contains(&t) {
            let p = arm.tip(cl.plant().q(arm_id));
            let r = sig("reference");
            tracking = tracking.max(((p[0] - r[0]).powi(2) + (p[1] - r[1]).powi(2)).sqrt());
        }
    }
    let st = cl.plant().statistics();
    Run {
        length,
        impacts,
        first_impact,
        first_jump,
        tracking,
        cpu: start.elapsed().as_secs_f64(),
        simulated: cl.time(),
        newton_per_step: st.newton_iterations as f64 / st.steps as f64,
    }
}

/// e_N of the gain studies: the seed's n_i there (65 at γ₂ = 30) is that of
/// its e_N = 0.95 row at h = 1e-4 (67).
const E_GAMMA: f64 = 0.95;

fn main() {
    let full = std::env::args().any(|a| a == "--full");
    let steps = [1e-3, 1e-4, 1e-5, 1e-6];

    println!("## λ(I₁) and CPU per 5 s cycle against h (e_N = 0.7, γ₁ = 25, γ₂ = 30)\n");
    println!(
        "| h | λ(I₁) [s] | seed λ(I₁) | CPU per cycle | seed CPU (2008) | ratio | Newton/step |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let seed_len = [0.945, 0.9536, 0.9525, 0.9523];
    let seed_cpu = [1.5, 11.2, 111.3, 1072.2];
    for (k, &h) in steps.iter().enumerate() {
        let r = run(&[("step", h), ("cycles", 1.0)]);
        let per_cycle = r.cpu * 5.0 / r.simulated;
        println!(
            "| {h:e} | {:.4} | {} | {:.4} s | {} s | {:.0}× | {:.2} |",
            r.length,
            seed_len[k],
            per_cycle,
            seed_cpu[k],
            seed_cpu[k] / per_cycle,
            r.newton_per_step
        );
    }

    println!("\n## n_i against e_N and h (γ₁ = 25, γ₂ = 30); seed's value in brackets\n");
    let seed_ni = [
        [3, 5, 6, 8],
        [6, 9, 12, 16],
        [9, 16, 23, 29],
        [23, 40, 64, 81],
        [32, 67, 108, 161],
    ];
    let cols = if full { 4 } else { 3 };
    print!("| e_N |");
    for h in &steps[..cols] {
        print!(" h = {h:e} |");
    }
    println!(" λ(I₁) at h = 1e-4 |");
    println!("|---|{}---:|", "---:|".repeat(cols));
    for (i, e) in [0.2, 0.5, 0.7, 0.9, 0.95].iter().enumerate() {
        print!("| {e} |");
        let mut len = f64::NAN;
        for (k, &h) in steps[..cols].iter().enumerate() {
            let r = run(&[("step", h), ("cycles", 1.0), ("restitution", *e)]);
            print!(" {} ({}) |", r.impacts, seed_ni[i][k]);
            if h == 1e-4 {
                len = r.length;
            }
        }
        println!(" {len:.4} |");
    }

    println!("\n## γ₂ with γ₁ = 25 (h = 1e-4, e_N = {E_GAMMA}); seed's value in brackets\n");
    println!("| γ₂ | n_i | H [m] | λ(I₁) [s] | first impact after τ₀ [s] |");
    println!("|---:|---:|---:|---:|---:|");
    let seed_g2 = [
        (2.0, 101, 0.01091, 4.088),
        (30.0, 65, 0.00124, 0.313),
        (55.0, 58, 0.00056, 0.148),
    ];
    for (g2, n, hh, l) in seed_g2 {
        let r = run(&[("gamma2", g2), ("cycles", 2.0), ("restitution", E_GAMMA)]);
        println!(
            "| {g2} | {} ({n}) | {:.5} ({hh}) | {:.4} ({l}) | {:.4} |",
            r.impacts,
            r.first_jump,
            r.length,
            r.first_impact - 2.4
        );
    }

    println!("\n## γ₁ with γ₁γ₂ = 800 (h = 1e-4, e_N = {E_GAMMA})\n");
    println!(
        "| γ₁ | γ₂ | largest tracking error after lift-off, t ∈ [5.5, 7.4] [m] | λ(I₁) [s] | n_i |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for g1 in [10.0, 20.0, 40.0, 80.0] {
        let r = run(&[
            ("gamma1", g1),
            ("gamma2", 800.0 / g1),
            ("cycles", 2.0),
            ("restitution", E_GAMMA),
        ]);
        println!(
            "| {g1} | {} | {:.3e} | {:.4} | {} |",
            800.0 / g1,
            r.tracking,
            r.length,
            r.impacts
        );
    }
}
