#!/usr/bin/python3
"""Independent re-implementation of the four example schemes, checked against Siconos.

tests/oracle/siconos_examples.py records what Siconos 4.4 computes.  This
script recomputes the same trajectories with numpy only, from the discrete
equations written out below, and compares them with the committed CSV files
(tests/oracle/examples/*.csv).  If they agree to rounding, the equations
below are the ones Siconos uses.  It also runs a few *variants* of the
equations (activation with gamma = 1, no restitution memory, ...) to show
that the choice matters, and (with --siconos) asks Siconos itself for the
variant with MoreauJeanOSI.setGamma(1.0).

Moreau-Jean (MoreauJeanOSI, theta, LagrangianLinearTIDS with K = C = 0):

    W        = M
    v_free   = v_k + W^-1 h (theta Fext(t_k+1) + (1 - theta) Fext(t_k))
    y_k      = H q_k + b            (inter.y(0) at t_k)
    U_k      = H v_k                (inter.y(1) at t_k, i.e. after the impact of step k)
    active   = { a : y_k,a + gamma h U_k,a <= 0 },  gamma = 1/2
    LCP      w = H_I W^-1 H_I^T P + H_I v_free + e U_k,I,   0 <= w _|_ P >= 0
    v_k+1    = v_free + W^-1 H_I^T P
    q_k+1    = q_k + h (theta v_k+1 + (1 - theta) v_k)
    y_k+1    = H q_k+1 + b,   U_k+1 = H v_k+1,   lambda(1) = P (0 if not active)

Euler-Moreau (EulerMoreauOSI, theta, FirstOrderLinear(TI)DS + FirstOrderLinearTIR):

    W        = I - h theta A
    x_free   = x_k + W^-1 h A x_k
    x_k+1    = x_free + h W^-1 B lambda_k+1          (r = B lambda, not scaled by h)
    y_k+1    = C x_k+1 + D lambda_k+1                 (+ e, absent here)
    one-step problem on  y = (D + h C W^-1 B) lambda + C x_free
      complementarity: 0 <= y _|_ lambda >= 0       (LCP)
      relay:           -y in N_[lb,ub](lambda)      (Relay; lambda = -1 when y > 0)
    every interaction is always in the problem (index set 0).

Usage (from the repository root):

    /usr/bin/python3 tests/oracle/check_examples_conventions.py [--dir DIR] [--siconos]

Needs numpy only, unless --siconos is given.  It is written from scratch; it
contains no Siconos source code.
"""

import argparse
import itertools
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import siconos_examples as ex  # noqa: E402  (parameters, CSV reader; Siconos only with --siconos)


# --------------------------------------------------------------------------
# exact small LCP / relay solvers
# --------------------------------------------------------------------------

def lcp_principal_pivoting(M, q, tol=1e-14):
    """Murty's least-index principal pivoting; finite for P-matrices."""
    n = len(q)
    basic = np.zeros(n, dtype=bool)
    scale = 1.0 + np.abs(q).max() if n else 1.0
    for _ in range(100 * (n + 1) ** 2):
        z = np.zeros(n)
        if basic.any():
            z[basic] = np.linalg.solve(M[np.ix_(basic, basic)], -q[basic])
        w = M @ z + q
        bad = np.where((basic & (z < -tol * scale)) | (~basic & (w < -tol * scale)))[0]
        if len(bad) == 0:
            z[~basic] = 0.0
            return z
        basic[bad[0]] = not basic[bad[0]]
    raise RuntimeError("principal pivoting did not terminate")


def lcp_enumerate(M, q, tol=1e-12):
    """All complementary solutions (for small n); returns the list of z."""
    n = len(q)
    sols = []
    scale = 1.0 + np.abs(q).max()
    for mask in itertools.product([False, True], repeat=n):
        b = np.array(mask)
        z = np.zeros(n)
        if b.any():
            try:
                z[b] = np.linalg.solve(M[np.ix_(b, b)], -q[b])
            except np.linalg.LinAlgError:
                continue
        w = M @ z + q
        if (z >= -tol * scale).all() and (w >= -tol * scale).all():
            if not any(np.allclose(z, s, rtol=1e-12, atol=1e-14 * scale) for s in sols):
                sols.append(z)
    return sols


