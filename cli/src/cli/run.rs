//! `nonsmooth run FILE`: build a scenario, simulate it, write the CSV (and
//! the event log, and the plots when asked).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::csv_out::{CsvFile, Field};
use nonsmooth::control::{ControlError, ControlLoop};
use nonsmooth::simulation::{EventKind, SimulationError, StepOutcome, Strategy};
use nonsmooth_scenario::{BuiltScenario, PlotSpec, Scenario};

/// Exit status: the run finished and every file was written.
const EXIT_OK: u8 = 0;
/// Exit status: the simulation (or writing its output) failed.
const EXIT_FAILED: u8 = 1;
/// Exit status: bad input (scenario file, option values).
const EXIT_BAD_INPUT: u8 = 2;

/// Arguments of `nonsmooth run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML; see docs/scenarios.md).
    pub file: PathBuf,

    /// Override a [parameters] entry: a number or an expression of the other
    /// parameters. Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment, allow_hyphen_values = true)]
    pub set: Vec<(String, String)>,

    /// Output directory (created if missing); the CSV is DIR/<name>.csv.
    #[arg(long = "out", value_name = "DIR", default_value = ".")]
    pub out: PathBuf,

    /// Also write an event log (CSV columns t, kind, object) to FILE.
    #[arg(long = "events", value_name = "FILE")]
    pub events: Option<PathBuf>,

    /// Print nothing on success (no progress, no summary).
    #[arg(long, short)]
    pub quiet: bool,

    /// Render the scenario's [[plots]] into the output directory.
    #[arg(long)]
    pub plot: bool,

    /// Simulation strategy, overriding `[simulation] strategy`:
    /// time-stepping or event-driven.
    #[arg(long, value_name = "STRATEGY", value_parser = parse_strategy)]
    pub strategy: Option<Strategy>,
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    s.parse()
}

