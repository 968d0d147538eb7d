#!/usr/bin/python3
"""Siconos 4.4 reference trajectories for the four bundled examples.

Builds each example with the Siconos 4.4 kernel (Debian package
python3-siconos, module siconos.kernel), runs its time-stepping simulation
and writes one CSV per case to tests/oracle/examples/<name>.csv:

    bouncing_ball               LagrangianLinearTIDS + LagrangianLinearTIR (b = -R),
                                NewtonImpactNSL e = 0.9, MoreauJeanOSI theta = 0.5, LCP,
                                h = 0.005, t in [0, 10]
    bouncing_ball_siconos_ref   the same with b = 0 (y = q[0]), the setting of Siconos'
                                own regression output result.ref.gz
    diode_bridge                FirstOrderLinearDS + FirstOrderLinearTIR (4 diodes),
                                ComplementarityConditionNSL(4), EulerMoreauOSI theta = 0.5,
                                LCP, h = 1e-6, t in [0, 5e-3]
    relay                       FirstOrderLinearTIDS + FirstOrderLinearTIR, RelayNSL(1, -1, 1),
                                EulerMoreauOSI theta = 1, Relay, h = 0.01, t in [0, 10]
    beads_column_falling_10     10 one-dof beads, gap 0.01, NewtonImpactNSL e = 0.5,
                                MoreauJeanOSI theta = 0.5, LCP, h = 1e-3, t in [0, 1]
    beads_column_resting_10     the same with gap 0 (beads touching, at rest).  Rounding
                                decides this one: see the README ("resting column").
    beads_column_resting_overlap_10
                                gap = -1e-12 (every contact starts 1e-12 inside), the
                                rounding-proof version of the resting column

CSV format: a header line, then one row per time step, the first row being
the initial state at t = 0.  Column `t` first, then for every dynamical
system `<ds>.q[i]`, `<ds>.v[i]` (Lagrangian) or `<ds>.x[i]` (first order),
then for every interaction `<inter>.y[i]` and `<inter>.lambda[i]`.  Values
are written with repr(float), so they read back bit for bit.

    t           Siconos' own time of the step end (Simulation.nextTime()).
    y           inter.y(0) after the step (for the Lagrangian relations
                y = H q_{k+1} + b).  At t = 0: inter.y(0) after
                Simulation.initialize(), i.e. y computed from the initial state.
    lambda      Lagrangian (NewtonImpactNSL): inter.lambda(1), the impulse
                of the step.  First order (complementarity, relay):
                inter.lambda(0).  At t = 0 it is 0.

Every solver runs with the defaults a Siconos user gets: LCP() uses Lemke
(SICONOS_LCP_LEMKE) and Relay() uses SICONOS_RELAY_AVI_CAOFERRIS.

Usage (from the repository root, with the *system* interpreter):

    /usr/bin/python3 tests/oracle/siconos_examples.py [--out-dir DIR]
        [--only REGEX] [--data DIR] [--no-ref-check]

After writing the files it compares the two cases that Siconos ships a
regression output for (bouncing_ball_siconos_ref with result.ref.gz and
diode_bridge with diode_bridge.ref.gz, in <data>/siconos-ref/) and prints
the largest absolute difference per column.  --check-only compares the
committed CSV files again without running Siconos.

This script is written from scratch against the public Python API of
Siconos; it contains no Siconos source code.
"""

import argparse
import gzip
import os
import re
import subprocess
import sys
import time


# --------------------------------------------------------------------------
# example parameters (single place; the C++ bench uses the same values)
# --------------------------------------------------------------------------

BALL = dict(m=1.0, R=0.1, g=9.81, e=0.9, theta=0.5, h=0.005, T=10.0, q0=(1.0, 0.0, 0.0))
DIODE = dict(Lind=1e-2, Cap=1e-6, Rload=1e3, x0=(10.0, 0.0), theta=0.5, h=1e-6, T=5e-3)
RELAY = dict(c1=1.0, alpha=1.0, x0=(0.0, 2.21), theta=1.0, h=0.01, T=10.0, lb=-1.0, ub=1.0)
BEADS = dict(m=1.0, g=9.81, R=0.1, e=0.5, theta=0.5, h=1e-3, T=1.0)


