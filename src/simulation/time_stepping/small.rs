//! Dense kernels on the small vectors and matrices of one system, with
//! sizes 1 to 4 unrolled at compile time (most systems of the examples
//! have one to four unknowns, where loop and bounds-check overhead would
//! cost more than the arithmetic).
//!
//! Each kernel performs the operations of the plain loop it replaces, in the
//! same order, so results are identical to the last bit.

/// The largest size the kernels unroll.
pub(crate) const MAX: usize = 4;

/// dst ← src (same length): element moves for sizes up to [`MAX`], a
/// memory copy beyond.
#[inline(always)]
pub(crate) fn copy(dst: &mut [f64], src: &[f64]) {
    match (dst, src) {
        ([], []) => {}
        ([d0], [s0]) => *d0 = *s0,
        ([d0, d1], [s0, s1]) => (*d0, *d1) = (*s0, *s1),
        ([d0, d1, d2], [s0, s1, s2]) => (*d0, *d1, *d2) = (*s0, *s1, *s2),
        ([d0, d1, d2, d3], [s0, s1, s2, s3]) => (*d0, *d1, *d2, *d3) = (*s0, *s1, *s2, *s3),
        (dst, src) => dst.copy_from_slice(src),
    }
}

/// v ← 0: element stores for sizes up to [`MAX`], a memory fill beyond.
#[inline(always)]
pub(crate) fn zero(v: &mut [f64]) {
    match v {
        [] => {}
        [a] => *a = 0.0,
        [a, b] => (*a, *b) = (0.0, 0.0),
        [a, b, c] => (*a, *b, *c) = (0.0, 0.0, 0.0),
        [a, b, c, d] => (*a, *b, *c, *d) = (0.0, 0.0, 0.0, 0.0),
        v => v.fill(0.0),
    }
}

/// Moreau–Jean's position update q = q₀ + h((1−θ) v₀ + θ v) with
/// a = 1 − θ, unrolled for sizes up to [`MAX`]. Returns whether v and q are
/// finite.
#[inline(always)]
pub(crate) fn position_update(
    q: &mut [f64],
    q0: &[f64],
    v0: &[f64],
    v: &[f64],
    h: f64,
    a: f64,
    theta: f64,
) -> bool {
    match q.len() {
        1 => position_update_n::<1>(q, q0, v0, v, h, a, theta),
        2 => position_update_n::<2>(q, q0, v0, v, h, a, theta),
        3 => position_update_n::<3>(q, q0, v0, v, h, a, theta),
        4 => position_update_n::<4>(q, q0, v0, v, h, a, theta),
        _ => {
            let mut finite = true;
            for (((q, &q0), &v0), &v) in q.iter_mut().zip(q0).zip(v0).zip(v) {
                *q = q0 + h * (a * v0 + theta * v);
                finite &= v.is_finite() & q.is_finite();
            }
            finite
        }
    }
}

#[inline(always)]
fn position_update_n<const N: usize>(
    q: &mut [f64],
    q0: &[f64],
    v0: &[f64],
    v: &[f64],
    h: f64,
    a: f64,
    theta: f64,
) -> bool {
    let (q, q0, v0, v) = (&mut q[..N], &q0[..N], &v0[..N], &v[..N]);
    let mut finite = true;
    for i in 0..N {
        q[i] = q0[i] + h * (a * v0[i] + theta * v[i]);
        finite &= v[i].is_finite() & q[i].is_finite();
    }
    finite
}

/// y ← x + d (same lengths), unrolled for sizes up to [`MAX`].
#[inline(always)]
pub(crate) fn sum_into(y: &mut [f64], x: &[f64], d: &[f64]) {
    match (y, x, d) {
        ([y0], [x0], [d0]) => *y0 = x0 + d0,
        ([y0, y1], [x0, x1], [d0, d1]) => (*y0, *y1) = (x0 + d0, x1 + d1),
        ([y0, y1, y2], [x0, x1, x2], [d0, d1, d2]) => (*y0, *y1, *y2) = (x0 + d0, x1 + d1, x2 + d2),
        (y, x, d) => {
            for ((y, &x), &d) in y.iter_mut().zip(x).zip(d) {
                *y = x + d;
            }
        }
    }
}

