//! Once sized, every complementarity solver solves further problems of the
//! same size without allocating. A counting global allocator (per thread, so
//! the test harness's other threads do not disturb it) checks it.

use nalgebra::DMatrix;
use nonsmooth::numerics::lcp::{lcp_solver, Lcp, LcpSolver, SparsePivoting, LCP_SOLVERS};
use nonsmooth::numerics::mlcp::{mlcp_solver, Mlcp, MLCP_SOLVERS};
use nonsmooth::numerics::relay::{relay_solver, Relay, RELAY_SOLVERS};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveReport, SolveStatus, SolverSettings};

/// Runs `f` and counts the allocations (reallocations included) it made
/// on this thread, with the `allocation-counter` crate's global allocator.
fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.expect("the measured closure ran"), info.count_total)
}

/// A symmetric positive definite tridiagonal matrix of size n.
fn spd(n: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => 4.0,
        1 => -1.0,
        _ => 0.0,
    })
}

fn q_vectors(n: usize) -> (Vec<f64>, Vec<f64>) {
    let a = (0..n)
        .map(|i| if i % 2 == 0 { -1.0 } else { 0.5 })
        .collect();
    let b = (0..n)
        .map(|i| if i % 3 == 0 { 0.7 } else { -2.0 })
        .collect();
    (a, b)
}

fn names(list: &str) -> Vec<&str> {
    list.split(", ").collect()
}

/// Solves `first` to size the solver, then counts the allocations of a
/// solve of `second` (same size, other q) from z = 0: both must be solved
/// and the count must be zero.
fn assert_second_solve_allocates_nothing<P>(
    label: &str,
    n: usize,
    (first, second): (&P, &P),
    mut solve: impl FnMut(&P, &mut [f64], &mut [f64]) -> SolveReport,
) {
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = solve(first, &mut z, &mut w);
    assert_eq!(r.status, SolveStatus::Solved, "{label}");
    z.iter_mut().for_each(|v| *v = 0.0);
    let (r, allocated) = counted(|| solve(second, &mut z, &mut w));
    assert_eq!(r.status, SolveStatus::Solved, "{label}");
    assert_eq!(allocated, 0, "{label} allocated on its second solve");
}

#[test]
fn sized_lcp_solvers_do_not_allocate() {
    let n = 10;
    let (q1, q2) = q_vectors(n);
    let dense = Lcp::new(spd(n), q1.clone()).unwrap();
    let sizes = vec![2; n / 2];
    let sparse_m = BlockSparseMatrix::from_dense(&spd(n), &sizes, &sizes).unwrap();
    let sparse = Lcp::new(Matrix::BlockSparse(sparse_m), q1).unwrap();
    for problem in [dense, sparse] {
        let mut second = problem.clone();
        second.q = q2.clone();
        for name in names(LCP_SOLVERS) {
            let mut solver = lcp_solver(name, SolverSettings::default()).unwrap();
            let label = format!("LCP solver {name}");
            assert_second_solve_allocates_nothing(&label, n, (&problem, &second), |p, z, w| {
                solver.solve(p, z, w).unwrap()
            });
        }
    }
}

#[test]
fn sized_mlcp_solvers_do_not_allocate() {
    let size = 8;
    let n_eq = 3;
    let (q1, q2) = q_vectors(size);
    let problem = Mlcp::new(spd(size), q1, n_eq).unwrap();
    let mut second = problem.clone();
    second.q = q2;
    for name in names(MLCP_SOLVERS) {
        let mut solver = mlcp_solver(name, SolverSettings::default()).unwrap();
        let label = format!("MLCP solver {name}");
        assert_second_solve_allocates_nothing(&label, size, (&problem, &second), |p, z, w| {
            solver.solve(p, z, w).unwrap()
        });
    }
}

