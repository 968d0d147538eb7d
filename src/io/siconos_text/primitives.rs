//! Reading and writing primitives for the other Siconos text formats
//! (frictional contact, [`crate::io::friction_text`]): the scanner and the
//! NumericsMatrix blocks of this module, behind a small reader type.

use std::io::{self, Write};
use std::path::Path;

use super::matrices::read_matrix;
use super::problems::{read_file, vector};
use super::scanning::{Mark, ReadError, Res, Scanner};
use super::writing::{refuse_non_finite, refuse_non_finite_matrix, write_matrix, write_vector};
use crate::numerics::matrix::Matrix;

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
