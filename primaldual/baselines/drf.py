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

On a **heterogeneous cluster** (type-unaware, :mod:`primaldual.simulation.placement`): a job's first bundle of
the slot goes to the first server with room (by the placement rule) and fixes its type; its later bundles go
to servers of that type only. Its cap reads the work left on its slowest type and the filled allocation is then
trimmed to what its type needs.

Parameters: ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).
"""

from __future__ import annotations

from primaldual.baselines import parameter_specs
import heapq
from dataclasses import dataclass

import numpy as np

from primaldual.simulation.placement import (FreeCapacity, fit_to_need, most_needed, ps_needed_at, ps_needed_table,
                                             type_of, widest)
from primaldual.baselines.finishing import FinishingBaseline, place_bundle
from primaldual.simulation.scheduler import Allocation, SlotState


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


def fill_tables(instance, jobs=None) -> "FillTables":
    """The per-job facts progressive filling reads at every pop, computed once (for ``jobs``, default all)."""
    jobs = range(instance.n_jobs) if jobs is None else jobs
    tables = instance.jobs
    return FillTables(
        # Z(D) up to a cap (placement.ps_needed_table: a job's count grows one worker per pop, and N_i + 1
        # entries would be 10^9 at the edges of the domain); _added_ps reads beyond it with scalar calls.
        ps_needed={i: ps_needed_table(tables[i]) for i in jobs},
        worker_key={i: tables[i].worker_demand.tobytes() for i in jobs},
        ps_key={i: tables[i].ps_demand.tobytes() for i in jobs},
    )


@dataclass(frozen=True)
class FillTables:
    """Per job: ``Z(D)`` for ``D = 0..min(N_i, PS_TABLE_WORKERS)`` (eq. (6), :func:`ps_needed_table`) and the
    bytes of its worker and PS demands."""

    ps_needed: dict[int, list[int]]
    worker_key: dict[int, bytes]
    ps_key: dict[int, bytes]


def progressive_filling(
    instance,
    jobs,
    limits: dict[int, int],
    free: FreeCapacity,
    placement: str = "first_fit",
    tables: FillTables | None = None,
) -> dict[int, Allocation]:
    """DRF's progressive filling of worker+PS bundles among ``jobs`` into ``free`` (taken from in place).

    ``limits[i]`` caps job i's workers; ``tables`` (:func:`fill_tables`, built for ``jobs`` if not given).
    Returns the allocation of each job that got at least one worker.

    **Failed bundles are remembered** (exact, :func:`_try_bundle`): with ~1,000 waiting jobs and a handful of
    PS slots, nearly every pop is a job whose worker fits and whose PSs do not (the worker is then given
    back). Such an attempt is a deterministic function of the free capacity (bit for bit), the two demand
    vectors and the number of PSs the bundle adds, and when giving the worker back restores ``free.worker``
    bit for bit (checked, not assumed) it leaves the state as it found it. So until the next change of
    ``free`` an attempt with the same (worker demand, PS demand, added PSs) would fail the same way and leave
    the same state: it is skipped. Any change of ``free`` (a bundle placed, or a give-back that did not
    restore the floats exactly) forgets every remembered failure. The pops, their order and every
    placement are those of the one-attempt-per-pop loop (the reference copy in
    ``tests/simulate/test_drf_filling.py``, which a test compares on random instances).
    Cost per slot: one heap pop per job and bundle, and one placement search per distinct failing key
    between two changes of ``free`` instead of one per pop.
    """
    tables = fill_tables(instance, jobs) if tables is None else tables
    cluster = instance.cluster
    worker_total = cluster.worker_capacity.sum(axis=0)
    ps_total = cluster.ps_capacity.sum(axis=0)
    held = _Held(cluster.n_worker_servers, cluster.n_ps_servers, jobs)
    heap = [(0.0, i) for i in jobs if limits.get(i, 0) > 0]
    heapq.heapify(heap)
    # Free worker capacity never grows here (a PS failure gives back only the worker it just took), so a
    # worker demand that found no server stays without one: its later jobs are skipped unsearched.
    # Two memos, not one: their lifetimes differ (no_room: the whole filling; failed: until free next changes).
    no_room: set[bytes] = set()
    failed: set[tuple] = set()  # (worker key, PS key, added PSs) that failed at the current free capacity
    typed = free.types is not None  # heterogeneous: the keys carry the job's type (None before its first bundle)
    while heap:
        _, i = heapq.heappop(heap)
        job = instance.jobs[i]
        worker_key = (tables.worker_key[i], held.type.get(i)) if typed else tables.worker_key[i]
        if worker_key in no_room:
            continue
        extra = _added_ps(tables.ps_needed[i], job, held.count[i])
        key = (worker_key, tables.ps_key[i], extra)
        if key in failed:
            continue
        outcome = _try_bundle(free, job, extra, placement, held.servers(free, i, job, placement) if typed else None)
        if outcome is None:
            no_room.add(worker_key)
            continue
        if outcome is _UNCHANGED:
            failed.add(key)
            continue
        failed.clear()
        if outcome is _CHANGED:
            continue
        held.add(i, *outcome, free.types)
        if held.count[i] < limits[i]:
            share = _share(job, held.count[i], int(held.z[i].sum()), worker_total, ps_total)
            heapq.heappush(heap, (share, i))
    return {i: Allocation(held.y[i], held.z[i]) for i in jobs if held.count[i] > 0}


def _added_ps(needed: list[int], job, count: int) -> int:
    """``Z(count + 1) - Z(count)``: the PSs one more worker adds (eq. (6)), from the table where it reaches."""
    if count + 1 < len(needed):  # the common case, inline: this runs at every pop
        return needed[count + 1] - needed[count]
    return ps_needed_at(needed, job, count + 1) - ps_needed_at(needed, job, count)


#: Outcomes of :func:`_try_bundle` when the worker fitted and the PSs did not: ``free`` restored bit for bit,
#: or not (floating-point rounding of the give-back).
_UNCHANGED, _CHANGED = object(), object()


def _try_bundle(free: FreeCapacity, job, extra: int, placement: str, servers=None):
    """One pop's attempt: one worker of ``job`` (on ``servers``, a mask, if given) and its ``extra`` added PSs.
    Returns the placed ``(worker, ps)`` counts; None if the worker fits nowhere (``free`` untouched);
    :data:`_UNCHANGED` or :data:`_CHANGED` if the worker fitted and the PSs did not (the worker is given back,
    as the one-attempt loop does)."""
    if servers is False:
        return None
    worker, ps, before = place_bundle(free, job, extra, placement, servers)
    if worker is None:
        return None
    if ps is None:  # given back by addition, which may round: the outcome says whether it did
        free.worker += worker[:, None] * job.worker_demand[None, :]
        return _UNCHANGED if np.array_equal(free.worker, before) else _CHANGED
    return worker, ps


class _Held:
    """What each job holds so far in one filling: workers ``y``, PSs ``z`` (only jobs with a unit) and counts."""

    def __init__(self, n_worker_servers: int, n_ps_servers: int, jobs):
        self.shape = (n_worker_servers, n_ps_servers)
        self.y: dict[int, np.ndarray] = {}  # only the jobs that get a unit: most of a long queue gets none
        self.z: dict[int, np.ndarray] = {}
        self.count = {i: 0 for i in jobs}
        self.type: dict[int, int] = {}  # heterogeneous: the GPU type of each job's workers

    def add(self, i: int, worker: np.ndarray, ps: np.ndarray, types=None) -> None:
        self.y[i] = self.y.get(i, np.zeros(self.shape[0], dtype=np.int64)) + worker
        self.z[i] = self.z.get(i, np.zeros(self.shape[1], dtype=np.int64)) + ps
        self.count[i] += 1
        if types is not None and i not in self.type:
            self.type[i] = type_of(types, Allocation(worker, ps))

    def servers(self, free: FreeCapacity, i: int, job, placement: str):
        """Heterogeneous: the mask of the servers of job ``i``'s type, or of the first type with room for its
        first bundle; False when no server has room."""
        if i in self.type:
            return free.types == self.type[i]
        mask = free.servers_for(job, placement)
        return False if mask is None else mask


class DrfScheduler(FinishingBaseline):
    name = "drf"
    PARAMETER_SPECS = parameter_specs.DRF
    handles_gpu_types = True
    # 2: skip_unfinishable assumes the width the job can have (placement.widest), not N_i.
    revision = 2

    def start(self, instance) -> None:
        super().start(instance)
        self.chunks = np.array([job.chunks for job in instance.jobs], dtype=np.int64)
        self.widest = widest(instance)
        self.tables = fill_tables(instance)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        active = np.array(state.active, dtype=np.int64)
        if not active.size:
            return {}
        remaining = state.remaining_work[active]
        if self.skip_unfinishable:
            finishable = self.finishable(slot, active, remaining, self.widest[active])
            active, remaining = active[finishable], remaining[finishable]
        if state.remaining_fraction is not None:  # heterogeneous: capped on the slowest type, then fitted
            remaining = most_needed(self.instance, state)[active]
        limits = {int(i): int(min(n, r)) for i, n, r in zip(active, self.chunks[active], remaining)}
        return fit_to_need(self.instance, state, progressive_filling(
            self.instance, [int(i) for i in active], limits, FreeCapacity(self.instance.cluster), self.placement,
            self.tables,
        ))
