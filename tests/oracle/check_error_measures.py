#!/usr/bin/python3
"""Check Siconos 4.4's lcp/relay/mlcp_compute_error against explicit formulas.

Run from the repository root with the system interpreter:

    /usr/bin/python3 tests/oracle/check_error_measures.py [--json tests/oracle/siconos_numerics.json]

1. Probes each *_compute_error function with random hand-made problems
   (written to temporary .dat files in the documented formats, so Siconos'
   own readers load them) and random vectors z, and compares it with the
   formulas below.
2. If --json is given (default: the oracle output next to this script),
   re-evaluates the formulas on every solution stored in the oracle with
   the real problem files and compares them with "error_recomputed".

Formulas (w is always recomputed as M z + q by Siconos; the w passed in is
overwritten):

  LCP   : ||z - max(0, z - w)||_2 / ||q||_2   (no division when ||q||_2 <= DBL_EPSILON:
                                                 probed, 2.0e-16 -> not divided, 2.3e-16 -> divided)
  Relay : ||z - P_[lb,ub](z - w)||_2 / (1 + ||q||_2)
  MLCP  : z = [u; v] (n + m), w = M z + q = [w_e; w_c]
          A = ||w_e||_2,  a = ||q_e||_2  (q_e = first n entries of q)
          B = sum_i ( max(0, v_i w_c,i) + max(0, -v_i) + max(0, -w_c,i) ),  c = ||w_c||_2
          error = A / (2 + a)   if A / (1 + a) >= B / (1 + c)
                  B / (2 + c)   otherwise

Written from scratch (no Siconos source code).
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile

import numpy as np
import siconos.numerics as sn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


# ---------------------------------------------------------------- formulas

def lcp_formula(M, q, z):
    w = M @ z + q
    e = np.linalg.norm(z - np.maximum(0.0, z - w))
    nq = np.linalg.norm(q)
    return e / nq if nq > np.finfo(float).eps else e


def relay_formula(M, q, lb, ub, z):
    w = M @ z + q
    return np.linalg.norm(z - np.clip(z - w, lb, ub)) / (1.0 + np.linalg.norm(q))


def mlcp_formula(M, q, z, n):
    w = M @ z + q
    we, wc, v = w[:n], w[n:], z[n:]
    A = np.linalg.norm(we)
    a = np.linalg.norm(q[:n])
    B = np.sum(np.maximum(0.0, v * wc) + np.maximum(0.0, -v) + np.maximum(0.0, -wc))
    c = np.linalg.norm(wc)
    return A / (2.0 + a) if A / (1.0 + a) >= B / (1.0 + c) else B / (2.0 + c)


# ---------------------------------------------------------------- writers

def _nm_dense(M):
    r, c = M.shape
    lines = ["0", str(r), str(c), "%d\t%d" % (r, c)]
    for j in range(c):  # column-major
        lines.append(" ".join("%.17g" % M[i, j] for i in range(r)))
    return lines


def write_lcp(path, M, q):
    lines = [str(len(q))] + _nm_dense(M) + ["%.17g" % x for x in q]
    open(path, "w").write("\n".join(lines) + "\n")


def write_relay(path, M, q, lb, ub):
    lines = [str(len(q))] + _nm_dense(M)
    for v in (q, lb, ub):
        lines += ["%.17g" % x for x in v]
    open(path, "w").write("\n".join(lines) + "\n")


def write_mlcp(path, M, q, n, m):
    N = n + m
    rows = [0, n, N] if n > 0 else [0, N]
    comp = [0, 1] if n > 0 else [1]
    lines = ["1", "1", str(n), str(m), " ".join(map(str, rows)), " ".join(map(str, comp))]
    lines += _nm_dense(M) + ["%.17g" % x for x in q]
    A, B, C, D = M[:n, :n], M[n:, n:], M[:n, n:], M[n:, :n]
    for X in (A, B, C, D):  # row by row
        for r in X:
            lines.append(" ".join("%.17g" % x for x in r))
    lines += ["%.17g" % x for x in q[:n]]
    lines.append(" ".join("%.17g" % x for x in q[n:]))
    open(path, "w").write("\n".join(lines) + "\n")


# ---------------------------------------------------------------- Siconos side

_DP = ctypes.POINTER(ctypes.c_double)


class _RelayProblem(ctypes.Structure):
    _fields_ = [("size", ctypes.c_int), ("M", ctypes.c_void_p), ("q", _DP), ("lb", _DP), ("ub", _DP)]


_lib = ctypes.CDLL("libsiconos_numerics.so.7")
_lib.relay_new_from_filename.restype = ctypes.c_void_p
_lib.relay_new_from_filename.argtypes = [ctypes.c_char_p]
_lib.relay_compute_error.restype = ctypes.c_int
_lib.relay_compute_error.argtypes = [ctypes.c_void_p, _DP, _DP, ctypes.c_double, _DP]


def load_lcp(path):
    p = sn.LCP(np.eye(1), np.zeros(1))
    sn.linearComplementarity_newFromFilename(p, path)
    return p


def load_mlcp(path):
    p = sn.MLCP()
    sn.mixedLinearComplementarity_newFromFilename(p, path)
    return p


def load_relay(path):
    ptr = _lib.relay_new_from_filename(path.encode())
    rp = _RelayProblem.from_address(ptr)
    n = rp.size
    vec = lambda a: np.array([a[i] for i in range(n)])  # noqa: E731
    return ptr, vec(rp.q), vec(rp.lb), vec(rp.ub)


def siconos_lcp_error(p, z, w=None):
    w = np.zeros_like(z) if w is None else w.copy()
    return float(sn.lcp_compute_error(p, z.copy(), w, 1e-8)), w


def siconos_mlcp_error(p, z, w=None):
    w = np.zeros_like(z) if w is None else w.copy()
    return float(sn.mlcp_compute_error(p, z.copy(), w, 1e-8)), w


def siconos_relay_error(ptr, z, w=None):
    z = z.copy()
    w = np.zeros_like(z) if w is None else w.copy()
    e = ctypes.c_double()
    _lib.relay_compute_error(ptr, z.ctypes.data_as(_DP), w.ctypes.data_as(_DP), 1e-8, ctypes.byref(e))
    return e.value, w


def rel(a, b):
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


# ---------------------------------------------------------------- random probes

def random_probes(trials, seed=2024):
    rng = np.random.default_rng(seed)
    tmp = tempfile.mkdtemp(prefix="sicerr_")
    worst = {"lcp": 0.0, "relay": 0.0, "mlcp": 0.0}
    w_is_Mz_q = {"lcp": True, "relay": True, "mlcp": True}
    for t in range(trials):
        # LCP
        n = int(rng.integers(1, 6))
        M = rng.normal(size=(n, n)) * 10 ** rng.uniform(-2, 2)
        q = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
        z = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
        if t % 3 == 0:
            z = np.abs(z)
        f = os.path.join(tmp, "l.dat")
        write_lcp(f, M, q)
        e, wout = siconos_lcp_error(load_lcp(f), z, rng.normal(size=n))
        worst["lcp"] = max(worst["lcp"], rel(e, lcp_formula(M, q, z)))
        w_is_Mz_q["lcp"] &= np.allclose(wout, M @ z + q)
        # Relay
        lb = -np.abs(rng.normal(size=n)) * 2
        ub = np.abs(rng.normal(size=n)) * 2
        f = os.path.join(tmp, "r.dat")
        write_relay(f, M, q, lb, ub)
        ptr, _, _, _ = load_relay(f)
        e, wout = siconos_relay_error(ptr, z, rng.normal(size=n))
        worst["relay"] = max(worst["relay"], rel(e, relay_formula(M, q, lb, ub, z)))
        w_is_Mz_q["relay"] &= np.allclose(wout, M @ z + q)
        # MLCP
        ne = int(rng.integers(0, 4))
        m = int(rng.integers(1, 5))
        N = ne + m
        M = rng.normal(size=(N, N)) * 10 ** rng.uniform(-2, 3)
        q = rng.normal(size=N) * 10 ** rng.uniform(-3, 3)
        z = rng.normal(size=N) * 10 ** rng.uniform(-3, 3)
        if t % 3 == 0:
            z[ne:] = np.abs(z[ne:])
        f = os.path.join(tmp, "m.dat")
        write_mlcp(f, M, q, ne, m)
        e, wout = siconos_mlcp_error(load_mlcp(f), z, rng.normal(size=N))
        worst["mlcp"] = max(worst["mlcp"], rel(e, mlcp_formula(M, q, z, ne)))
        w_is_Mz_q["mlcp"] &= np.allclose(wout, M @ z + q)
    return worst, w_is_Mz_q


def hand_made():
    """A few hand-made MLCP cases (n = 1, m = 1, M = I) that expose each term."""
    tmp = tempfile.mkdtemp(prefix="sicerr_")
    rows = []
    for (qe, we, v, wc) in [(0, 1, 0, 0), (3, 1, 0, 0), (0, 0, 1, 1), (0, 0, 2, 2), (0, 0, -1, 0),
                            (0, 0, 0, -1), (0, 0, 1, -2), (0, 0, -1, -1), (0, 0, -1, 2),
                            (0, 1, 1, 1), (0, 3, 1, 1)]:
        M = np.eye(2)
        q = np.array([qe, wc - v], float)   # w = z + q
        z = np.array([we - qe, v], float)
        f = os.path.join(tmp, "h.dat")
        write_mlcp(f, M, q, 1, 1)
        e, w = siconos_mlcp_error(load_mlcp(f), z)
        rows.append((qe, w[0], v, w[1], e, mlcp_formula(M, q, z, 1)))
    return rows


# ---------------------------------------------------------------- oracle solutions

def check_oracle(path, data_dir):
    doc = json.load(open(path))
    worst = {"lcp": (0.0, None), "relay": (0.0, None), "mlcp": (0.0, None)}
    counts = {"lcp": 0, "relay": 0, "mlcp": 0}
    agree = {"lcp": 0, "relay": 0, "mlcp": 0}
    cache = {}
    for prob in doc["problems"]:
        fam = prob["family"]
        if prob.get("storage") not in ("dense", None):
            continue
        fpath = os.path.join(data_dir, prob["file"])
        for r in prob["results"]:
            if r.get("z") is None or r.get("error_recomputed") is None or None in r["z"]:
                continue
            z = np.array(r["z"], float)
            if fam == "lcp":
                p = cache.get(fpath) or load_lcp(fpath)
                cache[fpath] = p
                f = lcp_formula(np.asarray(p.M), np.asarray(p.q).ravel(), z)
            elif fam == "relay":
                p = cache.get(fpath) or load_relay(fpath)
                cache[fpath] = p
                ptr, q, lb, ub = p
                # M from the LCP reader of the same leading block (n, NM, q)
                lp = cache.get(fpath + "#M") or load_lcp(fpath)
                cache[fpath + "#M"] = lp
                f = relay_formula(np.asarray(lp.M), q, lb, ub, z)
            else:
                p = cache.get(fpath) or load_mlcp(fpath)
                cache[fpath] = p
                M = np.asarray(p.M)
                if M.shape[0] != M.shape[1]:
                    continue
                f = mlcp_formula(M, np.asarray(p.q).ravel(), z, int(p.n))
            g = r["error_recomputed"]
            counts[fam] += 1
            if abs(f - g) <= 1e-6 * max(abs(f), abs(g)) + 1e-13:
                agree[fam] += 1
            if max(abs(f), abs(g)) > 1e-10:
                d = rel(f, g)
                if d > worst[fam][0]:
                    worst[fam] = (d, "%s %s" % (prob["file"], r["solver"]))
    return worst, counts, agree


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(HERE, "siconos_numerics.json"))
    ap.add_argument("--data", default=os.path.normpath(os.path.join(REPO, "..", "shared", "data")))
    ap.add_argument("--trials", type=int, default=500)
    a = ap.parse_args()
    worst, wflag = random_probes(a.trials)
    print("random probes (%d problems per family): max relative difference formula vs Siconos" % a.trials)
    for fam in ("lcp", "relay", "mlcp"):
        print("  %-5s %.3g   (w overwritten with M z + q: %s)" % (fam, worst[fam], wflag[fam]))
    print("hand-made MLCP cases (n = m = 1, M = I): q_e, w_e, v, w_c -> mlcp_compute_error | formula")
    for qe, we, v, wc, e, f in hand_made():
        print("  q_e=%4g w_e=%4g v=%4g w_c=%4g -> %.10g | %.10g" % (qe, we, v, wc, e, f))
    if a.json and os.path.exists(a.json):
        ow, cnt, agree = check_oracle(a.json, a.data)
        print("oracle solutions (%s): formula vs error_recomputed" % a.json)
        print("  (agree: |diff| <= 1e-6*max + 1e-13; max rel. diff over errors > 1e-10)")
        for fam in ("lcp", "relay", "mlcp"):
            print("  %-5s %d solutions, %d agree, max rel. diff %.3g %s" % (
                fam, cnt[fam], agree[fam], ow[fam][0], "(" + ow[fam][1] + ")" if ow[fam][1] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
