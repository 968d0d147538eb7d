//! Reducing a long series to the points that show on screen.

/// Indices of the points of the line through `(x[i], y[i])` to draw when the
/// horizontal range `x_range = (lo, hi)` spans `pixels` pixel columns.
///
/// Series of at most `4 · pixels` points are kept whole. Longer ones are cut
/// into runs of consecutive points that fall in the same pixel column; of
/// each run the first, the last, the lowest and the highest point are kept
/// (each once, in their original order). The line through the kept points
/// reaches the same extremes in every run and joins the runs where the full
/// line does, so at the screen's resolution it covers the same pixels. With
/// a monotone `x` at most `4 · pixels` points remain.
///
/// The values are expected finite (cut a series at its non-finite points
/// first); `x` values outside the range count in the nearest edge column.
/// Only the first `min(x.len(), y.len())` points are considered. The
/// returned indices are strictly increasing.
pub fn decimate(x: &[f64], y: &[f64], x_range: (f64, f64), pixels: usize) -> Vec<usize> {
    let n = x.len().min(y.len());
    let pixels = pixels.max(1);
    if n <= 4 * pixels {
        return (0..n).collect();
    }
    let (lo, hi) = x_range;
    let span = hi - lo;
    let scale = if span > 0.0 && span.is_finite() {
        pixels as f64 / span
    } else {
        0.0
    };
    let last_column = (pixels - 1) as f64;
    let column = |v: f64| -> i64 {
        // NaN becomes column 0 through the saturating cast.
        ((v - lo) * scale).floor().clamp(0.0, last_column) as i64
    };

    let mut kept: Vec<usize> = Vec::with_capacity(4 * pixels + 4);
    let mut run = Run::start(0, y[0], column(x[0]));
    for i in 1..n {
        let c = column(x[i]);
        if c == run.column {
            run.add(i, y[i]);
        } else {
            run.flush(&mut kept);
            run = Run::start(i, y[i], c);
        }
    }
    run.flush(&mut kept);
    kept
}

/// Consecutive points in one pixel column.
struct Run {
    column: i64,
    first: usize,
    last: usize,
    min: (usize, f64),
    max: (usize, f64),
}

impl Run {
    fn start(i: usize, y: f64, column: i64) -> Run {
        Run {
            column,
            first: i,
            last: i,
            min: (i, y),
            max: (i, y),
        }
    }

    fn add(&mut self, i: usize, y: f64) {
        self.last = i;
        if y < self.min.1 {
            self.min = (i, y);
        }
        if y > self.max.1 {
            self.max = (i, y);
        }
    }

    fn flush(&self, kept: &mut Vec<usize>) {
        let mut idx = [self.first, self.min.0, self.max.0, self.last];
        idx.sort_unstable();
        for i in idx {
            if kept.last() != Some(&i) {
                kept.push(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic rough signal: a sine, a fast wobble and spikes.
    fn signal(n: usize) -> (Vec<f64>, Vec<f64>) {
        let x: Vec<f64> = (0..n).map(|i| i as f64 * 1e-3).collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let y = x
            .iter()
            .enumerate()
            .map(|(i, t)| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let noise = (state % 1000) as f64 / 1000.0 - 0.5;
                let spike = if i % 7919 == 0 { 5.0 } else { 0.0 };
                (2.0 * t).sin() + 0.1 * (50.0 * t).sin() + 0.05 * noise + spike
            })
            .collect();
        (x, y)
    }

    fn column_of(v: f64, lo: f64, hi: f64, pixels: usize) -> usize {
        (((v - lo) / (hi - lo) * pixels as f64).floor() as usize).min(pixels - 1)
    }

    #[test]
    fn short_series_are_kept_whole() {
        let x = [0.0, 1.0, 2.0, 3.0];
        assert_eq!(decimate(&x, &x, (0.0, 3.0), 1), vec![0, 1, 2, 3]);
        assert_eq!(decimate(&[], &[], (0.0, 1.0), 100), Vec::<usize>::new());
    }

    #[test]
    fn min_and_max_of_every_pixel_column_are_kept() {
        let n = 1_000_000;
        let pixels = 700;
        let (x, y) = signal(n);
        let (lo, hi) = (x[0], x[n - 1]);
        let kept = decimate(&x, &y, (lo, hi), pixels);
        assert!(kept.len() <= 4 * pixels, "{} points kept", kept.len());
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
        assert_eq!(kept.first(), Some(&0));
        assert_eq!(kept.last(), Some(&(n - 1)));

        let mut full = vec![(f64::INFINITY, f64::NEG_INFINITY); pixels];
        for i in 0..n {
            let c = column_of(x[i], lo, hi, pixels);
            full[c] = (full[c].0.min(y[i]), full[c].1.max(y[i]));
        }
        let mut shown = vec![(f64::INFINITY, f64::NEG_INFINITY); pixels];
        for &i in &kept {
            let c = column_of(x[i], lo, hi, pixels);
            shown[c] = (shown[c].0.min(y[i]), shown[c].1.max(y[i]));
        }
        assert_eq!(full, shown);
        // So the global extremes (the spikes) survive too.
        let max = y.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert!(kept.iter().any(|&i| y[i] == max));
    }

    #[test]
    fn non_monotone_x_keeps_extremes_of_each_run() {
        // A phase-portrait-like spiral: x goes back and forth.
        let n = 200_000;
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 1e-3).cos()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| (i as f64 * 1e-3).sin() * (1.0 + i as f64 * 1e-6))
            .collect();
        let kept = decimate(&x, &y, (-1.0, 1.0), 400);
        let runs = 1 + x
            .windows(2)
            .filter(|w| column_of(w[0], -1.0, 1.0, 400) != column_of(w[1], -1.0, 1.0, 400))
            .count();
        assert!(
            kept.len() <= 4 * runs,
            "{} points kept, {runs} runs",
            kept.len()
        );
        assert!(kept.len() < n / 2, "{} points kept", kept.len());
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
        let max = y.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let min = y.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(kept.iter().any(|&i| y[i] == max));
        assert!(kept.iter().any(|&i| y[i] == min));
    }

    #[test]
    fn degenerate_ranges_do_not_panic() {
        let (x, y) = signal(10_000);
        for range in [
            (0.0, 0.0),
            (1.0, 0.0),
            (f64::NAN, 1.0),
            (0.0, f64::INFINITY),
        ] {
            let kept = decimate(&x, &y, range, 10);
            assert!(kept.len() <= 4, "{range:?}: {}", kept.len());
        }
        assert!(!decimate(&x, &y, (0.0, 10.0), 0).is_empty());
    }
}
