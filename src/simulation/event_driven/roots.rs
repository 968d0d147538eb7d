//! Location of a guard's root inside an accepted step, on the dense output.
//!
//! Given g(a) > 0 ≥ g(b), Newton steps from the last point when the guard's
//! derivative is known and the step stays inside the bracket, else the
//! Illinois variant of regula falsi (the retained end's value is halved
//! when the same end is kept twice, which makes the convergence
//! superlinear; bisection after 40 iterations as a safeguard), narrows [a, b] until b − a ≤ `tolerance`, or
//! to two units in the last place of t when `tolerance` is smaller.
//! The event time is b, where the guard is already ≤ 0: the state at the
//! event has crossed, so the event is classified by the state itself.

/// Locates the crossing of `g` in [a, b] with g(a) = ga > 0 ≥ g(b) = gb.
/// Returns (b, iterations). Errors of `g` are passed through.
pub(crate) fn locate<E>(
    mut g: impl FnMut(f64) -> Result<(f64, Option<f64>), E>,
    mut a: f64,
    mut ga: f64,
    mut b: f64,
    mut gb: f64,
    tolerance: f64,
) -> Result<(f64, u32), E> {
    debug_assert!(ga > 0.0 && gb <= 0.0 && a < b);
    let mut iterations = 0;
    // Which end was kept last (−1: a, +1: b, 0: none).
    let mut kept = 0i8;
    // The last point evaluated, its value and derivative (Newton).
    let mut last: Option<(f64, f64, f64)> = None;
    while iterations < 200 {
        // Two ulps of t, or the tolerance.
        let tiny = tolerance.max(2.0 * f64::EPSILON * a.abs().max(b.abs()));
        if b - a <= tiny || gb == 0.0 {
            break;
        }
        let mid = a + 0.5 * (b - a);
        // Regula falsi (bisection as a safeguard after many iterations),
        // kept at least half the resolution away from the ends, so that an
        // estimate that is already right closes the bracket next time.
        let newton = last.and_then(|(x, gx, dg)| {
            let c = x - gx / dg;
            (dg != 0.0 && c > a && c < b).then_some(c)
        });
        let mut c = match newton {
            _ if iterations >= 40 => mid,
            Some(c) => c,
            None => b - gb * (b - a) / (gb - ga),
        };
        if !c.is_finite() {
            c = mid;
        }
        let step = 0.5 * tiny;
        c = if b - a > 2.0 * step {
            c.clamp(a + step, b - step)
        } else {
            mid
        };
        iterations += 1;
        let (gc, dgc) = g(c)?;
        last = dgc.map(|d| (c, gc, d));
        if gc > 0.0 {
            a = c;
            ga = gc;
            if kept == 1 {
                gb *= 0.5;
            }
            kept = 1;
        } else {
            b = c;
            gb = gc;
            if kept == -1 {
                ga *= 0.5;
            }
            kept = -1;
        }
    }
    Ok((b, iterations))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_to_the_last_bit() {
        // g(t) = 2 − t², root √2.
        let (t, it) = locate::<()>(|t| Ok((2.0 - t * t, None)), 1.0, 1.0, 2.0, -2.0, 0.0).unwrap();
        let r = std::f64::consts::SQRT_2;
        assert!((t - r).abs() <= 2.0 * f64::EPSILON * r, "{t} {it}");
        assert!(2.0 - t * t <= 0.0);
        assert!(it < 60, "{it}");
        // A flat-then-steep guard: still converges.
        let (t, _) = locate::<()>(
            |t| Ok((1.0 - t.powi(20) * 1e6, None)),
            0.0,
            1.0,
            1.0,
            1.0 - 1e6,
            0.0,
        )
        .unwrap();
        let r = 1e-6f64.powf(1.0 / 20.0);
        assert!((t - r).abs() <= 4.0 * f64::EPSILON, "{t} {r}");
        // With the derivative: Newton, fewer iterations, same root.
        let (tn, itn) = locate::<()>(
            |t| Ok((2.0 - t * t, Some(-2.0 * t))),
            1.0,
            1.0,
            2.0,
            -2.0,
            0.0,
        )
        .unwrap();
        let r = std::f64::consts::SQRT_2;
        assert!(
            (tn - r).abs() <= 2.0 * f64::EPSILON * r && itn < it,
            "{tn} {itn} {it}"
        );
        // With a tolerance, fewer iterations.
        let (t2, it2) =
            locate::<()>(|t| Ok((2.0 - t * t, None)), 1.0, 1.0, 2.0, -2.0, 1e-6).unwrap();
        assert!((t2 - std::f64::consts::SQRT_2).abs() < 1e-6 && it2 <= it);
    }
}