class Case:
    """A built Siconos simulation plus the list of recorded columns.

    columns: list of (header, getter) with getter() -> float.
    keep: the Siconos objects of the model (DS, interactions, OSI, ...), kept
    alive and reachable (check_examples_conventions.py uses the OSI).
    """

    def __init__(self, nsds, sim, columns, keep):
        self.nsds = nsds
        self.sim = sim
        self.columns = columns
        self.keep = keep


def _lagrangian_columns(name, ds, ndof):
    cols = []
    for i in range(ndof):
        cols.append(("%s.q[%d]" % (name, i), (lambda ds=ds, i=i: ds.q()[i])))
    for i in range(ndof):
        cols.append(("%s.v[%d]" % (name, i), (lambda ds=ds, i=i: ds.velocity()[i])))
    return cols


def _first_order_columns(name, ds, n):
    return [("%s.x[%d]" % (name, i), (lambda ds=ds, i=i: ds.x()[i])) for i in range(n)]


def _interaction_columns(name, inter, size, lambda_level):
    cols = [("%s.y[%d]" % (name, i), (lambda inter=inter, i=i: inter.y(0)[i])) for i in range(size)]
    cols += [("%s.lambda[%d]" % (name, i), (lambda inter=inter, i=i: inter.lambda_(lambda_level)[i]))
             for i in range(size)]
    return cols


def build_bouncing_ball(b):
    import numpy as np
    import siconos.kernel as sk
    p = BALL
    m, R, g = p["m"], p["R"], p["g"]
    mass = np.diag([m, m, 2.0 / 5.0 * m * R * R])
    ball = sk.LagrangianLinearTIDS(list(p["q0"]), [0.0, 0.0, 0.0], mass)
    ball.setFExtPtr(np.array([-m * g, 0.0, 0.0]))
    rel = sk.LagrangianLinearTIR(np.array([[1.0, 0.0, 0.0]]), np.array([b]))
    floor = sk.Interaction(sk.NewtonImpactNSL(p["e"]), rel)
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(ball)
    nsds.link(floor, ball)
    osi = sk.MoreauJeanOSI(p["theta"])
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), osi, sk.LCP())
    cols = _lagrangian_columns("ball", ball, 3) + _interaction_columns("floor", floor, 1, 1)
    return Case(nsds, sim, cols, (ball, floor, osi, rel))


def build_diode_bridge():
    import numpy as np
    import siconos.kernel as sk
    p = DIODE
    Lind, Cap, R = p["Lind"], p["Cap"], p["Rload"]
    A = np.array([[0.0, -1.0 / Cap], [1.0 / Lind, 0.0]])
    circuit = sk.FirstOrderLinearDS(list(p["x0"]), A)
    C = np.array([[0.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [1.0, 0.0]])
    D = np.array([[1.0 / R, 1.0 / R, -1.0, 0.0],
                  [1.0 / R, 1.0 / R, 0.0, -1.0],
                  [1.0, 0.0, 0.0, 0.0],
                  [0.0, 1.0, 0.0, 0.0]])
    B = np.array([[0.0, 0.0, -1.0 / Cap, 1.0 / Cap],
                  [0.0, 0.0, 0.0, 0.0]])
    rel = sk.FirstOrderLinearTIR(C, B)
    rel.setDPtr(D)
    diodes = sk.Interaction(sk.ComplementarityConditionNSL(4), rel)
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(circuit)
    nsds.link(diodes, circuit)
    osi = sk.EulerMoreauOSI(p["theta"])
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), osi, sk.LCP())
    cols = _first_order_columns("circuit", circuit, 2) + _interaction_columns("diodes", diodes, 4, 0)
    return Case(nsds, sim, cols, (circuit, diodes, osi, rel))


def build_relay():
    import numpy as np
    import siconos.kernel as sk
    p = RELAY
    c1, alpha = p["c1"], p["alpha"]
    A = np.array([[0.0, 1.0], [0.0, -c1]])
    plant = sk.FirstOrderLinearTIDS(list(p["x0"]), A)
    C = np.array([[c1, 1.0]])
    D = np.array([[0.0]])
    B = np.array([[0.0], [alpha]])
    rel = sk.FirstOrderLinearTIR(C, B)
    rel.setDPtr(D)
    relay = sk.Interaction(sk.RelayNSL(1, p["lb"], p["ub"]), rel)
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    nsds.insertDynamicalSystem(plant)
    nsds.link(relay, plant)
    osi = sk.EulerMoreauOSI(p["theta"])
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), osi, sk.Relay())
    cols = _first_order_columns("plant", plant, 2) + _interaction_columns("relay", relay, 1, 0)
    return Case(nsds, sim, cols, (plant, relay, osi, rel))