def relay_scalar(M, q, lb, ub):
    """-(M z + q) in N_[lb,ub](z) for n = 1, M > 0."""
    m, qq = float(M[0, 0]), float(q[0])
    return np.array([min(ub, max(lb, -qq / m))])


# --------------------------------------------------------------------------
# Moreau-Jean
# --------------------------------------------------------------------------

class Lagrangian:
    """Block-diagonal Lagrangian system: one (M, Fext, q0) per DS, rows of H per interaction."""

    def __init__(self, masses, fext, q0, v0, inters):
        self.M = np.zeros((sum(len(f) for f in fext),) * 2)
        self.offsets = []
        off = 0
        for m in masses:
            n = m.shape[0]
            self.M[off:off + n, off:off + n] = m
            self.offsets.append(off)
            off += n
        self.F = np.concatenate(fext)
        self.q0 = np.concatenate(q0)
        self.v0 = np.concatenate(v0)
        # inters: list of (ds indices, H over those ds, b, e); rows of the global H
        rows, bs, es = [], [], []
        for dsi, H, b, e in inters:
            row = np.zeros(len(self.F))
            col = 0
            for d in dsi:
                n = masses[d].shape[0]
                row[self.offsets[d]:self.offsets[d] + n] = H[0, col:col + n]
                col += n
            rows.append(row)
            bs.append(b)
            es.append(e)
        self.H = np.array(rows)
        self.b = np.array(bs)
        self.e = np.array(es)


def moreau_jean(sys_, theta, h, nsteps, gamma=0.5, restitution_memory=True, zero_inactive=True,
                threshold=0.0):
    M, F, H, b, e = sys_.M, sys_.F, sys_.H, sys_.b, sys_.e
    Minv = np.linalg.inv(M)
    q, v = sys_.q0.copy(), sys_.v0.copy()
    y, U = H @ q + b, H @ v
    lam = np.zeros(len(b))
    out = [(q.copy(), v.copy(), y.copy(), lam.copy())]
    for k in range(nsteps):
        vfree = v + Minv @ (h * (theta * F + (1.0 - theta) * F))
        act = (y + gamma * h * U) <= threshold
        P = np.zeros(len(b)) if zero_inactive else lam.copy()
        if act.any():
            Ha = H[act]
            W = Ha @ Minv @ Ha.T
            qq = Ha @ vfree + (e[act] * U[act] if restitution_memory else 0.0)
            P[act] = lcp_principal_pivoting(W, qq)
        vn = vfree + Minv @ (H[act].T @ P[act]) if act.any() else vfree
        q = q + h * (theta * vn + (1.0 - theta) * v)
        v = vn
        y, U = H @ q + b, H @ v
        lam = P
        out.append((q.copy(), v.copy(), y.copy(), lam.copy()))
    return out


def euler_moreau(A, B, C, D, x0, theta, h, nsteps, law, lb=None, ub=None, scale_r_by_theta=False):
    n = len(x0)
    W = np.eye(n) - h * theta * A
    Winv = np.linalg.inv(W)
    Mop = D + h * C @ Winv @ B * (theta if scale_r_by_theta else 1.0)
    x = np.array(x0, dtype=float)
    lam = np.zeros(D.shape[0])
    y = C @ x + D @ lam
    out = [(x.copy(), y.copy(), lam.copy())]
    nsol_max = 1
    for k in range(nsteps):
        xfree = x + Winv @ (h * (A @ x))
        qv = C @ xfree
        if law == "lcp":
            sols = lcp_enumerate(Mop, qv)
            nsol_max = max(nsol_max, len(sols))
            lam = sols[0]
        else:
            lam = relay_scalar(Mop, qv, lb, ub)
        x = xfree + (theta if scale_r_by_theta else 1.0) * h * (Winv @ (B @ lam))
        y = C @ x + D @ lam
        out.append((x.copy(), y.copy(), lam.copy()))
    return out, nsol_max


# --------------------------------------------------------------------------
# the examples, as numpy arrays laid out like the CSV columns
# --------------------------------------------------------------------------