/// y ← A x for A n × n column-major, n = x.len(): y_i = (…((0 + a_i0 x_0) +
/// a_i1 x_1) + …) + a_i,n−1 x_n−1, the sums of `s = 0; s += a_ij x_j` over
/// j ascending.
#[inline(always)]
pub(crate) fn matvec(a: &[f64], x: &[f64], y: &mut [f64]) {
    match x.len() {
        1 => matvec_n::<1>(a, x, y),
        2 => matvec_n::<2>(a, x, y),
        3 => matvec_n::<3>(a, x, y),
        4 => matvec_n::<4>(a, x, y),
        n => {
            let y = &mut y[..n];
            y.fill(0.0);
            for (col, &xj) in a[..n * n].chunks_exact(n).zip(x) {
                for (yi, &aij) in y.iter_mut().zip(col) {
                    *yi += aij * xj;
                }
            }
        }
    }
}

#[inline(always)]
fn matvec_n<const N: usize>(a: &[f64], x: &[f64], y: &mut [f64]) {
    let (a, x) = (&a[..N * N], &x[..N]);
    let mut s = [0.0; N];
    for j in 0..N {
        for i in 0..N {
            s[i] += a[j * N + i] * x[j];
        }
    }
    y[..N].copy_from_slice(&s);
}

/// y ← y + A x (A as in [`matvec`]): each y_i + (the sum of [`matvec`]).
#[inline(always)]
pub(crate) fn matvec_add(a: &[f64], x: &[f64], y: &mut [f64]) {
    match x.len() {
        1 => matvec_add_n::<1>(a, x, y),
        2 => matvec_add_n::<2>(a, x, y),
        3 => matvec_add_n::<3>(a, x, y),
        4 => matvec_add_n::<4>(a, x, y),
        n => {
            for (i, yi) in y[..n].iter_mut().enumerate() {
                let mut s = 0.0;
                for j in 0..n {
                    s += a[j * n + i] * x[j];
                }
                *yi += s;
            }
        }
    }
}

#[inline(always)]
fn matvec_add_n<const N: usize>(a: &[f64], x: &[f64], y: &mut [f64]) {
    let (a, x) = (&a[..N * N], &x[..N]);
    let mut s = [0.0; N];
    for j in 0..N {
        for i in 0..N {
            s[i] += a[j * N + i] * x[j];
        }
    }
    for (yi, si) in y[..N].iter_mut().zip(s) {
        *yi += si;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies() {
        for n in 0..7 {
            let src: Vec<f64> = (0..n).map(|k| k as f64 + 0.5).collect();
            let mut dst = vec![0.0; n];
            copy(&mut dst, &src);
            assert_eq!(dst, src);
            zero(&mut dst);
            assert!(dst.iter().all(|&x| x == 0.0));
            let d: Vec<f64> = src.iter().map(|x| x * 0.25 - 1.0).collect();
            sum_into(&mut dst, &src, &d);
            assert!(dst.iter().zip(&src).zip(&d).all(|((y, x), d)| *y == x + d));
            let (h, theta) = (1e-3, 0.5);
            let mut q = vec![0.0; n];
            let finite = position_update(&mut q, &src, &d, &dst, h, 1.0 - theta, theta);
            assert!(finite);
            for i in 0..n {
                assert_eq!(q[i], src[i] + h * ((1.0 - theta) * d[i] + theta * dst[i]));
            }
        }
    }

    #[test]
    fn kernels_equal_the_plain_loops_to_the_bit() {
        for n in 1..=6 {
            let a: Vec<f64> = (0..n * n)
                .map(|k| ((k * 7919 % 97) as f64 - 48.3) / 7.1)
                .collect();
            let x: Vec<f64> = (0..n).map(|k| (k as f64 * 1.37 - 2.2).sin()).collect();
            let mut plain = vec![0.0; n];
            for (i, p) in plain.iter_mut().enumerate() {
                let mut s = 0.0;
                for j in 0..n {
                    s += a[j * n + i] * x[j];
                }
                *p = s;
            }
            let mut y = vec![f64::NAN; n];
            matvec(&a, &x, &mut y);
            assert_eq!(y, plain, "matvec n = {n}");
            let y0: Vec<f64> = (0..n).map(|k| 0.1 * k as f64 - 0.3).collect();
            let mut y = y0.clone();
            matvec_add(&a, &x, &mut y);
            let expected: Vec<f64> = y0.iter().zip(&plain).map(|(a, b)| a + b).collect();
            assert_eq!(y, expected, "matvec_add n = {n}");
        }
    }
}
