//! The Siconos text readers and writers on the shared reference data
//! (`../shared/data/{lcp,mlcp,relay}`) and on malformed inputs.

use std::path::{Path, PathBuf};

use nonsmooth::io::{
    parse_lcp, parse_mlcp, parse_relay, read_lcp, read_mlcp_file, read_problem, read_relay,
    write_lcp, write_mlcp, write_relay, Problem, ProblemKind, ReadError,
};
use nonsmooth::numerics::{Matrix, ProblemMatrix};

/// The shared data folder. Its absence is a failure, not a skip: these tests
/// exist to check the reference data.
fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    assert!(
        dir.is_dir(),
        "the shared reference data folder {} is missing: these tests need ../shared/data \
         (with lcp/, mlcp/ and relay/) beside the crate",
        dir.display()
    );
    dir
}

fn files(sub: &str) -> Vec<PathBuf> {
    let dir = data_dir().join(sub);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no files in {}", dir.display());
    out
}

/// The first `k` whitespace-separated tokens of a file, as integers.
fn header(path: &Path, k: usize) -> Vec<i64> {
    let text = std::fs::read_to_string(path).expect("readable");
    text.split_whitespace()
        .take(k)
        .map(|t| t.parse().expect("integer header"))
        .collect()
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("io_siconos_files");
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bit-identical matrices, storage included.
fn assert_same_matrix(a: &Matrix, b: &Matrix, what: &Path) {
    match (a, b) {
        (Matrix::Dense(x), Matrix::Dense(y)) => {
            assert_eq!(x.shape(), y.shape(), "{}", what.display());
            assert_eq!(bits(x.as_slice()), bits(y.as_slice()), "{}", what.display());
        }
        (Matrix::BlockSparse(x), Matrix::BlockSparse(y)) => {
            assert_eq!(x.row_sizes(), y.row_sizes(), "{}", what.display());
            assert_eq!(x.col_sizes(), y.col_sizes(), "{}", what.display());
            let bx: Vec<_> = x.blocks().map(|(r, c, v)| (r, c, bits(v))).collect();
            let by: Vec<_> = y.blocks().map(|(r, c, v)| (r, c, bits(v))).collect();
            assert_eq!(bx, by, "{}", what.display());
        }
        _ => panic!("{}: storage changed in the round trip", what.display()),
    }
}

/// The storage type token of the first matrix (after `skip` header tokens).
fn storage_of(path: &Path, skip: usize) -> i64 {
    header(path, skip + 1)[skip]
}

fn assert_storage(m: &Matrix, storage: i64, path: &Path) {
    match storage {
        0 => assert!(matches!(m, Matrix::Dense(_)), "{}", path.display()),
        1 => assert!(matches!(m, Matrix::BlockSparse(_)), "{}", path.display()),
        _ => {}
    }
}

#[test]
fn every_lcp_file_reads_and_round_trips() {
    for path in files("lcp") {
        let lcp = read_lcp(&path).unwrap_or_else(|e| panic!("{e}"));
        let n = header(&path, 1)[0] as usize;
        assert_eq!(lcp.size(), n, "{}", path.display());
        assert_eq!((lcp.m.nrows(), lcp.m.ncols()), (n, n), "{}", path.display());
        assert_storage(&lcp.m, storage_of(&path, 1), &path);
        assert_eq!(ProblemKind::infer(&path), Some(ProblemKind::Lcp));

        let out = tmp(path.file_name().unwrap().to_str().unwrap());
        write_lcp(&out, &lcp).expect("write");
        let back = read_lcp(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_same_matrix(&lcp.m, &back.m, &path);
        assert_eq!(bits(&lcp.q), bits(&back.q), "{}", path.display());
    }
}

#[test]
fn every_relay_file_reads_and_round_trips() {
    for path in files("relay") {
        let relay = read_relay(&path).unwrap_or_else(|e| panic!("{e}"));
        let n = header(&path, 1)[0] as usize;
        assert_eq!(relay.size(), n, "{}", path.display());
        assert_eq!((relay.m.nrows(), relay.m.ncols()), (n, n));
        assert_eq!((relay.lb.len(), relay.ub.len()), (n, n));
        assert!(relay.lb.iter().zip(&relay.ub).all(|(l, u)| l <= u));
        assert_storage(&relay.m, storage_of(&path, 1), &path);
        assert_eq!(ProblemKind::infer(&path), Some(ProblemKind::Relay));

        let out = tmp(path.file_name().unwrap().to_str().unwrap());
        write_relay(&out, &relay).expect("write");
        let back = read_relay(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_same_matrix(&relay.m, &back.m, &path);
        assert_eq!(bits(&relay.q), bits(&back.q));
        assert_eq!(bits(&relay.lb), bits(&back.lb));
        assert_eq!(bits(&relay.ub), bits(&back.ub));
    }
}

#[test]
fn every_mlcp_file_reads_and_round_trips() {
    for path in files("mlcp") {
        let file = read_mlcp_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let h = header(&path, 4);
        let (n, m) = (h[2] as usize, h[3] as usize);
        let p = &file.problem;
        assert_eq!(p.n_eq, n, "{}", path.display());
        assert_eq!(p.size(), n + m, "{}", path.display());
        assert_eq!((p.m.nrows(), p.m.ncols()), (n + m, n + m));
        // No reference file interleaves its blocks.
        assert_eq!(file.blocks_rows, vec![0, n, n + m], "{}", path.display());
        assert_eq!(file.blocks_is_comp, vec![false, true], "{}", path.display());
        let rectangular = path.file_name().unwrap() == "Rectangular_mlcp.dat";
        assert_eq!(
            !file.notes.is_empty(),
            rectangular,
            "{}: {:?}",
            path.display(),
            file.notes
        );
        if !rectangular {
            assert_storage(&p.m, storage_of(&path, 9), &path);
        }
        assert_eq!(ProblemKind::infer(&path), Some(ProblemKind::Mlcp));

        let out = tmp(path.file_name().unwrap().to_str().unwrap());
        write_mlcp(&out, p).expect("write");
        let back = read_mlcp_file(&out).unwrap_or_else(|e| panic!("{e}"));
        assert!(back.notes.is_empty());
        assert_eq!(back.problem.n_eq, p.n_eq);
        assert_same_matrix(&p.m, &back.problem.m, &path);
        assert_eq!(bits(&p.q), bits(&back.problem.q), "{}", path.display());
    }
}

#[test]
fn rectangular_mlcp_is_read_from_its_square_blocks() {
    let path = data_dir().join("mlcp/Rectangular_mlcp.dat");
    let file = read_mlcp_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let p = &file.problem;
    assert_eq!((p.n_eq, p.size()), (1, 2));
    let d = p.m.to_dense();
    // A = 1, C = -1, D = 1, B = 1; a = 0, b = -1.
    assert_eq!(d.as_slice(), &[1.0, 1.0, -1.0, 1.0]);
    assert_eq!(p.q, vec![0.0, -1.0]);
    assert!(file.notes[0].contains("rectangular"), "{:?}", file.notes);
}

#[test]
fn read_problem_dispatches_on_kind() {
    let dir = data_dir();
    let p = read_problem(dir.join("lcp/lcp_ortiz_block.dat"), ProblemKind::Lcp).unwrap();
    assert!(matches!(&p, Problem::Lcp(l) if matches!(l.m, Matrix::BlockSparse(_))));
    assert_eq!(p.size(), 4);
    let p = read_problem(dir.join("relay/step_2x2.dat"), ProblemKind::Relay).unwrap();
    assert_eq!(p.kind(), ProblemKind::Relay);
    let p = read_problem(dir.join("mlcp/m3n2_mlcp.dat"), ProblemKind::Mlcp).unwrap();
    assert!(matches!(&p, Problem::Mlcp(m) if m.n_eq == 2 && m.size() == 5));
}

#[test]
fn block_and_dense_versions_of_a_problem_agree() {
    let dir = data_dir();
    for (dense, block) in [
        ("lcp_ortiz.dat", "lcp_ortiz_block.dat"),
        ("lcp_trivial.dat", "lcp_trivial_block.dat"),
        ("lcp_deudeu.dat", "lcp_deudeu_block.dat"),
    ] {
        let a = read_lcp(dir.join("lcp").join(dense)).unwrap();
        let b = read_lcp(dir.join("lcp").join(block)).unwrap();
        // The block files print 7 significant digits: compare loosely.
        let (da, db) = (a.m.to_dense(), b.m.to_dense());
        assert!((da - db).amax() < 1e-6, "{dense} vs {block}");
        assert_eq!(a.q, b.q);
    }
}

// ---------------------------------------------------------------------------
// Malformed inputs
// ---------------------------------------------------------------------------

const FAKE: &str = "bad/lcp_case.dat";

fn at(e: &ReadError) -> (usize, usize) {
    let l = e.location().unwrap_or_else(|| panic!("no location in {e}"));
    assert_eq!(l.path, Path::new(FAKE));
    (l.line, l.column)
}

#[test]
fn truncated_file_reports_eof_with_progress() {
    let src = "2\n0\n2\n2\n2\t2\n1 2\n3";
    let e = parse_lcp(FAKE, src.as_bytes()).unwrap_err();
    assert!(
        matches!(&e, ReadError::UnexpectedEof { what, read: 3, needed: 4, .. } if what == "M (dense 2x2)"),
        "{e}"
    );
    assert_eq!(at(&e), (7, 2));
    assert!(
        e.to_string()
            .starts_with("bad/lcp_case.dat:7:2: unexpected end of file while reading M (dense 2x2), 3 of 4 values read"),
        "{e}"
    );
    // Truncated in q, with a trailing newline: the end of file is on line 9.
    let e = parse_lcp(FAKE, b"2\n0\n2\n2\n2\t2\n1 2\n3 4\n-1\n").unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::UnexpectedEof {
                read: 1,
                needed: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(at(&e), (9, 1));
    // Empty file.
    let e = parse_lcp(FAKE, b"").unwrap_err();
    assert!(matches!(e, ReadError::UnexpectedEof { .. }), "{e}");
    assert_eq!(at(&e), (1, 1));
}

#[test]
fn garbage_token_is_located() {
    let src = "2\n0\n2\n2\n2\t2\n1 0\n0 1\n-1 abc\n";
    let e = parse_lcp(FAKE, src.as_bytes()).unwrap_err();
    assert!(
        matches!(&e, ReadError::BadToken { what, found, expected: "a number", .. } if what == "q[1]" && found == "abc"),
        "{e}"
    );
    assert_eq!(at(&e), (8, 4));
    assert!(
        e.to_string()
            .ends_with("expected a number for q[1], found `abc`"),
        "{e}"
    );
    // A float where an integer is expected.
    let e = parse_lcp(FAKE, b"2.5\n").unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::BadToken {
                expected: "an integer",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(at(&e), (1, 1));
    // Column counts characters, not bytes.
    let e = parse_lcp(FAKE, "2\n0\n2\n2\n2\t2\n1 0\n0 1\n  é x\n".as_bytes()).unwrap_err();
    assert!(
        matches!(&e, ReadError::BadToken { found, .. } if found == "é"),
        "{e}"
    );
    assert_eq!(at(&e), (8, 3));
}

#[test]
fn non_finite_values_are_refused() {
    for (tok, col) in [
        ("nan", 3),
        ("NaN", 3),
        ("inf", 3),
        ("-inf", 3),
        ("1e999", 3),
    ] {
        let src = format!("2\n0\n2\n2\n2\t2\n1 0\n0 {tok}\n-1 -1\n");
        let e = parse_lcp(FAKE, src.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, ReadError::NonFinite { what, found, .. } if what == "M[1][1]" && found == tok),
            "{tok}: {e}"
        );
        assert_eq!(at(&e), (7, col), "{tok}");
    }
}

#[test]
fn negative_and_inconsistent_sizes() {
    let e = parse_lcp(FAKE, b"-3\n").unwrap_err();
    assert!(
        matches!(e, ReadError::NegativeSize { value: -3, .. }),
        "{e}"
    );
    assert_eq!(at(&e), (1, 1));
    let e = parse_lcp(FAKE, b"2\n0\n-2\n2\n").unwrap_err();
    assert!(
        matches!(e, ReadError::NegativeSize { value: -2, .. }),
        "{e}"
    );
    assert_eq!(at(&e), (3, 1));
    // n = 3 but M is 2x2.
    let e = parse_lcp(FAKE, b"3\n0\n2\n2\n2 2\n1 0 0 1\n1 1 1\n").unwrap_err();
    assert!(matches!(e, ReadError::InconsistentSize { .. }), "{e}");
    assert_eq!(at(&e), (3, 1));
    // Dense header disagreeing with the matrix header.
    let e = parse_lcp(FAKE, b"2\n0\n2\n2\n2 3\n").unwrap_err();
    assert!(matches!(e, ReadError::InconsistentSize { .. }), "{e}");
    assert_eq!(at(&e), (5, 1));
    // A size no file of this length can hold is refused before allocating.
    let e = parse_lcp(FAKE, b"99999999999\n").unwrap_err();
    assert!(matches!(e, ReadError::InconsistentSize { .. }), "{e}");
}

/// A 4x4 SBM LCP (the layout of lcp_ortiz_block.dat) with one token replaced.
fn sbm_lcp(row_offsets: &str, row_ptr: &str) -> String {
    format!(
        "4\n1\n4\n4\n2\n2\n2\n{row_offsets}\n2 4\n3\n2\n{row_ptr}\n0 1\n\
         0\n1\n0\n0\n1\n1\n2\n0\n0\n1\n-1 -1 -1 -1\n"
    )
}

#[test]
fn block_sizes_that_do_not_add_up() {
    // The valid file reads.
    let ok = parse_lcp(FAKE, sbm_lcp("2 4", "0 1 2").as_bytes()).unwrap();
    assert!(matches!(ok.m, Matrix::BlockSparse(_)));
    assert_eq!(ok.m.to_dense()[(1, 1)], 1.0);
    // Row offsets ending at 3 for a 4-row matrix.
    let e = parse_lcp(FAKE, sbm_lcp("2 3", "0 1 2").as_bytes()).unwrap_err();
    assert!(matches!(e, ReadError::BlockSizes { .. }), "{e}");
    assert_eq!(at(&e), (8, 3));
    // Decreasing offsets.
    let e = parse_lcp(FAKE, sbm_lcp("3 2", "0 1 2").as_bytes()).unwrap_err();
    assert!(matches!(e, ReadError::BlockSizes { .. }), "{e}");
    assert_eq!(at(&e), (8, 3));
    // Block-row pointers not ending at the number of blocks.
    let e = parse_lcp(FAKE, sbm_lcp("2 4", "0 1 1").as_bytes()).unwrap_err();
    assert!(matches!(e, ReadError::BlockSizes { .. }), "{e}");
    assert_eq!(at(&e), (12, 5));
}

#[test]
fn mlcp_and_relay_specific_errors() {
    // blocksIsComp says 2 equality rows but n = 1.
    let src = "1\n1\n1\n1\n0 2\n0\n";
    let e = parse_mlcp(FAKE, src.as_bytes()).unwrap_err();
    assert!(matches!(e, ReadError::BlockSizes { .. }), "{e}");
    assert_eq!(at(&e), (6, 1));
    // A storage flag that is neither 0 nor 1.
    let e = parse_mlcp(FAKE, b"1\n2\n").unwrap_err();
    assert!(matches!(e, ReadError::Invalid { .. }), "{e}");
    assert_eq!(at(&e), (2, 1));
    // Storages that disagree: storage 1 says M[0][0] = 1, storage 2 says A = 5.
    let src = "1\n1\n1\n1\n0 1 2\n0 1\n0\n2\n2\n2 2\n1 2 3 4\n5 6\n5\n4\n3\n2\n5\n6\n";
    let e = parse_mlcp(FAKE, src.as_bytes()).unwrap_err();
    assert!(
        matches!(&e, ReadError::Invalid { detail, .. } if detail.contains("M[0][0]")),
        "{e}"
    );
    assert_eq!(at(&e), (13, 1));
    // Relay with ub < lb.
    let src = "1\n0\n1\n1\n1 1\n2\n3\n0.5\n-1 this is ignored\n";
    let e = parse_relay(FAKE, src.as_bytes()).unwrap_err();
    assert!(matches!(e, ReadError::Invalid { .. }), "{e}");
    assert_eq!(at(&e), (9, 1));
    // Unsupported storage type.
    let e = parse_lcp(FAKE, b"1\n7\n1\n1\n").unwrap_err();
    assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");
    assert_eq!(at(&e), (2, 1));
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let path = tmp("does_not_exist.dat");
    let e = read_lcp(&path).unwrap_err();
    assert!(matches!(e, ReadError::Io { .. }), "{e}");
    assert_eq!(e.path(), path.as_path());
    assert!(e.to_string().contains("does_not_exist.dat"));
}
