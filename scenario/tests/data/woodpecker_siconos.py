#!/usr/bin/python3
"""Siconos 4.4 reference run of the woodpecker toy (examples/woodpecker.toml).

Model (Glocker 1995; Leine, Glocker, van Campen 2001), written here from its
equations: q = (y, phi_M, phi_S),

    M v' + K q = F + sum_i H_i^T lambda_i,   q' = v,

    M = [[mM + mS, mS lM, mS lG], [mS lM, JM + mS lM^2, mS lM lG],
         [mS lG, mS lM lG, JS + mS lG^2]],
    K = c_phi [[0, 0, 0], [0, 1, -1], [0, -1, 1]],
    F = -g (mM + mS, mS lM, mS lG),

three 2D contacts (rows [normal gap, tangent], y = H q + b):

    beak           H = [[0, 0, -hS], [1, lM, lG - lS]], b = [lM + lG - lS - r0, 0], e_N = 0.5
    sleeve_top     H = [[0, hM, 0],  [1, rM, 0]],       b = [rM - r0, 0],           e_N = 0
    sleeve_bottom  H = [[0, -hM, 0], [1, rM, 0]],       b = [rM - r0, 0],           e_N = 0

mu = 0.3, e_T = 0. Siconos kernel: LagrangianLinearTIDS, LagrangianLinearTIR,
NewtonImpactFrictionNSL(e_N, e_T, mu, 2), MoreauJeanOSI(theta = 1/2, its
default activation gamma = 1/2), FrictionContact(2) solved by the 2D NSGS
to 1e-14, h = 2e-5 on [0, 1.5] (about ten cycles).

Writes two files next to this script (repr(float) values, read back bit for bit):

* woodpecker_siconos.csv: the first `--trajectory-end` seconds (0.3 s, two
  cycles), one row every `--every` steps (t = 0 first): t, q[0..3], v[0..3];
* woodpecker_siconos_beak.csv: one row per beak impact over the whole run
  (a step whose beak impulse P_N > 0 after a step without): the step index
  k, t = k h, q, v after that step and the impulse [P_N, P_T]. The period
  and the mean descent speed of the limit cycle are read from these rows.

Usage (from the repository root, system interpreter):
    /usr/bin/python3 scenario/tests/data/woodpecker_siconos.py
"""

import argparse
import os
import sys

import numpy as np
import siconos.kernel as sk
import siconos.numerics as sn

P = dict(mM=0.0003, JM=5.0e-9, mS=0.0045, JS=7.0e-7, r0=0.0025, rM=0.0031,
         hM=0.0058, lM=0.010, lG=0.015, lS=0.0201, hS=0.02, c=0.0056, g=9.81,
         e_beak=0.5, e_sleeve=0.0, mu=0.3,
         q0=[0.0, -0.1036, -0.2788], v0=[-0.3411, 0.0, -7.4583],
         h=2e-5, T=1.5, theta=0.5)


def build(p):
    mM, JM, mS, JS = p["mM"], p["JM"], p["mS"], p["JS"]
    lM, lG, lS, hS, hM, rM, r0 = p["lM"], p["lG"], p["lS"], p["hS"], p["hM"], p["rM"], p["r0"]
    g, c = p["g"], p["c"]
    M = np.array([[mM + mS, mS * lM, mS * lG],
                  [mS * lM, JM + mS * lM ** 2, mS * lM * lG],
                  [mS * lG, mS * lM * lG, JS + mS * lG ** 2]])
    K = np.array([[0.0, 0.0, 0.0], [0.0, c, -c], [0.0, -c, c]])
    C = np.zeros((3, 3))
    toy = sk.LagrangianLinearTIDS(list(p["q0"]), list(p["v0"]), M, K, C)
    toy.setFExtPtr(np.array([-(mM + mS) * g, -mS * lM * g, -mS * lG * g]))
    contacts = [
        ("beak", [[0.0, 0.0, -hS], [1.0, lM, lG - lS]], [lM + lG - lS - r0, 0.0], p["e_beak"]),
        ("sleeve_top", [[0.0, hM, 0.0], [1.0, rM, 0.0]], [rM - r0, 0.0], p["e_sleeve"]),
        ("sleeve_bottom", [[0.0, -hM, 0.0], [1.0, rM, 0.0]], [rM - r0, 0.0], p["e_sleeve"]),
    ]
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(toy)
    inters = []
    for name, H, b, e in contacts:
        rel = sk.LagrangianLinearTIR(np.array(H), np.array(b))
        inter = sk.Interaction(sk.NewtonImpactFrictionNSL(e, 0.0, p["mu"], 2), rel)
        nsds.link(inter, toy)
        inters.append((name, inter))
    osi = sk.MoreauJeanOSI(p["theta"])
    fc = sk.FrictionContact(2)
    opts = fc.numericsSolverOptions()
    opts.dparam[sn.SICONOS_DPARAM_TOL] = 1e-14
    opts.iparam[sn.SICONOS_IPARAM_MAX_ITER] = 100000
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), osi, fc)
    return toy, inters, sim, fc


def siconos_version():
    """The installed Siconos' version (Debian python3-siconos), or "4.4"."""
    try:
        import subprocess
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-siconos"],
                             capture_output=True, text=True, check=True).stdout
        return out.split("+")[0] or "4.4"
    except (OSError, subprocess.CalledProcessError):
        return "4.4"


def write(path, comment, header, rows):
    with open(path, "w") as f:
        f.write("# " + comment + "\n")
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(repr(float(x)) for x in r) + "\n")
    print("wrote %s: %d rows" % (path, len(rows)), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--trajectory-end", type=float, default=0.3)
    ap.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    toy, inters, sim, fc = build(P)
    beak = inters[0][1]
    state = ["toy.q[%d]" % i for i in range(3)] + ["toy.v[%d]" % i for i in range(3)]
    trajectory = [[0.0] + list(P["q0"]) + list(P["v0"])]
    impacts = []
    k = 0
    last_pn = 0.0
    while sim.hasNextEvent():
        sim.computeOneStep()
        k += 1
        t = k * P["h"]
        x = list(toy.q()) + list(toy.velocity())
        lam = beak.lambda_(1)
        pn = float(lam[0])
        if pn > 0.0 and last_pn == 0.0:
            impacts.append([k, t] + x + [pn, float(lam[1])])
        last_pn = pn
        if k % args.every == 0 and t <= args.trajectory_end + 0.5 * P["h"]:
            trajectory.append([t] + x)
        sim.nextStep()
    tag = "Siconos %s woodpecker (woodpecker_siconos.py), h = %r, theta = %r" % (
        siconos_version(), P["h"], P["theta"])
    write(os.path.join(args.dir, "woodpecker_siconos.csv"), tag + ", every %d steps" % args.every,
          ["t"] + state, trajectory)
    write(os.path.join(args.dir, "woodpecker_siconos_beak.csv"), tag + ", beak impacts",
          ["step", "t"] + state + ["beak.lambda[0]", "beak.lambda[1]"], impacts)


if __name__ == "__main__":
    main()
