//! Tests of the sparse pivoting solver: planted solutions, the replay
//! against faer's own factorisation to the bit, refusals, pattern changes,
//! warm starts and cycling.

use nalgebra::DMatrix;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::Side;

use super::pattern::entry;
use super::*;
use crate::numerics::error::NumericsError;
use crate::numerics::lcp::Enumeration;
use crate::numerics::matrix::{Block, BlockSparseMatrix, ProblemMatrix};

fn solver() -> SparsePivoting {
    SparsePivoting::new(SolverSettings::default())
}

/// The n × n tridiagonal matrix (2, −1) in 1 × 1 blocks.
fn chain(n: usize) -> BlockSparseMatrix {
    let mut blocks = Vec::new();
    for i in 0..n {
        blocks.push(Block {
            row: i,
            col: i,
            values: vec![2.0],
        });
        if i + 1 < n {
            for (r, c) in [(i, i + 1), (i + 1, i)] {
                blocks.push(Block {
                    row: r,
                    col: c,
                    values: vec![-1.0],
                });
            }
        }
    }
    BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap()
}

/// q = w* − M z* for the complementary pair z*, w* given by `active`.
fn planted(m: &Matrix, active: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let n = active.len();
    let zs: Vec<f64> = (0..n)
        .map(|i| if active[i] { 1.0 + (i % 3) as f64 } else { 0.0 })
        .collect();
    let mut q: Vec<f64> = (0..n)
        .map(|i| if active[i] { 0.0 } else { 0.5 + (i % 2) as f64 })
        .collect();
    m.gemv(-1.0, &zs, 1.0, &mut q);
    (zs, q)
}

fn run(s: &mut SparsePivoting, lcp: &Lcp, z: &mut [f64]) -> SolveReport {
    let mut w = vec![0.0; lcp.size()];
    s.solve(lcp, z, &mut w).unwrap()
}

#[test]
fn planted_solution_is_found_for_dense_and_block_sparse_storage() {
    let n = 12;
    let active: Vec<bool> = (0..n).map(|i| i % 3 != 1).collect();
    let sparse = Matrix::BlockSparse(chain(n));
    let dense = Matrix::Dense(sparse.to_dense());
    for m in [sparse, dense] {
        let (zs, q) = planted(&m, &active);
        let lcp = Lcp::new(m, q).unwrap();
        let mut z = vec![0.0; n];
        let r = run(&mut solver(), &lcp, &mut z);
        assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
        assert_eq!(r.solver, "sparse");
        for i in 0..n {
            assert!((z[i] - zs[i]).abs() <= 1e-12 * (1.0 + zs[i]), "z[{i}]");
        }
    }
}

/// The active-set factorisation and solve give, to the last bit, what
/// faer's numeric Cholesky and solve give on the whole K (identity rows
/// for the inactive indices), for an irregular pattern (a grid with
/// extra couplings, so the ordering permutes and L fills) and many
/// active sets.
#[test]
fn active_factorisation_equals_faer_on_the_whole_matrix_to_the_bit() {
    use faer::dyn_stack::StackReq;
    use faer::linalg::cholesky::llt::factor::LltRegularization;
    use faer::{Conj, MatMut, Par};

    let side = 7;
    let n = side * side;
    let mut dense = DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        dense[(i, i)] = 7.5 + (i % 5) as f64 * 0.1;
        for j in [i + 1, i + side, i + 2 * side + 1] {
            if j < n && (j != i + 1 || (i + 1) % side != 0) {
                let v = -1.0 + (i * 7 + j) as f64 % 3.0 * 0.05;
                dense[(i, j)] = v;
                dense[(j, i)] = v;
            }
        }
    }
    let m = Matrix::Dense(dense);
    let vals = values(&m).to_vec();
    let q: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64 - 5.0) / 3.0).collect();
    let mut a = Analysis::new(&m).expect("analysis");
    assert!(
        a.fwd.iter().enumerate().any(|(k, &f)| k != f),
        "a real ordering"
    );
    assert!(a.l_row.len() > a.row_idx.len(), "fill-in");
    for seed in 0..12usize {
        let active: Vec<bool> = (0..n)
            .map(|i| seed == 0 || (i * 31 + seed * 17) % 5 < 3)
            .collect();
        let mut x = vec![0.0; n];
        assert!(a.solve_active(&vals, &q, &active, &mut x), "seed {seed}");
        // Reference: faer on the whole K.
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &a.col_ptr, None, &a.row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Upper,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                ..Default::default()
            },
        )
        .unwrap();
        let kv: Vec<f64> = (0..a.row_idx.len())
            .map(|k| {
                let j = (0..n).find(|&c| a.col_ptr[c + 1] > k).unwrap();
                let i = a.row_idx[k];
                let [s0, s1] = a.src[k];
                if i == j {
                    if active[j] {
                        entry(&vals, s0)
                    } else {
                        1.0
                    }
                } else if active[i] && active[j] {
                    0.5 * (entry(&vals, s0) + entry(&vals, s1))
                } else {
                    0.0
                }
            })
            .collect();
        let mut l = vec![0.0; symbolic.len_val()];
        let mut mem = MemBuffer::new(StackReq::any_of(&[
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]));
        let llt = symbolic
            .factorize_numeric_llt::<f64>(
                &mut l,
                SparseColMatRef::new(pattern, &kv),
                Side::Upper,
                LltRegularization::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .unwrap();
        let mut y: Vec<f64> = (0..n)
            .map(|i| if active[i] { -q[i] } else { 0.0 })
            .collect();
        llt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut y, n, 1),
            Par::Seq,
            MemStack::new(&mut mem),
        );
        for i in 0..n {
            let expected = if active[i] { y[i] } else { 0.0 };
            assert_eq!(x[i].to_bits(), expected.to_bits(), "seed {seed}, x[{i}]");
        }
    }
}

