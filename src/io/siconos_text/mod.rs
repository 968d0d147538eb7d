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

//!
//! # Code
//!
//! `scanning.rs` (tokens, locations, errors), `matrices.rs` (dense,
//! sparse-block and CSparse blocks), `problems.rs` (the LCP, relay and MLCP
//! readers) and `writing.rs`.

mod matrices;
mod primitives;
mod problems;
mod scanning;
mod writing;

pub(crate) use primitives::{read_bytes, write_matrix_block, write_values, TextReader};
pub use problems::{
    parse_lcp, parse_mlcp, parse_relay, read_lcp, read_mlcp, read_mlcp_file, read_relay, MlcpFile,
};
pub use scanning::{Location, ReadError};
pub use writing::{
    write_lcp, write_lcp_to, write_mlcp, write_mlcp_to, write_relay, write_relay_to,
};

#[cfg(test)]
mod tests;
