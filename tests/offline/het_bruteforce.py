"""Brute-force offline optimum on tiny *heterogeneous* instances (issue 64), from the constraints alone.

Like ``offline_bruteforce.py`` (whose per-server splits, fewest PSs and packing search it reuses) it uses
neither Pyomo nor ``primaldual.models`` nor ``primaldual.offline``: only the data model (capacities, demands,
``a_i``, ``N_i``, ``b_i``, ``B_i``, ``f_i``, the servers' types and ``Instance.work_by_type``).

A job's schedule picks, per slot, one gpu type and a worker count on it (Gavel's rule), then splits the count
over that type's servers and the fewest PSs over the PS servers. Eq. (2) is the verifier's:
``sum_t n_t / W^{g_t} >= 1 - 1e-9``.

Pruning (exact, each keeps an optimal schedule): **minimal work**: if removing one worker from some running slot
keeps (2), the schedule with it removed is feasible, frees capacity and completes no later; so only schedules
where no single worker can be removed are enumerated (in particular nothing runs after (2) is met).
"""

from __future__ import annotations

import itertools

import numpy as np
from offline_bruteforce import _fewest_ps, _fits_alone, _splits, best_packing

DONE = 1.0 - 1e-9


def _type_plans(work, slots: int, chunks: int, most: list[int]):
    """Per slot ``(type, workers)`` (``(None, 0)``: idle) with the work done and no worker removable."""
    options = [(None, 0)] + [(g, n) for g in range(len(work)) for n in range(1, min(chunks, most[g]) + 1)]

    def extend(prefix, done):
        if done >= DONE:
            yield prefix + [(None, 0)] * (slots - len(prefix))
            return
        if len(prefix) == slots:
            return
        for g, n in options:
            yield from extend(prefix + [(g, n)], done + (n / work[g] if n else 0.0))

    for plan in extend([], 0.0):
        total = sum(n / work[g] for g, n in plan if n)
        if all(total - 1.0 / work[g] < DONE for g, n in plan if n):
            yield plan


def het_job_schedules(instance, i):
    """All minimal schedules of job i alone, as (utility, workers (T,H), PSs (T,K)), best utility first."""
    job, cluster, horizon = instance.jobs[i], instance.cluster, instance.horizon
    index = np.asarray(cluster.worker_type_index)
    worker_caps = [_fits_alone(job.worker_demand, c) for c in cluster.worker_capacity]
    ps_caps = [_fits_alone(job.ps_demand, c) for c in cluster.ps_capacity]
    most = [sum(c for c, g in zip(worker_caps, index) if g == k) for k in range(len(cluster.gpu_types))]
    slots = list(range(job.arrival, horizon))
    out = []
    for plan in _type_plans(instance.work_by_type[i], len(slots), job.chunks, most):
        per_slot = []
        for g, n in plan:
            if n == 0:
                per_slot.append([((0,) * len(worker_caps), (0,) * len(ps_caps))])
                continue
            servers = _fewest_ps(n, job.worker_bandwidth_gbps, job.ps_bandwidth_gbps)
            caps = [c if index[h] == g else 0 for h, c in enumerate(worker_caps)]
            per_slot.append([] if servers > n else
                            [(y, z) for y in _splits(n, caps) for z in _splits(servers, ps_caps)])
        if any(not options for options in per_slot):
            continue
        completion = max(t for t, (_, n) in zip(slots, plan) if n)
        utility = float(job.utility(completion - job.arrival))
        for choice in itertools.product(*per_slot):
            y = np.zeros((horizon, len(worker_caps)), dtype=np.int64)
            z = np.zeros((horizon, len(ps_caps)), dtype=np.int64)
            for t, (workers, parameter_servers) in zip(slots, choice):
                y[t], z[t] = workers, parameter_servers
            out.append((utility, y, z))
    out.sort(key=lambda entry: -entry[0])
    return out


def het_brute_force_optimum(instance):
    """``(value, {job: (workers, PSs)})`` of an optimal heterogeneous schedule, by exhaustive search."""
    return best_packing(instance, [het_job_schedules(instance, i) for i in range(instance.n_jobs)])


def het_restart_job_schedules(instance, i, restart_cost):
    """All schedules of job i alone that complete under ``restart_cost`` on a heterogeneous cluster, in the words
    of the simulator's rule (``restart_bruteforce.py``) with the work at each type's speed: a slot's ``D`` workers,
    all on one type g, do ``D / W^g`` of the job, ``(1 - F) D / W^g`` where the placement differs from the slot
    before (a change of type always does); done at ``1 - 1e-9``."""
    from restart_bruteforce import _placements

    job, horizon, cluster = instance.jobs[i], instance.horizon, instance.cluster
    index = np.asarray(cluster.worker_type_index)
    worker_caps = [_fits_alone(job.worker_demand, c) for c in cluster.worker_capacity]
    ps_caps = [_fits_alone(job.ps_demand, c) for c in cluster.ps_capacity]
    work = instance.work_by_type[i]
    options = []
    for y, z in _placements(job, worker_caps, ps_caps):
        types = {int(index[h]) for h, n in enumerate(y) if n}
        if len(types) == 1:
            options.append((y, z, sum(y) / work[types.pop()]))
    out = []
    y = np.zeros((horizon, len(worker_caps)), dtype=np.int64)
    z = np.zeros((horizon, len(ps_caps)), dtype=np.int64)

    def extend(t, remaining, previous):
        if t == horizon:
            return
        extend(t + 1, remaining, None)
        for workers, servers, fraction in options:
            supplied = fraction * (1.0 if previous == (workers, servers) else 1.0 - restart_cost)
            y[t], z[t] = workers, servers
            if remaining - supplied <= 1e-9:
                out.append((float(job.utility(t - job.arrival)), y.copy(), z.copy()))
            else:
                extend(t + 1, remaining - supplied, (workers, servers))
            y[t], z[t] = 0, 0

    extend(job.arrival, 1.0, None)
    out.sort(key=lambda entry: -entry[0])
    return out


def het_restart_brute_force(instance, restart_cost):
    """``(value, {job: (workers, PSs)})``: the optimum under ``restart_cost`` on a heterogeneous cluster."""
    return best_packing(instance, [het_restart_job_schedules(instance, i, restart_cost)
                                   for i in range(instance.n_jobs)])
