"""Solve the offline problem (1)-(13) and return an honest certificate (docs/papers.md, OASiS).

:func:`solve_offline` builds :func:`primaldual.models.offline.build_offline_model`, hands it to a backend
through :func:`primaldual.backends.solvers.solve_model` and returns an :class:`OfflineResult`:

* the **incumbent** is a :class:`~primaldual.core.schedule.Schedule` that has passed the independent verifier
  :func:`primaldual.core.verify.verify`; ``objective`` is the utility the verifier recomputes for it, not the
  solver's number;
* the **bound** is an upper bound on OPT: the solver's best bound, capped by the trivial bound
  ``sum_i f_i(shortest_duration_i - 1)`` over the jobs that can finish; if a solver's bound is ever below a
  verified schedule's utility (a wrong answer), it is discarded for the trivial bound and ``message`` says so;
* ``status`` is ``"optimal"`` only when the solver finished (not at a limit) and the bound meets the
  incumbent within :data:`OPTIMALITY_TOLERANCE`; a time-limited or gap-limited incumbent is ``"feasible"``
  with its gap, never ``"optimal"``.

Hard wall-clock and memory limits: with a ``time_limit`` (or a ``memory_limit``) the whole solve (building
the model, translating it, solving it) runs in a child process (:mod:`primaldual.offline.child`, the
``spawn`` start method) whose address space is capped; the parent kills it ``grace`` seconds past the limit
(HiGHS does not always honour MIP time limits; a Pyomo build may never end at the paper's scale), and the
status is ``"killed"`` (``"memory_limit"`` past the cap). The solver gets the time left after building.
HiGHS streams each improving incumbent to the parent as it finds it, so a killed solve still returns its best
verified schedule and bound. (Scripts that call this must guard their code with
``if __name__ == "__main__":``, as for any spawned process.)

Methods: the ILP (built by Pyomo, :mod:`primaldual.models.offline`, or as numpy sparse arrays,
:mod:`primaldual.offline.matrix`), its LP and pooled relaxations, and column generation with price-and-branch
over the packing formulation (14)-(18) (:mod:`primaldual.offline.price_and_branch`), which gives a verified schedule
and a certified bound at the paper's scale.

MIP start: ``start=schedule`` (an online scheduler's result, say) is verified, handed to the solver as a MIP
start where the backend takes one (HiGHS, CBC), and returned as the incumbent whenever the solver's own
incumbent is worse or missing; so the result is never worse than the start.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pyomo.environ as pyo

from primaldual.backends.solvers import check_solver, highspy_version, solve_model, solver_version
from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.models.offline import build_offline_model, model_size, schedulable_jobs
from primaldual.offline.child import default_memory_limit, remaining, run_in_child
from primaldual.offline.methods import (
    POOLED_SHARE, large_ilp_plan, resolve_builder, resolve_method, verified_start_utility)
from primaldual.offline.options import EXACT, OnlineSeed, SolveOptions, best_seed
from primaldual.offline.outcome import (
    Built, ChildOutcome, ColumnGenerationRun, Incumbent, Notify, ProgressLine, RawSolve, Solving)
from primaldual.offline.result import OfflineResult, certify, certify_column_generation
from primaldual.offline.solver_choice import resolve_solver

#: Relative MIP gap handed to HiGHS when the caller gives none (its own default, 1e-4, is coarser than the
#: tolerance above). CBC and GLPK default to an exact search already.
DEFAULT_HIGHS_GAP = 1e-7

# --------------------------------------------------------------------------------------- build and solve


def _seed(model, instance: Instance, start: Schedule) -> None:
    """Set every variable to the start's values (0 where the start has nothing): the MIP start."""
    for var in model.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    for i, assignment in start.assignments.items():
        if i not in model.jobs:
            continue  # unreachable for a verified start: every admitted job can finish and fits somewhere
        completion = assignment.completion_slot()
        if completion is None or (i, completion) not in model.complete:
            continue
        model.admit[i].set_value(1, skip_validation=True)
        model.complete[i, completion].set_value(1, skip_validation=True)
        for t, h in zip(*np.nonzero(assignment.workers)):
            if (i, int(t), int(h)) in model.workers:
                model.workers[i, int(t), int(h)].set_value(int(assignment.workers[t, h]), skip_validation=True)
        for t, k in zip(*np.nonzero(assignment.parameter_servers)):
            if (i, int(t), int(k)) in model.parameter_servers:
                model.parameter_servers[i, int(t), int(k)].set_value(
                    int(assignment.parameter_servers[t, k]), skip_validation=True)
        for t in range(instance.jobs[i].arrival, completion + 1):
            model.unfinished[i, t].set_value(1, skip_validation=True)
        if hasattr(model, "work_done"):
            running = np.cumsum(assignment.workers_per_slot)
            for t in range(instance.jobs[i].arrival, instance.horizon):
                model.work_done[i, t].set_value(float(running[t]), skip_validation=True)


