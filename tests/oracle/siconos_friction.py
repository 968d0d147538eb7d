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

Siconos 4.4's Python build has no FCLIB reader and its drivers refuse a
CSparse W (storage 2), so those files are first rewritten in the Siconos
text layout (W block-sparse) by

    cargo run --release --example friction_to_siconos_dat -- DIR FILES...

which this script calls itself.  A global FCLIB file is solved with the
gfc3d solvers.

Usage (from the repository root, system interpreter):

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


def worker(path, family, solver, repeat_seconds):
    import numpy as np
    import siconos.numerics as sn
    sid = getattr(sn, PREFIX[family] + solver)

    def load():
        if family == "gfc3d":
            return sn.globalFrictionContact_new_from_filename(path)
        return sn.frictionContact_new_from_filename(path)

    def options():
        o = sn.SolverOptions(sid)
        o.dparam[sn.SICONOS_DPARAM_TOL] = TOL
        if 0 < o.iparam[sn.SICONOS_IPARAM_MAX_ITER] < MAX_ITER:
            o.iparam[sn.SICONOS_IPARAM_MAX_ITER] = MAX_ITER
        return o

    times = []
    total = 0.0
    while True:
        p = load()
        if family == "gfc3d":
            n = len(p.q)
            m = p.dimension * p.numberOfContacts
            r, u, v = np.zeros(m), np.zeros(m), np.zeros(n)
        else:
            m = p.dimension * p.numberOfContacts
            r, u, v = np.zeros(m), np.zeros(m), None
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
           "r": [float(x) for x in r], "u": [float(x) for x in u]}
    if v is not None:
        out["v"] = [float(x) for x in v]
    print(json.dumps(out))


def problems(data, repo, tmp):
    """(name, family, path to a file Siconos 4.4 reads)."""
    out = []
    convert = []
    for fam in ("fc2d", "fc3d", "gfc3d"):
        for f in sorted(glob.glob(os.path.join(data, fam, "*.dat"))):
            with open(f, "rb") as fh:
                head = fh.read(200).split()
            if len(head) > 2 and head[2] == b"2":
                convert.append((f, fam))
            else:
                out.append((os.path.basename(f), fam, f))
    for f in sorted(glob.glob(os.path.join(data, "fclib", "*.hdf5"))):
        convert.append((f, None))
    if convert:
        cmd = ["cargo", "run", "--release", "--quiet", "--example", "friction_to_siconos_dat",
               "--", tmp] + [c[0] for c in convert]
        res = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=True)
        fams = {c[0]: c[1] for c in convert}
        for line in res.stdout.splitlines():
            parts = line.split()
            if parts[0] == "skip":
                out.append((os.path.basename(parts[1].rstrip(":")), "skipped",
                            " ".join(parts[2:])))
                continue
            src, dst, kind = parts
            fam = fams.get(src) or ("gfc3d" if kind == "global" else "fc3d")
            out.append((os.path.basename(src), fam, dst))
    return out


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
    import siconos
    t_start = time.time()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fam, path in problems(os.path.abspath(a.data), repo, tmp):
            if a.only and not re.search(a.only, name):
                continue
            if fam == "skipped":
                results.append({"problem": name, "skipped": path})
                continue
            for solver in SOLVERS[fam]:
                rec = {"problem": name, "family": fam, "solver": solver}
                try:
                    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                                          path, fam, solver, str(a.repeat_seconds)],
                                         capture_output=True, text=True, timeout=a.timeout)
                    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
                    if res.returncode == 0 and lines:
                        rec.update(json.loads(lines[-1]))
                        # Keep r of the successful runs only; u and v follow from r.
                        rec.pop("u", None)
                        rec.pop("v", None)
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
    doc = {"generator": "tests/oracle/siconos_friction.py",
           "siconos_version": getattr(siconos, "__version__", "4.4"),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "machine": platform.processor() or platform.machine(),
           "tolerance": TOL, "max_iter_rule": "iparam[MAX_ITER] = max(default, %d)" % MAX_ITER,
           "timeout_s": a.timeout, "run_time_s": round(time.time() - t_start, 1),
           "timing": "perf_counter around the driver call only; best of repeated solves "
                     "(>= 3 solves or >= repeat_seconds, one solve when it takes > 1 s)",
           "vectors": "r of the runs with info 0 only (u = W r + q and v = M^-1 (H r + f) "
                      "are recomputed by the reader of this file)",
           "results": results}
    with open(a.out, "w") as fh:
        json.dump(doc, fh, indent=0)
        fh.write("\n")


if __name__ == "__main__":
    main()
