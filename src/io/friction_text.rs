//! The Siconos text files of frictional contact problems.
//!
//! | problem | layout (in order) |
//! |---|---|
//! | local (fc2d, fc3d) | `d`, `nc`, W ((d·nc)²), `q[d·nc]`, `mu[nc]` |
//! | global (gfc3d) | `d`, `nc`, M (n × n), H (n × d·nc), `q[n]` (our f), `b[d·nc]` (our w), `mu[nc]` |
//!
//! with matrices as NumericsMatrix blocks (dense, sparse block or CSparse
//! dump; see [`super::siconos_text`]) and per-contact ordering [N, T1, T2].
//! n, the size of M, is read from M's header. Text after `mu` is ignored.
//! A large, mostly-zero dense W is stored block-sparse over the contact
//! blocks (see `sparsify`).
//! The writers emit full precision (`%.17e`), dense matrices in storage 0
//! and block-sparse ones in storage 1, which Siconos 4.4 reads.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::siconos_text::{read_bytes, write_matrix_block, write_values, ReadError, TextReader};
use crate::numerics::friction::{FrictionProblem, GlobalFrictionProblem};
use crate::numerics::matrix::{BlockSparseMatrix, Matrix, ProblemMatrix};

fn header(rd: &mut TextReader<'_>) -> Result<(usize, usize), ReadError> {
    let d = rd.size("d (the contact dimension)")?;
    if d != 2 && d != 3 {
        return Err(rd.invalid(format!("the contact dimension must be 2 or 3, found {d}")));
    }
    let nc = rd.size("nc (the number of contacts)")?;
    Ok((d, nc))
}

/// A dense W of at least 200 unknowns (e.g. read from a CSparse dump) whose
/// contact blocks are at most half non-zero is stored block-sparse over the
/// d × d contact blocks: the solvers then work in O(non-zero blocks).
fn sparsify(w: Matrix, d: usize, nc: usize) -> Matrix {
    match w {
        Matrix::Dense(m) if d * nc >= 200 => {
            let nonzero = (0..nc)
                .flat_map(|i| (0..nc).map(move |j| (i, j)))
                .filter(|&(i, j)| m.view((i * d, j * d), (d, d)).iter().any(|v| *v != 0.0))
                .count();
            let sizes = vec![d; nc];
            if 2 * nonzero <= nc * nc {
                if let Ok(b) = BlockSparseMatrix::from_dense(&m, &sizes, &sizes) {
                    return Matrix::BlockSparse(b);
                }
            }
            Matrix::Dense(m)
        }
        w => w,
    }
}

/// Parses a local frictional contact problem (fc2d/fc3d) from the contents
/// of a file; `path` is used in messages only.
pub fn parse_friction(path: impl AsRef<Path>, src: &[u8]) -> Result<FrictionProblem, ReadError> {
    let path = path.as_ref();
    let mut rd = TextReader::new(path, src);
    let (d, nc) = header(&mut rd)?;
    let n = d * nc;
    let w = sparsify(rd.matrix("W", n, n)?, d, nc);
    let q = rd.vector(n, "q")?;
    let mu = rd.vector(nc, "mu")?;
    FrictionProblem::new(d, w, q, mu).map_err(|e| rd.invalid(e.to_string()))
}

/// Reads a local frictional contact problem file.
pub fn read_friction(path: impl AsRef<Path>) -> Result<FrictionProblem, ReadError> {
    let path = path.as_ref();
    parse_friction(path, &read_bytes(path)?)
}

/// Parses a global frictional contact problem (gfc3d) from the contents of
/// a file; `path` is used in messages only.
pub fn parse_global_friction(
    path: impl AsRef<Path>,
    src: &[u8],
) -> Result<GlobalFrictionProblem, ReadError> {
    let path = path.as_ref();
    let mut rd = TextReader::new(path, src);
    let (d, nc) = header(&mut rd)?;
    let m = rd.matrix_square("M")?;
    let n = m.nrows();
    let h = rd.matrix("H", n, d * nc)?;
    let f = rd.vector(n, "q")?;
    let w = rd.vector(d * nc, "b")?;
    let mu = rd.vector(nc, "mu")?;
    GlobalFrictionProblem::new(d, m, h, f, w, mu).map_err(|e| rd.invalid(e.to_string()))
}

/// Reads a global frictional contact problem file.
pub fn read_global_friction(path: impl AsRef<Path>) -> Result<GlobalFrictionProblem, ReadError> {
    let path = path.as_ref();
    parse_global_friction(path, &read_bytes(path)?)
}

/// Writes a local problem in the Siconos text layout to `w`.
pub fn write_friction_to(w: &mut impl Write, p: &FrictionProblem) -> io::Result<()> {
    writeln!(w, "{}\n{}", p.dim, p.contacts())?;
    write_matrix_block(w, &p.w)?;
    write_values(w, "q", &p.q)?;
    write_values(w, "mu", &p.mu)
}

/// Writes a local problem file.
pub fn write_friction(path: impl AsRef<Path>, p: &FrictionProblem) -> io::Result<()> {
    let mut w = BufWriter::new(fs::File::create(path)?);
    write_friction_to(&mut w, p)?;
    w.flush()
}

/// Writes a global problem in the Siconos text layout to `w`.
pub fn write_global_friction_to(w: &mut impl Write, p: &GlobalFrictionProblem) -> io::Result<()> {
    writeln!(w, "{}\n{}", p.dim, p.mu.len())?;
    write_matrix_block(w, &p.m)?;
    write_matrix_block(w, &p.h)?;
    write_values(w, "q", &p.f)?;
    write_values(w, "b", &p.w)?;
    write_values(w, "mu", &p.mu)
}

/// Writes a global problem file.
pub fn write_global_friction(path: impl AsRef<Path>, p: &GlobalFrictionProblem) -> io::Result<()> {
    let mut w = BufWriter::new(fs::File::create(path)?);
    write_global_friction_to(&mut w, p)?;
    w.flush()
}
