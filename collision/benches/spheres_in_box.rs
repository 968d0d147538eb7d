//! Spheres in a box: cost per step (detection + contact step) for
//! N = 1000 and N = 10 000 spheres, h = 10⁻³, after the pour has started
//! (docs/rigid-bodies.md).
//!
//! `cargo bench -p nonsmooth-collision --bench spheres_in_box [-- N...]`
//! prints, per N: the mean wall time per step over the measured steps,
//! split into detection and the contact step, with the mean active
//! contacts and NSGS sweeps, and the mean CPU time of this thread.
//!
//! For a step-by-step comparison with Siconos 4.4
//! (`tests/oracle/rigid/siconos_rigid.py --bench N --init FILE`):
//! `STATE_OUT=FILE` writes the bodies' states at the first measured step
//! (after `WARM` steps) as CSV, `STATE_IN=FILE` starts from such a file
//! instead of the generated velocities and positions (a cold start: no
//! impulses from earlier steps), and `PER_STEP=FILE` writes one CSV row
//! per measured step (wall and CPU time, contacts, sweeps, error).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, ContactOrder, ContactSettings, ContactStep};
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
    if let Ok(path) = std::env::var("STATE_IN") {
        read_states(&path, &mut states);
    }
    let per_step_path = std::env::var("PER_STEP").ok();
    let mut per_step = String::from(
        "step,t,wall_ms,cpu_ms,detection_ms,contacts,active,islands,sweeps,error,solved\n",
    );
    let mut cpu_total = 0.0;
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
        if k == warm {
            if let Ok(path) = std::env::var("STATE_OUT") {
                write_states(&path, &states);
            }
        }
        let c0 = thread_cpu_ms();
        let t0 = Instant::now();
        det.detect(&states, &mut contacts).expect("detect");
        let t1 = Instant::now();
        let rep = step
            .step(&bodies, &mut states, &contacts, k as f64 * h, h, &g)
            .expect("step");
        let t2 = Instant::now();
        let cpu = thread_cpu_ms() - c0;
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
            cpu_total += cpu;
            let (sw, err, ok) = rep.solve.map_or((0, 0.0, true), |s| {
                (s.iterations, s.error, s.status.is_solved())
            });
            writeln!(
                per_step,
                "{},{},{:.3},{:.3},{:.3},{},{},{},{sw},{err:e},{}",
                k + 1,
                (k + 1) as f64 * h,
                (t2 - t0).as_secs_f64() * 1e3,
                cpu,
                (t1 - t0).as_secs_f64() * 1e3,
                rep.contacts,
                rep.active,
                rep.islands,
                u8::from(ok)
            )
            .expect("a String takes any write");
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
    if let Some(path) = per_step_path {
        std::fs::write(&path, per_step).expect("PER_STEP file");
    }
    let per = |d: Duration| d.as_secs_f64() * 1e3 / measured as f64;
    println!(
        "N = {n:>6}: {:>8.3} ms/step (CPU {:>8.3}; detection {:>7.3}, contact step {:>8.3}); \
         {:>7.0} active contacts, {:>5.1} islands, {:>5.1} sweeps per step (steps {warm}..{}); \
         {unsolved} steps short of the tolerance, worst error {worst:.2e}",
        per(t_det + t_step),
        cpu_total / measured as f64,
        per(t_det),
        per(t_step),
        active as f64 / measured as f64,
        islands as f64 / measured as f64,
        sweeps as f64 / measured as f64,
        warm + measured
    );
}

/// CPU time of the calling thread in ms (Linux `/proc/thread-self/schedstat`,
/// its first field in ns; NaN elsewhere): less sensitive than wall time to
/// the other processes of a shared machine.
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns * 1e-6)
}

const STATE_HEADER: &str = "body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz";

/// Writes the free bodies' states (body index, centre, quaternion scalar
/// first, velocity in the world frame, angular velocity in the body frame),
/// each number in the shortest form that reads back to the same double.
fn write_states(path: &str, states: &[BodyState]) {
    let mut out = format!("{STATE_HEADER}\n");
    for (b, s) in states.iter().enumerate().skip(1) {
        let q = s.orientation.quaternion();
        let row = [
            s.position.x,
            s.position.y,
            s.position.z,
            q.w,
            q.i,
            q.j,
            q.k,
            s.velocity.x,
            s.velocity.y,
            s.velocity.z,
            s.omega.x,
            s.omega.y,
            s.omega.z,
        ];
        let row: Vec<String> = row.iter().map(|x| format!("{x:?}")).collect();
        writeln!(out, "{b},{}", row.join(",")).expect("a String takes any write");
    }
    std::fs::write(path, out).expect("STATE_OUT file");
}

/// Reads a file of [`write_states`] into `states` (every free body).
fn read_states(path: &str, states: &mut [BodyState]) {
    let text = std::fs::read_to_string(path).expect("STATE_IN file");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(STATE_HEADER), "{path}: header");
    let mut seen = 0;
    for (i, line) in lines.enumerate() {
        let v: Vec<f64> = line
            .split(',')
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("{path}:{}: {x}", i + 2))
            })
            .collect();
        assert_eq!(v.len(), 14, "{path}:{}: 14 columns", i + 2);
        let s = &mut states[v[0] as usize];
        s.position = Vector3::new(v[1], v[2], v[3]);
        s.orientation = UnitQuaternion::from_quaternion(Quaternion::new(v[4], v[5], v[6], v[7]));
        s.velocity = Vector3::new(v[8], v[9], v[10]);
        s.omega = Vector3::new(v[11], v[12], v[13]);
        seen += 1;
    }
    assert_eq!(seen, states.len() - 1, "{path}: one row per sphere");
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
