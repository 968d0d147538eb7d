"""Sweeps: the reaching time of implicit sliding mode against σ₀/α, the
same table from a process pool and a Dask cluster, error rows."""

import json
import math
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import nonsmooth

from conftest import EXAMPLES

SMC = EXAMPLES / "smc_double_integrator.toml"
ALPHAS = [0.5, 1.0, 2.0, 4.0, 5.0]
PERIODS = [1e-2, 5e-3, 2e-3]
METRICS = {
    "reach": nonsmooth.reaching_time("controller.sigma[0]", 1e-9),
    "sigma_end": nonsmooth.final("controller.sigma[0]"),
    "sigma_max_late": nonsmooth.max_abs_after("controller.sigma[0]", 2.5),
}


def sweep(executor=None, **kw):
    return nonsmooth.sweep(
        SMC,
        grid={"alpha": ALPHAS, "control_period": PERIODS},
        metrics=METRICS,
        executor=executor,
        set={"t_end": 3},
        **kw,
    )


def test_reaching_time_is_sigma0_over_alpha():
    table = sweep()
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["alpha", "control_period", "reach", "sigma_end", "sigma_max_late", "error"]
    assert len(table) == len(ALPHAS) * len(PERIODS)
    # The grid in order, the first name varying slowest.
    assert table["alpha"].tolist() == [a for a in ALPHAS for _ in PERIODS]
    assert table["control_period"].tolist() == PERIODS * len(ALPHAS)
    assert table["error"].isna().all()
    # x(0) = (1, 0), σ = x₁ + x₂: σ₀ = 1, reached at σ₀/α (every σ₀/α here
    # is a whole number of control periods).
    for _, row in table.iterrows():
        assert abs(row["reach"] - 1.0 / row["alpha"]) <= 1e-12, row
        assert abs(row["sigma_end"]) <= 1e-9
        assert row["sigma_max_late"] <= 1e-9


def test_process_pool_and_dask_give_identical_tables():
    from dask.distributed import Client, LocalCluster

    with ProcessPoolExecutor(max_workers=2) as pool:
        a = sweep(pool, batch=4)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True) as cluster:
        with Client(cluster) as client:
            b = sweep(client.get_executor(), batch=3)
    c = sweep(ThreadPoolExecutor(2), batch=1)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(a, c, check_exact=True)
    # Bit-identical, not only equal within a tolerance.
    for col in ["reach", "sigma_end", "sigma_max_late"]:
        assert a[col].to_numpy().tobytes() == b[col].to_numpy().tobytes()


def test_dask_runs_every_batch_even_when_batches_repeat():
    # Eight identical points in batches of two: four tasks with the same
    # points. Dask merges tasks with equal arguments (pure tasks keyed by
    # their arguments); the sweep's tasks must stay distinct, and all four
    # must run.
    from dask.distributed import Client, LocalCluster, get_task_stream

    samples = [{"alpha": 2.0, "control_period": 1e-2}] * 8
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True) as cluster:
        with Client(cluster) as client:
            with get_task_stream(client) as ts:
                table = nonsmooth.sweep(SMC, samples=samples, metrics=METRICS,
                                        executor=client.get_executor(), batch=2, set={"t_end": 3})
            keys = {t["key"] for t in ts.data if "run_batch" in str(t["key"])}
    assert len(keys) == 4, keys
    assert len(table) == 8 and table["error"].isna().all()
    assert (table["reach"] == 0.5).all()


def sigma_at_one(result):
    """A callable metric (module-level: picklable for process pools)."""
    t = result.t
    return float(result["controller.sigma[0]"][np.searchsorted(t, 1.0)])