#[test]
fn non_symmetric_matrix_is_refused() {
    let m = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 0.0, 2.0]);
    let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
    let (mut z, mut w) = (vec![0.0; 2], vec![0.0; 2]);
    let err = solver().solve(&lcp, &mut z, &mut w).unwrap_err();
    assert!(
        matches!(
            err,
            NumericsError::NotApplicable {
                solver: "sparse",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn rounding_level_asymmetry_is_accepted() {
    let m = DMatrix::from_row_slice(2, 2, &[2.0, -1.0, -1.0 + 1e-15, 2.0]);
    let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
    let mut z = vec![0.0; 2];
    let r = run(&mut solver(), &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
}

/// M = [1 1; 1 1], q = (−1, −1): the first active set is {1, 2}, whose
/// block is singular. The solver must stop, not return garbage.
#[test]
fn singular_active_block_reports_numerical_trouble_not_garbage() {
    let m = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0]);
    let lcp = Lcp::new(m, vec![-1.0, -1.0]).unwrap();
    let mut z = vec![0.0; 2];
    let r = run(&mut solver(), &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::NumericalTrouble, "{r:?}");
    assert_eq!(z, vec![0.0, 0.0]);
}

/// Rank-two M = G Gᵀ (G 3 × 2): factorising the full active set ends on
/// a positive pivot of rounding size (≈ 4·10⁻¹⁶ of its diagonal entry)
/// that the factorisation itself accepts; the pivot-ratio test must
/// catch it.
#[test]
fn rounding_level_pivot_is_taken_as_singular() {
    let g = DMatrix::from_fn(3, 2, |i, j| ((7 * i + 3 * j) as f64 * 0.37).sin());
    let m = &g * g.transpose();
    let lcp = Lcp::new(m, vec![-1.0; 3]).unwrap();
    let mut z = vec![0.0; 3];
    let r = run(&mut solver(), &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::NumericalTrouble, "{r:?}");
    assert!(z.iter().all(|v| v.is_finite() && v.abs() < 1e3), "{z:?}");
}

#[test]
fn pattern_is_analysed_once_and_again_only_when_it_changes() {
    let n = 30;
    let mut s = solver();
    let active: Vec<bool> = (0..n).map(|i| i % 4 != 0).collect();
    let m = Matrix::BlockSparse(chain(n));
    let (_, q) = planted(&m, &active);
    let mut lcp = Lcp::new(m, q).unwrap();
    let mut z = vec![0.0; n];
    assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 1);
    // Same pattern, other values and another active set.
    if let Matrix::BlockSparse(b) = &mut lcp.m {
        let blocks: Vec<Block> = b
            .blocks()
            .map(|(r, c, v)| Block {
                row: r,
                col: c,
                values: v.iter().map(|x| 3.0 * x).collect(),
            })
            .collect();
        *b = BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap();
    }
    let other: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
    let (_, q) = planted(&lcp.m, &other);
    lcp.q = q;
    z.fill(0.0);
    assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 1);
    // A new block (0, 2) and (2, 0): a new pattern.
    if let Matrix::BlockSparse(b) = &mut lcp.m {
        let mut blocks: Vec<Block> = b
            .blocks()
            .map(|(r, c, v)| Block {
                row: r,
                col: c,
                values: v.to_vec(),
            })
            .collect();
        for (r, c) in [(0, 2), (2, 0)] {
            blocks.push(Block {
                row: r,
                col: c,
                values: vec![0.5],
            });
        }
        *b = BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap();
    }
    let (_, q) = planted(&lcp.m, &other);
    lcp.q = q;
    z.fill(0.0);
    assert_eq!(run(&mut s, &lcp, &mut z).status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 2);
    // Dense: a change of which entries are zero is a new pattern.
    let mut d = lcp.m.to_dense();
    let (_, q) = planted(&Matrix::Dense(d.clone()), &other);
    let dense = Lcp::new(d.clone(), q).unwrap();
    z.fill(0.0);
    assert_eq!(run(&mut s, &dense, &mut z).status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 3);
    d[(0, 2)] = 0.0;
    d[(2, 0)] = 0.0;
    d[(5, 5)] = 3.0;
    let (_, q) = planted(&Matrix::Dense(d.clone()), &other);
    let dense = Lcp::new(d, q).unwrap();
    z.fill(0.0);
    assert_eq!(run(&mut s, &dense, &mut z).status, SolveStatus::Solved);
    assert_eq!(s.symbolic_analyses(), 4);
}

