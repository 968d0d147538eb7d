//! Drawing a plot with plotters and writing the image file.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use plotters::backend::RGBPixel;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use super::{
    decimate, select_columns, CsvTable, ImageFormat, PlotError, PlotReport, PlotSpec, MAX_SERIES,
    MAX_SIDE, MIN_SIZE,
};

/// DejaVu Sans, bundled so that text needs no system font library.
static FONT_DATA: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DejaVuSans.ttf"
));

/// The family every text of a plot uses (the bundled font is registered
/// under it).
const FONT: &str = "sans-serif";

/// One colour per series, distinct on white.
const PALETTE: [RGBColor; MAX_SERIES] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
    RGBColor(0, 0, 0),
    RGBColor(0, 0, 128),
];

/// Values beyond this magnitude are refused: the axis arithmetic would
/// overflow.
const MAX_MAGNITUDE: f64 = 1e300;

/// Registers the bundled font once per process.
fn ensure_font(output: &Path) -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FONT, FontStyle::Normal, FONT_DATA).is_ok());
    if ok {
        Ok(())
    } else {
        Err(PlotError::Draw {
            path: output.to_path_buf(),
            detail: "the bundled font could not be loaded".to_string(),
        })
    }
}

/// Checks the parts of a spec that need no data: the format (from the
/// output's extension) and the image size.
pub(super) fn check_spec(spec: &PlotSpec) -> Result<ImageFormat, PlotError> {
    let format =
        ImageFormat::from_path(&spec.output).ok_or_else(|| PlotError::UnsupportedFormat {
            path: spec.output.clone(),
        })?;
    let (w, h) = (spec.width, spec.height);
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(PlotError::InvalidSpec {
            path: spec.output.clone(),
            detail: format!(
                "invalid image size {w}x{h}: the width must be from {} to {MAX_SIDE} pixels \
                 and the height from {} to {MAX_SIDE}",
                MIN_SIZE.0, MIN_SIZE.1
            ),
        });
    }
    Ok(format)
}

/// Smallest and largest finite values yielded, if any.
fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// The axis range for data spanning `[lo, hi]`: widened by `margin` (a
/// fraction of the span) on each side, and to a non-degenerate span when
/// the data is constant or nearly so.
fn axis_range(lo: f64, hi: f64, margin: f64) -> (f64, f64) {
    let magnitude = lo.abs().max(hi.abs());
    let min_span = (magnitude * 1e-9).max(1e-200);
    let (lo, hi) = if hi - lo < min_span {
        let mid = 0.5 * (lo + hi);
        let pad = if magnitude > 0.0 {
            (0.1 * magnitude).max(min_span)
        } else {
            1.0
        };
        (mid - pad, mid + pad)
    } else {
        (lo, hi)
    };
    let m = margin * (hi - lo);
    (lo - m, hi + m)
}

/// A tick label: at most 10 significant digits, exponent form outside
/// [1e-3, 1e5).
fn tick_label(v: &f64) -> String {
    let rounded: f64 = format!("{v:.9e}").parse().unwrap_or(*v);
    let a = rounded.abs();
    if a == 0.0 {
        "0".to_string()
    } else if (1e-3..1e5).contains(&a) {
        format!("{rounded}")
    } else {
        format!("{rounded:e}")
    }
}

/// Runs of consecutive rows where both `x` and `y` are finite.
fn finite_segments(x: &[f64], y: &[f64]) -> Vec<Range<usize>> {
    let n = x.len().min(y.len());
    let mut segments = Vec::new();
    let mut start: Option<usize> = None;
    for i in 0..n {
        let ok = x[i].is_finite() && y[i].is_finite();
        match (ok, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                segments.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        segments.push(s..n);
    }
    segments
}

/// One series ready to draw: its decimated pieces.
struct Series<'a> {
    name: &'a str,
    color: RGBColor,
    pieces: Vec<Vec<(f64, f64)>>,
}

/// Everything the drawing needs.
struct Figure<'a> {
    title: String,
    x_label: String,
    y_label: String,
    x_range: (f64, f64),
    y_range: (f64, f64),
    x: &'a [f64],
    columns: Vec<(&'a str, &'a [f64])>,
    /// Draw each piece of a series as one path (true: SVG) or segment by
    /// segment (false: PNG).
    joined: bool,
}

/// Blank border around the chart, pixels.
const MARGIN: u32 = 16;
/// Height of the area under the x axis (tick labels and description).
const X_LABEL_AREA: u32 = 50;
/// Number of labelled ticks per axis (plotters' default).
const TICKS: usize = 10;

