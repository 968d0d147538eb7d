#!/usr/bin/python3
"""Siconos 4.4 oracle for the numerics layer (LCP, MLCP, Relay).

Runs every Siconos 4.4 solver of each family that exists in the installed
build (Debian package python3-siconos) on every problem file of
<data>/{lcp,mlcp,relay}/*.dat and writes one JSON document with, for each
(problem, solver): Siconos' info code, the error the solver reports
(dparam[SICONOS_DPARAM_RESIDU]), the error recomputed with the family's
*_compute_error function, the iteration count (iparam[SICONOS_IPARAM_ITER_DONE]),
solve wall times and the solution vectors.

Usage (from the repository root, with the *system* interpreter):

    /usr/bin/python3 tests/oracle/siconos_numerics.py [--out FILE]
        [--repeat-seconds S] [--timeout S] [--data DIR] [--jobs N]

Every (problem, solver) run happens in its own subprocess (this same script
in --worker mode) with a timeout, because some Siconos solvers hang, call
exit() or segfault.  Only the solver call is timed.

This script is written from scratch against the public Python/C API of
Siconos; it contains no Siconos source code.
"""

import argparse
import concurrent.futures
import ctypes
import datetime
import json
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOL = 1e-8
MIN_MAX_ITER = 10000
FAMILIES = ("lcp", "mlcp", "relay")
SICONOS_CONFIG_H = "/usr/include/siconos/SiconosConfig.h"
UNAVAILABLE_RE = re.compile(r"not available|not enabled|re-?compile|need to compile|"
                            r"not configured|not built", re.I)

# Solvers that depend on optional third-party software.  They are probed once
# (on the smallest problem of their family); if the build lacks the software
# and the probe does not produce a solution they are reported as unavailable
# instead of being run on every problem.
OPTIONAL_DEPS = {
    "HAVE_PATHFERRIS": ("PATH (Ferris)", ["LCP_PATH", "MLCP_PATH", "MLCP_PATH_ENUM",
                                          "MLCP_DIRECT_PATH", "MLCP_DIRECT_PATH_ENUM",
                                          "RELAY_PATH"]),
    "HAVE_GAMS_C_API": ("GAMS", ["LCP_GAMS"]),
    "HAS_ONE_LP_SOLVER": ("an LP solver (lp_solve)", ["MLCP_SIMPLEX", "MLCP_DIRECT_SIMPLEX",
                                                     "RELAY_AVI_CAOFERRIS_TEST"]),
}


# --------------------------------------------------------------------------
# helpers shared by parent and worker
# --------------------------------------------------------------------------

