//! FCLIB frictional contact problems (HDF5, fclib 3.1 layout), read with the
//! pure-Rust `hdf5-pure` crate (no system library).
//!
//! ```text
//! /fclib_local/spacedim             2 or 3
//! /fclib_local/W/{m,n,nz,nzmax,p,i,x}
//! /fclib_local/vectors/{q,mu}
//! /fclib_global/spacedim
//! /fclib_global/{M,H}/{m,n,nz,nzmax,p,i,x}
//! /fclib_global/vectors/{f,w,mu}
//! ```
//!
//! A matrix with `nz ≥ 0` is a triplet list of `nz` entries with `i` the
//! row and `p` the column index (the CSparse convention; the comment in
//! `fclib.h` says the opposite, the files follow CSparse); `nz = −1` is
//! compressed-column (`p` holds n + 1 column pointers), `nz = −2`
//! compressed-row (`p` holds m + 1 row pointers). Duplicate entries are
//! summed. The local W is stored block-sparse over the d × d contact
//! blocks; the global H dense, M dense or, beyond 2000 rows, block-diagonal
//! (rigid bodies) when its entries allow it. Problems with equality constraints
//! (`V`, `R` local, `G` global) and rolling friction (`fclib_global_rolling`)
//! are refused. The `/solution` and `/guesses` groups are not read (in the
//! shared files they are not solutions).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdf5_pure::File;
use nalgebra::DMatrix;
use thiserror::Error;

use crate::numerics::friction::{FrictionProblem, GlobalFrictionProblem};
use crate::numerics::matrix::{Block, BlockSparseMatrix, Matrix};

/// Largest number of entries of a matrix stored dense (2²⁷, 1 GiB).
const DENSE_LIMIT: usize = 1 << 27;

/// Why an FCLIB file could not be read.
#[derive(Debug, Error)]
pub enum FclibError {
    /// The HDF5 layer failed (not an HDF5 file, unreadable, missing dataset).
    #[error("{}: {what}: {detail}", path.display())]
    Hdf5 {
        /// The file.
        path: PathBuf,
        /// The dataset or group.
        what: String,
        /// The HDF5 reader's message.
        detail: String,
    },
    /// Readable data that does not make a valid problem.
    #[error("{}: invalid FCLIB problem: {detail}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A valid FCLIB problem of a kind not supported here.
    #[error("{}: unsupported FCLIB problem: {detail}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What.
        detail: String,
    },
}

/// A problem read from an FCLIB file.
#[derive(Debug, Clone, PartialEq)]
pub enum FclibProblem {
    /// `/fclib_local`: u = W r + q.
    Local(FrictionProblem),
    /// `/fclib_global`: M v = H r + f, u = Hᵀ v + w.
    Global(GlobalFrictionProblem),
}

/// A matrix's rows, columns and (row, column, value) entries.
type Entries = (usize, usize, Vec<(usize, usize, f64)>);

struct Reader<'a> {
    path: &'a Path,
    file: File,
}

