//! Scanning a problem file: locations, the reader's errors, and the
//! scanner of whitespace-separated tokens and of CSparse dump lines.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// A place in a file: path, 1-based line and 1-based column (in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file.
    pub path: PathBuf,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
    }
}

pub(super) fn progress(read: &usize, needed: &usize) -> String {
    if *needed > 1 {
        format!(", {read} of {needed} values read")
    } else {
        String::new()
    }
}

/// Why a problem file could not be read. Every variant but [`ReadError::Io`]
/// carries the [`Location`] of the offending token (or of the end of the
/// file), and its message starts with `path:line:column:`.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{}: cannot read the file: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// A token that is not the number expected (e.g. `expected a number for
    /// q[3], found `abc``).
    #[error("{at}: expected {expected} for {what}, found `{found}`")]
    BadToken {
        /// Where.
        at: Location,
        /// What was being read.
        what: String,
        /// `a number`, `an integer`, …
        expected: &'static str,
        /// The token (shortened if long).
        found: String,
    },
    /// The file ends before the problem does.
    #[error("{at}: unexpected end of file while reading {what}{}", progress(.read, .needed))]
    UnexpectedEof {
        /// The end of the file.
        at: Location,
        /// What was being read (e.g. `M (dense 4x4)`).
        what: String,
        /// Values of it read.
        read: usize,
        /// Values it needs.
        needed: usize,
    },
    /// A NaN or an infinity (also an overflowing literal such as `1e999`).
    #[error("{at}: non-finite value `{found}` for {what}")]
    NonFinite {
        /// Where.
        at: Location,
        /// What was being read.
        what: String,
        /// The token.
        found: String,
    },
    /// A negative size or count.
    #[error("{at}: negative size {value} for {what}")]
    NegativeSize {
        /// Where.
        at: Location,
        /// Which size.
        what: String,
        /// The value read.
        value: i64,
    },
    /// Sizes that contradict each other (or that no file of this length can hold).
    #[error("{at}: inconsistent sizes: {detail}")]
    InconsistentSize {
        /// Where.
        at: Location,
        /// What disagrees.
        detail: String,
    },
    /// Block offsets, block pointers or block indices that do not add up.
    #[error("{at}: block sizes do not add up: {detail}")]
    BlockSizes {
        /// Where.
        at: Location,
        /// What does not add up.
        detail: String,
    },
    /// A storage or layout the reader does not handle.
    #[error("{at}: unsupported: {detail}")]
    Unsupported {
        /// Where.
        at: Location,
        /// What.
        detail: String,
    },
    /// Well-formed numbers that do not make a valid problem (bounds lb > ub,
    /// MLCP storages that disagree, a flag that is neither 0 nor 1, …).
    #[error("{at}: invalid problem: {detail}")]
    Invalid {
        /// Where.
        at: Location,
        /// Why.
        detail: String,
    },
}

impl ReadError {
    /// The location of the error (`None` for [`ReadError::Io`]).
    pub fn location(&self) -> Option<&Location> {
        match self {
            ReadError::Io { .. } => None,
            ReadError::BadToken { at, .. }
            | ReadError::UnexpectedEof { at, .. }
            | ReadError::NonFinite { at, .. }
            | ReadError::NegativeSize { at, .. }
            | ReadError::InconsistentSize { at, .. }
            | ReadError::BlockSizes { at, .. }
            | ReadError::Unsupported { at, .. }
            | ReadError::Invalid { at, .. } => Some(at),
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. } => path,
            _ => match self.location() {
                Some(at) => &at.path,
                None => Path::new(""),
            },
        }
    }
}

pub(super) type Res<T> = Result<T, ReadError>;

/// Largest number of entries the reader densifies (a sparse dump, a
/// reordered block-sparse M): 2²⁷ values, 1 GiB.
pub(super) const DENSE_LIMIT: usize = 1 << 27;

pub(super) fn fits_dense(rows: usize, cols: usize) -> bool {
    rows.checked_mul(cols).is_some_and(|k| k <= DENSE_LIMIT)
}

