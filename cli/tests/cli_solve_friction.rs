//! `nonsmooth solve --problem fc2d|fc3d|gfc3d` end to end: runs the built
//! binary and checks its JSON answer against the problem data (the natural
//! map recomputed here), with the exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nonsmooth::io::friction_text::{read_friction, read_global_friction};
use serde_json::Value;

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn shared(rel: &str) -> PathBuf {
    manifest().join("../shared/data").join(rel)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Natural map of one contact, written independently: project
/// x = r − û on the cone by its geometry (half-angle atan μ).
fn natural_map(d: usize, mu: &[f64], r: &[f64], u: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &m) in mu.iter().enumerate() {
        let (ri, ui) = (&r[i * d..i * d + d], &u[i * d..i * d + d]);
        let ut = ui[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut x: Vec<f64> = (0..d).map(|k| ri[k] - ui[k]).collect();
        x[0] -= m * ut;
        let rho = x[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
        let (theta, angle) = (m.atan(), rho.atan2(x[0]));
        let p: Vec<f64> = if angle <= theta {
            x.clone()
        } else if angle >= std::f64::consts::FRAC_PI_2 + theta {
            vec![0.0; d]
        } else {
            let len = x[0] * theta.cos() + rho * theta.sin();
            let mut p = vec![len * theta.cos()];
            p.extend(x[1..].iter().map(|v| len * theta.sin() * v / rho));
            p
        };
        s += (0..d).map(|k| (ri[k] - p[k]).powi(2)).sum::<f64>();
    }
    s.sqrt()
}

#[test]
fn local_3d_json_answer_satisfies_the_problem() {
    let file = shared("fc3d/Capsules-i101-404.dat");
    let out = run(&[
        "solve",
        file.to_str().unwrap(),
        "--problem",
        "fc3d",
        "--tol",
        "1e-8",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["status"], "solved");
    let p = read_friction(&file).unwrap();
    let r = floats(&j["r"]);
    let mut u = p.q.clone();
    let w = p.w.to_dense();
    for i in 0..u.len() {
        u[i] += (0..r.len()).map(|k| w[(i, k)] * r[k]).sum::<f64>();
    }
    let n2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let e = natural_map(3, &p.mu, &r, &u) / n2(&p.q).max(n2(&r)).max(n2(&u));
    assert!(e <= 1e-8, "{e}");
    assert!((j["error"].as_f64().unwrap() - e).abs() <= 1e-6 * e + 1e-16);
}

#[test]
fn global_json_carries_v_and_the_2d_family_is_inferred() {
    let file = shared("gfc3d/GFC3D_TwoRods1.dat");
    let out = run(&[
        "solve",
        file.to_str().unwrap(),
        "--problem",
        "gfc3d",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    let g = read_global_friction(&file).unwrap();
    let (v, r, u) = (floats(&j["v"]), floats(&j["r"]), floats(&j["u"]));
    assert_eq!(v.len(), g.f.len());
    // u = Hᵀ v + w, recomputed here.
    let h = g.h.to_dense();
    for (k, uk) in u.iter().enumerate() {
        let x = g.w[k] + (0..v.len()).map(|i| h[(i, k)] * v[i]).sum::<f64>();
        assert!((x - uk).abs() <= 1e-9 * (1.0 + x.abs()));
    }
    let n2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(natural_map(3, &g.mu, &r, &u) <= 1e-9 * n2(&r).max(n2(&u)).max(1.0));
    // A path under fc2d/ is solved as fc2d without --problem.
    let f2 = shared("fc2d/FrictionContactProblem00031.dat");
    let j2 = json(&run(&["solve", f2.to_str().unwrap(), "--json"]));
    assert_eq!(j2["problem"], "fc2d");
    assert_eq!(j2["dim"], 2);
}

#[test]
fn exit_codes() {
    let f = shared("fclib/local_problem_test.hdf5");
    let out = run(&[
        "solve",
        f.to_str().unwrap(),
        "--problem",
        "fc3d",
        "--max-iter",
        "3",
        "--solver",
        "nsgs",
    ]);
    assert_eq!(out.status.code(), Some(1), "not solved in 3 sweeps");
    let out = run(&[
        "solve",
        f.to_str().unwrap(),
        "--problem",
        "fc3d",
        "--solver",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let f2 = shared("fc2d/FrictionContactProblem00031.dat");
    let out = run(&["solve", f2.to_str().unwrap(), "--problem", "fc3d"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a 2D file is not an fc3d problem"
    );
    let out = run(&["solve", "/nonexistent/fc3d.dat", "--problem", "fc3d"]);
    assert_eq!(out.status.code(), Some(2));
}
