"""The ledger's block search (:meth:`primaldual.oasis.ledger.Ledger.find_block`) and what a block pays
(:func:`block_cost`) as plain loops, compiled with the rest of OASiS-LR's slot
(:mod:`primaldual.oasis.lr.reference` lists these functions among its own).

**Blocks** (:func:`find_block`, the search of :meth:`primaldual.oasis.ledger.Ledger.find_block`). A job's block is
``D`` workers with their ``Z(D)`` PSs held in every slot of ``k = block_length(V, D, F)`` consecutive slots. For
each ``D`` from the most down, the units that fit per slot and server (counted once per search, capped at the
job's counts) are reduced to their minimum over every window of ``k`` slots (:func:`window_minima`: floor and
minimum commute, so the window's count is the count of its least free amounts); the latest window (the earliest
with ``late = False``) where the capped minima hold ``D`` workers and ``Z(D)`` PSs is the candidate, and the
latest start wins (ties: more workers, tried first). A longer block cannot start later than one found, so it
is not tried. Servers are then filled most room first (:func:`fill`). All integers, so the result is exact
and the same as the sparse table of numpy minima this replaced (``tests/oasis/test_ledger_blocks.py`` checks
it against a brute force). Cost: ``O(n (H + K) R)`` to count, ``O(n (H + K))`` per ``D`` tried, for a
search over ``n`` slots.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# Names the compiled copy reads as its globals.
from primaldual.dual.reference import FIT_TOLERANCE, unit_price, units_that_fit  # noqa: F401

#: Reservations are exact in units, like the dual subroutine's fills (:data:`primaldual.core.standalone.FIT_TOLERANCE`).
WORK_EPSILON = 1e-9


def block_length(remaining: float, workers: int, restart_cost: float) -> int:
    """Fewest consecutive slots of ``workers`` workers, one restart included, that cover ``remaining``."""
    if remaining <= WORK_EPSILON:
        return 0
    return int(math.ceil(remaining / workers + restart_cost - WORK_EPSILON))


def slot_units(used: np.ndarray, capacity: np.ndarray, demand: np.ndarray, limit: int) -> np.ndarray:
    """Units of ``demand`` that fit per (slot, server) in ``capacity - used[t]``, at most ``limit``."""
    out = np.empty((used.shape[0], capacity.shape[0]), dtype=np.int64)
    for t in range(out.shape[0]):
        free = capacity - used[t]
        for s in range(capacity.shape[0]):
            out[t, s] = units_that_fit(free, s, demand, limit)
    return out


def window_minima(units: np.ndarray, k: int, out: np.ndarray) -> None:
    """``out[a, s]``: the least of ``units[a..a+k-1, s]`` (van Herk / Gil-Werman: per server, minima within blocks
    of ``k`` slots from the left and from the right; a window meets at most two blocks)."""
    n = units.shape[0]
    left = np.empty(n, dtype=np.int64)
    right = np.empty(n, dtype=np.int64)
    for s in range(units.shape[1]):
        for t in range(n):
            left[t] = units[t, s] if t % k == 0 else min(left[t - 1], units[t, s])
        for t in range(n - 1, -1, -1):
            right[t] = units[t, s] if t == n - 1 or (t + 1) % k == 0 else min(right[t + 1], units[t, s])
        for a in range(n - k + 1):
            out[a, s] = min(right[a], left[a + k - 1])


def window_that_fits(worker_min: np.ndarray, ps_min: np.ndarray, workers: int, ps_needed: int, late: bool) -> int:
    """The latest (``late``) or earliest window whose per-server minima hold ``workers`` and ``ps_needed``; -1 if
    none does."""
    windows = worker_min.shape[0]
    for m in range(windows):
        a = windows - 1 - m if late else m
        worker_room = 0
        for s in range(worker_min.shape[1]):
            worker_room += min(worker_min[a, s], workers)
        ps_room = 0
        for s in range(ps_min.shape[1]):
            ps_room += min(ps_min[a, s], max(ps_needed, 1))
        if worker_room >= workers and ps_room >= ps_needed:
            return a
    return -1


def fill(caps: np.ndarray, count: int, out: np.ndarray) -> None:
    """``count`` units on the servers with the most room first (fewest servers; ties to the lower index)."""
    out[:] = 0
    left = count
    while left > 0:
        best = -1
        for s in range(caps.shape[0]):
            if out[s] == 0 and caps[s] > 0 and (best < 0 or caps[s] > caps[best]):
                best = s
        if best < 0:
            return
        out[best] = min(caps[best], left)
        left -= out[best]


def find_block(worker_units: np.ndarray, ps_units: np.ndarray, remaining: float, restart_cost: float,
               ps_needed: np.ndarray, late: bool, workers: np.ndarray, parameter_servers: np.ndarray) -> np.ndarray:
    """The block of a job (module docstring, "Blocks") over the slots of ``worker_units`` and ``ps_units`` (units
    that fit per slot and server, capped at ``most = len(ps_needed) - 1`` and at ``max(Z(most), 1)``): returns
    ``(window, k)`` with its placement in ``workers`` and ``parameter_servers``, or ``(-1, 0)``."""
    n = worker_units.shape[0]
    worker_min = np.empty((n, worker_units.shape[1]), dtype=np.int64)
    ps_min = np.empty((n, ps_units.shape[1]), dtype=np.int64)
    best = np.array([-1, 0, 0], dtype=np.int64)  # window, k, workers
    best_key = 0
    for count in range(ps_needed.shape[0] - 1, 0, -1):
        if ps_needed[count] > count:
            continue
        k = block_length(remaining, count, restart_cost)
        if k > n or (late and best[0] >= 0 and n - k <= best[0]):
            continue  # a longer block cannot start later than the best one found
        window_minima(worker_units, k, worker_min)
        window_minima(ps_units, k, ps_min)
        a = window_that_fits(worker_min[:n - k + 1], ps_min[:n - k + 1], count, ps_needed[count], late)
        if a >= 0 and (best[0] < 0 or (a if late else -(a + k)) > best_key):
            best[0], best[1], best[2], best_key = a, k, count, a if late else -(a + k)
            for s in range(workers.shape[0]):
                workers[s] = min(worker_min[a, s], count)
            for s in range(parameter_servers.shape[0]):
                parameter_servers[s] = min(ps_min[a, s], max(ps_needed[count], 1))
    if best[0] >= 0:
        caps = workers.copy()
        fill(caps, best[2], workers)
        caps = parameter_servers.copy()
        fill(caps, ps_needed[best[2]], parameter_servers)
    return best[:2]


class Reserved(NamedTuple):
    """The ledger's arrays: amounts reserved per (slot, server, resource) in each pool, and the capacities."""

    worker_used: np.ndarray
    ps_used: np.ndarray
    worker_capacity: np.ndarray
    ps_capacity: np.ndarray


