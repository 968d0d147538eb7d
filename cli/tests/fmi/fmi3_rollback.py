"""Rolls an FMI 3.0 FMU back to states saved at its events and prints what
the host saw as JSON (cli/tests/cli_fmu3.rs).

usage: fmi3_rollback.py FMU STEP STOP

A host with event mode and early return (FMPy's FMU3Slave, called
directly) runs the FMU to STOP, one record per return of fmi3DoStep (the
time reached, early or not, event or not, the outputs). It saves the FMU
state at the first three early returns (events: impacts, sampling
instants) and at the return just before the third one, and at the middle
of the run. Then, for each saved state (every other one through
fmi3SerializeFMUState and back), it restores it and runs to STOP again:
"rollbacks" lists, per state, the index of the record it was saved at and
the records of the rerun, which must equal the first run's records after
that index. The state saved at the first early return *before* its event
handling (the left limit of the event, its update pending) is restored
too: "left" gives the outputs read right after restoring it (equal to that
record's) and the records of the rerun, event handling first.
"""
import json
import shutil
import sys

from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

path, step, stop = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
md = read_model_description(path)
unzipdir = extract(path)
fmu = FMU3Slave(
    guid=md.guid,
    unzipDirectory=unzipdir,
    modelIdentifier=md.coSimulation.modelIdentifier,
    instanceName="rollback",
)
fmu.instantiate(eventModeUsed=True, earlyReturnAllowed=True)
outputs = [v for v in md.modelVariables if v.causality == "output"]
vrs = [v.valueReference for v in outputs]


def handle_events(enter=True):
    if enter:
        fmu.enterEventMode()
    need = True
    while need:
        need, _, _, _, _, _ = fmu.updateDiscreteStates()
    fmu.enterStepMode()


fmu.enterInitializationMode(startTime=0.0, stopTime=stop)
fmu.exitInitializationMode()
# With event mode used, initialization ends in event mode.
handle_events(enter=False)


left = []


def run(t, k, save=None):
    """Runs from (t, k) to stop; `save(index, t, k)` after each return;
    with `save`, the state at the first early return's left limit is kept
    in `left`."""
    records = []
    while t < stop - 1e-12:
        target = (k + 1) * step
        event, _, early, t_last = fmu.doStep(
            currentCommunicationPoint=t, communicationStepSize=target - t
        )
        t = t_last if early else target
        if not early:
            k += 1
        records.append(
            {"t": t, "early": bool(early), "event": bool(event), "y": fmu.getFloat64(vrs)}
        )
        if save is not None and early and not left:
            left.append((len(records) - 1, t, k, fmu.getFMUState()))
        if event:
            handle_events()
        if save is not None:
            save(len(records) - 1, records, t, k)
    return records


every = []


def save(index, records, t, k):
    every.append((index, t, k, fmu.getFMUState()))


first = run(0.0, 0, save)
early = [i for i, r in enumerate(first) if r["early"]][:3]
middle = [i for i, r in enumerate(first) if abs(r["t"] - stop / 2) < 1e-12]
chosen = sorted(set(early + [early[-1] - 1] + middle))
saved = [s for s in every if s[0] in chosen]
for s in every:
    if s[0] not in chosen:
        fmu.freeFMUState(s[3])
rollbacks = []
for n, (index, t, k, state) in enumerate(saved):
    if n % 2 == 1:
        data = fmu.serializeFMUState(state)
        restored = fmu.deserializeFMUState(bytes(data))
        fmu.setFMUState(restored)
        fmu.freeFMUState(restored)
    else:
        fmu.setFMUState(state)
    again = run(t, k)
    rollbacks.append({"at": index, "again": again})
# The left limit of the first early return, through bytes: the outputs
# there, then its event handled and the run repeated.
(index, t, k, state) = left[0]
data = fmu.serializeFMUState(state)
restored = fmu.deserializeFMUState(bytes(data))
fmu.setFMUState(restored)
fmu.freeFMUState(restored)
y_left = fmu.getFloat64(vrs)
handle_events()
again = run(t, k)
left_rollback = {"at": index, "y": y_left, "again": again}
fmu.freeFMUState(state)
for (_, _, _, state) in saved:
    fmu.freeFMUState(state)
fmu.terminate()
fmu.freeInstance()
shutil.rmtree(unzipdir, ignore_errors=True)
print(
    json.dumps(
        {
            "names": [v.name for v in outputs],
            "records": first,
            "rollbacks": rollbacks,
            "left": left_rollback,
        }
    )
)
