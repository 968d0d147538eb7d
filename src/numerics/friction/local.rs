//! One-contact problems: u = W r + q with a d × d block W, Coulomb's law on
//! (r, u). The local solvers of NSGS: a nonsmooth Newton method on the
//! Alart–Curnier function with a backtracking line search, and the projected
//! fixed point r ← P_K(r − ρ û). Allocation-free (stack arrays only).

use super::cone::{alart_curnier, contact_natural_map_sq, project_on_cone, tangent_norm};

/// u ← W r + q for one contact.
#[inline]
pub fn contact_velocity(d: usize, w: &[[f64; 3]; 3], q: &[f64; 3], r: &[f64], u: &mut [f64; 3]) {
    for a in 0..d {
        u[a] = q[a] + (0..d).map(|b| w[a][b] * r[b]).sum::<f64>();
    }
}

/// Solves the d × d system A x = b (Gaussian elimination with partial
/// pivoting); `b` receives x. False when A is numerically singular.
#[inline]
pub fn solve_small(d: usize, a: &mut [[f64; 3]; 3], b: &mut [f64; 3]) -> bool {
    let scale = (0..d)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .fold(0.0f64, |m, (i, j)| m.max(a[i][j].abs()));
    if scale == 0.0 || !scale.is_finite() {
        return false;
    }
    for k in 0..d {
        let p = (k..d)
            .max_by(|&x, &y| a[x][k].abs().total_cmp(&a[y][k].abs()))
            .unwrap_or(k);
        if a[p][k].abs() <= 1e-14 * scale {
            return false;
        }
        a.swap(k, p);
        b.swap(k, p);
        for i in k + 1..d {
            let f = a[i][k] / a[k][k];
            for j in k..d {
                a[i][j] -= f * a[k][j];
            }
            b[i] -= f * b[k];
        }
    }
    for k in (0..d).rev() {
        let s: f64 = (k + 1..d).map(|j| a[k][j] * b[j]).sum();
        b[k] = (b[k] - s) / a[k][k];
    }
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

/// Nonsmooth Newton on the Alart–Curnier function Φ(r) of one contact:
/// J Δ = −Φ with J = D + E W (see [`alart_curnier`]), then the largest step
/// t ∈ {1, ½, ¼, …} with ½‖Φ(r + tΔ)‖² ≤ (1 − 2σt)·½‖Φ(r)‖² (σ = 10⁻⁴).
/// Stops when the natural map is ≤ `tol` (returns true), or when the step is
/// below the rounding of r (true: converged as far as arithmetic allows).
#[inline]
pub fn newton_ac(
    d: usize,
    w: &[[f64; 3]; 3],
    q: &[f64; 3],
    mu: f64,
    r: &mut [f64],
    tol: f64,
    max_iter: usize,
) -> bool {
    let rho = rho_of(d, w);
    let (mut phi, mut dm, mut em) = ([0.0; 3], [[0.0; 3]; 3], [[0.0; 3]; 3]);
    let mut u = [0.0; 3];
    contact_velocity(d, w, q, r, &mut u);
    // Φ, D, E at r: computed lazily at the first iteration, then carried
    // over from the accepted line-search trial (the same figures).
    let mut have_phi = false;
    let (mut trial, mut ut) = ([0.0; 3], [0.0; 3]);
    let (mut pt, mut d2, mut e2) = ([0.0; 3], [[0.0; 3]; 3], [[0.0; 3]; 3]);
    for _ in 0..max_iter {
        if contact_natural_map_sq(r, &u[..d], mu).sqrt() <= tol {
            return true;
        }
        if !have_phi {
            alart_curnier(r, &u[..d], mu, rho, &mut phi, &mut dm, &mut em);
            have_phi = true;
        }
        let psi: f64 = phi[..d].iter().map(|v| v * v).sum();
        let mut jac = [[0.0; 3]; 3];
        for a in 0..d {
            for b in 0..d {
                jac[a][b] = dm[a][b] + (0..d).map(|k| em[a][k] * w[k][b]).sum::<f64>();
            }
        }
        let mut step = [-phi[0], -phi[1], -phi[2]];
        if !solve_small(d, &mut jac, &mut step) {
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
            alart_curnier(&trial[..d], &ut[..d], mu, rho, &mut pt, &mut d2, &mut e2);
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
        (u, phi, dm, em) = (ut, pt, d2, e2);
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

    #[test]
    fn one_contact_closed_forms() {
        // W = I: sticking, sliding and take-off have closed forms.
        let w = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let mu = 0.5;
        // Take-off: q_N > 0 → r = 0.
        let mut r = [0.3, 0.1, 0.0];
        assert!(newton_ac(3, &w, &[1.0, 0.2, 0.0], mu, &mut r, 1e-14, 50));
        assert!(r.iter().all(|v| v.abs() < 1e-14));
        // Sticking: q = (−1, 0.2, 0.1): r = −q inside the cone.
        let mut r = [0.0; 3];
        assert!(newton_ac(3, &w, &[-1.0, 0.2, 0.1], mu, &mut r, 1e-14, 50));
        assert!((r[0] - 1.0).abs() < 1e-13 && (r[1] + 0.2).abs() < 1e-13);
        // Sliding: q = (−1, 2, 0): r_N = 1, r_T = −μ, u_T = 2 − μ.
        let mut r = [0.0; 3];
        assert!(newton_ac(3, &w, &[-1.0, 2.0, 0.0], mu, &mut r, 1e-14, 50));
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