def ball_system(b):
    p = ex.BALL
    m, R, g = p["m"], p["R"], p["g"]
    return Lagrangian([np.diag([m, m, 0.4 * m * R * R])], [np.array([-m * g, 0.0, 0.0])],
                      [np.array(p["q0"])], [np.zeros(3)],
                      [([0], np.array([[1.0, 0.0, 0.0]]), b, p["e"])])


def beads_system(n, gap):
    p = ex.BEADS
    m, g, R = p["m"], p["g"], p["R"]
    q0 = ex.bead_positions(n, gap, R)
    inters = [([0], np.array([[1.0]]), -R, p["e"])]
    inters += [([i - 1, i], np.array([[-1.0, 1.0]]), -2.0 * R, p["e"]) for i in range(1, n)]
    return Lagrangian([np.array([[m]])] * n, [np.array([-m * g])] * n,
                      [np.array([x]) for x in q0], [np.zeros(1)] * n, inters)


def lagrangian_rows(out, ndof_per_ds, h):
    rows = []
    for k, (q, v, y, lam) in enumerate(out):
        row = [k * h]
        off = 0
        for nd in ndof_per_ds:
            row += list(q[off:off + nd]) + list(v[off:off + nd])
            off += nd
        for a in range(len(y)):
            row += [y[a], lam[a]]
        rows.append(row)
    return np.array(rows)


def first_order_rows(out, h):
    return np.array([[k * h] + list(x) + list(y) + list(lam) for k, (x, y, lam) in enumerate(out)])


