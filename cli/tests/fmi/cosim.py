"""Two FMUs exported by nonsmooth (a plant and a controller) connected in
libcosim: plant.mass.q[0] -> controller.measured, controller.filter.x[1] ->
plant.force, fixed communication step. Usage:
    python cosim.py PLANT.fmu CONTROLLER.fmu STEP_NS STEPS OUT.csv
Writes t, plant q, plant v, controller force after each step."""

import sys

from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
from libcosimpy.CosimObserver import CosimObserver
from libcosimpy.CosimSlave import CosimLocalSlave

plant_fmu, ctrl_fmu, step_ns, steps, out = sys.argv[1:6]
step_ns, steps = int(step_ns), int(steps)
log_output_level(CosimLogLevel.WARNING)
ex = CosimExecution.from_step_size(step_size=step_ns)
p = ex.add_local_slave(CosimLocalSlave(fmu_path=plant_fmu, instance_name="plant"))
c = ex.add_local_slave(CosimLocalSlave(fmu_path=ctrl_fmu, instance_name="controller"))


def vrs(index):
    return {v.name.decode(): v.reference for v in ex.slave_variables(index)}


pv, cv = vrs(p), vrs(c)
assert ex.connect_real_variables(p, pv["mass.q[0]"], c, cv["measured"]) == 0
assert ex.connect_real_variables(c, cv["filter.x[1]"], p, pv["force"]) == 0
obs = CosimObserver.create_last_value()
ex.add_observer(obs)
rows = []
for k in range(steps):
    assert ex.step(), f"step {k} failed"
    q, v = obs.last_real_values(p, [pv["mass.q[0]"], pv["mass.v[0]"]])
    (f,) = obs.last_real_values(c, [cv["filter.x[1]"]])
    rows.append((k + 1, q, v, f))
with open(out, "w") as fh:
    fh.write("step,q,v,force\n")
    for r in rows:
        fh.write(",".join(repr(x) for x in r) + "\n")
print(f"{len(rows)} steps")
