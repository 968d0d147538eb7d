//! The woodpecker toy (`examples/woodpecker.toml`: Glocker's model, three
//! 2D Newton impact–friction contacts, Moreau–Jean θ = γ = 1/2) against a
//! Siconos 4.4 run of the same model and step
//! (`scenario/tests/data/woodpecker_siconos.py`, its output committed
//! beside it), its limit cycle, and its energy balance recomputed from the
//! recorded q, v and impulses.

use std::path::{Path, PathBuf};

use nonsmooth_scenario::{BuiltScenario, Scenario};

/// Model constants of the example (Glocker 1995), for the oracles.
const M_M: f64 = 0.0003;
const J_M: f64 = 5.0e-9;
const M_S: f64 = 0.0045;
const J_S: f64 = 7.0e-7;
const R_M: f64 = 0.0031;
const H_M: f64 = 0.0058;
const L_M: f64 = 0.010;
const L_G: f64 = 0.015;
const L_S: f64 = 0.0201;
const H_S: f64 = 0.02;
const C_PHI: f64 = 0.0056;
const G: f64 = 9.81;
const STEP: f64 = 2e-5;

fn manifest(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every step's row of a run, read by column name.
struct Run {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Run {
    fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }
    /// q (3), v (3) of row k.
    fn state(&self, k: usize) -> [f64; 6] {
        let c = self.col("toy.q[0]");
        let d = self.col("toy.v[0]");
        let r = &self.rows[k];
        [r[c], r[c + 1], r[c + 2], r[d], r[d + 1], r[d + 2]]
    }
    /// The impulse [P_N, P_T] of contact `name` over the step ending at row k.
    fn impulse(&self, name: &str, k: usize) -> [f64; 2] {
        let c = self.col(&format!("{name}.lambda[0]"));
        [self.rows[k][c], self.rows[k][c + 1]]
    }
}

fn built(overrides: &[(&str, f64)]) -> BuiltScenario {
    let mut s = Scenario::from_file(manifest("../examples/woodpecker.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    for (k, v) in overrides {
        s.set_parameter(k, *v).unwrap();
    }
    s.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `b`, whose step is `h`, recording every step.
fn run(b: &BuiltScenario, h: f64) -> Run {
    let mut sim = b.control_loop().expect("the simulation starts");
    let mut rows = Vec::new();
    let mut row = vec![0.0; b.header().len()];
    // Every instant of the run (t0, then each step), whatever `[output] every`.
    sim.run(|s| {
        b.row(s, &mut row);
        rows.push(row.clone());
    })
    .expect("the run succeeds");
    for (k, r) in rows.iter().enumerate() {
        assert!(
            (r[0] - k as f64 * h).abs() <= 1e-12,
            "row {k} at t = {}",
            r[0]
        );
    }
    Run {
        header: b.header().iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// A committed CSV of the Siconos script: `#` comment, header, rows.
fn siconos(name: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let path = manifest(&format!("tests/data/{name}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}

/// The steps where a beak impact starts: P_N > 0 after a step without.
fn beak_impacts(r: &Run) -> Vec<usize> {
    let c = r.col("beak.lambda[0]");
    (1..r.rows.len())
        .filter(|&k| r.rows[k][c] > 0.0 && r.rows[k - 1][c] == 0.0)
        .collect()
}

/// Period and mean descent speed over impacts `ks` (steps): the mean time
/// between impacts and −Δy/Δt from the first to the last.
fn period_and_speed(
    ks: &[usize],
    t: impl Fn(usize) -> f64,
    y: impl Fn(usize) -> f64,
) -> (f64, f64) {
    let (a, b) = (ks[0], ks[ks.len() - 1]);
    let span = t(b) - t(a);
    (span / (ks.len() - 1) as f64, -(y(b) - y(a)) / span)
}

#[test]
fn woodpecker_follows_siconos_over_its_first_two_cycles() {
    let r = run(&built(&[("t_end", 0.3)]), STEP);
    assert_eq!(r.rows.len(), 15001);
    let (header, reference) = siconos("woodpecker_siconos.csv");
    assert_eq!(header[1..7], r.header[1..7]);
    assert_eq!(reference.len(), 151);
    // Both solve the same one-step problems (ours to 1e-10, Siconos' NSGS to
    // 1e-14); the runs differ by rounding, which the stick–slip transitions
    // carry along: 9e-13 rad/s at most over these 0.3 s (15 000 steps).
    let mut worst = 0.0f64;
    for s in &reference {
        let k = (s[0] / STEP).round() as usize;
        assert!((r.rows[k][0] - s[0]).abs() <= 1e-12);
        let ours = r.state(k);
        for i in 0..6 {
            worst = worst.max((ours[i] - s[1 + i]).abs());
        }
    }
    println!("largest difference with Siconos over 0.3 s: {worst:.2e}");
    assert!(worst <= 1e-10, "largest difference {worst:e}");
}

#[test]
fn woodpecker_reaches_the_siconos_limit_cycle_period_and_descent_speed() {
    let r = run(&built(&[("t_end", 1.5)]), STEP);
    let ks = beak_impacts(&r);
    let (_, reference) = siconos("woodpecker_siconos_beak.csv");
    // One beak impact per cycle, at the very steps of Siconos' run.
    let theirs: Vec<usize> = reference.iter().map(|s| s[0] as usize).collect();
    assert_eq!(ks, theirs, "beak impact steps");
    for (s, &k) in reference.iter().zip(&ks) {
        let ours = r.state(k);
        for i in 0..6 {
            let tol = 1e-9 * (1.0 + s[2 + i].abs());
            assert!(
                (ours[i] - s[2 + i]).abs() <= tol,
                "step {k}: {ours:?} vs {s:?}"
            );
        }
        let p = r.impulse("beak", k);
        assert!((p[0] - s[8]).abs() <= 1e-9 * s[8] && (p[1] - s[9]).abs() <= 1e-9 * s[8]);
    }
    let t = |k: usize| r.rows[k][0];
    let y = |k: usize| r.state(k)[0];
    let (period, speed) = period_and_speed(&ks, t, y);
    let (sp, ss) = period_and_speed(
        &(0..reference.len()).collect::<Vec<_>>(),
        |i| reference[i][1],
        |i| reference[i][2],
    );
    println!("period {period:.6} s (Siconos {sp:.6}), descent {speed:.6} m/s (Siconos {ss:.6})");
    assert!((period - sp).abs() <= 1e-12 && (speed - ss).abs() <= 1e-9 * ss);

    // The limit cycle: from the first impact on, every cycle repeats the
    // same one up to the grid. An impact is caught at the first step whose
    // gap (with γ = 1/2) is closed, so its instant and state jitter by one
    // step: φ_S within h|φ̇_S| (φ̇_S ≈ 17 rad/s before the impact) of the
    // contact angle (l_M + l_G − l_S − r_0)/h_S = 0.12 rad, the cycle's
    // length within a few steps (each stick–slip transition also snaps to
    // the grid), its velocities within 2 %.
    let contact = (L_M + L_G - L_S - 0.0025) / H_S;
    let first = r.state(ks[0]);
    let mut lengths = Vec::new();
    let mut drops = Vec::new();
    for w in ks.windows(2) {
        let x = r.state(w[1]);
        assert!(
            (x[2] - contact).abs() <= STEP * 17.5,
            "φ_S {} at step {}",
            x[2],
            w[1]
        );
        for i in 3..6 {
            assert!(
                (x[i] - first[i]).abs() <= 0.02 * first[i].abs(),
                "v[{}] {} vs {} at step {}",
                i - 3,
                x[i],
                first[i],
                w[1]
            );
        }
        lengths.push((w[1] - w[0]) as f64 * STEP);
        drops.push(y(w[0]) - y(w[1]));
    }
    let spread = |v: &[f64]| {
        v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
    };
    assert!(spread(&lengths) <= 20.0 * STEP, "cycle lengths {lengths:?}");
    let mean_drop = drops.iter().sum::<f64>() / drops.len() as f64;
    assert!(
        spread(&drops) <= 0.02 * mean_drop,
        "drops per cycle {drops:?}"
    );
    // It goes down: 19.5 mm per cycle of 0.146 s.
    assert!(mean_drop > 0.0 && speed > 0.0);

    // The same cycle with half the step: the scheme converges to the
    // model's cycle (within the one-step jitter of the period, and 1 % of
    // the descent speed).
    let half = run(&built(&[("t_end", 1.5), ("step", STEP / 2.0)]), STEP / 2.0);
    let kh = beak_impacts(&half);
    let (ph, vh) = period_and_speed(&kh[1..], |k| half.rows[k][0], |k| half.state(k)[0]);
    println!("h/2: period {ph:.6} s, descent {vh:.6} m/s");
    assert!((ph - period).abs() <= 2.0 * STEP, "period {ph} vs {period}");
    assert!((vh - speed).abs() <= 0.01 * speed, "speed {vh} vs {speed}");
}

/// E = ½ vᵀ M v + ½ qᵀ K q − Fᵀ q: kinetic, spring and gravity energy.
fn energy(x: &[f64; 6]) -> f64 {
    let m = [
        [M_M + M_S, M_S * L_M, M_S * L_G],
        [M_S * L_M, J_M + M_S * L_M * L_M, M_S * L_M * L_G],
        [M_S * L_G, M_S * L_M * L_G, J_S + M_S * L_G * L_G],
    ];
    let (q, v) = (&x[..3], &x[3..]);
    let mut kinetic = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            kinetic += 0.5 * v[i] * m[i][j] * v[j];
        }
    }
    let spring = 0.5 * C_PHI * (q[1] - q[2]).powi(2);
    let gravity = G * ((M_M + M_S) * q[0] + M_S * L_M * q[1] + M_S * L_G * q[2]);
    kinetic + spring + gravity
}

#[test]
fn woodpecker_energy_goes_only_into_friction_and_impacts() {
    let r = run(&built(&[("t_end", 1.5)]), STEP);
    // The contacts' rows [normal; tangent] of the example.
    let contacts: [(&str, [[f64; 3]; 2]); 3] = [
        ("beak", [[0.0, 0.0, -H_S], [1.0, L_M, L_G - L_S]]),
        ("sleeve_top", [[0.0, H_M, 0.0], [1.0, R_M, 0.0]]),
        ("sleeve_bottom", [[0.0, -H_M, 0.0], [1.0, R_M, 0.0]]),
    ];
    // The size of E over the run (about 10 mJ), for the rounding bounds.
    let scale = (0..r.rows.len())
        .map(|k| energy(&r.state(k)).abs())
        .fold(0.0, f64::max);
    let (mut worst_gain, mut worst_identity) = (f64::MIN, 0.0f64);
    for k in 1..r.rows.len() {
        let (a, b) = (r.state(k - 1), r.state(k));
        let de = energy(&b) - energy(&a);
        // θ = 1/2 on a linear system: q_{k+1} − q_k = h(v_k + v_{k+1})/2
        // and forces at the mid-point, so the step's energy change is the
        // work of the contact impulses, ΔE = Σ P·(U_k + U_{k+1})/2 with
        // U = H v.
        let mut work = 0.0;
        for (name, h) in &contacts {
            let p = r.impulse(name, k);
            for row in 0..2 {
                let u = |x: &[f64; 6]| (0..3).map(|i| h[row][i] * x[3 + i]).sum::<f64>();
                work += p[row] * 0.5 * (u(&a) + u(&b));
            }
        }
        worst_identity = worst_identity.max((de - work).abs());
        worst_gain = worst_gain.max(de);
    }
    println!("largest step gain {worst_gain:.2e} J, identity residual {worst_identity:.2e} J (E ~ {scale:.1e} J)");
    assert!(
        worst_identity <= 1e-14 * scale,
        "ΔE − work {worst_identity:e}"
    );
    // The energy never increases: the sleeve's jams and slips and the beak's
    // impacts (e = 0.5 with friction) all dissipate, to rounding.
    assert!(
        worst_gain <= 1e-14 * scale,
        "energy gained {worst_gain:e} in a step"
    );
    // Over each cycle of the limit cycle, what is dissipated is the work of
    // gravity on the descent: −ΔE = (m_M + m_S) g |Δy| (the kinetic and
    // spring energies come back; within the one-step jitter of the cycle's
    // end points, 0.03 % here).
    let ks = beak_impacts(&r);
    assert!(ks.len() >= 9);
    for w in ks.windows(2) {
        let (a, b) = (r.state(w[0]), r.state(w[1]));
        let lost = energy(&a) - energy(&b);
        let gravity_work = (M_M + M_S) * G * (a[0] - b[0]);
        assert!(
            lost > 0.0 && (lost - gravity_work).abs() <= 0.005 * gravity_work,
            "{lost} vs {gravity_work}"
        );
    }
}
