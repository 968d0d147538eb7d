#!/usr/bin/python3
"""Siconos 4.4 reference runs of its control toolbox (module siconos.control).

Runs sampled sliding-mode and PID controllers of Siconos 4.4 (Debian package
python3-siconos 4.4.0+dfsg-2) with its ControlZOHSimulation (plant integrated
by the zero-order-hold integrator) and writes one CSV per case to
tests/oracle/control/<case>.csv, one row per control instant:

    t, x[0], x[1], u[0]

x is the plant state at the control instant (what the sensor reads, C = I or
C = [1 0]) and u the input the controller computed at that instant (held
until the next one).  Values are written with repr(float).

Cases (the Rust test controllers/tests/siconos_control.rs compares its runs
with the first five; docs/control.md explains the last two):

    smc_tutorial_implicit    Siconos' SMC tutorial plant: A = 0, x0 = (1, -1),
                             b(t) = (sin 50t, -sin 50t), B = (0, 2)^T, C = I,
                             C_s = [0 1], alpha = 1, theta = 0.5, h = 1e-4,
                             control period 1e-2, T = 1; LinearSMC
    smc_tutorial_explicit    the same with ExplicitLinearSMC
    smc_tutorial_ot2_b1      the same with LinearSMCOT2 and B = (0, 1)^T: the
                             only kind of B for which its gain is right (it uses
                             -1/(sum(C_s) h) in place of -(C_s Gamma)^{-1})
    smc_double_integrator    A = [[0, 1], [0, 0]], B = (0, 1)^T, x0 = (1, 0),
                             C_s = [1 1], alpha = 1, h = 1e-3, control period
                             1e-2, T = 2; LinearSMCimproved without perturbation
                             prediction (its equivalent control is the exact
                             zero-order-hold one)
    pid_comparable           double integrator, y = x[0], x0 = (1, 0.5),
                             reference 1 (so e_0 = 0: no derivative kick),
                             K = (0.25, 0.125, 2), control period 0.05, h = 0.01,
                             T = 20, PID.setDeltaT(0.05) called after
                             initialisation
    smc_tutorial_ot2         LinearSMCOT2 on the tutorial (B = (0, 2)^T): its gain
                             is twice too large there (documentation only)
    pid_default              x0 = (10, 0), reference 0, period 0.05, h = 0.01,
                             T = 20, no setDeltaT: Siconos' PID uses h as its
                             period and kicks at the first sample
                             (documentation only)

The tutorial's perturbation b(t) is given by overriding computeb; the
zero-order-hold integrator evaluates it at the end of each integration step
and holds it over the step (checked below: the first step moves x[0] by
h sin(50 h)).

Usage (from the repository root, with the system interpreter):

    /usr/bin/python3 tests/oracle/siconos_control.py [--out-dir DIR] [--only REGEX]

Written from scratch against the public Python API of Siconos; it contains
no Siconos source code.
"""

import argparse
import math
import os
import re
import sys

import numpy as np

from siconos.kernel import FirstOrderLinearDS
from siconos.control.simulation import ControlZOHSimulation
from siconos.control.sensor import LinearSensor
from siconos.control.controller import (
    PID,
    ExplicitLinearSMC,
    LinearSMC,
    LinearSMCOT2,
    LinearSMCimproved,
)

TUTORIAL = dict(x0=(1.0, -1.0), h=1e-4, hc=1e-2, T=1.0, cs=[[0.0, 1.0]], alpha=1.0, theta=0.5)
DOUBLE_INTEGRATOR = dict(x0=(1.0, 0.0), h=1e-3, hc=1e-2, T=2.0, cs=[[1.0, 1.0]], alpha=1.0)
PID_CASE = dict(K=(0.25, 0.125, 2.0), hc=0.05, h=0.01, T=20.0)


class PerturbedPlant(FirstOrderLinearDS):
    """x' = A x + b(t) with b(t) = (sin 50t, -sin 50t)."""

    def computeb(self, t):
        b = self.b()
        b[0] = math.sin(50.0 * t)
        b[1] = -math.sin(50.0 * t)


