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

/// Two point masses in the vertical plane (q_i = (x_i, z_i), masses m₁ = 1,
/// m₂ = 2, gravity g = 9.81) joined by a rigid massless bar of length L = 1:
/// `bar`, y = |p₁ − p₂| − L with J = (dᵀ, −dᵀ)/|d|, d = p₁ − p₂, equality
/// law; `ground1`, `ground2`: y = z_i, Newton impact with restitution e.
/// Starts with mass 1 at height `z1`, the bar at 30° above the horizontal
/// and rotating at ω = 3 rad/s about the centre of mass, which is at rest.
/// Returns the model, the two masses, the bar and the two contacts.
pub fn two_masses_bar(
    z1: f64,
    restitution: f64,
) -> (Model, [SystemId; 2], InteractionId, [InteractionId; 2]) {
    use std::sync::Arc;
    let (m, g, len, omega) = ([1.0, 2.0], 9.81, 1.0, 3.0);
    let alpha = std::f64::consts::FRAC_PI_6;
    let p1 = [0.0, z1];
    let p2 = [len * alpha.cos(), z1 + len * alpha.sin()];
    let c = [
        (m[0] * p1[0] + m[1] * p2[0]) / (m[0] + m[1]),
        (m[0] * p1[1] + m[1] * p2[1]) / (m[0] + m[1]),
    ];
    // v = ω × (p − c) for a rotation in the (x, z) plane.
    let vel = |p: [f64; 2]| dvector![-omega * (p[1] - c[1]), omega * (p[0] - c[0])];
    let mut b = ModelBuilder::new();
    let mut masses = [SystemId(0); 2];
    for (k, p) in [p1, p2].into_iter().enumerate() {
        masses[k] = b
            .add_system(
                &format!("mass{}", k + 1),
                LagrangianLinearTi::new(
                    dvector![p[0], p[1]],
                    vel(p),
                    DMatrix::from_diagonal_element(2, 2, m[k]),
                )
                .with_fext(TimeVector::Constant(dvector![0.0, -m[k] * g])),
            )
            .unwrap();
    }
    let bar = b
        .add_interaction(
            "bar",
            &masses,
            LagrangianScleronomous {
                output_dim: 1,
                h: Arc::new(move |q: &[f64], y: &mut [f64]| {
                    y[0] = (q[0] - q[2]).hypot(q[1] - q[3]) - len;
                }),
                jacobian: Some(Arc::new(|q: &[f64], j: &mut DMatrix<f64>| {
                    let (dx, dz) = (q[0] - q[2], q[1] - q[3]);
                    let n = dx.hypot(dz);
                    j[(0, 0)] = dx / n;
                    j[(0, 1)] = dz / n;
                    j[(0, 2)] = -dx / n;
                    j[(0, 3)] = -dz / n;
                })),
            },
            NonsmoothLaw::Equality { size: 1 },
        )
        .unwrap();
    let mut ground = [InteractionId(0); 2];
    for (k, &s) in masses.iter().enumerate() {
        ground[k] = b
            .add_interaction(
                &format!("ground{}", k + 1),
                &[s],
                LagrangianLinearTiR::new(dmatrix![0.0, 1.0]),
                NonsmoothLaw::NewtonImpact {
                    size: 1,
                    restitution,
                },
            )
            .unwrap();
    }
    (b.build(), masses, bar, ground)
}
