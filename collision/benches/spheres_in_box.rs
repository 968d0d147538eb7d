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
use nonsmooth::rigid::{ContactSettings, ContactStep};
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
    let mut settings = ContactSettings::default();
    settings.solver.tolerance = 1e-4;
    settings.solver.max_iterations = Some(100);
    let mut det = ContactDetector::new(scene.colliders, 0.02).expect("detector");
    let mut step = ContactStep::new(settings).expect("step");
    let mut states = scene.states;
    let bodies = scene.bodies;
    let g = Vector3::new(0.0, 0.0, -9.81);
    let h = 1e-3;
    let mut contacts = Vec::new();
    let (mut t_det, mut t_step) = (Duration::ZERO, Duration::ZERO);
    let (mut active, mut sweeps) = (0usize, 0usize);
    for k in 0..warm + measured {
        let t0 = Instant::now();
        det.detect(&states, &mut contacts).expect("detect");
        let t1 = Instant::now();
        let rep = step
            .step(&bodies, &mut states, &contacts, k as f64 * h, h, &g)
            .expect("step");
        let t2 = Instant::now();
        if k >= warm {
            t_det += t1 - t0;
            t_step += t2 - t1;
            active += rep.active;
            sweeps += rep.solve.map_or(0, |s| s.iterations);
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e3 / measured as f64;
    println!(
        "N = {n:>6}: {:>8.3} ms/step (detection {:>7.3}, contact step {:>8.3}); \
         {:>7.0} active contacts, {:>5.1} NSGS sweeps per step (steps {warm}..{})",
        per(t_det + t_step),
        per(t_det),
        per(t_step),
        active as f64 / measured as f64,
        sweeps as f64 / measured as f64,
        warm + measured
    );
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
        // The pour: 300 steps (0.3 s) before measuring 100.
        run(n, 300, 100);
    }
}
