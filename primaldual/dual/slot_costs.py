"""Step (a) of the dual subroutine (:mod:`primaldual.dual.subroutine`): the cheapest placement of ``D`` workers and their
PSs in each slot, ``c_t(D)``, at frozen prices (that module's docstring gives the argument)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.instance import Job
from primaldual.core.standalone import fit_counts


@dataclass(frozen=True, eq=False)
class PoolPlacement:
    """Cheapest fill of one pool for every count, per slot of the window.

    ``cost[s, n]`` is the least cost of ``n`` units in window slot ``s`` (``+inf`` if they do not fit);
    ``order[s, j]`` is the ``j``-th cheapest usable server and ``caps[s, j]`` its cap (0 for an unusable
    server); the fill of ``n`` units takes ``clip(n - before_j, 0, caps_j)`` from server ``order[s, j]``.
    """

    cost: np.ndarray
    order: np.ndarray
    caps: np.ndarray

    def fill(self, target: np.ndarray, slots: np.ndarray, rows: np.ndarray, units: np.ndarray) -> None:
        """Write the cheapest fill of ``units[j]`` units (table row ``rows[j]``) into ``target[slots[j], :]``."""
        rows = rows if self.caps.shape[0] > 1 else np.zeros_like(rows)  # a table computed once for all slots
        caps = self.caps[rows]
        before = np.cumsum(caps, axis=1) - caps
        target[slots[:, None], self.order[rows]] = np.minimum(np.maximum(units[:, None] - before, 0), caps)


def cheapest_fill(unit_price: np.ndarray, caps: np.ndarray, max_units: int) -> PoolPlacement:
    """Cheapest placement of ``0..max_units`` units on servers with ``unit_price`` (S, n) and ``caps`` (S, n).

    Servers are sorted by price (stable: the lower index wins a tie), unusable servers (cap 0) last; only the
    first ``min(n, max_units)`` can be needed, since each usable server takes at least one unit.
    """
    n_slots, n_servers = unit_price.shape
    keep = min(n_servers, max_units)
    key = np.where(caps > 0, unit_price, np.inf)
    if keep == 1 and max_units == 1:
        return _cheapest_one(unit_price, caps, key)
    order = np.argsort(key, axis=1, kind="stable")[:, :keep]
    slot_index = np.arange(n_slots)[:, None]
    price_sorted = unit_price[slot_index, order]
    caps_sorted = caps[slot_index, order]
    # Expand the fill into units: server j supplies caps_j units at price_j, of which only the first
    # max_units in price order can be used; their running sum is the cost of every count at once.
    before = np.cumsum(caps_sorted, axis=1) - caps_sorted
    used = np.minimum(np.maximum(max_units - before, 0), caps_sorted)
    lengths = used.sum(axis=1)
    per_unit = np.full((n_slots, max_units), np.inf)
    rows = np.repeat(np.arange(n_slots), lengths)
    starts = np.cumsum(lengths) - lengths
    columns = np.arange(rows.size) - np.repeat(starts, lengths)
    per_unit[rows, columns] = np.repeat(price_sorted.ravel(), used.ravel())
    cost = np.zeros((n_slots, max_units + 1))
    np.cumsum(per_unit, axis=1, out=cost[:, 1:])  # +inf from the first count that does not fit
    return PoolPlacement(cost, order, caps_sorted)


def _cheapest_one(unit_price: np.ndarray, caps: np.ndarray, key: np.ndarray) -> PoolPlacement:
    """:func:`cheapest_fill` for one unit (a job that runs one worker at a time, and its one PS): the sorted
    order's first server is the first one of least key (``argmin`` and a stable sort agree), the one unit costs
    its price if it has room, else ``+inf``; that is ``min(key)`` itself, whose value is that server's price
    (a cumulative sum of one entry is the entry). Two reductions per pool instead of a sort and the unit
    expansion."""
    order = key.argmin(axis=1)[:, None]
    cost = np.zeros((unit_price.shape[0], 2))
    cost[:, 1] = key.min(axis=1)
    return PoolPlacement(cost, order, np.take_along_axis(caps, order, axis=1))


def unit_prices(prices: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``sum_r prices[..., r] demand[r]`` over the demanded resources (a resource with zero demand adds
    nothing, whatever its price), in a fixed order so that the sums are reproducible bit for bit."""
    out = np.zeros(prices.shape[:-1])
    for r in np.flatnonzero(demand > 0):
        out += prices[..., r] * demand[r]
    return out


@dataclass(frozen=True, eq=False)
class SlotCosts:
    """``cost[s, D] = c_{a+s}(D)`` for window slot ``s`` and ``D = 0..max_workers`` workers, with the two pool
    fills and ``ps_needed[D] = Z(D)`` to rebuild the placement. ``cost`` has one row if the prices and free
    amounts were the same for every slot."""

    cost: np.ndarray
    workers: PoolPlacement
    parameter_servers: PoolPlacement
    ps_needed: np.ndarray