def _extract(model, instance: Instance) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per admitted job, the (T, H) worker and (T, K) PS counts of the solver's answer, rounded to integers."""
    horizon = instance.horizon
    n_worker, n_ps = instance.cluster.n_worker_servers, instance.cluster.n_ps_servers
    admitted = [i for i in model.jobs if (model.admit[i].value or 0) > 0.5]
    out = {i: (np.zeros((horizon, n_worker), dtype=np.int64), np.zeros((horizon, n_ps), dtype=np.int64))
           for i in admitted}
    for (i, t, h), var in model.workers.items():
        if i in out and var.value:
            out[i][0][t, h] = int(round(var.value))
    for (i, t, k), var in model.parameter_servers.items():
        if i in out and var.value:
            out[i][1][t, k] = int(round(var.value))
    return out


@dataclass(frozen=True, eq=False)
class IlpTask:
    """What the ILP/LP work needs, as picklable data (it crosses to the child process).

    ``start``/``start_utility`` are the verified MIP start; ``deadline`` the absolute ``time.time()`` the
    whole solve must end by (the solver gets the time left after building); ``seeds`` the verified online
    schedules the ``online_start`` picks from; ``pooled_first`` solves the pooled ILP first
    (:func:`primaldual.offline.pooled.solve_pooled_and_place`)."""

    solver: str
    time_limit: float | None
    mip_gap: float | None
    threads: int | None
    relax: bool
    pooled: bool
    formulation: str
    builder: str
    start: Schedule | None
    start_utility: float | None
    deadline: float | None
    seeds: tuple[OnlineSeed, ...]
    pooled_first: bool
    online_start: bool

    def time_left(self) -> float | None:
        return self.time_limit if self.deadline is None else remaining(self.deadline)


def _build_and_solve_matrix(instance, task: IlpTask, notify: Notify | None) -> RawSolve:
    """The strong per-server model as numpy sparse arrays solved by highspy (:mod:`primaldual.offline.matrix`),
    with the task's start as the MIP start and each improving incumbent sent through ``notify``."""
    from primaldual.offline.matrix import build_matrix_model, matrix_assignments, solve_matrix_model, start_vector

    started = time.perf_counter()
    model = build_matrix_model(instance)
    built = Built(time.perf_counter() - started, model.n_variables, model.n_constraints, model.objective_slack)
    on_incumbent = None
    if notify is not None:
        notify(built)
        if not task.relax:
            def on_incumbent(values, objective, bound):
                # Sent as found, so that a parent that kills this process keeps the best schedule so far.
                notify(Incumbent(matrix_assignments(model, values, instance), objective, bound))

    gap = task.mip_gap if task.mip_gap is not None else (None if task.relax else DEFAULT_HIGHS_GAP)
    solve_arrays = solve_matrix_model
    if task.solver == "scip":
        from primaldual.backends.scip import solve_arrays_scip as solve_arrays
    outcome, values = solve_arrays(
        model, relax=task.relax, time_limit=task.time_left(), mip_gap=gap, threads=task.threads,
        on_incumbent=on_incumbent,
        start=None if task.start is None or task.relax else start_vector(model, instance, task.start))
    assignments = None if task.relax or values is None else matrix_assignments(model, values, instance)
    return RawSolve(built, outcome, assignments, builder="matrix")


