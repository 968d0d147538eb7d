//! Spheres in a box: cost per step (detection + contact step) for
//! N = 1000 and N = 10 000 spheres, h = 10⁻³, after the pour has started
//! (docs/rigid-bodies.md).
//!
//! `cargo bench -p nonsmooth-collision --bench spheres_in_box [-- N...]`
//! prints, per N: the mean wall time per step over the measured steps,
//! split into detection and the contact step, with the mean active
//! contacts and NSGS sweeps.

use std::time::{Duration, Instant};

use nalgebra::Vector3;
use nonsmooth::rigid::{ContactOrder, ContactSettings, ContactStep};
use nonsmooth_collision::{spheres_in_box, ContactDetector, Material, SpheresInBox};

fn run(n: usize, warm: usize, measured: usize) {
    // Ten layers whatever N: a box √(N/10) spheres wide.
    let radius = 0.05;
    let per_row = (n as f64 / 10.0).sqrt().ceil();
    let spacing = 0.01;
    let width = per_row * (2.0 * radius + spacing) + spacing;
    let p = SpheresInBox {
        spheres: n,
        radius,
        density: 1000.0,
        width,
        spacing,
        speed: 0.5,
        seed: 1,
        material: Material {
            friction: 0.3,
            restitution: 0.0,
        },
    };
    let scene = spheres_in_box(&p).expect("scene");
    let settings = settings();
    let mut det = ContactDetector::new(scene.colliders, 0.02).expect("detector");
    let mut step = ContactStep::new(settings).expect("step");
    let mut states = scene.states;
    let bodies = scene.bodies;
    let g = Vector3::new(0.0, 0.0, -9.81);
    let h = 1e-3;
    let mut contacts = Vec::new();
    let (mut t_det, mut t_step) = (Duration::ZERO, Duration::ZERO);
    let (mut active, mut sweeps, mut islands) = (0usize, 0usize, 0usize);
    let (mut unsolved, mut worst) = (0usize, 0.0f64);
    let (mut all_unsolved, mut all_worst, mut all_sweeps) = (0usize, 0.0f64, 0usize);
    let progress = std::env::var("PROGRESS").is_ok();
    for k in 0..warm + measured {
        let t0 = Instant::now();
        det.detect(&states, &mut contacts).expect("detect");
        let t1 = Instant::now();
        let rep = step
            .step(&bodies, &mut states, &contacts, k as f64 * h, h, &g)
            .expect("step");
        let t2 = Instant::now();
        if let Some(s) = rep.solve {
            all_unsolved += usize::from(!s.status.is_solved());
            all_worst = all_worst.max(s.error);
            all_sweeps += s.iterations;
        }
        if progress && (k + 1) % 50 == 0 {
            eprintln!(
                "  step {}: {:.1} ms, {} active, {} islands, {} sweeps; so far {all_unsolved} \
                 steps short, worst {all_worst:.2e}, {all_sweeps} sweeps",
                k + 1,
                (t2 - t0).as_secs_f64() * 1e3,
                rep.active,
                rep.islands,
                rep.solve.map_or(0, |s| s.iterations)
            );
        }
        if k >= warm {
            t_det += t1 - t0;
            t_step += t2 - t1;
            active += rep.active;
            sweeps += rep.solve.map_or(0, |s| s.iterations);
            islands += rep.islands;
            if let Some(s) = rep.solve {
                worst = worst.max(s.error);
                unsolved += usize::from(!s.status.is_solved());
            }
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e3 / measured as f64;
    println!(
        "N = {n:>6}: {:>8.3} ms/step (detection {:>7.3}, contact step {:>8.3}); \
         {:>7.0} active contacts, {:>5.1} islands, {:>5.1} sweeps per step (steps {warm}..{}); \
         {unsolved} steps short of the tolerance, worst error {worst:.2e}",
        per(t_det + t_step),
        per(t_det),
        per(t_step),
        active as f64 / measured as f64,
        islands as f64 / measured as f64,
        sweeps as f64 / measured as f64,
        warm + measured
    );
}

/// The contact settings: those of `examples/spheres_in_box.toml` (NSGS to
/// 10⁻⁶, at most 500 sweeps, islands, top-down order), each overridable
/// by an environment variable for experiments: `SOLVER`, `FALLBACK`
/// (`none` for none), `ORDER`, `ISLANDS` (0 or 1), `OMEGA`, `TOL`, `SWEEPS`.
fn settings() -> ContactSettings {
    let var = |k: &str| std::env::var(k).ok();
    let name = |n: String| -> &'static str { Box::leak(n.into_boxed_str()) };
    let mut s = ContactSettings::default();
    s.solver.tolerance = var("TOL").and_then(|v| v.parse().ok()).unwrap_or(1e-6);
    s.solver.max_iterations = Some(var("SWEEPS").and_then(|v| v.parse().ok()).unwrap_or(500));
    s.order = ContactOrder::TopDown;
    if let Some(v) = var("SOLVER") {
        s.solver_name = name(v);
    }
    if let Some(v) = var("FALLBACK") {
        s.fallback = (v != "none").then(|| name(v));
    }
    if let Some(v) = var("ORDER") {
        s.order = ContactOrder::from_name(&v).expect("ORDER");
    }
    if let Some(v) = var("ISLANDS") {
        s.islands = v == "1";
    }
    if let Some(v) = var("OMEGA") {
        s.relaxation = v.parse().expect("OMEGA");
    }
    eprintln!(
        "settings: {} (fallback {:?}), tol {:e}, {:?} sweeps, order {:?}, islands {}, ω {}",
        s.solver_name,
        s.fallback,
        s.solver.tolerance,
        s.solver.max_iterations,
        s.order,
        s.islands,
        s.relaxation
    );
    s
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if args.is_empty() {
        vec![1000, 10_000]
    } else {
        args
    };
    for n in sizes {
        // The pour: 300 steps (0.3 s) before measuring 100 (WARM, MEASURED).
        let env = |k: &str, d: usize| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(d)
        };
        run(n, env("WARM", 300), env("MEASURED", 100));
    }
}
