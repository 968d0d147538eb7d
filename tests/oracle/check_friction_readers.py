#!/usr/bin/python3
"""Checks friction_files.py (the oracle's own reader) against the route the
friction oracle took before it had one, on every shared problem:

* `.dat` files whose W is dense or sparse-block: read by Siconos 4.4 itself
  (frictionContact_new_from_filename / globalFrictionContact_new_from_filename);
* CSparse `.dat` files and FCLIB files: converted by this project's Rust
  reader (`cargo run --release --example friction_to_siconos_dat`), the
  converted file read by Siconos 4.4.

For each problem it prints the largest relative difference of W, q, mu (M,
H, q, b, mu for global problems): max |ours - theirs| / max |theirs| per
array, and fails if one exceeds 1e-15.  With --solve it also runs Siconos'
NSGS (fc2d, fc3d) or NSGS_WR (gfc3d) on both problems of each file Siconos
reads itself, where both have the same storage, and fails unless the two r
are the same to the last bit.  Run once from the repository root:

    /usr/bin/python3 tests/oracle/check_friction_readers.py [--data DIR] [--solve]
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csc  # noqa: F401  (siconos.numerics.NM_csc needs it imported)

import friction_files

TOL = 1e-15


def as_sparse(a, sn):
    """A Siconos matrix proxy (ndarray, NumericsMatrix or sparse-block) as CSC."""
    if isinstance(a, np.ndarray) or sp.issparse(a):
        return sp.csc_matrix(a)
    if isinstance(a, sn.NumericsMatrix) and a.storageType == sn.NM_DENSE:
        # Entry by entry: NM_csc drops entries below machine epsilon.
        return sp.csc_matrix(np.array([[a.get_matrix0(i, j) for j in range(a.size1)]
                                       for i in range(a.size0)]))
    if isinstance(a, sn.NumericsMatrix):
        return sp.csc_matrix(sn.NM_csc(a))
    info, m = sn.SBM_to_sparse(a)
    assert info == 0
    return sp.csc_matrix(m)


def rel(ours, theirs):
    if sp.issparse(ours) or sp.issparse(theirs):
        ours, theirs = sp.csc_matrix(ours), sp.csc_matrix(theirs)
        if ours.shape != theirs.shape:
            return float("inf")
        diff = abs(ours - theirs).max()
        scale = abs(theirs).max()
    else:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        if ours.shape != theirs.shape:
            return float("inf")
        diff = np.max(np.abs(ours - theirs), initial=0.0)
        scale = np.max(np.abs(theirs), initial=0.0)
    return float(diff / scale) if scale > 0 else float(diff)


def siconos_arrays(path, kind, sn):
    if kind == "global":
        g = sn.globalFrictionContact_new_from_filename(path)
        return {"M": as_sparse(g.M, sn), "H": as_sparse(g.H, sn), "q": np.array(g.q),
                "b": np.array(g.b), "mu": np.array(g.mu)}
    p = sn.frictionContact_new_from_filename(path)
    return {"W": as_sparse(p.M, sn), "q": np.array(p.q), "mu": np.array(p.mu)}


def same_solve(path, family, prob, sn):
    """(bits equal, iterations) of NSGS on Siconos' reading and on ours."""
    import siconos_friction as sf
    solver = "NSGS_WR" if family == "gfc3d" else "NSGS"
    runs = []
    for how in ("file", "arrays"):
        keep = []
        if how == "arrays":
            p = sf.siconos_problem(prob, keep)
        elif family == "gfc3d":
            p = sn.globalFrictionContact_new_from_filename(path)
        else:
            p = sn.frictionContact_new_from_filename(path)
        m = prob["d"] * len(prob["mu"])
        r, u = np.zeros(m), np.zeros(m)
        o = sn.SolverOptions(getattr(sn, sf.PREFIX[family] + solver))
        o.dparam[sn.SICONOS_DPARAM_TOL] = sf.TOL
        if 0 < o.iparam[sn.SICONOS_IPARAM_MAX_ITER] < sf.MAX_ITER:
            o.iparam[sn.SICONOS_IPARAM_MAX_ITER] = sf.MAX_ITER
        if family == "gfc3d":
            sn.gfc3d_driver(p, r, u, np.zeros(len(prob["q"])), o)
        elif family == "fc2d":
            sn.fc2d_driver(p, r, u, o)
        else:
            sn.fc3d_driver(p, r, u, o)
        runs.append((r.copy(), int(o.iparam[sn.SICONOS_IPARAM_ITER_DONE])))
    return bool(np.array_equal(runs[0][0], runs[1][0])), runs[0][1], runs[1][1]


def main():
    warnings.simplefilter("ignore")
    import siconos.numerics as sn
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(repo, "..", "shared", "data"))
    ap.add_argument("--solve", action="store_true")
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    files = [(f, fam) for fam in ("fc2d", "fc3d", "gfc3d")
             for f in sorted(glob.glob(os.path.join(data, fam, "*.dat")))]
    files += [(f, None) for f in sorted(glob.glob(os.path.join(data, "fclib", "*.hdf5")))]
    worst, failed, compared = 0.0, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        ours, convert = {}, []
        for f, fam in files:
            try:
                ours[f] = friction_files.read_problem(f, fam)
            except friction_files.Unsupported as e:
                print("%-45s ours: unsupported (%s)" % (os.path.basename(f), e))
                continue
            if f.endswith(".hdf5") or ours[f].get("W_storage") == "csparse":
                # The old route for these: the Rust converter.
                convert.append(f)
        res = subprocess.run(["cargo", "run", "--release", "--quiet", "--example",
                              "friction_to_siconos_dat", "--", tmp] + convert,
                             cwd=repo, capture_output=True, text=True, check=True)
        converted = {}
        for line in res.stdout.splitlines():
            parts = line.split()
            if parts[0] == "skip":
                converted[parts[1].rstrip(":")] = None
                print("%-45s old route: %s" % (os.path.basename(parts[1].rstrip(":")),
                                                " ".join(parts[2:])))
            else:
                converted[parts[0]] = parts[1]
        for f, fam in files:
            if f not in ours:
                continue
            prob = ours[f]
            if f in convert:
                src = converted.get(f)
                if src is None:
                    continue
                route = "Rust converter + Siconos reader"
            else:
                src, route = f, "Siconos reader"
            theirs = siconos_arrays(src, prob["kind"], sn)
            diffs = {k: rel(prob[k], v) for k, v in theirs.items()}
            compared += 1
            m = max(diffs.values())
            worst = max(worst, m)
            if m > TOL:
                failed.append(os.path.basename(f))
            solve = ""
            storages = {v for k, v in prob.items() if k.endswith("_storage")}
            # Same storage on both sides: local files Siconos reads itself
            # (dense or sparse-block W), global ones only when dense.
            if a.solve and f not in convert and (prob["kind"] == "local" or storages == {"dense"}):
                same, it_file, it_ours = same_solve(f, fam, prob, sn)
                solve = "; NSGS r %s (%d, %d iterations)" % (
                    "identical" if same else "DIFFERS", it_file, it_ours)
                if not same:
                    failed.append(os.path.basename(f) + " (solve)")
            print("%-45s %-6s %-32s %s%s" % (os.path.basename(f), prob["kind"], route,
                                             " ".join("%s %.1e" % kv for kv in diffs.items()),
                                             solve))
    print("largest relative difference: %.2e over %d problems" % (worst, compared))
    if failed:
        print("above %g: %s" % (TOL, ", ".join(failed)))
        sys.exit(1)


if __name__ == "__main__":
    main()
