//! `nonsmooth run` on the bundled control examples: closed loops built from
//! scenario files with the controllers crate's laws, their records, the
//! event log, and parameters (law, delays) changed with `--set`.

use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .arg("run")
        .args(args)
        .current_dir(root())
        .output()
        .expect("the nonsmooth binary runs")
}

fn csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let k = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[k]).collect()
}

fn run_example(name: &str, sets: &[&str], dir: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut args = vec![format!("examples/{name}.toml")];
    for s in sets {
        args.push("--set".into());
        args.push(s.to_string());
    }
    args.push("--out".into());
    args.push(dir.display().to_string());
    args.push("--quiet".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    csv(&dir.join(format!("{name}.csv")))
}

#[test]
fn implicit_smc_on_the_double_integrator_reaches_the_surface_at_the_analytic_time() {
    let dir = tempfile::tempdir().unwrap();
    let (h, rows) = run_example("smc_double_integrator", &[], dir.path());
    let t = column(&h, &rows, "t");
    let sigma = column(&h, &rows, "controller.sigma[0]");
    let us = column(&h, &rows, "controller.u_s[0]");
    // σ̇ = −α until σ = 0: σ(0) = 1, α = 1 → t = 1, reached at the control
    // instant t = 1.00 (σ_k = 1 − kα(T + T²/2) > 0 for k < 100).
    let reach = t
        .iter()
        .zip(&sigma)
        .find(|(_, s)| s.abs() <= 1e-9)
        .map(|(t, _)| *t)
        .unwrap();
    assert!((reach - 1.0).abs() < 1e-12, "reached at {reach}");
    for k in 0..t.len() {
        if t[k] >= reach {
            assert!(sigma[k].abs() <= 1e-9, "t = {}: σ = {}", t[k], sigma[k]);
            assert!(us[k].abs() < 1.0, "t = {}: u_s = {}", t[k], us[k]);
        }
    }
}

#[test]
fn the_law_and_the_delays_are_scenario_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let (h, rows) = run_example("smc_double_integrator", &["law=smc_explicit"], dir.path());
    let t = column(&h, &rows, "t");
    let us = column(&h, &rows, "controller.u_s[0]");
    // The explicit law chatters: u_s = ±α after reaching the surface.
    let late: Vec<f64> = t
        .iter()
        .zip(&us)
        .filter(|(t, _)| **t > 2.0)
        .map(|(_, u)| *u)
        .collect();
    assert!(late.iter().all(|u| (u.abs() - 1.0).abs() < 1e-12));
    assert!(late.iter().any(|u| *u > 0.0) && late.iter().any(|u| *u < 0.0));

    // An actuator delay of 3 periods shifts the applied input: the applied
    // u at t equals the computed u_eq + u_s three periods earlier.
    let (h, rows) = run_example(
        "smc_double_integrator",
        &["actuator_delay=0.03", "sensor_delay=0.02"],
        dir.path(),
    );
    let t = column(&h, &rows, "t");
    let u = column(&h, &rows, "controller.u[0]");
    let y = column(&h, &rows, "sensor.y[0]");
    let x = column(&h, &rows, "plant.x[0]");
    // The delivered measurement at t is x(t − 0.02), held between instants.
    for k in 0..t.len() {
        let t_meas = ((t[k] - 0.02) / 0.01 + 1e-9).floor() * 0.01;
        if t_meas >= 0.0 {
            let j = (t_meas / 1e-3).round() as usize;
            assert_eq!(y[k], x[j], "t = {}", t[k]);
        }
    }
    // Before the first delayed application the input is u0 = 0.
    for k in 0..t.len() {
        if t[k] < 0.03 - 1e-12 {
            assert_eq!(u[k], 0.0);
        }
    }
    assert!(u.iter().any(|v| *v != 0.0));
}

#[test]
fn control_events_appear_in_the_event_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.csv");
    let out = run(&[
        "examples/smc_double_integrator.toml",
        "--set",
        "t_end=0.05",
        "--set",
        "sensor_delay=0.01",
        "--out",
        &dir.path().display().to_string(),
        "--events",
        &log.display().to_string(),
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "t,kind,object");
    let at = |t: &str| -> Vec<&str> {
        lines[1..]
            .iter()
            .filter(|l| l.split(',').next() == Some(t))
            .copied()
            .collect()
    };
    assert_eq!(
        at("0.01"),
        [
            "0.01,time_discretisation,step",
            "0.01,sensor,sensor",
            "0.01,sensor,sensor.delivery",
            "0.01,actuator,controller",
            "0.01,output,output"
        ]
    );
    assert_eq!(
        at("0"),
        [
            "0,sensor,sensor",
            "0,actuator,controller",
            "0,output,output"
        ]
    );
}

