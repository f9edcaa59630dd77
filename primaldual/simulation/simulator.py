"""The time-slotted online simulator: feeds arrivals to a scheduler slot by slot and applies its allocations.

At each slot ``t = 0..T-1`` the simulator

1. tells the scheduler which jobs arrive (``on_arrival(t, jobs)``, jobs in index order; skipped when none);
2. asks for the slot's allocation (``allocate(t, state)`` -> ``{job: Allocation}``);
3. checks it (:mod:`primaldual.simulation.rules`), refusing with :class:`SimulationError` any allocation that
   breaks a rule of problem (1) or gives anything to a job that has already completed;
4. applies it: each job's remaining work ``V_i - sum of its workers so far`` drops by its workers; a job whose
   remaining work reaches 0 completes in ``t`` (``on_completion(t, jobs)``). Refusing allocations to completed
   jobs makes ``t`` the last slot with a worker, i.e. the completion slot of eq. (8).

**Heterogeneous clusters** (:mod:`primaldual.core.gpu_types`). A scheduler runs on one only if its class says
``handles_gpu_types = True`` (:class:`~primaldual.simulation.scheduler.OnlineScheduler`); the others are refused
in one line. A job's workers in one slot must all be of one type (the slot rules refuse a mix); ``D`` workers of
type ``g`` do the fraction ``D / W_i^g`` of the job (``(1 - F) D / W_i^g`` on a restart; a change of type is a
change of placement), and the job completes when its done fraction reaches 1 within the verifier's tolerance
(:mod:`primaldual.simulation.progress`, which also says what ``remaining_work`` and ``remaining_fraction`` hold).

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
``{job: deadline slot}``; after the run the simulator counts :class:`Promises` (made, kept, broken) from its own
account (kept = completed by the deadline). Schedulers without it have ``promises = None``. ``metrics.abandoned``
counts, for every scheduler, the jobs that were started (received resources) but never completed.

**Certificates.** A scheduler that proves a bound on the offline optimum about its own run reports it as
``report()["certificate"]`` (OASiS, OASiS-LR and OASiS-P do); the result carries it typed, as a
:class:`ReportedCertificate`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.gpu_types import refuse_heterogeneous
from primaldual.core.instance import Instance
from primaldual.core.metrics import RunMetrics, compute_metrics
from primaldual.core.jsonable import jsonable
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.simulation.progress import WORK_TOLERANCE, Progress
from primaldual.simulation.rules import SimulationError, SlotRules
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState, make_scheduler

@dataclass(frozen=True)
class Promises:
    """The deadlines a scheduler committed to admitted jobs, counted by the simulator: ``made``, ``kept``
    (completed by the deadline) and ``broken`` (``made - kept``).

    It also reads as the mapping ``{"made", "kept", "broken"}`` of its JSON form (``promises["kept"]``, and
    equal to that mapping), which is how results were read before it was typed."""

    made: int
    kept: int
    broken: int

    def to_dict(self) -> dict[str, int]:
        return {"made": self.made, "kept": self.kept, "broken": self.broken}

    def keys(self):
        return self.to_dict().keys()

    def __getitem__(self, key: str) -> int:
        return self.to_dict()[key]

    def __eq__(self, other) -> bool:
        if isinstance(other, Promises):
            return self.to_dict() == other.to_dict()
        if isinstance(other, Mapping):
            return self.to_dict() == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.made, self.kept, self.broken))


@dataclass(frozen=True)
class ReportedCertificate:
    """A bound on the offline optimum OPT that a scheduler proves about its own run, read from the JSON form it
    reports (``report()["certificate"]``): the dual objective ``D >= OPT`` (weak duality), the best upper bound
    it knows (``min(D, standalone bound)``) and that bound over the run's utility (an upper bound on OPT/ALG;
    None at ALG = 0). ``terms`` is the whole reported form, written as it is by ``run --json``."""

    dual_objective: float | None
    best_upper_bound: float | None
    best_ratio_upper_bound: float | None
    terms: Mapping[str, Any]

    @classmethod
    def from_report(cls, report: Mapping[str, Any]) -> "ReportedCertificate | None":
        """The certificate in a scheduler's report, or None if it reports none."""
        data = report.get("certificate")
        if not isinstance(data, Mapping) or not data:
            return None
        return cls(data.get("dual_objective"), data.get("best_upper_bound"), data.get("best_ratio_upper_bound"),
                   data)


