"""The row-building helpers of :mod:`primaldual.models.offline`: utility flooring, the strong cut and capacities.

:func:`primaldual.models.offline.build_offline_model` composes its ``declare_*`` functions; those that write
many rows (the objective's utilities, the cumulative-work cut of the strong formulation, and the capacity rows
(4)-(5) per server or pooled) delegate the row construction to this module. See that module's docstring for
the formulation.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from primaldual.core.instance import Instance
from primaldual.models.sparsity import UTILITY_FLOOR  # noqa: F401 - its home is the Pyomo-free sparsity module



def floored_utilities(instance: Instance, completion_slots) -> tuple[dict, float]:
    """``f_i(t - a_i)`` per completion slot, with values under :data:`UTILITY_FLOOR` x the largest set to 0; and
    the most this can under-count the objective (the model's ``objective_slack``).

    Sigmoids fall to 1e-36 and below late in the horizon; such costs trouble LP solvers ("excessively small
    costs") and mean nothing. A job completes once, so the under-count is at most its largest floored value.
    """
    utility = {(i, t): float(instance.jobs[i].utility(t - instance.jobs[i].arrival)) for i, t in completion_slots}
    floor = UTILITY_FLOOR * max((abs(v) for v in utility.values()), default=0.0)
    floored: dict[int, float] = {}
    for (i, t), value in utility.items():
        if 0 < abs(value) < floor:
            floored[i] = max(floored.get(i, 0.0), abs(value))
            utility[i, t] = 0.0
    return utility, float(sum(floored.values()))


def add_cumulative_work_rows(model, arrival, horizon, completion_slots, workers_in_slot) -> None:
    """The strong formulation's cut (module docstring): ``work_done`` is the running sum of the workers, and a
    job that completes by slot t has done its work V_i by slot t."""
    model.work_done = pyo.Var(model.job_slots, domain=pyo.NonNegativeReals,
                              doc="worker-slots of job i in slots a_i..t (the running sum of eq. (2))")
    model.work_done_definition = pyo.Constraint(
        model.job_slots,
        rule=lambda m, i, t: m.work_done[i, t]
        == (m.work_done[i, t - 1] if t > arrival[i] else 0) + workers_in_slot(m, i, t),
        doc="running sum of the workers of eq. (2)",
    )
    cumulative = [(i, t) for i, t in completion_slots if t < horizon - 1]  # at T-1 it is eq. (2) itself
    model.cumulative_work_slots = pyo.Set(dimen=2, initialize=cumulative,
                                          doc="(i, t): completion slots before the last slot")
    model.cumulative_work = pyo.Constraint(
        model.cumulative_work_slots,
        rule=lambda m, i, t: m.work_done[i, t] >= m.work_units[i] * (m.admit[i] - m.unfinished[i, t + 1]),
        doc="valid cut on eq. (2): a job that completes by slot t has done its work V_i by slot t",
    )


def can_bind(terms: list[tuple[float, int]], capacity: float) -> bool:
    """Whether ``sum demand x upper bound`` can exceed ``capacity``; otherwise the row is redundant."""
    return sum(d * u for d, u in terms) > capacity + 1e-9


def add_server_capacity_rows(model, instance, jobs, arrival, demand_w, demand_s, sparsity) -> None:
    """Eqs. (4)-(5), one row per (slot, server, resource) where the variables' bounds could exceed it."""
    horizon = instance.horizon
    cluster = instance.cluster
    for name, equation, capacity, demand, fit, var_name in (
        ("worker_capacity", "(4)", cluster.worker_capacity, demand_w, sparsity.worker_fit, "workers"),
        ("ps_capacity", "(5)", cluster.ps_capacity, demand_s, sparsity.ps_fit, "parameter_servers"),
    ):
        users: dict[tuple[int, int, int], list[int]] = {}
        for t in range(horizon):
            for server in range(capacity.shape[0]):
                for r in range(cluster.n_resources):
                    present = [
                        i for i in jobs
                        if arrival[i] <= t and fit[i][server] > 0 and demand[i][r] > 0
                    ]
                    if present and can_bind([(demand[i][r], fit[i][server]) for i in present], capacity[server, r]):
                        users[(t, server, r)] = present
        rows = pyo.Set(dimen=3, initialize=list(users), doc=f"(t, server, r) rows of eq. {equation} that can bind")
        setattr(model, f"{name}_rows", rows)

        def rule(m, t, server, r, users=users, capacity=capacity, demand=demand, var_name=var_name):
            var = getattr(m, var_name)
            return sum(float(demand[i][r]) * var[i, t, server] for i in users[(t, server, r)]) <= float(
                capacity[server, r]
            )

        pool = "worker" if name == "worker_capacity" else "PS"
        setattr(model, name, pyo.Constraint(
            rows, rule=rule, doc=f"eq. {equation}: {pool}-server capacity per slot and resource"))


def add_pooled_capacity_rows(model, instance, jobs, arrival, demand_w, demand_s, worker_total, ps_total,
                             workers: bool = True) -> None:
    """Eqs. (4)-(5) summed over the servers of each pool: one row per (slot, resource) that can bind
    (``workers=False``: the PS pool's only, the worker pool being pooled per gpu type)."""
    horizon = instance.horizon
    cluster = instance.cluster
    pools = (
        ("worker_capacity", "(4)", cluster.worker_capacity.sum(axis=0), demand_w, worker_total, "workers"),
        ("ps_capacity", "(5)", cluster.ps_capacity.sum(axis=0), demand_s, ps_total, "parameter_servers"),
    )
    for name, equation, capacity, demand, total, var_name in pools[(0 if workers else 1):]:
        users: dict[tuple[int, int], list[int]] = {}
        for t in range(horizon):
            for r in range(cluster.n_resources):
                present = [i for i in jobs if arrival[i] <= t and demand[i][r] > 0]
                if present and can_bind([(demand[i][r], total[i]) for i in present], capacity[r]):
                    users[(t, r)] = present
        rows = pyo.Set(dimen=2, initialize=list(users), doc=f"(t, r) rows of eq. {equation}, pooled, that can bind")
        setattr(model, f"{name}_rows", rows)

        def rule(m, t, r, users=users, capacity=capacity, demand=demand, var_name=var_name):
            var = getattr(m, var_name)
            return sum(float(demand[i][r]) * var[i, t] for i in users[(t, r)]) <= float(capacity[r])

        pool = "worker" if name == "worker_capacity" else "PS"
        setattr(model, name, pyo.Constraint(
            rows, rule=rule, doc=f"eq. {equation} pooled: total {pool}-pool capacity per slot and resource"))


def add_pooled_type_capacity_rows(model, instance, jobs, arrival, demand_w, bounds) -> None:
    """Eq. (4) summed over the servers of each gpu type: one row per (slot, type, resource) that can bind
    (``bounds[i][g]``: the most workers of job i on type g)."""
    cluster = instance.cluster
    index = cluster.worker_type_index
    capacity = np.stack([cluster.worker_capacity[index == g].sum(axis=0) for g in range(len(cluster.gpu_types))])
    users: dict[tuple[int, int, int], list[int]] = {}
    for t in range(instance.horizon):
        for g in range(capacity.shape[0]):
            for r in range(cluster.n_resources):
                present = [i for i in jobs if arrival[i] <= t and bounds[i][g] > 0 and demand_w[i][r] > 0]
                if present and can_bind([(demand_w[i][r], bounds[i][g]) for i in present], capacity[g, r]):
                    users[(t, g, r)] = present
    model.worker_capacity_rows = pyo.Set(dimen=3, initialize=list(users),
                                         doc="(t, g, r) rows of eq. (4), pooled per gpu type, that can bind")
    model.worker_capacity = pyo.Constraint(
        model.worker_capacity_rows,
        rule=lambda m, t, g, r: sum(float(demand_w[i][r]) * m.workers[i, t, g] for i in users[(t, g, r)])
        <= float(capacity[g, r]), doc="eq. (4) pooled per gpu type: capacity of the type's servers")
