//! Plots of simulation CSV files, as SVG or PNG images.
//!
//! # The CSV files
//!
//! A simulation CSV file has a header line naming the columns, then one row
//! per time step, values comma-separated:
//!
//! ```text
//! t,ball.q[0],ball.v[0],floor.y[0],floor.lambda[0]
//! 0,1,0,1,0
//! 0.005,0.999877375,-0.04905,0.999877375,0
//! ```
//!
//! Columns are named `<object>.<variable>[<index>]`, the first is the time
//! `t` in seconds. [`read_csv_columns`] reads such a file into a
//! [`CsvTable`]; every value must parse as an `f64` (any form Rust's `f64`
//! parser takes: `0.25`, `2.5e-1`, `-1E3`, `inf`, `NaN`). Blank lines are
//! skipped. Errors name the file, the 1-based line and column, and the
//! column's name.
//!
//! # What is drawn
//!
//! [`plot`] draws one line per selected column against the `x` column (the
//! time by default), with a legend naming the columns, axis labels and a
//! title, into the image [`PlotSpec::output`] names; its extension (`.svg` or
//! `.png`, any case) chooses the format. A non-finite value (NaN, ±inf)
//! leaves a gap in its line.
//!
//! Column selection ([`select_columns`]): each entry of [`PlotSpec::y`] is
//!
//! * an exact column name (`ball.q[0]`);
//! * or a pattern in which `*` stands for any run of characters
//!   (`ball.q[*]`, `*.lambda[0]`; `[` and `]` are ordinary characters);
//! * or a prefix ending in `.` (`ball.`: every variable of `ball`).
//!
//! Patterns never select the `x` column. The selection keeps the order of
//! the entries, and within a pattern the file's order; a column selected
//! twice is drawn once. An empty `y` selects every column but `x`. At most
//! [`MAX_SERIES`] columns go in one plot.
//!
//! # Long series
//!
//! A series with more points than four per horizontal pixel of the plotting
//! area is decimated before drawing ([`decimate`]): the points are grouped in
//! runs that fall in the same pixel column, and of each run only the first,
//! the last, the lowest and the highest point are kept. The drawn line then
//! covers exactly the pixels the full line would (every extreme is kept), and
//! a plot of 10⁶ rows draws at most four points per pixel column, so it takes
//! a fraction of a second. With a monotone `x` (the time) a series keeps at
//! most 4 points per pixel column; a non-monotone `x` (a phase portrait) is
//! reduced where consecutive samples share a pixel column.
//!
//! # Writing
//!
//! The image is rendered in memory, written to a temporary file beside the
//! output (`.<name>.<pid>.<n>.tmp`) and renamed over it, so an error never
//! leaves a half-written image, and an existing image is only replaced by a
//! complete one. Text uses the DejaVu Sans font bundled with the crate
//! (`assets/fonts/`), so no system font library is needed; an SVG names the
//! `sans-serif` family and is laid out with that font's metrics.

mod csv;
mod decimate;
mod render;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use nonsmooth::io::Location;

pub use csv::{parse_csv_columns, read_csv_columns, CsvTable};
pub use decimate::decimate;

/// The most columns one plot draws (beyond this a legend is unreadable and
/// colours repeat).
pub const MAX_SERIES: usize = 12;

/// Default image width in pixels.
pub const DEFAULT_WIDTH: u32 = 960;
/// Default image height in pixels.
pub const DEFAULT_HEIGHT: u32 = 600;
/// Smallest accepted image width and height in pixels.
pub const MIN_SIZE: (u32, u32) = (200, 150);
/// Largest accepted image side in pixels.
pub const MAX_SIDE: u32 = 4096;

