"""Readers of the frictional contact problem files in ../shared/data, for the
Siconos oracle (siconos_friction.py).  Independent of the Rust code under
test: the Siconos text layout (fc2d/fc3d/gfc3d `.dat`, W dense, sparse-block
or a CSparse dump) is parsed here token by token, FCLIB HDF5 files with h5py
(Debian python3-h5py).  Layouts: ../shared/data/FORMATS.md sections 2.1-2.3.

Every reader returns a dict of NumPy arrays:

    local:  kind "local",  d, W, q, mu, W_storage
    global: kind "global", d, M, H, q, b, mu, M_storage, H_storage

where a matrix is a dense ndarray (storage "dense") or a scipy.sparse CSC
matrix ("sparse-block" or "csparse": the entries the file stores, explicit
zeros included, duplicates summed).  Global problems use Siconos'
convention M v = q + H r, u = H^T v + b (FCLIB's f -> q, w -> b).

A file this module cannot represent raises Unsupported; a malformed one
raises FormatError with the file and line.
"""

import re

import numpy as np
import scipy.sparse as sp


class FormatError(ValueError):
    """A malformed problem file (path and line in the message)."""


class Unsupported(ValueError):
    """A well-formed file of a kind the oracle does not run."""


class _Tokens:
    """Whitespace tokens of a text file, with the line of each, and a line
    mode for the CSparse dump (which is line based)."""

    def __init__(self, path):
        self.path = path
        with open(path) as fh:
            self.lines = fh.read().split("\n")
        self.line = 0
        self.pending = []

    def _fill(self):
        while not self.pending:
            if self.line >= len(self.lines):
                raise FormatError("%s: unexpected end of file" % self.path)
            self.pending = self.lines[self.line].split()
            self.line += 1

    def where(self):
        return "%s:%d" % (self.path, self.line)

    def token(self):
        self._fill()
        return self.pending.pop(0)

    def int(self, what):
        t = self.token()
        try:
            return int(t)
        except ValueError:
            raise FormatError("%s: %s: expected an integer, found %r" % (self.where(), what, t))

    def floats(self, n, what):
        out = np.empty(n)
        for k in range(n):
            t = self.token()
            try:
                out[k] = float(t)
            except ValueError:
                raise FormatError("%s: %s[%d]: expected a number, found %r"
                                  % (self.where(), what, k, t))
        return out

    def next_line(self):
        """The next whole line (the rest of the current one is dropped)."""
        self.pending = []
        if self.line >= len(self.lines):
            raise FormatError("%s: unexpected end of file" % self.path)
        self.line += 1
        return self.lines[self.line - 1]

    def peek_line(self):
        return self.lines[self.line] if self.line < len(self.lines) else None


_CSC_HEAD = re.compile(r"^\s*(\d+)-by-(\d+), nzmax: (\d+) nnz: (\d+)")
_TRIPLET_HEAD = re.compile(r"^\s*triplet: (\d+)-by-(\d+), nzmax: (\d+) nnz: (\d+)")
_COL = re.compile(r"^\s*col (\d+) : locations (\d+) to (-?\d+)\s*$")
_CSC_ENTRY = re.compile(r"^\s*(\d+) : (\S+)\s*$")
_TRIPLET_ENTRY = re.compile(r"^\s*(\d+) (\d+) : (\S+)\s*$")


