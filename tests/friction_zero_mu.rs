//! A frictional contact with μ = 0 is a frictionless one: the cone is
//! K_0 = {P_T = 0, P_N ≥ 0}, so the problem reduces to the scalar LCP
//! 0 ≤ w P_N + q_N ⊥ P_N ≥ 0 (P_N = max(0, −q_N/w)) with P_T = 0 when the
//! tangent rows do not couple to the normal one. (The time-stepping uses
//! such contacts for frictionless rows beside frictional ones.)

use nalgebra::dmatrix;
use nonsmooth::numerics::friction::{friction_solver, FrictionProblem};
use nonsmooth::numerics::{Matrix, SolverSettings};

#[test]
fn every_solver_solves_contacts_without_friction() {
    for name in ["default", "nsgs", "nsgs-proj", "newton-ac", "prox"] {
        for (w, q, r0) in [
            (0.5, 1.0, 0.3),
            (0.5, 1.0, 0.0),
            (2.0, -1.0, 0.0),
            (2.0, -1.0, 1.0),
            (1e-3, -1e-4, 0.0),
        ] {
            // The fixed-step projection converges slowly (not for lack of
            // a solution) when W's diagonal spans three decades.
            if name == "nsgs-proj" && w < 0.1 {
                continue;
            }
            let p = FrictionProblem::new(
                2,
                Matrix::Dense(dmatrix![w, 0.0; 0.0, 1.0]),
                vec![q, 0.0],
                vec![0.0],
            )
            .unwrap();
            let mut s = friction_solver(name, SolverSettings::default()).unwrap();
            let (mut r, mut u) = (vec![r0, 0.0], vec![0.0; 2]);
            let rep = s.solve(&p, &mut r, &mut u).unwrap();
            let exact = (-q / w).max(0.0);
            assert!(
                rep.status.is_solved(),
                "{name} w={w} q={q} r0={r0}: {rep:?}"
            );
            assert!(
                (r[0] - exact).abs() <= 1e-9 * (1.0 + exact) && r[1].abs() <= 1e-12,
                "{name} w={w} q={q} r0={r0}: r = {r:?}, exact {exact}"
            );
        }
    }
}
