//! `nonsmooth plot CSV -o FILE`: draw columns of a simulation CSV file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use nonsmooth_plot::{
    plot_file, PlotSpec, DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_SERIES, MAX_SIDE, MIN_SIZE,
};

/// Exit status: the image was written.
const EXIT_OK: u8 = 0;
/// Exit status: bad input (file, columns, options, unwritable output).
const EXIT_BAD_INPUT: u8 = 2;

/// Arguments of `nonsmooth plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Simulation CSV file: a header line `t,ball.q[0],...`, then one row of
    /// numbers per time step.
    pub csv: PathBuf,

    /// Columns to draw, comma-separated or repeated: exact names
    /// (`ball.q[0]`), patterns where `*` is any text (`ball.q[*]`) or
    /// prefixes ending in `.` (`ball.`). Default: every column but the x
    /// column.
    #[arg(long, short = 'c', value_name = "COL,...", value_delimiter = ',')]
    pub columns: Vec<String>,

    /// Column on the horizontal axis.
    #[arg(
        short = 'x',
        long = "x-column",
        value_name = "COL",
        default_value = "t"
    )]
    pub x: String,

    /// Title above the plot [default: the CSV file's name; "" for none].
    #[arg(long, value_name = "T")]
    pub title: Option<String>,

    /// Image size in pixels.
    #[arg(long, value_name = "WxH", value_parser = parse_size, default_value_t = Size(DEFAULT_WIDTH, DEFAULT_HEIGHT))]
    pub size: Size,

    /// Output image; its extension (.svg or .png) chooses the format.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// An image size, `WIDTHxHEIGHT` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u32, pub u32);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.0, self.1)
    }
}

fn parse_size(s: &str) -> Result<Size, String> {
    let bad = || format!("`{s}` is not a size WIDTHxHEIGHT such as 960x600");
    let (w, h) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!(
            "the width must be from {} to {MAX_SIDE} pixels and the height from {} to {MAX_SIDE}, got {w}x{h}",
            MIN_SIZE.0, MIN_SIZE.1
        ));
    }
    Ok(Size(w, h))
}

/// Help shown after `-h`.
pub fn short_help() -> String {
    "Examples:\n  \
       nonsmooth plot ball.csv -o ball.svg\n  \
       nonsmooth plot ball.csv --columns 'ball.q[*],floor.lambda[0]' -o ball.png\n\n\
     Exit status: 0 image written, 2 bad input. See --help for more."
        .to_string()
}

/// Help shown after `--help`.
pub fn long_help() -> String {
    format!(
        "Examples:\n  \
           nonsmooth plot ball.csv -o ball.svg                      # every column against t\n  \
           nonsmooth plot ball.csv --columns 'ball.q[*]' -o q.png   # ball.q[0], ball.q[1], ...\n  \
           nonsmooth plot ball.csv -c ball. --title Ball -o b.svg   # every ball.* column\n  \
           nonsmooth plot ball.csv -x 'ball.q[0]' -c 'ball.v[0]' -o phase.svg\n\n\
         The CSV file: a header line naming the columns (`t` then `object.variable[index]`),\n\
         then one row of numbers per time step. NaN and inf are accepted and leave a gap.\n\n\
         At most {MAX_SERIES} columns go in one plot. Long series are decimated for drawing:\n\
         per pixel column the first, last, lowest and highest points are kept, so the\n\
         image shows every extreme and 10^6 rows draw in well under a second.\n\n\
         The image is written to a temporary file beside the output and renamed, so an\n\
         error never leaves a half-written image. PNG text uses a bundled font.\n\n\
         Exit status:\n  \
           0  the image was written\n  \
           2  bad input: unreadable or malformed CSV (reported as file:line:column),\n     \
              unknown column, nothing to plot, unsupported extension, bad size,\n     \
              output that cannot be written"
    )
}

/// Runs `nonsmooth plot` and returns its exit status.
pub fn run(args: &PlotArgs) -> ExitCode {
    let spec = PlotSpec {
        title: args.title.clone(),
        x: args.x.clone(),
        y: args.columns.clone(),
        output: args.output.clone(),
        width: args.size.0,
        height: args.size.1,
    };
    match plot_file(&args.csv, &spec) {
        Ok(report) => {
            println!(
                "wrote {} ({}, {}x{}): {} ({} rows, {} points drawn)",
                report.output.display(),
                report.format,
                spec.width,
                spec.height,
                report.series.join(", "),
                report.rows,
                report.points_drawn
            );
            ExitCode::from(EXIT_OK)
        }
        Err(e) => {
            eprintln!("nonsmooth plot: error: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_parsed_and_checked() {
        assert_eq!(parse_size("640x400"), Ok(Size(640, 400)));
        assert_eq!(parse_size(" 800X600 "), Ok(Size(800, 600)));
        for bad in [
            "640", "x400", "640x", "ax3", "10x10", "5000x400", "-640x400",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(Size(960, 600).to_string(), "960x600");
    }
}
