"""DRF: Dominant Resource Fairness by progressive filling, re-decided every slot (Ghodsi et al., NSDI'11).

Reading (docs/papers.md, OASiS):

* in every slot, the active jobs (arrived, not completed) share the cluster by DRF's progressive filling:
  repeatedly, the job with the **smallest dominant share** receives one more *bundle* (one worker plus the PSs
  that worker needs for eq. (6): ``Z(D+1) - Z(D)`` with ``Z(D) = ceil(D b_i / B_i)``), until no job can take
  another bundle (Ghodsi et al.'s Algorithm 1, with tasks = bundles);
* a job's dominant share is the largest, over both pools and all resources, of what it holds divided by the
  pool's total capacity of that resource (the two pools of eqs. (4)-(5) are distinct resources here, as the
  worker and PS "resources" of a bundle are in different servers);
* each job is capped at ``N_i`` workers (eq. (3)); a job whose next bundle does not fit stops receiving
  (resources only shrink within a slot, so it could never fit later);
* ties go to the lower job index (arrival order); all weights are equal;
* **no admission control**: every active job takes part; utility is earned on completion. Nothing is kept
  from one slot to the next (the model has no migration cost), so the allocation follows the active set.

Choices in the baseline's favour:

* a job that could not finish by the horizon even with the most workers it can have (``N_i``, or fewer where
  the servers hold fewer: ``placement.widest``) in every remaining slot is left out (``skip_unfinishable``): it
  would earn nothing and take resources from jobs that can finish;
* a job is capped at its remaining work, so in its last slot it takes no worker it cannot use.

Parameters: ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).
"""

from __future__ import annotations

from primaldual.baselines import parameter_specs
import heapq

import numpy as np

from primaldual.simulation.placement import FreeCapacity, can_finish, check_placement, place_units, widest
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState


def dominant_shares(instance, workers: dict[int, int], parameter_servers: dict[int, int]) -> dict[int, float]:
    """Each job's dominant share over both pools, given its total worker and PS counts."""
    cluster = instance.cluster
    worker_total = cluster.worker_capacity.sum(axis=0)
    ps_total = cluster.ps_capacity.sum(axis=0)
    out = {}
    for i in workers:
        out[i] = _share(instance.jobs[i], workers[i], parameter_servers.get(i, 0), worker_total, ps_total)
    return out


def _share(job, workers: int, parameter_servers: int, worker_total: np.ndarray, ps_total: np.ndarray) -> float:
    share = 0.0
    mask = worker_total > 0
    if workers and mask.any():
        share = max(share, float((workers * job.worker_demand[mask] / worker_total[mask]).max()))
    mask = ps_total > 0
    if parameter_servers and mask.any():
        share = max(share, float((parameter_servers * job.ps_demand[mask] / ps_total[mask]).max()))
    return share


def progressive_filling(
    instance,
    jobs,
    limits: dict[int, int],
    free: FreeCapacity,
    placement: str = "first_fit",
) -> dict[int, Allocation]:
    """DRF's progressive filling of worker+PS bundles among ``jobs`` into ``free`` (taken from in place).

    ``limits[i]`` caps job i's workers. Returns the allocation of each job that got at least one worker.
    """
    cluster = instance.cluster
    worker_total = cluster.worker_capacity.sum(axis=0)
    ps_total = cluster.ps_capacity.sum(axis=0)
    n_worker_servers, n_ps_servers = cluster.n_worker_servers, cluster.n_ps_servers
    y: dict[int, np.ndarray] = {}  # only the jobs that get a unit: most of a long queue gets none
    z: dict[int, np.ndarray] = {}
    count = {i: 0 for i in jobs}
    heap = [(0.0, i) for i in jobs if limits.get(i, 0) > 0]
    heapq.heapify(heap)
    # Free worker capacity never grows here (a PS failure gives back only the worker it just took), so a
    # worker demand that found no server stays without one: its later jobs are skipped unsearched.
    no_room: set[bytes] = set()
    while heap:
        _, i = heapq.heappop(heap)
        job = instance.jobs[i]
        key = job.worker_demand.tobytes()
        if key in no_room:
            continue
        worker = place_units(free.worker, job.worker_demand, 1, placement)
        if worker is None:
            no_room.add(key)
            continue
        extra = int(job.min_parameter_servers(count[i] + 1)) - int(job.min_parameter_servers(count[i]))
        ps = place_units(free.ps, job.ps_demand, extra, placement)
        if ps is None:
            free.worker += worker[:, None] * job.worker_demand[None, :]
            continue
        y[i] = y.get(i, np.zeros(n_worker_servers, dtype=np.int64)) + worker
        z[i] = z.get(i, np.zeros(n_ps_servers, dtype=np.int64)) + ps
        count[i] += 1
        if count[i] < limits[i]:
            share = _share(job, count[i], int(z[i].sum()), worker_total, ps_total)
            heapq.heappush(heap, (share, i))
    return {i: Allocation(y[i], z[i]) for i in jobs if count[i] > 0}


class DrfScheduler(OnlineScheduler):
    name = "drf"
    PARAMETER_SPECS = parameter_specs.DRF
    # 2: skip_unfinishable assumes the width the job can have (placement.widest), not N_i.
    revision = 2

    def __init__(self, placement: str = "first_fit", skip_unfinishable: bool = True):
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        self.instance = instance
        self.chunks = np.array([job.chunks for job in instance.jobs], dtype=np.int64)
        self.widest = widest(instance)
        self.skipped: set[int] = set()

    def parameters(self) -> dict:
        return {"placement": self.placement, "skip_unfinishable": self.skip_unfinishable}

    def report(self) -> dict:
        return {"skipped": sorted(self.skipped)}

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        active = np.array(state.active, dtype=np.int64)
        if not active.size:
            return {}
        remaining = state.remaining_work[active]
        if self.skip_unfinishable:
            finishable = can_finish(slot, remaining, self.widest[active], self.instance.horizon)
            self.skipped.update(int(i) for i in active[~finishable])
            active, remaining = active[finishable], remaining[finishable]
        limits = {int(i): int(min(n, r)) for i, n, r in zip(active, self.chunks[active], remaining)}
        return progressive_filling(
            self.instance, [int(i) for i in active], limits, FreeCapacity(self.instance.cluster), self.placement
        )
