//! Narrow phase and contact bookkeeping: from body states to [`Contact`]
//! records.
//!
//! At each call of [`ContactDetector::detect`]:
//!
//! 1. each collider's world pose is P = (x_G, Q) ∘ P_local and its
//!    bounding box is enlarged by the margin δ;
//! 2. the broad phase lists the overlapping pairs (pairs of one body, and
//!    pairs of two fixed bodies, are left out);
//! 3. for each pair, parry3d's persistent contact-manifold query (the one
//!    rapier uses) gives the points of the two shapes closer than δ, with
//!    the normal n₁ (outward from shape 1) and the signed distance
//!    g = (p₂ − p₁)·n₁ (negative when the shapes overlap); its manifolds and
//!    workspace are kept with the pair while the pair persists, so that
//!    parry3d updates them instead of starting again;
//! 4. each point becomes a [`Contact`] with an id built from the pair and
//!    the features of the two shapes it joins (vertex, edge, face, and
//!    sub-shape such as a mesh triangle), so that a contact that persists
//!    keeps its id from step to step (warm start of the solver).
//!
//! Pair records live in a pool: when a pair separates its record (with its
//! vectors' capacity) returns to a free list and the next new pair takes
//! it, so that in the steady state nothing is allocated beyond the growth
//! of the pools. The pairs of a call are found among those of the last
//! call by merging the two lists, both sorted by pair: O(pairs), reading
//! both lists in order (a hash map of the live pairs cost one random
//! memory access per pair, slower per pair as the scene outgrows the
//! caches).

use nalgebra::{Isometry3, Translation3, Vector3};
use nonsmooth::rigid::{BodyState, Contact};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::query::{
    ContactManifold, ContactManifoldsWorkspace, DefaultQueryDispatcher, PersistentQueryDispatcher,
};
use parry3d_f64::shape::SharedShape;
use serde::{Deserialize, Serialize};

use crate::broad_phase::{BroadPhase, BvhBroadPhase};
use crate::error::{CollisionError, Result};
use crate::shapes::ShapeDesc;

/// Friction and restitution of a collider's surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    /// Coulomb coefficient μ ≥ 0.
    pub friction: f64,
    /// Newton restitution e ∈ [0, 1].
    pub restitution: f64,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            friction: 0.0,
            restitution: 0.0,
        }
    }
}

/// A shape attached to a body.
#[derive(Clone)]
pub struct Collider {
    /// The body that carries it.
    pub body: usize,
    /// Whether that body is fixed.
    pub fixed: bool,
    /// Pose of the shape in the body frame (body frame → shape frame).
    pub local_pose: Isometry3<f64>,
    /// The shape, as data.
    pub desc: ShapeDesc,
    /// Surface material.
    pub material: Material,
    shape: SharedShape,
}

impl std::fmt::Debug for Collider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collider")
            .field("body", &self.body)
            .field("fixed", &self.fixed)
            .field("desc", &self.desc)
            .field("material", &self.material)
            .finish()
    }
}

impl Collider {
    /// A collider of `desc` on body `body`, at `local_pose` in its frame.
    pub fn new(
        body: usize,
        fixed: bool,
        desc: ShapeDesc,
        local_pose: Isometry3<f64>,
        material: Material,
    ) -> Result<Self> {
        let shape = desc.build(body)?;
        if !fixed && !desc.is_solid() {
            return Err(CollisionError::InvalidShape {
                body,
                reason: format!("a {} may only be carried by a fixed body", desc.kind()),
            });
        }
        let ok = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        if !ok(material.friction, 0.0, f64::MAX) || !ok(material.restitution, 0.0, 1.0) {
            return Err(CollisionError::InvalidShape {
                body,
                reason: format!(
                    "friction must be ≥ 0 and restitution in [0, 1], got {} and {}",
                    material.friction, material.restitution
                ),
            });
        }
        Ok(Collider {
            body,
            fixed,
            local_pose,
            desc,
            material,
            shape,
        })
    }

    /// The parry3d shape.
    pub fn shape(&self) -> &SharedShape {
        &self.shape
    }

    /// World pose of the shape for its body's state.
    pub fn world_pose(&self, state: &BodyState) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::from(state.position), state.orientation)
            * self.local_pose
    }
}

/// The law of a pair from its two materials: the mean friction and the
/// mean restitution (rapier's default "average" rule).
pub fn combine(a: &Material, b: &Material) -> Material {
    Material {
        friction: 0.5 * (a.friction + b.friction),
        restitution: 0.5 * (a.restitution + b.restitution),
    }
}

type Manifold = ContactManifold<(), ()>;

/// What the detector keeps for a pair between calls.
#[derive(Default, Clone, Serialize, Deserialize)]
struct PairRecord {
    manifolds: Vec<Manifold>,
    workspace: Option<ContactManifoldsWorkspace>,
}

