//! `nonsmooth fmu export FILE -o NAME.fmu`: an FMI 2.0 co-simulation FMU of
//! a scenario (docs/fmi.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use nonsmooth_fmus::export::{export, ExportError, ExportRequest, LIBRARY_FILE};

use super::run::parse_assignment;

/// Arguments of `nonsmooth fmu`.
#[derive(Debug, Args)]
pub struct FmuArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: FmuCommand,
}

/// The `fmu` subcommands.
#[derive(Debug, Subcommand)]
pub enum FmuCommand {
    /// Export a scenario as an FMI 2.0 co-simulation FMU.
    ///
    /// modelDescription.xml is generated from the scenario ([parameters],
    /// [fmi] inputs, outputs, tunable parameters and units); the scenario
    /// goes in resources/ and the runtime library in
    /// binaries/linux64/<modelIdentifier>.so.
    #[command(after_long_help = export_help())]
    Export(ExportArgs),
}

/// Arguments of `nonsmooth fmu export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Scenario file (TOML; see docs/scenarios.md and docs/fmi.md).
    pub file: PathBuf,

    /// Override a [parameters] entry (a number or an expression); the value
    /// becomes the parameter's start value in the FMU. Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment, allow_hyphen_values = true)]
    pub set: Vec<(String, String)>,

    /// The FMU file to write (created or replaced).
    #[arg(short = 'o', long = "output", value_name = "NAME.fmu")]
    pub output: PathBuf,

    /// The FMU runtime library to copy into the FMU (default: see below).
    #[arg(long = "library", value_name = "PATH")]
    pub library: Option<PathBuf>,

    /// The FMI version: 2 or 3 (with event mode and early return at events;
    /// binaries/x86_64-linux/). Both run the strategy the scenario names.
    #[arg(long = "fmi-version", value_name = "2|3", default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=3))]
    pub fmi_version: u32,

    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

fn export_help() -> String {
    format!(
        "The runtime library ({LIBRARY_FILE}, the cdylib of the nonsmooth-fmus crate) is\n\
         taken from, in order: --library PATH; the NONSMOOTH_FMU_LIBRARY environment\n\
         variable; else the newest of DIR/{LIBRARY_FILE}, DIR/deps/{LIBRARY_FILE} and\n\
         DIR/../{LIBRARY_FILE}, DIR the directory of the running nonsmooth executable\n\
         (cargo builds both into target/release/). Build it with\n  \
           cargo build --release -p nonsmooth-fmus\n\n\
         Exit status:\n  \
           0  the FMU was written\n  \
           1  it could not be written\n  \
           2  bad input: invalid scenario, unknown parameter, missing library"
    )
}

/// Where the runtime library is (see [`export_help`]), or the places
/// looked at.
fn find_library(args: &ExportArgs) -> Result<PathBuf, String> {
    if let Some(p) = &args.library {
        return Ok(p.clone());
    }
    if let Some(p) = std::env::var_os("NONSMOOTH_FMU_LIBRARY") {
        return Ok(PathBuf::from(p));
    }
    let mut looked = Vec::new();
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let mut candidates = vec![dir.join(LIBRARY_FILE), dir.join("deps").join(LIBRARY_FILE)];
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join(LIBRARY_FILE));
        }
        for c in candidates {
            if let Ok(t) = std::fs::metadata(&c).and_then(|m| m.modified()) {
                if newest.as_ref().is_none_or(|(n, _)| t > *n) {
                    newest = Some((t, c.clone()));
                }
            }
            looked.push(c.display().to_string());
        }
    }
    if let Some((_, p)) = newest {
        return Ok(p);
    }
    Err(format!(
        "the FMU runtime library {LIBRARY_FILE} was not found (looked for {}); build it with \
         `cargo build --release -p nonsmooth-fmus`, or give it with --library PATH or \
         NONSMOOTH_FMU_LIBRARY",
        if looked.is_empty() {
            "it next to the executable".to_string()
        } else {
            looked.join(", ")
        }
    ))
}

/// Runs `nonsmooth fmu …` and returns its exit status.
pub fn run(args: &FmuArgs) -> ExitCode {
    match &args.command {
        FmuCommand::Export(a) => run_export(a),
    }
}

fn run_export(args: &ExportArgs) -> ExitCode {
    let library = match find_library(args) {
        Ok(p) => p,
        Err(m) => {
            eprintln!("nonsmooth fmu export: error: {m}");
            return ExitCode::from(2);
        }
    };
    let req = ExportRequest {
        scenario: &args.file,
        overrides: &args.set,
        library: &library,
        output: &args.output,
        fmi_version: args.fmi_version,
    };
    match export(&req) {
        Ok(s) => {
            if !args.quiet {
                eprintln!(
                    "nonsmooth fmu export: wrote {} (model identifier {}, GUID {}): {} parameters \
                     ({} tunable), {} inputs, {} outputs; the library needs {}",
                    s.path.display(),
                    s.model_identifier,
                    s.guid,
                    s.parameters,
                    s.tunable,
                    s.inputs,
                    s.outputs,
                    s.glibc
                        .map(|g| format!("glibc ≥ {}", g.trim_start_matches("GLIBC_")))
                        .unwrap_or_else(|| "no versioned glibc symbol".into())
                );
            }
            ExitCode::SUCCESS
        }
        Err(e @ ExportError::Write { .. }) => {
            eprintln!("nonsmooth fmu export: error: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("nonsmooth fmu export: error: {e}");
            ExitCode::from(2)
        }
    }
}
