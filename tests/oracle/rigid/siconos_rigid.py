#!/usr/bin/python3
"""Reference runs of Siconos 4.4's mechanics (Bullet collision) for the
rigid-body tests of nonsmooth: collision/tests/siconos_rigid.rs.

Three scenes, each a free body on the static plane z = 0 (Bullet's
SiconosPlane), Moreau-Jean (theta = 1, Siconos' default activation),
FrictionContact(3) solved by NSGS to 1e-10, h = 1e-3, g = 9.81:

* rest:    a ball (r = 0.1, m = 2) placed at z = r, 1 s;
* sliding: the same ball thrown at v0 = 2 m/s along x without spin,
           mu = 0.3, 0.5 s (rolling from t* = 2 v0 / (7 mu g) = 0.194 s);
* cube:    a cube (half side 0.1, m = 8, I = m (2a)^2/6) dropped from
           z = 0.5 with a tilt (rotation vector (0.4, 0.6, 0.1)), v = (0.5, 0, 0),
           Omega = (3, -2, 6) (body frame), mu = 0.5, 3 s (as
           examples/cube_on_plane.toml).

Each writes <scene>.csv beside this file: t, x, y, z, qw, qx, qy, qz,
vx, vy, vz, wx, wy, wz (Omega in the body frame, as nonsmooth records it),
the normal impulse summed over the contacts, and the number of contacts;
every step for rest and sliding, every 10 steps for the cube. The mean
wall time per step is printed (--bench N runs the spheres-in-box scene of
collision/benches/spheres_in_box.rs with N spheres instead).

Run: /usr/bin/python3 tests/oracle/rigid/siconos_rigid.py
"""
import math
import os
import sys
import time

import numpy as np
import siconos.kernel as sk
import siconos.numerics as sn
from siconos.mechanics.collision.base import (SiconosContactor,
                                              SiconosContactorSet,
                                              SiconosPlane, SiconosSphere,
                                              SiconosBox)
from siconos.mechanics.collision.bodies import SphereNEDS, SphereNEDSPlanR
from siconos.mechanics.collision.bullet import (RigidBodyDS,
                                                SiconosBulletCollisionManager,
                                                SiconosBulletOptions)

G = 9.81
HERE = os.path.dirname(os.path.abspath(__file__))


def quat_from_rotvec(v):
    a = float(np.linalg.norm(v))
    if a == 0.0:
        return [1.0, 0.0, 0.0, 0.0]
    s = math.sin(a / 2) / a
    return [math.cos(a / 2), v[0] * s, v[1] * s, v[2] * s]


class Scene:
    """Bodies on the plane z = 0 with one friction law."""

    def __init__(self, mu, h, t_end, tolerance=1e-10, max_iter=2000):
        self.nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
        opts = SiconosBulletOptions()
        self.manager = SiconosBulletCollisionManager(opts)
        self.manager.insertNonSmoothLaw(
            sk.NewtonImpactFrictionNSL(0.0, 0.0, mu, 3), 0, 0)
        ground = SiconosContactorSet()
        ground.append(SiconosContactor(SiconosPlane()))
        self.manager.insertStaticContactorSet(ground, [0, 0, 0, 1, 0, 0, 0])
        self.osi = sk.MoreauJeanOSI(1.0)
        options = sk.solver_options_create(sn.SICONOS_FRICTION_3D_NSGS)
        options.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
        options.dparam[sn.SICONOS_DPARAM_TOL] = tolerance
        self.problem = sk.FrictionContact(3, options)
        self.problem.setKeepLambdaAndYState(True)
        self.h = h
        self.t_end = t_end
        self.bodies = []

    def add_sphere_native(self, r, q, v, mass, mu):
        """A ball on the plane z = 0 through Siconos' native sphere-plane
        relation (SphereNEDSPlanR: the analytic gap z - r), no detector."""
        body = SphereNEDS(r, mass, np.diag([0.4 * mass * r * r] * 3), list(q), list(v))
        body.setFExtPtr([0.0, 0.0, -mass * G])
        self.nsds.insertDynamicalSystem(body)
        law = sk.NewtonImpactFrictionNSL(0.0, 0.0, mu, 3)
        inter = sk.Interaction(law, SphereNEDSPlanR(r, 0.0, 0.0, 1.0, 0.0))
        self.nsds.link(inter, body)
        self.bodies.append(body)
        return body

    def add(self, shape, q, v, mass, inertia):
        body = RigidBodyDS(list(q), list(v), mass, np.diag(inertia))
        body.setUseContactorInertia(False)
        cs = SiconosContactorSet()
        cs.append(SiconosContactor(shape))
        body.setContactors(cs)
        body.setFExtPtr([0.0, 0.0, -mass * G])
        self.nsds.insertDynamicalSystem(body)
        self.bodies.append(body)
        return body

    def run(self, every, record, manager=True):
        sim = sk.TimeStepping(self.nsds, sk.TimeDiscretisation(0.0, self.h))
        sim.insertIntegrator(self.osi)
        sim.insertNonSmoothProblem(self.problem)
        if manager:
            sim.insertInteractionManager(self.manager)
        rows = [record(sim, 0.0)]
        k = 0
        start = time.perf_counter()
        while sim.hasNextEvent() and sim.nextTime() <= self.t_end + 0.5 * self.h:
            sim.computeOneStep()
            k += 1
            if k % every == 0:
                rows.append(record(sim, sim.nextTime()))
            sim.nextStep()
        elapsed = time.perf_counter() - start
        return rows, elapsed / max(k, 1)


