//! One-contact problems: u = W r + q with a d × d block W, Coulomb's law on
//! (r, u). The local solvers of NSGS: a nonsmooth Newton method on the
//! Alart–Curnier function with a backtracking line search, and the projected
//! fixed point r ← P_K(r − ρ û). Allocation-free (stack arrays only).

use super::cone::{
    alart_curnier, alart_curnier_value, contact_natural_map_sq, project_on_cone, tangent_norm,
};

/// u ← W r + q for one contact.
#[inline(always)]
pub fn contact_velocity(d: usize, w: &[[f64; 3]; 3], q: &[f64; 3], r: &[f64], u: &mut [f64; 3]) {
    for a in 0..d {
        u[a] = q[a] + (0..d).map(|b| w[a][b] * r[b]).sum::<f64>();
    }
}

/// Solves the d × d system A x = b (d ∈ {2, 3}) by Cramer's rule,
/// x = adj(A) b / det A, branch-free; `b` receives x. False when A is
/// singular to working precision, |det A| ≤ 10⁻¹⁴ ‖A‖_max^d, or not
/// finite. (It replaced Gaussian elimination with partial pivoting in the
/// local Newton: a third of the instructions of that solve, no branches.)
#[inline(always)]
pub fn solve_cramer(d: usize, a: &[[f64; 3]; 3], b: &mut [f64; 3]) -> bool {
    let mut m = 0.0f64;
    for row in &a[..d] {
        for v in &row[..d] {
            m = m.max(v.abs());
        }
    }
    if d == 2 {
        let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        if !(det.is_finite() && m.is_finite() && det.abs() > 1e-14 * m * m) {
            return false;
        }
        let x0 = (a[1][1] * b[0] - a[0][1] * b[1]) / det;
        let x1 = (a[0][0] * b[1] - a[1][0] * b[0]) / det;
        b[0] = x0;
        b[1] = x1;
        return true;
    }
    // Cofactors C_ij of A; adj(A) = Cᵀ.
    let c = |i: usize, j: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        a[i1][j1] * a[i2][j2] - a[i1][j2] * a[i2][j1]
    };
    let cof = [
        [c(0, 0), c(0, 1), c(0, 2)],
        [c(1, 0), c(1, 1), c(1, 2)],
        [c(2, 0), c(2, 1), c(2, 2)],
    ];
    let det = a[0][0] * cof[0][0] + a[0][1] * cof[0][1] + a[0][2] * cof[0][2];
    if !(det.is_finite() && m.is_finite() && det.abs() > 1e-14 * m * m * m) {
        return false;
    }
    let x: [f64; 3] =
        std::array::from_fn(|k| (cof[0][k] * b[0] + cof[1][k] * b[1] + cof[2][k] * b[2]) / det);
    *b = x;
    true
}

/// The Alart–Curnier parameter of a block: 1 / max_k W_kk (1 when W has no
/// positive diagonal).
#[inline]
pub fn rho_of(d: usize, w: &[[f64; 3]; 3]) -> f64 {
    let m = (0..d).fold(0.0f64, |m, k| m.max(w[k][k]));
    if m > 0.0 && m.is_finite() {
        1.0 / m
    } else {
        1.0
    }
}

/// The local natural map ‖r − P_K(r − û)‖ of r.
#[inline]
pub fn contact_error(d: usize, w: &[[f64; 3]; 3], q: &[f64; 3], mu: f64, r: &[f64]) -> f64 {
    let mut u = [0.0; 3];
    contact_velocity(d, w, q, r, &mut u);
    contact_natural_map_sq(r, &u[..d], mu).sqrt()
}

