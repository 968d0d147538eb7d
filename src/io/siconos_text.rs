//! The Siconos text problem files: LCP, relay and MLCP.
//!
//! # Layout
//!
//! Every file is a sequence of whitespace-separated numbers (the C reader is
//! `fscanf` based), except the dump of a sparse (CSparse) matrix, which is
//! line based. Text after the last number a problem needs is ignored: several
//! reference files carry comments or solutions there.
//!
//! A matrix is a *NumericsMatrix block*: `storage rows cols` then a payload.
//!
//! * storage 0, dense: a repeated `rows cols` line, then `rows·cols` values in
//!   **column-major** order (the writer breaks the line every `cols` values,
//!   so with a square matrix a text line is a *column*);
//! * storage 1, sparse block (SBM): `nbblocks` (0: an all-zero matrix, nothing
//!   follows), the numbers of block rows and block columns, the **cumulative**
//!   row and column offsets (without the leading 0), the length of the
//!   block-row pointer array (block rows + 1), the number of stored blocks,
//!   the block-row pointers (CSR over blocks), the block-column index of each
//!   stored block, then for each stored block `b` in block-row order the
//!   integer `b` followed by the block's values in column-major order;
//! * storage 2, sparse: an origin integer then a CSparse `cs_print` dump, in
//!   compressed-column form (`col j : locations a to b` then `i : value`
//!   lines) or triplet form (`i j : value` lines). Siconos prints these values
//!   with 6 significant digits; full precision is accepted. Such a matrix is
//!   read into dense storage (it is never written: the writers emit storage 0
//!   or 1).
//!
//! Problems:
//!
//! | problem | layout |
//! |---|---|
//! | LCP   | `n`, M (n×n), `q[n]` |
//! | relay | `n`, M (n×n), `q[n]`, `lb[n]`, `ub[n]` |
//! | MLCP  | `isStorageType1 isStorageType2 n m`; if storage 1: `blocksRows` (read until a value equals n + m), `blocksIsComp[nblocks]`, M, `q[cols of M]`; if storage 2: A (n×n), B (m×m), C (n×m), D (m×n) **row by row**, `a[n]`, `b[m]` |
//!
//! The MLCP is A u + C v + a = 0, 0 ≤ v ⊥ D u + B v + b ≥ 0, i.e. M = [A C; D B]
//! and q = (a, b) with the n equalities first.
//!
//! # Decisions
//!
//! * `blocksRows` and `blocksIsComp` are read only when storage 1 is present,
//!   as the Siconos reader does (every reference file has both storages).
//! * When both MLCP storages are present and M is square, the problem is
//!   taken from storage 1 (keeping its dense or block-sparse storage) and the
//!   storage-2 blocks must agree with it exactly; a disagreement is an error.
//! * If `blocksIsComp` interleaves equality and complementarity blocks, the
//!   rows and columns of M and q are permuted so that the n equalities come
//!   first (a block-sparse M then becomes dense), and a note says so.
//! * A storage-1 M with more rows than n + m (`Rectangular_mlcp.dat`: 3×2
//!   for n = m = 1) is the "rectangular" MLCP of Siconos' enumeration solver:
//!   its first `rows − m` rows are equalities. The file keeps only
//!   `cols` entries of q (Siconos reads and writes `q[cols]`), so the extra
//!   rows' right-hand sides are lost; and storage 2 holds the square problem
//!   made of the first n equality rows. Such a file is read from storage 2,
//!   after checking that storage 1 agrees with it where they overlap (rows
//!   0..n and the last m rows of M, and the entries of q that exist); a note
//!   records the dropped rows. Without storage 2 a rectangular M is refused.
//! * Sizes larger than the file's length in bytes are refused before any
//!   allocation: no value of a problem file takes less than a byte. A matrix
//!   the reader has to densify (a sparse dump, a reordered block-sparse M)
//!   is refused beyond 2²⁷ entries.
//! * Indices in messages are 0-based, lines and columns 1-based.
//!
//! # Writing
//!
//! The writers print every value as C's `%.17e` (which reads back to the same
//! bits), a dense matrix in storage 0 and a block-sparse one in storage 1,
//! in the layout above, which Siconos 4.4 reads. An MLCP is written with both
//! storages. A block-sparse matrix without stored blocks is written as
//! `nbblocks = 0`, which keeps its size but not its block structure.

use std::fmt;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use thiserror::Error;

use crate::numerics::lcp::Lcp;
use crate::numerics::matrix::{Block, BlockSparseMatrix, Matrix, ProblemMatrix};
use crate::numerics::mlcp::Mlcp;
use crate::numerics::relay::Relay;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

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

