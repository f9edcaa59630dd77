"""The rules an online scheduler's allocations must keep, checked by the simulator slot by slot.

A scheduler's ``allocate`` returns ``{job: Allocation}``; :class:`SlotRules` refuses, with a
:class:`SimulationError` that names the scheduler, the slot, the job, a stable rule key and the paper's equation,
any allocation that is malformed (not a mapping of known jobs to per-server counts of the cluster's shape) or
breaks a rule of problem (1): non-negative integer counts (12)-(13), nothing before arrival (9)-(10), at most
``N_i`` workers (3), PS bandwidth (6), no more PSs than workers (7), worker- and PS-server capacities (4)-(5)
summed over all jobs of the slot, and nothing for a job that has already completed. On a heterogeneous cluster
(:mod:`primaldual.core.gpu_types`) a job's workers in one slot must be of one GPU type (Gavel's rule, the
verifier's ``one_type``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from primaldual.core.instance import Instance

#: Absolute slack on capacity sums and on eq. (6), the same as the verifier's.
TOLERANCE = 1e-9

#: Counts above this are refused as malformed before they are converted to int64 (no server holds 2^53 units).
MAX_COUNT = 2.0**53



class SimulationError(RuntimeError):
    """A scheduler returned an allocation that breaks a rule; ``rule`` is a stable key, ``equation`` the
    paper's equation number where one applies."""

    def __init__(self, scheduler: str, slot: int, message: str, *, job: int | None = None,
                 rule: str = "", equation: str | None = None):
        self.scheduler, self.slot, self.job, self.rule, self.equation = scheduler, slot, job, rule, equation
        where = f"scheduler {scheduler!r}, slot {slot}" + (f", job {job}" if job is not None else "")
        suffix = (f" (eq. {equation})" if equation else "") + (f" [rule {rule}]" if rule else "")
        super().__init__(f"{where}: {message}{suffix}")


