//! The Coulomb cone of one contact, the natural map and the Alart–Curnier
//! function, for contacts of dimension d ∈ {2, 3} stored [N, T1(, T2)].

/// Projects x = (x_N, x_T) on K_μ = {‖x_T‖ ≤ μ x_N} in place:
/// x itself inside K_μ; 0 inside the polar cone {μ‖x_T‖ ≤ −x_N};
/// otherwise s·(1, μ x_T/‖x_T‖) with s = (x_N + μ‖x_T‖)/(1 + μ²).
#[inline]
pub fn project_on_cone(x: &mut [f64], mu: f64) {
    let n = x[0];
    let nt = tangent_norm(x);
    // n ≥ 0 matters for μ = 0 only (K_0 = {x_T = 0, x_N ≥ 0}): there
    // nt ≤ μ n holds for x = (n < 0, 0), which is outside the cone.
    if nt <= mu * n && n >= 0.0 {
        return;
    }
    if mu * nt <= -n {
        x.iter_mut().for_each(|v| *v = 0.0);
        return;
    }
    let s = (n + mu * nt) / (1.0 + mu * mu);
    x[0] = s;
    let k = mu * s / nt;
    x[1..].iter_mut().for_each(|v| *v *= k);
}

/// ‖x_T‖ of one contact, as √(x_T1² + x_T2²): `hypot`'s guard against
/// overflow (beyond 10¹⁵⁴) costs a quarter of an NSGS sweep and is not
/// needed for impulses and velocities.
#[inline]
pub fn tangent_norm(x: &[f64]) -> f64 {
    if x.len() == 2 {
        x[1].abs()
    } else {
        (x[1] * x[1] + x[2] * x[2]).sqrt()
    }
}

/// The squared natural map ‖r − P_K(r − û)‖² of one contact, with
/// û = u + μ‖u_T‖ e_N.
#[inline(always)]
pub fn contact_natural_map_sq(r: &[f64], u: &[f64], mu: f64) -> f64 {
    let d = r.len();
    let mut x = [0.0; 3];
    let ut = tangent_norm(u);
    x[0] = r[0] - u[0] - mu * ut;
    for k in 1..d {
        x[k] = r[k] - u[k];
    }
    project_on_cone(&mut x[..d], mu);
    (0..d).map(|k| (r[k] - x[k]) * (r[k] - x[k])).sum()
}

/// ‖r − P_K(r − û)‖₂ over all contacts.
pub fn natural_map_norm(dim: usize, r: &[f64], u: &[f64], mu: &[f64]) -> f64 {
    mu.iter()
        .enumerate()
        .map(|(i, &m)| {
            let s = i * dim..(i + 1) * dim;
            contact_natural_map_sq(&r[s.clone()], &u[s], m)
        })
        .sum::<f64>()
        .sqrt()
}

/// The tangential part shared by [`alart_curnier`] and
/// [`alart_curnier_value`]: the disk's radius R = μ max(0, a) with
/// a = r_N − ρ u_N, the argument b = r_T − ρ u_T of the projection on it
/// (in b[1..d]) and ‖b‖.
#[inline(always)]
fn tangent_argument(r: &[f64], u: &[f64], mu: f64, rho: f64, a: f64) -> (f64, [f64; 3], f64) {
    let d = r.len();
    let radius = mu * a.max(0.0);
    let mut b = [0.0; 3];
    for k in 1..d {
        b[k] = r[k] - rho * u[k];
    }
    (radius, b, tangent_norm(&b[..d]))
}

/// The Alart–Curnier function of one contact (Jean–Moreau variant) and an
/// element of its generalised Jacobian:
///
/// Φ_N = r_N − max(0, r_N − ρ u_N),
/// Φ_T = r_T − P_{D(μ max(0, r_N − ρ u_N))}(r_T − ρ u_T),
///
/// with D(R) the disk of radius R. Φ = 0 exactly when (r, u) satisfies
/// Coulomb's law. dΦ = D·dr + E·du: `dm` and `em` receive D and E
/// (row-major, d × d in the top-left corner).
#[inline(always)]
pub fn alart_curnier(
    r: &[f64],
    u: &[f64],
    mu: f64,
    rho: f64,
    phi: &mut [f64; 3],
    dm: &mut [[f64; 3]; 3],
    em: &mut [[f64; 3]; 3],
) {
    let d = r.len();
    *dm = [[0.0; 3]; 3];
    *em = [[0.0; 3]; 3];
    let a = r[0] - rho * u[0];
    if a > 0.0 {
        phi[0] = rho * u[0];
        em[0][0] = rho;
    } else {
        phi[0] = r[0];
        dm[0][0] = 1.0;
    }
    let (radius, b, nb) = tangent_argument(r, u, mu, rho, a);
    if nb <= radius {
        for k in 1..d {
            phi[k] = rho * u[k];
            em[k][k] = rho;
        }
    } else if radius > 0.0 {
        // P = R b/‖b‖; dP = G (dr_T − ρ du_T) + b̂ dR, G = (R/‖b‖)(I − b̂ b̂ᵀ),
        // dR = μ (dr_N − ρ du_N) (a > 0 here).
        let c = radius / nb;
        for j in 1..d {
            let bj = b[j] / nb;
            phi[j] = r[j] - radius * bj;
            for k in 1..d {
                let bk = b[k] / nb;
                let g = c * (if j == k { 1.0 } else { 0.0 } - bj * bk);
                dm[j][k] = if j == k { 1.0 } else { 0.0 } - g;
                em[j][k] = rho * g;
            }
            dm[j][0] = -mu * bj;
            em[j][0] = rho * mu * bj;
        }
    } else {
        for k in 1..d {
            phi[k] = r[k];
            dm[k][k] = 1.0;
        }
    }
}