/// The inverse of a d × d block (d ∈ {2, 3}) by cofactors: W⁻¹ = adj(W) / det W.
/// None when W is singular to working precision (|det W| ≤ 10⁻¹² ‖W‖_max^d)
/// or not finite.
pub fn invert_block(d: usize, w: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let mut m = 0.0f64;
    for row in &w[..d] {
        for v in &row[..d] {
            m = m.max(v.abs());
        }
    }
    let mut inv = [[0.0; 3]; 3];
    let det = if d == 2 {
        inv[0] = [w[1][1], -w[0][1], 0.0];
        inv[1] = [-w[1][0], w[0][0], 0.0];
        w[0][0] * w[1][1] - w[0][1] * w[1][0]
    } else {
        // adj(W)_ab = cofactor C_ba.
        let c = |i: usize, j: usize| {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            w[i1][j1] * w[i2][j2] - w[i1][j2] * w[i2][j1]
        };
        for (a, row) in inv.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                *v = c(b, a);
            }
        }
        (0..3).map(|k| w[0][k] * inv[k][0]).sum()
    };
    // ‖W‖_max^d by products (d is 2 or 3).
    let md = if d == 2 { m * m } else { m * m * m };
    if !(det.is_finite() && m.is_finite() && det.abs() > 1e-12 * md) {
        return None;
    }
    for row in inv.iter_mut() {
        row.iter_mut().for_each(|v| *v /= det);
    }
    Some(inv)
}

/// The two closed-form cases of one contact, tried before any iteration:
///
/// * separated: when q_N ≥ 0, r = 0 solves the problem (u = q, and
///   û_N = q_N + μ‖q_T‖ ≥ μ‖û_T‖, so û ∈ K*_μ and r·û = 0);
/// * sticking: r = −W⁻¹ q gives u = 0; it solves the problem when r ∈ K_μ.
///   Rounding leaves u = W r + q small but not zero: since P_K(r) = r and
///   P_K is non-expansive, the natural map is ‖r − P_K(r − û)‖ ≤ ‖û‖ ≤
///   (1 + μ)‖u‖, and the case is accepted only when that bound is ≤ `tol`.
///
/// Returns which case set r (r is left alone otherwise). `inv` is W⁻¹
/// ([`invert_block`]; None skips the sticking case).
#[inline]
pub fn closed_form(
    d: usize,
    w: &[[f64; 3]; 3],
    inv: Option<&[[f64; 3]; 3]>,
    q: &[f64; 3],
    mu: f64,
    r: &mut [f64],
    tol: f64,
) -> Option<ClosedForm> {
    if q[0] >= 0.0 {
        r[..d].iter_mut().for_each(|v| *v = 0.0);
        return Some(ClosedForm::Separated);
    }
    let inv = inv?;
    let mut s = [0.0; 3];
    for a in 0..d {
        s[a] = -(0..d).map(|b| inv[a][b] * q[b]).sum::<f64>();
    }
    let t2: f64 = s[1..d].iter().map(|v| v * v).sum();
    if s[0] < 0.0 || t2 > mu * mu * s[0] * s[0] {
        return None;
    }
    let mut u = [0.0; 3];
    contact_velocity(d, w, q, &s[..d], &mut u);
    let u2: f64 = u[..d].iter().map(|v| v * v).sum();
    if (1.0 + mu) * (1.0 + mu) * u2 > tol * tol {
        return None;
    }
    r[..d].copy_from_slice(&s[..d]);
    Some(ClosedForm::Sticking)
}

/// A starting point for the local Newton method on a sliding contact whose
/// previous r is not sliding (r_N ≤ 0 or ‖r_T‖ < μ r_N (1 − 10⁻⁸)): the
/// sliding solution of the block reduced to its diagonal with equal
/// tangential entries, r_N = −q_N / W_NN, r_T = −μ r_N q_T / ‖q_T‖
/// (r_T = 0 when q_T = 0). Exact when W_ii = diag(a, b, b).
#[inline]
pub fn sliding_start(d: usize, w: &[[f64; 3]; 3], q: &[f64; 3], mu: f64, r: &mut [f64]) {
    let nt = tangent_norm(&r[..d]);
    if r[0] > 0.0 && nt >= mu * r[0] * (1.0 - 1e-8) {
        return;
    }
    if w[0][0] <= 0.0 || q[0] >= 0.0 {
        return;
    }
    let rn = -q[0] / w[0][0];
    let qt = tangent_norm(&q[..d]);
    r[0] = rn;
    let k = if qt > 0.0 { -mu * rn / qt } else { 0.0 };
    for a in 1..d {
        r[a] = k * q[a];
    }
}