def _csparse(tok, rows, cols, what):
    """The CSparse `cs_print` dump that follows storage type 2 and its origin."""
    tok.int(what + " origin")
    version = tok.next_line()
    if not version.strip().startswith("CSparse"):
        raise FormatError("%s: %s: expected the 'CSparse Version' line" % (tok.where(), what))
    head = tok.next_line()
    ri, ci, vals = [], [], []
    m = _TRIPLET_HEAD.match(head)
    if m:
        nnz = int(m.group(4))
        entry, triplet = _TRIPLET_ENTRY, True
    else:
        m = _CSC_HEAD.match(head)
        if not m:
            raise FormatError("%s: %s: not a CSparse header: %r" % (tok.where(), what, head))
        nnz = int(m.group(4))
        entry, triplet = _CSC_ENTRY, False
    if (int(m.group(1)), int(m.group(2))) != (rows, cols):
        raise FormatError("%s: %s: CSparse size %sx%s, header says %dx%d"
                          % (tok.where(), what, m.group(1), m.group(2), rows, cols))
    col = None
    while True:
        nxt = tok.peek_line()
        if nxt is None:
            break
        c = None if triplet else _COL.match(nxt)
        e = entry.match(nxt)
        if c:
            col = int(c.group(1))
        elif e:
            if triplet:
                ri.append(int(e.group(1)))
                ci.append(int(e.group(2)))
                vals.append(float(e.group(3)))
            else:
                if col is None:
                    raise FormatError("%s: %s: entry before any column" % (tok.where(), what))
                ri.append(int(e.group(1)))
                ci.append(col)
                vals.append(float(e.group(2)))
        else:
            break
        tok.next_line()
    if len(vals) != nnz:
        raise FormatError("%s: %s: %d entries read, the CSparse header says %d"
                          % (tok.where(), what, len(vals), nnz))
    ri, ci = np.array(ri, dtype=np.int64), np.array(ci, dtype=np.int64)
    if len(vals) and (ri.max() >= rows or ci.max() >= cols):
        raise FormatError("%s: %s: an index is out of range" % (tok.where(), what))
    return sp.coo_matrix((np.array(vals), (ri, ci)), shape=(rows, cols)).tocsc()


def _sparse_block(tok, rows, cols, what):
    """A sparse-block (SBM) payload as a CSC matrix with every entry of every
    stored block (zeros included)."""
    nb = tok.int(what + " nbblocks")
    if nb == 0:
        return sp.csc_matrix((rows, cols))
    bn0, bn1 = tok.int(what + " blocknumber0"), tok.int(what + " blocknumber1")
    off0 = [tok.int(what + " blocksize0") for _ in range(bn0)]
    off1 = [tok.int(what + " blocksize1") for _ in range(bn1)]
    if off0[-1] != rows or off1[-1] != cols:
        raise FormatError("%s: %s: block offsets end at %dx%d, the matrix is %dx%d"
                          % (tok.where(), what, off0[-1], off1[-1], rows, cols))
    filled1, filled2 = tok.int(what + " filled1"), tok.int(what + " filled2")
    if filled1 != bn0 + 1 or filled2 != nb:
        raise FormatError("%s: %s: filled1 = %d, filled2 = %d for %d block rows and %d blocks"
                          % (tok.where(), what, filled1, filled2, bn0, nb))
    ptr = [tok.int(what + " index1_data") for _ in range(filled1)]
    colidx = [tok.int(what + " index2_data") for _ in range(filled2)]
    start0, start1 = [0] + off0[:-1], [0] + off1[:-1]
    ri, ci, vals = [], [], []
    for brow in range(bn0):
        for b in range(ptr[brow], ptr[brow + 1]):
            if tok.int(what + " block number") != b:
                raise FormatError("%s: %s: block %d out of order" % (tok.where(), what, b))
            bcol = colidx[b]
            if not 0 <= bcol < bn1:
                raise FormatError("%s: %s: block column %d out of range" % (tok.where(), what, bcol))
            nr, nc = off0[brow] - start0[brow], off1[bcol] - start1[bcol]
            v = tok.floats(nr * nc, what + " block %d" % b)
            # Column-major values of an nr x nc block.
            jj, ii = np.divmod(np.arange(nr * nc), nr)
            ri.append(start0[brow] + ii)
            ci.append(start1[bcol] + jj)
            vals.append(v)
    ri, ci, vals = np.concatenate(ri), np.concatenate(ci), np.concatenate(vals)
    return sp.coo_matrix((vals, (ri, ci)), shape=(rows, cols)).tocsc()


