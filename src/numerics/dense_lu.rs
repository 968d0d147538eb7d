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

/// Solves A·x = b with the factors from [`lu_factor`]; `b` is overwritten by x.
/// Sizes 1 to 4 run the same operations in the same order with the size
/// known at compile time (unrolled, no bounds checks inside), so the result
/// is the same to the last bit.
pub fn lu_solve(a: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    match n {
        1 => lu_solve_n::<1>(a, piv, b),
        2 => lu_solve_n::<2>(a, piv, b),
        3 => lu_solve_n::<3>(a, piv, b),
        4 => lu_solve_n::<4>(a, piv, b),
        _ => lu_solve_any(a, n, piv, b),
    }
}

#[inline(always)]
fn lu_solve_n<const N: usize>(a: &[f64], piv: &[usize], b: &mut [f64]) {
    let (a, piv, b) = (&a[..N * N], &piv[..N], &mut b[..N]);
    for k in 0..N {
        b.swap(k, piv[k]);
    }
    for j in 0..N {
        let bj = b[j];
        if bj != 0.0 {
            for i in j + 1..N {
                b[i] -= a[j * N + i] * bj;
            }
        }
    }
    for j in (0..N).rev() {
        b[j] /= a[j * N + j];
        let bj = b[j];
        for i in 0..j {
            b[i] -= a[j * N + i] * bj;
        }
    }
}

fn lu_solve_any(a: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for j in 0..n {
        let bj = b[j];
        if bj != 0.0 {
            for i in j + 1..n {
                b[i] -= a[j * n + i] * bj;
            }
        }
    }
    for j in (0..n).rev() {
        b[j] /= a[j * n + j];
        let bj = b[j];
        for i in 0..j {
            b[i] -= a[j * n + i] * bj;
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

    #[test]
    fn the_unrolled_sizes_equal_the_plain_loops_to_the_bit() {
        for n in 1..=6 {
            // Off-diagonal pseudo-random entries, a diagonal small enough
            // that rows get swapped.
            let mut a: Vec<f64> = (0..n * n)
                .map(|k| ((k * 7919 % 97) as f64 - 48.3) / 7.1)
                .collect();
            for k in 0..n {
                a[k * n + k] = 0.01 * (k as f64 + 1.0);
            }
            let mut piv = vec![0; n];
            assert!(lu_factor(&mut a, n, &mut piv), "n = {n}");
            let b0: Vec<f64> = (0..n).map(|k| (k as f64 * 1.37 - 2.2).sin()).collect();
            let mut fast = b0.clone();
            lu_solve(&a, n, &piv, &mut fast);
            let mut plain = b0.clone();
            lu_solve_any(&a, n, &piv, &mut plain);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&plain), "n = {n}");
        }
    }
}
