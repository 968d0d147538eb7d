"""Parameter sweeps: one run per point of a grid or a list of samples, a
table with one row per run (its parameters, its metrics, its error).

Tasks carry plain values (the scenario's text, the overrides, the metric
texts or picklable callables) and return their rows as JSON text, never
Rust objects, so any
``concurrent.futures.Executor`` can run them: a local process pool by
default, a Dask cluster through ``Client.get_executor()``.
"""

import itertools
import json
import math
import os

from . import _native
from ._result import Result


class Builtin:
    """A built-in metric, evaluated in Rust on the recorded rows:
    ``final(col)``, ``max_abs_after(col, t)``, ``reaching_time(col, tol)``."""

    def __init__(self, spec):
        self.spec = spec

    def __repr__(self):
        return self.spec

    def __eq__(self, other):
        return isinstance(other, Builtin) and other.spec == self.spec

    def __hash__(self):
        return hash(self.spec)


def final(column):
    """The value of ``column`` at the last output instant."""
    return Builtin(f"final({column})")


def max_abs_after(column, t):
    """max |column(tᵢ)| over the output instants tᵢ ≥ t (NaN when none)."""
    return Builtin(f"max_abs_after({column}, {float(t)!r})")


def reaching_time(column, tol):
    """The first output instant from which |column| ≤ tol until the end
    (NaN when the last value is outside the band)."""
    return Builtin(f"reaching_time({column}, {float(tol)!r})")


def _metric(m):
    if isinstance(m, Builtin):
        return m
    if isinstance(m, str):
        return Builtin(m)
    if callable(m):
        return m
    raise TypeError(f"a metric is a callable on a Result or a built-in metric, not {m!r}")


def _points(grid, samples):
    if (grid is None) == (samples is None):
        raise ValueError("sweep: give either grid (dict of lists) or samples (list of dicts)")
    if grid is not None:
        names = list(grid)
        return [dict(zip(names, values)) for values in itertools.product(*(list(grid[n]) for n in names))]
    return [dict(s) for s in samples]


def _pairs(point):
    return [(str(k), v if isinstance(v, str) else float(v)) for k, v in point.items()]


