"""The result of :func:`primaldual.offline.solve.solve_offline` and the rules that make it honest .

The solver's raw answer (a dict, possibly from a child process: :mod:`primaldual.offline.child`) becomes an
:class:`OfflineResult`: the incumbent is re-verified by :func:`primaldual.core.verify.verify`, the bound is capped by
the trivial bound and discarded if it is below a verified schedule, and ``status`` says which limit ended the
solve. See :mod:`primaldual.offline.solve` for the rules in full.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.backends.solvers import SolveOutcome
from primaldual.core.verify import verify

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


# ----------------------------------------------------------------------------------------- certificate


def _gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None:
        return None
    if bound == objective:
        return 0.0
    return float((bound - objective) / max(abs(bound), 1e-12))


def _proven(objective: float, bound: float) -> bool:
    """The bound meets the incumbent (a bound below the incumbent is handled before this is asked)."""
    return 0.0 <= bound - objective <= OPTIMALITY_TOLERANCE * max(1.0, abs(bound))


def certify(instance, raw, start, start_utility, trivial_bound, relaxation, notes, common) -> OfflineResult:
    """Turn the solver's raw answer into an honest :class:`OfflineResult` (see the module docstring)."""
    outcome: SolveOutcome | None = raw.get("outcome")
    killed = bool(raw.get("killed"))
    memory = raw.get("memory")
    failure = raw.get("error")
    built = raw.get("built") or {}
    solve_seconds = float(outcome.seconds if outcome is not None else raw.get("solve_seconds", raw.get("elapsed", 0.0)))
    _limit_notes(raw, notes)
    notes.extend(raw.get("notes", ()))
    if outcome is not None and outcome.message:
        notes.append(outcome.message)
    # The model counts utilities below its floor as 0 (models/offline.py): its optimum may fall short of OPT
    # by at most this much, so the bound on OPT is the model's bound plus this slack.
    slack = float(raw.get("objective_slack", built.get("objective_slack", 0.0)))
    fields = dict(
        build_seconds=float(raw.get("build_seconds", built.get("build_seconds", 0.0))),
        solve_seconds=solve_seconds,
        solver_seconds=outcome.solver_seconds if outcome is not None else None,
        termination=outcome.termination if outcome is not None else ("killed" if killed else "error"),
        n_variables=int(raw.get("n_variables", built.get("n_variables", 0))),
        n_constraints=int(raw.get("n_constraints", built.get("n_constraints", 0))),
        **common,
    )
    if relaxation:
        result = _certify_relaxation(outcome, killed, slack, notes, fields)
    else:
        result = _certify_ilp(instance, raw, outcome, killed, failure, slack, start, start_utility,
                              trivial_bound, notes, fields)
    if memory and result.status in ("error", "killed", "time_limit_no_incumbent"):
        result = replace(result, status="memory_limit")
    if raw.get("builder") or raw.get("details"):
        extra = {**raw.get("details", {}), **({"builder": raw["builder"]} if raw.get("builder") else {})}
        result = replace(result, details={**result.details, **extra})
    return result


def _limit_notes(raw: dict, notes: list) -> None:
    """Say which limit ended a child and in which phase."""
    if raw.get("killed"):
        phase = raw.get("phase", "solving")
        notes.append(f"the time limit ran out while {phase}: the solver process was killed after "
                     f"{float(raw.get('elapsed', 0.0)):.1f} s")
    if raw.get("memory"):
        advice = "raise --memory-limit" + ("" if raw.get("method") == "cg" else
                                           " or try --method cg, whose master program is much smaller")
        notes.append(f"the solver process reached its memory limit ({raw['memory']}); {advice}")
    if raw.get("error"):
        notes.append(f"solver process failed: {raw['error']}")


def _certify_relaxation(outcome, killed, slack, notes, fields) -> OfflineResult:
    """A relaxation's answer is its bound: without one (an LP stopped early) nothing is certified."""
    objective = outcome.objective if outcome is not None and outcome.has_solution else None
    bound = None if outcome is None or outcome.bound is None else outcome.bound + slack
    if objective is not None and bound is not None and bound < objective:
        bound = objective  # the solver's bound on its own relaxation, equal up to tolerances
    if objective is not None and bound is None:
        # An interrupted simplex has a primal value that bounds nothing; reporting it would invite misuse.
        notes.append("the relaxation was not solved to the end, so its value bounds nothing")
        objective = None
    if killed:
        status = "killed"
    elif outcome is None or outcome.status == "error":
        status = "error"
    elif objective is not None:
        status = "optimal" if outcome.status == "optimal" else "feasible"
    elif outcome.status == "infeasible":
        status = "infeasible"
    else:
        status = "time_limit_no_incumbent"
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=None,
        incumbent_source=None, start_objective=None, message="; ".join(notes), **fields,
    )


