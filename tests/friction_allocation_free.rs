//! Once sized, the frictional contact solvers solve further problems of the
//! same size without allocating (a counting global allocator, per thread).

mod friction_oracle;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use friction_oracle::{planted, Rng, State};
use nonsmooth::numerics::friction::{
    friction_solver, FrictionProblem, FrictionSolver, Nsgs, FRICTION_SOLVERS,
};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveStatus, SolverSettings};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}

#[test]
fn second_solve_of_the_same_size_allocates_nothing() {
    let mut rng = Rng(4242);
    let states = [
        State::Separated,
        State::Sticking,
        State::Sliding,
        State::Sliding,
        State::Sticking,
    ];
    for d in [2, 3] {
        let (w1, q1, mu1, _, _) = planted(d, &states, &mut rng);
        let (w2, q2, mu2, _, _) = planted(d, &states, &mut rng);
        let sizes = vec![d; states.len()];
        let bs = |w| Matrix::BlockSparse(BlockSparseMatrix::from_dense(w, &sizes, &sizes).unwrap());
        let first = FrictionProblem::new(d, bs(&w1), q1, mu1).unwrap();
        let second = FrictionProblem::new(d, bs(&w2), q2, mu2).unwrap();
        for name in FRICTION_SOLVERS.split(", ") {
            let s = SolverSettings {
                tolerance: 1e-10,
                ..Default::default()
            };
            let mut solver = friction_solver(name, s).unwrap();
            solver.set_timed(false);
            let n = first.size();
            let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
            let rep = solver.solve(&first, &mut r, &mut u).unwrap();
            let must_solve = !matches!(name, "vi-eg" | "admm" | "nsgs-proj");
            assert!(
                !must_solve || rep.status == SolveStatus::Solved,
                "{name} d={d}"
            );
            r.iter_mut().for_each(|v| *v = 0.0);
            let before = allocations();
            let rep = solver.solve(&second, &mut r, &mut u).unwrap();
            let after = allocations();
            assert!(
                !must_solve || rep.status == SolveStatus::Solved,
                "{name} d={d}"
            );
            assert_eq!(
                after - before,
                0,
                "{name} d={d} allocated on its second solve"
            );
        }
    }
}

#[test]
fn shuffled_nsgs_second_solve_allocates_nothing() {
    let mut rng = Rng(777);
    let states = [
        State::Sticking,
        State::Sliding,
        State::Separated,
        State::Sliding,
    ];
    let (w1, q1, mu1, _, _) = planted(3, &states, &mut rng);
    let (w2, q2, mu2, _, _) = planted(3, &states, &mut rng);
    let sizes = vec![3; states.len()];
    let bs = |w| Matrix::BlockSparse(BlockSparseMatrix::from_dense(w, &sizes, &sizes).unwrap());
    let first = FrictionProblem::new(3, bs(&w1), q1, mu1).unwrap();
    let second = FrictionProblem::new(3, bs(&w2), q2, mu2).unwrap();
    let mut solver = Nsgs::new(SolverSettings {
        tolerance: 1e-10,
        ..Default::default()
    })
    .with_shuffle(9);
    solver.set_timed(false);
    let n = first.size();
    let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
    assert!(solver
        .solve(&first, &mut r, &mut u)
        .unwrap()
        .status
        .is_solved());
    r.iter_mut().for_each(|v| *v = 0.0);
    let before = allocations();
    let rep = solver.solve(&second, &mut r, &mut u).unwrap();
    assert_eq!(allocations() - before, 0, "shuffled NSGS allocated");
    assert!(rep.status.is_solved());
}

/// Beyond 200 unknowns a block-sparse W takes the sparse Newton path (J
/// assembled over the contact blocks, faer's sparse LU): once its pattern
/// is analysed, a second problem with the same pattern is solved without
/// allocating, and both solutions satisfy the oracle's natural map.
#[test]
fn sparse_newton_second_solve_of_the_same_pattern_allocates_nothing() {
    let mut rng = Rng(2024);
    let cycle = [State::Sliding, State::Sticking, State::Separated];
    let states: Vec<State> = (0..70).map(|i| cycle[i % 3]).collect();
    let (w1, q1, mu1, _, _) = planted(3, &states, &mut rng);
    let (w2, q2, mu2, _, _) = planted(3, &states, &mut rng);
    let sizes = vec![3; states.len()];
    let bs = |w| Matrix::BlockSparse(BlockSparseMatrix::from_dense(w, &sizes, &sizes).unwrap());
    let first = FrictionProblem::new(3, bs(&w1), q1.clone(), mu1.clone()).unwrap();
    let second = FrictionProblem::new(3, bs(&w2), q2.clone(), mu2.clone()).unwrap();
    assert!(
        first.size() >= 200,
        "the sparse path starts at 200 unknowns"
    );
    for name in ["newton-ac", "prox"] {
        let s = SolverSettings {
            tolerance: 1e-10,
            ..Default::default()
        };
        let mut solver = friction_solver(name, s).unwrap();
        solver.set_timed(false);
        let n = first.size();
        let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
        let rep = solver.solve(&first, &mut r, &mut u).unwrap();
        assert_eq!(rep.status, SolveStatus::Solved, "{name}: first");
        let e = friction_oracle::siconos_error(3, &w1, &q1, &mu1, &r);
        assert!(e <= 1e-9, "{name}: first error {e:e}");
        r.iter_mut().for_each(|v| *v = 0.0);
        let before = allocations();
        let rep = solver.solve(&second, &mut r, &mut u).unwrap();
        let after = allocations();
        assert_eq!(rep.status, SolveStatus::Solved, "{name}: second");
        let e = friction_oracle::siconos_error(3, &w2, &q2, &mu2, &r);
        assert!(e <= 1e-9, "{name}: second error {e:e}");
        assert_eq!(after - before, 0, "{name} allocated on its second solve");
    }
}
