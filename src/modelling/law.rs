//! Nonsmooth laws: the set-valued relation between an interaction's output
//! y and its multiplier λ.
//!
//! | law | relation |
//! |---|---|
//! | complementarity | 0 ≤ y ⊥ λ ≥ 0 |
//! | Newton impact | if y ≤ 0: 0 ≤ ẏ⁺ + e ẏ⁻ ⊥ λ ≥ 0 (Moreau's velocity-level form) |
//! | relay | −y ∈ N₍lb,ub₎(λ): λ = lb if y > 0, λ = ub if y < 0, λ ∈ [lb, ub] if y = 0 |
//! | equality | y = 0, λ free |
//! | mixed complementarity | first `equalities` rows y = 0 (λ free), the others 0 ≤ y ⊥ λ ≥ 0 |
//! | Newton impact–friction | y = [g_N, y_T] (d = 2 or 3 rows): if g_N ≤ 0, with U = ẏ⁺ + diag(e_N, e_T, e_T) ẏ⁻: K*_μ ∋ Û ⊥ P ∈ K_μ, Û = U + μ‖U_T‖ e_N |
//!
//! The impact–friction law (seed 004 §2.2 b), Moreau's velocity level) is
//! Coulomb's law on the impulse P = [P_N, P_T] of a contact: K_μ = {P :
//! ‖P_T‖ ≤ μ P_N} and its dual K*_μ = {U : μ‖U_T‖ ≤ U_N}; equivalently the
//! contact separates (P = 0, U_N ≥ 0), sticks (U = 0, P ∈ K_μ) or slides
//! (U_N = 0, ‖P_T‖ = μ P_N, P_T = −α U_T with α ≥ 0).

use super::error::{ModelError, Result};

/// A nonsmooth law of one of the six kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum NonsmoothLaw {
    /// 0 ≤ y ⊥ λ ≥ 0, componentwise.
    Complementarity {
        /// Number of conditions.
        size: usize,
    },
    /// Newton's impact law with restitution coefficient e ∈ [0, 1].
    NewtonImpact {
        /// Number of contacts.
        size: usize,
        /// Restitution coefficient.
        restitution: f64,
    },
    /// −y ∈ N₍lb,ub₎(λ), componentwise.
    Relay {
        /// Lower bounds.
        lb: Vec<f64>,
        /// Upper bounds.
        ub: Vec<f64>,
    },
    /// y = 0.
    Equality {
        /// Number of equations.
        size: usize,
    },
    /// Newton impact with Coulomb friction on one contact: rows [normal,
    /// tangent(s)], `dimension` = 2 (one tangent) or 3 (two tangents).
    NewtonImpactFriction {
        /// 2 or 3: the size of y and λ.
        dimension: usize,
        /// Normal restitution coefficient e_N ∈ [0, 1].
        restitution: f64,
        /// Tangential restitution coefficient e_T ∈ [0, 1] (0: none).
        tangential_restitution: f64,
        /// Friction coefficient μ ≥ 0.
        friction: f64,
    },
    /// `equalities` rows y = 0 followed by `inequalities` complementarity rows.
    MixedComplementarity {
        /// Equality rows (first).
        equalities: usize,
        /// Complementarity rows (after the equalities).
        inequalities: usize,
    },
}

impl NonsmoothLaw {
    /// The size of y and λ the law applies to.
    pub fn size(&self) -> usize {
        match self {
            NonsmoothLaw::Complementarity { size }
            | NonsmoothLaw::NewtonImpact { size, .. }
            | NonsmoothLaw::Equality { size } => *size,
            NonsmoothLaw::Relay { lb, .. } => lb.len(),
            NonsmoothLaw::NewtonImpactFriction { dimension, .. } => *dimension,
            NonsmoothLaw::MixedComplementarity {
                equalities,
                inequalities,
            } => equalities + inequalities,
        }
    }

    /// Short name, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            NonsmoothLaw::Complementarity { .. } => "complementarity",
            NonsmoothLaw::NewtonImpact { .. } => "Newton impact",
            NonsmoothLaw::Relay { .. } => "relay",
            NonsmoothLaw::Equality { .. } => "equality",
            NonsmoothLaw::MixedComplementarity { .. } => "mixed complementarity",
            NonsmoothLaw::NewtonImpactFriction { .. } => "Newton impact–friction",
        }
    }

    /// Checks the law's own values.
    pub fn validate(&self, name: &str) -> Result<()> {
        match self {
            NonsmoothLaw::NewtonImpact { restitution, .. }
                if !(0.0..=1.0).contains(restitution) =>
            {
                return Err(ModelError::InvalidValue {
                    object: name.into(),
                    what: "restitution",
                    value: *restitution,
                    reason: "must be in [0, 1]",
                });
            }
            NonsmoothLaw::NewtonImpactFriction {
                dimension,
                restitution,
                tangential_restitution,
                friction,
            } => {
                let bad = |what, value, reason| {
                    Err(ModelError::InvalidValue {
                        object: name.into(),
                        what,
                        value,
                        reason,
                    })
                };
                if *dimension != 2 && *dimension != 3 {
                    return bad("dimension", *dimension as f64, "must be 2 or 3");
                }
                if !(0.0..=1.0).contains(restitution) {
                    return bad("restitution", *restitution, "must be in [0, 1]");
                }
                if !(0.0..=1.0).contains(tangential_restitution) {
                    return bad(
                        "tangential restitution",
                        *tangential_restitution,
                        "must be in [0, 1]",
                    );
                }
                if !(friction.is_finite() && *friction >= 0.0) {
                    return bad("friction", *friction, "must be finite and ≥ 0");
                }
            }
            NonsmoothLaw::Relay { lb, ub } => {
                if lb.len() != ub.len() {
                    return Err(ModelError::DimensionMismatch {
                        object: name.into(),
                        what: "relay upper bounds".into(),
                        expected: lb.len(),
                        found: ub.len(),
                    });
                }
                for (&l, &u) in lb.iter().zip(ub) {
                    if !(l.is_finite() && u.is_finite()) {
                        return Err(ModelError::NonFinite {
                            object: name.into(),
                            what: "relay bounds".into(),
                        });
                    }
                    if l > u {
                        return Err(ModelError::InvalidValue {
                            object: name.into(),
                            what: "relay lower bound",
                            value: l,
                            reason: "exceeds the upper bound",
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}