def test_a_bad_point_is_an_error_row_and_the_rest_complete():
    samples = [
        {"alpha": 2.0},
        {"alpha": 2.0, "no_such_parameter": 1.0},
        {"alpha": "nonsense + 1"},
        {"alpha": 1.0, "step": 0.007},
        {"alpha": 4.0},
    ]
    with ProcessPoolExecutor(max_workers=2) as pool:
        table = nonsmooth.sweep(
            SMC,
            samples=samples,
            metrics={"reach": METRICS["reach"], "s1": sigma_at_one},
            executor=pool,
            batch=2,
            set={"t_end": 2},
        )
    assert len(table) == 5
    ok = table["error"].isna().tolist()
    assert ok == [True, False, False, False, True]
    assert "no_such_parameter" in table["error"][1]
    assert "nonsense" in table["error"][2]
    assert math.isnan(table["reach"][1]) and math.isnan(table["s1"][3])
    assert table["reach"][0] == 0.5 and table["reach"][4] == 0.25
    # σ at t = 1 is in the band once reached (implicit law).
    assert abs(table["s1"][0]) <= 1e-9
    # Parameters absent from a sample are empty cells.
    assert pd.isna(table["no_such_parameter"][0])


def test_samples_from_seed_sequences_reproduce():
    seeds = np.random.SeedSequence(1234).spawn(6)
    samples = [{"alpha": float(np.random.default_rng(s).uniform(0.5, 4.0))} for s in seeds]
    a = nonsmooth.sweep(SMC, samples=samples, metrics={"reach": METRICS["reach"]}, set={"t_end": 2.5},
                        strategy="time-stepping")
    for alpha, reach in zip(a["alpha"], a["reach"]):
        # Reaching happens at the first control instant from which σ stays
        # in the band: within one control period after σ₀/α.
        assert 1.0 / alpha - 1e-12 <= reach <= 1.0 / alpha + 1e-2 + 1e-12, (alpha, reach)


def test_bad_sweep_arguments():
    with pytest.raises(ValueError):
        nonsmooth.sweep(SMC, metrics={})
    with pytest.raises(TypeError):
        nonsmooth.sweep(SMC, grid={"alpha": [1]}, metrics={"x": 3})


def test_sweep_equals_separate_runs_bit_for_bit():
    # A batch reads the scenario once and runs each point on a copy of it:
    # every metric equals the one computed by hand on a separate
    # nonsmooth.run of the point, bit for bit. Samples name different
    # parameters: a point without `law` or `alpha` has the file's value,
    # not the previous point's.
    samples = [
        {"alpha": 2.0, "law": "smc_explicit"},
        {"control_period": 5e-3},
        {"alpha": "3 * control_period * 100"},
        {"law": "smc_implicit", "alpha": 4.0},
        {},
        {"alpha": 0.75, "law": "smc_explicit", "control_period": 2e-3},
    ]
    metrics = {
        "reach": nonsmooth.reaching_time("controller.sigma[0]", 1e-9),
        "sigma_end": nonsmooth.final("controller.sigma[0]"),
        "late": nonsmooth.max_abs_after("controller.sigma[0]", 1.0),
    }
    table = nonsmooth.sweep(SMC, samples=samples, metrics=metrics, executor=ThreadPoolExecutor(1),
                            batch=len(samples), set={"t_end": 2.0})
    assert table["error"].isna().all(), table["error"].tolist()
    for k, p in enumerate(samples):
        r = nonsmooth.run(SMC, set={"t_end": 2.0, **p}, events=False)
        t, s = r.t, r["controller.sigma[0]"]
        reach = math.nan
        for ti, si in zip(t[::-1], s[::-1]):
            if abs(si) > 1e-9:
                break
            reach = ti
        late = max(abs(x) for x, ti in zip(s, t) if ti >= 1.0)
        expected = {"reach": reach, "sigma_end": s[-1], "late": late}
        for name, x in expected.items():
            y = table[name][k]
            same = math.isnan(x) and math.isnan(y) or np.float64(y).tobytes() == np.float64(x).tobytes()
            assert same, (p, name, y, x)
    # The implicit law reaches the band (at σ₀/α, α = 1 from the file).
    assert table["reach"][1] == 1.0 and table["reach"][3] == 0.25