def _pool_fill(prices: np.ndarray, free: np.ndarray, demand: np.ndarray, max_units: int) -> PoolPlacement:
    """The cheapest fill of one pool: per-unit prices ``sum_r prices^r demand^r`` (zero demand costs nothing)
    and the units that fit in ``free``, broadcast together (either may be given per slot or once for all)."""
    unit = unit_prices(np.asarray(prices, dtype=float), demand)
    caps = fit_counts(free, demand, max_units)
    if unit.shape != caps.shape:
        shape = np.broadcast_shapes(unit.shape, caps.shape)
        unit, caps = np.broadcast_to(unit, shape), np.broadcast_to(caps, shape)
    return cheapest_fill(unit, caps, max_units)


def slot_costs(
    job: Job,
    max_workers: int,
    worker_prices: np.ndarray,
    ps_prices: np.ndarray,
    worker_free: np.ndarray,
    ps_free: np.ndarray,
) -> SlotCosts:
    """Step (a) for every slot of the window at once.

    ``worker_prices``/``worker_free`` have shape (S, H, R) (or broadcast to it), ``ps_*`` (S, K, R): the prices
    and the free amounts in the window's slots. Returns ``c_t(D)`` for ``D = 0..max_workers``.
    """
    ps_needed, ps_max = _ps_needs(job, max_workers)
    workers = _pool_fill(worker_prices, worker_free, job.worker_demand, max_workers)
    parameter_servers = _pool_fill(ps_prices, ps_free, job.ps_demand, ps_max)
    return _combined(workers, parameter_servers, ps_needed, ps_max)


def _ps_needs(job: Job, max_workers: int) -> tuple[np.ndarray, int]:
    """``Z(D)`` for ``D = 0..max_workers`` and the most PSs a fill needs, ``min(max Z, max_workers)``."""
    ps_needed = np.asarray(job.min_parameter_servers(np.arange(max_workers + 1)), dtype=np.int64)
    return ps_needed, int(min(ps_needed.max(initial=0), max_workers))


def _combined(workers: PoolPlacement, parameter_servers: PoolPlacement, ps_needed: np.ndarray,
              ps_max: int) -> SlotCosts:
    """``c_t(D) = WorkerCost_t(D) + PSCost_t(Z(D))`` from the two pools' fills."""
    counts = np.arange(ps_needed.shape[0])
    cost = workers.cost + parameter_servers.cost[:, np.minimum(ps_needed, ps_max)]
    # Eq. (7): Z(D) <= D (fails only if b_i > B_i, which instance files refuse).
    cost[:, ps_needed > counts] = np.inf
    cost[:, 0] = 0.0
    return SlotCosts(cost, workers, parameter_servers, ps_needed)


class PoolFills:
    """Step (a)'s pool fills kept for several jobs at the same prices and free amounts (OASiS-LR's offers of
    one round, until an admission changes the ledger): per pool, demand vector and number of units, the
    cheapest fills of the slots from ``first`` on that some job needed so far.

    **Exact.** Every quantity of a fill is computed row by row (the unit prices and fitting counts
    elementwise, the sort and the running sums per slot), so the rows of one call over a range equal those
    of calls over its parts; a job's :func:`slot_costs` from these rows is what it computes from its own
    window. The arrays must hold the prices and free amounts of every slot (shape (T, servers, R)) and must
    not change while this object is used: the owner makes a new one when they do. Cost: per request a
    dictionary lookup and slicing, plus the fills of slots no job asked for before.
    """

    def __init__(self, worker_prices: np.ndarray, ps_prices: np.ndarray, worker_free: np.ndarray,
                 ps_free: np.ndarray, first: int):
        self.pools = ((worker_prices, worker_free), (ps_prices, ps_free))
        self.first = first
        self._fills: dict[tuple, PoolPlacement] = {}

    def slot_costs(self, job: Job, max_workers: int, start: int, stop: int) -> SlotCosts:
        """:func:`slot_costs` of ``job`` for the slots ``start..stop - 1`` (``start >= first``)."""
        ps_needed, ps_max = _ps_needs(job, max_workers)
        return _combined(self._fill(0, job.worker_demand, max_workers, start, stop),
                         self._fill(1, job.ps_demand, ps_max, start, stop), ps_needed, ps_max)

    def _fill(self, pool: int, demand: np.ndarray, max_units: int, start: int, stop: int) -> PoolPlacement:
        key = (pool, demand.tobytes(), max_units)
        kept = self._fills.get(key)
        done = self.first + (0 if kept is None else kept.cost.shape[0])
        if stop > done:  # the slots past the kept ones, appended
            prices, free = self.pools[pool]
            # Up to twice the window asked for: a fill costs mostly per call, and other jobs ask for longer ones.
            upto = min(prices.shape[0], self.first + 2 * (stop - self.first))
            more = _pool_fill(prices[done:upto], free[done:upto], demand, max_units)
            kept = more if kept is None else PoolPlacement(*(np.concatenate((a, b)) for a, b in (
                (kept.cost, more.cost), (kept.order, more.order), (kept.caps, more.caps))))
            self._fills[key] = kept
        rows = slice(start - self.first, stop - self.first)
        return PoolPlacement(kept.cost[rows], kept.order[rows], kept.caps[rows])
