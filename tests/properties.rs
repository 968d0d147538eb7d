//! Property tests on random problems with planted solutions. Every check
//! recomputes w = M z + q from the problem data and verifies feasibility and
//! complementarity itself, independently of the solver's report.

use nalgebra::DMatrix;
use nonsmooth::numerics::lcp::{lcp_solver, Lcp};
use nonsmooth::numerics::mlcp::{mlcp_solver, Mlcp};
use nonsmooth::numerics::relay::{relay_solver, Relay};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveStatus, SolverSettings};
use proptest::prelude::*;

/// A random n×n matrix with entries in [-1, 1].
fn matrix(n: usize) -> impl Strategy<Value = DMatrix<f64>> {
    prop::collection::vec(-1.0f64..1.0, n * n).prop_map(move |v| DMatrix::from_vec(n, n, v))
}

/// Independent LCP check: z ≥ 0, w = Mz + q ≥ 0, zᵢwᵢ = 0 (to `tol` scaled by data).
fn assert_lcp_solution(m: &DMatrix<f64>, q: &[f64], z: &[f64], tol: f64) {
    let n = q.len();
    let scale = 1.0 + q.iter().map(|v| v.abs()).fold(0.0, f64::max);
    for i in 0..n {
        let wi: f64 = q[i] + (0..n).map(|j| m[(i, j)] * z[j]).sum::<f64>();
        assert!(z[i] >= -tol * scale, "z[{i}] = {} < 0", z[i]);
        assert!(wi >= -tol * scale, "w[{i}] = {wi} < 0");
        assert!(
            (z[i] * wi).abs() <= tol * scale * scale,
            "z[{i}] w[{i}] = {} ≠ 0",
            z[i] * wi
        );
    }
}

/// Plants a complementary pair: support chosen by `pattern` (true = z active).
fn planted(pattern: &[bool], mags: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let z = pattern
        .iter()
        .zip(mags)
        .map(|(&p, &a)| if p { a } else { 0.0 })
        .collect();
    let w = pattern
        .iter()
        .zip(mags)
        .map(|(&p, &a)| if p { 0.0 } else { a })
        .collect();
    (z, w)
}

fn q_from(m: &DMatrix<f64>, z: &[f64], w: &[f64]) -> Vec<f64> {
    let n = z.len();
    (0..n)
        .map(|i| w[i] - (0..n).map(|j| m[(i, j)] * z[j]).sum::<f64>())
        .collect()
}

