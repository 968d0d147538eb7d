//! The sparse LCP solver on the Delassus matrix of a column of beads:
//! W = H M⁻¹ Hᵀ is tridiagonal with 2/m on the diagonal and −1/m beside it.
//! Every check recomputes w = W z + q from the tridiagonal formula itself,
//! not through the library.

mod common;

use nonsmooth::numerics::lcp::{Lcp, LcpSolver, SparsePivoting};
use nonsmooth::numerics::{SolveReport, SolveStatus, SolverSettings};

const MASS: f64 = 0.5;

/// (W z)ᵢ for the chain, computed here from its formula.
fn chain_product(mass: f64, off: &[bool], z: &[f64]) -> Vec<f64> {
    let n = z.len();
    (0..n)
        .map(|i| {
            if off[i] {
                return z[i];
            }
            let mut s = 2.0 / mass * z[i];
            if i > 0 && !off[i - 1] {
                s -= z[i - 1] / mass;
            }
            if i + 1 < n && !off[i + 1] {
                s -= z[i + 1] / mass;
            }
            s
        })
        .collect()
}

/// z ≥ 0, w ≥ 0 and zᵢwᵢ = 0 within `tol` (relative to the data's size).
fn assert_complementary(q: &[f64], z: &[f64], w: &[f64], tol: f64) {
    let scale = 1.0 + q.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for i in 0..q.len() {
        assert!(z[i] >= -tol * scale, "z[{i}] = {}", z[i]);
        assert!(w[i] >= -tol * scale, "w[{i}] = {}", w[i]);
        assert!(
            z[i].min(w[i]).abs() <= tol * scale,
            "z[{i}] = {}, w[{i}] = {}",
            z[i],
            w[i]
        );
    }
}

/// A planted complementary pair: contact i is active when `(i / 3) % 2 == 0`
/// or i is prime-like (i % 7 == 3), with zᵢ ∈ [0.5, 2], otherwise wᵢ ∈ [0.1, 1].
fn planted(n: usize) -> (Vec<f64>, Vec<f64>) {
    let active = |i: usize| (i / 3).is_multiple_of(2) || i % 7 == 3;
    let z = (0..n)
        .map(|i| {
            if active(i) {
                0.5 + (i % 4) as f64 * 0.5
            } else {
                0.0
            }
        })
        .collect();
    let w = (0..n)
        .map(|i| {
            if active(i) {
                0.0
            } else {
                0.1 + (i % 10) as f64 * 0.1
            }
        })
        .collect();
    (z, w)
}

fn q_for(mass: f64, off: &[bool], z: &[f64], w: &[f64]) -> Vec<f64> {
    let wz = chain_product(mass, off, z);
    w.iter().zip(wz).map(|(wi, v)| wi - v).collect()
}

fn solve(s: &mut SparsePivoting, lcp: &Lcp, z: &mut [f64]) -> (SolveReport, Vec<f64>) {
    let mut w = vec![0.0; lcp.size()];
    let r = s.solve(lcp, z, &mut w).unwrap();
    (r, w)
}

