//! Natural-map residuals shared by the problem families.
//!
//! For a complementarity pair 0 ≤ z ⊥ w ≥ 0 the natural map is
//! z − max(0, z − w) = min(z, w); for a box [lb, ub] it is z − P₍lb,ub₎(z − w).
//! Both vanish exactly at solutions, and their Euclidean norm is the absolute
//! error every report carries.

/// ‖min(z, w)‖₂ over all components: the LCP natural-map norm.
pub fn lcp_natural_norm(z: &[f64], w: &[f64]) -> f64 {
    z.iter()
        .zip(w)
        .map(|(&a, &b)| {
            let r = a.min(b);
            r * r
        })
        .sum::<f64>()
        .sqrt()
}

/// ‖z − P₍lb,ub₎(z − w)‖₂: the box (relay) natural-map norm.
pub fn box_natural_norm(z: &[f64], w: &[f64], lb: &[f64], ub: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..z.len() {
        let p = (z[i] - w[i]).max(lb[i]).min(ub[i]);
        let r = z[i] - p;
        s += r * r;
    }
    s.sqrt()
}

/// Euclidean norm.
pub fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The Fischer–Burmeister function φ(a, b) = √(a² + b²) − a − b, zero iff
/// a ≥ 0, b ≥ 0, ab = 0. Computed without cancellation for a, b > 0.
#[inline]
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    let r = a.hypot(b);
    if a > 0.0 && b > 0.0 {
        // r − (a + b) = −2ab / (r + a + b)
        -2.0 * a * b / (r + a + b)
    } else {
        r - a - b
    }
}

/// An element (da, db) of the generalised gradient of φ at (a, b).
/// At the kink (0, 0) it returns the element along the direction (1, 1).
#[inline]
pub fn fischer_burmeister_gradient(a: f64, b: f64) -> (f64, f64) {
    let r = a.hypot(b);
    if r > 0.0 {
        (a / r - 1.0, b / r - 1.0)
    } else {
        let s = std::f64::consts::FRAC_1_SQRT_2;
        (s - 1.0, s - 1.0)
    }
}
