"""Placing one job's workers and PSs onto servers inside one slot, shared by the baselines.

OASiS places by price (docs/papers.md, OASiS); the baselines place by a fixed rule, chosen per scheduler with a
``placement`` parameter:

``first_fit``
    fill servers in index order, each as far as it goes (packs jobs onto few servers, keeps big holes free);
``least_loaded``
    one unit at a time onto the server with the most room left for this job's demand (spreads a job out).

Worker servers and PS servers are separate pools (eqs. (4)-(5)), so a job's ``D`` workers and its
``Z(D) = ceil(D b_i / B_i)`` PSs (the fewest eq. (6) allows; eq. (7) holds because ``b_i <= B_i``) are placed
independently. Everything here is exact in units: on one server, ``floor(free / demand)`` units of a job fit,
so the number of units of one job that fit in a pool is the sum of those per-server counts.

**Heterogeneous clusters** (:mod:`primaldual.core.gpu_types`): the baselines are type-unaware, as Gavel's
heterogeneity-agnostic baselines (OSDI 2020): a job takes the **first free GPU of any type**, i.e. the type of the
placement rule's first choice among the servers with room for one of its workers (``first_fit``: the
lowest-index such server; ``least_loaded``: the one with the most room), and all its workers of the slot go to
servers of that one type (:meth:`FreeCapacity.type_order`). A fixed-size (gang) placement tries the types in that
order and takes the first where the whole gang fits; growing an allocation stays on its type. Limits read the
work still needed on the job's slowest type (:func:`most_needed`), and :func:`fit_to_need` then trims each
allocation to what its own type needs, the heterogeneous form of "no worker beyond the remaining work". On a
homogeneous cluster none of this runs.
"""

from __future__ import annotations

import numpy as np

from primaldual.simulation.progress import WORK_TOLERANCE, needed_on
from primaldual.simulation.scheduler import Allocation

PLACEMENTS = ("first_fit", "least_loaded")

#: Slack on free capacity when counting units that fit. Smaller than the verifier's 1e-9, so that sums of
#: decimal demands (0.1 + 0.2 <= 0.3) fit and a schedule built here always passes the verifier.
FIT_TOLERANCE = 1e-10

#: "Unbounded" per-server count for a job that demands nothing of a pool's resources (small enough that a sum
#: over any number of servers stays far from int64 overflow).
UNBOUNDED = 1 << 40


def check_placement(policy: str) -> str:
    """Validate a ``placement`` parameter (raises ``ValueError``, which ``make_scheduler`` reports as bad input)."""
    if policy not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {policy!r}")
    return policy


