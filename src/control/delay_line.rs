//! A first-in first-out line of fixed-size vectors: the values in transit
//! between a measurement (or a control computation) and its delayed
//! delivery. Storage is allocated once; pushing and popping never allocate.

/// A ring buffer of `capacity` vectors of length `width`.
#[derive(Debug, Clone)]
pub(crate) struct DelayLine {
    width: usize,
    data: Vec<f64>,
    head: usize,
    len: usize,
}

impl DelayLine {
    /// Room for `capacity` vectors of length `width`.
    pub fn new(width: usize, capacity: usize) -> Self {
        DelayLine {
            width,
            data: vec![0.0; width * capacity.max(1)],
            head: 0,
            len: 0,
        }
    }

    fn capacity(&self) -> usize {
        self.data.len() / self.width.max(1)
    }

    /// Appends a copy of `v`; false when the line is full (a scheduling
    /// error: the capacity is computed from the delay and the period).
    pub fn push(&mut self, v: &[f64]) -> bool {
        let cap = if self.width == 0 {
            usize::MAX
        } else {
            self.capacity()
        };
        if self.len == cap {
            return false;
        }
        if self.width > 0 {
            let slot = (self.head + self.len) % cap;
            self.data[slot * self.width..(slot + 1) * self.width].copy_from_slice(v);
        }
        self.len += 1;
        true
    }

    /// Moves the oldest vector into `out`; false when the line is empty.
    pub fn pop_into(&mut self, out: &mut [f64]) -> bool {
        if self.len == 0 {
            return false;
        }
        if self.width > 0 {
            let cap = self.capacity();
            out.copy_from_slice(&self.data[self.head * self.width..(self.head + 1) * self.width]);
            self.head = (self.head + 1) % cap;
        }
        self.len -= 1;
        true
    }

    /// Vectors in transit.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The length of each vector.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The most vectors it holds.
    pub fn max_len(&self) -> usize {
        if self.width == 0 {
            usize::MAX
        } else {
            self.capacity()
        }
    }

    /// The vectors in transit, oldest first, stacked into `out` (cleared
    /// first).
    pub fn save_into(&self, out: &mut Vec<f64>) {
        out.clear();
        if self.width == 0 {
            return;
        }
        let cap = self.capacity();
        for k in 0..self.len {
            let slot = (self.head + k) % cap;
            out.extend_from_slice(&self.data[slot * self.width..(slot + 1) * self.width]);
        }
    }

    /// Puts back `len` vectors in transit saved by
    /// [`DelayLine::save_into`]; false (nothing changed) when they do not
    /// fit.
    pub fn restore(&mut self, len: usize, values: &[f64]) -> bool {
        if len > self.max_len() || values.len() != len * self.width {
            return false;
        }
        if self.width > 0 {
            self.data[..values.len()].copy_from_slice(values);
        }
        self.head = 0;
        self.len = len;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_out_in_the_order_they_went_in() {
        let mut d = DelayLine::new(2, 3);
        let mut out = [0.0; 2];
        assert!(!d.pop_into(&mut out));
        for k in 0..3 {
            assert!(d.push(&[k as f64, -(k as f64)]));
        }
        assert!(!d.push(&[9.0, 9.0]), "full");
        assert!(d.pop_into(&mut out));
        assert_eq!(out, [0.0, -0.0]);
        assert!(d.push(&[3.0, -3.0]));
        for k in 1..4 {
            assert!(d.pop_into(&mut out));
            assert_eq!(out, [k as f64, -(k as f64)]);
        }
        assert_eq!(d.len(), 0);
    }

    #[test]
    fn a_saved_line_comes_back_in_order() {
        let mut d = DelayLine::new(1, 3);
        let mut out = [0.0];
        for k in 0..3 {
            d.push(&[k as f64]);
        }
        d.pop_into(&mut out);
        d.push(&[3.0]);
        let mut saved = Vec::new();
        d.save_into(&mut saved);
        assert_eq!(saved, [1.0, 2.0, 3.0]);
        let mut e = DelayLine::new(1, 3);
        assert!(!e.restore(4, &[0.0; 4]));
        assert!(!e.restore(2, &[0.0; 3]));
        assert!(e.restore(3, &saved));
        for k in 1..4 {
            assert!(e.pop_into(&mut out));
            assert_eq!(out, [k as f64]);
        }
    }
}
