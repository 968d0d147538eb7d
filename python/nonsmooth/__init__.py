"""nonsmooth: simulation and control of nonsmooth dynamical systems.

>>> import nonsmooth
>>> r = nonsmooth.run("examples/smc_double_integrator.toml", set={"alpha": 2})
>>> t, y = r
>>> r["controller.sigma[0]"][-1]

See docs/python.md.
"""

from ._errors import NonsmoothError, ScenarioError, SimulationError
from ._native import __version__
from ._native import solve_lcp as _solve_lcp
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


__all__ = [
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
    "sweep",
    "__version__",
]
