"""The dual subroutine's cost floor (:func:`primaldual.dual.subroutine.best_schedule`, ``cost_floor``): a lower bound on the
cost of every schedule of a job from a slot on, from the least prices alone, so that a search can stop (or not
start) once no later completion can pay it. ``proofs/oasis-lr.md`` states it; it never changes ``mu``.
"""

from __future__ import annotations

import weakref

import numpy as np


def suffix_minimum(per_slot: np.ndarray) -> np.ndarray:
    """Row ``t`` is the minimum of rows ``t, t + 1, ...`` of ``per_slot`` (axis 0 is the slot)."""
    return np.minimum.accumulate(per_slot[::-1], axis=0)[::-1]


def least_prices(worker_prices: np.ndarray, ps_prices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pool, ``least[t, r] = min over slots t' >= t and servers`` of resource r's price, shape (T, R) each."""
    return tuple(suffix_minimum(np.asarray(prices, dtype=float).min(axis=1)) for prices in (worker_prices, ps_prices))


#: Below the PS-slots a schedule needs (at least ``V b_i / B_i``; :func:`ps_per_worker`) by more than eq. (6)'s
#: ceiling tolerance (:data:`primaldual.core.instance.CEIL_TOLERANCE`) and any rounding of the products.
PS_FLOOR_FACTOR = 1.0 - 1e-6

#: The whole floor is shrunk by this factor: the search sums its costs in another order than the floor's
#: products, and a floor a few ulps above a schedule's true cost could stop a search whose payoff is positive.
FLOOR_FACTOR = 1.0 - 1e-9


#: Worker counts :func:`ps_per_worker` tabulates per job (beyond them it uses ``b_i / B_i``).
RHO_TABLE_WORKERS = 64
#: Per job, ``rho(1..)``: keyed by the job object (jobs are compared by identity) and dropped with it.
_RHO_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ps_per_worker(job, most: int) -> float:
    """``rho(m) = min over D = 1..m of Z(D) / D``, ``m = most``: a schedule that runs at most ``m`` workers in a
    slot needs at least ``rho(m)`` PS-slots per worker-slot, since ``sum_t Z(D_t) = sum_t D_t Z(D_t) / D_t``
    over its slots with ``D_t > 0``. ``Z`` is eq. (6)'s count, ``ceil(D b_i / B_i)`` with its tolerance
    (:meth:`primaldual.core.instance.Job.min_parameter_servers`, the function the subroutine's placement uses),
    so ``rho >= b_i / B_i`` up to that tolerance; it is much larger for narrow jobs: one worker needs a whole PS
    (``rho(1) = 1``) however small ``b_i / B_i`` is. Past :data:`RHO_TABLE_WORKERS` workers the bound falls back to
    ``b_i / B_i`` (``Z(D) >= D b_i / B_i`` up to the tolerance that :data:`PS_FLOOR_FACTOR` absorbs).
    Cost: one table per job (a vector call and a running minimum over ``min(N_i, 64)`` counts), kept while the
    job lives; then a lookup."""
    table = _RHO_TABLES.get(job)
    if table is None:
        counts = np.arange(1, min(int(job.chunks), RHO_TABLE_WORKERS) + 1)
        ratios = np.asarray(job.min_parameter_servers(counts), dtype=float) / counts
        table = _RHO_TABLES[job] = np.minimum.accumulate(ratios).tolist()
    if most <= len(table):
        return table[most - 1]
    return min(table[-1], job.worker_bandwidth_gbps / job.ps_bandwidth_gbps)


def cost_floor_of(job, work: int, least: tuple[np.ndarray, np.ndarray], slot: int) -> float:
    """A lower bound on the cost of every schedule of ``work`` worker-slots of ``job`` from ``slot`` on: each
    worker-slot pays at least the least worker price per resource, and a schedule that never runs more than
    ``m = min(N_i, work)`` workers at once needs at least ``rho(m) work`` PS-slots (:func:`ps_per_worker`: eq. (6)
    rounds each slot's PSs up, which ``V b_i / B_i`` ignores), each paying at least the least PS price
    (``least`` from :func:`least_prices`). The DP's costs are sums of the same prices in another order, so they
    can round below the exact figure by a few ulps: :data:`FLOOR_FACTOR` keeps the floor under them."""
    worker_least, ps_least = least
    most = int(min(job.chunks, work))
    ps_slots = work * ps_per_worker(job, most) * PS_FLOOR_FACTOR if most >= 1 else 0.0
    return FLOOR_FACTOR * (work * float(worker_least[slot] @ job.worker_demand)
                           + ps_slots * float(ps_least[slot] @ job.ps_demand))


__all__ = ["FLOOR_FACTOR", "PS_FLOOR_FACTOR", "RHO_TABLE_WORKERS", "cost_floor_of", "least_prices",
           "ps_per_worker", "suffix_minimum"]