/// Width of the area left of the y axis: room for the longest tick label
/// (about 7.5 pixels per character at the label size) and the description.
fn y_label_area(y_range: (f64, f64)) -> u32 {
    let ticks: RangedCoordf64 = (y_range.0..y_range.1).into();
    let longest = ticks
        .key_points(TICKS)
        .iter()
        .map(|v| tick_label(v).chars().count())
        .max()
        .unwrap_or(1);
    (longest as f64 * 7.5) as u32 + 40
}

/// Picks the corner where the legend hides the fewest drawn points.
fn legend_position(fig: &Figure, series: &[Series], area: (u32, u32)) -> SeriesLabelPosition {
    let (w, h) = (f64::from(area.0), f64::from(area.1));
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let box_w = (longest as f64 * 8.5 + 60.0).min(w);
    let box_h = (series.len() as f64 * 20.0 + 20.0).min(h);
    let (x0, x1) = fig.x_range;
    let (y0, y1) = fig.y_range;
    let to_px = |&(x, y): &(f64, f64)| ((x - x0) / (x1 - x0) * w, (y1 - y) / (y1 - y0) * h);
    let corners = [
        (SeriesLabelPosition::UpperRight, (w - box_w, 0.0)),
        (SeriesLabelPosition::UpperLeft, (0.0, 0.0)),
        (SeriesLabelPosition::LowerRight, (w - box_w, h - box_h)),
        (SeriesLabelPosition::LowerLeft, (0.0, h - box_h)),
    ];
    let mut counts = [0usize; 4];
    for p in series.iter().flat_map(|s| s.pieces.iter().flatten()) {
        let (px, py) = to_px(p);
        for (k, (_, (bx, by))) in corners.iter().enumerate() {
            if px >= *bx && px <= bx + box_w && py >= *by && py <= by + box_h {
                counts[k] += 1;
            }
        }
    }
    let best = (0..4).min_by_key(|&k| counts[k]).unwrap_or(0);
    match best {
        1 => SeriesLabelPosition::UpperLeft,
        2 => SeriesLabelPosition::LowerRight,
        3 => SeriesLabelPosition::LowerLeft,
        _ => SeriesLabelPosition::UpperRight,
    }
}

/// Decimates every series for a data area `pixels` wide.
fn prepare<'a>(fig: &Figure<'a>, pixels: usize) -> Vec<Series<'a>> {
    fig.columns
        .iter()
        .enumerate()
        .map(|(k, (name, y))| {
            let pieces = finite_segments(fig.x, y)
                .into_iter()
                .map(|seg| {
                    let (xs, ys) = (&fig.x[seg.clone()], &y[seg]);
                    decimate(xs, ys, fig.x_range, pixels)
                        .into_iter()
                        .map(|i| (xs[i], ys[i]))
                        .collect()
                })
                .collect();
            Series {
                name,
                color: PALETTE[k % PALETTE.len()],
                pieces,
            }
        })
        .collect()
}

/// Draws the figure on `root`; returns the number of points drawn.
fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> Result<usize, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(y_label_area(fig.y_range));
    if !fig.title.is_empty() {
        builder.caption(&fig.title, (FONT, 22));
    }
    let mut chart =
        builder.build_cartesian_2d(fig.x_range.0..fig.x_range.1, fig.y_range.0..fig.y_range.1)?;
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .x_labels(TICKS)
        .y_labels(TICKS)
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;

    let area = chart.plotting_area().dim_in_pixel();
    let series = prepare(fig, area.0 as usize);
    let position = legend_position(fig, &series, area);
    let mut drawn = 0;
    for s in &series {
        let style = s.color.stroke_width(2);
        let mut labelled = false;
        for piece in &s.pieces {
            drawn += piece.len();
            let annotation = if piece.len() == 1 {
                // A lone point between gaps shows as a dot.
                chart.draw_series(std::iter::once(Circle::new(piece[0], 2, style.filled())))?
            } else if fig.joined {
                chart.draw_series(LineSeries::new(piece.iter().copied(), style))?
            } else {
                // Segment by segment: a raster backend widens a whole path
                // without a miter limit, which draws spikes at sharp turns.
                chart.draw_series(
                    piece
                        .windows(2)
                        .map(|w| PathElement::new(vec![w[0], w[1]], style)),
                )?
            };
            if !labelled {
                annotation
                    .label(s.name)
                    .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 24, py)], style));
                labelled = true;
            }
        }
        if !labelled {
            // No finite value: still named in the legend.
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
                .label(s.name)
                .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 24, py)], style));
        }
    }
    chart
        .configure_series_labels()
        .position(position)
        .margin(10)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()?;
    root.present()?;
    Ok(drawn)
}

fn draw_error(output: &Path) -> impl Fn(String) -> PlotError + '_ {
    move |detail| PlotError::Draw {
        path: output.to_path_buf(),
        detail,
    }
}

