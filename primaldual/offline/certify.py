"""The one certificate of an offline solve: how any method's work ended becomes an honest :class:`OfflineResult`.

Every :class:`~primaldual.offline.result.OfflineResult` of :func:`~primaldual.offline.solve.solve_offline` is
made here: by :func:`certify`, or by :func:`nothing_to_solve` when no job can finish and no work runs.

:func:`certify` reads a :class:`~primaldual.offline.outcome.ChildOutcome` (its answer a
:class:`~primaldual.offline.outcome.RawSolve`, whatever the method) by three rules, written once here:

* **the incumbent is verified**: the work's schedule (or, when it has no answer, the last incumbent it
  reported) passes :func:`primaldual.core.verify.verify` or is discarded, and the caller's start replaces it
  when better (:func:`_best_incumbent`), so the objective is a utility recomputed from a feasible schedule;
* **the bound is an upper bound on OPT**: the work's bound plus the objective floor's slack, capped by the
  trivial bound ``sum_i f_i(shortest_duration_i - 1)``; a bound below a verified utility (beyond the solvers'
  tolerance) is wrong, and the trivial bound replaces it (:func:`_bound_above`);
* **the status says what is proven**: ``"optimal"`` only when the work ran to its end and the bound meets the
  incumbent within :data:`~primaldual.offline.result.OPTIMALITY_TOLERANCE`, otherwise the limit that ended it.

A relaxation (the entry's ``relaxed``/``pooled``) has no schedule: its value and bound are the solver's.
Cost: one verification per candidate schedule, O(jobs x slots x servers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import VerificationReport, verify
from primaldual.offline.methods import Method
from primaldual.offline.options import SolveOptions
from primaldual.offline.outcome import ChildOutcome, RawSolve
from primaldual.offline.result import OPTIMALITY_TOLERANCE, OfflineResult


def _identity(method: Method, options: SolveOptions) -> dict:
    """The result's fields that name the solve: solver, its version, formulation, relaxed, pooled, method."""
    solver, version = method.solver_of(options)
    return dict(solver=solver, solver_version=version, formulation=options.formulation, relaxed=method.relaxed,
                pooled=method.pooled, method=method.name)


def certify(instance, ended: ChildOutcome, method: Method, options: SolveOptions, start, start_utility,
            trivial_bound: float, notes: list) -> OfflineResult:
    """Turn how ``method``'s work ended into an honest :class:`OfflineResult` (module docstring).

    ``start``/``start_utility`` are the caller's verified start (or None), ``notes`` what the caller has to say
    already; the message is those and the certificate's own notes."""
    solved: RawSolve | None = ended.answer
    outcome = None if solved is None else solved.outcome
    built = solved.built if solved is not None else ended.built
    _limit_notes(ended, notes, method.memory_advice)
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
        n_variables=0 if built is None else int(built.n_variables),
        n_constraints=0 if built is None else int(built.n_constraints),
        **_identity(method, options),
    )
    if method.relaxation:
        result = _certify_relaxation(outcome, ended.killed, slack, notes, fields)
    else:
        result = _certify_schedule(instance, ended, method, slack, start, start_utility, trivial_bound, notes,
                                   fields)
    if ended.memory and result.status in ("error", "killed", "time_limit_no_incumbent"):
        result = replace(result, status="memory_limit", termination="memory_limit")
    if solved is not None:
        builder = {} if solved.builder is None else {"builder": solved.builder}
        result = replace(result, details={**result.details, **solved.details, **builder})
    return result


def nothing_to_solve(instance, method: Method, options: SolveOptions, start_utility) -> OfflineResult:
    """No job can finish (or fit): the empty schedule is optimal (a relaxation's value is 0), no solver called."""
    schedule = None if method.relaxation else Schedule({}, meta={"source": "offline", "status": "optimal"})
    why = "the instance has no jobs" if instance.n_jobs == 0 else (
        "no job can finish by the horizon (or fit on any server)")
    return OfflineResult(
        status="optimal", objective=0.0, bound=0.0, gap=0.0, schedule=schedule, build_seconds=0.0,
        solve_seconds=0.0, n_variables=0, n_constraints=0, termination="not solved",
        incumbent_source="empty", start_objective=start_utility,
        message=f"{why}: the optimum admits nothing; no solver was called", **_identity(method, options),
    )


def _limit_notes(ended: ChildOutcome, notes: list, memory_advice: str) -> None:
    """Say which limit ended a child and in which phase."""
    if ended.killed:
        notes.append(f"the time limit ran out while {ended.phase}: the solver process was killed after "
                     f"{float(ended.elapsed):.1f} s")
    if ended.memory:
        notes.append(f"the solver process reached its memory limit ({ended.memory}); {memory_advice}")
    if ended.error:
        notes.append(f"solver process failed: {ended.error}")


def _termination(outcome, status: str) -> str:
    """The solver's own word on how it ended, else the status."""
    return outcome.termination if outcome is not None and outcome.termination else status


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
        termination=_termination(outcome, "killed" if killed else "error"), incumbent_source=None,
        start_objective=None, message="; ".join(notes), **fields,
    )


