//! CSV output that is never left half-written: rows go to a temporary file
//! beside the target, [`CsvFile::finish`] renames it into place, and a
//! [`CsvFile`] dropped without `finish` (an error path) removes it.
//!
//! Numbers are written in Rust's shortest round-trip form, so parsing a
//! value gives back the exact `f64`: plain decimals for magnitudes in
//! [1e-4, 1e15) and zero, exponent form (`1.5e-7`) otherwise. Writing a row
//! allocates nothing beyond the writer's buffer.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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

fn write_text(w: &mut impl Write, s: &str) -> io::Result<()> {
    if s.contains([',', '"', '\n', '\r']) {
        w.write_all(b"\"")?;
        w.write_all(s.replace('"', "\"\"").as_bytes())?;
        w.write_all(b"\"")
    } else {
        w.write_all(s.as_bytes())
    }
}

/// A CSV file being written; see the module documentation.
#[derive(Debug)]
pub struct CsvFile {
    target: PathBuf,
    temporary: PathBuf,
    out: Option<BufWriter<File>>,
    columns: usize,
    rows: u64,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl CsvFile {
    /// Creates `dir/<file_name>` (through a temporary file in `dir`) and
    /// writes the header line.
    pub fn create(dir: &Path, file_name: &str, header: &[&str]) -> io::Result<CsvFile> {
        let target = dir.join(file_name);
        let (temporary, file) = loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        };
        let mut csv = CsvFile {
            target,
            temporary,
            out: Some(BufWriter::with_capacity(1 << 16, file)),
            columns: header.len(),
            rows: 0,
        };
        let w = csv.writer();
        for (k, h) in header.iter().enumerate() {
            if k > 0 {
                w.write_all(b",")?;
            }
            write_text(w, h)?;
        }
        w.write_all(b"\n")?;
        Ok(csv)
    }

    fn writer(&mut self) -> &mut BufWriter<File> {
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

    /// The file written by [`CsvFile::finish`].
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Writes a row of numbers.
    pub fn write_row(&mut self, values: &[f64]) -> io::Result<()> {
        debug_assert_eq!(values.len(), self.columns);
        let w = self.writer();
        for (k, &x) in values.iter().enumerate() {
            if k > 0 {
                w.write_all(b",")?;
            }
            write_number(w, x)?;
        }
        w.write_all(b"\n")?;
        self.rows += 1;
        Ok(())
    }

    /// Writes a row of numbers and texts.
    pub fn write_fields(&mut self, fields: &[Field<'_>]) -> io::Result<()> {
        debug_assert_eq!(fields.len(), self.columns);
        let w = self.writer();
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                w.write_all(b",")?;
            }
            match *f {
                Field::Number(x) => write_number(w, x)?,
                Field::Text(s) => write_text(w, s)?,
            }
        }
        w.write_all(b"\n")?;
        self.rows += 1;
        Ok(())
    }

    /// Flushes the rows and moves the file into place; returns its path.
    pub fn finish(mut self) -> io::Result<PathBuf> {
        let out = self.out.take().expect("the file is open until finish");
        let file = out.into_inner().map_err(|e| e.into_error())?;
        drop(file);
        if let Err(e) = fs::rename(&self.temporary, &self.target) {
            let _ = fs::remove_file(&self.temporary);
            return Err(e);
        }
        Ok(std::mem::take(&mut self.target))
    }
}

impl Drop for CsvFile {
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            // Not finished: discard what was written.
            drop(out.into_parts());
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
