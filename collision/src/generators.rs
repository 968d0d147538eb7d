//! Scene generators: many bodies at once.
//!
//! [`spheres_in_box`] builds an open box (a floor and four walls, as
//! half-spaces of one fixed body) and a lattice of equal spheres above its
//! floor, with small random velocities from a seeded generator (the same
//! seed gives the same scene).

use std::sync::Arc;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use nonsmooth::rigid::{BodyState, RigidBody};

use crate::detector::{Collider, Material};
use crate::error::{CollisionError, Result};
use crate::shapes::ShapeDesc;

/// A scene: bodies, their initial states and their colliders.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The bodies (body 0 fixed).
    pub bodies: Arc<[RigidBody]>,
    /// Their initial states.
    pub states: Vec<BodyState>,
    /// Their colliders.
    pub colliders: Vec<Collider>,
}

/// Parameters of [`spheres_in_box`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpheresInBox {
    /// Number of spheres.
    pub spheres: usize,
    /// Sphere radius.
    pub radius: f64,
    /// Density of the spheres.
    pub density: f64,
    /// Inner width of the square box (x and y); the floor is z = 0.
    pub width: f64,
    /// Gap between neighbouring spheres of the lattice (surface to surface).
    pub spacing: f64,
    /// Size of the random initial velocities (each component uniform in
    /// [−speed, speed]).
    pub speed: f64,
    /// Seed of the random velocities.
    pub seed: u64,
    /// Material of every surface.
    pub material: Material,
}

/// A SplitMix64 generator (small, seeded, reproducible; the scenes must not
/// depend on a generator crate's version).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Spheres on a lattice in an open box: body 0 is the box (floor z ≥ 0
/// and walls |x|, |y| ≤ width/2), bodies 1..=N the spheres, filling the
/// lattice layer by layer from the floor up.
pub fn spheres_in_box(p: &SpheresInBox) -> Result<Scene> {
    let pitch = 2.0 * p.radius + p.spacing;
    let per_row = ((p.width - p.spacing) / pitch).floor() as usize;
    if p.spheres == 0 || per_row == 0 || p.spacing.is_nan() || p.spacing < 0.0 {
        return Err(CollisionError::InvalidSetting {
            name: "spheres_in_box",
            reason: format!(
                "{} spheres of radius {} do not fit in a box {} wide with spacing {}",
                p.spheres, p.radius, p.width, p.spacing
            ),
        });
    }
    let sphere = ShapeDesc::Sphere { radius: p.radius };
    let mp = sphere
        .mass_properties(p.density, 1)?
        .expect("a sphere is solid");
    let mut bodies = vec![RigidBody::fixed()];
    let mut states = vec![BodyState::default()];
    let half = 0.5 * p.width;
    // Each wall: the half-space {x : n·(x − a) ≤ 0} of outward normal n
    // through a; the floor's solid is z ≤ 0, each wall's lies outside the box.
    let walls = [
        (Vector3::z(), Vector3::zeros()),
        (-Vector3::x(), Vector3::new(half, 0.0, 0.0)),
        (Vector3::x(), Vector3::new(-half, 0.0, 0.0)),
        (-Vector3::y(), Vector3::new(0.0, half, 0.0)),
        (Vector3::y(), Vector3::new(0.0, -half, 0.0)),
    ];
    let mut colliders = Vec::with_capacity(p.spheres + walls.len());
    for (normal, at) in walls {
        colliders.push(Collider::new(
            0,
            true,
            ShapeDesc::HalfSpace { normal },
            Isometry3::translation(at.x, at.y, at.z),
            p.material,
        )?);
    }
    let mut rng = SplitMix(p.seed);
    let start = -half + 0.5 * p.spacing + p.radius;
    for i in 0..p.spheres {
        let layer = i / (per_row * per_row);
        let in_layer = i % (per_row * per_row);
        let (ix, iy) = (in_layer % per_row, in_layer / per_row);
        let position = Vector3::new(
            start + ix as f64 * pitch,
            start + iy as f64 * pitch,
            p.radius + p.spacing + layer as f64 * pitch,
        );
        let mut v = || p.speed * (2.0 * rng.next() - 1.0);
        let velocity = Vector3::new(v(), v(), v());
        bodies.push(RigidBody::new(mp.mass, mp.inertia));
        states.push(BodyState {
            position,
            orientation: UnitQuaternion::identity(),
            velocity,
            omega: Vector3::zeros(),
        });
        colliders.push(Collider::new(
            i + 1,
            false,
            sphere.clone(),
            Isometry3::identity(),
            p.material,
        )?);
    }
    Ok(Scene {
        bodies: bodies.into(),
        states,
        colliders,
    })
}
