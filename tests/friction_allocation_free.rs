//! Once sized, the frictional contact solvers solve further problems of the
//! same size without allocating (per-thread counts of the `allocation-counter`
//! crate's global allocator).

mod friction_oracle;

use friction_oracle::{planted, Rng, State};
use nonsmooth::numerics::friction::{
    friction_solver, FrictionProblem, FrictionSolver, Nsgs, FRICTION_SOLVERS,
};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix, SolveStatus, SolverSettings};

/// Runs `f` and counts the allocations (reallocations included) it made
/// on this thread, with the `allocation-counter` crate's global allocator.
fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.expect("the measured closure ran"), info.count_total)
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
            let n = first.size();
            let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
            let rep = solver.solve(&first, &mut r, &mut u).unwrap();
            let must_solve = !matches!(name, "vi-eg" | "admm" | "nsgs-proj");
            assert!(
                !must_solve || rep.status == SolveStatus::Solved,
                "{name} d={d}"
            );
            r.iter_mut().for_each(|v| *v = 0.0);
            let (rep, allocated) = counted(|| solver.solve(&second, &mut r, &mut u).unwrap());
            assert!(
                !must_solve || rep.status == SolveStatus::Solved,
                "{name} d={d}"
            );
            assert_eq!(allocated, 0, "{name} d={d} allocated on its second solve");
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
    let n = first.size();
    let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
    assert!(solver
        .solve(&first, &mut r, &mut u)
        .unwrap()
        .status
        .is_solved());
    r.iter_mut().for_each(|v| *v = 0.0);
    let (rep, allocated) = counted(|| solver.solve(&second, &mut r, &mut u).unwrap());
    assert_eq!(allocated, 0, "shuffled NSGS allocated");
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
        let n = first.size();
        let (mut r, mut u) = (vec![0.0; n], vec![0.0; n]);
        let rep = solver.solve(&first, &mut r, &mut u).unwrap();
        assert_eq!(rep.status, SolveStatus::Solved, "{name}: first");
        let e = friction_oracle::siconos_error(3, &w1, &q1, &mu1, &r);
        assert!(e <= 1e-9, "{name}: first error {e:e}");
        r.iter_mut().for_each(|v| *v = 0.0);
        let (rep, allocated) = counted(|| solver.solve(&second, &mut r, &mut u).unwrap());
        assert_eq!(rep.status, SolveStatus::Solved, "{name}: second");
        let e = friction_oracle::siconos_error(3, &w2, &q2, &mu2, &r);
        assert!(e <= 1e-9, "{name}: second error {e:e}");
        assert_eq!(allocated, 0, "{name} allocated on its second solve");
    }
}

/// A column of `beads` resting beads (gap 0) with Coulomb friction on every
/// contact and horizontal velocities 0.5·sin(i) (neighbours slide, then
/// stick): every contact is active at every step, so the one-step problem
/// keeps its block pattern.
fn resting_frictional_column(
    beads: usize,
    assembly: nonsmooth::simulation::Assembly,
) -> nonsmooth::simulation::TimeStepping {
    use nonsmooth_scenario::Scenario;
    let text = r#"
name = "resting_column"

[parameters]
beads = 10
radius = 0.1

[simulation]
t_end = 10
step = 1e-3

[[systems]]
repeat = { i = "0 .. beads" }
name = "bead{i}"
type = "lagrangian_linear"
q0 = ["radius + i*2*radius", 0]
v0 = [0, "0.5*sin(i)"]
mass_diagonal = [1, 1]
fext = [-9.81, 0]

[[interactions]]
name = "ground"
systems = ["bead0"]
relation = { type = "lagrangian_linear", H = [[1, 0], [0, 1]], b = ["-radius", 0] }
law = { type = "newton_impact_friction", restitution = 0.5, friction = 0.3, dimension = 2 }

[[interactions]]
repeat = { i = "1 .. beads" }
name = "contact{i}"
systems = ["bead{i-1}", "bead{i}"]
relation = { type = "lagrangian_linear", H = [[-1, 0, 1, 0], [0, -1, 0, 1]], b = ["-2*radius", 0] }
law = { type = "newton_impact_friction", restitution = 0.5, friction = 0.3, dimension = 2 }

[output]
record = ["bead0.q"]
"#;
    let mut scenario = Scenario::from_str(text, "column.toml").unwrap();
    scenario.set_parameter("beads", beads as f64).unwrap();
    let built = scenario.build().unwrap();
    let mut settings = built.settings.clone();
    settings.assembly = assembly;
    nonsmooth::simulation::TimeStepping::new(built.model.clone(), settings).unwrap()
}

/// Moreau–Jean steps with frictional contacts over an unchanged set of
/// active contacts in unchanged states allocate nothing: W's block pattern
/// is kept and written in place, the solvers reuse their work areas (20
/// beads, 40 unknowns, and 120 beads, 240 unknowns; both on the sparse
/// Newton path). The neighbours slide until about t = 0.41 s (120 beads),
/// and a change of the contacts' states may grow the sparse LU's factors
/// (faer reallocates them to the new fill): the count starts at t = 0.5 s,
/// once every contact sticks (checked). The counter is checked to see the
/// set-up's allocations, and the counted steps to solve real problems.
#[test]
fn frictional_time_steps_over_the_same_contacts_allocate_nothing() {
    steps_allocate_nothing(nonsmooth::simulation::Assembly::Auto);
}

/// The same with the problem assembled over all contacts (its pattern
/// built once for the run).
#[test]
fn frictional_time_steps_over_all_contacts_allocate_nothing() {
    steps_allocate_nothing(nonsmooth::simulation::Assembly::Sparse);
}

fn steps_allocate_nothing(assembly: nonsmooth::simulation::Assembly) {
    use nonsmooth::modelling::InteractionId;
    for beads in [20, 120] {
        let (mut sim, set_up) = counted(|| {
            let mut sim = resting_frictional_column(beads, assembly);
            for _ in 0..500 {
                sim.step().unwrap();
            }
            sim
        });
        assert!(set_up > 0, "the counter sees the set-up");
        for k in 0..beads {
            let status = sim.contact_status(InteractionId(k))[0];
            assert_eq!(status, 1.0, "{beads} beads: contact {k} sticks at t = 0.5");
        }
        let stats = sim.statistics();
        let ((), allocated) = counted(|| {
            for _ in 0..300 {
                sim.step().unwrap();
            }
        });
        let solved = sim.statistics().solves - stats.solves;
        assert_eq!(solved, 300, "{beads} beads: one problem per step");
        assert_eq!(
            allocated, 0,
            "{beads} beads: steps allocated {allocated} times"
        );
        // Contact k carries the weight of the beads above it: λ_N = h m g
        // (beads − k); the ground (k = 0) all of them. The solver's
        // normalised error 1e-10 bounds the impulses' relative error by
        // about cond(W)·1e-10, cond(W) ≈ (2·beads/π)² ≈ 6·10³ for the chain.
        let ground = sim.lambda(InteractionId(0));
        let expected = 1e-3 * 9.81 * beads as f64;
        assert!(
            (ground[0] - expected).abs() < 1e-6 * expected,
            "{beads} beads: ground impulse {} against {expected}",
            ground[0]
        );
    }
}