def _certify_schedule(instance, ended: ChildOutcome, method: Method, slack, start, start_utility, trivial_bound,
                      notes, fields) -> OfflineResult:
    """The incumbent is the better of the work's verified schedule and the start; the bound is the work's
    (plus the floor's slack), capped by the trivial bound and discarded if below the incumbent."""
    solved: RawSolve | None = ended.answer
    outcome = None if solved is None else solved.outcome
    assignments = None if solved is None else solved.assignments
    bound_reported = None if outcome is None else outcome.bound
    origin = "solver"
    if solved is None:
        # Killed (or crashed) mid-solve: the last incumbent and bound the work reported.
        assignments = None if ended.incumbent is None else ended.incumbent.assignments
        origin = "solver" if ended.incumbent is None else ended.incumbent.origin
        bound_reported = ended.bound.bound if ended.bound is not None else (
            None if ended.incumbent is None else ended.incumbent.bound)
    best = _best_incumbent(instance, assignments, start, start_utility, notes, origin)
    objective = best.objective
    if bound_reported is None or not math.isfinite(float(bound_reported)):
        if method.no_bound_note is not None:
            notes.append(method.no_bound_note)
        bound = trivial_bound
    else:
        bound = min(float(bound_reported) + slack, trivial_bound)
    bound = _bound_above(objective, bound, trivial_bound, notes)
    status = _status(ended, outcome, objective, assignments, bound, notes)
    schedule = None if best.schedule is None else Schedule(best.schedule.assignments, meta={
        **(best.schedule.meta if best.source == "start" else {}),
        "source": method.source if best.source == "solver" else "offline:start",
        "status": status, "objective": objective, "bound": bound, **{key: fields[key] for key in method.meta_keys},
    })
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        termination=_termination(outcome, status), incumbent_source=best.source, start_objective=start_utility,
        message="; ".join(notes), verification=best.report, **fields,
    )


@dataclass(frozen=True, eq=False)
class _Incumbent:
    """The better of the work's verified schedule and the start: where it comes from (``"solver"``,
    ``"start"``; None without either), its verified utility, the schedule, and the verifier's report when this
    certificate made it (the solver's schedule), which the result carries so no caller verifies it again."""

    source: str | None
    objective: float | None
    schedule: Schedule | None
    report: VerificationReport | None = None


def _best_incumbent(instance, assignments, start, start_utility, notes: list, origin: str = "solver") -> _Incumbent:
    """Verify the work's schedule (a note says so when it fails) and keep the better of it and the start; on a
    tie the work's schedule, which carries the certificate. A note says when the start is returned. A killed
    work's last incumbent that is its online start (``origin`` ``"online:NAME"``), not its own find, counts as
    a start (``"start"``), so the report never credits the solver with it."""
    candidates = []
    if assignments is not None:
        schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, schedule)
        if report.feasible:
            candidates.append(("solver" if origin == "solver" else "start", float(report.utility), schedule, report))
        else:
            notes.append(_violations(report))
    if start is not None:
        candidates.append(("start", float(start_utility), start, None))
    if not candidates:
        return _Incumbent(None, None, None)
    source, objective, schedule, report = max(candidates, key=lambda c: (c[1], c[0] == "solver"))
    if source == "start" and schedule is not start:
        notes.append(f"the solver process found no schedule of its own before it stopped; returning its online "
                     f"start ({origin})")
    elif source == "start":
        notes.append("the solver's incumbent is worse than the start; returning the start"
                     if len(candidates) > 1 else "the solver returned no schedule; returning the start")
    return _Incumbent(source, objective, schedule, report)


def _violations(report) -> str:
    shown = "; ".join(f"eq. {v.equation} {v.message}" for v in report.violations[:3])
    return f"the solver's answer failed verification and was discarded: {shown}"


def _bound_above(objective, bound: float, trivial_bound: float, notes: list) -> float:
    """``bound``, unless a verified schedule's utility ``objective`` exceeds it: equal up to the solver's
    tolerances it is raised to the utility; beyond them it is wrong and the trivial bound replaces it."""
    if objective is None or bound >= objective:
        return bound
    if objective - bound <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
        return objective
    notes.append(f"the solver's bound {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it "
                 f"is wrong; using the trivial bound {trivial_bound:.9g}")
    return trivial_bound


def _status(ended: ChildOutcome, outcome, objective, assignments, bound, notes) -> str:
    """Which limit ended the work, or whether its incumbent is proven optimal."""
    solver_said = outcome.status if outcome is not None else "error"
    if ended.killed:
        return "killed"
    if ended.error or solver_said == "error" or (objective is None and assignments is not None):
        return "error"
    if objective is not None:
        status = "optimal" if solver_said == "optimal" and _proven(objective, bound) else "feasible"
        if (solver_said == "optimal" and status == "feasible" and outcome.objective is not None
                and outcome.objective < objective - 1e-6):
            notes.append("the solver claimed optimality for a worse solution than the start")
        return status
    if solver_said == "infeasible":
        return "infeasible"
    if solver_said in ("time_limit", "other_limit", "feasible", "optimal"):
        return "time_limit_no_incumbent"
    return "error"


def _gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None:
        return None
    if bound == objective:
        return 0.0
    return float((bound - objective) / max(abs(bound), 1e-12))


def _proven(objective: float, bound: float) -> bool:
    """The bound meets the incumbent (a bound below the incumbent is handled before this is asked)."""
    return 0.0 <= bound - objective <= OPTIMALITY_TOLERANCE * max(1.0, abs(bound))


__all__ = ["certify", "nothing_to_solve"]
