//! `nonsmooth plot` end to end: runs the built binary on CSV files written
//! here and checks the images and the errors.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh, empty directory for one test.
fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli_plot-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("a test directory");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .arg("plot")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the nonsmooth binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The file names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A sine, a bouncing parabola (restitution 0.8) and its velocity, sampled
/// every 2 ms over 2 s, written as the simulator writes them.
fn write_motion_csv(path: &Path) {
    let mut text = String::from("t,wave.y[0],ball.q[0],ball.v[0]\n");
    let (g, e) = (9.81, 0.8);
    let (mut q, mut v) = (1.0f64, 0.0f64);
    let h = 0.002;
    for k in 0..=1000 {
        let t = k as f64 * h;
        let y = (2.0 * std::f64::consts::PI * t).sin();
        if k % 2 == 0 {
            text.push_str(&format!("{t},{y},{q},{v}\n"));
        } else {
            text.push_str(&format!("{t:e},{y:e},{q:e},{v:e}\n"));
        }
        let qn = q + h * v - 0.5 * g * h * h;
        if qn < 0.0 {
            v = -e * (v - g * h);
            q = 0.0;
        } else {
            q = qn;
            v -= g * h;
        }
    }
    fs::write(path, text).unwrap();
}

/// `<polyline` elements with at least `min_points` points, per stroke colour.
fn long_polylines(svg: &str, min_points: usize) -> Vec<String> {
    svg.split("<polyline")
        .skip(1)
        .filter_map(|el| {
            let el = &el[..el.find("/>")?];
            let stroke = el.split("stroke=\"").nth(1)?.split('"').next()?.to_string();
            let points = el.split("points=\"").nth(1)?.split('"').next()?;
            (points.split_whitespace().count() >= min_points).then_some(stroke)
        })
        .collect()
}

