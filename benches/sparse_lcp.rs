//! Per-solve cost of the sparse LCP solver on bead chains (W tridiagonal,
//! 2/m on the diagonal, −1/m beside it, a planted solution with mixed
//! active and inactive contacts), against the default dense solver.
//!
//! Each case is solved by a solver already sized for it (first solve not
//! timed), repeatedly: "cold" from z = 0, "warm" from the solution, as a
//! time step that starts from the previous step's contact forces. The table
//! gives the median time of one solve, its factorisations and the time per
//! factorisation and per contact, which stays flat when the cost is linear.
//!
//! A second table compares the solver's factorisation (faer's simplicial
//! Cholesky replayed on the fixed structure, over the active rows only)
//! with faer's own numeric refactorisation of the whole K on a symbolic
//! factor computed once, plus its solve, the alternative it was measured
//! against (docs/simulation-benchmark.md).
//!
//! Run: `cargo bench --bench sparse_lcp` (release build).
//! `NONSMOOTH_BENCH_SECONDS` (default 0.3) sets the time spent per case.

use std::time::{Duration, Instant};

use nalgebra::DMatrix;
use nonsmooth::numerics::lcp::{lcp_solver, Lcp, LcpSolver};
use nonsmooth::numerics::matrix::Block;
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveReport, SolverSettings};

const MASS: f64 = 0.5;

fn chain(n: usize) -> BlockSparseMatrix {
    let mut blocks = Vec::with_capacity(3 * n);
    for i in 0..n {
        blocks.push(Block {
            row: i,
            col: i,
            values: vec![2.0 / MASS],
        });
        if i + 1 < n {
            for (r, c) in [(i, i + 1), (i + 1, i)] {
                blocks.push(Block {
                    row: r,
                    col: c,
                    values: vec![-1.0 / MASS],
                });
            }
        }
    }
    BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).expect("valid chain")
}

/// The chain LCP with a planted solution z* (returned with it).
fn problem(n: usize, dense: bool) -> (Lcp, Vec<f64>) {
    let active = |i: usize| (i / 3).is_multiple_of(2) || i % 7 == 3;
    let zs: Vec<f64> = (0..n)
        .map(|i| {
            if active(i) {
                0.5 + (i % 4) as f64 * 0.5
            } else {
                0.0
            }
        })
        .collect();
    let mut q: Vec<f64> = (0..n)
        .map(|i| {
            if active(i) {
                0.0
            } else {
                0.1 + (i % 10) as f64 * 0.1
            }
        })
        .collect();
    let m = chain(n);
    nonsmooth::numerics::ProblemMatrix::gemv(&m, -1.0, &zs, 1.0, &mut q);
    let m = if dense {
        let mut d = DMatrix::zeros(n, n);
        nonsmooth::numerics::ProblemMatrix::write_dense(&m, &mut d);
        Matrix::Dense(d)
    } else {
        Matrix::BlockSparse(m)
    };
    (Lcp::new(m, q).expect("valid LCP"), zs)
}

fn fmt_time(d: f64) -> String {
    if d < 1e-3 {
        format!("{:.1} µs", d * 1e6)
    } else if d < 1.0 {
        format!("{:.2} ms", d * 1e3)
    } else {
        format!("{d:.2} s")
    }
}