def _build_and_solve(instance, task: IlpTask, notify: Notify | None) -> RawSolve:
    """Build, optionally seed, solve; the solver gets only the time left after building."""
    if task.builder == "matrix":
        return _build_and_solve_matrix(instance, task, notify)
    started = time.perf_counter()
    model = build_offline_model(instance, relax=task.relax, formulation=task.formulation, pooled=task.pooled)
    build_seconds = time.perf_counter() - started
    built = Built(build_seconds, *model_size(model), float(model.objective_slack))
    if notify is not None:
        notify(built)
    if task.start is not None:
        _seed(model, instance, task.start)
    gap = task.mip_gap if task.mip_gap is not None else (
        DEFAULT_HIGHS_GAP if task.solver == "highs" and not task.relax else None)
    schedules = not task.relax and not task.pooled
    on_start = on_incumbent = None
    if notify is not None:
        def on_start():
            notify(Solving())

        if schedules:
            def on_incumbent(objective, bound):
                # Sent as found, so that a parent that kills this process keeps the best schedule so far.
                notify(Incumbent(_extract(model, instance), objective, bound))

    outcome = solve_model(model, solver=task.solver, time_limit=task.time_left(), mip_gap=gap, threads=task.threads,
                          warmstart=task.start is not None, on_start=on_start, on_incumbent=on_incumbent)
    assignments = _extract(model, instance) if outcome.has_solution and schedules else None
    return RawSolve(built, outcome, assignments, builder="pyomo")


def _ilp_in_child(notify: Notify | None, instance, task: IlpTask) -> RawSolve:  # runs in the spawned process
    """The ILP with its large-instance plan: the online start, then the pooled ILP placed on servers (which
    proves optimality when every slot packs), then the per-server ILP with the pooled bound."""
    notes, details = [], {}
    if task.online_start and task.start is None:
        task = _with_online_start(task, notify, details)
    pooled_bound = None
    if task.pooled_first:
        from primaldual.offline.pooled import solve_pooled_and_place

        left = remaining(task.deadline)
        pooled = solve_pooled_and_place(
            instance, time_limit=None if left is None else POOLED_SHARE * left, threads=task.threads,
            mip_gap=DEFAULT_HIGHS_GAP if task.mip_gap is None else task.mip_gap, start=task.start)
        notes.append(pooled.note)
        details["pooled_bound"] = pooled.solve.outcome.bound
        if pooled.solve.assignments is not None:
            return replace(pooled.solve, builder="pooled+placement", notes=tuple(notes), details=details)
        task = _better_start(instance, task, pooled.partial, notes, details)
        if pooled.solve.outcome.status != "error":
            pooled_bound = pooled.solve.outcome.bound
    solved = _build_and_solve(instance, task, notify)
    outcome = solved.outcome
    if outcome.status == "error" and any(word in outcome.message for word in (
            "MemoryError", "bad_alloc", "can't start new thread")):
        # solve_model reports a failed allocation as a solver error; under the child's cap it is the cap.
        raise MemoryError(outcome.message)
    if pooled_bound is not None and (outcome.bound is None or pooled_bound < outcome.bound):
        # The pooled model is a relaxation with the same floored objective: its bound holds here too.
        outcome = replace(outcome, bound=pooled_bound)
    return replace(solved, outcome=outcome, notes=tuple(notes), details=details)


def _with_online_start(task: IlpTask, notify: Notify | None, details: dict) -> IlpTask:
    """The task with the best online seed as its MIP start (announced as the first incumbent)."""
    seed = best_seed(task.seeds, key=lambda s: s.start_rank)
    start, utility = (None, None) if seed is None else (seed.schedule, seed.utility)
    details["online_start_utility"] = utility
    if notify is not None and start is not None:
        notify(Incumbent({i: (s.workers, s.parameter_servers) for i, s in start.assignments.items()}, utility, None))
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
    return replace(task, start=candidate)


