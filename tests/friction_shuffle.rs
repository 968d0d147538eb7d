//! NSGS with a shuffled contact order: deterministic for a seed, and it
//! converges (to a solution the independent oracle accepts) on shared fc3d
//! problems that NSGS in index order solves.

mod friction_oracle;

use std::path::Path;

use friction_oracle::siconos_error;
use nonsmooth::io::friction_text::read_friction;
use nonsmooth::numerics::friction::{FrictionSolver, Nsgs};
use nonsmooth::numerics::{SolveStatus, SolverSettings};

const TOL: f64 = 1e-8;

fn settings() -> SolverSettings {
    SolverSettings {
        tolerance: TOL,
        max_iterations: Some(20_000),
        ..Default::default()
    }
}

#[test]
fn shuffled_nsgs_is_deterministic_and_solves_what_plain_nsgs_solves() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/fc3d");
    let mut differs = false;
    for file in [
        "Confeti-ex13-Fc3D-SBM.dat",
        "Confeti-ex03-Fc3D-SBM.dat",
        "NESpheres_30_1.dat",
        "FC3D_Example1_SBM.dat",
    ] {
        let p = read_friction(dir.join(file)).unwrap();
        let w = p.w.to_dense();
        let n = p.size();
        let (mut r0, mut u0) = (vec![0.0; n], vec![0.0; n]);
        let plain = Nsgs::new(settings()).solve(&p, &mut r0, &mut u0).unwrap();
        assert_eq!(plain.status, SolveStatus::Solved, "{file}: plain NSGS");
        assert!(siconos_error(p.dim, &w, &p.q, &p.mu, &r0) <= TOL);

        let mut s = Nsgs::new(settings()).with_shuffle(42);
        let (mut r1, mut u1) = (vec![0.0; n], vec![0.0; n]);
        let rep1 = s.solve(&p, &mut r1, &mut u1).unwrap();
        assert_eq!(rep1.status, SolveStatus::Solved, "{file}: shuffled NSGS");
        let e = siconos_error(p.dim, &w, &p.q, &p.mu, &r1);
        assert!(e <= TOL, "{file}: shuffled NSGS, oracle error {e:e}");
        // The same seed again (same solver object, then a fresh one): the
        // same orders, hence bit-identical impulses.
        let (mut r2, mut u2) = (vec![0.0; n], vec![0.0; n]);
        let rep2 = s.solve(&p, &mut r2, &mut u2).unwrap();
        assert_eq!(rep2.iterations, rep1.iterations);
        assert_eq!(r2, r1, "{file}: same seed, same result");
        let (mut r3, mut u3) = (vec![0.0; n], vec![0.0; n]);
        Nsgs::new(settings())
            .with_shuffle(42)
            .solve(&p, &mut r3, &mut u3)
            .unwrap();
        assert_eq!(r3, r1);
        differs |= r1 != r0;
        println!(
            "{file}: plain {} sweeps, shuffled {} sweeps",
            plain.iterations, rep1.iterations
        );
    }
    assert!(differs, "the shuffled order changed no result");
}
