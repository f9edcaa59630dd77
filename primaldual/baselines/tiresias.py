"""Tiresias: discretized two-dimensional least-attained-service (Gu et al., "Tiresias: A GPU Cluster Manager for
Distributed Deep Learning", NSDI 2019, section 3.2, "Discretized 2D-LAS"), non-clairvoyant.

The source and its authors' simulator (``dlas_sim_jobs`` with ``gputime=True``, the ``dlas-gpu`` scheme, in
https://github.com/SymbioticLab/Tiresias/blob/b0ef8449aaa1ad1a61b922de3ab65fd87a3dcf2e/simulator/run_sim.py) rank jobs by **attained service in two dimensions**, GPUs x time run,
discretized into priority queues:

* a new job enters the **first queue** (``Q0``);
* a job whose attained service reaches the queue's threshold is **demoted** to the next queue (the simulator's
  ``queue_limit``; its default cluster has ``num_queue = 2`` and a first threshold of 3600 GPU-seconds);
* within a queue jobs are served **first come, first served** (by the slot they entered the queue); queues are
  served highest first; a job starts only if all its GPUs fit, else the next job tries (the simulator's loop);
* the order is recomputed at every event from an empty cluster: **preemptive**;
* **starvation**: a demoted job that has waited long enough without resources is **promoted** back to ``Q0``
  and its attained service for the queues is reset (the simulator's ``solve_starvation``, which promotes when
  the job's pending time reaches a multiple of its executed time).

Reading in this model, slot by slot:

* attained service of job ``i`` = the **worker-slots** it has received (workers x slots run; a worker is the
  model's GPU-bearing unit, eq. (4)); the threshold is given in worker-hours (``threshold``, default 1.0 =
  the simulator's 3600 GPU-seconds) and converted with the instance's ``slot_seconds``;
* two queues (the simulator's default); a job that has received ``threshold`` worker-hours since it entered
  ``Q0`` (or since its last promotion) is demoted at the end of that slot;
* each job runs as a **gang of fixed width** ``g_i = min(N_i, what fits on the empty cluster with its PSs)``
  (:func:`.ordered.gang_widths`; the source's jobs ask for a fixed GPU count), all or nothing, with the fewest
  PSs eq. (6) allows;
* promotion (``starvation_limit``): a job in ``Q1`` that has run before and has then waited ``starvation_limit``
  consecutive slots without resources is promoted to ``Q0`` at the start of the next slot, with its attained
  service for the queues reset. The simulator's knob is relative (pending time >= knob x executed time); a
  fixed limit in slots is the issue's form and needs no reading of the work either. ``null`` (the default)
  never promotes, as the simulator's ``dlas-gpu`` scheme (``solve_starvation = 0``).

**Non-clairvoyant.** It never reads a job's work ``V_i`` nor the remaining work: not in its order, not in its
widths (:func:`.ordered.gang_widths` does not cap at ``V_i``), and it has no ``skip_unfinishable``
(knowing a job cannot finish needs its work). It learns only that a job completed (``on_completion``). So in
a job's last slot it may hold more workers than the remaining work needs, and it runs jobs that cannot finish
by the horizon: both are what a non-clairvoyant scheduler does.

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): a job's gang goes to the first type, in the placement
rule's order, where it fits whole; attained service counts worker-slots of any type (it reads no speed).

Parameters: ``threshold`` (> 0, worker-hours), ``starvation_limit`` (null or an integer >= 1, slots),
``placement`` (``first_fit`` default, or ``least_loaded``).

Cost per slot: a sort of the active jobs and one placement search per job tried.
"""

from __future__ import annotations


import numpy as np

from primaldual.simulation.parameter_ranges import check_parameters
from primaldual.baselines import parameter_specs
from primaldual.baselines.ordered import gang_in_order, job_tables
from primaldual.simulation.placement import FreeCapacity, check_placement
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState

