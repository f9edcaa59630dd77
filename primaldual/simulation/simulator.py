"""The time-slotted online simulator: feeds arrivals to a scheduler slot by slot and applies its allocations.

At each slot ``t = 0..T-1`` the simulator

1. tells the scheduler which jobs arrive (``on_arrival(t, jobs)``, jobs in index order; skipped when none);
2. asks for the slot's allocation (``allocate(t, state)`` -> ``{job: Allocation}``);
3. checks it, refusing with :class:`SimulationError` any allocation that breaks a rule of problem (1):
   non-negative integer counts (12)-(13), nothing before arrival (9)-(10), at most ``N_i`` workers (3), PS
   bandwidth (6), no more PSs than workers (7), worker- and PS-server capacities (4)-(5) summed over all jobs
   of the slot, and nothing for a job that has already completed;
4. applies it: each job's remaining work ``V_i - sum of its workers so far`` drops by its workers; a job whose
   remaining work reaches 0 completes in ``t`` (``on_completion(t, jobs)``). Refusing allocations to completed
   jobs makes ``t`` the last slot with a worker, i.e. the completion slot of eq. (8).

The result's :class:`~primaldual.core.schedule.Schedule` holds the **completed** jobs only: a job that received
resources but did not finish its work by the horizon earns nothing (docs/architecture.md, Model conventions)
and is left out, so the schedule satisfies eq. (2) and passes :func:`primaldual.core.verify.verify`. Such jobs still count in
``metrics.admitted``, ``metrics.unfinished``, ``metrics.wasted_worker_slots`` and the utilisation.

The scheduler's own runtime (``start``, ``on_arrival``, ``allocate``, ``on_completion``) is measured with
``time.perf_counter`` and reported as ``scheduler_seconds``; the simulator's checks are not included.

**Restart costs** (``restart_cost = F`` in ``[0, 1)``, default 0 = the paper's model, where changes are free).
In each slot where a job runs and its per-server worker/PS placement differs from the placement of the slot
just before (a start counts; a resumption after a pause counts; growing, shrinking or moving counts), the job
loses ``F`` of that slot's work: its ``D`` workers supply ``(1 - F) D`` worker-slots instead of ``D``. The rule is
the same for every scheduler. Completion (remaining work <= 0) and so utility follow from the reduced work;
``SlotState.remaining_work`` is the ceiling of the fractional remaining work. A schedule that completes under
restart costs still satisfies eq. (2) (it received at least ``V_i`` worker-slots), so it passes the verifier,
and the offline optimum without restart costs stays a valid upper bound on every run with them. A tighter one:
each completed job received at least ``V_i + 1`` worker-slots (its start lost ``F`` of one), so the optimum of
the instance with one more worker-slot per job bounds every run (:mod:`primaldual.evaluation.restart_bound`).
Realistic values: published systems put a checkpoint-restart or re-allocation of a data-parallel job at
tens of seconds to about a minute (Gavel, OSDI 2020, schedules in rounds of minutes to amortise it; Pollux,
OSDI 2021, re-allocates at most about once a minute for the same reason), i.e. roughly 0.01-0.1 of a
10-minute slot; 0.05-0.1 is the cost-heavy end. These are orders of magnitude, not measurements of this
project.
A scheduler that wants to plan around the cost may define ``set_restart_cost(F)``: the simulator calls it
before ``start``.

**Promises.** A scheduler that commits deadlines to admitted jobs may define ``promised_deadlines()`` returning
``{job: deadline slot}``; after the run the simulator counts ``promises = {made, kept, broken}`` from its own
account (kept = completed by the deadline). Schedulers without it have ``promises = None``. ``metrics.abandoned``
counts, for every scheduler, the jobs that were started (received resources) but never completed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.metrics import RunMetrics, compute_metrics
from primaldual.core.jsonable import jsonable
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState, make_scheduler

#: Absolute slack on capacity sums and on eq. (6), the same as the verifier's.
TOLERANCE = 1e-9

#: Remaining work at or below this counts as done (fractional work under restart costs).
WORK_TOLERANCE = 1e-9

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


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """One run of one online scheduler on one instance.

    ``schedule`` holds the completed jobs only; ``received`` lists every job that got resources.
    ``parameters`` and ``report`` are the scheduler's own (read after the run). ``promises`` is
    ``{"made", "kept", "broken"}`` for schedulers that commit deadlines, else None; ``restart_cost`` the
    simulator's ``F``.
    """

    scheduler: str
    schedule: Schedule
    metrics: RunMetrics
    parameters: dict
    report: dict
    received: tuple[int, ...]
    scheduler_seconds: float
    promises: dict | None = None
    restart_cost: float = 0.0

    @property
    def utility(self) -> float:
        return self.metrics.utility

    @property
    def admitted(self) -> int:
        return self.metrics.admitted

    @property
    def completed(self) -> int:
        return self.metrics.completed

    def to_dict(self) -> dict:
        return {
            "scheduler": self.scheduler,
            **self.metrics.to_dict(),
            "restart_cost": self.restart_cost,
            "promises": None if self.promises is None else dict(self.promises),
            "parameters": jsonable(self.parameters),
            "report": jsonable(self.report),
        }


class _Checker:
    """The rules of one instance, as arrays over jobs, so each slot's check is a few numpy operations."""

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


