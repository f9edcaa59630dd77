"""Solve the offline problem with restart costs (:mod:`primaldual.models.restart`) and read its schedule.

:func:`solve_restart_offline` builds :func:`primaldual.models.restart.build_restart_model`, seeds it with a
start schedule where one is given (its restart indicators and uncharged work computed from its counts by the
simulator's rule), hands it to the backend through :func:`primaldual.backends.solvers.solve_model`, and returns
a :class:`RestartSolve`: the solver's schedule (rounded counts of the admitted jobs), the model's objective,
its bound (the solver's best bound plus the model's ``objective_slack``: utilities below the floor are counted
as 0) and the solver's status.

What it does not do: say what the schedule earns. The model's objective is what the simulator's restart rule
charges, but only the simulator is the reference; this layer may not run it, so the evaluation layer replays
the schedule (:mod:`primaldual.evaluation.restart_opt`) and only then calls the interval proven.

Cost: the base ILP plus one binary per job and slot and two rows per placement variable; on 10-job ``small``
instances at ``F = 0.1`` HiGHS proves some in seconds and leaves others at a 60 s limit on a loaded machine
(``docs/measurements.md``, Exact OPT with restart costs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from primaldual.backends.solvers import check_solver, solve_model
from primaldual.core.instance import Instance
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.models.restart import build_restart_model, check_restart_cost
from primaldual.offline.pyomo_ilp import seed_types, work_per_slot


@dataclass(frozen=True, eq=False)
class RestartSolve:
    """The solver's answer on the restart model: ``schedule`` (None without a solution), the model's
    ``objective``, an upper ``bound`` on the optimum with restart costs (None if the solver gave none),
    ``status`` (:data:`primaldual.backends.solvers.STATUSES`), sizes and seconds."""

    restart_cost: float
    schedule: Schedule | None
    objective: float | None
    bound: float | None
    status: str
    solver: str
    solver_version: str
    n_variables: int
    n_constraints: int
    build_seconds: float
    solve_seconds: float
    message: str = ""


def _running_same(workers: np.ndarray, parameter_servers: np.ndarray) -> np.ndarray:
    """Per slot, whether the simulator does not charge a restart: the job ran in the slot before on the same
    counts (``_Restarts.work``)."""
    running = workers.sum(axis=1) > 0
    same = np.zeros(workers.shape[0], dtype=bool)
    same[1:] = running[1:] & running[:-1] & (workers[1:] == workers[:-1]).all(axis=1) \
        & (parameter_servers[1:] == parameter_servers[:-1]).all(axis=1)
    return same


def seed_restart_model(model, instance: Instance, start: Schedule) -> None:
    """Set the model's variables to ``start`` (a schedule that completes under the model's restart cost): its
    counts, completion indicators, running sums, and its restarts and uncharged work by the simulator's rule."""
    for var in model.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    for (i, t), var in model.restart.items():
        var.set_value(1, skip_validation=True)
    for i, job in start.assignments.items():
        completion = job.completion_slot()
        if i not in model.jobs or completion is None or (i, completion) not in model.complete:
            continue
        model.admit[i].set_value(1, skip_validation=True)
        model.complete[i, completion].set_value(1, skip_validation=True)
        same = _running_same(job.workers, job.parameter_servers)
        per_slot = work_per_slot(model, i, job)
        if hasattr(model, "uses_type"):
            seed_types(model, instance, i, job)
        arrival = instance.jobs[i].arrival
        for t in range(arrival, instance.horizon):
            model.unfinished[i, t].set_value(1 if t <= completion else 0, skip_validation=True)
            model.restart[i, t].set_value(0 if same[t] else 1, skip_validation=True)
            model.kept[i, t].set_value(float(per_slot[t]) if same[t] else 0.0, skip_validation=True)
            model.work_done[i, t].set_value(float(per_slot[arrival:t + 1].sum()), skip_validation=True)
            if hasattr(model, "kept_done"):
                model.kept_done[i, t].set_value(float((per_slot * same)[arrival:t + 1].sum()), skip_validation=True)
        for var, counts in ((model.workers, job.workers), (model.parameter_servers, job.parameter_servers)):
            for t, s in zip(*np.nonzero(counts)):
                if (i, int(t), int(s)) in var:
                    var[i, int(t), int(s)].set_value(int(counts[t, s]), skip_validation=True)


def _schedule(model, instance: Instance, restart_cost: float, status: str) -> Schedule:
    """The admitted jobs' rounded counts."""
    n_worker, n_ps = instance.cluster.n_worker_servers, instance.cluster.n_ps_servers
    admitted = [i for i in model.jobs if (model.admit[i].value or 0) > 0.5]
    counts = {i: (np.zeros((instance.horizon, n_worker), dtype=np.int64),
                  np.zeros((instance.horizon, n_ps), dtype=np.int64)) for i in admitted}
    for pool, var in enumerate((model.workers, model.parameter_servers)):
        for (i, t, s), v in var.items():
            if i in counts and v.value:
                counts[i][pool][t, s] = int(round(v.value))
    return Schedule({i: JobSchedule(*pair) for i, pair in counts.items()},
                    meta={"source": "offline-restart", "restart_cost": restart_cost, "status": status})


def solve_restart_offline(instance: Instance, restart_cost: float, *, solver: str = "highs",
                          time_limit: float | None = None, mip_gap: float | None = 1e-7, threads: int | None = 1,
                          start: Schedule | None = None, known_bound: float | None = None) -> RestartSolve:
    """Solve the restart model of ``instance`` at ``restart_cost`` (module docstring). ``start``, if given, is
    a schedule that completes under ``restart_cost`` (an online scheduler's), handed in as a MIP start.
    ``known_bound``, if given, is an upper bound on the optimum proven elsewhere (the start-cost relaxation's,
    Lemma R); it caps the objective (a valid row: the model's floored objective is at most the utility of its
    schedule, which is at most OPT), so a start that meets it is proven optimal at the root."""
    restart_cost = check_restart_cost(restart_cost)
    check_solver(solver)
    started = time.perf_counter()
    model = build_restart_model(instance, restart_cost)
    if known_bound is not None:
        # A hair of slack: a bound computed in floating point may sit 1e-9 under the optimum it bounds.
        model.known_bound = pyo.Constraint(expr=model.total_utility <= float(known_bound) * (1 + 1e-9) + 1e-9,
                                           doc="an upper bound on OPT proven elsewhere")
    build_seconds = time.perf_counter() - started
    if start is not None:
        seed_restart_model(model, instance, start)
    left = None if time_limit is None else max(float(time_limit) - build_seconds, 1.0)
    outcome = solve_model(model, solver=solver, time_limit=left, mip_gap=mip_gap, threads=threads,
                          warmstart=start is not None)
    slack = float(model.objective_slack)
    schedule = _schedule(model, instance, restart_cost, outcome.status) if outcome.has_solution else None
    n_variables = sum(1 for _ in model.component_data_objects(pyo.Var, active=True))
    n_constraints = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return RestartSolve(
        restart_cost=restart_cost, schedule=schedule, objective=outcome.objective,
        bound=None if outcome.bound is None else outcome.bound + slack, status=outcome.status,
        solver=solver, solver_version=outcome.version, n_variables=n_variables, n_constraints=n_constraints,
        build_seconds=build_seconds, solve_seconds=outcome.seconds, message=outcome.message)


__all__ = ["RestartSolve", "seed_restart_model", "solve_restart_offline"]
