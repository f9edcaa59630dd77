"""The ILP/LP work of an offline solve, as it runs in the solver process (:mod:`primaldual.offline.child`).

:func:`ilp_in_child` is the large-instance plan (the online start, the pooled ILP placed on servers, then the
per-server ILP with the pooled bound); :func:`_build_and_solve` builds and solves one model, by the matrix path
(:mod:`primaldual.offline.matrix`, highspy only) or by Pyomo (:mod:`primaldual.offline.pyomo_ilp`, imported only
then). A spawned process that solves by the matrix path therefore never imports Pyomo, which on a loaded
machine is most of its start-up time.
"""

from __future__ import annotations

import time
from dataclasses import replace

from primaldual.core.verify import verify
from primaldual.offline.child import remaining
from primaldual.offline.options import best_seed
from primaldual.offline.outcome import BoundImproved, Built, Incumbent, Notify, Phase, RawSolve
from primaldual.offline.task import DEFAULT_HIGHS_GAP, IlpTask
from primaldual.offline.trace import thin

#: Share of the time left the pooled ILP may take when the ILP is solved pooled first
#: (:mod:`primaldual.offline.pooled`); the per-server ILP gets the rest if its optimum does not pack.
POOLED_SHARE = 0.6


def _build_and_solve_matrix(instance, task: IlpTask, notify: Notify | None) -> RawSolve:
    """The strong per-server model as numpy sparse arrays solved by highspy (:mod:`primaldual.offline.matrix`)
    or by SCIP through pyscipopt (:mod:`primaldual.backends.scip`),
    with the task's start as the MIP start and each improving incumbent sent through ``notify``."""
    from primaldual.offline.matrix import build_matrix_model, matrix_assignments, solve_matrix_model, start_vector

    started = time.perf_counter()
    # The LP relaxation stays that of the strong formulation (its value is what the LP method reports).
    model = build_matrix_model(instance, symmetry=task.symmetry, work_cuts=task.work_cuts and not task.relax)
    built = Built(time.perf_counter() - started, model.n_variables, model.n_constraints, model.objective_slack)
    on_incumbent = None
    if notify is not None:
        notify(built)
        if not task.relax:
            def on_incumbent(values, objective, bound):
                # Sent as found, so that a parent that kills this process keeps the best schedule so far.
                notify(Incumbent(matrix_assignments(model, values, instance), objective, bound))

    gap = task.mip_gap if task.mip_gap is not None else (None if task.relax else DEFAULT_HIGHS_GAP)
    trace = [] if task.origin() is not None and not task.relax else None
    start = None if task.start is None or task.relax else start_vector(model, instance, task.start)
    if task.solver == "scip":
        from primaldual.backends.scip import solve_arrays_scip

        trace = None  # SCIP's event handler reports incumbents only; the time trace is HiGHS's
        outcome, values = solve_arrays_scip(model, relax=task.relax, time_limit=task.time_left(), mip_gap=gap,
                                            threads=task.threads, on_incumbent=on_incumbent, start=start)
    else:
        outcome, values = solve_matrix_model(
            model, relax=task.relax, time_limit=task.time_left(), mip_gap=gap, threads=task.threads,
            on_incumbent=on_incumbent, trace=trace, trace_origin=task.origin() or 0.0, start=start)
    assignments = None if task.relax or values is None else matrix_assignments(model, values, instance)
    details = {} if trace is None else {"trace": thin(trace)}
    return RawSolve(built, outcome, assignments, builder="matrix", details=details)


def _build_and_solve(instance, task: IlpTask, notify: Notify | None) -> RawSolve:
    """Build, optionally seed, solve, by the task's builder; the solver gets only the time left after building."""
    if task.builder == "matrix":
        return _build_and_solve_matrix(instance, task, notify)
    from primaldual.offline.pyomo_ilp import build_and_solve_pyomo

    return build_and_solve_pyomo(instance, task, notify)


