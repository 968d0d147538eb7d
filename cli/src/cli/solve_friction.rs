//! `nonsmooth solve FILE --problem fc2d|fc3d|gfc3d`: frictional contact.
//!
//! Local problems (Siconos `.dat` fc2d/fc3d, FCLIB `/fclib_local`) are solved
//! directly; global ones (Siconos gfc3d `.dat`, FCLIB `/fclib_global`) by
//! reduction to the local problem (W = Hᵀ M⁻¹ H, q = Hᵀ M⁻¹ f + w), then
//! v = M⁻¹ (H r + f). A `.hdf5` file is read as FCLIB.

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use nonsmooth::io::fclib::{read_fclib, FclibProblem};
use nonsmooth::io::friction_text::{read_friction, read_global_friction};
use nonsmooth::numerics::friction::{
    friction_solver, FrictionErrors, FrictionProblem, GlobalFrictionProblem,
};
use nonsmooth::numerics::{SolveReport, SolverSettings};

use super::solve::{vec_text, Family, SolveArgs, EXIT_BAD_INPUT, EXIT_NOT_SOLVED, EXIT_SOLVED};

const MEASURE: &str = "error = ||r - P_K(r - u - mu ||u_T|| e_N)||_2 / max(||q||, ||r||, ||u||) (Siconos 4.4 fc3d_compute_error); error_paper = the same over ||q||_2 (Acary-Bremond-Huber 2018); error_abs = the numerator";

/// The frictional family of the arguments: `--problem fc2d|fc3d|gfc3d`, or
/// without `--problem` a path whose name says it (`gfc3d`, `fc3d`, `fc2d`,
/// or an `.hdf5` file) and no complementarity family.
pub fn family_of(args: &SolveArgs) -> Option<Family> {
    match args.problem {
        Some(f @ (Family::Fc2d | Family::Fc3d | Family::Gfc3d)) => Some(f),
        Some(_) => None,
        None => {
            if nonsmooth::io::ProblemKind::infer(&args.file).is_some() {
                return None;
            }
            let path = args.file.to_string_lossy().to_ascii_lowercase();
            if path.contains("gfc3d") {
                Some(Family::Gfc3d)
            } else if path.contains("fc3d") || path.ends_with(".hdf5") {
                Some(Family::Fc3d)
            } else if path.contains("fc2d") {
                Some(Family::Fc2d)
            } else {
                None
            }
        }
    }
}

enum Read {
    Local(FrictionProblem),
    Global(GlobalFrictionProblem),
}

fn read(path: &Path, family: Family) -> Result<Read, String> {
    let is_hdf5 = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("hdf5") || e.eq_ignore_ascii_case("h5"));
    let read = if is_hdf5 {
        match read_fclib(path).map_err(|e| e.to_string())? {
            FclibProblem::Local(p) => Read::Local(p),
            FclibProblem::Global(g) => Read::Global(g),
        }
    } else if family == Family::Gfc3d {
        Read::Global(read_global_friction(path).map_err(|e| e.to_string())?)
    } else {
        Read::Local(read_friction(path).map_err(|e| e.to_string())?)
    };
    let dim = match &read {
        Read::Local(p) => p.dim,
        Read::Global(g) => g.dim,
    };
    let expected = if family == Family::Fc2d { 2 } else { 3 };
    if dim != expected {
        return Err(format!(
            "{}: the file holds a problem of dimension {dim}, --problem {} expects {expected}",
            path.display(),
            family_name(family)
        ));
    }
    if family == Family::Gfc3d && matches!(read, Read::Local(_)) {
        return Err(format!(
            "{}: a local problem; use --problem fc3d",
            path.display()
        ));
    }
    Ok(read)
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::Fc2d => "fc2d",
        Family::Gfc3d => "gfc3d",
        _ => "fc3d",
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    file: String,
    problem: &'static str,
    global: bool,
    dim: usize,
    contacts: usize,
    n: usize,
    status: &'static str,
    solver: &'static str,
    requested_solver: &'a str,
    iterations: usize,
    tolerance: f64,
    error: f64,
    error_abs: f64,
    error_paper: f64,
    error_measure: &'static str,
    time_s: f64,
    r: &'a [f64],
    u: &'a [f64],
    #[serde(skip_serializing_if = "Option::is_none")]
    v: Option<&'a [f64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    momentum_residual: Option<f64>,
}

