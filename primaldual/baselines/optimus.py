"""Optimus: greedy marginal-gain resource allocation (Peng et al., "Optimus: An Efficient Dynamic Resource
Scheduler for Deep Learning Clusters", EuroSys 2018, section 5.1, "Resource allocation"; the same
parameter-server model and research group as OASiS).

The source estimates each job's remaining time from a fitted convergence model and a fitted speed function
``f(p, w)`` of its PS and worker counts, and every scheduling interval:

1. gives every job one worker and one PS;
2. then repeatedly adds one task (a worker or a PS) to the job whose estimated remaining time falls the most
   per unit of the resource it adds (the marginal gain of a worker and of a PS are both computed; the larger,
   divided by the task's dominant resource share, wins), until the resources run out or no task gains.

Reading in this model, at every slot:

* jobs are taken in arrival order (ties: lower index) and each receives **one worker and ``Z(1) = 1`` PS**
  (eq. (6): ``b_i <= B_i``) while they fit; a job that does not get its first unit gets nothing this slot;
* the **speed model is the instance's own**: ``D`` workers supply ``D`` worker-slots a slot as long as eq. (6)
  holds (``Z(D) = ceil(D b_i / B_i)`` PSs), and PSs beyond ``Z(D)`` add no speed. So the estimated remaining
  time with ``D`` workers is ``R_i / D`` slots (``R_i`` the true remaining work: the source's convergence
  estimate is exact here), and a worker's marginal gain is ``R_i / D - R_i / (D + 1)``;
* a **PS alone never gains** (the model's throughput is in the workers), so the PS "kind" is added only with
  the worker that needs it: the unit added is one worker plus ``Z(D + 1) - Z(D)`` PSs, and its cost is the
  dominant share (over both pools' total capacities) of that bundle;
* the unit with the largest gain per cost is added (ties: lower index) if it fits; a job whose next unit does
  not fit receives nothing more this slot (free capacity only shrinks within a slot); a job stops at
  ``min(N_i, R_i)`` workers; the slot's allocation is complete when no unit of any job fits;
* every slot starts from an empty cluster, as the source re-decides every interval; under the simulator's
  restart costs every change of a job's placement costs it ``F`` of that slot's work, as for every scheduler.

Clairvoyant (it reads the remaining work, as the source reads its fitted estimate). Choice in the baseline's
favour: a job that cannot finish by the horizon at its width is not run (``skip_unfinishable``).

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): the marginal gains read the remaining work on each job's
fastest type; a job's first unit goes to the first server with room and fixes its type for the slot, its later
units go to that type; caps read the work left on its slowest type, then each allocation is trimmed to what its
type needs.

Parameters: ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).

Cost per slot: one heap operation and one placement search per unit added or refused.
"""

from __future__ import annotations

import heapq

import numpy as np

from primaldual.baselines import parameter_specs
from primaldual.baselines.ordered import job_tables
from primaldual.baselines.finishing import FinishingBaseline, place_bundle
from primaldual.simulation.placement import FreeCapacity, fit_to_need, most_needed, type_of
from primaldual.simulation.scheduler import Allocation, SlotState


def marginal_gain(remaining: float, workers: int) -> float:
    """Slots of estimated remaining time one more worker saves: ``R / D - R / (D + 1)``."""
    return remaining / workers - remaining / (workers + 1)


def unit_cost(job, added_ps: int, worker_total: np.ndarray, ps_total: np.ndarray) -> float:
    """Dominant share of one worker and ``added_ps`` PSs of ``job``, over both pools' total capacities."""
    shares = [0.0]
    mask = worker_total > 0
    if mask.any():
        shares.append(float((job.worker_demand[mask] / worker_total[mask]).max()))
    mask = ps_total > 0
    if added_ps and mask.any():
        shares.append(float((added_ps * job.ps_demand[mask] / ps_total[mask]).max()))
    return max(shares)


def add_unit(free: FreeCapacity, job, added_ps: int, placement: str, held=None):
    """Place one worker and ``added_ps`` PSs of ``job`` into ``free``; their per-server counts, or None (and
    ``free`` untouched) if they do not fit. Heterogeneous: on the type of the ``held`` worker counts, or of the
    first server with room."""
    servers = None
    if free.types is not None:
        g = type_of(free.types, None if held is None else Allocation(held, held))
        servers = free.servers_for(job, placement) if g is None else free.types == g
        if servers is None:
            return None
    worker, ps, before = place_bundle(free, job, added_ps, placement, servers)
    if ps is None:
        free.worker = before  # restored from the copy, bit for bit (a no-op where no worker fitted)
        return None
    return worker, ps


class OptimusScheduler(FinishingBaseline):
    name = "optimus"
    PARAMETER_SPECS = parameter_specs.OPTIMUS
    handles_gpu_types = True

    def start(self, instance) -> None:
        super().start(instance)
        self.tables = job_tables(instance)
        cluster = instance.cluster
        self.worker_total = cluster.worker_capacity.sum(axis=0)
        self.ps_total = cluster.ps_capacity.sum(axis=0)

    def _score(self, i: int, remaining: int, workers: int) -> tuple[float, int]:
        """Gain per cost of job ``i``'s next unit at ``workers`` workers, and the PSs that unit adds."""
        job = self.instance.jobs[i]
        added = int(job.min_parameter_servers(workers + 1)) - int(job.min_parameter_servers(workers))
        cost = unit_cost(job, added, self.worker_total, self.ps_total)
        gain = marginal_gain(float(remaining), workers)
        return (gain / cost if cost > 0 else np.inf), added

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        active = np.array(state.active, dtype=np.int64)
        if not active.size:
            return {}
        remaining = np.asarray(state.remaining_work[active], dtype=np.int64)
        finishable = self.finishable(slot, active, remaining, self.tables.widest[active])
        active, remaining = active[finishable], remaining[finishable]
        left = dict(zip(active.tolist(), remaining.tolist()))
        most = remaining if state.remaining_fraction is None else most_needed(self.instance, state)[active]
        limits = dict(zip(active.tolist(), np.minimum(self.tables.chunks[active], most).tolist()))
        free = FreeCapacity(self.instance.cluster)
        jobs = self.instance.jobs
        held: dict[int, list] = {}  # job -> [worker counts, PS counts, workers]
        for i in active.tolist():  # arrival order: one worker and Z(1) PSs each while they fit
            if limits[i] <= 0:
                continue
            first = add_unit(free, jobs[i], int(jobs[i].min_parameter_servers(1)), self.placement)
            if first is not None:
                held[i] = [first[0], first[1], 1]
        heap = []
        for i, (_, _, count) in held.items():
            if count < limits[i]:
                score, added = self._score(i, left[i], count)
                heap.append((-score, i, added))
        heapq.heapify(heap)
        while heap:
            _, i, added = heapq.heappop(heap)
            unit = add_unit(free, jobs[i], added, self.placement, held[i][0])
            if unit is None:
                continue  # its next unit will not fit later in this slot either
            entry = held[i]
            entry[0], entry[1], entry[2] = entry[0] + unit[0], entry[1] + unit[1], entry[2] + 1
            if entry[2] < limits[i]:
                score, added = self._score(i, left[i], entry[2])
                heapq.heappush(heap, (-score, i, added))
        return fit_to_need(self.instance, state, {i: Allocation(y, z) for i, (y, z, _) in held.items()})


__all__ = ["OptimusScheduler", "add_unit", "marginal_gain", "unit_cost"]