/// Median time of faer's numeric refactorisation and solve of the chain's
/// K = [M_AA, 0; 0, I] (A: the planted active set, in the full pattern of
/// M), on a symbolic factor computed once as the solver's (AMD ordering,
/// simplicial).
fn faer_refactorisation(n: usize, budget: Duration) -> Duration {
    use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
    use faer::linalg::cholesky::llt::factor::LltRegularization;
    use faer::sparse::linalg::cholesky::{
        factorize_symbolic_cholesky, CholeskySymbolicParams, SymmetricOrdering,
    };
    use faer::sparse::linalg::SupernodalThreshold;
    use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
    use faer::{Conj, MatMut, Par, Side};

    let (lcp, zs) = problem(n, false);
    let active: Vec<bool> = zs.iter().map(|z| *z > 0.0).collect();
    // Upper triangle of the tridiagonal pattern, column by column.
    let mut col_ptr = vec![0usize];
    let mut row_idx = Vec::new();
    for j in 0..n {
        if j > 0 {
            row_idx.push(j - 1);
        }
        row_idx.push(j);
        col_ptr.push(row_idx.len());
    }
    let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
    let symbolic = factorize_symbolic_cholesky(
        pattern,
        Side::Upper,
        SymmetricOrdering::Amd,
        CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        },
    )
    .expect("symbolic factor");
    let mut values = vec![0.0; row_idx.len()];
    let mut l = vec![0.0; symbolic.len_val()];
    let mut mem = MemBuffer::new(StackReq::any_of(&[
        symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
        symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
    ]));
    let mut y = vec![0.0; n];
    let mut times = Vec::new();
    let t0 = Instant::now();
    while times.len() < 3 || (t0.elapsed() < budget && times.len() < 10_000) {
        let t = Instant::now();
        // As the solver: refill K's values, factorise, solve.
        for j in 0..n {
            for k in col_ptr[j]..col_ptr[j + 1] {
                let i = row_idx[k];
                values[k] = match (i == j, active[i] && active[j]) {
                    (true, _) if active[j] => 2.0 / MASS,
                    (true, _) => 1.0,
                    (false, true) => -1.0 / MASS,
                    (false, false) => 0.0,
                };
            }
        }
        let llt = symbolic
            .factorize_numeric_llt::<f64>(
                &mut l,
                SparseColMatRef::new(pattern, &values),
                Side::Upper,
                LltRegularization::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .expect("positive definite");
        for (i, v) in y.iter_mut().enumerate() {
            *v = if active[i] { -lcp.q[i] } else { 0.0 };
        }
        llt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut y, n, 1),
            Par::Seq,
            MemStack::new(&mut mem),
        );
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// Median time of a solve from `start` and the report of the last one.
fn time(
    solver: &mut dyn LcpSolver,
    lcp: &Lcp,
    start: &[f64],
    budget: Duration,
) -> (Duration, SolveReport) {
    let n = lcp.size();
    let (mut z, mut w) = (start.to_vec(), vec![0.0; n]);
    let mut report = solver.solve(lcp, &mut z, &mut w).expect("valid input");
    let mut times = Vec::new();
    let t0 = Instant::now();
    while times.len() < 3 || (t0.elapsed() < budget && times.len() < 10_000) {
        z.copy_from_slice(start);
        let t = Instant::now();
        report = solver.solve(lcp, &mut z, &mut w).expect("valid input");
        times.push(t.elapsed());
    }
    times.sort();
    (times[times.len() / 2], report)
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::var("NONSMOOTH_BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.3),
    );
    let settings = SolverSettings::default();
    println!("| N | solver | storage | start | status | factorisations | time per solve | per factorisation | per factorisation and contact |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let cases = [
        (100, "sparse", false),
        (1000, "sparse", false),
        (10000, "sparse", false),
        (100, "default", true),
        (1000, "default", true),
    ];
    for (n, name, dense) in cases {
        let (lcp, zs) = problem(n, dense);
        let zero = vec![0.0; n];
        let starts: &[(&str, &[f64])] = if name == "sparse" {
            &[("cold", &zero), ("warm", &zs)]
        } else {
            &[("cold", &zero)]
        };
        for (label, start) in starts {
            let mut solver = lcp_solver(name, settings).expect("known solver");
            let (t, r) = time(solver.as_mut(), &lcp, start, budget);
            let t = t.as_secs_f64();
            let (per_factor, per_contact) = if name == "sparse" {
                let f = t / r.iterations as f64;
                (fmt_time(f), format!("{:.1} ns", f / n as f64 * 1e9))
            } else {
                ("–".into(), "–".into())
            };
            let storage = if dense { "dense" } else { "block-sparse" };
            let factorisations = if name == "sparse" {
                r.iterations.to_string()
            } else {
                format!("– ({} iterations, by {})", r.iterations, r.solver)
            };
            println!(
                "| {n} | {name} | {storage} | {label} | {} | {factorisations} | {} | {per_factor} | {per_contact} |",
                r.status,
                fmt_time(t)
            );
        }
    }
    println!();
    println!("| N | sparse solver, per factorisation (cold) | faer refactorisation + solve alone | faer / solver |");
    println!("|---|---|---|---|");
    for n in [100, 1000, 10000] {
        let (lcp, _) = problem(n, false);
        let mut solver = lcp_solver("sparse", settings).expect("known solver");
        let (t, r) = time(solver.as_mut(), &lcp, &vec![0.0; n], budget);
        let ours = t.as_secs_f64() / r.iterations as f64;
        let faer = faer_refactorisation(n, budget).as_secs_f64();
        println!(
            "| {n} | {} | {} | {:.1}× |",
            fmt_time(ours),
            fmt_time(faer),
            faer / ours
        );
    }
}
