//! Small dense helpers shared by the laws: the zero-order-hold matrices,
//! allocation-free products on slices, checks that turn bad parameters into
//! typed errors.

use nalgebra::DMatrix;
use nonsmooth::control::ControlError;
use nonsmooth::numerics::zero_order_hold::{zero_order_hold, ZeroOrderHold};

/// Φ = e^{AT} and Γ = ∫₀ᵀ e^{As} ds (both n × n) of the law's model
/// (the core's [`zero_order_hold`], the discretisation the plants use too),
/// refused when e^{AT} overflows.
pub(crate) fn zoh(
    object: &str,
    a: &DMatrix<f64>,
    period: f64,
) -> Result<(DMatrix<f64>, DMatrix<f64>), ControlError> {
    match zero_order_hold(a, period) {
        Some(ZeroOrderHold { phi, gamma }) => Ok((phi, gamma)),
        None => Err(ControlError::Unsupported {
            object: object.to_string(),
            reason: format!("e^(A T) overflows for the period T = {period}"),
        }),
    }
}

/// out ← M x (no allocation).
pub(crate) fn mul_to(m: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (j, xj) in x.iter().enumerate() {
            acc += m[(i, j)] * xj;
        }
        *o = acc;
    }
}

/// out ← out + M x (no allocation).
pub(crate) fn mul_add(m: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (j, xj) in x.iter().enumerate() {
            acc += m[(i, j)] * xj;
        }
        *o += acc;
    }
}

/// The sign with sign(0) = 0.
pub(crate) fn sign0(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

pub(crate) fn dim_err(
    object: &str,
    what: &'static str,
    got: String,
    expected: String,
) -> ControlError {
    ControlError::Dimension {
        object: object.to_string(),
        what,
        got,
        expected,
    }
}

pub(crate) fn invalid(object: &str, what: &str, value: f64, reason: &str) -> ControlError {
    ControlError::InvalidValue {
        object: object.to_string(),
        what: what.to_string(),
        value,
        reason: reason.to_string(),
    }
}

pub(crate) fn unsupported(object: &str, reason: String) -> ControlError {
    ControlError::Unsupported {
        object: object.to_string(),
        reason,
    }
}

/// A small matrix by rows, e.g. `[[1, 0], [0, 2]]`.
pub(crate) fn show(m: &DMatrix<f64>) -> String {
    let rows: Vec<String> = m
        .row_iter()
        .map(|r| {
            let v: Vec<String> = r.iter().map(|x| format!("{x}")).collect();
            format!("[{}]", v.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

pub(crate) fn shape(m: &DMatrix<f64>) -> String {
    format!("{}×{}", m.nrows(), m.ncols())
}

/// Every entry finite.
pub(crate) fn check_finite(object: &str, what: &str, v: &[f64]) -> Result<(), ControlError> {
    match v.iter().find(|x| !x.is_finite()) {
        None => Ok(()),
        Some(x) => Err(invalid(object, what, *x, "must be finite")),
    }
}

/// Every entry finite and > 0.
pub(crate) fn check_positive(object: &str, what: &str, v: &[f64]) -> Result<(), ControlError> {
    check_finite(object, what, v)?;
    match v.iter().find(|x| **x <= 0.0) {
        None => Ok(()),
        Some(x) => Err(invalid(object, what, *x, "must be > 0")),
    }
}

/// A per-channel value: one number for every channel, or one per channel.
pub(crate) fn per_channel(
    object: &str,
    what: &'static str,
    v: &[f64],
    n: usize,
) -> Result<Vec<f64>, ControlError> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        k if k == n => Ok(v.to_vec()),
        k => Err(dim_err(
            object,
            what,
            k.to_string(),
            format!("1 or {n} (one value per channel)"),
        )),
    }
}

/// The inverse of a square matrix, refused when its condition number
/// exceeds 10¹² (singular values by SVD).
pub(crate) fn inverse(
    object: &str,
    what: &str,
    m: &DMatrix<f64>,
) -> Result<DMatrix<f64>, ControlError> {
    let sv = m.clone().svd(false, false).singular_values;
    let max = sv.max();
    let min = sv.min();
    if !(max > 0.0 && min > 1e-12 * max) {
        return Err(unsupported(
            object,
            format!(
                "{what} is singular (singular values from {min:e} to {max:e}); \
                 the law needs it invertible"
            ),
        ));
    }
    m.clone()
        .try_inverse()
        .ok_or_else(|| unsupported(object, format!("{what} is singular")))
}

/// True when every principal minor of the square matrix m is > 0 (a
/// P-matrix: the relay problem w = M z + q, z ∈ −Sgn(w) then has exactly one
/// solution for every q). Sizes above 16 are checked through the symmetric
/// part (positive definite ⇒ P-matrix).
pub(crate) fn is_p_matrix(m: &DMatrix<f64>) -> bool {
    let n = m.nrows();
    if n > 16 {
        let s = (m + m.transpose()) * 0.5;
        return s.cholesky().is_some();
    }
    for mask in 1u32..(1u32 << n) {
        let idx: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let sub = DMatrix::from_fn(idx.len(), idx.len(), |i, j| m[(idx[i], idx[j])]);
        if sub.determinant() <= 0.0 {
            return false;
        }
    }
    true
}

/// The spectral radius of a square matrix.
pub(crate) fn spectral_radius(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 {
        return 0.0;
    }
    m.complex_eigenvalues()
        .iter()
        .map(|z| z.norm())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::dmatrix;

    #[test]
    fn zoh_of_the_double_integrator_is_exact() {
        let (phi, gamma) = zoh("t", &dmatrix![0.0, 1.0; 0.0, 0.0], 0.1).unwrap();
        assert!((phi - dmatrix![1.0, 0.1; 0.0, 1.0]).abs().max() < 1e-15);
        assert!((gamma - dmatrix![0.1, 0.005; 0.0, 0.1]).abs().max() < 1e-15);
    }

    #[test]
    fn p_matrices() {
        assert!(is_p_matrix(&dmatrix![2.0, 1.0; -3.0, 1.0]));
        assert!(!is_p_matrix(&dmatrix![-1.0]));
        assert!(!is_p_matrix(&dmatrix![1.0, 2.0; 2.0, 1.0]));
    }
}