#[test]
fn sized_relay_solvers_do_not_allocate() {
    let n = 6;
    let (q1, q2) = q_vectors(n);
    let q1: Vec<f64> = q1.iter().map(|v| 5.0 * v).collect();
    let problem = Relay::new(spd(n), q1, vec![-1.0; n], vec![1.0; n]).unwrap();
    let mut second = problem.clone();
    second.q = q2;
    for name in names(RELAY_SOLVERS) {
        let mut solver = relay_solver(name, SolverSettings::default()).unwrap();
        let label = format!("relay solver {name}");
        assert_second_solve_allocates_nothing(&label, n, (&problem, &second), |p, z, w| {
            solver.solve(p, z, w).unwrap()
        });
    }
}

#[path = "common/mod.rs"]
mod common;

/// Steps `warmup` times, then counts the allocations of `steps` more steps.
fn allocations_per_run(
    model: nonsmooth::modelling::Model,
    settings: nonsmooth::simulation::TimeSteppingSettings,
    warmup: usize,
    steps: usize,
) -> u64 {
    let mut sim = nonsmooth::simulation::TimeStepping::new(model, settings).unwrap();
    for _ in 0..warmup {
        sim.step().unwrap();
    }
    counted(|| {
        for _ in 0..steps {
            sim.step().unwrap();
        }
    })
    .1
}

