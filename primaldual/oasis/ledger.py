"""The reservation ledger of OASiS-LR and OASiS-P: every admitted job's remaining work, reserved as one block.

A **reservation** of job ``i`` is a fixed placement (``D`` workers on given worker servers and the ``Z(D)``
PSs eq. (6) needs on given PS servers) held in every slot of a contiguous block ``first..last``. A fixed
placement over consecutive slots restarts at most once, at ``first`` (simulator, ``restart_cost = F``), so a
block of ``k`` slots supplies at least ``k D - F D`` worker-slots. :func:`block_length` is the least ``k``
that covers a remaining work ``R``: ``ceil(R / D + F)`` (``ceil(R / D)`` when ``F = 0``). A block that ends by
the job's committed deadline therefore finishes the job by it whatever else happens: this is the promise.

The ledger keeps the amounts reserved per (slot, server, resource) in both pools, and
:meth:`Ledger.find_block` finds, for a job's remaining work and deadline, the block that starts as late as
possible (ties: more workers, i.e. fewer slots) and fits in what the other reservations leave free, in every
slot of the block at once: the units that fit per slot and server are counted once, their minimum over every
window of the block's length comes from a sparse table of integer minima (numpy, ``O(log k)`` operations for
length ``k``), and servers are filled in order of most room.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

import math
from dataclasses import dataclass

import numpy as np

from primaldual.dual.cost_floor import suffix_minimum
from primaldual.core.instance import Instance
from primaldual.oasis.prices import exponential_price, fit_counts

#: Reservations are exact in units, like the dual subroutine's fills (:data:`primaldual.oasis.prices.FIT_TOLERANCE`).
WORK_EPSILON = 1e-9

#: Demand vectors whose unit counts a ledger keeps, the most recently used: a trace has a few (one per model),
#: a generated instance one per job, and each costs slots x servers integers.
KEPT_DEMANDS = 16

#: The cap of the kept unit counts (:meth:`Ledger.unit_counts`), above any job's worker or PS count, so that
#: capping them again at a job's own limit gives what capping once at it gives.
_NO_LIMIT = 1 << 30


def block_length(remaining: float, workers: int, restart_cost: float) -> int:
    """Fewest consecutive slots of ``workers`` workers, one restart included, that cover ``remaining``."""
    if remaining <= WORK_EPSILON:
        return 0
    return int(math.ceil(remaining / workers + restart_cost - WORK_EPSILON))


@dataclass(frozen=True, eq=False)
class Reservation:
    """Job ``job`` holds ``workers`` (H,) and ``parameter_servers`` (K,) in every slot ``first..last``."""

    job: int
    workers: np.ndarray
    parameter_servers: np.ndarray
    first: int
    last: int

    @property
    def size(self) -> int:
        return int(self.workers.sum())

    def covers(self, slot: int) -> bool:
        return self.first <= slot <= self.last

    def supply(self, slot: int, restart_cost: float, running_since: bool) -> float:
        """Worker-slots the block still supplies from ``slot`` on; no restart if it is already running."""
        slots = self.last - max(slot, self.first) + 1
        if slots <= 0:
            return 0.0
        return slots * self.size - (0.0 if running_since else restart_cost * self.size)


class Ledger:
    """Amounts reserved per (slot, server, resource), and the reservations themselves (module docstring)."""

    def __init__(self, instance: Instance):
        cluster = instance.cluster
        self.instance = instance
        self.worker_capacity = cluster.worker_capacity
        self.ps_capacity = cluster.ps_capacity
        self.worker_used = np.zeros((instance.horizon,) + cluster.worker_capacity.shape)
        self.ps_used = np.zeros((instance.horizon,) + cluster.ps_capacity.shape)
        self.reservations: dict[int, Reservation] = {}
        self.changes: list[tuple[int, int]] = []  # the slot ranges changed, in order (for incremental caches)
        # Per (pool, demand): units that fit per (slot, server), and how many changes they have seen.
        self._counts: OrderedDict[tuple[int, bytes], tuple[np.ndarray, int]] = OrderedDict()
        # The demand vectors of two jobs or more: only theirs are worth keeping (a trace's jobs share a few; a
        # generated instance's jobs each have their own).
        seen = Counter((pool, demand.tobytes()) for job in instance.jobs
                       for pool, demand in ((0, job.worker_demand), (1, job.ps_demand)))
        self._shared = frozenset(key for key, jobs in seen.items() if jobs > 1)

    def copy(self) -> "Ledger":
        other = object.__new__(Ledger)
        other.__dict__.update(self.__dict__)
        other.worker_used, other.ps_used = self.worker_used.copy(), self.ps_used.copy()
        other.reservations = dict(self.reservations)
        other.changes = list(self.changes)
        other._counts = OrderedDict((key, (counts.copy(), seen)) for key, (counts, seen) in self._counts.items())
        return other

    def _apply(self, reservation: Reservation, sign: float, first: int, last: int) -> None:
        if last < first:
            return
        self.changes.append((first, last))
        job = self.instance.jobs[reservation.job]
        self.worker_used[first:last + 1] += sign * reservation.workers[:, None] * job.worker_demand[None, :]
        self.ps_used[first:last + 1] += sign * reservation.parameter_servers[:, None] * job.ps_demand[None, :]

    def add(self, reservation: Reservation) -> None:
        if reservation.job in self.reservations:
            raise ValueError(f"job {reservation.job} already holds a reservation")
        self.reservations[reservation.job] = reservation
        self._apply(reservation, 1.0, reservation.first, reservation.last)

    def remove(self, job: int) -> Reservation | None:
        reservation = self.reservations.pop(job, None)
        if reservation is not None:
            self._apply(reservation, -1.0, reservation.first, reservation.last)
        return reservation

    def release_before(self, job: int, first: int) -> None:
        """Give back the slots of ``job``'s block before ``first`` (its work shrank: the block starts later)."""
        reservation = self.reservations[job]
        if first <= reservation.first:
            return
        self._apply(reservation, -1.0, reservation.first, min(first, reservation.last + 1) - 1)
        if first > reservation.last:
            del self.reservations[job]
        else:
            self.reservations[job] = Reservation(job, reservation.workers, reservation.parameter_servers, first,
                                                 reservation.last)

    def release_after(self, job: int, last: int) -> None:
        """Give back the slots of ``job``'s block after ``last`` (it needs fewer slots than it holds)."""
        reservation = self.reservations[job]
        if last >= reservation.last:
            return
        self._apply(reservation, -1.0, max(last + 1, reservation.first), reservation.last)
        if last < reservation.first:
            del self.reservations[job]
        else:
            self.reservations[job] = Reservation(job, reservation.workers, reservation.parameter_servers,
                                                 reservation.first, last)

    def worker_free(self) -> np.ndarray:
        return self.worker_capacity[None] - self.worker_used

    def ps_free(self) -> np.ndarray:
        return self.ps_capacity[None] - self.ps_used

    def unit_counts(self, pool: int, demand: np.ndarray, rows: slice) -> np.ndarray:
        """``fit_counts(capacity - used, demand)`` of pool ``pool`` (0 workers, 1 PSs) over the slots ``rows``,
        capped at :data:`_NO_LIMIT` only. Kept for the :data:`KEPT_DEMANDS` demand vectors used last among those
        that two jobs or more share (computed over ``rows`` alone for the others) and brought up to date by
        recomputing only the slots changed since (``changes``): each slot's counts are the same elementwise
        operations whichever slots are computed with it, so the same integers as computing them afresh (what the
        cache saves: docs/measurements.md, "OASiS-LR with lookahead")."""
        capacity, used = (self.worker_capacity, self.worker_used) if pool == 0 else (self.ps_capacity, self.ps_used)
        key = (pool, demand.tobytes())
        if key not in self._shared:  # one job's own demand: the slots asked for, not kept
            return fit_counts(capacity[None] - used[rows], demand, _NO_LIMIT)
        entry = self._counts.pop(key, None)
        if entry is None:
            counts = fit_counts(capacity[None] - used, demand, _NO_LIMIT)
        else:
            counts, seen = entry
            if seen < len(self.changes):
                changed = np.zeros(used.shape[0], dtype=bool)
                for first, last in self.changes[seen:]:
                    changed[first:last + 1] = True
                stale = np.flatnonzero(changed)
                counts[stale] = fit_counts(capacity[None] - used[stale], demand, _NO_LIMIT)
        self._counts[key] = (counts, len(self.changes))
        if len(self._counts) > KEPT_DEMANDS:
            self._counts.popitem(last=False)  # the least recently used
        return counts[rows]

    def find_block(self, i: int, remaining: float, earliest: int, deadline: int,
                   restart_cost: float, late: bool = True) -> Reservation | None:
        """The block of job ``i`` that starts as late as possible within ``earliest..deadline`` and fits
        (``late=False``: that ends as early as possible)."""
        job = self.instance.jobs[i]
        deadline = min(deadline, self.instance.horizon - 1)
        most = int(min(job.chunks, math.ceil(remaining - WORK_EPSILON)))
        if most < 1 or deadline < earliest:
            return None
        # Units that fit per (slot, server), once: the slot-wise minimum over a window of these counts is the
        # count that fits the window's minimum free amounts (floor and min commute), so each block length only
        # takes minima of small integer arrays (_RunningMinimum). The counts are kept per demand (unit_counts).
        rows = slice(earliest, deadline + 1)
        needed = job.min_parameter_servers(np.arange(most + 1)).tolist()  # Z(D), D = 0..most, at once
        worker_units = np.minimum(self.unit_counts(0, job.worker_demand, rows), most)
        ps_units = np.minimum(self.unit_counts(1, job.ps_demand, rows), max(needed[most], 1))
        windows = _RunningMinimum(worker_units, ps_units)
        best = None  # (key, first, workers, worker caps, PS caps, PSs, k)
        for workers in range(most, 0, -1):
            ps_needed = needed[workers]
            if ps_needed > workers:
                continue
            k = block_length(remaining, workers, restart_cost)
            if k > worker_units.shape[0] or (late and best is not None and deadline - k + 1 <= best[0]):
                continue  # a longer block cannot start later than the best one found
            worker_min, ps_min = windows.of_length(k)
            worker_caps = np.minimum(worker_min, workers)
            ps_caps = np.minimum(ps_min, max(ps_needed, 1))
            fits = (worker_caps.sum(axis=1) >= workers) & (ps_caps.sum(axis=1) >= ps_needed)
            if not fits.any():
                continue
            window = int(np.flatnonzero(fits)[-1 if late else 0])  # the latest (earliest) window that fits
            first = earliest + window
            key = first if late else -(first + k)
            if best is None or key > best[0]:
                best = (key, first, workers, worker_caps[window], ps_caps[window], ps_needed, k)
        if best is None:
            return None
        _, first, workers, worker_caps, ps_caps, ps_needed, k = best
        return Reservation(i, _fill(worker_caps, workers), _fill(ps_caps, ps_needed), first, first + k - 1)