@dataclass(frozen=True)
class ReportedLookahead:
    """How often a scheduler that looks ahead (OASiS-LR) did so, read from ``report()["lookahead"]``: the arrival
    batches it decided at, those it skipped (the rollout's estimated work over ``budget`` job-slots, a count that
    is the same on any machine), and the rest, rolled out, each for at most ``rollout_slots`` slots."""

    decisions: int
    skipped: int
    budget: int
    rollout_slots: int | None = None
    #: With the re-plan on: rolled-out batches it planned, those where it had no plan, and its size limit.
    replanned: int | None = None
    replan_skipped: int | None = None
    replan_cells: int | None = None

    @property
    def rolled_out(self) -> int:
        return self.decisions - self.skipped

    @classmethod
    def from_report(cls, report: Mapping[str, Any]) -> "ReportedLookahead | None":
        """The lookahead counts in a scheduler's report, or None if it reports none."""
        data = report.get("lookahead")
        if not isinstance(data, Mapping):
            return None
        optional = {key: None if data.get(key) is None else int(data[key])
                    for key in ("rollout_slots", "replanned", "replan_skipped", "replan_cells")}
        return cls(int(data["decisions"]), int(data["skipped"]), int(data["budget"]), **optional)

    def to_dict(self) -> dict:
        out = {"decisions": self.decisions, "skipped": self.skipped, "budget": self.budget,
               "rollout_slots": self.rollout_slots}
        if self.replanned is not None:
            out.update(replanned=self.replanned, replan_skipped=self.replan_skipped, replan_cells=self.replan_cells)
        return out

    def describe(self) -> str:
        """One line for a table's footer."""
        reach = "" if self.rollout_slots is None else \
            f", each a replay of at most {self.rollout_slots:,} slots and a fluid forecast past it"
        line = (f"looked ahead at {self.rolled_out} of {self.decisions} arrival batches "
                f"({self.skipped} skipped over the budget of {self.budget:,} job-slots{reach})")
        if self.replanned is None:
            return line
        return line + (f"; re-planned at {self.replanned} ({self.replan_skipped} without a plan: the instance over "
                       f"{self.replan_cells:,} job-slot-servers, or the LP over its iteration limit)")


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """One run of one online scheduler on one instance.

    ``schedule`` holds the completed jobs only; ``received`` lists every job that got resources.
    ``parameters`` and ``report`` are the scheduler's own (read after the run). ``promises`` are counted for
    schedulers that commit deadlines, else None; ``certificate`` is the bound on OPT the scheduler reported, if
    any; ``lookahead`` how often it looked ahead, if it does; ``restart_cost`` is the simulator's ``F``.
    """

    scheduler: str
    schedule: Schedule
    metrics: RunMetrics
    parameters: dict
    report: dict
    received: tuple[int, ...]
    scheduler_seconds: float
    promises: Promises | None = None
    restart_cost: float = 0.0
    certificate: ReportedCertificate | None = None
    lookahead: ReportedLookahead | None = None

    @property
    def utility(self) -> float:
        return self.metrics.utility

    @property
    def admitted(self) -> int:
        """The jobs the schedule holds (docs/formats.md, "Admitted"): the completed ones, for a run."""
        return self.metrics.admitted

    @property
    def started(self) -> int:
        """The jobs given any resources: admitted plus abandoned."""
        return self.metrics.started

    @property
    def completed(self) -> int:
        return self.metrics.completed

    def to_dict(self) -> dict:
        return {
            "scheduler": self.scheduler,
            **self.metrics.to_dict(),
            "restart_cost": self.restart_cost,
            "promises": None if self.promises is None else self.promises.to_dict(),
            "parameters": jsonable(self.parameters),
            "report": jsonable(self.report),
        }


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


