#!/usr/bin/python3
"""Siconos 4.4 cost per time step of the boost converter's complementarity
system, open loop at duty D (the Siconos side of benches/circuits.rs).

The LCS is the one nonsmooth's modified nodal analysis gives for the
netlist of benches/circuits.rs (written out here by hand: the gated
switch S1 in voltage form, the diode D1 in current form):

    x = (i_L, v_C),  lambda = (-v_S + Vb (1 - u), i_D),  w = (i_S, -v_D + ...)
    L di/dt = V_in + lambda_1 - Vb (1 - u)
    C dv/dt = lambda_2 - v/R
    w_1 = i_L - lambda_2            (KCL at the switch node: i_S)
    w_2 = v + lambda_1 - Vb (1 - u) (reverse voltage of D1)

EulerMoreauOSI(theta = 1/2), LCP, h = 1e-7, 10 ms, PWM period 1e-5 s.
The gate changes b and e at the switching instants only.

Usage: /usr/bin/python3 benches/siconos/boost_open_loop.py [--T 0.01] [--repeat 3]
Prints steps, seconds, microseconds per step and the final state.
"""
import argparse
import os
import time

# One BLAS thread: the threaded BLAS makes these 2 × 2 problems several
# times slower (docs/simulation-benchmark.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import siconos.kernel as sk

V_IN, L, C, R, VB = 10.0, 1e-4, 1e-4, 20.0, 100.0
H, PERIOD, DUTY = 1e-7, 1e-5, 0.5


def run(t_end):
    steps_per_period = round(PERIOD / H)
    on = round(DUTY * steps_per_period)
    A = np.array([[0.0, 0.0], [0.0, -1.0 / (R * C)]])
    ds = sk.FirstOrderLinearDS([0.0, 0.0], A)
    b = np.array([V_IN / L, 0.0])
    ds.setbPtr(b)
    Cm = np.array([[1.0, 0.0], [0.0, 1.0]])
    Bm = np.array([[1.0 / L, 0.0], [0.0, 1.0 / C]])
    D = np.array([[0.0, -1.0], [1.0, 0.0]])
    rel = sk.FirstOrderLinearTIR(Cm, Bm)
    rel.setDPtr(D)
    e = np.array([0.0, 0.0])
    rel.setePtr(e)
    inter = sk.Interaction(sk.ComplementarityConditionNSL(2), rel)
    nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
    nsds.insertDynamicalSystem(ds)
    nsds.link(inter, ds)
    osi = sk.EulerMoreauOSI(0.5)
    td = sk.TimeDiscretisation(0.0, H)
    sim = sk.TimeStepping(nsds, td, osi, sk.LCP())

    def gate(u):
        off = VB * (1.0 - u)
        ds.b()[0] = (V_IN - off) / L
        rel.e()[1] = -off

    sim.initialize()
    k = 0
    gate(1.0)
    start = time.perf_counter()
    while sim.hasNextEvent():
        phase = k % steps_per_period
        if phase == 0:
            gate(1.0)
        elif phase == on:
            gate(0.0)
        sim.computeOneStep()
        sim.nextStep()
        k += 1
    elapsed = time.perf_counter() - start
    return k, elapsed, ds.x().copy()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--T", type=float, default=1e-2)
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args()
    best = None
    for _ in range(a.repeat):
        k, s, x = run(a.T)
        best = s if best is None else min(best, s)
    print(f"siconos boost open loop: {k} steps in {best:.3f} s "
          f"({1e6 * best / k:.2f} us/step); x(T) = i_L {x[0]:.9g}, v_C {x[1]:.9g}")


if __name__ == "__main__":
    main()