/// The Alart–Curnier function Φ alone (see [`alart_curnier`], whose Φ it
/// equals bit for bit), for the line search's trial points: its Jacobian
/// is needed only at an accepted point that is not yet converged.
#[inline(always)]
pub fn alart_curnier_value(r: &[f64], u: &[f64], mu: f64, rho: f64, phi: &mut [f64; 3]) {
    let d = r.len();
    let a = r[0] - rho * u[0];
    phi[0] = if a > 0.0 { rho * u[0] } else { r[0] };
    let (radius, b, nb) = tangent_argument(r, u, mu, rho, a);
    if nb <= radius {
        for k in 1..d {
            phi[k] = rho * u[k];
        }
    } else if radius > 0.0 {
        for k in 1..d {
            phi[k] = r[k] - radius * (b[k] / nb);
        }
    } else {
        phi[1..d].copy_from_slice(&r[1..d]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_is_idempotent_and_in_the_cone() {
        let cases: [[f64; 3]; 5] = [
            [1.0, 0.1, 0.2],
            [-1.0, 0.1, 0.0],
            [0.5, 3.0, -4.0],
            [-0.2, 1.0, 1.0],
            [0.0, 0.0, 0.0],
        ];
        for mu in [0.0, 0.3, 1.0, 2.5] {
            for c in cases {
                let mut x = c;
                project_on_cone(&mut x, mu);
                assert!(tangent_norm(&x) <= mu * x[0] + 1e-14, "{c:?} {mu}");
                let mut y = x;
                project_on_cone(&mut y, mu);
                for k in 0..3 {
                    assert!((x[k] - y[k]).abs() < 1e-14);
                }
                // x − P(x) is in the polar cone and orthogonal to P(x).
                let e: Vec<f64> = (0..3).map(|k| c[k] - x[k]).collect();
                let dot: f64 = (0..3).map(|k| e[k] * x[k]).sum();
                assert!(dot.abs() < 1e-12, "{c:?} {mu}");
                assert!(mu * tangent_norm(&e) <= -e[0] + 1e-12, "{c:?} {mu}");
            }
        }
    }

    #[test]
    fn alart_curnier_jacobian_matches_finite_differences() {
        let r = [1.0, 0.4, -0.7];
        let u = [0.2, 0.5, 0.1];
        let (mu, rho) = (0.6, 0.8);
        let (mut phi, mut dm, mut em) = ([0.0; 3], [[0.0; 3]; 3], [[0.0; 3]; 3]);
        alart_curnier(&r, &u, mu, rho, &mut phi, &mut dm, &mut em);
        let h = 1e-7;
        for k in 0..3 {
            let mut rp = r;
            rp[k] += h;
            let mut up = u;
            up[k] += h;
            let (mut p1, mut p2) = ([0.0; 3], [0.0; 3]);
            let (mut d1, mut e1) = ([[0.0; 3]; 3], [[0.0; 3]; 3]);
            alart_curnier(&rp, &u, mu, rho, &mut p1, &mut d1, &mut e1);
            alart_curnier(&r, &up, mu, rho, &mut p2, &mut d1, &mut e1);
            for j in 0..3 {
                assert!(((p1[j] - phi[j]) / h - dm[j][k]).abs() < 1e-5);
                assert!(((p2[j] - phi[j]) / h - em[j][k]).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn alart_curnier_value_is_the_full_functions_phi_bit_for_bit() {
        // Points in each branch: normal active/inactive, tangent inside the
        // disk, on its boundary (sliding), and radius zero; d = 2 and 3.
        let mut seed = 0x853c49e6748fea9bu64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
        };
        let mut seen = [0usize; 3];
        for _ in 0..2000 {
            for d in [2, 3] {
                let r: Vec<f64> = (0..d).map(|_| next()).collect();
                let u: Vec<f64> = (0..d).map(|_| next()).collect();
                let (mu, rho) = ((next() + 2.0) / 4.0, (next() + 2.1) / 2.0);
                let (mut phi, mut dm, mut em) = ([0.0; 3], [[0.0; 3]; 3], [[0.0; 3]; 3]);
                alart_curnier(&r, &u, mu, rho, &mut phi, &mut dm, &mut em);
                let mut value = [0.0; 3];
                alart_curnier_value(&r, &u, mu, rho, &mut value);
                for k in 0..d {
                    assert_eq!(value[k].to_bits(), phi[k].to_bits(), "{r:?} {u:?}");
                }
                let a = r[0] - rho * u[0];
                let b: Vec<f64> = (1..d).map(|k| r[k] - rho * u[k]).collect();
                let nb = b.iter().map(|v| v * v).sum::<f64>().sqrt();
                let radius = mu * a.max(0.0);
                seen[if nb <= radius {
                    0
                } else if radius > 0.0 {
                    1
                } else {
                    2
                }] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    }
}
