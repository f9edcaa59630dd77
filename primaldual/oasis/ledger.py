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
:func:`primaldual.oasis.lr.blocks.block_search` (compiled as the dual subroutine is), one text for the
reader and the machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primaldual.core.instance import Instance
from primaldual.oasis.lr.kernel import functions
from primaldual.oasis.lr.blocks import WORK_EPSILON, Demand, Reserved, block_length


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
        #: The amounts' *token*: two ledgers of one lineage (this one and its copies) with the same token hold
        #: the same amounts, to the bit. Each change maps (token, change) to a token through ``tokens``, shared
        #: by the lineage, so the same changes in the same order from the same amounts give the same token.
        self.tokens: dict[tuple, int] = {}
        self.token = 0

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
        change = (self.token, reservation.job, sign, first, last, reservation.workers.tobytes(),
                  reservation.parameter_servers.tobytes())
        self.token = self.tokens.setdefault(change, len(self.tokens) + 1)

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

    def reserved(self) -> Reserved:
        """The arrays the block search reads (:class:`primaldual.oasis.lr.blocks.Reserved`)."""
        return Reserved(self.worker_used, self.ps_used, self.worker_capacity, self.ps_capacity)

    def find_block(self, i: int, remaining: float, earliest: int, deadline: int,
                   restart_cost: float, late: bool = True, types=None, gpu_type: int = -1) -> Reservation | None:
        """The block of job ``i`` that starts as late as possible within ``earliest..deadline`` and fits
        (``late=False``: that ends as early as possible), by the loops of
        :func:`primaldual.oasis.lr.blocks.block_search` (module docstring); on several GPU types, on the worker
        servers of ``gpu_type`` only (``types``: :class:`primaldual.oasis.lr.type_view.TypeView`)."""
        job = self.instance.jobs[i]
        most = int(min(job.chunks, math.ceil(remaining - WORK_EPSILON)))
        needed = np.asarray(job.min_parameter_servers(np.arange(max(most, 0) + 1)), dtype=np.int64)  # Z(D), D = 0..most
        placement = (np.empty(self.worker_capacity.shape[0], dtype=np.int64),
                     np.empty(self.ps_capacity.shape[0], dtype=np.int64))
        reserved = self.reserved() if types is None else types.reserved_on(self.reserved(), gpu_type)
        first, last = self.code.block_search(reserved, Demand(job.worker_demand, job.ps_demand, needed),
                                             float(remaining), int(earliest), int(deadline), float(restart_cost),
                                             bool(late), placement)
        return None if first < 0 else Reservation(i, *placement, int(first), int(last))


class PromiseBroken(AssertionError):
    """The ledger no longer covers an admitted job's remaining work by its deadline (a bug, never expected)."""


__all__ = ["Ledger", "PromiseBroken", "Reservation", "WORK_EPSILON", "block_length"]