struct Outcome {
    report: SolveReport,
    /// Wall time of the solve (for a global problem: reduction, local
    /// solve and recovery of v).
    time: std::time::Duration,
    errors: FrictionErrors,
    dim: usize,
    r: Vec<f64>,
    u: Vec<f64>,
    v: Option<Vec<f64>>,
    momentum_residual: Option<f64>,
}

fn solve(args: &SolveArgs, family: Family, tolerance: f64) -> Result<Outcome, String> {
    let problem = read(&args.file, family)?;
    let settings = SolverSettings {
        tolerance,
        max_iterations: args.max_iter,
        ..SolverSettings::default()
    };
    let mut solver = friction_solver(&args.solver, settings).map_err(|e| format!("solver: {e}"))?;
    let solver_error = |e: nonsmooth::numerics::NumericsError| format!("solver: {e}");
    Ok(match problem {
        Read::Local(p) => {
            let (mut r, mut u) = (vec![0.0; p.size()], vec![0.0; p.size()]);
            let start = std::time::Instant::now();
            let report = solver.solve(&p, &mut r, &mut u).map_err(solver_error)?;
            Outcome {
                report,
                time: start.elapsed(),
                errors: p.errors(&r, &u),
                dim: p.dim,
                r,
                u,
                v: None,
                momentum_residual: None,
            }
        }
        Read::Global(g) => {
            let start = std::time::Instant::now();
            let sol = g
                .solve_reduced(solver.as_mut(), None)
                .map_err(solver_error)?;
            Outcome {
                report: sol.report,
                time: start.elapsed(),
                errors: sol.errors,
                dim: g.dim,
                r: sol.r,
                u: sol.u,
                v: Some(sol.v),
                momentum_residual: Some(sol.momentum_residual),
            }
        }
    })
}

/// Runs the frictional `nonsmooth solve`; returns its exit status.
pub fn run(args: &SolveArgs, family: Family) -> ExitCode {
    let tolerance = args
        .tolerance
        .unwrap_or(SolverSettings::default().tolerance);
    let out = match solve(args, family, tolerance) {
        Ok(out) => out,
        Err(msg) => {
            eprintln!("nonsmooth solve: error: {msg}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let rep = &out.report;
    let contacts = out.r.len() / out.dim;
    if args.json {
        let json = JsonReport {
            file: args.file.display().to_string(),
            problem: family_name(family),
            global: out.v.is_some(),
            dim: out.dim,
            contacts,
            n: out.r.len(),
            status: rep.status.as_str(),
            solver: rep.solver,
            requested_solver: &args.solver,
            iterations: rep.iterations,
            tolerance,
            error: out.errors.siconos,
            error_abs: out.errors.absolute,
            error_paper: out.errors.paper,
            error_measure: MEASURE,
            time_s: out.time.as_secs_f64(),
            r: &out.r,
            u: &out.u,
            v: out.v.as_deref(),
            momentum_residual: out.momentum_residual,
        };
        match serde_json::to_string(&json) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("nonsmooth solve: error: cannot encode the result as JSON: {e}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        }
    } else {
        let kind = if out.v.is_some() {
            "global, reduced"
        } else {
            "local"
        };
        println!(
            "problem    : {} ({kind}), {contacts} contacts of dimension {} ({})",
            family_name(family),
            out.dim,
            args.file.display()
        );
        println!("status     : {}", rep.status);
        println!("solver     : {} (requested: {})", rep.solver, args.solver);
        println!("iterations : {}", rep.iterations);
        println!("tolerance  : {tolerance:e}");
        println!("error      : {:.6e}", out.errors.siconos);
        println!("error_paper: {:.6e}", out.errors.paper);
        println!("error_abs  : {:.6e}", out.errors.absolute);
        println!("measure    : {MEASURE}");
        println!("time       : {:.6e} s", out.time.as_secs_f64());
        println!("r          : {}", vec_text(&out.r));
        println!("u          : {}", vec_text(&out.u));
        if let Some(v) = &out.v {
            println!("v          : {}", vec_text(v));
        }
    }
    if rep.status.is_solved() {
        ExitCode::from(EXIT_SOLVED)
    } else {
        eprintln!(
            "nonsmooth solve: not solved: status {} (error {:.3e}, tolerance {tolerance:e})",
            rep.status, rep.error
        );
        ExitCode::from(EXIT_NOT_SOLVED)
    }
}