fn settings() -> SolverSettings {
    SolverSettings {
        tolerance: 1e-10,
        ..SolverSettings::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// P-matrix LCP (M = GGᵀ + S + δI with S skew: positive definite, not
    /// symmetric): the solution is unique, so every pivoting/Newton solver must
    /// find the planted one.
    #[test]
    fn p_matrix_lcp_has_its_planted_solution(
        n in 1usize..12,
        seed_g in matrix(12), seed_s in matrix(12),
        pattern in prop::collection::vec(any::<bool>(), 12),
        mags in prop::collection::vec(0.1f64..5.0, 12),
    ) {
        let g = seed_g.view((0, 0), (n, n)).into_owned();
        let s = seed_s.view((0, 0), (n, n)).into_owned();
        let m = &g * g.transpose() + (&s - s.transpose()) + DMatrix::identity(n, n) * 0.1;
        let (zs, ws) = planted(&pattern[..n], &mags[..n]);
        let q = q_from(&m, &zs, &ws);
        let lcp = Lcp::new(m.clone(), q.clone()).unwrap();
        for name in ["default", "lemke", "newton-fb", "enum"] {
            let mut solver = lcp_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
            let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
            prop_assert_eq!(r.status, SolveStatus::Solved, "{} on n={}: {:?}", name, n, r);
            assert_lcp_solution(&m, &q, &z, 1e-8);
            for i in 0..n {
                prop_assert!((z[i] - zs[i]).abs() <= 1e-7 * (1.0 + zs[i].abs()), "{} z[{}] = {} vs {}", name, i, z[i], zs[i]);
            }
        }
    }

    /// Symmetric positive definite LCP: PGS and PSOR converge too.
    #[test]
    fn spd_lcp_solved_by_splitting_methods(
        n in 1usize..10,
        seed in matrix(10),
        pattern in prop::collection::vec(any::<bool>(), 10),
        mags in prop::collection::vec(0.1f64..5.0, 10),
    ) {
        let g = seed.view((0, 0), (n, n)).into_owned();
        let m = &g * g.transpose() + DMatrix::identity(n, n);
        let (zs, ws) = planted(&pattern[..n], &mags[..n]);
        let q = q_from(&m, &zs, &ws);
        let lcp = Lcp::new(m.clone(), q.clone()).unwrap();
        for name in ["pgs", "psor"] {
            let mut solver = lcp_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
            let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
            prop_assert_eq!(r.status, SolveStatus::Solved, "{}: {:?}", name, r);
            assert_lcp_solution(&m, &q, &z, 1e-8);
        }
    }

    /// Symmetric positive definite block-tridiagonal M = L Lᵀ + 0.1 I (L
    /// block lower bidiagonal, random block sizes 1–3), stored block-sparse
    /// and dense, with a planted solution: unique, so the sparse solver must
    /// find it on both storages.
    #[test]
    fn spd_block_tridiagonal_lcp_has_its_planted_solution_by_sparse_pivoting(
        sizes in prop::collection::vec(1usize..4, 1..25),
        seed in prop::collection::vec(-1.0f64..1.0, 97),
        pattern in prop::collection::vec(any::<bool>(), 75),
        mags in prop::collection::vec(0.1f64..5.0, 75),
    ) {
        let n: usize = sizes.iter().sum();
        let mut offsets = vec![0];
        for s in &sizes {
            offsets.push(offsets.last().unwrap() + s);
        }
        let mut l = DMatrix::zeros(n, n);
        let mut k = 0;
        for r in 0..sizes.len() {
            for c in r.saturating_sub(1)..=r {
                for i in offsets[r]..offsets[r + 1] {
                    for j in offsets[c]..offsets[c + 1] {
                        l[(i, j)] = seed[k % seed.len()];
                        k += 1;
                    }
                }
            }
        }
        let m = &l * l.transpose() + DMatrix::identity(n, n) * 0.1;
        let (zs, ws) = planted(&pattern[..n], &mags[..n]);
        let q = q_from(&m, &zs, &ws);
        let sparse = BlockSparseMatrix::from_dense(&m, &sizes, &sizes).unwrap();
        prop_assert!(sparse.block_count() <= 3 * sizes.len());
        for storage in [Matrix::BlockSparse(sparse), Matrix::Dense(m.clone())] {
            let lcp = Lcp::new(storage, q.clone()).unwrap();
            let mut solver = lcp_solver("sparse", settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
            let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
            prop_assert_eq!(r.status, SolveStatus::Solved, "n={}: {:?}", n, r);
            assert_lcp_solution(&m, &q, &z, 1e-8);
            for i in 0..n {
                prop_assert!((z[i] - zs[i]).abs() <= 1e-7 * (1.0 + zs[i].abs()), "z[{}] = {} vs {}", i, z[i], zs[i]);
            }
        }
    }

    /// Symmetric M-matrix (a chain of springs: Mᵢ,ᵢ₊₁ = −aᵢ, Mᵢᵢ = aᵢ₋₁ + aᵢ
    /// + δᵢ) of size up to 300 in 1 × 1 blocks, with a planted solution:
    /// found from z = 0 and, warm-started from it, confirmed in one
    /// factorisation.
    #[test]
    fn m_matrix_chain_lcp_has_its_planted_solution_by_sparse_pivoting(
        n in 1usize..300,
        springs in prop::collection::vec(0.1f64..10.0, 300),
        shifts in prop::collection::vec(0.001f64..1.0, 300),
        pattern in prop::collection::vec(any::<bool>(), 300),
        mags in prop::collection::vec(0.1f64..5.0, 300),
    ) {
        let a = |i: usize| if i + 1 < n { springs[i] } else { 0.0 };
        let m = DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                a(i) + if i > 0 { a(i - 1) } else { 0.0 } + shifts[i]
            } else if j == i + 1 {
                -a(i)
            } else if i == j + 1 {
                -a(j)
            } else {
                0.0
            }
        });
        let (zs, ws) = planted(&pattern[..n], &mags[..n]);
        let q = q_from(&m, &zs, &ws);
        let ones = vec![1; n];
        let sparse = BlockSparseMatrix::from_dense(&m, &ones, &ones).unwrap();
        let lcp = Lcp::new(sparse, q.clone()).unwrap();
        let mut solver = lcp_solver("sparse", settings()).unwrap();
        let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
        let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
        prop_assert_eq!(r.status, SolveStatus::Solved, "n={}: {:?}", n, r);
        assert_lcp_solution(&m, &q, &z, 1e-8);
        for i in 0..n {
            prop_assert!((z[i] - zs[i]).abs() <= 1e-7 * (1.0 + zs[i].abs()), "z[{}] = {} vs {}", i, z[i], zs[i]);
        }
        let r = solver.solve(&lcp, &mut z, &mut w).unwrap();
        prop_assert_eq!(r.status, SolveStatus::Solved);
        prop_assert_eq!(r.iterations, 1);
    }

    /// Positive-semidefinite, rank-deficient, non-symmetric M with a planted
    /// solution: solutions need not be unique, but Lemke (M copositive-plus)
    /// must find one, and so must the default chain.
    #[test]
    fn psd_lcp_with_a_solution_is_solved(
        n in 2usize..12, rank in 1usize..4,
        seed_g in matrix(12), seed_s in matrix(12),
        pattern in prop::collection::vec(any::<bool>(), 12),
        mags in prop::collection::vec(0.1f64..5.0, 12),
    ) {
        let r = rank.min(n - 1);
        let g = seed_g.view((0, 0), (n, r)).into_owned();
        let s = seed_s.view((0, 0), (n, n)).into_owned();
        let m = &g * g.transpose() + (&s - s.transpose());
        let (zs, ws) = planted(&pattern[..n], &mags[..n]);
        let q = q_from(&m, &zs, &ws);
        let lcp = Lcp::new(m.clone(), q.clone()).unwrap();
        for name in ["default", "lemke"] {
            let mut solver = lcp_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
            let rep = solver.solve(&lcp, &mut z, &mut w).unwrap();
            prop_assert_eq!(rep.status, SolveStatus::Solved, "{}: {:?}", name, rep);
            assert_lcp_solution(&m, &q, &z, 1e-8);
        }
    }

    /// Positive definite MLCP [A C; D B] with a planted solution: unique,
    /// found by the default chain, Newton and enumeration.
    #[test]
    fn mlcp_has_its_planted_solution(
        n_eq in 0usize..5, m_c in 1usize..7,
        seed_g in matrix(12), seed_s in matrix(12),
        u_star in prop::collection::vec(-3.0f64..3.0, 5),
        pattern in prop::collection::vec(any::<bool>(), 7),
        mags in prop::collection::vec(0.1f64..5.0, 7),
    ) {
        let size = n_eq + m_c;
        let g = seed_g.view((0, 0), (size, size)).into_owned();
        let s = seed_s.view((0, 0), (size, size)).into_owned();
        let m = &g * g.transpose() + (&s - s.transpose()) + DMatrix::identity(size, size) * 0.2;
        let (vs, ws) = planted(&pattern[..m_c], &mags[..m_c]);
        let mut x_star = u_star[..n_eq].to_vec();
        x_star.extend_from_slice(&vs);
        let mut w_star = vec![0.0; n_eq];
        w_star.extend_from_slice(&ws);
        let q = q_from(&m, &x_star, &w_star);
        let mlcp = Mlcp::new(m.clone(), q.clone(), n_eq).unwrap();
        for name in ["default", "newton-fb", "enum"] {
            let mut solver = mlcp_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; size], vec![0.0; size]);
            let r = solver.solve(&mlcp, &mut z, &mut w).unwrap();
            prop_assert_eq!(r.status, SolveStatus::Solved, "{}: {:?}", name, r);
            for i in 0..size {
                let wi: f64 = q[i] + (0..size).map(|j| m[(i, j)] * z[j]).sum::<f64>();
                if i < n_eq {
                    prop_assert!(wi.abs() <= 1e-8 * (1.0 + q[i].abs()), "equality {} residual {}", i, wi);
                } else {
                    prop_assert!(z[i] >= -1e-9 && wi >= -1e-8 && (z[i] * wi).abs() <= 1e-7);
                }
                prop_assert!((z[i] - x_star[i]).abs() <= 1e-7 * (1.0 + x_star[i].abs()), "{} x[{}] = {} vs {}", name, i, z[i], x_star[i]);
            }
        }
    }

    /// Relay with a positive definite M and a planted solution (components
    /// inside the box with w = 0, at lb with w ≥ 0, at ub with w ≤ 0).
    #[test]
    fn relay_has_its_planted_solution(
        n in 1usize..10,
        seed_g in matrix(10), seed_s in matrix(10),
        kinds in prop::collection::vec(0u8..3, 10),
        fracs in prop::collection::vec(0.05f64..0.95, 10),
        mags in prop::collection::vec(0.1f64..5.0, 10),
        lbs in prop::collection::vec(-3.0f64..0.0, 10),
        widths in prop::collection::vec(0.1f64..4.0, 10),
    ) {
        let g = seed_g.view((0, 0), (n, n)).into_owned();
        let s = seed_s.view((0, 0), (n, n)).into_owned();
        let m = &g * g.transpose() + (&s - s.transpose()) + DMatrix::identity(n, n) * 0.2;
        let lb: Vec<f64> = lbs[..n].to_vec();
        let ub: Vec<f64> = (0..n).map(|i| lbs[i] + widths[i]).collect();
        let mut zs = vec![0.0; n];
        let mut ws = vec![0.0; n];
        for i in 0..n {
            match kinds[i] {
                0 => zs[i] = lb[i] + fracs[i] * (ub[i] - lb[i]),
                1 => { zs[i] = lb[i]; ws[i] = mags[i]; }
                _ => { zs[i] = ub[i]; ws[i] = -mags[i]; }
            }
        }
        let q = q_from(&m, &zs, &ws);
        let relay = Relay::new(m.clone(), q.clone(), lb.clone(), ub.clone()).unwrap();
        for name in ["default", "lemke", "newton-fb"] {
            let mut solver = relay_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
            let r = solver.solve(&relay, &mut z, &mut w).unwrap();
            prop_assert_eq!(r.status, SolveStatus::Solved, "{}: {:?}", name, r);
            for i in 0..n {
                let wi: f64 = q[i] + (0..n).map(|j| m[(i, j)] * z[j]).sum::<f64>();
                prop_assert!(z[i] >= lb[i] - 1e-12 && z[i] <= ub[i] + 1e-12);
                let gap_lb = z[i] - lb[i];
                let gap_ub = ub[i] - z[i];
                // −w ∈ N(z): interior ⇒ w = 0; at lb ⇒ w ≥ 0; at ub ⇒ w ≤ 0.
                prop_assert!(wi.abs() <= 1e-7 || (gap_lb <= 1e-7 && wi > 0.0) || (gap_ub <= 1e-7 && wi < 0.0),
                    "{} i={} z={} w={} box=[{}, {}]", name, i, z[i], wi, lb[i], ub[i]);
                prop_assert!((z[i] - zs[i]).abs() <= 1e-6 * (1.0 + zs[i].abs()));
            }
        }
    }
}

