"""What a solver said, as plain data: the one type every backend returns (Pyomo's or highspy's own).

It lives apart from :mod:`primaldual.backends.solvers` so that a process that solves with highspy alone (the
matrix path of :mod:`primaldual.offline.matrix` in its spawned solver process) never imports Pyomo.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolveOutcome:
    """What a solver said: Pyomo's termination condition, whether values were loaded, bounds, seconds.

    ``termination`` is Pyomo's raw termination condition; ``status`` its normalised reading (one of
    :data:`STATUSES`). ``warmstart_used`` says whether the backend was actually handed the start.
    ``seconds`` is the wall time of the whole call (Pyomo's translation of the model included);
    ``solver_seconds`` the backend's own run time where it reports one (None otherwise).
    """

    termination: str
    has_solution: bool
    objective: float | None
    bound: float | None
    seconds: float
    solver: str
    version: str
    status: str = "unknown"
    warmstart_used: bool = False
    message: str = ""
    solver_seconds: float | None = None


__all__ = ["SolveOutcome"]
