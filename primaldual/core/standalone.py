"""Instance facts the prices are derived from: how many units fit on a server, and what each job earns alone.

``f_i^alone`` (:func:`standalone_utilities`) is the utility of job ``i`` alone on the empty cluster; it bounds
every capacity-respecting schedule of ``i`` and gives ``OPT >= max_i f_i^alone`` (:mod:`primaldual.oasis.constants`).
"""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Cluster, Instance, Job

#: Absolute slack when counting how many units fit in a free amount, so that three 0.1-unit workers fit in
#: 0.3 units. Five times smaller than the verifier's capacity tolerance (1e-9), so what fits here passes it.
FIT_TOLERANCE = 2e-10


def fit_counts(free: np.ndarray, demand: np.ndarray, limit: int) -> np.ndarray:
    """How many units of ``demand`` (shape (R,)) fit in ``free`` (shape (..., R)), capped at ``limit``.

    Resources with zero demand do not limit the count (zero demand costs nothing and fits anywhere); a
    resource with zero free amount and positive demand gives 0 (a zero-capacity resource is unusable).
    """
    free = np.asarray(free, dtype=float)
    demand = np.asarray(demand, dtype=float)
    demanded = np.flatnonzero(demand > 0)
    if demanded.size == 0:
        return np.full(free.shape[:-1], int(limit), dtype=np.int64)
    # Per demanded resource the same floor((free + tolerance) / demand) as one resource at a time, then the
    # least over them (a minimum is exact in any order): a few vector operations however many resources.
    counts = np.floor((free[..., demanded] + FIT_TOLERANCE) / demand[demanded]).min(axis=-1)
    return np.minimum(np.maximum(counts, 0), limit).astype(np.int64)


def fastest_standalone_workers(instance: Instance, i: int) -> int:
    """Most workers job ``i`` can run in one slot on the empty cluster (0 if none), respecting (3), (6), (7):
    :func:`widest_on_empty_cluster` with the limit ``min(N_i, V_i)``."""
    job = instance.jobs[i]
    return widest_on_empty_cluster(instance.cluster, job, int(min(job.chunks, instance.work_units[i])))


def widest_on_empty_cluster(cluster, job, limit: int) -> int:
    """Most workers ``D <= limit`` of ``job`` on the empty cluster (0 if none) whose ``Z(D)`` PSs fit too.

    Worker servers take ``min(limit, fit)`` workers each; the ``Z(D) = ceil(D b_i / B_i)`` PSs must fit on the
    PS servers and satisfy ``Z(D) <= D`` (eq. (7)). Every ``D`` up to ``limit`` and the worker servers' total is
    checked at once; the largest feasible one is the answer.
    """
    worker_total = int(fit_counts(cluster.worker_capacity, job.worker_demand, limit).sum())
    ps_total = int(fit_counts(cluster.ps_capacity, job.ps_demand, limit).sum())
    counts = np.arange(min(limit, worker_total) + 1)
    needed = job.min_parameter_servers(counts)
    feasible = (needed <= counts) & (needed <= ps_total)
    feasible[0] = True
    return int(np.flatnonzero(feasible)[-1])


def standalone_utilities(instance: Instance) -> np.ndarray:
    """``f_i^alone``: utility of job ``i`` running alone on the empty cluster as fast as it can (0 if it cannot
    finish by the horizon). Every schedule of ``i`` that respects the servers' capacities completes no earlier,
    so ``f_i^alone`` bounds its utility from above; and ``OPT >= max_i f_i^alone``.
    """
    out = np.zeros(instance.n_jobs)
    for i, job in enumerate(instance.jobs):
        slots = standalone_slots(instance, i)
        if slots and job.arrival + slots <= instance.horizon:
            out[i] = float(job.utility(slots - 1))
    return out


def standalone_slots(instance: Instance, i: int) -> int:
    """The fewest slots job ``i`` alone on the empty cluster needs (0 if it fits nowhere). On a heterogeneous
    cluster, per type ``g`` the widest ``D_g`` on that type's servers does ``D_g / W_i^g`` of the job per slot,
    and no slot does more than the best of these rates (one type per slot), so the fewest slots is
    ``min_g ceil(W_i^g / D_g)`` (up to the verifier's relative 1e-9)."""
    if not instance.cluster.heterogeneous:
        workers = fastest_standalone_workers(instance, i)
        return -(-int(instance.work_units[i]) // workers) if workers else 0
    cluster, job = instance.cluster, instance.jobs[i]
    best = 0
    for g, work in enumerate(instance.work_by_type[i]):
        rows = cluster.worker_type_index == g
        typed = Cluster(cluster.resources, cluster.worker_capacity[rows], cluster.ps_capacity)
        workers = widest_on_empty_cluster(typed, job, int(job.chunks))
        if workers:
            slots = max(int(np.ceil(work / workers * (1.0 - 1e-9))), 1)
            best = slots if not best else min(best, slots)
    return best


def _demand_fraction(job: Job, demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per resource, the largest share of one server's capacity that ``job`` alone can hold in one slot."""
    counts = fit_counts(capacity, demand, job.chunks)  # (servers,)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(capacity > 0, demand[None, :] * counts[:, None] / np.where(capacity > 0, capacity, 1), 0.0)
    return share.max(axis=0) if share.shape[0] else np.zeros(demand.shape)
