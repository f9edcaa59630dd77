"""OASiS's resource prices: the price state of a run (the constants are derived in :mod:`primaldual.oasis.constants`).

Every resource ``r`` of every worker server ``h`` (PS server ``k``) in every slot ``t`` has a price that grows
exponentially with the amount already allocated, ``g = g_h^r(t)`` (``v_k^r(t)``)::

    p_h^r(t) = L (U_w^r / L) ** (g_h^r(t) / c_h^r)        q_k^r(t) = L (U_ps^r / L) ** (v_k^r(t) / c_k^r)

so a resource costs ``L`` per unit while empty and ``U^r`` when full. The constants, their derivation and the
instance facts behind them live in :mod:`primaldual.oasis.constants` and :mod:`primaldual.core.standalone`; every
public name stays importable from here.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Instance, Job
from primaldual.core.pool import Pool, cluster_pools
from primaldual.oasis.constants import (  # noqa: F401 - re-exported
    PRICE_RULES,
    SMALL_DEMAND_LIMIT,
    PriceConstants,
    compute_constants,
    density_lower_prices,
    json_number,
)
from primaldual.core.standalone import (  # noqa: F401 - re-exported
    FIT_TOLERANCE,
    fastest_standalone_workers,
    fit_counts,
    standalone_utilities,
)


# ------------------------------------------------------------------------------------------- price state

#: Above this exponent ``exp`` nears the float range (``exp(709.78)`` overflows): :func:`exponential_price`
#: then adds the exponent to ``ln L^r`` instead of multiplying ``L^r`` by its exponential.
EXPONENT_LIMIT = 700.0


def exponential_price(lower, log_ratio: np.ndarray, used: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``L^r (U^r/L^r)^(used / capacity)`` elementwise (``lower`` a number or an array over the resources);
    ``L^r`` where the capacity is 0 (unused by construction).

    The price itself is at most ``U^r`` (below 1e250, :data:`primaldual.oasis.constants.PRICE_CEILING`), but
    with ``L^r`` near 1e-300 (a job worth 1e-300) ``ln(U^r/L^r)`` exceeds 709 and ``exp`` alone would overflow
    near full use: there, and only there, the price is ``exp(ln L^r + exponent)`` (ordinary instances keep
    ``L^r exp(exponent)``, the same floats)."""
    positive = capacity > 0
    fraction = np.divide(used, capacity, out=np.zeros(np.broadcast_shapes(used.shape, capacity.shape)),
                         where=positive)
    exponent = log_ratio * fraction
    if not (exponent > EXPONENT_LIMIT).any():
        return lower * np.exp(exponent)
    huge = exponent > EXPONENT_LIMIT
    lowers = np.broadcast_to(np.asarray(lower, dtype=float), exponent.shape)
    prices = lowers * np.exp(np.where(huge, 0.0, exponent))
    prices[huge] = np.exp(np.log(lowers[huge]) + exponent[huge])
    return prices


class PoolState:
    """One pool's mutable state in a run: amounts ``used[t, s, r]``, ``free = capacity - used`` and, when the
    run has price constants, ``prices[t, s, r] = L^r (U^r/L^r)^(used / capacity)`` (else ``prices`` is None).

    ``free`` is kept up to date slot by slot: it is the dual subroutine's residual cap.
    """

    def __init__(self, pool: Pool, horizon: int, lower=None, log_ratio=None):
        self.pool = pool
        shape = (horizon, *pool.capacity.shape)
        self.capacity = np.broadcast_to(pool.capacity, shape)
        self.used = np.zeros(shape)
        # C order: the dual subroutine's kernel reads these arrays as they are (np.array of a broadcast keeps
        # its strides' order, slot last, and every call would copy it).
        self.free = np.array(self.capacity, order="C")
        self.lower, self.log_ratio = lower, log_ratio
        self.prices = None if lower is None else np.array(np.broadcast_to(lower, shape), order="C")

    def allocate(self, job: Job, counts: np.ndarray) -> np.ndarray:
        """Add ``counts`` (T, servers) units of ``job`` to the amounts; return the slots it touched."""
        slots = np.flatnonzero(np.asarray(counts).sum(axis=1) > 0)
        if slots.size:
            self.used[slots] += np.asarray(counts, dtype=float)[slots, :, None] * self.pool.demand(job)[None, None, :]
            self.free[slots] = self.capacity[slots] - self.used[slots]
        return slots

    def reprice(self, slots: np.ndarray) -> float:
        """Recompute the prices of ``slots`` from the amounts; return ``sum c (p_new - p_old)`` over them."""
        if slots.size == 0 or self.prices is None:
            return 0.0
        old = self.prices[slots]
        new = exponential_price(self.lower, self.log_ratio, self.used[slots], self.capacity[slots])
        self.prices[slots] = new
        return float(((new - old) * self.capacity[slots]).sum())

    def price_term(self) -> float:
        """``sum p c`` over all slots, servers and resources (zero-capacity entries add 0); 0 without prices."""
        if self.prices is None:
            return 0.0
        return float((self.prices * self.capacity).sum())


