//! `nonsmooth run` on rigid-body scenarios: the CSV of recorded columns and
//! the pose frames (docs/rigid-scenarios.md), end to end through the binary.

use std::fs;
use std::path::Path;
use std::process::Command;

fn manifest() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn cube_on_plane_writes_the_csv_and_the_pose_frames() {
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(["run", "examples/cube_on_plane.toml", "--quiet", "--out"])
        .arg(out.path())
        .current_dir(manifest())
        .output()
        .expect("the binary runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let csv = fs::read_to_string(out.path().join("cube_on_plane.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..5],
        [
            "t",
            "cube.position[0]",
            "cube.position[1]",
            "cube.position[2]",
            "cube.quaternion[0]"
        ]
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    // 3 s, a row every 10 steps of 1 ms, t0 included.
    assert_eq!(rows.len(), 301);
    let last = rows.last().unwrap();
    assert!((last[0] - 3.0).abs() < 1e-12);
    // One frame every 5 rows, each a row per free body with its pose.
    let dir = out.path().join("cube_on_plane_frames");
    let mut frames: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    frames.sort();
    assert_eq!(frames.len(), 61);
    let text = fs::read_to_string(frames.last().unwrap()).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), nonsmooth_collision::FRAME_HEADER);
    let fields: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(lines.next().is_none(), "the fixed ground has no row");
    assert_eq!(fields[1], "1");
    assert_eq!(fields[15], "box");
    // The frame's pose is the CSV's last pose.
    for k in 0..7 {
        let v: f64 = fields[2 + k].parse().unwrap();
        assert_eq!(v, last[1 + k], "component {k}");
    }
}
