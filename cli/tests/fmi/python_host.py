"""An FMI 2.0 host in Python (fmpy's FMU2Slave) for an FMU exported from
examples/bouncing_ball.toml: rollback (get state, step, set state, step
again -> identical outputs), serialized states read by another instance, a
tunable parameter and an input rolled back with the state, and several
instances in one process. Usage: python python_host.py FILE.fmu
Prints one line per check and "N passed, M failed"; exits 1 on failure."""

import sys

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

fmu = sys.argv[1]
md = read_model_description(fmu)
unzipdir = extract(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
outputs = [v.valueReference for v in md.modelVariables if v.causality == "output"]
H = 0.005
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok: " if ok else "FAILED: ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


def make(name, **params):
    s = FMU2Slave(
        guid=md.guid,
        unzipDirectory=unzipdir,
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=name,
    )
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    for k, x in params.items():
        s.setReal([vr[k]], [x])
    s.enterInitializationMode()
    s.exitInitializationMode()
    return s


def run(s, t, n):
    rows = []
    for _ in range(n):
        s.doStep(currentCommunicationPoint=t, communicationStepSize=H)
        t += H
        rows.append(s.getReal(outputs))
    return t, rows


# Rollback across the first impact (t ~ 0.43 s), with an input and a
# tunable parameter changed after the save.
a = make("a")
t, _ = run(a, 0.0, 70)
a.setReal([vr["push"]], [2.0])
state = a.getFMUstate()
t_after, first = run(a, t, 60)
check(any(r[outputs.index(vr["floor.lambda[0]"])] > 0 for r in first), "an impact happens in the window")
a.setReal([vr["push"]], [-5.0])
a.setReal([vr["restitution"]], [0.3])
a.setFMUstate(state)
check(a.getReal([vr["push"], vr["restitution"]]) == [2.0, 0.9], "input and tunable parameter restored")
_, again = run(a, t, 60)
check(again == first, "rolled-back steps are bit-identical")

# Serialized, then read by another instance.
data = a.serializeFMUstate(state)
check(len(data) > 0, f"serialized state ({len(data)} bytes)")
b = make("b")
s2 = b.deSerializeFMUstate(data)
b.setFMUstate(s2)
_, from_bytes = run(b, t, 60)
check(from_bytes == first, "a deserialized state in another instance gives the same steps")
a.freeFMUstate(state)
b.freeFMUstate(s2)

# Several instances in one process, interleaved, equal separate runs.
c = make("c", restitution=0.5)
d = make("d")
tc = td = 0.0
rc, rd = [], []
for _ in range(200):
    tc, r = run(c, tc, 1)
    rc += r
    td, r = run(d, td, 1)
    rd += r
e = make("e", restitution=0.5)
_, re_ = run(e, 0.0, 200)
f = make("f")
_, rf = run(f, 0.0, 200)
check(rc == re_ and rd == rf and rc != rd, "interleaved instances equal separate runs")

for s in (a, b, c, d, e, f):
    s.terminate()
    s.freeInstance()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
