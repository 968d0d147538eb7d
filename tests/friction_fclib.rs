//! The FCLIB HDF5 files of the shared data (../shared/data/fclib), read by
//! `io::fclib` (pure Rust). Local problems are solved directly, global ones
//! by reduction; every claimed solution is checked by the oracle.

mod friction_oracle;

use std::path::{Path, PathBuf};

use friction_oracle::siconos_error;
use nonsmooth::io::fclib::{read_fclib, FclibError, FclibProblem};
use nonsmooth::numerics::friction::{friction_solver, FrictionProblem};
use nonsmooth::numerics::{SolveStatus, SolverSettings};

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/fclib")
        .join(name)
}

fn solve(p: &FrictionProblem) -> bool {
    let mut s = friction_solver(
        "default",
        SolverSettings {
            tolerance: 1e-8,
            ..Default::default()
        },
    )
    .unwrap();
    let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
    let rep = s.solve(p, &mut r, &mut u).unwrap();
    let e = siconos_error(p.dim, &p.w.to_dense(), &p.q, &p.mu, &r);
    if rep.status == SolveStatus::Solved {
        assert!(e <= 1e-8, "claimed solved, oracle error {e:e}");
    }
    rep.status == SolveStatus::Solved
}

#[test]
fn local_files_are_read_with_contact_blocks_and_solved() {
    for (name, nc) in [
        ("LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", 60),
        ("local_problem_test.hdf5", 48),
    ] {
        let FclibProblem::Local(p) = read_fclib(file(name)).unwrap() else {
            panic!("{name} is a local problem");
        };
        assert_eq!((p.dim, p.contacts()), (3, nc), "{name}");
        // W = H M⁻¹ Hᵀ is symmetric: a transposed reading would not change
        // that, but a wrong block or index mapping would break it.
        let w = p.w.to_dense();
        let asym = (&w - w.transpose()).abs().max();
        assert!(
            asym <= 1e-9 * w.abs().max(),
            "{name}: W not symmetric ({asym})"
        );
        if name.starts_with("LMGC") {
            assert!(solve(&p), "{name}");
        } else {
            let _ = solve(&p);
        }
    }
}

#[test]
fn global_files_reduce_and_solve() {
    // Triplet H is n × m with n ≠ m: swapping the row and column arrays of
    // the triplets would put indices out of range and fail the read.
    for (name, n, nc) in [
        ("Box_Stacks-i0122-82-5.hdf5", 450, 82),
        ("CubeH8.hdf5", 162, 1),
        ("LMGC_GlobalFrictionContactProblem00046.hdf5", 162, 9),
    ] {
        let FclibProblem::Global(g) = read_fclib(file(name)).unwrap() else {
            panic!("{name} is a global problem");
        };
        assert_eq!((g.f.len(), g.mu.len()), (n, nc), "{name}");
        let p = g.reduce().unwrap();
        assert!(solve(&p), "{name}");
    }
}

#[test]
fn rigid_body_mass_matrix_is_block_diagonal_and_reduced_sparsely() {
    // 12000 × 12000 M: stored by its diagonal blocks, never dense.
    let FclibProblem::Global(g) = read_fclib(file("Spheres-i099-356-679.hdf5")).unwrap() else {
        panic!("a global problem");
    };
    assert_eq!((g.f.len(), g.mu.len()), (12000, 356));
    let nonsmooth::numerics::Matrix::BlockSparse(m) = &g.m else {
        panic!("M should be block-diagonal");
    };
    assert!(m.blocks().all(|(r, c, _)| r == c));
    assert!(m.row_sizes().iter().all(|&s| s <= 1000));
    let p = g.reduce().unwrap();
    assert!(solve(&p));
}

#[test]
fn unsupported_and_malformed_files_are_errors() {
    assert!(matches!(
        read_fclib(file("Chute-ndof-768-nc-4-3.hdf5")),
        Err(FclibError::Unsupported { .. })
    ));
    let not_hdf5 =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/fc3d/FrictionContact3D_1c.dat");
    assert!(matches!(read_fclib(not_hdf5), Err(FclibError::Hdf5 { .. })));
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(file("CubeH8.hdf5")).unwrap();
    for cut in [0, 100, bytes.len() / 2] {
        let p = dir.path().join(format!("cut{cut}.hdf5"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        assert!(read_fclib(&p).is_err(), "cut at {cut}");
    }
}
