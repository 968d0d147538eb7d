//! The detector's pair records: matched from call to call by merging the
//! sorted pair lists. Over spheres that move enough for pairs to appear and
//! vanish at every call, the pool holds exactly as many records as the
//! largest number of pairs seen in one call (a vanished pair's record goes
//! back to the pool before the new pairs of the same call take theirs), and
//! a broad phase that hands out its pairs out of order and repeated gives
//! the same contacts as one that keeps its contract.

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use nonsmooth::rigid::BodyState;
use nonsmooth_collision::parry3d_f64::bounding_volume::Aabb;
use nonsmooth_collision::{
    AllPairs, BroadPhase, BvhBroadPhase, Collider, ContactDetector, Material, ShapeDesc,
};

/// All pairs, handed out in decreasing order and each twice.
struct Shuffled;

impl BroadPhase for Shuffled {
    fn pairs(
        &mut self,
        aabbs: &[Aabb],
        keep: &dyn Fn(usize, usize) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        AllPairs.pairs(aabbs, keep, pairs);
        pairs.reverse();
        let copy = pairs.clone();
        pairs.extend(copy);
    }
}

fn lcg(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn records_are_matched_by_merging_and_reused_first() {
    let mut rand = lcg(7);
    let n = 200;
    let colliders: Vec<Collider> = (0..n)
        .map(|i| {
            Collider::new(
                i,
                false,
                ShapeDesc::Sphere {
                    radius: 0.05 + 0.1 * rand(),
                },
                Isometry3::identity(),
                Material::default(),
            )
            .unwrap()
        })
        .collect();
    let mut states: Vec<BodyState> = (0..n)
        .map(|_| {
            BodyState::at(
                Vector3::new(2.0 * rand(), 2.0 * rand(), 2.0 * rand()),
                UnitQuaternion::identity(),
            )
        })
        .collect();
    let new =
        |b: Box<dyn BroadPhase>| ContactDetector::with_broad_phase(colliders.clone(), 0.01, b);
    let mut bvh = new(Box::new(BvhBroadPhase::new())).unwrap();
    let mut shuffled = new(Box::new(Shuffled)).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut most = 0;
    let mut previous: Vec<(usize, usize)> = Vec::new();
    let (mut vanished, mut appeared) = (0, 0);
    for call in 0..30 {
        bvh.detect(&states, &mut a).unwrap();
        shuffled.detect(&states, &mut b).unwrap();
        assert!(
            a == b,
            "call {call}: {} contacts in order, {} from the shuffled pairs",
            a.len(),
            b.len()
        );
        let stats = bvh.stats();
        assert_eq!(shuffled.stats(), stats, "call {call}");
        most = most.max(stats.pairs);
        assert_eq!(stats.pool, most, "call {call}: {stats:?}");
        // The churn this test relies on: pairs of bodies (from the contacts)
        // that vanish and appear between calls.
        let mut now: Vec<(usize, usize)> = a.iter().map(|c| (c.body1, c.body2)).collect();
        now.dedup();
        if call > 0 {
            vanished += previous.iter().filter(|p| !now.contains(p)).count();
            appeared += now.iter().filter(|p| !previous.contains(p)).count();
        }
        previous = now;
        for s in &mut states {
            s.position += Vector3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 0.15;
        }
    }
    assert!(vanished > 100 && appeared > 100, "{vanished} {appeared}");
}
