//! Every LCP, MLCP and relay problem of the shared Siconos test data, solved by
//! the default solver of its family. A claimed solution is checked here from
//! the file's data, independently of the solver's report: w = M z + q is
//! recomputed from a dense copy of M and feasibility and complementarity are
//! checked componentwise. Problems without a solution must never be reported
//! solved.

use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use nonsmooth::io::{read_problem, Problem, ProblemKind};
use nonsmooth::numerics::lcp::{lcp_solver, LcpSolver, Lemke};
use nonsmooth::numerics::mlcp::mlcp_solver;
use nonsmooth::numerics::relay::relay_solver;
use nonsmooth::numerics::{SolveReport, SolveStatus, SolverSettings};

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    assert!(
        dir.is_dir(),
        "the shared test data is missing: expected {} (the tests need ../shared/data beside the repository)",
        dir.display()
    );
    dir
}

fn files(family: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir().join(family))
        .unwrap_or_else(|e| panic!("cannot list {family}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no {family} problems found");
    v
}

/// Problems with no solution, with the reason (checked by hand).
const NO_SOLUTION: &[(&str, &str)] = &[(
    "lcp_Pang_isolated_sol_perturbed.dat",
    "rows 2 and 3 force z₁ = 1 (w₂ = z₁ − 1 ≥ 0, w₃ = 1 − z₁ ≥ 0); then w₁ = −z₂ − z₃ − 1e-4 < 0",
)];

fn settings() -> SolverSettings {
    // The target: error ≤ 1e-8 (normalised as Siconos normalises it).
    SolverSettings {
        tolerance: 1e-8,
        ..SolverSettings::default()
    }
}

/// Independent check of (z, w) against the data: returns the largest violation.
fn violation(m: &DMatrix<f64>, q: &[f64], z: &[f64], kind: &Kind) -> f64 {
    let n = q.len();
    let w: Vec<f64> = (0..n)
        .map(|i| q[i] + (0..n).map(|j| m[(i, j)] * z[j]).sum::<f64>())
        .collect();
    let mut worst = 0.0f64;
    for i in 0..n {
        let v = match kind {
            Kind::Comp { n_eq } if i < *n_eq => w[i].abs(),
            Kind::Comp { .. } => (-z[i]).max(-w[i]).max(0.0).max(z[i].min(w[i]).abs()),
            Kind::Box { lb, ub } => {
                let out = (lb[i] - z[i]).max(z[i] - ub[i]).max(0.0);
                // interior ⇒ w = 0; at lb ⇒ w ≥ 0; at ub ⇒ w ≤ 0: the natural map
                let p = (z[i] - w[i]).clamp(lb[i], ub[i]);
                out.max((z[i] - p).abs())
            }
        };
        worst = worst.max(v);
    }
    worst
}

enum Kind {
    Comp { n_eq: usize },
    Box { lb: Vec<f64>, ub: Vec<f64> },
}

fn solve_default(p: &Problem) -> (SolveReport, Vec<f64>, DMatrix<f64>, Vec<f64>, Kind) {
    let n = p.size();
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let s = settings();
    match p {
        Problem::Lcp(l) => {
            let r = lcp_solver("default", s)
                .unwrap()
                .solve(l, &mut z, &mut w)
                .unwrap();
            (r, z, l.m.to_dense(), l.q.clone(), Kind::Comp { n_eq: 0 })
        }
        Problem::Mlcp(l) => {
            let r = mlcp_solver("default", s)
                .unwrap()
                .solve(l, &mut z, &mut w)
                .unwrap();
            (
                r,
                z,
                l.m.to_dense(),
                l.q.clone(),
                Kind::Comp { n_eq: l.n_eq },
            )
        }
        Problem::Relay(l) => {
            let r = relay_solver("default", s)
                .unwrap()
                .solve(l, &mut z, &mut w)
                .unwrap();
            let kind = Kind::Box {
                lb: l.lb.clone(),
                ub: l.ub.clone(),
            };
            (r, z, l.m.to_dense(), l.q.clone(), kind)
        }
    }
}

fn check_family(family: &str, kind: ProblemKind) {
    let mut failures = Vec::new();
    for path in files(family) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let problem = read_problem(&path, kind).unwrap_or_else(|e| panic!("{e}"));
        let (report, z, m, q, k) = solve_default(&problem);
        let expected_none = NO_SOLUTION.iter().find(|(f, _)| *f == name);
        match (report.status, expected_none) {
            (SolveStatus::Solved, None) => {
                assert!(
                    report.error <= 1e-8,
                    "{name}: solved with error {}",
                    report.error
                );
                let scale = 1.0 + q.iter().map(|v| v.abs()).fold(0.0, f64::max);
                let v = violation(&m, &q, &z, &k);
                if v > 1e-8 * scale {
                    failures.push(format!(
                        "{name}: reported solved but violates the conditions by {v:e}"
                    ));
                }
            }
            (SolveStatus::Solved, Some((_, why))) => failures.push(format!(
                "{name}: reported solved although it has no solution ({why})"
            )),
            (status, Some(_)) => {
                assert_ne!(status, SolveStatus::Solved);
            }
            (status, None) => failures.push(format!(
                "{name}: not solved: {status} (error {:e})",
                report.error
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn default_lcp_solver_solves_every_shared_lcp_with_a_solution() {
    check_family("lcp", ProblemKind::Lcp);
}

#[test]
fn default_mlcp_solver_solves_every_shared_mlcp() {
    check_family("mlcp", ProblemKind::Mlcp);
}

#[test]
fn default_relay_solver_solves_every_shared_relay_problem() {
    check_family("relay", ProblemKind::Relay);
}

/// lcp_tobenna (a degenerate game LCP, q with many zeros) makes every
/// lexicographic tie-break hinge on exact zeros of B⁻¹ that floating point
/// gives as rounding noise. Exact rational Lemke solves it in 127 pivots; so
/// must this one, without cycling to the pivot limit.
#[test]
fn lemke_lexicographic_ties_ignore_rounding_noise() {
    let path = data_dir().join("lcp/lcp_tobenna.dat");
    let Problem::Lcp(lcp) = read_problem(&path, ProblemKind::Lcp).unwrap() else {
        unreachable!()
    };
    let n = lcp.size();
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    let r = Lemke::new(settings()).solve(&lcp, &mut z, &mut w).unwrap();
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    assert_eq!(r.iterations, 127);
}