def run(ds, sensor_c, make_actuator, h, hc, T, after_init=None):
    sim = ControlZOHSimulation(0.0, T, h)
    sim.setSaveOnlyMainSimulation(True)
    sim.addDynamicalSystem(ds)
    sensor = LinearSensor(ds, np.array(sensor_c, dtype=float))
    sim.addSensor(sensor, hc)
    act = make_actuator(sensor)
    sim.addActuator(act, hc)
    sim.initialize()
    if after_init is not None:
        after_init(act)
    sim.run()
    data = np.array(sim.data())
    every = int(round(hc / h))
    rows = data[::every]
    for k, row in enumerate(rows):
        if abs(row[0] - k * hc) > 1e-9:
            raise RuntimeError("row %d is at t = %r, not a control instant" % (k, row[0]))
    return data, rows


def tutorial_plant(x0):
    ds = PerturbedPlant(list(x0), np.zeros((2, 2)))
    ds.setbPtr(np.zeros(2))
    return ds


def smc_tutorial(kind, b2):
    p = TUTORIAL

    def make(sensor):
        act = kind(sensor)
        act.setCsurface(p["cs"])
        act.setB(np.array([[0.0], [b2]]))
        if kind is not LinearSMCOT2:
            act.setAlpha(p["alpha"])
            act.setTheta(p["theta"])
        return act

    data, rows = run(tutorial_plant(p["x0"]), np.eye(2), make, p["h"], p["hc"], p["T"])
    if kind is LinearSMC:
        # b is held at its value at the end of the step.
        moved = data[1, 1] - data[0, 1]
        want = p["h"] * math.sin(50.0 * p["h"])
        assert abs(moved - want) < 1e-15, (moved, want)
    return rows


def smc_double_integrator():
    p = DOUBLE_INTEGRATOR
    ds = FirstOrderLinearDS(list(p["x0"]), np.array([[0.0, 1.0], [0.0, 0.0]]))

    def make(sensor):
        act = LinearSMCimproved(sensor)
        act.setCsurface(p["cs"])
        act.setB(np.array([[0.0], [1.0]]))
        act.setAlpha(p["alpha"])
        return act

    _, rows = run(ds, np.eye(2), make, p["h"], p["hc"], p["T"])
    return rows


def pid(x0, reference, set_period):
    p = PID_CASE
    ds = FirstOrderLinearDS(list(x0), np.array([[0.0, 1.0], [0.0, 0.0]]))

    def make(sensor):
        act = PID(sensor)
        act.setB(np.array([[0.0], [1.0]]))
        act.setK(np.array(p["K"]))
        act.setRef(reference)
        return act

    def after(act):
        if set_period:
            act.setDeltaT(p["hc"])

    _, rows = run(ds, [[1.0, 0.0]], make, p["h"], p["hc"], p["T"], after)
    return rows


CASES = {
    "smc_tutorial_implicit": lambda: smc_tutorial(LinearSMC, 2.0),
    "smc_tutorial_explicit": lambda: smc_tutorial(ExplicitLinearSMC, 2.0),
    "smc_tutorial_ot2_b1": lambda: smc_tutorial(LinearSMCOT2, 1.0),
    "smc_double_integrator": smc_double_integrator,
    "pid_comparable": lambda: pid((1.0, 0.5), 1.0, True),
    "smc_tutorial_ot2": lambda: smc_tutorial(LinearSMCOT2, 2.0),
    "pid_default": lambda: pid((10.0, 0.0), 0.0, False),
}


def write(path, rows):
    with open(path, "w") as f:
        f.write("t,x[0],x[1],u[0]\n")
        for row in rows:
            f.write(",".join(repr(float(v)) for v in row) + "\n")


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(root, "tests", "oracle", "control"))
    ap.add_argument("--only", default=None, help="regex on the case names")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, case in CASES.items():
        if args.only and not re.search(args.only, name):
            continue
        rows = case()
        path = os.path.join(args.out_dir, name + ".csv")
        write(path, rows)
        print("%-24s %5d rows -> %s" % (name, len(rows), os.path.relpath(path, root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
