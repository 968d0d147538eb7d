//! Circuits from a netlist: resistors, inductors, capacitors, independent
//! sources, ideal diodes and ideal switches between named nodes, reduced by
//! modified nodal analysis to the first-order linear complementarity system
//!
//! ```text
//! ẋ = A x + B λ + E s(t),   w = C x + D λ + F s(t),   0 ≤ w ⊥ λ ≥ 0
//! ```
//!
//! (x: inductor currents and capacitor voltages; one complementarity pair
//! per diode; s: the sources' values; switches open or closed as given).
//! [`Netlist`] holds the elements (`netlist.rs`), the topological checks
//! and the choice of each diode's variables are in `topology.rs`, the
//! reduction [`reduce`] in `mna.rs`. [`CircuitLcs::system`] and
//! [`CircuitLcs::relation`] turn the result into the model's
//! [`FirstOrderLinear`] system and [`FirstOrderLinearTi`] relation (with a
//! complementarity law). No file format here: the scenario crate reads
//! netlists from TOML (docs/circuits.md).

mod error;
mod mna;
mod netlist;
mod topology;

use std::sync::Arc;

use nalgebra::DVector;

pub use error::{CircuitError, ElementRef};
pub use mna::{reduce, CircuitLcs, DiodeForm};
pub use netlist::{Element, ElementKind, Netlist, GROUND};

use crate::modelling::{FirstOrderLinear, FirstOrderLinearTi, TimeVector};

/// The value of a source: a constant, or a function of time.
#[derive(Clone)]
pub enum SourceValue {
    /// A constant (V or A).
    Constant(f64),
    /// s(t).
    Function(Arc<dyn Fn(f64) -> f64 + Send + Sync>),
}

impl std::fmt::Debug for SourceValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceValue::Constant(v) => write!(f, "Constant({v})"),
            SourceValue::Function(_) => f.write_str("Function"),
        }
    }
}

impl CircuitLcs {
    /// True when source `k` enters the complementarity conditions (a
    /// nonzero column of F).
    pub fn source_in_complementarity(&self, k: usize) -> bool {
        self.f.column(k).iter().any(|&v| v != 0.0)
    }

    /// The circuit's system ẋ = A x + b(t) + r, b(t) = E s(t) + g₀, from
    /// x0. The gates' part G u is an input of the system (g = G u).
    /// `sources` has one value per source, in order (checked by the caller:
    /// extra values are ignored, missing ones count as 0).
    pub fn system(&self, sources: &[SourceValue]) -> FirstOrderLinear {
        let n = self.a.nrows();
        let ds = FirstOrderLinear::new(self.x0.clone(), self.a.clone());
        let g0 = self.g0.clone();
        if self.e.ncols() == 0 {
            return if g0.iter().all(|&v| v == 0.0) {
                ds
            } else {
                ds.with_b(TimeVector::Constant(g0))
            };
        }
        let all_constant = sources
            .iter()
            .all(|s| matches!(s, SourceValue::Constant(_)));
        let b = if all_constant {
            let s = DVector::from_iterator(
                self.e.ncols(),
                (0..self.e.ncols()).map(|k| match sources.get(k) {
                    Some(SourceValue::Constant(v)) => *v,
                    _ => 0.0,
                }),
            );
            TimeVector::Constant(&self.e * s + g0)
        } else {
            let e = self.e.clone();
            let sources = sources.to_vec();
            TimeVector::Function {
                dim: n,
                f: Arc::new(move |t, out: &mut [f64]| {
                    out.copy_from_slice(g0.as_slice());
                    for (k, s) in sources.iter().enumerate().take(e.ncols()) {
                        let v = match s {
                            SourceValue::Constant(v) => *v,
                            SourceValue::Function(f) => f(t),
                        };
                        for (i, o) in out.iter_mut().enumerate() {
                            *o += e[(i, k)] * v;
                        }
                    }
                }),
            }
        };
        ds.with_b(b)
    }

    /// The diodes' relation y = w = C x + D λ + H u + F s + h₀, r = B λ,
    /// for the constant source values `s` (those that enter F), u the
    /// gates (the relation's input); `None` without diodes.
    pub fn relation(&self, s: &[f64]) -> Option<FirstOrderLinearTi> {
        if self.diodes.is_empty() {
            return None;
        }
        let mut rel =
            FirstOrderLinearTi::new(self.c.clone(), self.b.clone()).with_d(self.d.clone());
        let s = DVector::from_iterator(
            self.f.ncols(),
            (0..self.f.ncols()).map(|k| s.get(k).copied().unwrap_or(0.0)),
        );
        let e = &self.f * s + &self.h0;
        if e.iter().any(|&v| v != 0.0) {
            rel = rel.with_e(e);
        }
        if self.h.ncols() > 0 {
            rel = rel.with_f(self.h.clone());
        }
        Some(rel)
    }
}
