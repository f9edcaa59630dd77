"""Put per-slot worker and PS counts on servers, first fit: how a 0-1 solution of the aggregated master of
:mod:`primaldual.offline.column_generation` (or a pooled solution) becomes a schedule of (1)-(13).

The aggregated master counts units per slot and group of identical servers; nothing in (1)-(13) links one
slot's servers to another's, so each job's counts are placed slot by slot on the capacity the jobs placed
before it left. A job that does not fit in some slot is dropped whole, so the result respects (4)-(5) by
construction (and is verified like every other schedule). On a heterogeneous cluster the schedules are per server
and each slot's workers are placed on the servers of the type they were on: the same work, the same type rule. Cost: O(jobs x slots x servers x resources).
"""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.schedule import JobSchedule, Schedule

#: Absolute slack when checking that a unit fits on a server, the verifier's capacity tolerance.
FIT_TOLERANCE = 1e-9


def place_on_servers(instance: Instance, schedules: dict[int, JobSchedule]) -> Schedule:
    """Put each job's per-slot worker and PS counts on servers, first fit, jobs in order of decreasing utility;
    a job that does not fit in some slot is dropped whole. The result respects (4)-(5) by construction."""
    cluster = instance.cluster
    residual = [np.array(cluster.worker_capacity, dtype=float)[None].repeat(instance.horizon, axis=0),
                np.array(cluster.ps_capacity, dtype=float)[None].repeat(instance.horizon, axis=0)]

    def utility(i):
        completion = schedules[i].completion_slot()
        return 0.0 if completion is None else float(instance.jobs[i].utility(completion - instance.jobs[i].arrival))

    placed = {}
    for i in sorted(schedules, key=lambda j: (-utility(j), j)):
        fitted = place_job(instance, i, schedules[i], residual)
        if fitted is not None:
            placed[i], residual = fitted
    return Schedule(placed)


def place_job(instance: Instance, i: int, schedule: JobSchedule, residual: list) -> tuple | None:
    """Job ``i``'s per-slot counts (``schedule``; on a heterogeneous cluster each slot on the servers of the
    type it runs on) first fit on ``residual`` (the worker (T, H, R) and PS (T, K, R) amounts left): (its
    per-server :class:`JobSchedule`, the residual after it, new arrays) or None if some slot does not fit."""
    cluster, spec = instance.cluster, instance.jobs[i]
    typed = cluster.worker_types is not None
    trial = [r.copy() for r in residual]
    arrays = []
    for pool, (counts, demand) in enumerate(((schedule.workers_per_slot, spec.worker_demand),
                                             (schedule.parameter_servers_per_slot, spec.ps_demand))):
        demand = np.asarray(demand, dtype=float)
        out = np.zeros(trial[pool].shape[:2], dtype=np.int64)
        for t in np.flatnonzero(counts):
            fit = np.full(out.shape[1], int(counts[t]), dtype=np.int64)
            if typed and pool == 0:  # on the servers of the type the job runs on in slot t, as given
                fit[cluster.worker_type_index != slot_type(cluster, schedule.workers[t])] = 0
            for r in np.flatnonzero(demand > 0):
                fit = np.minimum(fit, np.floor((trial[pool][t, :, r] + FIT_TOLERANCE) / demand[r]).astype(np.int64))
            fit = np.maximum(fit, 0)
            before = np.cumsum(fit) - fit
            take = np.clip(int(counts[t]) - before, 0, fit)
            if take.sum() < counts[t]:
                return None
            out[t] = take
            trial[pool][t] -= take[:, None] * demand[None, :]
        arrays.append(out)
    return JobSchedule(arrays[0], arrays[1]), trial


def slot_type(cluster, workers: np.ndarray) -> int:
    """The gpu type (index) of a slot's workers: its first busy server's (one type per slot, Gavel's rule)."""
    return int(cluster.worker_type_index[np.flatnonzero(workers)[0]])


__all__ = ["FIT_TOLERANCE", "place_job", "place_on_servers", "slot_type"]
