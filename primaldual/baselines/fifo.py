"""FIFO: first come, first served with fixed-size jobs (Hadoop/Spark's default; docs/papers.md, OASiS).

Reading:

* jobs are queued in arrival order (same-slot arrivals in index order);
* each job runs with a fixed worker count: ``min(workers, N_i)`` if ``workers`` is given, else its ``N_i``
  (eq. (3)'s cap, "its N_i unless configured"), and the fewest PSs eq. (6) allows,
  ``ceil(D b_i / B_i)``;
* in each slot the head of the queue starts if its workers and PSs fit next to the running jobs; if it does
  not fit, nothing behind it starts (**head-of-line blocking**, no backfilling);
* a started job keeps its count and its servers until it completes: **no preemption, never resized, never
  migrated**.

Choices in the baseline's favour:

* a job that cannot finish by the horizon at its fixed count is skipped: at arrival (with ``a_i``) and again
  when it reaches the head of the queue (with the current slot), so it neither wastes resources nor blocks the
  queue (``skip_unfinishable``);
* in its last slot a job uses only as many workers as its remaining work needs, which may let the queue head
  start one slot earlier.

On a **heterogeneous cluster** (type-unaware, :mod:`primaldual.simulation.placement`): a job starts on the first
type, in the placement rule's order, where all its workers fit, and keeps those servers (so that type) until it
completes; its last slot is trimmed to what its type still needs.

Parameters: ``workers`` (None or a positive integer), ``placement`` (``first_fit`` default, or
``least_loaded``; see :mod:`primaldual.simulation.placement`), ``skip_unfinishable`` (True).
"""

from __future__ import annotations

from primaldual.simulation.parameter_ranges import check_parameters
from primaldual.baselines import parameter_specs
from collections import deque

from primaldual.simulation.placement import FreeCapacity, can_finish, check_placement, need_of, trim
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState


class FifoScheduler(OnlineScheduler):
    name = "fifo"
    PARAMETER_SPECS = parameter_specs.FIFO
    handles_gpu_types = True

    def __init__(self, workers: int | None = None, placement: str = "first_fit", skip_unfinishable: bool = True):
        # The range table's check and message, also for a Python caller (an integral float is its int).
        self.workers = check_parameters("fifo", {"workers": workers})["workers"]
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        self.instance = instance
        self.queue: deque[int] = deque()
        self.running: dict[int, Allocation] = {}
        self.skipped: list[int] = []
        self.started: dict[int, int] = {}
        self.size = [job.chunks if self.workers is None else min(self.workers, job.chunks) for job in instance.jobs]

    def parameters(self) -> dict:
        return {"workers": self.workers, "placement": self.placement, "skip_unfinishable": self.skip_unfinishable}

    def report(self) -> dict:
        return {"skipped": list(self.skipped), "start_slots": {str(i): t for i, t in self.started.items()}}

    def _can_finish(self, i: int, slot: int, remaining: int) -> bool:
        return bool(can_finish(slot, int(remaining), self.size[i], self.instance.horizon))

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        work = self.instance.work_units
        for i in jobs:
            if self.skip_unfinishable and not self._can_finish(i, slot, work[i]):
                self.skipped.append(i)
            else:
                self.queue.append(i)

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.running.pop(i, None)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        jobs = self.instance.jobs
        free = FreeCapacity(self.instance.cluster)
        out: dict[int, Allocation] = {}

        def used(i: int, allocation: Allocation) -> Allocation:
            remaining = need_of(self.instance, state, i, allocation)  # remaining_work[i] on one type
            return trim(jobs[i], allocation, remaining) if remaining < self.size[i] else allocation

        for i, allocation in self.running.items():
            out[i] = used(i, allocation)
            free.take(jobs[i], out[i])
        while self.queue:
            i = self.queue[0]
            if self.skip_unfinishable and not self._can_finish(i, slot, state.remaining_work[i]):
                self.skipped.append(self.queue.popleft())
                continue
            allocation = free.place(jobs[i], self.size[i], self.placement)
            if allocation is None:
                break  # head-of-line blocking: nobody overtakes the head
            self.queue.popleft()
            self.running[i] = allocation
            self.started[i] = slot
            out[i] = used(i, allocation)
            if out[i] is not allocation:
                free.release(jobs[i], Allocation(allocation.workers - out[i].workers,
                                                 allocation.parameter_servers - out[i].parameter_servers))
        return out