/// Renders the figure as SVG text.
fn render_svg(
    fig: &Figure,
    size: (u32, u32),
    output: &Path,
) -> Result<(Vec<u8>, usize), PlotError> {
    let mut text = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw_figure(&root, fig).map_err(|e| draw_error(output)(e.to_string()))?
    };
    Ok((text.into_bytes(), drawn))
}

/// Renders the figure as an 8-bit RGB PNG.
fn render_png(
    fig: &Figure,
    size: (u32, u32),
    output: &Path,
) -> Result<(Vec<u8>, usize), PlotError> {
    let fail = draw_error(output);
    let (w, h) = size;
    let mut rgb = vec![255u8; w as usize * h as usize * 3];
    let drawn = {
        let backend = BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut rgb, size)
            .map_err(|e| fail(e.to_string()))?;
        let root = backend.into_drawing_area();
        draw_figure(&root, fig).map_err(|e| fail(e.to_string()))?
    };
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| fail(format!("PNG encoding: {e}")))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| fail(format!("PNG encoding: {e}")))?;
        writer
            .finish()
            .map_err(|e| fail(format!("PNG encoding: {e}")))?;
    }
    Ok((bytes, drawn))
}

/// Writes `bytes` to `path` through a temporary file in the same directory,
/// renamed over `path` once complete; the temporary file is removed on
/// any error.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let write_error = |source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".to_string());
    let (tmp, mut file) = loop {
        let tmp: PathBuf = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(write_error(e)),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp, path)
        });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(write_error(e));
    }
    Ok(())
}

