"""Dorm's partition MILP (Sun, Wen, Duong, Yan, SMARTCOMP 2017; docs/papers.md, OASiS), one solve per event.

Dorm gives each application a partition of containers and, at every application arrival and departure,
re-solves a MILP that maximises cluster utilisation subject to a bound on the fairness loss, with an
adjustment-overhead term for resized partitions. Here a partition is job ``j``'s workers on the worker servers
and its PSs on the PS servers (the two pools of eqs. (4)-(5)); the model decides all of them at once:

    max   sum_r util_r  -  ps_penalty * sum z  -  adjustment_penalty * sum changed         (objective ``utilisation``)
    util_r = sum_j w_jr D_j / (|R_w| sum_h c_hr)   over worker resources with capacity
    D_j    = sum_h y_jh                                                                   (expression ``workers``)
    min_workers_j run_j <= D_j <= max_workers_j run_j                                     (``worker_range_*``; eq. (3))
    run_j  = 1 for partitions that must survive                                           (variable bounds)
    ratio_j D_j <= sum_k z_jk <= D_j                                                      (``bandwidth``, ``ps_count``; eqs. (6)-(7))
    sum_j w_jr y_jh <= c_hr,  sum_j s_jr z_jk <= c_kr                                     (``worker_capacity``, ``ps_capacity``; (4)-(5))
    dev_j >= |unit_j D_j - fair_j|,  sum_j dev_j <= fairness_threshold                    (``fairness_*``; optional)
    D_j - previous_j <= max_workers_j changed_j,  previous_j - D_j <= previous_j changed_j (``adjust_*``)
    sum changed <= max_adjustments                                                        (``adjustments``; optional)
    y, z integer >= 0;  run, changed binary

The **pooled** variant (``build_dorm_model(problem, pooled=True)``) has one worker count and one PS count per
job instead of per-server counts, and pool-wide capacities ``sum_j w_jr D_j <= sum_h c_hr`` (the same for PSs):
a relaxation of the per-server capacities with J instead of J x (H + K) integers, for clusters where the
per-server model is too slow to re-solve at every event. Its counts must then be placed onto servers by the
caller (which may have to shrink a partition that does not pack).

``ratio_j = b_j / B_j``; ``unit_j`` is the dominant share of one worker with its ``ratio_j`` PS, so
``unit_j D_j`` is job j's dominant share and ``fair_j`` its share under DRF (computed by the caller). The fairness
loss is the total absolute deviation of the dominant shares from the DRF shares. The small ``ps_penalty`` keeps
PSs at the fewest eq. (6) allows (extra PSs would raise nothing but the PS pool's "utilisation"); the small
``adjustment_penalty`` is Dorm's adjustment overhead, and ``max_adjustments`` its hard form. Both penalties are
set well below the value of one worker, so utilisation always comes first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo


@dataclass(frozen=True, eq=False)
class DormProblem:
    """One event's partition problem; arrays are over the candidate jobs ``j`` (J of them)."""

    worker_capacity: np.ndarray  # (H, R)
    ps_capacity: np.ndarray  # (K, R)
    worker_demand: np.ndarray  # (J, R)
    ps_demand: np.ndarray  # (J, R)
    bandwidth_ratio: np.ndarray  # (J,) b_j / B_j
    min_workers: np.ndarray  # (J,) workers a running partition needs at least
    max_workers: np.ndarray  # (J,)
    must_run: np.ndarray  # (J,) bool
    previous_workers: np.ndarray  # (J,) the partition's size before the event (0 for a new job)
    share_unit: np.ndarray  # (J,)
    fair_share: np.ndarray  # (J,)
    fairness_threshold: float | None = None
    max_adjustments: int | None = None

    @property
    def n_jobs(self) -> int:
        return int(self.worker_demand.shape[0])


def _per_server_cap(capacity: np.ndarray, demand: np.ndarray) -> int:
    positive = demand > 0
    if not positive.any():
        return -1  # unbounded by this server
    return int(np.floor(((capacity[positive] + 1e-10) / demand[positive]).min()))


def _pool_cap(capacity: np.ndarray, demand: np.ndarray) -> int:
    """What fits of one job alone in a whole pool (-1: unbounded); a valid bound in both variants."""
    caps = [_per_server_cap(row, demand) for row in capacity]
    return -1 if min(caps) < 0 else sum(caps)