def _prepare_ilp(instance, task: IlpTask) -> None:  # runs in the spawned process, before its memory cap
    import pyomo.contrib.appsi.solvers.highs  # noqa: F401 - the import the HiGHS path makes later

    check_solver(task.solver)
    solver_version(task.solver)


def _prepare_cg(instance, jobs, options) -> None:  # runs in the spawned process, before its memory cap
    import primaldual.offline.price_and_branch  # noqa: F401


def _cg_in_child(notify: Notify | None, instance, jobs, options) -> ColumnGenerationRun:  # in the spawned process
    from primaldual.offline.price_and_branch import column_generation_solve

    return column_generation_solve(instance, jobs, notify=notify, **options)


def default_grace(time_limit: float) -> float:
    """Seconds past the solver's time limit before the child is killed: room for a backend that stops a little
    late, for reading its answer back into Pyomo and for sending it to the parent."""
    return 5.0 + 0.1 * float(time_limit)


def solve_offline(instance: Instance, options: SolveOptions | None = None, *,
                  start: Schedule | OnlineSeed | None = None, seeds: Sequence[OnlineSeed] = (),
                  progress=None) -> OfflineResult:
    """Solve the offline problem of ``instance`` (or bound it) and certify the answer.

    ``options`` (:class:`~primaldual.offline.options.SolveOptions`, default :data:`EXACT`: the exact ILP in this
    process without limits) says how. ``method``: ``"ilp"``, ``"lp"`` (the LP relaxation), ``"pooled"`` (the
    pooled relaxation), ``"cg"`` (column generation and price-and-branch over the packing formulation
    (14)-(18), :mod:`primaldual.offline.price_and_branch`: a verified schedule and a certified bound) or
    ``"auto"`` (:func:`~primaldual.offline.methods.resolve_method`); ``OfflineResult.method`` is the one used.

    ``time_limit`` bounds the whole call, building included: the build and solve run in a spawned child that
    is killed ``grace`` seconds (default :func:`default_grace`) after the limit, and the solver gets the time
    left after building. ``memory_limit`` caps the child's address space; past it the status is
    ``"memory_limit"``. Without either limit the solve runs in this process; inside a daemonic process (a
    ``multiprocessing.Pool`` worker), which may not start children, too, and ``message`` says so.
    ``progress(line)``, if given, receives progress lines while a child runs.

    ``start`` is a feasible schedule used as a MIP start and as a floor on the incumbent; it is verified here
    unless it comes as an :class:`~primaldual.offline.options.OnlineSeed` (verified by the caller, with its
    utility). ``seeds`` are verified online schedules (:mod:`primaldual.evaluation.seeds` builds them): column
    generation starts its master from them, and the ILP's online start is the best of them.

    An unknown or unavailable solver, an option that does not apply to the method, and an infeasible start
    raise :class:`InputError`. An instance where no job can finish returns ``"optimal"`` with objective 0
    without calling a solver.
    """
    options = EXACT if options is None else options
    if not isinstance(options, SolveOptions):
        raise InputError(f"options: must be SolveOptions, got {type(options).__name__}")
    solver, auto_note = resolve_solver(instance, options)  # --solver auto: by size, from measured data
    options = options.replace(solver=solver) if auto_note else options
    check_solver(options.solver)
    method = resolve_method(instance, options.method)
    relaxation = method in ("lp", "pooled")
    start, start_utility = _checked_start(instance, start, relaxation)
    identity = dict(solver=options.solver if method != "cg" else "highs",
                    solver_version=solver_version(options.solver) if method != "cg" else highspy_version(),
                    formulation=options.formulation, relaxed=method == "lp", pooled=method == "pooled",
                    method=method)
    jobs = schedulable_jobs(instance)
    if not jobs:
        return _nothing_to_solve(instance, relaxation, start_utility, identity)
    trivial_bound = float(sum(instance.best_utility(i) for i in jobs))
    notes = [auto_note] if auto_note else []
    in_child = options.time_limit is not None or options.memory_limit is not None
    if in_child and multiprocessing.current_process().daemon:
        notes.append("no hard wall-clock limit (nor memory limit): a daemonic process may not start the solver process")
        in_child = False
    deadline = None if options.time_limit is None else time.time() + options.time_limit
    if method == "cg":
        target, arguments, prepare = _cg_in_child, (instance, jobs, dict(
            deadline=deadline, threads=options.threads, seeds=tuple(seeds))), _prepare_cg
    else:
        target, arguments, prepare = _ilp_in_child, (instance, _ilp_task(
            instance, options, method, start, start_utility, seeds, deadline)), _prepare_ilp
    ended = _run(target, arguments, prepare, options, in_child, progress, method == "cg")
    if method == "cg":
        return certify_column_generation(instance, ended, start, start_utility, trivial_bound, notes, identity)
    return certify(instance, ended, start, start_utility, trivial_bound, relaxation, notes, identity)


