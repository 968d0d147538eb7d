"""Drives an FMI 2.0 FMU with FMPy's simulate_fmu, logging on, and prints
as JSON what the host saw (cli/tests/cli_fmu3.rs): the rows at the
communication points, and the nonsmooth transitions the FMU located inside
its fmi2DoStep calls, as it logs them in the category logEvents
("impact of `floor` at t = 0.4515…", docs/fmi.md).

usage: fmi2_events.py FMU STEP STOP
"""
import json
import re
import sys

import fmpy

fmu, step, stop = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
pattern = re.compile(r"^(\w+) of `([^`]*)` at t = (\S+)$")
located = []


def logger(env, instance, status, category, message):
    if category == b"logEvents":
        m = pattern.match(message.decode())
        if m:
            located.append([float(m.group(3)), m.group(1), m.group(2)])


result = fmpy.simulate_fmu(
    fmu,
    stop_time=stop,
    output_interval=step,
    debug_logging=True,
    logger=logger,
)
names = list(result.dtype.names)
print(
    json.dumps(
        {
            "located": located,
            "names": names,
            "rows": [[float(row[n]) for n in names] for row in result],
        }
    )
)