def check_restart_cost(value, label: str = "restart_cost") -> float:
    """``restart_cost`` must be a number in ``[0, 1)``; raises :class:`InputError` naming ``label`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or not 0.0 <= value < 1.0:
        raise InputError(f"{label}: must be a number in [0, 1) (a fraction of a slot's work), got {value!r}")
    return float(value) + 0.0  # -0.0 -> 0.0: recorded and echoed as the value it is


class _Restarts:
    """Each job's placement in the slot before, to charge the restart cost (module docstring)."""

    def __init__(self, n_jobs: int, cost: float):
        self.cost = cost
        self.last_slot = np.full(n_jobs, -2, dtype=np.int64)
        self.placements: dict[int, Allocation] = {}
        self.count = 0
        self.lost = 0.0

    def work(self, slot: int, jobs: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> np.ndarray:
        """The worker-slots each row supplies in ``slot``: its workers, less ``F`` of them on a restart."""
        supplied = workers.sum(axis=1).astype(float)
        for m, i in enumerate(jobs.tolist()):
            placement = Allocation(workers[m], parameter_servers[m])
            same = self.last_slot[i] == slot - 1 and self.placements[i].same_placement(placement)
            if not same:
                self.count += 1
                if self.cost > 0:
                    self.lost += self.cost * supplied[m]
                    supplied[m] *= 1.0 - self.cost
            self.last_slot[i] = slot
            self.placements[i] = placement
        return supplied


def _promises(deadlines: dict | None, completion_slot: np.ndarray) -> dict | None:
    """``{made, kept, broken}`` from the scheduler's ``promised_deadlines()`` and the simulator's completions."""
    if deadlines is None:
        return None
    kept = sum(1 for i, d in deadlines.items() if 0 <= completion_slot[int(i)] <= int(d))
    return {"made": len(deadlines), "kept": kept, "broken": len(deadlines) - kept}


def simulate(instance: Instance, scheduler: OnlineScheduler | str, *, restart_cost: float = 0.0) -> SimulationResult:
    """Run ``scheduler`` (an instance, or a registered name with default parameters) on ``instance``.

    ``restart_cost`` is the fraction of a slot's work a job loses in each slot where its placement changed
    (module docstring); it must lie in ``[0, 1)``. Raises :class:`SimulationError` on the first allocation that
    breaks a rule; the message names the scheduler, the slot, the job and what is broken.
    """
    restart_cost = check_restart_cost(restart_cost)
    if isinstance(scheduler, str):
        scheduler = make_scheduler(scheduler)
    name = str(getattr(scheduler, "name", type(scheduler).__name__))
    horizon, n_jobs = instance.horizon, instance.n_jobs
    checker = _Checker(instance, name)
    remaining = np.array(instance.work_units, dtype=float)
    arrived = np.zeros(n_jobs, dtype=bool)
    completed = np.zeros(n_jobs, dtype=bool)
    received = np.zeros(n_jobs, dtype=bool)
    completion_slot = np.full(n_jobs, -1, dtype=np.int64)
    given = np.zeros(n_jobs, dtype=np.int64)  # worker-slots each job received
    loads = [np.zeros(instance.cluster.n_resources) for _ in instance.pools]  # per pool and resource
    restarts = _Restarts(n_jobs, restart_cost)
    # Per job, the slots it ran in and its per-server counts there; dense arrays are built only at the end.
    records: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    by_slot: dict[int, list[int]] = {}
    for i, a in enumerate(instance.arrivals):
        by_slot.setdefault(int(a), []).append(i)

    clock = _Clock()
    if hasattr(scheduler, "set_restart_cost"):
        clock.call(scheduler.set_restart_cost, restart_cost)
    clock.call(scheduler.start, instance)
    for t in range(horizon):
        arriving = by_slot.get(t)
        if arriving:
            arrived[arriving] = True
            clock.call(scheduler.on_arrival, t, list(arriving))
        active = np.flatnonzero(arrived & ~completed)
        if not active.size and arrived.all():
            break  # every job has arrived and completed: nothing is left to allocate
        needed = np.maximum(np.ceil(remaining - WORK_TOLERANCE), 0).astype(np.int64)
        state = SlotState(slot=t, remaining_work=_frozen(needed), arrived=_frozen(arrived),
                          completed=_frozen(completed), active=tuple(int(i) for i in active), slots_left=horizon - t)
        allocation = clock.call(scheduler.allocate, t, state)

        jobs, workers, parameter_servers = checker.rows(t, allocation)
        nonempty = workers.any(axis=1) | parameter_servers.any(axis=1)
        if not nonempty.all():
            jobs, workers, parameter_servers = jobs[nonempty], workers[nonempty], parameter_servers[nonempty]
        if not jobs.size:
            continue
        checker.check(t, jobs, workers, parameter_servers, completed, completion_slot)

        per_job_workers = workers.sum(axis=1)
        remaining[jobs] -= restarts.work(t, jobs, workers, parameter_servers)
        given[jobs] += per_job_workers
        received[jobs] = True
        for load, per_job, demand in zip(loads, (per_job_workers, parameter_servers.sum(axis=1)), checker.demands):
            load += per_job @ demand[jobs]
        for m, i in enumerate(jobs.tolist()):
            records.setdefault(i, []).append((t, workers[m], parameter_servers[m]))
        finished = jobs[(remaining[jobs] <= WORK_TOLERANCE) & ~completed[jobs]]
        if finished.size:
            completed[finished] = True
            completion_slot[finished] = t
            clock.call(scheduler.on_completion, t, [int(i) for i in finished])

    # The deadlines a scheduler committed to (OASiS-LR/P): counted as promises, and drawn by the Gantt view.
    deadlines = scheduler.promised_deadlines() if hasattr(scheduler, "promised_deadlines") else None
    meta = {"generator": "primaldual.simulate", "scheduler": name,
            "parameters": jsonable(dict(scheduler.parameters()))}
    if deadlines is not None:
        meta["promised_deadlines"] = {str(i): int(d) for i, d in deadlines.items()}
    schedule = Schedule(_assignments(instance, records, completed), meta=meta)
    metrics = compute_metrics(
        instance, schedule, admitted=int(received.sum()), wasted_worker_slots=int(given[received & ~completed].sum()),
        worker_load=loads[0], ps_load=loads[1], scheduler_seconds=clock.seconds,
        extra={"restarts": restarts.count, "restart_lost_worker_slots": restarts.lost},
        abandoned=int((received & ~completed).sum()),
    )
    return SimulationResult(
        scheduler=name, schedule=schedule, metrics=metrics, parameters=dict(scheduler.parameters()),
        report=dict(scheduler.report()), received=tuple(int(i) for i in np.flatnonzero(received)),
        scheduler_seconds=clock.seconds, promises=_promises(deadlines, completion_slot), restart_cost=restart_cost,
    )


class _Clock:
    """Sums the time spent inside the scheduler's own methods."""

    def __init__(self):
        self.seconds = 0.0

    def call(self, method, *args):
        started = time.perf_counter()
        try:
            return method(*args)
        finally:
            self.seconds += time.perf_counter() - started


def _assignments(instance: Instance, records: dict, completed: np.ndarray) -> dict[int, JobSchedule]:
    assignments = {}
    for i in np.flatnonzero(completed).tolist():
        slots = [t for t, _, _ in records[i]]
        counts = []
        for m, pool in enumerate(instance.pools, start=1):  # record = (slot, workers, parameter servers)
            array = np.zeros((instance.horizon, pool.n_servers), dtype=np.int64)
            array[slots] = np.stack([record[m] for record in records[i]])
            counts.append(array)
        assignments[i] = JobSchedule(*counts)
    return assignments


def _frozen(array: np.ndarray) -> np.ndarray:
    out = array.copy()
    out.setflags(write=False)
    return out


__all__ = ["SimulationError", "SimulationResult", "check_restart_cost", "simulate"]
