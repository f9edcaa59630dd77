"""The Pyomo reference for a :class:`~primaldual.lbbsp.problem.BatchSizingProblem` (:mod:`primaldual.models.batch_sizing`).

The model takes plain arrays; this module unpacks a problem into them, so the fast exact solver
(:mod:`.exact`) and the reference provably solve the same instance. Importing it imports Pyomo, which is why
:mod:`primaldual.lbbsp` does not import it.
"""

from __future__ import annotations

import pyomo.environ as pyo

from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.models.batch_sizing import BatchSizingResult, build_batch_sizing_model, solve_batch_sizing


def _data(problem: BatchSizingProblem) -> tuple:
    laws = problem.laws
    return laws.intercept_seconds, laws.seconds_per_sample, problem.global_batch, problem.min_batch, problem.memory_cap


def reference_model(problem: BatchSizingProblem) -> pyo.ConcreteModel:
    """The MILP of :mod:`primaldual.models.batch_sizing` for ``problem``, built, not solved."""
    return build_batch_sizing_model(*_data(problem))


def solve_reference(problem: BatchSizingProblem, solver: str = "highs",
                    time_limit: float | None = None) -> BatchSizingResult:
    """Solve ``problem`` with the reference MILP and backend ``solver`` (zero relative MIP gap)."""
    return solve_batch_sizing(*_data(problem), solver=solver, time_limit=time_limit)
