//! Save and restore of a rigid run (`RigidSimulation::save_state`): a run
//! saved mid-way, run on, restored (in place, and through bytes into a
//! fresh simulation) and run again gives the same bits at every step,
//! across contact changes (a cube landing, a ball rolling over a triangle
//! mesh), with held inputs set before the save. The oracle is the first
//! run itself: restoring must reproduce it exactly.

use std::sync::Arc;

use nalgebra::{DMatrix, Isometry3, UnitQuaternion, Vector3};
use nonsmooth::modelling::SystemId;
use nonsmooth::rigid::{BodyState, ContactSettings, RigidBody};
use nonsmooth::simulation::{Simulation, SimulationState, StateError};
use nonsmooth_collision::{
    grid_mesh, stand_in_model, Collider, ContactDetector, Material, RigidClock, RigidSimulation,
    RigidWorld, ShapeDesc, BODY_DIM,
};

const MAT: Material = Material {
    friction: 0.4,
    restitution: 0.2,
};

/// Ground (half-space z ≤ 0), a grid mesh z = 1 + 0.3 sin x cos y around
/// x = 10, a tilted spinning cube dropped on the ground, a ball rolling on
/// the mesh, a second ball dropped on the cube.
fn simulation() -> RigidSimulation {
    let cube = ShapeDesc::Cuboid {
        half_extents: Vector3::new(0.1, 0.15, 0.2),
    };
    let ball = ShapeDesc::Sphere { radius: 0.1 };
    let mp_cube = cube.mass_properties(800.0, 0).unwrap().unwrap();
    let mp_ball = ball.mass_properties(1200.0, 2).unwrap().unwrap();
    let (nx, ny) = (21, 21);
    let heights = DMatrix::from_fn(ny, nx, |i, j| {
        let x = -2.0 + 4.0 * j as f64 / (nx - 1) as f64;
        let y = -2.0 + 4.0 * i as f64 / (ny - 1) as f64;
        0.3 * x.sin() * y.cos()
    });
    let mesh = grid_mesh(&heights, [4.0, 4.0]).unwrap();
    let bodies: Arc<[RigidBody]> = vec![
        RigidBody::fixed(),
        RigidBody::fixed(),
        RigidBody::new(mp_cube.mass, mp_cube.inertia),
        RigidBody::new(mp_ball.mass, mp_ball.inertia),
        RigidBody::new(mp_ball.mass, mp_ball.inertia),
    ]
    .into();
    let ground = ShapeDesc::HalfSpace {
        normal: Vector3::z(),
    };
    let id = Isometry3::identity();
    let colliders = vec![
        Collider::new(0, true, ground, id, MAT).unwrap(),
        Collider::new(1, true, mesh, id, MAT).unwrap(),
        Collider::new(2, false, cube, id, MAT).unwrap(),
        Collider::new(3, false, ball.clone(), id, MAT).unwrap(),
        Collider::new(4, false, ball, id, MAT).unwrap(),
    ];
    let tilt = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.2, 0.1));
    let mut cube_state = BodyState::at(Vector3::new(0.0, 0.0, 0.5), tilt);
    cube_state.omega = Vector3::new(1.0, 2.0, -3.0);
    // Just above the mesh (its body at z = 1): in contact within a few steps.
    let surface = 1.0 + 0.3 * (-0.5f64).sin() * 0.2f64.cos();
    let mut rolling = BodyState::at(
        Vector3::new(10.0 - 0.5, 0.2, surface + 0.1 + 1e-3),
        Default::default(),
    );
    rolling.velocity = Vector3::new(1.0, 0.3, 0.0);
    let dropped = BodyState::at(Vector3::new(0.02, 0.0, 1.2), Default::default());
    let mut states = vec![BodyState::default(); 5];
    states[1].position = Vector3::new(10.0, 0.0, 1.0);
    states[2] = cube_state;
    states[3] = rolling;
    states[4] = dropped;
    let detector = ContactDetector::new(colliders, 2e-3).unwrap();
    let world = RigidWorld::new(
        bodies,
        states,
        detector,
        ContactSettings::default(),
        Vector3::new(0.0, 0.0, -9.81),
        0.0,
    )
    .unwrap();
    let names: Vec<String> = ["ground", "terrain", "cube", "rolling", "dropped"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let model = Arc::new(stand_in_model(&names).unwrap());
    RigidSimulation::new(
        world,
        model,
        RigidClock {
            t0: 0.0,
            t_end: 1.0,
            step: 1e-3,
            output_every: 1,
        },
        &[],
    )
    .unwrap()
}

