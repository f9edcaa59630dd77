"""Which jobs, slots and servers get variables in the offline model (1)-(13), from the instance alone.

:func:`offline_sparsity` is what :mod:`primaldual.models.offline` (Pyomo) and :mod:`primaldual.offline.matrix`
(numpy arrays for highspy) both build on; it needs no Pyomo, so that the matrix path runs in a process that never
imports it (a spawned solver process then starts in a fraction of the time). See :mod:`primaldual.models.offline`
for the formulation these sets index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.instance import Instance

#: Utilities below this fraction of the largest are counted as 0 in the objective (see ``objective_slack``).
UTILITY_FLOOR = 1e-9

#: Absolute slack on capacities when counting how many workers fit (3 x 0.1 is 0.30000000000000004), the same
#: as the verifier's ``CAPACITY_TOLERANCE``: a count that fits here passes verification.
FIT_TOLERANCE = 1e-9


def _fit_counts(demand: np.ndarray, capacity: np.ndarray, most: int) -> np.ndarray:
    """How many units of ``demand`` (shape (R,)) fit on each server of ``capacity`` (shape (S, R)), capped at
    ``most``. Resources the job does not use (demand 0) do not limit it."""
    counts = np.full(capacity.shape[0], most, dtype=np.int64)
    for r in np.flatnonzero(demand > 0):
        fit = np.floor((capacity[:, r] + FIT_TOLERANCE) / demand[r]).astype(np.int64)
        counts = np.minimum(counts, fit)
    return np.maximum(counts, 0)


@dataclass(frozen=True)
class OfflineSparsity:
    """The index sets of the model, computed from the instance alone (no Pyomo).

    ``jobs``: jobs that get variables. ``earliest_completion[i]``: first slot job i may complete in.
    ``worker_fit[i]`` (``ps_fit[i]``): per worker (PS) server, how many workers (PSs) of job i fit, capped at
    ``N_i``; a server with 0 gets no variable.
    """

    jobs: tuple[int, ...]
    earliest_completion: dict[int, int]
    worker_fit: dict[int, np.ndarray]
    ps_fit: dict[int, np.ndarray]


def offline_sparsity(instance: Instance) -> OfflineSparsity:
    """Which jobs, slots and servers get variables (see the module docstring)."""
    cluster = instance.cluster
    jobs, earliest, worker_fit, ps_fit = [], {}, {}, {}
    for i, job in enumerate(instance.jobs):
        if not instance.can_finish[i] or job.worker_bandwidth_gbps > job.ps_bandwidth_gbps:
            continue  # no schedule reaches V_i by the horizon, or (6)-(7) admit no PS count
        workers = _fit_counts(job.worker_demand, cluster.worker_capacity, job.chunks)
        servers = _fit_counts(job.ps_demand, cluster.ps_capacity, job.chunks)
        if not workers.any() or not servers.any():
            continue
        jobs.append(i)
        earliest[i] = int(job.arrival + instance.shortest_duration[i] - 1)
        worker_fit[i], ps_fit[i] = workers, servers
    return OfflineSparsity(tuple(jobs), earliest, worker_fit, ps_fit)


def schedulable_jobs(instance: Instance) -> tuple[int, ...]:
    """The jobs that get variables in :func:`build_offline_model`; the others are rejected by every schedule."""
    return offline_sparsity(instance).jobs


__all__ = ["FIT_TOLERANCE", "OfflineSparsity", "UTILITY_FLOOR", "offline_sparsity", "schedulable_jobs"]
