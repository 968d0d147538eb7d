//! CSV output that is never left half-written: rows go through the `csv`
//! crate's writer to a temporary file beside the target (`tempfile`),
//! [`CsvFile::finish`] renames it into place (`persist`), and a [`CsvFile`]
//! dropped without `finish` (an error path) removes it.
//!
//! Numbers are written in Rust's shortest round-trip form, so parsing a
//! value gives back the exact `f64`: plain decimals for magnitudes in
//! [1e-4, 1e15) and zero, exponent form (`1.5e-7`) otherwise. Texts are
//! quoted when they hold a comma, a quote or a line break (quotes doubled).
//! Writing a row allocates nothing beyond the writer's buffer: each number
//! is formatted into a buffer on the stack and handed to the writer as one
//! field.

use std::io::{self, Cursor, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// One field of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// A number.
    Number(f64),
    /// A text (quoted when it holds a comma, a quote or a line break).
    Text(&'a str),
}

/// Writes a number in the shortest form that reads back to the same value.
pub fn write_number(w: &mut impl Write, x: f64) -> io::Result<()> {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e15).contains(&a) || !a.is_finite() {
        write!(w, "{x}")
    } else {
        write!(w, "{x:e}")
    }
}

/// Room for the longest text [`write_number`] gives (24 bytes, as in
/// `-2.2250738585072014e-308`).
const NUMBER_BYTES: usize = 32;

/// `x` as [`write_number`] writes it, in `buf`.
fn number_text(x: f64, buf: &mut [u8; NUMBER_BYTES]) -> io::Result<&[u8]> {
    let mut c = Cursor::new(&mut buf[..]);
    write_number(&mut c, x)?;
    let n = c.position() as usize;
    Ok(&buf[..n])
}

/// A CSV file being written; see the module documentation.
#[derive(Debug)]
pub struct CsvFile {
    target: PathBuf,
    out: Option<csv::Writer<NamedTempFile>>,
    columns: usize,
    rows: u64,
}

impl CsvFile {
    /// Creates `dir/<file_name>` (through a temporary file in `dir`) and
    /// writes the header line.
    pub fn create(dir: &Path, file_name: &str, header: &[&str]) -> io::Result<CsvFile> {
        let prefix = format!(".{file_name}.");
        let mut temporary = tempfile::Builder::new();
        temporary.prefix(&prefix).suffix(".tmp");
        // The permissions of a file created as usual (0666 less the umask),
        // not tempfile's private 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temporary.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let file = temporary.tempfile_in(dir)?;
        let out = csv::WriterBuilder::new()
            .flexible(true)
            .buffer_capacity(1 << 16)
            .from_writer(file);
        let mut csv = CsvFile {
            target: dir.join(file_name),
            out: Some(out),
            columns: header.len(),
            rows: 0,
        };
        csv.writer().write_record(header)?;
        Ok(csv)
    }

    fn writer(&mut self) -> &mut csv::Writer<NamedTempFile> {
        self.out.as_mut().expect("the file is open until finish")
    }

    /// Number of columns (the header's length).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Rows written so far (the header not counted).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes a row of numbers.
    pub fn write_row(&mut self, values: &[f64]) -> io::Result<()> {
        debug_assert_eq!(values.len(), self.columns);
        let w = self.writer();
        let mut buf = [0u8; NUMBER_BYTES];
        for &x in values {
            w.write_field(number_text(x, &mut buf)?)?;
        }
        w.write_record(None::<&[u8]>)?;
        self.rows += 1;
        Ok(())
    }

    /// Writes a row of numbers and texts.
    pub fn write_fields(&mut self, fields: &[Field<'_>]) -> io::Result<()> {
        debug_assert_eq!(fields.len(), self.columns);
        let w = self.writer();
        let mut buf = [0u8; NUMBER_BYTES];
        for f in fields {
            match *f {
                Field::Number(x) => w.write_field(number_text(x, &mut buf)?)?,
                Field::Text(s) => w.write_field(s)?,
            }
        }
        w.write_record(None::<&[u8]>)?;
        self.rows += 1;
        Ok(())
    }

    /// Flushes the rows and moves the file into place; returns its path.
    /// On an error the temporary file is removed.
    pub fn finish(mut self) -> io::Result<PathBuf> {
        let out = self.out.take().expect("the file is open until finish");
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.persist(&self.target).map_err(|e| e.error)?;
        Ok(std::mem::take(&mut self.target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn text(x: f64) -> String {
        let mut v = Vec::new();
        write_number(&mut v, x).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn numbers_round_trip() {
        assert_eq!(text(0.1), "0.1");
        assert_eq!(text(1.0), "1");
        assert_eq!(text(-0.0), "-0");
        assert_eq!(text(1.5e-7), "1.5e-7");
        assert_eq!(text(2e20), "2e20");
        for x in [
            0.1 + 0.2,
            -9.81 * 0.005,
            1.0 / 3.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            1e-4,
            9.999e14,
            1e15,
            5e-324,
        ] {
            assert_eq!(
                text(x).parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{x}"
            );
        }
    }

    #[test]
    fn the_longest_numbers_fit_the_stack_buffer() {
        let mut buf = [0u8; NUMBER_BYTES];
        for x in [
            -f64::MIN_POSITIVE,
            -f64::MAX,
            -1.0 / 3.0 * 1e-3,
            -999_999_999_999_999.9,
            -5e-324,
            f64::NAN,
            f64::NEG_INFINITY,
        ] {
            let t = number_text(x, &mut buf).unwrap();
            assert_eq!(t, text(x).as_bytes());
        }
    }

    #[test]
    fn finish_renames_and_drop_cleans_up() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-csv-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let listing = || {
            let mut v: Vec<String> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let mut c = CsvFile::create(&dir, "a.csv", &["t", "x,y"]).unwrap();
        c.write_row(&[0.0, 1.5]).unwrap();
        c.write_fields(&[Field::Number(0.5), Field::Text("q\"")])
            .unwrap();
        assert_eq!(listing().len(), 1);
        assert!(listing()[0].ends_with(".tmp"));
        let path = c.finish().unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "t,\"x,y\"\n0,1.5\n0.5,\"q\"\"\"\n"
        );
        assert_eq!(listing(), ["a.csv"]);
        let mut c = CsvFile::create(&dir, "b.csv", &["t"]).unwrap();
        c.write_row(&[1.0]).unwrap();
        drop(c);
        assert_eq!(listing(), ["a.csv"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// Writing rows allocates nothing: a counting global allocator (per
/// thread, so the test harness's other threads do not disturb it) checks
/// it. (Moved here from the core's `tests/allocation_free.rs` with the
/// writer.)
#[cfg(test)]
mod allocation {
    use super::*;

    #[test]
    fn csv_rows_do_not_allocate() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-alloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut csv = CsvFile::create(&dir, "rows.csv", &["t", "a", "b"]).unwrap();
        let row = [0.125, -1.0 / 3.0, 2.5e-9];
        csv.write_row(&row).unwrap();
        let allocated = allocation_counter::measure(|| {
            for _ in 0..10_000 {
                csv.write_row(&row).unwrap();
            }
        })
        .count_total;
        drop(csv);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(allocated, 0, "CSV rows allocated");
    }
}