/// What a [`ContactDetector`] carries from one call to the next, as data:
/// the pairs of the last call with their records, the record pool (free
/// list in order) and each record's contact manifolds and workspace
/// (parry3d's persistent manifolds: their normals, points and feature ids
/// seed the next query, so that a contact keeps its id). The broad phase
/// is not part of it: its pairs are the overlapping boxes, sorted,
/// whatever its tree. Written by [`ContactDetector::save_state`], bytes by
/// [`DetectorState::to_bytes`] (postcard, parry3d's serde form of the
/// manifolds).
#[derive(Clone, Serialize, Deserialize)]
pub struct DetectorState {
    live: Vec<((u32, u32), usize)>,
    records: Vec<PairRecord>,
    free: Vec<usize>,
    stats: (usize, usize, usize),
}

impl std::fmt::Debug for DetectorState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DetectorState")
            .field("pairs", &self.live.len())
            .field("records", &self.records.len())
            .finish()
    }
}

impl DetectorState {
    /// The state as bytes (postcard).
    pub fn to_bytes(&self) -> Vec<u8> {
        // Writing into a vector cannot fail: every field is a type
        // postcard writes (parry3d writes every built-in workspace).
        postcard::to_stdvec(self).expect("postcard writes every detector field")
    }

    /// Reads what [`DetectorState::to_bytes`] wrote.
    pub fn from_bytes(bytes: &[u8]) -> Result<DetectorState> {
        postcard::from_bytes(bytes).map_err(|e| CollisionError::InvalidSetting {
            name: "detector state",
            reason: format!("unreadable bytes: {e}"),
        })
    }
}

/// Counters of the last detection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// Pairs proposed by the broad phase.
    pub pairs: usize,
    /// Contact points reported.
    pub contacts: usize,
    /// Pair records in the pool (live and free).
    pub pool: usize,
}

/// The contact detector: colliders, margin, broad phase and pair pool.
pub struct ContactDetector {
    colliders: Vec<Collider>,
    margin: f64,
    broad: Box<dyn BroadPhase>,
    aabbs: Vec<Aabb>,
    pairs: Vec<(u32, u32)>,
    /// The last call's pairs with their records, sorted by pair.
    live: Vec<((u32, u32), usize)>,
    /// The record of each pair of this call, in `pairs` order.
    slots: Vec<usize>,
    records: Vec<PairRecord>,
    free: Vec<usize>,
    stats: DetectionStats,
}

impl std::fmt::Debug for ContactDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactDetector")
            .field("colliders", &self.colliders.len())
            .field("margin", &self.margin)
            .field("stats", &self.stats)
            .finish()
    }
}

