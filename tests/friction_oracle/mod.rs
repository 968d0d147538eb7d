//! An independent oracle for frictional contact solutions (written apart
//! from the library's code): the natural map through the geometry of the
//! cone (half-angle atan μ), Coulomb's law checked componentwise, and
//! generators of problems with a planted solution.
#![allow(dead_code)]

use nalgebra::DMatrix;

/// Projection on {‖t‖ ≤ μ n} in the plane (n, ‖t‖): inside if the angle to
/// the axis is ≤ θ = atan μ, the origin if it is ≥ π/2 + θ, otherwise the
/// orthogonal projection on the generator (cos θ, sin θ).
pub fn project(x: &[f64], mu: f64) -> Vec<f64> {
    let n = x[0];
    let t: Vec<f64> = x[1..].to_vec();
    let rho = t.iter().map(|v| v * v).sum::<f64>().sqrt();
    let theta = mu.atan();
    let angle = rho.atan2(n); // in [0, π]
    if angle <= theta {
        return x.to_vec();
    }
    if angle >= std::f64::consts::FRAC_PI_2 + theta {
        return vec![0.0; x.len()];
    }
    let (c, s) = (theta.cos(), theta.sin());
    let len = n * c + rho * s;
    let mut out = vec![len * c];
    for v in &t {
        out.push(if rho > 0.0 { len * s * v / rho } else { 0.0 });
    }
    out
}

/// u = W r + q with a dense W.
pub fn velocity(w: &DMatrix<f64>, q: &[f64], r: &[f64]) -> Vec<f64> {
    (0..q.len())
        .map(|i| q[i] + (0..r.len()).map(|j| w[(i, j)] * r[j]).sum::<f64>())
        .collect()
}

/// ‖r − P_K(r − û)‖₂ with û = u + μ‖u_T‖ e_N.
pub fn natural_map(d: usize, mu: &[f64], r: &[f64], u: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &m) in mu.iter().enumerate() {
        let ri = &r[i * d..i * d + d];
        let ui = &u[i * d..i * d + d];
        let ut = ui[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut x: Vec<f64> = (0..d).map(|k| ri[k] - ui[k]).collect();
        x[0] -= m * ut;
        let p = project(&x, m);
        s += (0..d).map(|k| (ri[k] - p[k]).powi(2)).sum::<f64>();
    }
    s.sqrt()
}

/// The Siconos 4.4 normalisation: natural map / max(‖q‖, ‖r‖, ‖u‖), not
/// normalised when that maximum is below the machine epsilon.
pub fn siconos_error(d: usize, w: &DMatrix<f64>, q: &[f64], mu: &[f64], r: &[f64]) -> f64 {
    let u = velocity(w, q, r);
    let n2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let scale = n2(q).max(n2(r)).max(n2(&u));
    let e = natural_map(d, mu, r, &u);
    if scale > f64::EPSILON {
        e / scale
    } else {
        e
    }
}

/// The largest violation of Coulomb's law: r ∈ K, û ∈ K*, r·û = 0,
/// relative to `scale`.
pub fn coulomb_violation(d: usize, mu: &[f64], r: &[f64], u: &[f64], scale: f64) -> f64 {
    let mut worst = 0.0f64;
    for (i, &m) in mu.iter().enumerate() {
        let ri = &r[i * d..i * d + d];
        let ui = &u[i * d..i * d + d];
        let rt = ri[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let ut = ui[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let un_hat = ui[0] + m * ut;
        worst = worst.max(rt - m * ri[0]); // r in K
        worst = worst.max(m * ut - un_hat); // û in K* (μ‖û_T‖ ≤ û_N)
        worst = worst.max(-ri[0]);
        let dot = ri[0] * un_hat + (1..d).map(|k| ri[k] * ui[k]).sum::<f64>();
        worst = worst.max(dot.abs() / scale.max(1e-300));
    }
    worst / scale.max(1e-300)
}

/// The state planted at a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// r = 0, u_N > 0.
    Separated,
    /// u = 0, r strictly inside the cone.
    Sticking,
    /// u_N = 0, u_T ≠ 0, r_T = −μ r_N u_T/‖u_T‖.
    Sliding,
}

/// A tiny deterministic generator (xorshift), so planted problems do not
/// depend on a crate's random streams.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [a, b).
    pub fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.next()
    }
}

/// (W, q, μ, r*, u*).
pub type Planted = (DMatrix<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// A planted problem: W symmetric positive definite (A Aᵀ + I/2, with a
/// sparse contact coupling), states per contact, and q = u − W r built
/// from the planted (r, u). Returns (W, q, μ, r*, u*).
pub fn planted(d: usize, states: &[State], rng: &mut Rng) -> Planted {
    let nc = states.len();
    let n = d * nc;
    let a = DMatrix::from_fn(n, n, |i, j| {
        // Couple contacts i/d and j/d only when they are neighbours.
        if (i / d).abs_diff(j / d) <= 1 {
            rng.range(-1.0, 1.0)
        } else {
            0.0
        }
    });
    let w = &a * a.transpose() + DMatrix::identity(n, n) * 0.5;
    let mu: Vec<f64> = (0..nc).map(|_| rng.range(0.1, 1.0)).collect();
    let mut r = vec![0.0; n];
    let mut u = vec![0.0; n];
    for (i, s) in states.iter().enumerate() {
        let b = i * d;
        let dir: Vec<f64> = if d == 2 {
            vec![if rng.next() < 0.5 { -1.0 } else { 1.0 }]
        } else {
            let a = rng.range(0.0, std::f64::consts::TAU);
            vec![a.cos(), a.sin()]
        };
        match s {
            State::Separated => {
                u[b] = rng.range(0.1, 2.0);
                for k in 1..d {
                    u[b + k] = rng.range(-1.0, 1.0);
                }
            }
            State::Sticking => {
                r[b] = rng.range(0.5, 2.0);
                let frac = rng.range(0.0, 0.8);
                for k in 1..d {
                    r[b + k] = frac * mu[i] * r[b] * dir[k - 1];
                }
            }
            State::Sliding => {
                r[b] = rng.range(0.5, 2.0);
                let speed = rng.range(0.1, 2.0);
                for k in 1..d {
                    u[b + k] = speed * dir[k - 1];
                    r[b + k] = -mu[i] * r[b] * dir[k - 1];
                }
            }
        }
    }
    let wr = velocity(&w, &vec![0.0; n], &r);
    let q: Vec<f64> = (0..n).map(|k| u[k] - wr[k]).collect();
    (w, q, mu, r, u)
}