def diode_matrices():
    p = ex.DIODE
    L, Cc, R = p["Lind"], p["Cap"], p["Rload"]
    A = np.array([[0.0, -1.0 / Cc], [1.0 / L, 0.0]])
    C = np.array([[0.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [1.0, 0.0]])
    D = np.array([[1 / R, 1 / R, -1.0, 0.0], [1 / R, 1 / R, 0.0, -1.0],
                  [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    B = np.array([[0.0, 0.0, -1.0 / Cc, 1.0 / Cc], [0.0, 0.0, 0.0, 0.0]])
    return A, B, C, D


def relay_matrices():
    p = ex.RELAY
    c1, al = p["c1"], p["alpha"]
    return (np.array([[0.0, 1.0], [0.0, -c1]]), np.array([[0.0], [al]]),
            np.array([[c1, 1.0]]), np.array([[0.0]]))


def nsteps(p):
    return int(round(p["T"] / p["h"]))


def compute(name, **variant):
    """numpy trajectory of a case, same column order as the CSV."""
    if name.startswith("bouncing_ball"):
        p = ex.BALL
        b = 0.0 if name == "bouncing_ball_siconos_ref" else -p["R"]
        out = moreau_jean(ball_system(b), p["theta"], p["h"], nsteps(p), **variant)
        return lagrangian_rows(out, [3], p["h"])
    if name.startswith("beads_column"):
        p = ex.BEADS
        n = int(name.rsplit("_", 1)[1])
        gap = 0.01 if "falling" in name else (-1e-12 if "overlap" in name else 0.0)
        out = moreau_jean(beads_system(n, gap), p["theta"], p["h"], nsteps(p), **variant)
        return lagrangian_rows(out, [1] * n, p["h"])
    if name == "diode_bridge":
        p = ex.DIODE
        A, B, C, D = diode_matrices()
        out, nsol = euler_moreau(A, B, C, D, p["x0"], p["theta"], p["h"], nsteps(p), "lcp", **variant)
        compute.last_nsol = nsol
        return first_order_rows(out, p["h"])
    if name == "relay":
        p = ex.RELAY
        A, B, C, D = relay_matrices()
        out, _ = euler_moreau(A, B, C, D, p["x0"], p["theta"], p["h"], nsteps(p), "relay",
                              lb=p["lb"], ub=p["ub"], **variant)
        return first_order_rows(out, p["h"])
    raise KeyError(name)


VARIANTS = {
    "bouncing_ball": [("activation gamma = 1", dict(gamma=1.0)),
                      ("no e*U_k term", dict(restitution_memory=False))],
    "beads_column_falling_10": [("activation gamma = 1", dict(gamma=1.0)),
                                ("keep lambda of inactive interactions", dict(zero_inactive=False))],
    "diode_bridge": [("x_k+1 = x_free + theta h W^-1 B lambda", dict(scale_r_by_theta=True))],
}


# The resting column with gap = 0 is decided by rounding: every contact starts
# with |y| ~ 1e-16 and U = 0, so whether y + h U / 2 <= 0 holds depends on the
# sign of rounding noise in the initial positions and in the LCP solution.
# numpy and Siconos (and Siconos with another LCP solver) part ways at row 3.
# For it only the end state is checked: every impulse is (N - i) m g h.
ROUNDING_DECIDED = {"beads_column_resting_10"}


def resting_impulses_ok(header, rows, n):
    p = ex.BEADS
    last = rows[-1]
    names = ["ground"] + ["contact%d" % i for i in range(1, n)]
    worst = 0.0
    for i, nm in enumerate(names):
        lam = last[header.index(nm + ".lambda[0]")]
        worst = max(worst, abs(lam - (n - i) * p["m"] * p["g"] * p["h"]))
    return worst


def diff_report(header, got, ref):
    n = min(len(got), len(ref))
    d = np.abs(got[:n] - ref[:n])
    worst = d.max(axis=0)
    j = int(worst.argmax())
    first = np.where(d.max(axis=1) > 1e-9)[0]
    return worst.max(), header[j], (int(first[0]) if len(first) else None), n


def siconos_gamma_one(name):
    """Siconos itself with MoreauJeanOSI.setGamma(1.0); returns rows as an array."""
    case = ex.CASES[name]()
    osi = [k for k in case.keep if type(k).__name__ == "MoreauJeanOSI"]
    osi[0].setGamma(1.0)
    sim = case.sim
    sim.initialize()
    rows = [[sim.startingTime()] + [g() for _, g in case.columns]]
    while sim.hasNextEvent():
        sim.computeOneStep()
        rows.append([sim.nextTime()] + [g() for _, g in case.columns])
        sim.nextStep()
    return np.array(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(HERE, "examples"))
    ap.add_argument("--siconos", action="store_true",
                    help="also run Siconos with setGamma(1.0) and compare with the gamma = 1 variant")
    args = ap.parse_args()
    ok = True
    for name in ex.CASES:
        header, rows = ex.read_csv(os.path.join(args.dir, name + ".csv"))
        ref = np.array(rows)
        got = compute(name)
        worst, col, first, n = diff_report(header, got, ref)
        extra = ""
        if name == "diode_bridge":
            extra = " (LCP solutions per step: at most %d)" % compute.last_nsol
        print("%-28s rows %d/%d  max |numpy - Siconos| = %.2e (%s)%s"
              % (name, len(got), len(ref), worst, col, extra))
        if name.startswith("beads_column_resting"):
            n = int(name.rsplit("_", 1)[1])
            print("    last row: max |lambda_i - (N - i) m g h| = %.2e (Siconos), %.2e (numpy)"
                  % (resting_impulses_ok(header, ref, n), resting_impulses_ok(header, got, n)))
        if name in ROUNDING_DECIDED:
            print("    decided by rounding (expected): first row > 1e-9 is %s" % first)
            ok &= resting_impulses_ok(header, ref, n) <= 1e-12 and len(got) == len(ref)
            continue
        ok &= worst <= 1e-9 and len(got) == len(ref)
        for label, var in VARIANTS.get(name, []):
            vg = compute(name, **var)
            w2, c2, f2, _ = diff_report(header, vg, ref)
            print("    variant %-40s max diff %.2e (%s), first row > 1e-9: %s" % (label, w2, c2, f2))
            if args.siconos and var.get("gamma") == 1.0:
                sg = siconos_gamma_one(name)
                w3, c3, f3, _ = diff_report(header, vg, sg)
                w4, _, f4, _ = diff_report(header, sg, ref)
                print("      Siconos with setGamma(1.0) vs this variant: max diff %.2e (%s);"
                      " vs default Siconos: %.2e, first row > 1e-9: %s" % (w3, c3, w4, f4))
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