class Demand(NamedTuple):
    """One job's per-unit demands and ``Z(D)`` for ``D = 0..min(N_i, V)`` (eq. (6)), ``V`` its remaining work."""

    worker: np.ndarray
    ps: np.ndarray
    ps_needed: np.ndarray


def block_search(reserved: Reserved, demand: Demand, remaining: float, earliest: int, deadline: int,
                 restart_cost: float, late: bool, placement: tuple) -> tuple:
    """:meth:`primaldual.oasis.ledger.Ledger.find_block`: the block of ``remaining`` worker-slots within
    ``earliest..deadline`` (the deadline capped at the horizon), counted and searched by :func:`find_block`;
    returns ``(first, last)`` with its placement in ``placement = (workers, parameter_servers)``, or ``(-1, -1)``."""
    deadline = min(deadline, reserved.worker_used.shape[0] - 1)
    most = demand.ps_needed.shape[0] - 1
    if most < 1 or deadline < earliest:
        return -1, -1
    worker_units = slot_units(reserved.worker_used[earliest:deadline + 1], reserved.worker_capacity, demand.worker,
                              most)
    ps_units = slot_units(reserved.ps_used[earliest:deadline + 1], reserved.ps_capacity, demand.ps,
                          max(demand.ps_needed[most], 1))
    found = find_block(worker_units, ps_units, remaining, restart_cost, demand.ps_needed, late, placement[0],
                       placement[1])
    if found[0] < 0:
        return -1, -1
    return earliest + found[0], earliest + found[0] + found[1] - 1


def pool_cost(prices: np.ndarray, first: int, last: int, demand: np.ndarray, counts: np.ndarray) -> float:
    """What ``counts`` units per server pay over slots ``first..last``: per cell the dual subroutine's
    :func:`unit_price` (the demanded resources' products added in resource order), times the count, added **in
    index order**, servers within a slot and then the slots. Index order is the one order numpy also computes
    (``np.cumsum``, :func:`primaldual.oasis.lr.admission.block_cost`), so this loop and the numpy expression give
    the same float without calling into numpy's BLAS (whose order is its own, chosen per CPU)."""
    total = 0.0
    for t in range(last + 1 - first):
        per_slot = 0.0
        for s in range(prices.shape[1]):
            per_slot += unit_price(prices[first + t], s, demand) * float(counts[s])
        total += per_slot
    return total


def block_cost(worker_prices: np.ndarray, ps_prices: np.ndarray, first: int, last: int, worker_demand: np.ndarray,
               ps_demand: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
    """What a block of ``workers`` and ``parameter_servers`` over slots ``first..last`` pays at the cell prices
    (:func:`primaldual.oasis.lr.admission.block_cost`, the same float)."""
    return pool_cost(worker_prices, first, last, worker_demand, workers) + \
        pool_cost(ps_prices, first, last, ps_demand, parameter_servers)


__all__ = ["WORK_EPSILON", "Demand", "Reserved", "block_cost", "block_length", "block_search", "fill", "find_block",
           "pool_cost", "slot_units",
           "window_minima", "window_that_fits"]
