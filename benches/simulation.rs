//! Benchmark of time-stepping on the bundled examples: cost per step of a
//! whole simulation loop (one-step integrators, activation, assembly,
//! solve, update), model construction and `TimeStepping::new` excluded (as
//! Siconos' `initialize()` is in benches/siconos/); and of the event-driven
//! strategy: cost of a whole run (cases `event_driven …`).
//!
//! Run: `cargo bench --bench simulation [FILTER...]` (release build). Each
//! case is run `NONSMOOTH_BENCH_REPEAT` times (default 20) from a fresh
//! `TimeStepping`, each run to its final time or until
//! `NONSMOOTH_BENCH_SECONDS` (default 5) of wall time, whichever comes
//! first; the figure is the best run's time over its steps (Siconos' runs
//! report the best of several runs too). The wall clock is read every 64
//! steps only: a clock read costs about as much as a small step. Set
//! `NONSMOOTH_BENCH_MD=FILE` to also write the table there. The Siconos 4.4
//! column comes from benches/siconos/ (run on the same machine, see
//! benches/siconos/README.md).

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nonsmooth::modelling::Model;
use nonsmooth::simulation::{
    EventDriven, EventDrivenSettings, StepOutcome, TimeStepping, TimeSteppingSettings,
};

struct Case {
    name: String,
    build: Box<dyn Fn() -> (Model, TimeSteppingSettings)>,
}

fn cases() -> Vec<Case> {
    let mut out = vec![
        Case {
            name: "bouncing_ball".into(),
            build: Box::new(|| {
                let (ball, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
                (ball, TimeSteppingSettings::new(0.005, 10.0))
            }),
        },
        Case {
            name: "diode_bridge".into(),
            build: Box::new(|| {
                let (bridge, _, _) = common::diode_bridge();
                (bridge, TimeSteppingSettings::new(1e-6, 5e-3))
            }),
        },
        Case {
            name: "relay".into(),
            build: Box::new(|| {
                let (relay, _, _) = common::relay(1.0, 1.0, [0.0, 2.21]);
                let mut settings = TimeSteppingSettings::new(0.01, 10.0);
                settings.theta = 1.0;
                (relay, settings)
            }),
        },
    ];
    for n in [10, 100, 1000] {
        for (label, gap) in [("falling", 0.01), ("resting", 0.0)] {
            out.push(Case {
                name: format!("beads_column_{label} N={n}"),
                build: Box::new(move || {
                    let (column, _, _) = common::beads_column(n, 0.1, gap, 0.5);
                    (column, TimeSteppingSettings::new(1e-3, 1.0))
                }),
            });
        }
    }
    out
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let budget = Duration::from_secs_f64(env("NONSMOOTH_BENCH_SECONDS", 5.0));
    let repeat: usize = env("NONSMOOTH_BENCH_REPEAT", 20).max(1);
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut table = String::new();
    writeln!(
        table,
        "| case | steps done / total | µs per step (best of {repeat}) | solves per step | solver iterations per step |"
    )
    .unwrap();
    writeln!(table, "|---|---|---|---|---|").unwrap();
    println!("{}", table.trim_end());
    for case in cases() {
        // A filter selects the cases whose name contains it (`=NAME`: exactly NAME).
        let selected = |f: &String| match f.strip_prefix('=') {
            Some(exact) => case.name == exact,
            None => case.name.contains(f.as_str()),
        };
        if !filter.is_empty() && !filter.iter().any(selected) {
            continue;
        }
        let (model, settings) = (case.build)();
        let model = Arc::new(model);
        let total = ((settings.t_end - settings.t0) / settings.step).round() as u64;
        let mut best = f64::INFINITY;
        let mut stats = Default::default();
        for _ in 0..repeat {
            let mut sim =
                TimeStepping::new(Arc::clone(&model), settings.clone()).expect("valid case");
            let start = Instant::now();
            let mut k = 0u32;
            loop {
                match sim.step() {
                    Ok(StepOutcome::Finished) => break,
                    Ok(_) => {}
                    Err(e) => {
                        eprintln!("{}: {e}", case.name);
                        break;
                    }
                }
                k = k.wrapping_add(1);
                if k.is_multiple_of(64) && start.elapsed() > budget {
                    break;
                }
            }
            let elapsed = start.elapsed();
            let s = sim.statistics();
            let per_step = elapsed.as_secs_f64() * 1e6 / s.steps.max(1) as f64;
            if per_step < best {
                best = per_step;
                stats = s;
            }
            if elapsed > budget {
                break;
            }
        }
        let steps = stats.steps.max(1) as f64;
        let line = format!(
            "| {} | {} / {} | {:.4} | {:.2} | {:.2} |",
            case.name,
            stats.steps,
            total,
            best,
            stats.solves as f64 / steps,
            stats.solver_iterations as f64 / steps
        );
        println!("{line}");
        writeln!(table, "{line}").unwrap();
    }
    event_driven(&filter, budget, &mut table);
    if let Ok(path) = std::env::var("NONSMOOTH_BENCH_MD") {
        std::fs::write(&path, table).expect("write the table");
        eprintln!("wrote {path}");
    }
}

/// Event-driven runs: the whole run to T (outputs included, construction
/// and the initial mode excluded), the fastest of as many runs as fit in
/// the budget (at most 2000).
fn event_driven(filter: &[String], budget: Duration, table: &mut String) {
    let mut cases: Vec<(String, Model, EventDrivenSettings)> = Vec::new();
    let (ball, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    cases.push((
        "event_driven bouncing_ball".into(),
        ball,
        EventDrivenSettings::new(0.005, 10.0),
    ));
    let (bridge, _, _) = common::diode_bridge();
    cases.push((
        "event_driven diode_bridge".into(),
        bridge,
        EventDrivenSettings::new(1e-6, 5e-3),
    ));
    let selected = |name: &str| {
        filter.is_empty()
            || filter.iter().any(|f| match f.strip_prefix('=') {
                Some(exact) => name == exact,
                None => name.contains(f.as_str()),
            })
    };
    let mut header = false;
    for (name, model, settings) in cases {
        if !selected(&name) {
            continue;
        }
        if !header {
            header = true;
            writeln!(
                table,
                "\n| case | µs per run (fastest) | runs | integrator steps | nonsmooth events | instants |"
            )
            .unwrap();
            writeln!(table, "|---|---|---|---|---|---|").unwrap();
        }
        let model = std::sync::Arc::new(model);
        let (mut best, mut runs) = (f64::INFINITY, 0u32);
        let (mut steps, mut events, mut instants) = (0, 0, 0u64);
        let start = Instant::now();
        while runs < 2000 && (runs == 0 || start.elapsed() < budget) {
            let mut sim = EventDriven::new(std::sync::Arc::clone(&model), settings.clone())
                .expect("valid case");
            let t0 = Instant::now();
            instants = 0;
            loop {
                match sim.step() {
                    Ok(StepOutcome::Finished) => break,
                    Ok(_) => instants += 1,
                    Err(e) => {
                        eprintln!("{name}: {e}");
                        break;
                    }
                }
            }
            best = best.min(t0.elapsed().as_secs_f64() * 1e6);
            runs += 1;
            let st = sim.event_statistics();
            steps = st.integrator.accepted;
            events = st.events;
        }
        let line = format!("| {name} | {best:.1} | {runs} | {steps} | {events} | {instants} |");
        println!("{line}");
        writeln!(table, "{line}").unwrap();
    }
}