#: Seconds in an hour: ``threshold`` is in worker-hours, the simulator's first threshold 3600 GPU-seconds.
HOUR = 3600.0


def threshold_worker_slots(threshold_hours: float, slot_seconds: float) -> float:
    """The demotion threshold in worker-slots: ``threshold_hours`` worker-hours on slots of ``slot_seconds``."""
    return threshold_hours * HOUR / slot_seconds


def queue_order(live, queue: np.ndarray, entered: np.ndarray) -> list[int]:
    """``live`` jobs by queue (first queue first), then by the slot they entered it, then by index."""
    return sorted(live, key=lambda i: (int(queue[i]), int(entered[i]), i))


class TiresiasScheduler(OnlineScheduler):
    name = "tiresias"
    PARAMETER_SPECS = parameter_specs.TIRESIAS
    handles_gpu_types = True

    def __init__(self, threshold: float = 1.0, starvation_limit: int | None = None, placement: str = "first_fit"):
        # The range table's check and message, also for a Python caller (an integral float is its int).
        given = check_parameters("tiresias", {"threshold": threshold, "starvation_limit": starvation_limit})
        self.threshold = float(given["threshold"])
        self.starvation_limit = given["starvation_limit"]
        self.placement = check_placement(placement)

    def start(self, instance) -> None:
        self.instance = instance
        self.tables = job_tables(instance, clairvoyant=False)  # never reads V_i
        self.limit = threshold_worker_slots(self.threshold, instance.slot_seconds)
        n = instance.n_jobs
        self.queue = np.zeros(n, dtype=np.int64)
        self.entered = np.zeros(n, dtype=np.int64)
        self.service = np.zeros(n, dtype=np.int64)  # worker-slots since entering Q0 (reset on promotion)
        self.attained = np.zeros(n, dtype=np.int64)  # worker-slots in all
        self.waited = np.zeros(n, dtype=np.int64)  # slots without resources since it last ran
        self.ran = np.zeros(n, dtype=bool)
        self.live: list[int] = []
        self.demotions: list[tuple[int, int]] = []  # (slot, job)
        self.promotions: list[tuple[int, int]] = []

    def parameters(self) -> dict:
        return {"threshold": self.threshold, "starvation_limit": self.starvation_limit, "placement": self.placement}

    def report(self) -> dict:
        return {"demotions": len(self.demotions), "promotions": len(self.promotions),
                "threshold_worker_slots": self.limit}

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.queue[i], self.entered[i] = 0, slot
            self.live.append(i)

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        done = set(jobs)
        self.live = [i for i in self.live if i not in done]

    def _promote_starved(self, slot: int) -> None:
        if self.starvation_limit is None:
            return
        for i in self.live:
            if self.queue[i] > 0 and self.ran[i] and self.waited[i] >= self.starvation_limit:
                self.queue[i], self.entered[i], self.service[i], self.waited[i] = 0, slot, 0, 0
                self.promotions.append((slot, i))

    def _account(self, slot: int, out: dict[int, Allocation]) -> None:
        """Attained service of the jobs that ran, demotion at the threshold, waiting of the others."""
        for i in self.live:
            allocation = out.get(i)
            if allocation is None:
                if self.ran[i]:
                    self.waited[i] += 1
                continue
            workers = int(allocation.workers.sum())
            self.service[i] += workers
            self.attained[i] += workers
            self.waited[i], self.ran[i] = 0, True
            if self.queue[i] == 0 and self.service[i] >= self.limit:
                self.queue[i], self.entered[i] = 1, slot + 1
                self.demotions.append((slot, i))

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        if not self.live:
            return {}
        self._promote_starved(slot)
        order = queue_order(self.live, self.queue, self.entered)
        out = gang_in_order(self.instance, order, self.tables.gang, FreeCapacity(self.instance.cluster),
                            self.placement, self.tables.profile)
        self._account(slot, out)
        return out


__all__ = ["HOUR", "TiresiasScheduler", "queue_order", "threshold_worker_slots"]