class PriceState:
    """Allocated amounts and prices per (slot, server, resource) for both pools; the only mutable piece.

    ``pools`` holds one :class:`PoolState` per pool (workers, then PSs). ``worker_used[t, h, r]`` is
    ``g_h^r(t)``, ``ps_used[t, k, r]`` is ``v_k^r(t)``; ``worker_prices`` and ``ps_prices`` are ``p_h^r(t)`` and
    ``q_k^r(t)``, kept up to date by :meth:`commit` (only the slots a job touches are recomputed). Prices never
    decrease because amounts are only ever added. With ``constants=None`` the state holds amounts only (a run
    without prices, :class:`primaldual.oasis.strategy.ZeroPrices`): ``*_prices`` are None.
    """

    def __init__(self, instance: Instance, constants: PriceConstants | None):
        self.instance = instance
        self.constants = constants
        self.pools = tuple(
            PoolState(pool, instance.horizon,
                      None if constants is None else getattr(constants, f"{pool.name}_lower"),
                      None if constants is None else getattr(constants, f"{pool.name}_log_ratio"))
            for pool in cluster_pools(instance)
        )

    # The twin names the rest of the code (and the file formats) use, read-only views of the pool states.
    worker_capacity = property(lambda self: self.pools[0].capacity)
    ps_capacity = property(lambda self: self.pools[1].capacity)
    worker_used = property(lambda self: self.pools[0].used)
    ps_used = property(lambda self: self.pools[1].used)
    worker_free = property(lambda self: self.pools[0].free)
    ps_free = property(lambda self: self.pools[1].free)
    worker_prices = property(lambda self: self.pools[0].prices)
    ps_prices = property(lambda self: self.pools[1].prices)

    def price_term(self) -> float:
        """``sum p c + sum q c`` over all slots, servers and resources (zero-capacity entries add 0)."""
        return sum(pool.price_term() for pool in self.pools)

    def allocate(self, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> list[np.ndarray]:
        """Add ``workers`` (T, H) and ``parameter_servers`` (T, K) to the amounts only; the slots touched per pool."""
        return [state.allocate(job, counts) for state, counts in zip(self.pools, (workers, parameter_servers))]

    def commit(self, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        """Add a job's allocation (``workers`` (T, H), ``parameter_servers`` (T, K)) and raise the prices.

        Returns the increase of the price term ``sum c (p_new - p_old)``, the dual increase from prices.
        """
        touched = self.allocate(job, workers, parameter_servers)
        increase = 0.0
        for state, slots in zip(self.pools, touched):
            increase += state.reprice(slots)
        return increase


__all__ = [
    "FIT_TOLERANCE",
    "PRICE_RULES",
    "density_lower_prices",
    "exponential_price",
    "PriceConstants",
    "PoolState",
    "PriceState",
    "SMALL_DEMAND_LIMIT",
    "compute_constants",
    "fastest_standalone_workers",
    "fit_counts",
    "json_number",
    "standalone_utilities",
]
