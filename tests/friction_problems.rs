//! Frictional contact solvers against an independent oracle
//! (tests/friction_oracle): one-contact closed forms, planted solutions with
//! separated, sticking and sliding contacts in 2D and 3D, problems without
//! solution, the global reduction, and the text files' round trip.

mod friction_oracle;

use friction_oracle::{
    coulomb_violation, natural_map, planted, siconos_error, velocity, Rng, State,
};
use nalgebra::DMatrix;
use nonsmooth::io::friction_text::{
    parse_friction, parse_global_friction, write_friction_to, write_global_friction_to,
};
use nonsmooth::numerics::friction::{
    friction_solver, FrictionProblem, GlobalFrictionProblem, FRICTION_SOLVERS,
};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveStatus, SolverSettings};
use proptest::prelude::*;

fn settings(tol: f64) -> SolverSettings {
    SolverSettings {
        tolerance: tol,
        ..Default::default()
    }
}

fn solvers() -> Vec<&'static str> {
    FRICTION_SOLVERS.split(", ").collect()
}

/// Solves with `name` from r = 0; returns (status, r, u).
fn solve(name: &str, p: &FrictionProblem, tol: f64) -> (SolveStatus, Vec<f64>, Vec<f64>) {
    let mut s = friction_solver(name, settings(tol)).unwrap();
    let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
    let rep = s.solve(p, &mut r, &mut u).unwrap();
    (rep.status, r, u)
}

/// A solution claimed solved must pass the oracle: its natural map,
/// recomputed here from W, q and r, meets the tolerance.
fn check_claim(label: &str, w: &DMatrix<f64>, p: &FrictionProblem, r: &[f64], tol: f64) {
    let e = siconos_error(p.dim, w, &p.q, &p.mu, r);
    assert!(
        e <= tol,
        "{label}: reported solved but the oracle error is {e:e}"
    );
}

#[test]
fn oracle_agrees_with_the_planted_solutions_and_the_library_measure() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for d in [2, 3] {
        let states = [
            State::Separated,
            State::Sticking,
            State::Sliding,
            State::Sliding,
        ];
        let (w, q, mu, r, u) = planted(d, &states, &mut rng);
        assert!(natural_map(d, &mu, &r, &u) < 1e-12);
        let p = FrictionProblem::new(d, w.clone(), q.clone(), mu.clone()).unwrap();
        // On arbitrary points the library's measure equals the oracle's.
        for _ in 0..20 {
            let x: Vec<f64> = (0..p.size()).map(|_| rng.range(-2.0, 2.0)).collect();
            let ux = velocity(&w, &q, &x);
            let lib = p.errors(&x, &ux).absolute;
            let ora = natural_map(d, &mu, &x, &ux);
            assert!((lib - ora).abs() <= 1e-12 * (1.0 + ora), "{lib} vs {ora}");
        }
    }
}

#[test]
fn one_contact_closed_forms_in_2d_and_3d() {
    // W = diag(a, b, b): every solver must find the closed form.
    let (a, b, mu) = (2.0, 0.5, 0.4);
    for d in [2, 3] {
        let w = DMatrix::from_fn(d, d, |i, j| match (i, j) {
            (0, 0) => a,
            (i, j) if i == j => b,
            _ => 0.0,
        });
        let t = |x: f64| {
            let mut v = vec![x; d - 1];
            if d == 3 {
                v[1] = -0.5 * x;
            }
            v
        };
        // (q, expected r)
        let mut cases: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        // Take-off: q_N > 0 → r = 0.
        cases.push(([vec![1.0], t(3.0)].concat(), vec![0.0; d]));
        // Sticking: r = (1, r_T) with ‖r_T‖ < μ → q = −W r.
        let rt = t(0.2);
        let r_stick = [vec![1.0], rt.clone()].concat();
        let q_stick: Vec<f64> = (0..d).map(|k| -w[(k, k)] * r_stick[k]).collect();
        cases.push((q_stick, r_stick));
        // Sliding: q_N = −a, ‖q_T‖ > μ b → r_N = 1, r_T = −μ q̂_T.
        let qt = t(1.0);
        let nqt = qt.iter().map(|v| v * v).sum::<f64>().sqrt();
        let r_slide = [vec![1.0], qt.iter().map(|v| -mu * v / nqt).collect()].concat();
        cases.push(([vec![-a], qt].concat(), r_slide));
        for (k, (q, expect)) in cases.into_iter().enumerate() {
            let p = FrictionProblem::new(d, w.clone(), q, vec![mu]).unwrap();
            for name in solvers() {
                let (st, r, _) = solve(name, &p, 1e-12);
                assert_eq!(st, SolveStatus::Solved, "{name} d={d} case {k}");
                check_claim(name, &w, &p, &r, 1e-12);
                for i in 0..d {
                    assert!(
                        (r[i] - expect[i]).abs() < 1e-9,
                        "{name} d={d} case {k}: r = {r:?}, expected {expect:?}"
                    );
                }
            }
        }
    }
}

