//! Benchmark of Moreau–Jean time-stepping with Coulomb friction beside the
//! frictionless run of the same size (issue 17's target): a column of N
//! beads built through the scenario layer, each bead with two coordinates
//! `q = [z, x]` (height, horizontal position) and an initial horizontal
//! velocity `vx·sin(i)`, so neighbouring contacts slide and stick.
//!
//! * frictional: every contact is `newton_impact_friction` (dimension 2,
//!   friction `friction`), relation rows `[g_N, x_T]`: the ground
//!   `g_N = z₀ − r`, `x_T = x₀`; neighbours `g_N = z_i − z_{i−1} − 2r`,
//!   `x_T = x_i − x_{i−1}`;
//! * frictionless: the same systems and contacts, `newton_impact` on the
//!   normal row only (the horizontal motion is then free).
//!
//! Both are the text below with `--set`-style overrides (`beads`,
//! `friction`) applied by [`Scenario::set_parameter`]; the frictionless file
//! is the frictional one with the law and the tangent rows taken out. The
//! figure is the cost per step of `TimeStepping::step` (construction
//! excluded), the best of `NONSMOOTH_BENCH_REPEAT` runs (default 5), each
//! to `t_end` or `NONSMOOTH_BENCH_SECONDS` (default 5) of wall time.
//! `NONSMOOTH_BENCH_SOLVER` names the frictional runs' one-step solver
//! (`[simulation] solver`; `default` when unset), `NONSMOOTH_BENCH_ASSEMBLY`
//! the storage of both runs' one-step problems (`dense`: over the active
//! contacts, `sparse`: over all of them; `auto` when unset).
//! `NONSMOOTH_BENCH_ONLY=frictional` (or `frictionless`) runs one of the
//! two only (for instruction counts of one run under callgrind; the other
//! column then reads 0).
//!
//! Run: `cargo bench -p nonsmooth-scenario --bench friction_stepping [N...]`
//! (default N = 100 1000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nonsmooth::simulation::{Assembly, StepOutcome, TimeStepping};
use nonsmooth_scenario::Scenario;

/// The frictional column; `FRICTIONLESS` is derived from it.
const FRICTIONAL: &str = r#"
name = "beads_column_friction"

[parameters]
beads = 10
radius = 0.1
gap = 0.01
restitution = 0.5
friction = 0.3
vx = 0.5
mass = 1
gravity = 9.81
step = 1e-3
t_end = 1

[simulation]
t_end = "t_end"
step = "step"

[[systems]]
repeat = { i = "0 .. beads" }
name = "bead{i}"
type = "lagrangian_linear"
q0 = ["radius + gap + i*(2*radius + gap)", 0]
v0 = [0, "vx*sin(i)"]
mass_diagonal = ["mass", "mass"]
fext = ["-mass*gravity", 0]

[[interactions]]
name = "ground"
systems = ["bead0"]
relation = { type = "lagrangian_linear", H = [[1, 0], [0, 1]], b = ["-radius", 0] }
law = { type = "newton_impact_friction", restitution = "restitution", friction = "friction", dimension = 2 }

[[interactions]]
repeat = { i = "1 .. beads" }
name = "contact{i}"
systems = ["bead{i-1}", "bead{i}"]
relation = { type = "lagrangian_linear", H = [[-1, 0, 1, 0], [0, -1, 0, 1]], b = ["-2*radius", 0] }
law = { type = "newton_impact_friction", restitution = "restitution", friction = "friction", dimension = 2 }

[output]
record = ["bead0.q", "ground.lambda"]
"#;