/// LCPs without solution must never be reported solved. With the skew
/// (copositive-plus) M = [[0, 1], [−1, 0]] and q = (−1, −1), Lemke's ray
/// termination is a proof; with M = diag(−1, 2), q = (−1, −1) every principal
/// submatrix is nonsingular and enumeration proves there is no solution.
#[test]
fn infeasible_lcp_is_never_reported_solved() {
    let skew = Lcp::new(
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -1.0, 0.0]),
        vec![-1.0, -1.0],
    )
    .unwrap();
    let diag = Lcp::new(
        DMatrix::from_row_slice(2, 2, &[-1.0, 0.0, 0.0, 2.0]),
        vec![-1.0, -1.0],
    )
    .unwrap();
    for (lcp, proof) in [(&skew, None), (&diag, Some(SolveStatus::NoSolution))] {
        for name in ["default", "lemke", "newton-fb", "enum", "pgs"] {
            let mut solver = lcp_solver(name, settings()).unwrap();
            let (mut z, mut w) = (vec![0.0; 2], vec![0.0; 2]);
            let Ok(r) = solver.solve(lcp, &mut z, &mut w) else {
                assert_eq!(name, "pgs", "only PGS may refuse (non-positive diagonal)");
                continue;
            };
            assert_ne!(r.status, SolveStatus::Solved, "{name}");
            if name == "lemke" {
                assert_eq!(r.status, SolveStatus::RayTermination, "{r:?}");
            }
            if let (Some(p), "enum" | "default") = (proof, name) {
                assert_eq!(r.status, p, "{name}: {r:?}");
            }
        }
    }
}