def body_row(problem, t, body):
    """The body's state and the one-step problem's normal impulses."""
    q = np.array(body.q())
    v = np.array(body.velocity())
    n = problem.getSizeOutput() if t > 0 else 0
    lam = np.array(problem.z())[:n] if n > 0 else np.zeros(0)
    return [t] + list(q[:7]) + list(v[:6]) + [float(np.sum(lam[0::3])), n // 3]


HEADER = "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,impulse_n,contacts"


def write(name, rows):
    path = os.path.join(HERE, name + ".csv")
    with open(path, "w") as f:
        f.write(HEADER + "\n")
        for r in rows:
            f.write(",".join(repr(float(x)) for x in r) + "\n")
    return path


def ball(mu, v0, t_end, name):
    r, m = 0.1, 2.0
    s = Scene(mu, 1e-3, t_end)
    b = s.add_sphere_native(r, [0, 0, r, 1, 0, 0, 0], [v0, 0, 0, 0, 0, 0], m, mu)
    rows, per_step = s.run(1, lambda sim, t: body_row(s.problem, t, b), manager=False)
    print(f"{name}: {len(rows)} rows, {per_step * 1e6:.1f} us/step -> {write(name, rows)}")


def cube():
    a, m = 0.1, 8.0
    s = Scene(0.5, 1e-3, 3.0)
    q = [0.0, 0.0, 0.5] + quat_from_rotvec([0.4, 0.6, 0.1])
    i = m * (2 * a) ** 2 / 6.0
    box = SiconosBox(2 * a, 2 * a, 2 * a)
    # As siconos.io.mechanics_run sets them: Bullet's inside margin 2 % of
    # the smallest side, no outside margin.
    box.setInsideMargin(0.02 * 2 * a)
    box.setOutsideMargin(0.0)
    b = s.add(box, q, [0.5, 0, 0, 3, -2, 6], m, [i, i, i])
    rows, per_step = s.run(10, lambda sim, t: body_row(s.problem, t, b))
    print(f"cube: {len(rows)} rows, {per_step * 1e6:.1f} us/step -> {write('cube', rows)}")


def read_states(path, n):
    """The sphere states of a file written by the bench (STATE_OUT):
    body, x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz (omega in the
    body frame, as Siconos' NewtonEulerDS takes it), one row per sphere."""
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if data.shape != (n, 14) or list(data[:, 0]) != list(range(1, n + 1)):
        raise SystemExit(f"{path}: expected rows for bodies 1..{n}, got {data.shape}")
    return [(list(r[1:8]), list(r[8:14])) for r in data]


def spheres_in_box(n, warm=300, measured=100, tolerance=1e-4, max_iter=100,
                   init=None, per_step=None, storage="sparse-block"):
    """The scene of collision/benches/spheres_in_box.rs: n spheres
    (r = 0.05, 1000 kg/m^3) in ten layers on a lattice of pitch 0.11 in a
    box sqrt(n/10) spheres wide, random initial velocities in [-0.5, 0.5]
    (another generator than ours), mu = 0.3, h = 1e-3, NSGS to 1e-4 in at
    most 100 sweeps (or the given tolerance and sweeps), one Newton
    iteration per step; the floor and walls are static Bullet boxes.
    Prints the mean wall and CPU time of computeOneStep over the measured
    steps, with the NSGS sweeps and residual of each measured step.

    init: a file of sphere states written by the bench (STATE_OUT), used
    instead of the lattice and the random velocities (the same case as the
    bench's STATE_IN); per_step: a CSV file receiving one row per measured
    step (written as the run goes); storage: the one-step problem's W,
    "sparse-block" (as siconos.io.mechanics_run sets it for
    FrictionContact) or "dense" (the kernel's default, quadratic in the
    contacts)."""
    radius, spacing, rho = 0.05, 0.01, 1000.0
    per_row = math.ceil(math.sqrt(n / 10.0))
    width = per_row * (2 * radius + spacing) + spacing
    half = width / 2
    s = Scene(0.3, 1e-3, (warm + measured + 1) * 1e-3, tolerance=tolerance,
              max_iter=max_iter)
    walls = SiconosContactorSet()
    thick = 0.5
    for size, at in [((width + 2, width + 2, 2 * thick), (0, 0, -thick)),
                     ((2 * thick, width + 2, 40), (half + thick, 0, 20)),
                     ((2 * thick, width + 2, 40), (-half - thick, 0, 20)),
                     ((width + 2, 2 * thick, 40), (0, half + thick, 20)),
                     ((width + 2, 2 * thick, 40), (0, -half - thick, 20))]:
        box = SiconosBox(*size)
        walls.append(SiconosContactor(box, list(at) + [1, 0, 0, 0]))
    s.manager.insertStaticContactorSet(walls, [0, 0, 0, 1, 0, 0, 0])
    mass = rho * 4.0 / 3.0 * math.pi * radius ** 3
    rng = np.random.default_rng(1)
    pitch = 2 * radius + spacing
    start = -half + 0.5 * spacing + radius
    given = read_states(init, n) if init else None
    for i in range(n):
        layer, in_layer = divmod(i, per_row * per_row)
        iy, ix = divmod(in_layer, per_row)
        q = [start + ix * pitch, start + iy * pitch,
             radius + spacing + layer * pitch, 1, 0, 0, 0]
        v = list(rng.uniform(-0.5, 0.5, 3)) + [0, 0, 0]
        if given:
            q, v = given[i]
        s.add(SiconosSphere(radius), q, v, mass, [0.4 * mass * radius ** 2] * 3)
    s.problem.setMStorageType({"sparse-block": sn.NM_SPARSE_BLOCK,
                               "dense": sn.NM_DENSE}[storage])
    sim = sk.TimeStepping(s.nsds, sk.TimeDiscretisation(0.0, s.h))
    sim.insertIntegrator(s.osi)
    sim.insertNonSmoothProblem(s.problem)
    sim.insertInteractionManager(s.manager)
    # One contact solve per step, as ours (siconos.io.mechanics_run's
    # default allows 20 Newton iterations of the whole step).
    sim.setNewtonMaxIteration(1)
    total, cpu, contacts = 0.0, 0.0, 0
    out = open(per_step, "w") if per_step else None
    if out:
        out.write("step,wall_ms,cpu_ms,contacts,interactions,sweeps,residual\n")
    for k in range(warm + measured):
        t0, c0 = time.perf_counter(), time.process_time()
        sim.computeOneStep()
        t1, c1 = time.perf_counter(), time.process_time()
        if k >= warm:
            total += t1 - t0
            cpu += c1 - c0
            contacts += s.problem.getSizeOutput() // 3
            opts = s.problem.numericsSolverOptions()
            print(f"step {k}: {(t1 - t0) * 1e3:.1f} ms wall, {(c1 - c0) * 1e3:.1f} ms CPU, "
                  f"{s.problem.getSizeOutput() // 3} contacts, "
                  f"{opts.iparam[sn.SICONOS_IPARAM_ITER_DONE]} sweeps, "
                  f"residual {opts.dparam[sn.SICONOS_DPARAM_RESIDU]:.2e}", flush=True)
            if out:
                out.write(f"{k + 1},{(t1 - t0) * 1e3:.3f},{(c1 - c0) * 1e3:.3f},"
                          f"{s.problem.getSizeOutput() // 3},"
                          f"{s.nsds.getNumberOfInteractions()},"
                          f"{opts.iparam[sn.SICONOS_IPARAM_ITER_DONE]},"
                          f"{opts.dparam[sn.SICONOS_DPARAM_RESIDU]:.6e}\n")
                out.flush()
        elif k % 25 == 0:
            print(f"step {k}: {(t1 - t0) * 1e3:.1f} ms wall", flush=True)
        sim.nextStep()
    print(f"Siconos 4.4, N = {n}: {total / measured * 1e3:.3f} ms/step "
          f"(CPU {cpu / measured * 1e3:.3f} ms), {contacts / measured:.0f} contacts "
          f"per step (steps {warm}..{warm + measured})")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--bench":
        # --bench N [N ...] [--warm W] [--measured M] [--tol T] [--max-iter K]
        #         [--init STATES.csv] [--per-step OUT.csv]
        #         [--storage sparse-block|dense]
        args, opts = sys.argv[2:], {}
        while len(args) >= 2 and args[-2].startswith("--"):
            opts[args[-2]] = args[-1]
            args = args[:-2]
        for n in args:
            spheres_in_box(int(n), warm=int(opts.get("--warm", 300)),
                           measured=int(opts.get("--measured", 100)),
                           tolerance=float(opts.get("--tol", 1e-4)),
                           max_iter=int(opts.get("--max-iter", 100)),
                           init=opts.get("--init"), per_step=opts.get("--per-step"),
                           storage=opts.get("--storage", "sparse-block"))
        sys.exit(0)
    ball(0.0, 0.0, 1.0, "rest")
    ball(0.3, 2.0, 0.5, "sliding")
    cube()
