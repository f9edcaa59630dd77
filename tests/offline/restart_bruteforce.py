"""Brute-force optimum *with restart costs* for tiny instances, written from the simulator's rule in words
(``primaldual/simulation/simulator.py``, module docstring: a slot where a running job's per-server placement
differs from the slot before, a start or a resumption included, supplies ``(1 - F) D`` worker-slots instead of
``D``; the job completes when its supplied work reaches ``V_i``; nothing is given to it afterwards).

It uses neither Pyomo nor ``primaldual.models`` nor the simulator: per job, every sequence of per-slot
placements from its arrival (workers split over servers, PSs split over servers, each satisfying (3), (6), (7)
and fitting on each server alone), stopped at the slot it completes in; then every combination of one
sequence (or rejection) per job under the per-server capacities, with a branch-and-bound cut on the remaining
jobs' best utilities. No pruning of PS counts: under restart costs the PS placement is part of "the same
placement", so fewer PSs is not obviously as good.
"""

from __future__ import annotations

import numpy as np
from offline_bruteforce import TOLERANCE, _fits_alone, _splits, best_packing

WORK_TOLERANCE = 1e-9


def _placements(job, worker_caps, ps_caps):
    """Every non-empty placement of one slot: (workers per server, PSs per server)."""
    out = []
    for total in range(1, job.chunks + 1):
        for y in _splits(total, worker_caps):
            for servers in range(0, total + 1):
                if servers * job.ps_bandwidth_gbps * (1 + TOLERANCE) + TOLERANCE < total * job.worker_bandwidth_gbps:
                    continue
                for z in _splits(servers, ps_caps):
                    out.append((y, z))
    return out


def restart_job_schedules(instance, i, restart_cost):
    """All schedules of job i alone that complete under ``restart_cost``, as (utility, workers, PSs)."""
    job, horizon, cluster = instance.jobs[i], instance.horizon, instance.cluster
    worker_caps = [_fits_alone(job.worker_demand, c) for c in cluster.worker_capacity]
    ps_caps = [_fits_alone(job.ps_demand, c) for c in cluster.ps_capacity]
    options = _placements(job, worker_caps, ps_caps)
    out = []
    y = np.zeros((horizon, len(worker_caps)), dtype=np.int64)
    z = np.zeros((horizon, len(ps_caps)), dtype=np.int64)

    def extend(t, remaining, previous):
        if t == horizon:
            return
        extend(t + 1, remaining, None)  # nothing in slot t
        for workers, servers in options:
            supplied = sum(workers) * (1.0 if previous == (workers, servers) else 1.0 - restart_cost)
            y[t], z[t] = workers, servers
            if remaining - supplied <= WORK_TOLERANCE:
                out.append((float(job.utility(t - job.arrival)), y.copy(), z.copy()))
            else:
                extend(t + 1, remaining - supplied, (workers, servers))
            y[t], z[t] = 0, 0

    extend(job.arrival, float(instance.work_units[i]), None)
    out.sort(key=lambda entry: -entry[0])
    return out


def restart_brute_force(instance, restart_cost):
    """``(value, {job: (workers, PSs)})`` of an optimal schedule under ``restart_cost``: the offline brute force's
    packing search over each job's schedules valued under the restart rule."""
    return best_packing(instance, [restart_job_schedules(instance, i, restart_cost) for i in range(instance.n_jobs)])
