//! Reading a simulation CSV file into named columns of numbers.

use std::fs::File;
use std::io::{BufRead, BufReader};

use std::path::{Path, PathBuf};

use super::PlotError;
use nonsmooth::io::Location;

/// A CSV file read into named columns of `f64`, all of the same length.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTable {
    path: PathBuf,
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
}

impl CsvTable {
    /// A table from columns already in memory. `path` is the name used in
    /// messages (and for the default plot title). The names must be
    /// non-empty, distinct and free of commas and line breaks, one per
    /// column, and the columns of equal length.
    pub fn from_columns(
        path: impl Into<PathBuf>,
        names: Vec<String>,
        columns: Vec<Vec<f64>>,
    ) -> Result<CsvTable, PlotError> {
        let invalid = |detail: String| Err(PlotError::InvalidTable { detail });
        if names.len() != columns.len() {
            return invalid(format!(
                "{} names for {} columns",
                names.len(),
                columns.len()
            ));
        }
        for (k, name) in names.iter().enumerate() {
            if name.trim().is_empty() || name.trim() != name {
                return invalid(format!(
                    "column {} has an empty name or one with surrounding spaces",
                    k + 1
                ));
            }
            if name.contains([',', '\n', '\r']) {
                return invalid(format!(
                    "column name `{name}` holds a comma or a line break"
                ));
            }
            if names[..k].contains(name) {
                return invalid(format!("column name `{name}` appears twice"));
            }
        }
        if let Some(first) = columns.first() {
            if let Some((k, c)) = columns
                .iter()
                .enumerate()
                .find(|(_, c)| c.len() != first.len())
            {
                return invalid(format!(
                    "column `{}` has {} values, column `{}` has {}",
                    names[k],
                    c.len(),
                    names[0],
                    first.len()
                ));
            }
        }
        Ok(CsvTable {
            path: path.into(),
            names,
            columns,
        })
    }

    /// The file the table was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The column names, in the file's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of data rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// Position of the column named exactly `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The values of the column named exactly `name`.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.index_of(name).map(|k| self.columns[k].as_slice())
    }

    /// The values of the `k`-th column (in [`CsvTable::names`] order), or
    /// `None` past the last column.
    pub fn column_at(&self, k: usize) -> Option<&[f64]> {
        self.columns.get(k).map(Vec::as_slice)
    }
}

/// Reads a simulation CSV file: a header line of column names, then rows of
/// numbers, comma-separated (see the [module documentation](super)).
///
/// Errors: the file cannot be read; it is empty; a header name is empty or
/// repeated; a cell is not a number (the message gives `path:line:column`
/// and the column's name); a row has more or fewer values than the header
/// has names; a line is not UTF-8.
pub fn read_csv_columns(path: impl AsRef<Path>) -> Result<CsvTable, PlotError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| PlotError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_csv_columns(BufReader::with_capacity(1 << 16, file), path)
}

/// Like [`read_csv_columns`], from any buffered reader; `path` names the
/// source in messages.
///
/// The file is split into records and fields by the `csv` crate (RFC 4180:
/// quoted fields may hold commas, quotes and line breaks), the same crate
/// that writes the simulation CSV files. Blank lines are skipped; a UTF-8
/// byte-order mark at the start is ignored; cells may be padded with
/// spaces. Error columns count characters from the start of the record,
/// reading each field as written when it was not quoted (a quoted field
/// before the error shifts the column by its quotes).
pub fn parse_csv_columns(
    reader: impl BufRead,
    path: impl AsRef<Path>,
) -> Result<CsvTable, PlotError> {
    let path = path.as_ref();
    let at = |line: usize, column: usize| Location {
        path: path.to_path_buf(),
        line,
        column,
    };
    let mut records = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(reader);
    let mut record = ::csv::ByteRecord::new();
    let mut names: Vec<String> = Vec::new();
    let mut columns: Vec<Vec<f64>> = Vec::new();
    loop {
        let more = records
            .read_byte_record(&mut record)
            .map_err(|e| read_error(path, e))?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        let mut fields: Vec<&str> = Vec::with_capacity(record.len());
        let mut column = 1;
        for (k, bytes) in record.iter().enumerate() {
            let bytes = if names.is_empty() && k == 0 {
                bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes)
            } else {
                bytes
            };
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    column += text.chars().count() + 1;
                    fields.push(text);
                }
                Err(e) => {
                    let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("");
                    return Err(PlotError::NotUtf8 {
                        at: at(line, column + good.chars().count()),
                    });
                }
            }
        }
        if fields.iter().all(|f| f.trim().is_empty()) && fields.len() <= 1 {
            continue;
        }
        if names.is_empty() {
            names = parse_header(&fields, |c| at(line, c))?;
            columns = vec![Vec::new(); names.len()];
            continue;
        }
        parse_row(&fields, &names, &mut columns, |c| at(line, c))?;
    }
    if names.is_empty() {
        return Err(PlotError::EmptyFile {
            path: path.to_path_buf(),
        });
    }
    Ok(CsvTable {
        path: path.to_path_buf(),
        names,
        columns,
    })
}

