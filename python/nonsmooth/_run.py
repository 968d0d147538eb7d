"""Running a scenario."""

import os

from . import _native
from ._result import Result


def _source(scenario):
    """(text, path) of a scenario given as a Scenario, a path or TOML text."""
    from ._scenario import Scenario

    if isinstance(scenario, Scenario):
        return scenario.text, scenario.path, dict(scenario.overrides)
    s = str(scenario)
    if isinstance(scenario, os.PathLike) or ("\n" not in s and (s.endswith(".toml") or os.path.exists(s))):
        path = os.fspath(scenario)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path, {}
        except OSError as e:
            from ._errors import ScenarioError

            raise ScenarioError(f"{path}: cannot read the file: {e.strerror}", path, None) from None
    return str(scenario), "<text>", {}


def _pairs(values):
    return [(str(k), v if isinstance(v, str) else float(v)) for k, v in (values or {}).items()]


def run(scenario, set=None, strategy=None, t_end=None, events=True):
    """Simulates a scenario and returns its recorded outputs.

    ``scenario`` is a path to a TOML scenario file, its text, or a
    :class:`Scenario`; ``set`` overrides ``[parameters]`` entries (numbers,
    or texts: expressions of the other parameters, or words such as a law
    name); ``strategy`` is ``"time-stepping"`` or ``"event-driven"``;
    ``t_end`` replaces the final time. The interpreter lock is released
    while the simulation runs. Raises :class:`ScenarioError` (bad input)
    or :class:`SimulationError`, with ``.file``, ``.line``, ``.message``.
    """
    text, path, base = _source(scenario)
    base.update(set or {})
    cols, data, et, ek, eo, _, (steps, iters, native_s) = _native.run(
        text, path, _pairs(base), strategy, t_end, events
    )
    return Result(cols, data, et, ek, eo, steps, iters, native_s)