def test_points_travel_as_json_exactly_and_odd_values_still_run():
    # A batch goes to its task as JSON text: NumPy scalars and floats
    # that need all 17 digits must arrive as the same numbers, so the
    # table equals the one from plain Python floats bit for bit.
    alphas = [4.0 / 3.0, 2.0 ** 0.5, 1.0 + 0.1 + 0.2]
    plain = nonsmooth.sweep(SMC, samples=[{"alpha": a} for a in alphas], metrics=METRICS,
                            executor=ThreadPoolExecutor(1), set={"t_end": 3})
    numpy = nonsmooth.sweep(SMC, samples=[{"alpha": np.float64(a)} for a in alphas],
                            metrics=METRICS, executor=ThreadPoolExecutor(1), set={"t_end": 3})
    for col in ["reach", "sigma_end", "sigma_max_late"]:
        assert plain[col].to_numpy().tobytes() == numpy[col].to_numpy().tobytes()
    assert plain["error"].isna().all()
    # The reaching time still follows σ₀/α for these α (the test above's
    # oracle), so the points were not altered on the way.
    assert all(math.isfinite(r) for r in plain["reach"])
    # A value JSON cannot hold (a complex number) is sent as it is: the
    # run reports its own error row instead of the sweep failing.
    odd = nonsmooth.sweep(SMC, samples=[{"alpha": 1.0}, {"alpha": 1j}], metrics=METRICS,
                          executor=ThreadPoolExecutor(1), set={"t_end": 3})
    assert odd["error"].isna().tolist() == [True, False]


def test_rows_come_back_as_json_text_bit_for_bit():
    # A task returns its rows as one JSON text (Dask would otherwise
    # serialise the list row by row in the worker's event loop). The rows
    # read back must be the rows the runs gave, bit for bit, NaN and error
    # texts included.
    from nonsmooth._sweep import run_batch, run_batch_text

    text = SMC.read_text()
    points = [{"alpha": 4.0 / 3.0, "t_end": 3}, {"alpha": 2.0, "t_end": 1}, {"alpha": "1 +", "t_end": 3}]
    ms = list(METRICS.values())
    rows = run_batch(text, str(SMC), points, ms)
    sent = run_batch_text(text, str(SMC), points, ms)
    assert isinstance(sent, str)
    back = json.loads(sent)
    assert len(back) == len(rows) == 3
    # The second run ends before 2.5 s: its late maximum is NaN; the third
    # point is an error row.
    assert math.isnan(rows[1][0][2]) and rows[2][1] is not None
    for (v, e), (w, f) in zip(rows, back):
        assert e == f
        assert np.array(v, dtype=np.float64).tobytes() == np.array(w, dtype=np.float64).tobytes()


def test_default_batches_shrink_towards_the_end_and_cover_every_point():
    from nonsmooth._sweep import batch_sizes

    # Two workers, 10 000 points: rounds of two equal tasks, each round
    # half of what is left, down to ⌈n / 32w⌉ = 157 points.
    assert batch_sizes(10_000, 2) == [2500, 2500, 1250, 1250, 625, 625, 313, 313, 157, 157, 157, 153]
    for n in [1, 2, 3, 7, 31, 100, 999, 10_000, 12_345]:
        for w in [1, 2, 3, 8, 64]:
            sizes = batch_sizes(n, w)
            assert sum(sizes) == n and min(sizes) >= 1, (n, w, sizes)
            assert all(a >= b for a, b in zip(sizes, sizes[1:])), (n, w, sizes)
            # The first tasks hold a quarter of a worker's share (or
            # everything when there is less than one point per worker),
            # the last at most 1/32 of it.
            assert sizes[0] == min(n, math.ceil(n / (2 * w))), (n, w, sizes)
            assert sizes[-1] <= math.ceil(n / (32 * w)), (n, w, sizes)
    # A given batch: equal tasks, the last one shorter.
    assert batch_sizes(10, 2, 3) == [3, 3, 3, 1]
    assert batch_sizes(10, 2, 20) == [10]
    assert batch_sizes(0, 2) == []
    with pytest.raises(ValueError):
        batch_sizes(10, 2, 0)


# Points of the double integrator, two of them bad (an unknown parameter,
# an expression that does not parse), so that error rows fall inside tasks.
MIXED = [{"alpha": 0.5 + k / 8} for k in range(40)]
MIXED[5] = {"alpha": 2.0, "no_such_parameter": 1.0}
MIXED[33] = {"alpha": "1 +"}


def mixed_sweep(executor, **kw):
    return nonsmooth.sweep(SMC, samples=MIXED, metrics=METRICS, executor=executor,
                           set={"t_end": 1.5}, **kw)