/// The start of the local Newton method in NSGS. A previous r that is
/// sliding (r_N > 0, ‖r_T‖ ≥ μ r_N (1 − 10⁻⁸)) is moved along its own ray to
/// λ r with
///
/// λ = −q_N / (W_N · r),   W_N the normal row of the block,
///
/// so that u_N = λ W_N·r + q_N = 0 (the normal part of the sliding law) at
/// the start, when q_N < 0 and W_N·r > 0 (λ > 0: λ r stays on the cone's
/// boundary; otherwise r is kept). Any other previous r is replaced by
/// [`sliding_start`]'s point. Why: q̃_i changes between two visits, and at
/// the previous r the new normal velocity is often negative; the
/// Alart–Curnier function there reads the contact as sticking (‖r_T − ρu_T‖
/// ≤ μ(r_N − ρu_N)), and the first Newton step goes to u = 0 far outside the
/// cone. On the shared LMGC PerioBox problem this start takes the Newton
/// steps from 2.25 to 1.5 per call (docs/friction-benchmark.md, pass 4).
/// The start only changes where Newton begins: its stopping test on the
/// natural map certifies the result as before.
#[inline(always)]
pub fn newton_start(d: usize, w: &[[f64; 3]; 3], q: &[f64; 3], mu: f64, r: &mut [f64]) {
    let nt = tangent_norm(&r[..d]);
    if r[0] > 0.0 && nt >= mu * r[0] * (1.0 - 1e-8) {
        let wn: f64 = (0..d).map(|b| w[0][b] * r[b]).sum();
        let lambda = -q[0] / wn;
        if q[0] < 0.0 && wn > 0.0 && lambda.is_finite() {
            r[..d].iter_mut().for_each(|v| *v *= lambda);
        }
        return;
    }
    sliding_start(d, w, q, mu, r);
}

/// The closed-form case that solved a one-contact problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedForm {
    /// q_N ≥ 0: r = 0.
    Separated,
    /// r = −W⁻¹ q ∈ K_μ: u = 0.
    Sticking,
}