def bead_positions(n, gap, R):
    """q_i(0) = R + gap + i (2R + gap), i = 0 (bottom) ... n-1."""
    return [R + gap + i * (2.0 * R + gap) for i in range(n)]


def build_beads(n, gap):
    import numpy as np
    import siconos.kernel as sk
    p = BEADS
    m, g, R, e = p["m"], p["g"], p["R"], p["e"]
    nsds = sk.NonSmoothDynamicalSystem(0.0, p["T"])
    beads = []
    for i, q0 in enumerate(bead_positions(n, gap, R)):
        ds = sk.LagrangianLinearTIDS([q0], [0.0], np.array([[m]]))
        ds.setFExtPtr(np.array([-m * g]))
        nsds.insertDynamicalSystem(ds)
        beads.append(ds)
    inters = []
    rels = []
    nsl = sk.NewtonImpactNSL(e)
    # ground: y = q_0 - R
    rel = sk.LagrangianLinearTIR(np.array([[1.0]]), np.array([-R]))
    ground = sk.Interaction(nsl, rel)
    nsds.link(ground, beads[0])
    inters.append(("ground", ground))
    rels.append(rel)
    # contact i: y = q_i - q_{i-1} - 2R, over (q_{i-1}, q_i)
    for i in range(1, n):
        rel = sk.LagrangianLinearTIR(np.array([[-1.0, 1.0]]), np.array([-2.0 * R]))
        inter = sk.Interaction(nsl, rel)
        nsds.link(inter, beads[i - 1], beads[i])
        inters.append(("contact%d" % i, inter))
        rels.append(rel)
    osi = sk.MoreauJeanOSI(p["theta"])
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, p["h"]), osi, sk.LCP())
    cols = []
    for i, ds in enumerate(beads):
        cols += _lagrangian_columns("bead%d" % i, ds, 1)
    for name, inter in inters:
        cols += _interaction_columns(name, inter, 1, 1)
    return Case(nsds, sim, cols, (beads, inters, rels, nsl, osi))


CASES = {
    "bouncing_ball": lambda: build_bouncing_ball(-BALL["R"]),
    "bouncing_ball_siconos_ref": lambda: build_bouncing_ball(0.0),
    "diode_bridge": build_diode_bridge,
    "relay": build_relay,
    "beads_column_falling_10": lambda: build_beads(10, 0.01),
    "beads_column_resting_10": lambda: build_beads(10, 0.0),
    "beads_column_resting_overlap_10": lambda: build_beads(10, -1e-12),
}


# --------------------------------------------------------------------------
# running and writing
# --------------------------------------------------------------------------

def run_case(name):
    """Returns (header, rows, info) with rows a list of lists of floats."""
    case = CASES[name]()
    sim = case.sim
    sim.initialize()
    header = ["t"] + [c[0] for c in case.columns]
    row0 = [float(sim.startingTime())]
    for _, get in case.columns:
        # lambda is 0 at t = 0 (nothing solved yet); y is what initialize() computed
        row0.append(float(get()))
    rows = [row0]
    t0 = time.perf_counter()
    steps = 0
    while sim.hasNextEvent():
        sim.computeOneStep()
        row = [float(sim.nextTime())]
        for _, get in case.columns:
            row.append(float(get()))
        rows.append(row)
        sim.nextStep()
        steps += 1
    elapsed = time.perf_counter() - t0
    info = {"steps": steps, "seconds": elapsed}
    return header, rows, info


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(repr(float(x)) for x in r) + "\n")


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [[float(x) for x in line.split(",")] for line in f if line.strip()]
    return header, rows


def read_ref(path):
    with gzip.open(path, "rt") as f:
        nr, nc = (int(x) for x in f.readline().split())
        rows = [[float(x) for x in line.split()] for line in f if line.strip()]
    return nr, nc, rows