/// Every value of every system (bodies, their held inputs, the world's
/// counters), as bits, then the counters of the run.
fn snapshot(sim: &RigidSimulation) -> Vec<u64> {
    let n = sim.model().systems().len();
    let mut out: Vec<u64> = (0..n)
        .flat_map(|s| sim.q(SystemId(s)).iter().map(|x| x.to_bits()))
        .collect();
    let st = sim.statistics();
    out.extend([
        st.steps,
        st.solves,
        st.solver_iterations,
        st.newton_iterations,
    ]);
    out.push(sim.time().to_bits());
    out
}

/// Steps until `t_end` (or the end), one snapshot per step.
fn run_until(sim: &mut RigidSimulation, t_end: f64) -> Vec<Vec<u64>> {
    let mut rows = Vec::new();
    while sim.time() < t_end - 1e-12 {
        sim.step().unwrap();
        rows.push(snapshot(sim));
    }
    rows
}

/// g for a body: zeros, then the force (world) and torque (body frame).
fn input(force: [f64; 3], torque: [f64; 3]) -> Vec<f64> {
    let mut g = vec![0.0; BODY_DIM];
    g[13..16].copy_from_slice(&force);
    g[16..19].copy_from_slice(&torque);
    g
}

const CUBE: SystemId = SystemId(2);
const WORLD: SystemId = SystemId(5);

#[test]
fn a_rigid_run_restored_mid_way_replays_bit_for_bit() {
    let mut sim = simulation();
    run_until(&mut sim, 0.1);
    sim.set_system_input(CUBE, &input([0.5, -0.3, 2.0], [0.01, 0.0, -0.02]))
        .unwrap();
    sim.set_system_input(SystemId(4), &input([0.0, 0.1, 0.0], [0.0; 3]))
        .unwrap();
    run_until(&mut sim, 0.2);
    // At the save: the rolling ball touches the mesh (a warm start and a
    // mesh workspace in the state), the cube is in the air.
    let saved = sim.save_state().unwrap();
    let SimulationState::Rigid(rs) = &saved else {
        panic!("a rigid state");
    };
    assert!(
        !rs.warm_start.is_empty(),
        "contacts carry impulses at the save"
    );
    assert_eq!(rs.inputs.len(), 5);
    assert_eq!(rs.inputs[2], [0.5, -0.3, 2.0, 0.01, 0.0, -0.02]);
    let contacts_at_save = sim.q(WORLD)[2];
    let first = run_until(&mut sim, 0.6);
    // The contacts change after the save: the cube and the dropped ball land.
    let most = first.iter().map(|r| r[5 * BODY_DIM + 2]).max().unwrap();
    assert!(
        f64::from_bits(most) >= contacts_at_save + 2.0,
        "contacts {contacts_at_save} at the save, at most {} after",
        f64::from_bits(most)
    );
    let held = sim.system_input(CUBE).to_vec();
    assert_eq!(held, input([0.5, -0.3, 2.0], [0.01, 0.0, -0.02]));

    // In place.
    sim.restore_state(&saved).unwrap();
    assert_eq!(sim.time(), 0.2);
    let again = run_until(&mut sim, 0.6);
    assert_eq!(first.len(), again.len());
    for (k, (a, b)) in first.iter().zip(&again).enumerate() {
        assert!(
            a == b,
            "step {k} after the save differs when restored in place"
        );
    }

    // Through bytes, into a fresh simulation of the same scene.
    let bytes = saved.to_bytes();
    assert_eq!(&bytes[..4], b"NSRB");
    let read = SimulationState::from_bytes(&bytes).unwrap();
    assert_eq!(read, saved);
    let mut fresh = simulation();
    fresh.restore_state(&read).unwrap();
    assert_eq!(fresh.system_input(CUBE), &held[..]);
    let replay = run_until(&mut fresh, 0.6);
    for (k, (a, b)) in first.iter().zip(&replay).enumerate() {
        assert!(
            a == b,
            "step {k} after the save differs when restored from bytes"
        );
    }
    // And the state at the end is the same, byte for byte.
    assert_eq!(
        fresh.save_state().unwrap().to_bytes(),
        sim.save_state().unwrap().to_bytes()
    );
}

