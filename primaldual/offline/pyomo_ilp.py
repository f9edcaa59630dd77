"""The Pyomo path of the offline ILP/LP: build :func:`primaldual.models.offline.build_offline_model`, seed it with
the MIP start, solve it through :func:`primaldual.backends.solvers.solve_model` and read the schedule back.

It is the only part of an ILP solve that imports Pyomo; :mod:`primaldual.offline.ilp` imports it only when the
builder is ``"pyomo"``, so the matrix path's solver process starts without it.
"""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo

from primaldual.backends.solvers import check_solver, solve_model, solver_version
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.models.offline import build_offline_model, model_size
from primaldual.offline.outcome import Built, Incumbent, Notify, RawSolve, Solving
from primaldual.offline.task import DEFAULT_HIGHS_GAP, IlpTask


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
        if hasattr(model, "uses_type"):
            seed_types(model, instance, i, assignment)
        if hasattr(model, "work_done"):
            running = np.cumsum(work_per_slot(model, i, assignment))
            for t in range(instance.jobs[i].arrival, instance.horizon):
                model.work_done[i, t].set_value(float(running[t]), skip_validation=True)


def work_per_slot(model, i: int, assignment) -> np.ndarray:
    """Per slot, the start's workers (homogeneous) or its workers weighted by their type's speed (the rows of
    eq. (2) of :mod:`primaldual.models.gpu_choice`)."""
    if not hasattr(model, "type_weight"):
        return assignment.workers_per_slot
    return assignment.workers @ model.type_weight[i][np.asarray(model.server_type)]


def seed_types(model, instance: Instance, i: int, assignment) -> None:
    """``uses_type[i, t, g] = 1`` where the start runs job i on type g (one type per slot: it is verified)."""
    index = instance.cluster.worker_type_index
    for t in np.flatnonzero(assignment.workers_per_slot):
        g = int(index[np.flatnonzero(assignment.workers[t])[0]])
        if (i, int(t), g) in model.uses_type:
            model.uses_type[i, int(t), g].set_value(1, skip_validation=True)


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


def build_and_solve_pyomo(instance, task: IlpTask, notify: Notify | None) -> RawSolve:
    """Build the Pyomo model, optionally seed it, solve it; the solver gets only the time left after building."""
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


def prepare_pyomo(task: IlpTask) -> None:
    """The imports and checks the Pyomo path makes later, done before the process's memory cap."""
    import pyomo.contrib.appsi.solvers.highs  # noqa: F401 - the import the HiGHS path makes later

    check_solver(task.solver)
    solver_version(task.solver)


__all__ = ["build_and_solve_pyomo", "prepare_pyomo", "seed_types", "work_per_slot"]
