#!/usr/bin/python3
"""Siconos 4.4 oracle for the frictional contact problems (fc2d, fc3d, gfc3d).

Runs a selection of Siconos 4.4 solvers (Debian python3-siconos, module
siconos.numerics, system interpreter) on every frictional contact problem of
<data>/{fc2d,fc3d,gfc3d}/*.dat and <data>/fclib/*.hdf5, and writes one JSON
document with, for each (problem, solver): Siconos' info code, the error the
solver reports (dparam[SICONOS_DPARAM_RESIDU]), the iteration count
(iparam[SICONOS_IPARAM_ITER_DONE]), the solve wall time (best of repeated
solves) and, for the runs with info 0, the returned r.  The Rust
side (tests/friction_siconos.rs, benches/friction.rs) recomputes every error
measure from the stored r with its own code.

No code of this project is involved: the files are read by
friction_files.py (this folder; its own parser of the Siconos text layout,
h5py for FCLIB), and each problem is handed to Siconos as NumPy/SciPy
arrays (siconos.numerics.FrictionContactProblem(d, W, q, mu), and a
GlobalFrictionContactProblem whose M, H, q, b, mu are set from arrays).
Storage given to Siconos: W dense when the file stores it dense, else
sparse-block (SBM_from_csparse with d x d blocks; Siconos 4.4's fc2d driver
refuses CSparse storage); global M and H dense when the file stores them
dense (FCLIB: up to 2000 rows), else CSparse (the Python API builds
sparse-block matrices with square blocks only, and H's blocks are not).

Usage (from the repository root, system interpreter, needs python3-h5py
and python3-scipy):

    /usr/bin/python3 tests/oracle/siconos_friction.py [--out FILE] [--timeout S]
        [--repeat-seconds S] [--only REGEX]

Every solve runs in its own subprocess with a timeout (some solvers hang or
abort).  Written from scratch against the public Python API of Siconos; no
Siconos source code.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

TOL = 1e-8
MAX_ITER = 10000
SOLVERS = {
    "fc2d": ["NSGS", "LEMKE", "CPG"],
    "fc3d": ["NSGS", "NSN_AC", "PROX", "EG", "ADMM"],
    "gfc3d": ["NSGS_WR", "NSN_AC_WR", "PROX_WR", "ADMM"],
}
PREFIX = {"fc2d": "SICONOS_FRICTION_2D_", "fc3d": "SICONOS_FRICTION_3D_",
          "gfc3d": "SICONOS_GLOBAL_FRICTION_3D_"}


def handed_storage(prob):
    """The storage each matrix is handed to Siconos in (see the docstring)."""
    if prob["kind"] == "local":
        return {"W": "dense" if prob["W_storage"] == "dense" else "sparse-block"}
    return {m: "dense" if prob[m + "_storage"] == "dense" else "csparse" for m in ("M", "H")}


def siconos_problem(prob, keep):
    """The Siconos problem built from the arrays of friction_files.

    keep collects the objects the problem points into (a sparse-block
    matrix is freed with its Python proxy)."""
    import warnings
    import numpy as np
    import scipy.sparse as sp
    import siconos.numerics as sn
    warnings.simplefilter("ignore")  # "performance warning" of the sparse conversions

    def csparse(a):
        c = sp.coo_matrix(a)
        return sn.NumericsMatrix(sp.coo_matrix((c.data, (c.row.astype(np.int64),
                                                          c.col.astype(np.int64))), shape=c.shape))

    d, mu, q = prob["d"], np.ascontiguousarray(prob["mu"]), np.ascontiguousarray(prob["q"])
    storage = handed_storage(prob)
    if prob["kind"] == "local":
        if storage["W"] == "dense":
            w = sn.NumericsMatrix(np.asarray(prob["W"], dtype=np.float64))
        else:
            info, sbm = sn.SBM_from_csparse(d, sp.csc_matrix(prob["W"]))
            if info != 0:
                raise RuntimeError("SBM_from_csparse returned %d" % info)
            keep.append(sbm)
            w = sn.NM_new_SBM(prob["W"].shape[0], prob["W"].shape[1], sbm)
        keep.append(w)
        return sn.FrictionContactProblem(d, w, q, mu)
    p = sn.GlobalFrictionContactProblem()
    p.dimension, p.numberOfContacts = d, len(mu)
    for name in ("M", "H"):
        a = prob[name]
        m = (sn.NumericsMatrix(np.asarray(a, dtype=np.float64))
             if storage[name] == "dense" else csparse(a))
        keep.append(m)
        setattr(p, name, m)
    p.q, p.b, p.mu = q, np.ascontiguousarray(prob["b"]), mu
    return p


def worker(path, family, solver, repeat_seconds):
    import numpy as np
    import siconos.numerics as sn
    import friction_files
    prob = friction_files.load_npz(path)
    sid = getattr(sn, PREFIX[family] + solver)

    def options():
        o = sn.SolverOptions(sid)
        o.dparam[sn.SICONOS_DPARAM_TOL] = TOL
        if 0 < o.iparam[sn.SICONOS_IPARAM_MAX_ITER] < MAX_ITER:
            o.iparam[sn.SICONOS_IPARAM_MAX_ITER] = MAX_ITER
        return o

    times = []
    total = 0.0
    keep = []
    while True:
        p = siconos_problem(prob, keep)
        m = prob["d"] * len(prob["mu"])
        r, u = np.zeros(m), np.zeros(m)
        v = np.zeros(len(prob["q"])) if family == "gfc3d" else None
        o = options()
        t0 = time.perf_counter()
        if family == "gfc3d":
            info = sn.gfc3d_driver(p, r, u, v, o)
        elif family == "fc2d":
            info = sn.fc2d_driver(p, r, u, o)
        else:
            info = sn.fc3d_driver(p, r, u, o)
        dt = time.perf_counter() - t0
        times.append(dt)
        total += dt
        if total >= repeat_seconds or len(times) >= 50 or dt > 1.0:
            if len(times) >= 3 or dt > 0.05:
                break
    out = {"info": int(info), "error_reported": float(o.dparam[sn.SICONOS_DPARAM_RESIDU]),
           "iterations": int(o.iparam[sn.SICONOS_IPARAM_ITER_DONE]),
           "time_s": min(times), "solves_timed": len(times),
           "r": [float(x) for x in r]}
    print(json.dumps(out))


def problems(data, tmp, only=None):
    """(name, family, storage, path of the stored arrays) or, for a file the
    oracle does not run, (name, "skipped", reason, None)."""
    import friction_files
    files = [(f, fam) for fam in ("fc2d", "fc3d", "gfc3d")
             for f in sorted(glob.glob(os.path.join(data, fam, "*.dat")))]
    files += [(f, None) for f in sorted(glob.glob(os.path.join(data, "fclib", "*.hdf5")))]
    for k, (f, fam) in enumerate(files):
        name = os.path.basename(f)
        if only and not re.search(only, name):
            continue
        try:
            prob = friction_files.read_problem(f, fam)
        except friction_files.Unsupported as e:
            yield name, "skipped", "%s: %s" % (name, e), None
            continue
        if fam is None:
            fam = "gfc3d" if prob["kind"] == "global" else "fc%dd" % prob["d"]
        storage = handed_storage(prob)
        dest = os.path.join(tmp, "%d.npz" % k)
        friction_files.save_npz(dest, prob)
        yield name, fam, storage, dest


def siconos_version():
    """The Debian package version (the module's own strings are wrong:
    siconos.__version__ is 0 and siconos.version says 4.5.0)."""
    import siconos
    try:
        pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-siconos"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pkg = None
    return {"debian_package": "python3-siconos %s" % pkg if pkg else None,
            "module_version": getattr(siconos, "version", None),
            "module___version__": getattr(siconos, "__version__", None)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=4)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--data", default=os.path.join(repo, "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(repo, "tests", "oracle", "siconos_friction.json"))
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--repeat-seconds", type=float, default=0.2)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], a.worker[1], a.worker[2], float(a.worker[3]))
        return
    t_start = time.time()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fam, storage, path in problems(os.path.abspath(a.data), tmp, a.only):
            if fam == "skipped":
                results.append({"problem": name, "skipped": storage})
                print("%-45s skipped: %s" % (name, storage), flush=True)
                continue
            for solver in SOLVERS[fam]:
                rec = {"problem": name, "family": fam, "solver": solver, "storage": storage}
                try:
                    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                                          path, fam, solver, str(a.repeat_seconds)],
                                         capture_output=True, text=True, timeout=a.timeout)
                    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
                    if res.returncode == 0 and lines:
                        rec.update(json.loads(lines[-1]))
                        # Keep r of the successful runs only; u and v follow from r.
                        if rec["info"] != 0:
                            rec.pop("r", None)
                    else:
                        rec["failure"] = "exit %d: %s" % (res.returncode, res.stderr[-300:])
                except subprocess.TimeoutExpired:
                    rec["failure"] = "timeout after %g s" % a.timeout
                print("%-45s %-6s %-10s %s" % (name, fam, solver,
                      rec.get("failure") or "info %d err %.2e it %d %.2e s" % (
                          rec["info"], rec["error_reported"], rec["iterations"], rec["time_s"])),
                      flush=True)
                results.append(rec)
    version = siconos_version()
    doc = {"generator": "tests/oracle/siconos_friction.py",
           "command": " ".join(["/usr/bin/python3", "tests/oracle/siconos_friction.py"]
                               + sys.argv[1:]),
           "siconos_version": version["debian_package"],
           "siconos_module_version": {k: v for k, v in version.items() if k != "debian_package"},
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "machine": platform.processor() or platform.machine(),
           "tolerance": TOL, "max_iter_rule": "iparam[MAX_ITER] = max(default, %d)" % MAX_ITER,
           "timeout_s": a.timeout, "run_time_s": round(time.time() - t_start, 1),
           "timing": "perf_counter around the driver call only; best of repeated solves "
                     "(>= 3 solves or >= repeat_seconds, one solve when it takes > 1 s)",
           "storage": "the storage of W (local) or M and H (global) handed to Siconos: dense, "
                      "sparse-block (d x d blocks) or csparse",
           "vectors": "r of the runs with info 0 only (u = W r + q and v = M^-1 (H r + q) "
                      "are recomputed by the reader of this file)",
           "results": results}
    with open(a.out, "w") as fh:
        json.dump(doc, fh, indent=0)
        fh.write("\n")


if __name__ == "__main__":
    main()
