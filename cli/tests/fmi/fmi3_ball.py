"""Drives an FMI 3.0 FMU with FMPy's simulate_fmu and prints what the host
saw as JSON (cli/tests/cli_fmu3.rs).

usage: fmi3_ball.py FMU STEP STOP (events|plain)

events: use_event_mode=True, early_return_allowed=True; prints the number
of fmi3DoStep calls and every recorded row (time and outputs).
plain: neither; prints the rows.
"""
import json
import sys

import fmpy

fmu, step, stop, mode = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
calls = {"fmi3DoStep": 0, "fmi3UpdateDiscreteStates": 0}


def log_call(text):
    for name in calls:
        if text.startswith(name + "("):
            calls[name] += 1


events = mode == "events"
result = fmpy.simulate_fmu(
    fmu,
    stop_time=stop,
    output_interval=step,
    use_event_mode=events,
    early_return_allowed=events,
    fmi_call_logger=log_call,
)
names = list(result.dtype.names)
print(
    json.dumps(
        {
            "calls": calls,
            "names": names,
            "rows": [[float(row[n]) for n in names] for row in result],
        }
    )
)
