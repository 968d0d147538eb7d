//! Time-stepping runs against Siconos' own regression outputs
//! (../shared/data/siconos-ref, Siconos 4.4 test suite).

use std::io::Read;

use nonsmooth::simulation::{TimeStepping, TimeSteppingSettings};

mod common;

/// Rows of a gzipped Siconos ioMatrix file (first line "rows cols").
fn read_ref(name: &str) -> Vec<Vec<f64>> {
    let path = format!(
        "{}/../shared/data/siconos-ref/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .unwrap();
    let mut lines = s.lines();
    let header: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let rows: Vec<Vec<f64>> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), header[0]);
    assert!(rows.iter().all(|r| r.len() == header[1]));
    rows
}

#[test]
fn bouncing_ball_matches_siconos_regression_output() {
    let reference = read_ref("result.ref.gz");
    // Siconos' test uses y = q[0] (no radius offset).
    let (model, ball, floor) = common::bouncing_ball(1.0, 0.9, 0.0);
    let mut settings = TimeSteppingSettings::new(0.005, 10.0);
    settings.activation_gamma = 0.5;
    let mut sim = TimeStepping::new(model, settings).unwrap();
    let mut rows = vec![];
    sim.run(|s| {
        rows.push(vec![
            s.time(),
            s.q(ball)[0],
            s.v(ball)[0],
            s.lambda(floor)[0],
            s.lambda(floor)[0],
        ])
    })
    .unwrap();
    assert_eq!(rows.len(), reference.len());
    let mut worst = (0.0f64, 0, 0);
    for (k, (a, r)) in rows.iter().zip(&reference).enumerate() {
        for c in 0..5 {
            let d = (a[c] - r[c]).abs();
            if d > worst.0 {
                worst = (d, k, c);
            }
        }
    }
    println!(
        "max difference {:.3e} at row {} column {}",
        worst.0, worst.1, worst.2
    );
    assert!(
        worst.0 <= 1e-12,
        "max difference {:.3e} at row {} column {}: ours {:?} ref {:?}",
        worst.0,
        worst.1,
        worst.2,
        rows[worst.1],
        reference[worst.1]
    );
}

#[test]
fn diode_bridge_matches_siconos_regression_output() {
    let reference = read_ref("diode_bridge.ref.gz");
    let (model, circuit, diodes) = common::diode_bridge();
    let settings = TimeSteppingSettings::new(1e-6, 5e-3);
    let mut sim = TimeStepping::new(model, settings).unwrap();
    let mut rows = vec![];
    sim.run(|s| {
        let (x, y, la) = (s.x(circuit), s.y(diodes), s.lambda(diodes));
        // Columns of the reference: t, v_L, i_L, i_DR1 = y[0], v_DR1 = −λ[0],
        // v_DF2 = −λ[1], i_DF1 = λ[2], and the resistor current y[0] + λ[2].
        rows.push(vec![
            s.time(),
            x[0],
            x[1],
            y[0],
            -la[0],
            -la[1],
            la[2],
            y[0] + la[2],
        ]);
    })
    .unwrap();
    // Siconos' loop stops one step short of t_end: compare its rows.
    assert_eq!(rows.len(), reference.len() + 1);
    let mut worst = [0.0f64; 8];
    for (a, r) in rows.iter().zip(&reference) {
        for c in 0..8 {
            worst[c] = worst[c].max((a[c] - r[c]).abs());
        }
    }
    println!("max difference per column {worst:?}");
    // Values reach 10 V; agreement to rounding of the LCP solves.
    assert!(worst.iter().all(|&d| d <= 1e-11), "{worst:?}");
}