#[test]
fn bead_chain_with_a_planted_mixed_solution_is_solved() {
    let n = 1000;
    let off = vec![false; n];
    let (zs, ws) = planted(n);
    let q = q_for(MASS, &off, &zs, &ws);
    let lcp = Lcp::new(common::bead_chain(n, MASS, &off), q.clone()).unwrap();
    let mut s = SparsePivoting::new(SolverSettings::default());
    let mut z = vec![0.0; n];
    let (r, _) = solve(&mut s, &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    let wz = chain_product(MASS, &off, &z);
    let w: Vec<f64> = q.iter().zip(wz).map(|(a, b)| a + b).collect();
    assert_complementary(&q, &z, &w, 1e-12);
    // M is positive definite: the solution is unique.
    for i in 0..n {
        assert!(
            (z[i] - zs[i]).abs() <= 1e-12,
            "z[{i}] = {} vs {}",
            z[i],
            zs[i]
        );
    }
    // The factor of a chain has no fill: two entries per column at most.
    assert!(s.factor_nnz().unwrap() <= 2 * n, "{:?}", s.factor_nnz());
}

/// A column resting on the ground, loaded by its weight: qᵢ = −c·(N − i)
/// for every contact, so all are active and z solves W z = −q. Its exact
/// solution is the cubic zᵢ = m c (k³/6 − (N+1) k²/2 + (N+1)² k/3),
/// k = i + 1 (the second difference of a cubic is linear).
#[test]
fn resting_column_matches_its_closed_form() {
    let n = 1000;
    let c = 9.81e-3;
    let off = vec![false; n];
    let q: Vec<f64> = (0..n).map(|i| -c * (n - i) as f64).collect();
    let lcp = Lcp::new(common::bead_chain(n, MASS, &off), q.clone()).unwrap();
    let mut s = SparsePivoting::new(SolverSettings::default());
    let mut z = vec![0.0; n];
    let (r, _) = solve(&mut s, &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    // From z = 0: the empty active set, then all of them.
    assert_eq!(r.iterations, 2, "{r:?}");
    let np1 = (n + 1) as f64;
    let exact: Vec<f64> = (1..=n)
        .map(|k| {
            let k = k as f64;
            MASS * c * (k * k * k / 6.0 - np1 * k * k / 2.0 + np1 * np1 * k / 3.0)
        })
        .collect();
    let zmax = exact.iter().fold(0.0f64, |a, v| a.max(*v));
    // κ(W) ≈ 4(N+1)²/π² ≈ 4·10⁵: forward error of order κ·ε ≈ 4·10⁻¹¹
    // relative to max z.
    for i in 0..n {
        assert!(exact[i] > 0.0);
        assert!(
            (z[i] - exact[i]).abs() <= 1e-10 * zmax,
            "z[{i}] = {} vs {}",
            z[i],
            exact[i]
        );
    }
}

/// Contacts switched off as the simulation does it (row and column zero but
/// a 1 on the diagonal, qᵢ = 1) keep the pattern: no new analysis, and the
/// switched-off contacts end with zᵢ = 0, wᵢ = 1.
#[test]
fn decoupled_contacts_keep_the_pattern_and_stay_inactive() {
    let n = 500;
    let mut s = SparsePivoting::new(SolverSettings::default());
    let on = vec![false; n];
    let (zs, ws) = planted(n);
    let q = q_for(MASS, &on, &zs, &ws);
    let lcp = Lcp::new(common::bead_chain(n, MASS, &on), q).unwrap();
    let mut z = vec![0.0; n];
    assert_eq!(solve(&mut s, &lcp, &mut z).0.status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 1);

    let off: Vec<bool> = (0..n)
        .map(|i| i % 11 == 5 || (200..260).contains(&i))
        .collect();
    let (mut zs, mut ws) = planted(n);
    for i in 0..n {
        if off[i] {
            zs[i] = 0.0;
            ws[i] = 1.0;
        }
    }
    let q = q_for(2.0 * MASS, &off, &zs, &ws);
    for i in 0..n {
        if off[i] {
            assert_eq!(q[i], 1.0);
        }
    }
    let lcp = Lcp::new(common::bead_chain(n, 2.0 * MASS, &off), q.clone()).unwrap();
    // Warm start from the previous step's z, as a simulation would.
    let (r, _) = solve(&mut s, &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    assert_eq!(s.symbolic_analyses(), 1);
    let wz = chain_product(2.0 * MASS, &off, &z);
    let w: Vec<f64> = q.iter().zip(wz).map(|(a, b)| a + b).collect();
    assert_complementary(&q, &z, &w, 1e-12);
    for i in 0..n {
        assert!(
            (z[i] - zs[i]).abs() <= 1e-12,
            "z[{i}] = {} vs {}",
            z[i],
            zs[i]
        );
        if off[i] {
            assert_eq!(z[i], 0.0);
            assert_eq!(w[i], 1.0);
        }
    }
}

/// Time steps whose active set moves by a few contacts: warm-started from
/// the previous solution, each is solved in two factorisations at most (the
/// first finds every changed contact, the second confirms).
#[test]
fn warm_started_time_steps_need_few_iterations() {
    let n = 2000;
    let off = vec![false; n];
    let lcp_at = |step: usize| {
        let active = |i: usize| ((i + step) / 5).is_multiple_of(2);
        let z: Vec<f64> = (0..n).map(|i| if active(i) { 1.0 } else { 0.0 }).collect();
        let w: Vec<f64> = (0..n).map(|i| if active(i) { 0.0 } else { 0.3 }).collect();
        (
            Lcp::new(common::bead_chain(n, MASS, &off), q_for(MASS, &off, &z, &w)).unwrap(),
            z,
        )
    };
    let mut s = SparsePivoting::new(SolverSettings::default());
    let mut z = vec![0.0; n];
    for step in 0..10 {
        let (lcp, zs) = lcp_at(step);
        let (r, _) = solve(&mut s, &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::Solved, "step {step}: {r:?}");
        if step > 0 {
            assert!(r.iterations <= 2, "step {step}: {r:?}");
        }
        for i in 0..n {
            assert!((z[i] - zs[i]).abs() <= 1e-12, "step {step}: z[{i}]");
        }
    }
    assert_eq!(s.symbolic_analyses(), 1);
}
