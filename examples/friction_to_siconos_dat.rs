//! Rewrites frictional contact problems, as this crate reads them, in the
//! Siconos 4.4 text layout, so that Siconos' own readers can load them:
//! FCLIB `.hdf5` files (local or global; Siconos' Python build has no FCLIB
//! reader) and `.dat` files whose W is a CSparse dump (storage 2, which
//! Siconos 4.4's drivers refuse) go out with W block-sparse over the contact
//! blocks. tests/oracle/check_friction_readers.py uses it to compare this
//! crate's readers with the Siconos oracle's own (tests/oracle/friction_files.py).
//!
//! Usage: cargo run --release --example friction_to_siconos_dat -- OUT_DIR FILE...
//! Prints one line per file: `<input> <output> local|global` (or `skip <input>: why`).

use std::path::Path;

use nonsmooth::io::fclib::{read_fclib, FclibProblem};
use nonsmooth::io::friction_text::{read_friction, write_friction, write_global_friction};
use nonsmooth::numerics::friction::{FrictionProblem, GlobalFrictionProblem};
use nonsmooth::numerics::{BlockSparseMatrix, Matrix};

fn to_block_sparse(p: FrictionProblem) -> Result<FrictionProblem, String> {
    let sizes = vec![p.dim; p.contacts()];
    let w = match &p.w {
        Matrix::Dense(d) => Matrix::BlockSparse(
            BlockSparseMatrix::from_dense(d, &sizes, &sizes).map_err(|e| e.to_string())?,
        ),
        Matrix::BlockSparse(_) => p.w.clone(),
    };
    FrictionProblem::new(p.dim, w, p.q, p.mu).map_err(|e| e.to_string())
}

/// With a block-sparse M (rigid bodies), H is written block-sparse too
/// (body rows × contact columns), which keeps the file small.
fn h_block_sparse(mut g: GlobalFrictionProblem) -> Result<GlobalFrictionProblem, String> {
    if let (Matrix::BlockSparse(m), Matrix::Dense(h)) = (&g.m, &g.h) {
        let rows = m.row_sizes();
        let cols = vec![g.dim; g.mu.len()];
        g.h = Matrix::BlockSparse(
            BlockSparseMatrix::from_dense(h, &rows, &cols).map_err(|e| e.to_string())?,
        );
    }
    Ok(g)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, files)) = args.split_first() else {
        eprintln!("usage: friction_to_siconos_dat OUT_DIR FILE...");
        std::process::exit(2);
    };
    let out = Path::new(out);
    for f in files {
        let path = Path::new(f);
        let stem = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dest = out.join(format!("{stem}.dat"));
        let result = if stem.ends_with(".hdf5") {
            match read_fclib(path) {
                Ok(FclibProblem::Local(p)) => to_block_sparse(p)
                    .and_then(|p| write_friction(&dest, &p).map_err(|e| e.to_string()))
                    .map(|_| "local"),
                Ok(FclibProblem::Global(g)) => h_block_sparse(g)
                    .and_then(|g| write_global_friction(&dest, &g).map_err(|e| e.to_string()))
                    .map(|_| "global"),
                Err(e) => Err(e.to_string()),
            }
        } else {
            read_friction(path)
                .map_err(|e| e.to_string())
                .and_then(to_block_sparse)
                .and_then(|p| write_friction(&dest, &p).map_err(|e| e.to_string()))
                .map(|_| "local")
        };
        match result {
            Ok(kind) => println!("{} {} {kind}", path.display(), dest.display()),
            Err(e) => println!("skip {}: {e}", path.display()),
        }
    }
}
