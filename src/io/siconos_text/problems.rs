//! Reading the problems: LCP, relay and MLCP (both storages, reconciled
//! as the module documentation says).

use std::fs;
use std::path::Path;

use nalgebra::DMatrix;

use crate::numerics::lcp::Lcp;
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::mlcp::Mlcp;
use crate::numerics::relay::Relay;

use super::matrices::*;
use super::scanning::*;

pub(super) fn read_file(path: &Path) -> Res<Vec<u8>> {
    fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn square_check(n: usize) -> impl FnOnce(usize, usize) -> Result<(), String> {
    move |r, c| {
        if r == n && c == n {
            Ok(())
        } else {
            Err(format!("n = {n} but M is {r}x{c}"))
        }
    }
}

pub(super) fn vector(sc: &mut Scanner<'_>, n: usize, name: &str) -> Res<Vec<f64>> {
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

pub(super) fn read_rows(
    sc: &mut Scanner<'_>,
    rows: usize,
    cols: usize,
    name: &str,
) -> Res<DMatrix<f64>> {
    let values = sc.numbers(
        rows * cols,
        &format!("{name} ({rows}x{cols}, row by row)"),
        |k| format!("{name}[{}][{}]", k / cols.max(1), k % cols.max(1)),
    )?;
    Ok(DMatrix::from_row_slice(rows, cols, &values))
}

/// The storage-2 blocks of an MLCP file and where they start.
pub(super) struct Storage2 {
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
    pub(super) fn entry(&self, i: usize, j: usize) -> f64 {
        let n = self.av.len();
        match (i < n, j < n) {
            (true, true) => self.a[(i, j)],
            (true, false) => self.c[(i, j - n)],
            (false, true) => self.d[(i - n, j)],
            (false, false) => self.b[(i - n, j - n)],
        }
    }

    /// Entry i of (a, b).
    pub(super) fn rhs(&self, i: usize) -> f64 {
        let n = self.av.len();
        if i < n {
            self.av[i]
        } else {
            self.bv[i - n]
        }
    }

    /// Checks that each row `r` of the storage-1 M (and `q[r]`, when the
    /// file has it) equals row `s` of the blocks, for the pairs `(r, s)`.
    pub(super) fn check_rows(
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