def _matrix(tok, what):
    """One NumericsMatrix text block: (matrix, storage name)."""
    storage = tok.int(what + " storage type")
    rows, cols = tok.int(what + " size0"), tok.int(what + " size1")
    if storage == 0:
        r2, c2 = tok.int(what + " rows"), tok.int(what + " columns")
        if (r2, c2) != (rows, cols):
            raise FormatError("%s: %s: dense size %dx%d, header says %dx%d"
                              % (tok.where(), what, r2, c2, rows, cols))
        v = tok.floats(rows * cols, what)
        return v.reshape((cols, rows)).T.copy(), "dense"  # column-major
    if storage == 1:
        return _sparse_block(tok, rows, cols, what), "sparse-block"
    if storage == 2:
        return _csparse(tok, rows, cols, what), "csparse"
    raise FormatError("%s: %s: unknown storage type %d" % (tok.where(), what, storage))


def read_dat(path, family):
    """A Siconos text problem file: family fc2d/fc3d (local) or gfc3d (global)."""
    tok = _Tokens(path)
    d, nc = tok.int("dimension"), tok.int("number of contacts")
    if d not in (2, 3) or nc < 0:
        raise FormatError("%s: dimension %d, %d contacts" % (tok.where(), d, nc))
    m = d * nc
    if family == "gfc3d":
        M, ms = _matrix(tok, "M")
        H, hs = _matrix(tok, "H")
        n = M.shape[0]
        if M.shape != (n, n) or H.shape != (n, m):
            raise FormatError("%s: M is %dx%d and H %dx%d for %d contacts"
                              % (path, M.shape[0], M.shape[1], H.shape[0], H.shape[1], nc))
        q, b, mu = tok.floats(n, "q"), tok.floats(m, "b"), tok.floats(nc, "mu")
        return {"kind": "global", "d": d, "M": M, "H": H, "q": q, "b": b, "mu": mu,
                "M_storage": ms, "H_storage": hs}
    W, ws = _matrix(tok, "W")
    if W.shape != (m, m):
        raise FormatError("%s: W is %dx%d for %d contacts of dimension %d"
                          % (path, W.shape[0], W.shape[1], nc, d))
    q, mu = tok.floats(m, "q"), tok.floats(nc, "mu")
    return {"kind": "local", "d": d, "W": W, "q": q, "mu": mu, "W_storage": ws}


def _fclib_matrix(f, group):
    """An FCLIB matrix: nz >= 0 triplets (i = row, p = column), nz = -1 CSC,
    nz = -2 CSR (FORMATS.md 2.3)."""
    g = f[group]
    m, n, nz = int(g["m"][0]), int(g["n"][0]), int(g["nz"][0])
    p = np.asarray(g["p"][()], dtype=np.int64)
    i = np.asarray(g["i"][()], dtype=np.int64)
    x = np.asarray(g["x"][()], dtype=np.float64)
    if nz >= 0:
        rows, cols, vals = i[:nz], p[:nz], x[:nz]
    elif nz in (-1, -2):
        outer = n if nz == -1 else m
        if len(p) < outer + 1 or p[outer] > min(len(i), len(x)) or np.any(np.diff(p[:outer + 1]) < 0):
            raise FormatError("%s: %s/p is not a pointer array" % (f.filename, group))
        counts = np.diff(p[:outer + 1])
        major = np.repeat(np.arange(outer), counts)
        minor, vals = i[:p[outer]], x[:p[outer]]
        rows, cols = (minor, major) if nz == -1 else (major, minor)
    else:
        raise FormatError("%s: %s/nz = %d" % (f.filename, group, nz))
    if len(vals) and (rows.min() < 0 or cols.min() < 0 or rows.max() >= m or cols.max() >= n):
        raise FormatError("%s: %s: an index is out of range" % (f.filename, group))
    return sp.coo_matrix((vals, (rows, cols)), shape=(m, n)).tocsc()