#[test]
fn warm_start_from_the_solution_takes_one_iteration() {
    let n = 50;
    let active: Vec<bool> = (0..n).map(|i| (i / 5) % 2 == 0).collect();
    let m = Matrix::BlockSparse(chain(n));
    let (zs, q) = planted(&m, &active);
    let lcp = Lcp::new(m, q).unwrap();
    let mut s = solver();
    let mut z = vec![0.0; n];
    let cold = run(&mut s, &lcp, &mut z);
    assert_eq!(cold.status, SolveStatus::Solved);
    assert!(cold.iterations > 1, "{cold:?}");
    let mut z = zs.clone();
    let warm = run(&mut s, &lcp, &mut z);
    assert_eq!(warm.status, SolveStatus::Solved);
    assert_eq!(warm.iterations, 1);
}

/// A symmetric positive definite M on which pure block pivoting from
/// z = 0 cycles through the active sets ∅ → {1, 3} → {3, 4} → ∅.
fn cycling_problem() -> Lcp {
    let m = DMatrix::from_row_slice(
        4,
        4,
        &[
            1.794, -0.498, 1.392, -0.653, //
            -0.498, 0.958, -0.264, -0.129, //
            1.392, -0.264, 1.374, -1.161, //
            -0.653, -0.129, -1.161, 2.018,
        ],
    );
    Lcp::new(m, vec![-0.14, 0.19, -0.53, 0.93]).unwrap()
}

#[test]
fn block_pivoting_cycle_is_broken_by_single_pivots() {
    let lcp = cycling_problem();
    let settings = SolverSettings {
        max_iterations: Some(60),
        ..SolverSettings::default()
    };
    // Without the safeguard the block pivots cycle.
    let mut unguarded = SparsePivoting::new(settings);
    unguarded.block_pivots = usize::MAX;
    let mut z = vec![0.0; 4];
    let r = run(&mut unguarded, &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::IterationLimit, "{r:?}");
    // With it the solve ends, on the unique solution.
    let mut z = vec![0.0; 4];
    let r = run(&mut SparsePivoting::new(settings), &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    let (mut ze, mut we) = (vec![0.0; 4], vec![0.0; 4]);
    let re = Enumeration::new(settings)
        .solve(&lcp, &mut ze, &mut we)
        .unwrap();
    assert_eq!(re.status, SolveStatus::Solved);
    for i in 0..4 {
        assert!(
            (z[i] - ze[i]).abs() <= 1e-12,
            "z[{i}] {} vs {}",
            z[i],
            ze[i]
        );
    }
}

/// A row and column without any stored block (Mᵢᵢ not stored) is fine
/// while i stays inactive (qᵢ > 0).
#[test]
fn unstored_diagonal_of_an_inactive_row_is_harmless() {
    let blocks = vec![
        Block {
            row: 0,
            col: 0,
            values: vec![2.0],
        },
        Block {
            row: 2,
            col: 2,
            values: vec![3.0],
        },
    ];
    let m = BlockSparseMatrix::new(&[1, 1, 1], &[1, 1, 1], blocks).unwrap();
    let lcp = Lcp::new(m, vec![-2.0, 1.0, -3.0]).unwrap();
    let mut z = vec![0.0; 3];
    let r = run(&mut solver(), &lcp, &mut z);
    assert_eq!(r.status, SolveStatus::Solved, "{r:?}");
    for (zi, expected) in z.iter().zip([1.0, 0.0, 1.0]) {
        assert!((zi - expected).abs() <= 1e-15, "{z:?}");
    }
}

#[test]
fn empty_problem_is_solved() {
    let lcp = Lcp::new(DMatrix::<f64>::zeros(0, 0), vec![]).unwrap();
    let r = run(&mut solver(), &lcp, &mut []);
    assert_eq!(r.status, SolveStatus::Solved);
    assert_eq!(r.iterations, 0);
}
