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

/// Centres of `count` points on a lattice of pitch `pitch`: `per_row[0]`
/// along x, `per_row[1]` rows along y per layer, layers along z, the first
/// at `origin`, filled along x, then y, then z.
pub fn lattice_positions(
    count: usize,
    origin: Vector3<f64>,
    pitch: f64,
    per_row: [usize; 2],
) -> Result<Vec<Vector3<f64>>> {
    if per_row[0] == 0 || per_row[1] == 0 || !(pitch.is_finite() && pitch > 0.0) {
        return Err(CollisionError::InvalidSetting {
            name: "lattice",
            reason: format!(
                "needs at least one point per row and per layer and a pitch > 0, got {per_row:?} and {pitch}"
            ),
        });
    }
    let layer = per_row[0] * per_row[1];
    Ok((0..count)
        .map(|i| {
            let (l, k) = (i / layer, i % layer);
            let (ix, iy) = (k % per_row[0], k / per_row[0]);
            origin + pitch * Vector3::new(ix as f64, iy as f64, l as f64)
        })
        .collect())
}

/// Centres of `count` balls of radius `radius` drawn uniformly in the box
/// [lo + r, hi − r] (each component) from the seeded generator, a draw that
/// overlaps an earlier ball (distance < 2r) being drawn again; an error
/// when 1000 draws in a row fail (the box is too full). The same seed gives
/// the same pile.
pub fn random_pile_positions(
    count: usize,
    radius: f64,
    lo: Vector3<f64>,
    hi: Vector3<f64>,
    seed: u64,
) -> Result<Vec<Vector3<f64>>> {
    let bad = |reason: String| CollisionError::InvalidSetting {
        name: "random pile",
        reason,
    };
    if !(radius.is_finite() && radius > 0.0) {
        return Err(bad(format!("radius must be finite and > 0, got {radius}")));
    }
    let (a, b) = (lo.add_scalar(radius), hi.add_scalar(-radius));
    if (0..3).any(|k| a[k].is_nan() || b[k].is_nan() || a[k] > b[k]) {
        return Err(bad(format!(
            "the region {lo:?} .. {hi:?} is too small for balls of radius {radius}"
        )));
    }
    let mut rng = SplitMix(seed);
    let mut out: Vec<Vector3<f64>> = Vec::with_capacity(count);
    // A uniform grid of cells of side 2r over the region: only the 27
    // neighbouring cells can hold an overlapping ball.
    let cell = 2.0 * radius;
    let dims = (b - a).map(|d| (d / cell).floor() as usize + 1);
    let cells = dims.x.saturating_mul(dims.y).saturating_mul(dims.z);
    if cells > 50_000_000 {
        return Err(bad(format!("the region is too large for radius {radius}")));
    }
    let mut grid: Vec<Vec<usize>> = vec![Vec::new(); cells];
    let index = |c: [usize; 3]| c[0] + dims.x * (c[1] + dims.y * c[2]);
    let cell_of = |p: &Vector3<f64>| {
        let c = (p - a) / cell;
        [
            (c.x.floor() as usize).min(dims.x - 1),
            (c.y.floor() as usize).min(dims.y - 1),
            (c.z.floor() as usize).min(dims.z - 1),
        ]
    };
    for k in 0..count {
        let mut tries = 0;
        loop {
            if tries == 1000 {
                return Err(bad(format!(
                    "no room for ball {k} of {count} (radius {radius}) after 1000 draws: enlarge the region"
                )));
            }
            tries += 1;
            let p = Vector3::new(
                a.x + (b.x - a.x) * rng.next(),
                a.y + (b.y - a.y) * rng.next(),
                a.z + (b.z - a.z) * rng.next(),
            );
            let c = cell_of(&p);
            let mut free = true;
            'search: for dz in -1i64..=1 {
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let n = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                        if n.iter().any(|&v| v < 0)
                            || n[0] >= dims.x as i64
                            || n[1] >= dims.y as i64
                            || n[2] >= dims.z as i64
                        {
                            continue;
                        }
                        let cell_index = index([n[0] as usize, n[1] as usize, n[2] as usize]);
                        if grid[cell_index]
                            .iter()
                            .any(|&j| (out[j] - p).norm() < 2.0 * radius)
                        {
                            free = false;
                            break 'search;
                        }
                    }
                }
            }
            if free {
                grid[index(c)].push(out.len());
                out.push(p);
                break;
            }
        }
    }
    Ok(out)
}

/// `count` vectors with components uniform in [−speed, speed] from the
/// seeded generator.
pub fn random_vectors(count: usize, speed: f64, seed: u64) -> Vec<Vector3<f64>> {
    let mut rng = SplitMix(seed);
    (0..count)
        .map(|_| {
            let mut v = || speed * (2.0 * rng.next() - 1.0);
            Vector3::new(v(), v(), v())
        })
        .collect()
}

