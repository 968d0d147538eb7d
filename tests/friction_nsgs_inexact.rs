//! NSGS with inexact local solves (the local tolerance that follows the
//! sweeps' relative change, `Nsgs::with_local_forcing`) against exact local
//! solves (η = 0) and the planted solutions of the independent oracle
//! (tests/friction_oracle); and the dense set-up's finiteness check.

mod friction_oracle;

use friction_oracle::{planted, siconos_error, Rng, State};
use nonsmooth::numerics::friction::{FrictionProblem, FrictionSolver, Nsgs};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, NumericsError, SolveStatus, SolverSettings};

fn settings(tol: f64) -> SolverSettings {
    SolverSettings {
        tolerance: tol,
        ..Default::default()
    }
}

/// Solves from r = 0; returns (status, sweeps, r).
fn solve(mut s: Nsgs, p: &FrictionProblem) -> (SolveStatus, usize, Vec<f64>) {
    let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
    let rep = s.solve(p, &mut r, &mut u).unwrap();
    (rep.status, rep.iterations, r)
}

#[test]
fn inexact_local_solves_reach_the_planted_solution_of_exact_ones() {
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let tol = 1e-10;
    for d in [2, 3] {
        for nc in [4, 12, 30] {
            for _ in 0..4 {
                let states: Vec<State> = (0..nc)
                    .map(|_| match (rng.next() * 3.0) as usize {
                        0 => State::Separated,
                        1 => State::Sticking,
                        _ => State::Sliding,
                    })
                    .collect();
                let (w, q, mu, r_star, _) = planted(d, &states, &mut rng);
                let sizes = vec![d; nc];
                let storages = [
                    Matrix::Dense(w.clone()),
                    Matrix::BlockSparse(BlockSparseMatrix::from_dense(&w, &sizes, &sizes).unwrap()),
                ];
                for m in storages {
                    let p = FrictionProblem::new(d, m, q.clone(), mu.clone()).unwrap();
                    let (st_exact, _, r_exact) =
                        solve(Nsgs::new(settings(tol)).with_local_forcing(0.0), &p);
                    let (st, _, r) = solve(Nsgs::new(settings(tol)), &p);
                    let (st_loose, _, r_loose) =
                        solve(Nsgs::new(settings(tol)).with_local_forcing(0.5), &p);
                    let label = format!("d={d} nc={nc}");
                    for (name, st, r) in [
                        ("exact", st_exact, &r_exact),
                        ("default", st, &r),
                        ("η=0.5", st_loose, &r_loose),
                    ] {
                        assert_eq!(st, SolveStatus::Solved, "{label} {name}");
                        // The oracle's own measure from W, q and r.
                        let e = siconos_error(d, &w, &q, &mu, r);
                        assert!(e <= tol, "{label} {name}: oracle error {e:e}");
                        // W is positive definite with μ < 1 here: the
                        // planted r* is the solution found.
                        let scale = r_star.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                        let dev = r
                            .iter()
                            .zip(&r_star)
                            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                        assert!(dev <= 1e-7 * scale, "{label} {name}: |r − r*| = {dev:e}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_non_finite_dense_w_is_named_by_the_solve() {
    let mut rng = Rng(77);
    let states = [State::Sliding, State::Sticking, State::Separated];
    let (w, q, mu, _, _) = planted(3, &states, &mut rng);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for (i, j) in [(0, 0), (4, 7), (8, 1)] {
            let mut wb = w.clone();
            wb[(i, j)] = bad;
            // Built field by field (`FrictionProblem::new` would refuse
            // it): the solve itself must find the entry.
            let p = FrictionProblem {
                dim: 3,
                w: Matrix::Dense(wb),
                q: q.clone(),
                mu: mu.clone(),
            };
            let (mut r, mut u) = (vec![0.0; 9], vec![0.0; 9]);
            let err = Nsgs::new(settings(1e-10))
                .solve(&p, &mut r, &mut u)
                .unwrap_err();
            match err {
                NumericsError::NonFinite { what, index, value } => {
                    assert_eq!(what, "W");
                    // Row-major index of entry (i, j), as `validate` gives.
                    assert_eq!(index, i * 9 + j, "{bad} at ({i}, {j})");
                    assert!(value.is_nan() == bad.is_nan());
                }
                other => panic!("expected a NonFinite error, got {other}"),
            }
        }
    }
    // Entries so large that the scan's sums overflow are finite: the solve
    // goes on (the set-up's check falls back to W's entry by entry).
    let mut wb = w.clone();
    for j in 0..3 {
        wb[(3, j)] = 1.5e308;
    }
    let p = FrictionProblem {
        dim: 3,
        w: Matrix::Dense(wb),
        q: q.clone(),
        mu: mu.clone(),
    };
    assert!(p.validate().is_ok());
    let (mut r, mut u) = (vec![0.0; 9], vec![0.0; 9]);
    assert!(Nsgs::new(settings(1e-10)).solve(&p, &mut r, &mut u).is_ok());
}