/// A 64-bit mix of the pair and feature ids (SplitMix64 finaliser): equal
/// inputs give equal ids; distinct inputs collide with probability 2⁻⁶⁴
/// (a collision would only mis-seed one warm start).
fn contact_id(parts: [u32; 6]) -> u64 {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for p in parts {
        h ^= p as u64;
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    h
}

impl ContactDetector {
    /// A detector over `colliders` reporting points closer than `margin`,
    /// with parry3d's BVH broad phase.
    pub fn new(colliders: Vec<Collider>, margin: f64) -> Result<Self> {
        Self::with_broad_phase(colliders, margin, Box::new(BvhBroadPhase::new()))
    }

    /// The same with a chosen broad phase.
    pub fn with_broad_phase(
        colliders: Vec<Collider>,
        margin: f64,
        broad: Box<dyn BroadPhase>,
    ) -> Result<Self> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(CollisionError::InvalidSetting {
                name: "margin",
                reason: format!("must be finite and ≥ 0, got {margin}"),
            });
        }
        Ok(ContactDetector {
            colliders,
            margin,
            broad,
            aabbs: Vec::new(),
            pairs: Vec::new(),
            live: Vec::new(),
            slots: Vec::new(),
            records: Vec::new(),
            free: Vec::new(),
            stats: DetectionStats::default(),
        })
    }

    /// The colliders.
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// The margin δ.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// Counters of the last call.
    pub fn stats(&self) -> DetectionStats {
        self.stats
    }

    /// Detects the contacts for the bodies' `states` into `out` (cleared
    /// first), in a deterministic order (by pair, then manifold, then point).
    pub fn detect(&mut self, states: &[BodyState], out: &mut Vec<Contact>) -> Result<()> {
        out.clear();
        for c in &self.colliders {
            if c.body >= states.len() {
                return Err(CollisionError::SizeMismatch {
                    colliders: self.colliders.len(),
                    states: states.len(),
                });
            }
        }
        self.aabbs.clear();
        for c in &self.colliders {
            let pose = c.world_pose(&states[c.body]);
            self.aabbs
                .push(c.shape.compute_aabb(&pose).loosened(0.5 * self.margin));
        }
        let colliders = &self.colliders;
        let keep = |i: usize, j: usize| {
            let (a, b) = (&colliders[i], &colliders[j]);
            a.body != b.body && !(a.fixed && b.fixed)
        };
        self.broad.pairs(&self.aabbs, &keep, &mut self.pairs);
        if !self.pairs.windows(2).all(|w| w[0] < w[1]) {
            // A broad phase that breaks its contract's order.
            self.pairs.sort_unstable();
            self.pairs.dedup();
        }
        self.match_records();
        let dispatcher = DefaultQueryDispatcher;
        for (&(i, j), &k) in self.pairs.iter().zip(&self.slots) {
            let rec = &mut self.records[k];
            let (c1, c2) = (&self.colliders[i as usize], &self.colliders[j as usize]);
            let pos1 = c1.world_pose(&states[c1.body]);
            let pos2 = c2.world_pose(&states[c2.body]);
            let pos12 = pos1.inv_mul(&pos2);
            dispatcher
                .contact_manifolds(
                    &pos12,
                    c1.shape.as_ref(),
                    c2.shape.as_ref(),
                    self.margin,
                    &mut rec.manifolds,
                    &mut rec.workspace,
                )
                .map_err(|_| CollisionError::Unsupported {
                    body1: c1.body,
                    body2: c2.body,
                    kinds: format!("{} and {}", c1.desc.kind(), c2.desc.kind()),
                })?;
            let law = combine(&c1.material, &c2.material);
            for m in &rec.manifolds {
                let w1 = m.subshape_pos1.map_or(pos1, |p| pos1 * p);
                let w2 = m.subshape_pos2.map_or(pos2, |p| pos2 * p);
                let n: Vector3<f64> = w1 * m.local_n1;
                let norm = n.norm();
                if norm.is_nan() || norm <= 0.0 {
                    continue;
                }
                let n = n / norm;
                for p in &m.points {
                    if p.dist > self.margin {
                        continue;
                    }
                    out.push(Contact {
                        body1: c1.body,
                        body2: c2.body,
                        point1: (w1 * p.local_p1).coords,
                        point2: (w2 * p.local_p2).coords,
                        normal: n,
                        gap: p.dist,
                        id: contact_id([i, j, m.subshape1, m.subshape2, p.fid1.0, p.fid2.0]),
                        friction: law.friction,
                        restitution: law.restitution,
                    });
                }
            }
        }
        self.stats = DetectionStats {
            pairs: self.pairs.len(),
            contacts: out.len(),
            pool: self.records.len(),
        };
        Ok(())
    }

    /// What the detector carries to its next call (see [`DetectorState`]).
    pub fn save_state(&self) -> DetectorState {
        DetectorState {
            live: self.live.clone(),
            records: self.records.clone(),
            free: self.free.clone(),
            stats: (self.stats.pairs, self.stats.contacts, self.stats.pool),
        }
    }

    /// Puts back a state taken from this detector or from one of the same
    /// colliders; nothing is changed when it does not fit (a pair of
    /// colliders that does not exist, pairs out of order, a record named
    /// twice or missing).
    pub fn restore_state(&mut self, s: &DetectorState) -> Result<()> {
        let n = self.colliders.len() as u32;
        let bad = |reason: String| CollisionError::InvalidSetting {
            name: "detector state",
            reason,
        };
        if !s.live.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err(bad("its pairs are not sorted".into()));
        }
        if let Some(p) = s.live.iter().find(|((i, j), _)| i >= j || *j >= n) {
            return Err(bad(format!(
                "pair {:?} of a detector with {n} colliders",
                p.0
            )));
        }
        let mut seen = vec![false; s.records.len()];
        for &k in s.live.iter().map(|(_, k)| k).chain(&s.free) {
            match seen.get_mut(k) {
                Some(b) if !*b => *b = true,
                _ => return Err(bad(format!("record {k} is missing or named twice"))),
            }
        }
        if seen.iter().any(|b| !b) {
            return Err(bad("a record is neither live nor free".into()));
        }
        self.live.clone_from(&s.live);
        self.records.clone_from(&s.records);
        self.free.clone_from(&s.free);
        self.stats = DetectionStats {
            pairs: s.stats.0,
            contacts: s.stats.1,
            pool: s.stats.2,
        };
        Ok(())
    }

    /// Gives each pair of `pairs` (sorted, distinct) its record in `slots`:
    /// the record it had in the last call, or one from the pool. The last
    /// call's pairs that are gone return their records to the pool first,
    /// so that a new pair reuses them. Then `live` becomes this call's
    /// pairs. One merge of two sorted lists: O(pairs).
    fn match_records(&mut self) {
        const NEW: usize = usize::MAX;
        self.slots.clear();
        let mut p = 0;
        for pair in &self.pairs {
            while p < self.live.len() && self.live[p].0 < *pair {
                let k = self.live[p].1;
                self.records[k].manifolds.clear();
                self.free.push(k);
                p += 1;
            }
            if p < self.live.len() && self.live[p].0 == *pair {
                self.slots.push(self.live[p].1);
                p += 1;
            } else {
                self.slots.push(NEW);
            }
        }
        for &(_, k) in &self.live[p..] {
            self.records[k].manifolds.clear();
            self.free.push(k);
        }
        self.live.clear();
        for (pair, slot) in self.pairs.iter().zip(self.slots.iter_mut()) {
            if *slot == NEW {
                *slot = match self.free.pop() {
                    Some(k) => k,
                    None => {
                        self.records.push(PairRecord::default());
                        self.records.len() - 1
                    }
                };
            }
            self.live.push((*pair, *slot));
        }
    }
}