/// A position in the source: byte offset, line and the offset its line starts at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    pub(super) offset: usize,
    pub(super) line: usize,
    pub(super) line_start: usize,
}

pub(super) struct Scanner<'a> {
    pub(super) path: &'a Path,
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
    pub(super) line: usize,
    pub(super) line_start: usize,
}

pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A token for a message: lossy UTF-8, control characters escaped, at most
/// 40 characters.
pub(super) fn show(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k == 40 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

pub(super) fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse::<f64>().ok()
}

pub(super) fn parse_i64(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse::<i64>().ok()
}

impl<'a> Scanner<'a> {
    pub(super) fn new(path: &'a Path, src: &'a [u8]) -> Self {
        Scanner {
            path,
            src,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    pub(super) fn location(&self, m: Mark) -> Location {
        let end = m.offset.min(self.src.len());
        let start = m.line_start.min(end);
        let column = 1 + self.src[start..end]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count();
        Location {
            path: self.path.to_path_buf(),
            line: m.line,
            column,
        }
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            offset: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    pub(super) fn skip_ws(&mut self) {
        while self.pos < self.src.len() && is_ws(self.src[self.pos]) {
            if self.src[self.pos] == b'\n' {
                self.line += 1;
                self.line_start = self.pos + 1;
            }
            self.pos += 1;
        }
    }

    /// The next whitespace-separated token, or `None` at the end of the file.
    pub(super) fn token(&mut self) -> Option<(Mark, &'a [u8])> {
        self.skip_ws();
        if self.pos >= self.src.len() {
            return None;
        }
        let m = self.mark();
        let start = self.pos;
        while self.pos < self.src.len() && !is_ws(self.src[self.pos]) {
            self.pos += 1;
        }
        Some((m, &self.src[start..self.pos]))
    }

    pub(super) fn eof(&mut self, what: String, read: usize, needed: usize) -> ReadError {
        self.skip_ws();
        ReadError::UnexpectedEof {
            at: self.location(self.mark()),
            what,
            read,
            needed,
        }
    }

    pub(super) fn err_inconsistent(&self, m: Mark, detail: String) -> ReadError {
        ReadError::InconsistentSize {
            at: self.location(m),
            detail,
        }
    }

    pub(super) fn err_blocks(&self, m: Mark, detail: String) -> ReadError {
        ReadError::BlockSizes {
            at: self.location(m),
            detail,
        }
    }

    pub(super) fn err_invalid(&self, m: Mark, detail: String) -> ReadError {
        ReadError::Invalid {
            at: self.location(m),
            detail,
        }
    }

    pub(super) fn err_unsupported(&self, m: Mark, detail: String) -> ReadError {
        ReadError::Unsupported {
            at: self.location(m),
            detail,
        }
    }

    pub(super) fn bad_token(
        &self,
        m: Mark,
        what: String,
        expected: &'static str,
        text: &[u8],
    ) -> ReadError {
        ReadError::BadToken {
            at: self.location(m),
            what,
            expected,
            found: show(text),
        }
    }

    /// Converts a token into a finite number.
    pub(super) fn number_from(
        &self,
        m: Mark,
        text: &[u8],
        what: impl FnOnce() -> String,
    ) -> Res<f64> {
        match parse_f64(text) {
            Some(v) if v.is_finite() => Ok(v),
            Some(_) => Err(ReadError::NonFinite {
                at: self.location(m),
                what: what(),
                found: show(text),
            }),
            None => Err(self.bad_token(m, what(), "a number", text)),
        }
    }

    /// One integer.
    pub(super) fn int(&mut self, what: impl FnOnce() -> String) -> Res<(i64, Mark)> {
        match self.token() {
            None => Err(self.eof(what(), 0, 1)),
            Some((m, text)) => match parse_i64(text) {
                Some(v) => Ok((v, m)),
                None => Err(self.bad_token(m, what(), "an integer", text)),
            },
        }
    }

    /// One non-negative integer, no larger than the file could describe.
    pub(super) fn size(&mut self, what: impl Fn() -> String) -> Res<(usize, Mark)> {
        let (v, m) = self.int(&what)?;
        if v < 0 {
            return Err(ReadError::NegativeSize {
                at: self.location(m),
                what: what(),
                value: v,
            });
        }
        let v = usize::try_from(v).unwrap_or(usize::MAX);
        if v > self.src.len() {
            return Err(self.err_inconsistent(
                m,
                format!(
                    "{} = {v} is larger than a file of {} bytes can hold",
                    what(),
                    self.src.len()
                ),
            ));
        }
        Ok((v, m))
    }

    /// A 0/1 flag.
    pub(super) fn flag(&mut self, what: impl Fn() -> String) -> Res<(bool, Mark)> {
        let (v, m) = self.int(&what)?;
        match v {
            0 => Ok((false, m)),
            1 => Ok((true, m)),
            _ => Err(self.err_invalid(m, format!("{} must be 0 or 1, found {v}", what()))),
        }
    }

    /// One finite number, or `None` at the end of the file.
    pub(super) fn number_or_eof(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Res<Option<(f64, Mark)>> {
        match self.token() {
            None => Ok(None),
            Some((m, text)) => self.number_from(m, text, what).map(|v| Some((v, m))),
        }
    }

    /// `count` finite numbers; `name` names the whole for an early end of
    /// file, `label(i)` the i-th value for a bad token.
    pub(super) fn numbers(
        &mut self,
        count: usize,
        name: &str,
        label: impl Fn(usize) -> String,
    ) -> Res<Vec<f64>> {
        let mut out = Vec::with_capacity(count.min(self.src.len()));
        for i in 0..count {
            match self.number_or_eof(|| label(i))? {
                Some((v, _)) => out.push(v),
                None => return Err(self.eof(name.to_string(), i, count)),
            }
        }
        Ok(out)
    }

    /// `count` sizes with their marks.
    pub(super) fn sizes(
        &mut self,
        count: usize,
        name: &str,
        label: impl Fn(usize) -> String,
    ) -> Res<Vec<(usize, Mark)>> {
        let mut out = Vec::with_capacity(count.min(self.src.len()));
        for i in 0..count {
            if self.token_ahead().is_none() {
                return Err(self.eof(name.to_string(), i, count));
            }
            out.push(self.size(|| label(i))?);
        }
        Ok(out)
    }

    /// Whether a token remains (skips whitespace).
    pub(super) fn token_ahead(&mut self) -> Option<()> {
        self.skip_ws();
        (self.pos < self.src.len()).then_some(())
    }

    /// The rest of the current line (without its newline), then moves to the
    /// next line; `None` at the end of the file.
    pub(super) fn line(&mut self) -> Option<(Mark, &'a [u8])> {
        if self.pos >= self.src.len() {
            return None;
        }
        let m = self.mark();
        let start = self.pos;
        while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        if self.pos < self.src.len() {
            self.pos += 1;
            self.line += 1;
            self.line_start = self.pos;
        }
        Some((m, text))
    }

    /// The next line that is not blank.
    pub(super) fn nonblank_line(&mut self) -> Option<(Mark, &'a [u8])> {
        loop {
            let (m, text) = self.line()?;
            if !text.iter().all(|b| is_ws(*b)) {
                return Some((m, text));
            }
        }
    }
}

/// Splits a line of a CSparse dump into fields, separators being whitespace,
/// `,` and `:`; each field comes with its mark.
pub(super) fn fields(m: Mark, line: &[u8]) -> Vec<(Mark, &[u8])> {
    let sep = |b: u8| is_ws(b) || b == b',' || b == b':';
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && sep(line[i]) {
            i += 1;
        }
        let start = i;
        while i < line.len() && !sep(line[i]) {
            i += 1;
        }
        if i > start {
            out.push((
                Mark {
                    offset: m.offset + start,
                    ..m
                },
                &line[start..i],
            ));
        }
    }
    out
}