#[test]
fn every_bundled_control_example_runs_and_converges() {
    let dir = tempfile::tempdir().unwrap();
    // (example, column, final bound)
    let cases = [
        ("smc_tutorial", "controller.sigma[0]", 1e-2),
        ("pid", "plant.x[0]", 0.1),
        ("twisting", "plant.x[0]", 1e-3),
        ("super_twisting", "plant.x[0]", 1e-2),
    ];
    for (name, col, bound) in cases {
        let (h, rows) = run_example(name, &[], dir.path());
        let v = column(&h, &rows, col);
        let start = v[0].abs();
        let end = v.last().unwrap().abs();
        assert!(
            end < bound && end < start,
            "{name}: {col} from {start} to {end}"
        );
    }
    // Observers start from x̂ = 0 while x(0) = (1, 0) (the sliding observer
    // takes x̂₁ = y at once; its velocity estimate lags while x moves).
    let (h, rows) = run_example("observer", &[], dir.path());
    let x: Vec<Vec<f64>> = (0..2)
        .map(|i| column(&h, &rows, &format!("plant.x[{i}]")))
        .collect();
    for obs in ["observer", "sliding"] {
        let err = |k: usize| {
            (0..2)
                .map(|i| (x[i][k] - column(&h, &rows, &format!("{obs}.xhat[{i}]"))[k]).abs())
                .fold(0.0, f64::max)
        };
        let early = (0..50).map(err).fold(0.0, f64::max);
        assert!(
            early > 0.05,
            "{obs}: largest error over the first 0.5 s {early}"
        );
        let end = err(rows.len() - 1);
        assert!(end < 1e-6, "{obs}: final error {end}");
    }
}

#[test]
fn implicit_smc_gives_the_same_sampled_trajectory_under_both_strategies() {
    // The plant is linear between control instants: time-stepping with the
    // exact zero-order hold and the event-driven integrator (error control,
    // exact stops at every control instant) must agree there, up to the
    // integrator's tolerance.
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for strategy in ["time-stepping", "event-driven"] {
        let sub = dir.path().join(strategy);
        let out = run(&[
            "examples/smc_double_integrator.toml",
            "--strategy",
            strategy,
            "--set",
            "sensor_delay=0.02",
            "--out",
            &sub.display().to_string(),
            "--quiet",
        ]);
        assert!(
            out.status.success(),
            "{strategy}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        runs.push(csv(&sub.join("smc_double_integrator.csv")));
    }
    let ((h1, a), (h2, b)) = (&runs[0], &runs[1]);
    assert_eq!(h1, h2);
    assert_eq!(a.len(), b.len());
    let mut compared = 0;
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x[0], y[0], "the same output instants");
        if ((x[0] * 100.0).round() - x[0] * 100.0).abs() < 1e-9 {
            for (p, q) in x.iter().zip(y) {
                assert!((p - q).abs() <= 1e-9, "t = {}: {p} vs {q}", x[0]);
            }
            compared += 1;
        }
    }
    assert!(compared >= 500, "{compared} control instants compared");
}

/// examples/boost_smc.toml: the boost converter from a netlist under the
/// voltage-mode implicit sliding-mode law, the load resistance halved at
/// t_load = 5 ms (set to 4 ms here). One row per switching instant t_k.
/// Before the step v_k = v_ref up to the start transient (10 mV: the mean
/// current exceeds i_ff by half the ripple until the integral term takes it
/// back); the step makes v dip (C dv/dt = V_in i/v − v_ref/R' at first);
/// afterwards v_k is back at v_ref and the inductor current has doubled, by
/// power balance: the mean current over a period, i_k + V_in d T_s/(2L)
/// (σ_k ≈ 0, a triangle of rise V_in d T_s/L), equals v̄²/(R' V_in) with
/// R' = R/2, v̄ ≈ v_ref (v_k exceeds the period's mean by about half the
/// output ripple, 0.05 V: 0.5 % on the current, inside the 1 % tolerance).
#[test]
fn boost_smc_example_rejects_the_load_step() {
    let dir = tempfile::tempdir().unwrap();
    let (h, rows) = run_example("boost_smc", &["t_load=4e-3"], dir.path());
    let t = column(&h, &rows, "t");
    let v = column(&h, &rows, "boost.v(C1)");
    let i = column(&h, &rows, "boost.i(L1)");
    let duty = column(&h, &rows, "gate.duty[0]");
    let sigma = column(&h, &rows, "gate.sigma[0]");
    let load = column(&h, &rows, "load_step.u[0]");
    assert_eq!(rows.len(), 1601, "one row per 10 µs over 16 ms");
    let k1 = t.iter().position(|&t| t >= 4e-3 - 1e-12).unwrap();
    assert!(load[..k1].iter().all(|&u| u == 0.0) && load[k1..].iter().all(|&u| u == 1.0));
    for k in k1 - 100..k1 {
        assert!((v[k] - 20.0).abs() < 1e-2, "before: v({}) = {}", t[k], v[k]);
    }
    let dip = v[k1..].iter().fold(f64::INFINITY, |a, &b| a.min(b));
    assert!(dip < 19.0, "the step is seen: v down to {dip}");
    let n = rows.len();
    for k in n - 100..n {
        assert!((v[k] - 20.0).abs() < 0.02, "after: v({}) = {}", t[k], v[k]);
        assert!(sigma[k].abs() < 2.5e-3, "σ = {} at {}", sigma[k], t[k]);
        let i_mean = i[k] + 10.0 * duty[k] * 1e-5 / (2.0 * 1e-3);
        let i_power = 20.0 * 20.0 / (10.0 * 10.0);
        assert!(
            (i_mean - i_power).abs() < 0.01 * i_power,
            "after: mean i {i_mean} vs {i_power}"
        );
    }
}
