"""nonsmooth.run against the command line's CSV, the Result API, errors."""

import csv
import math
import subprocess
import threading
import time

import numpy as np
import pytest

import nonsmooth

from conftest import EXAMPLES


# The examples with [[fmus]] need their FMUs exported first:
# test_cosim.py runs them beside FMUs it exports.
SCENARIOS = sorted(p for p in EXAMPLES.glob("*.toml") if "[[fmus]]" not in p.read_text())

# Examples whose full run takes minutes are compared on a shortened run:
# the same overrides are given to the command line and to nonsmooth.run.
SHORTENED = {"spheres_in_box": {"spheres": 100, "t_end": 0.5}}


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_run_equals_the_command_line_csv(path, cli, tmp_path):
    events = tmp_path / "events.csv"
    overrides = SHORTENED.get(path.stem, {})
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]
    subprocess.run(
        [str(cli), "run", "-q", str(path), "--out", str(tmp_path), "--events", str(events)]
        + sets,
        check=True,
    )
    (csv_file,) = [p for p in tmp_path.glob("*.csv") if p != events]
    header, rows = read_csv(csv_file)
    r = nonsmooth.run(path, set=overrides)
    assert r.columns == header
    data = r.to_numpy()
    assert data.shape == (len(rows), len(header))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            # The CSV holds shortest round-trip texts: parsing gives the
            # exact number back.
            assert same(data[i, j], float(text)), (path.name, i, header[j], data[i, j], text)
    ev_header, ev_rows = read_csv(events)
    assert ev_header == ["t", "kind", "object"]
    assert len(r.events) == len(ev_rows)
    for (t, kind, obj), (tt, kk, oo) in zip(r.events, ev_rows):
        assert (t, kind, obj) == (float(tt), kk, oo)


def test_result_interface():
    path = EXAMPLES / "smc_double_integrator.toml"
    r = nonsmooth.run(path, set={"alpha": 2}, t_end=1.5)
    assert r.columns[0] == "t"
    assert "plant.x[0]" in r.columns
    assert r.t[0] == 0.0 and r.t[-1] == 1.5
    assert len(r) == len(r.t) == 1501
    np.testing.assert_array_equal(r["plant.x[0]"], r.to_numpy()[:, r.columns.index("plant.x[0]")])
    t, y = r
    np.testing.assert_array_equal(t, r.t)
    assert y.shape == (len(r.columns) - 1, len(t))
    np.testing.assert_array_equal(y[0], r["plant.x[0]"])
    df = r.to_pandas()
    assert list(df.columns) == r.columns
    np.testing.assert_array_equal(df["controller.sigma[0]"].to_numpy(), r["controller.sigma[0]"])
    with pytest.raises(KeyError, match="no column"):
        r["plant.z[0]"]
    # σ(0) = x₁ + x₂ = 1 reaches 0 at σ₀/α = 0.5 under the implicit law.
    sigma = r["controller.sigma[0]"]
    assert abs(sigma[r.t >= 0.5 + 1e-9]).max() <= 1e-9
    assert abs(sigma[r.t <= 0.49]).min() > 1e-3
    kinds = {k for _, k, _ in r.events}
    assert {"sensor", "actuator"} <= kinds


def test_text_scenarios_and_strategy():
    text = (EXAMPLES / "bouncing_ball.toml").read_text()
    a = nonsmooth.run(text)
    b = nonsmooth.run(EXAMPLES / "bouncing_ball.toml")
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    ed = nonsmooth.run(EXAMPLES / "bouncing_ball.toml", strategy="event-driven")
    assert any(k == "impact" for _, k, _ in ed.events)


def test_a_bad_scenario_raises_with_file_line_and_message(tmp_path):
    bad = tmp_path / "bad.toml"
    text = (EXAMPLES / "bouncing_ball.toml").read_text().replace("[simulation]", "[simulation]\nbogus = 1", 1)
    bad.write_text(text)
    line = text.splitlines().index("bogus = 1") + 1
    with pytest.raises(nonsmooth.ScenarioError) as e:
        nonsmooth.run(bad)
    assert e.value.file == str(bad)
    assert e.value.line == line
    assert "unknown field `bogus`" in e.value.message
    assert str(e.value).startswith(f"{bad}:{line}:")
    with pytest.raises(nonsmooth.ScenarioError, match="no_such"):
        nonsmooth.run(EXAMPLES / "bouncing_ball.toml", set={"no_such": 1})
    with pytest.raises(nonsmooth.ScenarioError, match="cannot read"):
        nonsmooth.run(tmp_path / "missing.toml")
    with pytest.raises(nonsmooth.ScenarioError, match="strategy"):
        nonsmooth.run(EXAMPLES / "bouncing_ball.toml", strategy="sideways")


