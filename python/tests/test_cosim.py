"""Co-simulation scenarios (files with [[fmus]]) from Python: nonsmooth.run,
the Scenario methods and sweeps, against the command line's CSV.

Each bundled example with [[fmus]] is copied into a temporary directory
with the FMUs its header exports (`nonsmooth fmu export`, run here by the
command line); the oracle of every run is `nonsmooth run` on that copy.
"""

import csv
import math
import re
import subprocess
from concurrent.futures import ProcessPoolExecutor

import pytest

import nonsmooth

from conftest import EXAMPLES, ROOT

COSIM = sorted(p for p in EXAMPLES.glob("*.toml") if "[[fmus]]" in p.read_text())
# The header line of an example that exports one of its FMUs.
EXPORT = re.compile(r"^#\s+cargo run --release -- fmu export (\S+) -o examples/(\S+\.fmu)\s*$", re.M)


def test_the_cosimulation_examples_are_found():
    assert {"fmu_plant_smc", "two_fmus"} <= {p.stem for p in COSIM}


def example(name, cli, directory):
    """Copies examples/<name> into `directory` beside the FMUs its header
    exports, exported there by the command line; returns the copy."""
    text = (EXAMPLES / name).read_text()
    exports = EXPORT.findall(text)
    assert exports, f"{name}: no `fmu export` line in its header"
    for scenario, fmu in exports:
        subprocess.run(
            [str(cli), "fmu", "export", str(ROOT / scenario), "-o", str(directory / fmu)],
            check=True,
            capture_output=True,
        )
    copy = directory / name
    copy.write_text(text)
    return copy


def cli_run(cli, scenario, out, *sets):
    """`nonsmooth run` of `scenario` with `--set` values: (header, rows as
    numbers, event rows)."""
    events = out / "events.csv"
    args = [str(cli), "run", "-q", str(scenario), "--out", str(out), "--events", str(events)]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)
    (table,) = [p for p in out.glob("*.csv") if p != events]
    with open(table, newline="") as f:
        rows = list(csv.reader(f))
    with open(events, newline="") as f:
        ev = list(csv.reader(f))
    assert ev[0] == ["t", "kind", "object"]
    return rows[0], [[float(x) for x in r] for r in rows[1:]], ev[1:]


def assert_same_run(r, header, rows, events):
    """The rows bit for bit (the CSV's shortest round-trip texts parse to
    the exact numbers) and the event log line for line."""
    assert r.columns == header
    data = r.to_numpy()
    assert data.shape == (len(rows), len(header))
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            assert data[i, j] == x or (math.isnan(x) and math.isnan(data[i, j])), (i, header[j], data[i, j], x)
    assert len(r.events) == len(events)
    for (t, kind, obj), (tt, kk, oo) in zip(r.events, events):
        assert (t, kind, obj) == (float(tt), kk, oo)


@pytest.mark.parametrize("path", COSIM, ids=[p.stem for p in COSIM])
def test_run_equals_the_command_line_csv(path, cli, tmp_path):
    scenario = example(path.name, cli, tmp_path)
    out = tmp_path / "out"
    header, rows, events = cli_run(cli, scenario, out)
    r = nonsmooth.run(scenario)
    assert_same_run(r, header, rows, events)
    # The FMUs were stepped: one communication event per FMU and step.
    assert any(k == "communication" for _, k, _ in r.events)
    assert r.steps > 0


def test_overrides_and_t_end_of_a_cosimulation(cli, tmp_path):
    scenario = example("fmu_plant_smc.toml", cli, tmp_path)
    # The option t_end=1.5 gives the run the `t_end = 1.5` parameter gives
    # (the parameter is the file's [simulation] t_end).
    header, rows, events = cli_run(cli, scenario, tmp_path / "out", "alpha=2", "t_end=1.5")
    r = nonsmooth.run(scenario, set={"alpha": 2}, t_end=1.5)
    assert_same_run(r, header, rows, events)
    assert r.t[-1] == 1.5
    # σ(0) = 1 reaches 0 at σ₀/α = 0.5 under the implicit law.
    sigma = r["controller.sigma[0]"]
    assert abs(sigma[r.t >= 0.5 + 1e-9]).max() <= 1e-9
    assert abs(sigma[r.t <= 0.49]).min() > 1e-3


