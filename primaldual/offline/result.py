"""The result of :func:`primaldual.offline.solve.solve_offline` and the rules that make it honest.

How the work ended (a :class:`~primaldual.offline.outcome.ChildOutcome`, possibly from a child process:
:mod:`primaldual.offline.child`) becomes an :class:`OfflineResult` by three rules, the same for every method:

* **the incumbent is verified**: the work's schedule passes :func:`primaldual.core.verify.verify` or is
  discarded, and the caller's start replaces it when better (:func:`_best_incumbent`), so the objective is
  a utility recomputed from a feasible schedule, never a solver's number;
* **the bound is an upper bound on OPT**: the work's bound plus the objective floor's slack, capped by the
  trivial bound ``sum_i f_i(shortest_duration_i - 1)``; a bound below a verified utility (beyond the
  solvers' tolerance) is wrong, and the trivial bound replaces it (:func:`_bound_above`);
* **the status says what is proven**: ``"optimal"`` only when the solver finished and the bound meets the
  incumbent within :data:`OPTIMALITY_TOLERANCE`, otherwise the limit that ended the solve.

Cost: one verification per candidate schedule, O(jobs x slots x servers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import verify
from primaldual.offline.outcome import ChildOutcome, ColumnGenerationRun, RawSolve

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


def certify(instance, ended: ChildOutcome, start, start_utility, trivial_bound, relaxation, notes,
            identity: dict) -> OfflineResult:
    """Turn how the ILP (or relaxation) work ended into an honest :class:`OfflineResult` (module docstring).

    ``identity`` holds the result's fields that name the solve (solver, its version, formulation, relaxed,
    pooled, method)."""
    solved: RawSolve | None = ended.answer
    outcome = None if solved is None else solved.outcome
    built = solved.built if solved is not None else ended.built
    _limit_notes(ended, notes, suggest_column_generation=True)
    if solved is not None:
        notes.extend(solved.notes)
    if outcome is not None and outcome.message:
        notes.append(outcome.message)
    # The model counts utilities below its floor as 0 (models/offline.py): its optimum may fall short of OPT
    # by at most this much, so the bound on OPT is the model's bound plus this slack.
    slack = 0.0 if built is None else float(built.objective_slack)
    fields = dict(
        build_seconds=0.0 if built is None else float(built.build_seconds),
        solve_seconds=float(outcome.seconds if outcome is not None else ended.elapsed),
        solver_seconds=outcome.solver_seconds if outcome is not None else None,
        termination=outcome.termination if outcome is not None else ("killed" if ended.killed else "error"),
        n_variables=0 if built is None else int(built.n_variables),
        n_constraints=0 if built is None else int(built.n_constraints),
        **identity,
    )
    if relaxation:
        result = _certify_relaxation(outcome, ended.killed, slack, notes, fields)
    else:
        result = _certify_ilp(instance, ended, slack, start, start_utility, trivial_bound, notes, fields)
    if ended.memory and result.status in ("error", "killed", "time_limit_no_incumbent"):
        result = replace(result, status="memory_limit")
    if solved is not None:
        result = replace(result, details={**result.details, **solved.details, "builder": solved.builder})
    return result


def _limit_notes(ended: ChildOutcome, notes: list, suggest_column_generation: bool) -> None:
    """Say which limit ended a child and in which phase."""
    if ended.killed:
        notes.append(f"the time limit ran out while {ended.phase}: the solver process was killed after "
                     f"{float(ended.elapsed):.1f} s")
    if ended.memory:
        advice = "raise --memory-limit" + (" or try --method cg, whose master program is much smaller"
                                           if suggest_column_generation else "")
        notes.append(f"the solver process reached its memory limit ({ended.memory}); {advice}")
    if ended.error:
        notes.append(f"solver process failed: {ended.error}")


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


@dataclass(frozen=True, eq=False)
class _Incumbent:
    """The better of the work's verified schedule and the start: where it comes from (``"solver"``,
    ``"start"``, or None when there is neither), its verified utility and the schedule."""

    source: str | None
    objective: float | None
    schedule: Schedule | None
    solver_had_one: bool  # the work's schedule passed verification (whether or not it was chosen)


def _best_incumbent(instance, assignments, start, start_utility, notes: list, rejected) -> _Incumbent:
    """Verify the work's schedule (``rejected(report)`` is the note when it fails) and keep the better of it
    and the start; on a tie the work's schedule, which carries the certificate."""
    candidates = []
    if assignments is not None:
        schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, schedule)
        if report.feasible:
            candidates.append(("solver", float(report.utility), schedule))
        else:
            notes.append(rejected(report))
    if start is not None:
        candidates.append(("start", float(start_utility), start))
    if not candidates:
        return _Incumbent(None, None, None, False)
    source, objective, schedule = max(candidates, key=lambda c: (c[1], c[0] == "solver"))
    return _Incumbent(source, objective, schedule, any(c[0] == "solver" for c in candidates))


def _bound_above(objective, bound: float, trivial_bound: float, whose: str, notes: list) -> float:
    """``bound``, unless a verified schedule's utility ``objective`` exceeds it: equal up to the solver's
    tolerances it is raised to the utility; beyond them it is wrong and the trivial bound replaces it."""
    if objective is None or bound >= objective:
        return bound
    if objective - bound <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
        return objective
    notes.append(f"{whose} {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it is wrong; "
                 f"using the trivial bound {trivial_bound:.9g}")
    return trivial_bound


