"""Brute-force offline optimum for tiny instances, written from the paper's constraints alone.

It uses neither Pyomo nor ``primaldual.models`` nor ``primaldual.offline.solve``: only the data model
(``Instance``: capacities, demands, arrival, ``N_i``, ``b_i``, ``B_i``, ``V_i``, ``f_i``).

Exactness of the two prunings (each keeps at least one optimal schedule):

* **Fewest PSs.** In any feasible schedule, replacing a slot's PS count by the fewest that satisfy (6),
  ``ceil(D b / B)``, which is at most D when ``b <= B`` (so (7) still holds), frees capacity and changes no
  utility. So it suffices to enumerate exactly that many PSs per active slot.
* **Exact work.** If a job gets more than ``V_i`` worker-slots, removing one worker from any slot (and its
  PSs down to the fewest for the new count) keeps (2)-(7) and capacities, and either keeps the completion slot
  or makes it earlier, which cannot lower a non-increasing utility. Repeating, a job needs exactly ``V_i``.

Everything else is enumerated: per-slot worker totals, their split over worker servers, the PSs' split over
PS servers; then all combinations of per-job schedules (or rejection) under the per-server capacities, with a
branch-and-bound cut on the sum of the remaining jobs' best utilities.
"""

from __future__ import annotations

import itertools

import numpy as np

TOLERANCE = 1e-9


def _fits_alone(demand, capacity) -> int:
    """Largest n with n * demand <= capacity on every resource (demand 0 never limits; capped at 64)."""
    n = 0
    while n < 64 and all((n + 1) * d <= c + TOLERANCE for d, c in zip(demand, capacity)):
        n += 1
    return n


def _fewest_ps(workers: int, worker_bandwidth: float, ps_bandwidth: float) -> int:
    z = 0
    while z * ps_bandwidth * (1 + TOLERANCE) + TOLERANCE < workers * worker_bandwidth:
        z += 1
    return z


def _splits(total: int, caps: list[int]):
    """Every vector of non-negative integers, one per server, each <= its cap, summing to ``total``."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _splits(total - first, caps[1:]):
            yield (first,) + rest


def _compositions(total: int, parts: int, most: int):
    """Per-slot worker totals over ``parts`` slots, each in 0..most, summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(total, most) + 1):
        for rest in _compositions(total - first, parts - 1, most):
            yield (first,) + rest


def job_schedules(instance, i):
    """All schedules of job i alone (see the module docstring), as (utility, workers (T,H), PSs (T,K))."""
    job = instance.jobs[i]
    horizon = instance.horizon
    cluster = instance.cluster
    work = int(instance.work_units[i])
    worker_caps = [_fits_alone(job.worker_demand, c) for c in cluster.worker_capacity]
    ps_caps = [_fits_alone(job.ps_demand, c) for c in cluster.ps_capacity]
    slots = list(range(job.arrival, horizon))
    out = []
    for totals in _compositions(work, len(slots), job.chunks):
        per_slot_options = []
        for total in totals:
            if total == 0:
                per_slot_options.append([((0,) * len(worker_caps), (0,) * len(ps_caps))])
                continue
            servers = _fewest_ps(total, job.worker_bandwidth_gbps, job.ps_bandwidth_gbps)
            if servers > total:
                per_slot_options.append([])
                continue
            options = [(y, z) for y in _splits(total, worker_caps) for z in _splits(servers, ps_caps)]
            per_slot_options.append(options)
        if any(not options for options in per_slot_options):
            continue
        completion = max(t for t, total in zip(slots, totals) if total > 0)
        utility = float(job.utility(completion - job.arrival))
        for choice in itertools.product(*per_slot_options):
            y = np.zeros((horizon, len(worker_caps)), dtype=np.int64)
            z = np.zeros((horizon, len(ps_caps)), dtype=np.int64)
            for t, (workers, parameter_servers) in zip(slots, choice):
                y[t] = workers
                z[t] = parameter_servers
            out.append((utility, y, z))
    out.sort(key=lambda entry: -entry[0])
    return out


def brute_force_optimum(instance):
    """``(value, {job: (workers, PSs)})`` of an optimal schedule, by exhaustive search with bounding."""
    return best_packing(instance, [job_schedules(instance, i) for i in range(instance.n_jobs)])


def best_packing(instance, candidates):
    """``(value, {job: (workers, PSs)})``: the best choice of at most one of ``candidates[i]`` (``(utility, y, z)``
    sorted by utility, best first) per job that fits the cluster in every slot, by search with bounding."""
    cluster = instance.cluster
    horizon = instance.horizon
    best_left = np.zeros(instance.n_jobs + 1)
    for i in reversed(range(instance.n_jobs)):
        best_left[i] = best_left[i + 1] + (candidates[i][0][0] if candidates[i] else 0.0)
    worker_load = np.zeros((horizon, cluster.n_worker_servers, cluster.n_resources))
    ps_load = np.zeros((horizon, cluster.n_ps_servers, cluster.n_resources))
    best = {"value": -1.0, "choice": {}}
    chosen: dict[int, tuple] = {}

    def search(i: int, value: float) -> None:
        if value + best_left[i] <= best["value"] + TOLERANCE:
            return
        if i == instance.n_jobs:
            best["value"] = value
            best["choice"] = dict(chosen)
            return
        job = instance.jobs[i]
        for utility, y, z in candidates[i]:
            if value + utility + best_left[i + 1] <= best["value"] + TOLERANCE:
                break  # sorted by utility: no later schedule of this job can do better
            add_w = y[:, :, None] * job.worker_demand[None, None, :]
            add_p = z[:, :, None] * job.ps_demand[None, None, :]
            if np.any(worker_load + add_w > cluster.worker_capacity[None] + TOLERANCE):
                continue
            if np.any(ps_load + add_p > cluster.ps_capacity[None] + TOLERANCE):
                continue
            worker_load[...] += add_w
            ps_load[...] += add_p
            chosen[i] = (y, z)
            search(i + 1, value + utility)
            del chosen[i]
            worker_load[...] -= add_w
            ps_load[...] -= add_p
        search(i + 1, value)  # reject job i

    search(0, 0.0)
    return max(best["value"], 0.0), best["choice"]