def _plain(value):
    """A NumPy scalar or array as the Python number or list it holds."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{value!r} has no JSON form")


def _as_json(points):
    """``points`` as JSON text when every value has an exact JSON form
    (numbers round-trip exactly: ``json`` writes floats by ``repr``),
    else the list unchanged."""
    try:
        return json.dumps(points, default=_plain)
    except (TypeError, ValueError):
        return points


def run_batch(text, path, points, metrics, strategy=None, t_end=None, task=None):
    """Runs a batch of points in this process: for each, (values, error).

    ``task`` is the batch's index in the sweep, unused here: it makes every
    task's arguments distinct, so that an executor that merges identical
    calls (Dask keys a pure task by its function and arguments, and runs
    tasks with the same key once) still runs every batch — two batches of
    the same points are two batches of runs.

    ``points`` is a list of dicts, or the same list as JSON text (what
    :func:`sweep` sends: one string is cheap for an executor to hash and
    ship, where Dask walks a list of dicts item by item on submission).

    ``metrics`` is a list of Builtin or callables. Built-in metrics only:
    one call into Rust for the whole batch (interpreter released). With
    callables, each run comes back as a Result and the callables are
    applied to it; an exception of a callable is the point's error.
    """
    if isinstance(points, str):
        points = json.loads(points)
    specs = [m.spec for m in metrics if isinstance(m, Builtin)]
    if all(isinstance(m, Builtin) for m in metrics):
        return [
            (list(v), e)
            for v, e in _native.run_batch(text, path, [_pairs(p) for p in points], specs, strategy, t_end)
        ]
    out = []
    for p in points:
        try:
            cols, data, et, ek, eo, values, (steps, iters, native_s) = _native.run(
                text, path, _pairs(p), strategy, t_end, True, specs
            )
            result = Result(cols, data, et, ek, eo, steps, iters, native_s)
            it = iter(values)
            row = [next(it) if isinstance(m, Builtin) else float(m(result)) for m in metrics]
            out.append((row, None))
        except Exception as e:  # noqa: BLE001 — a failed run is a row
            out.append(([math.nan] * len(metrics), str(e)))
    return out


def run_batch_text(text, path, points, metrics, strategy=None, t_end=None, task=None):
    """:func:`run_batch`, its rows as one JSON text (what a sweep's task
    returns).

    Dask serialises a returned list element by element in the worker's
    event loop (≈ 30 µs per row, in a thread that competes with the runs
    for the cores); one text is one buffer. Floats are written by
    ``repr`` and NaN/±Infinity as JSON's extension words, so the rows
    read back bit for bit. Rows JSON cannot hold come back as the list.
    """
    rows = run_batch(text, path, points, metrics, strategy, t_end, task)
    try:
        return json.dumps(rows)
    except (TypeError, ValueError):
        return rows


def batch_sizes(n, workers, batch=None):
    """The number of points in each task of a sweep of ``n`` points over
    ``workers`` workers, in the order the tasks are submitted.

    With ``batch``, tasks of ``batch`` points (the last one shorter).
    Otherwise the sizes decrease by rounds of ``w`` equal tasks
    (factoring): with r points not yet assigned, each task of the next
    round takes

        s = max(⌈r / (2w)⌉, ⌈n / (32w)⌉) points (at most what is left),

    so that a round hands out about half of what is left. Each worker
    starts on a quarter of its share and the last tasks hold about 1/32
    of it: a worker that runs out of work waits at most one small task
    for the others, where equal tasks of 1/8 of the sweep can leave one
    worker idle for up to an eighth of the run. For two workers and
    10 000 points: 2 500, 2 500, 1 250, 1 250, 625, 625, 313, 313, 157,
    157, 157, 153 (12 tasks).
    """
    if n <= 0:
        return []
    if batch is not None:
        batch = int(batch)
        if batch < 1:
            raise ValueError(f"sweep: batch must be at least 1, not {batch}")
        return [min(batch, n - i) for i in range(0, n, batch)]
    w = max(1, int(workers))
    least = max(1, math.ceil(n / (32 * w)))
    sizes = []
    left = n
    while left > 0:
        s = max(least, math.ceil(left / (2 * w)))
        for _ in range(w):
            if left == 0:
                break
            sizes.append(min(s, left))
            left -= sizes[-1]
    return sizes


def _dask_client(executor):
    """The Dask client behind ``Client.get_executor()`` (a
    ``distributed`` ``ClientExecutor``), else None."""
    if type(executor).__module__.startswith("distributed."):
        return getattr(executor, "_client", None)
    return None


def _failed(n, metrics, error):
    """The rows of a task that did not return: one error row per point."""
    return [([math.nan] * len(metrics), f"task failed: {error}")] * n


def _run_tasks(executor, text, path, base, points, sizes, metrics, strategy, t_end, head=1,
               meanwhile=None):
    """Runs one task per batch of ``points`` (``sizes`` in turn), each point
    over the overrides ``base``, and returns the rows in the order of the
    points.

    The first ``head`` batches are made into JSON and submitted before the
    rest are made, so the workers start while the client still prepares
    the others; results are read as they complete (the client decodes
    each while the other tasks still run). A task that raises gives
    error rows for its points. ``meanwhile`` (no arguments) is called
    once every task is submitted, before the first result is awaited.

    Through a Dask executor the batches go to the client's ``map`` (the
    executor's options kept), two calls in all, and come back through
    ``distributed.as_completed``: one graph update per call instead of
    one per task, and no extra hop through a concurrent future per task
    (≈ 1 ms of CPU per task less, measured with tiny tasks on a
    two-worker LocalCluster).
    """
    rows = [None] * len(sizes)
    starts = list(itertools.accumulate(sizes, initial=0))

    def chunk(i):
        # One JSON text per task (plain values; NumPy scalars become
        # Python numbers); a batch with a value JSON cannot hold goes as
        # the list itself.
        return _as_json([{**base, **p} for p in points[starts[i]:starts[i + 1]]])

    def decode(i, r):
        rows[i] = json.loads(r) if isinstance(r, str) else list(r)

    client = _dask_client(executor)
    if client is not None:
        from distributed import as_completed

        options = dict(getattr(executor, "_kwargs", {}))
        index = {}
        done = as_completed(with_results=True, raise_errors=False)
        for part in (range(0, min(head, len(sizes))), range(min(head, len(sizes)), len(sizes))):
            if not part:
                continue
            k = len(part)
            futures = client.map(run_batch_text, [text] * k, [path] * k, [chunk(i) for i in part],
                                 [metrics] * k, [strategy] * k, [t_end] * k, list(part), **options)
            index.update(zip(futures, part))
            done.update(futures)
        if meanwhile is not None:
            meanwhile()
        for f, r in done:
            i = index[f]
            if f.status == "finished":
                decode(i, r)
            else:  # a lost task is error rows
                rows[i] = _failed(sizes[i], metrics, r[1] if isinstance(r, tuple) else r)
    else:
        from concurrent.futures import FIRST_COMPLETED, wait

        pending = {}

        def collect(f):
            i = pending.pop(f)
            try:
                decode(i, f.result())
            except Exception as e:  # noqa: BLE001 — a lost task is error rows
                rows[i] = _failed(sizes[i], metrics, e)

        for i in range(len(sizes)):
            pending[executor.submit(run_batch_text, text, path, chunk(i), metrics, strategy, t_end, i)] = i
            for g in [g for g in pending if g.done()]:
                collect(g)
        if meanwhile is not None:
            meanwhile()
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in finished:
                collect(f)
    return [row for r in rows for row in r]


def sweep(scenario, grid=None, samples=None, metrics=None, executor=None, batch=None,
          strategy=None, t_end=None, set=None):
    """Runs a scenario once per point and returns the table of results.

    * ``grid``: dict name → list of values, every combination (the first
      name varies slowest); or ``samples``: a list of dicts (e.g.
      Monte-Carlo draws);
    * ``metrics``: dict name → metric, a built-in (:func:`final`,
      :func:`max_abs_after`, :func:`reaching_time`, or its text) or a
      callable on the :class:`Result` (picklable: a module-level function
      for process pools and Dask);
    * ``executor``: any ``concurrent.futures.Executor`` (None: a local
      process pool over the cores; a Dask ``Client.get_executor()`` sends
      the batches to the cluster);
    * ``batch``: points per task (default: :func:`batch_sizes`, tasks
      of decreasing size, the largest first, so that the workers finish
      together);
    * ``set``: overrides applied to every point.

    The table has one row per point, in the order of the points: the
    point's parameters, then the metrics under their names, then ``error``
    (None for a run that completed). A pandas DataFrame when pandas is
    installed, else a dict of lists.
    """
    from ._run import _source

    text, path, base = _source(scenario)
    base.update(set or {})
    points = _points(grid, samples)
    names = list((metrics or {}).keys())
    ms = [_metric(m) for m in (metrics or {}).values()]

    workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    sizes = batch_sizes(len(points), workers, batch)

    own = executor is None
    if own:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(max_workers=workers)
    table = {}

    def parameter_columns():
        # Built while the first tasks run, not after the last one.
        params = dict.fromkeys(k for p in points for k in p)
        table.update((k, [p.get(k) for p in points]) for k in params)

    try:
        rows = _run_tasks(executor, text, path, base, points, sizes, ms, strategy, t_end,
                          head=workers, meanwhile=parameter_columns)
    finally:
        if own:
            executor.shutdown()

    for j, n in enumerate(names):
        table[n] = [r[0][j] for r in rows]
    table["error"] = [r[1] for r in rows]
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table)
