//! The bouncing ball with the library API: a ball of radius R and mass m
//! dropped from 1 m on a floor, Newton impact law e = 0.9, Moreau–Jean
//! time-stepping (θ = 1/2, h = 5 ms) for 10 s.
//!
//! Run: `cargo run --release --example bouncing_ball > ball.csv`
//! (CSV on stdout: t, height, vertical velocity, impulse of the step).

use nalgebra::{dmatrix, dvector, DMatrix};
use nonsmooth::modelling::{
    LagrangianLinearTi, LagrangianLinearTiR, ModelBuilder, NonsmoothLaw, TimeVector,
};
use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (radius, mass, gravity, restitution) = (0.1, 1.0, 9.81, 0.9);

    // q = (height, x, angle); M = diag(m, m, 2/5 m R²); gravity on q[0].
    let mut model = ModelBuilder::new();
    let ball = model.add_system(
        "ball",
        LagrangianLinearTi::new(
            dvector![1.0, 0.0, 0.0],
            dvector![0.0, 0.0, 0.0],
            DMatrix::from_diagonal(&dvector![mass, mass, 0.4 * mass * radius * radius]),
        )
        .with_fext(TimeVector::Constant(dvector![-mass * gravity, 0.0, 0.0])),
    )?;
    // y = q[0] − R ≥ 0, with Newton's impact law.
    let floor = model.add_interaction(
        "floor",
        &[ball],
        LagrangianLinearTiR::new(dmatrix![1.0, 0.0, 0.0]).with_b(dvector![-radius]),
        NonsmoothLaw::NewtonImpact {
            size: 1,
            restitution,
        },
    )?;

    let mut sim = TimeStepping::new(model.build(), TimeSteppingSettings::new(0.005, 10.0))?;
    println!("t,ball.q[0],ball.v[0],floor.lambda[0]");
    sim.run(|s| {
        println!(
            "{},{},{},{}",
            s.time(),
            s.q(ball)[0],
            s.v(ball)[0],
            s.lambda(floor)[0]
        );
    })?;
    let stats = sim.statistics();
    eprintln!(
        "{} steps, {} one-step problems solved",
        stats.steps, stats.solves
    );
    Ok(())
}
