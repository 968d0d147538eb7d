"""Rollback of any FMU exported by nonsmooth through fmpy's FMU2Slave: get
the state, step, set the state, step again -> identical outputs (every
output, compared exactly); the state serialized and read by another
instance gives the same steps. Usage:
    python rollback.py FILE.fmu STEP N M
(N steps of STEP before the save, M after). Prints one line per check and
"N passed, M failed"; exits 1 on failure."""

import sys

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

fmu, H, N, M = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
md = read_model_description(fmu)
unzipdir = extract(fmu)
outputs = [v.valueReference for v in md.modelVariables if v.causality == "output"]
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok: " if ok else "FAILED: ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


def make(name):
    s = FMU2Slave(
        guid=md.guid,
        unzipDirectory=unzipdir,
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=name,
    )
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    return s


def run(s, k0, n):
    rows = []
    for k in range(k0, k0 + n):
        s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        rows.append(s.getReal(outputs))
    return rows


a = make("a")
run(a, 0, N)
state = a.getFMUstate()
first = run(a, N, M)
check(len(set(tuple(r) for r in first)) > 1, f"the outputs change over the {M} steps after the save")
a.setFMUstate(state)
again = run(a, N, M)
check(again == first, "rolled-back steps are bit-identical")

data = a.serializeFMUstate(state)
check(len(data) > 0, f"serialized state ({len(data)} bytes)")
b = make("b")
s2 = b.deSerializeFMUstate(data)
b.setFMUstate(s2)
check(run(b, N, M) == first, "a deserialized state in another instance gives the same steps")
a.freeFMUstate(state)
b.freeFMUstate(s2)
for s in (a, b):
    s.terminate()
    s.freeInstance()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