def _checked_start(instance, start, relaxation: bool) -> tuple[Schedule | None, float | None]:
    """The start as a schedule and its verified utility (verified here unless the caller did)."""
    if start is None:
        return None, None
    if relaxation:
        raise InputError("--start: a MIP start seeds the ILP; it does not apply to --relax or --pooled")
    if isinstance(start, OnlineSeed):
        return start.schedule, float(start.utility)
    return start, verified_start_utility(instance, start)


def _nothing_to_solve(instance, relaxation: bool, start_utility, identity) -> OfflineResult:
    """No job can finish (or fit): the empty schedule is optimal, and no solver is called."""
    schedule = None if relaxation else Schedule({}, meta={"source": "offline", "status": "optimal"})
    why = "the instance has no jobs" if instance.n_jobs == 0 else (
        "no job can finish by the horizon (or fit on any server)")
    return OfflineResult(
        status="optimal", objective=0.0, bound=0.0, gap=0.0, schedule=schedule, build_seconds=0.0,
        solve_seconds=0.0, n_variables=0, n_constraints=0, termination="not solved",
        incumbent_source="empty", start_objective=start_utility,
        message=f"{why}: the optimum admits nothing; no solver was called", **identity,
    )


def _ilp_task(instance, options: SolveOptions, method, start, start_utility, seeds, deadline) -> IlpTask:
    """What the ILP/LP child needs, as picklable data."""
    pooled = method == "pooled"
    plan = large_ilp_plan(instance, options, method, start)
    return IlpTask(solver=options.solver, time_limit=options.time_limit, mip_gap=options.mip_gap,
                   threads=options.threads, relax=method == "lp", pooled=pooled, formulation=options.formulation,
                   builder=resolve_builder(instance, options, pooled), start=start, start_utility=start_utility,
                   deadline=deadline, seeds=tuple(seeds), pooled_first=plan["pooled_first"],
                   online_start=plan["online_start"])


def _run(target, arguments, prepare, options: SolveOptions, in_child: bool, progress,
         column_generation: bool) -> ChildOutcome:
    """Run ``target`` in a child under the limits, or here; how it ended, with its elapsed seconds."""
    if in_child:
        time_limit = options.time_limit
        return run_in_child(target, arguments, time_limit=time_limit,
                            grace=default_grace(time_limit or 0.0) if options.grace is None else options.grace,
                            memory_limit=options.memory_limit if options.memory_limit is not None
                            else default_memory_limit(),
                            progress=progress, prepare=prepare)
    started = time.perf_counter()
    forward = None
    if progress is not None and column_generation:
        # In this process only column generation's own progress lines can be shown (nothing else reports).
        def forward(event):
            if isinstance(event, ProgressLine):
                progress(event.line)

    answer = target(forward, *arguments)
    return ChildOutcome(answer=answer, elapsed=time.perf_counter() - started)


__all__ = ["DEFAULT_HIGHS_GAP", "default_grace", "solve_offline"]