/// Parameters of [`pile_in_box`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PileInBox {
    /// Number of spheres.
    pub spheres: usize,
    /// Sphere radius.
    pub radius: f64,
    /// Mass of each sphere (a solid ball: inertia 2/5 m r²).
    pub mass: f64,
    /// Centre spacing of the lattice (≥ 2 radius).
    pub pitch: f64,
    /// Layers of the lattice: each layer is a square of ⌈√(N/layers)⌉
    /// spheres a side, and the box is that many pitches wide.
    pub layers: usize,
    /// Size of the random initial velocities (components uniform in
    /// [−speed, speed]).
    pub speed: f64,
    /// Seed of the random velocities.
    pub seed: u64,
    /// Material of every surface.
    pub material: Material,
}

impl PileInBox {
    /// The settled-pile scene of docs/rigid-bodies.md: radius 0.5, mass 1,
    /// centre spacing 1.1, μ = 0.3, e = 0, velocities uniform in
    /// [−0.5, 0.5] m/s (seed 1); 4 layers up to 100 spheres (N = 100: the
    /// 5 × 5 × 4 lattice in a 5.5 m box of Siconos 4.4's spheres-in-a-box
    /// run), 10 layers beyond (N = 1000: 10 × 10 × 10 in an 11 m box).
    pub fn siconos(spheres: usize) -> Self {
        PileInBox {
            spheres,
            radius: 0.5,
            mass: 1.0,
            pitch: 1.1,
            layers: if spheres <= 100 { 4 } else { 10 },
            speed: 0.5,
            seed: 1,
            material: Material {
                friction: 0.3,
                restitution: 0.0,
            },
        }
    }

    /// Spheres per side of a layer, ⌈√(N/layers)⌉.
    pub fn per_row(&self) -> usize {
        (self.spheres as f64 / self.layers.max(1) as f64)
            .sqrt()
            .ceil() as usize
    }

    /// Inner width of the box: `per_row` pitches.
    pub fn width(&self) -> f64 {
        self.per_row() as f64 * self.pitch
    }
}

/// Spheres of given mass on a square lattice centred in an open box of
/// `per_row` pitches a side (floor z = 0, walls as half-spaces of body 0),
/// the first layer's centres half a pitch above the floor and half a
/// pitch from the walls, filled along x, then y, then up.
pub fn pile_in_box(p: &PileInBox) -> Result<Scene> {
    let per_row = p.per_row();
    if p.spheres == 0
        || p.layers == 0
        || !(p.radius.is_finite() && p.radius > 0.0)
        || !(p.mass.is_finite() && p.mass > 0.0)
        || !(p.pitch.is_finite() && p.pitch >= 2.0 * p.radius)
    {
        return Err(CollisionError::InvalidSetting {
            name: "pile_in_box",
            reason: format!(
                "needs spheres, layers, a radius and a mass > 0 and a pitch ≥ 2 radius, got {} \
                 spheres, {} layers, radius {}, mass {}, pitch {}",
                p.spheres, p.layers, p.radius, p.mass, p.pitch
            ),
        });
    }
    let width = p.width();
    let half = 0.5 * width;
    let origin = Vector3::new(-half + 0.5 * p.pitch, -half + 0.5 * p.pitch, 0.5 * p.pitch);
    let centres = lattice_positions(p.spheres, origin, p.pitch, [per_row, per_row])?;
    let velocities = random_vectors(p.spheres, p.speed, p.seed);
    let sphere = ShapeDesc::Sphere { radius: p.radius };
    let inertia = nalgebra::Matrix3::from_diagonal_element(0.4 * p.mass * p.radius * p.radius);
    let mut bodies = vec![RigidBody::fixed()];
    let mut states = vec![BodyState::default()];
    let mut colliders = Vec::with_capacity(p.spheres + 5);
    for (normal, at) in [
        (Vector3::z(), Vector3::zeros()),
        (-Vector3::x(), Vector3::new(half, 0.0, 0.0)),
        (Vector3::x(), Vector3::new(-half, 0.0, 0.0)),
        (-Vector3::y(), Vector3::new(0.0, half, 0.0)),
        (Vector3::y(), Vector3::new(0.0, -half, 0.0)),
    ] {
        colliders.push(Collider::new(
            0,
            true,
            ShapeDesc::HalfSpace { normal },
            Isometry3::translation(at.x, at.y, at.z),
            p.material,
        )?);
    }
    for (i, (position, velocity)) in centres.into_iter().zip(velocities).enumerate() {
        bodies.push(RigidBody::new(p.mass, inertia));
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
