//! Modified nodal analysis: from a netlist to the linear complementarity
//! system
//!
//! ```text
//! ẋ = A x + B λ + E s(t),   w = C x + D λ + F s(t),   0 ≤ w ⊥ λ ≥ 0,
//! ```
//!
//! x the inductor currents and capacitor voltages (in element order), λ
//! and w one pair per diode (current form λ = i_D, w = −v_D; voltage form
//! λ = −v_D, w = i_D; see `topology.rs`), s the source values (in element
//! order). A gated switch is a diode whose voltage is offset by
//! o = V_b (1 − u), u its gate: w = −v_S + o (current form) or
//! v_S = −λ + o (voltage form); its gates add G u + g₀ to ẋ and H u + h₀
//! to w.
//!
//! With x, λ and s fixed, capacitors and voltage-form diodes are voltage
//! sources (v_C, −λ), closed switches are 0 V sources, inductors,
//! current-form diodes and current sources inject their currents (i_L, λ,
//! I). The resistive network left is the MNA system
//!
//! ```text
//! [ G   B_v ] [ e ]   [ −K_x x − K_λ λ − K_s s ]
//! [ B_vᵀ 0  ] [ j ] = [  V_x x + V_λ λ + V_s s ]
//! ```
//!
//! (G the conductance matrix over the non-ground nodes, B_v the incidence
//! of the voltage-type branches whose currents are j, K the incidence of
//! the injected currents, V their imposed voltages), nonsingular by the
//! topological checks. Its solution is linear in z = (x, λ, s):
//! (e, j) = M⁻¹ R z, one dense LU of the (nodes + voltage branches) square
//! matrix. Then l di_L/dt = e_a − e_b, c dv_C/dt = j_C, and w = e_k − e_a
//! (current form, k the cathode) or w = j_D (voltage form).

use nalgebra::{DMatrix, DVector};

use super::error::CircuitError;
use super::netlist::{ElementKind, Netlist};
use super::topology::{analyse, switch_states};

/// The variables of a diode's complementarity pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiodeForm {
    /// λ = i_D (anode to cathode), w = −v_D = v_k − v_a.
    Current,
    /// λ = −v_D, w = i_D.
    Voltage,
}

/// The linear complementarity system of a circuit (see the module
/// documentation for the equations).
#[derive(Debug, Clone, PartialEq)]
pub struct CircuitLcs {
    /// A, n × n.
    pub a: DMatrix<f64>,
    /// B, n × m (m diodes).
    pub b: DMatrix<f64>,
    /// E, n × p (p sources).
    pub e: DMatrix<f64>,
    /// C, m × n.
    pub c: DMatrix<f64>,
    /// D, m × m.
    pub d: DMatrix<f64>,
    /// F, m × p.
    pub f: DMatrix<f64>,
    /// x(t₀): the inductors' initial currents, the capacitors' initial
    /// voltages.
    pub x0: DVector<f64>,
    /// The state names: `i(L1)` for an inductor, `v(C1)` for a capacitor.
    pub states: Vec<String>,
    /// The diodes' names, the order of λ and w.
    pub diodes: Vec<String>,
    /// Each diode's pair of variables.
    pub diode_forms: Vec<DiodeForm>,
    /// The sources' names, the order of s.
    pub sources: Vec<String>,
    /// G, n × q (q gated switches): the gates' part of ẋ.
    pub g: DMatrix<f64>,
    /// g₀, n: the constant part of ẋ from the blocking voltages.
    pub g0: DVector<f64>,
    /// H, m × q: the gates' part of w.
    pub h: DMatrix<f64>,
    /// h₀, m: the constant part of w from the blocking voltages.
    pub h0: DVector<f64>,
    /// The gated switches' names, the order of u; each is also a row of
    /// λ and w, among the diodes (in `diodes`).
    pub gates: Vec<String>,
}