def finite_or_none(x, notes, what):
    """float -> float, or None (+ a note) when NaN/Inf/missing."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    notes.append("%s=%s" % (what, x))
    return None


def vec_to_list(v, notes, what):
    out = []
    bad = 0
    for x in v:
        x = float(x)
        if math.isfinite(x):
            out.append(x)
        else:
            out.append(None)
            bad += 1
    if bad:
        notes.append("%s has %d non-finite entries (written as null)" % (what, bad))
    return out


def solver_table():
    """{family: [(name, id), ...]} from introspection of siconos.numerics."""
    import siconos.numerics as sn
    table = {}
    for fam in FAMILIES:
        prefix = "SICONOS_%s_" % fam.upper()
        names = []
        for attr in dir(sn):
            if not attr.startswith(prefix) or attr.endswith("_STR"):
                continue
            # a solver id is an int constant that has a companion *_STR name
            if not hasattr(sn, attr + "_STR"):
                continue
            val = getattr(sn, attr)
            if isinstance(val, int):
                names.append((attr[len("SICONOS_"):], val))
        table[fam] = sorted(names, key=lambda t: t[1])
    return table


# --------------------------------------------------------------------------
# worker side: load a problem, solve, compute errors
# --------------------------------------------------------------------------

class _RelayProblem(ctypes.Structure):
    # public layout of struct RelayProblem (siconos/numerics/RelayProblem.h)
    _fields_ = [("size", ctypes.c_int),
                ("M", ctypes.c_void_p),
                ("q", ctypes.POINTER(ctypes.c_double)),
                ("lb", ctypes.POINTER(ctypes.c_double)),
                ("ub", ctypes.POINTER(ctypes.c_double))]


_DP = ctypes.POINTER(ctypes.c_double)


def _numerics_lib():
    # The swig module links libsiconos_numerics; this CDLL gets the same copy.
    lib = ctypes.CDLL("libsiconos_numerics.so.7")
    lib.relay_new_from_filename.restype = ctypes.c_void_p
    lib.relay_new_from_filename.argtypes = [ctypes.c_char_p]
    lib.relay_driver.restype = ctypes.c_int
    lib.relay_driver.argtypes = [ctypes.c_void_p, _DP, _DP, ctypes.c_void_p]
    lib.relay_compute_error.restype = ctypes.c_int
    lib.relay_compute_error.argtypes = [ctypes.c_void_p, _DP, _DP, ctypes.c_double, _DP]
    return lib


class Problem:
    """A loaded Siconos problem of one family, with a uniform interface."""

    def __init__(self, family, path):
        import numpy as np
        import siconos.numerics as sn
        self.family = family
        self.np = np
        self.sn = sn
        self.n_eq = None
        self.m_comp = None
        self.m_shape = None
        self.wdim = None
        if family == "lcp":
            # The swig LCP constructor needs (M, q); the reader then replaces them.
            p = sn.LCP(np.eye(1), np.zeros(1))
            sn.linearComplementarity_newFromFilename(p, path)
            self.p = p
            self.n = int(p.size)
            self.dim = self.n
            self.storage = "dense" if isinstance(p.M, np.ndarray) else type(p.M).__name__
            q = np.asarray(p.q, dtype=float).ravel()
        elif family == "mlcp":
            p = sn.MLCP()
            rc = sn.mixedLinearComplementarity_newFromFilename(p, path)
            if rc not in (0, None):
                raise RuntimeError("mixedLinearComplementarity_newFromFilename returned %r" % rc)
            self.p = p
            self.n_eq = int(p.n)
            self.m_comp = int(p.m)
            self.n = self.n_eq + self.m_comp
            self.dim = self.n
            self.storage = "dense" if isinstance(p.M, np.ndarray) else type(p.M).__name__
            if isinstance(p.M, np.ndarray):
                self.m_shape = list(p.M.shape)
                # Rectangular_mlcp.dat has a 3x2 M: give w room for every row
                self.wdim = max(self.dim, p.M.shape[0])
            q = np.asarray(p.q, dtype=float).ravel() if p.q is not None else None
        elif family == "relay":
            self.lib = _numerics_lib()
            ptr = self.lib.relay_new_from_filename(path.encode())
            if not ptr:
                raise RuntimeError("relay_new_from_filename returned NULL")
            self.ptr = ptr
            rp = _RelayProblem.from_address(ptr)
            self.n = int(rp.size)
            self.dim = self.n
            # first member of struct NumericsMatrix is the storage type (0 = dense)
            st = ctypes.c_int.from_address(rp.M).value
            self.storage = {0: "dense", 1: "SparseBlockStructuredMatrix", 2: "sparse"}.get(st, str(st))
            q = np.array([rp.q[i] for i in range(self.n)])
        else:
            raise ValueError(family)
        if self.wdim is None:
            self.wdim = self.dim
        if self.n <= 0:
            raise RuntimeError("problem size %d" % self.n)
        if q is not None and q.shape[0] != self.dim:
            raise RuntimeError("q has %d entries, expected %d" % (q.shape[0], self.dim))

    def options(self, solver_id):
        o = self.sn.SolverOptions(solver_id)
        # Never free SolverOptions from Python: for MLCP_DIRECT_PATH_ENUM the
        # destructor aborts ("free(): invalid pointer") after mlcp_driver_reset.
        # The leak is small and the worker is short-lived.
        o.thisown = False
        # tolerance 1e-8 unless Siconos' default is already stricter
        # (pivoting/direct solvers default to 1e-12 .. 2.2e-14 there)
        if o.dparam[0] > TOL or o.dparam[0] == 0.0:
            o.dparam[0] = TOL
        # generous iteration limit; 0 means "not an iteration limit" for
        # ENUM/QP/NSQP, so leave those alone
        if 0 < o.iparam[0] < MIN_MAX_ITER:
            o.iparam[0] = MIN_MAX_ITER
        return o

    def solve(self, z, w, o):
        """Run the family driver; returns (info, seconds of the driver call)."""
        sn = self.sn
        if self.family == "lcp":
            t0 = time.perf_counter()
            info = sn.linearComplementarity_driver(self.p, z, w, o)
            t1 = time.perf_counter()
        elif self.family == "mlcp":
            # init/reset are required by enum/path/simplex/direct solvers and
            # are harmless for the others; they are not timed.
            sn.mlcp_driver_init(self.p, o)
            t0 = time.perf_counter()
            info = sn.mlcp_driver(self.p, z, w, o)
            t1 = time.perf_counter()
            sn.mlcp_driver_reset(self.p, o)
        else:
            zp = z.ctypes.data_as(_DP)
            wp = w.ctypes.data_as(_DP)
            optr = ctypes.c_void_p(int(o.this))
            t0 = time.perf_counter()
            info = self.lib.relay_driver(self.ptr, zp, wp, optr)
            t1 = time.perf_counter()
        return int(info), t1 - t0

    def compute_error(self, z, w):
        """Family compute_error on copies (they overwrite w with Mz+q)."""
        z = z.copy()
        w = w.copy()
        if self.family == "lcp":
            return float(self.sn.lcp_compute_error(self.p, z, w, TOL))
        if self.family == "mlcp":
            return float(self.sn.mlcp_compute_error(self.p, z, w, TOL))
        err = ctypes.c_double(float("nan"))
        self.lib.relay_compute_error(self.ptr, z.ctypes.data_as(_DP), w.ctypes.data_as(_DP),
                                     TOL, ctypes.byref(err))
        return float(err.value)


def worker_info(path, family, out):
    prob = Problem(family, path)
    res = {"n": prob.n, "n_eq": prob.n_eq, "m_comp": prob.m_comp, "storage": prob.storage,
           "m_shape": prob.m_shape}
    try:
        # error of the trivial guess z = 0 (w = q): tells whether z = 0 already solves it
        import numpy as np
        z = np.zeros(prob.dim)
        e0 = prob.compute_error(z, np.zeros(prob.wdim))
        res["error_at_zero"] = e0 if math.isfinite(e0) else None
    except Exception as exc:  # noqa: BLE001 - informative only
        res["error_at_zero"] = None
        res["error_at_zero_failure"] = repr(exc)
    with open(out, "w") as f:
        json.dump(res, f)


def worker_solve(path, family, solver, out, repeat_seconds, budget):
    import numpy as np
    import siconos.numerics as sn
    sid = getattr(sn, "SICONOS_" + solver)
    prob = Problem(family, path)
    n = prob.dim
    notes = []

    o = prob.options(sid)
    z = np.zeros(n)
    w = np.zeros(prob.wdim)
    start = time.perf_counter()
    info, dt = prob.solve(z, w, o)
    times = [dt]
    err_rep = float(o.dparam[1])
    iters = int(o.iparam[1])
    err_rec = prob.compute_error(z, w)
    res = {
        "outcome": "ok",
        "info": info,
        "error_reported": finite_or_none(err_rep, notes, "error_reported"),
        "error_recomputed": finite_or_none(err_rec, notes, "error_recomputed"),
        "iterations": iters,
        "z": vec_to_list(z, notes, "z"),
        "w": vec_to_list(w, notes, "w"),
        "notes": notes,
    }
    err_ok = math.isfinite(err_rec) and err_rec <= TOL
    res["solved"] = bool(info == 0 and err_ok)

    def dump(final):
        r = dict(res)
        r["time_median_s"] = statistics.median(times)
        r["time_min_s"] = min(times)
        r["timed_runs"] = len(times)
        r["timing_complete"] = final
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(r, f)
        os.replace(tmp, out)

    dump(False)

    # repeated solves from z = 0 with fresh options: at least 3 solves and at
    # least `repeat_seconds` of wall time for the whole repeat phase, within the
    # per-run budget
    z0 = z.copy()
    deterministic = True
    while True:
        elapsed = time.perf_counter() - start
        if len(times) >= 3 and elapsed >= repeat_seconds:
            break
        if elapsed + max(times) * 1.5 + 0.05 > budget:
            notes.append("timing stopped after %d solve(s) (per-run time budget)" % len(times))
            break
        o = prob.options(sid)
        z = np.zeros(n)
        w = np.zeros(prob.wdim)
        info_k, dt = prob.solve(z, w, o)
        times.append(dt)
        if deterministic and (info_k != info or not np.array_equal(z, z0, equal_nan=True)):
            deterministic = False
    res["deterministic"] = deterministic
    dump(True)


def worker_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", choices=["info", "solve"], required=True)
    ap.add_argument("--family", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--solver")
    ap.add_argument("--result", required=True)
    ap.add_argument("--repeat-seconds", type=float, default=0.2)
    ap.add_argument("--budget", type=float, default=15.0)
    a = ap.parse_args(argv)
    if a.worker == "info":
        worker_info(a.file, a.family, a.result)
    else:
        worker_solve(a.file, a.family, a.solver, a.result, a.repeat_seconds, a.budget)
    sys.stdout.flush()
    sys.stderr.flush()
    # skip interpreter/Siconos teardown: a crash while freeing is not a result
    os._exit(0)


# --------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------

def tail(text, limit=400):
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def run_worker(args, timeout):
    """Run this script in worker mode; returns (result dict | None, outcome, message)."""
    fd, result = tempfile.mkstemp(prefix="sicoracle_", suffix=".json")
    os.close(fd)
    os.unlink(result)
    cmd = [sys.executable, os.path.abspath(__file__)] + args + ["--result", result]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    try:
        cp = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            timeout=timeout, env=env, stdin=subprocess.DEVNULL)
        rc, output, timed_out = cp.returncode, cp.stdout.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired as e:
        rc, timed_out = None, True
        output = (e.stdout or b"").decode("utf-8", "replace")
    data = None
    if os.path.exists(result):
        try:
            with open(result) as f:
                data = json.load(f)
        except ValueError:
            data = None
        os.unlink(result)
    if os.path.exists(result + ".tmp"):
        os.unlink(result + ".tmp")
    out_tail = tail(output)
    if timed_out:
        if data is not None:
            return data, "ok", "timeout (%.0f s) while repeating solves for timing; %s" % (timeout, out_tail)
        return None, "timeout", "no result within %.0f s; %s" % (timeout, out_tail)
    if rc < 0:
        sig = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        if data is not None:
            return data, "ok", "worker died with %s after the first solve; %s" % (sig, out_tail)
        return None, "crash", "killed by %s; %s" % (sig, out_tail)
    if rc != 0 or data is None:
        if data is not None:
            return data, "ok", "worker exited with %d after the first solve; %s" % (rc, out_tail)
        return None, "error", "exit code %s; %s" % (rc, out_tail)
    return data, "ok", out_tail


def siconos_version():
    try:
        v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-siconos"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
        if v:
            return "%s (Debian python3-siconos %s)" % (v.split("+")[0], v)
    except OSError:
        pass
    return "4.4 (version query failed)"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def config_flags():
    flags = {}
    try:
        with open(SICONOS_CONFIG_H) as f:
            txt = f.read()
    except OSError:
        return None
    for flag in OPTIONAL_DEPS:
        flags[flag] = re.search(r"^\s*#define\s+%s\b" % flag, txt, re.M) is not None
    return flags


def make_result(solver, data, outcome, message):
    r = {"solver": solver, "outcome": outcome, "info": None, "error_reported": None,
         "error_recomputed": None, "iterations": None, "time_median_s": None,
         "time_min_s": None, "solved": False, "z": None, "w": None}
    msgs = []
    if data is not None:
        for k in ("info", "error_reported", "error_recomputed", "iterations", "time_median_s",
                  "time_min_s", "solved", "z", "w", "timed_runs", "deterministic"):
            if k in data:
                r[k] = data[k]
        msgs.extend(data.get("notes", []))
        if not data.get("timing_complete", True):
            msgs.append("timing incomplete (%d solves)" % data.get("timed_runs", 0))
    if outcome != "ok" or (data is not None and (data.get("info") != 0 or not data.get("solved"))) \
            or "after the first solve" in message or "while repeating" in message:
        if message:
            msgs.append(message)
    r["message"] = "; ".join(m for m in msgs if m)
    return r


def dump_json(doc):
    """Pretty JSON with one line per result (vectors stay compact)."""
    def enc(x):
        return json.dumps(x, allow_nan=False)
    lines = ["{"]
    keys = [k for k in doc if k != "problems"]
    for k in keys:
        lines.append(" %s: %s," % (enc(k), json.dumps(doc[k], indent=None, allow_nan=False)))
    lines.append(' "problems": [')
    for i, p in enumerate(doc["problems"]):
        head = {k: v for k, v in p.items() if k != "results"}
        lines.append("  " + enc(head)[:-1] + ', "results": [')
        for j, r in enumerate(p["results"]):
            lines.append("   " + enc(r) + ("," if j + 1 < len(p["results"]) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(doc["problems"]) else ""))
    lines.append(" ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # self-check
    return text


def summary(path):
    """Markdown summary of an oracle JSON file (solved counts per solver)."""
    doc = json.load(open(path))
    out = []
    for fam in FAMILIES:
        probs = [p for p in doc["problems"] if p["family"] == fam]
        if not probs:
            continue
        out.append("### %s (%d problem files)\n" % (fam.upper(), len(probs)))
        out.append("| solver | solved | runs | info == 0 | timeout | crash | error | median time of solved runs [s] |")
        out.append("|---|---|---|---|---|---|---|---|")
        counts = {}
        for s in doc["solvers"][fam]:
            rs = [r for p in probs for r in p["results"] if r["solver"] == s]
            solved = [r for r in rs if r["solved"]]
            counts[s] = len(solved)
            n_out = lambda o: sum(1 for r in rs if r["outcome"] == o)  # noqa: E731
            ts = sorted(r["time_median_s"] for r in solved if r["time_median_s"] is not None)
            out.append("| %s | %d | %d | %d | %d | %d | %d | %s |" % (
                s, len(solved), len(rs), sum(1 for r in rs if r["info"] == 0),
                n_out("timeout"), n_out("crash"), n_out("error"),
                "%.2e" % statistics.median(ts) if ts else "-"))
        best = max(counts.values()) if counts else 0
        out.append("\nbest (most solved): %s with %d/%d\n" % (
            ", ".join(s for s, c in counts.items() if c == best), best, len(probs)))
        nobody = [p["file"] for p in probs if not any(r["solved"] for r in p["results"])]
        if nobody:
            out.append("solved by no solver: %s\n" % ", ".join(nobody))
    return "\n".join(out)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "siconos_numerics.json"))
    ap.add_argument("--data", default=os.path.normpath(os.path.join(repo, "..", "shared", "data")))
    ap.add_argument("--repeat-seconds", type=float, default=0.2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--jobs", type=int, default=1,
                    help="parallel workers (default 1 so that timings are not perturbed)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--only", default=None, help="regex on problem file names (debugging)")
    ap.add_argument("--summary", metavar="JSON",
                    help="print a Markdown summary of an existing oracle file and exit")
    a = ap.parse_args(argv)
    if a.summary:
        print(summary(a.summary))
        return

    import siconos.numerics  # noqa: F401  (fail early if unavailable)
    table = solver_table()
    families = [f for f in a.families.split(",") if f]
    t_start = time.time()

    # problem list
    problems = []
    for fam in families:
        d = os.path.join(a.data, fam)
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".dat") and (a.only is None or re.search(a.only, fn)):
                problems.append((fam, os.path.join(d, fn), "%s/%s" % (fam, fn)))

    # problem loading (n, n_eq, m_comp) in subprocesses
    info = {}
    load_failures = []
    for fam, path, rel in problems:
        data, outcome, msg = run_worker(["--worker", "info", "--family", fam, "--file", path],
                                        a.timeout)
        if data is None:
            load_failures.append({"file": rel, "outcome": outcome, "message": msg})
        info[rel] = (data, outcome, msg)
        print("[load] %-40s %s" % (rel, "ok n=%d" % data["n"] if data else outcome + " " + msg),
              flush=True)

    # probe every solver once on the smallest dense problem of its family that
    # z = 0 does not already solve;
    # a solver is "unavailable" in this build when the probe says so
    # (missing third-party code) or when it depends on an optional package that
    # SiconosConfig.h reports as not built in and the probe does not solve.
    flags = config_flags()
    dep_of = {s: (flag, what) for flag, (what, ss) in OPTIONAL_DEPS.items() for s in ss}
    unavailable = []
    skip = set()
    for fam in families:
        cands = [(info[rel][0]["n"], os.path.getsize(path), path, rel)
                 for f, path, rel in problems if f == fam and info[rel][0] is not None
                 and info[rel][0]["storage"] == "dense"
                 and (info[rel][0].get("error_at_zero") or 0.0) > 1e-3]
        if not cands:
            continue
        _, _, ppath, prel = min(cands)
        for s, _ in table[fam]:
            data, outcome, msg = run_worker(["--worker", "solve", "--family", fam, "--file", ppath,
                                             "--solver", s, "--repeat-seconds", "0",
                                             "--budget", str(a.timeout * 0.75)], a.timeout)
            solved = data is not None and data.get("solved")
            reason = None
            m = UNAVAILABLE_RE.search(msg or "")
            if m and not solved:
                reason = "the build says: '%s'" % tail(msg[max(0, m.start() - 120):m.end() + 60], 200)
            elif s in dep_of and flags is not None and not flags[dep_of[s][0]] and not solved:
                reason = "%s not built in (%s undefined in SiconosConfig.h)" % (
                    dep_of[s][1], dep_of[s][0])
            if reason is None:
                continue
            desc = outcome if data is None else "info=%s, error_recomputed=%s" % (
                data.get("info"), data.get("error_recomputed"))
            unavailable.append({"solver": s, "family": fam, "reason": reason,
                                "probe": {"file": prel, "result": desc, "message": msg}})
            skip.add(s)
            print("[probe] %-28s unavailable: %s | %s" % (s, desc, reason[:150]), flush=True)

    # the (problem, solver) runs
    jobs = []
    for fam, path, rel in problems:
        if info[rel][0] is None:
            continue
        for s, _ in table[fam]:
            if s in skip:
                continue
            jobs.append((fam, path, rel, s))

    budget = a.timeout * 0.75

    def run(job):
        fam, path, rel, s = job
        data, outcome, msg = run_worker(["--worker", "solve", "--family", fam, "--file", path,
                                         "--solver", s, "--repeat-seconds", str(a.repeat_seconds),
                                         "--budget", str(budget)], a.timeout)
        return job, make_result(s, data, outcome, msg)

    results = {}
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for job, r in ex.map(run, jobs):
            results[job] = r
            done += 1
            print("[%4d/%4d] %-40s %-26s %-7s info=%-4s err=%-10s it=%-6s t=%s" % (
                done, len(jobs), job[2], job[3], r["outcome"], r["info"],
                "%.2e" % r["error_recomputed"] if r["error_recomputed"] is not None else None,
                r["iterations"],
                "%.2e" % r["time_median_s"] if r["time_median_s"] is not None else None),
                flush=True)

    out_problems = []
    for fam, path, rel in problems:
        data, outcome, msg = info[rel]
        entry = {"family": fam, "file": rel, "n": data["n"] if data else None}
        if fam == "mlcp":
            entry["n_eq"] = data["n_eq"] if data else None
            entry["m_comp"] = data["m_comp"] if data else None
        entry["storage"] = data["storage"] if data else None
        if data and data.get("m_shape") and data["m_shape"][0] != data["m_shape"][1]:
            entry["M_shape"] = data["m_shape"]
        if data:
            entry["error_at_zero"] = data.get("error_at_zero")
        if data is None:
            entry["load_error"] = "%s: %s" % (outcome, msg)
        entry["results"] = [results[(fam, path, rel, s)] for s, _ in table[fam]
                            if (fam, path, rel, s) in results]
        out_problems.append(entry)

    doc = {
        "siconos_version": siconos_version(),
        "python": "%s (%s)" % (platform.python_version(), sys.executable),
        "cpu": cpu_model(),
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tolerance": TOL,
        "settings": {
            "tolerance_rule": "dparam[SICONOS_DPARAM_TOL] = 1e-8 unless the Siconos default is stricter",
            "max_iter_rule": "iparam[SICONOS_IPARAM_MAX_ITER] = max(default, %d) when the default is > 0"
                             % MIN_MAX_ITER,
            "initial_guess": "z = 0, w = 0",
            "error_reported": "dparam[1] (SICONOS_DPARAM_RESIDU) after the driver call",
            "error_recomputed": "lcp_compute_error / mlcp_compute_error / relay_compute_error on the returned (z, w)",
            "iterations": "iparam[1] (SICONOS_IPARAM_ITER_DONE)",
            "solved": "info == 0 and error_recomputed <= 1e-8",
            "timing": "perf_counter around the driver call only (mlcp_driver_init/reset excluded), fresh "
                      "SolverOptions and z = w = 0 for every solve; >= 3 solves and >= repeat_seconds of "
                      "solver time unless the per-run time budget (0.75 * timeout) runs out",
            "repeat_seconds": a.repeat_seconds,
            "timeout_s": a.timeout,
            "jobs": a.jobs,
            "data_dir": a.data,
        },
        "solvers": {fam: [s for s, _ in table[fam] if s not in skip] for fam in families},
        "unavailable_solvers": unavailable,
        "load_failures": load_failures,
        "problems": out_problems,
        "run_time_s": round(time.time() - t_start, 1),
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(dump_json(doc))
    os.replace(tmp, a.out)
    print("wrote %s in %.1f s" % (a.out, time.time() - t_start), flush=True)


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker_main(sys.argv[1:])
    else:
        main(sys.argv[1:])