#[test]
fn time_steps_do_not_allocate_once_every_problem_size_was_seen() {
    use nonsmooth::simulation::TimeSteppingSettings;
    // Bouncing ball: problems of size 0 and 1, seen in the first bounce.
    let (ball, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    assert_eq!(
        allocations_per_run(ball, TimeSteppingSettings::new(0.005, 10.0), 200, 1500),
        0
    );
    let (diodes, _, _) = common::diode_bridge();
    assert_eq!(
        allocations_per_run(diodes, TimeSteppingSettings::new(1e-6, 5e-3), 100, 3000),
        0
    );
    let (relay, _, _) = common::relay(1.0, 1.0, [0.0, 2.21]);
    let mut settings = TimeSteppingSettings::new(0.01, 10.0);
    settings.theta = 1.0;
    assert_eq!(allocations_per_run(relay, settings, 10, 900), 0);
    let (column, _, _) = common::beads_column(10, 0.1, 0.0, 0.5);
    assert_eq!(
        allocations_per_run(column, TimeSteppingSettings::new(1e-3, 1.0), 10, 900),
        0
    );
    // 200 beads: the block-sparse path with the sparse pivoting solver.
    let (column, _, _) = common::beads_column(200, 0.1, 0.0, 0.5);
    assert_eq!(
        allocations_per_run(column, TimeSteppingSettings::new(1e-3, 1.0), 10, 300),
        0
    );
}

/// The sparse LCP solver, once it has solved a pattern, solves another
/// problem on it — other values (another mass, contacts switched off) and
/// another active set — without allocating, and without a new analysis.
#[test]
fn sparse_lcp_solver_reuses_its_pattern_without_allocating() {
    let n = 400;
    let on = vec![false; n];
    let off: Vec<bool> = (0..n).map(|i| i % 9 == 4).collect();
    let q1: Vec<f64> = (0..n)
        .map(|i| if i % 4 == 0 { 0.5 } else { -1.0 })
        .collect();
    let q2: Vec<f64> = (0..n)
        .map(|i| match (off[i], i % 3) {
            (true, _) => 1.0,
            (false, 0) => 0.8,
            _ => -2.0,
        })
        .collect();
    let first = Lcp::new(common::bead_chain(n, 0.5, &on), q1).unwrap();
    let second = Lcp::new(common::bead_chain(n, 2.0, &off), q2).unwrap();
    let mut solver = SparsePivoting::new(SolverSettings::default());
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = solver.solve(&first, &mut z, &mut w).unwrap();
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    let active_first: Vec<bool> = z.iter().map(|v| *v > 0.0).collect();
    let (r, allocated) = counted(|| solver.solve(&second, &mut z, &mut w).unwrap());
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    assert!(r.iterations > 1, "{r:?}");
    assert_eq!(allocated, 0, "the second solve allocated");
    assert_eq!(solver.symbolic_analyses(), 1);
    let active_second: Vec<bool> = z.iter().map(|v| *v > 0.0).collect();
    assert_ne!(active_first, active_second);
    assert!((0..n).all(|i| !off[i] || z[i] == 0.0));
}

/// (The CSV rows' half of this test is `csv_rows_do_not_allocate` in the
/// CLI's `csv_out.rs`, where the CSV writer lives.)
#[test]
fn scenario_time_functions_do_not_allocate() {
    use nonsmooth::modelling::{DynamicalSystem, TimeMatrix, TimeVector};
    use nonsmooth_scenario::Scenario;

    let text = r#"
name = "timed"
[parameters]
omega = 50
k = 2
[simulation]
t_end = 1
step = 0.01
[[systems]]
name = "s"
type = "first_order_linear"
x0 = [0, 1]
A = [[0, "-k*cos(omega*t)"], ["exp(-t)", 0]]
b = ["sin(omega*t) + k*t^2", "sqrt(1 + t)"]
"#;
    let built = Scenario::from_str(text, "timed.toml")
        .unwrap()
        .build()
        .unwrap();
    let DynamicalSystem::FirstOrderLinear(ds) = &built.model.systems()[0].ds else {
        panic!("first order")
    };
    let (b, a) = (ds.b.as_ref().unwrap(), &ds.a);
    assert!(matches!(b, TimeVector::Function { .. }));
    assert!(matches!(a, TimeMatrix::Function { .. }));
    let mut out = vec![0.0; 2];
    let mut m = DMatrix::zeros(2, 2);
    b.eval(0.0, &mut out);
    a.eval(0.0, &mut m);
    let ((), allocated) = counted(|| {
        for k in 0..100 {
            let t = k as f64 * 0.01;
            b.eval(t, &mut out);
            a.eval(t, &mut m);
        }
    });
    assert_eq!(allocated, 0, "time functions allocated");
    assert_eq!(out[0], (50.0f64 * 0.99).sin() + 2.0 * 0.99f64.powf(2.0));
    assert_eq!(m[(1, 0)], (-0.99f64).exp());
}

/// Event-driven: instants between nonsmooth events (integrator steps,
/// guard checks, outputs from the dense output) allocate nothing; events
/// themselves (impact and mode LCPs) may.
#[test]
fn event_driven_instants_between_events_do_not_allocate() {
    use nonsmooth::simulation::{EventDriven, EventDrivenSettings, EventKind, StepOutcome};
    let count = |model: nonsmooth::modelling::Model, settings: EventDrivenSettings, skip: usize| {
        let mut sim = EventDriven::new(model, settings).unwrap();
        for _ in 0..skip {
            sim.step().unwrap();
        }
        let (mut worst, mut instants) = (0, 0);
        loop {
            let (out, allocated) = counted(|| sim.step().unwrap());
            if out == StepOutcome::Finished {
                break;
            }
            if sim
                .last_events()
                .iter()
                .all(|e| e.kind != EventKind::NonSmooth)
            {
                worst = worst.max(allocated);
                instants += 1;
            }
        }
        (worst, instants)
    };
    // The ball, from its first output on.
    let (ball, _, _) = common::bouncing_ball(1.0, 0.9, 0.1);
    let (worst, n) = count(ball, EventDrivenSettings::new(0.005, 10.0), 2);
    assert!(n > 1900);
    assert_eq!(worst, 0, "ball");
    let (bridge, _, _) = common::diode_bridge();
    let (worst, n) = count(bridge, EventDrivenSettings::new(1e-5, 5e-3), 2);
    assert!(n > 400);
    assert_eq!(worst, 0, "diode bridge");
    let (relay, _, _) = common::relay(1.0, 1.0, [0.0, 2.21]);
    let (worst, _) = count(relay, EventDrivenSettings::new(0.01, 10.0), 2);
    assert_eq!(worst, 0, "relay");
}