/// Nonsmooth Newton on the Alart–Curnier function Φ(r) of one contact:
/// J Δ = −Φ with J = D + E W (see [`alart_curnier`]), then the largest step
/// t ∈ {1, ½, ¼, …} with ½‖Φ(r + tΔ)‖² ≤ (1 − 2σt)·½‖Φ(r)‖² (σ = 10⁻⁴);
/// ρ is the Alart–Curnier parameter ([`rho_of`]).
/// Stops when the natural map is ≤ `tol` (returns true), or when the step is
/// below the rounding of r (true: converged as far as arithmetic allows).
/// Always inlined: NSGS calls it with a literal `d`, so that every loop
/// over the contact's components unrolls.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn newton_ac(
    d: usize,
    w: &[[f64; 3]; 3],
    rho: f64,
    q: &[f64; 3],
    mu: f64,
    r: &mut [f64],
    tol: f64,
    max_iter: usize,
) -> bool {
    let (mut phi, mut dm, mut em) = ([0.0; 3], [[0.0; 3]; 3], [[0.0; 3]; 3]);
    let mut u = [0.0; 3];
    contact_velocity(d, w, q, r, &mut u);
    // Φ and its Jacobian D, E at r, once r fails the stopping test; the
    // line search's trials need Φ alone (an accepted trial that passes the
    // test never needs its Jacobian).
    let (mut trial, mut ut, mut pt) = ([0.0; 3], [0.0; 3], [0.0; 3]);
    for _ in 0..max_iter {
        if contact_natural_map_sq(r, &u[..d], mu).sqrt() <= tol {
            return true;
        }
        alart_curnier(r, &u[..d], mu, rho, &mut phi, &mut dm, &mut em);
        let psi: f64 = phi[..d].iter().map(|v| v * v).sum();
        let mut jac = dm;
        for a in 0..d {
            for k in 0..d {
                for b in 0..d {
                    jac[a][b] += em[a][k] * w[k][b];
                }
            }
        }
        let mut step = [-phi[0], -phi[1], -phi[2]];
        if !solve_cramer(d, &jac, &mut step) {
            return false;
        }
        // A step below rounding of r: converged as far as arithmetic allows.
        let rmax = r[..d].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if step[..d].iter().all(|v| v.abs() <= 1e-15 * rmax) {
            return true;
        }
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..20 {
            for k in 0..d {
                trial[k] = r[k] + t * step[k];
            }
            contact_velocity(d, w, q, &trial[..d], &mut ut);
            alart_curnier_value(&trial[..d], &ut[..d], mu, rho, &mut pt);
            let pt2: f64 = pt[..d].iter().map(|v| v * v).sum();
            if pt2 <= (1.0 - 2e-4 * t) * psi {
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            return false;
        }
        r[..d].copy_from_slice(&trial[..d]);
        u = ut;
    }
    contact_error(d, w, q, mu, r) <= tol
}

/// The projected fixed point r ← P_K(r − ρ (W r + q + μ‖u_T‖ e_N)) with
/// ρ = 1 / ‖W‖_F. Returns whether the natural map reached `tol`.
pub fn projection(
    d: usize,
    w: &[[f64; 3]; 3],
    q: &[f64; 3],
    mu: f64,
    r: &mut [f64],
    tol: f64,
    max_iter: usize,
) -> bool {
    let nw = (0..d)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| w[i][j] * w[i][j])
        .sum::<f64>()
        .sqrt();
    let rho = if nw > 0.0 { 1.0 / nw } else { 1.0 };
    let mut u = [0.0; 3];
    for _ in 0..max_iter {
        contact_velocity(d, w, q, r, &mut u);
        if contact_natural_map_sq(r, &u[..d], mu).sqrt() <= tol {
            return true;
        }
        let ut = tangent_norm(&u[..d]);
        r[0] -= rho * (u[0] + mu * ut);
        for k in 1..d {
            r[k] -= rho * u[k];
        }
        project_on_cone(&mut r[..d], mu);
    }
    contact_error(d, w, q, mu, r) <= tol
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite block with couplings between the
    /// normal and tangential directions.
    const W: [[f64; 3]; 3] = [[2.0, 0.3, -0.2], [0.3, 1.5, 0.1], [-0.2, 0.1, 1.2]];

    fn velocity(w: &[[f64; 3]; 3], q: &[f64; 3], r: &[f64; 3]) -> [f64; 3] {
        let mut u = *q;
        for a in 0..3 {
            for b in 0..3 {
                u[a] += w[a][b] * r[b];
            }
        }
        u
    }

    /// The largest violation of Coulomb's law written out case by case
    /// (independent of the cone module): r ∈ K_μ, û ∈ K*_μ, r·û = 0.
    fn coulomb_violation(w: &[[f64; 3]; 3], q: &[f64; 3], mu: f64, r: &[f64; 3]) -> f64 {
        let u = velocity(w, q, r);
        let rt = (r[1] * r[1] + r[2] * r[2]).sqrt();
        let ut = (u[1] * u[1] + u[2] * u[2]).sqrt();
        let un_hat = u[0] + mu * ut;
        let comp = r[0] * un_hat + r[1] * u[1] + r[2] * u[2];
        (rt - mu * r[0])
            .max(-r[0])
            .max(mu * ut - un_hat)
            .max(comp.abs())
    }

    /// q with the planted solution r (and velocity u) of one contact.
    fn planted(r: [f64; 3], u: [f64; 3]) -> [f64; 3] {
        let wr = velocity(&W, &[0.0; 3], &r);
        [u[0] - wr[0], u[1] - wr[1], u[2] - wr[2]]
    }

    #[test]
    fn cramer_solve_matches_an_lu_solve_and_rejects_singular_systems() {
        // Random systems (entries of mixed signs and scales, as the
        // Alart–Curnier Jacobians D + E W), checked against nalgebra's LU.
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for case in 0..500i32 {
            for d in [2usize, 3] {
                let mut a = [[0.0; 3]; 3];
                for row in a.iter_mut().take(d) {
                    for v in row.iter_mut().take(d) {
                        *v = next() * 10f64.powi(case % 5 - 2);
                    }
                }
                let b = [next(), next(), next()];
                let m = nalgebra::DMatrix::from_fn(d, d, |i, j| a[i][j]);
                let rhs = nalgebra::DVector::from_fn(d, |i, _| b[i]);
                let Some(want) = m.clone().lu().solve(&rhs) else {
                    continue;
                };
                let mut x = b;
                assert!(solve_cramer(d, &a, &mut x), "{case} {d}");
                let norm = want.amax();
                for k in 0..d {
                    // Relative to the solution's size, scaled by a
                    // condition estimate (the LU is not exact either).
                    let cond =
                        m.norm() * m.clone().try_inverse().map_or(f64::INFINITY, |i| i.norm());
                    assert!(
                        (x[k] - want[k]).abs() <= 1e-14 * cond * norm.max(1e-300),
                        "{case} {d} {x:?} {want}"
                    );
                }
            }
        }
        // Singular (rank 2) and non-finite systems are refused.
        let singular = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]];
        assert!(!solve_cramer(3, &singular, &mut [1.0, 1.0, 1.0]));
        let singular2 = [[1.0, 2.0, 0.0], [0.5, 1.0, 0.0], [0.0; 3]];
        assert!(!solve_cramer(2, &singular2, &mut [1.0, 1.0, 0.0]));
        let nan = [[f64::NAN, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(!solve_cramer(3, &nan, &mut [1.0, 1.0, 1.0]));
        // An exact case: W of the module's tests, x = (1, −2, 0.5).
        let x = [1.0, -2.0, 0.5];
        let mut b = [0.0; 3];
        for a in 0..3 {
            b[a] = (0..3).map(|k| W[a][k] * x[k]).sum();
        }
        assert!(solve_cramer(3, &W, &mut b));
        for k in 0..3 {
            assert!((b[k] - x[k]).abs() < 1e-14, "{b:?}");
        }
    }

    #[test]
    fn inverse_block_inverts_and_rejects_singular_blocks() {
        let inv = invert_block(3, &W).unwrap();
        for a in 0..3 {
            for b in 0..3 {
                let p: f64 = (0..3).map(|k| W[a][k] * inv[k][b]).sum();
                assert!((p - if a == b { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        let w2 = [[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0; 3]];
        let inv2 = invert_block(2, &w2).unwrap();
        assert!((inv2[0][0] - 1.0 / 1.75).abs() < 1e-15);
        assert!((inv2[0][1] + 0.5 / 1.75).abs() < 1e-15);
        let singular = [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(invert_block(3, &singular).is_none());
    }

    #[test]
    fn separated_shortcut_applies_exactly_when_q_n_is_nonnegative() {
        let inv = invert_block(3, &W);
        let mu = 0.4;
        // q_N ≥ 0 (q_N = 0 included): r = 0 with u = q, whatever q_T.
        for q in [[0.5, 2.0, -1.0], [0.0, 0.3, 0.3]] {
            let mut r = [1.0, 0.1, 0.2];
            let case = closed_form(3, &W, inv.as_ref(), &q, mu, &mut r, 1e-14);
            assert_eq!(case, Some(ClosedForm::Separated));
            assert_eq!(r, [0.0; 3]);
            assert!(coulomb_violation(&W, &q, mu, &r) <= 0.0);
        }
        // q_N < 0: r = 0 would leave u_N < 0 (interpenetration).
        let q = planted([1.0, 0.1, -0.1], [0.0; 3]);
        let mut r = [0.0; 3];
        let case = closed_form(3, &W, inv.as_ref(), &q, mu, &mut r, 1e-14);
        assert_ne!(case, Some(ClosedForm::Separated));
    }

    #[test]
    fn sticking_shortcut_applies_inside_the_cone_only() {
        let inv = invert_block(3, &W);
        let mu = 0.5;
        // Planted sticking solution: r* strictly inside K_μ, u* = 0.
        let rs = [1.0, 0.2, -0.3];
        let q = planted(rs, [0.0; 3]);
        let mut r = [0.0; 3];
        let case = closed_form(3, &W, inv.as_ref(), &q, mu, &mut r, 1e-13);
        assert_eq!(case, Some(ClosedForm::Sticking));
        for k in 0..3 {
            assert!((r[k] - rs[k]).abs() < 1e-14, "{r:?}");
        }
        assert!(coulomb_violation(&W, &q, mu, &r) < 1e-14);
        assert!(contact_error(3, &W, &q, mu, &r) < 1e-13);
        // Without W⁻¹ (singular block) the case is not tried.
        let mut r = [0.0; 3];
        assert_eq!(closed_form(3, &W, None, &q, mu, &mut r, 1e-13), None);
        // A sticking candidate outside the cone: μ too small for r*.
        let mut r = [0.0; 3];
        assert_eq!(
            closed_form(3, &W, inv.as_ref(), &q, 0.3, &mut r, 1e-13),
            None
        );
        assert_eq!(r, [0.0; 3], "r is left alone when no case applies");
    }

    #[test]
    fn sliding_contact_goes_past_the_shortcuts_to_newton() {
        let inv = invert_block(3, &W);
        let mu = 0.5;
        // Planted sliding solution: ‖r_T‖ = μ r_N, u_N = 0, u_T = −α r_T.
        let rs = [1.2, -0.36, 0.48];
        let alpha = 0.7;
        let q = planted(rs, [0.0, -alpha * rs[1], -alpha * rs[2]]);
        assert!(coulomb_violation(&W, &q, mu, &rs) < 1e-14);
        let mut r = [0.0; 3];
        assert_eq!(
            closed_form(3, &W, inv.as_ref(), &q, mu, &mut r, 1e-13),
            None
        );
        sliding_start(3, &W, &q, mu, &mut r);
        let rho = rho_of(3, &W);
        assert!(newton_ac(3, &W, rho, &q, mu, &mut r, 1e-13, 50));
        for k in 0..3 {
            assert!((r[k] - rs[k]).abs() < 1e-11, "{r:?}");
        }
        assert!(coulomb_violation(&W, &q, mu, &r) < 1e-12);
    }

    #[test]
    fn sliding_start_is_the_solution_of_a_diagonal_isotropic_block() {
        // W = diag(a, b, b): u_N = 0 gives r_N = −q_N/a, and u_T = b r_T + q_T
        // opposite to r_T gives r_T = −μ r_N q_T/‖q_T‖ when b μ r_N < ‖q_T‖.
        let w = [[2.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]];
        let (q, mu) = ([-1.0, 3.0, -4.0], 0.6);
        let mut r = [0.0; 3];
        sliding_start(3, &w, &q, mu, &mut r);
        let expect = [0.5, -0.6 * 0.5 * 0.6, 0.6 * 0.5 * 0.8];
        for k in 0..3 {
            assert!((r[k] - expect[k]).abs() < 1e-15, "{r:?}");
        }
        assert!(coulomb_violation(&w, &q, mu, &r) < 1e-15);
        // A previous r that is already sliding is kept as the start.
        let mut prev = [1.0, 0.6, 0.0];
        sliding_start(3, &w, &q, mu, &mut prev);
        assert_eq!(prev, [1.0, 0.6, 0.0]);
    }

    #[test]
    fn newton_start_on_the_ray_reaches_the_planted_sliding_solution() {
        // Planted sliding solutions r* (‖r_T‖ = μ r_N, u_N = 0, u_T = −α r_T)
        // of blocks with normal–tangential coupling; previous impulses on the
        // cone's boundary near r* (the state of a contact between two NSGS
        // visits). Newton from the new start and from the old one
        // (`sliding_start`, which keeps a sliding r) must both meet the
        // local tolerance and agree with r* — Coulomb's law checked case by
        // case, independently of the cone module.
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let rho = rho_of(3, &W);
        let mut steps = [0usize; 2];
        for case in 0..200 {
            let mu = 0.2 + 0.6 * next();
            let rn = 0.5 + next();
            let angle = std::f64::consts::TAU * next();
            let rs = [rn, mu * rn * angle.cos(), mu * rn * angle.sin()];
            let alpha = 0.05 + next();
            let q = planted(rs, [0.0, -alpha * rs[1], -alpha * rs[2]]);
            assert!(coulomb_violation(&W, &q, mu, &rs) < 1e-13);
            // Previous r: r* scaled and turned a little, on the boundary.
            let (scale, turn) = (0.8 + 0.4 * next(), 0.2 * (next() - 0.5));
            let pn = rn * scale;
            let prev = [
                pn,
                mu * pn * (angle + turn).cos(),
                mu * pn * (angle + turn).sin(),
            ];
            let tol = 1e-12;
            let mut start = prev;
            newton_start(3, &W, &q, mu, &mut start);
            // The start is on the same ray, with u_N = 0.
            let u0 = velocity(&W, &q, &start);
            assert!(u0[0].abs() < 1e-13, "{case}: u_N = {}", u0[0]);
            let ratio = start[0] / prev[0];
            assert!(ratio > 0.0);
            for k in 0..3 {
                assert!((start[k] - ratio * prev[k]).abs() < 1e-14, "{case}");
            }
            let mut r_new = start;
            assert!(newton_ac(3, &W, rho, &q, mu, &mut r_new, tol, 50), "{case}");
            let mut r_old = prev;
            sliding_start(3, &W, &q, mu, &mut r_old);
            assert_eq!(r_old, prev, "sliding_start keeps a sliding r");
            assert!(newton_ac(3, &W, rho, &q, mu, &mut r_old, tol, 50), "{case}");
            for r in [&r_new, &r_old] {
                assert!(contact_error(3, &W, &q, mu, r) <= tol, "{case}");
                assert!(coulomb_violation(&W, &q, mu, r) < 1e-11, "{case} {r:?}");
                for k in 0..3 {
                    assert!((r[k] - rs[k]).abs() < 1e-10, "{case} {r:?} {rs:?}");
                }
            }
            // Newton steps to the tolerance from either start.
            let count = |from: [f64; 3]| {
                (0..50)
                    .find(|&steps| {
                        let mut r = from;
                        newton_ac(3, &W, rho, &q, mu, &mut r, tol, steps)
                    })
                    .unwrap_or(50)
            };
            steps[0] += count(start);
            steps[1] += count(prev);
        }
        // The point of the new start: fewer steps in all.
        assert!(steps[0] < steps[1], "{steps:?}");
        // A previous r that is not sliding gets `sliding_start`'s point.
        let q = planted([1.2, -0.36, 0.48], [0.0, 0.252, -0.336]);
        let (mut a, mut b) = ([0.0; 3], [0.0; 3]);
        newton_start(3, &W, &q, 0.5, &mut a);
        sliding_start(3, &W, &q, 0.5, &mut b);
        assert_eq!(a, b);
        // q_N ≥ 0 or W_N·r ≤ 0: r is kept.
        let prev = [1.0, 0.5, 0.0];
        let mut r = prev;
        newton_start(3, &W, &[0.5, 0.1, 0.1], 0.5, &mut r);
        assert_eq!(r, prev);
        let odd = [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let mut r = prev;
        newton_start(3, &odd, &[-0.5, 0.1, 0.1], 0.5, &mut r);
        assert_eq!(r, prev);
    }

    #[test]
    fn one_contact_closed_forms() {
        // W = I: sticking, sliding and take-off have closed forms.
        let w = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let mu = 0.5;
        // Take-off: q_N > 0 → r = 0.
        let mut r = [0.3, 0.1, 0.0];
        assert!(newton_ac(
            3,
            &w,
            1.0,
            &[1.0, 0.2, 0.0],
            mu,
            &mut r,
            1e-14,
            50
        ));
        assert!(r.iter().all(|v| v.abs() < 1e-14));
        // Sticking: q = (−1, 0.2, 0.1): r = −q inside the cone.
        let mut r = [0.0; 3];
        assert!(newton_ac(
            3,
            &w,
            1.0,
            &[-1.0, 0.2, 0.1],
            mu,
            &mut r,
            1e-14,
            50
        ));
        assert!((r[0] - 1.0).abs() < 1e-13 && (r[1] + 0.2).abs() < 1e-13);
        // Sliding: q = (−1, 2, 0): r_N = 1, r_T = −μ, u_T = 2 − μ.
        let mut r = [0.0; 3];
        assert!(newton_ac(
            3,
            &w,
            1.0,
            &[-1.0, 2.0, 0.0],
            mu,
            &mut r,
            1e-14,
            50
        ));
        assert!((r[0] - 1.0).abs() < 1e-13 && (r[1] + mu).abs() < 1e-13);
        let mut r = [0.0; 3];
        assert!(projection(
            3,
            &w,
            &[-1.0, 2.0, 0.0],
            mu,
            &mut r,
            1e-12,
            10_000
        ));
        assert!((r[0] - 1.0).abs() < 1e-10 && (r[1] + mu).abs() < 1e-10);
    }
}
