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
slot of the block at once. The search is plain loops over arrays in
:func:`primaldual.oasis.lr.reference.find_block` (compiled as the dual subroutine is), one text for the
reader and the machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primaldual.dual.cost_floor import suffix_minimum
from primaldual.core.instance import Instance
from primaldual.oasis.lr.kernel import functions
from primaldual.oasis.lr.reference import WORK_EPSILON, block_length
from primaldual.oasis.prices import exponential_price


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

    def __init__(self, instance: Instance, code=None):
        cluster = instance.cluster
        self.instance = instance
        #: The text of the block search this ledger runs (:func:`primaldual.oasis.lr.kernel.functions`).
        self.code = functions(instance) if code is None else code
        self.worker_capacity = cluster.worker_capacity
        self.ps_capacity = cluster.ps_capacity
        self.worker_used = np.zeros((instance.horizon,) + cluster.worker_capacity.shape)
        self.ps_used = np.zeros((instance.horizon,) + cluster.ps_capacity.shape)
        self.reservations: dict[int, Reservation] = {}
        self.changes: list[tuple[int, int]] = []  # the slot ranges changed, in order (for the price cache)

    def copy(self) -> "Ledger":
        other = object.__new__(Ledger)
        other.__dict__.update(self.__dict__)
        other.worker_used, other.ps_used = self.worker_used.copy(), self.ps_used.copy()
        other.reservations = dict(self.reservations)
        other.changes = list(self.changes)
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

    def find_block(self, i: int, remaining: float, earliest: int, deadline: int,
                   restart_cost: float, late: bool = True) -> Reservation | None:
        """The block of job ``i`` that starts as late as possible within ``earliest..deadline`` and fits
        (``late=False``: that ends as early as possible), by the loops of
        :func:`primaldual.oasis.lr.reference.find_block` (module docstring)."""
        job = self.instance.jobs[i]
        deadline = min(deadline, self.instance.horizon - 1)
        most = int(min(job.chunks, math.ceil(remaining - WORK_EPSILON)))
        if most < 1 or deadline < earliest:
            return None
        needed = np.asarray(job.min_parameter_servers(np.arange(most + 1)), dtype=np.int64)  # Z(D), D = 0..most
        rows, code = slice(earliest, deadline + 1), self.code
        worker_units = code.slot_units(self.worker_used[rows], self.worker_capacity, job.worker_demand, most)
        ps_units = code.slot_units(self.ps_used[rows], self.ps_capacity, job.ps_demand, max(int(needed[most]), 1))
        workers = np.empty(self.worker_capacity.shape[0], dtype=np.int64)
        parameter_servers = np.empty(self.ps_capacity.shape[0], dtype=np.int64)
        window, k = code.find_block(worker_units, ps_units, float(remaining), float(restart_cost), needed,
                                    bool(late), workers, parameter_servers)
        if window < 0:
            return None
        return Reservation(i, workers, parameter_servers, earliest + int(window), earliest + int(window + k) - 1)


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


class PromiseBroken(AssertionError):
    """The ledger no longer covers an admitted job's remaining work by its deadline (a bug, never expected)."""


def latest_deadline(job, arrival_completion: int, horizon: int, delta: float) -> int:
    """The latest slot ``d`` (``>= completion``) with ``f(d - a) >= (1 - delta) f(completion - a)``."""
    target = (1.0 - delta) * float(job.utility(arrival_completion - job.arrival))
    slots = np.arange(arrival_completion, horizon)
    ok = np.asarray(job.utility(slots - job.arrival), dtype=float) >= target * (1 - 1e-12)
    return int(slots[ok][-1]) if ok.any() else arrival_completion


__all__ = ["Ledger", "PriceCache", "PromiseBroken", "Reservation", "block_length", "latest_deadline"]