/// Reduces `net`, its switches in the states `closed` (one per switch, in
/// order; true = closed), to its complementarity system.
pub fn reduce(net: &Netlist, closed: &[bool]) -> Result<CircuitLcs, CircuitError> {
    let topo = analyse(net, closed)?;
    let elements = net.elements();
    let is_closed = switch_states(elements, closed);
    let nn = topo.nodes.len() - 1;

    // Columns of z = (x, λ, s) and rows of the voltage-type branches.
    let (mut nx, mut nd, mut ns, mut nv, mut nu) = (0, 0, 0, 0, 0);
    let mut gate_col = vec![usize::MAX; elements.len()];
    let mut gates = Vec::new();
    let mut state_col = vec![usize::MAX; elements.len()];
    let mut diode_col = vec![usize::MAX; elements.len()];
    let mut source_col = vec![usize::MAX; elements.len()];
    let mut branch = vec![usize::MAX; elements.len()];
    let mut forms = Vec::new();
    let mut states = Vec::new();
    let mut x0 = Vec::new();
    for (i, el) in elements.iter().enumerate() {
        match el.kind {
            ElementKind::Inductor {
                initial_current, ..
            } => {
                state_col[i] = nx;
                nx += 1;
                states.push(format!("i({})", el.name));
                x0.push(initial_current);
            }
            ElementKind::Capacitor {
                initial_voltage, ..
            } => {
                state_col[i] = nx;
                nx += 1;
                states.push(format!("v({})", el.name));
                x0.push(initial_voltage);
                branch[i] = nv;
                nv += 1;
            }
            ElementKind::Diode | ElementKind::GatedSwitch { .. } => {
                if let ElementKind::GatedSwitch { .. } = el.kind {
                    gate_col[i] = nu;
                    nu += 1;
                    gates.push(el.name.clone());
                }
                diode_col[i] = nd;
                let form = if topo.voltage_form[nd] {
                    branch[i] = nv;
                    nv += 1;
                    DiodeForm::Voltage
                } else {
                    DiodeForm::Current
                };
                forms.push(form);
                nd += 1;
            }
            ElementKind::VoltageSource => {
                source_col[i] = ns;
                ns += 1;
                branch[i] = nv;
                nv += 1;
            }
            ElementKind::CurrentSource => {
                source_col[i] = ns;
                ns += 1;
            }
            ElementKind::Switch if is_closed[i] => {
                branch[i] = nv;
                nv += 1;
            }
            ElementKind::Switch | ElementKind::Resistor(_) => {}
        }
    }
    if nx == 0 {
        return Err(CircuitError::NoState);
    }
    // z = (x, λ, s, u, 1): the last column holds the constant terms.
    let (xc, lc, sc, uc) = (0, nx, nx + nd, nx + nd + ns);
    let one = uc + nu;
    let nz = one + 1;
    let blocking = |i: usize| match elements[i].kind {
        ElementKind::GatedSwitch { blocking_voltage } => Some(blocking_voltage),
        _ => None,
    };
    let size = nn + nv;
    let mut m = DMatrix::<f64>::zeros(size, size);
    let mut r = DMatrix::<f64>::zeros(size, nz);
    // Node k (k ≥ 1) is row k − 1; ground has no row.
    let row = |k: usize| k.checked_sub(1);
    for (i, el) in elements.iter().enumerate() {
        let (a, b) = topo.terminals[i];
        if let ElementKind::Resistor(res) = el.kind {
            let g = 1.0 / res;
            for (p, q, s) in [(a, a, g), (b, b, g), (a, b, -g), (b, a, -g)] {
                if let (Some(p), Some(q)) = (row(p), row(q)) {
                    m[(p, q)] += s;
                }
            }
            continue;
        }
        if branch[i] != usize::MAX {
            // A voltage-type branch: its current j leaves a, enters b;
            // v_a − v_b is imposed.
            let k = nn + branch[i];
            if let Some(p) = row(a) {
                m[(p, k)] += 1.0;
                m[(k, p)] += 1.0;
            }
            if let Some(q) = row(b) {
                m[(q, k)] -= 1.0;
                m[(k, q)] -= 1.0;
            }
            match el.kind {
                ElementKind::Capacitor { .. } => r[(k, xc + state_col[i])] = 1.0,
                ElementKind::VoltageSource => r[(k, sc + source_col[i])] = 1.0,
                ElementKind::Diode => r[(k, lc + diode_col[i])] = -1.0,
                ElementKind::GatedSwitch { blocking_voltage } => {
                    // v_S = −λ + V_b − V_b u.
                    r[(k, lc + diode_col[i])] = -1.0;
                    r[(k, uc + gate_col[i])] = -blocking_voltage;
                    r[(k, one)] = blocking_voltage;
                }
                _ => {} // a closed switch: 0 V
            }
            continue;
        }
        // An injected current from a to b (through the element).
        let col = match el.kind {
            ElementKind::Inductor { .. } => xc + state_col[i],
            ElementKind::Diode | ElementKind::GatedSwitch { .. } => lc + diode_col[i],
            ElementKind::CurrentSource => sc + source_col[i],
            _ => continue, // an open switch: no current
        };
        if let Some(p) = row(a) {
            r[(p, col)] -= 1.0;
        }
        if let Some(q) = row(b) {
            r[(q, col)] += 1.0;
        }
    }
    let lu = m.clone().full_piv_lu();
    let u = lu.u();
    let diag: Vec<f64> = (0..size).map(|k| u[(k, k)].abs()).collect();
    let (lo, hi) = diag.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    });
    if size > 0 && (lo <= hi * 1e-14 || lo.is_nan()) {
        return Err(CircuitError::Singular { condition: hi / lo });
    }
    let sol = if size > 0 {
        lu.solve(&r).ok_or(CircuitError::Singular {
            condition: f64::INFINITY,
        })?
    } else {
        r
    };
    // Potential of node k and current of branch k as rows of z.
    let potential = |k: usize| -> DVector<f64> {
        match row(k) {
            Some(p) => sol.row(p).transpose(),
            None => DVector::zeros(nz),
        }
    };
    let mut top = DMatrix::<f64>::zeros(nx, nz);
    let mut bottom = DMatrix::<f64>::zeros(nd, nz);
    let mut diodes = Vec::new();
    for (i, el) in elements.iter().enumerate() {
        let (a, b) = topo.terminals[i];
        match el.kind {
            ElementKind::Inductor { inductance, .. } => {
                let v = (potential(a) - potential(b)) / inductance;
                top.row_mut(state_col[i]).copy_from(&v.transpose());
            }
            ElementKind::Capacitor { capacitance, .. } => {
                let j = sol.row(nn + branch[i]) / capacitance;
                top.row_mut(state_col[i]).copy_from(&j);
            }
            ElementKind::Diode | ElementKind::GatedSwitch { .. } => {
                let mut w = match forms[diode_col[i]] {
                    DiodeForm::Current => (potential(b) - potential(a)).transpose(),
                    DiodeForm::Voltage => sol.row(nn + branch[i]).into_owned(),
                };
                if let (Some(vb), DiodeForm::Current) = (blocking(i), forms[diode_col[i]]) {
                    // w = −v_S + V_b − V_b u.
                    w[uc + gate_col[i]] -= vb;
                    w[one] += vb;
                }
                bottom.row_mut(diode_col[i]).copy_from(&w);
                diodes.push(el.name.clone());
            }
            _ => {}
        }
    }
    let cols = |mat: &DMatrix<f64>, from: usize, n: usize| mat.columns(from, n).into_owned();
    Ok(CircuitLcs {
        a: cols(&top, xc, nx),
        b: cols(&top, lc, nd),
        e: cols(&top, sc, ns),
        c: cols(&bottom, xc, nx),
        d: cols(&bottom, lc, nd),
        f: cols(&bottom, sc, ns),
        x0: DVector::from_vec(x0),
        states,
        diodes,
        diode_forms: forms,
        sources: net.sources().iter().map(|s| s.to_string()).collect(),
        g: cols(&top, uc, nu),
        g0: top.column(one).into_owned(),
        h: cols(&bottom, uc, nu),
        h0: bottom.column(one).into_owned(),
        gates,
    })
}