/// One plot: which columns, how it is labelled, where it goes.
///
/// A scenario holds these as `[[plots]]` tables; only `output` is required:
///
/// ```toml
/// [[plots]]
/// output = "ball.svg"
/// y = ["ball.q[*]", "floor.lambda[0]"]
/// x = "t"                  # default
/// title = "Bouncing ball"  # default: the CSV file name
/// width = 960              # default, pixels
/// height = 600             # default, pixels
/// ```
///
/// A relative `output` is used as given (relative to the working
/// directory): a caller that reads specs from a file resolves it first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Title above the plot. `None`: the CSV file's name; `Some("")`: none.
    #[serde(default)]
    pub title: Option<String>,
    /// The column on the horizontal axis (an exact name), `t` by default.
    #[serde(default = "default_x")]
    pub x: String,
    /// The columns to draw: exact names, `*` patterns or `object.` prefixes
    /// (see the module documentation). Empty: every column but `x`.
    #[serde(default)]
    pub y: Vec<String>,
    /// The image file; its extension, `.svg` or `.png`, chooses the format.
    pub output: PathBuf,
    /// Image width in pixels (from [`MIN_SIZE`] to [`MAX_SIDE`]).
    #[serde(default = "default_width")]
    pub width: u32,
    /// Image height in pixels (from [`MIN_SIZE`] to [`MAX_SIDE`]).
    #[serde(default = "default_height")]
    pub height: u32,
}

fn default_x() -> String {
    "t".to_string()
}

fn default_width() -> u32 {
    DEFAULT_WIDTH
}

fn default_height() -> u32 {
    DEFAULT_HEIGHT
}

impl PlotSpec {
    /// A spec that draws every column against `t` into `output`, with the
    /// default size and title.
    pub fn new(output: impl Into<PathBuf>) -> Self {
        PlotSpec {
            title: None,
            x: default_x(),
            y: Vec::new(),
            output: output.into(),
            width: DEFAULT_WIDTH,
            height: DEFAULT_HEIGHT,
        }
    }
}

/// The image formats, chosen by the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics (`.svg`).
    Svg,
    /// Portable network graphics, 8-bit RGB (`.png`).
    Png,
}

impl ImageFormat {
    /// The format an output path asks for, from its extension (any case);
    /// `None` for any other extension or none.
    pub fn from_path(path: impl AsRef<Path>) -> Option<ImageFormat> {
        let ext = path.as_ref().extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(ImageFormat::Svg),
            "png" => Some(ImageFormat::Png),
            _ => None,
        }
    }
}

impl fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
        })
    }
}

/// What [`plot`] drew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotReport {
    /// The image written.
    pub output: PathBuf,
    /// Its format.
    pub format: ImageFormat,
    /// The columns drawn, in legend order.
    pub series: Vec<String>,
    /// Rows of the table.
    pub rows: usize,
    /// Points drawn over all series, after decimation.
    pub points_drawn: usize,
}

/// Column names listed in messages, at most this many.
const LISTED_COLUMNS: usize = 16;

fn column_list(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(LISTED_COLUMNS)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED_COLUMNS {
        s.push_str(&format!(" and {} more", names.len() - LISTED_COLUMNS));
    }
    if s.is_empty() {
        s.push_str("none");
    }
    s
}

fn found_text(found: &str) -> String {
    if found.is_empty() {
        "an empty cell".to_string()
    } else {
        let short: String = found.chars().take(40).collect();
        if short.len() < found.len() {
            format!("`{short}…`")
        } else {
            format!("`{short}`")
        }
    }
}

