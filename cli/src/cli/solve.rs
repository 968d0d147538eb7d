//! `nonsmooth solve FILE`: read a problem file, solve it, report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;

use nonsmooth::io::{read_problem_with_notes, Problem, ProblemKind};
use nonsmooth::numerics::friction::FRICTION_SOLVERS;
use nonsmooth::numerics::lcp::{lcp_solver, LCP_SOLVERS};
use nonsmooth::numerics::mlcp::{mlcp_solver, MLCP_SOLVERS};
use nonsmooth::numerics::relay::{relay_solver, RELAY_SOLVERS};
use nonsmooth::numerics::{SolveReport, SolverSettings};

/// Exit status: solved to the tolerance.
pub(super) const EXIT_SOLVED: u8 = 0;
/// Exit status: the solver ran but did not reach the tolerance.
pub(super) const EXIT_NOT_SOLVED: u8 = 1;
/// Exit status: bad input (file, parse, settings).
pub(super) const EXIT_BAD_INPUT: u8 = 2;

/// Problem family, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Family {
    /// Linear complementarity problem: `n`, M, q.
    Lcp,
    /// Mixed LCP: equalities then complementarities (Siconos MLCP file).
    Mlcp,
    /// Relay / box-constrained LCP: `n`, M, q, lb, ub.
    Relay,
    /// 2D frictional contact (local): d, nc, W, q, mu.
    Fc2d,
    /// 3D frictional contact (local): d, nc, W, q, mu; or an FCLIB `.hdf5`
    /// file (a global one is solved in its reduced local form).
    Fc3d,
    /// 3D global frictional contact: d, nc, M, H, q, b, mu; or an FCLIB
    /// global `.hdf5` file.
    Gfc3d,
}

impl Family {
    /// The complementarity family (`None` for the frictional ones, which
    /// `solve_friction` handles).
    fn kind(self) -> Option<ProblemKind> {
        match self {
            Family::Lcp => Some(ProblemKind::Lcp),
            Family::Mlcp => Some(ProblemKind::Mlcp),
            Family::Relay => Some(ProblemKind::Relay),
            Family::Fc2d | Family::Fc3d | Family::Gfc3d => None,
        }
    }
}

/// Arguments of `nonsmooth solve`.
#[derive(Debug, Args)]
pub struct SolveArgs {
    /// Problem file, in the Siconos text format of its family.
    pub file: PathBuf,

    /// Problem family. Without it, it is inferred from the path: a file or
    /// directory name containing `mlcp`, `relay` or `lcp` (checked in that
    /// order, the file name first).
    #[arg(long, value_enum, value_name = "FAMILY")]
    pub problem: Option<Family>,

    /// Solver name; the names of each family are listed below.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub solver: String,

    /// Tolerance on the normalised error (finite, > 0) [default: 1e-10].
    #[arg(long = "tol", value_name = "X", value_parser = parse_tolerance, allow_negative_numbers = true)]
    pub tolerance: Option<f64>,

    /// Iteration limit (at least 1) [default: each solver's own].
    #[arg(long = "max-iter", value_name = "N", value_parser = parse_max_iter, allow_negative_numbers = true)]
    pub max_iter: Option<usize>,

    /// Print one JSON object (keys: file, problem, n, n_eq, status, solver,
    /// requested_solver, iterations, tolerance, error, error_abs,
    /// error_measure, time_s, z, w, and u, v for an MLCP) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_tolerance(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(format!("the tolerance must be finite and > 0, got {s}"))
    }
}

fn parse_max_iter(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a non-negative integer"))?;
    if n >= 1 {
        Ok(n)
    } else {
        Err("the iteration limit must be at least 1".to_string())
    }
}

/// What `error` and `error_abs` mean for a family.
fn error_measure(kind: ProblemKind) -> &'static str {
    match kind {
        ProblemKind::Lcp => "error = ||min(z, w)||_2 / ||q||_2 (Siconos LCP normalisation; unnormalised when q = 0); error_abs = ||min(z, w)||_2",
        ProblemKind::Relay => "error = ||z - P_[lb,ub](z - w)||_2 / (1 + ||q||_2) (Siconos relay normalisation); error_abs = the numerator",
        ProblemKind::Mlcp => "error = ||r||_2 / (1 + ||q||_2), r = w on the equality rows and min(z, w) on the complementarity rows; error_abs = ||r||_2",
    }
}