# The columns of Siconos' regression outputs, expressed with our columns.
# result.ref.gz: t, q[0], v[0], p(1)[0] (= H^T lambda(1), first entry), lambda(1)[0]
# diode_bridge.ref.gz: t, v_L, i_L, i_DR1 = y[0], v_DR1 = -lambda[0],
#                      v_DF2 = -lambda[1], i_DF1 = lambda[2], i_R = y[0] + lambda[2]
REF_COLUMNS = {
    "bouncing_ball_siconos_ref": ("result.ref.gz", [
        ("t", lambda c: c["t"]),
        ("q[0]", lambda c: c["ball.q[0]"]),
        ("v[0]", lambda c: c["ball.v[0]"]),
        ("p(1)[0] = lambda(1)[0]", lambda c: c["floor.lambda[0]"]),
        ("lambda(1)[0]", lambda c: c["floor.lambda[0]"]),
    ]),
    "diode_bridge": ("diode_bridge.ref.gz", [
        ("t", lambda c: c["t"]),
        ("v_L = x[0]", lambda c: c["circuit.x[0]"]),
        ("i_L = x[1]", lambda c: c["circuit.x[1]"]),
        ("i_DR1 = y[0]", lambda c: c["diodes.y[0]"]),
        ("v_DR1 = -lambda[0]", lambda c: -c["diodes.lambda[0]"]),
        ("v_DF2 = -lambda[1]", lambda c: -c["diodes.lambda[1]"]),
        ("i_DF1 = lambda[2]", lambda c: c["diodes.lambda[2]"]),
        ("i_R = y[0] + lambda[2]", lambda c: c["diodes.y[0]"] + c["diodes.lambda[2]"]),
    ]),
}


def compare_with_ref(name, header, rows, ref_dir, out=sys.stdout):
    fname, cols = REF_COLUMNS[name]
    path = os.path.join(ref_dir, fname)
    if not os.path.exists(path):
        out.write("  %s: %s not found, skipped\n" % (name, path))
        return None
    nr, nc, ref = read_ref(path)
    idx = {h: i for i, h in enumerate(header)}
    n = min(len(rows), len(ref))
    out.write("  %s vs %s: %d rows here, %d rows in the file (header says %d x %d); "
              "first %d rows compared\n" % (name, fname, len(rows), len(ref), nr, nc, n))
    worst = 0.0
    for j, (label, f) in enumerate(cols):
        d = 0.0
        at = 0
        for k in range(n):
            val = f(_RowView(rows[k], idx))
            dk = abs(val - ref[k][j])
            if dk > d:
                d, at = dk, k
        worst = max(worst, d)
        out.write("    col %d %-26s max |diff| = %.3e (row %d)\n" % (j, label, d, at))
    return worst


class _RowView:
    def __init__(self, row, idx):
        self.row = row
        self.idx = idx

    def __getitem__(self, key):
        return self.row[self.idx[key]]


def siconos_version():
    try:
        v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-siconos"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
        if v:
            return "Debian python3-siconos %s" % v
    except OSError:
        pass
    return "version unknown"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(here, "examples"))
    ap.add_argument("--only", default=None, help="regex on case names")
    ap.add_argument("--data", default=os.path.normpath(os.path.join(repo, "..", "shared", "data")),
                    help="directory holding siconos-ref/ (default ../shared/data)")
    ap.add_argument("--no-ref-check", action="store_true")
    ap.add_argument("--check-only", action="store_true",
                    help="do not run Siconos; compare the CSV files in --out-dir with siconos-ref")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()

    names = [n for n in CASES if args.only is None or re.search(args.only, n)]
    if args.list:
        print("\n".join(CASES))
        return 0
    ref_dir = os.path.join(args.data, "siconos-ref")
    if args.check_only:
        for name in names:
            if name in REF_COLUMNS:
                header, rows = read_csv(os.path.join(args.out_dir, name + ".csv"))
                compare_with_ref(name, header, rows, ref_dir)
        return 0

    os.makedirs(args.out_dir, exist_ok=True)
    t_all = time.perf_counter()
    results = {}
    for name in names:
        t0 = time.perf_counter()
        header, rows, info = run_case(name)
        path = os.path.join(args.out_dir, name + ".csv")
        write_csv(path, header, rows)
        results[name] = (header, rows)
        print("%-28s %6d steps, %3d columns, simulation %.2f s, total %.2f s -> %s"
              % (name, info["steps"], len(header), info["seconds"], time.perf_counter() - t0,
                 os.path.relpath(path)))
    print("all cases: %.1f s (%s)" % (time.perf_counter() - t_all, siconos_version()))
    if not args.no_ref_check:
        print("comparison with Siconos' regression outputs (%s):" % ref_dir)
        for name in names:
            if name in REF_COLUMNS:
                compare_with_ref(name, *results[name], ref_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
