//! Topological checks of a netlist and the choice of each diode's
//! complementarity variables.
//!
//! The reduction (`mna.rs`) treats capacitors as voltage sources of value
//! v_C and inductors as current sources of value i_L, then solves the
//! resistive network that is left. That network has a unique solution when
//! (i) the voltage-type branches (voltage sources, capacitors, closed
//! switches) contain no loop, and (ii) every node reaches ground through
//! resistors and voltage-type branches. A diode is an unknown current λ
//! (current form: λ = i_D, w = −v_D) unless it is needed for (ii): it then
//! becomes a voltage-type branch of unknown voltage (voltage form:
//! λ = −v_D, w = i_D). Both forms state the same diode, 0 ≤ i_D ⊥ −v_D ≥ 0.
//!
//! The forest is built with a union–find over the nodes, adding the
//! voltage-type branches first (a branch whose ends are already joined
//! closes a loop: [`CircuitError::VoltageLoop`]), then the resistors, then
//! the diodes that join two parts not yet joined. A node still apart from
//! ground is cut off by inductors, current sources and open switches
//! ([`CircuitError::CurrentCutSet`]).

use std::collections::HashMap;

use super::error::CircuitError;
use super::netlist::{Element, ElementKind, Netlist, GROUND};

/// Nodes as indices (0 is ground) and the form of each diode.
#[derive(Debug, Clone)]
pub(super) struct Topology {
    /// Node names; index 0 is ground.
    pub nodes: Vec<String>,
    /// For each element, its two node indices.
    pub terminals: Vec<(usize, usize)>,
    /// For each element that is a diode or a gated switch, whether it is in
    /// voltage form.
    pub voltage_form: Vec<bool>,
}

/// A union–find over node indices, with path halving.
struct Forest(Vec<usize>);

impl Forest {
    fn new(n: usize) -> Self {
        Forest((0..n).collect())
    }
    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }
    /// Joins the parts of `a` and `b`; false when they were already one.
    fn join(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.0[ra] = rb;
        true
    }
}

/// Checks the netlist with the switches in `closed` (one per switch, in
/// order) and chooses the diodes' forms.
pub(super) fn analyse(net: &Netlist, closed: &[bool]) -> Result<Topology, CircuitError> {
    let elements = net.elements();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut nodes = vec![GROUND.to_string()];
    index.insert(GROUND.to_string(), 0);
    let mut count = vec![0usize];
    let mut terminals = Vec::with_capacity(elements.len());
    for e in elements {
        let mut node = |name: &str| {
            let next = nodes.len();
            let k = *index.entry(name.to_string()).or_insert(next);
            if k == next {
                nodes.push(name.to_string());
                count.push(0);
            }
            count[k] += 1;
            k
        };
        let (a, b) = (node(&e.a), node(&e.b));
        terminals.push((a, b));
    }
    let n = nodes.len();
    if elements.iter().all(|e| e.a != GROUND && e.b != GROUND) {
        if let Some(e) = elements.first() {
            return Err(CircuitError::FloatingNode {
                element: e.reference(),
                node: e.a.clone(),
            });
        }
    }
    // A node named once: nothing else is connected to it.
    for (k, &c) in count.iter().enumerate().skip(1) {
        if c == 1 {
            let (i, _) = terminals
                .iter()
                .enumerate()
                .find(|(_, &(a, b))| a == k || b == k)
                .expect("a node named once has its element");
            return Err(CircuitError::DanglingNode {
                element: elements[i].reference(),
                node: nodes[k].clone(),
            });
        }
    }
    // Parts without any path to ground.
    let mut all = Forest::new(n);
    for &(a, b) in &terminals {
        all.join(a, b);
    }
    for k in 1..n {
        if all.find(k) != all.find(0) {
            let i = first_at(&terminals, k);
            return Err(CircuitError::FloatingNode {
                element: elements[i].reference(),
                node: nodes[k].clone(),
            });
        }
    }
    let switches = net.of_kind('S').count();
    if closed.len() != switches {
        return Err(CircuitError::SwitchCount {
            given: closed.len(),
            expected: switches,
        });
    }
    let is_closed = switch_states(elements, closed);
    // Voltage-type branches: no loop.
    let mut tree = Forest::new(n);
    for (i, e) in elements.iter().enumerate() {
        let voltage_type = match e.kind {
            ElementKind::VoltageSource | ElementKind::Capacitor { .. } => true,
            ElementKind::Switch => is_closed[i],
            _ => false,
        };
        if voltage_type && !tree.join(terminals[i].0, terminals[i].1) {
            return Err(CircuitError::VoltageLoop {
                element: e.reference(),
            });
        }
    }
    for (i, e) in elements.iter().enumerate() {
        if matches!(e.kind, ElementKind::Resistor(_)) {
            tree.join(terminals[i].0, terminals[i].1);
        }
    }
    let mut voltage_form = Vec::new();
    for (i, e) in elements.iter().enumerate() {
        if matches!(e.kind, ElementKind::Diode | ElementKind::GatedSwitch { .. }) {
            voltage_form.push(tree.join(terminals[i].0, terminals[i].1));
        }
    }
    for k in 1..n {
        if tree.find(k) != tree.find(0) {
            // The element that leaves k's part: an inductor, a current
            // source or an open switch (every other kind was joined).
            let root = tree.find(k);
            let i = (0..elements.len())
                .find(|&i| {
                    let (a, b) = terminals[i];
                    (tree.find(a) == root) != (tree.find(b) == root)
                })
                .unwrap_or_else(|| first_at(&terminals, k));
            return Err(CircuitError::CurrentCutSet {
                element: elements[i].reference(),
                node: nodes[k].clone(),
            });
        }
    }
    Ok(Topology {
        nodes,
        terminals,
        voltage_form,
    })
}

/// For each element, whether it is a closed switch.
pub(super) fn switch_states(elements: &[Element], closed: &[bool]) -> Vec<bool> {
    let mut next = closed.iter();
    elements
        .iter()
        .map(|e| matches!(e.kind, ElementKind::Switch) && *next.next().unwrap_or(&false))
        .collect()
}

/// The first element at node k.
fn first_at(terminals: &[(usize, usize)], k: usize) -> usize {
    terminals
        .iter()
        .position(|&(a, b)| a == k || b == k)
        .unwrap_or(0)
}
