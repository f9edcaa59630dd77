"""OASiS-LR's execution of a slot, the parts written as plain loops (the twin as data, begun).

:mod:`primaldual.dual.kernel` compiles these functions with numba, as it compiles the dual subroutine
(:mod:`primaldual.dual.reference`); ``PRIMALDUAL_KERNEL=reference`` runs this very text as Python. Every function
takes numpy arrays and numbers only. :mod:`primaldual.oasis.lr.execution` prepares them and calls
:func:`primaldual.oasis.lr.kernel.functions`.

**First fit** (:func:`place_most`). A growing job gets the most workers ``D <= limit`` whose ``Z(D)`` PSs fit too
(eq. (6)); both pools are filled first-fit: server by server in index order, each taking what is left of the
count up to the units that fit on it. How many units fit on a server is the rule of the dual subroutine
(:func:`primaldual.dual.reference.units_that_fit`: the least over the demanded resources of
``floor((free + FIT_TOLERANCE) / demand)``), so the project states it once. The result and the capacity left are
bit for bit those of the array programme this replaced (``units_that_fit``, ``_first_fit`` and
``FreeCapacity.take`` of :mod:`primaldual.simulation.placement`): the same IEEE operations on the same values,
``free - count * demand`` per cell in the same order; randomized tests compare the two
(``tests/oasis/test_oasis_lr_speed.py``, as Python and compiled).

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

**Cost.** ``O((H + K) R)`` per call of :func:`place_most`, without the dozen small numpy temporaries per call the array programme
made (0.2 million calls on one Philly week's rollouts: ``docs/measurements.md``, "OASiS-LR's slot compiled").
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# Names the compiled copy reads as its globals: the dual subroutine's per-server rules, its search and numpy's BLAS.
from primaldual.dual.reference import FIT_TOLERANCE, cannot_pay, search, unit_price, units_that_fit  # noqa: F401
from primaldual.oasis.lr import blas
from primaldual.oasis.lr.blas import NO_TRANSPOSE, ROW_MAJOR, block_sum, ddot, dgemv, matrix_vector, pairwise_sum  # noqa: F401

#: Reservations are exact in units, like the dual subroutine's fills (:data:`primaldual.core.standalone.FIT_TOLERANCE`).
WORK_EPSILON = 1e-9
#: A server's units when the demand is zero in every resource (:data:`primaldual.simulation.placement.UNBOUNDED`).
UNBOUNDED = 1 << 40
#: The cap of a count where the demand is positive: above any count the domains allow (docs/input-ranges.md).
NO_LIMIT = 1 << 62


def server_caps(free: np.ndarray, demand: np.ndarray, caps: np.ndarray) -> int:
    """``caps[s]``: the units of ``demand`` that fit on server ``s`` of ``free`` (S, R); returns their sum."""
    positive = False
    for r in range(demand.shape[0]):
        if demand[r] > 0:
            positive = True
    total = 0
    for s in range(free.shape[0]):
        caps[s] = units_that_fit(free, s, demand, NO_LIMIT) if positive else UNBOUNDED
        total += caps[s]
    return total


def first_fit(count: int, caps: np.ndarray, out: np.ndarray) -> bool:
    """``out[s]``: ``count`` units spread first-fit over servers holding at most ``caps[s]``; False (``out``
    undefined) if they do not fit."""
    room = 0
    for s in range(caps.shape[0]):
        room += min(caps[s], count)
    if room < count:
        return False
    left = count
    for s in range(caps.shape[0]):
        out[s] = min(caps[s], left)
        left -= out[s]
    return True


def take(free: np.ndarray, counts: np.ndarray, demand: np.ndarray) -> None:
    """``free -= counts[:, None] * demand[None, :]``, cell by cell."""
    for s in range(free.shape[0]):
        for r in range(free.shape[1]):
            free[s, r] = free[s, r] - counts[s] * demand[r]


def place_most(worker_free: np.ndarray, ps_free: np.ndarray, worker_demand: np.ndarray, ps_demand: np.ndarray,
               limit: int, ps_needed: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> int:
    """The most workers ``D <= limit`` (``limit < len(ps_needed)``) whose ``Z(D) = ps_needed[D]`` PSs fit too,
    placed first-fit into ``workers`` (H,) and ``parameter_servers`` (K,) and taken from the free amounts;
    returns ``D``, or 0 with nothing taken if not one worker fits."""
    worker_room = server_caps(worker_free, worker_demand, workers)
    count = min(limit, worker_room)
    if count <= 0:
        return 0  # the PS pool need not be looked at
    ps_caps = np.empty(ps_free.shape[0], dtype=np.int64)
    ps_room = min(server_caps(ps_free, ps_demand, ps_caps), UNBOUNDED)
    while count > 0 and ps_needed[count] > ps_room:
        count -= 1
    if count <= 0:
        return 0
    worker_caps = workers.copy()
    if not first_fit(count, worker_caps, workers) or not first_fit(ps_needed[count], ps_caps, parameter_servers):
        return 0
    take(worker_free, workers, worker_demand)
    take(ps_free, parameter_servers, ps_demand)
    return count


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


class Market(NamedTuple):
    """The cell prices and free amounts an offer is priced at, (T, H, R) and (T, K, R), current from its slot on."""

    worker_prices: np.ndarray
    ps_prices: np.ndarray
    worker_free: np.ndarray
    ps_free: np.ndarray


class OfferedJob(NamedTuple):
    """A job offered in slot ``start`` with ``work`` worker-slots left: its demands, ``Z``'s most useful count
    (``ps_max``), the widest block it may get (``block_workers``: the most workers it can run on the empty
    cluster, at most ``work``) and ``utility[s] = f_i(start + s - a_i)`` for every slot to the horizon or to the
    end of its earliest block, whichever is later."""

    start: int
    work: int
    demand: Demand
    ps_max: int
    block_workers: int
    utility: np.ndarray


class OfferRules(NamedTuple):
    """What an offer is decided by besides the job and the prices: the horizon, the job's cost floor
    (:func:`primaldual.dual.cost_floor.cost_floor_of`), ``delta``, the restart cost, OASiS-P's bound, late
    blocks, and the first slot a block may start (:func:`primaldual.oasis.lr.admission.first_block_slot`)."""

    horizon: int
    floor: float
    delta: float
    restart_cost: float
    provable: bool
    late: bool
    earliest: int


#: How an offer ends (:func:`offer`): not admitted (``mu = 0``), admitted but no worker fits anywhere, admitted
#: with no block before its deadline (the caller may re-pack), a block found.
NO_OFFER, UNPLACED, NO_BLOCK, BLOCK = 0, 1, 2, 3


def latest_deadline(utility: np.ndarray, start: int, planned: int, horizon: int, delta: float) -> int:
    """The latest slot ``d`` in ``planned..horizon - 1`` with ``f(d - a) >= (1 - delta) f(planned - a)`` (within a
    relative 1e-12), else ``planned``; ``utility[s] = f(start + s - a)``."""
    target = (1.0 - delta) * utility[planned - start]
    for d in range(horizon - 1, planned - 1, -1):
        if utility[d - start] >= target * (1 - 1e-12):
            return d
    return planned


def offer(market: Market, reserved: Reserved, job: OfferedJob, rules: OfferRules, placement: tuple) -> tuple:
    """One offer up to its block (:mod:`primaldual.oasis.lr.admission`, "Admission"): ``(status, mu, deadline,
    target, first, last)``, the status one of :data:`NO_OFFER`, :data:`UNPLACED`, :data:`NO_BLOCK`, :data:`BLOCK`.
    The dual subroutine's answer first, as :func:`primaldual.dual.subroutine.best_schedule` gives it with the
    cost floor (the window empty, or finishing at full speed not paying the floor: ``mu = 0`` without a
    search); then, for ``mu > 0``, the deadline that keeps ``(1 - delta)`` of the later of the plan's completion
    and the end of the earliest block on an empty cluster, the payoff the block must keep (``target``) and the
    block itself (:func:`block_search`, placed in ``placement``)."""
    n_slots = max(rules.horizon - job.start, 0)
    utility = job.utility
    if cannot_pay(utility[:n_slots], job.work, job.demand.ps_needed.shape[0] - 1, rules.floor):
        return NO_OFFER, 0.0, -1, 0.0, -1, -1
    best, _, costs = search(market.worker_prices, market.ps_prices, market.worker_free, market.ps_free,
                            job.demand.worker, job.demand.ps, job.demand.ps_needed, job.ps_max, job.start, job.work,
                            utility[:n_slots], True, True, rules.floor)
    mu = max(0.0, utility[best] - costs[best]) if best >= 0 else 0.0
    if mu <= 0.0:
        return NO_OFFER, mu, -1, 0.0, -1, -1
    if job.block_workers < 1:
        return UNPLACED, mu, -1, 0.0, -1, -1
    planned = max(job.start + best, job.start + block_length(job.work, job.block_workers, rules.restart_cost) - 1)
    deadline = latest_deadline(utility, job.start, planned, rules.horizon, rules.delta)
    target = mu
    if not rules.provable:  # the plan's payoff less what the block's unavoidable delay costs the job
        target -= utility[best] - utility[planned - job.start]
    first, last = block_search(reserved, job.demand, float(job.work), rules.earliest, deadline, rules.restart_cost,
                               rules.late, placement)
    return (BLOCK if first >= 0 else NO_BLOCK), mu, deadline, target, first, last


def pool_cost(prices: np.ndarray, first: int, last: int, demand: np.ndarray, counts: np.ndarray) -> float:
    """``(unit_prices(prices[first:last + 1], demand) @ counts).sum()``
    (:func:`primaldual.dual.subroutine.unit_prices`): what ``counts`` units per server pay over the slots, with
    numpy's operations in numpy's order (per cell the dual subroutine's :func:`unit_price`, the demanded
    resources' products added in resource order from 0.0 as ``unit_prices`` adds them; the product by numpy's own
    BLAS call; numpy's pairwise sum)."""
    slots, servers = last + 1 - first, prices.shape[1]
    unit = np.empty((slots, servers))
    for t in range(slots):
        for s in range(servers):
            unit[t, s] = unit_price(prices[first + t], s, demand)
    per_slot = np.empty(slots)
    matrix_vector(unit, counts.astype(np.float64), per_slot)
    return pairwise_sum(per_slot, 0, slots)


def block_cost(worker_prices: np.ndarray, ps_prices: np.ndarray, first: int, last: int, worker_demand: np.ndarray,
               ps_demand: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
    """What a block of ``workers`` and ``parameter_servers`` over slots ``first..last`` pays at the cell prices
    (:func:`primaldual.oasis.lr.admission.block_cost`, bit for bit where :func:`blas.available`)."""
    return pool_cost(worker_prices, first, last, worker_demand, workers) + \
        pool_cost(ps_prices, first, last, ps_demand, parameter_servers)


def kernel_globals() -> dict:
    """What the compiled copy calls instead of this module's Python objects: the dual subroutine's compiled search
    and numpy's BLAS by name."""
    from primaldual.dual import kernel, reference

    return {"search": kernel.compiled(reference).search, **(blas.externals() if blas.available() else {})}


#: The functions :mod:`primaldual.dual.kernel` compiles, callees before callers.
KERNEL_FUNCTIONS = ("units_that_fit", "unit_price", "cannot_pay", "server_caps", "first_fit", "take", "place_most",
                    "block_length", "slot_units", "window_minima", "window_that_fits", "fill", "find_block",
                    "block_search", "latest_deadline", "offer", "matrix_vector", "block_sum", "pairwise_sum",
                    "pool_cost", "block_cost")

__all__ = ["BLOCK", "KERNEL_FUNCTIONS", "NO_BLOCK", "NO_LIMIT", "NO_OFFER", "UNBOUNDED", "UNPLACED", "Demand", "Market",
           "OfferRules", "OfferedJob", "Reserved", "block_cost", "block_length", "block_search", "fill",
           "find_block", "latest_deadline", "offer", "first_fit", "kernel_globals", "place_most", "pool_cost", "server_caps",
           "slot_units", "take", "window_minima", "window_that_fits"]
