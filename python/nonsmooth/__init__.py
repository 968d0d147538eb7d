"""nonsmooth: simulation and control of nonsmooth dynamical systems.

>>> import nonsmooth
>>> r = nonsmooth.run("examples/smc_double_integrator.toml", set={"alpha": 2})
>>> t, y = r
>>> r["controller.sigma[0]"][-1]

See docs/python.md.
"""

from ._errors import FmuExportError, NonsmoothError, ScenarioError, SimulationError
from ._native import __version__
from ._native import solve_lcp as _solve_lcp
from ._native import solve_mlcp as _solve_mlcp
from ._native import solve_relay as _solve_relay
from ._result import Result
from ._run import run
from ._scenario import Scenario
from ._sweep import Builtin, final, max_abs_after, reaching_time, run_batch, sweep


def solve_lcp(M, q, solver="default", tol=None, max_iter=None):
    """Solves w = M z + q, 0 ≤ z ⊥ w ≥ 0 from z = 0 (as ``nonsmooth solve``):
    a dict with status, solver, iterations, error, error_abs, time_s, z, w."""
    import numpy as np

    return _solve_lcp(
        np.ascontiguousarray(M, dtype=float), np.ascontiguousarray(q, dtype=float), solver, tol, max_iter
    )


def _f(a):
    import numpy as np

    return np.ascontiguousarray(a, dtype=float)


def solve_mlcp(M, q, n_eq, solver="default", tol=None, max_iter=None):
    """Solves the MLCP whose first ``n_eq`` unknowns are free and rows are
    equalities: [A C; D B] (u, v) + (a, b) = (0, w), 0 ≤ v ⊥ w ≥ 0, from
    zero (as ``nonsmooth solve``); the report as for :func:`solve_lcp`."""
    return _solve_mlcp(_f(M), _f(q), int(n_eq), solver, tol, max_iter)


def solve_relay(M, q, lb, ub, solver="default", tol=None, max_iter=None):
    """Solves the relay problem w = M z + q, z ∈ [lb, ub], −w ∈ N(z) from
    zero (as ``nonsmooth solve``); the report as for :func:`solve_lcp`."""
    return _solve_relay(_f(M), _f(q), _f(lb), _f(ub), solver, tol, max_iter)


__all__ = [
    "FmuExportError",
    "NonsmoothError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "Builtin",
    "final",
    "max_abs_after",
    "reaching_time",
    "run",
    "run_batch",
    "solve_lcp",
    "solve_mlcp",
    "solve_relay",
    "sweep",
    "__version__",
]
