//! Models of the bundled examples built with the library API, shared by
//! tests and benchmarks. Parameters as in the bundled scenarios.
#![allow(dead_code)]

use nalgebra::{dmatrix, dvector, DMatrix, DVector};
use nonsmooth::modelling::*;
use nonsmooth::numerics::matrix::Block;
use nonsmooth::numerics::BlockSparseMatrix;

/// Bouncing ball: q = (height, x, angle), M = diag(m, m, 2/5 m R²),
/// F_ext = (−m g, 0, 0); `floor`: y = q[0] − b_offset, Newton impact e.
pub fn bouncing_ball(
    height: f64,
    restitution: f64,
    b_offset: f64,
) -> (Model, SystemId, InteractionId) {
    let (r, m, g) = (0.1, 1.0, 9.81);
    let mut b = ModelBuilder::new();
    let ball = b
        .add_system(
            "ball",
            LagrangianLinearTi::new(
                dvector![height, 0.0, 0.0],
                dvector![0.0, 0.0, 0.0],
                DMatrix::from_diagonal(&dvector![m, m, 0.4 * m * r * r]),
            )
            .with_fext(TimeVector::Constant(dvector![-m * g, 0.0, 0.0])),
        )
        .unwrap();
    let floor = b
        .add_interaction(
            "floor",
            &[ball],
            LagrangianLinearTiR::new(dmatrix![1.0, 0.0, 0.0]).with_b(dvector![-b_offset]),
            NonsmoothLaw::NewtonImpact {
                size: 1,
                restitution,
            },
        )
        .unwrap();
    (b.build(), ball, floor)
}

/// Diode bridge of seed 002 §3.1 (L = 1e-2, C = 1e-6, R = 1e3, v_L(0) = 10).
pub fn diode_bridge() -> (Model, SystemId, InteractionId) {
    let (l, c, r) = (1e-2, 1e-6, 1e3);
    let mut b = ModelBuilder::new();
    let circuit = b
        .add_system(
            "circuit",
            FirstOrderLinear::new(dvector![10.0, 0.0], dmatrix![0.0, -1.0 / c; 1.0 / l, 0.0]),
        )
        .unwrap();
    let diodes = b
        .add_interaction(
            "diodes",
            &[circuit],
            FirstOrderLinearTi::new(
                dmatrix![0.0, 0.0; 0.0, 0.0; -1.0, 0.0; 1.0, 0.0],
                dmatrix![0.0, 0.0, -1.0 / c, 1.0 / c; 0.0, 0.0, 0.0, 0.0],
            )
            .with_d(dmatrix![
                1.0 / r, 1.0 / r, -1.0, 0.0;
                1.0 / r, 1.0 / r, 0.0, -1.0;
                1.0, 0.0, 0.0, 0.0;
                0.0, 1.0, 0.0, 0.0
            ]),
            NonsmoothLaw::Complementarity { size: 4 },
        )
        .unwrap();
    (b.build(), circuit, diodes)
}

/// Chattering-free relay: ẋ = [[0, 1], [0, −c1]] x − [0, α]ᵀ sgn(c1 x0 + x1).
pub fn relay(c1: f64, alpha: f64, x0: [f64; 2]) -> (Model, SystemId, InteractionId) {
    let mut b = ModelBuilder::new();
    let plant = b
        .add_system(
            "plant",
            FirstOrderLinear::new(
                DVector::from_column_slice(&x0),
                dmatrix![0.0, 1.0; 0.0, -c1],
            ),
        )
        .unwrap();
    let relay = b
        .add_interaction(
            "relay",
            &[plant],
            FirstOrderLinearTi::new(dmatrix![c1, 1.0], dmatrix![0.0; alpha]).with_d(dmatrix![0.0]),
            NonsmoothLaw::Relay {
                lb: vec![-1.0],
                ub: vec![1.0],
            },
        )
        .unwrap();
    (b.build(), plant, relay)
}

/// A column of `n` one-dof beads (mass 1, radius r, g = 9.81) above the
/// ground, `gap` between neighbours and below the lowest one.
/// Interactions: `ground` (index 0) then `contact{i}` between beads i−1 and i.
pub fn beads_column(
    n: usize,
    r: f64,
    gap: f64,
    restitution: f64,
) -> (Model, Vec<SystemId>, Vec<InteractionId>) {
    let (m, g) = (1.0, 9.81);
    let mut b = ModelBuilder::new();
    let beads: Vec<SystemId> = (0..n)
        .map(|i| {
            let q0 = r + gap + i as f64 * (2.0 * r + gap);
            b.add_system(
                &format!("bead{i}"),
                LagrangianLinearTi::new(dvector![q0], dvector![0.0], dmatrix![m])
                    .with_fext(TimeVector::Constant(dvector![-m * g])),
            )
            .unwrap()
        })
        .collect();
    let law = NonsmoothLaw::NewtonImpact {
        size: 1,
        restitution,
    };
    let mut inters = vec![b
        .add_interaction(
            "ground",
            &[beads[0]],
            LagrangianLinearTiR::new(dmatrix![1.0]).with_b(dvector![-r]),
            law.clone(),
        )
        .unwrap()];
    for i in 1..n {
        inters.push(
            b.add_interaction(
                &format!("contact{i}"),
                &[beads[i - 1], beads[i]],
                LagrangianLinearTiR::new(dmatrix![-1.0, 1.0]).with_b(dvector![-2.0 * r]),
                law.clone(),
            )
            .unwrap(),
        );
    }
    (b.build(), beads, inters)
}

/// The chain's W in 1 × 1 blocks. Contacts in `off` are decoupled: their row
/// and column hold stored zeros and a 1 on the diagonal, so the pattern is
/// that of the full chain.
pub fn bead_chain(n: usize, mass: f64, off: &[bool]) -> BlockSparseMatrix {
    let mut blocks = Vec::with_capacity(3 * n);
    for i in 0..n {
        let d = if off[i] { 1.0 } else { 2.0 / mass };
        blocks.push(Block {
            row: i,
            col: i,
            values: vec![d],
        });
        if i + 1 < n {
            let o = if off[i] || off[i + 1] {
                0.0
            } else {
                -1.0 / mass
            };
            for (r, c) in [(i, i + 1), (i + 1, i)] {
                blocks.push(Block {
                    row: r,
                    col: c,
                    values: vec![o],
                });
            }
        }
    }
    BlockSparseMatrix::new(&vec![1; n], &vec![1; n], blocks).unwrap()
}