@dataclass(frozen=True, eq=False)
class _Sizes:
    """What the ``declare_*`` functions share: the problem, the capacities the model sees (per server, or one
    "server" per pool holding the pool's total when pooled) and the per-job caps on workers and PSs."""

    problem: DormProblem
    pooled: bool
    worker_capacity: np.ndarray
    ps_capacity: np.ndarray
    max_workers: list
    max_ps: list

    @classmethod
    def of(cls, problem: DormProblem, pooled: bool) -> "_Sizes":
        if pooled:
            # One "server" per pool holding the pool's total capacity: the capacity rows become pool-wide.
            worker_capacity = problem.worker_capacity.sum(axis=0, keepdims=True)
            ps_capacity = problem.ps_capacity.sum(axis=0, keepdims=True)
        else:
            worker_capacity, ps_capacity = problem.worker_capacity, problem.ps_capacity
        max_workers = [int(v) for v in problem.max_workers]
        max_ps = [int(np.ceil(ratio * m - 1e-9)) for ratio, m in zip(problem.bandwidth_ratio, max_workers)]
        return cls(problem, pooled, worker_capacity, ps_capacity, max_workers, max_ps)

    def count_bounds(self, pool: int, j: int, server: int) -> tuple[int, int]:
        """Bounds of job j's count on ``server`` of ``pool`` (0 workers, 1 PSs): what fits there, and the cap."""
        p = self.problem
        capacity, full, demand, most = ((self.worker_capacity, p.worker_capacity, p.worker_demand, self.max_workers)
                                        if pool == 0 else (self.ps_capacity, p.ps_capacity, p.ps_demand, self.max_ps))
        cap = _pool_cap(full, demand[j]) if self.pooled else _per_server_cap(capacity[server], demand[j])
        return (0, most[j] if cap < 0 else min(cap, most[j]))


def build_dorm_model(problem: DormProblem, pooled: bool = False) -> pyo.ConcreteModel:
    """Build (do not solve) the MILP above, per server or ``pooled``. Pure: no solver calls, no I/O.

    One ``declare_*`` function per group of equations of the module docstring, in the order the model's
    components are declared (which fixes the order of the solver's columns and rows)."""
    sizes = _Sizes.of(problem, pooled)
    model = pyo.ConcreteModel(name="dorm_partition")
    declare_sets(model, sizes)
    declare_counts(model, sizes)
    declare_partition_rows(model, sizes)
    declare_capacity(model, sizes)
    if problem.fairness_threshold is not None:
        declare_fairness(model, sizes)
    declare_adjustments(model, sizes)
    declare_objective(model, sizes)
    return model


def declare_sets(model, sizes: _Sizes) -> None:
    """The candidate jobs and the servers the model sees (one per pool when pooled)."""
    model.jobs = pyo.RangeSet(0, sizes.problem.n_jobs - 1)
    model.pooled = sizes.pooled
    model.worker_servers = pyo.RangeSet(0, sizes.worker_capacity.shape[0] - 1)
    model.ps_servers = pyo.RangeSet(0, sizes.ps_capacity.shape[0] - 1)


def declare_counts(model, sizes: _Sizes) -> None:
    """Worker counts ``y``, PS counts ``z``, the ``run`` indicators and the totals ``D_j`` (``workers``)."""
    p, max_workers = sizes.problem, sizes.max_workers
    model.y = pyo.Var(model.jobs, model.worker_servers, domain=pyo.NonNegativeIntegers,
                      bounds=lambda m, j, h: sizes.count_bounds(0, j, h))
    model.z = pyo.Var(model.jobs, model.ps_servers, domain=pyo.NonNegativeIntegers,
                      bounds=lambda m, j, k: sizes.count_bounds(1, j, k))
    model.run = pyo.Var(
        model.jobs, domain=pyo.Binary, bounds=lambda m, j: (1 if p.must_run[j] else 0, 1 if max_workers[j] > 0 else 0)
    )
    model.workers = pyo.Expression(model.jobs, rule=lambda m, j: sum(m.y[j, h] for h in m.worker_servers))
    model.parameter_servers = pyo.Expression(model.jobs, rule=lambda m, j: sum(m.z[j, k] for k in m.ps_servers))


def declare_partition_rows(model, sizes: _Sizes) -> None:
    """A running partition's size range (eq. (3)) and its PSs between the bandwidth's need and the workers
    (eqs. (6)-(7))."""
    p, max_workers = sizes.problem, sizes.max_workers
    model.worker_range_low = pyo.Constraint(
        model.jobs, rule=lambda m, j: m.workers[j] >= int(p.min_workers[j]) * m.run[j])
    model.worker_range_high = pyo.Constraint(
        model.jobs, rule=lambda m, j: m.workers[j] <= max_workers[j] * m.run[j])
    model.bandwidth = pyo.Constraint(
        model.jobs, rule=lambda m, j: float(p.bandwidth_ratio[j]) * m.workers[j] <= m.parameter_servers[j])
    model.ps_count = pyo.Constraint(model.jobs, rule=lambda m, j: m.parameter_servers[j] <= m.workers[j])