def _violations(report) -> str:
    shown = "; ".join(f"eq. {v.equation} {v.message}" for v in report.violations[:3])
    return f"the solver's answer failed verification and was discarded: {shown}"


def _certify_ilp(instance, ended: ChildOutcome, slack, start, start_utility, trivial_bound, notes,
                 fields) -> OfflineResult:
    """The ILP: the incumbent is the better of the solver's verified schedule and the start; the bound is
    the solver's (plus the floor's slack), capped by the trivial bound and discarded if below the incumbent."""
    solved: RawSolve | None = ended.answer
    outcome = None if solved is None else solved.outcome
    assignments = None if solved is None else solved.assignments
    bound_reported = None if outcome is None else outcome.bound
    if outcome is None and ended.incumbent is not None:
        # Killed (or crashed) mid-solve: the last incumbent the solver reported, with its bound at the time.
        assignments, bound_reported = ended.incumbent.assignments, ended.incumbent.bound
    best = _best_incumbent(instance, assignments, start, start_utility, notes, _violations)
    if best.source == "start" and best.solver_had_one:
        notes.append("the solver's incumbent is worse than the start; returning the start")
    elif best.source == "start":
        notes.append("the solver returned no schedule; returning the start")
    objective = best.objective
    bound = trivial_bound if bound_reported is None else min(float(bound_reported) + slack, trivial_bound)
    bound = _bound_above(objective, bound, trivial_bound, "the solver's bound", notes)
    status = _ilp_status(ended, outcome, objective, assignments, bound, notes)
    schedule = None if best.schedule is None else Schedule(best.schedule.assignments, meta={
        **(best.schedule.meta if best.source == "start" else {}),
        "source": "offline" if best.source == "solver" else "offline:start",
        "status": status, "objective": objective, "bound": bound,
        "solver": fields["solver"], "formulation": fields["formulation"],
    })
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        incumbent_source=best.source, start_objective=start_utility, message="; ".join(notes), **fields,
    )


def _ilp_status(ended: ChildOutcome, outcome, objective, assignments, bound, notes) -> str:
    """Which limit ended the ILP, or whether its incumbent is proven optimal."""
    solver_said = outcome.status if outcome is not None else "error"
    if ended.killed:
        return "killed"
    if ended.error or solver_said == "error" or (objective is None and assignments is not None):
        return "error"
    if objective is not None:
        status = "optimal" if solver_said == "optimal" and _proven(objective, bound) else "feasible"
        if solver_said == "optimal" and status == "feasible" and (outcome.objective or 0) < objective - 1e-6:
            notes.append("the solver claimed optimality for a worse solution than the start")
        return status
    if solver_said == "infeasible":
        return "infeasible"
    if solver_said in ("time_limit", "other_limit", "feasible", "optimal"):
        return "time_limit_no_incumbent"
    return "error"


def certify_column_generation(instance, ended: ChildOutcome, start, start_utility, trivial_bound, notes,
                              identity: dict) -> OfflineResult:
    """Column generation's answer: the best verified schedule (the start if better) and the best Lagrangian
    bound, capped by the trivial bound; ``"optimal"`` only when the bound meets the schedule."""
    run: ColumnGenerationRun | None = ended.answer
    _limit_notes(ended, notes, suggest_column_generation=False)
    if run is not None:
        bound = run.bound
    else:
        bound = None if ended.bound is None else ended.bound.bound
    if bound is None or not math.isfinite(float(bound)):
        notes.append("column generation completed no pricing round: the bound is the trivial one "
                     "(each job alone on the empty cluster)")
        bound = trivial_bound
    bound = min(float(bound), trivial_bound)
    # An empty schedule is no answer: fall back on the last incumbent the work reported, as for a killed run.
    assignments = (run.assignments if run is not None else None) or (
        None if ended.incumbent is None else ended.incumbent.assignments)
    best = _best_incumbent(instance, assignments, start, start_utility, notes,
                           lambda report: "the price-and-branch schedule failed verification and was discarded")
    objective = best.objective
    bound = _bound_above(objective, bound, trivial_bound, "the bound", notes)
    if ended.killed:
        status = "killed"
    elif ended.memory:
        status = "memory_limit"
    elif ended.error or objective is None:
        status = "error"
    else:
        status = "optimal" if _proven(objective, bound) else "feasible"
    if run is not None:
        notes.append(f"column generation: {run.rounds} rounds, {run.columns} columns, "
                     f"{'converged' if run.converged else 'stopped at the time limit'}; price-and-branch "
                     f"{run.mip_status}")
    schedule = None if best.schedule is None else Schedule(best.schedule.assignments, meta={
        **(best.schedule.meta if best.source == "start" else {}),
        "source": "offline:cg" if best.source == "solver" else "offline:start", "status": status,
        "objective": objective, "bound": bound, "method": "cg"})
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        build_seconds=0.0 if run is None else float(run.seed_seconds), solve_seconds=float(ended.elapsed),
        n_variables=0 if run is None else run.columns, n_constraints=0 if run is None else run.rows,
        termination="converged" if run is not None and run.converged else status, incumbent_source=best.source,
        start_objective=start_utility, message="; ".join(notes), details={} if run is None else run.details(),
        **identity,
    )


__all__ = ["OPTIMALITY_TOLERANCE", "OfflineResult", "STATUSES", "SUCCESS_STATUSES", "certify",
           "certify_column_generation"]
