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
    * ``batch``: points per task (default: enough for about four tasks per
      worker);
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
    full = [{**base, **p} for p in points]
    names = list((metrics or {}).keys())
    ms = [_metric(m) for m in (metrics or {}).values()]

    workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    if batch is None:
        batch = max(1, math.ceil(len(points) / (4 * workers)))
    chunks = [full[i:i + batch] for i in range(0, len(full), batch)]
    # Each task carries its points as one JSON text (plain values; NumPy
    # scalars become Python numbers); a batch with a value JSON cannot
    # hold goes as the list itself.
    texts = [_as_json(c) for c in chunks]

    own = executor is None
    if own:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = [
            executor.submit(run_batch_text, text, path, c, ms, strategy, t_end, i)
            for i, c in enumerate(texts)
        ]
        rows = []
        for f, c in zip(futures, chunks):
            try:
                r = f.result()
                rows.extend(json.loads(r) if isinstance(r, str) else r)
            except Exception as e:  # noqa: BLE001 — a lost task is error rows
                rows.extend([([math.nan] * len(ms), f"task failed: {e}")] * len(c))
    finally:
        if own:
            executor.shutdown()

    params = list(dict.fromkeys(k for p in points for k in p))
    table = {k: [p.get(k) for p in points] for k in params}
    for j, n in enumerate(names):
        table[n] = [r[0][j] for r in rows]
    table["error"] = [r[1] for r in rows]
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table)