def _capacity_rule(counts, demand: np.ndarray, capacity: np.ndarray, n_jobs: int):
    def rule(m, s, r):
        users = [j for j in range(n_jobs) if demand[j, r] > 0]
        if not users:
            return pyo.Constraint.Skip
        return sum(float(demand[j, r]) * counts[j, s] for j in users) <= float(capacity[s, r])
    return rule


def declare_capacity(model, sizes: _Sizes) -> None:
    """Eqs. (4)-(5): per server and resource (per pool and resource when pooled)."""
    p = sizes.problem
    model.resources = pyo.RangeSet(0, p.worker_capacity.shape[1] - 1)
    model.worker_capacity = pyo.Constraint(
        model.worker_servers, model.resources,
        rule=_capacity_rule(model.y, p.worker_demand, sizes.worker_capacity, p.n_jobs))
    model.ps_capacity = pyo.Constraint(
        model.ps_servers, model.resources, rule=_capacity_rule(model.z, p.ps_demand, sizes.ps_capacity, p.n_jobs))


def declare_fairness(model, sizes: _Sizes) -> None:
    """The fairness loss: total absolute deviation of the dominant shares from DRF's, at most the threshold."""
    p = sizes.problem
    model.deviation = pyo.Var(model.jobs, domain=pyo.NonNegativeReals)
    model.fairness_above = pyo.Constraint(
        model.jobs,
        rule=lambda m, j: m.deviation[j] >= float(p.share_unit[j]) * m.workers[j] - float(p.fair_share[j]))
    model.fairness_below = pyo.Constraint(
        model.jobs,
        rule=lambda m, j: m.deviation[j] >= float(p.fair_share[j]) - float(p.share_unit[j]) * m.workers[j])
    model.fairness_loss = pyo.Constraint(
        expr=sum(model.deviation[j] for j in model.jobs) <= float(p.fairness_threshold))


def declare_adjustments(model, sizes: _Sizes) -> None:
    """``changed_j`` for each existing partition resized by the event, and at most ``max_adjustments`` of them."""
    p, max_workers = sizes.problem, sizes.max_workers
    existing = [j for j in range(p.n_jobs) if p.previous_workers[j] > 0]
    model.existing = pyo.Set(initialize=existing)
    model.changed = pyo.Var(model.existing, domain=pyo.Binary)
    model.adjust_up = pyo.Constraint(
        model.existing,
        rule=lambda m, j: m.workers[j] - int(p.previous_workers[j]) <= max_workers[j] * m.changed[j])
    model.adjust_down = pyo.Constraint(
        model.existing,
        rule=lambda m, j: int(p.previous_workers[j]) - m.workers[j] <= int(p.previous_workers[j]) * m.changed[j])
    if p.max_adjustments is not None and existing:
        model.adjustments = pyo.Constraint(
            expr=sum(model.changed[j] for j in model.existing) <= int(p.max_adjustments))


def declare_objective(model, sizes: _Sizes) -> None:
    """Utilisation of the worker resources, minus the two tie-breaking penalties."""
    p, n_jobs = sizes.problem, sizes.problem.n_jobs
    total = p.worker_capacity.sum(axis=0)
    counted = [r for r in range(p.worker_capacity.shape[1]) if total[r] > 0]
    weight = {r: 1.0 / (len(counted) * total[r]) for r in counted}
    gains = [sum(weight[r] * p.worker_demand[j, r] for r in counted) for j in range(n_jobs)]
    positive = [g for g in gains if g > 0]
    smallest = min(positive) if positive else 1.0
    # Tie-breakers far below the value of one worker, so they never outweigh utilisation.
    ps_penalty = 1e-3 * smallest / max(1, sum(sizes.max_ps))
    adjustment_penalty = 1e-2 * smallest / max(1, len(model.existing))
    model.utilisation = pyo.Objective(
        expr=sum(gains[j] * model.workers[j] for j in range(n_jobs))
        - ps_penalty * sum(model.parameter_servers[j] for j in model.jobs)
        - adjustment_penalty * sum(model.changed[j] for j in model.existing),
        sense=pyo.maximize,
    )


def extract_partition(model: pyo.ConcreteModel) -> tuple[np.ndarray, np.ndarray]:
    """Worker counts (J, H) and PS counts (J, K) of a solved model, rounded to integers (H = K = 1 when the
    model is pooled: each job's totals)."""
    n_jobs = len(model.jobs)
    y = np.zeros((n_jobs, len(model.worker_servers)), dtype=np.int64)
    z = np.zeros((n_jobs, len(model.ps_servers)), dtype=np.int64)
    for (j, h), var in model.y.items():
        y[j, h] = int(round(pyo.value(var) or 0))
    for (j, k), var in model.z.items():
        z[j, k] = int(round(pyo.value(var) or 0))
    return y, z


__all__ = ["DormProblem", "build_dorm_model", "extract_partition"]
