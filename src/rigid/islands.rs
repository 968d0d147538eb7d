//! Islands of the contact graph and the order of the contacts.
//!
//! Two active contacts are coupled in the one-step problem when they share
//! a free body (W_ij ≠ 0 only then). The islands are the connected
//! components of the graph whose nodes are the free bodies and whose edges
//! are the active contacts; fixed bodies (M⁻¹ = 0) join nothing. The
//! one-step problem is block-diagonal over the islands, so each island is
//! a frictional problem of its own: a solver stops on an island as soon as
//! that island meets the tolerance, instead of sweeping every contact until
//! the slowest part of the world has converged.
//!
//! Found by union–find (path halving, union by size) over the bodies: cost
//! linear in bodies plus contacts, up to the inverse Ackermann factor.

use nalgebra::Vector3;

/// How the contacts of an island are ordered in its problem (the order in
/// which a Gauss–Seidel sweep visits them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContactOrder {
    /// As the detector gave them.
    #[default]
    Detection,
    /// Highest first along −g (the contact's midpoint (p₁ + p₂)/2 projected
    /// on −g/|g|): in one sweep the weight of a pile is handed down from the
    /// top layer to the floor. Detection order when g = 0.
    TopDown,
    /// Lowest first along −g.
    BottomUp,
    /// Top-down by layers, each layer by position: the contacts' midpoints
    /// fall into layers of thickness d across −g, highest layer first;
    /// within a layer, into rows of width d along a horizontal axis, then
    /// along the other axis. d is twice the mean lever
    /// arm |p − x_G| of the contacts on free bodies (one body's size). A
    /// sweep still hands the weight down layer by layer, and the contacts
    /// a Gauss–Seidel update reads (those sharing a body) stay a few
    /// positions away instead of a whole layer of contacts away: fewer cache
    /// misses on large piles. Detection order when g = 0.
    Layers,
}

impl ContactOrder {
    /// Names accepted by [`ContactOrder::from_name`].
    pub const NAMES: &'static str = "detection, top-down, bottom-up, layers";

    /// The order of a name (see [`ContactOrder::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "detection" => Some(ContactOrder::Detection),
            "top-down" => Some(ContactOrder::TopDown),
            "bottom-up" => Some(ContactOrder::BottomUp),
            "layers" => Some(ContactOrder::Layers),
            _ => None,
        }
    }
}

/// Two unit axes across `up` (any unit vector), completing it to an
/// orthonormal frame: a = up × e / |up × e| with e the world axis least
/// aligned with up, b = up × a.
pub(crate) fn across(up: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let e = if up.x.abs() <= up.y.abs() && up.x.abs() <= up.z.abs() {
        Vector3::x()
    } else if up.y.abs() <= up.z.abs() {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let a = up.cross(&e).normalize();
    (a, up.cross(&a))
}

/// The sort key of a contact at midpoint `m` in [`ContactOrder::Layers`]:
/// (layer, row, position along the row) with layer = ⌊−up·m / d⌋ (the
/// highest first), row = ⌊a·m / d⌋ and position b·m, (a, b) = [`across`]
/// (up), d > 0 the layer thickness.
pub(crate) fn layered_key(
    m: &Vector3<f64>,
    up: &Vector3<f64>,
    axes: &(Vector3<f64>, Vector3<f64>),
    d: f64,
) -> (i64, i64, f64) {
    // Saturating float-to-int conversions: a far or non-finite midpoint
    // only lands in the first or last layer.
    let layer = (-up.dot(m) / d).floor() as i64;
    let row = (axes.0.dot(m) / d).floor() as i64;
    (layer, row, axes.1.dot(m))
}

/// Union–find over the bodies, reused from step to step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Islands {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Islands {
    /// Every body alone.
    pub fn reset(&mut self, bodies: usize) {
        self.parent.clear();
        self.parent.extend(0..bodies);
        self.size.clear();
        self.size.resize(bodies, 1);
    }

    /// The representative of body b's island.
    pub fn find(&mut self, mut b: usize) -> usize {
        while self.parent[b] != b {
            self.parent[b] = self.parent[self.parent[b]];
            b = self.parent[b];
        }
        b
    }

    /// Joins the islands of bodies a and b.
    pub fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Midpoints of two layers of a 3 × 3 grid, shuffled: the layered keys
    /// put the upper layer first and each layer row by row, along each row
    /// by position, whatever the direction of gravity.
    #[test]
    fn layered_keys_go_down_by_layers_then_across() {
        for up in [Vector3::z(), Vector3::new(1.0, -2.0, 0.5).normalize()] {
            let axes = across(&up);
            assert!((axes.0.dot(&up)).abs() < 1e-15 && (axes.1.dot(&up)).abs() < 1e-15);
            assert!((axes.0.cross(&axes.1) - up).norm() < 1e-15);
            let d = 1.0;
            // Grid coordinates (layer from the top, row, column) and the
            // point there, a little off the cell centres.
            let mut cells = Vec::new();
            for layer in 0..2 {
                for row in 0..3 {
                    for col in 0..3 {
                        let m = -(layer as f64 + 0.4) * up
                            + (row as f64 + 0.3) * axes.0
                            + (col as f64 + 0.2) * axes.1;
                        cells.push(((layer, row, col), m));
                    }
                }
            }
            let expected: Vec<_> = cells.iter().map(|c| c.0).collect();
            // A fixed shuffle.
            cells.reverse();
            cells.swap(0, 7);
            cells.swap(3, 12);
            cells.sort_by(|x, y| {
                let (a, b) = (
                    layered_key(&x.1, &up, &axes, d),
                    layered_key(&y.1, &up, &axes, d),
                );
                a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.total_cmp(&b.2))
            });
            let got: Vec<_> = cells.iter().map(|c| c.0).collect();
            assert_eq!(got, expected, "up = {up:?}");
        }
    }
}
