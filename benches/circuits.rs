//! The boost converter from its netlist (V_in = 10 V, L = 100 µH,
//! C = 100 µF, R = 20 Ω, gated switch with V_b = 100 V, diode), open loop
//! at D = 0.5 with a PWM period of 10 µs, θ = 1/2, h = 1e-7 for 10 ms of
//! circuit time (100 000 steps): wall time of the run and µs per step.
//! The Siconos 4.4 side of the same complementarity system:
//! `/usr/bin/python3 benches/siconos/boost_open_loop.py` (docs/circuits.md).
//!
//! `cargo bench --bench circuits [-- --T 0.01 --repeat 5]`

use std::time::Instant;

use nalgebra::DVector;
use nonsmooth::circuits::{reduce, Element, ElementKind, Netlist, SourceValue};
use nonsmooth::modelling::{ModelBuilder, NonsmoothLaw};
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

const V_IN: f64 = 10.0;
const H: f64 = 1e-7;
const PERIOD_STEPS: usize = 100;
const ON_STEPS: usize = 50;

fn run(t_end: f64) -> (usize, f64, [f64; 2]) {
    let mut net = Netlist::new();
    let elements = [
        ("V1", ElementKind::VoltageSource, "in", "0"),
        (
            "L1",
            ElementKind::Inductor {
                inductance: 1e-4,
                initial_current: 0.0,
            },
            "in",
            "sw",
        ),
        (
            "S1",
            ElementKind::GatedSwitch {
                blocking_voltage: 100.0,
            },
            "sw",
            "0",
        ),
        ("D1", ElementKind::Diode, "sw", "out"),
        (
            "C1",
            ElementKind::Capacitor {
                capacitance: 1e-4,
                initial_voltage: 0.0,
            },
            "out",
            "0",
        ),
        ("R1", ElementKind::Resistor(20.0), "out", "0"),
    ];
    for (name, kind, a, b) in elements {
        net.add(Element {
            name: name.into(),
            kind,
            a: a.into(),
            b: b.into(),
            line: None,
        })
        .expect("a valid element");
    }
    let lcs = reduce(&net, &[]).expect("a valid boost netlist");
    let mut mb = ModelBuilder::new();
    let sys = mb
        .add_system("boost", lcs.system(&[SourceValue::Constant(V_IN)]))
        .expect("system");
    let rel = lcs.relation(&[V_IN]).expect("diodes");
    let int = mb
        .add_interaction(
            "boost_diodes",
            &[sys],
            rel,
            NonsmoothLaw::Complementarity { size: 2 },
        )
        .expect("interaction");
    let mut sim =
        TimeStepping::new(mb.build(), TimeSteppingSettings::new(H, t_end)).expect("simulation");
    let g_on = (&lcs.g * DVector::from_element(1, 1.0)).as_slice().to_vec();
    let g_off = vec![0.0; g_on.len()];
    let steps = (t_end / H).round() as usize;
    let start = Instant::now();
    // The first call of `step` is the instant t₀ itself (its output event,
    // no integration): the k-th integration step (t_k, t_{k+1}] is the
    // call after that, and uses the gate set just before it.
    sim.step().expect("the initial instant");
    for k in 0..steps {
        match k % PERIOD_STEPS {
            0 => {
                sim.set_input(int, &[1.0]).expect("gate");
                sim.set_system_input(sys, &g_on).expect("gate");
            }
            ON_STEPS => {
                sim.set_input(int, &[0.0]).expect("gate");
                sim.set_system_input(sys, &g_off).expect("gate");
            }
            _ => {}
        }
        sim.step().expect("step");
    }
    let elapsed = start.elapsed().as_secs_f64();
    assert!(
        (sim.time() - t_end).abs() <= 1e-12 * t_end,
        "the run ends at t_end"
    );
    let x = sim.q(sys);
    (steps, elapsed, [x[0], x[1]])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |key: &str, default: f64| {
        args.iter()
            .position(|a| a == key)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let t_end = value("--T", 1e-2);
    let repeat = value("--repeat", 3.0) as usize;
    let mut best = f64::INFINITY;
    let mut result = (0, [0.0; 2]);
    for _ in 0..repeat.max(1) {
        let (steps, s, x) = run(t_end);
        best = best.min(s);
        result = (steps, x);
    }
    let (steps, x) = result;
    println!(
        "nonsmooth boost open loop: {steps} steps in {best:.3} s ({:.2} us/step); \
         x(T) = i_L {:.9}, v_C {:.9}",
        1e6 * best / steps as f64,
        x[0],
        x[1]
    );
}
