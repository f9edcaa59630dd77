"""The result of :func:`primaldual.offline.solve.solve_offline`: :class:`OfflineResult`, its statuses and the
tolerance at which a bound proves an incumbent optimal. The rules that make it honest are
:func:`primaldual.offline.certify.certify`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from primaldual.core.schedule import Schedule
from primaldual.core.verify import VerificationReport

#: Bound and incumbent closer than this (relative to max(1, |bound|)) count as equal: the optimum is proven.
OPTIMALITY_TOLERANCE = 1e-6

#: ``OfflineResult.status`` values.
STATUSES = ("optimal", "feasible", "infeasible", "time_limit_no_incumbent", "killed", "memory_limit", "error")

#: Statuses for which an incumbent or a relaxation bound was found (the CLI exits 0).
SUCCESS_STATUSES = ("optimal", "feasible")


@dataclass(frozen=True)
class OfflineResult:
    """The outcome of :func:`solve_offline` (named fields, like scipy's ``OptimizeResult``).

    For the ILP, ``objective`` is the verified utility of ``schedule`` (None if there is none) and ``bound``
    an upper bound on OPT. For a relaxation (``relaxed`` or ``pooled``) there is no schedule: ``objective`` is
    the relaxation's value at the solver's answer and ``bound`` the solver's bound on the relaxation, itself an
    upper bound on OPT; a relaxation stopped before it proved a bound (an LP at its time limit) reports neither
    and has status ``"time_limit_no_incumbent"``. ``gap = (bound - objective) / |bound|`` (0 when both are 0).
    ``solve_seconds`` is the wall time of the solve call, Pyomo's translation of the model included;
    ``solver_seconds`` the backend's own run time where it reports one.
    ``incumbent_source`` is ``"solver"``, ``"start"`` (the MIP start was better) or ``"empty"``.
    ``verification`` is the verifier's report on ``schedule`` when the certificate made one (the solver's schedule
    kept), so a caller does not verify the same schedule again; None otherwise (a start, the empty schedule, a
    relaxation). It is not part of :meth:`to_dict`, nor of equality.
    """

    status: str
    objective: float | None
    bound: float | None
    gap: float | None
    schedule: Schedule | None
    build_seconds: float
    solve_seconds: float
    solver: str
    solver_version: str
    n_variables: int
    n_constraints: int
    solver_seconds: float | None = None
    formulation: str = "strong"
    relaxed: bool = False
    pooled: bool = False
    termination: str = ""
    incumbent_source: str | None = None
    start_objective: float | None = None
    message: str = ""
    method: str = "ilp"
    details: dict = field(default_factory=dict)
    verification: VerificationReport | None = field(default=None, compare=False, repr=False)

    @property
    def success(self) -> bool:
        return self.status in SUCCESS_STATUSES

    def to_dict(self) -> dict:
        """Everything but the schedule, JSON-ready (the keys of ``primaldual solve --json``)."""
        return {
            "status": self.status,
            "method": self.method,
            "objective": self.objective,
            # The value of the returned schedule, under the project's common name for it (None for a relaxation).
            "utility": self.objective if self.schedule is not None else None,
            "bound": self.bound,
            "gap": self.gap,
            "solver": self.solver,
            "solver_version": self.solver_version,
            "build_seconds": self.build_seconds,
            "solve_seconds": self.solve_seconds,
            "solver_seconds": self.solver_seconds,
            "n_variables": self.n_variables,
            "n_constraints": self.n_constraints,
            "formulation": self.formulation,
            "relaxed": self.relaxed,
            "pooled": self.pooled,
            "termination": self.termination,
            "incumbent_source": self.incumbent_source,
            "start_objective": self.start_objective,
            "admitted": None if self.schedule is None else len(self.schedule.admitted),
            "message": self.message,
            "details": self.details,
        }


__all__ = ["OPTIMALITY_TOLERANCE", "OfflineResult", "STATUSES", "SUCCESS_STATUSES"]
