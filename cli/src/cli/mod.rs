//! Command-line interface: argument parsing and the subcommands.
//!
//! Exit status of every subcommand: 0 on success, 1 when the work ran but did
//! not succeed (a solver that stopped short of its tolerance, a simulation
//! that failed), 2 for bad input (unreadable or malformed file, bad option
//! values).

mod csv_out;
mod fmu;
mod plot;
mod run;
mod serve;
mod solve;
mod solve_friction;
mod sweep;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Modelling, simulation and control of nonsmooth dynamical systems.
#[derive(Debug, Parser)]
#[command(name = "nonsmooth", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Solve one LCP, MLCP or relay problem read from a Siconos text file.
    ///
    /// The problem is solved from z = 0; the tool prints the status, the
    /// solver that produced the answer, its iterations, both error measures,
    /// the time and the vectors (or one JSON object with --json).
    #[command(after_help = solve::short_help(), after_long_help = solve::long_help())]
    Solve(solve::SolveArgs),

    /// Plot columns of a simulation CSV file as an SVG or PNG image.
    ///
    /// One line per column against `t` (or -x COL), with a legend, axis
    /// labels and a title; long series are decimated for drawing.
    #[command(after_help = plot::short_help(), after_long_help = plot::long_help())]
    Plot(plot::PlotArgs),
    /// Simulate a scenario file and write its outputs as CSV.
    ///
    /// The scenario (TOML: parameters, simulation settings, systems,
    /// interactions, outputs, plots; see docs/scenarios.md) is built, run
    /// from t0 to t_end, and recorded at every output instant.
    #[command(after_long_help = run::long_help())]
    Run(run::RunArgs),

    /// FMI 2.0 co-simulation: export a scenario as an FMU.
    ///
    /// `nonsmooth fmu export SCENARIO.toml -o NAME.fmu` (see docs/fmi.md).
    Fmu(fmu::FmuArgs),

    /// Run a scenario over a grid of parameter values, in parallel over the
    /// local cores, and write one row per run (parameters, metrics, error).
    #[command(after_long_help = sweep::long_help())]
    Sweep(sweep::SweepArgs),

    /// Serve a browser workbench over the scenario files of a folder:
    /// parameters as a form, runs, overlaid plots, CSV download, sweeps.
    #[command(after_long_help = serve::long_help())]
    Serve(serve::ServeArgs),
}

/// The control laws scenarios may name.
pub fn laws() -> std::sync::Arc<dyn nonsmooth::control::LawCatalog> {
    std::sync::Arc::new(nonsmooth_controllers::Catalog)
}

/// Parses the command line and runs the subcommand. Argument errors exit
/// with status 2 (clap's convention, which matches "bad input").
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Solve(args) => solve::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Run(args) => run::run(args),
        Command::Fmu(args) => fmu::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Serve(args) => serve::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