/// Why a CSV file could not be read or a plot not drawn. Errors about the
/// file's content carry a [`Location`] and their message starts with
/// `path:line:column:`; the others start with the file concerned.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The CSV file could not be opened or read.
    #[error("{}: cannot read the file: {source}", path.display())]
    Read {
        /// The CSV file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The CSV file has no header line (nothing but blank lines).
    #[error("{}: the file is empty (expected a header line such as `t,ball.q[0]`)", path.display())]
    EmptyFile {
        /// The CSV file.
        path: PathBuf,
    },
    /// A line that is not UTF-8 text.
    #[error("{at}: the line is not UTF-8 text")]
    NotUtf8 {
        /// Where the first bad byte is.
        at: Location,
    },
    /// A header with an empty or repeated column name.
    #[error("{at}: bad header: {detail}")]
    BadHeader {
        /// Where the offending name is.
        at: Location,
        /// What is wrong.
        detail: String,
    },
    /// A cell that is not a number.
    #[error("{at}: expected a number for column `{column}`, found {}", found_text(.found))]
    NotANumber {
        /// Where the cell starts.
        at: Location,
        /// The column's name.
        column: String,
        /// The cell's text (trimmed).
        found: String,
    },
    /// A row with more or fewer values than the header has columns.
    #[error("{at}: this row has {found} values, the header has {expected} columns")]
    RaggedRow {
        /// The first extra value, or the end of a short line.
        at: Location,
        /// Columns in the header.
        expected: usize,
        /// Values in the row.
        found: usize,
    },
    /// A column name that is not in the file.
    #[error("{}: no column `{name}`; the columns are {}", path.display(), column_list(.available))]
    UnknownColumn {
        /// The CSV file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The file's columns.
        available: Vec<String>,
    },
    /// A pattern or prefix that selects no column.
    #[error("{}: no column matches `{pattern}`; the columns are {}", path.display(), column_list(.available))]
    NoMatch {
        /// The CSV file.
        path: PathBuf,
        /// The pattern.
        pattern: String,
        /// The file's columns.
        available: Vec<String>,
    },
    /// More columns selected than one plot takes.
    #[error(
        "{}: {count} columns selected, more than the {max} one plot takes; \
         choose some with --columns (a [[plots]] table: `y`), e.g. `ball.q[*]`",
        path.display()
    )]
    TooManyColumns {
        /// The CSV file.
        path: PathBuf,
        /// Columns selected.
        count: usize,
        /// The limit, [`MAX_SERIES`].
        max: usize,
    },
    /// Nothing to draw: no data rows, no column besides `x`, or no finite value.
    #[error("{}: nothing to plot: {detail}", path.display())]
    NothingToPlot {
        /// The CSV file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// An output file name whose extension is neither `.svg` nor `.png`.
    #[error("{}: unsupported image format: the output file name must end in .svg or .png", path.display())]
    UnsupportedFormat {
        /// The output path.
        path: PathBuf,
    },
    /// Invalid settings (image size, an empty column name).
    #[error("{}: {detail}", path.display())]
    InvalidSpec {
        /// The output path.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The image could not be written (missing directory, no permission, …).
    #[error("{}: cannot write the image: {source}", path.display())]
    Write {
        /// The output path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The drawing library failed (should not happen with valid input).
    #[error("{}: drawing failed: {detail}", path.display())]
    Draw {
        /// The output path.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// Columns given to [`CsvTable::from_columns`] that do not form a table.
    #[error("invalid table: {detail}")]
    InvalidTable {
        /// What is wrong.
        detail: String,
    },
}

/// Whether `name` matches `pattern`, where `*` stands for any run of
/// characters (possibly empty) and every other character for itself.
fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    // Position of the last `*` seen and the name position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            // Let the last `*` swallow one more character.
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The columns (indices into [`CsvTable::names`]) that `y` selects with
/// `x` on the horizontal axis, following the rules of the module
/// documentation: exact names, `*` patterns, `object.` prefixes; all columns
/// but `x` when `y` is empty; at most [`MAX_SERIES`].
pub fn select_columns(table: &CsvTable, x: &str, y: &[String]) -> Result<Vec<usize>, PlotError> {
    let names = table.names();
    let mut chosen: Vec<usize> = Vec::new();
    let add = |k: usize, chosen: &mut Vec<usize>| {
        if !chosen.contains(&k) {
            chosen.push(k);
        }
    };
    if y.is_empty() {
        for (k, name) in names.iter().enumerate() {
            if name != x {
                add(k, &mut chosen);
            }
        }
        if chosen.is_empty() {
            return Err(PlotError::NothingToPlot {
                path: table.path().to_path_buf(),
                detail: format!("the file has no column besides `{x}`"),
            });
        }
    }
    for entry in y {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(PlotError::UnknownColumn {
                path: table.path().to_path_buf(),
                name: String::new(),
                available: names.to_vec(),
            });
        }
        if let Some(k) = table.index_of(entry) {
            add(k, &mut chosen);
            continue;
        }
        let is_pattern = entry.contains('*');
        let is_prefix = !is_pattern && entry.ends_with('.');
        if !is_pattern && !is_prefix {
            return Err(PlotError::UnknownColumn {
                path: table.path().to_path_buf(),
                name: entry.to_string(),
                available: names.to_vec(),
            });
        }
        let mut matched = false;
        for (k, name) in names.iter().enumerate() {
            if name == x {
                continue;
            }
            let hit = if is_pattern {
                glob_match(entry, name)
            } else {
                name.starts_with(entry)
            };
            if hit {
                matched = true;
                add(k, &mut chosen);
            }
        }
        if !matched {
            return Err(PlotError::NoMatch {
                path: table.path().to_path_buf(),
                pattern: entry.to_string(),
                available: names.to_vec(),
            });
        }
    }
    if chosen.len() > MAX_SERIES {
        return Err(PlotError::TooManyColumns {
            path: table.path().to_path_buf(),
            count: chosen.len(),
            max: MAX_SERIES,
        });
    }
    Ok(chosen)
}

/// Draws the plot `spec` describes from `table` and writes the image (see
/// the module documentation for the selection, the decimation and how the
/// file is written). Nothing is written when an error is returned.
pub fn plot(table: &CsvTable, spec: &PlotSpec) -> Result<PlotReport, PlotError> {
    render::plot(table, spec)
}

/// Reads the CSV file `csv` and draws the plot `spec` describes from it:
/// [`read_csv_columns`] then [`plot`]. The output's format is checked
/// before the file is read.
pub fn plot_file(csv: impl AsRef<Path>, spec: &PlotSpec) -> Result<PlotReport, PlotError> {
    render::check_spec(spec)?;
    let table = read_csv_columns(csv)?;
    plot(&table, spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> CsvTable {
        CsvTable::from_columns(
            "sim.csv",
            names.iter().map(|s| s.to_string()).collect(),
            names.iter().map(|_| vec![0.0, 1.0]).collect(),
        )
        .unwrap()
    }

    fn names_of(t: &CsvTable, idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&k| t.names()[k].clone()).collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn glob_matching() {
        assert!(glob_match("ball.q[*]", "ball.q[0]"));
        assert!(glob_match("ball.q[*]", "ball.q[12]"));
        assert!(!glob_match("ball.q[*]", "ball.v[0]"));
        assert!(!glob_match("ball.q[*]", "ball.q[0]x"));
        assert!(glob_match("*.lambda[0]", "floor.lambda[0]"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(glob_match("a*b*c", "abc"));
        assert!(!glob_match("a*b*c", "acb"));
        assert!(glob_match("a**", "a"));
        assert!(!glob_match("abc", "ab"));
        assert!(glob_match("*q[1]", "ball.q[1]"));
        assert!(glob_match("b*l*.q[*]", "ball.q[3]"));
    }

    #[test]
    fn selection_rules() {
        let t = table(&[
            "t",
            "ball.q[0]",
            "ball.q[1]",
            "ball.v[0]",
            "floor.y[0]",
            "floor.lambda[0]",
        ]);
        let sel = |y: &[&str]| select_columns(&t, "t", &strings(y)).map(|i| names_of(&t, &i));
        assert_eq!(
            sel(&[]).unwrap(),
            strings(&[
                "ball.q[0]",
                "ball.q[1]",
                "ball.v[0]",
                "floor.y[0]",
                "floor.lambda[0]"
            ])
        );
        assert_eq!(
            sel(&["ball.q[*]"]).unwrap(),
            strings(&["ball.q[0]", "ball.q[1]"])
        );
        assert_eq!(
            sel(&["floor.", "ball.v[0]"]).unwrap(),
            strings(&["floor.y[0]", "floor.lambda[0]", "ball.v[0]"])
        );
        // Repeats are drawn once, in the order first asked.
        assert_eq!(
            sel(&["ball.q[1]", "ball.q[*]"]).unwrap(),
            strings(&["ball.q[1]", "ball.q[0]"])
        );
        // Patterns skip x; an exact name may still ask for it.
        assert_eq!(sel(&["*"]).unwrap().len(), 5);
        assert_eq!(sel(&["t"]).unwrap(), strings(&["t"]));
        match sel(&["ball.w[0]"]) {
            Err(PlotError::UnknownColumn { name, .. }) => assert_eq!(name, "ball.w[0]"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(sel(&["wall.*"]), Err(PlotError::NoMatch { .. })));
        assert!(matches!(sel(&["wall."]), Err(PlotError::NoMatch { .. })));
        assert!(matches!(sel(&[""]), Err(PlotError::UnknownColumn { .. })));
    }

    #[test]
    fn selection_is_capped() {
        let mut names = vec!["t".to_string()];
        names.extend((0..13).map(|i| format!("x.q[{i}]")));
        let t = CsvTable::from_columns("big.csv", names.clone(), vec![vec![1.0]; 14]).unwrap();
        let e = select_columns(&t, "t", &[]).unwrap_err();
        assert!(matches!(e, PlotError::TooManyColumns { count: 13, .. }));
        assert!(e.to_string().contains("--columns"), "{e}");
        assert_eq!(
            select_columns(&t, "t", &strings(&["x.q[1*]"]))
                .unwrap()
                .len(),
            4
        );
        let only_t = CsvTable::from_columns("t.csv", vec!["t".into()], vec![vec![1.0]]).unwrap();
        assert!(matches!(
            select_columns(&only_t, "t", &[]),
            Err(PlotError::NothingToPlot { .. })
        ));
    }

    #[test]
    fn unknown_column_message_lists_the_columns() {
        let t = table(&["t", "a.q[0]"]);
        let e = select_columns(&t, "t", &strings(&["b.q[0]"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sim.csv: no column `b.q[0]`; the columns are `t`, `a.q[0]`"
        );
    }

    #[test]
    fn specs_read_from_toml_plots_tables() {
        #[derive(Deserialize)]
        struct Scenario {
            plots: Vec<PlotSpec>,
        }
        let s: Scenario = toml::from_str(
            r#"
            [[plots]]
            output = "ball.svg"
            y = ["ball.q[0]"]

            [[plots]]
            output = "contact.png"
            x = "ball.q[0]"
            y = ["floor.lambda[0]", "ball.v[*]"]
            title = "Contact"
            width = 640
            height = 400
            "#,
        )
        .unwrap();
        assert_eq!(
            s.plots[0],
            PlotSpec {
                y: strings(&["ball.q[0]"]),
                ..PlotSpec::new("ball.svg")
            }
        );
        let p = &s.plots[1];
        assert_eq!(p.x, "ball.q[0]");
        assert_eq!(p.y, strings(&["floor.lambda[0]", "ball.v[*]"]));
        assert_eq!(p.title.as_deref(), Some("Contact"));
        assert_eq!((p.width, p.height), (640, 400));
        // A misspelt key is an error, not silently ignored.
        let bad: Result<Scenario, _> =
            toml::from_str("[[plots]]\noutput = \"a.svg\"\ntitel = \"x\"\n");
        assert!(bad.is_err());
        let missing: Result<Scenario, _> = toml::from_str("[[plots]]\ny = [\"t\"]\n");
        assert!(missing.is_err());
    }

    #[test]
    fn formats_from_extensions() {
        assert_eq!(ImageFormat::from_path("a/b.svg"), Some(ImageFormat::Svg));
        assert_eq!(ImageFormat::from_path("B.PNG"), Some(ImageFormat::Png));
        assert_eq!(ImageFormat::from_path("b.pdf"), None);
        assert_eq!(ImageFormat::from_path("svg"), None);
        assert_eq!(ImageFormat::from_path("dir/.."), None);
    }
}
