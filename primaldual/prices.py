"""OASiS's resource prices: the price state of a run (the constants are derived in :mod:`primaldual.price_constants`).

Every resource ``r`` of every worker server ``h`` (PS server ``k``) in every slot ``t`` has a price that grows
exponentially with the amount already allocated, ``g = g_h^r(t)`` (``v_k^r(t)``)::

    p_h^r(t) = L (U_w^r / L) ** (g_h^r(t) / c_h^r)        q_k^r(t) = L (U_ps^r / L) ** (v_k^r(t) / c_k^r)

so a resource costs ``L`` per unit while empty and ``U^r`` when full. The constants, their derivation and the
instance facts behind them live in :mod:`primaldual.price_constants` and :mod:`primaldual.standalone`; every
public name stays importable from here.
"""

from __future__ import annotations

import numpy as np

from primaldual.instance import Instance, Job
from primaldual.price_constants import (  # noqa: F401 - re-exported
    PRICE_RULES,
    SMALL_DEMAND_LIMIT,
    PriceConstants,
    compute_constants,
    density_lower_prices,
    json_number,
)
from primaldual.standalone import (  # noqa: F401 - re-exported
    FIT_TOLERANCE,
    fastest_standalone_workers,
    fit_counts,
    standalone_utilities,
)


# ------------------------------------------------------------------------------------------- price state


def _price(lower, log_ratio: np.ndarray, used: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``L^r (U^r/L^r)^(used / capacity)`` elementwise (``lower`` a number or an array over the resources);
    ``L^r`` where the capacity is 0 (unused by construction)."""
    positive = capacity > 0
    fraction = np.divide(used, capacity, out=np.zeros(np.broadcast_shapes(used.shape, capacity.shape)),
                         where=positive)
    return lower * np.exp(log_ratio * fraction)


class PriceState:
    """Allocated amounts and prices per (slot, server, resource) for both pools; the only mutable piece.

    ``worker_used[t, h, r]`` is ``g_h^r(t)``, ``ps_used[t, k, r]`` is ``v_k^r(t)``; ``worker_prices`` and
    ``ps_prices`` are ``p_h^r(t)`` and ``q_k^r(t)``, kept up to date by :meth:`commit` (only the slots a job
    touches are recomputed). Prices never decrease because amounts are only ever added.
    """

    def __init__(self, instance: Instance, constants: PriceConstants):
        cluster = instance.cluster
        self.instance = instance
        self.constants = constants
        shape_w = (instance.horizon, cluster.n_worker_servers, cluster.n_resources)
        shape_ps = (instance.horizon, cluster.n_ps_servers, cluster.n_resources)
        self.worker_capacity = np.broadcast_to(cluster.worker_capacity, shape_w)
        self.ps_capacity = np.broadcast_to(cluster.ps_capacity, shape_ps)
        self.worker_used = np.zeros(shape_w)
        self.ps_used = np.zeros(shape_ps)
        self._worker_theta = constants.worker_log_ratio
        self._ps_theta = constants.ps_log_ratio
        self._worker_lower = constants.worker_lower
        self._ps_lower = constants.ps_lower
        self.worker_prices = np.array(np.broadcast_to(constants.worker_lower, shape_w))
        self.ps_prices = np.array(np.broadcast_to(constants.ps_lower, shape_ps))
        # capacity - used, kept up to date slot by slot (the dual subroutine's residual caps).
        self.worker_free = np.array(self.worker_capacity)
        self.ps_free = np.array(self.ps_capacity)

    def price_term(self) -> float:
        """``sum p c + sum q c`` over all slots, servers and resources (zero-capacity entries add 0)."""
        return float((self.worker_prices * self.worker_capacity).sum() + (self.ps_prices * self.ps_capacity).sum())

    def commit(self, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        """Add a job's allocation (``workers`` (T, H), ``parameter_servers`` (T, K)) and raise the prices.

        Returns the increase of the price term ``sum c (p_new - p_old)``, the dual increase from prices.
        """
        increase = 0.0
        for counts, demand, used, free, prices, capacity, theta, lower in (
            (workers, job.worker_demand, self.worker_used, self.worker_free, self.worker_prices,
             self.worker_capacity, self._worker_theta, self._worker_lower),
            (parameter_servers, job.ps_demand, self.ps_used, self.ps_free, self.ps_prices,
             self.ps_capacity, self._ps_theta, self._ps_lower),
        ):
            slots = np.flatnonzero(np.asarray(counts).sum(axis=1) > 0)
            if slots.size == 0:
                continue
            used[slots] += np.asarray(counts, dtype=float)[slots, :, None] * demand[None, None, :]
            free[slots] = capacity[slots] - used[slots]
            old = prices[slots]
            new = _price(lower, theta, used[slots], capacity[slots])
            prices[slots] = new
            increase += float(((new - old) * capacity[slots]).sum())
        return increase


__all__ = [
    "FIT_TOLERANCE",
    "PRICE_RULES",
    "density_lower_prices",
    "PriceConstants",
    "PriceState",
    "SMALL_DEMAND_LIMIT",
    "compute_constants",
    "fastest_standalone_workers",
    "fit_counts",
    "json_number",
    "standalone_utilities",
]
