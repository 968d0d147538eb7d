"""Impact times a host sees from a bouncing-ball FMU under FMPy with event
mode and early return, against the analytic ones (docs/fmi.md, "FMI 3.0").

usage: impact_times.py FMU DROP RESTITUTION

An impact seen by the host: the lastSuccessfulTime of an fmi3DoStep whose
event handling reports valuesOfContinuousStatesChanged (the state jumped),
as FMPy's call logger prints them.
DROP is the fall height of the contact point, RESTITUTION e, g = 9.81; the
analytic impact n is at t1 + (2 v1/g) e (1 - e^(n-1)) / (1 - e), t1 =
sqrt(2 DROP / g), v1 = g t1. Prints the number of fmi3DoStep calls and, for
the first 20 impacts, the host's time and its error.
"""
import math
import sys

import fmpy

fmu, drop, e = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
g = 9.81
calls = [0]
seen = []
last_step = [None]


def field(text, name):
    return text.split(name + "=")[1].split(",")[0].split(")")[0]


def log_call(text):
    if text.startswith("fmi3DoStep("):
        calls[0] += 1
        last_step[0] = float(field(text, "lastSuccessfulTime"))
    elif text.startswith("fmi3UpdateDiscreteStates("):
        if field(text, "valuesOfContinuousStatesChanged") == "True" and last_step[0] is not None:
            if not seen or seen[-1] != last_step[0]:
                seen.append(last_step[0])


r = fmpy.simulate_fmu(
    fmu,
    stop_time=10,
    output_interval=0.1,
    use_event_mode=True,
    early_return_allowed=True,
    fmi_call_logger=log_call,
)
t1 = math.sqrt(2 * drop / g)
v1 = g * t1
print(f"fmi3DoStep calls: {calls[0]}; impacts seen: {len(seen)}")
worst = 0.0
for n, t in enumerate(seen[:20], start=1):
    exact = t1 + 2 * v1 / g * e * (1 - e ** (n - 1)) / (1 - e)
    worst = max(worst, abs(t - exact))
    print(f"impact {n:2d}: host {t:.15f}  analytic {exact:.15f}  error {t - exact:+.2e}")
print(f"largest error over the first {min(20, len(seen))}: {worst:.2e}")
