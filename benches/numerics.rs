//! Benchmark of the numerics layer on the shared Siconos test problems:
//! every solver of each family on every problem, timed over repeated solves
//! from z = 0 with a sized solver (median per solve), printed as a markdown
//! table side by side with the Siconos 4.4 oracle timings committed in
//! tests/oracle/siconos_numerics.json (measured on the same kind of machine).
//!
//! Run: `cargo bench --bench numerics` (release build). Set
//! `NONSMOOTH_BENCH_MD=docs/numerics-benchmark.md` to also write the tables there,
//! and `NONSMOOTH_BENCH_SECONDS` (default 0.05) for the time spent per pair.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nonsmooth::io::{read_problem, Problem, ProblemKind};
use nonsmooth::numerics::lcp::{lcp_solver, LCP_SOLVERS};
use nonsmooth::numerics::mlcp::{mlcp_solver, MLCP_SOLVERS};
use nonsmooth::numerics::relay::{relay_solver, RELAY_SOLVERS};
use nonsmooth::numerics::{Result, SolveReport, SolverSettings};

/// One solve of a sized solver on a fixed problem.
type SolveFn<'a> = Box<dyn FnMut(&mut [f64], &mut [f64]) -> Result<SolveReport> + 'a>;

/// One (problem, solver) measurement.
struct Row {
    solver: String,
    report: Option<SolveReport>,
    median: Option<Duration>,
    refusal: Option<String>,
}

/// Siconos' best result on one problem: (solver, median seconds).
#[derive(Default, Clone)]
struct SiconosBest {
    solved_by: usize,
    fastest: Option<(String, f64)>,
    /// Median time of every solver that solved it.
    solved_times: BTreeMap<String, f64>,
}

fn time_solver(p: &Problem, name: &str, budget: Duration, settings: SolverSettings) -> Row {
    let n = p.size();
    let mut z = vec![0.0; n];
    let mut w = vec![0.0; n];
    let mut run: SolveFn = match p {
        Problem::Lcp(l) => {
            let mut s = lcp_solver(name, settings).expect("known solver");
            Box::new(move |z, w| s.solve(l, z, w))
        }
        Problem::Mlcp(l) => {
            let mut s = mlcp_solver(name, settings).expect("known solver");
            Box::new(move |z, w| s.solve(l, z, w))
        }
        Problem::Relay(l) => {
            let mut s = relay_solver(name, settings).expect("known solver");
            Box::new(move |z, w| s.solve(l, z, w))
        }
    };
    let first = match run(&mut z, &mut w) {
        Ok(r) => r,
        Err(e) => {
            return Row {
                solver: name.to_string(),
                report: None,
                median: None,
                refusal: Some(e.to_string()),
            }
        }
    };
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (start.elapsed() < budget && times.len() < 100_000) {
        z.iter_mut().for_each(|v| *v = 0.0);
        let t = Instant::now();
        let _ = run(&mut z, &mut w);
        times.push(t.elapsed());
    }
    times.sort();
    Row {
        solver: name.to_string(),
        report: Some(first),
        median: Some(times[times.len() / 2]),
        refusal: None,
    }
}

/// A short label for a solver's refusal in a table cell.
fn short_refusal(message: &str) -> &'static str {
    if message.contains("too large") {
        "n/a (size above limit)"
    } else if message.contains("diagonal") {
        "n/a (diagonal ≤ 0)"
    } else if message.contains("not symmetric") {
        "n/a (M not symmetric)"
    } else {
        "n/a"
    }
}

fn fmt_time(d: f64) -> String {
    if d < 1e-3 {
        format!("{:.2} µs", d * 1e6)
    } else if d < 1.0 {
        format!("{:.2} ms", d * 1e3)
    } else {
        format!("{d:.2} s")
    }
}

fn load_oracle(root: &Path) -> BTreeMap<String, SiconosBest> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(root.join("tests/oracle/siconos_numerics.json")) else {
        return out;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return out;
    };
    for p in json["problems"].as_array().into_iter().flatten() {
        let file = p["file"].as_str().unwrap_or_default().to_string();
        let mut best = SiconosBest::default();
        for r in p["results"].as_array().into_iter().flatten() {
            if r["solved"].as_bool() == Some(true) {
                best.solved_by += 1;
                if let Some(t) = r["time_median_s"].as_f64() {
                    let name = r["solver"].as_str().unwrap_or("?").to_string();
                    best.solved_times.insert(name.clone(), t);
                    if best.fastest.as_ref().is_none_or(|(_, bt)| t < *bt) {
                        best.fastest = Some((name, t));
                    }
                }
            }
        }
        out.insert(file, best);
    }
    out
}

fn main() {
    let groups: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |g: &str| groups.is_empty() || groups.iter().any(|a| a == g);
    if run("solvers") {
        solvers();
    }
}

