//! `nonsmooth sweep FILE --grid NAME=v1,v2 … --metric NAME=EXPR … -o
//! table.csv`: one run per point of the grid (every combination, the first
//! `--grid` varying slowest), in parallel over the local cores (rayon),
//! each run kept in memory (`nonsmooth-runs`) and reduced to its metrics;
//! the table has one row per point, in grid order: the parameter values,
//! the metrics, and the error of a run that failed (empty otherwise).
//! The scenario file is read once; every point runs a copy of it with its
//! values. A co-simulation scenario (`[[fmus]]`) runs around its FMUs as
//! `nonsmooth run` runs it.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use super::csv_out::{CsvFile, Field};
use super::run::parse_assignment;
use nonsmooth::simulation::Strategy;
use nonsmooth_runs::{quantity, Batch, Metric, RunOptions};
use nonsmooth_scenario::{Quantity, Scenario};

/// Arguments of `nonsmooth sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario file (TOML; see docs/scenarios.md).
    pub file: PathBuf,

    /// A swept parameter and its values, separated by commas (numbers,
    /// expressions or words). Repeatable: every combination is run.
    #[arg(long = "grid", value_name = "NAME=V1,V2,…", value_parser = parse_assignment, allow_hyphen_values = true)]
    pub grid: Vec<(String, String)>,

    /// A metric of each run, NAME=EXPR (or EXPR, named by itself):
    /// final(COL), max_abs_after(COL, T), reaching_time(COL, TOL).
    /// Repeatable.
    #[arg(long = "metric", value_name = "NAME=EXPR")]
    pub metric: Vec<String>,

    /// Override a [parameters] entry in every run. Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment, allow_hyphen_values = true)]
    pub set: Vec<(String, String)>,

    /// Output table (CSV).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Simulation strategy: time-stepping or event-driven.
    #[arg(long, value_name = "STRATEGY", value_parser = |s: &str| s.parse::<Strategy>())]
    pub strategy: Option<Strategy>,

    /// Final time of every run (instead of the scenario's t_end).
    #[arg(long = "t-end", value_name = "T")]
    pub t_end: Option<f64>,

    /// Worker threads (default: one per core).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Help shown after `--help`.
pub fn long_help() -> &'static str {
    "Metrics (COL is a recorded column, as in the CSV header of `nonsmooth run`):\n  \
       final(COL)              the value at the last output instant\n  \
       max_abs_after(COL, T)   max |COL| over the output instants t >= T\n  \
       reaching_time(COL, TOL) the first output instant from which |COL| <= TOL\n                          \
     until the end (NaN when the last value is outside)\n\n\
     Output: one row per point of the grid, in order (the first --grid varies\n\
     slowest): the swept values as given, the metrics (shortest round-trip\n\
     numbers), and `error`, the message of a run that failed (empty otherwise).\n\
     A failed run is a row, never a lost one. Progress goes to stderr.\n\n\
     Example:\n  \
       nonsmooth sweep examples/smc_double_integrator.toml \\\n    \
         --grid alpha=0.5,1,2 --grid control_period=0.01,0.005 \\\n    \
         --metric 'reach=reaching_time(controller.sigma[0], 1e-9)' -o table.csv\n\n\
     Exit status:\n  \
       0  every run completed and the table was written\n  \
       1  the table was written but some runs failed (see the error column),\n     \
          or the table could not be written\n  \
       2  bad input: unreadable scenario, unknown parameter, bad metric, a\n     \
          strategy other than time-stepping for a co-simulation\n\n\
     The scenario file is read once; each point runs a copy of it with its\n\
     values. A co-simulation ([[fmus]]) runs around its FMUs as in\n\
     `nonsmooth run` (each point opens and initialises the FMUs)."
}

/// The points of the grid, first name slowest.
fn points(grid: &[(String, Vec<String>)]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for (_, values) in grid {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..values.len()).map(move |k| {
                    let mut q = p.clone();
                    q.push(k);
                    q
                })
            })
            .collect();
    }
    out
}

type Prepared = (Scenario, Vec<(String, Vec<String>)>, Vec<(String, Metric)>);