def test_scenario_parameters_and_validation():
    s = nonsmooth.Scenario.load(EXAMPLES / "smc_double_integrator.toml")
    assert "alpha" in s.parameter_names
    p = s.parameters()
    assert p["alpha"] == 1.0 and p["law"] == "smc_implicit"
    s.set(alpha=3, law="smc_explicit")
    p = s.parameters()
    assert p["alpha"] == 3.0 and p["law"] == "smc_explicit"
    assert s.validate()[0] == "t"
    with pytest.raises(nonsmooth.ScenarioError, match="no parameter `beta`"):
        s.set(beta=1)
    # The control period (0.01) is not a whole number of steps of 0.007.
    s.set(step=0.007)
    with pytest.raises(nonsmooth.ScenarioError) as e:
        s.validate()
    assert e.value.file.endswith("smc_double_integrator.toml")


def test_solve_lcp_matches_the_analytic_solution():
    # M = [[2, 1], [1, 2]], q = (-1, -1): both z > 0, w = 0, z = (1/3, 1/3).
    rep = nonsmooth.solve_lcp([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0])
    assert rep["status"] == "solved"
    np.testing.assert_allclose(rep["z"], [1 / 3, 1 / 3], atol=1e-14)
    np.testing.assert_allclose(rep["w"], [0, 0], atol=1e-14)
    assert rep["iterations"] >= 1 and rep["error"] <= 1e-12
    # q ≥ 0: z = 0, w = q.
    rep = nonsmooth.solve_lcp(np.eye(3), [1.0, 2.0, 3.0], solver="pgs")
    np.testing.assert_array_equal(rep["z"], [0, 0, 0])
    np.testing.assert_array_equal(rep["w"], [1, 2, 3])
    assert rep["solver"] == "pgs"
    with pytest.raises(ValueError, match="square"):
        nonsmooth.solve_lcp(np.ones((2, 3)), [1.0, 2.0])
    with pytest.raises(ValueError):
        nonsmooth.solve_lcp(np.eye(2), [1.0, 2.0], solver="nope")


def test_the_interpreter_runs_other_threads_during_a_simulation():
    """While a simulation runs in another thread, this thread keeps running
    Python code: the lock is released (a run holding it would stop this
    thread for the whole run)."""
    path = EXAMPLES / "smc_double_integrator.toml"
    window = {}

    def work():
        window["start"] = time.perf_counter()
        nonsmooth.run(path, t_end=1200.0, events=False)
        window["end"] = time.perf_counter()

    ticks = []
    th = threading.Thread(target=work)
    th.start()
    while th.is_alive():
        ticks.append(time.perf_counter())
    th.join()
    inside = [t for t in ticks if window["start"] < t < window["end"]]
    span = window["end"] - window["start"]
    assert span > 0.05, span
    assert len(inside) > 100, len(inside)
    stamps = [window["start"]] + inside + [window["end"]]
    assert max(b - a for a, b in zip(stamps, stamps[1:])) < span / 2


def test_solve_mlcp_and_relay_match_hand_solutions():
    # u free, v ≥ 0: 2u + v − 2 = 0, w = u + 2v + 1 ⊥ v. With v = 0:
    # u = 1, w = 2 ≥ 0, so (u, v) = (1, 0).
    rep = nonsmooth.solve_mlcp([[2.0, 1.0], [1.0, 2.0]], [-2.0, 1.0], n_eq=1)
    assert rep["status"] == "solved"
    np.testing.assert_allclose(rep["z"], [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(rep["w"][1], 2.0, atol=1e-12)
    # M = I: z = clip(−q, lb, ub), w = z + q.
    q = np.array([-2.0, 0.5, 3.0])
    rep = nonsmooth.solve_relay(np.eye(3), q, [-1.0] * 3, [1.0] * 3)
    assert rep["status"] == "solved"
    np.testing.assert_allclose(rep["z"], [1.0, -0.5, -1.0], atol=1e-12)
    np.testing.assert_allclose(rep["w"], [-1.0, 0.0, 2.0], atol=1e-12)
    with pytest.raises(ValueError):
        nonsmooth.solve_relay(np.eye(2), [1.0, 2.0], [0.0], [1.0, 1.0])
