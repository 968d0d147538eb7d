//! Writing the problems in the Siconos text format, every value as C's
//! `%.17e`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::numerics::lcp::Lcp;
use crate::numerics::matrix::{Matrix, ProblemMatrix};
use crate::numerics::mlcp::Mlcp;
use crate::numerics::relay::Relay;

/// `x` as C's `%.17e` (e.g. `-1.50000000000000000e-03`).
pub(super) fn c_exp(x: f64) -> String {
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

pub(super) fn refuse_non_finite(what: &str, values: &[f64]) -> io::Result<()> {
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

pub(super) fn refuse_non_finite_matrix(m: &Matrix) -> io::Result<()> {
    match m.first_non_finite() {
        None => Ok(()),
        Some((i, v)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot write M: non-finite value {v} at row-major index {i}"),
        )),
    }
}

pub(super) fn write_vector(w: &mut impl Write, v: &[f64]) -> io::Result<()> {
    for x in v {
        write!(w, "{} ", c_exp(*x))?;
    }
    writeln!(w)
}

pub(super) fn write_index_line(
    w: &mut impl Write,
    v: impl Iterator<Item = usize>,
) -> io::Result<()> {
    for x in v {
        write!(w, "{x}\t")?;
    }
    writeln!(w)
}

pub(super) fn write_matrix(w: &mut impl Write, m: &Matrix) -> io::Result<()> {
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

pub(super) fn create(path: &Path) -> io::Result<BufWriter<fs::File>> {
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
