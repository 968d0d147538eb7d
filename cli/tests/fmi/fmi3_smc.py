"""Drives an FMI 3.0 FMU of a control loop as an event-mode host with
early return (FMPy's FMU3Slave, called directly) and prints what it saw as
JSON (cli/tests/cli_fmu3.rs).

usage: fmi3_smc.py FMU STEP STOP

Every return of fmi3DoStep is one record: the time reached, whether the
step returned early and whether it asked for event handling, and the
outputs ("y", read after fmi3DoStep: the left limit of an event); after
event handling the record gets the nextEventTime and
valuesOfContinuousStatesChanged reported by fmi3UpdateDiscreteStates and
the outputs read again ("y_after"). Then a rollback: the state saved at the
middle of the run (and serialized, and read back) is restored and the
second half run again; its records must be the same.
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
    instanceName="smc",
)
fmu.instantiate(eventModeUsed=True, earlyReturnAllowed=True)
outputs = [v for v in md.modelVariables if v.causality == "output"]
vrs = [v.valueReference for v in outputs]


def handle_events(record):
    fmu.enterEventMode() if record is not None else None
    need = True
    changed = False
    while need:
        need, terminate, _, values_changed, defined, t_next = fmu.updateDiscreteStates()
        changed = changed or values_changed
    if record is not None:
        record["next_event_time"] = t_next if defined else None
        record["values_changed"] = bool(changed)
        record["y_after"] = fmu.getFloat64(vrs)
    fmu.enterStepMode()
    return t_next if defined else None


fmu.enterInitializationMode(startTime=0.0, stopTime=stop)
fmu.exitInitializationMode()
first_next = handle_events(None)


def run(t, until, k0):
    records = []
    k = k0
    while t < until - 1e-12:
        target = (k + 1) * step
        event, terminate, early, t_last = fmu.doStep(
            currentCommunicationPoint=t, communicationStepSize=target - t
        )
        t = t_last if early else target
        if not early:
            k += 1
        record = {
            "t": t,
            "early": bool(early),
            "event": bool(event),
            "y": fmu.getFloat64(vrs),
            "next_event_time": None,
            "values_changed": None,
            "y_after": None,
        }
        if event:
            handle_events(record)
        records.append(record)
    return t, k, records


middle = round(stop / step / 2)
t, k, first = run(0.0, middle * step, 0)
state = fmu.getFMUState()
t, k2, second = run(t, stop, k)
# Back to the middle, through bytes, and again.
data = fmu.serializeFMUState(state)
restored = fmu.deserializeFMUState(data)
fmu.setFMUState(restored)
_, _, again = run(middle * step, stop, k)
fmu.freeFMUState(state)
fmu.freeFMUState(restored)
fmu.terminate()
fmu.freeInstance()
shutil.rmtree(unzipdir, ignore_errors=True)
print(
    json.dumps(
        {
            "names": [v.name for v in outputs],
            "first_next_event_time": first_next,
            "records": first + second,
            "again": again,
        }
    )
)