/// Help shown after `-h`.
pub fn short_help() -> String {
    format!(
        "Solvers (--solver):\n  lcp:   {LCP_SOLVERS}\n  mlcp:  {MLCP_SOLVERS}\n  relay: {RELAY_SOLVERS}\n  \
         fc2d, fc3d, gfc3d: {FRICTION_SOLVERS}\n\n\
         Exit status: 0 solved, 1 not solved to the tolerance, 2 bad input. See --help for more."
    )
}

/// Help shown after `--help`.
pub fn long_help() -> String {
    format!(
        "Solvers (--solver; `default` chains the family's methods):\n  \
           lcp:   {LCP_SOLVERS}\n  \
           mlcp:  {MLCP_SOLVERS}\n  \
           relay: {RELAY_SOLVERS}\n  \
           fc2d, fc3d, gfc3d: {FRICTION_SOLVERS}\n\n\
         Error measures (both are printed; --tol applies to `error`, normalised as Siconos does):\n  \
           lcp:   error = ||min(z, w)||_2 / ||q||_2\n  \
           relay: error = ||z - P_[lb,ub](z - w)||_2 / (1 + ||q||_2)\n  \
           mlcp:  error = ||r||_2 / (1 + ||q||_2), with r = w on the equality rows and\n         \
                  min(z, w) on the complementarity rows (the natural map)\n  \
           fc:    error = ||r - P_K(r - u - mu ||u_T|| e_N)||_2 / max(||q||, ||r||, ||u||)\n         \
                  (Siconos 4.4); error_paper = the same over ||q|| (ABH 2018)\n  \
           error_abs is the unnormalised numerator, the absolute natural-map norm.\n\n\
         Output: z and w = M z + q; for an MLCP also u = z[..n] (the equality unknowns)\n\
         and v = z[n..]. The file's problem is solved from z = 0.\n\n\
         Exit status:\n  \
           0  solved to the tolerance\n  \
           1  the solver ran but did not reach the tolerance (the status says why:\n     \
              iteration_limit, ray_termination, no_solution, numerical_trouble)\n  \
           2  bad input: unreadable file, parse error (reported as file:line:column),\n     \
              undecidable problem family, unknown solver or invalid settings"
    )
}

/// The solved vectors and report.
struct Outcome {
    problem: Problem,
    report: SolveReport,
    /// Wall time of the solve.
    time: std::time::Duration,
    z: Vec<f64>,
    w: Vec<f64>,
}

/// Reads and solves; `Err` carries the bad-input message.
fn solve(args: &SolveArgs) -> Result<Outcome, String> {
    let kind = match args.problem {
        Some(f) => f
            .kind()
            .ok_or_else(|| format!("{f:?} is a frictional contact family"))?,
        None => ProblemKind::infer(&args.file).ok_or_else(|| {
            format!(
                "cannot tell the problem family of {} from its path; pass --problem lcp|mlcp|relay|fc2d|fc3d|gfc3d",
                args.file.display()
            )
        })?,
    };
    let (problem, notes) = read_problem_with_notes(&args.file, kind).map_err(|e| e.to_string())?;
    for note in notes {
        eprintln!("nonsmooth solve: note: {}: {note}", args.file.display());
    }
    let settings = SolverSettings {
        tolerance: args
            .tolerance
            .unwrap_or(SolverSettings::default().tolerance),
        max_iterations: args.max_iter,
        ..SolverSettings::default()
    };
    let n = problem.size();
    let mut z = vec![0.0; n];
    let mut w = vec![0.0; n];
    let solver_error = |e: nonsmooth::numerics::NumericsError| format!("solver: {e}");
    let start = std::time::Instant::now();
    let report = match &problem {
        Problem::Lcp(p) => lcp_solver(&args.solver, settings)
            .and_then(|mut s| s.solve(p, &mut z, &mut w))
            .map_err(solver_error)?,
        Problem::Mlcp(p) => mlcp_solver(&args.solver, settings)
            .and_then(|mut s| s.solve(p, &mut z, &mut w))
            .map_err(solver_error)?,
        Problem::Relay(p) => relay_solver(&args.solver, settings)
            .and_then(|mut s| s.solve(p, &mut z, &mut w))
            .map_err(solver_error)?,
    };
    let time = start.elapsed();
    Ok(Outcome {
        problem,
        report,
        time,
        z,
        w,
    })
}