fn frictionless() -> String {
    FRICTIONAL
        .replace("H = [[1, 0], [0, 1]], b = [\"-radius\", 0]", "H = [[1, 0]], b = [\"-radius\"]")
        .replace(
            "H = [[-1, 0, 1, 0], [0, -1, 0, 1]], b = [\"-2*radius\", 0]",
            "H = [[-1, 0, 1, 0]], b = [\"-2*radius\"]",
        )
        .replace(
            "type = \"newton_impact_friction\", restitution = \"restitution\", friction = \"friction\", dimension = 2",
            "type = \"newton_impact\", restitution = \"restitution\"",
        )
        .replace("friction = 0.3\n", "")
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Best µs per step, steps done, steps in the run, solver iterations per step.
fn per_step(
    text: &str,
    beads: usize,
    assembly: Assembly,
    budget: Duration,
    repeat: usize,
) -> (f64, u64, u64, f64) {
    let mut scenario = Scenario::from_str(text, "beads_column_friction.toml").expect("parse");
    scenario
        .set_parameter("beads", beads as f64)
        .expect("beads parameter");
    let built = scenario.build().expect("build");
    let mut settings = built.settings.clone();
    settings.assembly = assembly;
    let total = ((settings.t_end - settings.t0) / settings.step).round() as u64;
    let mut best = (f64::INFINITY, 0, total, 0.0);
    for _ in 0..repeat {
        let mut sim = TimeStepping::new(Arc::clone(&built.model), settings.clone()).expect("valid");
        let start = Instant::now();
        let mut k = 0u32;
        loop {
            match sim.step() {
                Ok(StepOutcome::Finished) => break,
                Ok(_) => {}
                Err(e) => panic!("N = {beads}: {e}"),
            }
            k = k.wrapping_add(1);
            if k.is_multiple_of(16) && start.elapsed() > budget {
                break;
            }
        }
        let elapsed = start.elapsed();
        let s = sim.statistics();
        let us = elapsed.as_secs_f64() * 1e6 / s.steps.max(1) as f64;
        if us < best.0 {
            let iters = s.solver_iterations as f64 / s.steps.max(1) as f64;
            best = (us, s.steps, total, iters);
        }
        if elapsed > budget {
            break;
        }
    }
    best
}

fn main() {
    let budget = Duration::from_secs_f64(env("NONSMOOTH_BENCH_SECONDS", 5.0));
    let repeat: usize = env("NONSMOOTH_BENCH_REPEAT", 5).max(1);
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1000]
    } else {
        sizes
    };
    // NONSMOOTH_BENCH_ASSEMBLY: the frictional runs' storage, `dense` (over
    // the active contacts) or `sparse` (over all contacts); `auto` when unset.
    let assembly = match std::env::var("NONSMOOTH_BENCH_ASSEMBLY").as_deref() {
        Ok("dense") => Assembly::Dense,
        Ok("sparse") => Assembly::Sparse,
        _ => Assembly::Auto,
    };
    let frictionless = frictionless();
    // NONSMOOTH_BENCH_SOLVER: the frictional runs' one-step solver (default: "default").
    let frictional = match std::env::var("NONSMOOTH_BENCH_SOLVER") {
        Ok(name) => FRICTIONAL.replace(
            "step = \"step\"\n",
            &format!("step = \"step\"\nsolver = \"{name}\"\n"),
        ),
        Err(_) => FRICTIONAL.to_string(),
    };
    println!("| N | frictionless µs/step (steps) | frictional µs/step (steps) | frictional / frictionless | solver iterations per step (frictional) |");
    println!("|---|---|---|---|---|");
    let mut fric = Vec::new();
    let only = std::env::var("NONSMOOTH_BENCH_ONLY").unwrap_or_default();
    for &n in &sizes {
        let (f0, s0, t0, _) = if only == "frictional" {
            (0.0, 0, 0, 0.0)
        } else {
            per_step(&frictionless, n, Assembly::Auto, budget, repeat)
        };
        let (f1, s1, t1, it) = if only == "frictionless" {
            (0.0, 0, 0, 0.0)
        } else {
            per_step(&frictional, n, assembly, budget, repeat)
        };
        println!(
            "| {n} | {f0:.1} ({s0}/{t0}) | {f1:.1} ({s1}/{t1}) | {:.2} | {it:.1} |",
            f1 / f0
        );
        fric.push((n, f0, f1));
    }
    for w in fric.windows(2) {
        let ((n0, a0, b0), (n1, a1, b1)) = (w[0], w[1]);
        println!(
            "N={n1}/N={n0} per step: frictionless {:.2}×, frictional {:.2}×",
            a1 / a0,
            b1 / b0
        );
    }
}