class PriceCache:
    """OASiS-LR's cell prices ``L^r e^(theta^r g / c) + floor^r`` and free amounts over one ledger, kept up to date
    incrementally: only the slots the ledger changed since the last update are recomputed (each once, however
    many changes touched it), and a new floor only re-adds itself to the exponential part (kept). Slots before
    ``slot`` are never read again, so they are left stale. A new cache is needed when the ledger is replaced (a
    re-pack) or an earlier slot is asked for (:meth:`valid`)."""

    def __init__(self, ledger: "Ledger", constants, floor, slot: int):
        self.ledger, self.constants, self.floor, self.slot = ledger, constants, floor, slot
        shape_w, shape_ps = ledger.worker_used.shape, ledger.ps_used.shape
        self.exponential = (np.zeros(shape_w), np.zeros(shape_ps))
        self.prices = (np.zeros(shape_w), np.zeros(shape_ps))
        self.free = (np.zeros(shape_w), np.zeros(shape_ps))
        self.seen = None  # nothing computed yet
        # Per pool, slot and resource, the least price; and their suffix minima (least_prices) until a change.
        self._slot_least = (np.zeros((shape_w[0], shape_w[2])), np.zeros((shape_ps[0], shape_ps[2])))
        self._least = None
        self.touched = np.zeros(shape_w[0], dtype=bool)  # slots recomputed since the last take_touched

    def copy_onto(self, ledger: "Ledger") -> "PriceCache":
        """The same cache over ``ledger`` (a copy of this cache's ledger): a rollout's twin starts with the
        prices already computed. Constants and floor are shared (never changed in place)."""
        other = PriceCache.__new__(PriceCache)
        other.ledger, other.constants, other.floor, other.slot = ledger, self.constants, self.floor, self.slot
        other.exponential = tuple(a.copy() for a in self.exponential)
        other.prices = tuple(a.copy() for a in self.prices)
        other.free = tuple(a.copy() for a in self.free)
        other.seen = self.seen
        other._slot_least = tuple(a.copy() for a in self._slot_least)
        other._least = None if self._least is None else tuple(a.copy() for a in self._least)
        other.touched = self.touched.copy()
        return other

    def valid(self, ledger: "Ledger", slot: int) -> bool:
        return ledger is self.ledger and slot >= self.slot

    def _set_floor(self, floor, slot: int) -> None:
        """A floor of a different value: the prices from ``slot`` on are the kept exponential part plus it."""
        self.floor = floor
        if self.seen is not None:
            self._refresh(np.arange(slot, self.ledger.worker_used.shape[0]), exponential=False)

    def update(self, slot: int, floor=None) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """The prices and free amounts, current from ``slot`` on, with ``floor`` (default: the cached one)."""
        ledger = self.ledger
        if floor is not None and floor is not self.floor:
            if np.array_equal(floor.worker, self.floor.worker) and np.array_equal(floor.ps, self.floor.ps):
                self.floor = floor  # the same values: nothing to recompute
            else:
                self._set_floor(floor, slot)
        if self.seen == len(ledger.changes):  # no change since the last update: no row to recompute
            self.slot = slot
            return self.prices, self.free
        if self.seen is None:
            rows = np.arange(slot, ledger.worker_used.shape[0])
        else:
            changed = np.zeros(ledger.worker_used.shape[0], dtype=bool)
            for first, last in ledger.changes[self.seen:]:
                changed[max(first, slot):last + 1] = True
            rows = np.flatnonzero(changed)
        self.seen, self.slot = len(ledger.changes), slot
        if rows.size:
            self._refresh(rows, exponential=True)
        return self.prices, self.free

    def _refresh(self, rows: np.ndarray, exponential: bool) -> None:
        ledger, constants = self.ledger, self.constants
        for pool, (used, capacity, lower, theta, floor) in enumerate((
            (ledger.worker_used, ledger.worker_capacity, constants.worker_lower, constants.worker_log_ratio,
             self.floor.worker),
            (ledger.ps_used, ledger.ps_capacity, constants.ps_lower, constants.ps_log_ratio, self.floor.ps),
        )):
            if exponential:
                self.exponential[pool][rows] = exponential_price(lower, theta, used[rows], capacity[None])
                self.free[pool][rows] = capacity[None] - used[rows]
            self.prices[pool][rows] = self.exponential[pool][rows] + floor
            self._slot_least[pool][rows] = self.prices[pool][rows].min(axis=1)
        self._least = None
        self.touched[rows] = True

    def take_touched(self, slot: int) -> np.ndarray:
        """The slots ``>= slot`` whose prices were recomputed since the last call (or since the cache was
        built), and forget them: any other slot's prices are the same floats as at that call."""
        rows = slot + np.flatnonzero(self.touched[slot:])
        self.touched[:] = False
        return rows

    def least_prices(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`primaldual.dual.subroutine.least_prices` of the current prices (valid from ``slot`` on: row ``t`` reads
        slots ``>= t`` only), recomputed only after a change."""
        if self._least is None:
            self._least = tuple(suffix_minimum(least) for least in self._slot_least)
        return self._least


class _RunningMinimum:
    """Per window of ``k`` consecutive slots and per server, the least count over the window's slots.

    A sparse table: level ``j`` holds the minimum over every window of ``2^j`` slots, each level one
    elementwise minimum of two shifted copies of the one below, built when a query first needs it; a window of
    ``k`` slots is the union of the two windows of ``2^j <= k`` slots at its two ends (``j = floor(log2 k)``),
    so its minimum is one more elementwise minimum. Minima of integers are exact and overlapping windows do
    not change them, so the counts are those of ``k - 1`` steps of neighbour minima, in ``O(log k)``
    operations instead of ``O(k)`` (a job with one worker asks for one window as long as its whole work)."""

    def __init__(self, *counts: np.ndarray):
        self.levels = [list(counts)]

    def of_length(self, k: int) -> list[np.ndarray]:
        j = k.bit_length() - 1
        while len(self.levels) <= j:
            half = 1 << (len(self.levels) - 1)
            self.levels.append([np.minimum(c[:-half], c[half:]) for c in self.levels[-1]])
        shift = k - (1 << j)
        return [np.minimum(c[:c.shape[0] - shift], c[shift:]) if shift else c for c in self.levels[j]]


def _fill(caps: np.ndarray, count: int) -> np.ndarray:
    """``count`` units on the servers with the most room first (fewest servers; ties to the lower index)."""
    out = np.zeros(caps.shape[0], dtype=np.int64)
    left = count
    for s in np.argsort(-caps, kind="stable"):
        if left <= 0:
            break
        take = min(int(caps[s]), left)
        out[s] = take
        left -= take
    return out


class PromiseBroken(AssertionError):
    """The ledger no longer covers an admitted job's remaining work by its deadline (a bug, never expected)."""


def latest_deadline(job, arrival_completion: int, horizon: int, delta: float) -> int:
    """The latest slot ``d`` (``>= completion``) with ``f(d - a) >= (1 - delta) f(completion - a)``."""
    target = (1.0 - delta) * float(job.utility(arrival_completion - job.arrival))
    slots = np.arange(arrival_completion, horizon)
    ok = np.asarray(job.utility(slots - job.arrival), dtype=float) >= target * (1 - 1e-12)
    return int(slots[ok][-1]) if ok.any() else arrival_completion


__all__ = ["Ledger", "PriceCache", "PromiseBroken", "Reservation", "block_length", "latest_deadline"]