def test_bad_options_of_a_cosimulation_are_scenario_errors(cli, tmp_path):
    scenario = example("fmu_plant_smc.toml", cli, tmp_path)
    with pytest.raises(nonsmooth.ScenarioError, match="time-stepping only"):
        nonsmooth.run(scenario, strategy="event-driven")
    with pytest.raises(nonsmooth.ScenarioError, match="t_end = -1"):
        nonsmooth.run(scenario, t_end=-1.0)
    with pytest.raises(nonsmooth.ScenarioError, match="no_such"):
        nonsmooth.run(scenario, set={"no_such": 1})
    # A missing FMU file: located at the [[fmus]] entry's path.
    (tmp_path / "double_integrator_plant.fmu").unlink()
    with pytest.raises(nonsmooth.ScenarioError, match="no FMU file") as e:
        nonsmooth.run(scenario)
    assert e.value.file == str(scenario)
    assert e.value.line == scenario.read_text().splitlines().index('path = "double_integrator_plant.fmu"') + 1


def test_scenario_methods_on_a_cosimulation(cli, tmp_path):
    scenario = example("fmu_plant_smc.toml", cli, tmp_path)
    header, rows, events = cli_run(cli, scenario, tmp_path / "out", "alpha=4", "t_end=1")
    s = nonsmooth.Scenario.load(scenario)
    assert s.parameter_names == ["alpha", "control_period", "t_end"]
    assert s.parameters() == {"alpha": 1.0, "control_period": 1e-2, "t_end": 5.0}
    s.set(alpha=4, t_end=1)
    assert s.parameters()["alpha"] == 4.0
    assert s.validate() == header
    assert_same_run(s.run(), header, rows, events)
    with pytest.raises(nonsmooth.ScenarioError, match=r"co-simulation.*cannot be exported") as e:
        s.export_fmu(tmp_path / "loop.fmu", library=__file__)
    assert e.value.line == scenario.read_text().splitlines().index("[[fmus]]") + 1
    assert not (tmp_path / "loop.fmu").exists()


def reaching_time(t, x, tol):
    """The first instant from which |x| ≤ tol to the end (NaN if the last
    value is outside): a hand-written walk back from the end."""
    first = math.nan
    for ti, xi in zip(reversed(t), reversed(x)):
        if abs(xi) > tol:
            break
        first = ti
    return first


def test_a_sweep_of_a_cosimulation_equals_separate_command_line_runs(cli, tmp_path):
    scenario = example("fmu_plant_smc.toml", cli, tmp_path)
    alphas = [0.5, 2.0, 4.0]
    metrics = {
        "s_end": nonsmooth.final("controller.sigma[0]"),
        "reach": nonsmooth.reaching_time("controller.sigma[0]", 1e-9),
        "u_late": nonsmooth.max_abs_after("controller.u[0]", 0.5),
    }
    with ProcessPoolExecutor(max_workers=2) as pool:
        table = nonsmooth.sweep(scenario, grid={"alpha": alphas}, metrics=metrics, t_end=2.5,
                                executor=pool, batch=2)
    assert table["error"].isna().all(), table["error"].tolist()
    for k, alpha in enumerate(alphas):
        header, rows, _ = cli_run(cli, scenario, tmp_path / f"a{k}", f"alpha={alpha}", "t_end=2.5")
        t = [r[0] for r in rows]
        s = [r[header.index("controller.sigma[0]")] for r in rows]
        u = [r[header.index("controller.u[0]")] for r in rows]
        assert table["s_end"][k] == s[-1]
        assert table["reach"][k] == reaching_time(t, s, 1e-9)
        assert table["u_late"][k] == max(abs(x) for x, ti in zip(u, t) if ti >= 0.5)
        # σ₀ = 1 is reached at σ₀/α (a whole number of control periods).
        assert abs(table["reach"][k] - 1 / alpha) <= 1e-12
    # A strategy the co-simulation cannot take: an error row per point.
    bad = nonsmooth.sweep(scenario, grid={"alpha": [1.0, 2.0]}, metrics=metrics,
                          strategy="event-driven", executor=None)
    assert all("time-stepping only" in e for e in bad["error"])