/// The solver tables, beside the Siconos oracle.
fn solvers() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("../shared/data");
    let budget = Duration::from_secs_f64(
        std::env::var("NONSMOOTH_BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.05),
    );
    // The Siconos oracle runs at tolerance 1e-8 on its own normalised measure;
    // the same tolerance here, on the same normalisation.
    let settings = SolverSettings {
        tolerance: 1e-8,
        ..SolverSettings::default()
    };
    let oracle = load_oracle(&root);
    let mut md = String::new();
    let mut summary = String::new();
    writeln!(summary, "| family | solver | solved (error ≤ 1e-8) |").unwrap();
    writeln!(summary, "|---|---|---|").unwrap();
    // Siconos' solver that solves most problems of each family (oracle README).
    for (family, kind, solvers, reference) in [
        ("lcp", ProblemKind::Lcp, LCP_SOLVERS, "LCP_LEMKE"),
        ("mlcp", ProblemKind::Mlcp, MLCP_SOLVERS, "MLCP_FB"),
        ("relay", ProblemKind::Relay, RELAY_SOLVERS, "RELAY_LEMKE"),
    ] {
        let names: Vec<&str> = solvers.split(", ").collect();
        let mut files: Vec<PathBuf> = std::fs::read_dir(data.join(family))
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", data.join(family).display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        files.sort();
        let mut solved_count = vec![0usize; names.len()];
        writeln!(md, "\n### {}\n", family.to_uppercase()).unwrap();
        write!(md, "| problem | n |").unwrap();
        for n in &names {
            write!(md, " {n} |").unwrap();
        }
        writeln!(
            md,
            " Siconos fastest | Siconos solvers that solve it | speed-up vs Siconos fastest | Siconos {reference} | speed-up vs {reference} |"
        )
        .unwrap();
        writeln!(md, "|{}", "---|".repeat(names.len() + 7)).unwrap();
        for f in files {
            let rel = format!("{family}/{}", f.file_name().unwrap().to_string_lossy());
            let problem = match read_problem(&f, kind) {
                Ok(p) => p,
                Err(e) => {
                    writeln!(md, "| {rel} | – | read error: {e} |").unwrap();
                    continue;
                }
            };
            write!(md, "| {rel} | {} |", problem.size()).unwrap();
            let mut default_time = None;
            for (k, name) in names.iter().enumerate() {
                let row = time_solver(&problem, name, budget, settings);
                let cell = match (&row.report, row.median) {
                    (Some(r), Some(t)) if r.status.is_solved() => {
                        solved_count[k] += 1;
                        if *name == "default" {
                            default_time = Some(t.as_secs_f64());
                        }
                        format!("{} ({:.0e})", fmt_time(t.as_secs_f64()), r.error)
                    }
                    (Some(r), _) => format!("{} ({:.0e})", r.status, r.error),
                    _ => short_refusal(row.refusal.as_deref().unwrap_or_default()).to_string(),
                };
                write!(md, " {cell} |").unwrap();
                eprintln!("{rel:45} {:10} {}", row.solver, cell);
            }
            let best = oracle.get(&rel).cloned().unwrap_or_default();
            let (sic, ratio) = match (&best.fastest, default_time) {
                (Some((s, t)), Some(d)) => {
                    (format!("{s} {}", fmt_time(*t)), format!("{:.1}×", t / d))
                }
                (Some((s, t)), None) => (format!("{s} {}", fmt_time(*t)), "not solved here".into()),
                (None, Some(_)) => ("none solved".into(), "only here".into()),
                (None, None) => ("none solved".into(), "neither".into()),
            };
            let (refcell, refratio) = match (best.solved_times.get(reference), default_time) {
                (Some(t), Some(d)) => (fmt_time(*t), format!("{:.1}×", t / d)),
                (Some(t), None) => (fmt_time(*t), "not solved here".into()),
                (None, Some(_)) => ("not solved".into(), "only here".into()),
                (None, None) => ("not solved".into(), "neither".into()),
            };
            writeln!(
                md,
                " {sic} | {} | {ratio} | {refcell} | {refratio} |",
                best.solved_by
            )
            .unwrap();
        }
        for (k, name) in names.iter().enumerate() {
            writeln!(summary, "| {family} | {name} | {} |", solved_count[k]).unwrap();
        }
    }
    let out = format!(
        "# Numerics benchmark: shared Siconos problems, side by side with Siconos 4.4\n\n\
         Generated by `NONSMOOTH_BENCH_SECONDS=0.1 NONSMOOTH_BENCH_MD=docs/numerics-benchmark.md cargo bench --bench numerics` \
         (release build, one core). Each cell: median wall time of one solve from z = 0 by a solver already sized \
         for the problem, and in brackets the normalised error (Siconos' normalisation; the MLCP column uses \
         ours, see docs/numerics.md); otherwise the status. Tolerance 1e-8 as in the oracle. Siconos columns come from \
         tests/oracle/siconos_numerics.json (Siconos 4.4.0, Debian python3-siconos, same 2-core machine type, \
         each solver call timed from Python, so about 0.1–0.3 µs of call overhead is included on their side: \
         sub-microsecond ratios are indicative only). \"Siconos fastest\" is, per problem, the fastest of every Siconos \
         solver that solves it (up to 19 solvers); the reference solver is Siconos' most robust of the family \
         (most problems solved): LCP_LEMKE, MLCP_FB, RELAY_LEMKE. \
         A speed-up is Siconos' time divided by ours: above 1 this library is faster.\n\n## Problems solved (error ≤ 1e-8)\n\n\
         Siconos 4.4, best solver per family: LCP 15 of 20 (LEMKE, NEWTON_FB_FBLSA, NEWTON_MIN_FBLSA; 17 dense files, \
         the 3 block files only by NSGS_SBM), MLCP 16 of 17 (FB), relay 7 of 7 (LEMKE). \
         The one LCP no solver solves, lcp_Pang_isolated_sol_perturbed, has no solution.\n\n{summary}{md}"
    );
    println!("{out}");
    if let Ok(path) = std::env::var("NONSMOOTH_BENCH_MD") {
        std::fs::write(&path, &out).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        eprintln!("tables written to {path}");
    }
}
