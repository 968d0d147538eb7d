//! A start for the contacts that carry no impulse from the previous step
//! (newly active ones, or active ones that were separated): instead of
//! r_i = 0, the solution of contact i's own problem with every other
//! contact's impulse held at its start,
//!
//! u_i = W_ii r_i + q̃_i,   q̃_i = q_i + Σ_{j≠i} W_ij r_j,   K*_μ ∋ û_i ⊥ r_i ∈ K_μ,
//!
//! taken in the contacts' order, each using the starts already updated
//! (one Gauss–Seidel pass over the fresh contacts only). The one-contact
//! problem is answered in closed form when it can be (separated: q̃_N ≥ 0;
//! sticking: r_i = −W_ii⁻¹ q̃_i inside the cone) and otherwise by the
//! local Alart–Curnier Newton method from the sliding start; when that does
//! not converge the contact keeps r_i = 0.
//!
//! A new contact that starts at 0 makes the first Newton step guess its
//! status (sticking, at r = 0) and correct it at the next one; this start
//! gives it the status its neighbours' impulses imply. It is only a start:
//! the Newton method over all contacts checks its own error, and the
//! solution it returns meets the same tolerance.

use crate::numerics::friction::local::{
    closed_form, invert_block, newton_ac, rho_of, sliding_start,
};
use crate::numerics::friction::FrictionProblem;
use crate::numerics::Matrix;

/// Local Newton steps allowed for one fresh contact.
const LOCAL_STEPS: usize = 20;

