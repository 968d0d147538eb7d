//! The frictional contact problems of the shared Siconos test data
//! (../shared/data/fc2d, fc3d, gfc3d), solved by the default solver at
//! 1e-8 (Siconos normalisation). Every claimed solution is checked here by
//! the independent oracle from a dense copy of W; problems beyond 1000
//! unknowns are left to the benchmark (they take seconds).

mod friction_oracle;

use std::path::{Path, PathBuf};

use friction_oracle::{natural_map, siconos_error};
use nonsmooth::io::friction_text::{read_friction, read_global_friction};
use nonsmooth::io::ReadError;
use nonsmooth::numerics::friction::{friction_solver, FrictionProblem};
use nonsmooth::numerics::{SolveStatus, SolverSettings};

const TOL: f64 = 1e-8;
const MAX_UNKNOWNS: usize = 1000;

fn files(family: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(family);
    assert!(
        dir.is_dir(),
        "the shared test data is missing: {}",
        dir.display()
    );
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Solves with the default solver; checks a claim with the oracle; returns
/// whether it was solved.
fn solve_and_check(label: &str, p: &FrictionProblem) -> bool {
    let mut s = friction_solver(
        "default",
        SolverSettings {
            tolerance: TOL,
            ..Default::default()
        },
    )
    .unwrap();
    let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
    let rep = s.solve(p, &mut r, &mut u).unwrap();
    let w = p.w.to_dense();
    let e = siconos_error(p.dim, &w, &p.q, &p.mu, &r);
    println!("{label:45} {:16} oracle error {e:.2e}", rep.status.as_str());
    if rep.status == SolveStatus::Solved {
        assert!(e <= TOL, "{label}: reported solved, oracle error {e:e}");
        assert!((rep.error - e).abs() <= 1e-6 * e.max(1e-300) + 1e-15);
        true
    } else {
        false
    }
}

fn local_family(family: &str) -> (usize, usize) {
    let (mut solved, mut tried) = (0, 0);
    for f in files(family) {
        let label = name(&f);
        match read_friction(&f) {
            Ok(p) => {
                assert_eq!(p.dim, if family == "fc2d" { 2 } else { 3 }, "{label}");
                if p.size() > MAX_UNKNOWNS {
                    continue;
                }
                tried += 1;
                solved += usize::from(solve_and_check(&label, &p));
            }
            Err(ReadError::Unsupported { .. }) if label.contains("07002") => {
                // 14004² entries in a CSparse dump: refused (densified beyond 2²⁷).
            }
            Err(e) => panic!("{label}: {e}"),
        }
    }
    (solved, tried)
}

#[test]
fn fc2d_problems_are_solved() {
    let (solved, tried) = local_family("fc2d");
    println!("fc2d: {solved} of {tried} solved");
    assert_eq!(tried, 8);
    assert_eq!(solved, tried);
}

#[test]
fn fc3d_problems_are_solved() {
    let (solved, tried) = local_family("fc3d");
    println!("fc3d: {solved} of {tried} solved");
    assert_eq!(tried, 33);
    assert_eq!(solved, tried);
}

#[test]
fn gfc3d_problems_are_solved_by_reduction() {
    for f in files("gfc3d") {
        let label = name(&f);
        let g = read_global_friction(&f).unwrap_or_else(|e| panic!("{e}"));
        let mut s = friction_solver(
            "default",
            SolverSettings {
                tolerance: TOL,
                ..Default::default()
            },
        )
        .unwrap();
        let sol = g.solve_reduced(s.as_mut(), None).unwrap();
        assert_eq!(sol.report.status, SolveStatus::Solved, "{label}");
        // Oracle on the global data: u = Hᵀ v + w from the returned v.
        let h = g.h.to_dense();
        let m = g.m.to_dense();
        let v = nalgebra::DVector::from_column_slice(&sol.v);
        let u: Vec<f64> = (h.transpose() * &v)
            .iter()
            .zip(&g.w)
            .map(|(a, b)| a + b)
            .collect();
        let res = &m * &v
            - &h * nalgebra::DVector::from_column_slice(&sol.r)
            - nalgebra::DVector::from_column_slice(&g.f);
        let n2 = |x: &[f64]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
        let scale = n2(&sol.r).max(n2(&u)).max(1e-300);
        assert!(
            res.norm() <= 1e-9 * (1.0 + n2(&g.f) + n2(&sol.v)),
            "{label}"
        );
        let e = natural_map(3, &g.mu, &sol.r, &u) / scale;
        println!("{label:45} oracle error (global data) {e:.2e}");
        assert!(e <= 1e-7, "{label}: {e:e}");
    }
}