/// A failure of the `csv` reader (with flexible records read as bytes,
/// only the underlying reads can fail).
fn read_error(path: &Path, e: ::csv::Error) -> PlotError {
    let source = match e.into_kind() {
        ::csv::ErrorKind::Io(source) => source,
        other => std::io::Error::other(format!("{other:?}")),
    };
    PlotError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// 1-based character column at which field `k` starts (its first
/// non-blank character), the fields read as written.
fn field_column(fields: &[&str], k: usize) -> usize {
    let before: usize = fields[..k].iter().map(|f| f.chars().count() + 1).sum();
    let field = fields[k];
    let blanks = field.chars().count() - field.trim_start().chars().count();
    before + blanks + 1
}

/// 1-based character column just past the last field.
fn end_column(fields: &[&str]) -> usize {
    let width: usize = fields.iter().map(|f| f.chars().count() + 1).sum();
    width.max(1)
}

fn parse_header(fields: &[&str], at: impl Fn(usize) -> Location) -> Result<Vec<String>, PlotError> {
    let mut names: Vec<String> = Vec::new();
    for (k, cell) in fields.iter().enumerate() {
        let name = cell.trim();
        let column = field_column(fields, k);
        if name.is_empty() {
            return Err(PlotError::BadHeader {
                at: at(column),
                detail: format!("column {} has an empty name", names.len() + 1),
            });
        }
        if let Some(j) = names.iter().position(|n| n == name) {
            return Err(PlotError::BadHeader {
                at: at(column),
                detail: format!(
                    "column `{name}` appears twice (columns {} and {})",
                    j + 1,
                    names.len() + 1
                ),
            });
        }
        names.push(name.to_string());
    }
    Ok(names)
}

fn parse_row(
    fields: &[&str],
    names: &[String],
    columns: &mut [Vec<f64>],
    at: impl Fn(usize) -> Location,
) -> Result<(), PlotError> {
    let expected = names.len();
    if fields.len() != expected {
        let column = if fields.len() > expected {
            field_column(fields, expected)
        } else {
            end_column(fields)
        };
        return Err(PlotError::RaggedRow {
            at: at(column),
            expected,
            found: fields.len(),
        });
    }
    for (k, cell) in fields.iter().enumerate() {
        let value = cell.trim();
        match value.parse::<f64>() {
            Ok(v) => columns[k].push(v),
            Err(_) => {
                // Undo the partial row so the columns stay of equal length.
                for c in columns.iter_mut().take(k) {
                    c.pop();
                }
                return Err(PlotError::NotANumber {
                    at: at(field_column(fields, k)),
                    column: names[k].clone(),
                    found: value.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CsvTable, PlotError> {
        parse_csv_columns(text.as_bytes(), "sim.csv")
    }

    #[test]
    fn reads_columns_in_every_number_form() {
        let t = parse(
            "t,ball.q[0],ball.v[0]\n\
             0,1,0\n\
             1e-3, 0.30000000000000004 ,-9.81e-3\r\n\
             \n\
             2E-3,+0.5,NaN\n\
             0.003,inf,-inf",
        )
        .unwrap();
        assert_eq!(t.names(), ["t", "ball.q[0]", "ball.v[0]"]);
        assert_eq!(t.rows(), 4);
        assert_eq!(t.column("t").unwrap(), [0.0, 1e-3, 2e-3, 0.003]);
        assert_eq!(
            t.column("ball.q[0]").unwrap(),
            [1.0, 0.1 + 0.2, 0.5, f64::INFINITY]
        );
        assert!(t.column("ball.v[0]").unwrap()[2].is_nan());
        assert_eq!(t.column_at(2).unwrap()[3], f64::NEG_INFINITY);
        assert!(t.column("nope").is_none());
        assert_eq!(t.path(), Path::new("sim.csv"));
    }

    #[test]
    fn round_trips_rust_formatting() {
        let values = [0.1, 1.0 / 3.0, -2.5e-300, 6.02214076e23, f64::MIN_POSITIVE];
        let mut text = String::from("t,x.q[0]\n");
        for (i, v) in values.iter().enumerate() {
            if i % 2 == 0 {
                text.push_str(&format!("{i},{v}\n"));
            } else {
                text.push_str(&format!("{i},{v:e}\n"));
            }
        }
        let t = parse(&text).unwrap();
        assert_eq!(t.column("x.q[0]").unwrap(), values);
    }

    #[test]
    fn quoted_fields_are_read_as_the_csv_writer_wrote_them() {
        // A name holding a comma, quoted by the writer (RFC 4180), and a
        // quoted number.
        let t = parse("t,\"pair.v(a,b)\",\"say \"\"x\"\"\"\n0,\"1.5\",2\n").unwrap();
        assert_eq!(t.names(), ["t", "pair.v(a,b)", "say \"x\""]);
        assert_eq!(t.column("pair.v(a,b)").unwrap(), [1.5]);
        assert_eq!(t.column_at(2).unwrap(), [2.0]);
        // A byte-order mark before the header is not part of the first name.
        let t = parse("\u{feff}t,a\n1,2\n").unwrap();
        assert_eq!(t.names(), ["t", "a"]);
    }

    #[test]
    fn header_only_is_an_empty_table() {
        let t = parse("t,a.q[0]\n").unwrap();
        assert_eq!(t.rows(), 0);
        assert_eq!(t.names().len(), 2);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let msg = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            msg(""),
            "sim.csv: the file is empty (expected a header line such as `t,ball.q[0]`)"
        );
        assert!(matches!(parse("\n  \n"), Err(PlotError::EmptyFile { .. })));
        assert_eq!(
            msg("t,a.q[0]\n0,1\n0.1,abc\n"),
            "sim.csv:3:5: expected a number for column `a.q[0]`, found `abc`"
        );
        assert_eq!(
            msg("t,a.q[0]\n0,\n"),
            "sim.csv:2:3: expected a number for column `a.q[0]`, found an empty cell"
        );
        assert_eq!(
            msg("t,a.q[0]\n0,1\n0.1\n"),
            "sim.csv:3:4: this row has 1 values, the header has 2 columns"
        );
        assert_eq!(
            msg("t,a.q[0]\n0,1,2,3\n"),
            "sim.csv:2:5: this row has 4 values, the header has 2 columns"
        );
        assert_eq!(
            msg("t,,b\n"),
            "sim.csv:1:3: bad header: column 2 has an empty name"
        );
        assert_eq!(
            msg("t,a, a\n"),
            "sim.csv:1:6: bad header: column `a` appears twice (columns 2 and 3)"
        );
        // Columns count characters, not bytes.
        assert_eq!(
            msg("t,é.q[0]\n0,1\n1,x\n"),
            "sim.csv:3:3: expected a number for column `é.q[0]`, found `x`"
        );
        let e = parse_csv_columns(&b"t,a\n0,\xff\n"[..], "sim.csv").unwrap_err();
        assert_eq!(e.to_string(), "sim.csv:2:3: the line is not UTF-8 text");
    }

    #[test]
    fn missing_file_is_a_read_error() {
        let e = read_csv_columns("/nonexistent/dir/sim.csv").unwrap_err();
        assert!(matches!(e, PlotError::Read { .. }));
        assert!(e
            .to_string()
            .starts_with("/nonexistent/dir/sim.csv: cannot read"));
    }

    #[test]
    fn tables_from_columns_are_checked() {
        let ok = CsvTable::from_columns("m", vec!["t".into()], vec![vec![0.0]]);
        assert!(ok.is_ok());
        let bad = [
            (vec!["t".to_string()], vec![]),
            (vec!["t".into(), "t".into()], vec![vec![0.0], vec![1.0]]),
            (
                vec!["t".into(), "a".into()],
                vec![vec![0.0], vec![1.0, 2.0]],
            ),
            (vec!["".into()], vec![vec![0.0]]),
            (vec!["a,b".into()], vec![vec![0.0]]),
        ];
        for (names, cols) in bad {
            assert!(matches!(
                CsvTable::from_columns("m", names, cols),
                Err(PlotError::InvalidTable { .. })
            ));
        }
    }
}