impl Reader<'_> {
    fn hdf5(&self, what: &str, e: impl std::fmt::Display) -> FclibError {
        FclibError::Hdf5 {
            path: self.path.to_path_buf(),
            what: what.to_string(),
            detail: e.to_string(),
        }
    }

    fn invalid(&self, detail: String) -> FclibError {
        FclibError::Invalid {
            path: self.path.to_path_buf(),
            detail,
        }
    }

    fn has(&self, path: &str) -> bool {
        self.file.dataset(path).is_ok() || self.file.group(path).is_ok()
    }

    fn f64s(&self, path: &str) -> Result<Vec<f64>, FclibError> {
        let v = self
            .file
            .dataset(path)
            .and_then(|d| d.read_f64())
            .map_err(|e| self.hdf5(path, e))?;
        if let Some(k) = v.iter().position(|x| !x.is_finite()) {
            return Err(self.invalid(format!("{path}[{k}] = {} is not finite", v[k])));
        }
        Ok(v)
    }

    fn ints(&self, path: &str) -> Result<Vec<i64>, FclibError> {
        self.file
            .dataset(path)
            .and_then(|d| d.read_i64())
            .map_err(|e| self.hdf5(path, e))
    }

    fn int(&self, path: &str) -> Result<i64, FclibError> {
        let v = self.ints(path)?;
        v.first()
            .copied()
            .ok_or_else(|| self.invalid(format!("{path} is empty")))
    }

    fn index(&self, what: &str, v: i64, bound: usize) -> Result<usize, FclibError> {
        usize::try_from(v)
            .ok()
            .filter(|&k| k < bound)
            .ok_or_else(|| self.invalid(format!("{what} = {v} outside 0..{bound}")))
    }

    /// The (row, column, value) entries of the matrix at `group`, with its
    /// shape.
    fn entries(&self, group: &str) -> Result<Entries, FclibError> {
        let size = |name: &str| -> Result<usize, FclibError> {
            let v = self.int(&format!("{group}/{name}"))?;
            usize::try_from(v)
                .map_err(|_| self.invalid(format!("{group}/{name} = {v} is negative")))
        };
        let (m, n) = (size("m")?, size("n")?);
        let nz = self.int(&format!("{group}/nz"))?;
        let p = self.ints(&format!("{group}/p"))?;
        let i = self.ints(&format!("{group}/i"))?;
        let x = self.f64s(&format!("{group}/x"))?;
        let mut out = Vec::new();
        let short = |what: &str, need: usize, have: usize| {
            self.invalid(format!("{group}/{what} has {have} entries, {need} needed"))
        };
        match nz {
            k if k >= 0 => {
                let k = k as usize;
                if p.len() < k || i.len() < k || x.len() < k {
                    return Err(short("p, i or x", k, p.len().min(i.len()).min(x.len())));
                }
                for t in 0..k {
                    let r = self.index(&format!("{group}/i[{t}]"), i[t], m)?;
                    let c = self.index(&format!("{group}/p[{t}]"), p[t], n)?;
                    out.push((r, c, x[t]));
                }
            }
            -1 | -2 => {
                let (outer, inner) = if nz == -1 { (n, m) } else { (m, n) };
                if p.len() < outer + 1 {
                    return Err(short("p", outer + 1, p.len()));
                }
                for o in 0..outer {
                    let a = self.index(&format!("{group}/p[{o}]"), p[o], usize::MAX)?;
                    let b = self.index(&format!("{group}/p[{}]", o + 1), p[o + 1], usize::MAX)?;
                    if b < a || b > i.len() || b > x.len() {
                        return Err(
                            self.invalid(format!("{group}/p is not a valid pointer array at {o}"))
                        );
                    }
                    for t in a..b {
                        let k = self.index(&format!("{group}/i[{t}]"), i[t], inner)?;
                        out.push(if nz == -1 { (k, o, x[t]) } else { (o, k, x[t]) });
                    }
                }
            }
            k => return Err(self.invalid(format!("{group}/nz = {k} (expected ≥ 0, −1 or −2)"))),
        }
        Ok((m, n, out))
    }

    fn dense(&self, group: &str) -> Result<DMatrix<f64>, FclibError> {
        let (m, n, e) = self.entries(group)?;
        if m.checked_mul(n).is_none_or(|k| k > DENSE_LIMIT) {
            return Err(FclibError::Unsupported {
                path: self.path.to_path_buf(),
                detail: format!("{group} ({m}x{n}) is too large to be stored dense"),
            });
        }
        let mut d = DMatrix::zeros(m, n);
        for (r, c, v) in e {
            d[(r, c)] += v;
        }
        Ok(d)
    }

    /// M: dense, or block-diagonal (block-sparse with the finest diagonal
    /// blocks that hold every entry) when it has more than 2000 rows and
    /// its largest diagonal block is at most 1000 rows.
    fn mass(&self, group: &str) -> Result<Matrix, FclibError> {
        let (m, n, entries) = self.entries(group)?;
        if m != n || m <= 2000 {
            return self.dense(group).map(Matrix::Dense);
        }
        // reach[k]: the largest index coupled to an index ≤ k.
        let mut reach: Vec<usize> = (0..m).collect();
        for &(r, c, _) in &entries {
            let (a, b) = (r.min(c), r.max(c));
            reach[a] = reach[a].max(b);
        }
        let mut sizes = Vec::new();
        let (mut start, mut far) = (0, 0);
        for (k, &rk) in reach.iter().enumerate() {
            far = far.max(rk);
            if far == k {
                sizes.push(k + 1 - start);
                start = k + 1;
            }
        }
        if sizes.iter().any(|&s| s > 1000) {
            return self.dense(group).map(Matrix::Dense);
        }
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut block_of = vec![0usize; m];
        let mut acc = 0;
        for (b, &s) in sizes.iter().enumerate() {
            offsets.push(acc);
            block_of[acc..acc + s].iter_mut().for_each(|x| *x = b);
            acc += s;
        }
        let mut values: Vec<Vec<f64>> = sizes.iter().map(|&s| vec![0.0; s * s]).collect();
        for (r, c, v) in entries {
            let b = block_of[r];
            let (lr, lc) = (r - offsets[b], c - offsets[b]);
            values[b][lc * sizes[b] + lr] += v;
        }
        let blocks = values
            .into_iter()
            .enumerate()
            .map(|(b, values)| Block {
                row: b,
                col: b,
                values,
            })
            .collect();
        BlockSparseMatrix::new(&sizes, &sizes, blocks)
            .map(Matrix::BlockSparse)
            .map_err(|e| self.invalid(format!("{group}: {e}")))
    }

    fn spacedim(&self, group: &str) -> Result<usize, FclibError> {
        let d = self.int(&format!("{group}/spacedim"))?;
        match d {
            2 | 3 => Ok(d as usize),
            _ => Err(FclibError::Unsupported {
                path: self.path.to_path_buf(),
                detail: format!("{group}/spacedim = {d} (2 or 3 supported)"),
            }),
        }
    }

    fn local(&self) -> Result<FrictionProblem, FclibError> {
        for extra in ["/fclib_local/V", "/fclib_local/R"] {
            if self.has(extra) {
                return Err(FclibError::Unsupported {
                    path: self.path.to_path_buf(),
                    detail: format!("{extra}: equality constraints are not supported"),
                });
            }
        }
        let d = self.spacedim("/fclib_local")?;
        let q = self.f64s("/fclib_local/vectors/q")?;
        let mu = self.f64s("/fclib_local/vectors/mu")?;
        let (m, n, entries) = self.entries("/fclib_local/W")?;
        let size = d * mu.len();
        if m != size || n != size || q.len() != size {
            return Err(self.invalid(format!(
                "W is {m}x{n} and q has {} entries, {} contacts of dimension {d} need {size}",
                q.len(),
                mu.len()
            )));
        }
        let mut blocks: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
        for (r, c, v) in entries {
            let b = blocks
                .entry((r / d, c / d))
                .or_insert_with(|| vec![0.0; d * d]);
            b[(c % d) * d + r % d] += v;
        }
        let blocks = blocks
            .into_iter()
            .map(|((row, col), values)| Block { row, col, values })
            .collect();
        let sizes = vec![d; mu.len()];
        let w = BlockSparseMatrix::new(&sizes, &sizes, blocks)
            .map_err(|e| self.invalid(format!("W: {e}")))?;
        FrictionProblem::new(d, w, q, mu).map_err(|e| self.invalid(e.to_string()))
    }

    fn global(&self) -> Result<GlobalFrictionProblem, FclibError> {
        if self.has("/fclib_global/G") {
            return Err(FclibError::Unsupported {
                path: self.path.to_path_buf(),
                detail: "/fclib_global/G: bilateral constraints are not supported".into(),
            });
        }
        let d = self.spacedim("/fclib_global")?;
        let m = self.mass("/fclib_global/M")?;
        let h = self.dense("/fclib_global/H")?;
        let f = self.f64s("/fclib_global/vectors/f")?;
        let w = self.f64s("/fclib_global/vectors/w")?;
        let mu = self.f64s("/fclib_global/vectors/mu")?;
        GlobalFrictionProblem::new(d, m, h, f, w, mu).map_err(|e| self.invalid(e.to_string()))
    }
}

/// Reads an FCLIB file: its local problem if it has `/fclib_local`, else
/// its global one.
pub fn read_fclib(path: impl AsRef<Path>) -> Result<FclibProblem, FclibError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| FclibError::Hdf5 {
        path: path.to_path_buf(),
        what: "the file".into(),
        detail: e.to_string(),
    })?;
    let rd = Reader { path, file };
    if rd.has("/fclib_local") {
        Ok(FclibProblem::Local(rd.local()?))
    } else if rd.has("/fclib_global") {
        Ok(FclibProblem::Global(rd.global()?))
    } else if rd.has("/fclib_global_rolling") {
        Err(FclibError::Unsupported {
            path: path.to_path_buf(),
            detail: "rolling friction (/fclib_global_rolling) is not supported".into(),
        })
    } else {
        Err(FclibError::Invalid {
            path: path.to_path_buf(),
            detail: "neither /fclib_local nor /fclib_global".into(),
        })
    }
}
