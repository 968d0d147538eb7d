//! The netlist: elements between named nodes, node `0` being ground.
//!
//! Conventions (SPICE's): an element `X a b` has its current flowing from
//! `a` to `b` through it and its voltage v = v_a − v_b.
//!
//! | element | law |
//! |---|---|
//! | resistor `R a b r` | v = r i |
//! | inductor `L a b l` | l di/dt = v (state: i) |
//! | capacitor `C a b c` | c dv/dt = i (state: v) |
//! | voltage source `V a b` | v = V(t) |
//! | current source `I a b` | i = I(t) (from `a` through the source to `b`) |
//! | ideal diode `D a k` (anode, cathode) | 0 ≤ i ⊥ −v ≥ 0 |
//! | ideal switch `S a b` | closed: v = 0; open: i = 0 |
//! | gated switch (a → b) | 0 ≤ i ⊥ −v + V_b (1 − u) ≥ 0, gate u ∈ [0, 1] |
//!
//! Source values are not part of the netlist: the reduction gives the
//! matrices that multiply them, in the order the sources appear.

use super::error::{CircuitError, ElementRef};

/// The kind of an element, with its value.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementKind {
    /// Resistance r (Ω).
    Resistor(f64),
    /// Inductance l (H) and initial current (A).
    Inductor {
        /// l.
        inductance: f64,
        /// i(t₀).
        initial_current: f64,
    },
    /// Capacitance c (F) and initial voltage (V).
    Capacitor {
        /// c.
        capacitance: f64,
        /// v(t₀).
        initial_voltage: f64,
    },
    /// An independent voltage source; its value V(t) is given apart.
    VoltageSource,
    /// An independent current source; its value I(t) is given apart.
    CurrentSource,
    /// An ideal diode from anode (first node) to cathode (second node).
    Diode,
    /// An ideal switch; its state (open or closed) is given apart.
    Switch,
    /// A gated unidirectional switch from `a` to `b`: the complementarity
    /// pair 0 ≤ i ⊥ −v + V_b (1 − u) ≥ 0 with its gate input u (1 =
    /// closed: an ideal diode; 0 = open: blocks while v < V_b). V_b, the
    /// blocking voltage, must exceed the largest voltage the open switch
    /// sees (then the open switch carries no current at all).
    GatedSwitch {
        /// V_b > 0.
        blocking_voltage: f64,
    },
}

impl ElementKind {
    /// The letter that starts the element's name in a SPICE-like line.
    pub fn letter(&self) -> char {
        match self {
            ElementKind::Resistor(_) => 'R',
            ElementKind::Inductor { .. } => 'L',
            ElementKind::Capacitor { .. } => 'C',
            ElementKind::VoltageSource => 'V',
            ElementKind::CurrentSource => 'I',
            ElementKind::Diode => 'D',
            ElementKind::Switch => 'S',
            ElementKind::GatedSwitch { .. } => 'G',
        }
    }
}

/// One element between two nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// Its name, unique in the netlist.
    pub name: String,
    /// What it is.
    pub kind: ElementKind,
    /// First node (`a`: positive terminal, diode anode).
    pub a: String,
    /// Second node (`b`: negative terminal, diode cathode).
    pub b: String,
    /// Its line in a file, when it came from one (for messages).
    pub line: Option<usize>,
}

impl Element {
    /// The element's name and line, for messages.
    pub fn reference(&self) -> ElementRef {
        ElementRef {
            name: self.name.clone(),
            line: self.line,
        }
    }
}

/// The ground node's name.
pub const GROUND: &str = "0";

/// A list of elements. Built with [`Netlist::add`], which checks names and
/// values; the topology is checked by the reduction
/// ([`super::reduce`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Netlist {
    elements: Vec<Element>,
}

impl Netlist {
    /// An empty netlist.
    pub fn new() -> Self {
        Self::default()
    }

    /// The elements, in the order they were added.
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// Adds an element after checking that its name is new, that its two
    /// nodes differ and that its values are positive and finite (initial
    /// values: finite).
    pub fn add(&mut self, element: Element) -> Result<(), CircuitError> {
        if let Some(first) = self.elements.iter().find(|e| e.name == element.name) {
            return Err(CircuitError::DuplicateName {
                element: element.reference(),
                first: first.reference(),
            });
        }
        if element.a == element.b {
            return Err(CircuitError::ShortedElement {
                element: element.reference(),
                node: element.a.clone(),
            });
        }
        let bad = |what, value| CircuitError::BadValue {
            element: element.reference(),
            what,
            value,
        };
        let positive = |what, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(what, v))
            }
        };
        let finite = |what, v: f64| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(bad(what, v))
            }
        };
        match element.kind {
            ElementKind::Resistor(r) => positive("the resistance", r)?,
            ElementKind::Inductor {
                inductance,
                initial_current,
            } => {
                positive("the inductance", inductance)?;
                finite("the initial current", initial_current)?;
            }
            ElementKind::Capacitor {
                capacitance,
                initial_voltage,
            } => {
                positive("the capacitance", capacitance)?;
                finite("the initial voltage", initial_voltage)?;
            }
            ElementKind::GatedSwitch { blocking_voltage } => {
                positive("the blocking voltage", blocking_voltage)?
            }
            _ => {}
        }
        self.elements.push(element);
        Ok(())
    }

    /// The elements of one kind (by letter), in order.
    pub fn of_kind(&self, letter: char) -> impl Iterator<Item = &Element> {
        self.elements
            .iter()
            .filter(move |e| e.kind.letter() == letter)
    }

    /// The names of the switches, in order: the order of a switch
    /// configuration.
    pub fn switches(&self) -> Vec<&str> {
        self.of_kind('S').map(|e| e.name.as_str()).collect()
    }

    /// The names of the sources (voltage and current), in order: the
    /// columns of the source matrices of the reduction.
    pub fn sources(&self) -> Vec<&str> {
        self.elements
            .iter()
            .filter(|e| matches!(e.kind.letter(), 'V' | 'I'))
            .map(|e| e.name.as_str())
            .collect()
    }
}
