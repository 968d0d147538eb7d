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
}

impl ContactOrder {
    /// Names accepted by [`ContactOrder::from_name`].
    pub const NAMES: &'static str = "detection, top-down, bottom-up";

    /// The order of a name (see [`ContactOrder::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "detection" => Some(ContactOrder::Detection),
            "top-down" => Some(ContactOrder::TopDown),
            "bottom-up" => Some(ContactOrder::BottomUp),
            _ => None,
        }
    }
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