pub(crate) fn parse_assignment(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=VALUE"))?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || value.is_empty() {
        return Err(format!("`{s}`: expected NAME=VALUE"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Help shown after `--help`.
pub fn long_help() -> &'static str {
    "Output: DIR/<scenario name>.csv with a header line (t, then one column per\n\
     recorded value, named <object>.<variable>[<index>]) and one row per output\n\
     instant, t0 included. Numbers are written in shortest round-trip form.\n\
     Files are written through temporary files and never left half-written.\n\n\
     --strategy event-driven integrates between located nonsmooth events;\n\
     its impacts appear in the --events log with kind `impact` (and `contact`,\n\
     `take_off`, `mode_switch`), at their exact times.\n\n\
     Exit status:\n  \
       0  the run finished and every file was written\n  \
       1  the simulation failed (the message gives t and the step), or an\n     \
          output could not be written\n  \
       2  bad input: unreadable or invalid scenario (reported as file:line:column),\n     \
          unknown parameter in --set, invalid settings; for a co-simulation\n     \
          ([[fmus]]): a missing or unusable FMU, an unknown variable, a variable\n     \
          of the wrong causality\n\n\
     A scenario with [[fmus]] runs FMI 2.0 co-simulation FMUs as the plant, with\n\
     the scenario's sensors and controllers on their outputs and inputs\n\
     (docs/cosimulation.md); --events logs their communication points\n\
     (kind `communication`, object = the FMU). An FMU failing (at set-up or in\n\
     a step) exits with 1, naming the FMU and the time; a failing step keeps\n\
     the rows written up to it. An FMU that ends the simulation (fmi2Terminated)\n\
     ends the run at that time: the rows up to it are written, a note names the\n\
     FMU and the time, exit 0."
}

/// Why the command stopped.
enum Failure {
    BadInput(String),
    Failed(String),
}

/// A `--set` value: a number when it parses as one, else an expression.
fn quantity(value: &str) -> nonsmooth_scenario::Quantity {
    match value.parse::<f64>() {
        Ok(x) => x.into(),
        Err(_) => value.into(),
    }
}

/// A built run: the scenario, its loop and, for a co-simulation, the
/// watch that tells whether an FMU ended it early.
type Prepared = (
    BuiltScenario,
    ControlLoop,
    Option<nonsmooth_cosim::EndWatch>,
);

fn prepare(args: &RunArgs) -> Result<Prepared, Failure> {
    let bad = |e: nonsmooth_scenario::ScenarioError| Failure::BadInput(e.to_string());
    let mut scenario = Scenario::from_file(&args.file).map_err(bad)?;
    for (name, value) in &args.set {
        scenario.set_parameter(name, quantity(value)).map_err(bad)?;
    }
    if scenario.cosim_plan().map_err(bad)?.is_some() {
        // A co-simulation: the FMUs of [[fmus]] are the plant.
        if let Some(s) = args.strategy.filter(|&s| s != Strategy::TimeStepping) {
            return Err(Failure::BadInput(format!(
                "--strategy {s}: a co-simulation steps its FMUs at their communication points \
                 (time-stepping only)"
            )));
        }
        let (built, run, watch) = nonsmooth_cosim::scenario::build_batched(
            &scenario,
            crate::cli::laws(),
            None,
            &mut Default::default(),
            None,
        )
        .map_err(|e| match e {
            nonsmooth_cosim::scenario::BuildError::Fmu { .. } => Failure::Failed(e.to_string()),
            e => Failure::BadInput(e.to_string()),
        })?;
        return Ok((built, run, Some(watch)));
    }
    let built = scenario.build_with(crate::cli::laws()).map_err(bad)?;
    let strategy = args.strategy.unwrap_or(built.strategy);
    let sim = built.control_loop_with(strategy).map_err(bad)?;
    Ok((built, sim, None))
}

/// Progress on stderr: an `indicatif` bar of the simulated time (in
/// thousandths of [t₀, t_end]) with t, updated a few times a second from
/// one second into the run; nothing at all when disabled.
struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    last: Option<Instant>,
    t0: f64,
    span: f64,
}

/// Steps of the bar over [t₀, t_end].
const PROGRESS_STEPS: u64 = 1000;

impl Progress {
    fn new(enabled: bool, t0: f64, t_end: f64) -> Self {
        let bar = enabled.then(|| {
            // Hidden until the first update, one second into the run.
            let bar =
                ProgressBar::with_draw_target(Some(PROGRESS_STEPS), ProgressDrawTarget::hidden());
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {percent:>3} %  t = {msg}  ({elapsed})")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            last: None,
            t0,
            span: t_end - t0,
        }
    }

    fn update(&mut self, t: f64) {
        let Some(bar) = &self.bar else {
            return;
        };
        let now = Instant::now();
        if now - self.start < Duration::from_secs(1) {
            return;
        }
        match self.last {
            Some(l) if now - l < Duration::from_millis(250) => return,
            Some(_) => {}
            None => bar.set_draw_target(ProgressDrawTarget::stderr()),
        }
        self.last = Some(now);
        let done = if self.span > 0.0 {
            ((t - self.t0) / self.span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        bar.set_position((done * PROGRESS_STEPS as f64) as u64);
        bar.set_message(format!("{t:<12.6}"));
    }

    fn clear(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.last = None;
    }
}

/// Creates the directory (and its parents) if missing.
fn ensure_dir(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::BadInput(format!(
            "cannot create the output directory {}: {e}",
            dir.display()
        ))
    })
}

fn simulate(args: &RunArgs) -> Result<(), Failure> {
    let (built, mut sim, end_watch) = prepare(args)?;
    ensure_dir(&args.out)?;
    let header = built.header();
    let mut csv = CsvFile::create(&args.out, &built.csv_file_name(), &header).map_err(|e| {
        Failure::BadInput(format!(
            "cannot create {}: {e}",
            args.out.join(built.csv_file_name()).display()
        ))
    })?;
    let mut events = match &args.events {
        Some(path) => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            ensure_dir(dir)?;
            let name = path.file_name().ok_or_else(|| {
                Failure::BadInput(format!("--events {}: not a file name", path.display()))
            })?;
            Some(
                CsvFile::create(dir, &name.to_string_lossy(), &["t", "kind", "object"]).map_err(
                    |e| Failure::BadInput(format!("cannot create {}: {e}", path.display())),
                )?,
            )
        }
        None => None,
    };
    let write_failed = |path: &Path, e: std::io::Error| {
        Failure::Failed(format!("writing {}: {e}", path.display()))
    };
    // Rigid bodies: one pose frame file every `frames_every` output rows.
    let mut frames = match built.rigid.as_deref() {
        Some(scene) if scene.frames_every > 0 => {
            let dir = args.out.join(format!("{}_frames", built.name));
            let writer = nonsmooth_collision::FrameWriter::new(
                &dir,
                &built.name,
                scene.names.len(),
                &scene.colliders,
            )
            .map_err(|e| Failure::BadInput(format!("cannot create {}: {e}", dir.display())))?;
            Some((scene, writer, Vec::new(), 0u64))
        }
        _ => None,
    };
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut progress = Progress::new(show_progress, built.settings.t0, built.settings.t_end);
    let mut row = vec![0.0; header.len()];
    let started = Instant::now();
    loop {
        match sim.step() {
            Ok(StepOutcome::Advanced { t, .. }) => {
                if sim.plant().is_output_instant() {
                    built.row(&sim, &mut row);
                    csv.write_row(&row)
                        .map_err(|e| write_failed(&args.out.join(built.csv_file_name()), e))?;
                    if let Some((scene, writer, states, rows)) = frames.as_mut() {
                        if *rows % scene.frames_every == 0 {
                            scene.states_of(sim.plant(), states);
                            writer
                                .write(t, &scene.bodies, states, &scene.colliders)
                                .map_err(|e| write_failed(&args.out, e))?;
                        }
                        *rows += 1;
                    }
                }
                if let (Some(log), Some(path)) = (events.as_mut(), args.events.as_deref()) {
                    for ev in sim.plant().last_events() {
                        if ev.kind == EventKind::NonSmooth {
                            // One line per transition: impact, contact,
                            // take_off or mode_switch of an interaction.
                            for tr in sim.plant().transitions() {
                                log.write_fields(&[
                                    Field::Number(t),
                                    Field::Text(tr.kind.as_str()),
                                    Field::Text(
                                        &sim.plant().model().interaction(tr.interaction).name,
                                    ),
                                ])
                                .map_err(|e| write_failed(path, e))?;
                            }
                            continue;
                        }
                        log.write_fields(&[
                            Field::Number(t),
                            Field::Text(ev.kind.as_str()),
                            Field::Text(sim.source_name(ev.source)),
                        ])
                        .map_err(|e| write_failed(path, e))?;
                    }
                }
                progress.update(t);
            }
            Ok(StepOutcome::Finished) => break,
            Err(e) => {
                progress.clear();
                let file = args.file.display();
                if end_watch.is_some()
                    && matches!(e, ControlError::Simulation(SimulationError::Imported(_)))
                {
                    // An FMU failed in a step: the rows up to the failure
                    // are kept (docs/cosimulation.md, "Failures").
                    let t = sim.time();
                    let step = sim.plant().statistics().steps + 1;
                    let csv_path = csv
                        .finish()
                        .map_err(|e| write_failed(&args.out.join(built.csv_file_name()), e))?;
                    if let (Some(log), Some(path)) = (events, args.events.as_deref()) {
                        log.finish().map_err(|e| write_failed(path, e))?;
                    }
                    return Err(Failure::Failed(format!(
                        "{file}: simulation failed in step {step} from t = {t}: {e}; \
                         the rows up to t = {t} are in {}",
                        csv_path.display()
                    )));
                }
                return Err(Failure::Failed(match e {
                    ControlError::Simulation(
                        SimulationError::SolverFailed { .. }
                        | SimulationError::NewtonFailed { .. }
                        | SimulationError::NonFinite { .. },
                    )
                    | ControlError::LawFailed { .. } => {
                        format!("{file}: simulation failed: {e}")
                    }
                    e => format!(
                        "{file}: simulation failed in step {} from t = {}: {e}",
                        sim.plant().statistics().steps + 1,
                        sim.time()
                    ),
                }));
            }
        }
    }
    progress.clear();
    let wall = started.elapsed();
    let rows = csv.rows();
    let columns = csv.columns();
    let csv_path = csv
        .finish()
        .map_err(|e| write_failed(&args.out.join(built.csv_file_name()), e))?;
    if let (Some(log), Some(path)) = (events, args.events.as_deref()) {
        log.finish().map_err(|e| write_failed(path, e))?;
    }
    if let Some(ended) = end_watch.as_ref().and_then(|w| w.get()) {
        // Not an error: the run ends where the FMU asked (exit 0).
        eprintln!(
            "nonsmooth run: note: {ended}; the rows up to t = {} are written",
            ended.end
        );
    }
    if !args.quiet {
        let stats = sim.plant().statistics();
        let us = if stats.steps > 0 {
            wall.as_secs_f64() * 1e6 / stats.steps as f64
        } else {
            0.0
        };
        let ed = sim.plant().event_statistics();
        let what = match ed {
            None => "steps",
            Some(_) => "event-driven integration steps",
        };
        let extra = match ed {
            None => String::new(),
            Some(e) => {
                format!(
                    ", {} nonsmooth events ({} impacts, {} mode switches)",
                    e.events, e.impacts, e.mode_switches
                )
            }
        };
        eprintln!(
            "nonsmooth run: {} {what} in {:.3} s ({us:.2} µs/step){extra}, {} solver iterations; \
             wrote {} ({rows} rows × {columns} columns)",
            stats.steps,
            wall.as_secs_f64(),
            stats.solver_iterations,
            csv_path.display()
        );
    }
    if args.plot {
        render_plots(&csv_path, &built.plots, &args.out).map_err(Failure::Failed)?;
    }
    Ok(())
}

/// Renders the scenario's plots from the written CSV into `out_dir` (an
/// output path is relative to it); the CSV is read once.
fn render_plots(csv: &Path, plots: &[PlotSpec], out_dir: &Path) -> Result<(), String> {
    if plots.is_empty() {
        return Ok(());
    }
    let table = nonsmooth_plot::read_csv_columns(csv).map_err(|e| e.to_string())?;
    for p in plots {
        let spec = nonsmooth_plot::PlotSpec {
            title: p.title.clone(),
            x: p.x.clone(),
            y: p.y.clone(),
            output: out_dir.join(&p.output),
            ..nonsmooth_plot::PlotSpec::new(out_dir.join(&p.output))
        };
        nonsmooth_plot::plot(&table, &spec).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", spec.output.display());
    }
    Ok(())
}

/// Runs `nonsmooth run` and returns its exit status.
pub fn run(args: &RunArgs) -> ExitCode {
    match simulate(args) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(Failure::BadInput(msg)) => {
            eprintln!("nonsmooth run: error: {msg}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
        Err(Failure::Failed(msg)) => {
            eprintln!("nonsmooth run: error: {msg}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments() {
        assert_eq!(
            parse_assignment("mass=2").unwrap(),
            ("mass".to_string(), "2".to_string())
        );
        assert_eq!(
            parse_assignment(" area = radius^2 ").unwrap(),
            ("area".to_string(), "radius^2".to_string())
        );
        assert_eq!(parse_assignment("x=a=b").unwrap().1, "a=b");
        for bad in ["mass", "=2", "mass="] {
            assert!(parse_assignment(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_are_numbers_or_expressions() {
        use nonsmooth_scenario::Quantity;
        assert_eq!(quantity("0.5"), Quantity::Number(0.5));
        assert_eq!(quantity("-1"), Quantity::Number(-1.0));
        assert_eq!(quantity("2*mass"), Quantity::Expression("2*mass".into()));
    }
}
