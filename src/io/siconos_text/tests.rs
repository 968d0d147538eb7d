//! Unit tests of the Siconos text reader and writers.

use std::io::{self};

use nalgebra::DMatrix;

use crate::numerics::lcp::Lcp;
use crate::numerics::matrix::{Block, BlockSparseMatrix, Matrix};
use crate::numerics::mlcp::Mlcp;

use super::problems::*;
use super::scanning::*;
use super::writing::*;

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
    assert!(
        text.starts_with("3\n1\n3\n3\n3\n2\n2\n1\t3\t\n2\t3\t\n3\n3\n0\t1\t3\t\n0\t0\t1\t\n0\n")
    );
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
        let mlcp = Mlcp::new(DMatrix::<f64>::identity(total, total), vec![-1.0; total], n).unwrap();
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