def _promises(deadlines: dict | None, completion_slot: np.ndarray) -> Promises | None:
    """The promises of the scheduler's ``promised_deadlines()``, counted against the simulator's completions."""
    if deadlines is None:
        return None
    kept = sum(1 for i, d in deadlines.items() if 0 <= completion_slot[int(i)] <= int(d))
    return Promises(made=len(deadlines), kept=kept, broken=len(deadlines) - kept)


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
    if not getattr(scheduler, "handles_gpu_types", False):
        refuse_heterogeneous(instance, name)  # OnlineScheduler.handles_gpu_types: not every scheduler has learnt
    horizon, n_jobs = instance.horizon, instance.n_jobs
    checker = SlotRules(instance, name)
    progress = Progress(instance)
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
        allocation = clock.call(scheduler.allocate, t, _state(t, progress, arrived, completed, active, horizon))

        jobs, workers, parameter_servers = checker.rows(t, allocation)
        nonempty = workers.any(axis=1) | parameter_servers.any(axis=1)
        if not nonempty.all():
            jobs, workers, parameter_servers = jobs[nonempty], workers[nonempty], parameter_servers[nonempty]
        if not jobs.size:
            continue
        checker.check(t, jobs, workers, parameter_servers, completed, completion_slot)

        per_job_workers = workers.sum(axis=1)
        done = progress.apply(jobs, workers, restarts.work(t, jobs, workers, parameter_servers))
        given[jobs] += per_job_workers
        received[jobs] = True
        for load, per_job, demand in zip(loads, (per_job_workers, parameter_servers.sum(axis=1)), checker.demands):
            load += per_job @ demand[jobs]
        for m, i in enumerate(jobs.tolist()):
            records.setdefault(i, []).append((t, workers[m], parameter_servers[m]))
        finished = jobs[done & ~completed[jobs]]
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
        instance, schedule, wasted_worker_slots=int(given[received & ~completed].sum()),
        worker_load=loads[0], ps_load=loads[1], scheduler_seconds=clock.seconds,
        restarts=restarts.count, restart_lost_worker_slots=restarts.lost,
        abandoned=int((received & ~completed).sum()),
    )
    report = dict(scheduler.report())
    return SimulationResult(
        scheduler=name, schedule=schedule, metrics=metrics, parameters=dict(scheduler.parameters()),
        report=report, received=tuple(int(i) for i in np.flatnonzero(received)),
        scheduler_seconds=clock.seconds, promises=_promises(deadlines, completion_slot), restart_cost=restart_cost,
        certificate=ReportedCertificate.from_report(report), lookahead=ReportedLookahead.from_report(report))


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
    """The completed jobs' schedules, each over its own window (first to last slot it ran in): memory
    proportional to the slots a job ran, not to the horizon (:mod:`primaldual.core.schedule`)."""
    assignments = {}
    for i in np.flatnonzero(completed).tolist():
        slots = np.array([t for t, _, _ in records[i]], dtype=np.int64)
        first = int(slots[0])
        counts = []
        for m, pool in enumerate(instance.pools, start=1):  # record = (slot, workers, parameter servers)
            array = np.zeros((int(slots[-1]) - first + 1, pool.n_servers), dtype=np.int64)
            array[slots - first] = np.stack([record[m] for record in records[i]])
            counts.append(array)
        assignments[i] = JobSchedule.windowed(first, *counts, instance.horizon)
    return assignments


def _state(t: int, progress: Progress, arrived, completed, active, horizon: int) -> SlotState:
    """What the scheduler reads at slot ``t`` (read-only copies)."""
    fraction = progress.remaining_fraction()
    return SlotState(slot=t, remaining_work=_frozen(progress.remaining_work()), arrived=_frozen(arrived),
                     completed=_frozen(completed), active=tuple(int(i) for i in active), slots_left=horizon - t,
                     remaining_fraction=None if fraction is None else _frozen(fraction))


def _frozen(array: np.ndarray) -> np.ndarray:
    out = array.copy()
    out.setflags(write=False)
    return out


__all__ = ["Promises", "ReportedCertificate", "SimulationResult", "WORK_TOLERANCE", "check_restart_cost", "simulate"]