fn mixed_states(nc: usize, rng: &mut Rng) -> Vec<State> {
    let mut s: Vec<State> = (0..nc)
        .map(|_| match (rng.next() * 3.0) as usize {
            0 => State::Separated,
            1 => State::Sticking,
            _ => State::Sliding,
        })
        .collect();
    // All three present.
    if nc >= 3 {
        s[0] = State::Separated;
        s[1] = State::Sticking;
        s[2] = State::Sliding;
    }
    s
}

#[test]
fn planted_problems_are_solved_by_every_solver_dense_and_block_sparse() {
    let mut rng = Rng(12345);
    for d in [2, 3] {
        for nc in [1, 3, 12] {
            let states = mixed_states(nc, &mut rng);
            let (w, q, mu, _, _) = planted(d, &states, &mut rng);
            let sizes = vec![d; nc];
            let storages: [Matrix; 2] = [
                Matrix::Dense(w.clone()),
                Matrix::BlockSparse(BlockSparseMatrix::from_dense(&w, &sizes, &sizes).unwrap()),
            ];
            for m in storages {
                let p = FrictionProblem::new(d, m, q.clone(), mu.clone()).unwrap();
                for name in solvers() {
                    let tol = 1e-10;
                    let (st, r, _) = solve(name, &p, tol);
                    let label = format!("{name} d={d} nc={nc}");
                    // The first-order methods may stop at their iteration limit,
                    // never with a false claim; the others must solve.
                    if st == SolveStatus::Solved {
                        check_claim(&label, &w, &p, &r, tol);
                    } else {
                        assert!(
                            matches!(name, "vi-eg" | "admm" | "nsgs-proj"),
                            "{label}: {st}"
                        );
                    }
                    let u = velocity(&w, &p.q, &r);
                    if st == SolveStatus::Solved {
                        let scale = 1.0 + r.iter().chain(&u).fold(0.0f64, |m, v| m.max(v.abs()));
                        let v = coulomb_violation(d, &mu, &r, &u, scale);
                        assert!(v < 1e-6, "{label}: Coulomb violation {v}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Random planted problems: the default solver solves them and the
    /// oracle confirms.
    #[test]
    fn default_solves_random_planted_problems(seed in 1u64..u64::MAX, nc in 1usize..20, three in any::<bool>()) {
        let d = if three { 3 } else { 2 };
        let mut rng = Rng(seed);
        let states = mixed_states(nc, &mut rng);
        let (w, q, mu, _, _) = planted(d, &states, &mut rng);
        let p = FrictionProblem::new(d, w.clone(), q, mu).unwrap();
        let (st, r, _) = solve("default", &p, 1e-10);
        prop_assert_eq!(st, SolveStatus::Solved);
        let e = siconos_error(d, &w, &p.q, &p.mu, &r);
        prop_assert!(e <= 1e-10, "oracle error {}", e);
    }
}

#[test]
fn a_problem_without_solution_is_never_reported_solved() {
    // u_N = −r_N − 1 < 0 whatever r_N ≥ 0: no solution (2 contacts, the
    // second one harmless).
    for d in [2, 3] {
        let n = 2 * d;
        let mut w = DMatrix::identity(n, n);
        w[(0, 0)] = -1.0;
        let mut q = vec![0.5; n];
        q[0] = -1.0;
        let p = FrictionProblem::new(d, w.clone(), q, vec![0.3, 0.3]).unwrap();
        for name in solvers() {
            let mut s = friction_solver(
                name,
                SolverSettings {
                    tolerance: 1e-8,
                    max_iterations: Some(200),
                    ..Default::default()
                },
            )
            .unwrap();
            let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
            let rep = s.solve(&p, &mut r, &mut u).unwrap();
            assert_ne!(rep.status, SolveStatus::Solved, "{name} d={d}");
            assert!(siconos_error(d, &w, &p.q, &p.mu, &r) > 1e-8 || !rep.status.is_solved());
        }
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let w = DMatrix::identity(3, 3);
    assert!(FrictionProblem::new(3, w.clone(), vec![0.0; 3], vec![-0.1]).is_err());
    assert!(FrictionProblem::new(3, w.clone(), vec![0.0; 2], vec![0.1]).is_err());
    assert!(FrictionProblem::new(4, w.clone(), vec![0.0; 3], vec![0.1]).is_err());
    assert!(FrictionProblem::new(3, w.clone(), vec![f64::NAN, 0.0, 0.0], vec![0.1]).is_err());
    let p = FrictionProblem::new(3, w, vec![-1.0, 0.0, 0.0], vec![0.1]).unwrap();
    let mut s = friction_solver("default", settings(1e-8)).unwrap();
    assert!(s.solve(&p, &mut [0.0; 2], &mut [0.0; 3]).is_err());
    assert!(s
        .solve(&p, &mut [f64::NAN, 0.0, 0.0], &mut [0.0; 3])
        .is_err());
    assert!(friction_solver("nope", settings(1e-8)).is_err());
    assert!(friction_solver("nsgs", settings(-1.0)).is_err());
}

#[test]
fn global_problem_reduces_and_recovers_v() {
    let mut rng = Rng(777);
    let (d, nc, n) = (3, 4, 9);
    let a = DMatrix::from_fn(n, n, |_, _| rng.range(-1.0, 1.0));
    let m = &a * a.transpose() + DMatrix::identity(n, n);
    let h = DMatrix::from_fn(n, d * nc, |_, _| rng.range(-1.0, 1.0));
    let f: Vec<f64> = (0..n).map(|_| rng.range(-1.0, 1.0)).collect();
    let mut w: Vec<f64> = (0..d * nc).map(|_| rng.range(-0.5, 0.5)).collect();
    w[0] = -3.0; // contact 0 is pushed in
    let g =
        GlobalFrictionProblem::new(d, m.clone(), h.clone(), f.clone(), w.clone(), vec![0.3; nc])
            .unwrap();
    let mut s = friction_solver("default", settings(1e-10)).unwrap();
    let sol = g.solve_reduced(s.as_mut(), None).unwrap();
    assert_eq!(sol.report.status, SolveStatus::Solved);
    // Oracle on the global data: M v = H r + f and u = Hᵀ v + w satisfy Coulomb.
    let v = nalgebra::DVector::from_column_slice(&sol.v);
    let r = nalgebra::DVector::from_column_slice(&sol.r);
    let res = &m * &v - &h * &r - nalgebra::DVector::from_column_slice(&f);
    assert!(
        res.norm() < 1e-10 * (1.0 + v.norm()),
        "momentum residual {}",
        res.norm()
    );
    let u: Vec<f64> = (h.transpose() * &v)
        .iter()
        .zip(&w)
        .map(|(a, b)| a + b)
        .collect();
    let scale = r
        .norm()
        .max(nalgebra::DVector::from_column_slice(&u).norm());
    assert!(natural_map(d, &g.mu, &sol.r, &u) <= 1e-9 * scale);
    assert!(sol.r[0] > 0.0, "the pushed contact carries a force");
}

#[test]
fn text_files_round_trip_and_truncations_are_errors() {
    let mut rng = Rng(99);
    let (w, q, mu, _, _) = planted(3, &[State::Sliding, State::Sticking], &mut rng);
    let sizes = [3, 3];
    for m in [
        Matrix::Dense(w.clone()),
        Matrix::BlockSparse(BlockSparseMatrix::from_dense(&w, &sizes, &sizes).unwrap()),
    ] {
        let p = FrictionProblem::new(3, m, q.clone(), mu.clone()).unwrap();
        let mut buf = Vec::new();
        write_friction_to(&mut buf, &p).unwrap();
        let back = parse_friction("mem.dat", &buf).unwrap();
        assert_eq!(back, p);
        // Every cut before the last number's first character loses a value.
        let text = String::from_utf8(buf.clone()).unwrap();
        let last = text.trim_end().rfind(char::is_whitespace).unwrap() + 1;
        for cut in (0..=last).step_by(7) {
            assert!(
                parse_friction("cut.dat", &buf[..cut]).is_err(),
                "cut at {cut}"
            );
        }
    }
    let g = GlobalFrictionProblem::new(
        3,
        DMatrix::identity(4, 4),
        DMatrix::from_fn(4, 3, |i, j| (i + j) as f64),
        vec![1.0; 4],
        vec![-1.0, 0.0, 0.0],
        vec![0.5],
    )
    .unwrap();
    let mut buf = Vec::new();
    write_global_friction_to(&mut buf, &g).unwrap();
    assert_eq!(parse_global_friction("g.dat", &buf).unwrap(), g);
    assert!(parse_friction("x.dat", b"4 1 0 3 3 3 3 1 0 0 0 1 0 0 0 1 0 0 0 0.1").is_err());
}

#[test]
fn over_relaxed_nsgs_and_warm_start() {
    use nonsmooth::numerics::friction::{FrictionSolver, Nsgs};
    let mut rng = Rng(2024);
    let states = mixed_states(10, &mut rng);
    let (w, q, mu, _, _) = planted(3, &states, &mut rng);
    let p = FrictionProblem::new(3, w.clone(), q, mu).unwrap();
    let mut s = Nsgs::new(settings(1e-10)).with_relaxation(1.3);
    let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
    let rep = s.solve(&p, &mut r, &mut u).unwrap();
    assert_eq!(rep.status, SolveStatus::Solved);
    check_claim("nsgs ω=1.3", &w, &p, &r, 1e-10);
    // Warm start from the solution: solved without a full sweep budget.
    let rep2 = s.solve(&p, &mut r, &mut u).unwrap();
    assert_eq!(rep2.status, SolveStatus::Solved);
    assert!(
        rep2.iterations < rep.iterations.max(2),
        "{} vs {}",
        rep2.iterations,
        rep.iterations
    );
}