/// Checks the input and reads the scenario once: the file parses, swept
/// and set names are parameters, the metrics read, a co-simulation is not
/// asked for another strategy than time-stepping. Returns the scenario
/// with the `--set` overrides (every point starts from a copy of it), the
/// grid and the metrics.
fn prepare(args: &SweepArgs) -> Result<Prepared, String> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("{}: cannot read the file: {e}", args.file.display()))?;
    let mut scenario = Scenario::from_str(&text, &args.file).map_err(|e| e.to_string())?;
    for (name, value) in &args.set {
        scenario
            .set_parameter(name, quantity(value))
            .map_err(|e| format!("--set: {e}"))?;
    }
    if scenario.is_cosim() {
        if let Some(s) = args.strategy.filter(|&s| s != Strategy::TimeStepping) {
            return Err(format!(
                "--strategy {s}: a co-simulation steps its FMUs at their communication points \
                 (time-stepping only)"
            ));
        }
    }
    let grid: Vec<(String, Vec<String>)> = args
        .grid
        .iter()
        .map(|(n, v)| {
            (
                n.clone(),
                v.split(',').map(|s| s.trim().to_string()).collect(),
            )
        })
        .collect();
    let mut check = scenario.clone();
    for (name, values) in &grid {
        if values.iter().any(String::is_empty) {
            return Err(format!("--grid {name}: an empty value"));
        }
        check
            .set_parameter(name, 0.0)
            .map_err(|e| format!("--grid: {e}"))?;
    }
    let metrics = args
        .metric
        .iter()
        .map(|m| {
            let (name, expr) = match m.split_once('=') {
                Some((n, e)) if !n.contains('(') => (n.trim().to_string(), e),
                _ => (m.trim().to_string(), m.as_str()),
            };
            expr.parse::<Metric>()
                .map(|metric| (name, metric))
                .map_err(|e| format!("--metric: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((scenario, grid, metrics))
}

fn sweep(args: &SweepArgs) -> Result<bool, (u8, String)> {
    let bad = |m: String| (2u8, m);
    let (scenario, grid, metrics) = prepare(args).map_err(bad)?;
    let pts = points(&grid);
    let options = RunOptions {
        strategy: args.strategy,
        t_end: args.t_end,
        events: false,
        watch: None,
    };
    let only: Vec<Metric> = metrics.iter().map(|(_, m)| m.clone()).collect();
    let bar = if !args.quiet && std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(pts.len() as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs  ({elapsed}, eta {eta})")
    {
        bar.set_style(style);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| bad(format!("--jobs: {e}")))?;
    let started = Instant::now();
    let outcomes: Vec<_> = pool.install(|| {
        pts.par_iter()
            .map_init(Batch::new, |batch, p| {
                // The scenario was read once; each point runs a copy of it
                // with the point's values, in a batch per thread's share
                // of the points (expressions parsed, FMUs opened once).
                let overrides: Vec<(String, Quantity)> = grid
                    .iter()
                    .zip(p)
                    .map(|((n, vs), &k)| (n.clone(), quantity(&vs[k])))
                    .collect();
                let o = batch.run_point(&scenario, &overrides, &options, &only);
                bar.inc(1);
                o
            })
            .collect()
    });
    bar.finish_and_clear();
    let wall = started.elapsed();

    let dir = args
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = args
        .output
        .file_name()
        .ok_or_else(|| bad(format!("-o {}: not a file name", args.output.display())))?
        .to_string_lossy()
        .to_string();
    let mut header: Vec<&str> = grid.iter().map(|(n, _)| n.as_str()).collect();
    header.extend(metrics.iter().map(|(n, _)| n.as_str()));
    header.push("error");
    let failed = |e: std::io::Error| (1u8, format!("writing {}: {e}", args.output.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut csv = CsvFile::create(dir, &file_name, &header).map_err(failed)?;
    let mut errors = 0;
    for (p, o) in pts.iter().zip(&outcomes) {
        let mut fields: Vec<Field<'_>> = grid
            .iter()
            .zip(p)
            .map(|((_, vs), &k)| Field::Text(&vs[k]))
            .collect();
        fields.extend(o.metrics.iter().map(|&x| Field::Number(x)));
        fields.push(Field::Text(o.error.as_deref().unwrap_or("")));
        errors += usize::from(o.error.is_some());
        csv.write_fields(&fields).map_err(failed)?;
    }
    let path = csv.finish().map_err(failed)?;
    if !args.quiet {
        eprintln!(
            "nonsmooth sweep: {} runs ({} failed) in {:.3} s on {} threads; wrote {}",
            pts.len(),
            errors,
            wall.as_secs_f64(),
            pool.current_num_threads(),
            path.display()
        );
    }
    Ok(errors == 0)
}

/// Runs `nonsmooth sweep` and returns its exit status.
pub fn run(args: &SweepArgs) -> ExitCode {
    match sweep(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err((code, msg)) => {
            eprintln!("nonsmooth sweep: error: {msg}");
            ExitCode::from(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_first_name_slowest() {
        let g = vec![
            ("a".to_string(), vec!["1".to_string(), "2".to_string()]),
            ("b".to_string(), vec!["x".into(), "y".into(), "z".into()]),
        ];
        let p = points(&g);
        assert_eq!(
            p,
            vec![
                vec![0, 0],
                vec![0, 1],
                vec![0, 2],
                vec![1, 0],
                vec![1, 1],
                vec![1, 2]
            ]
        );
        assert_eq!(points(&[]), vec![Vec::<usize>::new()]);
    }
}
