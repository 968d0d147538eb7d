//! `nonsmooth solve` end to end: runs the built binary and checks its answer
//! against the problem data, independently of the solver.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nalgebra::DMatrix;
use nonsmooth::io::{read_lcp, read_mlcp, read_relay};
use serde_json::Value;

const TOL: f64 = 1e-8;

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn shared(rel: &str) -> PathBuf {
    let dir = manifest().join("../shared/data");
    assert!(
        dir.is_dir(),
        "the shared reference data folder {} is missing (needed beside the crate)",
        dir.display()
    );
    dir.join(rel)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(args)
        .current_dir(manifest())
        .output()
        .expect("the nonsmooth binary runs")
}

fn json_of(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.trim().lines().count(),
        1,
        "one JSON object on one line: {text}"
    );
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"))
}

fn vector(v: &Value, key: &str) -> Vec<f64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is not an array in {v}"))
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// M z + q, computed here.
fn affine(m: &DMatrix<f64>, z: &[f64], q: &[f64]) -> Vec<f64> {
    (0..q.len())
        .map(|i| q[i] + (0..z.len()).map(|j| m[(i, j)] * z[j]).sum::<f64>())
        .collect()
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= TOL * (1.0 + y.abs()),
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

/// 0 ≤ z ⊥ w ≥ 0 to TOL.
fn assert_complementary(z: &[f64], w: &[f64]) {
    for i in 0..z.len() {
        assert!(
            z[i] >= -TOL && w[i] >= -TOL,
            "sign at {i}: z = {}, w = {}",
            z[i],
            w[i]
        );
        assert!(
            z[i].min(w[i]).abs() <= TOL,
            "complementarity at {i}: z = {}, w = {}",
            z[i],
            w[i]
        );
    }
}

fn assert_common_keys(v: &Value) {
    for key in [
        "status",
        "solver",
        "iterations",
        "error",
        "error_abs",
        "time_s",
        "z",
        "w",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}` in {v}");
    }
    assert!(v["error"].as_f64().unwrap() <= 1e-10);
}

#[test]
fn bundled_lcp_json() {
    let file = "examples/problems/lcp_3x3.dat";
    let out = run(&["solve", file, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_common_keys(&v);
    assert_eq!(v["status"], "solved");
    let (z, w) = (vector(&v, "z"), vector(&v, "w"));
    let lcp = read_lcp(manifest().join(file)).unwrap();
    let w_here = affine(&lcp.m.to_dense(), &z, &lcp.q);
    assert_close(&w, &w_here, "w");
    assert_complementary(&z, &w_here);
    // The solution stated in the file's comment.
    assert_close(&z, &[0.5, 0.0, 1.5], "z");
}

#[test]
fn bundled_relay_json() {
    let file = "examples/problems/relay_2x2.dat";
    let out = run(&[
        "solve",
        file,
        "--json",
        "--solver",
        "newton-fb",
        "--tol",
        "1e-12",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_common_keys(&v);
    let (z, w) = (vector(&v, "z"), vector(&v, "w"));
    let relay = read_relay(manifest().join(file)).unwrap();
    let w_here = affine(&relay.m.to_dense(), &z, &relay.q);
    assert_close(&w, &w_here, "w");
    for i in 0..z.len() {
        let (lb, ub) = (relay.lb[i], relay.ub[i]);
        assert!(z[i] >= lb - TOL && z[i] <= ub + TOL, "box at {i}");
        if z[i] > lb + TOL && z[i] < ub - TOL {
            assert!(w_here[i].abs() <= TOL, "interior component {i} needs w = 0");
        } else if z[i] <= lb + TOL {
            assert!(w_here[i] >= -TOL, "lower bound {i} needs w >= 0");
        } else {
            assert!(w_here[i] <= TOL, "upper bound {i} needs w <= 0");
        }
    }
    assert_close(&z, &[1.0, -0.7], "z");
}

#[test]
fn shared_block_sparse_lcp_json() {
    let file = shared("lcp/lcp_ortiz_block.dat");
    let out = run(&["solve", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_common_keys(&v);
    let (z, w) = (vector(&v, "z"), vector(&v, "w"));
    let lcp = read_lcp(&file).unwrap();
    let w_here = affine(&lcp.m.to_dense(), &z, &lcp.q);
    assert_close(&w, &w_here, "w");
    assert_complementary(&z, &w_here);
}

#[test]
fn shared_mlcp_json_has_u_and_v() {
    let file = shared("mlcp/m3n2_mlcp.dat");
    let out = run(&["solve", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_common_keys(&v);
    let (z, w, u, vv) = (
        vector(&v, "z"),
        vector(&v, "w"),
        vector(&v, "u"),
        vector(&v, "v"),
    );
    let mlcp = read_mlcp(&file).unwrap();
    let n = mlcp.n_eq;
    assert_eq!((u.len(), vv.len()), (n, z.len() - n));
    assert_eq!([u.clone(), vv.clone()].concat(), z);
    let w_here = affine(&mlcp.m.to_dense(), &z, &mlcp.q);
    assert_close(&w, &w_here, "w");
    for (i, r) in w_here[..n].iter().enumerate() {
        assert!(r.abs() <= TOL, "equality {i}: residual {r}");
    }
    assert_complementary(&vv, &w_here[n..]);
}

#[test]
fn text_output_names_the_fields() {
    let out = run(&[
        "solve",
        "examples/problems/lcp_3x3.dat",
        "--solver",
        "lemke",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for key in [
        "status",
        "solver",
        "iterations",
        "error ",
        "error_abs",
        "time",
        "z ",
        "w ",
    ] {
        assert!(text.contains(key), "missing {key:?} in:\n{text}");
    }
}

#[test]
fn unsolved_problem_exits_1() {
    let file = shared("lcp/lcp_mmc.dat");
    let out = run(&[
        "solve",
        file.to_str().unwrap(),
        "--solver",
        "pgs",
        "--max-iter",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["status"], "iteration_limit");
    assert!(String::from_utf8_lossy(&out.stderr).contains("iteration_limit"));
}

#[test]
fn bad_file_exits_2_naming_the_place() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_solve");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("broken_lcp.dat");
    std::fs::write(&file, "2\n0\n2\n2\n2 2\n1 0\n0 1\n-1 abc\n").unwrap();
    let out = run(&["solve", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:8:4", file.display())), "{err}");
    assert!(err.contains("q[1]") && err.contains("abc"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn other_bad_input_exits_2() {
    // Family not inferable from the path.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_solve");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("problem.dat");
    std::fs::copy(manifest().join("examples/problems/lcp_3x3.dat"), &file).unwrap();
    // Relative to the crate (the binary's working directory), so that a
    // family name in the checkout's own path (say /work/wt-sparse-lcp) does
    // not decide.
    let file = file.strip_prefix(manifest()).unwrap_or(&file);
    let out = run(&["solve", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--problem"));
    // ... but fine with --problem.
    let out = run(&["solve", file.to_str().unwrap(), "--problem", "lcp"]);
    assert_eq!(out.status.code(), Some(0));
    // Missing file, bad settings, unknown solver.
    let lcp = "examples/problems/lcp_3x3.dat";
    for args in [
        vec!["solve", "examples/problems/no_such_lcp.dat"],
        vec!["solve", lcp, "--tol", "0"],
        vec!["solve", lcp, "--tol", "-1e-3"],
        vec!["solve", lcp, "--tol", "inf"],
        vec!["solve", lcp, "--max-iter", "0"],
        vec!["solve", lcp, "--solver", "nope"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_lists_solvers_and_exit_codes() {
    let out = run(&["solve", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        nonsmooth::numerics::lcp::LCP_SOLVERS,
        nonsmooth::numerics::mlcp::MLCP_SOLVERS,
        nonsmooth::numerics::relay::RELAY_SOLVERS,
        "Exit status",
        "||min(z, w)||_2 / ||q||_2",
        "(1 + ||q||_2)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in --help");
    }
}