/// See [`super::plot`].
pub(super) fn plot(table: &CsvTable, spec: &PlotSpec) -> Result<PlotReport, PlotError> {
    let format = check_spec(spec)?;
    let csv = table.path();
    let nothing = |detail: String| PlotError::NothingToPlot {
        path: csv.to_path_buf(),
        detail,
    };
    let xi = table
        .index_of(&spec.x)
        .ok_or_else(|| PlotError::UnknownColumn {
            path: csv.to_path_buf(),
            name: spec.x.clone(),
            available: table.names().to_vec(),
        })?;
    let selected = select_columns(table, &spec.x, &spec.y)?;
    if table.rows() == 0 {
        return Err(nothing("the file has no data rows".to_string()));
    }
    let x = table.column_at(xi).unwrap_or(&[]);
    let columns: Vec<(&str, &[f64])> = selected
        .iter()
        .map(|&k| (table.names()[k].as_str(), table.column_at(k).unwrap_or(&[])))
        .collect();

    let (x_lo, x_hi) = finite_range(x.iter().copied())
        .ok_or_else(|| nothing(format!("column `{}` has no finite value", spec.x)))?;
    let (y_lo, y_hi) = finite_range(columns.iter().flat_map(|(_, y)| {
        y.iter()
            .zip(x)
            .filter(|(_, xv)| xv.is_finite())
            .map(|(yv, _)| *yv)
    }))
    .ok_or_else(|| nothing("the selected columns have no finite value".to_string()))?;
    let magnitude = [x_lo, x_hi, y_lo, y_hi]
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if magnitude > MAX_MAGNITUDE {
        return Err(nothing(format!(
            "values of magnitude {magnitude:e} are beyond the plottable {MAX_MAGNITUDE:e}"
        )));
    }

    let title = match &spec.title {
        Some(t) => t.clone(),
        None => csv
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let x_label = if spec.x == "t" {
        "t [s]".to_string()
    } else {
        spec.x.clone()
    };
    let y_label = match columns.as_slice() {
        [(name, _)] => name.to_string(),
        _ => "value".to_string(),
    };
    let fig = Figure {
        title,
        x_label,
        y_label,
        x_range: axis_range(x_lo, x_hi, 0.0),
        y_range: axis_range(y_lo, y_hi, 0.05),
        x,
        columns,
        joined: format == ImageFormat::Svg,
    };

    ensure_font(&spec.output)?;
    let size = (spec.width, spec.height);
    let (bytes, points_drawn) = match format {
        ImageFormat::Svg => render_svg(&fig, size, &spec.output)?,
        ImageFormat::Png => render_png(&fig, size, &spec.output)?,
    };
    write_atomically(&spec.output, &bytes)?;
    Ok(PlotReport {
        output: spec.output.clone(),
        format,
        series: fig.columns.iter().map(|(n, _)| n.to_string()).collect(),
        rows: table.rows(),
        points_drawn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(&0.0), "0");
        assert_eq!(tick_label(&(0.1 + 0.2)), "0.3");
        assert_eq!(tick_label(&-2.5), "-2.5");
        assert_eq!(tick_label(&0.0005), "5e-4");
        assert_eq!(tick_label(&150000.0), "1.5e5");
        assert_eq!(tick_label(&12345.0), "12345");
    }

    #[test]
    fn axis_ranges_are_never_degenerate() {
        assert_eq!(axis_range(0.0, 0.0, 0.0), (-1.0, 1.0));
        let (lo, hi) = axis_range(2.0, 2.0, 0.0);
        assert!(lo < 2.0 && hi > 2.0);
        assert_eq!(axis_range(0.0, 10.0, 0.05), (-0.5, 10.5));
        let (lo, hi) = axis_range(1.0, 1.0 + 1e-15, 0.0);
        assert!(hi - lo >= 1e-9);
        let (lo, hi) = axis_range(1e-310, 2e-310, 0.0);
        assert!(hi - lo >= 1e-200);
    }

    #[test]
    fn segments_skip_non_finite_rows() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [f64::NAN, 1.0, 2.0, f64::INFINITY, 4.0, 5.0];
        assert_eq!(finite_segments(&x, &y), vec![1..3, 4..6]);
        assert!(finite_segments(&x, &[f64::NAN; 6]).is_empty());
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nonsmooth-plot-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn awkward_data_still_plots() {
        let dir = temp_dir("awkward");
        let cases: Vec<(&str, Vec<f64>, Vec<f64>)> = vec![
            ("constant", vec![0.0, 1.0, 2.0], vec![3.0, 3.0, 3.0]),
            ("zero", vec![0.0, 1.0], vec![0.0, 0.0]),
            ("one-row", vec![0.5], vec![1.0]),
            ("tiny", vec![0.0, 1.0], vec![1.0, 1.0 + 1e-15]),
            ("subnormal", vec![0.0, 1.0], vec![1e-310, 3e-310]),
            ("huge", vec![0.0, 1.0], vec![-1e200, 1e200]),
            (
                "gaps",
                vec![0.0, 1.0, 2.0, 3.0],
                vec![1.0, f64::NAN, 2.0, 3.0],
            ),
            ("same-x", vec![1.0, 1.0, 1.0], vec![1.0, 2.0, 3.0]),
        ];
        for (name, x, y) in cases {
            let table = CsvTable::from_columns(
                format!("{name}.csv"),
                vec!["t".into(), "a.q[0]".into()],
                vec![x, y],
            )
            .unwrap();
            for ext in ["svg", "png"] {
                let spec = PlotSpec::new(dir.join(format!("{name}.{ext}")));
                let report = plot(&table, &spec).unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
                assert!(spec.output.is_file(), "{name}.{ext}");
                assert_eq!(report.series, ["a.q[0]"]);
            }
        }
        let nan = CsvTable::from_columns(
            "nan.csv",
            vec!["t".into(), "a.q[0]".into()],
            vec![vec![0.0, 1.0], vec![f64::NAN, f64::NAN]],
        )
        .unwrap();
        let e = plot(&nan, &PlotSpec::new(dir.join("nan.svg"))).unwrap_err();
        assert!(matches!(e, PlotError::NothingToPlot { .. }), "{e}");
        let big = CsvTable::from_columns(
            "big.csv",
            vec!["t".into(), "a.q[0]".into()],
            vec![vec![0.0, 1.0], vec![-1e305, 1e305]],
        )
        .unwrap();
        assert!(plot(&big, &PlotSpec::new(dir.join("big.svg"))).is_err());
        assert!(!dir.join("nan.svg").exists() && !dir.join("big.svg").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_million_rows_are_decimated() {
        let dir = temp_dir("million");
        let n = 1_000_000;
        let t: Vec<f64> = (0..n).map(|i| i as f64 * 1e-5).collect();
        let q: Vec<f64> = t.iter().map(|t| (20.0 * t).sin()).collect();
        let v: Vec<f64> = t.iter().map(|t| 20.0 * (20.0 * t).cos()).collect();
        let table = CsvTable::from_columns(
            "long.csv",
            vec!["t".into(), "x.q[0]".into(), "x.v[0]".into()],
            vec![t, q, v],
        )
        .unwrap();
        for ext in ["svg", "png"] {
            let spec = PlotSpec::new(dir.join(format!("long.{ext}")));
            let start = std::time::Instant::now();
            let report = plot(&table, &spec).unwrap();
            let elapsed = start.elapsed();
            assert_eq!(report.rows, n);
            assert!(
                report.points_drawn <= 2 * 4 * spec.width as usize,
                "{} points drawn",
                report.points_drawn
            );
            // Generous bound for a loaded machine; typically a few tens of ms.
            assert!(elapsed.as_secs_f64() < 5.0, "{ext}: {elapsed:?}");
            let size = fs::metadata(&spec.output).unwrap().len();
            assert!(size < 2_000_000, "{ext}: {size} bytes");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
