//! The four-diode full-wave rectifier of an LC oscillator (L = 10 mH,
//! C = 1 µF) feeding a 1 kΩ load, with ideal diodes as complementarity
//! conditions; Euler–Moreau time-stepping (θ = 1/2, h = 1 µs) for 5 ms.
//!
//! State x = (v_L, i_L): ẋ = A x + B λ; diode relation y = C x + D λ with
//! λ = (−v_DR1, −v_DF2, i_DF1, i_DR2), 0 ≤ y ⊥ λ ≥ 0.
//!
//! Run: `cargo run --release --example diode_bridge > bridge.csv`
//! (CSV on stdout: t, v_L, i_L, load current).

use nalgebra::{dmatrix, dvector};
use nonsmooth::modelling::{FirstOrderLinear, FirstOrderLinearTi, ModelBuilder, NonsmoothLaw};
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (l, c, r, v0) = (1e-2, 1e-6, 1e3, 10.0);

    let mut model = ModelBuilder::new();
    let circuit = model.add_system(
        "circuit",
        FirstOrderLinear::new(dvector![v0, 0.0], dmatrix![0.0, -1.0 / c; 1.0 / l, 0.0]),
    )?;
    let diodes = model.add_interaction(
        "diodes",
        &[circuit],
        FirstOrderLinearTi::new(
            dmatrix![0.0, 0.0; 0.0, 0.0; -1.0, 0.0; 1.0, 0.0],
            dmatrix![0.0, 0.0, -1.0 / c, 1.0 / c; 0.0, 0.0, 0.0, 0.0],
        )
        .with_d(dmatrix![
            1.0 / r, 1.0 / r, -1.0, 0.0;
            1.0 / r, 1.0 / r, 0.0, -1.0;
            1.0, 0.0, 0.0, 0.0;
            0.0, 1.0, 0.0, 0.0
        ]),
        NonsmoothLaw::Complementarity { size: 4 },
    )?;

    let mut sim = TimeStepping::new(model.build(), TimeSteppingSettings::new(1e-6, 5e-3))?;
    println!("t,circuit.x[0],circuit.x[1],load_current");
    sim.run(|s| {
        let (x, y, lambda) = (s.x(circuit), s.y(diodes), s.lambda(diodes));
        // Load current: i_DR1 + i_DF1 = y[0] + λ[2].
        println!("{},{},{},{}", s.time(), x[0], x[1], y[0] + lambda[2]);
    })?;
    eprintln!("{} steps", sim.statistics().steps);
    Ok(())
}