def assert_same_table(a, b):
    assert list(a.columns) == list(b.columns)
    assert a["error"].tolist() == b["error"].tolist()
    for col in METRICS:
        assert a[col].to_numpy().tobytes() == b[col].to_numpy().tobytes(), col


class Staggered(ThreadPoolExecutor):
    """Runs every task at once, the later ones sooner: the futures complete
    in about the reverse of the order they were submitted in."""

    def __init__(self):
        super().__init__(max_workers=64)
        self.submitted = 0
        self.finished = []

    def submit(self, fn, *args):
        k = self.submitted
        self.submitted += 1

        def late():
            import time

            time.sleep(0.4 - 0.02 * k)
            out = fn(*args)
            self.finished.append(k)
            return out

        return super().submit(late)


def test_default_batches_and_out_of_order_completion_give_the_same_table():
    # The reference: every point in one task, in one thread.
    one = mixed_sweep(ThreadPoolExecutor(1), batch=len(MIXED))
    assert one["error"].isna().tolist() == [k not in (5, 33) for k in range(len(MIXED))]
    assert "no_such_parameter" in one["error"][5] and "1 +" in one["error"][33]
    # The default plan (tasks of decreasing size) on two workers.
    assert_same_table(mixed_sweep(ThreadPoolExecutor(2)), one)
    # Results that arrive last task first are still put back in the
    # order of the points.
    ex = Staggered()
    with ex:
        table = mixed_sweep(ex, batch=3)
    assert ex.submitted == 14 and sorted(ex.finished) == list(range(14))
    assert ex.finished != sorted(ex.finished), ex.finished
    assert_same_table(table, one)


class LosesOneTask(ThreadPoolExecutor):
    """A pool whose second task dies (as a task on a worker that is lost)."""

    def __init__(self):
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn, *args):
        self.submitted += 1
        if self.submitted == 2:
            def dies():
                raise RuntimeError("worker lost")

            return super().submit(dies)
        return super().submit(fn, *args)


def test_a_lost_task_gives_error_rows_for_its_points_only():
    from nonsmooth._sweep import batch_sizes

    one = mixed_sweep(ThreadPoolExecutor(1), batch=len(MIXED))
    table = mixed_sweep(LosesOneTask())
    sizes = batch_sizes(len(MIXED), 2)
    lost = range(sizes[0], sizes[0] + sizes[1])
    for k in range(len(MIXED)):
        if k in lost:
            assert table["error"][k] == "task failed: worker lost", k
            assert all(math.isnan(table[c][k]) for c in METRICS)
        else:
            assert table["error"][k] == one["error"][k] or (pd.isna(table["error"][k]) and pd.isna(one["error"][k]))
            for c in METRICS:
                x, y = table[c][k], one[c][k]
                assert np.float64(x).tobytes() == np.float64(y).tobytes(), (k, c)


def _unloadable():
    raise RuntimeError("cannot be loaded on a worker")


class Unloadable:
    """A metric that pickles but cannot be unpickled: every task carrying
    it fails on the cluster before any run."""

    def __reduce__(self):
        return (_unloadable, ())

    def __call__(self, result):
        return 0.0


def test_dask_tasks_that_fail_give_error_rows_and_the_table_keeps_its_order():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True) as cluster:
        with Client(cluster) as client:
            ex = client.get_executor()
            # The default plan and out-of-order completions through Dask:
            # the table of one task in one thread, bit for bit.
            assert_same_table(mixed_sweep(ex), mixed_sweep(ThreadPoolExecutor(1), batch=len(MIXED)))
            # pure=False (an option of the executor, kept by the sweep):
            # Dask would otherwise hash the arguments, which this metric
            # does not allow.
            bad = nonsmooth.sweep(SMC, samples=MIXED, metrics={"x": Unloadable()},
                                  executor=client.get_executor(pure=False), set={"t_end": 1.5})
    assert len(bad) == len(MIXED)
    assert bad["alpha"].tolist() == [p["alpha"] for p in MIXED]
    # (Dask reports it as an error in deserialising the task graph.)
    assert all(e.startswith("task failed:") for e in bad["error"]), bad["error"][0]
    assert bad["x"].isna().all()