/// The JSON output.
#[derive(Serialize)]
struct JsonReport<'a> {
    file: String,
    problem: &'static str,
    n: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    n_eq: Option<usize>,
    status: &'static str,
    solver: &'static str,
    requested_solver: &'a str,
    iterations: usize,
    tolerance: f64,
    error: f64,
    error_abs: f64,
    error_measure: &'static str,
    time_s: f64,
    z: &'a [f64],
    w: &'a [f64],
    #[serde(skip_serializing_if = "Option::is_none")]
    u: Option<&'a [f64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    v: Option<&'a [f64]>,
}

/// Shortest text that reads back to the same number, in exponent form for
/// very small or very large magnitudes.
fn num_text(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e15).contains(&a) || !a.is_finite() {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

pub(super) fn vec_text(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| num_text(*x)).collect();
    format!("[{}]", items.join(", "))
}

fn print_text(file: &Path, out: &Outcome, requested: &str, tolerance: f64) {
    let kind = out.problem.kind();
    let r = &out.report;
    let n = out.problem.size();
    match &out.problem {
        Problem::Mlcp(p) => println!(
            "problem    : mlcp, n = {} equalities + m = {} complementarities ({})",
            p.n_eq,
            p.n_comp(),
            file.display()
        ),
        _ => println!("problem    : {kind}, n = {n} ({})", file.display()),
    }
    println!("status     : {}", r.status);
    if r.solver == requested {
        println!("solver     : {}", r.solver);
    } else {
        println!("solver     : {} (requested: {requested})", r.solver);
    }
    println!("iterations : {}", r.iterations);
    println!("tolerance  : {tolerance:e}");
    println!("error      : {:.6e}", r.error);
    println!("error_abs  : {:.6e}", r.error_abs);
    println!("measure    : {}", error_measure(kind));
    println!("time       : {:.6e} s", out.time.as_secs_f64());
    println!("z          : {}", vec_text(&out.z));
    println!("w          : {}", vec_text(&out.w));
    if let Problem::Mlcp(p) = &out.problem {
        println!("u          : {}", vec_text(&out.z[..p.n_eq]));
        println!("v          : {}", vec_text(&out.z[p.n_eq..]));
    }
}

/// Runs `nonsmooth solve` and returns its exit status.
pub fn run(args: &SolveArgs) -> ExitCode {
    if let Some(family) = super::solve_friction::family_of(args) {
        return super::solve_friction::run(args, family);
    }
    let out = match solve(args) {
        Ok(out) => out,
        Err(msg) => {
            eprintln!("nonsmooth solve: error: {msg}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let tolerance = args
        .tolerance
        .unwrap_or(SolverSettings::default().tolerance);
    let r = &out.report;
    if args.json {
        let n_eq = match &out.problem {
            Problem::Mlcp(p) => Some(p.n_eq),
            _ => None,
        };
        let json = JsonReport {
            file: args.file.display().to_string(),
            problem: out.problem.kind().name(),
            n: out.problem.size(),
            n_eq,
            status: r.status.as_str(),
            solver: r.solver,
            requested_solver: &args.solver,
            iterations: r.iterations,
            tolerance,
            error: r.error,
            error_abs: r.error_abs,
            error_measure: error_measure(out.problem.kind()),
            time_s: out.time.as_secs_f64(),
            z: &out.z,
            w: &out.w,
            u: n_eq.map(|k| &out.z[..k]),
            v: n_eq.map(|k| &out.z[k..]),
        };
        match serde_json::to_string(&json) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("nonsmooth solve: error: cannot encode the result as JSON: {e}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        }
    } else {
        print_text(&args.file, &out, &args.solver, tolerance);
    }
    if r.status.is_solved() {
        ExitCode::from(EXIT_SOLVED)
    } else {
        eprintln!(
            "nonsmooth solve: not solved: status {} (error {:.3e}, tolerance {tolerance:e})",
            r.status, r.error
        );
        ExitCode::from(EXIT_NOT_SOLVED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_values_are_validated() {
        assert_eq!(parse_tolerance("1e-8"), Ok(1e-8));
        for bad in ["0", "-1e-3", "nan", "inf", "abc"] {
            assert!(parse_tolerance(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_max_iter("5"), Ok(5));
        for bad in ["0", "-3", "1.5", "x"] {
            assert!(parse_max_iter(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn help_lists_every_solver_family() {
        let h = long_help();
        for list in [LCP_SOLVERS, MLCP_SOLVERS, RELAY_SOLVERS] {
            assert!(h.contains(list));
        }
    }
}