def _certify_ilp(instance, raw, outcome, killed, failure, slack, start, start_utility, trivial_bound, notes,
                 fields) -> OfflineResult:
    """The ILP: the incumbent is the better of the solver's verified schedule and the start; the bound is
    the solver's (plus the floor's slack), capped by the trivial bound and discarded if below the incumbent."""
    candidates = []
    assignments = raw.get("assignments")
    bound_reported = outcome.bound if outcome is not None else None
    if outcome is None and raw.get("incumbent") is not None:
        # Killed (or crashed) mid-solve: the last incumbent the solver reported, with its bound at the time.
        assignments = raw["incumbent"]["assignments"]
        bound_reported = raw["incumbent"]["bound"]
    if assignments is not None:
        solver_schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, solver_schedule)
        if report.feasible:
            candidates.append(("solver", float(report.utility), solver_schedule))
        else:
            shown = "; ".join(f"eq. {v.equation} {v.message}" for v in report.violations[:3])
            notes.append(f"the solver's answer failed verification and was discarded: {shown}")
    if start is not None:
        candidates.append(("start", float(start_utility), start))
    source, objective, schedule = None, None, None
    if candidates:
        # Prefer the solver's schedule on a tie (it carries the certificate); the start only when better.
        source, objective, schedule = max(candidates, key=lambda c: (c[1], c[0] == "solver"))
        if source == "start" and any(c[0] == "solver" for c in candidates):
            notes.append("the solver's incumbent is worse than the start; returning the start")
        elif source == "start":
            notes.append("the solver returned no schedule; returning the start")

    bound = trivial_bound
    if bound_reported is not None:
        bound = min(float(bound_reported) + slack, trivial_bound)
    if objective is not None and bound < objective:
        if objective - bound <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
            bound = objective  # equal up to the solver's tolerances
        else:
            notes.append(
                f"the solver's bound {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it "
                f"is wrong; using the trivial bound {trivial_bound:.9g}"
            )
            bound = trivial_bound

    solver_said = outcome.status if outcome is not None else "error"
    if killed:
        status = "killed"
    elif failure or solver_said == "error" or (objective is None and assignments is not None):
        status = "error"
    elif objective is not None:
        status = "optimal" if solver_said == "optimal" and _proven(objective, bound) else "feasible"
        if solver_said == "optimal" and status == "feasible" and (outcome.objective or 0) < objective - 1e-6:
            notes.append("the solver claimed optimality for a worse solution than the start")
    elif solver_said == "infeasible":
        status = "infeasible"
    elif solver_said in ("time_limit", "other_limit", "feasible", "optimal"):
        status = "time_limit_no_incumbent"
    else:
        status = "error"

    if schedule is not None:
        schedule = Schedule(schedule.assignments, meta={
            **(schedule.meta if source == "start" else {}),
            "source": "offline" if source == "solver" else "offline:start",
            "status": status, "objective": objective, "bound": bound,
            "solver": fields["solver"], "formulation": fields["formulation"],
        })
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        incumbent_source=source, start_objective=start_utility, message="; ".join(notes), **fields,
    )


def certify_column_generation(instance, raw, start, start_utility, trivial_bound, notes, common) -> OfflineResult:
    """Column generation's answer: the best verified schedule (the start if better) and the best Lagrangian
    bound, capped by the trivial bound; ``"optimal"`` only when the bound meets the schedule."""
    _limit_notes(raw, notes)
    bound_data = raw.get("bound")
    bound = bound_data.get("bound") if isinstance(bound_data, dict) else bound_data
    if bound is None or not math.isfinite(float(bound)):
        notes.append("column generation completed no pricing round: the bound is the trivial one "
                     "(each job alone on the empty cluster)")
        bound = trivial_bound
    bound = min(float(bound), trivial_bound)
    assignments = raw.get("assignments") or (raw.get("incumbent") or {}).get("assignments")
    candidates = []
    if assignments is not None:
        schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, schedule)
        if report.feasible:
            candidates.append(("solver", float(report.utility), schedule))
        else:  # pragma: no cover - columns are whole schedules within the capacity rows
            notes.append("the price-and-branch schedule failed verification and was discarded")
    if start is not None:
        candidates.append(("start", float(start_utility), start))
    source, objective, schedule = (max(candidates, key=lambda c: (c[1], c[0] == "solver"))
                                   if candidates else (None, None, None))
    if objective is not None and bound < objective:
        if objective - bound > OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
            notes.append(f"the bound {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it is "
                         f"wrong; using the trivial bound {trivial_bound:.9g}")
            bound = trivial_bound
        else:
            bound = objective
    if raw.get("killed"):
        status = "killed"
    elif raw.get("memory"):
        status = "memory_limit"
    elif raw.get("error") or objective is None:
        status = "error"
    else:
        status = "optimal" if _proven(objective, bound) else "feasible"
    details = {key: raw[key] for key in ("rounds", "columns", "rows", "converged", "lp_value", "seeds",
                                         "seed_seconds", "pooled_seconds", "cg_seconds", "mip_seconds", "mip_status")
               if key in raw}
    if raw.get("rounds") is not None:
        notes.append(f"column generation: {raw['rounds']} rounds, {raw.get('columns')} columns, "
                     f"{'converged' if raw.get('converged') else 'stopped at the time limit'}; price-and-branch "
                     f"{raw.get('mip_status')}")
    if schedule is not None:
        schedule = Schedule(schedule.assignments, meta={
            **(schedule.meta if source == "start" else {}),
            "source": "offline:cg" if source == "solver" else "offline:start", "status": status,
            "objective": objective, "bound": bound, "method": "cg"})
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        build_seconds=float(raw.get("seed_seconds", 0.0)), solve_seconds=float(raw.get("elapsed", 0.0)),
        n_variables=int(raw.get("columns", 0)), n_constraints=int(raw.get("rows", 0)),
        termination="converged" if raw.get("converged") else status, incumbent_source=source,
        start_objective=start_utility, message="; ".join(notes), details=details, **common,
    )


__all__ = ["OPTIMALITY_TOLERANCE", "OfflineResult", "STATUSES", "SUCCESS_STATUSES", "certify",
           "certify_column_generation"]