# Above this many rows, the global M and H of an FCLIB file are handed to
# Siconos in CSparse storage, below it dense (as the Rust reader does).
FCLIB_DENSE_ROWS = 2000


def read_fclib(path):
    """An FCLIB HDF5 file: its local problem if any, else its global one."""
    import h5py
    with h5py.File(path, "r") as f:
        if "fclib_local" in f:
            for extra in ("V", "R"):
                if "fclib_local/" + extra in f:
                    raise Unsupported("/fclib_local/%s: equality constraints" % extra)
            d = int(f["fclib_local/spacedim"][0])
            q = np.asarray(f["fclib_local/vectors/q"][()], dtype=np.float64)
            mu = np.asarray(f["fclib_local/vectors/mu"][()], dtype=np.float64)
            W = _fclib_matrix(f, "fclib_local/W")
            if d not in (2, 3) or W.shape != (d * len(mu),) * 2 or len(q) != d * len(mu):
                raise FormatError("%s: W %s, q %d, %d contacts of dimension %d"
                                  % (path, W.shape, len(q), len(mu), d))
            return {"kind": "local", "d": d, "W": W, "q": q, "mu": mu,
                    "W_storage": "sparse-block"}
        if "fclib_global" in f:
            if "fclib_global/G" in f:
                raise Unsupported("/fclib_global/G: bilateral constraints")
            d = int(f["fclib_global/spacedim"][0])
            M = _fclib_matrix(f, "fclib_global/M")
            H = _fclib_matrix(f, "fclib_global/H")
            q = np.asarray(f["fclib_global/vectors/f"][()], dtype=np.float64)
            b = np.asarray(f["fclib_global/vectors/w"][()], dtype=np.float64)
            mu = np.asarray(f["fclib_global/vectors/mu"][()], dtype=np.float64)
            n, m = M.shape[0], d * len(mu)
            if d != 3 or M.shape != (n, n) or H.shape != (n, m) or len(q) != n or len(b) != m:
                raise FormatError("%s: M %s, H %s, f %d, w %d, %d contacts of dimension %d"
                                  % (path, M.shape, H.shape, len(q), len(b), len(mu), d))
            storage = "dense" if n <= FCLIB_DENSE_ROWS else "csparse"
            if storage == "dense":
                M, H = M.toarray(), H.toarray()
            return {"kind": "global", "d": d, "M": M, "H": H, "q": q, "b": b, "mu": mu,
                    "M_storage": storage, "H_storage": storage}
        if "fclib_global_rolling" in f:
            raise Unsupported("rolling friction (/fclib_global_rolling)")
        raise FormatError("%s: neither /fclib_local nor /fclib_global" % path)


def read_problem(path, family=None):
    """Any shared problem file; family is that of the folder for `.dat`."""
    if path.endswith(".hdf5"):
        return read_fclib(path)
    return read_dat(path, family)


def save_npz(path, prob):
    """Stores a problem for the solver subprocesses."""
    out = {}
    for k, v in prob.items():
        if sp.issparse(v):
            c = v.tocsc()
            out[k + "__csc_data"], out[k + "__csc_indices"] = c.data, c.indices
            out[k + "__csc_indptr"], out[k + "__csc_shape"] = c.indptr, np.array(c.shape)
        else:
            out[k] = np.asarray(v)
    np.savez(path, **out)


def load_npz(path):
    z = np.load(path, allow_pickle=False)
    prob = {}
    for k in z.files:
        if k.endswith("__csc_data"):
            base = k[:-len("__csc_data")]
            prob[base] = sp.csc_matrix((z[k], z[base + "__csc_indices"], z[base + "__csc_indptr"]),
                                       shape=tuple(z[base + "__csc_shape"]))
        elif "__csc_" not in k:
            v = z[k]
            prob[k] = v.item() if v.ndim == 0 else v
    for k in ("d",):
        prob[k] = int(prob[k])
    for k in ("kind", "W_storage", "M_storage", "H_storage"):
        if k in prob:
            prob[k] = str(prob[k])
    return prob
