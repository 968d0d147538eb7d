//! The frictional one-step problem assembled over all contacts
//! (`Assembly::Sparse`: W's pattern built once for the run, inactive
//! contacts as identity blocks with q = 0) against the problem over the
//! active contacts (`Assembly::Dense`, its pattern rebuilt when the active
//! set changes), on a column of beads falling onto each other: the contacts
//! close one after another and neighbours slide, so the active set changes
//! over the run.

mod falling_column;

use falling_column::{falling_column, Contacts, MU};
use nonsmooth::modelling::InteractionId;
use nonsmooth::modelling::SystemId;
use nonsmooth::simulation::Assembly;

/// Both assemblies give the same run within the solver's tolerance (the
/// factorisations differ, so the last bits may), through some two hundred
/// changes of the set of pushing contacts, with constant blocks of W and
/// with W assembled at every step; every impulse of the run over all contacts
/// satisfies Coulomb's law (P_N ≥ 0, ‖P_T‖ ≤ μ P_N), and an interaction
/// with no active contact has P = 0.
#[test]
fn all_contacts_and_active_contacts_give_the_same_run() {
    for scleronomous in [false, true] {
        same_run(scleronomous);
    }
}

fn same_run(scleronomous: bool) {
    let beads = 30;
    let mut active = falling_column(beads, None, Assembly::Dense, contacts(scleronomous));
    let mut all = falling_column(beads, None, Assembly::Sparse, contacts(scleronomous));
    let mut changes = 0;
    let mut last_set = vec![false; beads];
    let mut worst: f64 = 0.0;
    for step in 0..700 {
        active.step().unwrap();
        all.step().unwrap();
        let mut set = vec![false; beads];
        for (k, pushing) in set.iter_mut().enumerate() {
            let (pa, pb) = (
                active.lambda(InteractionId(k)),
                all.lambda(InteractionId(k)),
            );
            assert!(pb[0] >= 0.0, "step {step}, contact {k}: P_N = {}", pb[0]);
            assert!(
                pb[1].abs() <= MU * pb[0] * (1.0 + 1e-9) + 1e-15,
                "step {step}, contact {k}: P = {pb:?} outside the cone"
            );
            *pushing = pb[0] > 0.0;
            for (x, y) in pa.iter().zip(pb) {
                worst = worst.max((x - y).abs());
            }
            let (qa, qb) = (active.q(SystemId(k)), all.q(SystemId(k)));
            for (x, y) in qa.iter().zip(qb) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, bead {k}: q {qa:?} (active contacts) against {qb:?} (all contacts)"
                );
            }
        }
        changes += usize::from(set != last_set);
        last_set = set;
    }
    assert!(worst <= 1e-9, "largest impulse difference {worst}");
    assert!(
        changes >= 20,
        "only {changes} changes of the set of pushing contacts"
    );
    assert_eq!(
        active.statistics().solves,
        all.statistics().solves,
        "the same steps have a problem"
    );
}

/// With linear relations (constant blocks) the problem's W is cut from W
/// over every contact, computed once; with the same rows written as a
/// scleronomous relation W is assembled over the active set at every
/// step. Both runs agree within the solver's tolerance through the
/// changes of the active set (over 700 steps of the falling column), and
/// the first run's impulses satisfy Coulomb's law.
#[test]
fn w_cut_from_every_contact_matches_w_assembled_over_the_active_set() {
    let beads = 30;
    let mut cut = falling_column(beads, None, Assembly::Dense, Contacts::Linear);
    let mut assembled = falling_column(beads, None, Assembly::Dense, Contacts::Scleronomous);
    let mut changes = 0;
    let mut last_set = vec![false; beads];
    for step in 0..700 {
        cut.step().unwrap();
        assembled.step().unwrap();
        let mut set = vec![false; beads];
        for (k, pushing) in set.iter_mut().enumerate() {
            let (pc, pa) = (
                cut.lambda(InteractionId(k)),
                assembled.lambda(InteractionId(k)),
            );
            assert!(pc[0] >= 0.0, "step {step}, contact {k}: P_N = {}", pc[0]);
            assert!(
                pc[1].abs() <= MU * pc[0] * (1.0 + 1e-9) + 1e-15,
                "step {step}, contact {k}: P = {pc:?} outside the cone"
            );
            *pushing = pc[0] > 0.0;
            for (x, y) in pc.iter().zip(pa) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, contact {k}: P {pc:?} (cut) against {pa:?} (assembled)"
                );
            }
            let (qc, qa) = (cut.q(SystemId(k)), assembled.q(SystemId(k)));
            for (x, y) in qc.iter().zip(qa) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "step {step}, bead {k}: q {qc:?} (cut) against {qa:?} (assembled)"
                );
            }
        }
        changes += usize::from(set != last_set);
        last_set = set;
    }
    assert!(
        changes >= 20,
        "only {changes} changes of the set of pushing contacts"
    );
}

/// The contacts between beads as a linear relation, or as h(q) and its
/// Jacobian when `scleronomous`.
fn contacts(scleronomous: bool) -> Contacts {
    if scleronomous {
        Contacts::Scleronomous
    } else {
        Contacts::Linear
    }
}
