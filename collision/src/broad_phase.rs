//! Broad phase: pairs of colliders whose bounding boxes overlap.
//!
//! The [`BroadPhase`] trait takes the axis-aligned bounding boxes of the
//! colliders (already enlarged by the detection margin) and lists the pairs
//! (i, j), i < j, whose boxes overlap, leaving out pairs the caller marks
//! as never colliding (same body, both fixed). [`BvhBroadPhase`] keeps
//! parry3d's bounding-volume hierarchy from step to step (built once, then
//! leaves updated in place and refitted: no allocation once sized) and queries it once
//! per collider, O(N log N + pairs); [`AllPairs`] tests every pair, O(N²),
//! for small scenes and as a reference in tests.

use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

/// Lists overlapping pairs of bounding boxes.
pub trait BroadPhase: Send {
    /// Writes into `pairs` (cleared first) every (i, j), i < j, with
    /// overlapping `aabbs[i]` and `aabbs[j]` and `keep(i, j)` true, in
    /// increasing order.
    fn pairs(
        &mut self,
        aabbs: &[Aabb],
        keep: &dyn Fn(usize, usize) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    );
}

/// Every pair tested (O(N²)).
#[derive(Debug, Default, Clone)]
pub struct AllPairs;

impl BroadPhase for AllPairs {
    fn pairs(
        &mut self,
        aabbs: &[Aabb],
        keep: &dyn Fn(usize, usize) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        pairs.clear();
        for i in 0..aabbs.len() {
            for j in i + 1..aabbs.len() {
                if aabbs[i].intersects(&aabbs[j]) && keep(i, j) {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
    }
}

/// parry3d's bounding-volume hierarchy, kept and refitted from step to step.
#[derive(Default)]
pub struct BvhBroadPhase {
    bvh: Bvh,
    workspace: BvhWorkspace,
    leaves: usize,
}

impl BvhBroadPhase {
    /// An empty broad phase.
    pub fn new() -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for BvhBroadPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BvhBroadPhase({} leaves)", self.leaves)
    }
}

impl BroadPhase for BvhBroadPhase {
    fn pairs(
        &mut self,
        aabbs: &[Aabb],
        keep: &dyn Fn(usize, usize) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        pairs.clear();
        if aabbs.len() != self.leaves {
            // New set of colliders: build the tree (binned SAH).
            self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, aabbs);
            self.leaves = aabbs.len();
        } else {
            // Same colliders: move the leaves, refit, and let parry3d
            // improve the tree a little (rapier does the same each step).
            for (i, b) in aabbs.iter().enumerate() {
                self.bvh.insert_or_update_partially(*b, i as u32, 0.0);
            }
            self.bvh.refit(&mut self.workspace);
            self.bvh.optimize_incremental(&mut self.workspace);
        }
        for (i, b) in aabbs.iter().enumerate() {
            let start = pairs.len();
            for j in self.bvh.intersect_aabb(b) {
                let j = j as usize;
                // parry3d 0.22's leaf iterator hands out the root's first
                // child without testing it: test every candidate again.
                if j > i && b.intersects(&aabbs[j]) && keep(i, j) {
                    pairs.push((i as u32, j as u32));
                }
            }
            pairs[start..].sort_unstable();
        }
    }
}
