//! LU factorisation with partial pivoting on caller-owned buffers.
//!
//! nalgebra's `LU` allocates its permutation on every factorisation; one-step
//! solvers factor small matrices at every time step, so this kernel works in
//! place on a column-major slice and a pivot slice the caller sized once.

/// Factors the n × n column-major matrix `a` in place as P·A = L·U
/// (unit lower L below the diagonal, U on and above). `piv[k]` is the row
/// swapped with row k at step k. Returns `false` when a pivot is smaller than
/// `tiny` times the largest entry magnitude (numerically singular).
pub fn lu_factor(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    debug_assert!(a.len() >= n * n && piv.len() >= n);
    let scale = a[..n * n].iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return n == 0;
    }
    let tiny = scale * 1e-14;
    for k in 0..n {
        let mut p = k;
        let mut best = a[k * n + k].abs();
        for i in k + 1..n {
            let v = a[k * n + i].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv[k] = p;
        if best <= tiny {
            return false;
        }
        if p != k {
            for j in 0..n {
                a.swap(j * n + k, j * n + p);
            }
        }
        let d = a[k * n + k];
        for i in k + 1..n {
            a[k * n + i] /= d;
        }
        for j in k + 1..n {
            let f = a[j * n + k];
            if f != 0.0 {
                for i in k + 1..n {
                    a[j * n + i] -= a[k * n + i] * f;
                }
            }
        }
    }
    true
}

/// Solves A·x = b with the factors from [`lu_factor`]; `b` is overwritten by
/// x: the row swaps, then L y = P b (b_i −= l_ij b_j, j ascending), then
/// U x = y (b_j /= u_jj, then b_i −= u_ij b_j for i < j, j descending),
/// column by column over the column-major factors.
#[inline]
pub fn lu_solve(a: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    if n == 0 {
        return;
    }
    let (a, b) = (&a[..n * n], &mut b[..n]);
    for (k, &p) in piv[..n].iter().enumerate() {
        b.swap(k, p);
    }
    for (j, col) in a.chunks_exact(n).enumerate() {
        let bj = b[j];
        if bj != 0.0 {
            for (bi, &l) in b[j + 1..].iter_mut().zip(&col[j + 1..]) {
                *bi -= l * bj;
            }
        }
    }
    for (j, col) in a.chunks_exact(n).enumerate().rev() {
        b[j] /= col[j];
        let bj = b[j];
        for (bi, &u) in b[..j].iter_mut().zip(&col[..j]) {
            *bi -= u * bj;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_pivoting_system() {
        // A = [[0, 2, 1], [1, 1, 0], [3, 0, 1]] column-major
        let mut a = [0.0, 1.0, 3.0, 2.0, 1.0, 0.0, 1.0, 0.0, 1.0];
        let mut piv = [0; 3];
        assert!(lu_factor(&mut a, 3, &mut piv));
        let x = [1.0, -2.0, 0.5];
        let mut b = [0.0 * 1.0 + 2.0 * -2.0 + 0.5, 1.0 - 2.0, 3.0 + 0.5];
        lu_solve(&a, 3, &piv, &mut b);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-14);
        }
    }

    #[test]
    fn reports_singular() {
        let mut a = [1.0, 2.0, 2.0, 4.0];
        let mut piv = [0; 2];
        assert!(!lu_factor(&mut a, 2, &mut piv));
    }
}