#[test]
fn the_held_input_acts_and_is_part_of_the_state() {
    // Without the restored input the run differs: the input is in the state.
    let mut a = simulation();
    a.set_system_input(CUBE, &input([3.0, 0.0, 0.0], [0.0; 3]))
        .unwrap();
    let saved = a.save_state().unwrap();
    let with = run_until(&mut a, 0.05);
    let mut b = simulation();
    let without = run_until(&mut b, 0.05);
    assert_ne!(with.last(), without.last());
    let mut c = simulation();
    c.restore_state(&saved).unwrap();
    assert_eq!(run_until(&mut c, 0.05), with);
}

#[test]
fn states_that_do_not_fit_are_refused_and_change_nothing() {
    let mut sim = simulation();
    run_until(&mut sim, 0.05);
    let before = sim.save_state().unwrap();
    // Another scene: one body fewer.
    let mut other = {
        let ball = ShapeDesc::Sphere { radius: 0.1 };
        let mp = ball.mass_properties(1000.0, 0).unwrap().unwrap();
        let bodies: Arc<[RigidBody]> = vec![RigidBody::new(mp.mass, mp.inertia)].into();
        let colliders = vec![Collider::new(0, false, ball, Isometry3::identity(), MAT).unwrap()];
        let world = RigidWorld::new(
            bodies,
            vec![BodyState::default()],
            ContactDetector::new(colliders, 1e-3).unwrap(),
            ContactSettings::default(),
            Vector3::zeros(),
            0.0,
        )
        .unwrap();
        let model = Arc::new(stand_in_model(&["b".to_string()]).unwrap());
        let clock = RigidClock {
            t0: 0.0,
            t_end: 1.0,
            step: 1e-3,
            output_every: 1,
        };
        RigidSimulation::new(world, model, clock, &[]).unwrap()
    };
    run_until(&mut other, 0.01);
    let foreign = other.save_state().unwrap();
    assert!(matches!(
        sim.restore_state(&foreign),
        Err(StateError::Mismatch(_))
    ));
    assert_eq!(sim.save_state().unwrap(), before);
    // Every truncation of the bytes is an error, never a panic.
    let bytes = before.to_bytes();
    for cut in (0..bytes.len()).step_by(37) {
        assert!(SimulationState::from_bytes(&bytes[..cut]).is_err());
    }
    // A damaged detector record is refused without changing the run.
    let SimulationState::Rigid(mut rs) = before.clone() else {
        panic!("a rigid state");
    };
    rs.detector.truncate(rs.detector.len() / 2);
    assert!(sim.restore_state(&SimulationState::Rigid(rs)).is_err());
    assert_eq!(sim.save_state().unwrap(), before);
    // Inputs only on bodies, only on their input rows.
    assert!(sim.set_system_input(WORLD, &[0.0; 7]).is_err());
    let mut g = input([1.0, 0.0, 0.0], [0.0; 3]);
    g[2] = 1.0;
    assert!(sim.set_system_input(CUBE, &g).is_err());
    assert!(sim.set_system_input(CUBE, &[1.0; 6]).is_err());
    assert!(sim
        .set_system_input(SystemId(0), &input([1.0, 0.0, 0.0], [0.0; 3]))
        .is_err());
    assert_eq!(sim.save_state().unwrap(), before);
}
