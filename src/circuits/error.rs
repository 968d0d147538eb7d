//! Errors of netlists and of their reduction to a complementarity system.
//! Each names the element at fault and, when the netlist came from a file,
//! its line.

use thiserror::Error;

/// Where an element was written: its name, and its line when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementRef {
    /// The element's name (`R1`, `D2`, …).
    pub name: String,
    /// The line of the element in its file, when it came from one.
    pub line: Option<usize>,
}

impl std::fmt::Display for ElementRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "element `{}` (line {l})", self.name),
            None => write!(f, "element `{}`", self.name),
        }
    }
}

/// What is wrong with a netlist.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CircuitError {
    /// Two elements share a name.
    #[error("{element}: the name is already used by {first}")]
    DuplicateName {
        /// The second element.
        element: ElementRef,
        /// The first one.
        first: ElementRef,
    },
    /// An element's value is not a positive finite number.
    #[error("{element}: {what} must be positive and finite, got {value}")]
    BadValue {
        /// The element.
        element: ElementRef,
        /// Resistance, inductance, capacitance, initial value.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// Both terminals of an element are the same node.
    #[error("{element}: both terminals are node `{node}`")]
    ShortedElement {
        /// The element.
        element: ElementRef,
        /// The node.
        node: String,
    },
    /// A node is named by one terminal only: nothing else connects to it
    /// (a misspelt node name, or an unfinished branch).
    #[error("{element}: node `{node}` is connected to nothing else (a misspelt or unknown node?)")]
    DanglingNode {
        /// The only element at the node.
        element: ElementRef,
        /// The node.
        node: String,
    },
    /// A part of the circuit has no path to ground (node `0`).
    #[error("{element}: node `{node}` floats, no path of elements joins it to ground (node 0)")]
    FloatingNode {
        /// An element of the floating part.
        element: ElementRef,
        /// A node of the floating part.
        node: String,
    },
    /// Voltage sources, capacitors and closed switches form a loop: their
    /// voltages would be bound by Kirchhoff's voltage law.
    #[error("{element} closes a loop of voltage sources, capacitors and closed switches")]
    VoltageLoop {
        /// The element closing the loop (the others come before it).
        element: ElementRef,
    },
    /// Inductors, current sources and open switches form a cut set: their
    /// currents would be bound by Kirchhoff's current law.
    #[error("{element} is in a cut set of inductors, current sources and open switches: node `{node}` reaches ground only through them")]
    CurrentCutSet {
        /// An element of the cut set at the node.
        element: ElementRef,
        /// A node cut off.
        node: String,
    },
    /// The circuit has no inductor and no capacitor: no state.
    #[error("the circuit has no inductor or capacitor, hence no state")]
    NoState,
    /// The switch configuration does not match the switches.
    #[error("{given} switch states given, the circuit has {expected} switches")]
    SwitchCount {
        /// States given.
        given: usize,
        /// Switches in the circuit.
        expected: usize,
    },
    /// The resistive network left when states and multipliers are fixed is
    /// singular although the topological checks passed (should not happen;
    /// reported rather than hidden).
    #[error("the modified nodal analysis matrix is singular (condition estimate {condition:e})")]
    Singular {
        /// An estimate of its condition number.
        condition: f64,
    },
}