class SlotRules:
    """The rules of problem (1) for one instance, as arrays over jobs, so each slot's check is a few numpy
    operations: :meth:`rows` reads an allocation into integer count arrays (refusing a malformed one),
    :meth:`check` refuses counts that break a constraint. The verifier checks the same rules on a whole
    schedule, independently (:mod:`primaldual.core.verify`)."""

    def __init__(self, instance: Instance, name: str):
        self.name = name
        self.n_jobs = instance.n_jobs
        self.n_worker_servers = instance.cluster.n_worker_servers
        self.n_ps_servers = instance.cluster.n_ps_servers
        self.resources = instance.cluster.resources
        self.pools = instance.pools
        self.arrivals = instance.arrivals
        self.chunks = np.array([j.chunks for j in instance.jobs], dtype=np.int64)
        self.worker_bandwidth = np.array([j.worker_bandwidth_gbps for j in instance.jobs])
        self.ps_bandwidth = np.array([j.ps_bandwidth_gbps for j in instance.jobs])
        self.demands = tuple(pool.demand_matrix(instance) for pool in self.pools)  # (I, R) per pool
        cluster = instance.cluster
        self.gpu_types = cluster.gpu_types
        # (H, G) one-hot of each worker server's type; None on a homogeneous cluster.
        self.type_matrix = None if cluster.worker_types is None else \
            (cluster.worker_type_index[:, None] == np.arange(len(cluster.gpu_types))[None, :]).astype(np.int64)

    def error(self, slot, message, job=None, rule="", equation=None):
        return SimulationError(self.name, slot, message, job=job, rule=rule, equation=equation)

    def rows(self, slot: int, allocation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The allocation as ``jobs`` (n,), ``workers`` (n, H), ``parameter_servers`` (n, K) of integer counts;
        raises on a malformed allocation."""
        if not isinstance(allocation, Mapping):
            raise self.error(
                slot, f"allocate() must return a dict job -> Allocation, got {type(allocation).__name__}",
                rule="type",
            )
        n = len(allocation)
        jobs = np.empty(n, dtype=np.int64)
        workers = np.empty((n, self.n_worker_servers))
        parameter_servers = np.empty((n, self.n_ps_servers))
        for m, (i, entry) in enumerate(allocation.items()):
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_jobs:
                raise self.error(slot, f"unknown job {i!r} (the instance has jobs 0..{self.n_jobs - 1})",
                                 rule="unknown_job")
            jobs[m] = i
            try:
                y = np.asarray(entry.workers, dtype=float)
                z = np.asarray(entry.parameter_servers, dtype=float)
            except (AttributeError, TypeError, ValueError):
                raise self.error(
                    slot, f"the allocation must be an Allocation(workers, parameter_servers) of numbers, "
                    f"got {entry!r}", job=int(i), rule="type",
                ) from None
            if y.shape != (self.n_worker_servers,) or z.shape != (self.n_ps_servers,):
                raise self.error(
                    slot, f"workers must have shape ({self.n_worker_servers},) and parameter_servers "
                    f"({self.n_ps_servers},), got {y.shape} and {z.shape}", job=int(i), rule="shape",
                )
            workers[m], parameter_servers[m] = y, z
        for pool, counts in zip(self.pools, (workers, parameter_servers)):
            bad = ~np.isfinite(counts) | (counts < 0) | (counts != np.round(counts)) | (counts > MAX_COUNT)
            if bad.any():
                m, s = np.argwhere(bad)[0]
                raise self.error(
                    slot, f"{pool.units} on server {s} must be a non-negative integer, got {counts[m, s]!r}",
                    job=int(jobs[m]), rule="integrality", equation=pool.count_equation.strip("()"),
                )
        return jobs, workers.astype(np.int64), parameter_servers.astype(np.int64)

    def check(self, slot, jobs, workers, parameter_servers, completed, completion_slot) -> None:
        """Eqs. (3), (6), (7), (9)-(10), (4)-(5) and 'nothing after completion', for the non-empty rows."""
        if not jobs.size:
            return
        early = self.arrivals[jobs] > slot
        if early.any():
            m = int(np.flatnonzero(early)[0])
            equation = "9" if workers[m].any() else "10"
            raise self.error(
                slot, f"allocates resources before the job's arrival slot {int(self.arrivals[jobs[m]])}",
                job=int(jobs[m]), rule="arrival", equation=equation,
            )
        done = completed[jobs]
        if done.any():
            m = int(np.flatnonzero(done)[0])
            raise self.error(
                slot, f"allocates resources to a job that completed its work in slot {completion_slot[jobs[m]]}",
                job=int(jobs[m]), rule="completed",
            )
        per_job_workers = workers.sum(axis=1)
        per_job_ps = parameter_servers.sum(axis=1)
        over_cap = per_job_workers > self.chunks[jobs]
        if over_cap.any():
            m = int(np.flatnonzero(over_cap)[0])
            raise self.error(
                slot, f"{per_job_workers[m]} workers, more than its N = {self.chunks[jobs[m]]} chunks",
                job=int(jobs[m]), rule="worker_cap", equation="3",
            )
        lhs = per_job_workers * self.worker_bandwidth[jobs]
        rhs = per_job_ps * self.ps_bandwidth[jobs]
        short = lhs > rhs * (1 + TOLERANCE) + TOLERANCE
        if short.any():
            m = int(np.flatnonzero(short)[0])
            i = int(jobs[m])
            raise self.error(
                slot, f"{per_job_workers[m]} workers x {self.worker_bandwidth[i]:g} Gbps need more PS bandwidth "
                f"than {per_job_ps[m]} PSs x {self.ps_bandwidth[i]:g} Gbps",
                job=i, rule="ps_bandwidth", equation="6",
            )
        too_many = per_job_ps > per_job_workers
        if too_many.any():
            m = int(np.flatnonzero(too_many)[0])
            raise self.error(
                slot, f"{per_job_ps[m]} PSs, more than its {per_job_workers[m]} workers",
                job=int(jobs[m]), rule="ps_count", equation="7",
            )
        self.check_types(slot, jobs, workers)
        for pool, counts, demand in zip(self.pools, (workers, parameter_servers), self.demands):
            load = counts.T @ demand[jobs]  # (servers, R)
            over = load > pool.capacity + TOLERANCE
            if over.any():
                s, r = np.argwhere(over)[0]
                users = [int(i) for i in jobs[counts[:, s] > 0]]
                raise self.error(
                    slot, f"{pool.server} server {s} {self.resources[r]}: jobs {users} use {load[s, r]:g}, "
                    f"capacity {pool.capacity[s, r]:g}", rule="capacity", equation=pool.capacity_equation.strip("()"),
                )


    def check_types(self, slot, jobs, workers) -> None:
        """Heterogeneous clusters: each row's workers on servers of one GPU type only. O(n H G)."""
        if self.type_matrix is None:
            return
        per_type = workers @ self.type_matrix  # (n, G)
        mixed = (per_type > 0).sum(axis=1) > 1
        if mixed.any():
            m = int(np.flatnonzero(mixed)[0])
            used = ", ".join(f"{per_type[m, g]} {self.gpu_types[g]}" for g in np.flatnonzero(per_type[m]))
            raise self.error(
                slot, f"workers of more than one gpu type ({used}); a job's workers in one slot are of one type",
                job=int(jobs[m]), rule="one_type", equation="2",
            )


__all__ = ["MAX_COUNT", "TOLERANCE", "SimulationError", "SlotRules"]
