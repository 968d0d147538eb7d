//! Settled piles: spheres of radius 0.5 and mass 1 dropped from a lattice
//! (centre spacing 1.1) into a box, μ = 0.3, e = 0, h = 5·10⁻³; time per
//! step, steps unsolved and the kinetic energy once the pile has settled
//! (docs/rigid-bodies.md, "Settled piles").
//!
//! `cargo bench -p nonsmooth-collision --bench settled_piles [-- N...]`
//! (N = 100, 1000 by default; 10 000 when asked). N = 100 is the layout of
//! Siconos 4.4's spheres-in-a-box run (5 × 5 × 4 lattice in a 5.5 m box);
//! larger N have ten layers in a box √(N/10) spheres wide. Environment:
//! `SOLVER`, `TOL`, `SWEEPS`, `OMEGA`, `ORDER`, `ISLANDS`, `FALLBACK` (the
//! contact settings, defaults those of `ContactSettings::pile()`),
//! `T_END` (s, 6 by default), `SETTLED` (s, the start of the settled
//! window, 5.2 by default), `PER_STEP=FILE` (one CSV row per step),
//! `PROGRESS=1`.

use std::fmt::Write as _;
use std::time::Instant;

use nalgebra::Vector3;
use nonsmooth::rigid::{ContactOrder, ContactSettings};
use nonsmooth_collision::{pile_in_box, ContactDetector, PileInBox, RigidWorld};

fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

fn settings() -> ContactSettings {
    let name = |n: String| -> &'static str { Box::leak(n.into_boxed_str()) };
    let mut s = ContactSettings::pile();
    if let Some(v) = env::<f64>("TOL") {
        s.solver.tolerance = v;
    }
    if let Some(v) = env::<usize>("SWEEPS") {
        s.solver.max_iterations = Some(v);
    }
    if let Ok(v) = std::env::var("SOLVER") {
        s.solver_name = name(v);
    }
    if let Ok(v) = std::env::var("FALLBACK") {
        s.fallback = (v != "none").then(|| name(v));
    }
    if let Ok(v) = std::env::var("ORDER") {
        s.order = ContactOrder::from_name(&v).expect("ORDER");
    }
    if let Ok(v) = std::env::var("ISLANDS") {
        s.islands = v == "1";
    }
    if let Some(v) = env::<f64>("OMEGA") {
        s.relaxation = v;
    }
    s
}

fn run(n: usize) {
    let s = settings();
    let t_end: f64 = env("T_END").unwrap_or(6.0);
    let settled: f64 = env("SETTLED").unwrap_or(5.2);
    let h = 5e-3;
    let pile = PileInBox::siconos(n);
    let scene = pile_in_box(&pile).expect("scene");
    // Margin: a tenth of the radius.
    let det = ContactDetector::new(scene.colliders, 0.1 * pile.radius).expect("detector");
    let mut w = RigidWorld::new(
        scene.bodies,
        scene.states,
        det,
        s,
        Vector3::new(0.0, 0.0, -9.81),
        0.0,
    )
    .expect("world");
    let progress = std::env::var("PROGRESS").is_ok();
    let mut rows =
        String::from("step,t,cpu_ms,active,islands,iterations,error,solved,kinetic,total\n");
    let (mut unsolved, mut steps, mut iterations) = (0usize, 0usize, 0usize);
    let (mut rises, mut worst) = (0usize, 0.0f64);
    let (mut cpu_all, mut cpu_settled, mut n_settled) = (0.0, 0.0, 0usize);
    let (mut k_settled, mut k_after_47) = (0.0f64, 0.0f64);
    let mut energy = w.kinetic_energy() + w.potential_energy();
    let scale = energy.abs().max(1.0);
    let wall = Instant::now();
    let mut k = 0usize;
    while w.time() < t_end - 0.5 * h {
        let c0 = thread_cpu_ms();
        let rep = w.step(h).expect("step");
        let cpu = thread_cpu_ms() - c0;
        k += 1;
        let t = w.time();
        cpu_all += cpu;
        let kin = w.kinetic_energy();
        let e = kin + w.potential_energy();
        let (it, err, ok) = rep.solve.map_or((0, 0.0, true), |r| {
            (r.iterations, r.error, r.status.is_solved())
        });
        if rep.solve.is_some() {
            steps += 1;
            iterations += it;
            worst = worst.max(err);
            unsolved += usize::from(!ok);
        }
        if ok && e > energy + 1e-9 * scale {
            rises += 1;
            eprintln!(
                "  energy rose at t = {t:.3} by {:.3e} J (solved, error {err:.2e})",
                e - energy
            );
        }
        energy = e;
        if t >= 4.7 - 1e-9 {
            k_after_47 = k_after_47.max(kin);
        }
        if t >= settled - 1e-9 {
            k_settled = k_settled.max(kin);
            cpu_settled += cpu;
            n_settled += 1;
        }
        writeln!(
            rows,
            "{k},{t:.4},{cpu:.3},{},{},{it},{err:e},{},{kin:e},{e:e}",
            rep.active,
            rep.islands,
            u8::from(ok)
        )
        .expect("a String takes any write");
        if progress && k.is_multiple_of(100) {
            eprintln!(
                "  t = {t:.2}: K = {kin:.3e} J, {} active, {it} iterations, error {err:.1e}; \
                 {unsolved} unsolved so far",
                rep.active
            );
        }
    }
    if let Ok(path) = std::env::var("PER_STEP") {
        std::fs::write(path, rows).expect("PER_STEP file");
    }
    println!(
        "N = {n:>5} [{} tol {:e}, ω {}]: {:.2} ms CPU/step ({:.2} settled, t ≥ {settled}); \
         {:.1} iterations/step; {unsolved} of {steps} steps unsolved (worst {worst:.1e}); \
         max K from 4.7 s {k_after_47:.3e} J, from {settled} s {k_settled:.3e} J; \
         {rises} converged steps with an energy rise; wall {:.1} s",
        s.solver_name,
        s.solver.tolerance,
        s.relaxation,
        cpu_all / k as f64,
        cpu_settled / n_settled.max(1) as f64,
        iterations as f64 / steps.max(1) as f64,
        wall.elapsed().as_secs_f64()
    );
}

/// CPU time of the calling thread in ms (Linux `/proc/thread-self/schedstat`;
/// NaN elsewhere).
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns * 1e-6)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if args.is_empty() {
        vec![100, 1000]
    } else {
        args
    };
    for n in sizes {
        run(n);
    }
}