def can_finish(slot, remaining, workers, horizon: int):
    """``workers > 0 and slot + ceil(remaining / workers) <= horizon``, vectorised: the baselines' ``skip_unfinishable``
    with ``workers`` from :func:`widest`; other jobs are ignored, so False is certain and True optimistic."""
    workers = np.asarray(workers)
    return (workers > 0) & (slot + -(-np.asarray(remaining) // np.maximum(workers, 1)) <= horizon)


def widest(instance) -> np.ndarray:
    """Per job, the most workers it can run in one slot of the empty cluster, ``min(N_i, V_i, what fits with
    its PSs)`` (:func:`primaldual.core.standalone.fastest_standalone_workers`; 0 if it fits nowhere): the width
    :func:`can_finish` may assume."""
    from primaldual.core.standalone import fastest_standalone_workers

    return np.array([fastest_standalone_workers(instance, i) for i in range(instance.n_jobs)], dtype=np.int64)


def demand_profiles(instance) -> list[tuple]:
    """Per job, its worker and PS demand vectors and ``Z(1)`` (eq. (6)): jobs of one profile fit a free capacity
    alike, so a greedy pass over shrinking capacity skips a profile once one of its jobs found no room."""
    return [(job.worker_demand.tobytes(), job.ps_demand.tobytes(), int(job.min_parameter_servers(1)))
            for job in instance.jobs]


#: ``Z(D)`` (eq. (6)) is tabulated for ``D`` up to this many workers (:func:`ps_needed_table`). A job never holds
#: more than ``min(N_i, V_i)`` workers, at most 10^4 by the domains (``W x min(N_i, W) <= 1e8``,
#: docs/input-ranges.md), while a table of ``N_i + 1`` entries is as large as ``N_i`` (10^9 at the edges of the
#: domain: a 7.45 GiB array); :func:`ps_needed_at` makes the scalar call beyond the cap.
PS_TABLE_WORKERS = 4096


def ps_needed_table(job) -> list[int]:
    """``Z(D) = job.min_parameter_servers(D)`` for ``D = 0..min(N_i, PS_TABLE_WORKERS)`` in one vector call, bit for
    bit the scalar call's (same IEEE operations; ints below 2^53 are exact floats); read by :func:`ps_needed_at`."""
    return job.min_parameter_servers(np.arange(min(job.chunks, PS_TABLE_WORKERS) + 1)).tolist()


def ps_needed_at(table: list[int], job, workers: int) -> int:
    """``Z(workers)`` for any ``workers >= 0``: from ``table`` (:func:`ps_needed_table` of ``job``) where it
    reaches, else the scalar call, which is the value the table would have held."""
    if workers < len(table):
        return table[workers]
    return int(job.min_parameter_servers(workers))


def units_that_fit(free: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Per server, how many units of ``demand`` (shape (R,)) fit in ``free`` (shape (S, R))."""
    positive = demand > 0
    if not positive.any():
        return np.full(free.shape[0], UNBOUNDED, dtype=np.int64)
    ratio = (free[:, positive] + FIT_TOLERANCE) / demand[positive]
    return np.maximum(np.floor(ratio.min(axis=1)), 0).astype(np.int64)


def spread(count: int, caps: np.ndarray, policy: str) -> np.ndarray | None:
    """Distribute ``count`` units over servers holding at most ``caps[s]`` each; None if they do not fit."""
    out = np.zeros(caps.shape[0], dtype=np.int64)
    if count <= 0:
        return out
    if int(np.minimum(caps, count).sum()) < count:
        return None
    if policy == "first_fit":
        left = count
        for s in range(caps.shape[0]):
            take = min(int(caps[s]), left)
            out[s] = take
            left -= take
            if not left:
                break
    else:  # least_loaded: argmax picks the lowest index among ties, so the result is deterministic.
        room = np.minimum(caps, count).astype(np.int64)
        for _ in range(count):
            s = int(np.argmax(room))
            out[s] += 1
            room[s] -= 1
    return out


def place_units(free: np.ndarray, demand: np.ndarray, count: int, policy: str, servers=None) -> np.ndarray | None:
    """Place ``count`` units of ``demand`` into ``free`` (subtracted in place); None (and ``free`` untouched)
    if they do not fit. ``servers``: a boolean mask of the servers that may take them (all if None)."""
    if servers is not None:
        counts = np.zeros(free.shape[0], dtype=np.int64)
        some = spread(count, units_that_fit(free[servers], demand), policy)
        if some is None:
            return None
        counts[servers] = some
    else:
        counts = spread(count, units_that_fit(free, demand), policy)
    if counts is not None and count > 0:
        free -= counts[:, None] * demand[None, :]
    return counts


class FreeCapacity:
    """What is left of each server's capacity in the slot being decided: ``worker`` (H, R), ``ps`` (K, R)."""

    def __init__(self, cluster):
        self.worker = np.array(cluster.worker_capacity, dtype=float)
        self.ps = np.array(cluster.ps_capacity, dtype=float)
        #: Each worker server's GPU type (index), None on a homogeneous cluster.
        self.types = None if cluster.worker_types is None else np.asarray(cluster.worker_type_index)

    def copy(self) -> "FreeCapacity":
        other = object.__new__(FreeCapacity)
        other.worker, other.ps, other.types = self.worker.copy(), self.ps.copy(), self.types
        return other

    def type_order(self, job, policy: str) -> list[int]:
        """The types with room for one worker of ``job``, in the order of the placement rule's first choice:
        ``first_fit`` by their lowest-index server with room, ``least_loaded`` by their server with the most
        room (lowest index on ties). Heterogeneous clusters only; O(H R)."""
        room = units_that_fit(self.worker, job.worker_demand)
        servers = np.flatnonzero(room > 0)
        if policy == "least_loaded":
            servers = servers[np.argsort(-room[servers], kind="stable")]
        return list(dict.fromkeys(self.types[servers].tolist()))

    def servers_for(self, job, policy: str, allocation: Allocation | None = None):
        """The worker servers ``job`` may use now: all (homogeneous); those of ``allocation``'s type if it holds
        workers; else those of the first type of :meth:`type_order` (None: no room anywhere)."""
        if self.types is None:
            return None
        held = type_of(self.types, allocation)
        if held is None:
            order = self.type_order(job, policy)
            if not order:
                return None
            held = order[0]
        return self.types == held

    def max_workers(self, job, limit: int, policy: str = "first_fit") -> int:
        """Largest ``D <= limit`` such that ``D`` workers and their ``Z(D)`` PSs fit now; on a heterogeneous
        cluster, on the servers of the first type of :meth:`type_order`."""
        room = units_that_fit(self.worker, job.worker_demand)
        if self.types is not None:
            mask = self.servers_for(job, policy)
            room = room[mask] if mask is not None else room[:0]
        workers = int(min(limit, room.sum()))
        ps_room = int(min(units_that_fit(self.ps, job.ps_demand).sum(), UNBOUNDED))
        while workers > 0 and job.min_parameter_servers(workers) > ps_room:
            workers -= 1
        return max(workers, 0)

    def place(self, job, workers: int, policy: str) -> Allocation | None:
        """Place ``workers`` workers and ``Z(workers)`` PSs of ``job``; None (nothing taken) if they do not fit.
        On a heterogeneous cluster all the workers go to one type, the first of :meth:`type_order` they fit."""
        before_worker = self.worker.copy()
        if self.types is None or int(workers) <= 0:
            y = place_units(self.worker, job.worker_demand, int(workers), policy)
        else:
            y = None
            for g in self.type_order(job, policy):
                y = place_units(self.worker, job.worker_demand, int(workers), policy, self.types == g)
                if y is not None:
                    break
        if y is None:
            return None
        z = place_units(self.ps, job.ps_demand, int(job.min_parameter_servers(int(workers))), policy)
        if z is None:
            self.worker = before_worker
            return None
        return Allocation(y, z)

    def fits(self, job, allocation: Allocation) -> bool:
        worker_after = self.worker - allocation.workers[:, None] * job.worker_demand[None, :]
        ps_after = self.ps - allocation.parameter_servers[:, None] * job.ps_demand[None, :]
        return bool((worker_after >= -FIT_TOLERANCE).all() and (ps_after >= -FIT_TOLERANCE).all())

    def take(self, job, allocation: Allocation) -> None:
        """Subtract an allocation decided earlier (a running job that keeps its servers)."""
        self.worker -= allocation.workers[:, None] * job.worker_demand[None, :]
        self.ps -= allocation.parameter_servers[:, None] * job.ps_demand[None, :]

    def release(self, job, allocation: Allocation) -> None:
        """Give back an allocation (or the part of one that a job does not use)."""
        self.worker += allocation.workers[:, None] * job.worker_demand[None, :]
        self.ps += allocation.parameter_servers[:, None] * job.ps_demand[None, :]


def grow(free: FreeCapacity, job, allocation: Allocation, workers: int, policy: str) -> Allocation:
    """``allocation`` (already taken from ``free``) grown towards ``workers`` workers with the PSs eq. (6) needs,
    as far as ``free`` allows; the added units are taken from ``free``. Existing units stay where they are."""
    held_workers = int(allocation.workers.sum())
    held_ps = int(allocation.parameter_servers.sum())
    servers = free.servers_for(job, policy, allocation)  # heterogeneous: its type, or the first with room
    if free.types is not None and servers is None:
        return allocation
    for target in range(int(workers), held_workers, -1):
        extra_ps = max(0, int(job.min_parameter_servers(target)) - held_ps)
        before = free.worker.copy()
        added = place_units(free.worker, job.worker_demand, target - held_workers, policy, servers)
        if added is None:
            continue
        added_ps = place_units(free.ps, job.ps_demand, extra_ps, policy)
        if added_ps is None:
            free.worker = before
            continue
        return Allocation(allocation.workers + added, allocation.parameter_servers + added_ps)
    return allocation


def trim(job, allocation: Allocation, workers: int) -> Allocation:
    """The same placement shrunk to ``workers`` workers and ``Z(workers)`` PSs (units leave the highest-index
    servers first). Used in a job's last slot, where it needs fewer workers than it holds."""
    y = _shrink(allocation.workers, int(workers))
    z = _shrink(allocation.parameter_servers, int(job.min_parameter_servers(int(workers))))
    return Allocation(y, z)


def _shrink(counts: np.ndarray, total: int) -> np.ndarray:
    out = np.array(counts, dtype=np.int64)
    excess = int(out.sum()) - total
    for s in range(out.shape[0] - 1, -1, -1):
        if excess <= 0:
            break
        take = min(int(out[s]), excess)
        out[s] -= take
        excess -= take
    return out


def type_of(types, allocation) -> int | None:
    """The GPU type (index) of ``allocation``'s workers; None without workers or on a homogeneous cluster."""
    if types is None or allocation is None or not allocation.workers.any():
        return None
    return int(types[int(np.argmax(allocation.workers > 0))])


def most_needed(instance, state) -> np.ndarray:
    """Per job, the worker-slots it still needs on its slowest type (the cap on a new allocation of a
    type-unaware baseline, :func:`fit_to_need` trims to the type it gets); ``remaining_work`` on one type."""
    if state.remaining_fraction is None:
        return state.remaining_work
    fraction = np.asarray(state.remaining_fraction)[:, None]
    need = np.ceil(fraction * instance.work_by_type - WORK_TOLERANCE).max(axis=1)
    return np.where(fraction[:, 0] > 0, np.maximum(need, 1), 0).astype(np.int64)


def need_of(instance, state, i: int, allocation: Allocation) -> int:
    """Worker-slots job ``i`` still needs on the type of ``allocation`` (``remaining_work[i]`` on one type)."""
    g = type_of(instance.cluster.worker_type_index if instance.cluster.worker_types is not None else None,
                allocation)
    return int(state.remaining_work[i]) if g is None else needed_on(state, instance, i, g)


def fit_to_need(instance, state, out: dict) -> dict:
    """Heterogeneous clusters: each allocation trimmed (:func:`trim`) to what its job still needs on its type;
    ``out`` itself on a homogeneous cluster. O(n H)."""
    if state.remaining_fraction is None:
        return out
    fitted = {}
    for i, allocation in out.items():
        need = need_of(instance, state, i, allocation)
        fitted[i] = trim(instance.jobs[i], allocation, need) if int(allocation.workers.sum()) > need else allocation
    return fitted


def dominant_share_unit(job, worker_total: np.ndarray, ps_total: np.ndarray) -> float:
    """Dominant share of one worker together with the ``b_i / B_i`` PS it needs (eq. (6)), over both pools.

    ``worker_total`` and ``ps_total`` are each pool's total capacity per resource; a resource with no capacity
    in a pool is ignored there (no job can demand it: instances are validated to fit).
    """
    ratio = job.worker_bandwidth_gbps / job.ps_bandwidth_gbps
    shares = [0.0]
    mask = worker_total > 0
    if mask.any():
        shares.append(float((job.worker_demand[mask] / worker_total[mask]).max()))
    mask = ps_total > 0
    if mask.any():
        shares.append(ratio * float((job.ps_demand[mask] / ps_total[mask]).max()))
    return max(shares)