fn progress(read: &usize, needed: &usize) -> String {
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

type Res<T> = Result<T, ReadError>;

/// Largest number of entries the reader densifies (a sparse dump, a
/// reordered block-sparse M): 2²⁷ values, 1 GiB.
const DENSE_LIMIT: usize = 1 << 27;

fn fits_dense(rows: usize, cols: usize) -> bool {
    rows.checked_mul(cols).is_some_and(|k| k <= DENSE_LIMIT)
}

// ---------------------------------------------------------------------------
// Scanner
// ---------------------------------------------------------------------------

/// A position in the source: byte offset, line and the offset its line starts at.
#[derive(Debug, Clone, Copy)]
struct Mark {
    offset: usize,
    line: usize,
    line_start: usize,
}

struct Scanner<'a> {
    path: &'a Path,
    src: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A token for a message: lossy UTF-8, control characters escaped, at most
/// 40 characters.
fn show(text: &[u8]) -> String {
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

fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse::<f64>().ok()
}

fn parse_i64(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse::<i64>().ok()
}

impl<'a> Scanner<'a> {
    fn new(path: &'a Path, src: &'a [u8]) -> Self {
        Scanner {
            path,
            src,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn location(&self, m: Mark) -> Location {
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

    fn mark(&self) -> Mark {
        Mark {
            offset: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.src.len() && is_ws(self.src[self.pos]) {
            if self.src[self.pos] == b'\n' {
                self.line += 1;
                self.line_start = self.pos + 1;
            }
            self.pos += 1;
        }
    }

    /// The next whitespace-separated token, or `None` at the end of the file.
    fn token(&mut self) -> Option<(Mark, &'a [u8])> {
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

    fn eof(&mut self, what: String, read: usize, needed: usize) -> ReadError {
        self.skip_ws();
        ReadError::UnexpectedEof {
            at: self.location(self.mark()),
            what,
            read,
            needed,
        }
    }

    fn err_inconsistent(&self, m: Mark, detail: String) -> ReadError {
        ReadError::InconsistentSize {
            at: self.location(m),
            detail,
        }
    }

    fn err_blocks(&self, m: Mark, detail: String) -> ReadError {
        ReadError::BlockSizes {
            at: self.location(m),
            detail,
        }
    }

    fn err_invalid(&self, m: Mark, detail: String) -> ReadError {
        ReadError::Invalid {
            at: self.location(m),
            detail,
        }
    }

    fn err_unsupported(&self, m: Mark, detail: String) -> ReadError {
        ReadError::Unsupported {
            at: self.location(m),
            detail,
        }
    }

    fn bad_token(&self, m: Mark, what: String, expected: &'static str, text: &[u8]) -> ReadError {
        ReadError::BadToken {
            at: self.location(m),
            what,
            expected,
            found: show(text),
        }
    }

    /// Converts a token into a finite number.
    fn number_from(&self, m: Mark, text: &[u8], what: impl FnOnce() -> String) -> Res<f64> {
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
    fn int(&mut self, what: impl FnOnce() -> String) -> Res<(i64, Mark)> {
        match self.token() {
            None => Err(self.eof(what(), 0, 1)),
            Some((m, text)) => match parse_i64(text) {
                Some(v) => Ok((v, m)),
                None => Err(self.bad_token(m, what(), "an integer", text)),
            },
        }
    }

    /// One non-negative integer, no larger than the file could describe.
    fn size(&mut self, what: impl Fn() -> String) -> Res<(usize, Mark)> {
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
    fn flag(&mut self, what: impl Fn() -> String) -> Res<(bool, Mark)> {
        let (v, m) = self.int(&what)?;
        match v {
            0 => Ok((false, m)),
            1 => Ok((true, m)),
            _ => Err(self.err_invalid(m, format!("{} must be 0 or 1, found {v}", what()))),
        }
    }

    /// One finite number, or `None` at the end of the file.
    fn number_or_eof(&mut self, what: impl FnOnce() -> String) -> Res<Option<(f64, Mark)>> {
        match self.token() {
            None => Ok(None),
            Some((m, text)) => self.number_from(m, text, what).map(|v| Some((v, m))),
        }
    }

    /// `count` finite numbers; `name` names the whole for an early end of
    /// file, `label(i)` the i-th value for a bad token.
    fn numbers(
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
    fn sizes(
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
    fn token_ahead(&mut self) -> Option<()> {
        self.skip_ws();
        (self.pos < self.src.len()).then_some(())
    }

    /// The rest of the current line (without its newline), then moves to the
    /// next line; `None` at the end of the file.
    fn line(&mut self) -> Option<(Mark, &'a [u8])> {
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
    fn nonblank_line(&mut self) -> Option<(Mark, &'a [u8])> {
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
fn fields(m: Mark, line: &[u8]) -> Vec<(Mark, &[u8])> {
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

// ---------------------------------------------------------------------------
// NumericsMatrix block
// ---------------------------------------------------------------------------

/// Reads a NumericsMatrix block. `check(rows, cols)` is called right after
/// the header; its `Err(detail)` becomes an [`ReadError::InconsistentSize`]
/// at the header. Returns the matrix and the mark of its storage token.
fn read_matrix(
    sc: &mut Scanner<'_>,
    name: &str,
    check: impl FnOnce(usize, usize) -> Result<(), String>,
) -> Res<(Matrix, Mark)> {
    let (storage, sm) = sc.int(|| format!("the storage type of {name}"))?;
    if !(0..=2).contains(&storage) {
        return Err(sc.err_unsupported(
            sm,
            format!(
                "storage type {storage} of {name} (expected 0 dense, 1 sparse block or 2 sparse)"
            ),
        ));
    }
    let (rows, rm) = sc.size(|| format!("the number of rows of {name}"))?;
    let (cols, _) = sc.size(|| format!("the number of columns of {name}"))?;
    if let Err(detail) = check(rows, cols) {
        return Err(sc.err_inconsistent(rm, detail));
    }
    let matrix = match storage {
        0 => Matrix::Dense(read_dense(sc, name, rows, cols)?),
        1 => Matrix::BlockSparse(read_sbm(sc, name, rows, cols)?),
        _ => Matrix::Dense(read_csparse(sc, name, rows, cols)?),
    };
    Ok((matrix, sm))
}

fn read_dense(sc: &mut Scanner<'_>, name: &str, rows: usize, cols: usize) -> Res<DMatrix<f64>> {
    let (r2, m2) = sc.size(|| format!("the rows of {name} (dense header)"))?;
    let (c2, _) = sc.size(|| format!("the columns of {name} (dense header)"))?;
    if (r2, c2) != (rows, cols) {
        return Err(sc.err_inconsistent(
            m2,
            format!("the dense header of {name} says {r2}x{c2}, its matrix header {rows}x{cols}"),
        ));
    }
    let count = rows
        .checked_mul(cols)
        .ok_or_else(|| sc.err_inconsistent(m2, format!("{name} of {rows}x{cols} is too large")))?;
    let values = sc.numbers(count, &format!("{name} (dense {rows}x{cols})"), |k| {
        format!("{name}[{}][{}]", k % rows, k / rows)
    })?;
    Ok(DMatrix::from_vec(rows, cols, values))
}

/// Checks cumulative offsets (without the leading 0): non-decreasing, ending at `total`.
fn offsets_to_sizes(
    sc: &Scanner<'_>,
    offsets: &[(usize, Mark)],
    total: usize,
    what: &str,
    header: Mark,
) -> Res<Vec<usize>> {
    let mut sizes = Vec::with_capacity(offsets.len());
    let mut prev = 0;
    for (k, &(o, m)) in offsets.iter().enumerate() {
        if o < prev {
            return Err(sc.err_blocks(
                m,
                format!("cumulative {what} offset {k} is {o}, below the previous one ({prev})"),
            ));
        }
        sizes.push(o - prev);
        prev = o;
    }
    if prev != total {
        let m = offsets.last().map(|x| x.1).unwrap_or(header);
        return Err(sc.err_blocks(
            m,
            format!("the {what} blocks end at {prev}, the matrix has {total} {what}s"),
        ));
    }
    Ok(sizes)
}

fn read_sbm(sc: &mut Scanner<'_>, name: &str, rows: usize, cols: usize) -> Res<BlockSparseMatrix> {
    let (nb, nbm) = sc.size(|| format!("the number of blocks of {name}"))?;
    let build = |sc: &Scanner<'_>, rs: &[usize], cs: &[usize], blocks: Vec<Block>, m: Mark| {
        BlockSparseMatrix::new(rs, cs, blocks)
            .map_err(|e| sc.err_invalid(m, format!("{name}: {e}")))
    };
    if nb == 0 {
        // An all-zero matrix: one block row and column (none when empty).
        let rs: Vec<usize> = if rows > 0 { vec![rows] } else { vec![] };
        let cs: Vec<usize> = if cols > 0 { vec![cols] } else { vec![] };
        return build(sc, &rs, &cs, Vec::new(), nbm);
    }
    let (bn0, bm0) = sc.size(|| format!("the number of block rows of {name}"))?;
    let (bn1, _) = sc.size(|| format!("the number of block columns of {name}"))?;
    if bn0 == 0 || bn1 == 0 {
        return Err(sc.err_blocks(
            bm0,
            format!("{name} has {nb} stored blocks but {bn0}x{bn1} block rows x columns"),
        ));
    }
    let roff = sc.sizes(bn0, &format!("the row offsets of {name}"), |k| {
        format!("row offset {k} of {name}")
    })?;
    let coff = sc.sizes(bn1, &format!("the column offsets of {name}"), |k| {
        format!("column offset {k} of {name}")
    })?;
    let row_sizes = offsets_to_sizes(sc, &roff, rows, "row", bm0)?;
    let col_sizes = offsets_to_sizes(sc, &coff, cols, "column", bm0)?;
    let (filled1, f1m) = sc.size(|| format!("the block-row pointer length of {name}"))?;
    if filled1 != bn0 + 1 {
        return Err(sc.err_blocks(
            f1m,
            format!(
                "the block-row pointer length of {name} is {filled1}, expected {} (block rows + 1)",
                bn0 + 1
            ),
        ));
    }
    let (filled2, f2m) = sc.size(|| format!("the stored-block count of {name}"))?;
    if filled2 != nb {
        return Err(sc.err_blocks(
            f2m,
            format!("{name} declares {nb} blocks, then {filled2} stored blocks"),
        ));
    }
    let ptr = sc.sizes(filled1, &format!("the block-row pointers of {name}"), |k| {
        format!("block-row pointer {k} of {name}")
    })?;
    let mut prev = 0;
    for (k, &(p, m)) in ptr.iter().enumerate() {
        if (k == 0 && p != 0) || p < prev || p > nb {
            return Err(sc.err_blocks(
                m,
                format!("block-row pointer {k} of {name} is {p}: pointers must start at 0, not decrease and end at {nb}"),
            ));
        }
        prev = p;
    }
    if prev != nb {
        let m = ptr.last().map(|x| x.1).unwrap_or(f2m);
        return Err(sc.err_blocks(
            m,
            format!("the block-row pointers of {name} end at {prev}, expected {nb} stored blocks"),
        ));
    }
    let bcol = sc.sizes(
        filled2,
        &format!("the block-column indices of {name}"),
        |k| format!("block-column index {k} of {name}"),
    )?;
    if let Some((c, m)) = bcol.iter().find(|(c, _)| *c >= bn1) {
        return Err(sc.err_blocks(
            *m,
            format!(
                "block-column index {c} of {name} is out of range (it has {bn1} block columns)"
            ),
        ));
    }
    let mut blocks = Vec::with_capacity(nb);
    for r in 0..bn0 {
        for (k, &(c, _)) in bcol.iter().enumerate().take(ptr[r + 1].0).skip(ptr[r].0) {
            let (b, bm) = sc.int(|| format!("the number of block {k} of {name}"))?;
            if b != k as i64 {
                return Err(sc.err_blocks(
                    bm,
                    format!("expected block number {k} of {name}, found {b}"),
                ));
            }
            let (nr, nc) = (row_sizes[r], col_sizes[c]);
            let values = sc.numbers(nr * nc, &format!("block {k} ({nr}x{nc}) of {name}"), |i| {
                format!(
                    "{name} block {k} value [{}][{}]",
                    i % nr.max(1),
                    i / nr.max(1)
                )
            })?;
            blocks.push(Block {
                row: r,
                col: c,
                values,
            });
        }
    }
    build(sc, &row_sizes, &col_sizes, blocks, nbm)
}

/// Parses `A-by-B`.
fn parse_by(text: &[u8]) -> Option<(usize, usize)> {
    let s = std::str::from_utf8(text).ok()?;
    let (a, b) = s.split_once("-by-")?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn field_usize(
    sc: &Scanner<'_>,
    f: Option<&(Mark, &[u8])>,
    at_end: Mark,
    what: &str,
) -> Res<usize> {
    match f {
        None => Err(sc.bad_token(at_end, what.to_string(), "an integer", b"end of line")),
        Some(&(m, t)) => match parse_i64(t) {
            Some(v) if v >= 0 && (v as u64) <= sc.src.len() as u64 => Ok(v as usize),
            Some(v) if v < 0 => Err(ReadError::NegativeSize {
                at: sc.location(m),
                what: what.to_string(),
                value: v,
            }),
            Some(v) => Err(sc.err_inconsistent(
                m,
                format!(
                    "{what} = {v} is larger than a file of {} bytes can hold",
                    sc.src.len()
                ),
            )),
            None => Err(sc.bad_token(m, what.to_string(), "an integer", t)),
        },
    }
}

fn expect_word(
    sc: &Scanner<'_>,
    f: Option<&(Mark, &[u8])>,
    at_end: Mark,
    word: &str,
    what: &str,
) -> Res<()> {
    match f {
        Some((_, t)) if *t == word.as_bytes() => Ok(()),
        Some(&(m, t)) => Err(sc.bad_token(m, what.to_string(), "a CSparse keyword", t)),
        None => Err(sc.bad_token(
            at_end,
            what.to_string(),
            "a CSparse keyword",
            b"end of line",
        )),
    }
}

fn end_of(m: Mark, line: &[u8]) -> Mark {
    Mark {
        offset: m.offset + line.len(),
        ..m
    }
}

/// What a CSparse entry line belongs to.
struct Dump<'n> {
    name: &'n str,
    rows: usize,
    cols: usize,
}

/// Parses a CSparse entry line `i : value` (compressed column) or
/// `i j : value` (triplet, `with_col`).
fn parse_entry(
    sc: &Scanner<'_>,
    dump: &Dump<'_>,
    line_mark: Mark,
    fl: &[(Mark, &[u8])],
    line: &[u8],
    k: usize,
    with_col: bool,
) -> Res<(usize, usize, f64)> {
    let lend = end_of(line_mark, line);
    let what = format!("entry {k} of the sparse {}", dump.name);
    let need = if with_col { 3 } else { 2 };
    if fl.len() < need {
        let (mm, t): (Mark, &[u8]) = match fl.first() {
            Some(&(m, t)) if fl.len() == 1 && t == b"..." => (m, t),
            _ => (lend, b"end of line"),
        };
        return Err(sc.bad_token(mm, what, "an entry `i [j] : value`", t));
    }
    let i = field_usize(sc, fl.first(), lend, &format!("the row of {what}"))?;
    if i >= dump.rows {
        return Err(sc.err_inconsistent(
            fl[0].0,
            format!("row {i} of {what} is out of range ({} rows)", dump.rows),
        ));
    }
    let j = if with_col {
        let j = field_usize(sc, fl.get(1), lend, &format!("the column of {what}"))?;
        if j >= dump.cols {
            return Err(sc.err_inconsistent(
                fl[1].0,
                format!(
                    "column {j} of {what} is out of range ({} columns)",
                    dump.cols
                ),
            ));
        }
        j
    } else {
        0
    };
    let (vm, vt) = fl[need - 1];
    let v = sc.number_from(vm, vt, || format!("the value of {what}"))?;
    Ok((i, j, v))
}

fn read_csparse(sc: &mut Scanner<'_>, name: &str, rows: usize, cols: usize) -> Res<DMatrix<f64>> {
    let (origin, om) = sc.int(|| format!("the origin of the sparse {name}"))?;
    match origin {
        1 | 2 | 4 => {}
        3 => {
            return Err(sc.err_unsupported(
                om,
                format!("sparse {name} of CSR origin (3): only triplet and compressed-column dumps are read"),
            ))
        }
        _ => {
            return Err(sc.err_unsupported(
                om,
                format!("origin {origin} of the sparse {name} (expected 1 to 4)"),
            ))
        }
    }
    // The rest of the origin's line, then the dump, line by line.
    let _ = sc.line();
    let dump = format!("the sparse {name}");
    let eof = |sc: &mut Scanner<'_>, read, needed| sc.eof(dump.clone(), read, needed);
    let (mut hm, mut header) = match sc.nonblank_line() {
        Some(x) => x,
        None => return Err(eof(sc, 0, 1)),
    };
    if header.trim_ascii_start().starts_with(b"CSparse") {
        (hm, header) = match sc.nonblank_line() {
            Some(x) => x,
            None => return Err(eof(sc, 0, 1)),
        };
    }
    let f = fields(hm, header);
    let hend = end_of(hm, header);
    let triplet = f.first().map(|x| x.1) == Some(&b"triplet"[..]);
    let dims_at = usize::from(triplet);
    let (m, n) = match f.get(dims_at) {
        Some(&(dm, t)) => parse_by(t).ok_or_else(|| {
            sc.bad_token(
                dm,
                format!("the size of the sparse {name}"),
                "`rows-by-cols`",
                t,
            )
        })?,
        None => {
            return Err(sc.bad_token(
                hend,
                format!("the size of the sparse {name}"),
                "`rows-by-cols`",
                b"end of line",
            ))
        }
    };
    if (m, n) != (rows, cols) {
        return Err(sc.err_inconsistent(
            f[dims_at].0,
            format!("the sparse dump of {name} is {m}x{n}, its matrix header {rows}x{cols}"),
        ));
    }
    expect_word(
        sc,
        f.get(dims_at + 1),
        hend,
        "nzmax",
        &format!("the header of the sparse {name}"),
    )?;
    field_usize(sc, f.get(dims_at + 2), hend, "nzmax")?;
    expect_word(
        sc,
        f.get(dims_at + 3),
        hend,
        "nnz",
        &format!("the header of the sparse {name}"),
    )?;
    let nnz = field_usize(
        sc,
        f.get(dims_at + 4),
        hend,
        &format!("the number of entries of {name}"),
    )?;
    let nnz_mark = f[dims_at + 4].0;
    if !fits_dense(rows, cols) {
        return Err(sc.err_unsupported(
            nnz_mark,
            format!("the sparse {name} ({rows}x{cols}) is too large to be stored dense"),
        ));
    }
    let mut dense = DMatrix::zeros(rows, cols);
    let dump_info = Dump { name, rows, cols };
    if triplet {
        for k in 0..nnz {
            let (lm, line) = match sc.nonblank_line() {
                Some(x) => x,
                None => return Err(eof(sc, k, nnz)),
            };
            let fl = fields(lm, line);
            let (i, j, v) = parse_entry(sc, &dump_info, lm, &fl, line, k, true)?;
            dense[(i, j)] += v;
        }
    } else {
        let mut k = 0usize;
        for j in 0..cols {
            let (lm, line) = match sc.nonblank_line() {
                Some(x) => x,
                None => return Err(eof(sc, k, nnz)),
            };
            let fl = fields(lm, line);
            let lend = end_of(lm, line);
            let what = format!("the column header {j} of the sparse {name}");
            expect_word(sc, fl.first(), lend, "col", &what)?;
            let jj = field_usize(sc, fl.get(1), lend, &what)?;
            if jj != j {
                return Err(sc.err_inconsistent(
                    fl[1].0,
                    format!("expected column {j} of the sparse {name}, found column {jj}"),
                ));
            }
            expect_word(sc, fl.get(2), lend, "locations", &what)?;
            let a = field_usize(sc, fl.get(3), lend, &what)?;
            expect_word(sc, fl.get(4), lend, "to", &what)?;
            // `b` is `a - 1` for an empty column, hence possibly -1.
            let b = match fl.get(5) {
                Some(&(bm, t)) => {
                    parse_i64(t).ok_or_else(|| sc.bad_token(bm, what.clone(), "an integer", t))?
                }
                None => return Err(sc.bad_token(lend, what, "an integer", b"end of line")),
            };
            if a != k || b < a as i64 - 1 || b >= nnz as i64 {
                return Err(sc.err_blocks(
                    fl[3].0,
                    format!("column {j} of the sparse {name} spans locations {a} to {b}; expected to start at {k} and stay below {nnz}"),
                ));
            }
            let count = (b + 1 - a as i64) as usize;
            for _ in 0..count {
                let (em, eline) = match sc.nonblank_line() {
                    Some(x) => x,
                    None => return Err(eof(sc, k, nnz)),
                };
                let efl = fields(em, eline);
                let (i, _, v) = parse_entry(sc, &dump_info, em, &efl, eline, k, false)?;
                dense[(i, j)] += v;
                k += 1;
            }
        }
        if k != nnz {
            return Err(sc.err_inconsistent(
                nnz_mark,
                format!("the sparse {name} declares {nnz} entries, its columns hold {k}"),
            ));
        }
    }
    Ok(dense)
}

// ---------------------------------------------------------------------------
// Problems
// ---------------------------------------------------------------------------

fn read_file(path: &Path) -> Res<Vec<u8>> {
    fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn square_check(n: usize) -> impl FnOnce(usize, usize) -> Result<(), String> {
    move |r, c| {
        if r == n && c == n {
            Ok(())
        } else {
            Err(format!("n = {n} but M is {r}x{c}"))
        }
    }
}

fn vector(sc: &mut Scanner<'_>, n: usize, name: &str) -> Res<Vec<f64>> {
    sc.numbers(n, name, |i| format!("{name}[{i}]"))
}

/// Parses an LCP (`n`, M, `q`) from the contents of a file; `path` is used
/// in error messages only.
pub fn parse_lcp(path: impl AsRef<Path>, src: &[u8]) -> Result<Lcp, ReadError> {
    let path = path.as_ref();
    let mut sc = Scanner::new(path, src);
    let (n, nm) = sc.size(|| "n (the problem size)".to_string())?;
    let (m, _) = read_matrix(&mut sc, "M", square_check(n))?;
    let q = vector(&mut sc, n, "q")?;
    Lcp::new(m, q).map_err(|e| sc.err_invalid(nm, e.to_string()))
}

/// Reads an LCP file.
pub fn read_lcp(path: impl AsRef<Path>) -> Result<Lcp, ReadError> {
    let path = path.as_ref();
    parse_lcp(path, &read_file(path)?)
}

/// Parses a relay problem (`n`, M, `q`, `lb`, `ub`) from the contents of a
/// file; `path` is used in error messages only. Requires lb ≤ ub.
pub fn parse_relay(path: impl AsRef<Path>, src: &[u8]) -> Result<Relay, ReadError> {
    let path = path.as_ref();
    let mut sc = Scanner::new(path, src);
    let (n, nm) = sc.size(|| "n (the problem size)".to_string())?;
    let (m, _) = read_matrix(&mut sc, "M", square_check(n))?;
    let q = vector(&mut sc, n, "q")?;
    let lb = vector(&mut sc, n, "lb")?;
    let mut ub = Vec::with_capacity(n);
    for (i, &lo) in lb.iter().enumerate() {
        match sc.number_or_eof(|| format!("ub[{i}]"))? {
            None => return Err(sc.eof("ub".to_string(), i, n)),
            Some((v, m)) if v < lo => {
                return Err(sc.err_invalid(m, format!("ub[{i}] = {v} is below lb[{i}] = {lo}")))
            }
            Some((v, _)) => ub.push(v),
        }
    }
    Relay::new(m, q, lb, ub).map_err(|e| sc.err_invalid(nm, e.to_string()))
}

/// Reads a relay problem file.
pub fn read_relay(path: impl AsRef<Path>) -> Result<Relay, ReadError> {
    let path = path.as_ref();
    parse_relay(path, &read_file(path)?)
}

/// An MLCP file as read: the problem plus the file's block description and
/// the reader's notes.
#[derive(Debug, Clone, PartialEq)]
pub struct MlcpFile {
    /// The problem, equalities first.
    pub problem: Mlcp,
    /// `blocksRows` as in the file (cumulative row offsets from 0 to n + m);
    /// empty when the file has no storage 1.
    pub blocks_rows: Vec<usize>,
    /// `blocksIsComp` as in the file: whether each block of rows is a
    /// complementarity block (`true`) or an equality block.
    pub blocks_is_comp: Vec<bool>,
    /// Remarks on a file that was not taken literally: interleaved blocks
    /// reordered, a rectangular storage 1 replaced by storage 2.
    pub notes: Vec<String>,
}

fn read_rows(sc: &mut Scanner<'_>, rows: usize, cols: usize, name: &str) -> Res<DMatrix<f64>> {
    let values = sc.numbers(
        rows * cols,
        &format!("{name} ({rows}x{cols}, row by row)"),
        |k| format!("{name}[{}][{}]", k / cols.max(1), k % cols.max(1)),
    )?;
    Ok(DMatrix::from_row_slice(rows, cols, &values))
}

/// The storage-2 blocks of an MLCP file and where they start.
struct Storage2 {
    a: DMatrix<f64>,
    b: DMatrix<f64>,
    c: DMatrix<f64>,
    d: DMatrix<f64>,
    av: Vec<f64>,
    bv: Vec<f64>,
    at: Mark,
}

impl Storage2 {
    /// Entry (i, j) of [A C; D B].
    fn entry(&self, i: usize, j: usize) -> f64 {
        let n = self.av.len();
        match (i < n, j < n) {
            (true, true) => self.a[(i, j)],
            (true, false) => self.c[(i, j - n)],
            (false, true) => self.d[(i - n, j)],
            (false, false) => self.b[(i - n, j - n)],
        }
    }

    /// Entry i of (a, b).
    fn rhs(&self, i: usize) -> f64 {
        let n = self.av.len();
        if i < n {
            self.av[i]
        } else {
            self.bv[i - n]
        }
    }

    /// Checks that each row `r` of the storage-1 M (and `q[r]`, when the
    /// file has it) equals row `s` of the blocks, for the pairs `(r, s)`.
    fn check_rows(
        &self,
        sc: &Scanner<'_>,
        mat: &Matrix,
        q: &[f64],
        pairs: impl Iterator<Item = (usize, usize)>,
    ) -> Res<()> {
        let total = self.av.len() + self.bv.len();
        for (r, s) in pairs {
            for j in 0..total {
                let (x, y) = (mat.get(r, j), self.entry(s, j));
                if x != y {
                    return Err(sc.err_invalid(
                        self.at,
                        format!(
                            "storage 1 has M[{r}][{j}] = {x:e} but the storage-2 blocks give {y:e}"
                        ),
                    ));
                }
            }
            if let Some(&x) = q.get(r) {
                let y = self.rhs(s);
                if x != y {
                    return Err(sc.err_invalid(
                        self.at,
                        format!("storage 1 has q[{r}] = {x:e} but storage 2 gives {y:e}"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Parses an MLCP file's contents (see the module documentation for the
/// layout and for how the two storages are reconciled); `path` is used in
/// error messages only.
pub fn parse_mlcp(path: impl AsRef<Path>, src: &[u8]) -> Result<MlcpFile, ReadError> {
    let path = path.as_ref();
    let mut sc = Scanner::new(path, src);
    let (st1, _) = sc.flag(|| "isStorageType1".to_string())?;
    let (st2, st2m) = sc.flag(|| "isStorageType2".to_string())?;
    if !st1 && !st2 {
        return Err(sc.err_invalid(
            st2m,
            "the file holds neither storage 1 (M, q) nor storage 2 (A, B, C, D, a, b)".into(),
        ));
    }
    let (n, nm) = sc.size(|| "n (the number of equalities)".to_string())?;
    let (m, _) = sc.size(|| "m (the number of complementarities)".to_string())?;
    let total = n + m;
    let mut notes = Vec::new();
    let mut blocks_rows = Vec::new();
    let mut blocks_is_comp = Vec::new();

    // Storage 1: blocks, M, q.
    let mut storage1: Option<(Matrix, Vec<f64>)> = None;
    let mut perm: Option<Vec<usize>> = None;
    if st1 {
        loop {
            let k = blocks_rows.len();
            if sc.token_ahead().is_none() {
                return Err(sc.eof(format!("blocksRows (up to n + m = {total})"), k, 0));
            }
            let (v, vm) = sc.size(|| format!("blocksRows[{k}]"))?;
            if k == 0 && v != 0 {
                return Err(sc.err_blocks(vm, format!("blocksRows must start at 0, found {v}")));
            }
            if k > 0 && v <= blocks_rows[k - 1] {
                return Err(sc.err_blocks(
                    vm,
                    format!(
                        "blocksRows must increase, found {v} after {}",
                        blocks_rows[k - 1]
                    ),
                ));
            }
            if v > total {
                return Err(
                    sc.err_blocks(vm, format!("blocksRows[{k}] = {v} passes n + m = {total}"))
                );
            }
            blocks_rows.push(v);
            if v == total {
                break;
            }
        }
        let nblocks = blocks_rows.len() - 1;
        sc.skip_ws();
        let comp_mark = sc.mark();
        for k in 0..nblocks {
            if sc.token_ahead().is_none() {
                return Err(sc.eof("blocksIsComp".to_string(), k, nblocks));
            }
            blocks_is_comp.push(sc.flag(|| format!("blocksIsComp[{k}]"))?.0);
        }
        let eq_rows: usize = (0..nblocks)
            .filter(|&k| !blocks_is_comp[k])
            .map(|k| blocks_rows[k + 1] - blocks_rows[k])
            .sum();
        if eq_rows != n {
            return Err(sc.err_blocks(
                comp_mark,
                format!("the equality blocks (blocksIsComp = 0) cover {eq_rows} rows, but n = {n}"),
            ));
        }
        let interleaved = blocks_is_comp.windows(2).any(|w| w[0] && !w[1]);
        let (mat, mm) = read_matrix(&mut sc, "M", |r, c| {
            if c != total {
                Err(format!("M has {c} columns, but n + m = {total}"))
            } else if r < total {
                Err(format!("M has {r} rows, fewer than n + m = {total}"))
            } else {
                Ok(())
            }
        })?;
        let (rows, cols) = (mat.nrows(), mat.ncols());
        let q = vector(&mut sc, cols, "q")?;
        if rows != total {
            if !st2 {
                return Err(sc.err_unsupported(
                    mm,
                    format!("a rectangular M ({rows}x{cols}) without the storage-2 blocks"),
                ));
            }
            if interleaved {
                return Err(sc.err_unsupported(
                    mm,
                    format!("a rectangular M ({rows}x{cols}) with interleaved blocks"),
                ));
            }
        } else if interleaved {
            let mut p: Vec<usize> = Vec::with_capacity(total);
            for want_comp in [false, true] {
                for k in 0..nblocks {
                    if blocks_is_comp[k] == want_comp {
                        p.extend(blocks_rows[k]..blocks_rows[k + 1]);
                    }
                }
            }
            notes.push(format!(
                "blocksIsComp interleaves equality and complementarity blocks; rows and columns of M and q were reordered to put the {n} equalities first (new order: {p:?})"
            ));
            perm = Some(p);
        }
        storage1 = Some((mat, q));
    }

    // Storage 2: A, B, C, D row by row, a, b.
    let storage2 = if st2 {
        sc.skip_ws();
        let at = sc.mark();
        Some(Storage2 {
            a: read_rows(&mut sc, n, n, "A")?,
            b: read_rows(&mut sc, m, m, "B")?,
            c: read_rows(&mut sc, n, m, "C")?,
            d: read_rows(&mut sc, m, n, "D")?,
            av: vector(&mut sc, n, "a")?,
            bv: vector(&mut sc, m, "b")?,
            at,
        })
    } else {
        None
    };

    let invalid =
        |sc: &Scanner<'_>, e: crate::numerics::NumericsError| sc.err_invalid(nm, e.to_string());
    let problem = match (storage1, storage2) {
        (Some((mat, q)), s2) if mat.nrows() == total => {
            let (mat, q) = match &perm {
                None => (mat, q),
                Some(_) if !fits_dense(total, total) => {
                    return Err(sc.err_unsupported(
                        nm,
                        format!("reordering the interleaved blocks of a {total}x{total} M (too large to be stored dense)"),
                    ))
                }
                Some(p) => {
                    let d = mat.to_dense();
                    let pm = DMatrix::from_fn(total, total, |i, j| d[(p[i], p[j])]);
                    let pq = p.iter().map(|&i| q[i]).collect();
                    (Matrix::Dense(pm), pq)
                }
            };
            if let Some(s2) = s2 {
                s2.check_rows(&sc, &mat, &q, (0..total).map(|i| (i, i)))?;
            }
            Mlcp::new(mat, q, n).map_err(|e| invalid(&sc, e))?
        }
        (s1, Some(s2)) => {
            if let Some((mat, q)) = s1 {
                // Rectangular storage 1: its first n rows and last m rows
                // must be those of the blocks.
                let (rows, cols) = (mat.nrows(), mat.ncols());
                let pairs = (0..n)
                    .map(|i| (i, i))
                    .chain((0..m).map(|k| (rows - m + k, n + k)));
                s2.check_rows(&sc, &mat, &q, pairs)?;
                notes.push(format!(
                    "storage 1 holds a rectangular M ({rows}x{cols}: {} equality rows for n = {n} \
                     equality unknowns) but only {cols} entries of q; the problem was built from \
                     the square storage-2 blocks (equality rows 0..{n}), dropping the {} other \
                     equality row(s)",
                    rows - m,
                    rows - total
                ));
            }
            Mlcp::from_blocks(&s2.a, &s2.b, &s2.c, &s2.d, &s2.av, &s2.bv)
                .map_err(|e| invalid(&sc, e))?
        }
        // Storage 1 present and rectangular implies storage 2 (checked above);
        // one of the storages is present (checked at the top).
        _ => return Err(sc.err_invalid(nm, "no usable storage".into())),
    };
    Ok(MlcpFile {
        problem,
        blocks_rows,
        blocks_is_comp,
        notes,
    })
}

/// Reads an MLCP file, with its block description and the reader's notes.
pub fn read_mlcp_file(path: impl AsRef<Path>) -> Result<MlcpFile, ReadError> {
    let path = path.as_ref();
    parse_mlcp(path, &read_file(path)?)
}

/// Reads an MLCP file (see [`read_mlcp_file`] for the notes).
pub fn read_mlcp(path: impl AsRef<Path>) -> Result<Mlcp, ReadError> {
    read_mlcp_file(path).map(|f| f.problem)
}

// ---------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------

/// `x` as C's `%.17e` (e.g. `-1.50000000000000000e-03`).
fn c_exp(x: f64) -> String {
    let s = format!("{x:.17e}");
    match s.split_once('e') {
        Some((mant, exp)) => match exp.parse::<i32>() {
            Ok(e) => format!(
                "{mant}e{}{:02}",
                if e < 0 { '-' } else { '+' },
                e.unsigned_abs()
            ),
            Err(_) => s,
        },
        None => s,
    }
}

fn refuse_non_finite(what: &str, values: &[f64]) -> io::Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot write {what}: non-finite value {} at index {i}",
                values[i]
            ),
        )),
    }
}

fn refuse_non_finite_matrix(m: &Matrix) -> io::Result<()> {
    match m.first_non_finite() {
        None => Ok(()),
        Some((i, v)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot write M: non-finite value {v} at row-major index {i}"),
        )),
    }
}

fn write_vector(w: &mut impl Write, v: &[f64]) -> io::Result<()> {
    for x in v {
        write!(w, "{} ", c_exp(*x))?;
    }
    writeln!(w)
}

fn write_index_line(w: &mut impl Write, v: impl Iterator<Item = usize>) -> io::Result<()> {
    for x in v {
        write!(w, "{x}\t")?;
    }
    writeln!(w)
}

fn write_matrix(w: &mut impl Write, m: &Matrix) -> io::Result<()> {
    match m {
        Matrix::Dense(d) => {
            let (r, c) = d.shape();
            writeln!(w, "0\n{r}\n{c}\n{r}\t{c}")?;
            for (k, x) in d.as_slice().iter().enumerate() {
                write!(w, "{} ", c_exp(*x))?;
                if (k + 1) % c == 0 {
                    writeln!(w)?;
                }
            }
            Ok(())
        }
        Matrix::BlockSparse(b) => {
            writeln!(w, "1\n{}\n{}\n{}", b.nrows(), b.ncols(), b.block_count())?;
            if b.block_count() == 0 {
                return Ok(());
            }
            let rs = b.row_sizes();
            let cs = b.col_sizes();
            writeln!(w, "{}\n{}", rs.len(), cs.len())?;
            let cumulative = |s: &[usize]| {
                s.iter()
                    .scan(0, |acc, x| {
                        *acc += x;
                        Some(*acc)
                    })
                    .collect::<Vec<_>>()
            };
            write_index_line(w, cumulative(&rs).into_iter())?;
            write_index_line(w, cumulative(&cs).into_iter())?;
            writeln!(w, "{}\n{}", rs.len() + 1, b.block_count())?;
            let mut per_row = vec![0usize; rs.len()];
            for (r, _, _) in b.blocks() {
                per_row[r] += 1;
            }
            let ptr = std::iter::once(0).chain(per_row.iter().scan(0, |acc, x| {
                *acc += x;
                Some(*acc)
            }));
            write_index_line(w, ptr)?;
            write_index_line(w, b.blocks().map(|(_, c, _)| c))?;
            for (k, (_, _, values)) in b.blocks().enumerate() {
                writeln!(w, "{k}")?;
                for x in values {
                    writeln!(w, "{}", c_exp(*x))?;
                }
            }
            Ok(())
        }
    }
}

fn create(path: &Path) -> io::Result<BufWriter<fs::File>> {
    Ok(BufWriter::new(fs::File::create(path)?))
}

/// Writes an LCP in the Siconos text layout to `w`.
pub fn write_lcp_to(w: &mut impl Write, lcp: &Lcp) -> io::Result<()> {
    refuse_non_finite_matrix(&lcp.m)?;
    refuse_non_finite("q", &lcp.q)?;
    writeln!(w, "{}", lcp.size())?;
    write_matrix(w, &lcp.m)?;
    write_vector(w, &lcp.q)
}

/// Writes an LCP file (full precision; dense M in storage 0, block-sparse in storage 1).
pub fn write_lcp(path: impl AsRef<Path>, lcp: &Lcp) -> io::Result<()> {
    let mut w = create(path.as_ref())?;
    write_lcp_to(&mut w, lcp)?;
    w.flush()
}

/// Writes a relay problem in the Siconos text layout to `w`.
pub fn write_relay_to(w: &mut impl Write, relay: &Relay) -> io::Result<()> {
    refuse_non_finite_matrix(&relay.m)?;
    refuse_non_finite("q", &relay.q)?;
    refuse_non_finite("lb", &relay.lb)?;
    refuse_non_finite("ub", &relay.ub)?;
    writeln!(w, "{}", relay.size())?;
    write_matrix(w, &relay.m)?;
    write_vector(w, &relay.q)?;
    write_vector(w, &relay.lb)?;
    write_vector(w, &relay.ub)
}

/// Writes a relay problem file.
pub fn write_relay(path: impl AsRef<Path>, relay: &Relay) -> io::Result<()> {
    let mut w = create(path.as_ref())?;
    write_relay_to(&mut w, relay)?;
    w.flush()
}

/// Writes an MLCP in the Siconos text layout to `w`, with both storages:
/// storage 1 (one equality block then one complementarity block, M, q) and
/// storage 2 (A, B, C, D row by row, a, b).
pub fn write_mlcp_to(w: &mut impl Write, mlcp: &Mlcp) -> io::Result<()> {
    refuse_non_finite_matrix(&mlcp.m)?;
    refuse_non_finite("q", &mlcp.q)?;
    if mlcp.n_eq > mlcp.q.len() || mlcp.m.nrows() != mlcp.q.len() || mlcp.m.ncols() != mlcp.q.len()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "cannot write an MLCP with M {}x{}, q of {} and n = {}",
                mlcp.m.nrows(),
                mlcp.m.ncols(),
                mlcp.q.len(),
                mlcp.n_eq
            ),
        ));
    }
    let (n, m) = (mlcp.n_eq, mlcp.n_comp());
    writeln!(w, "1\n1\n{n}\n{m}")?;
    let mut rows = vec![0];
    let mut comp = Vec::new();
    if n > 0 {
        rows.push(n);
        comp.push(0);
    }
    if m > 0 {
        rows.push(n + m);
        comp.push(1);
    }
    for r in &rows {
        write!(w, "{r} ")?;
    }
    writeln!(w)?;
    for c in &comp {
        write!(w, "{c} ")?;
    }
    writeln!(w)?;
    write_matrix(w, &mlcp.m)?;
    write_vector(w, &mlcp.q)?;
    let (a, b, c, d) = mlcp.blocks();
    for blk in [&a, &b, &c, &d] {
        for i in 0..blk.nrows() {
            let row: Vec<f64> = blk.row(i).iter().copied().collect();
            write_vector(w, &row)?;
        }
    }
    write_vector(w, &mlcp.q[..n])?;
    write_vector(w, &mlcp.q[n..])
}

/// Writes an MLCP file (see [`write_mlcp_to`]).
pub fn write_mlcp(path: impl AsRef<Path>, mlcp: &Mlcp) -> io::Result<()> {
    let mut w = create(path.as_ref())?;
    write_mlcp_to(&mut w, mlcp)?;
    w.flush()
}

// ---------------------------------------------------------------------------
// Reading and writing primitives for the other text formats (frictional
// contact, `io::friction_text`): the scanner and NumericsMatrix blocks above.
// ---------------------------------------------------------------------------

/// A whitespace-token reader over a Siconos text file, with the located
/// errors of this module.
pub(crate) struct TextReader<'a> {
    sc: Scanner<'a>,
    last: Mark,
}

impl<'a> TextReader<'a> {
    /// A reader of `src`; `path` is used in messages only.
    pub(crate) fn new(path: &'a Path, src: &'a [u8]) -> Self {
        let sc = Scanner::new(path, src);
        let last = sc.mark();
        TextReader { sc, last }
    }

    /// One non-negative integer.
    pub(crate) fn size(&mut self, what: &str) -> Res<usize> {
        let (v, m) = self.sc.size(|| what.to_string())?;
        self.last = m;
        Ok(v)
    }

    /// A NumericsMatrix block of `rows × cols`.
    pub(crate) fn matrix(&mut self, name: &str, rows: usize, cols: usize) -> Res<Matrix> {
        let (m, mark) = read_matrix(&mut self.sc, name, |r, c| {
            if (r, c) == (rows, cols) {
                Ok(())
            } else {
                Err(format!("{name} must be {rows}x{cols}, it is {r}x{c}"))
            }
        })?;
        self.last = mark;
        Ok(m)
    }

    /// A square NumericsMatrix block of any size.
    pub(crate) fn matrix_square(&mut self, name: &str) -> Res<Matrix> {
        let (m, mark) = read_matrix(&mut self.sc, name, |r, c| {
            if r == c {
                Ok(())
            } else {
                Err(format!("{name} must be square, it is {r}x{c}"))
            }
        })?;
        self.last = mark;
        Ok(m)
    }

    /// `n` finite numbers.
    pub(crate) fn vector(&mut self, n: usize, name: &str) -> Res<Vec<f64>> {
        vector(&mut self.sc, n, name)
    }

    /// An [`ReadError::Invalid`] at the last size or matrix read.
    pub(crate) fn invalid(&self, detail: String) -> ReadError {
        self.sc.err_invalid(self.last, detail)
    }
}

/// Reads a whole file, with this module's error.
pub(crate) fn read_bytes(path: &Path) -> Res<Vec<u8>> {
    read_file(path)
}

/// Writes a NumericsMatrix block (storage 0 or 1, full precision), refusing
/// non-finite values.
pub(crate) fn write_matrix_block(w: &mut impl Write, m: &Matrix) -> io::Result<()> {
    refuse_non_finite_matrix(m)?;
    write_matrix(w, m)
}

/// Writes a vector on one line (`%.17e`), refusing non-finite values.
pub(crate) fn write_values(w: &mut impl Write, what: &str, v: &[f64]) -> io::Result<()> {
    refuse_non_finite(what, v)?;
    write_vector(w, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "unit.dat";

    #[test]
    fn numbers_are_written_as_c_exp_and_read_back_exactly() {
        assert_eq!(c_exp(1.0), "1.00000000000000000e+00");
        assert_eq!(c_exp(-1.5e3), "-1.50000000000000000e+03");
        assert_eq!(c_exp(0.25), "2.50000000000000000e-01");
        assert_eq!(c_exp(-0.0), "-0.00000000000000000e+00");
        assert_eq!(c_exp(1e300), "1.00000000000000005e+300");
        for x in [
            0.1,
            1.0 / 3.0,
            5e-324,
            f64::MAX,
            -2.2250738585072014e-308,
            -0.0,
        ] {
            let back: f64 = c_exp(x).parse().unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x:e}");
        }
    }

    /// A 3x3 LCP whose M is given as a CSparse compressed-column dump.
    const CSC_LCP: &str = "3\n2\n3\n3\n2\n\
        CSparse Version 3.1.9, May 4, 2016.  Copyright (c) Timothy A. Davis, 2006-2016\n\
        3-by-3, nzmax: 4 nnz: 4, 1-norm: 3\n\
        \x20   col 0 : locations 0 to 1\n\
        \x20     0 : 2\n\
        \x20     2 : -0.333333333333333314829616256247\n\
        \x20   col 1 : locations 2 to 1\n\
        \x20   col 2 : locations 2 to 3\n\
        \x20     0 : 1e-3\n\
        \x20     2 : 4\n\
        -1 -1 -1\n";

    #[test]
    fn csparse_compressed_column_dump() {
        let lcp = parse_lcp(P, CSC_LCP.as_bytes()).unwrap();
        let d = lcp.m.to_dense();
        assert_eq!(d[(0, 0)], 2.0);
        assert_eq!(d[(2, 0)], -1.0 / 3.0);
        assert_eq!(d[(0, 2)], 1e-3);
        assert_eq!(d[(2, 2)], 4.0);
        assert_eq!(d.iter().filter(|v| **v != 0.0).count(), 4);
        assert_eq!(lcp.q, vec![-1.0; 3]);
    }

    #[test]
    fn csparse_triplet_dump_sums_duplicates() {
        let src = "2\n2\n2\n2\n1\nCSparse Version 3.1.9\ntriplet: 2-by-2, nzmax: 3 nnz: 3\n\
                   \x20   0 0 : 1\n    1 1 : 2.5\n    0 0 : 0.5\n1 2\n";
        let lcp = parse_lcp(P, src.as_bytes()).unwrap();
        let d = lcp.m.to_dense();
        assert_eq!((d[(0, 0)], d[(1, 1)], d[(0, 1)]), (1.5, 2.5, 0.0));
    }

    #[test]
    fn csparse_errors() {
        // A brief dump cut with `...`.
        let src = CSC_LCP.replace("      2 : 4\n", "  ...\n");
        let e = parse_lcp(P, src.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, ReadError::BadToken { found, .. } if found == "..."),
            "{e}"
        );
        assert_eq!(e.location().unwrap().line, 14);
        // An entry out of range.
        let src = CSC_LCP.replace("      2 : 4\n", "      3 : 4\n");
        let e = parse_lcp(P, src.as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::InconsistentSize { .. }), "{e}");
        // Dump size disagreeing with the header.
        let src = CSC_LCP.replace("3-by-3", "3-by-4");
        let e = parse_lcp(P, src.as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::InconsistentSize { .. }), "{e}");
        // CSR origin.
        let src = CSC_LCP.replacen("\n2\nCSparse", "\n3\nCSparse", 1);
        let e = parse_lcp(P, src.as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");
        // A non-finite value.
        let src = CSC_LCP.replace(": 1e-3", ": nan");
        let e = parse_lcp(P, src.as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::NonFinite { .. }), "{e}");
        assert_eq!(e.location().unwrap().line, 13);
        assert_eq!(e.location().unwrap().column, 11);
    }

    fn sample_sbm() -> BlockSparseMatrix {
        // Block rows of 1 and 2, block columns of 2 and 1; no block at (0, 1).
        BlockSparseMatrix::new(
            &[1, 2],
            &[2, 1],
            vec![
                Block {
                    row: 0,
                    col: 0,
                    values: vec![4.0, -1.0],
                },
                Block {
                    row: 1,
                    col: 0,
                    values: vec![0.5, 0.0, 3.0, -0.0],
                },
                Block {
                    row: 1,
                    col: 1,
                    values: vec![7.0, 1.0 / 3.0],
                },
            ],
        )
        .unwrap()
    }

    #[test]
    fn sbm_write_then_read() {
        let lcp = Lcp::new(sample_sbm(), vec![1.0, -2.0, 0.1]).unwrap();
        let mut out = Vec::new();
        write_lcp_to(&mut out, &lcp).unwrap();
        let back = parse_lcp(P, &out).unwrap();
        assert_eq!(back, lcp);
        let (Matrix::BlockSparse(a), Matrix::BlockSparse(b)) = (&lcp.m, &back.m) else {
            panic!("storage lost");
        };
        let bits = |m: &BlockSparseMatrix| {
            m.blocks()
                .flat_map(|(_, _, v)| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(a), bits(b));
        // The cumulative offsets are written without the leading 0.
        let text = String::from_utf8(out).unwrap();
        assert!(text
            .starts_with("3\n1\n3\n3\n3\n2\n2\n1\t3\t\n2\t3\t\n3\n3\n0\t1\t3\t\n0\t0\t1\t\n0\n"));
    }

    #[test]
    fn empty_sbm_is_a_zero_matrix() {
        let lcp = parse_lcp(P, b"2\n1\n2\n2\n0\n1 1\n").unwrap();
        assert_eq!(lcp.m.to_dense(), DMatrix::zeros(2, 2));
        let mut out = Vec::new();
        write_lcp_to(&mut out, &lcp).unwrap();
        assert_eq!(parse_lcp(P, &out).unwrap(), lcp);
    }

    #[test]
    fn writers_refuse_non_finite_values() {
        let lcp = Lcp {
            m: Matrix::Dense(DMatrix::identity(1, 1)),
            q: vec![f64::NAN],
        };
        let e = write_lcp_to(&mut Vec::new(), &lcp).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn interleaved_mlcp_blocks_are_reordered() {
        // Rows 0 and 2 complementarity, row 1 equality; storage 1 only.
        // M (column-major) = [[1,2,3],[4,5,6],[7,8,9]] row-major.
        let src = "1\n0\n1\n2\n0 1 2 3\n1 0 1\n0\n3\n3\n3 3\n1 4 7 2 5 8 3 6 9\n10 20 30\n";
        let f = parse_mlcp(P, src.as_bytes()).unwrap();
        assert_eq!(f.blocks_rows, vec![0, 1, 2, 3]);
        assert_eq!(f.blocks_is_comp, vec![true, false, true]);
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
        let p = &f.problem;
        assert_eq!(p.n_eq, 1);
        // New order: [1, 0, 2].
        let d = p.m.to_dense();
        assert_eq!(
            d,
            DMatrix::from_row_slice(3, 3, &[5., 4., 6., 2., 1., 3., 8., 7., 9.])
        );
        assert_eq!(p.q, vec![20.0, 10.0, 30.0]);
    }

    #[test]
    fn mlcp_from_storage_2_only() {
        // n = 1, m = 1: A = 2, B = 3, C = 4, D = 5, a = 6, b = 7.
        let f = parse_mlcp(P, b"0\n1\n1\n1\n2\n3\n4\n5\n6\n7\n").unwrap();
        assert!(f.blocks_rows.is_empty());
        let d = f.problem.m.to_dense();
        assert_eq!(d, DMatrix::from_row_slice(2, 2, &[2., 4., 5., 3.]));
        assert_eq!(f.problem.q, vec![6.0, 7.0]);
        // Written back with both storages, read identically.
        let mut out = Vec::new();
        write_mlcp_to(&mut out, &f.problem).unwrap();
        assert_eq!(parse_mlcp(P, &out).unwrap().problem, f.problem);
    }

    #[test]
    fn mlcp_without_equalities_or_complementarities() {
        for (n, m) in [(0, 2), (2, 0), (0, 0)] {
            let total = n + m;
            let mlcp =
                Mlcp::new(DMatrix::<f64>::identity(total, total), vec![-1.0; total], n).unwrap();
            let mut out = Vec::new();
            write_mlcp_to(&mut out, &mlcp).unwrap();
            let back = parse_mlcp(P, &out).unwrap_or_else(|e| panic!("{n} {m}: {e}"));
            assert_eq!(back.problem, mlcp);
        }
    }

    #[test]
    fn rectangular_mlcp_needs_storage_2() {
        let src = "1\n0\n1\n1\n0 1 2\n0 1\n0\n3\n2\n3 2\n1 -1 1 -1 -1 1\n0 1\n";
        let e = parse_mlcp(P, src.as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");
        assert_eq!(e.location().unwrap().line, 7);
    }

    #[test]
    fn eof_messages() {
        let e = parse_lcp(P, b"   \n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unit.dat:2:1: unexpected end of file while reading n (the problem size)"
        );
        let e = parse_relay(P, b"1\n0\n1\n1\n1 1\n2\n3\n0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unit.dat:9:1: unexpected end of file while reading ub"
        );
        let e = parse_mlcp(P, b"1 1 1 1 0 1").unwrap_err();
        assert!(matches!(e, ReadError::UnexpectedEof { .. }), "{e}");
    }

    /// Tiny deterministic generator for the fuzzing below.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as usize
        }
    }

    fn parse_all(src: &[u8]) {
        let _ = parse_lcp(P, src);
        let _ = parse_relay(P, src);
        let _ = parse_mlcp(P, src);
    }

    #[test]
    fn no_panic_on_truncated_or_mutated_input() {
        let mut sbm = Vec::new();
        write_lcp_to(
            &mut sbm,
            &Lcp::new(sample_sbm(), vec![1.0, -2.0, 0.1]).unwrap(),
        )
        .unwrap();
        let mut mlcp = Vec::new();
        let m = Mlcp::new(
            DMatrix::from_row_slice(2, 2, &[1., 2., 3., 4.]),
            vec![1., 2.],
            1,
        );
        write_mlcp_to(&mut mlcp, &m.unwrap()).unwrap();
        let relay = b"2\n0\n2\n2\n2 2\n1 0 0 1\n-1 1\n-1 -1\n1 1\n".to_vec();
        let samples = [sbm, mlcp, relay, CSC_LCP.as_bytes().to_vec()];
        let alphabet = b"0123456789-+.e \n\txn\xff:,";
        let mut rng = Lcg(7);
        for s in &samples {
            for k in 0..=s.len() {
                parse_all(&s[..k]);
            }
            for _ in 0..2000 {
                let mut t = s.clone();
                for _ in 0..1 + rng.next() % 3 {
                    let i = rng.next() % t.len();
                    match rng.next() % 3 {
                        0 => t[i] = alphabet[rng.next() % alphabet.len()],
                        1 => {
                            t.remove(i);
                        }
                        _ => t.insert(i, alphabet[rng.next() % alphabet.len()]),
                    }
                }
                parse_all(&t);
            }
        }
    }
}