/// Sets the start of every contact of `fresh` (contact indices, in
/// increasing order, whose start in `r` is 0) by its one-contact problem
/// (see the module documentation). Only for a block-sparse W over uniform
/// d × d contact blocks; does nothing otherwise. `tol` is the local
/// Newton method's tolerance on the natural map.
pub(super) fn start_fresh_contacts(p: &FrictionProblem, fresh: &[usize], r: &mut [f64], tol: f64) {
    let Matrix::BlockSparse(w) = &p.w else {
        return;
    };
    let d = p.dim;
    let parts = w.parts();
    let nc = p.contacts();
    if parts.row_ptr.len() != nc + 1 || parts.row_offsets.len() != nc + 1 {
        return;
    }
    for &i in fresh {
        if parts.row_offsets[i + 1] - parts.row_offsets[i] != d {
            continue;
        }
        // q̃_i and W_ii (row-major; blocks are stored column-major).
        let mut qt = [0.0; 3];
        qt[..d].copy_from_slice(&p.q[i * d..i * d + d]);
        let mut wii = [[0.0; 3]; 3];
        let mut has_diag = false;
        for k in parts.row_ptr[i]..parts.row_ptr[i + 1] {
            let c = parts.block_col[k];
            let vals = &parts.values[parts.value_ptr[k]..parts.value_ptr[k + 1]];
            if vals.len() != d * d {
                return;
            }
            if c == i {
                for (b, col) in vals.chunks_exact(d).enumerate() {
                    for (a, &v) in col.iter().enumerate() {
                        wii[a][b] += v;
                    }
                }
                has_diag = true;
                continue;
            }
            let rc = &r[c * d..c * d + d];
            for (col, &x) in vals.chunks_exact(d).zip(rc) {
                for (q, &v) in qt.iter_mut().zip(col) {
                    *q += v * x;
                }
            }
        }
        if !has_diag {
            continue;
        }
        let ri = &mut r[i * d..i * d + d];
        // The tolerance relative to the contact's free velocity.
        let tol = tol * (1.0 + qt.iter().map(|v| v * v).sum::<f64>().sqrt());
        let inv = invert_block(d, &wii);
        if closed_form(d, &wii, inv.as_ref(), &qt, p.mu[i], ri, tol).is_some() {
            continue;
        }
        sliding_start(d, &wii, &qt, p.mu[i], ri);
        let solved = newton_ac(d, &wii, rho_of(d, &wii), &qt, p.mu[i], ri, tol, LOCAL_STEPS);
        if !solved || !ri.iter().all(|v| v.is_finite()) {
            ri.iter_mut().for_each(|v| *v = 0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::friction::friction_solver;
    use crate::numerics::matrix::Block;
    use crate::numerics::{BlockSparseMatrix, SolverSettings};

    /// A chain of `nc` contacts of dimension `d` (W block-tridiagonal,
    /// positive definite: the Delassus matrix of a column of unit masses),
    /// with free velocities that make some contacts stick, some slide and
    /// some separate.
    fn chain(d: usize, nc: usize) -> FrictionProblem {
        let mut blocks = Vec::new();
        for i in 0..nc {
            let diag = if i == 0 { 1.0 } else { 2.0 };
            let mut v = vec![0.0; d * d];
            for a in 0..d {
                v[a * d + a] = diag;
            }
            blocks.push(Block {
                row: i,
                col: i,
                values: v,
            });
            if i > 0 {
                let mut v = vec![0.0; d * d];
                for a in 0..d {
                    v[a * d + a] = -1.0;
                }
                for (row, col) in [(i, i - 1), (i - 1, i)] {
                    blocks.push(Block {
                        row,
                        col,
                        values: v.clone(),
                    });
                }
            }
        }
        let sizes = vec![d; nc];
        let w = BlockSparseMatrix::new(&sizes, &sizes, blocks).expect("chain blocks");
        let q = (0..nc * d)
            .map(|k| {
                let (i, a) = (k / d, k % d);
                if a == 0 {
                    -1.0 + 0.6 * ((i * 7 % 5) as f64)
                } else {
                    0.8 * ((i as f64) * 1.3 + a as f64).sin()
                }
            })
            .collect();
        FrictionProblem::new(d, w, q, vec![0.3; nc]).expect("chain problem")
    }

    #[test]
    fn the_fresh_start_leads_newton_to_the_same_solution() {
        for d in [2, 3] {
            let p = chain(d, 30);
            let settings = SolverSettings {
                tolerance: 1e-12,
                ..SolverSettings::default()
            };
            let mut newton = friction_solver("newton-ac", settings).expect("solver");
            let n = p.size();
            let (mut r0, mut u0) = (vec![0.0; n], vec![0.0; n]);
            let plain = newton.solve(&p, &mut r0, &mut u0).expect("solve");
            assert!(plain.status.is_solved(), "from zero: {plain:?}");
            // Every other contact fresh, the others at the solution.
            let fresh: Vec<usize> = (0..p.contacts()).step_by(2).collect();
            let mut r1 = r0.clone();
            for &i in &fresh {
                r1[i * d..i * d + d].iter_mut().for_each(|v| *v = 0.0);
            }
            start_fresh_contacts(&p, &fresh, &mut r1, 1e-14);
            // With the others at the solution, each fresh contact's local
            // problem has the solution's impulse as its answer.
            for k in 0..n {
                assert!(
                    (r1[k] - r0[k]).abs() <= 1e-9 * (1.0 + r0[k].abs()),
                    "d = {d}, entry {k}: start {} against solution {}",
                    r1[k],
                    r0[k]
                );
            }
            // From every contact fresh: the same solution to the tolerance.
            let all: Vec<usize> = (0..p.contacts()).collect();
            let mut r2 = vec![0.0; n];
            start_fresh_contacts(&p, &all, &mut r2, 1e-14);
            let mut u2 = vec![0.0; n];
            let started = newton.solve(&p, &mut r2, &mut u2).expect("solve");
            assert!(started.status.is_solved(), "fresh start: {started:?}");
            for k in 0..n {
                assert!(
                    (r2[k] - r0[k]).abs() <= 1e-9 * (1.0 + r0[k].abs()),
                    "d = {d}, entry {k}: {} against {}",
                    r2[k],
                    r0[k]
                );
            }
        }
    }
}
