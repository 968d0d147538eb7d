//! Contact detection for the rigid bodies of `nonsmooth` (docs/rigid-bodies.md).
//!
//! Bodies carry shapes ([`ShapeDesc`]: sphere, box, capsule, cylinder,
//! convex hull, half-space, triangle mesh, height field) as [`Collider`]s;
//! a [`ContactDetector`] turns the bodies' states into the
//! [`nonsmooth::rigid::Contact`] records the core's contact step takes:
//! a broad phase ([`BroadPhase`]: parry3d's BVH, or all pairs) proposes
//! pairs, parry3d's contact manifolds give points, normals and gaps within
//! a margin, and contacts keep their ids while they persist. Triangle
//! meshes come from OBJ and STL files ([`read_mesh_file`]) or from heights
//! over a grid ([`grid_mesh`]).
//!
//! This crate is apart from the core so that parry3d and its dependencies
//! stay out of it: the core's rigid-body layer depends only on nalgebra and
//! its numerics, and takes contacts as plain data from any detector.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod broad_phase;
mod detector;
mod error;
mod generators;
mod mesh;
mod output;
mod shapes;
mod simulation;
mod world;

pub use broad_phase::{AllPairs, BroadPhase, BvhBroadPhase};
pub use detector::{combine, Collider, ContactDetector, DetectionStats, DetectorState, Material};
pub use error::{CollisionError, Result};
pub use generators::{
    lattice_positions, pile_in_box, random_pile_positions, random_vectors, spheres_in_box,
    PileInBox, Scene, SpheresInBox,
};
pub use mesh::{grid_mesh, read_mesh_file};
pub use output::{FrameWriter, FRAME_HEADER};
pub use shapes::{MassProperties, ShapeDesc};
pub use simulation::{
    body_values, stand_in_model, RigidClock, RigidSimulation, BODY_DIM, BODY_INPUTS, BODY_LAYOUT,
    WORLD_LAYOUT, WORLD_SYSTEM,
};
pub use world::{RigidWorld, WorldError};

/// parry3d-f64, re-exported for callers that need its types (poses, AABBs).
pub use parry3d_f64;
