//! The start the default frictional solver gives to contacts without an
//! impulse from the previous step (their own one-contact problem with the
//! other impulses held, `friction_fresh.rs`) against Newton started from
//! zero for them (`solver = "newton-ac"`, the previous impulses as they
//! are), on a column of beads falling onto each other: contacts close one
//! after another, bounce open and close again, so that many steps have
//! contacts that push without having pushed at the step before.

mod falling_column;

use falling_column::{falling_column, Contacts, MU};
use nonsmooth::modelling::{InteractionId, SystemId};
use nonsmooth::simulation::Assembly;

/// Both runs agree within the solvers' tolerance (1e-9 on every impulse and
/// position) over 700 steps, through more than a hundred steps where a
/// contact starts pushing with no impulse at the step before (each one
/// started by its own problem in the default run); the default run's
/// impulses satisfy Coulomb's law.
#[test]
fn the_fresh_contacts_start_gives_the_run_of_newton_from_zero() {
    let beads = 30;
    let mut fresh = falling_column(beads, Some("default"), Assembly::Dense, Contacts::Linear);
    let mut zero = falling_column(beads, Some("newton-ac"), Assembly::Dense, Contacts::Linear);
    let mut previous = vec![0.0; beads];
    let mut started = 0;
    let mut worst: f64 = 0.0;
    for step in 0..700 {
        fresh.step().unwrap();
        zero.step().unwrap();
        for (k, before) in previous.iter_mut().enumerate() {
            let (pf, pz) = (
                fresh.lambda(InteractionId(k)),
                zero.lambda(InteractionId(k)),
            );
            assert!(pf[0] >= 0.0, "step {step}, contact {k}: P_N = {}", pf[0]);
            assert!(
                pf[1].abs() <= MU * pf[0] * (1.0 + 1e-9) + 1e-15,
                "step {step}, contact {k}: P = {pf:?} outside the cone"
            );
            for (x, y) in pf.iter().zip(pz) {
                worst = worst.max((x - y).abs());
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, contact {k}: P {pf:?} (fresh start) against {pz:?} (from zero)"
                );
            }
            if *before == 0.0 && pf[0] > 0.0 {
                started += 1;
            }
            *before = pf[0];
            let (qf, qz) = (fresh.q(SystemId(k)), zero.q(SystemId(k)));
            for (x, y) in qf.iter().zip(qz) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, bead {k}: q {qf:?} (fresh start) against {qz:?} (from zero)"
                );
            }
        }
    }
    assert!(
        started >= 100,
        "only {started} contacts started pushing from no impulse"
    );
    eprintln!("largest impulse difference {worst:e}, {started} fresh contacts pushing");
}