def ilp_in_child(notify: Notify | None, instance, task: IlpTask) -> RawSolve:  # runs in the spawned process
    """The ILP with its large-instance plan: the online start, then the pooled ILP placed on servers (which
    proves optimality when every slot packs), then the per-server ILP with the pooled bound."""
    notes, details, trace = [], {}, []
    if task.online_start and task.start is None:
        task = _with_online_start(task, notify, details)
    if task.origin() is not None and task.start_utility is not None:
        trace.append((time.time() - task.origin(), task.start_utility, None))
    pooled_bound = None
    if task.pooled_first:
        from primaldual.offline.pooled import solve_pooled_and_place

        if notify is not None:
            notify(Phase("building and solving the pooled ILP"))

        left = remaining(task.deadline)
        pooled = solve_pooled_and_place(
            instance, time_limit=None if left is None else POOLED_SHARE * left, threads=task.threads,
            mip_gap=DEFAULT_HIGHS_GAP if task.mip_gap is None else task.mip_gap, start=task.start,
            trace=None if task.origin() is None else trace, trace_origin=task.origin() or 0.0)
        notes.append(pooled.note)
        details["pooled_bound"] = pooled.solve.outcome.bound
        if pooled.solve.assignments is not None:
            if task.origin() is not None:
                details["trace"] = thin(trace)
            return replace(pooled.solve, builder="pooled+placement", notes=tuple(notes), details=details)
        task = _better_start(instance, task, pooled.partial, notes, details)
        if task.origin() is not None and "pooled_start_utility" in details:
            trace.append((time.time() - task.origin(), details["pooled_start_utility"], None))
        if pooled.solve.outcome.status != "error":
            pooled_bound = pooled.solve.outcome.bound
            if notify is not None and pooled_bound is not None:
                # Streamed so that a solve killed while building the per-server model keeps it; with the pooled
                # model's floor slack (the certificate may add the per-server model's again: valid, a hair loose).
                notify(BoundImproved(pooled_bound + pooled.solve.built.objective_slack, "pooled ILP"))
    if notify is not None and task.pooled_first:
        notify(Phase("building the model"))
    solved = _build_and_solve(instance, task, notify)
    outcome = solved.outcome
    if outcome.status == "error" and any(word in outcome.message for word in (
            "MemoryError", "bad_alloc", "can't start new thread")):
        # solve_model reports a failed allocation as a solver error; under the child's cap it is the cap.
        raise MemoryError(outcome.message)
    if pooled_bound is not None and (outcome.bound is None or pooled_bound < outcome.bound):
        # The pooled model is a relaxation with the same floored objective: its bound holds here too.
        outcome = replace(outcome, bound=pooled_bound)
    if "trace" in solved.details:
        details["trace"] = thin(trace) + solved.details["trace"]
    return replace(solved, outcome=outcome, notes=tuple(notes), details=details)


def _with_online_start(task: IlpTask, notify: Notify | None, details: dict) -> IlpTask:
    """The task with the best online seed as its MIP start (announced as the first incumbent)."""
    seed = best_seed(task.seeds, key=lambda s: s.start_rank)
    start, utility = (None, None) if seed is None else (seed.schedule, seed.utility)
    details["online_start_utility"] = utility
    if notify is not None and start is not None:
        notify(Incumbent({i: (s.workers, s.parameter_servers) for i, s in start.assignments.items()}, utility, None,
                         origin=f"online:{seed.name}"))
    return replace(task, start=start, start_utility=utility)


def _better_start(instance, task: IlpTask, candidate, notes: list, details: dict) -> IlpTask:
    """The task with the better MIP start of its own and ``candidate`` (a schedule placed from the pooled
    solution)."""
    if candidate is None:
        return task
    utility = verify(instance, candidate)
    if not utility.feasible or (task.start is not None and utility.utility <= task.start_utility):
        return task
    details["pooled_start_utility"] = float(utility.utility)
    notes.append("the pooled solution's jobs that fit on the servers seed the per-server ILP")
    return replace(task, start=candidate, start_utility=float(utility.utility))


def prepare_ilp(instance, task: IlpTask) -> None:  # runs in the spawned process, before its memory cap
    """The imports the work makes later: highspy alone for the matrix path, Pyomo and its solver otherwise."""
    if task.builder == "matrix" or task.pooled_first:
        import highspy  # noqa: F401

        import primaldual.offline.matrix  # noqa: F401
    if task.builder == "matrix" and task.solver == "scip":
        import primaldual.backends.scip  # noqa: F401
    if task.builder != "matrix":
        from primaldual.offline.pyomo_ilp import prepare_pyomo

        prepare_pyomo(task)


__all__ = ["ilp_in_child", "prepare_ilp"]