/// The text of every `<text>` element, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|el| {
            let body = &el[el.find('>')? + 1..el.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

#[test]
fn svg_has_a_line_per_series_a_legend_and_labels() {
    let dir = work_dir("svg");
    write_motion_csv(&dir.join("motion.csv"));
    let out = run(
        &dir,
        &["motion.csv", "-o", "motion.svg", "--title", "Motion"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote motion.svg"));

    let svg = fs::read_to_string(dir.join("motion.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let lines = long_polylines(&svg, 50);
    assert_eq!(lines.len(), 3, "one long polyline per series: {lines:?}");
    let mut colours = lines.clone();
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), 3, "each series its own colour: {lines:?}");

    let texts = texts(&svg);
    for expected in ["wave.y[0]", "ball.q[0]", "ball.v[0]", "t [s]", "Motion"] {
        assert!(
            texts.iter().any(|t| t == expected),
            "no text `{expected}` in {texts:?}"
        );
    }
    assert_eq!(listing(&dir), ["motion.csv", "motion.svg"]);
}

#[test]
fn columns_select_by_name_pattern_and_prefix() {
    let dir = work_dir("select");
    write_motion_csv(&dir.join("motion.csv"));
    let cases: [(&[&str], &[&str]); 4] = [
        (&["--columns", "ball.q[*]"], &["ball.q[0]"]),
        (&["--columns", "ball."], &["ball.q[0]", "ball.v[0]"]),
        (&["-c", "wave.y[0],ball.v[*]"], &["wave.y[0]", "ball.v[0]"]),
        (
            &["-c", "wave.y[0]", "-c", "ball.q[0]"],
            &["wave.y[0]", "ball.q[0]"],
        ),
    ];
    for (k, (options, expected)) in cases.iter().enumerate() {
        let output = format!("select{k}.svg");
        let mut args = vec!["motion.csv", "-o", output.as_str()];
        args.extend_from_slice(options);
        let out = run(&dir, &args);
        assert!(out.status.success(), "{options:?}: {}", stderr(&out));
        let svg = fs::read_to_string(dir.join(&output)).unwrap();
        assert_eq!(
            long_polylines(&svg, 50).len(),
            expected.len(),
            "{options:?}"
        );
        let texts = texts(&svg);
        for name in ["wave.y[0]", "ball.q[0]", "ball.v[0]"] {
            assert_eq!(
                texts.iter().any(|t| t == name),
                expected.contains(&name),
                "{options:?}: legend entry {name}"
            );
        }
    }
}

#[test]
fn x_column_can_be_any_column() {
    let dir = work_dir("phase");
    write_motion_csv(&dir.join("motion.csv"));
    let out = run(
        &dir,
        &[
            "motion.csv",
            "-x",
            "ball.q[0]",
            "-c",
            "ball.v[0]",
            "-o",
            "phase.svg",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = fs::read_to_string(dir.join("phase.svg")).unwrap();
    // The x column is the horizontal axis' description, not a series.
    assert!(texts(&svg).iter().any(|t| t == "ball.q[0]"));
    assert_eq!(long_polylines(&svg, 50).len(), 1);
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 33, "too short for a PNG");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn png_has_the_requested_size() {
    let dir = work_dir("png");
    write_motion_csv(&dir.join("motion.csv"));
    let out = run(
        &dir,
        &["motion.csv", "--size", "640x400", "-o", "motion.png"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = fs::read(dir.join("motion.png")).unwrap();
    assert_eq!(png_size(&bytes), (640, 400));
    // Default size, upper-case extension.
    let out = run(&dir, &["motion.csv", "-c", "wave.", "-o", "WAVE.PNG"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        png_size(&fs::read(dir.join("WAVE.PNG")).unwrap()),
        (960, 600)
    );
    assert_eq!(listing(&dir), ["WAVE.PNG", "motion.csv", "motion.png"]);
}

/// Runs a command that must fail with status 2, and checks that the output
/// was not created and nothing else was left in the directory.
fn assert_bad_input(dir: &Path, args: &[&str], output: &str, needles: &[&str]) -> String {
    let before = listing(dir);
    let out = run(dir, args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("nonsmooth plot: error: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: `{needle}` not in {err}");
    }
    assert!(!dir.join(output).exists(), "{output} was written");
    assert_eq!(listing(dir), before, "files left behind by {args:?}");
    err
}

#[test]
fn unknown_columns_are_bad_input() {
    let dir = work_dir("unknown");
    write_motion_csv(&dir.join("motion.csv"));
    assert_bad_input(
        &dir,
        &["motion.csv", "-c", "ball.q[0],ball.w[0]", "-o", "a.svg"],
        "a.svg",
        &["motion.csv", "no column `ball.w[0]`", "`ball.q[0]`"],
    );
    assert_bad_input(
        &dir,
        &["motion.csv", "-c", "wall.*", "-o", "a.svg"],
        "a.svg",
        &["no column matches `wall.*`"],
    );
    assert_bad_input(
        &dir,
        &["motion.csv", "-x", "time", "-o", "a.png"],
        "a.png",
        &["no column `time`"],
    );
}

#[test]
fn malformed_csv_is_bad_input_naming_file_and_line() {
    let dir = work_dir("malformed");
    fs::write(dir.join("word.csv"), "t,a.q[0]\n0,1\n0.1,oops\n").unwrap();
    assert_bad_input(
        &dir,
        &["word.csv", "-o", "a.svg"],
        "a.svg",
        &["word.csv:3:5:", "column `a.q[0]`", "`oops`"],
    );
    fs::write(dir.join("ragged.csv"), "t,a.q[0],a.v[0]\n0,1,2\n0.1,1\n").unwrap();
    assert_bad_input(
        &dir,
        &["ragged.csv", "-o", "a.svg"],
        "a.svg",
        &["ragged.csv:3:", "2 values", "3 columns"],
    );
    fs::write(dir.join("empty.csv"), "").unwrap();
    assert_bad_input(
        &dir,
        &["empty.csv", "-o", "a.svg"],
        "a.svg",
        &["empty.csv", "empty"],
    );
    fs::write(dir.join("header.csv"), "t,a.q[0]\n").unwrap();
    assert_bad_input(
        &dir,
        &["header.csv", "-o", "a.svg"],
        "a.svg",
        &["header.csv", "no data rows"],
    );
    assert_bad_input(
        &dir,
        &["missing.csv", "-o", "a.svg"],
        "a.svg",
        &["missing.csv"],
    );
}

#[test]
fn unsupported_outputs_are_bad_input() {
    let dir = work_dir("outputs");
    write_motion_csv(&dir.join("motion.csv"));
    for name in ["plot.pdf", "plot", "plot.svg.txt"] {
        assert_bad_input(&dir, &["motion.csv", "-o", name], name, &[".svg or .png"]);
    }
    // Checked before the CSV is read.
    assert_bad_input(
        &dir,
        &["missing.csv", "-o", "plot.jpg"],
        "plot.jpg",
        &[".svg or .png"],
    );
    assert_bad_input(
        &dir,
        &["motion.csv", "-o", "no/such/dir/plot.svg"],
        "no/such/dir/plot.svg",
        &["no/such/dir/plot.svg", "cannot write"],
    );
    let out = run(&dir, &["motion.csv", "--size", "10x10", "-o", "a.png"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_failed_plot_leaves_the_previous_image_alone() {
    let dir = work_dir("keep");
    write_motion_csv(&dir.join("motion.csv"));
    let out = run(&dir, &["motion.csv", "-o", "keep.svg"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let before = fs::read(dir.join("keep.svg")).unwrap();
    let out = run(&dir, &["motion.csv", "-c", "nope", "-o", "keep.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read(dir.join("keep.svg")).unwrap(), before);
    // An output that is a directory: the rename fails, the temporary goes.
    fs::create_dir(dir.join("taken.svg")).unwrap();
    let out = run(&dir, &["motion.csv", "-o", "taken.svg"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
    assert_eq!(listing(&dir), ["keep.svg", "motion.csv", "taken.svg"]);
}

#[test]
fn too_many_columns_suggest_choosing() {
    let dir = work_dir("many");
    let names: Vec<String> = (0..13).map(|i| format!("chain.q[{i}]")).collect();
    let mut text = format!("t,{}\n", names.join(","));
    for k in 0..10 {
        let row: Vec<String> = (0..13).map(|i| (i * k).to_string()).collect();
        text.push_str(&format!("{k},{}\n", row.join(",")));
    }
    fs::write(dir.join("chain.csv"), text).unwrap();
    assert_bad_input(
        &dir,
        &["chain.csv", "-o", "a.svg"],
        "a.svg",
        &["13 columns", "--columns"],
    );
    let out = run(&dir, &["chain.csv", "-c", "chain.q[1*]", "-o", "a.svg"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_bundled_example_plots() {
    let dir = work_dir("example");
    let csv = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("examples/simulations/bouncing_ball.csv");
    let csv = csv.to_str().unwrap();
    let out = run(
        &dir,
        &[csv, "-c", "ball.q[0],floor.lambda[0]", "-o", "ball.png"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        png_size(&fs::read(dir.join("ball.png")).unwrap()),
        (960, 600)
    );
}

#[test]
fn help_describes_the_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_nonsmooth"))
        .args(["plot", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--columns",
        "--x-column",
        "--title",
        "--size",
        "--output",
        "Exit status",
    ] {
        assert!(help.contains(needle), "{needle} not in {help}");
    }
}
