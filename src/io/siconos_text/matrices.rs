//! Reading a NumericsMatrix block: dense (storage 0), sparse block
//! (storage 1) and a CSparse dump (storage 2), read into dense storage.

use nalgebra::DMatrix;

use crate::numerics::matrix::{Block, BlockSparseMatrix, Matrix};

use super::scanning::*;

/// Reads a NumericsMatrix block. `check(rows, cols)` is called right after
/// the header; its `Err(detail)` becomes an [`ReadError::InconsistentSize`]
/// at the header. Returns the matrix and the mark of its storage token.
pub(super) fn read_matrix(
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

pub(super) fn read_dense(
    sc: &mut Scanner<'_>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Res<DMatrix<f64>> {
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
pub(super) fn offsets_to_sizes(
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

pub(super) fn read_sbm(
    sc: &mut Scanner<'_>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Res<BlockSparseMatrix> {
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
pub(super) fn parse_by(text: &[u8]) -> Option<(usize, usize)> {
    let s = std::str::from_utf8(text).ok()?;
    let (a, b) = s.split_once("-by-")?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub(super) fn field_usize(
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

pub(super) fn expect_word(
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

pub(super) fn end_of(m: Mark, line: &[u8]) -> Mark {
    Mark {
        offset: m.offset + line.len(),
        ..m
    }
}

/// What a CSparse entry line belongs to.
pub(super) struct Dump<'n> {
    name: &'n str,
    rows: usize,
    cols: usize,
}

/// Parses a CSparse entry line `i : value` (compressed column) or
/// `i j : value` (triplet, `with_col`).
pub(super) fn parse_entry(
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

pub(super) fn read_csparse(
    sc: &mut Scanner<'_>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Res<DMatrix<f64>> {
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
