"""The sliding-mode loop as two FMUs exported by nonsmooth (a plant with its
sensor, a controller reading the measurement as inputs) connected in
libcosim: plant sensor.y[0..1] -> controller y0, y1; controller
controller.u[0] -> plant force; fixed communication step. Usage:
    python cosim_smc.py PLANT.fmu CONTROLLER.fmu STEP_NS STEPS OUT.csv
Writes, after each step: the step number, the plant's x[0], x[1], the
controller's u and sigma."""

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
assert ex.connect_real_variables(p, pv["sensor.y[0]"], c, cv["y0"]) == 0
assert ex.connect_real_variables(p, pv["sensor.y[1]"], c, cv["y1"]) == 0
assert ex.connect_real_variables(c, cv["controller.u[0]"], p, pv["force"]) == 0
obs = CosimObserver.create_last_value()
ex.add_observer(obs)
rows = []
for k in range(steps):
    assert ex.step(), f"step {k} failed"
    x0, x1 = obs.last_real_values(p, [pv["plant.x[0]"], pv["plant.x[1]"]])
    u, sigma = obs.last_real_values(c, [cv["controller.u[0]"], cv["controller.sigma[0]"]])
    rows.append((k + 1, x0, x1, u, sigma))
with open(out, "w") as fh:
    fh.write("step,x0,x1,u,sigma\n")
    for r in rows:
        fh.write(",".join(repr(x) for x in r) + "\n")
print(f"{len(rows)} steps")
